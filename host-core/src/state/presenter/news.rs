//! What is news: each reported change compared with what the agent believes, and the
//! reconciliation that catches what no change explained. Every piece of news is a
//! [`Fragment`]: one line, the marker it announces, the ended id it tells.

use super::fragment::{Fragment, Rank, opened, suggestion};
use super::{EndedInfo, OpenBelief, Presenter, ServerState};
use crate::state::keys::probe;
use crate::state::output::{Cause, Change};
use crate::state::view::{Actual, Described, Marker, ServerView, SetKey, ToolKey, shown_name};
use std::cmp::Ordering;

impl Presenter {
    /// The news in one reported change, given the state now (`actual`).
    pub(super) fn news(
        &mut self,
        view: &ServerView<'_>,
        actual: &Actual<'_>,
        cause: &Cause,
        change: &Change,
    ) -> Vec<Fragment> {
        let b = self.config.bounds;
        let state_news = matches!(
            change,
            Change::Visibility { .. }
                | Change::Definition { .. }
                | Change::Opened { .. }
                | Change::Retitled { .. }
                | Change::Closed { ended: None, .. }
        );
        if state_news && !view.settled() {
            // Until the connection's statement is read the state is partial: the
            // reconciliation after it tells what differs, once. An end with its record is
            // a fact, told now: the hint state reports each record once per connection,
            // so the statement will not report it again (§4.3, vector 13).
            return Vec::new();
        }
        match change {
            Change::Visibility { tool, instance, .. } => {
                let key = (tool.clone(), instance.clone());
                self.tool_news(view, actual, &key).into_iter().collect()
            }
            Change::Definition { tool, instance } => {
                let st = self.state(view.name);
                let keys: Vec<ToolKey> = tool_keys(&st.usable, tool)
                    .chain(tool_keys(&actual.usable, tool))
                    .filter(|k| instance.is_none() || k.1 == *instance)
                    .cloned()
                    .collect();
                let mut out = Vec::new();
                for k in keys {
                    out.extend(self.tool_news(view, actual, &k));
                }
                out
            }
            Change::Opened {
                toolset, instance, ..
            }
            | Change::Retitled {
                toolset, instance, ..
            } => {
                let key = (toolset.clone(), instance.clone());
                self.set_news(view, actual, &key).into_iter().collect()
            }
            Change::Closed {
                toolset,
                instance,
                reason,
                ended,
            } => {
                let key = (toolset.clone(), instance.clone());
                let marker = Marker::new(view.name, toolset, instance.as_deref());
                let why = match (reason, cause) {
                    (Some(r), _) => format!(": {} (from {})", b.inline(r), view.name),
                    (None, Cause::ManifestChange) => {
                        format!(": {} no longer declares {}", view.name, shown_name(toolset))
                    }
                    (None, _) => String::new(),
                };
                if reason.is_some() || ended.is_some() {
                    self.remember_ended(
                        view.name,
                        EndedInfo {
                            marker: marker.clone(),
                            reason: reason.clone(),
                            at: None,
                        },
                    );
                }
                let was_open = self.forget_open(view.name, &key);
                let untold = ended
                    .as_ref()
                    .is_some_and(|id| !self.told.contains(view.name, id));
                if !was_open && !untold {
                    return Vec::new();
                }
                if ended.is_none() {
                    // §4.3: told without a record id; a record for it later is this end.
                    self.told
                        .mark_end_told(view.name, toolset, instance.as_deref());
                }
                let verb = if was_open { "Closed" } else { "Ended" };
                vec![Fragment {
                    ended: ended.clone(),
                    subject: Some(marker.clone()),
                    ..Fragment::new(Rank::Toolset, format!("{verb} {marker}{why}."))
                }]
            }
            Change::Suggested(s) => {
                self.remember_suggestion(view.name, s.clone());
                vec![suggestion(view, s, &b)]
            }
            Change::Ended(rec) => {
                if self.told.contains(view.name, &rec.id) {
                    return Vec::new();
                }
                // The end was told already, without an id (a close that named no record):
                // count this record told, and say nothing again (§4.3).
                if self
                    .told
                    .take_end_told(view.name, &rec.toolset, rec.instance.as_deref())
                {
                    self.told.mark_told(view.name, &rec.id);
                    return Vec::new();
                }
                let marker = Marker::new(view.name, &rec.toolset, rec.instance.as_deref());
                self.remember_ended(
                    view.name,
                    EndedInfo {
                        marker: marker.clone(),
                        reason: Some(rec.reason.clone()),
                        at: Some(rec.at.clone()),
                    },
                );
                let key = (rec.toolset.clone(), rec.instance.clone());
                self.forget_open(view.name, &key);
                let text = format!(
                    "Ended {marker} at {}: {} (from {}).",
                    b.inline(&rec.at),
                    b.inline(&rec.reason),
                    view.name
                );
                vec![Fragment {
                    ended: Some(rec.id.clone()),
                    subject: Some(marker),
                    ..Fragment::new(Rank::Toolset, text)
                }]
            }
            // The catalog applies presence at the next boundary, and tells it then.
            Change::Presence { .. } => Vec::new(),
        }
    }

    /// Differences between the belief and the state that no change explained.
    pub(super) fn reconcile(&mut self, view: &ServerView<'_>, actual: &Actual) -> Vec<Fragment> {
        if !view.catalog.hints_count() {
            return self.withdrawn(view).into_iter().collect();
        }
        if !view.settled() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let st = self.state(view.name);
        let gone: Vec<SetKey> = st
            .open
            .keys()
            .filter(|k| !actual.open.contains_key(*k))
            .cloned()
            .collect();
        for key in gone {
            if let Some(marker) = self
                .state(view.name)
                .open
                .get(&key)
                .map(|o| o.marker.clone())
            {
                self.forget_open(view.name, &key);
                out.push(Fragment {
                    subject: Some(marker.clone()),
                    ..Fragment::new(
                        Rank::Toolset,
                        format!("Closed {marker}: it is no longer open."),
                    )
                });
            }
        }
        let keys: Vec<SetKey> = actual.open.keys().cloned().collect();
        for key in keys {
            out.extend(self.set_news(view, actual, &key));
        }
        out.extend(self.every_tool_news(view, actual));
        out
    }

    /// [`Presenter::tool_news`] for every (tool, instance) believed usable or usable now,
    /// in one pass over both tables in key order: no key is looked up or copied twice,
    /// which matters for a server with thousands of tools (issue #13 item 9). The lines
    /// come in the order a key-by-key pass makes them: the believed-usable keys first
    /// (changed, no longer usable), then the keys usable for the first time.
    fn every_tool_news(&mut self, view: &ServerView<'_>, actual: &Actual<'_>) -> Vec<Fragment> {
        let before = std::mem::take(&mut self.state(view.name).usable);
        let mut believed = Vec::with_capacity(actual.usable.len());
        let (mut known, mut first) = (Vec::new(), Vec::new());
        let mut old = before.into_iter().peekable();
        let mut now = actual.usable.iter().peekable();
        loop {
            let order = match (old.peek(), now.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some((o, _)), Some((n, _))) => o.cmp(n),
            };
            match order {
                Ordering::Less => {
                    let Some((key, (marker, _))) = old.next() else {
                        break;
                    };
                    if set_open(actual, &marker) {
                        known.push(ToolLine::Gone {
                            tool: key.0,
                            marker,
                        });
                    }
                }
                Ordering::Greater => {
                    let Some((key, (marker, d))) = now.next() else {
                        break;
                    };
                    believed.push((key.clone(), (marker.clone(), d.fingerprint())));
                    first.push(ToolLine::told("Usable", &key.0, marker, d));
                }
                Ordering::Equal => {
                    let (Some((key, told)), Some((same, (marker, d)))) = (old.next(), now.next())
                    else {
                        break;
                    };
                    let print = d.fingerprint();
                    if told.1 == print {
                        believed.push((key, told));
                    } else {
                        known.push(ToolLine::told("Changed", &same.0, marker, d));
                        believed.push((key, (marker.clone(), print)));
                    }
                }
            }
        }
        // In key order already: the map is built in one go.
        self.state(view.name).usable = believed.into_iter().collect();
        known
            .into_iter()
            .chain(first)
            .map(|line| self.word(view.name, line))
            .collect()
    }

    /// Hints no longer count: the agent is told once, and the belief goes (vector 34).
    fn withdrawn(&mut self, view: &ServerView<'_>) -> Option<Fragment> {
        let st = self.state(view.name);
        if st.open.is_empty() && st.usable.is_empty() {
            return None;
        }
        let closed: Vec<String> = st.open.values().map(|o| o.marker.to_string()).collect();
        st.open.clear();
        st.usable.clear();
        st.results.clear();
        st.pushes.clear();
        let mut text = format!(
            "{} no longer presents toolsets: every tool of {} is called directly from your tool list (from its next rebuild), not through toolsets--act.",
            view.name, view.name
        );
        if !closed.is_empty() {
            text.push_str(&format!(" Closed with it: {}.", closed.join(", ")));
        }
        Some(Fragment::new(Rank::Toolset, text))
    }

    /// News about one open toolset, instance or group (opened, retitled).
    fn set_news(
        &mut self,
        view: &ServerView<'_>,
        actual: &Actual<'_>,
        key: &SetKey,
    ) -> Option<Fragment> {
        let b = self.config.bounds;
        let set = actual.open.get(key)?;
        let st = self.state(view.name);
        match st.open.get_mut(key) {
            None => {
                st.open.insert(
                    key.clone(),
                    OpenBelief {
                        marker: set.marker.clone(),
                        title: set.title.clone(),
                        announced: false,
                    },
                );
                Some(opened(view, set, &b))
            }
            Some(belief) => {
                let title = set
                    .title
                    .as_ref()
                    .filter(|t| belief.title.as_ref() != Some(*t))?;
                belief.title = Some(title.clone());
                Some(Fragment {
                    announces: Some(set.marker.clone()),
                    ..Fragment::new(
                        Rank::Toolset,
                        format!(
                            "{} is now titled {} (from {}).",
                            set.marker,
                            b.inline(title),
                            view.name
                        ),
                    )
                })
            }
        }
    }

    /// News about one (tool, instance): usable now, changed, or no longer usable. A tool
    /// whose toolset closed says nothing itself: the close is the news.
    fn tool_news(
        &mut self,
        view: &ServerView<'_>,
        actual: &Actual<'_>,
        key: &ToolKey,
    ) -> Option<Fragment> {
        let st: &mut ServerState = self.state(view.name);
        let line = match (actual.usable.get(key), st.usable.get(key)) {
            (Some((marker, d)), before) => {
                let print = d.fingerprint();
                let verb = match before {
                    None => "Usable",
                    Some((_, old)) if *old != print => "Changed",
                    Some(_) => return None,
                };
                st.usable.insert(key.clone(), (marker.clone(), print));
                ToolLine::told(verb, &key.0, marker, d)
            }
            (None, Some(_)) => {
                let (marker, _) = st.usable.remove(key)?;
                if !set_open(actual, &marker) {
                    return None;
                }
                ToolLine::Gone {
                    tool: key.0.clone(),
                    marker,
                }
            }
            (None, None) => return None,
        };
        Some(self.word(view.name, line))
    }

    /// A tool line, worded while the pass's budget lasts, else [`Fragment::held`].
    fn word(&mut self, server: &str, line: ToolLine<'_, '_>) -> Fragment {
        if !self.word_tool_line() {
            return Fragment::held();
        }
        match line {
            ToolLine::Told {
                verb,
                tool,
                marker,
                d,
            } => Fragment {
                announces: Some(marker.clone()).filter(|m| m.toolset.is_some()),
                restates: true,
                ..Fragment::new(
                    Rank::Tool,
                    format!(
                        "{verb}: {}",
                        self.config.bounds.describe(server, tool, marker, d)
                    ),
                )
            },
            ToolLine::Gone { tool, marker } => Fragment::new(
                Rank::Tool,
                format!("No longer usable: {} in {marker}.", shown_name(&tool)),
            ),
        }
    }

    /// True while this pass may word another tool line (and takes one from its budget).
    fn word_tool_line(&mut self) -> bool {
        let left = self.tool_lines_left > 0;
        self.tool_lines_left = self.tool_lines_left.saturating_sub(1);
        left
    }

    /// Forgets that `tool` is usable anywhere.
    pub(super) fn forget_tool(&mut self, server: &str, tool: &str) {
        let st = self.state(server);
        let keys: Vec<ToolKey> = tool_keys(&st.usable, tool).cloned().collect();
        for k in keys {
            st.usable.remove(&k);
        }
    }

    /// Forgets an open toolset and the tools believed usable in it; true when it was
    /// believed open.
    fn forget_open(&mut self, server: &str, key: &SetKey) -> bool {
        let st = self.state(server);
        let Some(b) = st.open.remove(key) else {
            return false;
        };
        st.usable.retain(|_, (m, _)| *m != b.marker);
        true
    }
}

/// What one (tool, instance) has to tell the agent, decided and not yet worded.
enum ToolLine<'x, 'a> {
    /// Usable now ("Usable"), or usable with a new definition ("Changed").
    Told {
        verb: &'static str,
        tool: &'x str,
        marker: &'x Marker,
        d: &'x Described<'a>,
    },
    /// No longer usable where it was told usable.
    Gone { tool: String, marker: Marker },
}

impl<'x, 'a> ToolLine<'x, 'a> {
    fn told(verb: &'static str, tool: &'x str, marker: &'x Marker, d: &'x Described<'a>) -> Self {
        ToolLine::Told {
            verb,
            tool,
            marker,
            d,
        }
    }
}

/// True when a tool told usable under `marker` stopped being usable while its toolset (or
/// instance) stays open: then it is news. A tool whose toolset closed says nothing itself:
/// the close is the news.
fn set_open(actual: &Actual<'_>, marker: &Marker) -> bool {
    match &marker.toolset {
        None => true,
        Some(t) => actual
            .open
            .contains_key(probe(&(t.as_str(), marker.instance.as_deref()))),
    }
}

/// The (tool, instance) keys of `tool` in a map keyed by them, in order: keys sort by tool
/// first and `None` before every instance, so they are one run from (tool, None).
fn tool_keys<'m, V>(
    map: &'m std::collections::BTreeMap<ToolKey, V>,
    tool: &'m str,
) -> impl Iterator<Item = &'m ToolKey> {
    map.range((tool.to_owned(), None)..)
        .map(|(k, _)| k)
        .take_while(move |k| k.0 == tool)
}

//! The agent's result for a call the meta-tools planned (or a direct call): the server's
//! answer, bounded and attributed, with the changes the answer carried attached — matched
//! by the rev in its own `mcpl/hints` (§6 "RFC §8.3": told with the call's result when the
//! agent sees it). And the answer to a local group open or close.

use super::fragment::{Fragment, Rank};
use super::{Presenter, render::TextBounds};
use crate::state::conversation::AgentMessage;
use crate::state::meta_tools::{After, Answer, GroupPlan, SendPlan};
use crate::state::view::{Marker, ServerView};
use mcpl_protocol::toolsets::{ToolsetsCloseResult, ToolsetsOpenResult};
use mcpl_protocol::{CallToolResult, ContentBlock, ErrorObject};
use std::collections::BTreeSet;

/// Why a sent request got no result.
#[derive(Debug, Clone, PartialEq)]
pub enum CallFailure {
    /// The server answered with a JSON-RPC error (an open's invalid options: -32602).
    Refused(ErrorObject),
    /// No answer in time. If it comes later its changes still apply (vector 28) and are
    /// told as a notice.
    TimedOut,
    /// The link is not connected, or the connection went while waiting.
    Unavailable(String),
}

impl CallFailure {
    fn describe(&self, server: &str, b: &TextBounds) -> String {
        match self {
            CallFailure::Refused(e) => format!(
                "{server} refused it (code {}): {} (from {server})",
                e.code.0,
                b.inline(&e.message)
            ),
            CallFailure::TimedOut => format!(
                "{server} did not answer in time; if it answers later, what changed will be told"
            ),
            CallFailure::Unavailable(why) => format!("{server} is not reachable: {why}"),
        }
    }
}

/// The outcome of a [`SendPlan`]'s request, by its kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// `tools/call`.
    Call(Result<CallToolResult, CallFailure>),
    /// `toolsets/open`.
    Open(Result<ToolsetsOpenResult, CallFailure>),
    /// `toolsets/close`.
    Close(Result<ToolsetsCloseResult, CallFailure>),
}

impl Outcome {
    /// The rev of the hint changes the result carried, if any.
    fn rev(&self) -> Option<u64> {
        let meta = match self {
            Outcome::Call(Ok(r)) => r.meta.as_ref(),
            Outcome::Open(Ok(r)) => r.meta.as_ref(),
            Outcome::Close(Ok(r)) => r.meta.as_ref(),
            _ => None,
        };
        meta?.hints.as_ref().map(|h| h.rev)
    }
}

/// What [`Presenter::finish`] gives the Host.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// The result for the agent: the server's content, then the changes it caused.
    pub result: CallToolResult,
    /// The open toolsets the result announces (record them with the result in the
    /// conversation).
    pub announces: BTreeSet<Marker>,
    /// Notices to show now: changes that waited for a result no one will see.
    pub notices: Vec<AgentMessage>,
}

impl Presenter {
    /// A request planned by the meta-tools came back (or failed). Call once per
    /// [`Presenter::sending`], with the hint state already fed the result (the read tap
    /// runs first).
    pub fn finish(&mut self, view: &ServerView<'_>, plan: &SendPlan, outcome: Outcome) -> Finished {
        let b = self.config.bounds;
        let st = self.state(view.name);
        st.expected = st.expected.saturating_sub(1);
        let rev = outcome.rev();
        let frags = rev.and_then(|r| st.results.remove(&r)).unwrap_or_default();
        if let Some(r) = rev {
            super::remember(&mut st.finished_results, r);
        }
        let told_while_waiting = if st.expected == 0 {
            std::mem::take(&mut st.told_while_waiting)
        } else {
            st.told_while_waiting.clone()
        };
        let leftover: Vec<Fragment> = if st.expected == 0 {
            std::mem::take(&mut st.results)
                .into_values()
                .flatten()
                .collect()
        } else {
            Vec::new()
        };
        let mut head: Vec<String> = Vec::new();
        let mut announces = BTreeSet::new();
        let mut result = match (&plan.after, outcome) {
            (
                After::Call {
                    tool,
                    marker,
                    via_act,
                },
                Outcome::Call(Ok(r)),
            ) => {
                if *via_act {
                    let at = marker
                        .as_ref()
                        .map(|m| format!(" in {m}"))
                        .unwrap_or_default();
                    head.push(format!("{tool}{at} answered (from {}):", view.name));
                }
                CallToolResult {
                    content: r.content.iter().map(|c| bound_block(c, &b)).collect(),
                    structured_content: r.structured_content,
                    is_error: r.is_error,
                    meta: None,
                }
            }
            (After::Open { marker }, Outcome::Open(Ok(r))) => {
                let marker = Marker {
                    instance: r.instance.clone().or_else(|| marker.instance.clone()),
                    ..marker.clone()
                };
                let told_open = told_while_waiting.contains(&(marker.clone(), true))
                    || frags
                        .iter()
                        .any(|f| f.rank == Rank::Toolset && f.subject.as_ref() == Some(&marker));
                let what = super::fragment::open_line(view.name, &marker, &r.title, &b);
                if r.adopted == Some(true) {
                    head.push(format!("Already open: {what} — adopted, nothing changed."));
                    announces.insert(marker);
                } else if !told_open {
                    head.push(format!("Opened {what}."));
                    announces.insert(marker);
                }
                content_result(view.name, r.content.as_deref(), &b)
            }
            (After::Close { marker }, Outcome::Close(Ok(r))) => {
                let told_close = told_while_waiting.contains(&(marker.clone(), false))
                    || frags
                        .iter()
                        .any(|f| f.rank == Rank::Toolset && f.subject.as_ref() == Some(marker));
                if !told_close {
                    head.push(format!("Closed {marker}."));
                }
                content_result(view.name, r.content.as_deref(), &b)
            }
            (after, outcome) => {
                let why = match &outcome {
                    Outcome::Call(Err(f)) | Outcome::Open(Err(f)) | Outcome::Close(Err(f)) => {
                        f.describe(view.name, &b)
                    }
                    // A Host that passes another kind's outcome: say so rather than guess.
                    _ => "the host got an answer of the wrong kind".to_owned(),
                };
                CallToolResult::error(format!("{}: {why}.", what_failed(after)))
            }
        };
        if !head.is_empty() {
            result
                .content
                .insert(0, ContentBlock::text(head.join("\n")));
        }
        if !frags.is_empty() {
            let (words, marks) = self.words(view.name, frags);
            announces.extend(marks);
            result
                .content
                .push(ContentBlock::text(format!("What changed:\n{words}")));
            self.stats.attached += 1;
        }
        let notices = self.notice(view, leftover).into_iter().collect();
        self.shown(&announces);
        Finished {
            result,
            announces,
            notices,
        }
    }

    /// The answer to a [`GroupPlan`] the Host applied to the catalog
    /// ([`crate::state::meta_tools::apply_group`]); `view` reads the catalog after it.
    pub fn group_changed(&mut self, view: &ServerView<'_>, plan: &GroupPlan) -> Answer {
        let marker = Marker::new(view.name, &plan.group, None);
        let actual = self.begin(view);
        let frags = self.reconcile(view, &actual);
        let opened = frags
            .iter()
            .any(|f| f.rank == Rank::Toolset && f.subject.as_ref() == Some(&marker));
        let head = match (plan.open, opened) {
            (true, true) => format!(
                "Opened {marker} (a group of tools the host opens and closes itself; nothing was sent to {}).",
                view.name
            ),
            (true, false) => format!("{marker} is already open."),
            (false, _) => {
                format!("Closed {marker}; its tools are not callable until it is opened again.")
            }
        };
        let rest: Vec<Fragment> = frags
            .into_iter()
            .filter(|f| f.subject.as_ref() != Some(&marker))
            .collect();
        let (words, mut announces) = self.words(view.name, rest);
        if plan.open {
            announces.insert(marker);
        }
        self.shown(&announces);
        let text = if words.is_empty() {
            head
        } else {
            format!("{head}\n{words}")
        };
        Answer {
            result: CallToolResult::text(text),
            announces,
        }
    }
}

fn what_failed(after: &After) -> String {
    match after {
        After::Call { tool, .. } => format!("{tool} failed"),
        After::Open { marker } => format!("Could not open {marker}"),
        After::Close { marker } => format!("Could not close {marker}"),
    }
}

/// A content block with its text bounded.
fn bound_block(c: &ContentBlock, b: &TextBounds) -> ContentBlock {
    match c {
        ContentBlock::Text {
            text,
            annotations,
            meta,
        } => ContentBlock::Text {
            text: b.bound(text),
            annotations: annotations.clone(),
            meta: meta.clone(),
        },
        other => other.clone(),
    }
}

/// An open's or close's content as a quoted block, attributed.
fn content_result(
    server: &str,
    content: Option<&[ContentBlock]>,
    b: &TextBounds,
) -> CallToolResult {
    match content {
        Some(c) if !c.is_empty() => {
            CallToolResult::text(format!("{server} says:\n{}", b.content(c)))
        }
        _ => CallToolResult::default(),
    }
}

//! `Presenter`: turns what the hint states and catalogs report into what the agent is
//! shown (§6 "RFC §8.3"), each change once. Pure and clock-free like the other cores: the
//! I/O that persists the told ids is the Host's (`mcpl_host::host::ToldStore`), and this
//! module gives it their persisted form, [`ToldFile`].
//!
//! # What the agent believes
//!
//! Per server the presenter keeps the agent's **belief**: which toolsets, instances and
//! groups it was told are open, and which dynamic tools it was told are usable where, with
//! the definition it was given. A change is news only where the state now differs from
//! the belief, so a restated value, an adoption after a reconnect (vector 9) or a full
//! statement that repeats what the agent knows tells nothing twice. After each batch of
//! changes the state is reconciled with the belief, which catches what no change explained
//! (an instance that vanished across a reconnect, a group the host opened, a policy edit).
//!
//! # Where each change is told (§6 "RFC §8.3")
//!
//! | cause | told |
//! |---|---|
//! | a result's `mcpl/hints`, while a call whose result the agent will see is in flight ([`Presenter::sending`]) | attached to that result by [`Presenter::finish`] (matched by the result's rev) |
//! | the same when nothing the agent waits for is in flight (a host's own open, a timed-out call: vector 28) | a notice |
//! | a push's `hints` | right after the push's content, by [`Presenter::push`]; a refused push's changes as a notice |
//! | `tools/hints`, a full statement, `tools/list`, a manifest change, a catalog boundary | a notice |
//!
//! A notice is a system message that starts no turn. Notices of a server without the
//! `pushEvents` grant are not put in the agent's context: the belief still changes and
//! `look` shows the state. Suggestions are rendered, never acted on (vector 19). Ended
//! records are told once per id across reconnects and restarts (vector 13): the told ids
//! are [`ToldIds`], which the Host persists with `mcpl_host::host::ToldStore` when
//! [`Presenter::take_told_dirty`] says so; an `ended` id on a closed entry counts as told
//! when that entry is (§4.3).
//!
//! All server-authored text is bounded and attributed (§7, [`TextBounds`]).
//!
//! # Reminders
//!
//! [`Presenter::reminder`], at the agent's next turn: every open toolset whose announcement
//! the agent once had but whose last announcement has left the context window
//! ([`Conversation::announced_in_context`]) is restated — what is open and what is usable.

mod finish;
mod fragment;
mod news;
#[cfg(test)]
mod props;
mod render;
#[cfg(test)]
mod tests;
mod told;

pub use finish::{CallFailure, Finished, Outcome};
pub use render::{DEFAULT_ENUM_ENTRIES, DEFAULT_PER_ITEM, TextBounds, act_call};
pub use told::{DEFAULT_TOLD_CAPACITY, ToldFile, ToldIds};

use super::catalog::CatalogOutput;
use super::conversation::{AgentMessage, Conversation, MessageKind};
use super::output::{Carrier, Cause, Change, Output};
use super::seen_ids::event_key;
use super::view::{Actual, Marker, ServerView, SetKey, ToolKey};
use fragment::{Fragment, Rank};
use mcpl_protocol::Presence;
use mcpl_protocol::Suggestion;
use mcpl_protocol::mcpl::PushEventParams;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// How the presenter behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresenterConfig {
    /// Bounds on server-authored text (§7).
    pub bounds: TextBounds,
    /// Pushes whose changes wait for their event to be shown, per server; beyond, the
    /// oldest waiting changes go out as a notice.
    pub max_waiting_pushes: usize,
    /// Ended records and suggestions kept per server for `look`.
    pub max_recent: usize,
    /// Lines about tools (usable, changed, no longer usable, moved) one message lists;
    /// beyond, one line counts the rest and points at `toolsets--look` (§7: a server that
    /// makes 20,000 tools usable at once does not put 20,000 lines in the context).
    pub max_tool_lines: usize,
    /// Bytes of events, notices and reminders shown between two of the agent's actions
    /// (its turn's start, or a call); past it, the rest are left out and counted, and the
    /// next action is told how many (issue #37 item 5; at least
    /// [`MIN_TURN_BYTES`](crate::state::host_core::MIN_TURN_BYTES)).
    pub max_turn_bytes: usize,
}

/// [`PresenterConfig::max_tool_lines`] by default.
pub const DEFAULT_MAX_TOOL_LINES: usize = 64;

impl Default for PresenterConfig {
    fn default() -> Self {
        PresenterConfig {
            bounds: TextBounds::default(),
            max_waiting_pushes: 64,
            max_recent: 32,
            max_tool_lines: DEFAULT_MAX_TOOL_LINES,
            max_turn_bytes: super::host_core::DEFAULT_MAX_TURN_BYTES,
        }
    }
}

/// An ended toolset or instance, as `look` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct EndedInfo {
    /// Its marker.
    pub marker: Marker,
    /// Why, when the server said.
    pub reason: Option<String>,
    /// When (RFC 3339), when a record said.
    pub at: Option<String>,
}

/// Counters for a report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PresenterStats {
    /// Notices given.
    pub notices: u64,
    /// Notices kept out of the agent's context (no `pushEvents` grant).
    pub silenced: u64,
    /// Results that had changes attached.
    pub attached: u64,
    /// Pushes shown.
    pub pushes: u64,
    /// Reminders given.
    pub reminders: u64,
}

/// What the agent was told is open.
#[derive(Debug, Clone, PartialEq)]
struct OpenBelief {
    marker: Marker,
    title: Option<String>,
    /// An announcement of it reached the agent (so it can leave the context).
    announced: bool,
}

/// Per server: the belief, and changes waiting for the message that will tell them.
#[derive(Debug, Default)]
struct ServerState {
    open: BTreeMap<SetKey, OpenBelief>,
    /// Where each tool was told usable, and its definition's
    /// [`Described::fingerprint`](super::view::Described::fingerprint).
    usable: BTreeMap<ToolKey, (Marker, u64)>,
    /// Calls in flight whose results the agent will see.
    expected: usize,
    /// Result-carried changes by the result's rev.
    results: BTreeMap<u64, Vec<Fragment>>,
    /// Push-carried changes by event id, oldest first.
    pushes: VecDeque<(String, Vec<Fragment>)>,
    /// Changes of pushes not shown, read before the connection's handshake was done: told
    /// once its grant is known ([`Presenter::handshake_done`]).
    before_grant: Vec<Fragment>,
    /// Messages already shown, newest last (at most [`RECENT`]): pushes by event id,
    /// results by rev. Changes they carried that apply only after they were shown — an
    /// early rev held on Streamable HTTP (§5.2) — are told as a notice, not kept for a
    /// message that will not come again.
    shown_pushes: VecDeque<String>,
    finished_results: VecDeque<u64>,
    ended: VecDeque<EndedInfo>,
    suggestions: VecDeque<Suggestion>,
    /// The toolsets a notice told opened or closed while calls were in flight (at most
    /// [`RECENT`]; forgotten when none is): an open's or close's own result then does not
    /// say it again. On the modern era a `mcpl/hints` stream may tell a change before the
    /// result of the request that made it (profile §3.5; §6: told once). **\[project\]**:
    /// no spec orders a stream against a result.
    /// Each with true for an open, false for a close or an end.
    told_while_waiting: BTreeSet<(Marker, bool)>,
}

impl ServerState {
    /// The changes waiting for the push `key`, taken; the push is remembered shown, so
    /// that changes for it that apply later are told as a notice.
    fn take_push(&mut self, key: Cow<'_, str>) -> Vec<Fragment> {
        let frags = self
            .pushes
            .iter()
            .position(|(e, _)| *e == key)
            .and_then(|i| self.pushes.remove(i))
            .map(|(_, f)| f)
            .unwrap_or_default();
        remember(&mut self.shown_pushes, key.into_owned());
        frags
    }
}

/// How many shown pushes and finished results a server's state remembers.
const RECENT: usize = 256;

fn remember<T>(recent: &mut VecDeque<T>, item: T) {
    if recent.len() == RECENT {
        recent.pop_front();
    }
    recent.push_back(item);
}

/// The presenter (see the module doc).
#[derive(Debug)]
pub struct Presenter {
    config: PresenterConfig,
    servers: BTreeMap<String, ServerState>,
    told: ToldIds,
    stats: PresenterStats,
    /// Tool lines still rendered in this pass ([`Presenter::begin`]); past it, tool news
    /// is counted, not worded (see [`PresenterConfig::max_tool_lines`]).
    tool_lines_left: usize,
}

/// Where a change's words go.
enum Dest {
    Result(u64),
    Push(String),
    Notice,
}

/// The changes in the order they are told: each message's toolset changes first (a close
/// takes its tools with it; an open comes before what is usable in it), then its tools,
/// then its suggestions. Messages keep their order.
fn message_order(outputs: &[Output]) -> Vec<(&Cause, &Change)> {
    let mut changes: Vec<(usize, u8, &Cause, &Change)> = Vec::new();
    let mut run = 0;
    for out in outputs {
        let Output::Changed { cause, change } = out else {
            continue;
        };
        if changes.last().is_some_and(|(_, _, c, _)| *c != cause) {
            run += 1;
        }
        let kind = match change {
            Change::Opened { .. }
            | Change::Retitled { .. }
            | Change::Closed { .. }
            | Change::Ended(_) => 0,
            Change::Visibility { .. } | Change::Definition { .. } | Change::Presence { .. } => 1,
            Change::Suggested(_) => 2,
        };
        changes.push((run, kind, cause, change));
    }
    changes.sort_by_key(|(run, kind, ..)| (*run, *kind));
    changes.into_iter().map(|(_, _, c, ch)| (c, ch)).collect()
}

fn dest(cause: &Cause) -> Dest {
    match cause {
        Cause::Message {
            rev,
            carrier: Carrier::Result { .. },
        } => Dest::Result(*rev),
        Cause::Message {
            carrier: Carrier::Push { event_id, .. },
            ..
        } => Dest::Push(event_id.clone()),
        _ => Dest::Notice,
    }
}

impl Presenter {
    /// A presenter that has told the ids in `told` already (load them with
    /// `mcpl_host::host::ToldStore::load`).
    pub fn new(config: PresenterConfig, told: ToldIds) -> Self {
        Presenter {
            config,
            servers: BTreeMap::new(),
            told,
            stats: PresenterStats::default(),
            tool_lines_left: 0,
        }
    }

    /// Starts a pass over `view`: what is open and usable now, and a fresh budget of tool
    /// lines to word.
    fn begin<'v>(&mut self, view: &ServerView<'v>) -> Actual<'v> {
        self.tool_lines_left = self.config.max_tool_lines;
        view.actual()
    }

    /// How it behaves.
    pub fn config(&self) -> &PresenterConfig {
        &self.config
    }

    /// The bounds on server-authored text.
    pub fn bounds(&self) -> &TextBounds {
        &self.config.bounds
    }

    /// Takes what a server's hint state reported (its `Output`s, in order; `Recover` is the
    /// Host's and ignored here), right after the state applied it. Returns the notices to
    /// show now; changes for a result or a push wait for it.
    pub fn ingest(&mut self, view: &ServerView<'_>, outputs: &[Output]) -> Vec<AgentMessage> {
        let actual = self.begin(view);
        let mut notice = Vec::new();
        let cap = self.config.max_waiting_pushes;
        for (cause, change) in message_order(outputs) {
            let frags = self.news(view, &actual, cause, change);
            if frags.is_empty() {
                continue;
            }
            let st = self.state(view.name);
            match dest(cause) {
                Dest::Result(rev) if st.expected > 0 && !st.finished_results.contains(&rev) => {
                    st.results.entry(rev).or_default().extend(frags)
                }
                Dest::Push(id) if !st.shown_pushes.contains(&id) => {
                    match st.pushes.iter_mut().find(|(e, _)| *e == id) {
                        Some((_, waiting)) => waiting.extend(frags),
                        None => st.pushes.push_back((id, frags)),
                    }
                    while st.pushes.len() > cap {
                        if let Some((_, old)) = st.pushes.pop_front() {
                            notice.extend(old);
                        }
                    }
                }
                Dest::Result(_) | Dest::Push(_) | Dest::Notice => notice.extend(frags),
            }
        }
        notice.extend(self.reconcile(view, &actual));
        self.notice(view, notice).into_iter().collect()
    }

    /// A call whose result the agent will see is about to be sent to `server` (a
    /// `Plan::Send` from the meta-tools or a direct call): changes its result carries wait
    /// for [`Presenter::finish`]. Every `sending` is matched by one `finish`.
    pub fn sending(&mut self, server: &str) {
        self.state(server).expected += 1;
    }

    /// A push was read and decided: `accepted` ones are shown, with the changes they carry
    /// right after their content; a refused one's changes are a notice (§5.2: they applied
    /// all the same).
    pub fn push(
        &mut self,
        view: &ServerView<'_>,
        params: &PushEventParams,
        accepted: bool,
    ) -> Vec<AgentMessage> {
        let st = self.state(view.name);
        // Waiting changes are keyed as the hint state's carrier keeps the id.
        let key = event_key(&params.event_id);
        let frags = st.take_push(key);
        if !accepted {
            return self.notice(view, frags).into_iter().collect();
        }
        let b = self.config.bounds;
        let about = match (&params.toolset, &params.instance) {
            (Some(t), i) => format!(" about {}", Marker::new(view.name, t, i.as_deref())),
            (None, _) => String::new(),
        };
        let mut text = format!("Event from {}{about}:", view.name);
        if !params.payload.content.is_empty() {
            text.push('\n');
            text.push_str(&b.content(&params.payload.content));
        }
        let (changes, announces) = self.words(view.name, frags);
        if !changes.is_empty() {
            text.push('\n');
            text.push_str(&changes);
        }
        self.stats.pushes += 1;
        vec![AgentMessage {
            kind: MessageKind::Push,
            server: Some(view.name.to_owned()),
            text,
            announces,
            restates: false,
        }]
    }

    /// A push was read but will not be shown: the link refused it before its push policy
    /// was asked, or had admitted its `eventId` before. Its hints applied when it was read
    /// (§5.2), so the changes waiting for it are told as a notice, as a refused push's are.
    /// Until the connection's handshake is done, whether its notices reach the agent (its
    /// `pushEvents` grant) is not known: they wait for [`Presenter::handshake_done`].
    pub fn push_not_shown(&mut self, view: &ServerView<'_>, event_id: &str) -> Vec<AgentMessage> {
        let st = self.state(view.name);
        let key = event_key(event_id);
        // Changes for it that apply later (an early rev held) are a notice too.
        let frags = st.take_push(key);
        if !view.connected {
            st.before_grant.extend(frags);
            return Vec::new();
        }
        self.notice(view, frags).into_iter().collect()
    }

    /// The connection's handshake is done and its grant known: what waited for it
    /// ([`Presenter::push_not_shown`]) is told.
    pub fn handshake_done(&mut self, view: &ServerView<'_>) -> Vec<AgentMessage> {
        let frags = std::mem::take(&mut self.state(view.name).before_grant);
        self.notice(view, frags).into_iter().collect()
    }

    /// What a catalog reported (a tool-list boundary's presence moves, a manifest change):
    /// presence moves are told at the boundary they apply (vectors 15, 24), withdrawn hints
    /// in one notice (vector 34). Closes of removed toolsets come through the hint state
    /// (`close_toolset`, vector 33) and [`Presenter::ingest`].
    pub fn catalog_outputs(
        &mut self,
        view: &ServerView<'_>,
        outputs: &[CatalogOutput],
    ) -> Vec<AgentMessage> {
        let mut frags = Vec::new();
        for o in outputs {
            if let CatalogOutput::PresenceMoved { tool, presence } = o {
                frags.push(fragment::presence_moved(view, tool, *presence));
                if *presence == Presence::Static {
                    // The move is the news; the tool is no longer offered through act.
                    self.forget_tool(view.name, tool);
                }
            }
        }
        let actual = self.begin(view);
        frags.extend(self.reconcile(view, &actual));
        self.notice(view, frags).into_iter().collect()
    }

    /// The state changed without a hint message (the Host opened or closed an undeclared
    /// group, changed a policy, dropped a connection's hint state): tells what differs.
    pub fn refresh(&mut self, view: &ServerView<'_>) -> Vec<AgentMessage> {
        let actual = self.begin(view);
        let frags = self.reconcile(view, &actual);
        self.notice(view, frags).into_iter().collect()
    }

    /// The connection to `server` ended: changes still waiting for a result or a push are
    /// told as a notice (their messages will not be shown), and so are those of pushes not
    /// shown that waited for a grant this connection will never state (under the grant of
    /// the connection before, the best known).
    pub fn disconnected(&mut self, view: &ServerView<'_>) -> Vec<AgentMessage> {
        let st = self.state(view.name);
        // The next connection's revs start from 1 (§4.6).
        st.finished_results.clear();
        st.shown_pushes.clear();
        let mut frags: Vec<Fragment> = std::mem::take(&mut st.results)
            .into_values()
            .flatten()
            .collect();
        frags.extend(
            std::mem::take(&mut st.pushes)
                .into_iter()
                .flat_map(|(_, f)| f),
        );
        frags.append(&mut st.before_grant);
        self.notice(view, frags).into_iter().collect()
    }

    /// At the start of the agent's turn: a reminder of every open toolset whose
    /// announcement has left the context, with what is usable in it (§6 "RFC §8.3
    /// Reminders"). None when every announcement is still in view.
    pub fn reminder(
        &mut self,
        conversation: &Conversation,
        servers: &[ServerView<'_>],
    ) -> Option<AgentMessage> {
        let b = self.config.bounds;
        let mut lines = Vec::new();
        let mut announces = BTreeSet::new();
        for view in servers {
            if !view.settled() {
                continue;
            }
            let actual = self.begin(view);
            let Some(st) = self.servers.get(view.name) else {
                continue;
            };
            let usable = actual.usable_by_marker();
            for (key, belief) in &st.open {
                if !belief.announced
                    || !actual.open.contains_key(key)
                    || conversation.announced_in_context(&belief.marker)
                {
                    continue;
                }
                let title = actual.open.get(key).and_then(|s| s.shown_title().cloned());
                lines.push(fragment::open_line(view.name, &belief.marker, &title, &b));
                let usable: Vec<String> = usable
                    .get(&belief.marker)
                    .into_iter()
                    .flatten()
                    .map(|((tool, _), (m, d))| format!("  - {}", b.describe(view.name, tool, m, d)))
                    .collect();
                if usable.is_empty() {
                    lines.push("  (nothing usable in it right now)".to_owned());
                }
                lines.extend(usable);
                announces.insert(belief.marker.clone());
            }
        }
        if lines.is_empty() {
            return None;
        }
        self.stats.reminders += 1;
        Some(AgentMessage {
            kind: MessageKind::Reminder,
            server: None,
            text: format!("Reminder from the host — still open:\n{}", lines.join("\n")),
            announces,
            restates: false,
        })
    }

    /// Ended toolsets and instances of `server` the presenter heard of, newest last (for
    /// `look`).
    pub fn recent_ended(&self, server: &str) -> impl Iterator<Item = &EndedInfo> {
        self.servers
            .get(server)
            .into_iter()
            .flat_map(|s| s.ended.iter())
    }

    /// Suggestions of `server` the presenter rendered, newest last (for `look`, which shows
    /// those still pending).
    pub fn suggestions(&self, server: &str) -> impl Iterator<Item = &Suggestion> {
        self.servers
            .get(server)
            .into_iter()
            .flat_map(|s| s.suggestions.iter())
    }

    /// Markers shown to the agent by something other than the presenter (a `look` answer):
    /// they count as announced, so they can be reminded of once they leave the context.
    pub fn shown(&mut self, markers: &BTreeSet<Marker>) {
        for st in self.servers.values_mut() {
            for b in st.open.values_mut() {
                if markers.contains(&b.marker) {
                    b.announced = true;
                }
            }
        }
    }

    /// The told ended ids (to persist).
    pub fn told_ids(&self) -> &ToldIds {
        &self.told
    }

    /// True (once) when told ids were added since the last call: persist them now.
    pub fn take_told_dirty(&mut self) -> bool {
        self.told.take_dirty()
    }

    /// Counts an ended id as told without telling it.
    pub fn mark_told(&mut self, server: &str, id: &str) -> bool {
        self.told.mark_told(server, id)
    }

    /// Counters for a report.
    pub fn stats(&self) -> PresenterStats {
        self.stats
    }

    fn state(&mut self, server: &str) -> &mut ServerState {
        self.servers.entry(server.to_owned()).or_default()
    }

    /// Joins fragments into words, in the order they came, counting their ended ids told
    /// and their markers announced.
    fn words(&mut self, server: &str, frags: Vec<Fragment>) -> (String, BTreeSet<Marker>) {
        let mut announces = BTreeSet::new();
        let mut lines = Vec::new();
        let cap = self.config.max_tool_lines;
        let (mut tool_lines, mut held) = (0, 0);
        for f in frags {
            if let Some(id) = &f.ended {
                self.told.mark_told(server, id);
            }
            if f.rank == Rank::Tool {
                if f.text.is_empty() || tool_lines == cap {
                    held += 1;
                    continue;
                }
                tool_lines += 1;
            }
            if let Some(m) = f.announces {
                announces.insert(m);
            }
            lines.push(format!("- {}", f.text));
        }
        if held > 0 {
            lines.push(format!(
                "- …and {held} more tool changes, not listed here (a message lists at most {cap}); toolsets--look lists every usable tool (narrow it by `toolset` or `tool` when there are many)."
            ));
        }
        let st = self.state(server);
        for b in st.open.values_mut() {
            if announces.contains(&b.marker) {
                b.announced = true;
            }
        }
        (lines.join("\n"), announces)
    }

    /// Fragments as one notice, or nothing: none to tell, or the server has no `pushEvents`
    /// grant (§6 "RFC §8.3": its notices stay out of the agent's context; ended ids in them
    /// count as told, and `look` shows the state).
    fn notice(&mut self, view: &ServerView<'_>, frags: Vec<Fragment>) -> Option<AgentMessage> {
        if frags.is_empty() {
            return None;
        }
        if !view.push_events {
            for id in frags.iter().filter_map(|f| f.ended.as_ref()) {
                self.told.mark_told(view.name, id);
            }
            self.stats.silenced += 1;
            tracing::debug!(
                server = view.name,
                changes = frags.len(),
                "notice kept out of the agent's context: no pushEvents grant; look shows the state"
            );
            return None;
        }
        let restates = frags.iter().all(|f| f.restates);
        let st = self.state(view.name);
        if st.expected > 0 {
            for m in frags
                .iter()
                .filter(|f| f.rank == Rank::Toolset)
                .filter_map(|f| Some((f.subject.clone()?, f.announces.is_some())))
            {
                if st.told_while_waiting.len() < RECENT {
                    st.told_while_waiting.insert(m);
                }
            }
        }
        let (text, announces) = self.words(view.name, frags);
        self.stats.notices += 1;
        Some(AgentMessage {
            kind: MessageKind::Notice,
            server: Some(view.name.to_owned()),
            text: format!("Notice from the host about {}:\n{text}", view.name),
            announces,
            restates,
        })
    }

    fn remember_ended(&mut self, server: &str, info: EndedInfo) {
        let cap = self.config.max_recent;
        let st = self.state(server);
        st.ended.push_back(info);
        while st.ended.len() > cap {
            st.ended.pop_front();
        }
    }

    fn remember_suggestion(&mut self, server: &str, s: Suggestion) {
        let cap = self.config.max_recent;
        let st = self.state(server);
        st.suggestions.retain(|old| {
            (&old.toolset, &old.instance, old.action) != (&s.toolset, &s.instance, s.action)
        });
        st.suggestions.push_back(s);
        while st.suggestions.len() > cap {
            st.suggestions.pop_front();
        }
    }
}

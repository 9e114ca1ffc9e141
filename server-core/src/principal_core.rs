//! [`PrincipalCore`]: one principal as a state machine in the style of quinn-proto and of
//! [`SessionCore`](super::session). It composes the principal's [`PrincipalState`] with what
//! the state alone cannot know — the principal's connections, its links to instances, its
//! pending invitations — and decides the rules that join them. The actor around it
//! (`actors/principal/`) feeds it what happens (a session attaching or detaching, a host's
//! request, an instance's batch, the instance's answer to an open or a close, an
//! invitation) and drains what it asks for with [`PrincipalCore::poll`], in order: things to
//! tell once the principal's record is kept, answers, instances to start, join, close, leave
//! or unlink, calls to forward. The actor owns the mailbox, the addresses, the store's
//! commit queue and the timers; it decides no rule of the RFC.
//!
//! `A` is how the actor reaches an instance (its address); the core only carries it.
//!
//! | file | what |
//! |---|---|
//! | `answers.rs` | where a request came from and where its answer goes; an open's or close's outcome in the asker's terms (§4.2, §8) |
//! | `apply.rs` | an instance's batch applied to the state, the asked or shown end (§4.3), and what each session is told of it (§4.6, §5.3, §8) |
//! | `requests.rs` | `toolsets/open`, `toolsets/close`, `tools/call`: adopt, start, join, reveal; close; where a call goes (§4.2, §4.5, §8) |
//! | `invite.rs` | invitations into shared instances: the name shown, the push that suggests it (§4.6, §7, §8) |
//! | `restore.rs` | a principal read back after a restart: links to what came back, ended records for what did not (§4.3, §4.6) |
//! | `tracked.rs` | the state behind a mark set by every mutation, so that a flush restamps the view only after a change |
//!
//! Rules that live here, with their section of `shared/spec/RFC-014.md`:
//!
//! | rule | spec | where |
//! |---|---|---|
//! | default-open toolsets open when the principal's first connection attaches | §4.1, vector 25 | [`PrincipalCore::handle_attach`] |
//! | the last connection closing ends every toolset on a server that does not keep them, and always for an anonymous principal | §4.6 | [`PrincipalCore::handle_detach`] |
//! | on a server that does not keep toolsets, a principal whose last session was modern (requests, streams) ends its toolsets only once idle for its idle time, each with an ended record | profile §3.6, vector S13 | [`PrincipalCore::handle_modern_host`], [`PrincipalCore::handle_detach`], [`PrincipalCore::handle_timeout`] |
//! | a plain host's toolsets open implicitly: when it initializes, after an end, after a catalog without `toolHints` | §8 | [`PrincipalCore::handle_host_initialized`], `reopen_for_plain_hosts`, [`PrincipalCore::handle_swap_catalog`] |
//! | an end the principal asked for leaves no ended record; any other is shown | §4.3 | `apply.rs` |
//! | each session gets the same draft, its own answers and holds; events of an implicit instance reach plain hosts only | §4.6, §5.3, §8 | `apply.rs` |
//! | an invitation is a suggestion under a name of the invitee's own | §4.6, §7 | `invite.rs` |
//! | after a restart, an instance that did not come back ends with a record saying why | §4.3, §4.6 (issue #15) | `restore.rs` |

mod answers;
mod apply;
mod invite;
mod requests;
mod restore;
mod tracked;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use answers::{
    Answer, AnswerBody, Deliver, HandlerAnswer, OpenReply, ReplyTo, Via, close_body,
};
pub use apply::Applied;
pub use invite::Pending;
pub use requests::{CallRequest, HostCall};
pub use restore::read_back;
use tracked::Tracked;

use super::catalog::{Catalog, HostView};
use super::draft::HintDraft;
use super::principal::{InstanceKey, OpenOutcome, PrincipalState, Statement, Versioned};
use crate::author::ParticipantId;
use crate::ids::{InstanceId, SessionId};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The reason of an end when the principal's last connection closed on a server that does
/// not keep toolsets (§4.6).
pub const REASON_DISCONNECTED: &str = "every connection of the principal closed";
/// The reason of an end when a principal of a server that does not keep toolsets was idle
/// (no connection, no request, no open stream) for its idle time (stateless profile §3.6,
/// vector S13).
pub const REASON_IDLE: &str = "the principal was idle for longer than the server keeps toolsets";
/// How long a server that does not keep toolsets waits, after a principal's last modern
/// request or stream ended, before it ends the principal's toolsets (stateless profile
/// §3.6; **\[project\]**: ten minutes — long enough for an agent's turn between two
/// requests, short enough that a host that went away frees what it held).
pub const DEFAULT_IDLE_END: Duration = Duration::from_secs(600);
/// The reason of an end the host asked for (`toolsets/close`).
pub const REASON_CLOSED: &str = "closed";

/// This principal's record of an instance, as the instance knows it.
#[derive(Debug, Clone)]
pub struct InstanceLink<A> {
    /// How the actor reaches the instance.
    pub addr: A,
    /// The instance's id.
    pub id: InstanceId,
    /// Who this principal is in the instance.
    pub who: ParticipantId,
}

/// What the core knows of one connection of the principal.
#[derive(Debug, Clone)]
struct SessionView {
    /// Its host finished the handshake: invitations may go to it.
    ready: bool,
    /// Its host did not advertise `toolHints` (§8): it uses the implicit opens.
    plain: bool,
    /// The number of what was waiting to be told when it attached: that was before its
    /// time, and is not told to it (issue #42 item 1).
    since: u64,
    /// Its host answered `initialize`: a legacy connection, whose end is §4.6's; one that
    /// did not served modern requests or streams, whose end starts the idle time.
    legacy: bool,
}

/// The room for outputs a drained queue keeps (a call's turn takes one or two); more is
/// given back once drained, down to exactly this (a queue grows to four at its first
/// push), so that an idle principal keeps only a turn's room (issue #42).
const KEPT_OUTPUTS: usize = 2;

/// What the core asks the actor to do, in order: see [`PrincipalCore::poll`].
#[derive(Debug)]
pub enum Output<A> {
    /// Keep the principal's record, then tell every session its part of `applied`
    /// ([`PrincipalCore::split`]) once the record and the instance's step are kept.
    Tell {
        /// The instance the changes are about.
        about: Option<InstanceKey>,
        /// What was applied.
        applied: Applied,
    },
    /// Answer one request of one session, changing nothing, after what waits to be told.
    Answer {
        /// The session.
        session: SessionId,
        /// The answer.
        answer: Answer,
    },
    /// Send a delivery to one session, after what waits to be told.
    Deliver {
        /// The session.
        session: SessionId,
        /// What to deliver.
        deliver: Deliver,
    },
    /// Tell every session, after what waits to be told, that the catalog was replaced and
    /// what that changed.
    Swapped {
        /// The new catalog.
        catalog: Arc<Catalog>,
        /// What the swap changed.
        draft: HintDraft,
    },
    /// Start an instance of `key.toolset` (its open entry is in `base`), await its open and
    /// feed the answer to [`PrincipalCore::handle_entered`]. `reply` is `None` for an open
    /// nobody asked for (default, implicit: §4.1, §8).
    Start {
        /// The instance to start.
        key: InstanceKey,
        /// Its open entry.
        base: HintDraft,
        /// The open's options.
        options: Option<Value>,
        /// Where the answer goes.
        reply: Option<ReplyTo>,
    },
    /// Join the instance this principal was invited to as `link.who`, await it and feed
    /// the answer to [`PrincipalCore::handle_entered`].
    Join {
        /// The instance to join.
        key: InstanceKey,
        /// Its open entry.
        base: HintDraft,
        /// Where the answer goes.
        reply: ReplyTo,
        /// This principal's link to it.
        link: InstanceLink<A>,
    },
    /// Close the instance as `link.who`, await what closing did and feed it to
    /// [`PrincipalCore::handle_closed`] (nothing when there was no link).
    Close {
        /// The instance to close.
        key: InstanceKey,
        /// Where the answer goes.
        reply: ReplyTo,
        /// This principal's link to it.
        link: Option<InstanceLink<A>>,
    },
    /// The principal ended its record itself: the instance hears it as a close.
    Leave(InstanceLink<A>),
    /// The principal applied the instance's end: it drops its link.
    Unlink(InstanceLink<A>),
    /// Run a call in the instance's logic.
    Call {
        /// This principal's link to the instance.
        link: InstanceLink<A>,
        /// This principal's key for it.
        key: InstanceKey,
        /// The session that called.
        session: SessionId,
        /// The call's request id.
        request: mcpl_protocol::jsonrpc::Id,
        /// The tool.
        tool: String,
        /// The call's arguments.
        arguments: Map<String, Value>,
    },
    /// Tell the inviting instance the name this principal shows its invitation under (§7).
    Named {
        /// How the actor reaches the inviting instance.
        addr: A,
        /// Who this principal is in it.
        who: ParticipantId,
        /// The name, or `None` for none.
        name: Option<String>,
    },
}

/// What a principal without sessions is to do about retiring (`actors/registry.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retirement {
    /// It has sessions, instances or invitations: it stays.
    Stay,
    /// Nothing is left of it: it may retire.
    Idle,
    /// Only ended records are left: look again when the next expires.
    At(SystemTime),
}

/// See the module docs.
pub struct PrincipalCore<A> {
    /// The state, and whether it may have changed since it was last stamped.
    state: Tracked,
    /// An anonymous principal can never reconnect, so nothing of it is kept (§4.6).
    anonymous: bool,
    /// The server keeps a principal's toolsets when its last connection closes (§4.6).
    keep_toolsets: bool,
    /// On a server that does not keep toolsets, how long the principal may be idle after
    /// its last modern request or stream before its toolsets end (profile §3.6, S13).
    idle_end: Duration,
    /// Since when it has been idle that way: its toolsets end at this plus `idle_end`.
    idle_since: Option<SystemTime>,
    sessions: BTreeMap<SessionId, SessionView>,
    links: BTreeMap<InstanceKey, InstanceLink<A>>,
    invitations: BTreeMap<InstanceKey, Pending<A>>,
    /// The instance this principal is closing on its own request, while the logic's
    /// answer is applied: its end leaves no ended record (§4.3, `apply.rs`).
    closing: Option<InstanceKey>,
    /// The stamped state last given to the sessions (issue #40), to answer modern hosts.
    versioned: Option<Arc<Versioned>>,
    /// The stamped state last made, while anything holds it: a state made again and found
    /// the same is this one, shared rather than copied (issue #42: a session attaching
    /// while a change waits for the store held a copy of the state handed over).
    made: std::sync::Weak<Versioned>,
    out: VecDeque<Output<A>>,
}

impl<A: Clone> PrincipalCore<A> {
    /// A principal with `state` (new, or read back after a restart with its `links`).
    pub fn new(
        state: PrincipalState,
        anonymous: bool,
        keep_toolsets: bool,
        links: BTreeMap<InstanceKey, InstanceLink<A>>,
    ) -> Self {
        PrincipalCore {
            state: Tracked::new(state),
            anonymous,
            keep_toolsets,
            idle_end: DEFAULT_IDLE_END,
            idle_since: None,
            sessions: BTreeMap::new(),
            links,
            invitations: BTreeMap::new(),
            closing: None,
            versioned: None,
            made: std::sync::Weak::new(),
            out: VecDeque::new(),
        }
    }

    /// The idle time of a server that does not keep toolsets (profile §3.6, S13; default
    /// [`DEFAULT_IDLE_END`]).
    pub fn with_idle_end(mut self, idle_end: Duration) -> Self {
        self.idle_end = idle_end;
        self
    }

    /// The next thing to do, in order; `None` when nothing is left. The actor drains this
    /// after every input.
    pub fn poll(&mut self) -> Option<Output<A>> {
        let next = self.out.pop_front();
        if next.is_none() && self.out.capacity() > KEPT_OUTPUTS {
            // Drained after a burst (a change told to many, a restart's ends): the room a
            // call's turn takes is kept, the rest given back (issue #42, as the session's
            // queue does, issue #18).
            self.out = VecDeque::with_capacity(KEPT_OUTPUTS);
        }
        next
    }

    // ---- getters ----

    /// The principal's state.
    pub fn state(&self) -> &PrincipalState {
        &self.state
    }

    /// Its links to instances.
    pub fn links(&self) -> &BTreeMap<InstanceKey, InstanceLink<A>> {
        &self.links
    }

    /// Instance `id` runs again behind `addr` (issue #41: released and adopted, by this
    /// server or after another's): this principal's link to it, and an invitation of it
    /// not taken up, reach it there. Its key and who it is there, when it links to it.
    pub fn relink(&mut self, id: InstanceId, addr: A) -> Option<(InstanceKey, ParticipantId)> {
        for pending in self.invitations.values_mut().filter(|p| p.id == id) {
            pending.instance = addr.clone();
        }
        let (key, link) = self.links.iter_mut().find(|(_, l)| l.id == id)?;
        link.addr = addr;
        Some((key.clone(), link.who))
    }

    /// True when no session is attached.
    pub fn is_detached(&self) -> bool {
        self.sessions.is_empty()
    }

    /// What `tools/list` is built from: the catalog and the coarse visibility (§3).
    pub fn tools_view(&self) -> (Arc<Catalog>, BTreeSet<String>) {
        (self.state.catalog().clone(), self.state.coarse_visibility())
    }

    /// `toolsets/list`: the full statement, ended records included until they expire
    /// (§4.3).
    pub fn statement(&mut self, now: SystemTime) -> Statement {
        self.state.expire(now);
        self.state.statement(now)
    }

    /// The stamped state to answer modern hosts from (issue #40,
    /// `server-core/src/principal/stamps.rs`), restamped first: `Some` when it changed since it was
    /// last given out, for the actor to give every session.
    pub fn versioned_if_changed(&mut self) -> Option<Arc<Versioned>> {
        self.state.restamp_if_changed();
        let version = self.state.stamps().version();
        if self
            .versioned
            .as_ref()
            .is_some_and(|v| v.version() == version)
        {
            return None;
        }
        let v = self.made_now();
        self.versioned = Some(v.clone());
        Some(v)
    }

    /// The restamped state now, shared with the last one made when it is the same.
    fn made_now(&mut self) -> Arc<Versioned> {
        let now = self.state.versioned_now();
        if let Some(made) = self.made.upgrade().filter(|m| **m == now) {
            return made;
        }
        let now = Arc::new(now);
        self.made = Arc::downgrade(&now);
        now
    }

    /// The stamped state as last given out (or now, when never), for a session attaching.
    pub fn versioned(&mut self) -> Arc<Versioned> {
        self.versioned_if_changed();
        self.given()
    }

    /// The stamped state as last given out, not looking for a change (or now, when never
    /// given): for a session attaching while changes wait for the store, which it must
    /// not be shown before they are kept.
    pub fn given(&mut self) -> Arc<Versioned> {
        match &self.versioned {
            Some(v) => v.clone(),
            None => self.made_now(),
        }
    }

    /// The stamped state now, restamped first, without giving it out: taken when a step is
    /// handed to the store, and given to the sessions ([`Self::give`]) only once it is kept
    /// — a change the store then refuses never reaches a host (**\[project\]**, issue #41:
    /// a hints stream told a close that was rolled back).
    pub fn versioned_now(&mut self) -> Arc<Versioned> {
        self.state.restamp_if_changed();
        let version = self.state.stamps().version();
        match &self.versioned {
            Some(v) if v.version() == version => v.clone(),
            _ => self.made_now(),
        }
    }

    /// Gives out `v`, a state taken by [`Self::versioned_now`] and kept since: `true` when
    /// it is newer than what was last given, for the actor to give every session.
    pub fn give(&mut self, v: &Arc<Versioned>) -> bool {
        if self
            .versioned
            .as_ref()
            .is_some_and(|given| given.version() >= v.version())
        {
            return false;
        }
        self.versioned = Some(v.clone());
        true
    }

    /// Whether a principal without sessions may retire: nothing open, no invitation, no
    /// ended record to report (an anonymous principal's records can never be read again).
    /// While the principal is idle on a server that does not keep toolsets, the answer is
    /// to look again when its toolsets are due to end ([`Self::handle_timeout`]).
    pub fn retirement(&mut self, now: SystemTime) -> Retirement {
        if !self.sessions.is_empty() {
            return Retirement::Stay;
        }
        self.state.expire(now);
        let holds = self.state.instances().next().is_some() || !self.invitations.is_empty();
        if let Some(at) = self.idle_end_at().filter(|_| holds) {
            return Retirement::At(at);
        }
        if !holds && (self.anonymous || self.state.ended_records().next().is_none()) {
            return Retirement::Idle;
        }
        match self.state.next_expiry() {
            Some(at) if !holds => Retirement::At(at),
            _ => Retirement::Stay,
        }
    }

    // ---- inputs: sessions ----

    /// A session of this principal started; `since` numbers what was waiting to be told
    /// then (it is not told to this session).
    pub fn handle_attach(&mut self, id: SessionId, since: u64, now: SystemTime) {
        let first = self.sessions.is_empty();
        // Profile §3.6 (S13): a request after the idle time finds the toolsets ended,
        // whether or not the actor's timer came first.
        self.handle_timeout(now);
        let view = SessionView {
            ready: false,
            plain: false,
            since,
            legacy: false,
        };
        self.sessions.insert(id, view);
        // Profile §3.6: a request or a stream ends the idle time.
        self.idle_since = None;
        if first {
            self.open_defaults(now);
        }
    }

    /// A session of this principal stopped.
    pub fn handle_detach(&mut self, id: SessionId, now: SystemTime) {
        let legacy = self.sessions.remove(&id).is_some_and(|s| s.legacy);
        if !self.sessions.is_empty() {
            return;
        }
        // §4.6: a server that does not keep toolsets ends them with the last connection;
        // an anonymous principal can never reconnect, so nothing of it is kept (nor does
        // an anonymous modern request's state outlive it, profile §3.6).
        if self.anonymous || (!self.keep_toolsets && legacy) {
            self.end_all(REASON_DISCONNECTED, now);
        } else if !self.keep_toolsets {
            // Profile §3.6 (S13): the last modern request or stream is no connection's
            // end; the toolsets end once the principal has been idle for `idle_end`.
            // **[project]**: which of the two applies is the last session's era.
            self.idle_since = Some(now);
        }
        if self.anonymous {
            self.invitations.clear();
        }
    }

    /// Time passed (the actor's timer, at [`Self::retirement`]'s `At`): a principal idle
    /// for its idle time on a server that does not keep toolsets has its toolsets ended,
    /// each with an ended record (profile §3.6, S13).
    pub fn handle_timeout(&mut self, now: SystemTime) {
        if self.sessions.is_empty()
            && let Some(at) = self.idle_end_at()
            && now >= at
        {
            self.idle_since = None;
            self.end_all(REASON_IDLE, now);
        }
    }

    /// When an idle principal's toolsets are due to end, if they are.
    fn idle_end_at(&self) -> Option<SystemTime> {
        let since = self.idle_since?;
        Some(since.checked_add(self.idle_end).unwrap_or(since))
    }

    /// Ends every open instance with `reason`: no session is told, but a modern host
    /// reads the ends by their stamps.
    fn end_all(&mut self, reason: &str, now: SystemTime) {
        let mut closes = Vec::new();
        for e in self.state.end_all(reason, now) {
            closes.extend(e.draft.toolsets);
            self.leave(e.instance.key());
        }
        self.state.restamp(&closes);
    }

    /// A session's host answered `initialize`: whether it advertised `toolHints`.
    pub fn handle_host_initialized(&mut self, id: SessionId, tool_hints: bool, now: SystemTime) {
        if let Some(s) = self.sessions.get_mut(&id) {
            s.legacy = true;
        }
        self.host_seen(id, tool_hints, now);
    }

    /// A session's first modern request came (no `initialize`): whether it declared
    /// `mcpl/core`, as [`Self::handle_host_initialized`] is told `toolHints`. The session
    /// stays modern: its end starts the idle time (profile §3.6, S13).
    pub fn handle_modern_host(&mut self, id: SessionId, tool_hints: bool, now: SystemTime) {
        self.host_seen(id, tool_hints, now);
    }

    /// What a host's first word tells, in either era.
    fn host_seen(&mut self, id: SessionId, tool_hints: bool, now: SystemTime) {
        // §8: a host without toolHints sees the toolsets it can use without opening open.
        // A connection that served modern requests (told as a plain host) and is then
        // opened with `initialize` is what `initialize` says.
        let plain = self.state.catalog().view_for(tool_hints) == HostView::Plain;
        if let Some(s) = self.sessions.get_mut(&id) {
            s.plain = plain;
            if plain {
                self.implicit_opens(now);
            }
        }
    }

    /// A session finished its handshake (SPEC §5.3): it is told the pending invitations.
    pub fn handle_ready(&mut self, id: SessionId) {
        if let Some(s) = self.sessions.get_mut(&id) {
            s.ready = true;
            self.send_invitations_to(id);
        }
    }

    /// The server's manifest, and so its catalog, was replaced.
    pub fn handle_swap_catalog(&mut self, catalog: Arc<Catalog>, now: SystemTime) {
        // §4.1: a removed toolset's instances end (vector 33); a new default-open one opens.
        let swap = self.state.replace_catalog(catalog.clone(), now);
        for e in &swap.ended {
            self.leave(e.instance.key());
        }
        self.state.restamp(&swap.draft.toolsets);
        self.out.push_back(Output::Swapped {
            catalog: catalog.clone(),
            draft: swap.draft,
        });
        for o in swap.opened {
            // Their open entries went with the swap's draft; the logic's changes follow.
            self.out.push_back(Output::Start {
                key: o.key,
                base: HintDraft::new(),
                options: None,
                reply: None,
            });
        }
        if !catalog.tool_hints() && !self.sessions.is_empty() {
            // A catalog without toolHints: every host is a plain one now (§8).
            for s in self.sessions.values_mut() {
                s.plain = true;
            }
            self.implicit_opens(now);
        } else {
            self.reopen_for_plain_hosts(now);
        }
    }

    /// A change could not be kept: the state goes back to `state` (the record last kept),
    /// and links the record does not have, as `kept` (key → instance id), are given up:
    /// their instances see this principal go (issue #37 item 2).
    pub fn handle_rolled_back(
        &mut self,
        state: PrincipalState,
        kept: &BTreeMap<InstanceKey, InstanceId>,
    ) {
        let lost = self.state.stamps().clone();
        *self.state = state;
        // A version a modern host may have read is never given to another change.
        self.state.continue_after(&lost);
        let gone: Vec<InstanceKey> = self
            .links
            .iter()
            .filter(|(k, l)| kept.get(*k) != Some(&l.id) || self.state.instance(k).is_none())
            .map(|(k, _)| k.clone())
            .collect();
        for key in gone {
            if let Some(link) = self.links.remove(&key) {
                self.out.push_back(Output::Unlink(link));
            }
        }
    }

    /// The instances read back after a restart that this principal has no link to yet:
    /// the actor starts them (`actors/restore.rs` links the rest).
    pub fn unlinked_instances(&self) -> Vec<InstanceKey> {
        self.state
            .instances()
            .map(|i| i.key().clone())
            .filter(|k| !self.links.contains_key(k))
            .collect()
    }

    // ---- the rules the inputs share ----

    /// §4.1: `default: "open"` toolsets are open from the start of every session — again
    /// after the principal's last connection ended them, or after the host closed one (and
    /// one a plain host kept open implicitly is everyone's again, §8).
    fn open_defaults(&mut self, now: SystemTime) {
        let catalog = self.state.catalog().clone();
        for ts in catalog.default_open() {
            match self.state.open(ts, None, None, now) {
                Ok(OpenOutcome::Opened(o)) => self.out.push_back(Output::Start {
                    key: o.key,
                    base: o.draft,
                    options: None,
                    reply: None,
                }),
                Ok(OpenOutcome::Revealed(o)) => {
                    let applied = Applied {
                        draft: o.draft,
                        ..Applied::empty()
                    };
                    self.tell(Some(o.key), applied);
                }
                Ok(OpenOutcome::Adopted { .. }) | Err(_) => {}
            }
        }
    }

    /// §8: opens, for the principal's plain connections only, the toolsets a host without
    /// `toolHints` uses without opening; what is open already stays as it is
    /// (`server-core/src/principal/implicit.rs`).
    fn implicit_opens(&mut self, now: SystemTime) {
        let catalog = self.state.catalog().clone();
        for ts in catalog.implicitly_open() {
            if let Some(key) = self.state.open_implicitly(ts, now) {
                self.out.push_back(Output::Start {
                    key,
                    base: HintDraft::new(),
                    options: None,
                    reply: None,
                });
            }
        }
    }

    /// §8: after an end, a plain connection of the principal still uses the toolsets it
    /// never opened, so those that ended are opened implicitly again.
    fn reopen_for_plain_hosts(&mut self, now: SystemTime) {
        if self.sessions.values().any(|s| s.plain) {
            self.implicit_opens(now);
        }
    }

    /// The principal ended its record of an instance itself: the instance hears it as a
    /// close by this participant.
    fn leave(&mut self, key: &InstanceKey) {
        if let Some(link) = self.links.remove(key) {
            self.out.push_back(Output::Leave(link));
        }
    }

    fn tell(&mut self, about: Option<InstanceKey>, applied: Applied) {
        // Every change the principal tells takes its next version (issue #40,
        // `server-core/src/principal/stamps.rs`).
        self.state.restamp(&applied.draft.toolsets);
        self.out.push_back(Output::Tell { about, applied });
    }

    fn answer(
        &mut self,
        session: SessionId,
        request: mcpl_protocol::jsonrpc::Id,
        body: AnswerBody,
    ) {
        let answer = Answer {
            request,
            body,
            deferred: false,
        };
        self.out.push_back(Output::Answer { session, answer });
    }
}

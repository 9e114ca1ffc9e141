//! [`SessionCore`]: one connection's session as a state machine in the style of
//! quinn-proto. The actor around it (`session/`) feeds it what happens — a message from the
//! host, a delivery from the principal, a handler call's end, a catalog change — and drains
//! what it asks for with [`SessionCore::poll`]: messages to write ([`Transmit`]) and things
//! to do ([`Event`]), in one queue, in the order they are to happen. It does no I/O, holds
//! no lock, and knows nothing of actix, tokio or the transport (`scripts/purity.py`).
//!
//! It owns, and joins the rules of:
//!
//! - **the lifecycle** ([`Lifecycle`]): which requests each phase admits, `initialize`,
//!   `featureSets/update`, `mcpl/manifest`, the manifest change notice (`inbound.rs`);
//! - **reading** (`inbound.rs`): routing by method, the errors a peer's bad input gets,
//!   forwarding to the principal what it answers;
//! - **the host's requests in flight** ([`Requests`]): id reuse, answer-once, what a cancel
//!   does, progress only increasing;
//! - **the carrier choice** ([`Carriers`], §5.2/§5.3): a delivery's answers settled against
//!   the requests (fate); a hold kept only for a call still awaited; a cancel sending what
//!   the call held at once, as `tools/hints` (vector 29); a handler's end carrying what it
//!   held, unless it was cancelled (nothing is written then); changes stated earlier
//!   written before later ones (§5.2).
//!
//! **Direct calls** (issue #18: a call's latency). A call goes to the principal, which
//! resolves it against the principal's state (§3, §4.5, §8). When it resolves a call of a
//! *loose* tool (in no declared toolset) to the tool's own handler, it also gives this
//! session leave to run that tool itself ([`Answered::direct`]); later calls of it, naming
//! no instance, are run at once ([`Event::RunDirect`]) without the two hops through the
//! principal. The leave is taken back by any change about the tool without an instance in
//! a delivery (a hide, a new definition) and by every catalog change, so the session runs
//! directly only what the principal would run: the principal sends this session each such
//! change, in order after the leave, and a call read after the change goes to it again. A
//! call read before a hide's delivery reaches the session runs; the same call sent a moment
//! earlier would have run through the principal too (the host cannot have seen the hide).
//!
//! Time: no rule here depends on it (the deadlines of the session's own requests to the
//! host are the outgoing table's, beside the actor), so no input takes `now`.

mod features;
mod inbound;
mod kinds;
mod listen;
mod modern;
mod output;
mod watch;

pub use features::Offers;
pub use kinds::FeatureRequest;
pub use listen::{MAX_LISTENS, too_many_listens};
pub use modern::ModernReply;
pub use watch::KnownResources;

pub use output::{Event, Forward, Io, ToolsPage, Transmit};

use super::carrier::{AnswerFacts, AnswerKind, Carriers, Carry, Conditions, Fate};
use super::catalog::{Catalog, HostView};
use super::draft::HintDraft;
use super::lifecycle::Lifecycle;
use super::principal::Statement;
use super::requests::{Cancelled, ProgressRefused, Requests, Settled};
use crate::manifest::ManifestViews;
use crate::push::{self, PushError};
use mcpl_protocol::jsonrpc::{ErrorObject, Id, Notification, Response};
use mcpl_protocol::mcp::{
    CallToolResult, Empty, Implementation, LoggingLevel, LoggingMessageParams, ProgressParams,
};
use mcpl_protocol::mcpl::McplManifest;
use mcpl_protocol::method::{LoggingMessage, Progress, ToolListChanged, ToolsetsList};
use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

/// The room for outputs a drained queue keeps (a call's turn takes one or two); more is
/// given back once drained (issue #18), down to exactly this: a queue grows to four at
/// its first push, and an idle session held the two it never uses (issue #42).
const KEPT_OUTPUTS: usize = 2;

/// What the core asks for, in order: see [`SessionCore::poll`].
#[derive(Debug)]
pub enum Output<T: Io> {
    /// A message for the host.
    Transmit(Transmit<T>),
    /// Something for the actor to do.
    Event(Event<T>),
}

/// Who the server is, as a session answers `initialize` with it.
#[derive(Debug, Clone)]
pub struct Profile {
    /// `serverInfo`.
    pub info: Implementation,
    /// `instructions`.
    pub instructions: Option<String>,
    /// MCP logging, when offered: the level a session starts at.
    pub logging: Option<LoggingLevel>,
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// Resources, prompts and completion, when offered (`session/features.rs`).
    pub offers: Offers,
    /// Which resources may be watched, when the server lets them be (`session/watch.rs`).
    pub watchable: Option<Arc<dyn KnownResources>>,
    /// On a server that does not keep toolsets, how long an idle principal keeps them
    /// (profile §3.6, S13), stated to hinted modern hosts as `idleEndMs`; `None` when the
    /// server keeps them.
    pub idle_end: Option<std::time::Duration>,
}

/// One answer of a delivery.
#[derive(Debug)]
pub struct Answered<A> {
    /// The request answered.
    pub request: Id,
    /// What the answer is. A [`AnswerKind::Handler`] answers a tool handler's own
    /// request, which the session's handler table settled; it has no `answer`.
    pub kind: AnswerKind,
    /// A deferred call answered by a step something else caused (§5.3).
    pub deferred: bool,
    /// What to write (or run), for any other kind.
    pub answer: Option<A>,
    /// A loose tool the principal ran this call to its own handler for, and that this
    /// session may now run without asking it (module docs: direct calls).
    pub direct: Option<String>,
}

/// Changes from the principal with the answers and events that explain them.
#[derive(Debug)]
pub struct Delivery<T: Io> {
    /// The changes.
    pub draft: HintDraft,
    /// Answers to this session's requests.
    pub answers: Vec<Answered<T::Answer>>,
    /// Events to push.
    pub events: Vec<T::Event>,
    /// A call of this session whose result is to carry the draft (§5.3).
    pub hold: Option<Id>,
}

/// See the module docs. `T` names the actor's own types the core carries.
pub struct SessionCore<T: Io> {
    profile: Arc<Profile>,
    lifecycle: Lifecycle,
    requests: Requests<T::Stop>,
    carriers: Carriers,
    /// The server's manifest, as the actor last gave it.
    manifest: Arc<ManifestViews>,
    /// The catalog as of the last change the principal told this session about.
    catalog: Arc<Catalog>,
    /// The manifest this host last saw (in `initialize`, `mcpl/manifest` or a change
    /// notice), to tell which domains a replacement changes for it: kept as the server's
    /// manifest it was made from and the host's `toolHints` then, shared with every other
    /// session, rather than as a copy of its own (issue #42: an idle session's memory).
    shown: Option<Shown>,
    /// MCP logging: the least severe level sent; `None` when logging is not offered.
    log_level: Option<LoggingLevel>,
    /// Loose tools with their own handler that this session runs without asking the
    /// principal (module docs: direct calls). A subset of the catalog's tools.
    direct: BTreeSet<String>,
    /// Modern requests in flight (`modern.rs`): what their answers are owed.
    modern: crate::requests::IdMap<kinds::ModernCall>,
    /// A modern request was served on this connection: the principal was told this host
    /// sees the plain list (§8).
    modern_seen: bool,
    /// Resource, prompt and completion requests handed to the handlers and not answered
    /// yet (`features.rs`).
    features_in_flight: usize,
    /// Modern requests are served each on a connection of its own (`modern.rs`: an
    /// anonymous connection's), and those in flight there.
    detach_modern: bool,
    detached: std::collections::HashSet<Id>,
    /// The detached requests that are `subscriptions/listen` streams (`listen.rs`).
    detached_listens: std::collections::HashSet<Id>,
    /// Open `subscriptions/listen` streams, in the order opened (`listen.rs`).
    listens: Vec<(Id, kinds::Listen)>,
    /// A stream that carries events was opened: the principal was told this modern
    /// session may be pushed to (`listen.rs`).
    pushable: bool,
    /// The resources a legacy `resources/subscribe` asked to watch (`watch.rs`).
    subscriptions: kinds::Subscriptions,
    /// The MRTR input of the modern `tools/call` being read (`modern.rs`).
    next_input: Option<crate::mrtr::Carried>,
    /// The principal's stamped state as it last gave it (issue #40): what a hinted modern
    /// request's result and an `mcpl/hints` stream are told from (`modern.rs`).
    versioned: Option<Arc<crate::Versioned>>,
    /// The session's principal is a named one: its state outlives a request, so a modern
    /// request may be shown hints (`modern.rs`; profile §3.6).
    named: bool,
    out: VecDeque<Output<T>>,
}

/// What a host was last shown of the manifest: the server's views it was one of and
/// whether the host was shown hints (the view itself is shared, never a copy).
#[derive(Debug)]
struct Shown {
    manifest: Arc<ManifestViews>,
    tool_hints: bool,
}

impl Shown {
    /// The manifest as the host was shown it.
    fn view(&self) -> &McplManifest {
        self.manifest.shown_to(self.tool_hints)
    }
}

impl<T: Io> SessionCore<T> {
    /// A session that has read nothing yet.
    pub fn new(profile: Arc<Profile>, manifest: Arc<ManifestViews>, catalog: Arc<Catalog>) -> Self {
        SessionCore {
            log_level: profile.logging,
            profile,
            lifecycle: Lifecycle::default(),
            requests: Requests::default(),
            carriers: Carriers::default(),
            manifest,
            catalog,
            shown: None,
            direct: BTreeSet::new(),
            modern: Default::default(),
            modern_seen: false,
            features_in_flight: 0,
            detach_modern: false,
            detached: std::collections::HashSet::new(),
            detached_listens: std::collections::HashSet::new(),
            listens: Vec::new(),
            pushable: false,
            subscriptions: kinds::Subscriptions::default(),
            next_input: None,
            versioned: None,
            named: false,
            out: VecDeque::new(),
        }
    }

    /// The next thing to write or do, in order; `None` when nothing is left. The actor
    /// drains this after every input.
    pub fn poll(&mut self) -> Option<Output<T>> {
        let next = self.out.pop_front();
        if next.is_none() && self.out.capacity() > KEPT_OUTPUTS {
            // Drained after a burst: an idle session (most sessions, most of the time) keeps
            // no more than the room a call's turn takes, which it would otherwise allocate
            // and free again for every call (issue #18).
            self.out = VecDeque::with_capacity(KEPT_OUTPUTS);
        }
        next
    }

    // ---- inputs (reading the host's messages is in `inbound.rs`) ----

    /// The server's manifest was replaced (the actor passes the new one before the next
    /// input).
    pub fn set_manifest(&mut self, manifest: Arc<ManifestViews>) {
        self.manifest = manifest;
    }

    /// A delivery from the principal: each answer settled against the requests in flight,
    /// then written, run or pushed where the carrier choice says.
    pub fn deliver(&mut self, d: Delivery<T>) {
        // Direct calls: what changed a loose tool takes back the leave to run it here,
        // before this delivery's answers give any anew (the principal sent them after).
        self.revoke_direct(&d.draft);
        let mut bodies = Vec::with_capacity(d.answers.len());
        let answers = d
            .answers
            .into_iter()
            .map(|a| {
                let fate = match a.kind {
                    AnswerKind::Handler { .. } => Fate::Awaited,
                    _ => match self.requests.settle(&a.request) {
                        Settled::Answer => Fate::Awaited,
                        Settled::Cancelled => Fate::Cancelled,
                        Settled::Unknown => Fate::NobodyWaits,
                    },
                };
                if fate == Fate::NobodyWaits && a.answer.is_some() {
                    tracing::warn!(request = %a.request, "an answer nobody waits for; dropped");
                }
                if let Some(tool) = a.direct {
                    self.direct.insert(tool);
                }
                bodies.push(a.answer.map(|b| (a.request.clone(), b)));
                AnswerFacts {
                    request: a.request,
                    kind: a.kind,
                    deferred: a.deferred,
                    fate,
                }
            })
            .collect();
        // Only a delivery with events needs to know where it may push (the manifest view
        // this costs is not built for every call's answer).
        let feature_set = if d.events.is_empty() {
            Err(PushError::NotGranted)
        } else {
            let f = self.push_feature_set(None);
            if let Err(error) = &f {
                tracing::debug!(%error, "may not push; the events are left out");
            }
            f
        };
        // A hold for a call no longer awaited (answered in this very delivery, cancelled,
        // unknown) would never be released by its result.
        let hold = d.hold.filter(|call| self.requests.awaits_answer(call));
        // Profile §3.5: a modern session's events go on its streams that carry them.
        let streamed = (self.streams_events() && !d.events.is_empty())
            .then(|| (d.events.clone(), d.draft.suggest.clone()));
        let conditions = Conditions {
            hinted: self.hinted(),
            may_push: feature_set.is_ok(),
        };
        let steps = self.carriers.deliver(
            super::carrier::Delivery {
                draft: d.draft,
                answers,
                events: d.events.len(),
                hold,
            },
            conditions,
        );
        let mut events: Vec<Option<T::Event>> = d.events.into_iter().map(Some).collect();
        for step in steps {
            match step {
                Carry::Hints(h) => self.transmit(Transmit::Hints(h)),
                Carry::Answer { n, hints } => {
                    if let Some((request, answer)) = bodies.get_mut(n).and_then(Option::take) {
                        self.transmit(Transmit::Answer {
                            request,
                            answer,
                            hints,
                        });
                    }
                }
                Carry::Run { n } => {
                    if let Some((request, answer)) = bodies.get_mut(n).and_then(Option::take) {
                        self.emit(Event::Run { request, answer });
                    }
                }
                Carry::Push { n, hints } => {
                    if let (Some(event), Ok(feature_set)) =
                        (events.get_mut(n).and_then(Option::take), &feature_set)
                    {
                        let feature_set = feature_set.clone();
                        self.transmit(Transmit::Push {
                            event,
                            feature_set,
                            hints,
                        });
                    }
                }
            }
        }
        if let Some((events, suggest)) = streamed {
            self.stream_events(&events, &suggest);
        }
    }

    /// `notifications/cancelled` for the host's request `id` (`inbound.rs`): a running
    /// handler is stopped, a forwarded request marked so its answer is not written; what
    /// the call held goes now, as `tools/hints` (§5.2, vector 29). Anything else: nothing
    /// (MCP).
    fn cancel(&mut self, id: &Id, reason: Option<&str>) {
        if self.detached.contains(id) {
            // Served on a connection of its own: the cancel goes there (`modern.rs`).
            return self.emit(Event::CancelDetached {
                request: id.clone(),
                reason: reason.map(str::to_owned),
            });
        }
        if self.end_listen(id) {
            return;
        }
        self.modern_forget(id);
        let stop = match self.requests.cancel(id) {
            Cancelled::Nothing => {
                tracing::debug!(%id, "cancellation for no running request; ignored");
                return;
            }
            Cancelled::Forwarded => None,
            Cancelled::Running(h) => Some(h),
        };
        let held = self.carriers.take_for(id, self.hinted());
        let steps = self.carriers.standalone(held);
        self.carry(steps);
        match stop {
            Some(stop) => {
                tracing::debug!(%id, ?reason, "tool call cancelled");
                self.emit(Event::Stop {
                    request: id.clone(),
                    stop,
                });
            }
            None => tracing::debug!(%id, ?reason, "forwarded request cancelled"),
        }
    }

    /// A handler call's task ended with `result` (a tool error already made a result, a
    /// panic or an abort an internal error). A cancelled call gets no response: what it
    /// held went at the cancel (MCP, vector 29). Otherwise what it asked of the host and
    /// left unanswered is abandoned, and its response written: a result carries what it
    /// held (§5.3); an error cannot, so that goes after it as `tools/hints`.
    pub fn call_ended(&mut self, id: Id, key: u64, result: Result<CallToolResult, ErrorObject>) {
        if !self.requests.finish(&id, key) {
            tracing::debug!(%id, "cancelled call ended; no response");
            return;
        }
        self.call_ended_at_once(id, result);
    }

    /// A handler call that ended in the turn that started it (its first poll): as
    /// [`SessionCore::call_ended`], for a call never entered as running, since no cancel
    /// could come between its start and its end.
    pub fn call_ended_at_once(&mut self, id: Id, result: Result<CallToolResult, ErrorObject>) {
        let held = self.carriers.take_for(&id, self.hinted());
        self.emit(Event::Ended(id.clone()));
        match result {
            // One call's changes are held at a time (`server-core/src/carrier.rs`): taken for this
            // call, nothing stated earlier is left to go first.
            Ok(result) => {
                self.transmit(Transmit::CallResult {
                    request: id,
                    result,
                    hints: held,
                });
            }
            Err(e) => {
                self.send(Response::err(Some(id), e).into());
                let steps = self.carriers.standalone(held);
                self.carry(steps);
            }
        }
    }

    /// The principal's full statement for `toolsets/list` (§4.3): numbered with the next rev
    /// even when empty (vector 38), after the changes held for calls (stated earlier).
    pub fn statement(&mut self, request: Id, statement: Statement) {
        if self.requests.settle(&request) != Settled::Answer {
            return;
        }
        if !self.hinted() && !self.hinted_modern_request(&request) {
            // toolHints was withdrawn since the request was forwarded (vector 34).
            let e = ErrorObject::method_not_found(
                <ToolsetsList as mcpl_protocol::method::Method>::NAME,
            );
            return self.send(Response::err(Some(request), e).into());
        }
        self.flush_held();
        self.transmit(Transmit::Statement { request, statement });
    }

    /// What `tools/list` is built from (§3): every tool, with the principal's coarse
    /// visibility; its `mcpl/rev` is read as the page is written.
    pub fn tools_view(
        &mut self,
        request: Id,
        cursor: Option<String>,
        catalog: Arc<Catalog>,
        visible: BTreeSet<String>,
    ) {
        if self.requests.settle(&request) != Settled::Answer {
            return;
        }
        let view = catalog.view_for(self.lifecycle.host_tool_hints());
        let page_size = self.profile.page_size;
        self.transmit(Transmit::ToolsList(ToolsPage {
            request,
            cursor,
            catalog,
            visible,
            view,
            page_size,
            by_name: false,
        }));
    }

    /// A manifest change (§4.1): the new manifest's domains, then what it changed for the
    /// principal (ended instances, vector 33), then `tools/list_changed` when the list this
    /// host is shown changed (a withdrawn `toolHints` turns hints off, vector 34).
    pub fn catalog_swapped(&mut self, catalog: Arc<Catalog>, draft: HintDraft) {
        // What this host is shown, visibility aside (that travels as hints, never as a
        // list change): declarations, presence, toolsets, compat tools.
        let shown = |s: &Self| s.catalog.list_tools(s.view(), &BTreeSet::new(), 0).tools;
        let before = shown(self);
        self.catalog = catalog;
        // Direct calls: any tool may have changed; the principal says again.
        self.direct.clear();
        self.on_manifest_replaced();
        if !self.hinted() {
            // Vector 34: a host no longer shown hints gets none, held ones included.
            self.carriers.clear();
        }
        let draft = Some(draft).filter(|_| self.hinted());
        let steps = self.carriers.standalone(draft);
        self.carry(steps);
        let changed = before != shown(self);
        if changed && self.lifecycle.negotiated().is_some() {
            self.send(Notification::new::<ToolListChanged>(&Empty::default()).into());
        }
        if changed {
            // MCP 2026-07-28: told on the streams that opted in (`listen.rs`).
            self.tell_listens_tools_changed();
        }
    }

    /// A running handler's `notifications/progress`: sent when it increases (MCP).
    pub fn progress(
        &mut self,
        call: &Id,
        key: u64,
        params: ProgressParams,
    ) -> Result<(), ProgressRefused> {
        self.requests.progress(call, key, params.progress)?;
        self.send(Notification::new::<Progress>(&params).into());
        Ok(())
    }

    /// A handler's `notifications/message` for its call: sent when at or above the level —
    /// a modern request's own `logLevel` (none without one, MCP 2026-07-28
    /// `basic/index.md`), else the connection's.
    pub fn log(&mut self, call: Option<&Id>, params: LoggingMessageParams) {
        let least = match self.modern_log_level(call) {
            Some(own) => own.filter(|_| self.offers_logging()),
            None => self.log_level,
        };
        if least.is_some_and(|least| params.level >= least) {
            self.send(Notification::new::<LoggingMessage>(&params).into());
        } else {
            tracing::trace!(level = ?params.level, "log message below the level; not sent");
        }
    }

    // ---- handler calls ----

    /// A key for a handler call about to start.
    pub fn new_key(&mut self) -> u64 {
        self.requests.new_key()
    }

    /// Records a started handler call.
    pub fn start(&mut self, id: Id, key: u64, stop: T::Stop) {
        self.requests.start(id, key, stop);
    }

    /// True while the handler call with this id and key runs.
    pub fn is_running(&self, id: &Id, key: u64) -> bool {
        self.requests.is_running(id, key)
    }

    /// How many handler calls run.
    pub fn running(&self) -> usize {
        self.requests.running()
    }

    /// The session is stopping: what stops every running call.
    pub fn stop_all(&mut self) -> Vec<T::Stop> {
        self.requests.cancel_all()
    }

    // ---- what the session is ----

    /// The lifecycle, to read.
    pub fn lifecycle(&self) -> &Lifecycle {
        &self.lifecycle
    }

    /// True when this host is shown hints now: initialized, and both sides advertised
    /// `toolHints` (§2). Hints for any other host are dropped (vector 8).
    pub fn hinted(&self) -> bool {
        self.lifecycle.negotiated().is_some() && self.view() == HostView::Hinted
    }

    /// The feature set a push goes under (`requested`, or the one the grant allows), or
    /// why the host may not be pushed to (SPEC §5.3, §9).
    pub fn push_feature_set(&self, requested: Option<&str>) -> Result<String, PushError> {
        let grant = self.lifecycle.push_grant()?;
        push::feature_set_for(self.manifest_shown(), grant, requested)
    }

    /// What this host is shown: hints only when both sides advertised `toolHints` (§2).
    fn view(&self) -> HostView {
        self.catalog.view_for(self.lifecycle.host_tool_hints())
    }

    /// The manifest as this host is to be shown it now.
    fn manifest_shown(&self) -> &Arc<McplManifest> {
        self.manifest.shown_to(self.lifecycle.host_tool_hints())
    }

    /// Notes that this host was just shown [`Self::manifest_shown`].
    fn note_shown(&mut self) {
        self.shown = Some(Shown {
            manifest: self.manifest.clone(),
            tool_hints: self.lifecycle.host_tool_hints(),
        });
    }

    /// True when the server offers MCP logging, so `logging/setLevel` is served.
    fn offers_logging(&self) -> bool {
        self.log_level.is_some()
    }

    /// A loose tool this session may run at once, if `tool` is one (module docs: direct
    /// calls).
    pub fn runs_direct(&self, tool: &str) -> bool {
        self.direct.contains(tool)
    }

    /// Takes back the leave to run a loose tool here from every tool `draft` changes
    /// without naming an instance (its visibility, its definition).
    fn revoke_direct(&mut self, draft: &HintDraft) {
        if self.direct.is_empty() {
            return;
        }
        for hint in draft.tools.iter().filter(|h| h.instance.is_none()) {
            self.direct.remove(&hint.name);
        }
    }

    // ---- queueing ----

    fn transmit(&mut self, t: Transmit<T>) {
        self.out.push_back(Output::Transmit(t));
    }

    fn emit(&mut self, e: Event<T>) {
        self.out.push_back(Output::Event(e));
    }

    /// Tells the principal, once, that this session may be pushed to (`listen.rs`).
    fn pushable(&mut self) {
        if !self.pushable {
            self.pushable = true;
            self.forward(Forward::Ready);
        }
    }

    /// Queues steps that only write `tools/hints` (a cancel's, standalone changes').
    fn carry(&mut self, steps: Vec<Carry>) {
        for step in steps {
            if let Carry::Hints(h) = step {
                self.transmit(Transmit::Hints(h));
            }
        }
    }

    /// Queues what is held for calls, before another hint-carrying message.
    fn flush_held(&mut self) {
        if let Some(Carry::Hints(held)) = self.carriers.flush() {
            self.transmit(Transmit::Hints(held));
        }
    }
}

#[cfg(test)]
mod tests;

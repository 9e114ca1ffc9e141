//! [`LinkCore`]: one connection's rules, sans I/O (quinn-proto style). No runtime, no
//! transport, no clock: the driver (`mcpl_host::link::ServerLink`, an actor) feeds it what it
//! read and the time (`now`), and carries out what it polls — messages to write
//! ([`LinkCore::poll_transmit`]), outcomes for waiters and messages for the driver to act
//! on ([`LinkCore::poll_event`]), and the one deadline to wake it at
//! ([`LinkCore::poll_timeout`], then [`LinkCore::handle_timeout`]).
//!
//! What it holds: the connection's one phase enum ([`session::Stage`]) and its session
//! (the grant rules: `grant.rs`), the era's stamp (`era.rs`), the pending table with
//! its deadlines (`pending.rs`), paging (`paging.rs`: the core sends a listing's pages
//! and reads them itself), and the pure readings the actor
//! applies: a probe's answer (`era.rs`), a `tools/list` page (`decode.rs`), a modern
//! result asking for input (`mrtr.rs`), an elicitation answered unattended (`elicit.rs`).
//!
//! **Its own crate** (issue #38): the core is in `mcpl-host-core`, which depends on no
//! runtime, actor framework or transport, so the build keeps it pure; the driver is in
//! `mcpl-host`. What the driver calls is therefore `pub` (it was `pub(crate)` beside it);
//! the modules only the driver reads (`decode`, `elicit`, `grant`, `handshake`, `paging`,
//! `profile`, `push`, `session`) are `#[doc(hidden)]`: the driver's interface, not an API.
//! `mcpl_host::link` re-exports what is public ([`Era`], [`EraPolicy`], [`LinkPhase`],
//! [`error::LinkError`], …).
//!
//! | file | what |
//! |---|---|
//! | `error` | [`error::LinkError`], [`error::DisconnectReason`]: what a request or a connection ends with, by who is at fault, mapped to JSON-RPC codes in one place |
//! | `phase` | [`LinkPhase`]: where a link is, one word |
//! | `push` | a `push/event` admitted or refused by the grant; a retry told from another event |
//! | `session` | [`session::Stage`], [`session::Session`]: the handshake stage, the grant in force |
//! | `grant` | the grant rules: the proposal, revoke at once, widen on receipt, fall back |
//! | `handshake` | what follows the probe's answer; an `initialize` result taken or not |
//! | `pending` | the awaited ids with their deadlines, the timed-out ids |
//! | `paging` | `tools/list` paging, the listing queued behind it, its retry delay |
//! | `era` | [`EraPolicy`], [`Era`]: the probe read, a modern request's `_meta` |
//! | `decode` | a result decoded by its method's type; a `tools/list` page; a wrapped manifest |
//! | `mrtr` | a modern `InputRequiredResult` read: retry with answers, or fail |
//! | `elicit` | `elicitation/create` answered with nobody to ask |
//! | `profile` | RFC-014's stateless profile on a modern server: the request keys, the stamped view fed what is read, handed on as legacy hints |
//!
//! # The rules, and where each is decided
//!
//! § is the MCPL base specification's (`shared/spec/upstream/SPEC.md`); "MCP" names the
//! MCP page (2025-11-25 for the legacy era, 2026-07-28 for the modern one); "vector" is
//! RFC-014's. The driver sends and tells what these return; it decides none of them.
//!
//! | rule | § | where |
//! |---|---|---|
//! | **grant: the proposal**: the server's advertisement as this host reads it, intersected with the host's policy, sent as concrete paths; the rest denied, the invalid feature sets named in `disabled` | §5.3, §6.7 | `grant.rs`: `Session::policy` (`Session::intended_grant` in `session.rs`) |
//! | **grant: revoke at once**: a renegotiation that narrows the grant puts it in force before the request is sent | §6.7, §17.5 | `grant.rs`: `Session::renegotiate` |
//! | **grant: widen on receipt**: a wider grant is in force only once accepted; an unanswered expansion never activates | §6.7 | `grant.rs`: `Session::initial_receipt`, `Session::later_receipt` |
//! | **grant: fall back**: `fallback: "close"` ends the connection; another refusal, or an initial exchange that failed, serves the server as plain MCP; a lost initial exchange ends the connection; a later failure changes nothing | §3.2, §5.3, §6.7 | `grant.rs`: `read_receipt`, `Session::initial_receipt`, `Session::later_receipt` |
//! | **grant: stale receipt**: a receipt for a policy older than the last one sent is ignored | §6.7 | `grant.rs`: `Session::later_receipt` (`policy_seq`) |
//! | a server request needing what is not granted: -32002 naming it; ungated or unserved: -32601 | §5.4, §6.6 | `grant.rs`: `refusal_of` |
//! | **handshake**: what follows the probe's answer (modern, once more with a listed version, `initialize`, or the end) | MCP 2026-07-28 `basic/versioning.md` | `handshake.rs`: `probe_step` |
//! | **handshake**: an `initialize` result in error, late, malformed or in a version not spoken ends the connection | MCP 2025-11-25 `basic/lifecycle.md` | `handshake.rs`: `read_initialize` (`grant.rs`: `handshake_failure`) |
//! | **era/probe**: a session opens with the probe unless the link speaks only legacy or found the server legacy | MCP 2026-07-28 `basic/versioning.md` **\[project\]** | [`opens_with_probe`] |
//! | **era/probe**: a `DiscoverResult` or a modern error is a modern server; anything else, or silence, legacy; a dual-era MCPL server is served legacy under `auto` | MCP 2026-07-28 `basic/versioning.md`, stdio and Streamable HTTP "Backward Compatibility" | `era.rs`: [`era::read_probe`] |
//! | **era/probe**: -32022 listing a version this host speaks: that one, modern first | MCP 2026-07-28 `basic/versioning.md` **\[project\]** | `era.rs`: [`era::supported_choice`]; a caller's request: `LinkCore::on_input_round` |
//! | **era/probe**: a probe answered late, while `initialize` is unanswered, still makes the server modern | MCP stdio "Backward Compatibility" **\[project\]** | `LinkCore::late_discovery` |
//! | **era/probe**: every modern request carries the era's `_meta` | MCP 2026-07-28 `basic/index.md` | `era.rs`: [`Stamp::apply`], called by [`LinkCore::send_request`] |
//! | the stateless profile: requests carry the mark and the grant; what is read goes through the stamped view | RFC-014 profile §3.2, §3.3, §3.6 **\[project\]** | `profile.rs`: `Hinted::stamp`, `Profile::read` |
//! | **paging**: one listing at a time, a reason to list during one queues one more after it | MCP `server/tools.md` (`list_changed`) **\[project\]** | `paging.rs`: `Refresh::want`, `Refresh::end` |
//! | **paging**: every page followed by `nextCursor`; a repeated cursor or [`paging::MAX_PAGES`] pages ends it as endless; the lowest `mcpl/rev`, the least `ttlMs` | MCP `server/utilities/pagination.md`, RFC-014 §3 | `paging.rs`: `Refresh::page` |
//! | **paging**: a failed listing the host needs is tried again after a growing delay | **\[project\]** | `paging.rs`: `Refresh::end`, `retry_delay` |
//! | **paging**: a listing is stale after its `ttlMs` with no change stream; a `tools/call` then lists again | **\[project\]** | `session.rs`: `Session::tools_stale` |
//! | **paging**: manifest re-reads one at a time, at most once per interval, the rest coalesced | §17.8 | `paging.rs`: `Refresh::want_manifest`, `Refresh::manifest_read` |
//! | **pending deadlines**: each request waits its deadline; the earliest is the one timer | MCP 2025-11-25 `basic/lifecycle.md` "Timeouts", 2026-07-28 `basic/patterns/cancellation.md` "Timeouts" | `pending.rs`: [`PendingTable::insert`], [`PendingTable::next_deadline`] |
//! | **pending deadlines**: a request past its deadline times out and is cancelled (not `initialize`, not the probe, not on modern Streamable HTTP) | MCP 2025-11-25 `basic/utilities/cancellation.md`, 2026-07-28 `basic/patterns/cancellation.md` | [`LinkCore::handle_timeout`], [`LinkCore::cancels_by_notification`] |
//! | **pending deadlines**: a timed-out id is still recognised, its late result read and tapped; the oldest forgotten first | RFC-014 §5.2, vector 28 | `pending.rs`: [`PendingTable::expire`], [`PendingTable::take_late`]; [`LinkCore::handle_read`] |
//! | **pending deadlines**: a request whose answer the transport lost on an unordered link is cancelled, so the server tells its changes as `tools/hints` | RFC-014 §5.2, vector 29 | [`LinkCore::handle_read`] |
//! | **push admission**: not MCPL: -32601; before the initial receipt or without `pushEvents`: -32002; bad params -32602; an undeclared, disabled or mismatched feature set: -32003, -32001, -32002 | §5.3, §5.4, §6.4, §9 | `push.rs`: `admit_push` |
//! | **push admission**: a retry is the same event by its content, not only its id | §9.4 | `push.rs`: `content_digest` |
//! | **MRTR**: an `InputRequiredResult` is answered (a defaultable form accepted, the rest declined) and the request sent again with the state echoed; at most [`mrtr::MAX_INPUT_ROUNDS`] rounds | MCP 2026-07-28 `basic/patterns/mrtr.md` **\[project\]** | `mrtr.rs`: [`mrtr::read`]; [`LinkCore::send_round`] |
//! | a legacy `elicitation/create` answered with nobody to ask | MCP `client/elicitation.md` **\[project\]** | `elicit.rs`: `unattended` |

#[doc(hidden)]
pub mod decode;
#[doc(hidden)]
pub mod elicit;
pub mod era;
pub mod error;
#[doc(hidden)]
pub mod grant;
#[doc(hidden)]
pub mod handshake;
pub mod mrtr;
#[doc(hidden)]
pub mod paging;
pub mod pending;
pub mod phase;
#[doc(hidden)]
pub mod profile;
#[doc(hidden)]
pub mod push;
#[doc(hidden)]
pub mod session;

#[cfg(test)]
mod tests;

use decode::tools_page;
use era::{Era, EraPolicy, Stamp, Supported, supported_choice};
use error::LinkError;
use mcpl_protocol::jsonrpc::RawValue;
use mcpl_protocol::jsonrpc::to_raw;
use mcpl_protocol::mcp::CancelledParams;
use mcpl_protocol::mcp::{ListToolsParams, Tool};
use mcpl_protocol::method::ListTools;
use mcpl_protocol::method::{Cancelled, Initialize, Method, NotificationMethod};
use mcpl_protocol::modern::SERVER_DISCOVER;
use mcpl_protocol::{ErrorCode, Id, Message, Notification, Request, Response};
use mrtr::Verdict;
use paging::{Ended, PageStep, Refresh, ttl_of};
use pending::{InputRound, Pending, PendingTable, Waiter};
use phase::LinkPhase;
use session::{Session, Stage};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the core hands its driver, in order.
pub enum CoreEvent<C, R> {
    /// A request's outcome, for its waiter.
    Completed {
        /// Who waits.
        waiter: Waiter<C>,
        /// The result, the server's error, or why there is none.
        outcome: Result<Box<RawValue>, LinkError>,
    },
    /// A request's time ran out (its waiter's `Completed` follows).
    TimedOut {
        /// Its id.
        id: i64,
        /// Its method.
        method: &'static str,
        /// How long it waited.
        after: Duration,
    },
    /// The late response of a request that timed out: read (the tap saw it), not
    /// delivered.
    Late {
        /// Its id.
        id: Id,
        /// Its method.
        method: &'static str,
    },
    /// A response to an id this connection never sent (or forgot).
    Unknown {
        /// The id.
        id: Id,
    },
    /// A response without an id: the server could not read something this host sent.
    Unaddressed(Response),
    /// A tools listing ended (every page read, or failed): the driver answers its waiters,
    /// tells what changed, and lists again after `ended.retry` if that is set.
    Listed {
        /// Every tool, or why the listing failed.
        outcome: Result<Arc<[Tool]>, LinkError>,
        /// The list differs from the last one on this connection (or is its first).
        changed: bool,
        /// Who waited, the rev, the tools left out, the retry.
        ended: Ended<R>,
    },
    /// A modern request's version was refused and the connection took the one the server
    /// listed: the request goes again with it (as later requests do).
    VersionAdopted {
        /// The request's method.
        method: &'static str,
        /// The version now stamped.
        version: String,
    },
    /// A modern request reached its final answer (its `Completed` came just before): a
    /// `tools/call` may leave the tools list stale.
    ModernCallDone(&'static str),
    /// A page of a listing left out tools that nest too deep or do not decode.
    ToolsLeftOut(usize),
    /// A request of the server's own, for the driver to answer.
    Request(Request),
    /// A notification, for the driver to act on.
    Notification(Notification),
}

/// How the session opens on this connection (`era.rs`): the probe, unless the link
/// speaks only legacy or found the server legacy before.
pub fn opens_with_probe(policy: EraPolicy, found: Option<Era>) -> bool {
    !matches!(
        (policy, found),
        (EraPolicy::Legacy, _) | (EraPolicy::Auto, Some(Era::Legacy))
    )
}

/// What a connection's core is told of the link's configuration.
#[derive(Debug, Clone, Copy)]
pub struct CoreConfig {
    /// How many timed-out request ids it remembers.
    pub timed_out_capacity: usize,
    /// How long one of its own requests (a listing's page) waits.
    pub request_timeout: Duration,
    /// A failed listing's first retry delay, doubled per failure in a row, at most `retry_max`.
    pub retry_initial: Duration,
    /// The longest retry delay.
    pub retry_max: Duration,
}

/// One connection's rules. `C`: how a caller is answered; `R`: how a caller waiting for a
/// listing is answered (both the driver's business).
pub struct LinkCore<C, R> {
    /// Which connection this is: 1 for the first that connected, +1 for each after.
    pub epoch: u64,
    /// Whether the transport delivers in the order the server wrote.
    pub ordered: bool,
    /// How far the handshake has come: the connection's one phase enum.
    pub stage: Stage,
    /// What every request says of the host in `_meta` while the connection is (or may be)
    /// modern: set for the probe, kept for a modern server, dropped on falling back.
    pub stamp: Option<Stamp>,
    /// What every request carries under the stateless profile (`profile.rs`), on a modern
    /// connection whose server hints this host's requests.
    pub hinted: Option<profile::Hinted>,
    /// The probe's stamp, kept when the link fell back to `initialize`, for a probe's
    /// answer that comes late (`late_discovery`).
    pub fell_back: Option<Stamp>,
    pub pending: PendingTable<C>,
    pub refresh: Refresh<R>,
    config: CoreConfig,
    transmit: VecDeque<Message>,
    events: VecDeque<CoreEvent<C, R>>,
}

impl<C, R> LinkCore<C, R> {
    /// A fresh connection, about to open its session.
    pub fn new(epoch: u64, ordered: bool, config: CoreConfig) -> Self {
        LinkCore {
            epoch,
            ordered,
            stage: Stage::AwaitingInitializeResult,
            stamp: None,
            hinted: None,
            fell_back: None,
            pending: PendingTable::new(config.timed_out_capacity),
            refresh: Refresh::default(),
            config,
            transmit: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// Where the connection is.
    pub fn phase(&self) -> LinkPhase {
        match self.stage {
            Stage::AwaitingDiscoverResult => LinkPhase::AwaitingDiscoverResult,
            Stage::AwaitingInitializeResult => LinkPhase::AwaitingInitializeResult,
            Stage::AwaitingGrantReceipt(_) => LinkPhase::AwaitingGrantReceipt,
            Stage::Ready(_) => LinkPhase::Ready,
        }
    }

    /// The session, once `initialize` was accepted.
    pub fn session(&self) -> Option<&Session> {
        match &self.stage {
            Stage::AwaitingDiscoverResult | Stage::AwaitingInitializeResult => None,
            Stage::AwaitingGrantReceipt(s) | Stage::Ready(s) => Some(s),
        }
    }

    pub fn session_mut(&mut self) -> Option<&mut Session> {
        match &mut self.stage {
            Stage::AwaitingDiscoverResult | Stage::AwaitingInitializeResult => None,
            Stage::AwaitingGrantReceipt(s) | Stage::Ready(s) => Some(s),
        }
    }

    pub fn is_ready(&self) -> bool {
        matches!(self.stage, Stage::Ready(_))
    }

    /// Whether a request is stopped with `notifications/cancelled`: not on a modern
    /// Streamable HTTP connection, where that era defines no client notification (closing
    /// the answer is the cancellation, MCP 2026-07-28 "Cancellation").
    pub fn cancels_by_notification(&self) -> bool {
        self.stamp.is_none() || self.ordered
    }

    /// A modern connection takes `version` for its requests from now on (the server
    /// refused the one it had, listing this one): false on a legacy connection.
    pub fn adopt_version(&mut self, version: &str) -> bool {
        let Some(stamp) = &mut self.stamp else {
            return false;
        };
        stamp.version = version.to_owned();
        if let Some(session) = self.session_mut() {
            Arc::make_mut(&mut session.init).protocol_version = version.to_owned();
        }
        true
    }

    /// Sends a request with params as JSON text, stamped with the era's `_meta` on a
    /// connection that is (or may be) modern; it waits `timeout` from `now` (none: for as
    /// long as the connection lives). Returns its id.
    pub fn send_request(
        &mut self,
        method: &'static str,
        params: Option<&RawValue>,
        waiter: Waiter<C>,
        timeout: Option<Duration>,
        now: Instant,
    ) -> i64 {
        let n = self.pending.insert(method, waiter, timeout, now);
        let params = match (&self.stamp, &mut self.hinted) {
            (Some(stamp), Some(hinted)) => Some(hinted.stamp(n, stamp.apply(params))),
            (Some(stamp), None) => Some(stamp.apply(params)),
            (None, _) => params.map(ToOwned::to_owned),
        };
        self.transmit.push_back(Message::Request(Request {
            id: Id::Number(n),
            method: method.to_owned(),
            params,
        }));
        n
    }

    /// Queues a notification.
    pub fn send_notification<M: NotificationMethod>(&mut self, params: &M::Params) {
        self.send(Message::Notification(Notification::new::<M>(params)));
    }

    /// Queues a message (an answer to the server's request, say) behind what is queued.
    pub fn send(&mut self, message: Message) {
        self.transmit.push_back(message);
    }

    /// A message read (the tap has seen it): a response goes to its waiter (or is noted
    /// late or unknown); a request or notification is handed to the driver.
    pub fn handle_read(&mut self, message: Message, now: Instant) {
        let response = match message {
            Message::Response(response) => response,
            Message::Request(r) => return self.events.push_back(CoreEvent::Request(r)),
            Message::Notification(n) => {
                return self.events.push_back(CoreEvent::Notification(n));
            }
        };
        let Some(id) = response.id.clone() else {
            return self.events.push_back(CoreEvent::Unaddressed(response));
        };
        if let Some(pending) = self.pending.take(&id) {
            let method = pending.method;
            if !self.ordered
                && self.cancels_by_notification()
                && method != Initialize::NAME
                && matches!(&response.outcome, Err(e) if e.code == ErrorCode::CONNECTION_CLOSED)
            {
                // On an unordered link this is the transport's own answer for a request
                // whose answer broke off (a Streamable HTTP POST that failed after the
                // server may have read it): the server may be carrying it out still, and
                // its result would be lost too. Told it is cancelled, the server sends what
                // the request changes as `tools/hints` instead (MCP; §5.2, vector 29) —
                // written before the statement the host's recovery reads next, so one or
                // the other tells the host. (A server's own -32000 ends the request
                // already: the cancellation is ignored.)
                self.send_notification::<Cancelled>(&CancelledParams {
                    request_id: id,
                    reason: Some("its answer was lost on the way".to_owned()),
                    meta: None,
                });
            }
            let outcome = response
                .outcome
                .map_err(|error| LinkError::Server { method, error });
            self.complete(pending.waiter, outcome, now);
        } else if let Some(method) = self.pending.take_late(&id) {
            match self.late_discovery(method, &response) {
                Some(result) => self.events.push_back(CoreEvent::Completed {
                    waiter: Waiter::Discover { retried: true },
                    outcome: Ok(result),
                }),
                None => self.events.push_back(CoreEvent::Late { id, method }),
            }
        } else {
            self.events.push_back(CoreEvent::Unknown { id });
        }
    }

    /// A probe that timed out, answered after the link fell back to `initialize` (MCP
    /// stdio "Backward Compatibility": no answer "within a reasonable timeout" means
    /// legacy): while `initialize` is still unanswered, a `DiscoverResult` says the server
    /// is modern after all — a slow one, such as a stdio server still starting under load.
    /// **\[project\]** The server's own answer is better evidence than the timeout's guess:
    /// the probe's stamp comes back, `initialize` is no longer awaited (its answer, a modern
    /// server's refusal, is read late and dropped), and the result goes to the probe's
    /// waiter as if it had come in time. Anything else late is only noted.
    fn late_discovery(&mut self, method: &str, response: &Response) -> Option<Box<RawValue>> {
        if method != SERVER_DISCOVER || !matches!(self.stage, Stage::AwaitingInitializeResult) {
            return None;
        }
        let result = response.outcome.as_ref().ok()?;
        let modern = matches!(
            era::read_probe(Ok(result.clone()), EraPolicy::Auto),
            era::Probe::Modern(_)
        );
        if !modern {
            return None;
        }
        self.stamp = Some(self.fell_back.take()?);
        self.pending.abandon(Initialize::NAME);
        self.stage = Stage::AwaitingDiscoverResult;
        Some(result.clone())
    }

    /// Something unreadable that carries `id` arrived: meant as that request's response,
    /// it fails the request now rather than letting it time out. True when the id was one
    /// of ours (awaited or timed out): then nothing is to be answered.
    pub fn handle_malformed(&mut self, id: &Id, detail: &str, now: Instant) -> bool {
        if let Some(pending) = self.pending.take(id) {
            let error = LinkError::MalformedResponse {
                method: pending.method,
                detail: detail.to_owned(),
            };
            self.complete(pending.waiter, Err(error), now);
            return true;
        }
        self.pending.take_late(id).is_some()
    }

    /// Times out what is due at `now`: each waiter gets `Timeout`, the server is told to
    /// stop, and the id is remembered so a late result is still read as one (§5.2, vector
    /// 28). MCP: `initialize` is never cancelled (the link drops the connection instead);
    /// nor is the era probe, which a legacy server may not know (it goes on to
    /// `initialize`); nor anything on modern Streamable HTTP
    /// ([`LinkCore::cancels_by_notification`]).
    pub fn handle_timeout(&mut self, now: Instant) {
        for (
            id,
            Pending {
                method,
                waiter,
                timeout,
                ..
            },
        ) in self.pending.expire(now)
        {
            self.events.push_back(CoreEvent::TimedOut {
                id,
                method,
                after: timeout,
            });
            if method != Initialize::NAME
                && method != SERVER_DISCOVER
                && self.cancels_by_notification()
            {
                self.send_notification::<Cancelled>(&CancelledParams {
                    request_id: Id::Number(id),
                    reason: Some(format!("no response within {timeout:?}")),
                    meta: None,
                });
            }
            let error = LinkError::Timeout {
                method,
                after: timeout,
            };
            self.complete(waiter, Err(error), now);
        }
    }

    /// An outcome for its waiter: the core's own listing pages are read here, everything
    /// else is handed to the driver.
    fn complete(
        &mut self,
        waiter: Waiter<C>,
        outcome: Result<Box<RawValue>, LinkError>,
        now: Instant,
    ) {
        match waiter {
            Waiter::ToolsPage => self.on_page(outcome, now),
            Waiter::Input(round) => self.on_input_round(round, outcome, now),
            waiter => self
                .events
                .push_back(CoreEvent::Completed { waiter, outcome }),
        }
    }

    /// A modern request's answer (MCP 2026-07-28): final, or asking for input, then sent
    /// again with the answers (`mrtr.rs`); or its version refused (-32022) with a modern
    /// one this host speaks listed, then sent again once with that one, which later
    /// requests take too (`era.rs`, "A version refused").
    fn on_input_round(
        &mut self,
        mut round: Box<InputRound<C>>,
        outcome: Result<Box<RawValue>, LinkError>,
        now: Instant,
    ) {
        if let Err(LinkError::Server { error, .. }) = &outcome
            && !round.version_retried
            && let Supported::Modern(version) = supported_choice(error)
            && self.adopt_version(&version)
        {
            self.events.push_back(CoreEvent::VersionAdopted {
                method: round.method,
                version,
            });
            round.version_retried = true;
            return self.send_round(round, now);
        }
        let verdict = match &outcome {
            Ok(result) => mrtr::read(round.method, Some(&round.params), result, round.rounds),
            Err(_) => Verdict::Final,
        };
        match verdict {
            Verdict::Retry(params) => {
                round.rounds += 1;
                round.params = params;
                self.send_round(round, now);
            }
            Verdict::Final => {
                let method = round.method;
                let waiter = Waiter::Caller(round.reply);
                self.events
                    .push_back(CoreEvent::Completed { waiter, outcome });
                self.events.push_back(CoreEvent::ModernCallDone(method));
            }
            Verdict::Fail(error) => {
                let waiter = Waiter::Caller(round.reply);
                let outcome = Err(error);
                self.events
                    .push_back(CoreEvent::Completed { waiter, outcome });
            }
        }
    }

    /// Sends a modern request's round (its first, or a retry).
    pub fn send_round(&mut self, round: Box<InputRound<C>>, now: Instant) {
        let (method, timeout) = (round.method, round.timeout);
        let params = round.params.clone();
        self.send_request(method, Some(&params), Waiter::Input(round), timeout, now);
    }

    /// Lists the tools (every page), now or after the listing under way; `reply` waits for
    /// the whole list. `list_changed`: because the server said its list changed. Only a
    /// Ready connection lists: otherwise `reply` is handed back.
    pub fn list_tools(
        &mut self,
        reply: Option<R>,
        list_changed: bool,
        now: Instant,
    ) -> Result<(), Option<R>> {
        if !self.is_ready() {
            return Err(reply);
        }
        if let Some(waiters) = self.refresh.want(reply, list_changed) {
            self.begin_listing(waiters, list_changed, now);
        }
        Ok(())
    }

    fn begin_listing(&mut self, waiters: Vec<R>, list_changed: bool, now: Instant) {
        self.refresh.begin(waiters, list_changed);
        self.send_page(None, now);
    }

    fn send_page(&mut self, cursor: Option<String>, now: Instant) {
        let params = to_raw(&ListToolsParams { cursor, meta: None });
        let timeout = Some(self.config.request_timeout);
        self.send_request(
            ListTools::NAME,
            Some(&params),
            Waiter::ToolsPage,
            timeout,
            now,
        );
    }

    /// A page's outcome: the next page asked for, or the listing ended.
    fn on_page(&mut self, outcome: Result<Box<RawValue>, LinkError>, now: Instant) {
        let ttl = outcome.as_ref().ok().and_then(|r| ttl_of(r));
        let page = outcome.and_then(|r| tools_page(ListTools::NAME, &r));
        let outcome = match self.refresh.page(page, ttl) {
            PageStep::Stray => return,
            PageStep::Next { cursor, left_out } => {
                if left_out > 0 {
                    self.events.push_back(CoreEvent::ToolsLeftOut(left_out));
                }
                return self.send_page(Some(cursor), now);
            }
            PageStep::End { outcome, left_out } => {
                if left_out > 0 {
                    self.events.push_back(CoreEvent::ToolsLeftOut(left_out));
                }
                outcome
            }
        };
        // One list, shared by the session and every event: never copied per tool.
        let outcome: Result<Arc<[Tool]>, LinkError> = outcome.map(Arc::from);
        let first = self.session().is_some_and(|s| !s.tools_listed);
        let (initial, max) = (self.config.retry_initial, self.config.retry_max);
        let mut ended = self.refresh.end(&outcome, first, initial, max);
        let changed = match (&outcome, self.session_mut()) {
            (Ok(tools), Some(session)) => session.record_listing(tools.clone(), ended.ttl_ms, now),
            _ => false,
        };
        let next = ended.next.take();
        self.events.push_back(CoreEvent::Listed {
            outcome,
            changed,
            ended,
        });
        if let Some((waiters, list_changed)) = next {
            self.begin_listing(waiters, list_changed, now);
        }
    }

    /// The connection went: every waiter, requests' oldest first, then the listings'.
    pub fn close(&mut self) -> (Vec<Pending<C>>, Vec<R>) {
        self.transmit.clear();
        self.events.clear();
        (self.pending.drain(), self.refresh.take_all())
    }

    /// The next message to write.
    pub fn poll_transmit(&mut self) -> Option<Message> {
        self.transmit.pop_front()
    }

    /// The next thing for the driver to act on.
    pub fn poll_event(&mut self) -> Option<CoreEvent<C, R>> {
        self.events.pop_front()
    }

    /// When [`LinkCore::handle_timeout`] is next due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.pending.next_deadline()
    }
}

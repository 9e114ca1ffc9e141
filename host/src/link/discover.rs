//! Opening a connection in its era (`era.rs` says how the era is found): the
//! `server/discover` probe and what follows its answer — a modern session made Ready at
//! once (there is no `initialize`, no `notifications/initialized`, and no grant exchange),
//! or `initialize` on the same connection. A modern server that hints this host's
//! requests is served under RFC-014's stateless profile (`host-core/src/link/profile.rs`): the grant is
//! the policy's proposal, in force at once, and every request carries it with the link's
//! mark; any other is served as plain MCP. A Ready modern session opens
//! `subscriptions/listen` for tool list changes when the server says its list changes
//! (`tools.listChanged`), and under the profile for `mcpl/hints` from the mark, and for
//! `mcpl/events` when its grant has `pushEvents` (profile §3.5).

use super::actor::ServerLink;
use super::core::era::{Era, Stamp};
use super::core::error::LinkError;
use super::core::handshake::{ProbeStep, probe_step};
use super::core::opens_with_probe;
use super::core::profile::Hinted;
use super::core::session::{Listen, Session, Stage};
use super::pending::Waiter;
use super::tap::TapEvent;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{RawValue, to_raw};
use mcpl_protocol::mcpl::CAP_PUSH_EVENTS;
use mcpl_protocol::modern::SERVER_DISCOVER;
use mcpl_protocol::stateless::{FILTER_EVENTS, FILTER_HINTS};
use mcpl_protocol::{ErrorCode, ErrorObject, Notification};
use serde_json::Value;
use std::sync::Arc;
use tracing::{info, warn};

/// `subscriptions/listen` (MCP 2026-07-28).
pub(super) const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// Its acknowledgement.
pub(super) const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// How many times in a row a cut `mcpl/hints` stream is reopened on one connection (a
/// stream that lived `LinkConfig::listen_steady` refills the budget).
pub(super) const MAX_LISTEN_REOPENS: u32 = 16;

impl ServerLink {
    /// Opens the session on a fresh connection: `initialize` for a server known (or
    /// configured) legacy, else the probe.
    pub(super) fn open_session(&mut self, ctx: &mut Context<Self>) {
        if opens_with_probe(self.config.era, self.found_era) {
            self.send_discover(ctx)
        } else {
            self.send_initialize(ctx)
        }
    }

    fn send_discover(&mut self, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        live.core.stage = Stage::AwaitingDiscoverResult;
        live.core.stamp = Some(Stamp::new(
            self.config.client_info.clone(),
            self.config.advertise_tool_hints,
        ));
        let wait = Some(self.config.probe_timeout);
        let waiter = Waiter::Discover { retried: false };
        self.send_raw(SERVER_DISCOVER, None, waiter, wait, ctx);
    }

    /// The probe's answer. `retried`: it answers the second probe, sent after a -32022
    /// (`era.rs`, "A version refused"); a second refusal is final.
    pub(super) fn on_discover_result(
        &mut self,
        outcome: Result<Box<RawValue>, LinkError>,
        retried: bool,
        ctx: &mut Context<Self>,
    ) {
        match probe_step(outcome, retried, self.config.era) {
            ProbeStep::Ignored => {}
            ProbeStep::Again(version) => self.send_discover_again(version, ctx),
            ProbeStep::Modern(init) => self.become_modern(*init, ctx),
            ProbeStep::End { reason, found } => {
                if found.is_some() {
                    self.found_era = found;
                }
                self.disconnect(reason, ctx);
            }
            ProbeStep::Initialize(why) => {
                info!(link = %self.config.name, %why, "the server is not a modern one; falling back to initialize");
                self.found_era = Some(Era::Legacy);
                if let Some(live) = self.lifecycle.live_mut() {
                    live.core.fell_back = live.core.stamp.take();
                    live.core.stage = Stage::AwaitingInitializeResult;
                }
                self.send_initialize(ctx);
            }
        }
    }

    /// Sends the probe again, stamped with `version`, which the server said it serves.
    fn send_discover_again(&mut self, version: String, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        info!(link = %self.config.name, %version, "the server refused the protocol version sent; probing again with one it serves");
        if let Some(stamp) = &mut live.core.stamp {
            stamp.version = version;
        }
        let wait = Some(self.config.probe_timeout);
        let waiter = Waiter::Discover { retried: true };
        self.send_raw(SERVER_DISCOVER, None, waiter, wait, ctx);
    }

    fn become_modern(
        &mut self,
        init: mcpl_protocol::mcp::InitializeResult,
        ctx: &mut Context<Self>,
    ) {
        self.found_era = Some(Era::Modern);
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        if let Some(stamp) = &mut live.core.stamp {
            stamp.version = init.protocol_version.clone();
        }
        info!(
            link = %self.config.name, epoch = live.epoch(), server = %init.server_info.name,
            version = %init.protocol_version, "connected: a modern server answered server/discover"
        );
        let (epoch, mut info) = (live.epoch(), live.info.clone());
        let init = Arc::new(init);
        let mut session = Session::modern(init.clone());
        if session.speaks_mcpl() {
            // **\[project\]** Under the profile the host core is handed the view's changes
            // in read order under consecutive revs (`host-core/src/link/profile.rs`): for it the
            // connection is ordered, whatever the transport. It holds nothing, and an
            // answer lost on an unordered transport is no gap to recover from: the next
            // result's delta since the mark carries what it did (profile §3.3, vector S6).
            info.ordered = true;
            // The stateless profile (`host-core/src/link/profile.rs`): the grant is the policy's
            // proposal, in force at once (a property of each request, profile §3.2).
            let (_, proposed) = self.policy_for(&mut session);
            session.set_granted(proposed.clone());
            self.profile.connected();
            self.listen_reopened = 0;
            self.listen_acknowledged_at = None;
            if let Some(live) = self.lifecycle.live_mut() {
                live.core.hinted = Some(Hinted::new(self.profile.since(), proposed));
            }
            info!(link = %self.config.name, since = self.profile.since(), "the server hints this host's requests: RFC-014's stateless profile");
        }
        let event = TapEvent::Connected { epoch, info, init };
        self.tap(&event);
        self.become_ready(session, ctx);
        let lists_change = self
            .lifecycle
            .live()
            .and_then(|l| l.session())
            .and_then(|s| s.init.capabilities.tools.as_ref())
            .and_then(|t| t.list_changed)
            .unwrap_or(false);
        if lists_change || self.profiled() {
            self.open_listen(ctx);
        }
    }

    /// True when the current connection speaks the stateless profile.
    pub(super) fn profiled(&self) -> bool {
        self.lifecycle
            .live()
            .is_some_and(|l| l.core.hinted.is_some())
    }

    /// Opens the change stream: for tool list changes, and under the profile for
    /// `notifications/mcpl/hints` from the link's mark (profile §3.5).
    fn open_listen(&mut self, ctx: &mut Context<Self>) {
        let profiled = self.profiled();
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        // Profile §3.5: events on the stream when the grant this link's requests run
        // under has `pushEvents` (the host wants events; the listen carries that grant).
        let mut events = false;
        if let Some(h) = &live.core.hinted {
            self.listen_since = h.since;
            events = h.grant.iter().any(|c| c == CAP_PUSH_EVENTS);
        }
        let Some(session) = live.session_mut() else {
            return;
        };
        session.listen = Listen::Opening;
        let mut filter = serde_json::json!({"toolsListChanged": true});
        if profiled {
            filter[FILTER_HINTS] = Value::Bool(true);
            if events {
                filter[FILTER_EVENTS] = Value::Bool(true);
            }
        }
        let params = to_raw(&serde_json::json!({ "notifications": filter }));
        self.send_raw(
            SUBSCRIPTIONS_LISTEN,
            Some(&params),
            Waiter::Listen,
            None,
            ctx,
        );
    }

    /// The server acknowledged a subscription: open for tool list changes only when it
    /// agreed to send them ("The client SHOULD check the acknowledged filter").
    pub(super) fn on_listen_acknowledged(&mut self, notification: &Notification) {
        let params = notification.params_value();
        let agreed = params
            .as_ref()
            .and_then(|p| p.pointer("/notifications/toolsListChanged").cloned())
            == Some(Value::Bool(true));
        let hints = params
            .as_ref()
            .and_then(|p| p.get("notifications")?.get(FILTER_HINTS).cloned())
            == Some(Value::Bool(true));
        if hints && self.profiled() {
            // Its first message is the delta since the mark it was opened with (S10).
            self.profile.listen_acknowledged(self.listen_since);
        }
        let name = self.config.name.clone();
        let Some(session) = self.lifecycle.live_mut().and_then(|l| l.session_mut()) else {
            return;
        };
        if session.listen != Listen::Opening {
            return;
        }
        session.listen = if agreed || hints {
            Listen::Open
        } else {
            Listen::Off
        };
        if session.listen == Listen::Open {
            self.listen_acknowledged_at = Some(super::requests::now());
        }
        info!(link = %name, agreed, "the server acknowledged subscriptions/listen for tool list changes");
    }

    /// The change stream ended: a graceful end, a refusal, or the transport's own error.
    /// **\[project\]** Without the profile it is not reopened on this connection (a server
    /// that ends it is shutting down or does not serve it); stale lists are read again
    /// after calls instead (`refresh.rs`), and the next connection opens it again. Under
    /// the profile a stream that was acknowledged is reopened at once with the current
    /// mark (profile §3.5), at most [`MAX_LISTEN_REOPENS`] times in a row — a stream that
    /// lived [`LinkConfig::listen_steady`](super::LinkConfig::listen_steady) gives the
    /// budget back — on one connection: the next
    /// result's delta is what correctness rests on, the stream only makes it early. So is
    /// one whose answer was lost before its acknowledgment (the transport's made-up
    /// [`ErrorCode::CONNECTION_CLOSED`]: a POST cut, a server restarting), after the
    /// backoff's first delay, doubling with each reopening (**\[project\]**, found by the
    /// sim: such a stream was never reopened, and an idle agent heard of nothing more).
    pub(super) fn on_listen_end(
        &mut self,
        outcome: Result<Box<RawValue>, LinkError>,
        ctx: &mut Context<Self>,
    ) {
        if let Err(LinkError::Disconnected { .. } | LinkError::Stopped) = outcome {
            return;
        }
        let name = self.config.name.clone();
        let mut was_open = false;
        if let Some(session) = self.lifecycle.live_mut().and_then(|l| l.session_mut()) {
            was_open = session.listen == Listen::Open;
            session.listen = Listen::Off;
        }
        let lost = matches!(&outcome, Err(LinkError::Server { error, .. })
            if error.code == ErrorCode::CONNECTION_CLOSED);
        // A stream that lived `listen_steady` was healthy: the reopenings counted so far
        // were a burst that is over, and the budget is whole again [project].
        let acknowledged = self.listen_acknowledged_at.take();
        if was_open
            && acknowledged.is_some_and(|at| {
                super::requests::now().saturating_duration_since(at) >= self.config.listen_steady
            })
        {
            self.listen_reopened = 0;
        }
        if (was_open || lost) && self.profiled() && self.listen_reopened < MAX_LISTEN_REOPENS {
            self.listen_reopened += 1;
            if was_open {
                info!(link = %name, since = self.profile.since(), "the mcpl/hints stream was cut; reopening it");
                return self.open_listen(ctx);
            }
            let doublings = (self.listen_reopened - 1).min(8);
            let delay =
                (self.config.backoff.initial * 2u32.pow(doublings)).min(self.config.backoff.max);
            info!(link = %name, ?delay, "the mcpl/hints stream's answer was lost; opening it again");
            let epoch = self.lifecycle.live().map(|l| l.epoch());
            ctx.run_later(delay, move |act, ctx| {
                let off = act.lifecycle.live().is_some_and(|l| {
                    Some(l.epoch()) == epoch && l.session().is_some_and(|s| s.listen == Listen::Off)
                });
                if off && act.profiled() {
                    act.open_listen(ctx);
                }
            });
            return;
        }
        match outcome {
            Ok(_) => info!(link = %name, "the server ended subscriptions/listen"),
            Err(error) => {
                let error: ErrorObject = error.to_error_object();
                warn!(link = %name, %error, "subscriptions/listen refused or broken; tool lists are read again once stale");
            }
        }
    }
}

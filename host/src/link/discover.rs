//! Opening a connection in its era (`era.rs` says how the era is found): the
//! `server/discover` probe and what follows its answer — a modern session made Ready at
//! once (there is no `initialize`, no `notifications/initialized`, and no grant: a modern
//! server is served as plain MCP until issue #40), or `initialize` on the same
//! connection. A Ready modern session opens `subscriptions/listen` for tool list changes
//! when the server says its list changes (`tools.listChanged`).

use super::actor::ServerLink;
use super::core::era::{Era, Stamp};
use super::core::handshake::{ProbeStep, probe_step};
use super::core::opens_with_probe;
use super::core::session::{Listen, Session, Stage};
use super::error::LinkError;
use super::pending::Waiter;
use super::tap::TapEvent;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{RawValue, to_raw};
use mcpl_protocol::modern::SERVER_DISCOVER;
use mcpl_protocol::{ErrorObject, Notification};
use serde_json::Value;
use tracing::{info, warn};

/// `subscriptions/listen` (MCP 2026-07-28).
pub(super) const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// Its acknowledgement.
pub(super) const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

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
        live.core.stamp = Some(Stamp::new(self.config.client_info.clone()));
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
                    live.core.stamp = None;
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
        let event = TapEvent::Connected {
            epoch: live.epoch(),
            info: live.info.clone(),
            init: Box::new(init.clone()),
        };
        self.tap(&event);
        self.become_ready(Session::modern(init), ctx);
        let lists_change = self
            .lifecycle
            .live()
            .and_then(|l| l.session())
            .and_then(|s| s.init.capabilities.tools.as_ref())
            .and_then(|t| t.list_changed)
            .unwrap_or(false);
        if lists_change {
            self.open_listen(ctx);
        }
    }

    /// Opens the change stream for tool list changes.
    fn open_listen(&mut self, ctx: &mut Context<Self>) {
        let Some(session) = self.lifecycle.live_mut().and_then(|l| l.session_mut()) else {
            return;
        };
        session.listen = Listen::Opening;
        let params = to_raw(&serde_json::json!({"notifications": {"toolsListChanged": true}}));
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
        let agreed = notification
            .params_value()
            .and_then(|p| p.pointer("/notifications/toolsListChanged").cloned())
            == Some(Value::Bool(true));
        let name = self.config.name.clone();
        let Some(session) = self.lifecycle.live_mut().and_then(|l| l.session_mut()) else {
            return;
        };
        if session.listen != Listen::Opening {
            return;
        }
        session.listen = if agreed { Listen::Open } else { Listen::Off };
        info!(link = %name, agreed, "the server acknowledged subscriptions/listen for tool list changes");
    }

    /// The change stream ended: a graceful end, a refusal, or the transport's own error.
    /// **\[project\]** It is not reopened on this connection (a server that ends it is
    /// shutting down or does not serve it); stale lists are read again after calls
    /// instead (`refresh.rs`), and the next connection opens it again.
    pub(super) fn on_listen_end(&mut self, outcome: Result<Box<RawValue>, LinkError>) {
        if let Err(LinkError::Disconnected { .. } | LinkError::Stopped) = outcome {
            return;
        }
        let name = self.config.name.clone();
        if let Some(session) = self.lifecycle.live_mut().and_then(|l| l.session_mut()) {
            session.listen = Listen::Off;
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

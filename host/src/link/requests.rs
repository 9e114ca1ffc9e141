//! Sending requests: ids, timeouts, and handing each outcome to whoever waits for it.

use super::actor::ServerLink;
use super::core::CoreEvent;
use super::core::decode::decode;
use super::core::era::Era;
use super::core::error::LinkError;
use super::core::grant::read_receipt;
use super::core::phase::LinkPhase;
use super::pending::{InputRound, Reply, ToolsReply, Waiter};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{RawValue, to_raw};
use mcpl_protocol::method::{Initialize, Method, NotificationMethod, RequestMethod};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tracing::{debug, info};

/// The clock the core is fed: tokio's, so that a runtime whose time is paused moves it.
pub(super) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

impl ServerLink {
    /// A caller's request: sent only when the link is ready; `reply` gets the typed outcome.
    pub(super) fn caller_request<M: RequestMethod>(
        &mut self,
        params: &M::Params,
        timeout: Option<Duration>,
        reply: oneshot::Sender<Result<M::Result, LinkError>>,
        ctx: &mut Context<Self>,
    ) {
        let waiter = Waiter::Caller(Box::new(
            move |outcome: Result<Box<RawValue>, LinkError>| {
                // The caller may have stopped waiting; then nobody needs the answer.
                let _ = reply.send(outcome.and_then(|r| decode::<M::Result>(M::NAME, &r)));
            },
        ));
        if M::NAME == Initialize::NAME {
            return self.complete(
                waiter,
                Err(LinkError::ReservedMethod { method: M::NAME }),
                ctx,
            );
        }
        let phase = self.lifecycle.phase();
        if phase != LinkPhase::Ready {
            return self.complete(waiter, Err(LinkError::NotConnected { phase }), ctx);
        }
        let modern = self
            .lifecycle
            .live()
            .and_then(|l| l.session())
            .is_some_and(|s| s.era == Era::Modern);
        match waiter {
            // A modern server's answer may ask for input first (mrtr.rs).
            Waiter::Caller(reply) if modern => {
                let params = to_raw(params);
                let round = InputRound {
                    method: M::NAME,
                    params,
                    rounds: 0,
                    version_retried: false,
                    timeout,
                    reply,
                };
                let params = round.params.clone();
                self.send_raw(
                    M::NAME,
                    Some(&params),
                    Waiter::Input(Box::new(round)),
                    timeout,
                    ctx,
                );
            }
            waiter => self.send_request::<M>(params, waiter, timeout, ctx),
        }
    }

    /// Sends a request on the current connection, whatever its stage (the link's own
    /// handshake requests go before `Ready`). `timeout` defaults to the configured one.
    pub(super) fn send_request<M: RequestMethod>(
        &mut self,
        params: &M::Params,
        waiter: Waiter,
        timeout: Option<Duration>,
        ctx: &mut Context<Self>,
    ) {
        let timeout = timeout.or(Some(self.config.request_timeout));
        self.send_raw(M::NAME, Some(&to_raw(params)), waiter, timeout, ctx);
    }

    /// Sends a request with params as JSON text, stamped with the era's `_meta` on a
    /// connection that is (or may be) modern (the core's rule). `timeout`: none, it is
    /// awaited for as long as the connection lives (`subscriptions/listen`).
    pub(super) fn send_raw(
        &mut self,
        method: &'static str,
        params: Option<&RawValue>,
        waiter: Waiter,
        timeout: Option<Duration>,
        ctx: &mut Context<Self>,
    ) {
        let phase = self.lifecycle.phase();
        let Some(live) = self.lifecycle.live_mut() else {
            return self.complete(waiter, Err(LinkError::NotConnected { phase }), ctx);
        };
        live.core
            .send_request(method, params, waiter, timeout, now());
        self.flush();
        self.arm_timer(ctx);
    }

    /// Sends a notification on the current connection.
    pub(super) fn send_notification<M: NotificationMethod>(&mut self, params: &M::Params) {
        if let Some(live) = self.lifecycle.live_mut() {
            live.core.send_notification::<M>(params);
        }
        self.flush();
    }

    /// Carries out what the core has after it was fed: what it transmits is written,
    /// what it tells is acted on, in order, and its timer armed.
    pub(super) fn drive(&mut self, ctx: &mut Context<Self>) {
        self.flush();
        while let Some((epoch, event)) = self
            .lifecycle
            .live_mut()
            .and_then(|l| Some((l.epoch(), l.core.poll_event()?)))
        {
            self.on_core_event(epoch, event, ctx);
            self.flush();
        }
        self.arm_timer(ctx);
    }

    fn on_core_event(
        &mut self,
        epoch: u64,
        event: CoreEvent<Reply, ToolsReply>,
        ctx: &mut Context<Self>,
    ) {
        match event {
            CoreEvent::Completed { waiter, outcome } => self.complete(waiter, outcome, ctx),
            CoreEvent::TimedOut { id, method, after } => {
                mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, id, method, ?after, "request timed out");
            }
            CoreEvent::Late { id, method } => {
                debug!(link = %self.config.name, %id, method, "read the late response of a request that timed out");
            }
            CoreEvent::Unknown { id } => {
                mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, %id, "a response to an id this link did not send");
            }
            CoreEvent::Unaddressed(response) => {
                mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, error = ?response.outcome, "the server could not read something this host sent");
            }
            CoreEvent::Listed {
                outcome,
                changed,
                ended,
            } => self.on_listed(epoch, outcome, changed, ended, ctx),
            CoreEvent::VersionAdopted { method, version } => {
                info!(link = %self.config.name, method, %version, "the server refused the protocol version sent; sending again with one it serves");
            }
            CoreEvent::ModernCallDone(method) => self.after_modern_call(method, ctx),
            CoreEvent::ToolsLeftOut(left_out) => {
                mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, left_out, "tools/list: tools nested too deep or malformed, left out");
            }
            CoreEvent::Request(request) => self.on_server_request(request, epoch),
            CoreEvent::Notification(n) => self.on_notification(n, epoch, ctx),
        }
    }

    /// Arms the one timer for the core's earliest deadline (again, when it moved).
    pub(super) fn arm_timer(&mut self, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let due = live.core.poll_timeout();
        if live.timer.as_ref().map(|(at, _)| *at) == due {
            return;
        }
        if let Some((_, old)) = live.timer.take() {
            ctx.cancel_future(old);
        }
        let Some(at) = due else { return };
        let epoch = live.epoch();
        let wait = at.saturating_duration_since(now());
        let handle = ctx.run_later(wait, move |act, ctx| act.on_deadline(epoch, ctx));
        live.timer = Some((at, handle));
    }

    /// The timer fired: the core times out what is due.
    fn on_deadline(&mut self, epoch: u64, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live_mut().filter(|l| l.epoch() == epoch) else {
            return;
        };
        live.timer = None;
        live.core.handle_timeout(now());
        self.drive(ctx);
    }

    /// Hands a request's outcome to its waiter.
    pub(super) fn complete(
        &mut self,
        waiter: Waiter,
        outcome: Result<Box<RawValue>, LinkError>,
        ctx: &mut Context<Self>,
    ) {
        match waiter {
            Waiter::Caller(reply) => reply(outcome),
            Waiter::Initialize => self.on_initialize_result(outcome, ctx),
            Waiter::GrantReceipt(proposed) => {
                self.on_grant_receipt(proposed, read_receipt(outcome), ctx)
            }
            Waiter::PolicyReceipt(seq, proposed) => {
                self.on_policy_receipt(seq, proposed, read_receipt(outcome), ctx)
            }
            // The core reads its listing's pages itself; one never reaches the actor.
            Waiter::ToolsPage => {}
            Waiter::Manifest => self.on_manifest(outcome, ctx),
            Waiter::Discover { retried } => self.on_discover_result(outcome, retried, ctx),
            // The core answers a modern server's input rounds itself (`host-core/src/link/mrtr.rs`).
            Waiter::Input(_) => {}
            Waiter::Listen => self.on_listen_end(outcome, ctx),
        }
    }
}

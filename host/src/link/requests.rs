//! Sending requests: ids, timeouts, and handing each outcome to whoever waits for it.

use super::actor::ServerLink;
use super::error::LinkError;
use super::lifecycle::LinkPhase;
use super::pending::{Pending, Waiter};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{RawValue, decode_result};
use mcpl_protocol::mcp::CancelledParams;
use mcpl_protocol::method::{Cancelled, Initialize, Method, NotificationMethod, RequestMethod};
use mcpl_protocol::{Id, Message, Notification, Request};
use serde::de::DeserializeOwned;
use std::time::Duration;
use tokio::sync::oneshot;

/// Decodes a result by its method's type, straight from its text; a mismatch is the
/// server's fault.
pub(super) fn decode<T: DeserializeOwned>(
    method: &'static str,
    result: &RawValue,
) -> Result<T, LinkError> {
    decode_result(result).map_err(|e| LinkError::MalformedResult {
        method,
        detail: e.0,
    })
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
        self.send_request::<M>(params, waiter, timeout, ctx);
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
        let timeout = timeout.unwrap_or(self.config.request_timeout);
        let phase = self.lifecycle.phase();
        let Some(live) = self.lifecycle.live_mut() else {
            return self.complete(waiter, Err(LinkError::NotConnected { phase }), ctx);
        };
        let n = live.pending.allocate();
        let timer = ctx.run_later(timeout, move |act, ctx| act.on_timeout(n, ctx));
        live.pending.insert(
            n,
            Pending {
                method: M::NAME,
                waiter,
                timeout,
                timer,
            },
        );
        self.send_message(Message::Request(Request::new::<M>(Id::Number(n), params)));
    }

    /// Sends a notification on the current connection.
    pub(super) fn send_notification<M: NotificationMethod>(&mut self, params: &M::Params) {
        self.send_message(Message::Notification(Notification::new::<M>(params)));
    }

    /// A request's time is up: its waiter gets `Timeout`, the server is told to stop, and
    /// the id is remembered so a late result is still read as one (§5.2, vector 28).
    pub(super) fn on_timeout(&mut self, id: i64, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let Some(pending) = live.pending.time_out(id) else {
            return;
        };
        mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, id, method = pending.method, after = ?pending.timeout, "request timed out");
        // MCP: `initialize` is never cancelled (the link drops the connection instead).
        if pending.method != Initialize::NAME {
            let reason = format!("no response within {:?}", pending.timeout);
            self.send_notification::<Cancelled>(&CancelledParams {
                request_id: Id::Number(id),
                reason: Some(reason),
                meta: None,
            });
        }
        let error = LinkError::Timeout {
            method: pending.method,
            after: pending.timeout,
        };
        self.complete(pending.waiter, Err(error), ctx);
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
            Waiter::GrantReceipt(proposed) => self.on_grant_receipt(proposed, outcome, ctx),
            Waiter::PolicyReceipt(seq, proposed) => {
                self.on_policy_receipt(seq, proposed, outcome, ctx)
            }
            Waiter::ToolsPage => self.on_tools_page(outcome, ctx),
            Waiter::Manifest => self.on_manifest(outcome, ctx),
        }
    }
}

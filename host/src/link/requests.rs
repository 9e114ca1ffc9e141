//! Sending requests: ids, timeouts, and handing each outcome to whoever waits for it.

use super::actor::ServerLink;
use super::era::{Era, Supported, supported_choice};
use super::error::LinkError;
use super::lifecycle::LinkPhase;
use super::mrtr;
use super::pending::{InputRound, Pending, Waiter};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{RawValue, decode_result, to_raw};
use mcpl_protocol::mcp::CancelledParams;
use mcpl_protocol::method::{Cancelled, Initialize, Method, NotificationMethod, RequestMethod};
use mcpl_protocol::modern::SERVER_DISCOVER;
use mcpl_protocol::{Id, Message, Notification, Request};
use serde::de::DeserializeOwned;
use std::time::Duration;
use tokio::sync::oneshot;
use tracing::info;

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

    /// A modern request's answer: final, or asking for input, then sent again with the
    /// answers (mrtr.rs); or its version refused (-32022) with a modern one this host
    /// speaks listed, then sent again once with that one, which later requests take too.
    fn on_input_round(
        &mut self,
        mut round: Box<InputRound>,
        outcome: Result<Box<RawValue>, LinkError>,
        ctx: &mut Context<Self>,
    ) {
        if let Err(LinkError::Server { error, .. }) = &outcome
            && !round.version_retried
            && let Supported::Modern(version) = supported_choice(error)
            && let Some(live) = self.lifecycle.live_mut()
            && live.adopt_version(&version)
        {
            info!(link = %self.config.name, method = round.method, %version, "the server refused the protocol version sent; sending again with one it serves");
            round.version_retried = true;
            let (method, timeout) = (round.method, round.timeout);
            let params = round.params.clone();
            return self.send_raw(method, Some(&params), Waiter::Input(round), timeout, ctx);
        }
        let verdict = match &outcome {
            Ok(result) => mrtr::read(round.method, Some(&round.params), result, round.rounds),
            Err(_) => mrtr::Verdict::Final,
        };
        match verdict {
            mrtr::Verdict::Retry(params) => {
                round.rounds += 1;
                round.params = params;
                let (method, timeout) = (round.method, round.timeout);
                let params = round.params.clone();
                self.send_raw(method, Some(&params), Waiter::Input(round), timeout, ctx);
            }
            mrtr::Verdict::Final => {
                let method = round.method;
                (round.reply)(outcome);
                self.after_modern_call(method, ctx);
            }
            mrtr::Verdict::Fail(error) => (round.reply)(Err(error)),
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
    /// connection that is (or may be) modern. `timeout`: none, it is awaited for as long
    /// as the connection lives (`subscriptions/listen`).
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
        let params = match &live.stamp {
            Some(stamp) => Some(stamp.apply(params)),
            None => params.map(ToOwned::to_owned),
        };
        let n = live.pending.allocate();
        let timer = match timeout {
            Some(after) => ctx.run_later(after, move |act, ctx| act.on_timeout(n, ctx)),
            None => SpawnHandle::default(),
        };
        live.pending.insert(
            n,
            Pending {
                method,
                waiter,
                timeout: timeout.unwrap_or(Duration::MAX),
                timer,
            },
        );
        self.send_message(Message::Request(Request {
            id: Id::Number(n),
            method: method.to_owned(),
            params,
        }));
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
        let by_notification = live.cancels_by_notification();
        mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, id, method = pending.method, after = ?pending.timeout, "request timed out");
        // MCP: `initialize` is never cancelled (the link drops the connection instead); nor
        // is the era probe, which a legacy server may not know (it goes on to
        // `initialize`); nor anything on modern Streamable HTTP (`Live::cancels_by_notification`).
        if pending.method != Initialize::NAME
            && pending.method != SERVER_DISCOVER
            && by_notification
        {
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
            Waiter::Discover { retried } => self.on_discover_result(outcome, retried, ctx),
            Waiter::Input(round) => self.on_input_round(round, outcome, ctx),
            Waiter::Listen => self.on_listen_end(outcome),
        }
    }
}

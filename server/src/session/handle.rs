//! [`SessionHandle`]: how server code reaches a session — typed messages to its actor.
//!
//! A handle is cheap to clone, `Send` and `Sync`, and usable from any thread or task (a tool
//! handler running on tokio included). Once the session has stopped, every method reports
//! that it is closed.

use super::SessionActor;
use super::outgoing::Failure;
use crate::core::HintDraft;
use crate::core::lifecycle::{Negotiated, Phase};
use crate::ids::SessionId;
use crate::push::{PushError, PushEvent};
use crate::tool::NotifyError;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::Request;
use mcpl_protocol::mcpl::{FeatureSetsUpdateParams, PushEventParams, PushEventResult, PushPayload};
use mcpl_protocol::method;
use mcpl_protocol::time::rfc3339_millis;
use mcpl_transport::Principal;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// The session has stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the session is closed")]
pub struct SessionClosed;

/// A snapshot of a session's state.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionStatus {
    /// The lifecycle phase.
    pub phase: Phase,
    /// What `initialize` settled, once answered.
    pub negotiated: Option<Negotiated>,
    /// The host's latest grant (`featureSets/update`), once answered.
    pub grant: Option<FeatureSetsUpdateParams>,
    /// Tool calls running.
    pub running_calls: usize,
    /// The session's requests to the host awaiting an answer.
    pub pending_requests: usize,
}

/// A handle to a live (or stopped) session.
///
/// Shared, not copied, on clone: every tool call is given one, and a copied actix address
/// allocates twice and a principal's name once (issue #18).
#[derive(Clone)]
pub struct SessionHandle(Arc<Inner>);

struct Inner {
    addr: Addr<SessionActor>,
    id: SessionId,
    principal: Principal,
}

impl fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionHandle")
            .field("id", &self.0.id)
            .field("principal", &self.0.principal)
            .finish()
    }
}

impl SessionHandle {
    pub(crate) fn new(addr: Addr<SessionActor>, id: SessionId, principal: Principal) -> Self {
        SessionHandle(Arc::new(Inner {
            addr,
            id,
            principal,
        }))
    }

    /// The session's id.
    pub fn id(&self) -> SessionId {
        self.0.id
    }

    /// Who the connection authenticated as.
    pub fn principal(&self) -> &Principal {
        &self.0.principal
    }

    /// False once the session has stopped.
    pub fn is_open(&self) -> bool {
        self.0.addr.connected()
    }

    /// The session's actor.
    pub(crate) fn addr(&self) -> &Addr<SessionActor> {
        &self.0.addr
    }

    /// Sends `push/event` to the host and waits for its answer (or the server's push
    /// timeout). Refused at once when the session may not push: before the host's initial
    /// `featureSets/update` completed ([`PushError::GrantPending`], SPEC §5.3) or without a
    /// `pushEvents` grant ([`PushError::NotGranted`]).
    pub async fn push(&self, event: PushEvent) -> Result<PushEventResult, PushError> {
        self.0
            .addr
            .send(Push(event))
            .await
            .map_err(|_| PushError::Closed)?
            .await
    }

    /// The session's state now.
    pub async fn status(&self) -> Result<SessionStatus, SessionClosed> {
        self.0.addr.send(Status).await.map_err(|_| SessionClosed)
    }

    /// Passes a tool handler's request to the session (`for_handlers.rs`); a stopped
    /// session drops it, and the handler hears "closed".
    pub(crate) fn for_handler(&self, m: super::ForHandler) {
        self.0.addr.do_send(m);
    }

    /// Writes a tool handler's progress or log message (`notices.rs`); answers once it is
    /// queued, or why it was refused.
    pub(crate) async fn notify(&self, notice: super::Notice) -> Result<(), NotifyError> {
        self.0
            .addr
            .send(notice)
            .await
            .map_err(|_| NotifyError::Closed)?
    }

    /// Sends a tool handler's request to the client (`asks.rs`) and waits for the
    /// client's result, or why none came.
    pub(crate) async fn ask(
        &self,
        ask: super::Ask,
    ) -> Result<Box<mcpl_protocol::jsonrpc::RawValue>, crate::tool::AskError> {
        use crate::tool::AskError;
        let answer = self
            .0
            .addr
            .send(ask)
            .await
            .map_err(|_| AskError::Closed)??;
        match answer.await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(error))) => Err(AskError::Client(error)),
            Ok(Err(Failure::TimedOut)) => Err(AskError::TimedOut),
            Ok(Err(Failure::Abandoned)) => Err(AskError::CallEnded),
            Ok(Err(Failure::Closed)) | Err(_) => Err(AskError::Closed),
        }
    }

    /// Sends a handler's questions asked together (`asks.rs`'s `AskAll`).
    pub(crate) async fn ask_all(
        &self,
        all: super::asks::AskAll,
    ) -> Result<Option<Vec<Box<mcpl_protocol::jsonrpc::RawValue>>>, crate::tool::AskError> {
        self.0
            .addr
            .send(all)
            .await
            .map_err(|_| crate::tool::AskError::Closed)?
    }

    /// What the client declared for `call` (`asks.rs`'s `Declared`).
    pub(crate) async fn declared(
        &self,
        call: mcpl_protocol::jsonrpc::Id,
    ) -> Option<mcpl_protocol::mcp::ClientCapabilities> {
        self.0
            .addr
            .send(super::asks::Declared { call })
            .await
            .ok()
            .flatten()
    }

    /// Asks the session to stop: each open `subscriptions/listen` stream is answered with
    /// its graceful completion result (MCP 2026-07-28; on stdio and WebSocket then told
    /// cancelled), running calls are cancelled, pending
    /// pushes fail with
    /// [`PushError::Closed`], the connection's write side closes once queued messages are
    /// written.
    pub fn close(&self) {
        self.0.addr.do_send(Stop);
    }
}

impl crate::client_ask::AskClient for SessionHandle {
    fn ask_client(
        &self,
        request: mcpl_protocol::jsonrpc::Id,
        key: Option<u64>,
        input_key: Option<String>,
        needs: crate::client_ask::Needs,
        method: &'static str,
        params: Box<mcpl_protocol::jsonrpc::RawValue>,
    ) -> std::pin::Pin<
        Box<
            dyn Future<
                    Output = Result<
                        Box<mcpl_protocol::jsonrpc::RawValue>,
                        crate::client_ask::AskError,
                    >,
                > + Send
                + '_,
        >,
    > {
        Box::pin(self.ask(super::Ask {
            call: request,
            key,
            method,
            needs,
            params,
            input_key,
        }))
    }
}

/// Pushes an event; answers with the future of the host's answer, so the actor is not
/// held while the host thinks.
struct Push(PushEvent);

pub(super) type PushAnswer =
    std::pin::Pin<Box<dyn Future<Output = Result<PushEventResult, PushError>> + Send>>;

impl Message for Push {
    type Result = PushAnswer;
}

impl Handler<Push> for SessionActor {
    type Result = MessageResult<Push>;

    fn handle(&mut self, Push(event): Push, ctx: &mut Context<Self>) -> Self::Result {
        MessageResult(match self.send_push(event, ctx) {
            Ok(answer) => answer,
            Err(e) => Box::pin(std::future::ready(Err(e))),
        })
    }
}

impl SessionActor {
    /// Checks that pushing is allowed, fills in the event and writes it. The returned
    /// future resolves with the host's answer.
    fn send_push(
        &mut self,
        event: PushEvent,
        ctx: &mut Context<Self>,
    ) -> Result<PushAnswer, PushError> {
        if let Some(bad) = event.tags.iter().find(|t| !mcpl_protocol::mcpl::is_tag(t)) {
            return Err(PushError::InvalidTag(bad.clone()));
        }
        self.refresh_manifest();
        let feature_set = self.core.push_feature_set(event.feature_set.as_deref())?;
        let params = PushEventParams {
            feature_set,
            event_id: event
                .event_id
                .unwrap_or_else(|| self.shared.next_event_id()),
            timestamp: event
                .timestamp
                .unwrap_or_else(|| rfc3339_millis(self.shared.now())),
            origin: event.origin,
            tags: event.tags,
            payload: PushPayload {
                content: event.content,
            },
            coalesce: None,
            hints: None,
            toolset: event.toolset,
            instance: event.instance,
            meta: None,
        };
        Ok(self.write_push(params, None, ctx))
    }

    /// Writes `push/event` as a request, with `draft` numbered as its `hints` in the same
    /// step (§5.2), and starts its timer. A push is sent once: hint-carrying pushes are
    /// never retried (§5.2, amending SPEC §9.4), and this session retries none.
    pub(super) fn write_push(
        &mut self,
        mut params: PushEventParams,
        draft: Option<HintDraft>,
        ctx: &mut Context<Self>,
    ) -> PushAnswer {
        let timeout = self.shared.push_timeout;
        let (id, answer) = self
            .outgoing
            .register(<method::PushEvent as method::Method>::NAME);
        let timer = ctx.run_later(timeout, {
            let id = id.clone();
            move |act, _| {
                if act.outgoing.expire(&id) {
                    tracing::warn!(session = %act.id, %id, "push timed out");
                }
            }
        });
        self.outgoing.set_timer(&id, timer);
        tracing::debug!(session = %self.id, %id, event = %params.event_id, "push sent");
        // Only a delivery's planned push carries changes, where the plan flushed what was
        // held (`server-core/src/carrier.rs`).
        self.write_hinted(draft, |hints| {
            params.hints = hints;
            Request::new::<method::PushEvent>(id, &params).into()
        });
        Box::pin(async move {
            match answer.await {
                Ok(Ok(Ok(result))) => mcpl_protocol::jsonrpc::decode_result(&result)
                    .map_err(|e| PushError::MalformedResult(e.0)),
                Ok(Ok(Err(error))) => Err(PushError::Host(error)),
                Ok(Err(Failure::TimedOut)) => Err(PushError::TimedOut(timeout)),
                Ok(Err(Failure::Closed | Failure::Abandoned)) | Err(_) => Err(PushError::Closed),
            }
        })
    }
}

/// Asks for a [`SessionStatus`].
struct Status;

impl Message for Status {
    type Result = SessionStatus;
}

impl Handler<Status> for SessionActor {
    type Result = MessageResult<Status>;

    fn handle(&mut self, _: Status, _: &mut Context<Self>) -> Self::Result {
        MessageResult(SessionStatus {
            phase: self.core.lifecycle().phase(),
            negotiated: self.core.lifecycle().negotiated().cloned(),
            grant: self.core.lifecycle().grant().cloned(),
            running_calls: self.core.running(),
            pending_requests: self.outgoing.len(),
        })
    }
}

/// Stops the session.
pub(super) struct Stop;

impl Message for Stop {
    type Result = ();
}

impl Handler<Stop> for SessionActor {
    type Result = ();

    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        // MCP 2026-07-28: the server ends each open listen gracefully, with its result.
        let shared_link = self.info.kind != mcpl_transport::TransportKind::StreamableHttp;
        self.core.close_listens(shared_link);
        self.drive(ctx);
        ctx.stop();
    }
}

//! The session's side of its [`SessionHandle`]: the port (`session_port.rs`) implemented on
//! the session actor's address — each request a typed message to the actor, the actor's
//! reply turned into what the handle's caller is told — and the messages only the handle
//! sends: push, status, close.

use super::SessionActor;
use super::asks::Declared;
use super::outgoing::Failure;
use crate::client_ask::AskError;
use crate::core::HintDraft;
use crate::push::{PushError, PushEvent};
use crate::session_port::{
    Answer, Ask, AskAll, ForHandler, Notice, NotifyError, SessionClosed, SessionPort, SessionStatus,
};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{Id, RawValue, Request};
use mcpl_protocol::mcp::ClientCapabilities;
use mcpl_protocol::mcpl::{PushEventParams, PushEventResult, PushPayload};
use mcpl_protocol::method;
use mcpl_protocol::time::rfc3339_millis;
use std::future::Future;

/// Each request is sent when its answer is first polled, as the handle's `async fn`s did.
impl SessionPort for Addr<SessionActor> {
    fn is_open(&self) -> bool {
        self.connected()
    }

    fn push(&self, event: PushEvent) -> Answer<'_, Result<PushEventResult, PushError>> {
        Box::pin(async move {
            self.send(Push(event))
                .await
                .map_err(|_| PushError::Closed)?
                .await
        })
    }

    fn status(&self) -> Answer<'_, Result<SessionStatus, SessionClosed>> {
        Box::pin(async move { self.send(Status).await.map_err(|_| SessionClosed) })
    }

    fn close(&self) {
        self.do_send(Stop);
    }

    fn for_handler(&self, request: ForHandler) {
        self.do_send(request);
    }

    fn notify(&self, notice: Notice) -> Answer<'_, Result<(), NotifyError>> {
        Box::pin(async move { self.send(notice).await.map_err(|_| NotifyError::Closed)? })
    }

    fn ask(&self, ask: Ask) -> Answer<'_, Result<Box<RawValue>, AskError>> {
        Box::pin(async move {
            let answer = self.send(ask).await.map_err(|_| AskError::Closed)??;
            match answer.await {
                Ok(Ok(Ok(result))) => Ok(result),
                Ok(Ok(Err(error))) => Err(AskError::Client(error)),
                Ok(Err(Failure::TimedOut)) => Err(AskError::TimedOut),
                Ok(Err(Failure::Abandoned)) => Err(AskError::CallEnded),
                Ok(Err(Failure::Closed)) | Err(_) => Err(AskError::Closed),
            }
        })
    }

    fn ask_all(&self, all: AskAll) -> Answer<'_, Result<Option<Vec<Box<RawValue>>>, AskError>> {
        Box::pin(async move { self.send(all).await.map_err(|_| AskError::Closed)? })
    }

    fn declared(&self, call: Id) -> Answer<'_, Option<ClientCapabilities>> {
        Box::pin(async move { self.send(Declared { call }).await.ok().flatten() })
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

impl Handler<crate::actors::principal::ForSession> for SessionActor {
    type Result = ();

    /// What the principal sends through its one recipient of this session, handled as
    /// each message is on its own.
    fn handle(&mut self, m: crate::actors::principal::ForSession, ctx: &mut Context<Self>) {
        use crate::actors::principal::ForSession;
        match m {
            ForSession::Deliver(m) => Handler::handle(self, m, ctx),
            ForSession::Swapped(m) => Handler::handle(self, m, ctx),
            ForSession::Statement(m) => Handler::handle(self, m, ctx),
            ForSession::Tools(m) => Handler::handle(self, m, ctx),
            ForSession::Versioned(m) => Handler::handle(self, m, ctx),
            ForSession::Close(m) => Handler::handle(self, m, ctx),
        }
    }
}

impl Handler<crate::actors::principal::PrincipalReleased> for SessionActor {
    type Result = ();

    /// Its principal was released here (issue #41): closed as by its handle.
    fn handle(&mut self, _: crate::actors::principal::PrincipalReleased, ctx: &mut Context<Self>) {
        tracing::debug!(session = %self.id, "its principal was released here: the session closes");
        <Self as Handler<Stop>>::handle(self, Stop, ctx);
    }
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

//! The session seen from outside: the [`SessionHandle`] server code and tool handlers hold,
//! the requests a handler's context sends through it ([`ForHandler`], [`Notice`], [`Ask`],
//! [`AskAll`]), the errors both sides name ([`SessionClosed`], [`NotifyError`]), and the
//! session's side as a trait ([`SessionPort`]).
//!
//! A leaf module, depending on neither `session` nor `tool`: the session runs the tool
//! handlers (`session` → `tool`), a handler's [`ToolContext`](crate::ToolContext) reaches
//! its session only through this port (`tool` → `session_port`), and the session
//! implements the port on its actor's address (`session/handle.rs`; `session` →
//! `session_port`), so the two never import each other (issue #38:
//! `scripts/module-cycles.py` finds no cycle). `client_ask.rs` is the same shape for the
//! questions a handler asks its client, which resource and prompt handlers ask too.

pub(crate) use crate::client_ask::Ask;
use crate::client_ask::{AskClient, AskError, Needs};
use crate::core::lifecycle::{Negotiated, Phase};
use crate::core::tool::outcome::{
    CloseToolsetError, DeclineError, Invitation, OpenToolsetError, Opened,
};
use crate::ids::SessionId;
use crate::push::{PushError, PushEvent};
use mcpl_protocol::jsonrpc::{Id, RawValue};
use mcpl_protocol::mcp::{ClientCapabilities, ContentBlock, LoggingMessageParams, ProgressParams};
use mcpl_protocol::mcpl::{FeatureSetsUpdateParams, PushEventResult};
use mcpl_transport::Principal;
use serde_json::Value;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::oneshot;

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

/// Why a progress or log notification was refused, sorted by who is at fault.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NotifyError {
    /// A progress or total that is not a finite number (JSON has no NaN or infinity).
    #[error("progress and total must be finite numbers")]
    NotFinite,
    /// MCP: progress MUST increase with each notification; this one does not.
    #[error("progress must increase: {given} after {last}")]
    NotIncreasing {
        /// The progress last sent for this call.
        last: f64,
        /// The progress refused.
        given: f64,
    },
    /// The call was answered or cancelled: MCP says its progress notifications stop.
    #[error("the call has ended; its progress is over")]
    CallEnded,
    /// The session has stopped.
    #[error("the session is closed")]
    Closed,
}

/// A tool handler's request about its caller's toolsets (`tool/toolsets.rs`), answered by
/// the session through its principal (`session/for_handlers.rs`).
#[derive(Debug)]
pub(crate) enum ForHandler {
    Open {
        /// The handler's `tools/call`, and its key in the session's `Requests`.
        call: Id,
        key: u64,
        toolset: String,
        instance: Option<String>,
        options: Option<Value>,
        reply: oneshot::Sender<Result<Opened, OpenToolsetError>>,
    },
    Close {
        call: Id,
        key: u64,
        toolset: String,
        instance: Option<String>,
        reply: oneshot::Sender<Result<Vec<ContentBlock>, CloseToolsetError>>,
    },
    Invitations {
        reply: oneshot::Sender<Vec<Invitation>>,
    },
    Decline {
        toolset: String,
        instance: Option<String>,
        reply: oneshot::Sender<Result<Invitation, DeclineError>>,
    },
}

/// A tool handler's notification for its host (`tool/notify.rs`), written by the session
/// (`session/notices.rs`).
#[derive(Debug)]
pub(crate) enum Notice {
    /// `notifications/progress` for the handler's call.
    Progress {
        /// The call's request id and its key in the session's `Requests`.
        call: Id,
        key: u64,
        params: ProgressParams,
    },
    /// `notifications/message` for the handler's call (its request id), if at or above
    /// the level (the call's own for a modern request, else the session's).
    Log {
        call: Id,
        params: LoggingMessageParams,
    },
}

/// Questions a handler asks together (`ToolContext::ask_all`), each under its key.
#[derive(Debug)]
pub(crate) struct AskAll {
    /// The handler's `tools/call`, and its key in the session's `Requests`.
    pub(crate) call: Id,
    pub(crate) key: u64,
    /// Each question: what it needs, its method, its params, its key.
    pub(crate) questions: Vec<(Needs, &'static str, Box<RawValue>, String)>,
}

/// What a port's method answers with, once awaited.
pub(crate) type Answer<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The session's side of its handle: each method passes a request to the session and,
/// where the caller waits, answers with the session's reply or why none came. Implemented
/// by the session on its actor's address (`session/handle.rs`). A method that answers
/// sends nothing before its answer is first polled, as an `async fn` would.
pub(crate) trait SessionPort: Send + Sync {
    /// False once the session has stopped.
    fn is_open(&self) -> bool;
    /// Sends `push/event` and waits for the host's answer ([`SessionHandle::push`]).
    fn push(&self, event: PushEvent) -> Answer<'_, Result<PushEventResult, PushError>>;
    /// The session's state now.
    fn status(&self) -> Answer<'_, Result<SessionStatus, SessionClosed>>;
    /// Asks the session to stop ([`SessionHandle::close`]).
    fn close(&self);
    /// Passes a tool handler's request; a stopped session drops it, and the handler hears
    /// "closed" from its dropped reply channel.
    fn for_handler(&self, request: ForHandler);
    /// Writes a handler's progress or log message; answers once it is queued.
    fn notify(&self, notice: Notice) -> Answer<'_, Result<(), NotifyError>>;
    /// Sends a handler's request to the client; answers with the client's raw result.
    fn ask(&self, ask: Ask) -> Answer<'_, Result<Box<RawValue>, AskError>>;
    /// A handler's questions asked together: `Some(answers)` in order for a modern call
    /// that carried them all, `None` for a legacy connection (asked one at a time).
    fn ask_all(&self, all: AskAll) -> Answer<'_, Result<Option<Vec<Box<RawValue>>>, AskError>>;
    /// What the client declared for `call`: a modern call's own capabilities, else the
    /// connection's; `None` once the call is over or the session gone.
    fn declared(&self, call: Id) -> Answer<'_, Option<ClientCapabilities>>;
}

/// A handle to a live (or stopped) session.
///
/// A handle is cheap to clone, `Send` and `Sync`, and usable from any thread or task (a
/// tool handler running on tokio included). Once the session has stopped, every method
/// reports that it is closed.
///
/// Shared, not copied, on clone: every tool call is given one, and a copied actix address
/// allocates twice and a principal's name once (issue #18).
#[derive(Clone)]
pub struct SessionHandle(Arc<Inner<dyn SessionPort>>);

/// A handle's parts, the port last so that one allocation holds them all.
struct Inner<P: ?Sized> {
    id: SessionId,
    principal: Principal,
    port: P,
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
    /// A handle to session `id` of `principal`, reached through `port`.
    pub(crate) fn new(
        port: impl SessionPort + 'static,
        id: SessionId,
        principal: Principal,
    ) -> Self {
        SessionHandle(Arc::new(Inner {
            id,
            principal,
            port,
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
        self.0.port.is_open()
    }

    /// Sends `push/event` to the host and waits for its answer (or the server's push
    /// timeout). Refused at once when the session may not push: before the host's initial
    /// `featureSets/update` completed ([`PushError::GrantPending`], SPEC §5.3) or without a
    /// `pushEvents` grant ([`PushError::NotGranted`]).
    pub async fn push(&self, event: PushEvent) -> Result<PushEventResult, PushError> {
        self.0.port.push(event).await
    }

    /// The session's state now.
    pub async fn status(&self) -> Result<SessionStatus, SessionClosed> {
        self.0.port.status().await
    }

    /// Passes a tool handler's request to the session (`session/for_handlers.rs`); a
    /// stopped session drops it, and the handler hears "closed".
    pub(crate) fn for_handler(&self, request: ForHandler) {
        self.0.port.for_handler(request);
    }

    /// Writes a tool handler's progress or log message (`session/notices.rs`); answers
    /// once it is queued, or why it was refused.
    pub(crate) async fn notify(&self, notice: Notice) -> Result<(), NotifyError> {
        self.0.port.notify(notice).await
    }

    /// Sends a handler's questions asked together (`session/asks.rs`).
    pub(crate) async fn ask_all(
        &self,
        all: AskAll,
    ) -> Result<Option<Vec<Box<RawValue>>>, AskError> {
        self.0.port.ask_all(all).await
    }

    /// What the client declared for `call` (`session/asks.rs`).
    pub(crate) async fn declared(&self, call: Id) -> Option<ClientCapabilities> {
        self.0.port.declared(call).await
    }

    /// Asks the session to stop: each open `subscriptions/listen` stream is answered with
    /// its graceful completion result (MCP 2026-07-28; on stdio and WebSocket then told
    /// cancelled), running calls are cancelled, pending pushes fail with
    /// [`PushError::Closed`], the connection's write side closes once queued messages are
    /// written.
    pub fn close(&self) {
        self.0.port.close();
    }
}

impl AskClient for SessionHandle {
    fn ask_client(&self, ask: Ask) -> Answer<'_, Result<Box<RawValue>, AskError>> {
        self.0.port.ask(ask)
    }
}

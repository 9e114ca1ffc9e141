//! What sessions and their principal say to each other.

use crate::actors::instance::ToPrincipal;
use crate::author::Event;
use crate::core::{Catalog, HintDraft, InstanceKey, Statement};
use crate::ids::SessionId;
use crate::store::records::NotKept;
use crate::tool::outcome::{CloseToolsetError, DeclineError, Invitation, OpenToolsetError, Opened};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{ErrorObject, Id};
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
use mcpl_protocol::meta::Meta;
use mcpl_protocol::toolsets::{ToolsetsCloseResult, ToolsetsOpenResult};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::Arc;
use tokio::sync::oneshot;

/// How a request reached the principal: as `toolsets/open|close` from a host with
/// `toolHints`, as the `toolset_open`/`toolset_close` tools of a host without (§8), or from
/// a tool handler acting for its caller (`ToolContext::open_toolset`), whose session knows
/// the handler by this token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    Rpc,
    Compat,
    Handler(u64),
}

/// Where the answer to a request goes. For a handler's request, `request` is the handler's
/// `tools/call`: the changes are held for its result (§5.3).
#[derive(Debug, Clone)]
pub(crate) struct ReplyTo {
    pub(crate) session: SessionId,
    pub(crate) request: Id,
    pub(crate) via: Via,
}

// ---- session → principal ----

/// A session of this principal started.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Attach {
    pub(crate) id: SessionId,
    pub(crate) to: SessionAddr,
}

/// How a principal reaches one of its sessions: the messages it sends one, each to the
/// session's actor (the principal never names the session's type).
#[derive(Clone)]
pub(crate) struct SessionAddr {
    pub(crate) deliver: Recipient<Deliver>,
    pub(crate) swapped: Recipient<CatalogSwapped>,
    pub(crate) statement: Recipient<StatementFor>,
    pub(crate) tools: Recipient<ToolsView>,
}

// ---- principal ⇄ registry ----

/// Where a principal's actor reaches the registry that started it.
#[derive(Clone)]
pub(crate) struct Registrar {
    /// Told when nothing is left of the principal; the registry then asks it to
    /// [`Retire`].
    pub(crate) idle: Recipient<Idle>,
    /// Routes its instances' invitations to other principals.
    pub(crate) route: Recipient<ToPrincipal>,
}

/// The principal started as `generation` has nothing left (no session, nothing open, no
/// invitation, no ended record to report).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Idle {
    pub(crate) principal: mcpl_transport::Principal,
    pub(crate) generation: u64,
}

/// The registry's answer to [`Idle`], sent after everything it routed to the principal
/// before: the principal stops (true) if it is still idle, having seen all of it — so a
/// session attaching or an invitation arriving meanwhile keeps it, by mailbox order.
#[derive(Message)]
#[rtype(result = "bool")]
pub(crate) struct Retire;

/// A session of this principal stopped.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Detach {
    pub(crate) id: SessionId,
}

/// A session's host answered `initialize`: whether it advertised `toolHints`.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct HostInitialized {
    pub(crate) id: SessionId,
    pub(crate) tool_hints: bool,
}

/// A session finished its handshake (SPEC §5.3): pushing may be allowed now.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct SessionReady {
    pub(crate) id: SessionId,
}

/// `tools/list`: the principal's visibility, to list with.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct ListTools {
    pub(crate) session: SessionId,
    pub(crate) request: Id,
    pub(crate) cursor: Option<String>,
}

/// `toolsets/list`: the full statement.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct ListToolsets {
    pub(crate) session: SessionId,
    pub(crate) request: Id,
}

/// `toolsets/open` (or `toolset_open`).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct OpenToolset {
    pub(crate) reply: ReplyTo,
    pub(crate) toolset: String,
    pub(crate) instance: Option<String>,
    pub(crate) options: Option<Value>,
}

/// `toolsets/close` (or `toolset_close`).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct CloseToolset {
    pub(crate) reply: ReplyTo,
    pub(crate) toolset: String,
    pub(crate) instance: Option<String>,
}

/// `tools/call`.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct CallTool {
    pub(crate) session: SessionId,
    pub(crate) request: Id,
    pub(crate) tool: String,
    pub(crate) arguments: Option<Map<String, Value>>,
    /// `_meta["mcpl/instance"]` (§4.5); a host without `toolHints` names it as an argument.
    pub(crate) instance: Option<String>,
    /// The host sees the plain list (§8): compat tools and `instance` arguments apply.
    pub(crate) plain: bool,
    /// The call's `_meta`, for a handler.
    pub(crate) meta: Option<Meta>,
}

/// A tool handler asks for its principal's pending invitations.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct ListInvitations {
    pub(crate) reply: oneshot::Sender<Vec<Invitation>>,
}

/// A tool handler declines one of its principal's invitations.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct DeclineInvitation {
    pub(crate) toolset: String,
    pub(crate) instance: Option<String>,
    pub(crate) reply: oneshot::Sender<Result<Invitation, DeclineError>>,
}

/// The server's manifest (and so its catalog) was replaced.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct SwapCatalog(pub(crate) Arc<Catalog>);

// ---- principal → session ----

/// Changes to the principal's state, with what explains them: answers to this session's
/// requests (which carry the changes, §5.3), events (pushed with them), or neither
/// (`tools/hints`). The session carries it as `core/carrier.rs` decides.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub(crate) struct Deliver {
    /// The instance the changes and events are about (the push's `toolset`/`instance`).
    pub(crate) about: Option<InstanceKey>,
    pub(crate) draft: HintDraft,
    pub(crate) answers: Vec<Answer>,
    pub(crate) events: Vec<Event>,
    /// A call of this session, still waiting, whose result is to carry the draft (§5.3:
    /// `InstanceContext::hold_for`); see `core/carrier.rs`.
    pub(crate) hold: Option<Id>,
}

/// The answer to one of the session's requests.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) request: Id,
    pub(crate) body: AnswerBody,
    /// A deferred call answered by a step something else caused (another's move, a
    /// timer): the delivery's changes and events are that something's, not the call's
    /// (§5.3). See `core/carrier.rs` for what that changes when the call was cancelled.
    pub(crate) deferred: bool,
}

/// What a request is answered with.
#[derive(Debug)]
pub(crate) enum AnswerBody {
    Call(Result<CallToolResult, ErrorObject>),
    Open(Result<ToolsetsOpenResult, ErrorObject>),
    Close(Result<ToolsetsCloseResult, ErrorObject>),
    /// The call goes to a tool's own handler, which the session runs.
    RunHandler {
        tool: String,
        arguments: Option<Map<String, Value>>,
        instance: Option<String>,
        meta: Option<Meta>,
        /// A loose tool: the session may run its later calls itself (`core/session.rs`:
        /// direct calls).
        direct: bool,
    },
    /// What a tool handler asked for (`Via::Handler(token)`); the draft is held for the
    /// handler's result.
    Handler {
        token: u64,
        answer: HandlerAnswer,
    },
}

impl AnswerBody {
    /// What the answer becomes when the step it answers could not be kept (issue #37
    /// item 2): a call, open or close fails with the store's error; a handler's own
    /// request fails the same way. A call sent on to its handler changed nothing yet.
    pub(crate) fn refuse(&mut self, not_kept: &NotKept) {
        match self {
            AnswerBody::Call(r) => *r = Err(not_kept.error()),
            AnswerBody::Open(r) => *r = Err(not_kept.error()),
            AnswerBody::Close(r) => *r = Err(not_kept.error()),
            AnswerBody::RunHandler { .. } => {}
            AnswerBody::Handler { answer, .. } => answer.refuse(not_kept),
        }
    }
}

/// The answer to a tool handler's request.
#[derive(Debug)]
pub(crate) enum HandlerAnswer {
    Open(Result<Opened, OpenToolsetError>),
    Close(Result<Vec<ContentBlock>, CloseToolsetError>),
}

impl HandlerAnswer {
    /// See [`AnswerBody::refuse`].
    fn refuse(&mut self, not_kept: &NotKept) {
        match self {
            HandlerAnswer::Open(r) => *r = Err(OpenToolsetError::NotKept(not_kept.0.clone())),
            HandlerAnswer::Close(r) => *r = Err(CloseToolsetError::NotKept(not_kept.0.clone())),
        }
    }
}

/// The answer to `toolsets/list`.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct StatementFor {
    pub(crate) request: Id,
    pub(crate) statement: Statement,
}

/// What `tools/list` is built from.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct ToolsView {
    pub(crate) request: Id,
    pub(crate) cursor: Option<String>,
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) visible: BTreeSet<String>,
}

/// The principal moved to a new catalog: what that changed.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct CatalogSwapped {
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) draft: HintDraft,
}

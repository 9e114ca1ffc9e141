//! Tools as server authors write them: a `Tool` definition and a typed async handler.
//!
//! A handler is `Fn(ToolContext, Args) -> impl Future<Output = Result<CallToolResult,
//! ToolError>> + Send`, where `Args: DeserializeOwned` (a struct, or `serde_json::Value` to
//! take the arguments as they came). The session decodes the arguments and runs the
//! handler as a spawned tokio task, so a handler may await anything `Send` and a panic
//! stays inside its call.
//!
//! Errors (MCP 2025-11-25): arguments that do not decode, and [`ToolError::Failed`], are
//! *tool execution errors* — a result with `isError: true` that the model reads; only
//! [`ToolError::Internal`] (and a panic) is a JSON-RPC error (-32603). The mapping is
//! [`ToolError::into_outcome`], the one place it happens.
//!
//! A handler may also act on its caller's toolsets — open, close, see and decline
//! invitations — as its host would (`toolsets.rs`), and report progress and log messages
//! to its host while it runs (`notify.rs`, MCP "Utilities / Progress" and "Logging"), and
//! ask its client for a model completion or its user for input (`ask.rs`, MCP "Client
//! Features").

use crate::cancel::CancelToken;
use crate::push::{PushError, PushEvent};
use crate::session_port::SessionHandle;
use mcpl_protocol::jsonrpc::Id;
use mcpl_protocol::mcpl::PushEventResult;
use mcpl_protocol::meta::Meta;
use mcpl_transport::Principal;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

mod ask;
pub(crate) use mcpl_server_core::tool::error;
mod notify;
pub(crate) use mcpl_server_core::tool::outcome;
mod schema;
mod toolsets;

pub use crate::session_port::NotifyError;
pub use ask::{AskError, ClientAnswer, ClientQuestion};
pub use error::{ToolError, ToolResult};
pub use outcome::{CloseToolsetError, DeclineError, Invitation, OpenToolsetError, Opened};
pub use schema::{NoArguments, TypedTools, input_schema};
pub(crate) use schema::{is_object_schema, sealed::AddTyped, typed_declaration};

/// What a tool handler is given besides its arguments.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session, which also knows the principal.
    pub(crate) session: SessionHandle,
    pub(crate) request_id: Id,
    /// Tells this call from a later one reusing its request id (the session's `Calls`).
    pub(crate) call_key: u64,
    pub(crate) meta: Option<Meta>,
    pub(crate) instance: Option<String>,
    pub(crate) cancel: CancelToken,
}

impl ToolContext {
    /// Who the connection authenticated as (RFC-014 §4.6).
    pub fn principal(&self) -> &Principal {
        self.session.principal()
    }

    /// The principal's name, for logs and for replies (`anon-N` for an anonymous one).
    pub fn principal_name(&self) -> String {
        self.session.principal().name()
    }

    /// The session the call arrived on: push events to this host through it.
    pub fn session(&self) -> &SessionHandle {
        &self.session
    }

    /// The id of the `tools/call` request.
    pub fn request_id(&self) -> &Id {
        &self.request_id
    }

    /// The call's `_meta` (`params._meta`), if it had one — RFC-014's `mcpl/instance`
    /// (§4.5) travels there.
    pub fn meta(&self) -> Option<&Meta> {
        self.meta.as_ref()
    }

    /// The instance the call was resolved to (§4.5), for a tool of an instanced toolset
    /// that has a handler of its own: the principal's name for it.
    pub fn instance(&self) -> Option<&str> {
        self.instance.as_deref()
    }

    /// The call's cancellation token (see [`CancelToken`]).
    pub fn cancellation(&self) -> &CancelToken {
        &self.cancel
    }

    /// True once the host cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Pushes an event to this session's host; shorthand for `self.session().push(event)`.
    pub async fn push(&self, event: PushEvent) -> Result<PushEventResult, PushError> {
        self.session.push(event).await
    }
}

/// The plain tools' handlers, by tool name: looked up on every call, by a name the host
/// sent, so keyed at random per process (ahash: a fraction of SipHash's cost on a short
/// name, issue #42), which no host can make collide.
pub(crate) type Handlers =
    std::collections::HashMap<String, std::sync::Arc<dyn ErasedHandler>, ahash::RandomState>;

/// A boxed handler future.
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolResult> + Send>>;

/// A handler with its argument type erased; decoding happens inside [`ErasedHandler::call`]
/// so that it runs in the call's task too.
pub trait ErasedHandler: Send + Sync {
    /// Decodes `args` and runs the handler.
    fn call(&self, ctx: ToolContext, args: Value) -> ToolFuture;
}

/// A typed handler and the tool name its decode errors mention.
pub(crate) struct Typed<A, F> {
    tool: String,
    f: F,
    // `fn() -> A`: the handler only produces `A`s, so `Typed` is Send + Sync whatever `A` is.
    _args: PhantomData<fn() -> A>,
}

impl<A, F> Typed<A, F> {
    pub(crate) fn new(tool: String, f: F) -> Self {
        Typed {
            tool,
            f,
            _args: PhantomData,
        }
    }
}

impl<A, F, Fut> ErasedHandler for Typed<A, F>
where
    A: DeserializeOwned + Send + 'static,
    F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    fn call(&self, ctx: ToolContext, args: Value) -> ToolFuture {
        match crate::decode::from_json::<A>(args) {
            Ok(args) => Box::pin((self.f)(ctx, args)),
            Err(e) => {
                // MCP 2025-11-25: input validation failures are tool errors, not -32602.
                let error = ToolError::InvalidArguments {
                    tool: self.tool.clone(),
                    detail: e.to_string(),
                };
                Box::pin(async move { Err(error) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::ErrorCode;

    #[test]
    fn tool_errors_map_to_results_or_internal_errors() {
        let r = ToolError::failed("not your turn").into_outcome().unwrap();
        assert!(r.is_error);
        assert_eq!(r.joined_text(), "not your turn");
        let r = ToolError::InvalidArguments {
            tool: "t".into(),
            detail: "missing field `x`".into(),
        }
        .into_outcome()
        .unwrap();
        assert!(r.is_error);
        let e = ToolError::internal("disk full").into_outcome().unwrap_err();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    }
}

//! `tools/call` handlers in a session. Every call goes to the principal first, which
//! resolves it (§3, §4.5, §8); a call of a tool with its own handler comes back to run here
//! as a tokio task (the core's [`Event::Run`](crate::core::session::Event::Run)), the others
//! are answered by the instance's logic through the principal (`deliver.rs`). The core
//! keeps the table of running calls, so `notifications/cancelled` stops one
//! ([`Stopper`]); each task's end is fed back to it, which writes the response with what
//! the call held (§5.3), or nothing for a cancelled call (vector 29).

use super::SessionActor;
use crate::cancel::CancelTrigger;
use crate::tool::{ToolContext, ToolError, ToolResult};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{ErrorObject, Id, Response};
use serde_json::{Map, Value};
use tokio::task::{AbortHandle, JoinError};

/// What stops a running handler call: its cancel token's trigger, then its task.
#[derive(Debug)]
pub(crate) struct Stopper {
    abort: AbortHandle,
    cancel: CancelTrigger,
}

impl Stopper {
    pub(crate) fn stop(self) {
        self.cancel.cancel();
        self.abort.abort();
    }
}

impl SessionActor {
    /// The principal sent a call to the tool's own handler: run it as a task.
    pub(super) fn run_handler(
        &mut self,
        id: Id,
        tool: String,
        arguments: Option<Map<String, Value>>,
        instance: Option<String>,
        meta: Option<mcpl_protocol::meta::Meta>,
        ctx: &mut Context<Self>,
    ) {
        let Some(handler) = self.handlers.get(&tool).cloned() else {
            let e = ErrorObject::internal(format!("no handler for {tool}"));
            return self.write(Response::err(Some(id), e).into());
        };
        let (trigger, token) = CancelTrigger::new();
        let key = self.core.new_key();
        let tool_ctx = ToolContext {
            principal: self.principal.clone(),
            session: self.session_handle(ctx),
            request_id: id.clone(),
            call_key: key,
            meta,
            instance,
            cancel: token,
        };
        let args = Value::Object(arguments.unwrap_or_default());
        tracing::debug!(session = %self.id, %id, %tool, "tool call started");
        // Decoding and the handler both run in the task: a panic in either stays there.
        let task = tokio::spawn(async move { handler.call(tool_ctx, args).await });
        let stopper = Stopper {
            abort: task.abort_handle(),
            cancel: trigger,
        };
        self.core.start(id.clone(), key, stopper);
        ctx.spawn(task.into_actor(self).map(move |joined, act, ctx| {
            act.call_finished(id, key, joined);
            act.drive(ctx);
        }));
    }

    /// A call's task ended: the core writes its response, unless it was cancelled.
    fn call_finished(&mut self, id: Id, key: u64, joined: Result<ToolResult, JoinError>) {
        let result = match joined {
            Ok(result) => result.or_else(ToolError::into_outcome),
            Err(e) if e.is_panic() => {
                let message = panic_message(e.into_panic());
                tracing::error!(session = %self.id, %id, panic = %message, "tool handler panicked");
                Err(ErrorObject::internal("the tool's handler panicked"))
            }
            // Only the runtime shutting down, or a cancel, aborts a call.
            Err(_) => Err(ErrorObject::internal("the tool call was aborted")),
        };
        self.core.call_ended(id, key, result);
    }
}

/// The text of a panic payload (`panic!` gives a `&str` or a `String`).
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map_or_else(|| "a non-string panic".to_owned(), |s| (*s).to_owned()),
    }
}

//! `tools/call` in a session. Every call goes to the principal first, which resolves it
//! (§3, §4.5, §8); a call of a tool with its own handler comes back to run here as a tokio
//! task, the others are answered by the instance's logic through the principal
//! (`deliver.rs`). The actor keeps a table of running handler calls so
//! `notifications/cancelled` can stop one, and writes each response when the task comes
//! back; a cancelled call forwarded to an instance is answered with no response, its
//! changes going as `tools/hints` (§5.2, vector 29).
//!
//! A handler that opened or closed a toolset for its caller, and a deferred instance call
//! whose logic held its changes, get the changes held for them (`core/carrier.rs`) in their
//! result; cancelled, or answered with a JSON-RPC error, they send them as `tools/hints`.

use super::SessionActor;
use crate::actors::principal;
use crate::cancel::CancelTrigger;
use crate::core::session::CallEnd;
use crate::tool::{ToolContext, ToolError, ToolResult};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{ErrorObject, Id, Request, Response};
use mcpl_protocol::mcp::CallToolParams;
use serde_json::{Map, Value};
use tokio::task::{AbortHandle, JoinError};

/// How a call's task ended.
#[derive(Debug)]
pub(crate) enum CallOutcome {
    /// The handler returned.
    Returned(Box<ToolResult>),
    /// The handler panicked; the panic's message, for the log.
    Panicked(String),
    /// The task was aborted before it finished.
    Aborted,
}

/// What stops a running handler call: its cancel token's trigger, then its task.
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
    /// `tools/call`: forwarded to the principal, which resolves it (§3, §4.5, §8). Its
    /// answer comes back as a `Deliver`: a result, or a handler for this session to run.
    pub(super) fn call_tool(&mut self, req: Request) {
        let params = match req.params_as::<CallToolParams>() {
            Ok(p) => p,
            Err(e) => return self.write(Response::err(Some(req.id), e).into()),
        };
        let hinted = self.hinted();
        // §4.5: the instance a host with hints names; a host without names it as an
        // argument instead (§8), which the principal reads.
        let instance = params
            .meta
            .as_ref()
            .and_then(|m| m.instance.clone())
            .filter(|_| hinted);
        self.forward(&req.id);
        self.tell_principal(principal::CallTool {
            session: self.id,
            request: req.id,
            tool: params.name,
            arguments: params.arguments,
            instance,
            plain: !hinted,
            meta: params.meta,
        });
    }

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
        ctx.spawn(
            task.into_actor(self)
                .map(move |joined, act, ctx| act.call_finished(id, key, joined, ctx)),
        );
    }

    /// A call's task ended: writes its response, unless it was cancelled.
    fn call_finished(
        &mut self,
        id: Id,
        key: u64,
        joined: Result<ToolResult, JoinError>,
        ctx: &mut Context<Self>,
    ) {
        let outcome = match joined {
            Ok(result) => CallOutcome::Returned(Box::new(result)),
            Err(e) if e.is_panic() => CallOutcome::Panicked(panic_message(e.into_panic())),
            Err(_) => CallOutcome::Aborted,
        };
        // §5.3: what the handler opened or closed for its caller rides in its result.
        let hinted = self.hinted();
        let CallEnd::Respond(held) = self.core.call_ended(&id, key, hinted) else {
            // MCP: a cancelled call gets no response; what it held went at the cancel, and
            // its requests to the client were abandoned then.
            tracing::debug!(session = %self.id, %id, ?outcome, "cancelled call ended; no response");
            return;
        };
        // Requests to the client it left unanswered (a handler that spawned one) end with it.
        self.abandon_asks(&id, ctx);
        let response = match outcome {
            CallOutcome::Returned(result) => match (*result).or_else(ToolError::into_outcome) {
                Ok(mut result) => {
                    return self.write_with_hints(held, |h| {
                        if let Some(h) = h {
                            result.meta.get_or_insert_with(Default::default).hints = Some(h);
                        }
                        Response::ok_typed(id, &result).into()
                    });
                }
                Err(e) => Response::err(Some(id), e),
            },
            CallOutcome::Panicked(message) => {
                tracing::error!(session = %self.id, %id, panic = %message, "tool handler panicked");
                Response::err(
                    Some(id),
                    ErrorObject::internal("the tool's handler panicked"),
                )
            }
            // Only the runtime shutting down aborts a call that was not cancelled.
            CallOutcome::Aborted => {
                Response::err(Some(id), ErrorObject::internal("the tool call was aborted"))
            }
        };
        // An error carries no `_meta`: the held changes go as `tools/hints` after it.
        self.write(response.into());
        self.write_standalone(held);
    }

    /// `notifications/cancelled` for a request of the host's: a running handler is stopped;
    /// a forwarded request is marked, so its answer is not written (its changes still are,
    /// as `tools/hints`: §5.2, vector 29).
    pub(super) fn cancel_call(&mut self, id: &Id, reason: Option<&str>, ctx: &mut Context<Self>) {
        let hinted = self.hinted();
        let Some((stop, steps)) = self.core.cancel(id, hinted) else {
            tracing::debug!(session = %self.id, %id, "cancellation for no running request; ignored");
            return;
        };
        // Vector 29: no result will carry what the call held; it goes now.
        self.take_steps(steps);
        if let Some(stopper) = stop {
            stopper.stop();
            tracing::debug!(session = %self.id, %id, ?reason, "tool call cancelled");
            self.abandon_asks(id, ctx);
        } else {
            tracing::debug!(session = %self.id, %id, ?reason, "forwarded request cancelled");
        }
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

//! `tools/call` handlers in a session. Every call goes to the principal first, which
//! resolves it (§3, §4.5, §8); a call of a tool with its own handler comes back to run here
//! as a tokio task (the core's [`Event::Run`](crate::core::session::Event::Run)), the others
//! are answered by the instance's logic through the principal (`deliver.rs`). The core
//! keeps the table of running calls, so `notifications/cancelled` stops one
//! (`cancel.rs`'s `Stopper`); each task's end is fed back to it, which writes the response with what
//! the call held (§5.3), or nothing for a cancelled call (vector 29).
//!
//! A handler is polled once in place before it becomes a task: one that answers at once
//! (most do: a lookup, a computation) ends in the same turn, and a call costs no task,
//! no wake-up and no second turn of the actor (issue #18: the one-call latency). A panic
//! in that first poll is caught as a task's would be.

use super::SessionActor;
use crate::cancel::{CancelTrigger, Stopper};
use crate::panics::panic_message;
use crate::tool::{ToolContext, ToolError, ToolResult};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{ErrorObject, Id, Response};
use serde_json::{Map, Value};
use std::panic::{self, AssertUnwindSafe};
use std::task::{Context as TaskContext, Poll, Waker};

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
        let (trigger, token) = CancelTrigger::renew(self.spare_cancel.take());
        let key = self.core.new_key();
        let tool_ctx = ToolContext {
            session: self.session_handle(ctx),
            request_id: id.clone(),
            call_key: key,
            meta,
            instance,
            cancel: token,
        };
        let args = Value::Object(arguments.unwrap_or_default());
        tracing::debug!(session = %self.id, %id, %tool, "tool call started");
        // Decoding and the handler's first poll run here, a panic in either caught (module
        // docs); a handler still pending goes on as a task, where a panic stays.
        let first = panic::catch_unwind(AssertUnwindSafe(|| {
            let mut call = handler.call(tool_ctx, args);
            let polled = call
                .as_mut()
                .poll(&mut TaskContext::from_waker(Waker::noop()));
            (call, polled)
        }));
        let ended = match first {
            // The task's first poll registers its own waker (the no-op one above is never
            // woken), so nothing the handler waits for is missed.
            Ok((call, Poll::Pending)) => Err(call),
            Ok((call, Poll::Ready(result))) => {
                // Dropped now, with the token its context held (`CancelTrigger::recycle`).
                drop(call);
                Ok(Ok(result))
            }
            Err(payload) => Ok(Err(Ended::Panicked(payload))),
        };
        let call = match ended {
            Err(call) => call,
            // Ended in its first poll, within this turn: there is no task to stop, and no
            // cancel can have come between, so the call never enters the table of running
            // calls (two lookups and an entry fewer for every light call; issue #18).
            Ok(ended) => {
                self.spare_cancel = trigger.recycle();
                return self.call_finished(id, None, ended);
            }
        };
        let task = tokio::spawn(call);
        let stopper = Stopper::new(trigger, Some(task.abort_handle()));
        self.core.start(id.clone(), key, stopper);
        ctx.spawn(task.into_actor(self).map(move |joined, act, ctx| {
            let joined = joined.map_err(|e| match e.try_into_panic() {
                Ok(payload) => Ended::Panicked(payload),
                Err(_) => Ended::Aborted,
            });
            act.call_finished(id, Some(key), joined);
            act.drive(ctx);
        }));
    }

    /// A call ended: the core writes its response, unless it was cancelled. `key` is the
    /// running call's, `None` for one that ended in its first poll.
    fn call_finished(&mut self, id: Id, key: Option<u64>, ended: Result<ToolResult, Ended>) {
        let result = match ended {
            Ok(result) => result.or_else(ToolError::into_outcome),
            Err(Ended::Panicked(payload)) => {
                let message = panic_message(payload);
                tracing::error!(session = %self.id, %id, panic = %message, "tool handler panicked");
                Err(ErrorObject::internal("the tool's handler panicked"))
            }
            // Only the runtime shutting down, or a cancel, aborts a call.
            Err(Ended::Aborted) => Err(ErrorObject::internal("the tool call was aborted")),
        };
        match key {
            Some(key) => self.core.call_ended(id, key, result),
            None => self.core.call_ended_at_once(id, result),
        }
    }
}

/// How a handler call ended without a result.
enum Ended {
    /// It panicked, with this payload.
    Panicked(Box<dyn std::any::Any + Send>),
    /// Its task was aborted.
    Aborted,
}

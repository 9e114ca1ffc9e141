//! What a tool handler asks of its caller's toolsets (`tool/toolsets.rs`): the session
//! passes it to its principal and hands the outcome back to the handler.
//!
//! An open or a close goes through the principal exactly like the host's own request,
//! with `Via::Handler(token)`: its answer comes back here in a `Deliver`, in the
//! principal's order, and the changes it carries are **held** for the handler's result
//! (`server-core/src/carrier.rs`) while that call still runs. Listing and declining invitations change
//! nothing on this connection; the principal answers the handler directly.

use super::SessionActor;
use crate::actors::principal::{self, HandlerAnswer, ReplyTo, Via};
use crate::tool::{CloseToolsetError, DeclineError, Invitation, OpenToolsetError, Opened};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::Id;
use mcpl_protocol::mcp::ContentBlock;
use serde_json::Value;
use std::collections::HashMap;
use tokio::sync::oneshot;

/// A tool handler's request, from its [`ToolContext`](crate::ToolContext).
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

impl Message for ForHandler {
    type Result = ();
}

/// Where an answer goes back to a handler.
#[derive(Debug)]
enum Waiting {
    Open(oneshot::Sender<Result<Opened, OpenToolsetError>>),
    Close(oneshot::Sender<Result<Vec<ContentBlock>, CloseToolsetError>>),
}

/// A handler's open or close, forwarded and not answered yet.
#[derive(Debug)]
struct Op {
    call: Id,
    key: u64,
    waiting: Waiting,
}

/// The handlers' opens and closes in flight, by token.
#[derive(Debug, Default)]
pub(crate) struct HandlerOps {
    next: u64,
    ops: HashMap<u64, Op>,
}

impl HandlerOps {
    fn insert(&mut self, call: Id, key: u64, waiting: Waiting) -> u64 {
        self.next += 1;
        self.ops.insert(self.next, Op { call, key, waiting });
        self.next
    }
}

impl Handler<ForHandler> for SessionActor {
    type Result = ();

    fn handle(&mut self, m: ForHandler, _: &mut Context<Self>) {
        match m {
            ForHandler::Open {
                call,
                key,
                toolset,
                instance,
                options,
                reply,
            } => {
                let token = self
                    .handler_ops
                    .insert(call.clone(), key, Waiting::Open(reply));
                self.tell_principal(principal::OpenToolset {
                    reply: self.for_handler(call, token),
                    toolset,
                    instance,
                    options,
                });
            }
            ForHandler::Close {
                call,
                key,
                toolset,
                instance,
                reply,
            } => {
                let token = self
                    .handler_ops
                    .insert(call.clone(), key, Waiting::Close(reply));
                self.tell_principal(principal::CloseToolset {
                    reply: self.for_handler(call, token),
                    toolset,
                    instance,
                    retried: false,
                });
            }
            ForHandler::Invitations { reply } => {
                self.tell_principal(principal::ListInvitations { reply });
            }
            ForHandler::Decline {
                toolset,
                instance,
                reply,
            } => self.tell_principal(principal::DeclineInvitation {
                toolset,
                instance,
                reply,
            }),
        }
    }
}

impl SessionActor {
    fn for_handler(&self, call: Id, token: u64) -> ReplyTo {
        ReplyTo {
            session: self.id,
            request: call,
            via: Via::Handler(token),
        }
    }

    /// A handler's open or close was answered: the outcome goes to the handler. Returns
    /// the call the handler serves and whether it still runs (its result then carries the
    /// changes, §5.3: `core::Carriers` holds them); none for no such request.
    pub(super) fn handler_answered(
        &mut self,
        token: u64,
        answer: HandlerAnswer,
    ) -> Option<(Id, bool)> {
        let Some(op) = self.handler_ops.ops.remove(&token) else {
            tracing::warn!(session = %self.id, token, "an answer for no handler request; dropped");
            return None;
        };
        let running = self.core.is_running(&op.call, op.key);
        // The handler may have stopped waiting (its call cancelled); nothing to do then.
        match (op.waiting, answer) {
            (Waiting::Open(tx), HandlerAnswer::Open(outcome)) => {
                let _ = tx.send(outcome);
            }
            (Waiting::Close(tx), HandlerAnswer::Close(outcome)) => {
                let _ = tx.send(outcome);
            }
            (waiting, answer) => {
                tracing::error!(session = %self.id, ?waiting, ?answer, "a handler's answer of the wrong kind; dropped");
            }
        }
        Some((op.call, running))
    }
}

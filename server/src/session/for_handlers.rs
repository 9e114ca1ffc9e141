//! What a tool handler asks of its caller's toolsets (`tool/toolsets.rs`): the session
//! passes it to its principal and hands the outcome back to the handler.
//!
//! An open or a close goes through the principal exactly like the host's own request,
//! with `Via::Handler(token)`: its answer comes back here in a `Deliver`, in the
//! principal's order, and the changes it carries are **held** for the handler's result
//! (`server-core/src/carrier.rs`) while that call still runs. Listing and declining invitations change
//! nothing on this connection; the principal answers the handler directly.

use super::SessionActor;
use super::handler_ops::Waiting;
use crate::actors::principal::{self, HandlerAnswer, ReplyTo, Via};
use crate::session_port::ForHandler;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::Id;

/// A handler's request is passed on and answered through its own reply channel.
impl Message for ForHandler {
    type Result = ();
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
        let Some(op) = self.handler_ops.remove(token) else {
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

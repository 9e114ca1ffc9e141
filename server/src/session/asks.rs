//! A handler's requests to the client (MCP 2025-11-25, "Client Features"):
//! `sampling/createMessage`, `elicitation/create` and `roots/list`, from `tool/ask.rs` —
//! a tool handler's, or a resource or prompt handler's (`features.rs`'s `RequestContext`).
//!
//! The session checks what MCP requires before anything is written — the client declared
//! the capability in `initialize`, and the call asking is still running (a server asks
//! only while it serves one of the client's requests) — then writes the request through
//! the single write path, related to the call (`Outbound::relate`: on Streamable HTTP it
//! rides the call's answer), with the server's ask timeout.
//!
//! **A modern request** (MCP 2026-07-28) is never sent a request: one that did not declare
//! the capability is answered -32021 at once and its handler stopped (MCP `basic/index.md`);
//! one that did gets the answer its retry carried, or is answered with an
//! `InputRequiredResult` asking the question and its handler stopped (MRTR, `mrtr.rs`).
//!
//! **When the call ends first** (answered, or cancelled by the host) its requests are
//! abandoned: each is dropped from the table and the host is sent `notifications/cancelled`
//! for it (MCP "Cancellation": either side may cancel a request it sent), so a client
//! does not keep a person answering a form nobody waits for. A request asks nothing of
//! the connection's revs: it carries no hint changes (§5.2).

use super::SessionActor;
use super::outgoing::Reply;
use crate::client_ask::{AskError, Needs};
use crate::mrtr::{Asked, Batch, Question};
use crate::session_port::{Ask, AskAll};
use actix::prelude::*;
use mcpl_protocol::client_features::{
    ELICITATION_CAPABILITY, ROOTS_CAPABILITY, SAMPLING_CAPABILITY,
};
use mcpl_protocol::jsonrpc::{Id, Notification, Request};
use mcpl_protocol::mcp::{CancelledParams, ClientCapabilities};
use mcpl_protocol::method::Cancelled;
use tokio::sync::oneshot;

/// How `needs` is declared, and its name.
fn needs_of(needs: Needs) -> (fn(&ClientCapabilities) -> bool, &'static str) {
    match needs {
        Needs::Sampling => (ClientCapabilities::supports_sampling, SAMPLING_CAPABILITY),
        Needs::Elicitation => (
            ClientCapabilities::supports_elicitation,
            ELICITATION_CAPABILITY,
        ),
        Needs::Roots => (ClientCapabilities::supports_roots, ROOTS_CAPABILITY),
    }
}

impl Message for AskAll {
    /// `Some(answers)` in order for a modern call that carried them all; `None` for a
    /// legacy connection, whose client is asked one question at a time.
    type Result = Result<Option<Vec<Box<mcpl_protocol::jsonrpc::RawValue>>>, AskError>;
}

impl Handler<AskAll> for SessionActor {
    type Result = Result<Option<Vec<Box<mcpl_protocol::jsonrpc::RawValue>>>, AskError>;

    fn handle(&mut self, all: AskAll, ctx: &mut Context<Self>) -> Self::Result {
        let Some(declared) = self.core.modern_capabilities(&all.call).cloned() else {
            return Ok(None);
        };
        for (needs, ..) in &all.questions {
            let (supports, capability) = needs_of(*needs);
            if !supports(&declared) {
                tracing::debug!(session = %self.id, call = %all.call, capability, "a modern call needs a capability it did not declare: -32021");
                self.core.modern_missing_capability(&all.call, capability);
                self.drive(ctx);
                return Err(AskError::CallEnded);
            }
        }
        if !self.core.is_running(&all.call, all.key) {
            return Err(AskError::CallEnded);
        }
        let now = self.shared.clock.now();
        let key = &self.shared.state_key;
        let Some(input) = self.core.modern_input(&all.call) else {
            return Err(AskError::CallEnded);
        };
        let asked: Vec<Asked<'_>> = all
            .questions
            .iter()
            .map(|(_, method, params, chosen)| Asked {
                chosen: Some(chosen.as_str()),
                method,
                params,
            })
            .collect();
        match input.questions(&asked, key, now) {
            Batch::Answered(answers) => Ok(Some(answers)),
            Batch::Ask(result) => {
                tracing::debug!(session = %self.id, call = %all.call, questions = all.questions.len(), "a modern call's questions sent in an InputRequiredResult");
                self.core.modern_input_required(&all.call, result);
                self.drive(ctx);
                let capability = all
                    .questions
                    .first()
                    .map_or(ELICITATION_CAPABILITY, |(needs, ..)| needs_of(*needs).1);
                Err(AskError::InputRequired { capability })
            }
            Batch::Limit(why) => Err(AskError::Limit(why)),
        }
    }
}

/// What the client declared for a handler's call: a modern call's own
/// `clientCapabilities`, else the connection's from `initialize`; `None` once the call is
/// over or before `initialize`.
#[derive(Debug)]
pub(crate) struct Declared {
    pub(crate) call: Id,
}

impl Message for Declared {
    type Result = Option<ClientCapabilities>;
}

impl Handler<Declared> for SessionActor {
    type Result = Option<ClientCapabilities>;

    fn handle(&mut self, d: Declared, _: &mut Context<Self>) -> Self::Result {
        if let Some(modern) = self.core.modern_capabilities(&d.call) {
            return Some(modern.clone());
        }
        self.core
            .lifecycle()
            .negotiated()
            .map(|n| n.capabilities.clone())
    }
}

impl Message for Ask {
    type Result = Result<oneshot::Receiver<Reply>, AskError>;
}

impl Handler<Ask> for SessionActor {
    type Result = Result<oneshot::Receiver<Reply>, AskError>;

    fn handle(&mut self, ask: Ask, ctx: &mut Context<Self>) -> Self::Result {
        let (supports, capability) = needs_of(ask.needs);
        // MCP 2026-07-28: a modern request's own capabilities decide; it is never sent a
        // request of the server's: its question travels in an `InputRequiredResult`, or
        // its retry carried the answer (MRTR, `mrtr.rs`).
        if let Some(declared) = self.core.modern_capabilities(&ask.call).map(supports) {
            if !declared {
                tracing::debug!(session = %self.id, call = %ask.call, capability, "a modern call needs a capability it did not declare: -32021");
                self.core.modern_missing_capability(&ask.call, capability);
                self.drive(ctx);
                return Err(AskError::CallEnded);
            }
            if !self.asking(&ask.call, ask.key) {
                return Err(AskError::CallEnded);
            }
            let now = self.shared.clock.now();
            let key = &self.shared.state_key;
            let Some(input) = self.core.modern_input(&ask.call) else {
                return Err(AskError::CallEnded);
            };
            match input.question(ask.input_key.as_deref(), ask.method, &ask.params, key, now) {
                Question::Answered(answer) => {
                    tracing::debug!(session = %self.id, call = %ask.call, method = ask.method, "a modern call's question answered by its retry");
                    let (tx, rx) = oneshot::channel();
                    // The receiver is returned below, so the send cannot fail.
                    let _ = tx.send(Ok(Ok(answer)));
                    return Ok(rx);
                }
                Question::Ask(result) => {
                    tracing::debug!(session = %self.id, call = %ask.call, method = ask.method, "a modern call's question sent in an InputRequiredResult");
                    self.core.modern_input_required(&ask.call, result);
                    self.drive(ctx);
                    return Err(AskError::InputRequired { capability });
                }
                Question::Limit(why) => return Err(AskError::Limit(why)),
            }
        }
        let capabilities = self.core.lifecycle().negotiated().map(|n| &n.capabilities);
        let declared = capabilities.is_some_and(supports);
        if !declared {
            return Err(AskError::NotSupported { capability });
        }
        if !self.asking(&ask.call, ask.key) {
            return Err(AskError::CallEnded);
        }
        if self.writer.is_none() {
            return Err(AskError::Closed);
        }
        let timeout = self.shared.ask_timeout;
        let (id, answer) = self
            .outgoing
            .register_serving(ask.method, Some(ask.call.clone()));
        let timer = ctx.run_later(timeout, {
            let id = id.clone();
            move |act, _| {
                if act.outgoing.expire(&id) {
                    tracing::warn!(session = %act.id, %id, "request to the client timed out");
                    act.tell_cancelled(id, "timed out");
                }
            }
        });
        self.outgoing.set_timer(&id, timer);
        tracing::debug!(session = %self.id, %id, method = ask.method, call = %ask.call, "request to the client sent");
        let message = Request {
            id: id.clone(),
            method: ask.method.to_owned(),
            params: Some(ask.params),
        };
        self.enqueue(|w| {
            w.with_sink(|out| out.relate(id, ask.call));
            w.enqueue(message.into())
        });
        Ok(answer)
    }
}

impl SessionActor {
    /// Whether the request `call` that asks still waits for its answer: a tool call by its
    /// key, a resource or prompt request (no key) while its handler runs.
    fn asking(&self, call: &Id, key: Option<u64>) -> bool {
        match key {
            Some(key) => self.core.is_running(call, key),
            None => self.core.serving_feature(call),
        }
    }

    /// The host request `call` ended: the requests to the client that served it are
    /// abandoned, and the client is told each is cancelled (module docs).
    pub(super) fn abandon_asks(&mut self, call: &Id, ctx: &mut Context<Self>) {
        for (id, timer) in self.outgoing.abandon_serving(call) {
            if let Some(timer) = timer {
                ctx.cancel_future(timer);
            }
            tracing::debug!(session = %self.id, %id, %call, "request to the client abandoned with its call");
            self.tell_cancelled(id, "the request it served has ended");
        }
    }

    /// `notifications/cancelled` for a request of ours the session stopped waiting for.
    fn tell_cancelled(&mut self, id: Id, reason: &str) {
        let params = CancelledParams {
            request_id: id,
            reason: Some(reason.to_owned()),
            meta: None,
        };
        self.write(Notification::new::<Cancelled>(&params).into());
    }
}

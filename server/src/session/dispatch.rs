//! Reading: each inbound item is fed to the core (`server-core/src/session/inbound.rs` routes it and
//! holds the rules for what a peer's bad input gets), and what it asks for is drained.
//! The host's responses to the session's own requests come back here from the core, to
//! the outgoing table that awaits them.

use super::{ActorIo, SessionActor};
use crate::actors::principal::AnswerBody;
use crate::core::dispatch::Route;
use crate::core::session::Event;
use crate::core::session::{MAX_LISTENS, too_many_listens};
use crate::mrtr::{Bound, Carried};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{ECHO_LIMIT, Message, Request, Response, clip};
use mcpl_transport::{Inbound, Principal};

/// Whether `req` is one of the requests MRTR serves (MCP 2026-07-28
/// `basic/patterns/mrtr.md`; `tasks/result` is the tasks extension's, which this SDK does
/// not serve), by the core's route table.
fn mrtr(req: &Request) -> bool {
    matches!(
        Route::of(&req.method),
        Some(Route::CallTool | Route::GetPrompt | Route::ReadResource)
    )
}

impl SessionActor {
    pub(super) fn on_inbound(&mut self, item: Inbound, ctx: &mut Context<Self>) {
        if let Some(why) = &self.unavailable {
            return self.refuse(item, why.clone(), ctx);
        }
        self.refresh_manifest();
        match item {
            Inbound::Message {
                message: Message::Request(req),
                ..
            } if mrtr(&req) => match self.core.modern_served(&req) {
                Some(meta) => self.read_modern_call(req, meta),
                None => self.core.handle_message(Message::Request(req)),
            },
            Inbound::Message {
                message: Message::Request(req),
                ..
            } if Route::of(&req.method) == Some(Route::Listen) && self.core.serves_modern(&req) => {
                self.read_listen(req)
            }
            Inbound::Message { message, .. } => self.core.handle_message(message),
            Inbound::Malformed { error, .. } => self.core.handle_malformed(&error),
            Inbound::TooLarge { size, limit, .. } => self.core.handle_too_large(size, limit),
        }
        self.drive(ctx);
    }

    /// The principal's record could not be read (issue #41): a request is answered with
    /// a retryable error saying so, having done nothing, and the link is closed — a host
    /// connecting again has the record read again **\[project\]**; anything else is
    /// dropped.
    fn refuse(&mut self, item: Inbound, why: String, ctx: &mut Context<Self>) {
        let Inbound::Message {
            message: Message::Request(req),
            ..
        } = item
        else {
            return;
        };
        let error = mcpl_protocol::jsonrpc::ErrorObject::new(
            mcpl_protocol::jsonrpc::ErrorCode::INTERNAL_ERROR,
            format!(
                "Not served: the server could not read {}'s state from its store ({why}). \
                 Nothing was done; try again.",
                self.principal.name()
            ),
        )
        .with_data(serde_json::json!({"retryable": true, "ran": false}));
        self.write(Response::err(Some(req.id), error).into());
        ctx.stop();
    }

    /// A modern request MRTR serves (`tools/call`, `prompts/get`, `resources/read`), its
    /// `_meta` read (`meta`): what its params carry for its handler's questions read and
    /// checked first (`mrtr.rs`), bound to what it names (a tool or prompt and its
    /// arguments, a resource's URI) — the binding made only when a state is opened or
    /// sealed, which most calls never do ([`Bound::later`]) — then the request served.
    fn read_modern_call(&mut self, req: Request, meta: mcpl_protocol::modern::RequestMeta) {
        let principal = match &self.principal {
            Principal::Named(name) => Some(name.clone()),
            Principal::Anonymous(_) => None,
        };
        let read_resource = Route::of(&req.method) == Some(Route::ReadResource);
        let binding = Bound::later(&req.method, read_resource, req.params.clone(), principal);
        let now = self.shared.clock.now();
        match Carried::read(req.params.as_deref(), binding, &self.shared.state_key, now) {
            Ok(input) => self.core.handle_modern_call(req, meta, input),
            Err(e) => {
                tracing::debug!(session = %self.id, id = %req.id, error = %e.message, "a modern call's requestState or inputResponses refused");
                self.core.refuse(req.id, e)
            }
        }
    }

    /// A modern `subscriptions/listen`: it takes a place among its principal's streams
    /// ([`MAX_LISTENS`]; -32600 past it), held while the stream is open, then
    /// is read as any other request (`server-core/src/session/listen.rs`).
    fn read_listen(&mut self, req: Request) {
        let principal = self.principal.name();
        let Some(slot) = self.shared.listen_slots.take(&principal, MAX_LISTENS) else {
            tracing::debug!(session = %self.id, %principal, "subscriptions/listen past the principal's bound");
            return self.core.refuse(req.id, too_many_listens(MAX_LISTENS));
        };
        let id = req.id.clone();
        self.core.handle_message(Message::Request(req));
        if self.core.is_listening(&id) && !self.listen_slots.contains_key(&id) {
            self.listen_slots.insert(id, slot);
        }
    }

    /// The host's response to one of the session's requests.
    pub(super) fn on_response(&mut self, r: Response, ctx: &mut Context<Self>) {
        let Some(id) = r.id else {
            let outcome = clip(&format!("{:?}", r.outcome), ECHO_LIMIT).into_owned();
            mcpl_transport::warn_limited!(self.peer_warnings, session = %self.id, %outcome, "host sent an error about an unreadable message");
            return;
        };
        match self.outgoing.resolve(&id, r.outcome) {
            Some((method, timer)) => {
                tracing::debug!(session = %self.id, %id, method, "response matched");
                if let Some(timer) = timer {
                    ctx.cancel_future(timer);
                }
            }
            None => {
                let id = clip(&id.to_string(), ECHO_LIMIT).into_owned();
                mcpl_transport::warn_limited!(self.peer_warnings, session = %self.id, %id, "response to no pending request; ignored")
            }
        }
    }
}

impl SessionActor {
    /// Does what the core asks besides writing.
    pub(super) fn act(&mut self, e: Event<ActorIo>, ctx: &mut Context<Self>) {
        match e {
            Event::Forward(f) => self.forward(f),
            Event::Run { request, answer } => match answer {
                AnswerBody::RunHandler {
                    tool,
                    arguments,
                    instance,
                    meta,
                    ..
                } => self.run_handler(request, tool, arguments, instance, meta, ctx),
                other => {
                    tracing::error!(session = %self.id, %request, answer = ?other, "not a handler to run; dropped")
                }
            },
            Event::RunDirect {
                request,
                tool,
                arguments,
                meta,
            } => self.run_handler(request, tool, arguments, None, meta, ctx),
            Event::Stop { request, stop } => {
                stop.stop();
                self.abandon_asks(&request, ctx);
            }
            Event::Ended(call) => self.abandon_asks(&call, ctx),
            Event::ListenEnded(id) => {
                self.listen_slots.remove(&id);
                if self.oneshot {
                    // A detached listen was this session's one request (`detached.rs`).
                    ctx.stop();
                }
            }
            Event::Watch(uri) => self.watch(uri, ctx),
            Event::Unwatch(uri) => {
                self.watching.remove(&uri);
            }
            Event::Response(r) => self.on_response(r, ctx),
            Event::Detach(request) => self.detach(request, ctx),
            Event::Serve { request, feature } => self.serve_feature(request, feature, ctx),
            Event::CancelDetached { request, reason } => self.cancel_detached(request, reason),
        }
    }
}

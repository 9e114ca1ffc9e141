//! Modern requests served on a connection of their own (MCP 2026-07-28, **\[project\]**,
//! `server-core/src/session/modern.rs`): a request no credential authenticated, on a connection that
//! is not one request long (an anonymous WebSocket), gets a session of its own under a
//! fresh anonymous principal, over an in-memory link. What that session writes is written
//! here, through this connection's one write path (modern answers take no rev); its answer
//! ends it, and so does this connection's end (its running call is cancelled with it). A
//! `notifications/cancelled` for the request is passed to it.

use super::{Parts, SessionActor};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{Id, Message, Notification, Request};
use mcpl_protocol::mcp::CancelledParams;
use mcpl_protocol::method::Cancelled;
use mcpl_transport::{Connection, ConnectionInfo, Inbound, Outbound, Principal, StreamId};
use tokio::sync::mpsc;

/// How many messages a detached request's session may have written and this connection
/// not yet taken; the same bound as any transport's queue.
const DEPTH: usize = 1024;

/// What a detached request's session wrote (`None`: it ended).
#[derive(Debug)]
pub(crate) struct FromDetached {
    request: Id,
    message: Option<Message>,
}

impl actix::Message for FromDetached {
    type Result = ();
}

impl SessionActor {
    /// Serves `request` on a session of its own (module docs).
    pub(super) fn detach(&mut self, request: Request, ctx: &mut Context<Self>) {
        let id = request.id.clone();
        let (in_tx, in_rx) = mpsc::channel(8);
        let (out_tx, out_rx) = mpsc::channel(DEPTH);
        let principal = Principal::anonymous();
        let conn = Connection {
            info: ConnectionInfo {
                kind: self.info.kind,
                ordered: true,
                principal: Some(principal.clone()),
                peer: format!("{} modern request {id}", self.info.peer),
            },
            outbound: Outbound::new(out_tx),
            inbound: in_rx.into(),
        };
        let parts = Parts {
            shared: self.shared.clone(),
            handlers: self.handlers.clone(),
            registry: self.registry.clone(),
        };
        let session = self.shared.next_session_id();
        tracing::debug!(session = %self.id, detached = %session, %id, principal = %principal.name(), "a modern request served on a session of its own");
        let mut served = SessionActor::new(parts, conn, session, principal);
        served.oneshot = true;
        served.start();
        let first = Inbound::Message {
            stream: StreamId(0),
            message: request.into(),
        };
        if in_tx.try_send(first).is_err() {
            self.core.detached_ended(&id);
            return;
        }
        self.detached.insert(id.clone(), in_tx);
        let written = futures_util::stream::unfold(Some(out_rx), move |rx| {
            let id = id.clone();
            async move {
                let mut rx = rx?;
                match rx.recv().await {
                    Some(m) => Some((
                        FromDetached {
                            request: id,
                            message: Some(m),
                        },
                        Some(rx),
                    )),
                    None => Some((
                        FromDetached {
                            request: id,
                            message: None,
                        },
                        None,
                    )),
                }
            }
        });
        ctx.add_message_stream(written);
    }

    /// Passes the host's cancel of a detached request to its session.
    pub(super) fn cancel_detached(&mut self, request: Id, reason: Option<String>) {
        let Some(tx) = self.detached.get(&request) else {
            return;
        };
        let params = CancelledParams {
            request_id: request,
            reason,
            meta: None,
        };
        let cancel = Inbound::Message {
            stream: StreamId(0),
            message: Notification::new::<Cancelled>(&params).into(),
        };
        if tx.try_send(cancel).is_err() {
            tracing::debug!(session = %self.id, "a detached request's session took no cancel");
        }
    }
}

impl Handler<FromDetached> for SessionActor {
    type Result = ();

    fn handle(&mut self, m: FromDetached, ctx: &mut Context<Self>) {
        let answered = match &m.message {
            Some(Message::Response(r)) => r.id.as_ref() == Some(&m.request),
            Some(_) => false,
            None => true,
        };
        if let Some(message) = m.message {
            self.write(message);
        }
        if answered {
            // Its inbound closes: the session ends.
            self.detached.remove(&m.request);
            self.core.detached_ended(&m.request);
        }
        self.drive(ctx);
    }
}

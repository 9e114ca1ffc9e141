//! The session: one actix actor per connection, driving the pure `SessionCore`
//! (`server-core/src/session.rs`).
//!
//! It consumes the connection's reading end (`Incoming`) as an actix stream, one item at a time,
//! feeds each to the core, and drains what the core asks for (`SessionCore::poll`):
//! messages to write,
//! through the connection's write path with its rev counter ([`RevWriter`]), and things to
//! do — tell the principal, run a tool handler as a task, stop one, answer a requester.
//! The protocol's rules (the lifecycle, routing, the host's requests in flight, the carrier
//! choice) are the core's; the actor owns the I/O: the writer, the tasks, its own requests
//! to the host with their timers, and the principal's address. Server code talks to it
//! through a [`SessionHandle`].
//!
//! | file | what |
//! |---|---|
//! | `write.rs` | the one write path: the core's output drained in order, each message written with its rev in one step |
//! | `rev_writer.rs` | [`rev_writer::RevWriter`]: a rev taken and its message queued in one step (§5.2) |
//! | `dispatch.rs` | reading: inbound items fed to the core; the host's responses to the session's requests |
//! | `toolsets.rs` | the principal's answers to `tools/list` and `toolsets/list`, fed to the core |
//! | `calls.rs` | `tools/call` handlers run as tokio tasks, their ends fed to the core, cancelled ones stopped |
//! | `deliver.rs` | what the principal sends, fed to the core; answers and pushes written as it says (§5.2, §5.3) |
//! | `features.rs` | resource, prompt and completion handlers run as tokio tasks, their answers fed to the core; the resources the session watches, and their changes fed to the core |
//! | `for_handlers.rs` | a tool handler's opens, closes and declines for its caller (`session_port.rs`'s `ForHandler`) |
//! | `detached.rs` | a modern request no credential authenticated, served on a session of its own under a fresh anonymous principal |
//! | `asks.rs` | a tool handler's `sampling/createMessage` and `elicitation/create` for the client |
//! | `handler_ops.rs` | the table of a tool handler's opens and closes awaiting the principal, by token |
//! | `notices.rs` | a handler's `notifications/progress` and `notifications/message` |
//! | `outgoing.rs` | the table of the session's requests to the host |
//! | `handle.rs` | the session's side of its [`SessionHandle`] (`session_port.rs`): the port implemented on the actor's address, and the messages only the handle sends: push, status, close |
//!
//! **One writer** (§5.2). Every message to the host goes through `SessionActor::enqueue`,
//! in the order the core queued them, straight into the transport's bounded queue,
//! through the connection's [`RevWriter`]: it takes a rev and enqueues its message under
//! one lock, so no hint-carrying message can come between a rev and its write even were
//! several threads to write (model-checked in `tests/loom_rev_queue.rs`). Changes held for
//! a call's result are queued by the core before any later hint-carrying message.
//!
//! **Backpressure.** The transport's outbound queue is bounded (1024 messages for every
//! transport here). A host that stops reading fills it; the session then cannot write
//! without losing order (and revs), so it closes the link rather than buffer without
//! bound. Requests a host sends are answered in that same queue, so a host that reads
//! nothing cannot make the server hold more than the queue.

mod asks;
mod calls;
mod deliver;
mod detached;
mod dispatch;
mod features;
mod for_handlers;
mod handle;
mod handler_ops;
mod notices;
mod outgoing;
pub mod rev_writer;
mod toolsets;
mod write;

pub use crate::core::lifecycle::{HostFeatures, LifecycleError, Negotiated, Phase};
pub use crate::ids::SessionId;
pub use crate::session_port::{SessionClosed, SessionHandle, SessionStatus};

use crate::actors::principal::{self, AnswerBody, PrincipalActor};
use crate::actors::registry::{AttachError, AttachSession, DetachSession, Registry};
use crate::author::Event;
use crate::cancel::Stopper;
use crate::core::InstanceKey;
use crate::core::session::{Io, SessionCore};
use crate::shared::Shared;
use crate::tool::Handlers;
use actix::prelude::*;
use handler_ops::HandlerOps;
use mcpl_transport::{Connection, ConnectionInfo, Inbound, Outbound, Principal};
use outgoing::Outgoing;
use rev_writer::RevWriter;
use std::sync::Arc;

/// What a session is made of besides its connection (given by the `Server`).
pub(crate) struct Parts {
    pub(crate) shared: Arc<Shared>,
    pub(crate) handlers: Arc<Handlers>,
    pub(crate) registry: Addr<Registry>,
}

/// The actor's types the core carries without looking inside.
#[derive(Debug)]
pub(crate) struct ActorIo;

/// An event of a delivery, with the instance it is about.
#[derive(Debug, Clone)]
pub(crate) struct ToPush {
    pub(crate) event: Event,
    pub(crate) about: Option<InstanceKey>,
}

impl Io for ActorIo {
    type Stop = Stopper;
    type Answer = AnswerBody;
    type Event = ToPush;
}

/// One connection's session. Created by [`Server::serve`](crate::Server::serve); see the
/// module docs.
pub(crate) struct SessionActor {
    id: SessionId,
    shared: Arc<Shared>,
    handlers: Arc<Handlers>,
    registry: Addr<Registry>,
    principal: Principal,
    info: ConnectionInfo,
    /// Taken when the actor starts (it becomes the actor's stream).
    inbound: Option<mcpl_transport::Incoming>,
    /// §5.2: the transport's writer with this connection's revs; `None` once the session
    /// gave up writing (backpressure, or the link closed).
    writer: Option<RevWriter<Outbound>>,
    /// This session's principal; set when the actor starts.
    principal_addr: Option<Addr<PrincipalActor>>,
    /// Tool handlers' opens and closes awaiting the principal.
    handler_ops: HandlerOps,
    /// The protocol's rules for this connection (module docs).
    core: SessionCore<ActorIo>,
    /// The manifest generation the core last got (`Shared::manifest_since`).
    manifest_seen: u64,
    outgoing: Outgoing<SpawnHandle>,
    /// This session's handle, made once when it starts (`session_handle`): each tool call
    /// is given a clone.
    handle: Option<SessionHandle>,
    /// Warnings about what the host sends, at most a few per interval (a flood costs a
    /// line and a count).
    peer_warnings: mcpl_transport::LogLimiter,
    /// Modern requests served on sessions of their own, by id: each one's inbound
    /// (`detached.rs`).
    detached: std::collections::HashMap<
        mcpl_protocol::jsonrpc::Id,
        tokio::sync::mpsc::Sender<mcpl_transport::Inbound>,
    >,
    /// This session serves one detached request (`detached.rs`): it serves it itself.
    oneshot: bool,
    /// Each open `subscriptions/listen` stream's place among its principal's
    /// (`dispatch.rs`).
    listen_slots: std::collections::HashMap<mcpl_protocol::jsonrpc::Id, crate::shared::ListenSlot>,
    /// The resources this session watches, each with its place in the server's index
    /// (`features.rs`): dropped with the actor, so an ended session is told nothing.
    watching: std::collections::HashMap<String, crate::watchers::Watch>,
    /// Its principal's record could not be read from the store (issue #41): why. Every
    /// request is refused, retryable, and the link closed (`dispatch.rs`).
    unavailable: Option<String>,
    /// The cancel trigger of the last call that ended at once, for the next call
    /// (`calls.rs`, `CancelTrigger::recycle`).
    spare_cancel: Option<crate::cancel::CancelTrigger>,
}

impl SessionActor {
    pub(crate) fn new(parts: Parts, conn: Connection, id: SessionId, principal: Principal) -> Self {
        // The generation first: a replacement between the two reads is picked up later.
        let manifest_seen = parts.shared.manifest_generation();
        let core = SessionCore::new(
            parts.shared.profile.clone(),
            parts.shared.manifest_views(),
            parts.shared.catalog(),
        );
        SessionActor {
            id,
            shared: parts.shared,
            handlers: parts.handlers,
            registry: parts.registry,
            principal,
            info: conn.info,
            inbound: Some(conn.inbound),
            writer: Some(RevWriter::new(conn.outbound)),
            principal_addr: None,
            handler_ops: HandlerOps::default(),
            core,
            manifest_seen,
            outgoing: Outgoing::default(),
            handle: None,
            peer_warnings: mcpl_transport::LogLimiter::per_peer(),
            detached: std::collections::HashMap::new(),
            oneshot: false,
            listen_slots: std::collections::HashMap::new(),
            watching: std::collections::HashMap::new(),
            unavailable: None,
            spare_cancel: None,
        }
    }

    /// A handle to this session: the one it keeps, made on first use.
    fn session_handle(&mut self, ctx: &Context<Self>) -> SessionHandle {
        self.handle
            .get_or_insert_with(|| {
                SessionHandle::new(ctx.address(), self.id, self.principal.clone())
            })
            .clone()
    }

    /// Sends a message to this session's principal.
    fn tell_principal<M>(&self, m: M)
    where
        M: actix::Message<Result = ()> + Send + 'static,
        PrincipalActor: Handler<M>,
    {
        if let Some(p) = &self.principal_addr {
            p.do_send(m);
        }
    }

    /// The core reads the server's manifest as it is now (a replacement may have come).
    fn refresh_manifest(&mut self) {
        if let Some((generation, manifest)) = self.shared.manifest_since(self.manifest_seen) {
            self.manifest_seen = generation;
            self.core.set_manifest(manifest);
        }
    }
}

impl Actor for SessionActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        tracing::debug!(session = %self.id, peer = %self.info.peer, kind = ?self.info.kind, principal = %self.principal.name(), "session started");
        // MCP 2026-07-28 **[project]** (`server-core/src/session/modern.rs`): a request no credential
        // authenticated keeps no state. A Streamable HTTP connection without a session is
        // one modern request long already; any other anonymous connection hands each
        // modern request to a session of its own.
        if matches!(self.principal, Principal::Anonymous(_))
            && self.info.kind != mcpl_transport::TransportKind::StreamableHttp
            && !self.oneshot
        {
            self.core.detach_modern_requests();
        }
        // Only a named principal's modern requests may be hinted (issue #40, profile §3.6).
        self.core
            .set_principal_named(!matches!(self.principal, Principal::Anonymous(_)));
        self.session_handle(ctx);
        // Nothing is read from the host until the principal's actor is known (§4.6).
        let attach = AttachSession {
            principal: self.principal.clone(),
            id: self.id,
            to: principal::SessionAddr::new(ctx.address().recipient()),
            arbiter: Arbiter::current(),
        };
        ctx.wait(self.registry.send(attach).into_actor(self).map(
            |answer, act, ctx| match answer {
                Ok(Ok(addr)) => act.principal_addr = Some(addr),
                Ok(Err(AttachError::Unreadable(why))) => {
                    tracing::warn!(session = %act.id, error = %why, "the principal's record cannot be read; refusing the session's requests");
                    act.unavailable = Some(why);
                }
                _ => {
                    tracing::warn!(session = %act.id, "the server's registry is gone");
                    ctx.stop();
                }
            },
        ));
        if let Some(inbound) = self.inbound.take() {
            ctx.add_stream(inbound);
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        for stopper in self.core.stop_all() {
            stopper.stop();
        }
        self.outgoing.close_all();
        self.registry.do_send(DetachSession {
            principal: self.principal.clone(),
            id: self.id,
        });
        tracing::debug!(session = %self.id, "session stopped");
    }
}

impl StreamHandler<Inbound> for SessionActor {
    fn handle(&mut self, item: Inbound, ctx: &mut Context<Self>) {
        self.on_inbound(item, ctx);
    }

    /// The link is gone: stop (pending pushes fail with "closed", running calls are
    /// cancelled). What was queued is still written by the transport if it can be.
    fn finished(&mut self, ctx: &mut Context<Self>) {
        tracing::debug!(session = %self.id, "inbound ended");
        ctx.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::{Id, Message, Request, Response};
    use mcpl_protocol::mcp::Empty;
    use mcpl_protocol::method::Ping;
    use mcpl_transport::{StreamId, TransportKind};

    /// Backpressure (module docs): a host that stops reading fills the queue; the session
    /// then closes the link instead of blocking or writing out of order.
    #[actix::test]
    async fn a_host_that_stops_reading_has_its_link_closed_when_the_queue_fills() {
        let server = crate::Server::builder("backpressure", "0.1.0")
            .build()
            .expect("a valid server");
        let (in_tx, in_rx) = tokio::sync::mpsc::channel(8);
        let (out_tx, mut out_rx) = tokio::sync::mpsc::channel(2);
        let _session = server.serve(Connection {
            info: ConnectionInfo {
                kind: TransportKind::Memory,
                ordered: true,
                principal: Some(Principal::Named("alice".into())),
                peer: "test link".into(),
            },
            outbound: Outbound::new(out_tx),
            inbound: in_rx.into(),
        });
        for id in 1..=3 {
            let ping = Request::new::<Ping>(Id::Number(id), &Empty::default());
            in_tx
                .send(Inbound::Message {
                    stream: StreamId(0),
                    message: ping.into(),
                })
                .await
                .expect("the session reads");
        }
        // The test holds the inbound side open: only the full queue can end the link.
        for id in 1..=2 {
            match out_rx.recv().await {
                Some(Message::Response(Response { id: got, .. })) => {
                    assert_eq!(got, Some(Id::Number(id)));
                }
                other => panic!("expected the answer to ping {id}, got {other:?}"),
            }
        }
        // Bounded only so a regression fails instead of hanging.
        let end = tokio::time::timeout(std::time::Duration::from_secs(10), out_rx.recv()).await;
        assert!(
            matches!(end, Ok(None)),
            "the link closes, ping 3 unanswered: {end:?}"
        );
        drop(in_tx);
    }
}

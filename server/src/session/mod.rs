//! The session: one actix actor per connection.
//!
//! It consumes the connection's inbound channel as an actix stream, one item at a time,
//! and writes through the connection's outbound side. It owns the lifecycle
//! ([`Phase`], the pure `core::lifecycle`), the connection's write path with its rev
//! counter ([`RevWriter`]), the host's requests in flight (forwarded to its principal, or
//! running as tool handler calls: the pure `core::requests`), the carrier choice (the pure
//! `core::carrier`), and its own requests to the host awaiting answers. Server code talks
//! to it through a [`SessionHandle`].
//!
//! | file | what |
//! |---|---|
//! | `write.rs` | the one write path: every message, a rev and its message in one step, what a call held first |
//! | `negotiate.rs` | `initialize`, `featureSets/update`, `mcpl/manifest`: answered by the session itself |
//! | `rev_writer.rs` | [`rev_writer::RevWriter`]: a rev taken and its message queued in one step (§5.2) |
//! | `dispatch.rs` | reading: inbound items, requests, notifications, responses |
//! | `toolsets.rs` | `tools/list`, `toolsets/open|close|list`: forwarded to the principal, answered from it |
//! | `calls.rs` | `tools/call`: forwarded, then a handler task or the instance's answer; cancellation as `core::requests` decides |
//! | `deliver.rs` | what the principal sends, carried as `core::Carriers` decides (§5.2, §5.3) |
//! | `for_handlers.rs` | a tool handler's opens, closes and declines for its caller |
//! | `asks.rs` | a tool handler's `sampling/createMessage` and `elicitation/create` for the client |
//! | `notices.rs` | MCP progress and logging: a handler's `notifications/progress` and `notifications/message`, `logging/setLevel` |
//! | `outgoing.rs` | the table of the session's requests to the host |
//! | `handle.rs` | [`SessionHandle`] and the messages it sends the actor: push, status, close |
//!
//! **One writer** (§5.2). Every message to the host goes through `SessionActor::write` (or
//! `SessionActor::write_with_hints` / `SessionActor::write_stamped`, which take the next rev and
//! enqueue in the same step), in handler order, straight into the transport's bounded
//! queue, through the connection's [`RevWriter`]: it takes a rev and enqueues its message
//! under one lock, so no hint-carrying message can come between a rev and its write even
//! were several threads to write (model-checked in `tests/loom_rev_queue.rs`). Changes
//! held for a call's result (`core::Carriers`) are written before any other
//! hint-carrying message, in that same path.
//!
//! **Backpressure.** The transport's outbound queue is bounded (1024 messages for every
//! transport here). A host that stops reading fills it; the session then cannot write
//! without losing order (and revs), so it closes the link rather than buffer without
//! bound. Requests a host sends are answered in that same queue, so a host that reads
//! nothing cannot make the server hold more than the queue.

mod asks;
mod calls;
mod deliver;
mod dispatch;
mod for_handlers;
mod handle;
mod negotiate;
mod notices;
mod outgoing;
pub mod rev_writer;
mod toolsets;
mod write;

pub(crate) use asks::{Ask, Needs};
pub(crate) use for_handlers::ForHandler;
pub(crate) use notices::Notice;

pub use crate::core::lifecycle::{HostFeatures, LifecycleError, Negotiated, Phase};
pub use crate::ids::SessionId;
pub use handle::{SessionClosed, SessionHandle, SessionStatus};

use crate::actors::principal::{self, PrincipalActor};
use crate::actors::registry::{AttachSession, DetachSession, Registry};
use crate::core::lifecycle::Lifecycle;
use crate::core::session::SessionCore;
use crate::core::{Catalog, HostView};
use crate::manifest;
use crate::shared::Shared;
use crate::tool::Handlers;
use actix::prelude::*;
use calls::Stopper;
use for_handlers::HandlerOps;
use mcpl_protocol::mcp::LoggingLevel;
use mcpl_protocol::mcpl::McplManifest;
use mcpl_transport::{Connection, ConnectionInfo, Inbound, Outbound, Principal};
use outgoing::Outgoing;
use rev_writer::RevWriter;
use std::sync::Arc;
use tokio::sync::mpsc;

/// What a session is made of besides its connection (given by the `Server`).
pub(crate) struct Parts {
    pub(crate) shared: Arc<Shared>,
    pub(crate) handlers: Arc<Handlers>,
    pub(crate) registry: Addr<Registry>,
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
    inbound: Option<mpsc::Receiver<Inbound>>,
    /// §5.2: the transport's writer with this connection's revs; `None` once the session
    /// gave up writing (backpressure, or the link closed).
    writer: Option<RevWriter<Outbound>>,
    /// This session's principal; set when the actor starts.
    principal_addr: Option<Addr<PrincipalActor>>,
    /// The catalog as of the last change the principal told this session about.
    catalog: Arc<Catalog>,
    /// Tool handlers' opens and closes awaiting the principal.
    handler_ops: HandlerOps,
    lifecycle: Lifecycle,
    /// The host's requests in flight (forwarded to the principal, or handler calls) and
    /// the changes held for a call's result, with the carrier choice (§5.2, §5.3).
    core: SessionCore<Stopper>,
    outgoing: Outgoing<SpawnHandle>,
    /// The manifest this host last saw (in `initialize`, `mcpl/manifest` or a change
    /// notice), to tell which domains a replacement changes for it.
    shown: Option<McplManifest>,
    /// MCP logging: the least severe level sent (`notices.rs`); `None` when the server
    /// does not offer logging.
    log_level: Option<LoggingLevel>,
    self_addr: Option<Addr<SessionActor>>,
    /// Warnings about what the host sends, at most a few per interval (a flood costs a
    /// line and a count).
    peer_warnings: mcpl_transport::LogLimiter,
}

impl SessionActor {
    pub(crate) fn new(parts: Parts, conn: Connection, id: SessionId, principal: Principal) -> Self {
        SessionActor {
            id,
            log_level: parts.shared.logging,
            catalog: parts.shared.catalog(),
            shared: parts.shared,
            handlers: parts.handlers,
            registry: parts.registry,
            principal,
            info: conn.info,
            inbound: Some(conn.inbound),
            writer: Some(RevWriter::new(conn.outbound)),
            principal_addr: None,
            handler_ops: HandlerOps::default(),
            lifecycle: Lifecycle::default(),
            core: SessionCore::default(),
            outgoing: Outgoing::default(),
            shown: None,
            self_addr: None,
            peer_warnings: mcpl_transport::LogLimiter::per_peer(),
        }
    }

    /// What this host is shown: hints only when both sides advertised `toolHints` (§2).
    fn view(&self) -> HostView {
        self.catalog.view_for(self.lifecycle.host_tool_hints())
    }

    /// True when this host is shown hints now: initialized, and both sides advertised
    /// `toolHints` (§2). Hints for any other host are dropped (vector 8).
    fn hinted(&self) -> bool {
        self.lifecycle.negotiated().is_some() && self.view() == HostView::Hinted
    }

    /// The manifest as this host is to be shown it now.
    fn current_view(&self) -> McplManifest {
        manifest::shown_to(&self.shared.manifest(), self.lifecycle.host_tool_hints())
    }

    /// A handle to this session.
    fn session_handle(&self, ctx: &Context<Self>) -> SessionHandle {
        SessionHandle::new(ctx.address(), self.id, self.principal.clone())
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
}

impl Actor for SessionActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        tracing::debug!(session = %self.id, peer = %self.info.peer, kind = ?self.info.kind, principal = %self.principal.name(), "session started");
        self.self_addr = Some(ctx.address());
        // Nothing is read from the host until the principal's actor is known (§4.6).
        let attach = AttachSession {
            principal: self.principal.clone(),
            id: self.id,
            to: principal::SessionAddr {
                deliver: ctx.address().recipient(),
                swapped: ctx.address().recipient(),
                statement: ctx.address().recipient(),
                tools: ctx.address().recipient(),
            },
            arbiter: Arbiter::current(),
        };
        ctx.wait(self.registry.send(attach).into_actor(self).map(
            |answer, act, ctx| match answer {
                Ok(Some(addr)) => act.principal_addr = Some(addr),
                _ => {
                    tracing::warn!(session = %act.id, "the server's registry is gone");
                    ctx.stop();
                }
            },
        ));
        if let Some(mut inbound) = self.inbound.take() {
            ctx.add_stream(futures_util::stream::poll_fn(move |cx| {
                inbound.poll_recv(cx)
            }));
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
        let (in_tx, in_rx) = mpsc::channel(8);
        let (out_tx, mut out_rx) = mpsc::channel(2);
        let _session = server.serve(Connection {
            info: ConnectionInfo {
                kind: TransportKind::Memory,
                ordered: true,
                principal: Some(Principal::Named("alice".into())),
                peer: "test link".into(),
            },
            outbound: Outbound::new(out_tx),
            inbound: in_rx,
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

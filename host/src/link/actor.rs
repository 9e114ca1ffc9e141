//! The actor: connecting, backing off, dropping a connection, stopping.

use super::backoff::Backoff;
use super::config::LinkConfig;
use super::connector::ConnectError;
use super::core::era::Era;
use super::core::error::{DisconnectReason, LinkError};
use super::core::profile::Profile;
use super::core::{CoreConfig, LinkCore};
use super::events::LinkEvent;
use super::io::{read_stream, write_in_order};
use super::lifecycle::{Lifecycle, Live};
use super::pending::Waiter;
use super::status::{LinkStatus, SessionInfo};
use super::tap::TapEvent;
use crate::state::seen_ids::SeenEvents;
use actix::prelude::*;
use mcpl_protocol::method::{ListTools, Method};
use mcpl_transport::Connection;
use mcpl_transport::LogLimiter;
use std::sync::Arc;
use tokio::sync::mpsc;
use tracing::{debug, info, warn};

/// The host's link to one server: an actix actor. Start it with [`Actor::start`]; it
/// connects at once and keeps reconnecting until it gets [`super::Shutdown`].
pub struct ServerLink {
    pub(super) config: LinkConfig,
    pub(super) lifecycle: Lifecycle,
    backoff: Backoff,
    /// The latest connection's epoch.
    epoch: u64,
    failed_attempts: u32,
    /// Connections in a row whose initial policy went unanswered
    /// (`host-core/src/link/grant.rs`, `initial_unanswered`).
    pub(super) policy_unanswered: u32,
    last_disconnect: Option<DisconnectReason>,
    /// Push event ids admitted, across connections, with what each push said (SPEC §9.4: a
    /// re-send keeps its id and is not shown twice; §9.2: another event under an id seen
    /// before is shown); bounded in count and bytes, the oldest forgotten first.
    pub(super) seen_events: SeenEvents,
    /// Warnings about what the server sends wrongly, at most a few per interval.
    pub(super) peer_warnings: LogLimiter,
    /// This actor's address, once started.
    pub(super) address: Option<Addr<ServerLink>>,
    /// The server's era as found by a probe, remembered for the link's life (`era.rs`).
    pub(super) found_era: Option<Era>,
    /// RFC-014's stateless profile (`host-core/src/link/profile.rs`): the stamped view and its mark,
    /// kept across connections (a new connection is no new start, profile §3.6).
    pub(super) profile: Profile,
    /// The mark the current connection's `mcpl/hints` stream was opened with.
    pub(super) listen_since: u64,
    /// Streams reopened on the current connection after the server ended them.
    pub(super) listen_reopened: u32,
    /// When the current hints stream was acknowledged (tokio's clock).
    pub(super) listen_acknowledged_at: Option<std::time::Instant>,
    /// The last `initialize` result read, known by a keyed hash of its text
    /// (`handshake.rs`).
    pub(super) known_init: KnownInit,
}

/// The last `initialize` result a link read, by a hash of its text keyed at random per link
/// (so no server can make another answer hash the same), and the key.
#[derive(Default)]
pub(super) struct KnownInit {
    pub(super) hasher: std::hash::RandomState,
    pub(super) last: Option<(u64, Arc<mcpl_protocol::mcp::InitializeResult>)>,
}

/// How many push event ids a link remembers.
const SEEN_EVENTS: usize = 4096;

impl ServerLink {
    /// A link that will connect as `config` says once started.
    pub fn new(config: LinkConfig) -> Self {
        let backoff = Backoff::new(&config.backoff);
        ServerLink {
            config,
            lifecycle: Lifecycle::Connecting,
            backoff,
            epoch: 0,
            failed_attempts: 0,
            policy_unanswered: 0,
            last_disconnect: None,
            seen_events: SeenEvents::new(SEEN_EVENTS),
            peer_warnings: LogLimiter::per_peer(),
            address: None,
            found_era: None,
            profile: Profile::default(),
            listen_since: 0,
            listen_reopened: 0,
            listen_acknowledged_at: None,
            known_init: KnownInit::default(),
        }
    }

    /// A snapshot of where the link is.
    pub fn status(&self) -> LinkStatus {
        LinkStatus {
            name: self.config.name.clone(),
            phase: self.lifecycle.phase(),
            epoch: self.epoch,
            failed_attempts: self.failed_attempts,
            session: self.lifecycle.live().and_then(SessionInfo::of),
            last_disconnect: self.last_disconnect.clone(),
        }
    }

    /// Starts one connection attempt.
    fn connect(&mut self, ctx: &mut Context<Self>) {
        self.lifecycle = Lifecycle::Connecting;
        let attempt = self.config.connector.connect();
        let after = self.config.connect_timeout;
        let fut = async move {
            match tokio::time::timeout(after, attempt).await {
                Ok(Ok(conn)) => Ok(conn),
                Ok(Err(e)) => Err(ConnectError::Transport(Arc::new(e))),
                Err(_) => Err(ConnectError::TimedOut { after }),
            }
        };
        ctx.spawn(
            fut.into_actor(self)
                .map(|outcome, act, ctx| act.on_connect_outcome(outcome, ctx)),
        );
    }

    fn on_connect_outcome(
        &mut self,
        outcome: Result<Connection, ConnectError>,
        ctx: &mut Context<Self>,
    ) {
        if !matches!(self.lifecycle, Lifecycle::Connecting) {
            return;
        }
        match outcome {
            Ok(conn) => self.attach(conn, ctx),
            Err(error) => {
                self.failed_attempts += 1;
                warn!(link = %self.config.name, attempt = self.failed_attempts, %error, "connection attempt failed");
                self.emit(LinkEvent::ConnectFailed {
                    attempt: self.failed_attempts,
                    error,
                });
                self.back_off(ctx);
            }
        }
    }

    /// Takes a fresh connection: starts its writer and reader, then the handshake.
    fn attach(&mut self, conn: Connection, ctx: &mut Context<Self>) {
        self.epoch += 1;
        let Connection {
            info,
            outbound,
            inbound,
        } = conn;
        // Not yet "connected": a Streamable HTTP link has sent nothing at this point, so the
        // server may never have been reached. The handshake's answer says so (`initialized`).
        tracing::debug!(link = %self.config.name, epoch = self.epoch, peer = %info.peer, "transport open; opening the session");
        let (writer, queue) = mpsc::channel(self.config.write_queue.max(1));
        actix::spawn(write_in_order(
            queue,
            outbound,
            self.config.write_timeout,
            ctx.address().recipient(),
            self.epoch,
        ));
        let gate = self.config.read_gate.clone();
        let reader = ctx.add_stream(read_stream(inbound, self.epoch, gate));
        let core = LinkCore::new(
            self.epoch,
            info.ordered,
            CoreConfig {
                timed_out_capacity: self.config.timed_out_capacity,
                request_timeout: self.config.request_timeout,
                retry_initial: self.config.backoff.initial,
                retry_max: self.config.backoff.max,
            },
        );
        self.lifecycle = Lifecycle::Linked(Box::new(Live {
            info,
            writer,
            reader,
            timer: None,
            core,
        }));
        self.open_session(ctx);
    }

    /// Drops the connection and backs off before the next attempt.
    pub(super) fn disconnect(&mut self, reason: DisconnectReason, ctx: &mut Context<Self>) {
        let Some(was_ready) = self.drop_connection(reason, ctx) else {
            return;
        };
        if !was_ready {
            // A handshake that failed counts as a failed attempt; a drop after Ready starts
            // the count again (the backoff was reset when that handshake completed).
            self.failed_attempts += 1;
        }
        self.back_off(ctx);
    }

    /// Stops the link for good.
    pub(super) fn shutdown(&mut self, ctx: &mut Context<Self>) {
        self.drop_connection(DisconnectReason::Shutdown, ctx);
        self.lifecycle = Lifecycle::Stopped;
        info!(link = %self.config.name, "shut down");
        ctx.stop();
    }

    /// Ends the current connection, if any: the tap and subscribers are told, requests in
    /// flight fail with `Disconnected`. Returns whether it had reached `Ready`.
    fn drop_connection(
        &mut self,
        reason: DisconnectReason,
        ctx: &mut Context<Self>,
    ) -> Option<bool> {
        if !matches!(self.lifecycle, Lifecycle::Linked(_)) {
            return None;
        }
        let Lifecycle::Linked(mut live) =
            std::mem::replace(&mut self.lifecycle, Lifecycle::Backoff)
        else {
            return None;
        };
        ctx.cancel_future(live.reader);
        if let Some((_, timer)) = live.timer.take() {
            ctx.cancel_future(timer);
        }
        let was_ready = live.is_ready();
        if reason == DisconnectReason::Shutdown {
            // This host ended it (a normal exit): nothing to warn anyone about.
            debug!(link = %self.config.name, epoch = live.epoch(), %reason, "connection ended");
        } else {
            warn!(link = %self.config.name, epoch = live.epoch(), %reason, "connection ended");
        }
        self.tap(&TapEvent::Disconnected {
            epoch: live.epoch(),
            reason: reason.clone(),
        });
        let gone = |method| LinkError::Disconnected {
            method,
            reason: reason.clone(),
        };
        let (requests, listings) = live.core.close();
        for pending in requests {
            if let Waiter::Caller(reply) = pending.waiter {
                reply(Err(gone(pending.method)));
            }
        }
        for reply in listings {
            let _ = reply.send(Err(gone(ListTools::NAME)));
        }
        let epoch = live.epoch();
        // Dropping `live` drops the writer: the connection closes once its queue is written.
        drop(live);
        self.emit(LinkEvent::Disconnected {
            epoch,
            reason: reason.clone(),
        });
        self.last_disconnect = Some(reason);
        Some(was_ready)
    }

    fn back_off(&mut self, ctx: &mut Context<Self>) {
        let delay = self.backoff.next_delay();
        self.lifecycle = Lifecycle::Backoff;
        debug!(link = %self.config.name, ?delay, "backing off");
        self.emit(LinkEvent::BackingOff {
            attempt: self.failed_attempts + 1,
            delay,
        });
        ctx.run_later(delay, |act, ctx| {
            if matches!(act.lifecycle, Lifecycle::Backoff) {
                act.connect(ctx);
            }
        });
    }

    /// The handshake completed. The attempt count starts again; the backoff's delay only
    /// once the connection has stayed up for [`super::BackoffConfig::stable_after`]: a
    /// server that drops every connection right after its handshake is reconnected ever
    /// more slowly, not at the first step each time.
    pub(super) fn on_ready(&mut self, ctx: &mut Context<Self>) {
        self.failed_attempts = 0;
        let epoch = self.epoch;
        ctx.run_later(self.config.backoff.stable_after, move |act, _| {
            if act.lifecycle.live().is_some_and(|l| l.epoch() == epoch) {
                act.backoff.reset();
            }
        });
    }

    /// Offers an event to the tap.
    pub(super) fn tap(&mut self, event: &TapEvent) {
        if let Some(tap) = &mut self.config.tap {
            tap.offer(event);
        }
    }

    /// Tells every subscriber, forgetting those that have gone.
    pub(super) fn emit(&mut self, event: LinkEvent) {
        self.config.subscribers.retain(|s| s.deliver(&event));
    }
}

impl std::fmt::Debug for ServerLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerLink")
            .field("name", &self.config.name)
            .field("phase", &self.lifecycle.phase())
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}

impl Actor for ServerLink {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.address = Some(ctx.address());
        self.connect(ctx);
    }
}

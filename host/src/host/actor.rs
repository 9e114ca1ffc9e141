//! The actor: what it owns. It is started in `start.rs`, and its handlers live beside the
//! messages they take (`agent.rs`, `inbound.rs`); this file depends on none of them.

use super::messages::Waiting;
use super::shown::Shown;
use super::told_store::ToldStore;
use crate::link::{ReadGate, ServerLink};
use crate::state::{HostCore, HostStatus};
use actix::prelude::*;
use std::collections::BTreeMap;
use std::time::Instant;
use tokio::sync::{mpsc, watch};

/// One server's link, as the actor holds it beside the core's [`ServerSlot`].
pub(super) struct Link {
    pub addr: Addr<ServerLink>,
    /// How far the link reads ahead of this actor.
    pub gate: ReadGate,
    /// The armed hold timer.
    pub hold: Option<SpawnHandle>,
}

/// The host's agent-facing actor (see the module doc). Start it with [`Host::start`].
pub struct Host {
    pub(super) core: HostCore,
    pub(super) links: BTreeMap<String, Link>,
    pub(super) store: Option<ToldStore>,
    pub(super) subscribers: Vec<mpsc::UnboundedSender<Shown>>,
    /// The first message the next transcript returns.
    pub(super) transcript_from: u64,
    pub(super) status: watch::Sender<HostStatus>,
    /// Warnings about what servers send that this host cannot read, at most a few per
    /// interval.
    pub(super) peer_warnings: mcpl_transport::LogLimiter,
    /// Meta-tool calls waiting for a server's statement, connect-time or a recovery's (`agent.rs`).
    pub(super) waiting: Vec<Waiting>,
    /// How many calls have waited so far; names each wait.
    pub(super) waits: u64,
    /// The longest a meta-tool call waits for a statement.
    pub(super) statement_wait: std::time::Duration,
}

/// Now, on tokio's clock (paused in tests); the core takes it as an argument.
pub(super) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

impl Host {
    /// Adds a subscriber to what is shown outside tool results.
    pub(super) fn subscribe(&mut self, tx: mpsc::UnboundedSender<Shown>) {
        self.subscribers.push(tx);
    }
}

impl Actor for Host {
    type Context = Context<Self>;
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("servers", &self.links.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

//! The link's states across connections ([`Lifecycle`]: connecting, linked, backing off,
//! stopped) and what the actor holds for the connection it is linked on ([`Live`]: the
//! writer, the read stream, the one timer, and the connection's [`LinkCore`], whose
//! [`super::core::session::Stage`] is the connection's phase). `mod.rs` draws the whole
//! state machine.
//!
//! Every drop of a connection fails its requests in flight with `Disconnected` and is
//! tapped and announced as `Disconnected`. Requests from callers are sent only in `Ready`;
//! in any other state they fail at once with `NotConnected`.

use super::core::LinkCore;
use super::core::phase::LinkPhase;
use super::core::session::Session;
use super::pending::{Reply, ToolsReply};
use actix::SpawnHandle;
use mcpl_protocol::Message;
use mcpl_transport::ConnectionInfo;
use std::time::Instant;
use tokio::sync::mpsc;

/// The link's state.
pub(super) enum Lifecycle {
    Connecting,
    Linked(Box<Live>),
    Backoff,
    Stopped,
}

impl Lifecycle {
    pub(super) fn phase(&self) -> LinkPhase {
        match self {
            Lifecycle::Connecting => LinkPhase::Connecting,
            Lifecycle::Linked(live) => live.core.phase(),
            Lifecycle::Backoff => LinkPhase::Backoff,
            Lifecycle::Stopped => LinkPhase::Stopped,
        }
    }

    pub(super) fn live(&self) -> Option<&Live> {
        match self {
            Lifecycle::Linked(live) => Some(live),
            _ => None,
        }
    }

    pub(super) fn live_mut(&mut self) -> Option<&mut Live> {
        match self {
            Lifecycle::Linked(live) => Some(live),
            _ => None,
        }
    }
}

/// The connection's rules as the actor holds them: callers answered by closures, listings
/// by channels.
pub(super) type Core = LinkCore<Reply, ToolsReply>;

/// One transport connection: what the actor runs for it, and its core.
pub(super) struct Live {
    pub(super) info: ConnectionInfo,
    /// Feeds the writer task, which writes to the transport in order without blocking the
    /// actor. Dropping it closes the connection once what was queued is written.
    pub(super) writer: mpsc::Sender<Message>,
    /// The read stream's handle, cancelled when the link drops the connection itself.
    pub(super) reader: SpawnHandle,
    /// The one timer armed for the core's earliest deadline, and that deadline.
    pub(super) timer: Option<(Instant, SpawnHandle)>,
    pub(super) core: Core,
}

impl Live {
    /// Which connection this is.
    pub(super) fn epoch(&self) -> u64 {
        self.core.epoch
    }

    /// The session, once `initialize` was accepted.
    pub(super) fn session(&self) -> Option<&Session> {
        self.core.session()
    }

    pub(super) fn session_mut(&mut self) -> Option<&mut Session> {
        self.core.session_mut()
    }

    pub(super) fn is_ready(&self) -> bool {
        self.core.is_ready()
    }
}

//! What a link tells its subscribers. Each event names the connection (`epoch`) it is
//! about, so a subscriber can drop what belongs to a connection that has gone.

use super::error::{ConnectError, DisconnectReason};
use mcpl_protocol::Notification;
use mcpl_protocol::hints::HintChanges;
use mcpl_protocol::mcp::{InitializeResult, Tool};
use mcpl_protocol::mcpl::{
    FeatureSetsUpdateResult, ManifestChangedParams, McplManifest, PushEventParams, PushEventResult,
};
use std::time::Duration;
use tokio::sync::mpsc;

/// Something that happened on a link.
#[derive(Debug, Clone, actix::Message)]
#[rtype(result = "()")]
#[non_exhaustive]
pub enum LinkEvent {
    /// The handshake completed: the link is ready.
    Connected {
        /// The connection.
        epoch: u64,
        /// The server's `initialize` result.
        init: InitializeResult,
        /// The `featureSets/update` receipt (none for a plain MCP server).
        receipt: Option<FeatureSetsUpdateResult>,
    },
    /// A connection ended (at any point after the transport connected).
    Disconnected {
        /// The connection.
        epoch: u64,
        /// Why.
        reason: DisconnectReason,
    },
    /// A connection attempt failed.
    ConnectFailed {
        /// Attempts since the last successful handshake, this one included.
        attempt: u32,
        /// Why.
        error: ConnectError,
    },
    /// The link waits `delay` before its next attempt.
    BackingOff {
        /// The attempt that will follow.
        attempt: u32,
        /// The wait.
        delay: Duration,
    },
    /// A `tools/list` completed with a list different from the last one on this
    /// connection (or is the first on it).
    ToolsChanged {
        /// The connection.
        epoch: u64,
        /// Every tool, all pages.
        tools: Vec<Tool>,
    },
    /// The server pushed an event and the link answered it.
    Push {
        /// The connection.
        epoch: u64,
        /// The event.
        params: PushEventParams,
        /// The answer given.
        result: PushEventResult,
    },
    /// `mcpl/manifestChanged`; the link re-reads the manifest.
    ManifestChanged {
        /// The connection.
        epoch: u64,
        /// The notification.
        params: ManifestChangedParams,
    },
    /// A re-read manifest replaced the link's current one.
    ManifestUpdated {
        /// The connection.
        epoch: u64,
        /// The manifest.
        manifest: McplManifest,
    },
    /// `tools/hints` (§5.2). The tap saw it first; this is for presentation.
    ToolHints {
        /// The connection.
        epoch: u64,
        /// The changes.
        changes: HintChanges,
    },
    /// Any other notification, or one of the above whose params did not decode.
    Notification {
        /// The connection.
        epoch: u64,
        /// The notification.
        notification: Notification,
    },
}

/// A subscriber.
#[derive(Debug, Clone)]
pub enum EventSink {
    /// An actor.
    Recipient(actix::Recipient<LinkEvent>),
    /// A channel (unbounded: a subscriber that never reads keeps every event).
    Channel(mpsc::UnboundedSender<LinkEvent>),
}

impl EventSink {
    /// Delivers `event`; false when the subscriber is gone.
    pub(super) fn deliver(&self, event: &LinkEvent) -> bool {
        match self {
            EventSink::Recipient(r) => {
                if !r.connected() {
                    return false;
                }
                r.do_send(event.clone());
                true
            }
            EventSink::Channel(tx) => tx.send(event.clone()).is_ok(),
        }
    }
}

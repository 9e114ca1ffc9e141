//! What a link tells its subscribers. Each event names the connection (`epoch`) it is
//! about, so a subscriber can drop what belongs to a connection that has gone.

use super::connector::ConnectError;
use super::core::error::DisconnectReason;
use mcpl_protocol::Notification;
use mcpl_protocol::hints::HintChanges;
use mcpl_protocol::mcp::{InitializeResult, Tool};
use mcpl_protocol::mcpl::{
    FeatureSetsUpdateResult, ManifestChangedParams, McplManifest, PushEventParams, PushEventResult,
};
use std::fmt;
use std::sync::Arc;
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
        init: Arc<InitializeResult>,
        /// The `featureSets/update` receipt (none for a plain MCP server, or one served as
        /// plain MCP after its policy exchange failed).
        receipt: Option<Box<FeatureSetsUpdateResult>>,
        /// The grant in force (concrete capability paths; empty without MCPL).
        granted: Vec<String>,
        /// MCPL is in force on this connection: the server speaks it and its policy
        /// exchange did not fail. When false, no push or hint counts (SPEC §3.2).
        mcpl: bool,
    },
    /// The grant in force changed after the handshake: a revocation (at once) or an
    /// expansion (on its receipt) after a manifest change (SPEC §6.7, §17.5).
    Granted {
        /// The connection.
        epoch: u64,
        /// The grant now in force.
        granted: Vec<String>,
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
        /// Every tool, all pages (shared: every subscriber's copy is the same list).
        tools: Arc<[Tool]>,
    },
    /// A `tools/list` completed (every page), whether or not the list changed; sent after
    /// [`LinkEvent::ToolsChanged`] when both are. A hint state needs every listing, with
    /// the rev it names (§3: presence is stamped with it; a recovery ends with it, §5.2).
    ToolsListed {
        /// The connection.
        epoch: u64,
        /// Every tool, all pages (shared: every subscriber's copy is the same list).
        tools: Arc<[Tool]>,
        /// The lowest `_meta["mcpl/rev"]` among the pages (§3); none when no page named one.
        rev: Option<u64>,
        /// The listing started after `notifications/tools/list_changed` was read (a host
        /// rebuilds its model's tool list from it: a boundary, §3).
        list_changed: bool,
        /// The tools left out of `tools` because they nest too deep or do not decode: each
        /// by name, or by its place on its page (`#3`) when even that cannot be read.
        unreadable: Vec<String>,
    },
    /// The server pushed an event and the link answered it.
    Push {
        /// The connection.
        epoch: u64,
        /// The event.
        params: Box<PushEventParams>,
        /// The answer given.
        result: PushEventResult,
    },
    /// The server pushed an event that is not shown: the link refused it before asking its
    /// push policy (the handshake not done, `pushEvents` not granted, params that do not
    /// decode, a feature set not declared for it), or admitted one with the same `eventId`
    /// before (SPEC §9.4). Its hints were tapped when it was read all the same (§5.2), so
    /// what they changed is for a subscriber to tell without the event.
    PushNotShown {
        /// The connection.
        epoch: u64,
        /// Its `eventId` as read (empty when it has none).
        event_id: String,
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
    /// A function called synchronously on the link as each event happens. A function that
    /// forwards to an actor with `do_send` keeps the events in order with a [`super::Tap`]
    /// forwarding to the same actor the same way (one sender, one mailbox).
    Callback(EventCallback),
}

type CallbackFn = dyn Fn(&LinkEvent) -> bool + Send + Sync;

/// The function of an [`EventSink::Callback`]: returns false once its subscriber is gone.
#[derive(Clone)]
pub struct EventCallback(Arc<CallbackFn>);

impl EventCallback {
    /// Wraps `f`.
    pub fn new(f: impl Fn(&LinkEvent) -> bool + Send + Sync + 'static) -> Self {
        EventCallback(Arc::new(f))
    }
}

impl fmt::Debug for EventCallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventCallback(..)")
    }
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
            EventSink::Callback(f) => (f.0)(event),
        }
    }
}

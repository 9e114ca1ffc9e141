//! The link's lifecycle, as states named for what they wait for.
//!
//! ```text
//!                      start
//!                        │
//!                        ▼
//!    ┌──────────────▶ Connecting ───attempt failed──────────────────┐
//!    │                   │ connected: epoch += 1, send initialize   │
//!    │                   ▼                                          │
//!    │     AwaitingInitializeResult ──error, unsupported version,───┤
//!    │                   │            malformed, timeout, closed    │
//!    │                   │ result accepted: tap Connected,          │
//!    │                   │ send notifications/initialized           │
//!    │                   ├──────── plain MCP server ───────┐        │
//!    │                   │ server speaks MCPL:             │        │
//!    │                   │ send featureSets/update         │        │
//!    │                   ▼ (a request)                     │        │
//!    │       AwaitingGrantReceipt ──refused, error,────────┼────────┤
//!    │                   │          timeout, closed        │        │
//!    │                   │ receipt read                    │        │
//!    │                   ▼                                 │        │
//!    │                 Ready ◀─────────────────────────────┘        │
//!    │                   │ backoff reset; tools/list (paged)        │
//!    │                   │ closed                                   │
//!    │                   ▼                                          │
//!    └── timer ──── Backoff ◀───────────────────────────────────────┘
//!
//!    any state ── Shutdown ──▶ Stopped
//! ```
//!
//! Every drop of a connection fails its requests in flight with `Disconnected` and is
//! tapped and announced as `Disconnected`. Requests from callers are sent only in `Ready`;
//! in any other state they fail at once with `NotConnected`.

use super::pending::PendingTable;
use super::refresh::Refresh;
use actix::SpawnHandle;
use mcpl_protocol::Message;
use mcpl_protocol::mcp::{InitializeResult, Tool};
use mcpl_protocol::mcpl::{FeatureSetsUpdateResult, McplManifest};
use mcpl_transport::ConnectionInfo;
use tokio::sync::mpsc;

/// Where a link is, for status and errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkPhase {
    /// Waiting for a connection attempt.
    Connecting,
    /// Connected; waiting for the `initialize` result.
    AwaitingInitializeResult,
    /// `featureSets/update` sent; waiting for its receipt.
    AwaitingGrantReceipt,
    /// Handshake done; requests go through.
    Ready,
    /// Waiting before the next attempt.
    Backoff,
    /// Shut down.
    Stopped,
}

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
            Lifecycle::Linked(live) => match live.stage {
                Stage::AwaitingInitializeResult => LinkPhase::AwaitingInitializeResult,
                Stage::AwaitingGrantReceipt(_) => LinkPhase::AwaitingGrantReceipt,
                Stage::Ready(_) => LinkPhase::Ready,
            },
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

/// One transport connection and what is known on it.
pub(super) struct Live {
    /// Which connection this is: 1 for the first that connected, +1 for each after.
    pub(super) epoch: u64,
    pub(super) info: ConnectionInfo,
    /// Feeds the writer task, which writes to the transport in order without blocking the
    /// actor. Dropping it closes the connection once what was queued is written.
    pub(super) writer: mpsc::UnboundedSender<Message>,
    /// The read stream's handle, cancelled when the link drops the connection itself.
    pub(super) reader: SpawnHandle,
    pub(super) pending: PendingTable,
    pub(super) stage: Stage,
    pub(super) refresh: Refresh,
}

impl Live {
    /// The session, once `initialize` was accepted.
    pub(super) fn session(&self) -> Option<&Session> {
        match &self.stage {
            Stage::AwaitingInitializeResult => None,
            Stage::AwaitingGrantReceipt(s) | Stage::Ready(s) => Some(s),
        }
    }

    pub(super) fn session_mut(&mut self) -> Option<&mut Session> {
        match &mut self.stage {
            Stage::AwaitingInitializeResult => None,
            Stage::AwaitingGrantReceipt(s) | Stage::Ready(s) => Some(s),
        }
    }

    pub(super) fn is_ready(&self) -> bool {
        matches!(self.stage, Stage::Ready(_))
    }
}

/// How far a connection's handshake has come.
pub(super) enum Stage {
    AwaitingInitializeResult,
    AwaitingGrantReceipt(Session),
    Ready(Session),
}

/// What the server said about itself on this connection.
#[derive(Debug, Clone)]
pub(super) struct Session {
    pub(super) init: InitializeResult,
    /// The `featureSets/update` receipt (none for a plain MCP server).
    pub(super) receipt: Option<FeatureSetsUpdateResult>,
    /// The current manifest: from `initialize`, replaced on each re-read.
    pub(super) manifest: Option<McplManifest>,
    /// The `effectiveCapabilities` sent (empty for a plain MCP server).
    pub(super) granted: Vec<String>,
    pub(super) tools: Vec<Tool>,
    /// True once a `tools/list` completed on this connection.
    pub(super) tools_listed: bool,
}

impl Session {
    pub(super) fn new(init: InitializeResult) -> Self {
        let manifest = init.capabilities.mcpl().cloned();
        Session {
            init,
            receipt: None,
            manifest,
            granted: Vec::new(),
            tools: Vec::new(),
            tools_listed: false,
        }
    }

    /// True when the server advertised `experimental.mcpl`.
    pub(super) fn speaks_mcpl(&self) -> bool {
        self.init.capabilities.mcpl().is_some()
    }

    pub(super) fn grants(&self, capability: &str) -> bool {
        self.granted.iter().any(|c| c == capability)
    }
}

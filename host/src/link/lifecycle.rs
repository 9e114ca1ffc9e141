//! The link's lifecycle, as states named for what they wait for.
//!
//! ```text
//!                         start
//!                           │
//!                           ▼
//!    ┌─────────────────▶ Connecting ───attempt failed───────────────────┐
//!    │                      │ connected: epoch += 1; a server that may  │
//!    │                      │ be modern (era.rs): send server/discover, │
//!    │                      │ else send initialize ───────────┐         │
//!    │                      ▼                                 │         │
//!    │          AwaitingDiscoverResult ──a modern error; not ─┼─────────┤
//!    │             │        │            modern with "modern" │         │
//!    │             │        │ any other answer, or none in    │         │
//!    │             │        │ time: send initialize           │         │
//!    │             │        ▼                                 │         │
//!    │             │  AwaitingInitializeResult ◀──────────────┘         │
//!    │             │        │  ──error, unsupported version, ───────────┤
//!    │             │        │    malformed, timeout, closed             │
//!    │             │        │ result accepted: tap Connected,           │
//!    │             │        │ send notifications/initialized            │
//!    │             │        ├──────── plain MCP server ───────┐         │
//!    │             │        │ server speaks MCPL:             │         │
//!    │             │        │ send featureSets/update         │         │
//!    │             │        ▼ (a request)                     │         │
//!    │             │  AwaitingGrantReceipt ──refused with ────┼─────────┤
//!    │             │        │                "close", closed  │         │
//!    │             │        │ receipt read; or refused        │         │
//!    │             │        │ "mcp-only", an error, a timeout,│         │
//!    │             │        │ a malformed receipt: MCP only   │         │
//!    │             │        ▼                                 │         │
//!    │  a modern   └────▶ Ready ◀─────────────────────────────┘         │
//!    │  DiscoverResult:     │ backoff reset; tools/list (paged); to a   │
//!    │  tap Connected (no   │ modern server that lists changes,         │
//!    │  initialized, no     │ subscriptions/listen                      │
//!    │  grant: plain MCP)   │ closed                                    │
//!    │                      ▼                                           │
//!    └── timer ──────── Backoff ◀───────────────────────────────────────┘
//!
//!    any state ── Shutdown ──▶ Stopped
//! ```
//!
//! In `AwaitingDiscoverResult`, a -32022 that lists a modern version this host speaks has
//! the probe sent again once with it, and one listing only legacy versions it speaks goes
//! on to `initialize` (`era.rs`, "A version refused").
//!
//! Every drop of a connection fails its requests in flight with `Disconnected` and is
//! tapped and announced as `Disconnected`. Requests from callers are sent only in `Ready`;
//! in any other state they fail at once with `NotConnected`.

use super::era::{Era, Stamp};
use super::pending::PendingTable;
use super::refresh::Refresh;
use actix::SpawnHandle;
use mcpl_protocol::Message;
use mcpl_protocol::grant::{self, Derivation, Grant, Policy};
use mcpl_protocol::mcp::{InitializeResult, Tool};
use mcpl_protocol::mcpl::{FeatureSetsUpdateResult, McplManifest};
use mcpl_transport::ConnectionInfo;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;

/// Where a link is, for status and errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkPhase {
    /// Waiting for a connection attempt.
    Connecting,
    /// Connected; waiting for the `server/discover` probe's answer (MCP 2026-07-28).
    AwaitingDiscoverResult,
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
                Stage::AwaitingDiscoverResult => LinkPhase::AwaitingDiscoverResult,
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
    pub(super) writer: mpsc::Sender<Message>,
    /// The read stream's handle, cancelled when the link drops the connection itself.
    pub(super) reader: SpawnHandle,
    pub(super) pending: PendingTable,
    pub(super) stage: Stage,
    pub(super) refresh: Refresh,
    /// What every request says of the host in `_meta` while the connection is (or may be)
    /// modern: set for the probe, kept for a modern server, dropped on falling back.
    pub(super) stamp: Option<Stamp>,
}

impl Live {
    /// The session, once `initialize` was accepted.
    pub(super) fn session(&self) -> Option<&Session> {
        match &self.stage {
            Stage::AwaitingDiscoverResult | Stage::AwaitingInitializeResult => None,
            Stage::AwaitingGrantReceipt(s) | Stage::Ready(s) => Some(s),
        }
    }

    /// Whether a request is stopped with `notifications/cancelled`: not on a modern
    /// Streamable HTTP connection, where that era defines no client notification (closing
    /// the answer is the cancellation, MCP 2026-07-28 "Cancellation").
    pub(super) fn cancels_by_notification(&self) -> bool {
        self.stamp.is_none() || self.info.ordered
    }

    /// A modern connection takes `version` for its requests from now on (the server
    /// refused the one it had, listing this one): false on a legacy connection.
    pub(super) fn adopt_version(&mut self, version: &str) -> bool {
        let Some(stamp) = &mut self.stamp else {
            return false;
        };
        stamp.version = version.to_owned();
        if let Some(session) = self.session_mut() {
            session.init.protocol_version = version.to_owned();
        }
        true
    }

    pub(super) fn session_mut(&mut self) -> Option<&mut Session> {
        match &mut self.stage {
            Stage::AwaitingDiscoverResult | Stage::AwaitingInitializeResult => None,
            Stage::AwaitingGrantReceipt(s) | Stage::Ready(s) => Some(s),
        }
    }

    pub(super) fn is_ready(&self) -> bool {
        matches!(self.stage, Stage::Ready(_))
    }
}

/// How far a connection's handshake has come.
pub(super) enum Stage {
    AwaitingDiscoverResult,
    AwaitingInitializeResult,
    AwaitingGrantReceipt(Session),
    Ready(Session),
}

/// What the server said about itself on this connection, and the policy in force on it.
#[derive(Debug, Clone)]
pub(super) struct Session {
    pub(super) init: InitializeResult,
    /// The `featureSets/update` receipt (none for a plain MCP server).
    pub(super) receipt: Option<FeatureSetsUpdateResult>,
    /// The current manifest: from `initialize`, replaced on each re-read.
    pub(super) manifest: Option<McplManifest>,
    /// The grant in force: the concrete paths sent in `effectiveCapabilities`, narrowed at
    /// once by a revocation, widened only once the server's receipt came (SPEC §6.7).
    /// Empty for a plain MCP server and before the initial policy's receipt (§5.3).
    pub(super) granted: Vec<String>,
    /// The feature sets that grant leaves enabled, in this host's reading of the manifest.
    pub(super) derivation: Derivation,
    /// The server speaks MCPL but its policy exchange failed: it is served as plain MCP
    /// (SPEC §3.2, §6.7; RFC-002 §12).
    pub(super) mcp_only: bool,
    /// The number of the last policy request sent; a receipt for an older one is stale.
    pub(super) policy_seq: u64,
    /// The feature sets named in the last policy's `disabled` (those this host reads as
    /// invalid, so the server knows not to use them).
    pub(super) disabled_sent: Vec<String>,
    pub(super) tools: Arc<[Tool]>,
    /// True once a `tools/list` completed on this connection.
    pub(super) tools_listed: bool,
    /// The era the session speaks.
    pub(super) era: Era,
    /// A modern session's `subscriptions/listen` for tool list changes.
    pub(super) listen: Listen,
    /// Until when the last listing is fresh, by its `ttlMs` (MCP 2026-07-28
    /// `server/utilities/caching.md`); `None` when it named none.
    pub(super) tools_fresh_until: Option<Instant>,
}

/// A modern session's change stream (MCP 2026-07-28 `basic/patterns/subscriptions.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Listen {
    /// None: the server offers none, refused it, or ended it; a stale tools list is read
    /// again after a call (`refresh.rs`).
    Off,
    /// `subscriptions/listen` sent, not yet acknowledged.
    Opening,
    /// Acknowledged with `toolsListChanged`: list changes come as notifications.
    Open,
}

impl Session {
    pub(super) fn new(init: InitializeResult) -> Self {
        let manifest = init.capabilities.mcpl().cloned();
        Session {
            init,
            receipt: None,
            manifest,
            granted: Vec::new(),
            derivation: Derivation::default(),
            mcp_only: false,
            policy_seq: 0,
            disabled_sent: Vec::new(),
            tools: Arc::from(Vec::new()),
            tools_listed: false,
            era: Era::Legacy,
            listen: Listen::Off,
            tools_fresh_until: None,
        }
    }

    /// A modern server's session: what its `server/discover` said, as `initialize` would
    /// have (era.rs); MCPL is off (issue #40).
    pub(super) fn modern(init: InitializeResult) -> Self {
        let mut session = Session::new(init);
        session.era = Era::Modern;
        session.mcp_only = true;
        session
    }

    /// True when MCPL is in force: the server advertised `experimental.mcpl` and its policy
    /// exchange did not fail.
    pub(super) fn speaks_mcpl(&self) -> bool {
        self.init.capabilities.mcpl().is_some() && !self.mcp_only
    }

    /// The grant in force.
    pub(super) fn grant(&self) -> Grant {
        Grant::new(self.granted.iter().cloned())
    }

    /// What this host grants the server as its manifest now reads: the server's
    /// advertisement intersected with the host's `policy` (SPEC §5.4), as concrete paths.
    pub(super) fn intended_grant(&self, policy: &Grant) -> Vec<String> {
        let Some(manifest) = &self.manifest else {
            return Vec::new();
        };
        grant::advertised(manifest, self.init.capabilities.tools.is_some())
            .into_iter()
            .filter(|p| policy.allows(p))
            .map(str::to_owned)
            .collect()
    }

    /// Sets the grant in force and derives the feature sets it leaves enabled.
    pub(super) fn set_granted(&mut self, granted: Vec<String>) {
        self.granted = granted;
        self.rederive();
    }

    /// Derives the feature sets again (after a grant or a manifest change).
    pub(super) fn rederive(&mut self) {
        let policy = Policy {
            grant: self.grant(),
            enabled: None,
            disabled: Vec::new(),
        };
        self.derivation = match &self.manifest {
            Some(m) => grant::derive(m, &policy),
            None => Derivation::default(),
        };
    }

    /// Falls back to plain MCP: nothing is granted, no push or hint counts.
    pub(super) fn fall_back_to_mcp(&mut self) {
        self.mcp_only = true;
        self.receipt = None;
        self.set_granted(Vec::new());
    }
}

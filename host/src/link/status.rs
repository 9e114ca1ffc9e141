//! A snapshot of a link, for the host's views and for tests.

use super::core::era::Era;
use super::core::error::DisconnectReason;
use super::core::phase::LinkPhase;
use super::lifecycle::Live;
use mcpl_protocol::mcp::{InitializeResult, Tool};
use mcpl_protocol::mcpl::{FeatureSetsUpdateResult, McplManifest};
use mcpl_transport::ConnectionInfo;

/// Where a link is and what it knows of the current connection.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkStatus {
    /// The server's name in this host.
    pub name: String,
    /// The lifecycle state.
    pub phase: LinkPhase,
    /// The latest connection's epoch (0 before the first).
    pub epoch: u64,
    /// Failed attempts since the last successful handshake.
    pub failed_attempts: u32,
    /// The current connection, once its `initialize` result was accepted.
    pub session: Option<SessionInfo>,
    /// Why the last connection ended, if one did.
    pub last_disconnect: Option<DisconnectReason>,
}

/// The current connection.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// Its epoch.
    pub epoch: u64,
    /// The transport.
    pub info: ConnectionInfo,
    /// The server's `initialize` result: its info, version and capabilities.
    pub init: InitializeResult,
    /// The `featureSets/update` receipt, once read.
    pub receipt: Option<FeatureSetsUpdateResult>,
    /// The current manifest (from `initialize`, or the latest re-read).
    pub manifest: Option<McplManifest>,
    /// The `effectiveCapabilities` granted (empty for a plain MCP server).
    pub granted: Vec<String>,
    /// The tools of the last completed `tools/list`.
    pub tools: Vec<Tool>,
    /// Requests in flight.
    pub in_flight: usize,
    /// The era the session speaks (a modern server's `init` is what its `server/discover`
    /// said, with the version this host sends).
    pub era: Era,
}

impl SessionInfo {
    pub(super) fn of(live: &Live) -> Option<Self> {
        let s = live.session()?;
        Some(SessionInfo {
            epoch: live.epoch(),
            info: live.info.clone(),
            init: InitializeResult::clone(&s.init),
            receipt: s.receipt.clone(),
            manifest: s.manifest().cloned(),
            granted: s.granted.clone(),
            tools: s.tools.to_vec(),
            in_flight: live.core.pending.awaited_len(),
            era: s.era,
        })
    }
}

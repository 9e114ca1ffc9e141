//! One connection's handshake stage and what the server said about itself on it: the
//! connection's one phase enum ([`Stage`]) and its [`Session`] (the `initialize` result
//! or a modern `server/discover`, the receipt, the manifest, the grant in force and the
//! feature sets it leaves enabled, the tools listed, the change stream).
//!
//! The grant rules that decide on a session are in `grant.rs`.

use super::era::Era;
use mcpl_protocol::grant::{self, Derivation, Grant, Policy};
use mcpl_protocol::mcp::{InitializeResult, Tool};
use mcpl_protocol::mcpl::{FeatureSetsUpdateResult, McplManifest};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest a listing is taken as fresh, whatever its `ttlMs` says: a day.
const TTL_CAP_MS: u64 = 24 * 60 * 60 * 1000;

/// How far a connection's handshake has come.
pub enum Stage {
    AwaitingDiscoverResult,
    AwaitingInitializeResult,
    AwaitingGrantReceipt(Session),
    Ready(Session),
}

/// What the server said about itself on this connection, and the policy in force on it.
#[derive(Debug, Clone)]
pub struct Session {
    /// Shared with the events that tell of it, and across connections while the server's
    /// answer stays the same (`host/src/link/handshake.rs`, issue #42).
    pub init: Arc<InitializeResult>,
    /// The `featureSets/update` receipt (none for a plain MCP server).
    pub receipt: Option<FeatureSetsUpdateResult>,
    /// The manifest as last re-read (`mcpl/manifest`, §17.5); until one, the one in
    /// `init` stands, not a copy of it (issue #42: a copy per host) — see
    /// [`Session::manifest`].
    reread: Option<McplManifest>,
    /// The grant in force: the concrete paths sent in `effectiveCapabilities`, narrowed at
    /// once by a revocation, widened only once the server's receipt came (SPEC §6.7).
    /// Empty for a plain MCP server and before the initial policy's receipt (§5.3).
    pub granted: Vec<String>,
    /// The feature sets that grant leaves enabled, in this host's reading of the manifest.
    pub derivation: Derivation,
    /// The server speaks MCPL but its policy exchange failed: it is served as plain MCP
    /// (SPEC §3.2, §6.7; RFC-002 §12).
    pub mcp_only: bool,
    /// The number of the last policy request sent; a receipt for an older one is stale.
    pub policy_seq: u64,
    /// The feature sets named in the last policy's `disabled` (those this host reads as
    /// invalid, so the server knows not to use them).
    pub disabled_sent: Vec<String>,
    pub tools: Arc<[Tool]>,
    /// True once a `tools/list` completed on this connection.
    pub tools_listed: bool,
    /// The era the session speaks.
    pub era: Era,
    /// A modern session's `subscriptions/listen` for tool list changes.
    pub listen: Listen,
    /// Until when the last listing is fresh, by its `ttlMs` (MCP 2026-07-28
    /// `server/utilities/caching.md`); `None` when it named none.
    pub tools_fresh_until: Option<Instant>,
}

/// A modern session's change stream (MCP 2026-07-28 `basic/patterns/subscriptions.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listen {
    /// None: the server offers none, refused it, or ended it; a stale tools list is read
    /// again after a call (`refresh.rs`).
    Off,
    /// `subscriptions/listen` sent, not yet acknowledged.
    Opening,
    /// Acknowledged with `toolsListChanged`: list changes come as notifications.
    Open,
}

impl Session {
    pub fn new(init: impl Into<Arc<InitializeResult>>) -> Self {
        Session {
            init: init.into(),
            receipt: None,
            reread: None,
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
    pub fn modern(init: impl Into<Arc<InitializeResult>>) -> Self {
        let mut session = Session::new(init);
        session.era = Era::Modern;
        // Under the stateless profile (the discovery's `mcpl/core` taken as the
        // manifest, `era.rs`) the server is served MCPL; else as plain MCP.
        session.mcp_only = session.manifest().is_none();
        session
    }

    /// A listing completed at `now` with `tools`, fresh for `ttl_ms` (capped at a day) when
    /// it named one. True when the list differs from the last one on this connection, or
    /// is its first.
    pub fn record_listing(
        &mut self,
        tools: Arc<[Tool]>,
        ttl_ms: Option<u64>,
        now: Instant,
    ) -> bool {
        let changed = !self.tools_listed || self.tools != tools;
        self.tools = tools;
        self.tools_listed = true;
        self.tools_fresh_until = ttl_ms.map(|ms| now + Duration::from_millis(ms.min(TTL_CAP_MS)));
        changed
    }

    /// Whether the tools list is stale at `now` with no change stream to tell of changes:
    /// then a completed `tools/call` reads it again (`paging.rs`) **\[project\]**.
    pub fn tools_stale(&self, now: Instant) -> bool {
        self.listen != Listen::Open && self.tools_fresh_until.is_some_and(|t| now >= t)
    }

    /// True when MCPL is in force: the server advertised `experimental.mcpl` and its policy
    /// exchange did not fail.
    pub fn speaks_mcpl(&self) -> bool {
        self.init.capabilities.mcpl().is_some() && !self.mcp_only
    }

    /// The grant in force.
    pub fn grant(&self) -> Grant {
        Grant::new(self.granted.iter().cloned())
    }

    /// What this host grants the server as its manifest now reads: the server's
    /// advertisement intersected with the host's `policy` (SPEC §5.4), as concrete paths.
    pub fn intended_grant(&self, policy: &Grant) -> Vec<String> {
        let Some(manifest) = self.manifest() else {
            return Vec::new();
        };
        grant::advertised(manifest, self.init.capabilities.tools.is_some())
            .into_iter()
            .filter(|p| policy.allows(p))
            .map(str::to_owned)
            .collect()
    }

    /// The current manifest: from `initialize`, replaced on each re-read.
    pub fn manifest(&self) -> Option<&McplManifest> {
        self.reread
            .as_ref()
            .or_else(|| self.init.capabilities.mcpl())
    }

    /// The manifest was re-read: it is the current one from now on.
    pub fn set_manifest(&mut self, manifest: McplManifest) {
        self.reread = Some(manifest);
    }

    /// Sets the grant in force and derives the feature sets it leaves enabled.
    pub fn set_granted(&mut self, granted: Vec<String>) {
        self.granted = granted;
        self.rederive();
    }

    /// Derives the feature sets again (after a grant or a manifest change).
    pub fn rederive(&mut self) {
        let policy = Policy {
            grant: self.grant(),
            enabled: None,
            disabled: Vec::new(),
        };
        self.derivation = match self.manifest() {
            Some(m) => grant::derive(m, &policy),
            None => Derivation::default(),
        };
    }

    /// Falls back to plain MCP: nothing is granted, no push or hint counts.
    pub fn fall_back_to_mcp(&mut self) {
        self.mcp_only = true;
        self.receipt = None;
        self.set_granted(Vec::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue38_02_a_listing_is_fresh_for_its_ttl_unless_changes_are_told() {
        let init: InitializeResult = serde_json::from_value(serde_json::json!({
            "protocolVersion": "2026-07-28", "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"}
        }))
        .unwrap();
        let mut s = Session::modern(init);
        let t0 = Instant::now();
        let tools: Arc<[Tool]> = Arc::from(Vec::new());
        assert!(s.record_listing(tools.clone(), Some(1000), t0), "the first");
        assert!(!s.record_listing(tools.clone(), Some(1000), t0), "the same");
        assert!(!s.tools_stale(t0 + Duration::from_millis(999)));
        assert!(s.tools_stale(t0 + Duration::from_millis(1000)));
        s.listen = Listen::Open;
        assert!(
            !s.tools_stale(t0 + Duration::from_secs(60)),
            "changes are told"
        );
        s.listen = Listen::Off;
        s.record_listing(tools, None, t0);
        assert!(!s.tools_stale(t0 + Duration::from_secs(60)), "no ttl named");
    }
}

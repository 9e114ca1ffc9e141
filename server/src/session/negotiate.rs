//! The lifecycle requests a session answers itself: `initialize`, `featureSets/update`
//! and `mcpl/manifest` (SPEC §3, §6, §17), each through the pure `core::lifecycle`.

use super::SessionActor;
use crate::core::lifecycle::LifecycleError;
use crate::receipt::receipt;
use mcpl_protocol::jsonrpc::ErrorObject;
use mcpl_protocol::mcp::{
    Empty, InitializeParams, InitializeResult, LOGGING_CAPABILITY, ServerCapabilities,
    ServerExperimental, ToolsCapability,
};
use mcpl_protocol::mcpl::{FeatureSetsUpdateParams, FeatureSetsUpdateResult, McplManifest};

impl SessionActor {
    pub(super) fn initialize(
        &mut self,
        params: InitializeParams,
    ) -> Result<InitializeResult, ErrorObject> {
        let negotiated = self
            .lifecycle
            .on_initialize(&params)
            .map_err(LifecycleError::to_error)?;
        let version = negotiated.protocol_version;
        tracing::info!(session = %self.id, client = %negotiated.client_info.name, version, host = ?negotiated.host, "initialized");
        let shown = self.current_view();
        self.shown = Some(shown.clone());
        let mut other = serde_json::Map::new();
        if self.offers_logging() {
            // MCP "Utilities / Logging": a server that sends log messages declares `logging`.
            other.insert(LOGGING_CAPABILITY.to_owned(), serde_json::json!({}));
        }
        Ok(InitializeResult {
            protocol_version: version.to_owned(),
            capabilities: ServerCapabilities {
                // Sent when a manifest change changes the tools a host is shown (§4.1).
                tools: Some(ToolsCapability {
                    list_changed: Some(true),
                }),
                experimental: Some(ServerExperimental {
                    mcpl: Some(shown),
                    other: Default::default(),
                }),
                other,
            },
            server_info: self.shared.info.clone(),
            instructions: self.shared.instructions.clone(),
            meta: None,
        })
    }

    /// `featureSets/update` as a request (SPEC §5.3, §6.7): the policy, answered with the
    /// receipt it leads to; a malformed one is refused (§5.4).
    pub(super) fn feature_sets_update(
        &mut self,
        grant: FeatureSetsUpdateParams,
    ) -> Result<FeatureSetsUpdateResult, ErrorObject> {
        let granted = grant.effective_capabilities.clone();
        self.lifecycle.on_grant(grant).map_err(|e| {
            tracing::info!(session = %self.id, error = %e, "policy refused");
            e.to_error()
        })?;
        let policy = self.lifecycle.policy().expect("just accepted");
        let result = receipt(&self.current_view(), policy);
        tracing::info!(session = %self.id, ?granted, mode = ?result.mode, "policy received");
        Ok(result)
    }

    /// `mcpl/manifest` (SPEC §17.4): the manifest object itself, as `initialize` shows it.
    pub(super) fn get_manifest(&mut self, _: Empty) -> Result<McplManifest, ErrorObject> {
        let manifest = self.current_view();
        self.shown = Some(manifest.clone());
        Ok(manifest)
    }
}

//! The handshake: `initialize`, `notifications/initialized`, then — only to a server that
//! speaks MCPL — `featureSets/update` as a request carrying the grant (SPEC §5.3, spec §2).

use super::actor::ServerLink;
use super::error::{DisconnectReason, LinkError};
use super::events::LinkEvent;
use super::lifecycle::{Session, Stage};
use super::pending::Waiter;
use super::requests::decode;
use super::tap::TapEvent;
use actix::prelude::*;
use mcpl_protocol::mcp::{
    ClientCapabilities, ClientExperimental, Empty, InitializeParams, InitializeResult,
    LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, is_supported_version,
};
use mcpl_protocol::mcpl::{
    FeatureSetsUpdateParams, FeatureSetsUpdateResult, HostMcplCapabilities, MCPL_VERSION,
};
use mcpl_protocol::method::{FeatureSetsUpdate, Initialize, Initialized, Method};
use serde_json::{Map, Value};
use tracing::info;

/// The receipt's fallback under which a server that refused the grant goes on as plain MCP.
const FALLBACK_MCP_ONLY: &str = "mcp-only";

impl ServerLink {
    /// What this host says about itself (spec §2: `toolHints` as configured).
    fn initialize_params(&self) -> InitializeParams {
        let mcpl = HostMcplCapabilities {
            version: MCPL_VERSION.to_owned(),
            push_events: Some(true),
            tool_hints: Some(self.config.advertise_tool_hints),
            feature_sets: None,
            other: Map::new(),
        };
        InitializeParams {
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            capabilities: ClientCapabilities {
                experimental: Some(ClientExperimental {
                    mcpl: Some(mcpl),
                    other: Map::new(),
                }),
                other: Map::new(),
            },
            client_info: self.config.client_info.clone(),
            meta: None,
        }
    }

    pub(super) fn send_initialize(&mut self, ctx: &mut Context<Self>) {
        let params = self.initialize_params();
        self.send_request::<Initialize>(&params, Waiter::Initialize, None, ctx);
    }

    pub(super) fn on_initialize_result(
        &mut self,
        outcome: Result<Value, LinkError>,
        ctx: &mut Context<Self>,
    ) {
        let init: InitializeResult = match outcome.and_then(|v| decode(Initialize::NAME, v)) {
            Ok(init) => init,
            Err(e) => return self.disconnect(handshake_failure(Initialize::NAME, e), ctx),
        };
        if !is_supported_version(&init.protocol_version) {
            let reason = DisconnectReason::UnsupportedProtocolVersion {
                version: init.protocol_version,
                supported: &SUPPORTED_PROTOCOL_VERSIONS,
            };
            return self.disconnect(reason, ctx);
        }
        let Some(live) = self.lifecycle.live() else {
            return;
        };
        info!(
            link = %self.config.name, epoch = live.epoch, server = %init.server_info.name,
            version = %init.protocol_version, mcpl = init.capabilities.mcpl().is_some(), "initialized"
        );
        // Per-connection state starts here, before anything read after this result.
        let event = TapEvent::Connected {
            epoch: live.epoch,
            info: live.info.clone(),
            init: Box::new(init.clone()),
        };
        self.tap(&event);
        self.send_notification::<Initialized>(&Empty::default());
        let mut session = Session::new(init);
        if !session.speaks_mcpl() {
            return self.become_ready(session, ctx);
        }
        session.granted = self.config.grant.clone();
        let params = FeatureSetsUpdateParams {
            effective_capabilities: session.granted.clone(),
            ..Default::default()
        };
        if let Some(live) = self.lifecycle.live_mut() {
            live.stage = Stage::AwaitingGrantReceipt(session);
        }
        self.send_request::<FeatureSetsUpdate>(&params, Waiter::GrantReceipt, None, ctx);
    }

    pub(super) fn on_grant_receipt(
        &mut self,
        outcome: Result<Value, LinkError>,
        ctx: &mut Context<Self>,
    ) {
        let receipt: FeatureSetsUpdateResult = match outcome
            .and_then(|v| decode(FeatureSetsUpdate::NAME, v))
        {
            Ok(r) => r,
            Err(e) => return self.disconnect(handshake_failure(FeatureSetsUpdate::NAME, e), ctx),
        };
        let mcp_only = receipt.fallback.as_deref() == Some(FALLBACK_MCP_ONLY);
        if !receipt.accepted && !mcp_only {
            let reason = DisconnectReason::GrantRefused {
                reason: receipt.reason,
                fallback: receipt.fallback,
            };
            return self.disconnect(reason, ctx);
        }
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let Stage::AwaitingGrantReceipt(mut session) =
            std::mem::replace(&mut live.stage, Stage::AwaitingInitializeResult)
        else {
            return;
        };
        if !receipt.accepted {
            // The server goes on as plain MCP: nothing was granted after all.
            session.granted.clear();
        }
        session.receipt = Some(receipt);
        self.become_ready(session, ctx);
    }

    fn become_ready(&mut self, session: Session, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let epoch = live.epoch;
        let lists_tools = session.init.capabilities.tools.is_some();
        let event = LinkEvent::Connected {
            epoch,
            init: session.init.clone(),
            receipt: session.receipt.clone(),
        };
        live.stage = Stage::Ready(session);
        self.on_ready();
        info!(link = %self.config.name, epoch, "ready");
        self.emit(event);
        if lists_tools {
            self.refresh_tools(None, false, ctx);
        }
    }
}

/// Why a handshake request's failure ends the connection.
fn handshake_failure(method: &'static str, error: LinkError) -> DisconnectReason {
    match error {
        LinkError::Server { error, .. } => DisconnectReason::HandshakeRejected { method, error },
        LinkError::Timeout { after, .. } => DisconnectReason::HandshakeTimeout { method, after },
        LinkError::MalformedResult { detail, .. } | LinkError::MalformedResponse { detail, .. } => {
            DisconnectReason::HandshakeMalformed { method, detail }
        }
        LinkError::Disconnected { reason, .. } => reason,
        // Nothing else reaches a handshake request's waiter while its connection lives.
        _ => DisconnectReason::Closed,
    }
}

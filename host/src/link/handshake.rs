//! The handshake: `initialize`, `notifications/initialized`, then — only to a server that
//! speaks MCPL — the initial policy, `featureSets/update` as a request (SPEC §5.3); and
//! the policy again whenever the server's manifest changes it (§17.5).
//!
//! **The grant** is the server's advertisement, as this host reads it, intersected with
//! the host's own policy ([`super::LinkConfig::grant`], patterns allowed), sent as concrete
//! paths so no server can read a pattern more widely than meant (SPEC §5.4). Feature sets
//! this host reads as invalid are named in `disabled`, so the server does not use them.
//!
//! **Until the initial receipt**, nothing is granted: a push is refused (§5.3). A receipt
//! that refuses with `fallback: "close"` ends the connection; one refusing otherwise, an
//! error answer, a malformed receipt, or no answer within the request timeout leaves the
//! server as a plain MCP server (SPEC §3.2, §6.7; RFC-002 §12): its tools are kept, MCPL
//! is off.
//!
//! **A later policy** (the manifest changed what is advertised, SPEC §17.5): a revocation
//! takes effect at once, before the request is sent; an expansion only once its receipt
//! comes, and never if none comes (§6.7).

use super::actor::ServerLink;
use super::core::era::Era;
use super::core::error::LinkError;
use super::core::grant::{Granting, Receipt, initial_unanswered};
use super::core::handshake::read_initialize;
use super::core::session::{Session, Stage};
use super::events::LinkEvent;
use super::pending::Waiter;
use super::tap::TapEvent;
use actix::prelude::*;
use mcpl_protocol::grant::Grant;
use mcpl_protocol::jsonrpc::RawValue;
use mcpl_protocol::mcp::{
    ClientCapabilities, ClientExperimental, Empty, InitializeParams, LATEST_PROTOCOL_VERSION,
};
use mcpl_protocol::mcpl::{FeatureSetsUpdateParams, HostMcplCapabilities, MCPL_VERSION};
use mcpl_protocol::method::{FeatureSetsUpdate, Initialize, Initialized};
use serde_json::Map;
use std::hash::BuildHasher;
use std::sync::Arc;
use tracing::{info, warn};

impl ServerLink {
    /// What this host says about itself (SPEC §5.2: `featureSets` managed; spec §2:
    /// `toolHints` as configured).
    fn initialize_params(&self) -> InitializeParams {
        let mcpl = HostMcplCapabilities {
            version: MCPL_VERSION.to_owned(),
            push_events: Some(true),
            tool_hints: Some(self.config.advertise_tool_hints),
            feature_sets: Some(true),
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
        let wait = Some(self.config.handshake_timeout);
        self.send_request::<Initialize>(&params, Waiter::Initialize, wait, ctx);
    }

    pub(super) fn on_initialize_result(
        &mut self,
        outcome: Result<Box<RawValue>, LinkError>,
        ctx: &mut Context<Self>,
    ) {
        // The same answer as on the last connection (issue #42: after a mass drop every
        // host reconnects to a server whose manifest did not change) is the result read
        // then: reading it again — the manifest decoded liberally and its revision digested
        // (SPEC §17.2) — was the larger part of a host's work per reconnection.
        let key = outcome
            .as_ref()
            .ok()
            .map(|raw| self.known_init.hasher.hash_one(raw.get()));
        let known = match (&self.known_init.last, key) {
            (Some((k, init)), Some(key)) if *k == key => Some(init.clone()),
            _ => None,
        };
        let read = match known {
            Some(init) => Ok(init),
            None => read_initialize(outcome).map(Arc::new),
        };
        let init = match read {
            Ok(init) => {
                if let Some(key) = key {
                    self.known_init.last = Some((key, init.clone()));
                }
                init
            }
            Err(reason) => {
                // A server remembered as legacy that refuses `initialize` is probed afresh
                // next time (era.rs).
                if self.found_era == Some(Era::Legacy) {
                    self.found_era = None;
                }
                return self.disconnect(reason, ctx);
            }
        };
        let Some(live) = self.lifecycle.live() else {
            return;
        };
        info!(
            link = %self.config.name, epoch = live.epoch(), server = %init.server_info.name,
            version = %init.protocol_version, mcpl = init.capabilities.mcpl().is_some(),
            "connected: the server answered initialize"
        );
        if let Some(manifest) = init.capabilities.mcpl() {
            for d in &manifest.diagnostics {
                warn!(link = %self.config.name, diagnostic = %d, "the server's manifest");
            }
        }
        // Per-connection state starts here, before anything read after this result.
        let event = TapEvent::Connected {
            epoch: live.epoch(),
            info: live.info.clone(),
            init: init.clone(),
        };
        self.tap(&event);
        self.send_notification::<Initialized>(&Empty::default());
        let mut session = Session::new(init);
        if !session.speaks_mcpl() {
            return self.become_ready(session, ctx);
        }
        let (params, proposed) = self.policy_for(&mut session);
        if let Some(live) = self.lifecycle.live_mut() {
            live.core.stage = Stage::AwaitingGrantReceipt(session);
        }
        let wait = Some(self.config.handshake_timeout);
        self.send_request::<FeatureSetsUpdate>(&params, Waiter::GrantReceipt(proposed), wait, ctx);
    }

    /// The policy request for `session`'s manifest as it now reads, and the grant in it
    /// (`host-core/src/link/grant.rs`).
    pub(super) fn policy_for(
        &self,
        session: &mut Session,
    ) -> (FeatureSetsUpdateParams, Vec<String>) {
        session.policy(&Grant::new(self.config.grant.iter().cloned()))
    }

    pub(super) fn on_grant_receipt(
        &mut self,
        proposed: Vec<String>,
        receipt: Receipt,
        ctx: &mut Context<Self>,
    ) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let Stage::AwaitingGrantReceipt(mut session) =
            std::mem::replace(&mut live.core.stage, Stage::AwaitingInitializeResult)
        else {
            return;
        };
        // RFC-002 §12, issue #42: an unanswered policy is tried again on a new connection a
        // few times in a row, then the server is served as plain MCP.
        let (receipt, in_row) = initial_unanswered(receipt, self.policy_unanswered);
        self.policy_unanswered = in_row;
        match session.initial_receipt(proposed, receipt) {
            Granting::InForce | Granting::Kept(_) => {}
            Granting::FellBack(why) => {
                // SPEC §3.2, §6.7: no usable policy exchange; MCPL is off, MCP goes on.
                warn!(link = %self.config.name, %why, "featureSets/update failed; serving the server as plain MCP");
            }
            Granting::End(reason) => return self.disconnect(reason, ctx),
            Granting::Ignored => {
                live.core.stage = Stage::AwaitingGrantReceipt(session);
                return;
            }
        }
        self.become_ready(session, ctx);
    }

    pub(super) fn become_ready(&mut self, session: Session, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let epoch = live.epoch();
        let lists_tools = session.init.capabilities.tools.is_some();
        let event = LinkEvent::Connected {
            epoch,
            init: session.init.clone(),
            receipt: session.receipt.clone().map(Box::new),
            granted: session.granted.clone(),
            mcpl: session.speaks_mcpl(),
        };
        live.core.stage = Stage::Ready(session);
        self.on_ready(ctx);
        info!(link = %self.config.name, epoch, "ready");
        self.emit(event);
        if lists_tools {
            self.refresh_tools(None, false, ctx);
        }
    }
}

//! The feature-set policy after the handshake (SPEC §6): a renegotiation when the host's
//! push policy or the manifest changes, and its receipt.

use super::actor::ServerLink;
use super::core::decode::decode;
use super::error::{DisconnectReason, LinkError};
use super::events::LinkEvent;
use super::handshake::FALLBACK_CLOSE;
use super::pending::Waiter;
use actix::prelude::*;
use mcpl_protocol::grant::Grant;
use mcpl_protocol::jsonrpc::RawValue;
use mcpl_protocol::mcpl::FeatureSetsUpdateResult;
use mcpl_protocol::method::{FeatureSetsUpdate, Method};
use tracing::warn;

impl ServerLink {
    /// The manifest was re-read (SPEC §17.5): derive the feature sets again and, when the
    /// grant or the invalid sets changed, send the policy again — revoking at once,
    /// widening on the receipt (§6.7).
    pub(super) fn renegotiate(&mut self, ctx: &mut Context<Self>) {
        let Some(live) = self.lifecycle.live_mut().filter(|l| l.is_ready()) else {
            return;
        };
        let epoch = live.epoch();
        let Some(mut session) = live.session_mut().filter(|s| s.speaks_mcpl()).cloned() else {
            return;
        };
        session.rederive();
        let policy = Grant::new(self.config.grant.iter().cloned());
        let intended = session.intended_grant(&policy);
        let invalid: Vec<String> = session
            .manifest
            .as_ref()
            .map(|m| m.invalid_feature_sets.keys().cloned().collect())
            .unwrap_or_default();
        let unchanged = intended == session.granted && invalid == session.disabled_sent;
        let kept: Vec<String> = session
            .granted
            .iter()
            .filter(|p| intended.contains(p))
            .cloned()
            .collect();
        let revoked = kept.len() != session.granted.len();
        if revoked {
            // Host-first: the narrower grant is in force before anyone is told.
            session.set_granted(kept);
        }
        let request = (!unchanged).then(|| self.policy_for(&mut session));
        let granted = session.granted.clone();
        if let Some(s) = self.lifecycle.live_mut().and_then(|l| l.session_mut()) {
            *s = session.clone();
        }
        if revoked {
            self.emit(LinkEvent::Granted { epoch, granted });
        }
        if let Some((params, proposed)) = request {
            let waiter = Waiter::PolicyReceipt(session.policy_seq, proposed);
            self.send_request::<FeatureSetsUpdate>(&params, waiter, None, ctx);
        }
    }

    pub(super) fn on_policy_receipt(
        &mut self,
        seq: u64,
        proposed: Vec<String>,
        outcome: Result<Box<RawValue>, LinkError>,
        ctx: &mut Context<Self>,
    ) {
        let receipt =
            outcome.and_then(|r| decode::<FeatureSetsUpdateResult>(FeatureSetsUpdate::NAME, &r));
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let epoch = live.epoch();
        let Some(session) = live.session_mut().filter(|s| s.policy_seq == seq) else {
            return; // a newer policy was sent since
        };
        match receipt {
            Ok(r) if r.accepted => {
                session.set_granted(proposed);
                session.receipt = Some(r);
                let granted = session.granted.clone();
                self.emit(LinkEvent::Granted { epoch, granted });
            }
            Ok(r) if r.fallback.as_deref() == Some(FALLBACK_CLOSE) => {
                let reason = DisconnectReason::GrantRefused {
                    reason: r.reason,
                    fallback: r.fallback,
                };
                self.disconnect(reason, ctx);
            }
            Ok(r) => {
                warn!(link = %self.config.name, reason = ?r.reason, "the server refused the new policy; serving it as plain MCP");
                session.fall_back_to_mcp();
                self.emit(LinkEvent::Granted {
                    epoch,
                    granted: Vec::new(),
                });
            }
            // An unanswered expansion does not activate; a revocation already did.
            Err(e) => {
                warn!(link = %self.config.name, error = %e, "featureSets/update after a manifest change failed")
            }
        }
    }
}

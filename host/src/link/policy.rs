//! The feature-set policy after the handshake (SPEC §6): a renegotiation when the host's
//! push policy or the manifest changes, and its receipt.

use super::actor::ServerLink;
use super::core::grant::{Granting, Receipt, Renegotiation};
use super::events::LinkEvent;
use super::pending::Waiter;
use actix::prelude::*;
use mcpl_protocol::grant::Grant;
use mcpl_protocol::method::FeatureSetsUpdate;
use tracing::warn;

impl ServerLink {
    /// The manifest was re-read (SPEC §17.5): derive the feature sets again and, when the
    /// grant or the invalid sets changed, send the policy again — revoking at once,
    /// widening on the receipt (§6.7).
    pub(super) fn renegotiate(&mut self, ctx: &mut Context<Self>) {
        let policy = Grant::new(self.config.grant.iter().cloned());
        let Some(live) = self.lifecycle.live_mut().filter(|l| l.is_ready()) else {
            return;
        };
        let epoch = live.epoch();
        let Some(session) = live.session_mut().filter(|s| s.speaks_mcpl()) else {
            return;
        };
        let Renegotiation { revoked, request } = session.renegotiate(&policy);
        let (granted, seq) = (session.granted.clone(), session.policy_seq);
        if revoked {
            self.emit(LinkEvent::Granted { epoch, granted });
        }
        if let Some((params, proposed)) = request {
            let waiter = Waiter::PolicyReceipt(seq, proposed);
            self.send_request::<FeatureSetsUpdate>(&params, waiter, None, ctx);
        }
    }

    pub(super) fn on_policy_receipt(
        &mut self,
        seq: u64,
        proposed: Vec<String>,
        receipt: Receipt,
        ctx: &mut Context<Self>,
    ) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let epoch = live.epoch();
        let Some(session) = live.session_mut() else {
            return;
        };
        match session.later_receipt(seq, proposed, receipt) {
            Granting::InForce => {
                let granted = session.granted.clone();
                self.emit(LinkEvent::Granted { epoch, granted });
            }
            Granting::End(reason) => self.disconnect(reason, ctx),
            Granting::FellBack(reason) => {
                warn!(link = %self.config.name, %reason, "the server refused the new policy; serving it as plain MCP");
                self.emit(LinkEvent::Granted {
                    epoch,
                    granted: Vec::new(),
                });
            }
            Granting::Kept(error) => {
                warn!(link = %self.config.name, %error, "featureSets/update after a manifest change failed")
            }
            Granting::Ignored => {}
        }
    }
}

//! Re-reading the MCPL manifest (`mcpl/manifest`, after `mcpl/manifestChanged`): one read
//! at a time, never more often than the configured interval (SPEC §17.8), announcements in
//! between coalesced and counted.

use super::actor::ServerLink;
use super::core::decode::{decode, unwrap_legacy};
use super::core::error::LinkError;
use super::core::paging::ManifestStep;
use super::events::LinkEvent;
use super::pending::Waiter;
use super::requests::now;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::RawValue;
use mcpl_protocol::mcp::Empty;
use mcpl_protocol::mcpl::McplManifest;
use mcpl_protocol::method::{GetManifest, Method};
use tracing::warn;

impl ServerLink {
    /// Re-reads the manifest, now or once the read under way is done — and never more
    /// often than once per [`super::LinkConfig::manifest_min_interval`] (SPEC §17.8; the
    /// core's `Refresh::want_manifest` decides).
    pub(super) fn refresh_manifest(&mut self, ctx: &mut Context<Self>) {
        let min = self.config.manifest_min_interval;
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let epoch = live.epoch();
        match live.core.refresh.want_manifest(min, now()) {
            ManifestStep::Coalesced => {}
            ManifestStep::Defer(wait) => {
                ctx.run_later(wait, move |act, ctx| {
                    if let Some(live) = act.lifecycle.live_mut().filter(|l| l.epoch() == epoch) {
                        live.core.refresh.manifest_timer();
                        act.refresh_manifest(ctx);
                    }
                });
            }
            ManifestStep::Read { coalesced } => {
                if coalesced > 0 {
                    mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, coalesced,
                        "the server announced manifest changes faster than this host reads them (SPEC §17.8); coalesced");
                }
                self.send_request::<GetManifest>(&Empty::default(), Waiter::Manifest, None, ctx);
            }
        }
    }

    pub(super) fn on_manifest(
        &mut self,
        outcome: Result<Box<RawValue>, LinkError>,
        ctx: &mut Context<Self>,
    ) {
        let read =
            outcome.and_then(|r| decode::<McplManifest>(GetManifest::NAME, &unwrap_legacy(r)));
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let again = live.core.refresh.manifest_read();
        let epoch = live.epoch();
        match read {
            Ok(manifest) => {
                for d in &manifest.diagnostics {
                    mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, diagnostic = %d, "the server's manifest");
                }
                if let Some(session) = self.lifecycle.live_mut().and_then(|l| l.session_mut()) {
                    session.set_manifest(manifest.clone());
                }
                // SPEC §17.5: validate, diff, apply §6.7's consequences.
                self.renegotiate(ctx);
                self.emit(LinkEvent::ManifestUpdated { epoch, manifest });
            }
            // §17.5: a manifest that does not parse teaches nothing; the last one stands.
            Err(e) => {
                warn!(link = %self.config.name, error = %e, "mcpl/manifest failed; keeping the manifest read before")
            }
        }
        if again {
            self.refresh_manifest(ctx);
        }
    }
}

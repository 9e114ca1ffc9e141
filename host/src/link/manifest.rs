//! Re-reading the MCPL manifest (`mcpl/manifest`, after `mcpl/manifestChanged`): one read
//! at a time, never more often than the configured interval (SPEC §17.8), announcements in
//! between coalesced and counted.

use super::actor::ServerLink;
use super::core::decode::decode;
use super::core::decode::unwrap_legacy;
use super::error::LinkError;
use super::events::LinkEvent;
use super::pending::Waiter;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::RawValue;
use mcpl_protocol::mcp::Empty;
use mcpl_protocol::mcpl::McplManifest;
use mcpl_protocol::method::{GetManifest, Method};
use tracing::warn;

impl ServerLink {
    /// Re-reads the manifest, now or once the read under way is done — and never more
    /// often than once per [`super::LinkConfig::manifest_min_interval`] (SPEC §17.8: the
    /// limiter is the host's). Announcements in between are coalesced into one read at the
    /// end of the interval, and counted.
    pub(super) fn refresh_manifest(&mut self, ctx: &mut Context<Self>) {
        let min = self.config.manifest_min_interval;
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        let epoch = live.epoch();
        let r = &mut live.core.refresh;
        if r.manifest_in_flight {
            r.manifest_again = true;
            r.manifest_coalesced += 1;
            return;
        }
        let now = std::time::Instant::now();
        let wait = r
            .manifest_last
            .map(|last| min.saturating_sub(now.saturating_duration_since(last)))
            .filter(|w| !w.is_zero());
        if let Some(wait) = wait {
            r.manifest_coalesced += 1;
            if !std::mem::replace(&mut r.manifest_deferred, true) {
                ctx.run_later(wait, move |act, ctx| {
                    if let Some(live) = act.lifecycle.live_mut().filter(|l| l.epoch() == epoch) {
                        live.core.refresh.manifest_deferred = false;
                        live.core.refresh.manifest_last = None;
                        act.refresh_manifest(ctx);
                    }
                });
            }
            return;
        }
        let coalesced = std::mem::take(&mut r.manifest_coalesced);
        r.manifest_in_flight = true;
        r.manifest_last = Some(now);
        if coalesced > 0 {
            mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, coalesced,
                "the server announced manifest changes faster than this host reads them (SPEC §17.8); coalesced");
        }
        self.send_request::<GetManifest>(&Empty::default(), Waiter::Manifest, None, ctx);
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
        live.core.refresh.manifest_in_flight = false;
        let again = std::mem::take(&mut live.core.refresh.manifest_again);
        let epoch = live.epoch();
        match read {
            Ok(manifest) => {
                for d in &manifest.diagnostics {
                    mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name, diagnostic = %d, "the server's manifest");
                }
                if let Some(session) = self.lifecycle.live_mut().and_then(|l| l.session_mut()) {
                    session.manifest = Some(manifest.clone());
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

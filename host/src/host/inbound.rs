//! What the links tell the Host, in each link's order: the tap's reads (every hint
//! carrier is applied when read, §5.2) and the link's events (handshake done, listings,
//! manifests, decided pushes), each handed to the core as it arrives.

use super::actor::{Host, now};
use super::messages::{FromLink, Linked};
use crate::link::{LinkEvent, TapEvent, cause};
use actix::prelude::*;

/// Whether the Host reads a tapped event: all but a response to a request whose result
/// the core does not read as read ([`crate::state::RESULTS_READ`]) — a `tools/list` page,
/// which comes again whole in `ToolsListed`, is not copied into the mailbox for nothing.
pub(super) fn wanted(event: &TapEvent) -> bool {
    match event {
        TapEvent::Read(read) => {
            crate::state::wants_read(&read.message, read.answers.as_ref().map(|a| a.method))
        }
        _ => true,
    }
}

impl Handler<FromLink> for Host {
    type Result = ();

    fn handle(&mut self, msg: FromLink, ctx: &mut Context<Self>) {
        let server = msg.server.as_str();
        match msg.what {
            Linked::Tap(event) => self.on_tap(server, event),
            Linked::Event(event) => self.on_link_event(server, *event),
        }
        // Calls that waited for a statement go once none is awaited (`agent.rs`).
        if !self.waiting.is_empty() && !self.core.settling() {
            self.release_waiting(ctx);
        }
        self.drive(ctx);
    }
}

impl Host {
    fn on_tap(&mut self, server: &str, event: TapEvent) {
        let core = &mut self.core;
        match event {
            TapEvent::Connected { epoch, info, init } => {
                core.connected(server, epoch, info.ordered, init.capabilities.mcpl())
            }
            TapEvent::Read(read) => {
                let answers = read.answers.map(|a| (a.id, a.method));
                core.read(server, read.epoch, read.message, answers, now());
            }
            TapEvent::Unreadable { epoch, why } => core.unreadable(server, epoch, &why, now()),
            TapEvent::Disconnected { epoch, reason } => {
                core.disconnected(server, epoch, &reason.to_string())
            }
        }
    }

    fn on_link_event(&mut self, server: &str, event: LinkEvent) {
        let core = &mut self.core;
        match event {
            LinkEvent::Connected {
                epoch,
                granted,
                mcpl,
                ..
            } => core.handshake_done(server, epoch, mcpl, &granted, now()),
            LinkEvent::ToolsListed {
                epoch,
                tools,
                rev,
                list_changed,
                unreadable,
            } => {
                core.listed(server, epoch, &tools, rev, list_changed);
                core.unreadable_tools(server, epoch, unreadable);
            }
            LinkEvent::ManifestUpdated { epoch, manifest } => {
                core.manifest_updated(server, epoch, &manifest, now())
            }
            LinkEvent::Granted { epoch, granted } => core.granted(server, epoch, &granted),
            LinkEvent::Push {
                epoch,
                params,
                result,
            } => core.push_decided(server, epoch, &params, result.accepted),
            LinkEvent::PushNotShown { epoch, event_id } => {
                core.push_not_shown(server, epoch, &event_id)
            }
            LinkEvent::ConnectFailed { attempt, error } => {
                tracing::debug!(server, attempt, %error, "connection attempt failed");
                core.connect_failed(server, &cause::of_connect(&error));
            }
            LinkEvent::Disconnected { epoch, reason } => {
                core.connection_ended(server, epoch, &cause::of_disconnect(&reason))
            }
            _ => {}
        }
    }
}

//! What the links tell the Host, in each link's order: the tap's reads (every hint
//! carrier is applied here, when read, §5.2) and the link's events (handshake done,
//! listings, manifests, decided pushes).

use super::actor::Host;
use crate::link::{LinkEvent, TapEvent};
use crate::state::{Carrier, CatalogOutput, ResultOf};
use actix::prelude::*;
use mcpl_protocol::hints::HintChanges;
use mcpl_protocol::mcp::{InitializeResult, Tool};
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, McplManifest};
use mcpl_protocol::meta::HINTS;
use mcpl_protocol::method::{
    CallTool, Method, PushEvent, ToolHints, ToolsetsClose, ToolsetsList, ToolsetsOpen,
};
use mcpl_protocol::toolsets::ToolsetsListResult;
use mcpl_protocol::{Id, Message};
use mcpl_transport::ConnectionInfo;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use tracing::{debug, info, warn};

/// One thing a server's link told the Host.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(super) struct FromLink {
    pub server: String,
    pub what: Linked,
    /// Dropped with the message once handled: the link may read on.
    pub _ticket: crate::link::Ticket,
}

/// Tapped, or an event.
#[derive(Debug)]
pub(super) enum Linked {
    Tap(TapEvent),
    Event(Box<LinkEvent>),
}

/// The requests whose results the Host reads when they are read (`on_read`): a statement,
/// or the hints a result carries (§5.2).
const RESULTS_READ: [&str; 4] = [
    ToolsetsList::NAME,
    CallTool::NAME,
    ToolsetsOpen::NAME,
    ToolsetsClose::NAME,
];

/// Whether the Host reads a tapped event: all but a response to a request whose result it
/// does not read there (`on_read`) — a `tools/list` page, which comes again whole in
/// `ToolsListed`, is not copied into the mailbox for nothing.
pub(super) fn wanted(event: &TapEvent) -> bool {
    match event {
        TapEvent::Read(read) => match (&read.message, &read.answers) {
            (Message::Response(_), Some(a)) => RESULTS_READ.contains(&a.method),
            (Message::Response(_), None) => false,
            _ => true,
        },
        _ => true,
    }
}

impl Handler<FromLink> for Host {
    type Result = ();

    fn handle(&mut self, msg: FromLink, ctx: &mut Context<Self>) {
        match msg.what {
            Linked::Tap(event) => self.on_tap(&msg.server, event, ctx),
            Linked::Event(event) => self.on_link_event(&msg.server, *event, ctx),
        }
        // Calls that waited for a statement go once none is awaited (`agent.rs`).
        if !self.waiting.is_empty() && !self.settling() {
            self.release_waiting(ctx);
        }
        self.flush();
    }
}

impl Host {
    fn on_tap(&mut self, server: &str, event: TapEvent, ctx: &mut Context<Self>) {
        match event {
            TapEvent::Connected { epoch, info, init } => {
                self.on_connected(server, epoch, &info, &init)
            }
            TapEvent::Read(read) => {
                let current = self.servers.get(server).map(|s| s.epoch);
                if current == Some(read.epoch) {
                    let answers = read.answers.map(|a| (a.id, a.method));
                    self.on_read(server, read.message, answers, ctx);
                }
            }
            TapEvent::Unreadable { epoch, why } => {
                if self.servers.get(server).is_some_and(|s| s.epoch == epoch) {
                    // §5.2 [project]: it may have carried changes; read the state.
                    info!(server, epoch, %why, "a message from the server was lost");
                    self.feed(server, ctx, |h, _| h.handle_lost_message());
                }
            }
            TapEvent::Disconnected { epoch, reason } => {
                let Some(slot) = self.servers.get_mut(server).filter(|s| s.epoch == epoch) else {
                    return;
                };
                info!(server, epoch, %reason, "connection ended");
                if let Some((_, h)) = slot.hold.take() {
                    ctx.cancel_future(h);
                }
                slot.hints = None;
                slot.read = None;
                slot.ready = false;
                slot.unreachable = true;
                let view = slot.view();
                let shown = self.presenter.disconnected(&view);
                self.show(shown);
            }
        }
    }

    /// A connection's `initialize` result was read: a new epoch, its manifest, and a
    /// fresh hint state (§4.6: its revs start from 1) waiting for its statement.
    fn on_connected(
        &mut self,
        server: &str,
        epoch: u64,
        info: &ConnectionInfo,
        init: &InitializeResult,
    ) {
        let Some(slot) = self.servers.get_mut(server) else {
            return;
        };
        slot.epoch = epoch;
        slot.ordered = info.ordered;
        slot.ready = false;
        let outs = slot.catalog.update_manifest(init.capabilities.mcpl());
        slot.fresh_hints();
        let view = slot.view();
        let shown = self.presenter.catalog_outputs(&view, &outs);
        self.show(shown);
    }

    fn on_read(
        &mut self,
        server: &str,
        message: Message,
        answers: Option<(Id, &'static str)>,
        ctx: &mut Context<Self>,
    ) {
        match message {
            Message::Response(r) => {
                let (Some((id, method)), Ok(result)) = (answers, r.outcome) else {
                    return;
                };
                // Keep `RESULTS_READ` to these methods: the tap passes on no other result.
                let of = match method {
                    ToolsetsList::NAME => return self.on_statement(server, result, ctx),
                    CallTool::NAME => ResultOf::CallTool,
                    ToolsetsOpen::NAME => ResultOf::ToolsetsOpen,
                    ToolsetsClose::NAME => ResultOf::ToolsetsClose,
                    _ => return,
                };
                // §5.2: a result's hints apply when it is read, awaited or timed out (vector 28).
                let carrier = Carrier::Result { of, request: id };
                self.read_hints(
                    server,
                    carrier,
                    result.get("_meta").and_then(|m| m.get(HINTS)),
                    ctx,
                );
            }
            Message::Request(r) if r.method == PushEvent::NAME => {
                // §5.2: a push's hints apply when it is read, whatever is decided about it.
                let params = r.params.unwrap_or_default();
                let carrier = Carrier::Push {
                    event_id: params["eventId"].as_str().unwrap_or_default().to_owned(),
                    coalesce: params.get("coalesce").is_some_and(|c| !c.is_null()),
                };
                self.read_hints(server, carrier, params.get("hints"), ctx);
            }
            Message::Notification(n) if n.method == ToolHints::NAME => {
                self.read_hints(
                    server,
                    Carrier::Standalone,
                    Some(&n.params.unwrap_or_default()),
                    ctx,
                );
            }
            Message::Request(_) | Message::Notification(_) => {}
        }
    }

    /// Reads a carrier's hint changes liberally (§5.1): an entry that cannot be read is
    /// ignored alone and the rest applies on its rev; changes that cannot be read at all
    /// (no rev) may have been a change, so the state is read again (§5.2 [project]).
    fn read_hints(
        &mut self,
        server: &str,
        carrier: Carrier,
        raw: Option<&Value>,
        ctx: &mut Context<Self>,
    ) {
        let Some(raw) = raw.filter(|v| !v.is_null()) else {
            return;
        };
        match HintChanges::read(raw) {
            Ok((hints, ignored)) => {
                for why in &ignored {
                    mcpl_transport::warn_limited!(self.peer_warnings, server, %why, "a hint entry this host cannot read");
                }
                self.feed(server, ctx, |h, now| h.handle_hints(carrier, hints, now));
            }
            Err(e) => {
                mcpl_transport::warn_limited!(self.peer_warnings, server, error = %e, "hint changes this host cannot read; reading the state again");
                self.feed(server, ctx, |h, _| h.handle_lost_message());
            }
        }
    }

    /// A `toolsets/list` result, whichever read asked for it: a full statement (§4.3).
    fn on_statement(&mut self, server: &str, result: Value, ctx: &mut Context<Self>) {
        let list = match ToolsetsListResult::deserialize(&result) {
            Ok(l) => l,
            Err(e) => {
                return warn!(server, error = %e, "a toolsets/list result that does not decode");
            }
        };
        let Some(hints) = list.meta.hints else {
            // §4.3: the statement is always there; the read's completion reads again.
            return warn!(
                server,
                "a toolsets/list result without its mcpl/hints statement"
            );
        };
        self.feed(server, ctx, |h, now| {
            h.handle_statement(&hints, &list.open, &list.ended, now)
        });
    }

    fn on_link_event(&mut self, server: &str, event: LinkEvent, ctx: &mut Context<Self>) {
        match event {
            LinkEvent::Connected {
                epoch,
                granted,
                mcpl,
                ..
            } => {
                let Some(slot) = self.servers.get_mut(server).filter(|s| s.epoch == epoch) else {
                    return;
                };
                if !mcpl && slot.catalog.hints_count() {
                    // The server speaks MCPL but was left as plain MCP (SPEC §3.2): its
                    // hints no longer count, as if it had withdrawn them.
                    self.apply_manifest(server, None, ctx);
                }
                let Some(slot) = self.servers.get_mut(server) else {
                    return;
                };
                slot.ready = true;
                slot.unreachable = false;
                slot.push_events = granted.iter().any(|c| c == CAP_PUSH_EVENTS);
                // §4.3: read the statement after every connect, once featureSets/update is done.
                if slot.hints.is_some() {
                    self.read_statement(server, ctx);
                }
            }
            LinkEvent::ToolsListed {
                epoch,
                tools,
                rev,
                list_changed,
            } => self.on_listed(server, epoch, &tools, rev, list_changed, ctx),
            LinkEvent::ManifestUpdated { epoch, manifest }
                if self.servers.get(server).is_some_and(|s| s.epoch == epoch) =>
            {
                self.apply_manifest(server, Some(&manifest), ctx)
            }
            LinkEvent::Granted { epoch, granted } => {
                if let Some(slot) = self.servers.get_mut(server).filter(|s| s.epoch == epoch) {
                    slot.push_events = granted.iter().any(|c| c == CAP_PUSH_EVENTS);
                }
            }
            LinkEvent::Push {
                epoch,
                params,
                result,
            } => {
                let Some(slot) = self.servers.get(server).filter(|s| s.epoch == epoch) else {
                    return;
                };
                let view = slot.view();
                let shown = self.presenter.push(&view, &params, result.accepted);
                self.show(shown);
            }
            LinkEvent::ConnectFailed { attempt, error } => {
                debug!(server, attempt, %error, "connection attempt failed");
                if let Some(slot) = self.servers.get_mut(server) {
                    slot.unreachable = true;
                }
            }
            _ => {}
        }
    }

    /// A complete `tools/list` (§3): presence by stamp in the hint state, then the catalog;
    /// a recovery's second step ends here. The first listing joins the model's list; one
    /// the link started after `list_changed` is a boundary.
    fn on_listed(
        &mut self,
        server: &str,
        epoch: u64,
        tools: &Arc<[Tool]>,
        rev: Option<u64>,
        list_changed: bool,
        ctx: &mut Context<Self>,
    ) {
        let Some(slot) = self.servers.get_mut(server).filter(|s| s.epoch == epoch) else {
            return;
        };
        // The hint state and the catalog share the link's list: no tool is copied.
        let outs = match slot.hints.as_mut() {
            Some(h) => h.handle_tools_list_shared(tools, rev.unwrap_or(0)),
            None => Vec::new(),
        };
        let hints = &slot.hints;
        slot.catalog.set_tools_shared(tools.clone(), |t| {
            hints.as_ref().and_then(|h| h.presence(t))
        });
        let first = !std::mem::replace(&mut slot.listed, true);
        slot.listed_epoch = epoch;
        self.after_hints(server, outs, ctx);
        if first {
            self.rebuild_tool_list();
        } else if list_changed {
            self.boundary();
        }
    }

    /// The manifest changed (§4.1): removed toolsets close their instances (vector 33),
    /// withdrawn `toolHints` makes every tool static (vector 34), re-advertised ones start
    /// a fresh hint state and its reads. `None`: MCPL is off on this connection.
    fn apply_manifest(
        &mut self,
        server: &str,
        manifest: Option<&McplManifest>,
        ctx: &mut Context<Self>,
    ) {
        let Some(slot) = self.servers.get_mut(server) else {
            return;
        };
        let outs = slot.catalog.update_manifest(manifest);
        let withdrawn = outs.contains(&CatalogOutput::HintsWithdrawn);
        for o in &outs {
            match o {
                CatalogOutput::ToolsetRemoved { toolset } if !withdrawn => {
                    let toolset = toolset.clone();
                    self.feed(server, ctx, |h, _| h.close_toolset(&toolset));
                }
                CatalogOutput::HintsWithdrawn => {
                    if let Some(slot) = self.servers.get_mut(server) {
                        if let Some((_, h)) = slot.hold.take() {
                            ctx.cancel_future(h);
                        }
                        slot.hints = None;
                        slot.read = None;
                    }
                }
                CatalogOutput::HintsAdvertised => {
                    if let Some(slot) = self.servers.get_mut(server) {
                        slot.fresh_hints();
                    }
                    self.read_statement(server, ctx);
                    if let Some(slot) = self.servers.get(server) {
                        slot.link.do_send(crate::link::ListTools);
                    }
                }
                _ => {}
            }
        }
        let Some(slot) = self.servers.get(server) else {
            return;
        };
        let view = slot.view();
        let shown = self.presenter.catalog_outputs(&view, &outs);
        self.show(shown);
    }
}

//! What a server's link tells the core, in the link's order: what it read (every hint
//! carrier is applied here, when read, §5.2) and what it did (handshake done, listings,
//! manifests, decided pushes, a connection ended).

use super::{HostCore, ReadStep, index, live, live_mut};
use crate::link::phase::LinkPhase;
use crate::state::catalog::{without_repeats, without_task_tools};
use crate::state::conversation::{AgentMessage, MessageKind};
use crate::state::seen_ids::event_key;
use crate::state::view::shown_name;
use crate::state::{Carrier, CatalogOutput, ResultOf};
use mcpl_protocol::hints::HintChanges;
use mcpl_protocol::jsonrpc::{RawValue, decode_result, member};
use mcpl_protocol::mcp::Tool;
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, McplManifest, PushEventParams};
use mcpl_protocol::meta::HINTS;
use mcpl_protocol::method::{
    CallTool, Method, PushEvent, ToolHints, ToolsetsClose, ToolsetsList, ToolsetsOpen,
};
use mcpl_protocol::toolsets::ToolsetsListResult;
use mcpl_protocol::{Id, Message};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use tracing::info;

/// The requests whose results the core reads when they are read ([`HostCore::read`]): a
/// statement, or the hints a result carries (§5.2). A driver need not pass it any other
/// response (a `tools/list` page comes again whole through [`HostCore::listed`]).
pub const RESULTS_READ: [&str; 4] = [
    ToolsetsList::NAME,
    CallTool::NAME,
    ToolsetsOpen::NAME,
    ToolsetsClose::NAME,
];

impl HostCore {
    /// A connection's `initialize` result was read: a new epoch, its manifest, and a fresh
    /// hint state (§4.6: its revs start from 1) waiting for its statement.
    pub fn connected(
        &mut self,
        server: &str,
        epoch: u64,
        ordered: bool,
        manifest: Option<&McplManifest>,
    ) {
        let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) else {
            return;
        };
        slot.epoch = epoch;
        slot.ordered = ordered;
        slot.phase = LinkPhase::AwaitingGrantReceipt;
        let outs = slot.catalog.update_manifest(manifest);
        slot.fresh_hints();
        let view = slot.view();
        let shown = self.presenter.catalog_outputs(&view, &outs);
        self.show(shown);
    }

    /// A message was read on connection `epoch`; `answers` names the request a response
    /// answers (its id and method). §5.2: its hints apply now, whatever is then decided
    /// about the message.
    pub fn read(
        &mut self,
        server: &str,
        epoch: u64,
        message: Message,
        answers: Option<(Id, &str)>,
        now: Instant,
    ) {
        if index(&self.servers, server)
            .map(|i| &self.servers[i])
            .map(|s| s.epoch)
            != Some(epoch)
        {
            return;
        }
        match message {
            Message::Response(r) => {
                let (Some((id, method)), Ok(result)) = (answers, r.outcome) else {
                    return;
                };
                // Keep `RESULTS_READ` to these methods.
                let of = match method {
                    ToolsetsList::NAME => return self.statement(server, result, now),
                    CallTool::NAME => ResultOf::CallTool,
                    ToolsetsOpen::NAME => ResultOf::ToolsetsOpen,
                    ToolsetsClose::NAME => ResultOf::ToolsetsClose,
                    _ => return,
                };
                // §5.2: a result's hints apply when it is read, awaited or timed out (vector 28).
                let carrier = Carrier::Result { of, request: id };
                // Only `_meta`'s hints are read out of the result's text: the result itself
                // is decoded once, by whoever waits for it.
                let hints = member(&result, "_meta")
                    .and_then(|m| member(&m, HINTS))
                    .and_then(|h| serde_json::from_str::<Value>(h.get()).ok());
                self.read_hints(server, carrier, hints.as_ref(), now);
            }
            Message::Request(r) if r.method == PushEvent::NAME => {
                // §5.2: a push's hints apply when it is read, whatever is decided about it.
                let params = r.params_value().unwrap_or_default();
                // What is kept of the id, bounded in bytes (issue #36 item 3).
                let id = params["eventId"].as_str().unwrap_or_default();
                let carrier = Carrier::Push {
                    event_id: event_key(id).into_owned(),
                    coalesce: params.get("coalesce").is_some_and(|c| !c.is_null()),
                };
                self.read_hints(server, carrier, params.get("hints"), now);
            }
            Message::Notification(n) if n.method == ToolHints::NAME => {
                let params = n.params_value().unwrap_or_default();
                self.read_hints(server, Carrier::Standalone, Some(&params), now);
            }
            Message::Request(_) | Message::Notification(_) => {}
        }
    }

    /// Reads a carrier's hint changes liberally (§5.1): an entry that cannot be read is
    /// ignored alone and the rest applies on its rev; changes that cannot be read at all
    /// (no rev) may have been a change, so the state is read again (§5.2 \[project\]).
    fn read_hints(&mut self, server: &str, carrier: Carrier, raw: Option<&Value>, now: Instant) {
        let Some(raw) = raw.filter(|v| !v.is_null()) else {
            return;
        };
        match HintChanges::read(raw) {
            Ok((hints, ignored)) => {
                for why in ignored {
                    self.warn_peer(server, format!("a hint entry this host cannot read: {why}"));
                }
                self.feed(server, now, |h, now| h.handle_hints(carrier, hints, now));
            }
            Err(e) => {
                self.warn_peer(
                    server,
                    format!("hint changes this host cannot read ({e}); reading the state again"),
                );
                self.feed(server, now, |h, _| h.handle_lost_message());
            }
        }
    }

    /// A `toolsets/list` result, whichever read asked for it: a full statement (§4.3).
    fn statement(&mut self, server: &str, result: Box<RawValue>, now: Instant) {
        let list = match decode_result::<ToolsetsListResult>(&result) {
            Ok(l) => l,
            Err(e) => {
                return self.warn_peer(
                    server,
                    format!("a toolsets/list result that does not decode: {e}"),
                );
            }
        };
        let Some(hints) = list.meta.hints else {
            // §4.3: the statement is always there; the read's completion reads again.
            return self.warn_peer(
                server,
                "a toolsets/list result without its mcpl/hints statement".to_owned(),
            );
        };
        self.feed(server, now, |h, now| {
            h.handle_statement(&hints, &list.open, &list.ended, now)
        });
    }

    /// Something the server wrote on connection `epoch` could not be read (too large, not
    /// JSON-RPC): whatever it carried is lost, so the state is read again (§5.2 \[project\]).
    pub fn unreadable(&mut self, server: &str, epoch: u64, why: &str, now: Instant) {
        if index(&self.servers, server)
            .map(|i| &self.servers[i])
            .is_some_and(|s| s.epoch == epoch)
        {
            // A peer can send unreadable messages as often as it likes: the line goes
            // through the host's per-peer limit like any other peer warning.
            self.warn_peer(
                server,
                format!("a message was lost on connection {epoch}: {why}"),
            );
            self.feed(server, now, |h, _| h.handle_lost_message());
        }
    }

    /// Connection `epoch` ended: its hint state and reads go, the agent is told.
    pub fn disconnected(&mut self, server: &str, epoch: u64, reason: &str) {
        let Some(slot) = live_mut(&mut self.servers, server, epoch) else {
            return;
        };
        info!(server, epoch, %reason, "connection ended");
        if slot.hold.take().is_some() {
            self.actions.push_back(super::Action::Hold {
                server: server.to_owned(),
                epoch,
                at: None,
            });
        }
        let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) else {
            return;
        };
        slot.hints = None;
        slot.read = None;
        slot.phase = LinkPhase::Backoff;
        let view = slot.view();
        let shown = self.presenter.disconnected(&view);
        self.show(shown);
    }

    /// An attempt to connect failed (the link tries again on its own). A link reports
    /// this only while no connection is up; should a connection's state still be here, it
    /// is dropped as at [`Self::disconnected`]: no connection is up.
    /// `cause`: why, plainly (`mcpl_host::link::cause`), for the status and the agent.
    pub fn connect_failed(&mut self, server: &str, cause: &str) {
        let Some(slot) = index(&self.servers, server).map(|i| &self.servers[i]) else {
            return;
        };
        if slot.linked() {
            let epoch = slot.epoch;
            self.disconnected(server, epoch, "a connection attempt failed");
        }
        if let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) {
            slot.phase = LinkPhase::Backoff;
            slot.down_because = Some(cause.to_owned());
        }
    }

    /// The link says connection `epoch` ended, `cause` plainly. The read tap told the end
    /// of a connection whose `initialize` result was read ([`Self::disconnected`]); one
    /// that ended before (a refused `initialize`: Streamable HTTP's 401) is a failed
    /// attempt, and leaves the server unreachable as one does.
    pub fn connection_ended(&mut self, server: &str, epoch: u64, cause: &str) {
        let Some(slot) = index(&self.servers, server).map(|i| &self.servers[i]) else {
            return;
        };
        let live = slot.linked();
        if live && slot.epoch != epoch {
            // Another connection is up: this end is old news.
            return;
        }
        if live {
            self.disconnected(server, epoch, cause);
        }
        if let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) {
            slot.phase = LinkPhase::Backoff;
            slot.down_because = Some(cause.to_owned());
        }
    }

    /// Connection `epoch`'s handshake completed. `mcpl`: MCPL is on; `granted`: the
    /// feature sets granted. §4.3: the statement is read now, where hints count.
    pub fn handshake_done(
        &mut self,
        server: &str,
        epoch: u64,
        mcpl: bool,
        granted: &[String],
        now: Instant,
    ) {
        let Some(slot) = live_mut(&mut self.servers, server, epoch) else {
            return;
        };
        if !mcpl && slot.catalog.hints_count() {
            // The server speaks MCPL but was left as plain MCP (SPEC §3.2): its hints no
            // longer count, as if it had withdrawn them.
            self.apply_manifest(server, None, now);
        }
        let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) else {
            return;
        };
        slot.phase = LinkPhase::Ready;
        slot.down_because = None;
        slot.push_events = granted.iter().any(|c| c == CAP_PUSH_EVENTS);
        // What waited for this connection's grant to be known is told (or not) now.
        let view = slot.view();
        let shown = self.presenter.handshake_done(&view);
        self.show(shown);
        let Some(slot) = index(&self.servers, server).map(|i| &self.servers[i]) else {
            return;
        };
        if slot.hints.is_some() {
            self.start_read(server, ReadStep::Statement);
        }
    }

    /// Connection `epoch` granted these feature sets now.
    pub fn granted(&mut self, server: &str, epoch: u64, granted: &[String]) {
        if let Some(slot) = live_mut(&mut self.servers, server, epoch) {
            slot.push_events = granted.iter().any(|c| c == CAP_PUSH_EVENTS);
        }
    }

    /// A `push/event` on connection `epoch` was decided (its hints were applied when
    /// read): the presenter shows it.
    pub fn push_decided(
        &mut self,
        server: &str,
        epoch: u64,
        params: &PushEventParams,
        accepted: bool,
    ) {
        let Some(slot) = live(&self.servers, server, epoch) else {
            return;
        };
        let view = slot.view();
        let shown = self.presenter.push(&view, params, accepted);
        self.show(shown);
    }

    /// A `push/event` on connection `epoch` was not shown: refused before the push policy
    /// was asked, or seen before. Its hints applied when it was read (§5.2); the presenter
    /// tells what they changed without it, as for a refused push (§6).
    pub fn push_not_shown(&mut self, server: &str, epoch: u64, event_id: &str) {
        let Some(slot) = live(&self.servers, server, epoch) else {
            return;
        };
        let view = slot.view();
        let shown = self.presenter.push_not_shown(&view, event_id);
        self.show(shown);
    }

    /// A complete `tools/list` on connection `epoch` (§3): presence by stamp in the hint
    /// state, then the catalog; a recovery's second step ends here. The first listing
    /// joins the model's list; one the link started after `list_changed` is a boundary.
    pub fn listed(
        &mut self,
        server: &str,
        epoch: u64,
        tools: &Arc<[Tool]>,
        rev: Option<u64>,
        list_changed: bool,
    ) {
        let Some(slot) = live_mut(&mut self.servers, server, epoch) else {
            return;
        };
        // Tools only MCP tasks can call are not offered at all (README: this host runs no
        // tasks); the agent is told which, once each.
        let (tools, left_out) = without_task_tools(tools);
        let untold = not_told(&mut slot.told_needs_tasks, left_out);
        // A name listed twice would be twice in the model's list, which model APIs refuse:
        // its first entry is offered, the agent told once (§6, RFC §8.1 [project]).
        let (tools, repeated) = without_repeats(&tools);
        let untold_repeats = not_told(&mut slot.told_repeated, repeated);
        // The hint state and the catalog share the link's list: no tool is copied.
        let outs = match slot.hints.as_mut() {
            Some(h) => h.handle_tools_list_shared(&tools, rev.unwrap_or(0)),
            None => Vec::new(),
        };
        let hints = &slot.hints;
        slot.catalog
            .set_tools_shared(tools, |t| hints.as_ref().and_then(|h| h.presence(t)));
        let first = slot.listed_epoch.replace(epoch).is_none();
        let texts = [
            (!untold.is_empty()).then(|| needs_tasks_notice(server, &untold)),
            (!untold_repeats.is_empty()).then(|| repeated_notice(server, &untold_repeats)),
        ];
        for text in texts.into_iter().flatten() {
            let mut notice = AgentMessage::plain(MessageKind::Notice, text);
            notice.server = Some(server.to_owned());
            self.show(vec![notice]);
        }
        self.after_hints(server, outs);
        if first {
            self.rebuild_tool_list();
        } else if list_changed {
            self.boundary();
        }
    }

    /// The tools the last `tools/list` of connection `epoch` left out because they nest too
    /// deep or do not decode (issue #37 item 12): the agent is told of each once while it
    /// stays unreadable.
    pub fn unreadable_tools(&mut self, server: &str, epoch: u64, unreadable: Vec<String>) {
        let Some(slot) = live_mut(&mut self.servers, server, epoch) else {
            return;
        };
        let untold = not_told(&mut slot.told_unreadable, unreadable);
        if untold.is_empty() {
            return;
        }
        let mut notice =
            AgentMessage::plain(MessageKind::Notice, unreadable_notice(server, &untold));
        notice.server = Some(server.to_owned());
        self.show(vec![notice]);
    }

    /// The manifest of connection `epoch` changed (§4.1).
    pub fn manifest_updated(
        &mut self,
        server: &str,
        epoch: u64,
        manifest: &McplManifest,
        now: Instant,
    ) {
        if index(&self.servers, server)
            .map(|i| &self.servers[i])
            .is_some_and(|s| s.epoch == epoch)
        {
            self.apply_manifest(server, Some(manifest), now);
        }
    }

    /// The manifest changed (§4.1): removed toolsets close their instances (vector 33),
    /// withdrawn `toolHints` makes every tool static (vector 34), re-advertised ones start
    /// a fresh hint state and its reads. `None`: MCPL is off on this connection.
    fn apply_manifest(&mut self, server: &str, manifest: Option<&McplManifest>, now: Instant) {
        let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) else {
            return;
        };
        let outs = slot.catalog.update_manifest(manifest);
        let declared = super::slot::declared(&slot.catalog);
        if let Some(h) = slot.hints.as_mut() {
            h.set_declared(declared);
        }
        let withdrawn = outs.contains(&CatalogOutput::HintsWithdrawn);
        for o in &outs {
            match o {
                CatalogOutput::ToolsetRemoved { toolset } if !withdrawn => {
                    let toolset = toolset.clone();
                    self.feed(server, now, |h, _| h.close_toolset(&toolset));
                }
                CatalogOutput::HintsWithdrawn => {
                    let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i])
                    else {
                        continue;
                    };
                    if slot.hold.take().is_some() {
                        let epoch = slot.epoch;
                        self.actions.push_back(super::Action::Hold {
                            server: server.to_owned(),
                            epoch,
                            at: None,
                        });
                    }
                    if let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) {
                        slot.hints = None;
                        slot.read = None;
                    }
                }
                CatalogOutput::HintsAdvertised => {
                    if let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) {
                        slot.fresh_hints();
                    }
                    self.start_read(server, ReadStep::Statement);
                    self.actions.push_back(super::Action::ListTools {
                        server: server.to_owned(),
                    });
                }
                _ => {}
            }
        }
        let Some(slot) = index(&self.servers, server).map(|i| &self.servers[i]) else {
            return;
        };
        let view = slot.view();
        let shown = self.presenter.catalog_outputs(&view, &outs);
        self.show(shown);
    }
}

/// The most tool names a notice of tools left out names; the rest are counted.
const NAMED_LEFT_OUT: usize = 8;

/// The names of `left_out` not told yet, remembered as told. Only what this list leaves
/// out stays remembered: a server listing new names each time cannot grow the set past
/// one list.
fn not_told(told: &mut std::collections::BTreeSet<String>, left_out: Vec<String>) -> Vec<String> {
    let now: std::collections::BTreeSet<&str> = left_out.iter().map(String::as_str).collect();
    told.retain(|t| now.contains(t.as_str()));
    left_out
        .into_iter()
        .filter(|t| told.insert(t.clone()))
        .collect()
}

/// Up to [`NAMED_LEFT_OUT`] tool names, quoted, and how many more.
fn named(tools: &[String]) -> String {
    let mut names: Vec<String> = tools
        .iter()
        .take(NAMED_LEFT_OUT)
        .map(|t| format!("`{}`", shown_name(t)))
        .collect();
    if tools.len() > NAMED_LEFT_OUT {
        names.push(format!("and {} more", tools.len() - NAMED_LEFT_OUT));
    }
    names.join(", ")
}

/// What the agent is told of `server`'s tools left out because they need MCP tasks.
fn needs_tasks_notice(server: &str, tools: &[String]) -> String {
    format!(
        "{}: left out of your tools: {} — they can only run as MCP tasks, which this host does not support.",
        shown_name(server),
        named(tools)
    )
}

/// What the agent is told of the names `server` listed more than once.
fn repeated_notice(server: &str, tools: &[String]) -> String {
    format!(
        "{}: listed more than once: {} — only the first of each is offered.",
        shown_name(server),
        named(tools)
    )
}

/// What the agent is told of `server`'s tools that could not be read.
fn unreadable_notice(server: &str, tools: &[String]) -> String {
    format!(
        "{}: left out of your tools: {} — their definitions nest too deep or are malformed.",
        shown_name(server),
        named(tools)
    )
}

/// True when the core reads a response to `method` as it is read (see [`RESULTS_READ`]).
pub fn reads_result(method: &str) -> bool {
    RESULTS_READ.contains(&method)
}

/// A message the core wants from the tap: every request and notification, and the
/// responses to [`RESULTS_READ`] (`answers`: the method the response answers, if any).
pub fn wants_read(message: &Message, answers: Option<&str>) -> bool {
    match message {
        Message::Response(_) => answers.is_some_and(reads_result),
        _ => true,
    }
}

/// Whether a read of the server's state went through (its result was read before this is
/// reported).
#[derive(Debug, Clone, PartialEq)]
pub enum ReadOutcome {
    /// The request was answered.
    Answered,
    /// The connection is gone (the next one reads its own statement).
    Gone,
    /// It failed: an error answer, no answer in time, an unreadable result.
    Failed(String),
}

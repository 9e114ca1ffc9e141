//! The actor: what it owns, how it is started (one link per server, each with a tap and a
//! subscriber forwarding into this actor's mailbox), and the helpers every handler ends
//! with — show what the presenter returned, persist told ids, publish the status.

use super::config::HostConfig;
use super::error::HostError;
use super::handle::HostHandle;
use super::inbound::{FromLink, Linked};
use super::server::Slot;
use super::shown::Shown;
use super::status::HostStatus;
use super::told_store::ToldStore;
use crate::link::{DEFAULT_READ_AHEAD, EventCallback, EventSink, ReadGate, ServerLink, Tap};
use crate::state::{
    AgentMessage, Catalog, Change, Conversation, HintConfig, MessageKind, MetaTools, Output,
    Presenter, ServerView, ToldIds,
};
use actix::prelude::*;
use mcpl_protocol::names::check_name;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tracing::warn;

/// The host's agent-facing actor (see the module doc). Start it with [`Host::start`].
pub struct Host {
    pub(super) servers: BTreeMap<String, Slot>,
    pub(super) presenter: Presenter,
    pub(super) conversation: Conversation,
    pub(super) meta: MetaTools,
    store: Option<ToldStore>,
    subscribers: Vec<mpsc::UnboundedSender<Shown>>,
    /// The first message the next transcript returns.
    pub(super) transcript_from: u64,
    status: watch::Sender<HostStatus>,
    pub(super) retry_delay: Duration,
    /// Warnings about what servers send that this host cannot read, at most a few per
    /// interval.
    pub(super) peer_warnings: mcpl_transport::LogLimiter,
    /// Meta-tool calls waiting for a server's connect-time statement (`agent.rs`).
    pub(super) waiting: Vec<super::agent::Waiting>,
    /// How many calls have waited so far; names each wait.
    pub(super) waits: u64,
    /// The longest a meta-tool call waits for a statement.
    pub(super) statement_wait: Duration,
}

/// Now, on tokio's clock (paused in tests); the cores take it as an argument.
pub(super) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

impl Host {
    /// Starts the host and one link per server, in the current actix system. Fails on a
    /// configuration that cannot work (a bad or repeated server name).
    pub fn start(config: HostConfig) -> Result<HostHandle, HostError> {
        let mut seen = BTreeSet::new();
        for s in &config.servers {
            let name = s.name().to_owned();
            check_name(&name).map_err(|error| HostError::BadServerName {
                name: name.clone(),
                error,
            })?;
            if !seen.insert(name.clone()) {
                return Err(HostError::DuplicateServer { name });
            }
        }
        let told = load_told(&config);
        let store = config.state_dir.as_ref().map(ToldStore::new);
        let (status, watcher) = watch::channel(HostStatus::default());
        let addr = Host::create(move |ctx| {
            let me = ctx.address();
            let mut servers = BTreeMap::new();
            let hints = config.hint_config();
            for s in config.servers {
                let slot = start_link(s, &me, hints);
                servers.insert(slot.name.clone(), slot);
            }
            let host = Host {
                servers,
                presenter: Presenter::new(config.presenter, told),
                conversation: Conversation::new(config.conversation),
                meta: MetaTools::new(config.meta),
                store,
                subscribers: Vec::new(),
                transcript_from: 0,
                status,
                retry_delay: config.retry_delay,
                peer_warnings: mcpl_transport::LogLimiter::per_peer(),
                waiting: Vec::new(),
                waits: 0,
                statement_wait: config.statement_wait,
            };
            host.publish();
            host
        });
        Ok(HostHandle::new(addr, watcher))
    }

    /// Shows messages to the agent: records them in the conversation and hands every one
    /// but a tool result (which goes back to its caller) to the subscribers.
    pub(super) fn show(&mut self, messages: Vec<AgentMessage>) {
        for m in messages {
            let seq = self.conversation.push(m.clone());
            if m.kind != MessageKind::ToolResult {
                let shown = Shown::new(seq, &m);
                self.subscribers.retain(|s| s.send(shown.clone()).is_ok());
            }
        }
    }

    /// Adds a subscriber to what is shown outside tool results.
    pub(super) fn subscribe(&mut self, tx: mpsc::UnboundedSender<Shown>) {
        self.subscribers.push(tx);
    }

    /// What a server's hint state reported: presence moves go to the catalog (applied at
    /// the next boundary, §3), every change to the presenter, `Recover` starts the reads
    /// (§5.2), and the hold timer follows the state's next deadline.
    pub(super) fn after_hints(&mut self, server: &str, outs: Vec<Output>, ctx: &mut Context<Self>) {
        let Some(slot) = self.servers.get_mut(server) else {
            return;
        };
        for o in &outs {
            if let Some(Change::Presence { tool, presence }) = o.change() {
                slot.catalog.set_presence(tool, *presence);
            }
        }
        let recover = outs.iter().any(|o| matches!(o, Output::Recover(_)));
        let view = slot.view();
        let shown = self.presenter.ingest(&view, &outs);
        self.show(shown);
        if recover {
            self.read_statement(server, ctx);
        }
        self.rearm_hold(server, ctx);
    }

    /// Feeds one input to a server's hint state, if hints count there (§2, vector 30).
    pub(super) fn feed(
        &mut self,
        server: &str,
        ctx: &mut Context<Self>,
        input: impl FnOnce(&mut crate::state::HintState, Instant) -> Vec<Output>,
    ) {
        let Some(hints) = self.servers.get_mut(server).and_then(|s| s.hints.as_mut()) else {
            return;
        };
        let outs = input(hints, now());
        self.after_hints(server, outs, ctx);
    }

    /// Arms the hold timer for the hint state's next deadline (§5.2: an early rev is held
    /// for the window), or disarms it.
    pub(super) fn rearm_hold(&mut self, server: &str, ctx: &mut Context<Self>) {
        let Some(slot) = self.servers.get_mut(server) else {
            return;
        };
        let want = slot.hints.as_ref().and_then(|h| h.poll_timeout());
        if slot.hold.as_ref().map(|(d, _)| *d) == want {
            return;
        }
        if let Some((_, handle)) = slot.hold.take() {
            ctx.cancel_future(handle);
        }
        if let Some(deadline) = want {
            let delay = deadline.saturating_duration_since(now());
            let (name, epoch) = (server.to_owned(), slot.epoch);
            let handle = ctx.run_later(delay, move |act, ctx| act.on_hold_timer(&name, epoch, ctx));
            slot.hold = Some((deadline, handle));
        }
    }

    fn on_hold_timer(&mut self, server: &str, epoch: u64, ctx: &mut Context<Self>) {
        let Some(slot) = self.servers.get_mut(server).filter(|s| s.epoch == epoch) else {
            return;
        };
        slot.hold = None;
        self.feed(server, ctx, |h, now| h.handle_timeout(now));
        self.flush();
    }

    /// A tool-list boundary (§3, §6): each catalog rebuilds its snapshot, the presence
    /// moves are told, and the model's list is rebuilt. True when the list changed.
    pub(super) fn boundary(&mut self) -> bool {
        let names: Vec<String> = self.servers.keys().cloned().collect();
        for name in names {
            let Some(slot) = self.servers.get_mut(&name) else {
                continue;
            };
            let outs = slot.catalog.rebuild_boundary();
            let view = slot.view();
            let shown = self.presenter.catalog_outputs(&view, &outs);
            self.show(shown);
        }
        self.rebuild_tool_list()
    }

    /// Rebuilds the model's list from each catalog's snapshot, without a boundary (a
    /// server's first listing joins the list).
    pub(super) fn rebuild_tool_list(&mut self) -> bool {
        let bounds = *self.presenter.bounds();
        let views: Vec<ServerView<'_>> = self.servers.values().map(Slot::view).collect();
        self.conversation.rebuild_tool_list(&views, &bounds)
    }

    /// Ends every handler: persists told ids when some were added (vector 13 across
    /// restarts), and publishes the status.
    pub(super) fn flush(&mut self) {
        if self.presenter.take_told_dirty()
            && let Some(store) = &self.store
            && let Err(e) = store.save(self.presenter.told_ids())
        {
            warn!(error = %e, "could not persist the told ended ids");
        }
        self.publish();
    }

    pub(super) fn publish(&self) {
        let status = HostStatus {
            servers: self
                .servers
                .iter()
                .map(|(n, s)| (n.clone(), s.status()))
                .collect(),
            calls_waiting: self.waiting.len(),
        };
        self.status.send_if_modified(|old| {
            let changed = *old != status;
            if changed {
                *old = status;
            }
            changed
        });
    }
}

impl Actor for Host {
    type Context = Context<Self>;
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("servers", &self.servers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The told ids under the state directory; a file this host cannot read is logged and the
/// host starts from none (the presenter then may tell an id again, never lose state).
fn load_told(config: &HostConfig) -> ToldIds {
    let Some(dir) = &config.state_dir else {
        return ToldIds::new(config.told_capacity);
    };
    match ToldStore::new(dir).load(config.told_capacity) {
        Ok(told) => told,
        Err(e) => {
            warn!(error = %e, "starting without the told ended ids");
            ToldIds::new(config.told_capacity)
        }
    }
}

/// Starts a server's link with a tap and a subscriber that forward into the Host's
/// mailbox. Both are called synchronously by the link, in the order it reads and acts, and
/// both `do_send` to one address, whose mailbox is a FIFO queue: the Host sees one
/// server's reads and events in exactly the link's order (§5.2: hints apply in read order).
fn start_link(s: super::config::ServerConfig, host: &Addr<Host>, hints: HintConfig) -> Slot {
    let mut link = s.link;
    let name = link.name.clone();
    // Each message forwarded holds a ticket until the Host has handled it: a server that
    // writes faster than the Host reads is read no faster than that (a flood waits in the
    // transport and the socket, not in the mailbox ahead of the agent's requests).
    let gate = link
        .read_gate
        .get_or_insert_with(|| ReadGate::new(DEFAULT_READ_AHEAD))
        .clone();
    let (tap_to, tap_name, tap_gate) = (host.clone(), name.clone(), gate.clone());
    link.tap = Some(Tap::from_fn(move |e| {
        if !super::inbound::wanted(e) {
            return;
        }
        tap_to.do_send(FromLink {
            server: tap_name.clone(),
            what: Linked::Tap(e.clone()),
            _ticket: tap_gate.ticket(),
        })
    }));
    let (ev_to, ev_name, ev_gate) = (host.clone(), name.clone(), gate.clone());
    link.subscribers
        .push(EventSink::Callback(EventCallback::new(move |e| {
            ev_to.do_send(FromLink {
                server: ev_name.clone(),
                what: Linked::Event(Box::new(e.clone())),
                _ticket: ev_gate.ticket(),
            });
            ev_to.connected()
        })));
    let advertises_hints = link.advertise_tool_hints;
    let addr = ServerLink::new(link).start();
    Slot {
        name,
        link: addr,
        catalog: Catalog::new(advertises_hints, None),
        hints: None,
        policy: s.policy,
        push_events: false,
        epoch: 0,
        ordered: true,
        ready: false,
        listed: false,
        listed_epoch: 0,
        unreachable: false,
        read: None,
        next_token: 0,
        read_failures: 0,
        hold: None,
        hint_config: hints,
        gate,
    }
}

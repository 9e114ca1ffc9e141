//! How the Host is started: one link per server, each with a tap and a subscriber
//! forwarding into the Host's mailbox, and the told ids read back from the state directory.

use super::actor::{Host, Link};
use super::config::{HostConfig, ServerConfig};
use super::error::HostError;
use super::handle::HostHandle;
use super::inbound::wanted;
use super::messages::{FromLink, Linked};
use super::told_store::ToldStore;
use crate::link::{DEFAULT_READ_AHEAD, EventCallback, EventSink, ReadGate, ServerLink, Tap};
use crate::state::conversation::check_server_name;
use crate::state::{
    Conversation, CoreConfig, HintConfig, HostCore, HostStatus, MetaTools, Presenter, ServerSlot,
    ToldIds,
};
use actix::prelude::*;
use mcpl_protocol::names::check_name;
use std::collections::{BTreeMap, BTreeSet};
use tokio::sync::watch;
use tracing::warn;

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
            check_server_name(&name).map_err(|error| HostError::CollidingServerName {
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
            let hints = config.hint_config();
            let mut links = BTreeMap::new();
            let mut slots = Vec::new();
            for s in config.servers {
                let (slot, link) = start_link(s, &me, hints);
                links.insert(slot.name().to_owned(), link);
                slots.push(slot);
            }
            let core = HostCore::new(
                slots,
                Presenter::new(config.presenter, told),
                Conversation::new(config.conversation),
                MetaTools::new(config.meta),
                CoreConfig {
                    retry_delay: config.retry_delay,
                    retry_jitter: config.retry_jitter,
                    retry_seed: config.retry_seed.unwrap_or_else(rand::random),
                },
            );
            let host = Host {
                core,
                links,
                store,
                subscribers: Vec::new(),
                transcript_from: 0,
                status,
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
fn start_link(s: ServerConfig, host: &Addr<Host>, hints: HintConfig) -> (ServerSlot, Link) {
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
        if !wanted(e) {
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
    let slot = ServerSlot::new(&name, link.advertise_tool_hints, s.policy, hints);
    let addr = ServerLink::new(link).start();
    (
        slot,
        Link {
            addr,
            gate,
            hold: None,
        },
    )
}

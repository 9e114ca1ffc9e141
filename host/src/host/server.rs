//! [`Slot`]: what the Host owns for one server — its link, catalog, the current
//! connection's hint state, policy and grant — and the bookkeeping of the reads and the
//! hold timer it drives for that connection.

use super::status::{HintSummary, ServerStatus};
use crate::link::ServerLink;
use crate::state::{Catalog, HintConfig, HintState, ServerView, ToolPolicy};
use actix::{Addr, SpawnHandle};
use std::time::Instant;

/// Which read of the server's state is under way (§5.2: one at a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReadStep {
    /// `toolsets/list`: at connect, or a recovery's first step.
    Statement,
    /// `tools/list`: a recovery's second step.
    ToolsList,
}

/// One server, as the Host holds it.
pub(super) struct Slot {
    pub name: String,
    pub link: Addr<ServerLink>,
    pub catalog: Catalog,
    /// The current connection's hint state: none while disconnected, or when hints do not
    /// count (§2: then hint `_meta` and `tools/hints` are ignored, vector 30).
    pub hints: Option<HintState>,
    pub policy: ToolPolicy,
    /// The current connection granted `pushEvents` (its notices reach the agent, §6).
    pub push_events: bool,
    /// The current connection (its `initialize` result was read).
    pub epoch: u64,
    /// The current connection delivers in order (§5.2: only an unordered one holds).
    pub ordered: bool,
    /// The current connection's handshake completed.
    pub ready: bool,
    /// A `tools/list` completed once: the first builds the model's list.
    pub listed: bool,
    /// The connection whose `tools/list` completed last.
    pub listed_epoch: u64,
    /// The last attempt failed or the connection went (until the next handshake).
    pub unreachable: bool,
    /// The read under way: its token and step. A completion with another token is of a
    /// read since superseded.
    pub read: Option<(u64, ReadStep)>,
    pub next_token: u64,
    /// Reads of the server's state that failed in a row (each retry waits longer).
    pub read_failures: u32,
    /// The hold timer: the deadline it is armed for.
    pub hold: Option<(Instant, SpawnHandle)>,
    /// How each connection's hint state behaves; `ordered` is set per connection.
    pub hint_config: HintConfig,
    /// How far the link reads ahead of this actor.
    pub gate: crate::link::ReadGate,
}

impl Slot {
    /// The server as the presenter and the meta-tools read it.
    pub fn view(&self) -> ServerView<'_> {
        ServerView {
            name: &self.name,
            catalog: &self.catalog,
            hints: self.hints.as_ref(),
            policy: &self.policy,
            push_events: self.push_events,
            connected: self.ready,
        }
    }

    /// A fresh hint state for the current connection, when hints count (§4.6: each
    /// connection has its own revs from 1).
    pub fn fresh_hints(&mut self) {
        self.hints = self.catalog.hints_count().then(|| {
            HintState::new(HintConfig {
                ordered: self.ordered,
                ..self.hint_config
            })
        });
        self.read = None;
        self.read_failures = 0;
    }

    /// A token for a new read.
    pub fn take_token(&mut self) -> u64 {
        self.next_token += 1;
        self.next_token
    }

    /// The summary for [`super::HostStatus`].
    pub fn status(&self) -> ServerStatus {
        let hints = self.hints.as_ref().map(|h| HintSummary {
            last_rev: h.last_rev(),
            held: h.held_revs().collect(),
            connecting: h.is_connecting(),
            recovering: h.is_recovering(),
            stats: h.stats(),
        });
        let mut open: Vec<(String, Option<String>)> = self
            .hints
            .iter()
            .flat_map(|h| h.open_instances())
            .map(|o| (o.toolset.clone(), o.instance.clone()))
            .collect();
        open.extend(
            self.catalog
                .groups()
                .into_iter()
                .filter(|g| self.catalog.is_group_open(g))
                .map(|g| (g.to_owned(), None)),
        );
        let settled = self.ready
            && self.listed_epoch == self.epoch
            && self.hints.as_ref().is_none_or(|h| !h.is_connecting());
        ServerStatus {
            epoch: self.epoch,
            ready: self.ready,
            settled,
            unreachable: self.unreachable,
            hints_count: self.catalog.hints_count(),
            listed_tools: self.catalog.listed_tools().count(),
            hints,
            open,
            read_ahead_peak: self.gate.peak(),
        }
    }
}

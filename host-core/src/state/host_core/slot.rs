//! [`ServerSlot`]: one server as the host core holds it — its catalog, the current
//! connection's hint state, policy and grant — with the connection's phase (the link's
//! [`LinkPhase`], as the link last told it) and the bookkeeping of the reads of its state
//! (§5.2: one at a time) and of the hold deadline.

use super::status::{HintSummary, ServerStatus};
use crate::link::phase::LinkPhase;
use crate::state::{Catalog, HintConfig, HintState, ServerView, ToolPolicy};
use std::time::Instant;

/// Which read of the server's state is under way (§5.2: one at a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadStep {
    /// `toolsets/list`: at connect, or a recovery's first step.
    Statement,
    /// `tools/list`: a recovery's second step.
    ToolsList,
}

/// A read under way: its token (a completion with another is of a superseded read) and
/// its step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Read {
    pub token: u64,
    pub step: ReadStep,
}

/// One server, as the core holds it.
#[derive(Debug)]
pub struct ServerSlot {
    pub(crate) name: String,
    pub(crate) catalog: Catalog,
    /// The current connection's hint state: none while disconnected, or when hints do not
    /// count (§2: then hint `_meta` and `tools/hints` are ignored, vector 30).
    pub(crate) hints: Option<HintState>,
    pub(crate) policy: ToolPolicy,
    /// The current connection granted `pushEvents` (its notices reach the agent, §6).
    pub(crate) push_events: bool,
    /// The connection's phase: the link's one phase enum, as the link last told it (see
    /// [`ServerSlot::phase`]).
    pub(crate) phase: LinkPhase,
    /// The current connection (its `initialize` result was read); 0 before the first.
    pub(crate) epoch: u64,
    /// The current connection delivers in order (§5.2: only an unordered one holds).
    pub(crate) ordered: bool,
    /// The connection whose `tools/list` completed last; none before the first (which
    /// joins the model's list).
    pub(crate) listed_epoch: Option<u64>,
    pub(crate) read: Option<Read>,
    next_token: u64,
    /// Reads of the server's state that failed in a row (each retry waits longer).
    pub(crate) read_failures: u32,
    /// The hold deadline the driver was last asked to arm, if any.
    pub(crate) hold: Option<Instant>,
    /// How each connection's hint state behaves; `ordered` is set per connection.
    hint_config: HintConfig,
    /// Why the server is not connected: the last failed attempt's or ended connection's
    /// cause, plainly (`mcpl_host::link::cause`); none once a handshake completes.
    pub(crate) down_because: Option<String>,
    /// The tools the last `tools/list` left out because they need MCP tasks, each told to
    /// the agent once while it stays left out ([`crate::state::catalog::needs_tasks`]);
    /// never more than one list's tools.
    pub(crate) told_needs_tasks: std::collections::BTreeSet<String>,
    /// The names the last `tools/list` repeated, each told once while it stays repeated
    /// ([`crate::state::catalog::without_repeats`]); never more than one list's names.
    pub(crate) told_repeated: std::collections::BTreeSet<String>,
    /// The tools the last `tools/list` left out as unreadable, each told once while it
    /// stays so.
    pub(crate) told_unreadable: std::collections::BTreeSet<String>,
}

impl ServerSlot {
    /// A server not yet connected. `host_hints`: this host advertises `toolHints` to it.
    pub fn new(name: &str, host_hints: bool, policy: ToolPolicy, hint_config: HintConfig) -> Self {
        ServerSlot {
            name: name.to_owned(),
            catalog: Catalog::new(host_hints, None),
            hints: None,
            policy,
            push_events: false,
            phase: LinkPhase::Connecting,
            epoch: 0,
            ordered: true,
            listed_epoch: None,
            read: None,
            next_token: 0,
            read_failures: 0,
            hold: None,
            hint_config,
            down_because: None,
            told_needs_tasks: Default::default(),
            told_repeated: Default::default(),
            told_unreadable: Default::default(),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where its connection is: the link's phase ([`LinkPhase`], one enum per connection,
    /// issue #38) as the link last told it. The link tells the core four of its moves, so
    /// the slot holds one of four phases, each the link's at the moment it was told:
    /// - [`LinkPhase::Connecting`]: from the start until the first connection's
    ///   `initialize` result (or modern discovery) is read: the link's first attempt;
    /// - [`LinkPhase::AwaitingGrantReceipt`]: from that read (the tap's `Connected`,
    ///   [`super::HostCore::connected`]) until the handshake is told done: a session is up
    ///   and its grant is not known yet (a plain MCP server's link passes through at once,
    ///   and tells both in a row);
    /// - [`LinkPhase::Ready`]: the handshake is done (the link's `Connected`,
    ///   [`super::HostCore::handshake_done`]);
    /// - [`LinkPhase::Backoff`]: an attempt failed or the connection ended; the link backs
    ///   off and tries again on its own (its next attempts are not told, only their end).
    ///
    /// The link's steps inside a handshake (`AwaitingDiscoverResult`,
    /// `AwaitingInitializeResult`) and `Stopped` are not told: nothing of the agent's view
    /// changes with them.
    pub fn phase(&self) -> LinkPhase {
        self.phase
    }

    /// True while a connection is up: its `initialize` result was read and its end not
    /// yet told.
    pub(crate) fn linked(&self) -> bool {
        matches!(
            self.phase,
            LinkPhase::AwaitingGrantReceipt | LinkPhase::Ready
        )
    }

    /// The current connection (0 before the first).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The current connection delivers in the order the server wrote.
    pub fn ordered(&self) -> bool {
        self.ordered
    }

    /// The current connection's hint state, when hints count and it is up.
    pub fn hints(&self) -> Option<&HintState> {
        self.hints.as_ref()
    }

    /// The server as the presenter and the meta-tools read it.
    pub fn view(&self) -> ServerView<'_> {
        ServerView {
            name: &self.name,
            catalog: &self.catalog,
            hints: self.hints.as_ref(),
            policy: &self.policy,
            push_events: self.push_events,
            connected: self.phase == LinkPhase::Ready,
            down_because: self.down_because.as_deref(),
        }
    }

    /// A fresh hint state for the current connection, when hints count (§4.6: each
    /// connection has its own revs from 1); any read under way is forgotten.
    pub(crate) fn fresh_hints(&mut self) {
        self.hints = self.catalog.hints_count().then(|| {
            let mut h = HintState::new(HintConfig {
                ordered: self.ordered,
                ..self.hint_config
            });
            h.set_declared(declared(&self.catalog));
            h
        });
        self.read = None;
        self.read_failures = 0;
    }

    /// Starts a read: the token its completion must bring back.
    pub(crate) fn start_read(&mut self, step: ReadStep) -> u64 {
        self.next_token += 1;
        self.read = Some(Read {
            token: self.next_token,
            step,
        });
        self.next_token
    }

    /// True when `token` is the read under way on connection `epoch`.
    pub(crate) fn is_current_read(&self, epoch: u64, token: u64) -> bool {
        self.epoch == epoch && self.read.is_some_and(|r| r.token == token)
    }

    /// True while the connection waits for a statement: its connect-time one (§4.3), or a
    /// recovery's (§5.2). Either way the host does not know what is open there: after a
    /// lost answer (a Streamable HTTP POST cut, say) the server may have opened or ended
    /// what the host still believes otherwise, so a meta-tool call waits for the statement
    /// as after a connect (**\[project\]**, README "A lost message starts a recovery").
    /// A recovery's `tools/list` step does not count: the statement is read by then.
    pub(crate) fn settling(&self) -> bool {
        self.hints.as_ref().is_some_and(HintState::awaits_statement)
    }

    /// The summary for [`super::HostStatus`] (`read_ahead_peak` is the driver's to fill).
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
        let ready = self.phase == LinkPhase::Ready;
        ServerStatus {
            epoch: self.epoch,
            ready,
            settled: ready
                && self.listed_epoch == Some(self.epoch)
                && !self.hints.as_ref().is_some_and(HintState::is_connecting),
            unreachable: self.phase == LinkPhase::Backoff,
            hints_count: self.catalog.hints_count(),
            listed_tools: self.catalog.listed_tools().count(),
            hints,
            open,
            down_because: self.down_because.clone(),
            read_ahead_peak: 0,
        }
    }
}

/// The toolsets `catalog` declares, with their `instances` flag: what a hint state
/// believes open entries of ([`HintState::set_declared`]).
pub(crate) fn declared(catalog: &crate::state::Catalog) -> Vec<(String, bool)> {
    catalog
        .toolsets()
        .map(|(name, d)| (name.to_owned(), d.instances))
        .collect()
}

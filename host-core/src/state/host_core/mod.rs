//! [`HostCore`]: the agent's side of the host as one sans-IO state machine — every server's
//! [`ServerSlot`] (catalog, hint state, policy, connection phase, reads, hold deadline),
//! the [`Presenter`], the agent's [`Conversation`] and the [`MetaTools`], wired as the
//! tables in [`crate::state`] say. The `Host` actor feeds it what the links tell (in each
//! link's read order) and what the agent asks, each input with `now` where time matters,
//! and drains what it asks for in return: [`HostCore::poll_action`] (reads to send, timers
//! to arm, warnings to log) and [`HostCore::poll_shown`] (messages shown to the agent
//! outside tool results). Tests drive this same composition without sockets or actors.
//!
//! | file | what |
//! |---|---|
//! | `slot` | [`ServerSlot`], its connection's phase (the link's [`LinkPhase`](crate::link::phase::LinkPhase) as last told), the read under way ([`ReadStep`]) |
//! | `inbound` | what a link read (tapped, §5.2: hints apply when read) and what it did |
//! | `reads` | `toolsets/list` after every connect, and recovery (`toolsets/list`, then `tools/list`); retries |
//! | `agent` | the agent's calls (planned, sent, finished), turns, boundaries |
//! | `turn` | `TurnBudget`: how much one turn shows outside tool results, and what it left out |
//! | `status` | [`HostStatus`], [`ServerStatus`], [`HintSummary`] |

mod agent;
mod inbound;
mod reads;
mod slot;
mod status;
mod turn;

pub use agent::Step;
pub use inbound::{RESULTS_READ, ReadOutcome, reads_result, wants_read};
pub use slot::{ReadStep, ServerSlot};
pub use status::{HintSummary, HostStatus, ServerStatus};
pub use turn::{DEFAULT_MAX_TURN_BYTES, MIN_TURN_BYTES};

use crate::state::{
    AgentMessage, Change, Conversation, MessageKind, MetaTools, Output, Presenter, ServerView,
};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// What the core asks its driver to do. Each names the server and the connection
/// (`epoch`) it is for; the driver reports back through the input named.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Read the server's state: `toolsets/list` ([`ReadStep::Statement`]) or the link's
    /// listing of every tool ([`ReadStep::ToolsList`]); report with
    /// [`HostCore::read_done`]. Only whether it went through is reported: the result
    /// itself is applied where it is read ([`HostCore::read`], [`HostCore::listed`]).
    Read {
        /// The server.
        server: String,
        /// The connection.
        epoch: u64,
        /// The read's token.
        token: u64,
        /// Which read.
        step: ReadStep,
    },
    /// After `delay`, call [`HostCore::retry_due`] (a failed read is tried again).
    RetryAfter {
        /// The server.
        server: String,
        /// The connection.
        epoch: u64,
        /// The failed read's token.
        token: u64,
        /// How long to wait.
        delay: Duration,
    },
    /// Ask the server's link to list its tools again (hints were advertised anew).
    ListTools {
        /// The server.
        server: String,
    },
    /// Arm the server's hold timer for `at`, replacing any armed before (`None`: disarm);
    /// when it fires, call [`HostCore::hold_expired`] (§5.2: an early rev is held for the
    /// window).
    Hold {
        /// The server.
        server: String,
        /// The connection.
        epoch: u64,
        /// The deadline.
        at: Option<Instant>,
    },
    /// Log a warning about what a server sent (the driver rate-limits these: a peer can
    /// send many).
    PeerWarning {
        /// The server.
        server: String,
        /// What was wrong.
        what: String,
    },
}

/// How the core behaves.
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// The first wait before a failed read of a server's state is tried again; it doubles
    /// with each failure in a row, up to [`MAX_RETRY_DELAY`].
    pub retry_delay: Duration,
    /// The largest fraction taken off each retry's wait at random, 0 to 1 (**\[project\]**,
    /// [`DEFAULT_RETRY_JITTER`]): hosts whose reads failed together (a server too busy to
    /// answer any of them) read again spread out, not in step.
    pub retry_jitter: f64,
    /// Seeds the jitter's generator, so a test or a simulator run repeats.
    pub retry_seed: u64,
}

/// The largest fraction jitter takes off a read's retry wait by default: half.
pub const DEFAULT_RETRY_JITTER: f64 = 0.5;

/// The retry jitter's generator: SplitMix64, seeded ([`CoreConfig::retry_seed`]),
/// so that a run repeats. The core is pure (no OS randomness); the quality needed is only
/// that hosts seeded apart wait apart.
#[derive(Debug, Clone)]
pub(crate) struct Jitter(u64);

impl Jitter {
    pub(crate) fn new(seed: u64) -> Self {
        Jitter(seed)
    }

    /// The next number, uniform in [0, 1).
    fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // The top 53 bits, as an f64's mantissa holds them.
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `base` with a random part of at most `fraction` (clamped to 0..=1) taken off.
    pub(crate) fn cut(&mut self, base: Duration, fraction: f64) -> Duration {
        let fraction = if fraction.is_finite() {
            fraction.clamp(0.0, 1.0)
        } else {
            0.0
        };
        if fraction == 0.0 {
            return base;
        }
        base.mul_f64(1.0 - self.next_unit() * fraction)
    }
}

/// The longest wait before reading again after failed reads.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(30);

/// Where the server `name` is in `servers` (sorted by name). A free function, so that a
/// caller borrows only the servers and can still reach the presenter.
pub(crate) fn index(servers: &[ServerSlot], name: &str) -> Option<usize> {
    servers.binary_search_by(|s| s.name.as_str().cmp(name)).ok()
}

/// Server `name`'s slot while its connection is still `epoch` (what an older connection
/// reports is too late to count).
pub(crate) fn live<'a>(
    servers: &'a [ServerSlot],
    name: &str,
    epoch: u64,
) -> Option<&'a ServerSlot> {
    index(servers, name)
        .map(|i| &servers[i])
        .filter(|s| s.epoch == epoch)
}

/// [`live`], to change.
pub(crate) fn live_mut<'a>(
    servers: &'a mut [ServerSlot],
    name: &str,
    epoch: u64,
) -> Option<&'a mut ServerSlot> {
    index(servers, name)
        .map(|i| &mut servers[i])
        .filter(|s| s.epoch == epoch)
}

/// The host's agent side, sans I/O (see the module doc).
#[derive(Debug)]
pub struct HostCore {
    /// Sorted by name.
    pub(crate) servers: Vec<ServerSlot>,
    pub(crate) presenter: Presenter,
    pub(crate) conversation: Conversation,
    pub(crate) meta: MetaTools,
    config: CoreConfig,
    /// The retry jitter's generator state.
    jitter: Jitter,
    actions: VecDeque<Action>,
    shown: VecDeque<(u64, AgentMessage)>,
    /// What this turn has shown outside tool results (issue #37 item 5).
    turn: turn::TurnBudget,
}

impl HostCore {
    /// A core for these servers (names already checked unique by the caller).
    pub fn new(
        servers: impl IntoIterator<Item = ServerSlot>,
        presenter: Presenter,
        conversation: Conversation,
        meta: MetaTools,
        config: CoreConfig,
    ) -> Self {
        let mut servers: Vec<ServerSlot> = servers.into_iter().collect();
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        let turn = turn::TurnBudget::new(presenter.config().max_turn_bytes);
        let jitter = Jitter::new(config.retry_seed);
        HostCore {
            servers,
            presenter,
            conversation,
            meta,
            config,
            jitter,
            actions: VecDeque::new(),
            shown: VecDeque::new(),
            turn,
        }
    }

    /// The next thing the driver must do, in the order the core asked.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The next message shown to the agent outside a tool result (a notice, a push, a
    /// reminder), with its sequence number in the conversation.
    pub fn poll_shown(&mut self) -> Option<(u64, AgentMessage)> {
        self.shown.pop_front()
    }

    /// Adds a server (one of that name is replaced).
    pub fn add_server(&mut self, slot: ServerSlot) {
        match self.servers.binary_search_by(|s| s.name.cmp(&slot.name)) {
            Ok(i) => self.servers[i] = slot,
            Err(i) => self.servers.insert(i, slot),
        }
    }

    /// A server, by name.
    pub fn slot(&self, name: &str) -> Option<&ServerSlot> {
        index(&self.servers, name).map(|i| &self.servers[i])
    }

    /// Every server, by name.
    pub fn servers(&self) -> impl Iterator<Item = &ServerSlot> {
        self.servers.iter()
    }

    /// The presenter (what the agent was told).
    pub fn presenter(&self) -> &Presenter {
        &self.presenter
    }

    /// The presenter, to take its dirty flag once its told ids are persisted.
    pub fn presenter_mut(&mut self) -> &mut Presenter {
        &mut self.presenter
    }

    /// The agent's conversation.
    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    /// True while some server's connection waits for a statement, its connect-time one
    /// (§4.3) or a recovery's (§5.2 \[project\]): a meta-tool call made now may wait for it.
    pub fn settling(&self) -> bool {
        self.servers.iter().any(ServerSlot::settling)
    }

    /// Every server's status (`calls_waiting` is the driver's).
    pub fn status(&self, calls_waiting: usize) -> HostStatus {
        HostStatus {
            servers: self
                .servers
                .iter()
                .map(|s| (s.name.clone(), s.status()))
                .collect(),
            calls_waiting,
        }
    }

    /// Shows messages to the agent, within what one turn shows ([`turn::TurnBudget`]: past
    /// it a message is cut or left out, and counted): each shown is recorded in the
    /// conversation, and every one but a tool result (which goes back to its caller) is
    /// queued for [`Self::poll_shown`]. Returns what was shown, with each one's seq.
    fn show(&mut self, messages: Vec<AgentMessage>) -> Vec<(u64, AgentMessage)> {
        let admitted: Vec<AgentMessage> = messages
            .into_iter()
            .flat_map(|m| self.turn.admit(m))
            .collect();
        admitted.into_iter().map(|m| self.record_shown(m)).collect()
    }

    /// Records one message shown (already within the turn's budget) and queues it.
    fn record_shown(&mut self, m: AgentMessage) -> (u64, AgentMessage) {
        let seq = self.conversation.push(m.clone());
        if m.kind != MessageKind::ToolResult {
            self.shown.push_back((seq, m.clone()));
        }
        (seq, m)
    }

    /// The agent acts (its turn starts, or it calls): a fresh turn, opened by the notice of
    /// what the last one left out, if anything.
    fn renew_turn(&mut self) {
        if let Some(m) = self.turn.renew() {
            self.record_shown(m);
        }
    }

    fn warn_peer(&mut self, server: &str, what: String) {
        self.actions.push_back(Action::PeerWarning {
            server: server.to_owned(),
            what,
        });
    }

    /// What a server's hint state reported: presence moves go to the catalog (applied at
    /// the next boundary, §3), every change to the presenter, `Recover` starts the reads
    /// (§5.2), and the hold timer follows the state's next deadline.
    pub(crate) fn after_hints(&mut self, server: &str, outs: Vec<Output>) {
        let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) else {
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
            self.start_read(server, ReadStep::Statement);
        }
        self.rearm_hold(server);
    }

    /// Feeds one input to a server's hint state, if hints count there (§2, vector 30).
    fn feed(
        &mut self,
        server: &str,
        now: Instant,
        input: impl FnOnce(&mut crate::state::HintState, Instant) -> Vec<Output>,
    ) {
        let Some(hints) = index(&self.servers, server)
            .map(|i| &mut self.servers[i])
            .and_then(|s| s.hints.as_mut())
        else {
            return;
        };
        let outs = input(hints, now);
        self.after_hints(server, outs);
    }

    /// Asks for the hold timer at the hint state's next deadline, when that changed.
    fn rearm_hold(&mut self, server: &str) {
        let Some(slot) = index(&self.servers, server).map(|i| &mut self.servers[i]) else {
            return;
        };
        let want = slot.hints.as_ref().and_then(|h| h.poll_timeout());
        if slot.hold == want {
            return;
        }
        slot.hold = want;
        self.actions.push_back(Action::Hold {
            server: server.to_owned(),
            epoch: slot.epoch,
            at: want,
        });
    }

    /// The hold timer of connection `epoch` fired (§5.2).
    pub fn hold_expired(&mut self, server: &str, epoch: u64, now: Instant) {
        let Some(slot) = live_mut(&mut self.servers, server, epoch) else {
            return;
        };
        slot.hold = None;
        self.feed(server, now, |h, now| h.handle_timeout(now));
    }

    /// A tool-list boundary (§3, §6): each catalog rebuilds its snapshot, the presence
    /// moves are told, and the model's list is rebuilt. True when the list changed.
    pub fn boundary(&mut self) -> bool {
        for i in 0..self.servers.len() {
            let slot = &mut self.servers[i];
            let outs = slot.catalog.rebuild_boundary();
            let view = slot.view();
            let shown = self.presenter.catalog_outputs(&view, &outs);
            self.show(shown);
        }
        self.rebuild_tool_list()
    }

    /// A compaction: everything shown so far leaves the agent's context, and the list is
    /// rebuilt as at any boundary. True when the list changed.
    pub fn compact(&mut self) -> bool {
        self.conversation.compact();
        self.boundary()
    }

    /// Rebuilds the model's list from each catalog's snapshot, without a boundary (a
    /// server's first listing joins the list).
    fn rebuild_tool_list(&mut self) -> bool {
        let bounds = *self.presenter.bounds();
        let views: Vec<ServerView<'_>> = self.servers.iter().map(ServerSlot::view).collect();
        self.conversation.rebuild_tool_list(&views, &bounds)
    }
}

#[cfg(test)]
mod tests;

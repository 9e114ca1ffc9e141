//! `HintState`: one connection's view of a server's hint state, and the rev rules that keep
//! it right (§3, §4.3, §5.2). Sans-IO: no clock, no async; time comes in as `now`.
//!
//! # Lifecycle
//!
//! ```text
//!  new() ─► Connecting ──(a statement above last)──► Idle ◄──────────────────┐
//!                │                                     │ ordered: gap or step  │
//!                │ it did not cover                    │ back; a hold expired; │ tools/list
//!                │ something seen before it            │ a coalesced push      │
//!                ▼                                     ▼  ⇒ Output::Recover    │
//!        AwaitingStatement ◄───────────────────────────┘                       │
//!                │ (a statement above last, rev M)                              │
//!                ▼                                                              │
//!        AwaitingToolsList ──(tools/list)─────────────────────────────────────┘
//!                 └─(tools/list, but something seen meanwhile is beyond M, or a hold
//!                    is still expired)──► AwaitingStatement, with Output::Recover
//! ```
//!
//! Gaps and step backs seen while a read is under way start nothing (§5.2: one recovery
//! at a time); they are remembered as the rev the coming statement must reach ("cover").
//!
//! A state is made per connection epoch (§4.6: each connection has its own rev counter from
//! 1). Its owner reads `toolsets/list` (and `tools/list`) at connect without being asked;
//! that read ends `Connecting`; one that fails is read again and leaves it `Connecting`
//! (nothing is settled before a statement). Anything seen before it that the statement
//! does not cover starts a recovery right after it.
//!
//! # Reading a hint-carrying message ([`HintState::handle_hints`])
//!
//! In this order, when the message is **read**, whatever is decided about it (§5.2: a
//! refused push, a result of a call that timed out, vector 28):
//!
//! 1. A push whose `eventId` was seen before on a hint-carrying push: hints ignored, its rev
//!    still counts as read (§5.2 **\[project\]**, vector 35) — see [`HintState::handle_hints`].
//!    A push with `coalesce`: hints ignored, rev counted, recovery (§5.2).
//! 2. Presence entries apply by stamp at once, whatever the message's fate (§3).
//! 3. Suggestions are reported at once: they are not state, and they belong with the
//!    message that explains them (§5.3, §6).
//! 4. Visibility, definition and toolset entries follow the rev rules (§5.2):
//!    `rev == last + 1` applies then drains held successors; `rev <= last` is stale;
//!    `rev > last + 1` is a gap (ordered: recover; unordered: hold for the window).

mod apply;
mod statement;
#[cfg(test)]
mod tests;

use super::keys::{FastMap, probe};
use super::listing::{Listing, Place};
use super::output::{Carrier, Cause, Change, HintStats, Output, RecoverReason};
use super::seen_ids::SeenIds;
use mcpl_protocol::hints::ToolDefinition;
use mcpl_protocol::mcp::ToolAnnotations;
use mcpl_protocol::{HintChanges, Presence, Tool};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How long an early rev is held on an unordered link (§5.2 **\[project\]**: 250 ms).
pub const DEFAULT_HOLD_WINDOW: Duration = Duration::from_millis(250);

/// How many push event ids a connection remembers for duplicate detection.
pub const DEFAULT_EVENT_ID_CAPACITY: usize = 4096;

/// How many early messages a connection holds at most; beyond that an early rev is
/// dropped and recovered like a gap on an ordered link (a bound on what a peer can make
/// the host keep).
pub const DEFAULT_MAX_HELD: usize = 1024;

/// How many bytes the early messages held may weigh at most (their changes as JSON): a
/// thousand messages of the transport's largest would be gigabytes, so the count alone
/// bounds nothing (**\[project\]**: 16 MiB, four of the default transport's largest
/// messages). Past it an early rev is dropped and recovered like a gap.
pub const DEFAULT_MAX_HELD_BYTES: usize = 16 << 20;

/// How a connection's hint state behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HintConfig {
    /// True for stdio and WebSocket, false for Streamable HTTP (§5.2).
    pub ordered: bool,
    /// How long an early rev is held on an unordered link.
    pub hold_window: Duration,
    /// How many push event ids are remembered.
    pub event_id_capacity: usize,
    /// How many early messages are held at most.
    pub max_held: usize,
    /// How many bytes the early messages held may weigh at most.
    pub max_held_bytes: usize,
    /// A deliberately broken rule, to prove that tests catch it (feature
    /// `fault-injection`). `None` in every real host.
    #[cfg(feature = "fault-injection")]
    pub fault: Option<HintFault>,
}

/// A rule of §5.2 broken on purpose (feature `fault-injection`): the simulator runs a host
/// with one of these to show that its invariants catch what they exist for.
#[cfg(feature = "fault-injection")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HintFault {
    /// An early rev on an unordered link is applied at once instead of being held, and the
    /// counter jumps to it (its missing predecessors then arrive stale and are ignored).
    SkipHold,
    /// A stale rev's state entries are applied instead of ignored.
    ApplyStale,
}

impl HintConfig {
    /// An ordered link (stdio, WebSocket): a gap or a step back recovers at once.
    pub fn ordered() -> Self {
        HintConfig {
            ordered: true,
            hold_window: DEFAULT_HOLD_WINDOW,
            event_id_capacity: DEFAULT_EVENT_ID_CAPACITY,
            max_held: DEFAULT_MAX_HELD,
            max_held_bytes: DEFAULT_MAX_HELD_BYTES,
            #[cfg(feature = "fault-injection")]
            fault: None,
        }
    }

    /// An unordered link (Streamable HTTP): early revs are held for the window.
    pub fn unordered() -> Self {
        HintConfig {
            ordered: false,
            ..Self::ordered()
        }
    }

    /// The same, holding early revs for `window`.
    pub fn with_hold_window(self, window: Duration) -> Self {
        HintConfig {
            hold_window: window,
            ..self
        }
    }
}

/// What a hint's `definition` changes: only these three members (§5.1, vector 20). The
/// tool's name, its class and every other member stay those of the listed tool.
///
/// A member left out keeps the value beneath it: an instance's own definition sits on the
/// shared one, which sits on the listed tool **\[project\]**.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DefinitionOverride {
    /// The new description.
    pub description: Option<String>,
    /// The new input schema.
    pub input_schema: Option<Value>,
    /// The new annotations.
    pub annotations: Option<ToolAnnotations>,
}

impl DefinitionOverride {
    /// Takes the three members a hint may change and drops the rest (§5.1, vector 20).
    pub fn from_hint(d: &ToolDefinition) -> Self {
        DefinitionOverride {
            description: d.description.clone(),
            input_schema: d.input_schema.clone(),
            annotations: d.annotations.clone(),
        }
    }

    fn apply_to(&self, tool: &mut Tool) {
        if let Some(d) = &self.description {
            tool.description = Some(d.clone());
        }
        if let Some(s) = &self.input_schema {
            tool.input_schema = s.clone();
        }
        if let Some(a) = &self.annotations {
            tool.annotations = Some(a.clone());
        }
    }
}

/// An open toolset, or an open instance of one.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenToolset {
    /// The toolset.
    pub toolset: String,
    /// The instance, for an instanced toolset.
    pub instance: Option<String>,
    /// Its title.
    pub title: Option<String>,
    /// The options it was opened with, when a full statement said (§4.3).
    pub options: Option<Value>,
}

/// (tool, instance-or-none): the key of visibility and definitions.
type ToolKey = (String, Option<String>);
/// (toolset, instance-or-none): the key of open state.
type SetKey = (String, Option<String>);

/// A presence value and the rev it was set at (§3's stamp).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamped {
    presence: Presence,
    rev: u64,
}

/// A tool as the newest `tools/list` listed it: where it is in that list, and its toolset.
#[derive(Debug, Clone, PartialEq)]
struct Listed {
    /// Its place in [`HintState`]'s list (the last, for a name listed twice).
    at: usize,
    toolset: Option<String>,
}

impl Place for Listed {
    fn at(&self) -> usize {
        self.at
    }
}

/// Where the connection is in its reads of the server's state (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the connect-time `toolsets/list`. `cover`: the highest rev whose loss
    /// the statement must cover (0 when none).
    Connecting { cover: u64 },
    /// Nothing under way.
    Idle,
    /// Recovery step 1: `Output::Recover` given, `toolsets/list` not read yet.
    AwaitingStatement { cover: u64 },
    /// Recovery step 2: the statement at rev `statement` read, `tools/list` not yet.
    AwaitingToolsList { statement: u64, cover: u64 },
}

/// An early message waiting for its predecessors.
#[derive(Debug, Clone)]
struct Held {
    /// None: a rev counted as read without changes (a duplicate or coalesced push).
    message: Option<(Carrier, HintChanges)>,
    deadline: Instant,
    /// Its window passed; it has started or joined a recovery.
    expired: bool,
    /// Held when a recovery started: the server wrote it before that recovery's
    /// `toolsets/list`, so the statement's rev must reach it.
    before_recovery: bool,
    /// What it weighs ([`held_weight`]).
    bytes: usize,
}

/// What an early message weighs while held: its changes as JSON, and a fixed share for
/// the bookkeeping.
fn held_weight(message: &Option<(Carrier, HintChanges)>) -> usize {
    const ENTRY: usize = 64;
    let changes = message
        .as_ref()
        .and_then(|(_, c)| serde_json::to_vec(c).ok())
        .map_or(0, |json| json.len());
    ENTRY + changes
}

/// One connection's hint state (§5.2). See the module doc for the rules and their order.
#[derive(Debug, Clone)]
pub struct HintState {
    config: HintConfig,
    last: u64,
    phase: Phase,
    held: BTreeMap<u64, Held>,
    /// What the held messages weigh together.
    held_bytes: usize,
    visible: BTreeSet<ToolKey>,
    overrides: BTreeMap<ToolKey, DefinitionOverride>,
    presence: FastMap<String, Stamped>,
    /// The newest `tools/list` read, shared with the catalog, and each of its tools by name.
    listed: Listing<Listed>,
    listed_rev: Option<u64>,
    open: BTreeMap<SetKey, OpenToolset>,
    ended_reported: BTreeSet<String>,
    /// Instances closed by [`HintState::close_toolset`]: the server's later record of their
    /// end is counted told without a second report.
    closed_locally: BTreeSet<SetKey>,
    events: SeenIds,
    /// Instances that ended while this connection lasted, and those the last statement
    /// lists as ended: names a host should not propose again while their end may still be
    /// told (bounded; the oldest forgotten first).
    retired: SeenIds,
    /// The toolsets the manifest declares, each with its `instances` flag, once the host
    /// said ([`HintState::set_declared`]): an open entry or record that does not fit them
    /// is not believed (§4.1, §4.4). None: every entry is taken as it comes.
    declared: Option<BTreeMap<String, bool>>,
    /// Instances whose end came with its record's id (a closed entry naming `ended`, a
    /// statement's record), newest last, at most [`ENDED_NAMES`]: the server keeps their
    /// last view readable by their read-only tools while it keeps the record (§4.3).
    ended: std::collections::VecDeque<SetKey>,
    stats: HintStats,
}

/// How many instances with an ended record a connection's state remembers.
const ENDED_NAMES: usize = 256;

/// How many ended instance names a connection's state remembers.
const RETIRED_NAMES: usize = 4096;

fn retired_key(toolset: &str, instance: Option<&str>) -> String {
    format!("{toolset}\u{0}{}", instance.unwrap_or_default())
}

fn changed(cause: &Cause, change: Change) -> Output {
    Output::Changed {
        cause: cause.clone(),
        change,
    }
}

impl HintState {
    /// A fresh state for a new connection epoch: `last = 0`, nothing visible, nothing open,
    /// waiting for the connect-time `toolsets/list` (§4.3: hosts read it after every connect;
    /// §4.6: a new connection starts from it).
    pub fn new(config: HintConfig) -> Self {
        HintState {
            config,
            last: 0,
            phase: Phase::Connecting { cover: 0 },
            held: BTreeMap::new(),
            held_bytes: 0,
            visible: BTreeSet::new(),
            overrides: BTreeMap::new(),
            presence: FastMap::default(),
            listed: Listing::default(),
            listed_rev: None,
            open: BTreeMap::new(),
            ended_reported: BTreeSet::new(),
            closed_locally: BTreeSet::new(),
            events: SeenIds::new(config.event_id_capacity),
            retired: SeenIds::new(RETIRED_NAMES),
            declared: None,
            ended: std::collections::VecDeque::new(),
            stats: HintStats::default(),
        }
    }

    /// The toolsets the server's manifest declares now, by name, with their `instances`
    /// flag (§4.1). From then on an `open` entry or statement record is believed only when
    /// it fits them **\[project\]** (§5.1 "one unreadable entry costs only itself"): the
    /// toolset is declared (an undeclared group is the host's to open, §4.4, and a name
    /// nothing declares is no toolset), and it names an instance exactly when the toolset
    /// has instances. Such an entry is ignored and counted; the rest of its message
    /// applies. Closed entries are always read: an end may name a toolset no longer
    /// declared (§4.1: a removal ends its instances), and its record id counts told.
    pub fn set_declared(&mut self, toolsets: impl IntoIterator<Item = (String, bool)>) {
        self.declared = Some(toolsets.into_iter().collect());
    }

    /// Whether an open entry or record for `instance` of `toolset` fits the declarations.
    pub(super) fn fits(&mut self, toolset: &str, instance: Option<&str>) -> bool {
        let Some(declared) = &self.declared else {
            return true;
        };
        let fits = declared
            .get(toolset)
            .is_some_and(|&instances| instances == instance.is_some());
        if !fits {
            self.stats.unfit += 1;
            tracing::debug!(
                toolset,
                instance,
                declared = declared.contains_key(toolset),
                "an open entry that does not fit the manifest's toolsets is ignored"
            );
        }
        fits
    }

    /// Reads one hint-carrying message (a result's `mcpl/hints`, a push's `hints`, or a
    /// `tools/hints`), at the moment it is read (§5.2).
    ///
    /// **Duplicate pushes** (§5.2 **\[project\]**, vector 35). "Seen" means seen on an earlier
    /// *hint-carrying* push of this connection (a hint-less re-send, which a server may
    /// make, is not this state's business: it may even arrive first on an unordered link).
    /// A duplicate's hints are ignored entirely, presence and suggestions included, and its
    /// rev counts as read:
    /// - `rev == last + 1`: `last` advances to it and held successors drain;
    /// - `rev > last + 1`: held as an empty message (unordered), so the gap it sits in can
    ///   close; on an ordered link it is a real gap (something before it was lost): recover;
    /// - `rev <= last`: nothing, not even a recovery on an ordered link (there is no state to
    ///   lose in a message whose hints are ignored anyway).
    ///
    /// A push with `coalesce` counts its rev the same way and recovers when its rev is
    /// beyond `last` (its ignored hints may have mattered); at or below `last` it is stale.
    pub fn handle_hints(
        &mut self,
        carrier: Carrier,
        changes: HintChanges,
        now: Instant,
    ) -> Vec<Output> {
        let mut out = Vec::new();
        let rev = changes.rev;
        if let Carrier::Push { event_id, coalesce } = &carrier {
            if !self.events.insert(event_id) {
                // §5.2 [project]: hints ignored, rev counted as read (vector 35).
                self.stats.duplicates += 1;
                if rev > self.last {
                    self.count_as_read(rev, now, &mut out);
                }
                return out;
            }
            if *coalesce {
                // §5.2: a push with `coalesce` must not carry hints; ignore them and recover.
                self.stats.coalesced += 1;
                if rev > self.last {
                    self.count_as_read(rev, now, &mut out);
                    self.request_recovery(rev, RecoverReason::Coalesced { rev }, &mut out);
                } else {
                    self.stale(rev, &mut out);
                }
                return out;
            }
        }
        let cause = Cause::Message {
            rev,
            carrier: carrier.clone(),
        };
        // §3: presence entries apply by stamp whatever becomes of the message; §5.3:
        // suggestions are shown, with the message that brought them.
        self.apply_unordered_entries(&changes, rev, &cause, &mut out);
        let expected = self.next();
        #[cfg(feature = "fault-injection")]
        match self.config.fault {
            Some(HintFault::SkipHold) if rev > expected && !self.config.ordered => {
                self.last = rev - 1;
                self.apply_in_order(rev, carrier, &changes, &mut out);
                return out;
            }
            Some(HintFault::ApplyStale) if rev < expected => {
                let last = self.last;
                self.apply_in_order(rev, carrier, &changes, &mut out);
                self.last = last;
                return out;
            }
            _ => {}
        }
        if rev == expected {
            self.apply_in_order(rev, carrier, &changes, &mut out);
            self.drain(&mut out);
        } else if rev < expected {
            self.stale(rev, &mut out);
        } else {
            self.early(rev, Some((carrier, changes)), now, &mut out);
        }
        out
    }

    /// Fires hold windows that have passed (§5.2: "if the window passes, start recovery").
    /// One recovery at a time: an expiry during a recovery starts none; what the recovery's
    /// statement leaves held gets a fresh window, and a hold still expired when the recovery
    /// ends starts the next one.
    pub fn handle_timeout(&mut self, now: Instant) -> Vec<Output> {
        let mut out = Vec::new();
        let mut first = None;
        for (rev, h) in self.held.iter_mut() {
            if !h.expired && h.deadline <= now {
                h.expired = true;
                self.stats.expired += 1;
                first.get_or_insert(*rev);
            }
        }
        if let Some(rev) = first {
            tracing::debug!(rev, last = self.last, "hint hold expired");
            if self.phase == Phase::Idle {
                self.start_recovery(RecoverReason::HoldExpired { rev }, &mut out);
            }
        }
        out
    }

    /// The owner could not complete a recovery's reads (an error or a timeout): start it
    /// again from `toolsets/list`. Does nothing when no read is under way.
    ///
    /// A failed **connect-time** read leaves the state `Connecting`: it has read no
    /// statement, so it knows nothing of what is open (§4.3: nothing is settled before the
    /// connection's first `toolsets/list`). Moving it to a recovery's phase would make it
    /// look settled with nothing open, and the agent would be told that every open toolset
    /// closed, then that it opened again once the next read came back.
    pub fn handle_recovery_failed(&mut self) -> Vec<Output> {
        let mut out = Vec::new();
        let (cover, connecting) = match self.phase {
            Phase::Idle => return out,
            Phase::Connecting { cover } => (cover, true),
            Phase::AwaitingStatement { cover } => (cover, false),
            Phase::AwaitingToolsList { cover, .. } => (cover, false),
        };
        // A read made again, not a recovery: nothing new was found missing (issue #42:
        // under overload these outnumbered the recoveries and read as if they were).
        self.stats.reads_failed += 1;
        self.begin_reads(RecoverReason::Failed, &mut out);
        self.phase = if connecting {
            Phase::Connecting { cover }
        } else {
            Phase::AwaitingStatement { cover }
        };
        out
    }

    /// A message on this connection was not read though the server may have written it —
    /// an answer whose Streamable HTTP POST failed or that timed out and may never come, a
    /// message refused as too large or not valid JSON-RPC. Its hint changes, if it carried
    /// any, are lost, and on a quiet connection nothing later would
    /// show the gap: recover now (§5.2 **\[project\]**: the rule's purpose, "never lose a
    /// change", read for a loss the host learns of directly). During a read under way, one
    /// more recovery follows it: that read may have been answered before the lost request
    /// was carried out. Every recovery's `toolsets/list` takes a rev of its own (§4.3), so
    /// this cannot loop.
    pub fn handle_lost_message(&mut self) -> Vec<Output> {
        let mut out = Vec::new();
        self.request_recovery(u64::MAX, RecoverReason::LostMessage, &mut out);
        out
    }

    /// The earliest instant at which [`HintState::handle_timeout`] has something to do.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.held
            .values()
            .filter(|h| !h.expired)
            .map(|h| h.deadline)
            .min()
    }

    // ---- rev bookkeeping -------------------------------------------------------------

    /// A rev at or below `last`: visibility, definition and toolset entries are stale and
    /// ignored (§5.2, vectors 4, 22). On an ordered link that cannot happen with a
    /// well-behaved server: recover.
    fn stale(&mut self, rev: u64, out: &mut Vec<Output>) {
        self.stats.stale += 1;
        if self.config.ordered {
            self.request_recovery(rev, RecoverReason::Stale { rev }, out);
        }
    }

    /// A rev beyond `last + 1`. Ordered: a gap, recover (§5.2, vector 21); the message is
    /// dropped, as the statement will cover it. Unordered: hold it for the window (vector
    /// 37) — unless the hold is full, when it is dropped and recovered like an ordered gap.
    /// A rev already held is a server fault and counts as stale.
    fn early(
        &mut self,
        rev: u64,
        message: Option<(Carrier, HintChanges)>,
        now: Instant,
        out: &mut Vec<Output>,
    ) {
        self.stats.gaps += 1;
        let bytes = held_weight(&message);
        let full = self.held.len() >= self.config.max_held
            || self.held_bytes.saturating_add(bytes) > self.config.max_held_bytes;
        if self.config.ordered || full {
            tracing::debug!(rev, last = self.last, "hint gap");
            let expected = self.next();
            self.request_recovery(rev, RecoverReason::Gap { expected, got: rev }, out);
        } else if self.held.contains_key(&rev) {
            self.stats.stale += 1;
        } else {
            self.stats.held += 1;
            let deadline = now + self.config.hold_window;
            self.held.insert(
                rev,
                Held {
                    message,
                    deadline,
                    expired: false,
                    before_recovery: false,
                    bytes,
                },
            );
            self.held_bytes += bytes;
        }
    }

    /// Counts again what the held messages weigh, after some were dropped together.
    fn reweigh_held(&mut self) {
        self.held_bytes = self.held.values().map(|h| h.bytes).sum();
    }

    /// A rev read without changes (duplicate or coalesced push, `rev > last`).
    fn count_as_read(&mut self, rev: u64, now: Instant, out: &mut Vec<Output>) {
        if rev == self.next() {
            self.last = rev;
            self.drain(out);
        } else {
            self.early(rev, None, now, out);
        }
    }

    /// Applies held successors of `last` in order (§5.2).
    fn drain(&mut self, out: &mut Vec<Output>) {
        while let Some(h) = self.held.remove(&self.next()) {
            self.held_bytes -= h.bytes;
            if !h.expired {
                self.stats.resolved_in_window += 1;
            }
            match h.message {
                Some((carrier, changes)) => {
                    self.apply_in_order(self.next(), carrier, &changes, out)
                }
                None => self.last = self.next(),
            }
        }
    }

    /// The rev expected next. Saturating: a peer's rev never makes the host panic.
    fn next(&self) -> u64 {
        self.last.saturating_add(1)
    }

    // ---- recovery --------------------------------------------------------------------

    /// Something up to rev `cover` may be lost. Idle: recover now. Otherwise the read under
    /// way covers it if its statement's rev reaches `cover`; if not, another recovery follows
    /// this one (§5.2: one recovery at a time).
    fn request_recovery(&mut self, cover: u64, reason: RecoverReason, out: &mut Vec<Output>) {
        match &mut self.phase {
            Phase::Idle => self.start_recovery(reason, out),
            Phase::Connecting { cover: c }
            | Phase::AwaitingStatement { cover: c }
            | Phase::AwaitingToolsList { cover: c, .. } => *c = (*c).max(cover),
        }
    }

    fn start_recovery(&mut self, reason: RecoverReason, out: &mut Vec<Output>) {
        self.stats.recoveries += 1;
        self.begin_reads(reason, out);
    }

    /// A recovery's reads start (from `toolsets/list`): a new recovery's, or a failed one's
    /// made again.
    fn begin_reads(&mut self, reason: RecoverReason, out: &mut Vec<Output>) {
        tracing::debug!(?reason, last = self.last, "hint recovery");
        for h in self.held.values_mut() {
            h.before_recovery = true;
        }
        self.phase = Phase::AwaitingStatement { cover: 0 };
        out.push(Output::Recover(reason));
    }

    // ---- queries ---------------------------------------------------------------------

    /// The last rev applied (`last` of §5.2). Never goes back.
    pub fn last_rev(&self) -> u64 {
        self.last
    }

    /// True for an ordered link.
    pub fn is_ordered(&self) -> bool {
        self.config.ordered
    }

    /// True while a recovery's reads are under way (not the connect-time read).
    pub fn is_recovering(&self) -> bool {
        matches!(
            self.phase,
            Phase::AwaitingStatement { .. } | Phase::AwaitingToolsList { .. }
        )
    }

    /// True until the connect-time `toolsets/list` has been read.
    pub fn is_connecting(&self) -> bool {
        matches!(self.phase, Phase::Connecting { .. })
    }

    /// True while a `toolsets/list` is what the state waits for (at connect, or a
    /// recovery's first step): a statement read that leaves this true did not count (it
    /// was stale), and the owner reads again.
    pub fn awaits_statement(&self) -> bool {
        matches!(
            self.phase,
            Phase::Connecting { .. } | Phase::AwaitingStatement { .. }
        )
    }

    /// True while a recovery waits for its `tools/list` (its second step, §5.2).
    pub fn awaits_tools_list(&self) -> bool {
        matches!(self.phase, Phase::AwaitingToolsList { .. })
    }

    /// How many early messages are held.
    pub fn held_count(&self) -> usize {
        self.held.len()
    }

    /// The revs held, in order. Each is beyond `last + 1`: a successor is applied at once.
    pub fn held_revs(&self) -> impl Iterator<Item = u64> + '_ {
        self.held.keys().copied()
    }

    /// What the early messages held weigh now, in bytes (as [`HintConfig::max_held_bytes`]
    /// counts them).
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Counters for a report.
    pub fn stats(&self) -> HintStats {
        self.stats
    }

    /// True when `tool` is visible in `instance` (or outside instances, with `None`).
    /// Meaningful for dynamic tools: a static tool stays in the model's list and the
    /// server gates its calls (§3, §6).
    pub fn is_visible(&self, tool: &str, instance: Option<&str>) -> bool {
        self.visible.contains(probe(&(tool, instance)))
    }

    /// Every (tool, instance) now visible, in order.
    pub fn visible_tools(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.visible.iter().map(|(t, i)| (t.as_str(), i.as_deref()))
    }

    /// The tool's current definition in `instance` (or the shared one with `None`): the
    /// listed tool with the shared override, then the instance's own, laid over it (§5.1).
    /// A static tool's definition is the listed one (§5.1: it changes only through
    /// `notifications/tools/list_changed`). None for a tool not listed.
    pub fn definition(&self, tool: &str, instance: Option<&str>) -> Option<Tool> {
        let mut t = self.listed_tool(tool)?.clone();
        if self.is_static(tool) {
            return Some(t);
        }
        if let Some(o) = self.overrides.get(probe(&(tool, None))) {
            o.apply_to(&mut t);
        }
        if let Some(i) = instance
            && let Some(o) = self.overrides.get(probe(&(tool, Some(i))))
        {
            o.apply_to(&mut t);
        }
        Some(t)
    }

    /// The description and input schema of the tool's current definition in `instance`
    /// (the members the agent is shown), borrowed: the same as
    /// [`HintState::definition`]'s, without copying the tool. None for a tool not listed.
    pub fn description_and_schema(
        &self,
        tool: &str,
        instance: Option<&str>,
    ) -> Option<(Option<&String>, &Value)> {
        let listed = self.listed_tool(tool)?;
        let mut description = listed.description.as_ref();
        let mut schema = &listed.input_schema;
        if self.is_static(tool) {
            return Some((description, schema));
        }
        let shared = self.overrides.get(probe(&(tool, None)));
        let own = instance.and_then(|i| self.overrides.get(probe(&(tool, Some(i)))));
        // The shared override, then the instance's own, laid over the listed tool (§5.1).
        for o in [shared, own].into_iter().flatten() {
            if let Some(d) = &o.description {
                description = Some(d);
            }
            if let Some(s) = &o.input_schema {
                schema = s;
            }
        }
        Some((description, schema))
    }

    /// The override a hint or statement set for exactly this key, if any.
    pub fn definition_override(
        &self,
        tool: &str,
        instance: Option<&str>,
    ) -> Option<&DefinitionOverride> {
        self.overrides.get(probe(&(tool, instance)))
    }

    /// The tool's presence: dynamic if it belongs to a toolset (§3, vector 16), else the
    /// newest stamped value. None for a tool this state has heard nothing of.
    pub fn presence(&self, tool: &str) -> Option<Presence> {
        if self.toolset_of(tool).is_some() {
            return Some(Presence::Dynamic);
        }
        self.presence.get(tool).map(|s| s.presence)
    }

    /// The tool as the newest `tools/list` listed it.
    fn listed_tool(&self, tool: &str) -> Option<&Tool> {
        self.listed.tool(tool)
    }

    /// The toolset the listed tool belongs to (`mcpl/toolset`), declared or not.
    pub fn toolset_of(&self, tool: &str) -> Option<&str> {
        self.listed.by_name.get(tool)?.toolset.as_deref()
    }

    /// Every open toolset and instance, in order.
    pub fn open_instances(&self) -> impl Iterator<Item = &OpenToolset> {
        self.open.values()
    }

    /// True when the toolset (or the instance of it) is open.
    pub fn is_open(&self, toolset: &str, instance: Option<&str>) -> bool {
        self.open.contains_key(probe(&(toolset, instance)))
    }

    /// True when the name is open, or ended recently enough that its end may still be
    /// reported: a name a host proposing a fresh instance should not take (§4.2).
    pub fn name_in_use(&self, toolset: &str, instance: &str) -> bool {
        self.is_open(toolset, Some(instance))
            || self.retired.contains(&retired_key(toolset, Some(instance)))
    }

    /// True when `instance` of `toolset` ended with a record this connection heard of (a
    /// closed entry naming `ended`, or a statement's record), and is not open again: the
    /// server answers its read-only tools with its last view while it keeps the record
    /// (§4.3).
    pub fn has_ended(&self, toolset: &str, instance: &str) -> bool {
        !self.is_open(toolset, Some(instance))
            && self
                .ended
                .iter()
                .any(|(t, i)| t == toolset && i.as_deref() == Some(instance))
    }

    /// The instance of `toolset` whose end with a record was heard last, if it is not open
    /// again.
    pub fn last_ended(&self, toolset: &str) -> Option<&str> {
        self.ended
            .iter()
            .rev()
            .filter(|(t, _)| t == toolset)
            .find_map(|(_, i)| i.as_deref())
            .filter(|i| !self.is_open(toolset, Some(i)))
    }

    /// Notes that an instance ended with a record (see [`HintState::has_ended`]).
    pub(super) fn note_ended(&mut self, toolset: &str, instance: Option<&str>) {
        let Some(instance) = instance else {
            return;
        };
        self.ended
            .retain(|(t, i)| !(t == toolset && i.as_deref() == Some(instance)));
        if self.ended.len() == ENDED_NAMES {
            self.ended.pop_front();
        }
        self.ended
            .push_back((toolset.to_owned(), Some(instance.to_owned())));
    }

    /// Notes that an instance ended (see [`HintState::name_in_use`]).
    pub(super) fn retire(&mut self, toolset: &str, instance: Option<&str>) {
        self.retired.insert(&retired_key(toolset, instance));
    }

    /// The open instances of an instanced toolset (§4.5: the names a call error lists).
    pub fn instances_of(&self, toolset: &str) -> Vec<&str> {
        // Keys are (toolset, instance): a toolset's entries are one run, from (toolset, None).
        self.open
            .range((toolset.to_owned(), None)..)
            .take_while(|((t, _), _)| t == toolset)
            .filter_map(|(_, o)| o.instance.as_deref())
            .collect()
    }

    fn is_static(&self, tool: &str) -> bool {
        self.presence(tool) == Some(Presence::Static)
    }
}

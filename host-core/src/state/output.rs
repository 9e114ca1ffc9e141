//! What [`HintState`](super::HintState) reports: the changes an agent should hear of, each
//! once, with the message that caused it, and the one thing the host must do (recover).

use mcpl_protocol::toolsets::EndedRecord;
use mcpl_protocol::{Id, Presence, Suggestion};
use serde::Serialize;

/// Which request's result carried hint changes (§5.2 carrier 1; `toolsets/list` has its
/// own input, [`HintState::handle_statement`](super::HintState::handle_statement)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResultOf {
    /// `tools/call`.
    CallTool,
    /// `toolsets/open`.
    ToolsetsOpen,
    /// `toolsets/close`.
    ToolsetsClose,
}

/// What brought a hint-carrying message (§5.2). Whether a result was still awaited or had
/// timed out makes no difference here: both apply (vector 28).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Carrier {
    /// `result._meta["mcpl/hints"]` of a request's result.
    Result {
        /// Which request.
        of: ResultOf,
        /// Its JSON-RPC id, so the presenter can attach the changes to that result.
        request: Id,
    },
    /// The `hints` member of a `push/event`.
    Push {
        /// The event's id (a seen one has its hints ignored, §5.2, vector 35), as the host
        /// keeps it: an id longer than 64 bytes is carried as its digest (`sha256:…`), so
        /// a peer's id costs a bounded number of bytes in every table it lands in.
        event_id: String,
        /// True when the push had a `coalesce` member (its hints are ignored, §5.2).
        coalesce: bool,
    },
    /// A `tools/hints` notification.
    Standalone,
}

/// What made a change happen.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Cause {
    /// A hint-carrying message, applied when its turn came.
    Message {
        /// Its rev.
        rev: u64,
        /// What carried it.
        carrier: Carrier,
    },
    /// A `toolsets/list` full statement taking this rev (§4.3).
    Statement {
        /// Its rev.
        rev: u64,
    },
    /// A `tools/list` result naming this rev (§3).
    ToolsList {
        /// The rev it names.
        rev: u64,
    },
    /// The server's manifest changed (§4.1): the host closed what it no longer declares.
    ManifestChange,
}

/// One change the agent should be told of, reported once (§6's announcements).
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A tool became visible or invisible, in an instance or outside instances.
    Visibility {
        /// The tool.
        tool: String,
        /// The instance, or none.
        instance: Option<String>,
        /// Visible now.
        visible: bool,
    },
    /// A tool's definition (the instance's own, or the shared one) changed: describe it
    /// again if it is visible (§6).
    Definition {
        /// The tool.
        tool: String,
        /// The instance whose own definition changed, or none for the shared one.
        instance: Option<String>,
    },
    /// A tool's presence moved. The catalog applies it at the next tool-list boundary, with
    /// a notice (§3, vectors 15, 24).
    Presence {
        /// The tool.
        tool: String,
        /// Its presence now.
        presence: Presence,
    },
    /// A toolset or instance is open that was not (an open here, elsewhere, or adopted from
    /// a full statement, §4.3, §4.6).
    Opened {
        /// The toolset.
        toolset: String,
        /// The instance, for an instanced toolset.
        instance: Option<String>,
        /// Its title.
        title: Option<String>,
    },
    /// An open toolset or instance has a new title.
    Retitled {
        /// The toolset.
        toolset: String,
        /// The instance.
        instance: Option<String>,
        /// The new title.
        title: String,
    },
    /// An open toolset or instance closed. Its tools' visibility and instance definitions
    /// went with it; no separate change is reported for them.
    Closed {
        /// The toolset.
        toolset: String,
        /// The instance.
        instance: Option<String>,
        /// Why, when the server said.
        reason: Option<String>,
        /// The ended record's id, when known (§4.3): the presenter counts it told.
        ended: Option<String>,
    },
    /// A suggestion: shown to the agent, never acted on (§5.3, vector 19).
    Suggested(Suggestion),
    /// An ended record this connection had not reported before (§4.3). The presenter tells
    /// each id once across connections and restarts (vector 13).
    Ended(EndedRecord),
}

/// Why a recovery was started (for logs and reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecoverReason {
    /// A rev beyond `last + 1` on an ordered link (§5.2).
    Gap {
        /// The rev expected next.
        expected: u64,
        /// The rev read.
        got: u64,
    },
    /// A rev at or below `last` on an ordered link (§5.2).
    Stale {
        /// The rev read.
        rev: u64,
    },
    /// An early rev held past its window (§5.2).
    HoldExpired {
        /// The held rev.
        rev: u64,
    },
    /// A push with both `coalesce` and `hints` (§5.2).
    Coalesced {
        /// Its rev.
        rev: u64,
    },
    /// Something seen during the last recovery that its statement did not cover.
    Again,
    /// The host could not complete the last recovery's reads.
    Failed,
    /// A message the server may have written was not read — an answer whose Streamable
    /// HTTP POST failed or that timed out, a message refused as too large or unreadable:
    /// whatever it carried is unknown (§5.2 **\[project\]**).
    LostMessage,
}

/// What [`HintState`](super::HintState) asks of its owner, or tells it.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Read `toolsets/list`, then `tools/list`, and feed the results to
    /// `handle_statement` and `handle_tools_list` (§5.2: one recovery at a time).
    Recover(RecoverReason),
    /// A change the agent should hear of.
    Changed {
        /// What caused it.
        cause: Cause,
        /// What changed.
        change: Change,
    },
}

impl Output {
    /// The change, if this is one.
    pub fn change(&self) -> Option<&Change> {
        match self {
            Output::Changed { change, .. } => Some(change),
            Output::Recover(_) => None,
        }
    }
}

/// Counters for a report. Each counts messages (or events) over the state's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HintStats {
    /// Messages applied in rev order (read next, or drained from the hold).
    pub applied: u64,
    /// Messages read with a rev beyond `last + 1`.
    pub gaps: u64,
    /// Early messages held (unordered links).
    pub held: u64,
    /// Held messages applied before their window passed.
    pub resolved_in_window: u64,
    /// Held messages whose window passed (each starts or joins a recovery).
    pub expired: u64,
    /// Messages read with a rev at or below `last`: their state entries ignored.
    pub stale: u64,
    /// Held messages discarded by a full statement at or above their rev.
    pub superseded: u64,
    /// Pushes whose event id was seen before: hints ignored, rev counted.
    pub duplicates: u64,
    /// Pushes with `coalesce` and `hints`: hints ignored, recovery started.
    pub coalesced: u64,
    /// Recoveries started: something was found missing (a gap, an expired hold, a stale
    /// or coalesced rev, a lost message, what a statement did not cover).
    pub recoveries: u64,
    /// Reads of the server's state that failed (an error, no answer, a stale statement) and
    /// were made again: counted apart from [`Self::recoveries`], which they are not.
    pub reads_failed: u64,
    /// Full statements applied.
    pub statements: u64,
    /// Open entries and records ignored: their toolset is not declared, or they name an
    /// instance where the declaration says otherwise (§4.1).
    pub unfit: u64,
}

impl HintStats {
    /// Adds another's counters: one connection's to a host's, a host's to a run's.
    pub fn add(&mut self, other: &HintStats) {
        self.applied += other.applied;
        self.gaps += other.gaps;
        self.held += other.held;
        self.resolved_in_window += other.resolved_in_window;
        self.expired += other.expired;
        self.stale += other.stale;
        self.superseded += other.superseded;
        self.duplicates += other.duplicates;
        self.coalesced += other.coalesced;
        self.recoveries += other.recoveries;
        self.reads_failed += other.reads_failed;
        self.statements += other.statements;
        self.unfit += other.unfit;
    }
}

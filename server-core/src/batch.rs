//! What one step of an instance means for one principal ([`Batch`]), and what an instance
//! answers the principal that awaits its open, join or close ([`Entered`], [`Closed`]).
//! `InstanceCore` makes them (`instance_core.rs`), `PrincipalCore` applies them
//! (`principal_core/apply.rs`); the actors only carry them — across nodes as JSON
//! (issue #41, `wire.rs`), but for a batch's ticket, which is its node's.

use super::principal::InstanceKey;
use crate::author::{Event, Refusal};
use crate::ids::{InstanceId, SessionId};
use crate::store::Ticket;
use crate::store::records::NotKept;
use mcpl_protocol::hints::ToolDefinition;
use mcpl_protocol::jsonrpc::{ErrorObject, Id};
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
use std::sync::Arc;

/// What one step of an instance means for one principal: the changes to its record, the
/// events for it, answers to its sessions' calls, and the end if the instance ended.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Batch {
    /// The instance.
    pub instance: InstanceId,
    /// The principal's key for it.
    pub key: InstanceKey,
    /// The changes to the principal's record, in order.
    pub changes: Vec<Change>,
    /// Events for the principal, pushed with the changes they explain.
    pub events: Vec<Event>,
    /// Answers to calls of the principal's sessions.
    pub answers: Vec<CallAnswer>,
    /// The reason, if the instance ended in this step.
    pub ended: Option<String>,
    /// With `ended`: the last view the logic left for the record
    /// (`InstanceContext::end_showing`).
    #[serde(with = "shared_text")]
    pub last_view: Option<Arc<str>>,
    /// Calls of this principal's sessions whose caller's changes wait for their answer
    /// (§5.3): at most one per session, the oldest.
    pub holds: Vec<(SessionId, Id)>,
    /// The instance's ticket in the commit queue (issue #42 item 1): nothing of this
    /// batch is told before it is kept, and all of it is refused if it is not. Never
    /// sent to another node (a ticket of this node's queue): a batch read from one has
    /// none, and is sent only once kept (`docs/ownership.md` §3).
    #[serde(skip)]
    pub kept: Ticket,
}

impl Batch {
    /// A batch of nothing yet.
    pub fn new(instance: InstanceId, key: InstanceKey) -> Self {
        Batch {
            instance,
            key,
            changes: Vec::new(),
            events: Vec::new(),
            answers: Vec::new(),
            ended: None,
            last_view: None,
            holds: Vec::new(),
            kept: Ticket::NONE,
        }
    }

    /// The step this batch comes from could not be kept (issue #37 item 2): nothing of it
    /// is told, and its answers fail.
    pub fn refuse(&mut self, not_kept: &NotKept) {
        self.changes.clear();
        self.events.clear();
        self.ended = None;
        self.last_view = None;
        self.holds.clear();
        for a in &mut self.answers {
            a.outcome = Err(not_kept.error());
        }
    }

    /// True when there is nothing to tell (holds alone say nothing).
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
            && self.events.is_empty()
            && self.answers.is_empty()
            && self.ended.is_none()
    }
}

/// A change to a principal's record of an instance.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Change {
    /// A tool shown or hidden.
    Visible {
        /// The tool's name.
        tool: String,
        /// Shown (`true`) or hidden.
        visible: bool,
    },
    /// A tool's definition set (`Some`) or set back to the declared one (`None`).
    Definition {
        /// The tool's name.
        tool: String,
        /// The definition.
        definition: Option<Box<ToolDefinition>>,
    },
    /// The instance's title.
    Title(String),
}

/// The answer to a call of one of the principal's sessions.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct CallAnswer {
    /// The session that called.
    pub session: SessionId,
    /// The call's request id.
    pub request: Id,
    /// The call's result, or its error.
    pub outcome: Result<CallToolResult, ErrorObject>,
    /// Answered by a step something else caused (another's move, a timer, a close), not
    /// by the call's own: the step's changes and events are that something's
    /// consequences, not the call's (§5.3).
    pub deferred: bool,
}

/// An open or a join that went through: what to tell the newcomer, and its changes.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Entered {
    /// The instance's title.
    pub title: Option<String>,
    /// What the newcomer is told.
    pub content: Vec<ContentBlock>,
    /// The newcomer's changes of the step (applied before the answer is written).
    pub batch: Option<Batch>,
}

/// Why an open or a join did not go through.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub enum EnterFailure {
    /// The logic refused.
    Refused(Refusal),
    /// The logic panicked (or the instance is gone).
    Internal,
    /// Nothing was started: the server could not take an id for a new instance from its
    /// store (issue #41: a store shared by several servers hands the ids out). Why, as
    /// the store said; retryable.
    Unavailable(String),
}

/// What closing did.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Closed {
    /// What the closer is told.
    pub content: Vec<ContentBlock>,
    /// The closer's changes of the step.
    pub batch: Option<Batch>,
}

/// `Option<Arc<str>>` as an optional string (serde's `rc` feature left off: it would
/// change every crate's serde).
mod shared_text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    pub(super) fn serialize<S: Serializer>(v: &Option<Arc<str>>, s: S) -> Result<S::Ok, S::Error> {
        v.as_deref().serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Arc<str>>, D::Error> {
        Ok(Option::<String>::deserialize(d)?.map(Arc::from))
    }
}

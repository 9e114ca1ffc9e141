//! What a principal and an instance say to each other.

use super::InstanceActor;
use crate::author::{Event, Opening, ParticipantId, Refusal, ToolsetLogic};
use crate::core::InstanceKey;
use crate::ids::InstanceId;
use crate::ids::SessionId;
use actix::prelude::*;
use mcpl_protocol::hints::ToolDefinition;
use mcpl_protocol::jsonrpc::{ErrorObject, Id};
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
use mcpl_transport::Principal;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A principal's record of an instance: where its changes go, and under which name (§7:
/// each principal names a shared instance its own way).
#[derive(Clone)]
pub(crate) struct Link {
    pub(crate) principal: Recipient<Batch>,
    pub(crate) key: InstanceKey,
}

// ---- principal → instance ----

/// Run the toolset's open (awaited by the opener's principal).
#[derive(Message)]
#[rtype(result = "Result<Entered, EnterFailure>")]
pub(crate) struct Start {
    pub(crate) logic: Arc<dyn ToolsetLogic>,
    pub(crate) opening: Opening,
    pub(crate) link: Link,
}

/// An invited principal opened the instance (awaited by its principal).
#[derive(Message)]
#[rtype(result = "Result<Entered, EnterFailure>")]
pub(crate) struct Join {
    pub(crate) who: ParticipantId,
    pub(crate) principal: Principal,
    pub(crate) link: Link,
}

/// An open or a join that went through: what to tell the newcomer, and its changes.
pub(crate) struct Entered {
    pub(crate) title: Option<String>,
    pub(crate) content: Vec<ContentBlock>,
    /// The newcomer's changes of the step (applied before the answer is written).
    pub(crate) batch: Option<Batch>,
}

/// Why an open or a join did not go through.
#[derive(Debug)]
pub(crate) enum EnterFailure {
    /// The logic refused.
    Refused(Refusal),
    /// The logic panicked (or the instance is gone).
    Internal,
}

/// A participant called a tool of the toolset.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Call {
    pub(crate) who: ParticipantId,
    /// The caller's record, for an answer even when it is no longer linked.
    pub(crate) link: Link,
    pub(crate) session: SessionId,
    pub(crate) request: Id,
    pub(crate) tool: String,
    pub(crate) arguments: Map<String, Value>,
}

/// A participant closes the instance (`toolsets/close`; awaited by its principal).
#[derive(Message)]
#[rtype(result = "Closed")]
pub(crate) struct CloseInstance {
    pub(crate) who: ParticipantId,
}

/// What closing did.
pub(crate) struct Closed {
    pub(crate) content: Vec<ContentBlock>,
    pub(crate) batch: Option<Batch>,
}

/// A participant's record ended on its principal's side (its last connection closed, a
/// manifest change): the logic hears it as a close, nothing goes back to it.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Leave {
    pub(crate) who: ParticipantId,
}

/// A principal dropped its link after applying the instance's end.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Unlink {
    pub(crate) who: ParticipantId,
}

// ---- instance → principal ----

/// What one step of an instance means for one principal: the changes to its record, the
/// events for it, answers to its sessions' calls, and the end if the instance ended.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub(crate) struct Batch {
    pub(crate) instance: InstanceId,
    pub(crate) key: InstanceKey,
    pub(crate) changes: Vec<Change>,
    pub(crate) events: Vec<Event>,
    pub(crate) answers: Vec<CallAnswer>,
    pub(crate) ended: Option<String>,
    /// With `ended`: the last view the logic left for the record
    /// (`InstanceContext::end_showing`).
    pub(crate) last_view: Option<std::sync::Arc<str>>,
    /// Calls of this principal's sessions whose caller's changes wait for their answer
    /// (§5.3): at most one per session, the oldest.
    pub(crate) holds: Vec<(SessionId, Id)>,
    /// The instance's ticket in the commit queue (issue #42 item 1): nothing of this
    /// batch is told before it is kept, and all of it is refused if it is not.
    pub(crate) kept: crate::store::Ticket,
}

impl Batch {
    pub(crate) fn new(instance: InstanceId, key: InstanceKey) -> Self {
        Batch {
            instance,
            key,
            changes: Vec::new(),
            events: Vec::new(),
            answers: Vec::new(),
            ended: None,
            last_view: None,
            holds: Vec::new(),
            kept: crate::store::Ticket::NONE,
        }
    }

    /// The step this batch comes from could not be kept (issue #37 item 2): nothing of it
    /// is told, and its answers fail.
    pub(crate) fn refuse(&mut self, not_kept: &crate::store::records::NotKept) {
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
    pub(crate) fn is_empty(&self) -> bool {
        self.changes.is_empty()
            && self.events.is_empty()
            && self.answers.is_empty()
            && self.ended.is_none()
    }
}

/// A change to a principal's record of an instance.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    Visible {
        tool: String,
        visible: bool,
    },
    Definition {
        tool: String,
        definition: Option<Box<ToolDefinition>>,
    },
    Title(String),
}

/// The answer to a call of one of the principal's sessions.
#[derive(Debug)]
pub(crate) struct CallAnswer {
    pub(crate) session: SessionId,
    pub(crate) request: Id,
    pub(crate) outcome: Result<CallToolResult, ErrorObject>,
    /// Answered by a step something else caused (another's move, a timer, a close), not
    /// by the call's own: the step's changes and events are that something's
    /// consequences, not the call's (§5.3).
    pub(crate) deferred: bool,
}

/// An instance invites the principal (§4.6: a shared instance).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Invitation {
    pub(crate) instance: Addr<InstanceActor>,
    pub(crate) id: InstanceId,
    pub(crate) who: ParticipantId,
    pub(crate) toolset: String,
    /// The inviter's name for the instance, suggested as this principal's.
    pub(crate) name: Option<String>,
    pub(crate) options: Option<Value>,
    pub(crate) reason: String,
    /// The principal that opened the instance.
    pub(crate) from: Principal,
}

/// The invited principal received the invitation and shows it under `name` (§7; `None`
/// for a toolset without instances).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct InvitationNamed {
    pub(crate) who: ParticipantId,
    pub(crate) name: Option<String>,
}

/// The invited principal declines (awaited by its principal, for the handler that asked).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Decline {
    pub(crate) who: ParticipantId,
    pub(crate) principal: Principal,
}

/// Something outside the instance woke it ([`InstanceWaker`](crate::InstanceWaker)).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Woken {
    pub(crate) tag: u64,
}

// ---- instance → registry ----

/// A message for a principal, which may have no actor yet (an invitation reaches a
/// principal with no connection): the registry routes it, starting the actor if needed.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct ToPrincipal {
    pub(crate) principal: Principal,
    pub(crate) message: ForPrincipal,
}

/// What [`ToPrincipal`] carries.
pub(crate) enum ForPrincipal {
    Invitation(Invitation),
    Withdrawn(InvitationWithdrawn),
}

/// The instance ended or closed before the invited principal joined.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct InvitationWithdrawn {
    pub(crate) id: InstanceId,
    pub(crate) who: ParticipantId,
}

//! [`Effect`]: one thing an instance's logic did in a step, as a value. The logic's
//! context (`mcpl_server::InstanceContext`) records them in order; `InstanceCore` turns them
//! into a batch per participant principal (§5.1, §5.3), and the instance actor carries out
//! the rest (timers, blocking work).

use super::event::{CallId, Event};
use super::participant::{Audience, ParticipantId};
use crate::tool::error::ToolResult;
use mcpl_protocol::hints::ToolDefinition;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// One thing the logic did, in order.
#[derive(Debug)]
pub enum Effect {
    /// A tool shown to or hidden from some participants.
    Visible {
        /// Who.
        to: Audience,
        /// The tool's name.
        tool: String,
        /// Shown (`true`) or hidden.
        visible: bool,
    },
    /// A tool's definition for some participants set (`Some`) or set back (`None`).
    Definition {
        /// Who.
        to: Audience,
        /// The tool's name.
        tool: String,
        /// The definition, or `None` for the declared one.
        definition: Option<ToolDefinition>,
    },
    /// The instance's title for some participants.
    Title {
        /// Who.
        to: Audience,
        /// The title.
        title: String,
    },
    /// An event for some participants.
    Event {
        /// Who.
        to: Audience,
        /// What.
        event: Event,
    },
    /// A deferred call answered.
    Answer {
        /// The call.
        call: CallId,
        /// Its result.
        result: ToolResult,
    },
    /// A participant invited.
    Invite {
        /// The invitee's participant id.
        who: ParticipantId,
        /// Why, as the invitee is told.
        reason: String,
        /// The options the invitee's open carries.
        options: Option<Value>,
    },
    /// A timer: the logic's `wake` runs with `tag` after `after`.
    Wake {
        /// How long from now.
        after: Duration,
        /// The tag the wake is given.
        tag: u64,
    },
    /// Work for the blocking pool; it wakes the instance when done.
    Spawn(Job),
    /// The call's caller's changes wait for its answer (§5.3).
    Hold {
        /// The call.
        call: CallId,
    },
    /// The instance ends.
    End {
        /// Why, as every participant is told.
        reason: String,
        /// The last view left with each ended record (`InstanceContext::end_showing`).
        view: Option<Arc<str>>,
    },
}

/// Work for the blocking pool, boxed so that the context can record it as an effect.
pub struct Job(pub Box<dyn FnOnce() + Send>);

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Job")
    }
}

//! The messages the Host answers for whoever plays the agent (a model driver, the console,
//! a person at `play`, a test), which `agent.rs` handles, and those its links send it
//! (`inbound.rs`).

use super::shown::Shown;
use crate::link::{LinkEvent, TapEvent};
use actix::prelude::*;
use mcpl_protocol::{CallToolResult, Tool};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// The agent calls a tool: one of the four meta-tools, or a static `server--tool` from its
/// tool list. Always answered with a result; what went wrong is a tool error (§6).
#[derive(Debug, Clone, Message)]
#[rtype(result = "CallToolResult")]
pub struct Call {
    /// The tool's name as the model has it.
    pub name: String,
    /// Its arguments (an object, or null for none).
    pub args: Value,
}

/// The model's tool list, as it is sent (§6 "RFC §8.1": unchanged between boundaries).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "Vec<Tool>")]
pub struct GetTools;

/// The messages shown to the agent since the last `TakeTranscript` (the first returns
/// everything shown so far).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "Vec<Shown>")]
pub struct TakeTranscript;

/// The agent's turn starts: a reminder of open toolsets whose announcements left its
/// context (§6 "RFC §8.3 Reminders"), if one is due; it is shown (and returned).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "Option<Shown>")]
pub struct StartTurn;

/// A tool-list boundary (a new conversation, say): presence moves apply and are told, and
/// the model's list is rebuilt (§3, vectors 15, 24). True when the list changed.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "bool")]
pub struct Boundary;

/// A compaction: everything shown so far leaves the agent's context, and the list is
/// rebuilt as at any boundary. True when the list changed.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "bool")]
pub struct Compact;

/// Subscribes to what is shown outside tool results (notices, pushes, reminders), from
/// now on.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Subscribe(pub mpsc::UnboundedSender<Shown>);

/// The current definition of a dynamic tool offered through `act`, on the named server or
/// the first that offers it, in the instance if named (for a front end filling arguments).
#[derive(Debug, Clone, Message)]
#[rtype(result = "Option<Tool>")]
pub struct Definition {
    /// The server, if named.
    pub server: Option<String>,
    /// The tool.
    pub tool: String,
    /// The instance, if named.
    pub instance: Option<String>,
}

/// Whether the named server's hint state holds a tool visible in an instance (`None`: no
/// such server, or hints do not count on it).
#[derive(Debug, Clone, Message)]
#[rtype(result = "Option<bool>")]
pub struct Visible {
    /// The server.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// The instance, or none for a tool outside instances.
    pub instance: Option<String>,
}

/// Stops the host, then every link; answered once every link has stopped.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct Stop;

/// A meta-tool call waiting for a statement (connect-time or a recovery's), and who waits
/// for its answer.
pub(super) struct Waiting {
    /// Which wait this is, so its own timer releases it and no other.
    pub id: u64,
    pub call: Call,
    pub reply: oneshot::Sender<CallToolResult>,
}

/// One thing a server's link told the Host.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(super) struct FromLink {
    pub server: String,
    pub what: Linked,
    /// Dropped with the message once handled: the link may read on.
    pub _ticket: crate::link::Ticket,
}

/// Tapped, or an event.
#[derive(Debug)]
pub(super) enum Linked {
    Tap(TapEvent),
    Event(Box<LinkEvent>),
}

//! [`Shown`]: a message the agent was shown, as the Host hands it out (the transcript, the
//! stream of notices, the console's JSON).

use crate::state::{AgentMessage, MessageKind};
use serde::Serialize;

/// What kind of message the agent was shown (the conversation's [`MessageKind`], named for
/// the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ShownKind {
    /// A user's message.
    User,
    /// The agent's own turn.
    Assistant,
    /// A tool's result, with what the host attached to it.
    ToolResult,
    /// A push event, with the changes it explains.
    Push,
    /// A notice: a system message that starts no turn (§6 "RFC §8.3").
    Notice,
    /// A reminder of what is open and usable.
    Reminder,
}

impl From<MessageKind> for ShownKind {
    fn from(k: MessageKind) -> Self {
        match k {
            MessageKind::User => ShownKind::User,
            MessageKind::Assistant => ShownKind::Assistant,
            MessageKind::ToolResult => ShownKind::ToolResult,
            MessageKind::Push => ShownKind::Push,
            MessageKind::Notice => ShownKind::Notice,
            MessageKind::Reminder => ShownKind::Reminder,
        }
    }
}

/// A message shown to the agent, numbered in the conversation's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shown {
    /// Its position in the conversation, from 0.
    pub seq: u64,
    /// What kind.
    pub kind: ShownKind,
    /// The server it is about, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The words.
    pub text: String,
    /// It only says what is open and usable now, as a `toolsets--look` answer does.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub restates: bool,
}

impl Shown {
    /// The message at `seq`.
    pub fn new(seq: u64, m: &AgentMessage) -> Self {
        Shown {
            seq,
            kind: m.kind.into(),
            server: m.server.clone(),
            text: m.text.clone(),
            restates: m.restates,
        }
    }
}

//! [`Shown`]: a message the agent was shown, as the Host hands it out (the transcript, the
//! stream of notices, the console's JSON).

use crate::state::AgentMessage;
use serde::Serialize;

/// What kind of message the agent was shown: the conversation's
/// [`MessageKind`](crate::state::MessageKind), named for the wire (`tool_result`, …) as the
/// Host hands it out.
pub use crate::state::MessageKind as ShownKind;

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
            kind: m.kind,
            server: m.server.clone(),
            text: m.text.clone(),
            restates: m.restates,
        }
    }

    /// A message at `seq` about `server` that tells something (not a restatement of what
    /// is open and usable): what an agent beside the host, or a test, shows as the host
    /// would.
    pub fn told(seq: u64, kind: ShownKind, server: &str, text: impl Into<String>) -> Self {
        Shown {
            seq,
            kind,
            server: Some(server.to_owned()),
            text: text.into(),
            restates: false,
        }
    }
}

//! A model of what the agent has been shown: the messages of its conversation (its own
//! turns, tool results with the announcements attached to them, push events, notices,
//! reminders) and the tool list its model is sent. Pure; the Host feeds it what it shows.
//!
//! # The context window
//!
//! The window is **the last N messages** (default [`DEFAULT_WINDOW`]), not N characters: a
//! model's context keeps or drops a message whole, and counting messages keeps tests and
//! the simulator deterministic whatever the text. [`Conversation::compact`] models a
//! compaction: everything shown so far leaves the context. The presenter asks
//! [`Conversation::announced_in_context`] whether an open toolset's announcement is still
//! there; when it is not, a reminder is due at the agent's next turn (§6 "RFC §8.3
//! Reminders").
//!
//! The history kept for inspection (the transcript) is bounded twice: in messages
//! ([`DEFAULT_HISTORY`]) and in bytes of text ([`DEFAULT_HISTORY_BYTES`]); the oldest go.
//!
//! # The tool list (§6 "RFC §8.1", vector 12)
//!
//! [`ToolList`]: the four constant meta-tools first (a stable prefix for the prompt cache),
//! then every server's static tools as `server--tool`, servers in name order, each as of
//! its catalog's last boundary. Dynamic tools never enter it. It is rebuilt only by
//! [`Conversation::rebuild_tool_list`], which the Host calls at a tool-list boundary (after
//! each catalog's `rebuild_boundary`); hint changes never reach it, so its JSON is
//! byte-identical across any number of them.

use super::meta_tools::definitions;
use super::presenter::TextBounds;
use super::view::{Marker, ServerView};
use mcpl_protocol::Tool;
use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, LazyLock};

/// The default window: the last 40 messages.
pub const DEFAULT_WINDOW: usize = 40;

/// How many messages are kept for inspection by default (beyond the window).
pub const DEFAULT_HISTORY: usize = 4_096;

/// How many bytes of message text are kept for inspection by default: 1 MiB (issue #37
/// item 5: a flood of 1 KB pushes made a 1.35 MB transcript under the count alone).
pub const DEFAULT_HISTORY_BYTES: usize = 1024 * 1024;

/// What separates a server's name from its tool's in the model's list.
pub const NAMESPACE_SEPARATOR: &str = "--";

/// `server--tool`.
pub fn namespaced(server: &str, tool: &str) -> String {
    format!("{server}{NAMESPACE_SEPARATOR}{tool}")
}

/// The namespace of the host's own meta-tools (`toolsets--open`, …): no server may take it.
pub const META_NAMESPACE: &str = "toolsets";

/// Why a server name cannot namespace its tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServerNameError {
    /// `toolsets`: its tools would take the meta-tools' names (`toolsets--open`).
    #[error("it is the namespace of the host's own tools (toolsets--open, …)")]
    Reserved,
    /// It holds `--` or ends with `-`: `server--tool` would not say where the server's
    /// name ends (servers `a` with tool `b--c` and `a--b` with tool `c` both give
    /// `a--b--c`).
    #[error("it holds \"--\" or ends with \"-\", so server--tool would not say where it ends")]
    Ambiguous,
}

/// Checks that `server--tool` names made with `server` are unambiguous (§6, RFC §8.1): a
/// name without `--` that does not end with `-` ends exactly where the first `--` of
/// `server--tool` starts, so two servers' names never collide, whatever their tools are
/// called (a tool's own `--` comes after). `toolsets` is the meta-tools' (**\[project\]**:
/// refused when the host starts, rather than renamed, so the user's name for a server is
/// the one the model sees).
pub fn check_server_name(server: &str) -> Result<(), ServerNameError> {
    if server == META_NAMESPACE {
        return Err(ServerNameError::Reserved);
    }
    if server.contains(NAMESPACE_SEPARATOR) || server.ends_with('-') {
        return Err(ServerNameError::Ambiguous);
    }
    Ok(())
}

/// Splits `server--tool` against the known server names (the longest that fits wins, so a
/// server name may itself contain `--`).
pub fn split_namespaced<'n, 's>(
    name: &'n str,
    servers: impl IntoIterator<Item = &'s str>,
) -> Option<(&'s str, &'n str)> {
    servers
        .into_iter()
        .filter_map(|s| {
            let rest = name.strip_prefix(s)?.strip_prefix(NAMESPACE_SEPARATOR)?;
            (!rest.is_empty()).then_some((s, rest))
        })
        .max_by_key(|(s, _)| s.len())
}

/// What kind of message the agent was shown. Named in snake case on the wire (the Host
/// hands it out as `ShownKind`: the transcript, the console's JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    /// A user's (or operator's) message.
    User,
    /// The agent's own turn.
    Assistant,
    /// A tool's result, with what the host attached to it.
    ToolResult,
    /// A push event, with the changes it explains right after it.
    Push,
    /// A notice: a system message that starts no turn (§6 "RFC §8.3").
    Notice,
    /// A reminder of what is open and usable, at the start of the agent's turn.
    Reminder,
}

/// A message for the agent, as the presenter makes it (the Host shows it, then records it
/// with [`Conversation::push`]).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentMessage {
    /// What kind.
    pub kind: MessageKind,
    /// The server it is about, if one.
    pub server: Option<String>,
    /// The words.
    pub text: String,
    /// The open toolsets this message announces (says are open and what is usable in them).
    pub announces: BTreeSet<Marker>,
    /// Every line only says what is open and usable now, which a `toolsets--look` answer
    /// states too: a client shown both at once needs it once (issue #36 item 14).
    pub restates: bool,
}

impl AgentMessage {
    /// A message with no announcements.
    pub fn plain(kind: MessageKind, text: impl Into<String>) -> Self {
        AgentMessage {
            kind,
            server: None,
            text: text.into(),
            announces: BTreeSet::new(),
            restates: false,
        }
    }
}

/// A message the agent was shown, numbered in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Its position in the conversation, from 0.
    pub seq: u64,
    /// The message.
    pub message: AgentMessage,
}

/// The window and history sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConversationConfig {
    /// Messages in the agent's context (the last N).
    pub window: usize,
    /// Messages kept for inspection (at least the window).
    pub history: usize,
    /// Bytes of message text kept for inspection (UTF-8, so at most as many characters):
    /// past it the oldest messages are dropped, the newest always kept. **\[project\]**: a
    /// model's context is bounded in size too, so a message dropped here has left the
    /// context even inside the window.
    pub history_bytes: usize,
}

impl Default for ConversationConfig {
    fn default() -> Self {
        ConversationConfig {
            window: DEFAULT_WINDOW,
            history: DEFAULT_HISTORY,
            history_bytes: DEFAULT_HISTORY_BYTES,
        }
    }
}

/// The agent's conversation and tool list.
#[derive(Debug, Clone)]
pub struct Conversation {
    config: ConversationConfig,
    messages: VecDeque<Message>,
    /// The bytes of the kept messages' text.
    bytes: usize,
    next_seq: u64,
    /// Messages before this one were compacted away.
    context_start: u64,
    tools: ToolList,
}

impl Conversation {
    /// An empty conversation with an empty tool list (build one with
    /// [`Conversation::rebuild_tool_list`] once servers are known).
    pub fn new(config: ConversationConfig) -> Self {
        Conversation {
            config: ConversationConfig {
                window: config.window.max(1),
                history: config.history.max(config.window.max(1)),
                history_bytes: config.history_bytes,
            },
            messages: VecDeque::new(),
            bytes: 0,
            next_seq: 0,
            context_start: 0,
            tools: ToolList::default(),
        }
    }

    /// Records a message the agent was shown; returns its seq. Past the history's bounds
    /// (messages, bytes) the oldest go, the one just recorded always stays. The history
    /// holds shown messages and tool results only, never a call apart from its result, so
    /// dropping the oldest leaves no result without its call.
    pub fn push(&mut self, message: AgentMessage) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.bytes += message.text.len();
        self.messages.push_back(Message { seq, message });
        while self.messages.len() > self.config.history
            || (self.bytes > self.config.history_bytes && self.messages.len() > 1)
        {
            if let Some(old) = self.messages.pop_front() {
                self.bytes -= old.message.text.len();
            }
        }
        seq
    }

    /// The bytes of text the kept messages hold (at most
    /// [`ConversationConfig::history_bytes`], or the last message's alone when it is
    /// larger).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Records a message of `kind` with no announcements.
    pub fn push_plain(&mut self, kind: MessageKind, text: impl Into<String>) -> u64 {
        self.push(AgentMessage::plain(kind, text))
    }

    /// The messages in the agent's context now: the last `window` since the last compaction.
    pub fn context(&self) -> impl Iterator<Item = &Message> {
        let from = self
            .next_seq
            .saturating_sub(self.config.window as u64)
            .max(self.context_start);
        self.messages.iter().filter(move |m| m.seq >= from)
    }

    /// True when a message in the context announces `marker`.
    pub fn announced_in_context(&self, marker: &Marker) -> bool {
        self.context().any(|m| m.message.announces.contains(marker))
    }

    /// A compaction: everything shown so far leaves the context.
    pub fn compact(&mut self) {
        self.context_start = self.next_seq;
    }

    /// Every message kept, oldest first.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.messages.iter()
    }

    /// The last message shown.
    pub fn last(&self) -> Option<&Message> {
        self.messages.back()
    }

    /// The tool list the model is sent.
    pub fn tool_list(&self) -> &ToolList {
        &self.tools
    }

    /// A tool-list boundary: rebuilds the list from each server's catalog snapshot (call
    /// each catalog's `rebuild_boundary` first). True when the list changed.
    pub fn rebuild_tool_list(&mut self, servers: &[ServerView<'_>], bounds: &TextBounds) -> bool {
        let fresh = ToolList::build(servers, bounds);
        let changed = fresh != self.tools;
        self.tools = fresh;
        changed
    }
}

/// The model's tool list (§6 "RFC §8.1").
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolList {
    /// The meta-tools, when listed: one copy for the whole process, shared by every host's
    /// list (they never change; issue #42: their schemas were about 15 KiB a host).
    meta: Option<Arc<[Tool]>>,
    /// The servers' static tools, namespaced.
    tools: Vec<Tool>,
}

/// The meta-tools' definitions, built once.
fn shared_definitions() -> Arc<[Tool]> {
    static DEFINITIONS: LazyLock<Arc<[Tool]>> = LazyLock::new(|| definitions().into());
    Arc::clone(&DEFINITIONS)
}

impl ToolList {
    /// The list for these servers: the meta-tools (when any server's hints count), then each
    /// server's static tools as of its last boundary that its policy allows, namespaced,
    /// descriptions bounded, `_meta` and other members the model is not sent left out.
    pub fn build(servers: &[ServerView<'_>], bounds: &TextBounds) -> Self {
        let mut tools = Vec::new();
        let meta = servers
            .iter()
            .any(|s| s.catalog.hints_count())
            .then(shared_definitions);
        let mut sorted: Vec<&ServerView<'_>> = servers.iter().collect();
        sorted.sort_by_key(|s| s.name);
        // Each name once, whatever reaches here: model APIs refuse a list with a name twice
        // (§6, RFC §8.1). Server names are checked when the host starts
        // ([`check_server_name`]) and a server's repeated tool names are left out when its
        // list is read, so nothing is dropped here in practice.
        let mut names: std::collections::HashSet<String> = meta
            .iter()
            .flat_map(|m| m.iter())
            .map(|t| t.name.clone())
            .collect();
        for s in sorted {
            for t in s.catalog.model_tools() {
                let name = namespaced(s.name, &t.name);
                if !s.policy.allows(&t.name) || !names.insert(name.clone()) {
                    continue;
                }
                tools.push(Tool {
                    name,
                    title: None,
                    description: t.description.as_deref().map(|d| bounds.bound(d)),
                    input_schema: t.input_schema.clone(),
                    output_schema: None,
                    annotations: None,
                    icons: None,
                    execution: None,
                    meta: None,
                });
            }
        }
        ToolList { meta, tools }
    }

    /// The tools, in the order sent.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.meta.iter().flat_map(|m| m.iter()).chain(&self.tools)
    }

    /// The tools, in the order sent, as a list of their own.
    pub fn to_vec(&self) -> Vec<Tool> {
        self.tools().cloned().collect()
    }

    /// Their names.
    pub fn names(&self) -> Vec<&str> {
        self.tools().map(|t| t.name.as_str()).collect()
    }

    /// The list as sent: JSON, byte for byte.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.tools().collect::<Vec<_>>()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;

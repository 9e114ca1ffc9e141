//! Agents: players that see only what the host shows a model — the tool list, the
//! transcript (announcements, notices, reminders, pushes) and tool results, text and
//! `structuredContent` — and act only through tool calls (the meta-tools and static
//! `server--tool`s) on a `HostHandle`. Nothing here reads host or server internals.
//!
//! | file | what |
//! |---|---|
//! | `io` | [`AgentIo`]: the agent's handle on its host, instrumented; [`Observer`] |
//! | `perceive` | the host's news lines read as facts ([`Seen`]) |
//! | `beliefs` | [`Beliefs`]: open games, usable tools, invitations, ends told |
//! | `moves` | choosing moves: the `play` definition's legal-move enum, the arcade's engines |
//! | `policy` | [`Policy`]: what a scripted agent sets out to do |
//! | `scripted` | [`ScriptedAgent`]: a policy played step by step |
//! | `model` | [`ModelAgent`]: a chat-completion endpoint playing the agent's part |
//! | `modern` | [`ModernAgent`]: a player whose host speaks MCP 2026-07-28, shown the arcade as a plain MCP host is (issue #39) |

pub mod beliefs;
pub mod io;
pub mod model;
pub mod modern;
pub mod moves;
pub mod perceive;
pub mod policy;
pub mod scripted;

pub use beliefs::{Beliefs, GameKey};
pub use io::{AgentIo, Observer, Silent};
pub use model::{ModelAgent, ModelConfig, ModelError};
pub use modern::{ModernAgent, ModernCounts};
pub use perceive::{Marker, Seen};
pub use policy::{GameKind, Mover, Plan, Policy};
pub use scripted::ScriptedAgent;

use serde::Serialize;
use std::collections::BTreeMap;

/// Where a run is; agents watch it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Play: start games, accept invitations, move.
    Play,
    /// Do nothing until the phase changes (a quiet point for mid-run checks; scripted
    /// agents only — a model agent goes on).
    Pause,
    /// Start nothing new; finish what is open (resign it).
    Drain,
    /// Stop at once.
    Stop,
}

/// One game as an agent saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GameRecord {
    /// The toolset (`go`, `tictactoe`).
    pub toolset: String,
    /// The instance.
    pub instance: String,
    /// Its title (`Go 9x9 vs bob`), when the host told one.
    pub title: Option<String>,
    /// How it ended, in the server's words, when the agent was told.
    pub result: Option<String>,
    /// The last `Moves: …` line shown for it.
    pub moves: Option<String>,
    /// The agent's own moves in it.
    pub my_moves: u32,
    /// Whether the agent believed it open at the end.
    pub open: bool,
}

/// What an agent saw of its games.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentReport {
    /// The agent (its principal's name).
    pub name: String,
    /// Every game it knew of.
    pub games: Vec<GameRecord>,
    /// Ends told with a reason, per (toolset, instance) (§4.3: once each).
    #[serde(skip)]
    pub ends_told: BTreeMap<GameKey, u32>,
    /// Closes told without a reason.
    pub plain_closes: u64,
    /// Games the agent tried to resign in the drain and was refused, with how often (a
    /// game still open after the drain says whether the agent knew it and tried).
    #[serde(skip)]
    pub resigns_refused: BTreeMap<GameKey, u32>,
}

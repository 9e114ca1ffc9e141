//! `Host`: the agent-facing actor. It owns a [`ServerLink`](crate::link) per server and
//! one [`HostCore`](crate::state::HostCore) — every server's catalog, hint state, policy
//! and connection phase, the presenter, the agent's conversation and the meta-tools, as a
//! sans-IO state machine. Every handler is small: hand the core the input (with `now`),
//! then `drive`: carry out the core's actions (send a read, arm a timer, log a
//! peer's fault), hand what it showed to the subscribers, persist told ids, publish the
//! status.
//!
//! Layout:
//!
//! | file | what |
//! |---|---|
//! | `config` | [`HostConfig`], [`ServerConfig`] |
//! | `error` | [`HostError`] |
//! | `drive` | what every handler ends with: the core's actions carried out, what it showed handed on, the status |
//! | `actor` | [`Host`]: what the actor owns, and `now` |
//! | `start` | [`Host::start`]: one link per server, the told ids read back |
//! | `inbound` | what the links tell, handed to the core: tapped reads (hints applied as read) and link events |
//! | `messages` | the agent's messages: [`Call`], [`GetTools`], [`TakeTranscript`], [`StartTurn`], [`Boundary`], [`Compact`], [`Subscribe`], [`Definition`], [`Stop`]; a call waiting for a statement; what a link tells the Host |
//! | `agent` | their handlers: a call planned by the core, sent, finished; a call that waits for a statement |
//! | `handle` | [`HostHandle`]: async methods over the address, and the status watch |
//! | `shown` | [`Shown`] messages |
//! | `told_store` | [`ToldStore`]: the told ended ids on disk |
//!
//! # Read order, and why it holds
//!
//! RFC-014 §5.2 applies a message's hints *when it is read*, in read order. Each link calls
//! its tap and its event subscribers synchronously, in the order it reads and acts; the
//! Host gives it a tap and a subscriber that both `do_send` a message to the Host's own
//! address. An actix mailbox is one FIFO queue, so the messages from one link arrive in the
//! order the link sent them: for each server the Host sees every tapped read, and every
//! event about it, in exactly the link's order (a push's hints before the push's decision,
//! a listing's pages before `ToolsListed`). Servers are independent: each has its own hint
//! state.
//!
//! The answers to the Host's own requests (an agent's call, a statement read) come back the
//! same way: a task awaits the link's reply and `do_send`s it to the Host. The link taps a
//! response before it hands it to the waiting request, so the tapped result is in the
//! mailbox before the reply is: the Host applies a result's hints before it finishes the
//! call they came with, and the presenter attaches them to that call's result (§6).
//!
//! # Per connection
//!
//! A connection's `initialize` result (tapped) starts a fresh hint state (§4.6: revs from
//! 1), after the manifest is re-read into the catalog. Once the handshake is done (the
//! link's `Connected`), the Host reads `toolsets/list` and adopts what it reports — it
//! never re-opens anything itself (§4.3, vector 9). The link lists the tools at the same
//! point. A lost connection drops the hint state; calls then fail with a clear tool error.
//!
//! # Time
//!
//! The hold window (§5.2, 250 ms by default) is driven by an actix timer armed where the
//! core asks (`Action::Hold`, at the hint state's `poll_timeout()`); "now" is tokio's
//! clock, so a test can pause it.

mod actor;
mod agent;
mod config;
mod drive;
mod error;
mod handle;
mod inbound;
mod messages;
mod shown;
mod start;
mod told_store;

pub use crate::state::host_core::{HintSummary, HostStatus, ServerStatus};
pub use actor::Host;
pub use config::{DEFAULT_TOLD_CAPACITY, HostConfig, ServerConfig};
pub use error::HostError;
pub use handle::HostHandle;
pub use messages::{
    Boundary, Call, Compact, Definition, GetTools, StartTurn, Stop, Subscribe, TakeTranscript,
};
pub use shown::{Shown, ShownKind};
pub use told_store::{StoreError, TOLD_FILE, ToldStore, default_state_dir};

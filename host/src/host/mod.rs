//! `Host`: the agent-facing actor. It owns, per server, a [`ServerLink`](crate::link),
//! the [`Catalog`](crate::state::Catalog), the current connection's
//! [`HintState`](crate::state::HintState), the tool policy and the `pushEvents` grant; and
//! once, the [`Presenter`](crate::state::Presenter), the agent's
//! [`Conversation`](crate::state::Conversation) and the [`MetaTools`](crate::state::MetaTools).
//! It drives them exactly as `state/mod.rs` "Wiring the agent's side" says; every handler
//! is small: decode, call the core, act on what it returns.
//!
//! Layout:
//!
//! | file | what |
//! |---|---|
//! | `config` | [`HostConfig`], [`ServerConfig`] |
//! | `error` | [`HostError`] |
//! | `actor` | [`Host`]: start (one link per server), showing, the hold timer, boundaries, persisting told ids |
//! | `server` | the per-server slot and its view |
//! | `inbound` | what the links tell: tapped reads (hints applied as read) and link events |
//! | `reads` | `toolsets/list` after every connect, and recovery (`toolsets/list`, then `tools/list`) |
//! | `agent` | the agent's messages: [`Call`], [`GetTools`], [`TakeTranscript`], [`StartTurn`], [`Boundary`], [`Compact`], [`Subscribe`] |
//! | `handle` | [`HostHandle`]: async methods over the address, and the status watch |
//! | `shown`, `status` | [`Shown`] messages, the [`HostStatus`] snapshot |
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
//! The hold window (§5.2, 250 ms by default) is driven by an actix timer armed for the hint
//! state's `poll_timeout()`; "now" is tokio's clock, so a test can pause it.

mod actor;
mod agent;
mod config;
mod error;
mod handle;
mod inbound;
mod reads;
mod server;
mod shown;
mod status;
mod told_store;

pub use actor::Host;
pub use agent::{
    Boundary, Call, Compact, Definition, GetTools, StartTurn, Stop, Subscribe, TakeTranscript,
};
pub use config::{DEFAULT_TOLD_CAPACITY, HostConfig, ServerConfig};
pub use error::HostError;
pub use handle::HostHandle;
pub use shown::{Shown, ShownKind};
pub use status::{HintSummary, HostStatus, ServerStatus};
pub use told_store::{StoreError, TOLD_FILE, ToldStore};

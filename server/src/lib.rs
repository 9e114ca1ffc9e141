//! The MCP/MCPL server SDK: one actix actor per connection, typed tool handlers, push
//! events, the MCPL manifest. RFC-014's toolsets build on it.
//!
//! This crate does no transport I/O of its own: a session is given a
//! [`mcpl_transport::Connection`] — stdio, WebSocket, Streamable HTTP, or an in-memory
//! pair — reads typed messages from it and writes typed messages to it.
//!
//! Layout, one concept per module:
//!
//! | module | what |
//! |---|---|
//! | [`server`] | [`Server`] (shared by every session) and [`ServerBuilder`] |
//! | [`tool`] | [`ToolContext`], [`ToolError`]: what a tool handler sees and returns |
//! | `registry` | the plain tools and `tools/list` cursor paging |
//! | [`session`] | the [`Session`] actor, its lifecycle, its [`SessionHandle`] |
//! | [`push`] | [`PushEvent`] and [`PushError`] (SPEC §9) |
//! | [`manifest`] | manifest checks, each host's view of it, changed domains (SPEC §17) |
//! | `receipt` | the receipt for a `featureSets/update` grant (SPEC §6.7) |
//! | [`cancel`] | [`CancelToken`]: a call's cancellation, for work a handler hands off |
//! | [`core`] | RFC-014's pure state machines (`Sequencer`, `Catalog`, `PrincipalState`) the actors drive |
//!
//! # Running it
//!
//! Sessions are actix actors, so they run on an actix `System` (a tokio current-thread
//! runtime with a `LocalSet` underneath): call [`Server::serve`] from inside
//! `#[actix::main]`, `#[actix::test]` or `actix::System::new().block_on(..)`, or
//! [`Server::serve_in`] to start a session on a given arbiter from any thread. Tool
//! handlers return `Send` futures and run as tokio tasks on the session's runtime, so a
//! handler may await anything `Send` — including [`SessionHandle::push`] — and a panic in
//! one fails that call alone (-32603).
//!
//! ```no_run
//! use mcpl_protocol::mcp::{CallToolResult, Tool};
//! use mcpl_server::{Server, ToolContext, ToolError};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct Echo {
//!     text: String,
//! }
//!
//! #[actix::main]
//! async fn main() {
//!     let server = Server::builder("echo", "0.1.0")
//!         .tool(
//!             Tool::new("echo", "Says it back", serde_json::json!({"type": "object"})),
//!             |_ctx: ToolContext, args: Echo| async move {
//!                 Ok::<_, ToolError>(CallToolResult::text(args.text))
//!             },
//!         )
//!         .build()
//!         .expect("a valid server");
//!     let principal = mcpl_transport::Principal::Named("local".into());
//!     let (_client, conn) = mcpl_transport::memory::pair(principal, true);
//!     let session = server.serve(conn);
//!     # drop(session);
//! }
//! ```
//!
//! # Seams for RFC-014
//!
//! - Every message to the host is written by one method of the session, so a `Sequencer`
//!   can stamp each hint-carrying message with the next rev as it is enqueued (§5.2).
//! - A tool call's outcome returns to the session actor, which decides what to write: a
//!   cancelled call gets no response, and its hint changes will go out as `tools/hints`
//!   (§5.2, vector 29).
//! - The manifest a host is shown already depends on its `toolHints` advertisement
//!   (§2, §4.1), and manifest changes name the `toolsets` domain.

mod actors;
pub mod author;
pub mod cancel;
pub mod clock;
pub mod core;
pub mod manifest;
pub mod push;
mod receipt;
mod registry;
pub mod server;
pub mod session;
pub mod tool;

pub use actors::instance::INTERNAL_ERROR;
pub use actors::principal::{REASON_CLOSED, REASON_DISCONNECTED};
pub use author::{
    Audience, CallId, Event, InstanceContext, InstanceLogic, Joined, Opening, Participant,
    ParticipantId, ParticipantKind, Refusal, Reply, SURFACE_ACTIVITY, SURFACE_TURN, Started,
    ToolCall, Toolset, ToolsetLogic,
};
pub use cancel::CancelToken;
pub use clock::{Clock, ManualClock, SystemClock};
pub use manifest::ManifestError;
pub use push::{PushError, PushEvent};
pub use registry::CursorError;
pub use server::{BuildError, Server, ServerBuilder};
pub use session::{Phase, Session, SessionHandle, SessionStatus};
pub use tool::{ToolContext, ToolError, ToolResult};

//! The MCP/MCPL server SDK with RFC-014 (tool presence, toolsets, surfaces) built in: one
//! actix actor per connection, per principal and per open toolset instance; typed tool
//! handlers; toolsets whose logic an author writes without ever touching a rev, a session
//! or a principal.
//!
//! This crate does no transport I/O of its own: a session is given a
//! [`mcpl_transport::Connection`] — stdio, WebSocket, Streamable HTTP, or an in-memory
//! pair — reads typed messages from it and writes typed messages to it.
//!
//! Layout, one concept per module:
//!
//! | module | what |
//! |---|---|
//! | `server` | [`Server`] (the handle every session is served from) and [`ServerBuilder`] |
//! | [`author`] | what an author writes: [`Toolset`], [`ToolsetLogic`], [`InstanceLogic`], [`InstanceContext`] |
//! | [`tool`] | [`ToolContext`], [`ToolError`]: what a plain tool handler sees and returns, how it opens, closes and declines toolsets for its caller, and how it reports progress and logs, and asks its client to sample a model or its user for input (MCP) |
//! | [`features`] | resources, resource templates, prompts and completion: [`features::RequestContext`], [`features::FeatureError`], registered with [`ServerBuilder::resource`] and its siblings (MCP "Server Features") |
//! | [`session`] | the `SessionActor` (one per connection), its lifecycle, its [`SessionHandle`] |
//! | `session_port` | the session seen from outside, depending on neither `session` nor `tool`: [`SessionHandle`], the requests a tool handler's context sends through it (toolsets, progress and logs, questions for the client), the errors both sides name ([`NotifyError`], [`session::SessionClosed`]), and the session's side as a trait that the session implements on its actor's address — so the session runs the handlers and a handler reaches its session without `tool` importing `session` |
//! | `actors` | the Registry actor (one per server: who is connected, principals started and retired), the Principal actor (one per principal) and the Instance actor (one per open instance) |
//! | `shared` | what every actor of a server reads: manifest, catalog, logic, limits, clock, id counters |
//! | [`listen`] | [`Server::serve_ws`], [`Server::serve_http`], [`Server::serve_stdio`]: bind, accept, a session per connection |
//! | [`clock`] | [`Clock`]: where the actors get the time ([`ManualClock`] for tests) |
//! | `panics` | the text of a caught panic (a handler's, a logic's, background work's) |
//! | `client_ask` | what a handler asks of its client, from the handler's side: `AskError`, the capability needed, the session's side as a trait (so the tool and feature contexts and the session do not import each other) |
//! | `watchers` | who watches which resource: the index [`Server::resource_updated`] reads to tell a change to the sessions subscribed to it |
//! | [`cancel`] | [`CancelToken`]: a call's cancellation, for work a handler hands off |
//! | [`store`] | [`Store`]: durable state across restarts ([`RedbStore`], [`MemoryStore`]; issue #15) |
//! | [`peers`] | [`Peers`]: how an actor here reaches an actor on another server, addressed by the actor ([`PeerAddress`]); [`InProcessPeers`] for servers in one process (issue #41) |
//! | `ownership` | [`OwnershipError`]: why an instance could not be released or adopted ([`Server::release_instance`], [`Server::adopt_instance`]; issue #41) |
//! | [`placement`] | [`Placement`]: whether this server may start a principal an invitation or an outbox brings, not a session ([`ServerBuilder::placement`]; issue #41) |
//! | [`decode`] | [`decode::from_json`]: typed decoding that reads `9.0` as the integer 9 (RFC 8259), so a typed decode and a JSON Schema agree |
//!
//! The rules of RFC-014 themselves live in the crate `mcpl_server_core` (issue #38: pure
//! state machines, no runtime, no transport, no clock), which this crate's actors drive:
//! `SessionCore`, `PrincipalCore`, `InstanceCore`, `PrincipalState`, the `Catalog`, the
//! `Sequencer` and the carrier choice, and the values they share with the actors. Its
//! errors an author meets ([`OpenError`], [`CloseError`]) are re-exported, and so are the
//! modules authors use: [`push`] ([`PushEvent`] and [`PushError`], SPEC §9) and
//! [`manifest`] (manifest checks, each host's view of it, changed domains, SPEC §17).
//!
//! # Running it
//!
//! Sessions are actix actors, so they run on an actix `System` (a tokio current-thread
//! runtime with a `LocalSet` underneath): call [`Server::serve`] from inside
//! `#[actix::main]`, `#[actix::test]` or `actix::System::new().block_on(..)`, or
//! [`Server::serve_in`] to start a session on a given arbiter from any thread. Tool
//! handlers return `Send` futures and run as tokio tasks on the session's runtime, so a
//! handler may await anything `Send` — including [`SessionHandle::push`] — and a panic in
//! one fails that call alone (-32603). A toolset's logic runs in its instance's actor; a
//! panic there ends that instance alone ([`INTERNAL_ERROR`]).
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
//! A toolset with logic is declared with [`ServerBuilder::toolset`]; see [`author`] for a
//! two-player game in a few lines.
//!
//! # How RFC-014 is carried out
//!
//! - **Who owns what** (§4.6): a principal's toolsets live in its Principal actor's core
//!   (`PrincipalCore`), not in a connection; every change the state returns goes to each of
//!   the principal's sessions.
//! - **Revs** (§5.2): each session numbers a change as it writes it, in its single write
//!   path, so revs are consecutive per connection whichever way a change travels.
//! - **Carriers** (§5.3): the session whose request caused a change answers with it; the
//!   others push it with the logic's event, or send `tools/hints` when nothing explains it
//!   or pushing is not allowed; a cancelled call's own changes go as `tools/hints` (a
//!   cancelled deferred call that another's move answers still gets that move pushed, with
//!   its event — a **\[project\]** reading, `server-core/src/carrier.rs`). Changes a call is to
//!   report but that are stated before it is answered — a tool handler's
//!   [`ToolContext::open_toolset`], a deferred call the logic asked to
//!   [`hold`](InstanceContext::hold_for) — are held for its result, and go first as
//!   `tools/hints` if anything else carrying hints must be written before it (§5.2).
//! - **Hosts without `toolHints`** (§8) are shown plain tools and compat tools and are
//!   never sent a hint; the manifest they see leaves RFC-014's members out.

mod actors;
pub mod author;
pub mod cancel;
mod client_ask;
pub mod clock;
use mcpl_server_core as core;
pub mod decode;
pub mod features;
use mcpl_server_core::ids;
pub mod listen;
pub use mcpl_server_core::manifest;
use mcpl_server_core::mrtr;
use mcpl_server_core::paging;
mod ownership;
mod panics;
pub mod peers;
pub mod placement;
pub use mcpl_server_core::push;
mod server;
pub mod session;
mod session_port;
mod shared;
pub mod store;
pub mod tool;
mod watchers;

pub use actors::instance::INTERNAL_ERROR;
pub use actors::principal::{REASON_CLOSED, REASON_DISCONNECTED};
pub use author::{
    Audience, Blocking, BlockingError, Call, CallId, Durable, Event, InstanceContext,
    InstanceLogic, InstanceWaker, Joined, Opening, Participant, ParticipantId, ParticipantKind,
    Refusal, Reply, SURFACE_ACTIVITY, SURFACE_TURN, Started, ToolCall, Toolset, ToolsetLogic,
};
pub use cancel::CancelToken;
pub use clock::{Clock, ManualClock, SystemClock};
pub use core::{
    CatalogError, CloseError, InstanceKey, OpenError, OptionsProblem, PlainHosts, PrincipalConfig,
    ToolDecl,
};
pub use core::{REASON_UNDECLARED, RESTART_GAP};
pub use listen::Listener;
pub use manifest::ManifestError;
pub use ownership::{InstanceStart, OwnershipError, StartFuture, StartRefused};
pub use paging::CursorError;
pub use peers::{InProcessPeers, PeerAddress, PeerBounds, PeerError, Peers};
pub use placement::{Placed, Placement, WAITING_BYTES, WAITING_INVITATIONS};
pub use push::{PushError, PushEvent};
pub use server::{
    BuildError, DEFAULT_ASK_TIMEOUT, DEFAULT_FEATURE_SET, DEFAULT_PAGE_SIZE, DEFAULT_PUSH_TIMEOUT,
    OnlinePage, Server, ServerBuilder,
};
pub use session::{Phase, SessionHandle, SessionStatus};
pub use store::records::{REASON_LOST, REASON_NOT_KEPT};
pub use store::{
    FOLLOW_WAIT, LiveInstance, Loaded, MemoryStore, Net, PrincipalLoaded, PrincipalNet, RedbStore,
    Restored, Store, StoreError, StoreStats, Writes,
};
pub use tool::{
    AskError, CloseToolsetError, DeclineError, Invitation, NoArguments, NotifyError,
    OpenToolsetError, Opened, ToolContext, ToolError, ToolResult, TypedTools, input_schema,
};

// One crate to import: what a server author needs from the crates beneath, re-exported.
/// The typed protocol (JSON-RPC, MCP, MCPL, RFC-014 messages), for what the re-exports
/// above leave out.
pub use mcpl_protocol as protocol;
pub use mcpl_protocol::mcp::{CallToolResult, ContentBlock, Tool};
/// Connections and listeners (stdio, WebSocket, Streamable HTTP, in memory).
pub use mcpl_transport as transport;
pub use mcpl_transport::{Principal, ServerOptions};
/// `JsonSchema`, to derive tool argument and options schemas ([`input_schema`],
/// [`Toolset::route`], [`Toolset::on_open_with`], [`TypedTools::typed_tool`]). The derive names the `schemars` crate: depend on it, or
/// add `#[schemars(crate = "mcpl_server::schemars")]` to the type.
pub use schemars;

//! The surface host (RFC-014 §6 "RFC §8.6"): the project's [`Host`](mcpl_host::host::Host)
//! behind an MCP server endpoint, so that a client that cannot present dynamic tools —
//! every MCP client in use today — gains toolsets. It is a host for the servers behind it,
//! exposes the four meta-tools (and the backing servers' static tools) as its own static
//! tools, and renders dynamic changes as words: in the next result and as
//! `notifications/message`.
//!
//! Layout:
//!
//! | module | what |
//! |---|---|
//! | [`config`] | the `mcpServers` JSON MCP clients use, plus the surface host's options and its clients (principals with credentials per server) |
//! | [`listing`] | what the surface host says of itself: its name, its instructions, the tool list a client is shown |
//! | [`links`] | a backing server's connection lost, and back with what was adopted: told once each |
//! | [`mcpl`] | to an MCPL client: the manifest (one feature set using `pushEvents`), whether the policy in force lets it push, `push/event` params |
//! | [`news`] | what was shown between two calls, bounded, for the next result; `notifications/message` params |
//! | [`session`] | one client: each message received by the server SDK's pure receipt (`mcpl_server_core`: `dispatch`, `requests`, `Lifecycle`), then served: `initialize`, a stable `tools/list`, `tools/call` through its own host, notifications |
//! | [`modern`] | MCP 2026-07-28: the era of each request, `server/discover`, what a modern request is owed |
//! | [`agent`] | a principal's agent for its modern requests: its host, its tool list, its news between requests |
//! | [`pool`] | which principals' hosts are kept for modern requests: a cap, an idle time (pure) |
//! | [`principals`] | the principals' agents on Streamable HTTP, started and closed as [`pool`] says |
//! | [`serve`] | stdio (one client) and Streamable HTTP (a legacy session per connection, a modern request by its principal's agent) |
//!
//! # Why transport connections, not `mcpl-server`'s `Server`
//!
//! `mcpl-server` serves tools fixed when the server is built, and shares toolsets among the
//! connections of one principal: its sessions, compat tools and hint pushes are a *server's*
//! view. A surface host's tools are a host's view: one [`Host`](mcpl_host::host::Host) per
//! client connection (two clients are two agents, each with its own conversation and told
//! records), its list taken from that host once its servers settle. So it is built directly
//! on `mcpl_transport` server connections — one connection, one client, one `Host` — and
//! answers the few MCP requests a client sends (`initialize`, `ping`, `tools/list`,
//! `tools/call`, `logging/setLevel`) itself. What it does not write itself is how a message
//! is received: the era, the route, the before-`initialize` rule, the requests in flight and
//! the lifecycle are the server SDK's own pure code (`mcpl-server-core`, which brings no
//! runtime), so both answer every edge case alike (issue #38 item 5).
//!
//! An MCP 2026-07-28 client has no connection to be an agent on: each of its requests
//! stands alone (on Streamable HTTP, on a connection of its own). Its agent is its
//! principal's ([`agent`], [`principals`]): one host per bearer token, shared by the
//! principal's requests, bounded ([`pool`]); on stdio the process's one host. What it is
//! owed per request is [`modern`]'s.
//!
//! # The dependency graph
//!
//! `mcpl-surface` depends on `mcpl-host` (and so on `mcpl-transport` and
//! `mcpl-protocol`) and on `mcpl-server-core` (pure), and nothing depends on it: its binary is `mcpl-surface serve`, not
//! `mcpl-host serve`, because the `mcpl-host` package depending on this crate would be a
//! cycle.
//!
//! # Security (§7)
//!
//! The operator chooses exactly which servers and credentials the surface host uses: a
//! client names a configured server, never a URL or a command. Every server-authored
//! string reaches the client as the host renders it — attributed to its server and
//! bounded. Credentials are the operator's (RFC-015 is not implemented) and stay out of
//! `Debug` and logs.

pub mod agent;
pub mod config;
pub mod links;
pub mod listing;
pub mod mcpl;
pub mod modern;
pub mod news;
pub mod pool;
pub mod principals;
pub mod serve;
pub mod session;

pub use config::{ConfigError, SurfaceConfig};
pub use serve::{HttpSurface, ServeError, serve_connection};
pub use session::SessionOptions;

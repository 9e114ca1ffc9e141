//! The MCPL host: links to servers, RFC-014's hint state, the meta-tools and what the agent
//! is shown.
//!
//! Layout:
//!
//! | module | what |
//! |---|---|
//! | [`link`] | `ServerLink`, one actix actor per server: connect, handshake, reconnect with backoff, request ids and timeouts, and the read tap that offers every message to the hint state as it is read (§5.2) |
//! | `mcpl_host_core::state`, re-exported as `crate::state` | the pure state machines (no I/O, no clock; the build keeps them so) the link's tap and events feed: per-connection hint state, and what it reports |
//! | [`host`] | `Host`, the agent-facing actor: one link per server, the cores wired together, and the agent's calls, tool list, transcript and notices |
//! | [`cli`] | the pure parts of the `mcpl-host` binary's front ends: the console's JSON lines, `play`'s short commands |
//!
//! The pure cores (hint state, catalog, presenter) sit beside the link and are fed by its
//! tap and its events; the link itself knows nothing of hints beyond handing every read
//! message over, in read order, before it acts on it.
//!
//! Section signs (§) refer to `shared/spec/RFC-014.md` unless they say "SPEC §" (MCPL 0.5)
//! or "MCP".

pub mod cli;
pub mod host;
pub mod link;
/// The pure cores, in `mcpl-host-core` (no runtime, no transport, no I/O: the build keeps
/// them so, issue #38); re-exported at their old path.
pub use mcpl_host_core::state;

//! The MCPL host's pure cores (issue #38): the rules of RFC-014 and of one server link as
//! state machines with no runtime, no transport, no clock and no I/O. `mcpl-host` drives
//! them from its actors and re-exports them at their old paths (`mcpl_host::state`, the
//! link's errors and era in `mcpl_host::link`); this crate's `Cargo.toml` is what keeps them
//! pure: it depends on no async runtime, actor framework, transport or HTTP crate, and
//! `scripts/purity.py` reads `cargo tree -p mcpl-host-core -e normal` to prove it.
//!
//! Layout:
//!
//! | module | what |
//! |---|---|
//! | [`state`] | the pure state machines the link's tap and events feed: per-connection hint state, the catalog, the presenter, the meta-tools, and [`state::HostCore`] wiring them |
//! | [`link`] | [`link::LinkCore`]: one connection's rules (handshake, grant, paging, pending requests), fed what was read and the time |
//!
//! Section signs (§) refer to `shared/spec/RFC-014.md` unless they say "SPEC §" (MCPL 0.5)
//! or "MCP".

pub mod link;
pub mod state;

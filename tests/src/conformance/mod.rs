//! A portable RFC-014 conformance runner: the server-side vectors of spec §9, and those of
//! the stateless profile (`docs/rfc014-stateless.md` §5) over MCP 2026-07-28, run as a raw
//! host-side client against any MCPL server that meets the fixture contract
//! (`tests/CONFORMANCE.md`), over stdio, WebSocket or Streamable HTTP. The
//! `mcpl-conformance` binary is a thin command line over [`run()`].
//!
//! The runner never goes through our host: it writes exact JSON-RPC and checks exact
//! protocol behaviour (revs, carriers, hint entries, error codes), so what it proves is
//! about the server alone.
//!
//! | module | what |
//! |---|---|
//! | [`contract`] | the fixture contract's fixed names, shared with our fixture server |
//! | [`target`] | the server under test ([`Target`]), run options, a vector's connections ([`Ctx`]) |
//! | [`peer`] | [`Peer`]: a raw client on one link that records every message and rev |
//! | [`requests`] | the handshake and the requests vectors send through a [`Peer`] |
//! | [`modern`] | modern requests (MCP 2026-07-28) through a [`Peer`], hinted or plain |
//! | [`wire`] | reading hint changes, tool results and statements as JSON |
//! | [`run`](mod@run) | the vector list, running it, the report lines and tally |
//! | `vectors` | the vectors themselves, by the part of the spec they check |
//! | [`error`] | [`VectorError`]: why a vector failed |

pub mod contract;
pub mod error;
pub mod modern;
pub mod peer;
pub mod requests;
pub mod run;
pub mod target;
mod vectors;
pub mod wire;

pub use error::{Checked, VectorError};
pub use peer::{HostKind, Peer, PushAnswer};
pub use run::{BadVectorId, Kind, Line, Outcome, Report, Vector, VectorId, run};
pub use target::{Ctx, Need, PassTime, RunOptions, Target};

/// Every check the runner makes, in order: the contract check (number 0), the server-side
/// vectors of §9, and the stateless profile's.
pub fn vectors() -> &'static [Vector] {
    vectors::ALL
}

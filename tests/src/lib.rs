//! Support shared by the project's cross-crate tests: the RFC-014 conformance vectors
//! (`tests/server_vectors.rs`), interop with the official MCP SDKs (`tests/interop_*.rs`), and
//! fault tests; and the portable conformance kit: a runner any MCPL server can be checked
//! with, and the fixture server it is checked against here.
//!
//! | module | what |
//! |---|---|
//! | [`asking`] | tools that ask their client: sampling, elicitation, roots |
//! | [`interop`] | the official MCP Python SDK as a peer: a venv under `target/`, its scripts |
//! | [`conformance`] | the portable runner of the server-side vectors (`mcpl-conformance`) |
//! | [`fixture`] | the server meeting the fixture contract (`mcpl-fixture-server`) |
//! | [`host_relay`] | a relay between this project's host and a real server, and the waits on the host |
//! | [`server_support`] | the tests' arcade served on a WebSocket, and what the server-side tests do with its connections |

pub mod asking;
pub mod conformance;
pub mod fixture;
pub mod host_relay;
pub mod interop;
pub mod server_support;

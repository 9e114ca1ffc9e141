//! Support shared by the project's cross-crate tests: the RFC-014 conformance vectors
//! (`tests/vectors_*.rs`), interop with the official MCP SDKs (`tests/interop_*.rs`), and
//! fault tests.
//!
//! | module | what |
//! |---|---|
//! | [`interop`] | the official MCP Python SDK as a peer: a venv under `target/`, its scripts |

pub mod interop;

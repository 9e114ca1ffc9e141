//! The properties the fuzz targets check, one module per target, kept out of the
//! `fuzz_targets/*.rs` binaries so that they can also be replayed on stable Rust without a
//! fuzzer (`cargo test` in this directory runs every seed of `corpus/` through them).
//!
//! | module | target | what it checks |
//! |---|---|---|
//! | [`jsonrpc`] | `jsonrpc_decode` | `Message::decode` never panics, round-trips, and its errors map to -32700/-32600 |
//! | [`go_move`] | `go_move_parse` | Go moves and tic-tac-toe cells parse onto the board and print back to themselves |
//! | [`hint_state`] | `hint_state` | `HintState` under any sequence of reads: `last` never goes back, one recovery at a time, bounded hold |
//! | [`server`] | `server_request` | a server session answers every request it reads exactly once |
//!
//! Each check panics (which the fuzzer reports as a crash) when a property fails, with a
//! message naming the property.

pub mod go_move;
pub mod hint_state;
pub mod jsonrpc;
pub mod server;

//! One raw JSON-RPC peer for every test suite.
//!
//! A test that proves a rule the way a second implementation would see it speaks raw JSON
//! on a real socket, with shapes taken from the spec's text, never through this project's
//! types. This crate is that peer, and it depends on none of the project's crates:
//!
//! | module | what |
//! |---|---|
//! | [`msg`] | JSON-RPC builders: [`msg::request`], [`msg::notification`], [`msg::result`], [`msg::error`] |
//! | [`ws`] | [`ws::Peer`]: one end of a WebSocket (client or server side) sending and reading JSON text frames; [`ws::Listener`] accepts peers for a host to connect to |
//!
//! Nothing here sleeps. A read awaits the next frame, bounded by [`LIMIT`], which only a
//! failing test reaches.

pub mod msg;
pub mod ws;

use std::time::Duration;

/// How long a read waits before the test fails.
pub const LIMIT: Duration = Duration::from_secs(30);

/// Awaits `f`, failing the test past [`LIMIT`].
pub async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("the test waited past its limit")
}

//! One raw JSON-RPC peer for every test suite.
//!
//! A test that proves a rule the way a second implementation would see it speaks raw JSON
//! with shapes taken from the spec's text, never through this project's types. This crate
//! is that peer, and it depends on none of the project's crates:
//!
//! | module | what |
//! |---|---|
//! | [`alloc`] | [`alloc::Counting`]: the system allocator counting the bytes live and the allocations made, for a test binary of its own that measures what code holds |
//! | [`peer`] | [`Peer`]: one end of a connection writing and reading exact JSON, over any [`Link`]; keeps what it skipped over, logs what it read |
//! | [`link`] | [`Link`]: what carries the messages (a WebSocket here; suites adapt their own connections) |
//! | [`ws`] | [`ws::WsLink`]: a WebSocket, client side ([`ws::Peer::connect`]) or server side ([`ws::Listener::accept`]) |
//! | [`tls`] | [`tls::TestCa`]: a certificate authority made at test time and the server certificates it signs (PEM), for TLS tests on loopback |
//! | [`jwt`] | [`jwt::TestIssuer`]: an authorization server's signing key made at test time, its JWK Set and the ES256 tokens it signs |
//! | [`process`] | the project's binaries as child processes: [`process::listening`] reads where they listen from their `listening on` lines, [`process::workspace_bin`] finds (or builds) another package's binary |
//! | [`proxy`] | [`proxy::Proxy`]: a TCP proxy on loopback that breaks connections on purpose: cuts them all, holds what the server sends, redirects new ones, cuts them at their lifetime's end or at a chosen WebSocket frame, sends frames twice |
//! | [`python`] | the official MCP Python SDK's venv (`target/interop-venv`), made on first use: [`python::python`] |
//! | [`node`] | the official TypeScript SDKs and the MCP Inspector (`tests/inspector/`), installed once per test process: [`node::inspector_dir`] |
//! | [`postgres`] | [`postgres::Postgres`]: a private PostgreSQL for one test, made with `initdb` in a temporary directory and served on a free loopback port (as an unprivileged user when run as root), stopped by its own pid |
//! | [`nats`] | [`nats::Nats`]: a private `nats-server` for one test on a free loopback port, stopped by its own pid and restarted on the same port (chaos) |
//! | `server_log` | (private) what [`postgres`] and [`nats`] share while their server starts: a free loopback port, its log read on a thread of its own until it says it is ready, the last lines kept |
//!
//! And [`msg`], the messages: JSON-RPC ([`msg::request`], [`msg::result`], …), MCP and MCPL
//! requests ([`msg::initialize_params`], [`msg::call`], [`msg::open`], …) and reading them
//! ([`msg::text_of`]); re-exported from `mcpl-testkit-msg`, a crate with no runtime, so that
//! the pure cores' tests use them without this one.
//!
//! Nothing here sleeps. A read awaits the next message, bounded by [`LIMIT`] (or a
//! peer's own limit), which only a failing test reaches; [`within`] (and [`within_named`],
//! which says what it waited for) bounds any other wait the same way: the one timeout
//! helper of every suite.

pub mod alloc;
pub mod jwt;
pub mod link;
pub mod nats;
pub mod node;
pub mod peer;
pub mod postgres;
pub mod process;
pub mod proxy;
pub mod python;
mod server_log;
pub mod tls;
pub mod ws;

/// The message builders ([`msg::request`], [`msg::call`], [`msg::text_of`], …): the
/// `mcpl-testkit-msg` crate, kept apart so that the pure cores' tests use them without this
/// crate's runtime.
pub use mcpl_testkit_msg as msg;

pub use link::{Closed, Link, Received};
pub use peer::{Peer, ReadError};

use std::future::Future;
use std::time::Duration;

/// How long a read, or any other awaited step, waits before the test fails. One bound for
/// every suite, long enough for a step that starts a process on a loaded machine: only a
/// failing test reaches it.
pub const LIMIT: Duration = Duration::from_secs(60);

/// Awaits `f`, failing the test past [`LIMIT`]: the bound on a wait that only a failing
/// test reaches (under tokio's paused clock it fires as soon as every task is idle).
pub async fn within<F: Future>(f: F) -> F::Output {
    within_named("a step", f).await
}

/// Awaits `f`, failing the test past [`LIMIT`] with a message that names `what` it waited
/// for.
pub async fn within_named<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(out) => out,
        Err(_) => panic!("the test waited past its limit ({LIMIT:?}) for {what}"),
    }
}

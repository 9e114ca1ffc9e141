//! Idle WebSocket sessions: the arcade holds many at once, each initialized and then
//! silent; the server's resident set is read before and after, per session.
//!
//! The clients run in a **child process** when given an executable (`sim-perf clients`,
//! hidden: [`client_main`]), so that the resident set read is the server's alone — and
//! because 10,000 client sockets and 10,000 server sockets do not fit one process's
//! descriptor limit here. Without one (tests) they run in this process, and the figure
//! counts both ends.
//!
//! Each client connects with its own token (its own principal), then `initialize`,
//! `notifications/initialized`, `tools/list` and `toolsets/list`, as a host does on
//! connecting. The child prints `ready N` once N clients are through, and holds them
//! until its standard input closes.

use super::PerfError;
use super::child::Child;
use super::client;
use super::proc;
use futures_util::StreamExt as _;
use mcpl_games::arcade::ArcadeConfig;
use mcpl_transport::Connection;
use serde::{Deserialize, Serialize};
use sim::arcade::ArcadeService;
use std::path::Path;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// Handshakes under way at once.
const CONNECTING_AT_ONCE: usize = 64;
/// How long the sessions idle before the resident set is read.
const SETTLE: Duration = Duration::from_secs(1);
/// How long the clients may take to connect.
const CONNECT_LIMIT: Duration = Duration::from_secs(300);

/// The idle-session figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Idle {
    /// Sessions asked for.
    pub sessions: usize,
    /// Sessions the server held at the reading.
    pub held: usize,
    /// True when the clients ran in a child process (the server measured alone).
    pub clients_in_child: bool,
    /// The resident set before the clients connected, in bytes.
    pub rss_before: u64,
    /// The resident set with every session idle, in bytes.
    pub rss_after: u64,
    /// (after − before) / held.
    pub bytes_per_session: f64,
}

/// The tokens of the idle clients.
pub fn tokens(n: usize) -> Vec<String> {
    super::light::tokens("i", n)
}

/// Holds `sessions` idle sessions on an arcade served on `arbiter`, clients from `exe`
/// (a child) or the client runtime `clients`.
pub async fn run(
    sessions: usize,
    exe: Option<&Path>,
    arbiter: actix::ArbiterHandle,
    clients: &tokio::runtime::Handle,
) -> Result<Idle, PerfError> {
    let names = tokens(sessions);
    let service = ArcadeService::start(ArcadeConfig::default(), &names, Some(arbiter)).await?;
    let base_sessions = service.live_sessions();
    let url = service.ws_url();
    tokio::time::sleep(SETTLE).await;
    let rss_before = proc::rss_bytes("self").unwrap_or(0);
    let (held, rss_after) = match exe {
        Some(exe) => {
            let args = [
                "clients".to_owned(),
                format!("--url={url}"),
                format!("--count={sessions}"),
            ];
            let mut child = Child::start(exe, &args)?;
            child.ready(CONNECT_LIMIT, sessions).await?;
            tokio::time::sleep(SETTLE).await;
            let read = (
                service.live_sessions().saturating_sub(base_sessions),
                proc::rss_bytes("self").unwrap_or(0),
            );
            // Closing its stdin tells the child to go.
            child.close_input();
            child.wait(Duration::from_secs(30)).await;
            read
        }
        None => {
            let tokens = names.clone();
            let conns = clients
                .spawn(async move { hold(&url, &tokens).await })
                .await
                .map_err(|_| PerfError::Internal("the clients' task panicked"))??;
            tokio::time::sleep(SETTLE).await;
            let read = (
                service.live_sessions().saturating_sub(base_sessions),
                proc::rss_bytes("self").unwrap_or(0),
            );
            drop(conns);
            read
        }
    };
    Ok(Idle {
        sessions,
        held,
        clients_in_child: exe.is_some(),
        rss_before,
        rss_after,
        bytes_per_session: rss_after.saturating_sub(rss_before) as f64 / held.max(1) as f64,
    })
}

/// Connects a client per token to `url` and initializes it as a host would; returns them
/// all (dropping one closes it).
pub async fn hold(url: &str, tokens: &[String]) -> Result<Vec<Connection>, PerfError> {
    let one = |token: String| {
        let url = url.to_owned();
        async move {
            let mut conn = client::connect(&url, &token).await?;
            client::handshake(&mut conn, true).await?;
            Ok::<_, PerfError>(conn)
        }
    };
    let connecting = futures_util::stream::iter(tokens.iter().cloned().map(one))
        .buffer_unordered(CONNECTING_AT_ONCE);
    let all: Vec<Result<Connection, PerfError>> = connecting.collect().await;
    all.into_iter().collect()
}

/// The child's side (`sim-perf clients`): connects `count` clients to `url` with the idle
/// tokens, prints `ready N`, and holds them until standard input closes.
pub async fn client_main(url: &str, count: usize) -> Result<(), PerfError> {
    let conns = hold(url, &tokens(count)).await?;
    println!("ready {}", conns.len());
    let mut sink = Vec::new();
    let _ = tokio::io::stdin().read_to_end(&mut sink).await;
    drop(conns);
    Ok(())
}

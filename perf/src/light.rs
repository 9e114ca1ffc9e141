//! The light server: the SDK (`mcpl-server`, the arcade's session layer: its Session and
//! Principal actors and the transports' server ends) with one static tool, `light`, that
//! answers `ok` at once — the cheapest honest `tools/call`, and one rmcp can serve the
//! same (`rmcp_server.rs`). The arcade's own tools do work of their own (the lobby's
//! `games` walks every session), which is not the session layer's.
//!
//! Served as the sim serves the arcade (`arcade.rs`): listeners and their transport tasks
//! on the first of its arbiters, sessions spread over all of them; each client its own
//! named principal.

use super::client::{LIGHT_TEXT, LIGHT_TOOL};
use actix::{Arbiter, ArbiterHandle};
use mcpl_games::arcade::listen::HTTP_PATH;
use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{BuildError, Server, ToolContext, ToolError};
use mcpl_transport::{Connection, ServerOptions, http, ws};
use serde_json::{Value, json};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::oneshot;

/// The SDK server with the light tool (module docs).
pub fn light_server() -> Result<Server, BuildError> {
    let tool = Tool::new(
        LIGHT_TOOL,
        "Answers ok at once",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    );
    Server::builder("sim-perf-light", env!("CARGO_PKG_VERSION"))
        .tool(tool, |_: ToolContext, _: Value| async {
            Ok::<_, ToolError>(CallToolResult::text(LIGHT_TEXT))
        })
        .build()
}

/// `n` tokens `PREFIX00000`, `PREFIX00001`, …; a server maps each to the principal of the same name.
pub fn tokens(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i:05}")).collect()
}

/// The light server on its arbiters, served on a WebSocket and a Streamable HTTP listener
/// on loopback. Dropping it stops the arbiters (every session and listener with them).
pub struct LightService {
    ws: SocketAddr,
    http: SocketAddr,
    arbiters: Vec<Arbiter>,
}

impl LightService {
    /// Starts it on `threads` new arbiters (at least one), `tokens` known.
    pub async fn start(threads: usize, tokens: &[String]) -> Result<Self, super::PerfError> {
        let server = light_server()?;
        let arbiters: Vec<Arbiter> = (0..threads.max(1)).map(|_| Arbiter::new()).collect();
        let handles: Arc<Vec<ArbiterHandle>> =
            Arc::new(arbiters.iter().map(Arbiter::handle).collect());
        // The listeners bind on an arbiter (`listen`): their tasks stay in its LocalSet, as
        // the SDK's own listeners keep them.
        let mut opts = ServerOptions {
            local_tasks: true,
            ..Default::default()
        };
        for t in tokens {
            opts.tokens.insert(t.clone(), t.clone());
        }
        let opts = Arc::new(opts);
        let serve = move |conn: Connection, next: &AtomicUsize| {
            let i = next.fetch_add(1, Ordering::Relaxed) % handles.len();
            drop(server.serve_in(&handles[i], conn));
        };
        let (ws, http) = listen(&arbiters[0].handle(), opts, serve).await?;
        Ok(LightService { ws, http, arbiters })
    }

    /// `ws://ADDR`.
    pub fn ws_url(&self) -> String {
        format!("ws://{}", self.ws)
    }

    /// `http://ADDR/mcp`.
    pub fn http_url(&self) -> String {
        format!("http://{}{HTTP_PATH}", self.http)
    }
}

impl Drop for LightService {
    fn drop(&mut self) {
        for a in &self.arbiters {
            a.stop();
        }
    }
}

/// Binds both listeners on `arbiter` and hands every connection to `serve`; returns their
/// addresses. The accept loops end with the arbiter.
async fn listen<F>(
    arbiter: &ArbiterHandle,
    opts: Arc<ServerOptions>,
    serve: F,
) -> io::Result<(SocketAddr, SocketAddr)>
where
    F: Fn(Connection, &AtomicUsize) + Send + 'static,
{
    let (tx, rx) = oneshot::channel();
    arbiter.spawn(async move {
        let any: SocketAddr = ([127, 0, 0, 1], 0).into();
        let bound = async {
            let ws = ws::bind(any, opts.clone()).await?;
            let http = http::bind(any, HTTP_PATH, opts).await?;
            Ok::<_, io::Error>((ws, http))
        };
        let (mut ws, mut http) = match bound.await {
            Ok(both) => both,
            Err(e) => return drop(tx.send(Err(e))),
        };
        let _ = tx.send(Ok((ws.local_addr(), http.local_addr())));
        let next = AtomicUsize::new(0);
        loop {
            let conn = tokio::select! {
                c = ws.accept() => c,
                c = http.accept() => c,
            };
            match conn {
                Some(conn) => serve(conn, &next),
                None => break,
            }
        }
    });
    rx.await
        .map_err(|_| io::Error::other("the listeners' arbiter stopped"))?
}

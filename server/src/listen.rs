//! Serving a [`Server`] on the transports: bind, accept, start a session per connection.
//! Every binary used to write this loop itself; [`Server::serve_ws`],
//! [`Server::serve_http`] and [`Server::serve_stdio`] are it once.
//!
//! ```no_run
//! # async fn run(server: mcpl_server::Server) -> std::io::Result<()> {
//! use mcpl_transport::ServerOptions;
//! use std::sync::Arc;
//! let opts = Arc::new(ServerOptions::default());
//! let ws = server.serve_ws(([127, 0, 0, 1], 0).into(), opts.clone()).await?;
//! let http = server.serve_http(([127, 0, 0, 1], 0).into(), opts).await?;
//! println!("{} {}", ws.url(), http.url()); // ws://127.0.0.1:…  http://127.0.0.1:…/mcp
//! # Ok(()) }
//! ```
//!
//! [`ws`] and [`http`] take what to do with each connection instead of a server, for a
//! program that wraps one (the arcade counts who is online).

use crate::Server;
use actix::ArbiterHandle;
use mcpl_protocol::header_params::header_params;
use mcpl_transport::{Connection, ServerOptions, stdio};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::task::JoinHandle;

/// The path of the Streamable HTTP endpoint (MCP's conventional `/mcp`).
pub const HTTP_PATH: &str = "/mcp";

/// A network listener serving connections. Dropping it stops accepting; connections
/// already made go on.
#[derive(Debug)]
pub struct Listener {
    url: String,
    local_addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Listener {
    /// The address bound (useful after binding port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Where clients connect: `ws://ADDR` or `http://ADDR/mcp`; `wss://ADDR` or
    /// `https://ADDR/mcp` when the listener serves TLS ([`ServerOptions::tls`]).
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Accepts WebSocket connections on `addr` and hands each to `serve`. Must run inside a
/// tokio runtime; on an actix arbiter's thread, the listener's tasks run in that arbiter
/// ([`ServerOptions::local_tasks`]).
pub async fn ws(
    addr: SocketAddr,
    opts: Arc<ServerOptions>,
    serve: impl Fn(Connection) + Send + 'static,
) -> io::Result<Listener> {
    let scheme = if opts.tls.is_some() { "wss" } else { "ws" };
    let listener = match actix::Arbiter::try_current() {
        Some(arbiter) => {
            bind_on(&arbiter, opts, move |o| mcpl_transport::ws::bind(addr, o)).await?
        }
        None => mcpl_transport::ws::bind(addr, opts).await?,
    };
    let local_addr = listener.local_addr();
    let accepted = futures_util::stream::unfold(listener, |mut l| async move {
        l.accept().await.map(|conn| (conn, l))
    });
    Ok(accepting(
        accepted,
        "websocket connection",
        format!("{scheme}://{local_addr}"),
        local_addr,
        serve,
    ))
}

/// Binds on `arbiter` with the connections' tasks in its `LocalSet`
/// ([`ServerOptions::local_tasks`]): the sessions served on the same arbiter then share one
/// run queue with their connections. The bind runs as the arbiter's own task, so the caller
/// may be any task on any thread.
async fn bind_on<L, F, Fut>(
    arbiter: &ArbiterHandle,
    opts: Arc<ServerOptions>,
    bind: F,
) -> io::Result<L>
where
    L: Send + 'static,
    F: FnOnce(Arc<ServerOptions>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = io::Result<L>> + Send,
{
    let mut local = (*opts).clone();
    local.local_tasks = true;
    let (tx, rx) = tokio::sync::oneshot::channel();
    arbiter.spawn(async move {
        let _ = tx.send(bind(Arc::new(local)).await);
    });
    rx.await
        .map_err(|_| io::Error::other("the arbiter stopped before binding"))?
}

/// Accepts Streamable HTTP sessions on `addr`, endpoint [`HTTP_PATH`], and hands each to
/// `serve`. Must run inside a tokio runtime; on an actix arbiter's thread, the listener's
/// tasks run in that arbiter ([`ServerOptions::local_tasks`]).
pub async fn http(
    addr: SocketAddr,
    opts: Arc<ServerOptions>,
    serve: impl Fn(Connection) + Send + 'static,
) -> io::Result<Listener> {
    let scheme = if opts.tls.is_some() { "https" } else { "http" };
    let listener = match actix::Arbiter::try_current() {
        Some(arbiter) => {
            bind_on(&arbiter, opts, move |o| {
                mcpl_transport::http::bind(addr, HTTP_PATH, o)
            })
            .await?
        }
        None => mcpl_transport::http::bind(addr, HTTP_PATH, opts).await?,
    };
    let local_addr = listener.local_addr();
    let accepted = futures_util::stream::unfold(listener, |mut l| async move {
        l.accept().await.map(|conn| (conn, l))
    });
    let url = format!("{scheme}://{local_addr}{HTTP_PATH}");
    Ok(accepting(
        accepted,
        "streamable HTTP session",
        url,
        local_addr,
        serve,
    ))
}

/// The accept loop both listeners run: each connection accepted is handed to `serve`
/// until the listener ends or the [`Listener`] is dropped.
fn accepting(
    accepted: impl futures_util::Stream<Item = Connection> + Send + 'static,
    what: &'static str,
    url: String,
    local_addr: SocketAddr,
    serve: impl Fn(Connection) + Send + 'static,
) -> Listener {
    use futures_util::StreamExt;
    let task = tokio::spawn(async move {
        let mut accepted = std::pin::pin!(accepted);
        while let Some(conn) = accepted.next().await {
            tracing::debug!(peer = %conn.info.peer, "{what}");
            serve(conn);
        }
    });
    Listener {
        url,
        local_addr,
        task,
    }
}

impl Server {
    /// Serves WebSocket connections on `addr`, a session each on the current actix
    /// arbiter, until the [`Listener`] is dropped. Call inside an actix `System`.
    pub async fn serve_ws(
        &self,
        addr: SocketAddr,
        opts: Arc<ServerOptions>,
    ) -> io::Result<Listener> {
        ws(addr, opts, self.on_arbiter(actix::Arbiter::current())).await
    }

    /// Serves Streamable HTTP on `addr` at [`HTTP_PATH`], a session each on the current
    /// actix arbiter, until the [`Listener`] is dropped. Call inside an actix `System`.
    pub async fn serve_http(
        &self,
        addr: SocketAddr,
        opts: Arc<ServerOptions>,
    ) -> io::Result<Listener> {
        // SEP-2243: the listener checks each modern call's `Mcp-Param-*` headers against
        // the marks of this server's tools, unless the caller gave its own.
        let opts = if opts.tool_headers.is_empty() && !self.tool_header_marks().is_empty() {
            let mut with = (*opts).clone();
            with.tool_headers = self.tool_header_marks();
            Arc::new(with)
        } else {
            opts
        };
        http(addr, opts, self.on_arbiter(actix::Arbiter::current())).await
    }

    /// The `x-mcp-header` marks of this server's tools (MCP 2026-07-28, SEP-2243), for a
    /// Streamable HTTP listener's [`ServerOptions::tool_headers`]: [`Server::serve_http`]
    /// sets them itself; a listener bound otherwise is given them so.
    pub fn tool_header_marks(&self) -> mcpl_transport::ToolHeaderMarks {
        let marks = self
            .shared
            .tools
            .iter()
            .filter_map(|t| {
                let params = header_params(&t.tool().input_schema).ok()?;
                (!params.is_empty()).then(|| (t.name().to_owned(), params))
            })
            .collect();
        mcpl_transport::ToolHeaderMarks(Arc::new(marks))
    }

    /// Serves this process's stdin/stdout as `opts.stdio_principal`; the returned future
    /// resolves once the session ended (stdin closed) and its last answers are written.
    /// Nothing else may write to stdout meanwhile. Call inside an actix `System`.
    pub fn serve_stdio(&self, opts: &ServerOptions) -> stdio::Drained {
        let (conn, drained) = stdio::serve_stdio_drained(opts);
        self.serve(conn);
        drained
    }

    /// Starts each connection's session on `arbiter` (from the accept loop's task).
    fn on_arbiter(&self, arbiter: ArbiterHandle) -> impl Fn(Connection) + Send + 'static {
        let server = self.clone();
        move |conn| {
            server.serve_in(&arbiter, conn);
        }
    }
}

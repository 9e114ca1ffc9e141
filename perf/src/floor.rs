//! The floors the server's figures are judged against, measured in the same run with the
//! same clients: what the transport alone gives on this machine, now, **built with the
//! runtime shape of the server it is compared with** ([`FloorShape`], issue #42 item 2), so
//! that a ratio says how close the server comes to the limit:
//!
//! - the light server runs on `server_threads` actix arbiters, each a thread with a tokio
//!   current-thread runtime of its own, its listeners and their connections' tasks on the
//!   first; so a floor runs on as many threads, each with a current-thread runtime of its
//!   own, accepting on the first and spreading its connections over all of them in turn
//!   (the limit those threads reach: with one, exactly the server's shape);
//! - a latency floor inherits the pinning of the measurement (every thread on one CPU,
//!   [`super::proc::pin_to_one_cpu`]) as the server's arbiters do: both start after it.
//!
//! The two floors:
//!
//! - [`WsEcho`]: a bare tokio-tungstenite server (`TCP_NODELAY`, tungstenite configured as
//!   our links are: `mcpl_transport::ws::config`), answering every request with the light
//!   tool's result for its id and nothing else — no session, no routing, no actor. The
//!   latency and WebSocket throughput clients run against it exactly as against the server.
//! - [`HttpEcho`]: the same answer from a bare HTTP/1.1 JSON endpoint, each connection served
//!   as the server serves its own (`mcpl_transport::http::serve_http1`: hyper's HTTP/1 with
//!   the same header-read timeout): `POST` a request, get its answer as
//!   `application/json`; a notification gets 202; `GET` gets 405 (no server-to-client
//!   stream, which MCP allows).
//!
//! A figure over its floor is what the server costs beyond the wire; an absolute target
//! flaps with the machine (whether its threads are awake, what else runs), the ratio much
//! less.

use super::client::LIGHT_TEXT;
use super::server_thread::ServerThread;
use futures_util::{SinkExt as _, StreamExt as _};
use mcpl_transport::{ServerOptions, ws};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{oneshot, watch};
use tokio_tungstenite::tungstenite::Message as WsMessage;

/// The thread name of the floor servers (for the CPU figures).
pub const FLOOR_THREADS: &str = "perf-floor";

/// What [`FloorShape::runtime`] says of every floor.
pub const FLOOR_RUNTIME: &str = "tokio current-thread, one per thread (as an actix arbiter)";

/// How a floor was built, in the report (the table's notes and the JSON): the runtime
/// shape of the server it is compared with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloorShape {
    /// Threads serving it: as many as the server's arbiters (`server_threads`).
    pub threads: usize,
    /// The runtime on each of them ([`FLOOR_RUNTIME`]).
    pub runtime: String,
    /// The server's threads it mirrors, as the report names them.
    pub mirrors: String,
    /// The CPU every thread (the server's, the floor's, the clients') was kept on, when
    /// the measurement pinned them.
    pub pinned_cpu: Option<usize>,
}

impl FloorShape {
    /// The shape of a floor beside a server on `threads` arbiters.
    pub fn like_server(threads: usize, pinned_cpu: Option<usize>) -> Self {
        let threads = threads.max(1);
        FloorShape {
            threads,
            runtime: FLOOR_RUNTIME.to_owned(),
            mirrors: format!(
                "the server's {threads} actix arbiter{}",
                if threads == 1 { "" } else { "s" }
            ),
            pinned_cpu,
        }
    }

    /// One phrase for the table's notes.
    pub fn describe(&self) -> String {
        format!(
            "built as the server: {} thread{}, {}{}",
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            self.runtime,
            self.pinned_cpu
                .map(|c| format!(", pinned to CPU {c}"))
                .unwrap_or_default()
        )
    }
}

/// The part of a JSON-RPC message the echo reads.
#[derive(Deserialize)]
struct Head {
    id: Option<Value>,
}

/// The light tool's answer to the request `text`, if it is one (a message with an id).
fn answer(text: &str) -> Option<String> {
    let head: Head = serde_json::from_str(text).ok()?;
    let id = head.id?;
    Some(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{LIGHT_TEXT}"}}]}}}}"#
    ))
}

/// The threads of a floor beyond the first: each runs a current-thread runtime until the
/// floor stops.
struct Workers {
    handles: Vec<tokio::runtime::Handle>,
    stops: Vec<oneshot::Sender<()>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Workers {
    fn start(n: usize) -> io::Result<Self> {
        let mut workers = Workers {
            handles: Vec::new(),
            stops: Vec::new(),
            threads: Vec::new(),
        };
        // Each thread says it runs: a thread takes its name as it starts, so only then is
        // it the floor's to anyone counting them (the server thread waits likewise).
        let (running_tx, running) = std::sync::mpsc::channel::<()>();
        for _ in 0..n {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (stop, stopped) = oneshot::channel::<()>();
            workers.handles.push(runtime.handle().clone());
            workers.stops.push(stop);
            let running_tx = running_tx.clone();
            workers.threads.push(
                std::thread::Builder::new()
                    .name(FLOOR_THREADS.to_owned())
                    .spawn(move || {
                        let _ = running_tx.send(());
                        let _ = runtime.block_on(stopped);
                        runtime.shutdown_background();
                    })?,
            );
        }
        for _ in 0..n {
            running
                .recv()
                .map_err(|_| io::Error::other("a floor's thread stopped as it started"))?;
        }
        Ok(workers)
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for stop in self.stops.drain(..) {
            let _ = stop.send(());
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Where a floor's connections go: the accepting thread's runtime and the workers', in
/// turn.
#[derive(Clone)]
struct Spread {
    handles: Arc<Vec<tokio::runtime::Handle>>,
    next: Arc<AtomicUsize>,
}

impl Spread {
    /// Spawns `task` on the next thread in turn.
    fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.handles.len();
        drop(self.handles[i].spawn(task));
    }
}

/// A floor: `shape.threads` threads, each with a current-thread runtime; `serve` accepts on
/// the first and spreads connections with the [`Spread`] it is given.
struct Floor {
    // Stopped first: the accept loop, then the threads its connections went to.
    server: ServerThread,
    _workers: Workers,
    shape: FloorShape,
}

impl Floor {
    fn start<F, Fut>(shape: FloorShape, serve: F) -> io::Result<Self>
    where
        F: FnOnce(tokio::net::TcpListener, Spread) -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let workers = Workers::start(shape.threads.saturating_sub(1))?;
        let others = workers.handles.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let server = ServerThread::start(FLOOR_THREADS, runtime, move |listener| {
            let mut handles = vec![tokio::runtime::Handle::current()];
            handles.extend(others);
            let spread = Spread {
                handles: Arc::new(handles),
                next: Arc::new(AtomicUsize::new(0)),
            };
            serve(listener, spread)
        })?;
        Ok(Floor {
            server,
            _workers: workers,
            shape,
        })
    }
}

/// The bare WebSocket echo (module docs). Dropping it stops it.
pub struct WsEcho(Floor);

impl WsEcho {
    /// Starts it on 127.0.0.1, port 0, shaped as `shape` says.
    pub fn start(shape: FloorShape) -> io::Result<Self> {
        // Tungstenite configured as our transport's links are: its default read buffer
        // (128 KiB, zero-filled before every read) costs the echo some microseconds a
        // call that ours does not pay, and the floor would flatter us.
        let config = ws::config(ServerOptions::default().max_message_size);
        Floor::start(shape, move |listener, spread| async move {
            while let Ok((tcp, _)) = listener.accept().await {
                if let Err(e) = tcp.set_nodelay(true) {
                    tracing::debug!(error = %e, "TCP_NODELAY refused");
                }
                spread.spawn(async move {
                    let Ok(mut ws) =
                        tokio_tungstenite::accept_async_with_config(tcp, Some(config)).await
                    else {
                        return;
                    };
                    while let Some(Ok(m)) = ws.next().await {
                        match m {
                            WsMessage::Text(text) => {
                                if let Some(reply) = answer(&text)
                                    && ws.send(WsMessage::text(reply)).await.is_err()
                                {
                                    return;
                                }
                            }
                            WsMessage::Close(_) => return,
                            _ => {}
                        }
                    }
                });
            }
        })
        .map(WsEcho)
    }

    /// `ws://ADDR/`.
    pub fn url(&self) -> String {
        format!("ws://{}/", self.0.server.addr())
    }

    /// How it was built.
    pub fn shape(&self) -> &FloorShape {
        &self.0.shape
    }
}

/// The bare HTTP JSON echo (module docs). Dropping it stops it.
pub struct HttpEcho(Floor);

impl HttpEcho {
    /// Starts it on 127.0.0.1, port 0, shaped as `shape` says.
    pub fn start(shape: FloorShape) -> io::Result<Self> {
        use axum::body::Body;
        use axum::http::{Method, StatusCode, header};
        use axum::response::IntoResponse;
        let opts = ServerOptions::default();
        let (limit, read_timeout) = (opts.max_message_size, opts.http_read_timeout);
        Floor::start(shape, move |listener, spread| async move {
            // Never sent on: its sender dropping with this loop tells the connections to
            // shut down, as the server's listener does.
            let (_shutdown, shutdown_rx) = watch::channel(());
            while let Ok((tcp, _)) = listener.accept().await {
                if let Err(e) = tcp.set_nodelay(true) {
                    tracing::debug!(error = %e, "TCP_NODELAY refused");
                }
                let shutdown = shutdown_rx.clone();
                spread.spawn(async move {
                    let served = mcpl_transport::http::serve_http1(
                        tcp,
                        read_timeout,
                        shutdown,
                        move |request: axum::http::Request<_>| async move {
                            if request.uri().path() != "/mcp" {
                                return StatusCode::NOT_FOUND.into_response();
                            }
                            if request.method() != Method::POST {
                                return StatusCode::METHOD_NOT_ALLOWED.into_response();
                            }
                            let body = Body::new(request.into_body());
                            let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
                                return StatusCode::BAD_REQUEST.into_response();
                            };
                            let text = std::str::from_utf8(&bytes).unwrap_or("");
                            match answer(text) {
                                Some(reply) => {
                                    ([(header::CONTENT_TYPE, "application/json")], reply)
                                        .into_response()
                                }
                                None => StatusCode::ACCEPTED.into_response(),
                            }
                        },
                    )
                    .await;
                    if let Err(e) = served {
                        tracing::debug!(error = %e, "a floor HTTP connection failed");
                    }
                });
            }
        })
        .map(HttpEcho)
    }

    /// `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.0.server.addr())
    }

    /// How it was built.
    pub fn shape(&self) -> &FloorShape {
        &self.0.shape
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_echo_answers_a_request_by_its_id_and_not_a_notification() {
        let got = answer(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#)
            .expect("a request is answered");
        let v: Value = serde_json::from_str(&got).expect("JSON");
        assert_eq!(v["id"], 7);
        assert_eq!(v["result"]["content"][0]["text"], LIGHT_TEXT);
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
        assert_eq!(answer("not json"), None);
    }
}

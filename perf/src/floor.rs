//! The floors the server's figures are judged against, measured in the same run with the
//! same clients: what the transport alone gives on this machine, now.
//!
//! - [`WsEcho`]: a bare tokio-tungstenite server on a current-thread runtime of its own
//!   (`TCP_NODELAY`, tungstenite configured as our links are: `mcpl_transport::ws::config`),
//!   answering every request with the light tool's result for its id and
//!   nothing else — no session, no routing, no actor. The latency and WebSocket throughput
//!   clients run against it exactly as against the server.
//! - [`HttpEcho`]: the same answer from a bare HTTP/1.1 JSON endpoint (axum on hyper):
//!   `POST` a request, get its answer as `application/json`; a notification gets 202; `GET`
//!   gets 405 (no server-to-client stream, which MCP allows).
//!
//! A figure over its floor is what the server costs beyond the wire; an absolute target
//! flaps with the machine (whether its threads are awake, what else runs), the ratio much
//! less.

use super::client::LIGHT_TEXT;
use super::server_thread::ServerThread;
use axum::serve::ListenerExt as _;
use futures_util::{SinkExt as _, StreamExt as _};
use mcpl_transport::{ServerOptions, ws};
use serde::Deserialize;
use serde_json::Value;
use std::io;
use tokio_tungstenite::tungstenite::Message as WsMessage;

/// The thread name of the floor servers (for the CPU figures).
pub const FLOOR_THREADS: &str = "perf-floor";

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

/// A server on a thread of its own with a current-thread runtime.
fn start_floor<F, Fut>(serve: F) -> io::Result<ServerThread>
where
    F: FnOnce(tokio::net::TcpListener) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    ServerThread::start(FLOOR_THREADS, runtime, serve)
}

/// The bare WebSocket echo (module docs). Dropping it stops it.
pub struct WsEcho(ServerThread);

impl WsEcho {
    /// Starts it on 127.0.0.1, port 0.
    pub fn start() -> io::Result<Self> {
        // Tungstenite configured as our transport's links are: its default read buffer
        // (128 KiB, zero-filled before every read) costs the echo some microseconds a
        // call that ours does not pay, and the floor would flatter us.
        let config = ws::config(ServerOptions::default().max_message_size);
        start_floor(move |listener| async move {
            while let Ok((tcp, _)) = listener.accept().await {
                if let Err(e) = tcp.set_nodelay(true) {
                    tracing::debug!(error = %e, "TCP_NODELAY refused");
                }
                tokio::spawn(async move {
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
        format!("ws://{}/", self.0.addr())
    }
}

/// The bare HTTP JSON echo (module docs). Dropping it stops it.
pub struct HttpEcho(ServerThread);

impl HttpEcho {
    /// Starts it on 127.0.0.1, port 0.
    pub fn start() -> io::Result<Self> {
        use axum::http::{StatusCode, header};
        use axum::response::IntoResponse;
        async fn post(body: String) -> axum::response::Response {
            match answer(&body) {
                Some(reply) => {
                    ([(header::CONTENT_TYPE, "application/json")], reply).into_response()
                }
                None => StatusCode::ACCEPTED.into_response(),
            }
        }
        start_floor(|listener| async move {
            let app = axum::Router::new().route(
                "/mcp",
                axum::routing::post(post).get(|| async { StatusCode::METHOD_NOT_ALLOWED }),
            );
            let listener = listener.tap_io(|tcp| {
                if let Err(e) = tcp.set_nodelay(true) {
                    tracing::debug!(error = %e, "TCP_NODELAY refused");
                }
            });
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "the HTTP floor stopped");
            }
        })
        .map(HttpEcho)
    }

    /// `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.0.addr())
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

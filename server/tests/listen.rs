//! `Server::serve_ws` and `Server::serve_http`: a real listener on loopback, a client over
//! the network, a session per connection that answers a tool call; dropping the listener
//! stops accepting.

use crate::support;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{Server, ToolContext};
use mcpl_transport::{ClientOptions, ServerOptions};
use serde_json::{Value, json};
use std::sync::Arc;
use support::{Client, TestClient};

fn server() -> Server {
    Server::builder("listen-test", "0.1.0")
        .tool(
            Tool::new("echo", "Says what it is given", json!({"type": "object"})),
            |_: ToolContext, args: Value| async move {
                Ok(CallToolResult::text(
                    args["say"].as_str().unwrap_or("").to_owned(),
                ))
            },
        )
        .build()
        .unwrap()
}

fn options() -> Arc<ServerOptions> {
    Arc::new(ServerOptions {
        allow_anonymous: true,
        ..Default::default()
    })
}

/// A client over the network that called `echo`; the result, and the client (its session
/// lives as long as it does).
async fn call_echo(url: &str, say: &str) -> (Value, TestClient) {
    let conn = mcpl_transport::connect(url, &ClientOptions::default())
        .await
        .unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
    let mut client = support::from_connection(conn);
    client.handshake_plain().await;
    let reply = client
        .exchange(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"say": say}}}))
        .await;
    (reply["result"].clone(), client)
}

#[actix::test]
async fn serve_ws_and_serve_http_answer_clients_over_the_network_until_dropped() {
    let server = server();
    let loopback = ([127, 0, 0, 1], 0).into();
    let ws = server.serve_ws(loopback, options()).await.unwrap();
    let http = server.serve_http(loopback, options()).await.unwrap();
    assert_eq!(ws.url(), format!("ws://{}", ws.local_addr()));
    assert_eq!(http.url(), format!("http://{}/mcp", http.local_addr()));

    let (over_ws, _ws_client) = call_echo(ws.url(), "over ws").await;
    assert_eq!(over_ws["content"][0]["text"], "over ws", "{over_ws}");
    let (over_http, _http_client) = call_echo(http.url(), "over http").await;
    assert_eq!(over_http["content"][0]["text"], "over http", "{over_http}");
    assert_eq!(server.session_count(), 2);

    // Dropped: nothing accepts any more.
    let url = ws.url().to_owned();
    drop(ws);
    let refused = mcpl_transport::connect(&url, &ClientOptions::default()).await;
    assert!(refused.is_err(), "a dropped listener stops accepting");
}

/// On an arbiter the listeners keep their tasks in its `LocalSet`
/// (`ServerOptions::local_tasks`); that holds even when `serve_ws` and `serve_http` are
/// called from a plain tokio task on the arbiter's thread, which cannot spawn there itself.
#[actix::test]
async fn the_listeners_serve_when_started_from_a_plain_tokio_task() {
    let server = server();
    let started = tokio::spawn({
        let server = server.clone();
        async move {
            let loopback = ([127, 0, 0, 1], 0).into();
            let ws = server.serve_ws(loopback, options()).await.unwrap();
            let http = server.serve_http(loopback, options()).await.unwrap();
            (ws, http)
        }
    });
    let (ws, http) = started.await.expect("the listeners start");
    let (over_ws, _ws_client) = call_echo(ws.url(), "over ws").await;
    assert_eq!(over_ws["content"][0]["text"], "over ws", "{over_ws}");
    let (over_http, _http_client) = call_echo(http.url(), "over http").await;
    assert_eq!(over_http["content"][0]["text"], "over http", "{over_http}");
}

//! Issue #36, item 12, from outside: raw HTTP/1.1 on a real Streamable HTTP listener. A
//! `tools/call` the client cancels gets no response (MCP "Cancellation"), and its POST
//! must end then, not stay open until the client gives up or the session ends.

// Shared with `hostile_client.rs`, which uses the rest of it.
#[allow(dead_code)]
use crate::raw;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{Server, ToolContext, ToolError};
use mcpl_testkit::within;
use mcpl_transport::{HttpResponseMode, ServerOptions, http};
use raw::{exchange, post};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::mpsc;

/// A server whose `wait` never answers (until cancelled), telling `started` when a call of
/// it is running, on a Streamable HTTP listener answering in `mode`; its address.
async fn serve(mode: HttpResponseMode, started: mpsc::UnboundedSender<()>) -> SocketAddr {
    let wait = Tool::new("wait", "Waits forever", json!({"type": "object"}));
    let server = Server::builder("waiting", "1.0")
        .tool(wait, move |_: ToolContext, _: Value| {
            let started = started.clone();
            async move {
                let _ = started.send(());
                std::future::pending::<()>().await;
                Ok::<_, ToolError>(CallToolResult::text("never"))
            }
        })
        .build()
        .expect("a valid server");
    let mut opts = ServerOptions {
        http_response_mode: mode,
        ..Default::default()
    };
    opts.tokens.insert("alice-token".into(), "alice".into());
    let mut listener = http::bind("127.0.0.1:0".parse().unwrap(), "/mcp", Arc::new(opts))
        .await
        .expect("bind");
    let addr = listener.local_addr();
    actix::spawn(async move {
        while let Some(conn) = listener.accept().await {
            server.serve(conn);
        }
    });
    addr
}

/// POSTs `body` (in session `id`, when given) as alice.
async fn send(addr: SocketAddr, id: Option<&str>, body: Value) -> raw::HttpResponse {
    let mut headers = vec![("Authorization", "Bearer alice-token")];
    if let Some(id) = id {
        headers.push(("Mcp-Session-Id", id));
    }
    exchange(addr, post(addr, &headers, body.to_string().as_bytes())).await
}

#[actix::test]
async fn issue36_12_a_cancelled_calls_http_post_ends_when_the_client_cancels_it() {
    for mode in [HttpResponseMode::Json, HttpResponseMode::Sse] {
        let (started, mut running) = mpsc::unbounded_channel();
        let addr = serve(mode, started).await;
        let init = send(
            addr,
            None,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}}),
        )
        .await;
        assert_eq!(init.status, 200, "{init:?}");
        let session = init.header("mcp-session-id").expect("a session").to_owned();
        let done = send(
            addr,
            Some(&session),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
        assert_eq!(done.status, 202, "{done:?}");

        let held = {
            let session = session.clone();
            actix::spawn(async move {
                send(
                    addr,
                    Some(&session),
                    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": "wait", "arguments": {}}}),
                )
                .await
            })
        };
        within(running.recv()).await.expect("the call runs");
        let cancel = send(
            addr,
            Some(&session),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 2, "reason": "the user gave up"}}),
        )
        .await;
        assert_eq!(cancel.status, 202, "{cancel:?}");

        // The call's POST ends, with no response in it (MCP: none is sent), as an SSE
        // stream (MCP answers a request's POST with SSE or JSON).
        let ended = within(held).await.expect("the POST's task");
        assert_eq!(ended.status, 200, "{mode:?}: {ended:?}");
        assert!(
            ended
                .header("content-type")
                .is_some_and(|t| t.starts_with("text/event-stream")),
            "{mode:?}: {ended:?}"
        );
        let body = String::from_utf8_lossy(&ended.body);
        assert!(!body.contains("\"result\""), "{mode:?}: {body}");
        assert!(!body.contains("\"error\""), "{mode:?}: {body}");

        // The session goes on.
        let ping = send(
            addr,
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        )
        .await;
        assert_eq!(ping.status, 200, "{mode:?}: {ping:?}");
        assert!(
            String::from_utf8_lossy(&ping.body).contains("\"id\":3"),
            "{ping:?}"
        );
    }
}

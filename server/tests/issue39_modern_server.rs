//! Issue #39 items 2 and 3 from outside, on a real Streamable HTTP listener in raw HTTP/1.1:
//! what a tool handler does during an MCP 2026-07-28 request. Its log messages go out only
//! at or above the request's own `logLevel`; asking the client for a capability the request
//! did not declare answers it -32021 (400); and a client that closes the answer cancels
//! the request, stopping its handler.

// Shared with `hostile_client.rs`, which uses the rest of it.
#[allow(dead_code)]
use crate::raw;

use mcpl_protocol::client_features::ElicitParams;
use mcpl_protocol::mcp::{CallToolResult, LoggingLevel, Tool};
use mcpl_server::{Server, ToolContext, ToolError};
use mcpl_testkit::within;
use mcpl_transport::{ServerOptions, http};
use raw::{exchange, post};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// Sends on its channel when dropped: the handler's future was dropped (stopped).
struct Stopped(mpsc::UnboundedSender<()>);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// A server offering logging with three tools — `chatty` logs at info and at error,
/// `ask` elicits, `wait` runs until stopped (telling `started`, then `stopped`) — on a
/// Streamable HTTP listener; its address.
async fn serve(
    started: mpsc::UnboundedSender<()>,
    stopped: mpsc::UnboundedSender<()>,
) -> SocketAddr {
    let any = json!({"type": "object"});
    let server = Server::builder("modern", "1.0")
        .logging(LoggingLevel::Debug)
        .tool(
            Tool::new("chatty", "Logs twice", any.clone()),
            |ctx: ToolContext, _: Value| async move {
                let _ = ctx.log(LoggingLevel::Info, None, json!("an info")).await;
                let _ = ctx.log(LoggingLevel::Error, None, json!("an error")).await;
                Ok::<_, ToolError>(CallToolResult::text("said"))
            },
        )
        .tool(
            Tool::new("ask", "Asks the user", any.clone()),
            |ctx: ToolContext, _: Value| async move {
                let asked = ctx
                    .elicit(ElicitParams::form("Your name?", json!({"type": "object"})))
                    .await;
                Ok::<_, ToolError>(CallToolResult::text(format!("{asked:?}")))
            },
        )
        .tool(
            Tool::new("wait", "Waits until stopped", any),
            move |_: ToolContext, _: Value| {
                let started = started.clone();
                let stopped = Stopped(stopped.clone());
                async move {
                    let _stopped = stopped;
                    let _ = started.send(());
                    std::future::pending::<()>().await;
                    Ok::<_, ToolError>(CallToolResult::text("never"))
                }
            },
        )
        .build()
        .expect("a valid server");
    let mut opts = ServerOptions::default();
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

/// A modern `tools/call` of `tool` as bytes of an HTTP request, its `_meta` holding
/// `extra` besides the required keys.
fn modern_call(addr: SocketAddr, id: i64, tool: &str, extra: Value) -> Vec<u8> {
    let mut meta = mcpl_testkit::msg::modern_meta(json!({}));
    if let (Some(m), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        m.extend(extra);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "_meta": meta}});
    post(
        addr,
        &[
            ("Authorization", "Bearer alice-token"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
        ],
        body.to_string().as_bytes(),
    )
}

#[actix::test]
async fn issue39_02_log_messages_follow_the_requests_own_level() {
    let (started, _) = mpsc::unbounded_channel();
    let (stopped, _) = mpsc::unbounded_channel();
    let addr = serve(started, stopped).await;
    // No logLevel: nothing is logged, the answer is one JSON body.
    let quiet = exchange(addr, modern_call(addr, 1, "chatty", json!({}))).await;
    assert_eq!(quiet.status, 200, "{quiet:?}");
    let body = String::from_utf8_lossy(&quiet.body).into_owned();
    assert!(!body.contains("notifications/message"), "{body}");
    assert!(body.contains("\"resultType\":\"complete\""), "{body}");
    // `warning`: the error goes out, the info does not, before the result.
    let warned = exchange(
        addr,
        modern_call(
            addr,
            2,
            "chatty",
            json!({"io.modelcontextprotocol/logLevel": "warning"}),
        ),
    )
    .await;
    let body = String::from_utf8_lossy(&warned.body).into_owned();
    assert!(
        warned
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream")),
        "{warned:?}"
    );
    assert!(!body.contains("an info"), "{body}");
    let error = body.find("an error").expect("the error is logged");
    let result = body.find("\"result\"").expect("the result");
    assert!(error < result, "{body}");
}

#[actix::test]
async fn issue39_02_asking_for_an_undeclared_capability_is_32021() {
    let (started, _) = mpsc::unbounded_channel();
    let (stopped, _) = mpsc::unbounded_channel();
    let addr = serve(started, stopped).await;
    let refused = exchange(addr, modern_call(addr, 1, "ask", json!({}))).await;
    assert_eq!(refused.status, 400, "{refused:?}");
    let body: Value = serde_json::from_slice(&refused.body).expect("a JSON error");
    assert_eq!(body["error"]["code"], -32021, "{body}");
    assert!(
        body["error"]["data"]["requiredCapabilities"]["elicitation"].is_object(),
        "{body}"
    );
    // Declared, the question is the call's InputRequiredResult (no request is sent).
    let declared = exchange(
        addr,
        modern_call(
            addr,
            2,
            "ask",
            json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}),
        ),
    )
    .await;
    assert_eq!(declared.status, 200, "{declared:?}");
    let body = declared.json();
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");
    let requests = body["result"]["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{body}");
    assert!(
        requests
            .values()
            .all(|r| r["method"] == "elicitation/create"),
        "{body}"
    );
}

#[actix::test]
async fn issue39_03_closing_the_answer_stops_the_handler() {
    let (started, mut running) = mpsc::unbounded_channel();
    let (stopped, mut ended) = mpsc::unbounded_channel();
    let addr = serve(started, stopped).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(&modern_call(addr, 1, "wait", json!({})))
        .await
        .expect("sent");
    within(running.recv()).await.expect("the call runs");
    // The client goes away: its answer's stream is closed.
    drop(stream);
    within(ended.recv()).await.expect("the handler is stopped");
}

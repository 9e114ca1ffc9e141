//! Plain tools over a memory link: paging, typed and raw arguments, tool errors versus
//! protocol errors, panics, cancellation.

use crate::support;

use mcpl_protocol::jsonrpc::ErrorCode;
use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{Server, ToolContext, ToolError};
use mcpl_testkit::within;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use support::{Client, TestClient, call, code, connect};
use tokio::sync::{mpsc, oneshot};

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

fn tool(name: &str) -> Tool {
    Tool::new(name, format!("the {name} tool"), json!({"type": "object"}))
}

/// Signals on drop: proves a handler's future was dropped.
struct DropSignal(Option<oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// What the blocking tool reports to the test: it started, its future was dropped, its
/// token said cancelled.
struct BlockProbes {
    started: mpsc::UnboundedSender<()>,
    dropped: Mutex<Vec<oneshot::Sender<()>>>,
    cancelled: Mutex<Vec<oneshot::Sender<()>>>,
}

fn server(probes: Arc<BlockProbes>) -> Server {
    Server::builder("test-server", "0.1.0")
        .tool(
            Tool::new(
                "echo",
                "Says it back",
                json!({"type": "object", "properties": {"text": {"type": "string"}},
                "required": ["text"]}),
            ),
            |_: ToolContext, args: EchoArgs| async move { Ok(CallToolResult::text(args.text)) },
        )
        .tool(tool("raw"), |_: ToolContext, args: Value| async move {
            Ok(CallToolResult {
                structured_content: Some(args),
                ..Default::default()
            })
        })
        .tool(tool("whoami"), |ctx: ToolContext, _: Value| async move {
            Ok(CallToolResult::text(ctx.principal_name()))
        })
        .tool(tool("fail"), |_: ToolContext, _: Value| async {
            Err(ToolError::failed("not your turn"))
        })
        .tool(tool("broken"), |_: ToolContext, _: Value| async {
            Err(ToolError::internal("disk on fire"))
        })
        .tool(tool("panic"), |_: ToolContext, _: Value| async {
            if true {
                panic!("handler bug");
            }
            Ok(CallToolResult::default())
        })
        .tool(tool("panic_later"), |_: ToolContext, _: Value| async {
            // Pending once, so the panic comes in the call's task, not its first poll.
            tokio::task::yield_now().await;
            if true {
                panic!("handler bug after a pause");
            }
            Ok(CallToolResult::default())
        })
        .tool(tool("later"), |_: ToolContext, args: Value| async move {
            tokio::task::yield_now().await;
            Ok(CallToolResult::text(
                args["text"].as_str().unwrap_or_default(),
            ))
        })
        .tool(tool("block"), move |ctx: ToolContext, _: Value| {
            let probes = probes.clone();
            async move {
                let dropped = probes.dropped.lock().unwrap().pop();
                let _guard = DropSignal(dropped);
                if let Some(tx) = probes.cancelled.lock().unwrap().pop() {
                    // Work handed off beyond the handler's future watches the token.
                    let token = ctx.cancellation().clone();
                    tokio::spawn(async move {
                        token.cancelled().await;
                        let _ = tx.send(());
                    });
                }
                let _ = probes.started.send(());
                std::future::pending::<()>().await;
                Ok(CallToolResult::text("never"))
            }
        })
        .build()
        .unwrap()
}

struct Fixture {
    client: TestClient,
    started: mpsc::UnboundedReceiver<()>,
    probes: Arc<BlockProbes>,
}

async fn fixture() -> Fixture {
    let (started_tx, started) = mpsc::unbounded_channel();
    let probes = Arc::new(BlockProbes {
        started: started_tx,
        dropped: Mutex::default(),
        cancelled: Mutex::default(),
    });
    let (mut client, _session) = connect(&server(probes.clone()));
    client.handshake_mcpl(false, &["tools", "pushEvents"]).await;
    Fixture {
        client,
        started,
        probes,
    }
}

#[actix::test]
async fn a_call_returns_the_handlers_result() {
    let mut f = fixture().await;
    let reply = f
        .client
        .exchange(call(json!(1), "echo", json!({"text": "hi"})))
        .await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi"}]}})
    );
    let reply = f
        .client
        .exchange(call(json!("w"), "whoami", json!({})))
        .await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": "w", "result": {"content": [{"type": "text", "text": "alice"}]}})
    );
}

#[actix::test]
async fn value_arguments_arrive_as_sent_and_absent_ones_as_an_empty_object() {
    let mut f = fixture().await;
    let reply = f
        .client
        .exchange(call(json!(1), "raw", json!({"a": [1, 2], "b": null})))
        .await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": {"a": [1, 2], "b": null}}})
    );
    let reply = f
        .client
        .exchange(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "raw"}}),
        )
        .await;
    assert_eq!(reply["result"]["structuredContent"], json!({}));
}

#[actix::test]
async fn arguments_that_do_not_decode_are_a_tool_error_naming_the_problem() {
    let mut f = fixture().await;
    let reply = f
        .client
        .exchange(call(json!(1), "echo", json!({"txt": "hi"})))
        .await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("`text`"),
        "the message names the missing field: {text}"
    );
    let reply = f
        .client
        .exchange(call(json!(2), "echo", json!({"text": 5})))
        .await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
}

#[actix::test]
async fn tool_failures_are_results_and_internal_failures_are_errors() {
    let mut f = fixture().await;
    let reply = f.client.exchange(call(json!(1), "fail", json!({}))).await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "not your turn"}], "isError": true}})
    );
    let reply = f.client.exchange(call(json!(2), "broken", json!({}))).await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(2), ErrorCode::INTERNAL_ERROR.0)
    );
}

#[actix::test]
async fn an_unknown_tool_is_invalid_params() {
    let mut f = fixture().await;
    let reply = f.client.exchange(call(json!(1), "nope", json!({}))).await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(1), ErrorCode::INVALID_PARAMS.0)
    );
}

#[actix::test]
async fn a_panicking_handler_fails_its_call_only() {
    let mut f = fixture().await;
    let reply = f.client.exchange(call(json!(1), "panic", json!({}))).await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(1), ErrorCode::INTERNAL_ERROR.0)
    );
    let reply = f
        .client
        .exchange(call(json!(2), "echo", json!({"text": "still here"})))
        .await;
    assert_eq!(reply["result"]["content"][0]["text"], "still here");
}

/// A handler is polled once in place before it becomes a task (`session/calls.rs`): a
/// panic is caught on either side of that line, and a handler that waits is answered.
#[actix::test]
async fn a_handler_that_waits_is_answered_and_one_that_panics_after_waiting_fails_only_its_call() {
    let mut f = fixture().await;
    let reply = f
        .client
        .exchange(call(json!(1), "later", json!({"text": "after a pause"})))
        .await;
    assert_eq!(reply["result"]["content"][0]["text"], "after a pause");
    let reply = f
        .client
        .exchange(call(json!(2), "panic_later", json!({})))
        .await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(2), ErrorCode::INTERNAL_ERROR.0)
    );
    let reply = f
        .client
        .exchange(call(json!(3), "echo", json!({"text": "still here"})))
        .await;
    assert_eq!(reply["result"]["content"][0]["text"], "still here");
}

#[actix::test]
async fn a_cancelled_call_is_dropped_and_never_answered() {
    tokio::time::pause();
    let mut f = fixture().await;
    let (dropped_tx, dropped) = oneshot::channel();
    let (cancelled_tx, cancelled) = oneshot::channel();
    f.probes.dropped.lock().unwrap().push(dropped_tx);
    f.probes.cancelled.lock().unwrap().push(cancelled_tx);
    f.client.send(call(json!(5), "block", json!({}))).await;
    within(f.started.recv()).await.unwrap();
    f.client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "user"}}))
        .await;
    within(dropped)
        .await
        .expect("the handler's future was dropped");
    within(cancelled)
        .await
        .expect("the call's token was cancelled");
    let pong = f
        .client
        .exchange(json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}))
        .await;
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 6, "result": {}}));
    f.client.expect_silence().await;
}

#[actix::test]
async fn a_request_id_in_use_by_a_running_call_is_refused() {
    tokio::time::pause();
    let mut f = fixture().await;
    f.client.send(call(json!(9), "block", json!({}))).await;
    within(f.started.recv()).await.unwrap();
    let reply = f
        .client
        .exchange(call(json!(9), "echo", json!({"text": "x"})))
        .await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(9), ErrorCode::INVALID_REQUEST.0)
    );
    // Cancelling frees the id for a new call.
    f.client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})).await;
    let reply = f
        .client
        .exchange(call(json!(9), "echo", json!({"text": "again"})))
        .await;
    assert_eq!(reply["result"]["content"][0]["text"], "again");
    f.client.expect_silence().await;
}

fn paged_server() -> Server {
    let mut b = Server::builder("paged", "1").page_size(2);
    for i in 0..5 {
        b = b.tool(tool(&format!("t{i}")), |_: ToolContext, _: Value| async {
            Ok(CallToolResult::text("ok"))
        });
    }
    b.build().unwrap()
}

#[actix::test]
async fn tools_list_pages_through_every_tool_once() {
    let (mut client, _session) = connect(&paged_server());
    client.handshake_plain().await;
    let first = client
        .exchange(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let cursor = first["result"]["nextCursor"].clone();
    assert!(cursor.is_string(), "{first}");
    assert_eq!(
        first,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "t0", "description": "the t0 tool", "inputSchema": {"type": "object"}},
            {"name": "t1", "description": "the t1 tool", "inputSchema": {"type": "object"}}],
            "nextCursor": cursor}})
    );
    let mut names = vec!["t0".to_owned(), "t1".to_owned()];
    let mut cursor = cursor;
    let mut pages = 1;
    while !cursor.is_null() {
        let page = client
            .exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": cursor}}))
            .await;
        names.extend(
            page["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned()),
        );
        cursor = page["result"]["nextCursor"].clone();
        pages += 1;
    }
    assert_eq!(pages, 3);
    assert_eq!(names, ["t0", "t1", "t2", "t3", "t4"]);
}

#[actix::test]
async fn an_unknown_cursor_is_invalid_params() {
    let (mut client, _session) = connect(&paged_server());
    client.handshake_plain().await;
    for cursor in ["bogus", "tools:1", "tools:6"] {
        let reply = client
            .exchange(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": cursor}}))
            .await;
        assert_eq!(
            (reply["id"].clone(), code(&reply)),
            (json!(3), ErrorCode::INVALID_PARAMS.0),
            "{cursor}"
        );
    }
}

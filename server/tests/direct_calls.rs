//! Direct calls (`server-core/src/session.rs`, issue #18): once the principal has resolved a loose
//! tool's call to its own handler, the session runs that tool's later calls itself, without
//! the two hops through the principal. From the host's side nothing may differ: every call
//! is answered, a cancelled one never (vector 29) and its handler stopped, an id is refused
//! while its call runs. Shown in raw JSON over a session on real actors.

use crate::support;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{Server, ToolContext, ToolError};
use mcpl_testkit::msg;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::{TestClient, call, hinted, text};
use tokio::sync::mpsc;

/// What the `wait` handler tells the test: it started, or its future was dropped.
#[derive(Debug, PartialEq)]
enum Seen {
    Started,
    Dropped,
}

/// Says [`Seen::Dropped`] when the handler's future goes (a cancelled call's is aborted).
struct OnDrop(mpsc::UnboundedSender<Seen>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(Seen::Dropped);
    }
}

/// A server with three loose tools with handlers: `ping` (answers `pong`, counting its
/// runs), `secret` (declared hidden, §3; counted the same) and `wait` (never answers until
/// cancelled).
fn server(runs: Arc<AtomicUsize>, seen: mpsc::UnboundedSender<Seen>) -> Server {
    let object = || json!({"type": "object"});
    let mut secret = Tool::new("secret", "Hidden", object());
    secret.meta = Some(serde_json::from_value(json!({"mcpl/visible": false})).expect("meta"));
    let counted = |runs: Arc<AtomicUsize>| {
        move |_: ToolContext, _: Value| {
            runs.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, ToolError>(CallToolResult::text("pong")) }
        }
    };
    Server::builder("direct-calls", "0.1.0")
        .tool(
            Tool::new("ping", "Answers pong", object()),
            counted(runs.clone()),
        )
        .tool(secret, counted(runs))
        .tool(
            Tool::new("wait", "Waits", object()),
            move |_: ToolContext, _: Value| {
                let guard = OnDrop(seen.clone());
                let _ = seen.send(Seen::Started);
                async move {
                    let _guard = guard;
                    std::future::pending::<Result<CallToolResult, ToolError>>().await
                }
            },
        )
        .build()
        .expect("a valid server")
}

/// Calls `ping` with request id `id`: the next message is its answer, `pong`.
async fn ping(client: &mut TestClient, id: i64) {
    let reply = client.exchange(call(id, "ping", json!({}))).await;
    assert_eq!(
        reply,
        msg::result(json!(id), json!({"content": [text("pong")]})),
        "call {id}"
    );
}

#[actix::test]
async fn a_loose_tools_later_calls_are_answered_alike_and_each_runs_its_handler() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (seen, _) = mpsc::unbounded_channel();
    let server = server(runs.clone(), seen);
    let (mut alice, _session) = hinted(&server, "alice").await;
    for id in 1..=5 {
        ping(&mut alice, id).await;
    }
    assert_eq!(runs.load(Ordering::SeqCst), 5);
    // A hidden loose tool is refused every time (§3), its handler never run: the principal
    // gives no leave for it.
    for id in 6..=8 {
        let refused = alice.exchange(call(id, "secret", json!({}))).await;
        assert_eq!(msg::id_of(&refused), &json!(id), "{refused}");
        assert!(msg::is_tool_error(&refused["result"]), "{refused}");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 5);
    // Another principal's session gets its own leave from its own principal.
    let (mut bob, _s) = hinted(&server, "bob").await;
    for id in 1..=2 {
        ping(&mut bob, id).await;
    }
    assert_eq!(runs.load(Ordering::SeqCst), 7);
}

#[actix::test]
async fn a_direct_call_is_cancelled_unanswered_and_its_id_is_refused_while_it_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let server = server(runs, seen_tx);
    let (mut alice, _session) = hinted(&server, "alice").await;
    // Call 1 goes through the principal, call 2 runs directly: each is cancelled the same.
    for id in 1..=2 {
        alice.send(call(id, "wait", json!({}))).await;
        assert_eq!(seen.recv().await, Some(Seen::Started));
        if id == 2 {
            // The id of a call still running is refused (MCP: ids are unique among
            // requests in flight), whatever tool the reuse names.
            let reused = alice.exchange(call(2, "ping", json!({}))).await;
            assert_eq!(msg::id_of(&reused), &json!(2), "{reused}");
            assert_eq!(msg::error_code(&reused), Some(-32600), "{reused}");
        }
        alice.send(msg::cancelled(id, "changed my mind")).await;
        assert_eq!(seen.recv().await, Some(Seen::Dropped));
    }
    // Nothing was written for the cancelled calls: the next message answers call 3.
    ping(&mut alice, 3).await;
}

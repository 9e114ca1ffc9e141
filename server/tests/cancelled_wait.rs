//! A deferred call that the host cancelled, then answered by something else (§5.2
//! "Cancelled calls", §5.3; vector 29), a **\[project\]** reading: the call's own changes go
//! as `tools/hints` (what it held, at the cancel), but the event that answers it — another's
//! consequence, here a bell the test rings from outside — still reaches the connection that
//! gave up waiting, pushed with its hints as it would have been without the call; where
//! pushing is not allowed the hints go standalone.

mod support;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    CallId, Event, InstanceContext, InstanceLogic, InstanceWaker, ParticipantId, Reply, Server,
    Started, ToolCall, Toolset,
};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use support::{TestClient, call, expect_push, hinted, hints, open, result, shown, text};

const RING: u64 = 1;

#[derive(Deserialize)]
struct Wait {
    hold: bool,
}

struct Bell {
    waiting: Option<(CallId, ParticipantId)>,
}

impl InstanceLogic for Bell {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        let args: Wait = match call.args() {
            Ok(a) => a,
            Err(e) => return e.into(),
        };
        if args.hold {
            // The call's own change, held for its result.
            cx.hide(call.caller(), "wait");
            cx.hold_for(call.id());
        }
        self.waiting = Some((call.id(), call.caller()));
        Reply::Later
    }

    fn wake(&mut self, tag: u64, cx: &mut InstanceContext) {
        if tag == RING
            && let Some((call, who)) = self.waiting.take()
        {
            cx.event(who, Event::text("The bell rang."));
            cx.show(who, "answer");
            cx.answer(call, Ok(CallToolResult::text("Rung.")));
        }
    }
}

type Slot = Arc<Mutex<Option<InstanceWaker>>>;

fn server(slot: Slot) -> Server {
    let bell = Toolset::new("bell")
        .tool(Tool::new(
            "wait",
            "Answers when the bell rings",
            json!({"type": "object"}),
        ))
        .hidden_tool(Tool::new(
            "answer",
            "Shown when it rings",
            json!({"type": "object"}),
        ))
        .on_open(move |_, cx| {
            *slot.lock().unwrap() = Some(cx.waker());
            Ok(Started::new(Bell { waiting: None }))
        });
    Server::builder("test-server", "0.1.0")
        .toolset(bell)
        .build()
        .unwrap()
}

fn ring(slot: &Slot) {
    slot.lock().unwrap().as_ref().expect("open").wake(RING);
}

/// Opens `bell` on `client` (rev 1 there).
async fn open_bell(client: &mut TestClient) {
    let got = client.request(open(1, "bell", None, None)).await;
    assert_eq!(got["result"]["_meta"]["mcpl/hints"]["rev"], 1, "{got:#}");
}

async fn cancel(client: &mut TestClient, request: i64) {
    client
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": request, "reason": "impatient"}}),
        )
        .await;
}

/// A ping answered: everything sent before it was read.
async fn sync(client: &mut TestClient) {
    let pong = client
        .request(json!({"jsonrpc": "2.0", "id": "sync", "method": "ping"}))
        .await;
    assert_eq!(pong, result(json!("sync"), json!({})));
}

fn rang(rev: i64) -> Value {
    json!({"featureSet": "default", "tags": ["surface:activity"],
        "payload": {"content": [text("The bell rang.")]}, "toolset": "bell",
        "hints": {"rev": rev, "tools": [shown("answer", None, true)]}})
}

#[actix::test]
async fn a_cancelled_wait_still_hears_the_event_that_answers_it() {
    tokio::time::pause();
    let slot = Slot::default();
    let server = server(slot.clone());
    let (mut a1, _s1) = hinted(&server, "alice").await;
    let (mut a2, _s2) = hinted(&server, "alice").await;
    open_bell(&mut a1).await;
    a2.recv().await; // the open, as tools/hints (rev 1 there)
    a1.send(call(2, "wait", json!({"hold": false}))).await;
    cancel(&mut a1, 2).await;
    sync(&mut a1).await;
    ring(&slot);
    // No result for the cancelled call; the event that answered it is pushed with its
    // hints, exactly as to the connection that never waited.
    expect_push(&mut a1, 1, rang(2)).await;
    expect_push(&mut a2, 1, rang(2)).await;
    a1.expect_silence().await;
    a2.expect_silence().await;
}

#[actix::test]
async fn what_the_cancelled_call_held_goes_at_the_cancel_and_the_event_after() {
    tokio::time::pause();
    let slot = Slot::default();
    let server = server(slot.clone());
    let (mut a1, _s1) = hinted(&server, "alice").await;
    open_bell(&mut a1).await;
    a1.send(call(2, "wait", json!({"hold": true}))).await;
    cancel(&mut a1, 2).await;
    // §5.2: the call's own changes, as tools/hints, at once.
    a1.expect(hints(
        json!({"rev": 2, "tools": [shown("wait", None, false)]}),
    ))
    .await;
    ring(&slot);
    expect_push(&mut a1, 1, rang(3)).await;
    a1.expect_silence().await;
}

#[actix::test]
async fn a_wait_not_cancelled_is_answered_with_the_changes_and_nothing_is_pushed() {
    tokio::time::pause();
    let slot = Slot::default();
    let server = server(slot.clone());
    let (mut a1, _s1) = hinted(&server, "alice").await;
    open_bell(&mut a1).await;
    a1.send(call(2, "wait", json!({"hold": false}))).await;
    sync(&mut a1).await;
    ring(&slot);
    // §5.3: the result is this connection's account of the event.
    a1.expect(result(
        json!(2),
        json!({"content": [text("Rung.")], "_meta": {"mcpl/hints": {"rev": 2,
            "tools": [shown("answer", None, true)]}}}),
    ))
    .await;
    a1.expect_silence().await;
}

#[actix::test]
async fn without_the_push_grant_a_cancelled_waits_event_falls_back_to_tools_hints() {
    tokio::time::pause();
    let slot = Slot::default();
    let server = server(slot.clone());
    let (mut a1, _s1) =
        support::connect_as(&server, mcpl_transport::Principal::Named("alice".into()));
    a1.handshake_mcpl(true, &["tools"]).await;
    open_bell(&mut a1).await;
    a1.send(call(2, "wait", json!({"hold": false}))).await;
    cancel(&mut a1, 2).await;
    sync(&mut a1).await;
    ring(&slot);
    // Vector 31: pushing is not allowed, so the changes go standalone.
    a1.expect(hints(
        json!({"rev": 2, "tools": [shown("answer", None, true)]}),
    ))
    .await;
    a1.expect_silence().await;
}

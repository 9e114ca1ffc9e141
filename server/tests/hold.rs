//! A deferred call holding its caller's changes for its answer
//! (`InstanceContext::hold_for`, §5.3): the changes made between `Reply::Later` and the
//! answer ride in the answer's result on the calling connection, the caller's other
//! connections get them at once, and held changes never overtake later ones (§5.2): a
//! push, `tools/hints` or a `toolsets/list` result for that connection makes them go first,
//! and a cancel sends them at once (vector 29).

use crate::support;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    CallId, Event, InstanceContext, InstanceLogic, InstanceWaker, ParticipantId, Reply, Server,
    Started, ToolCall, Toolset,
};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use support::{TestClient, call, expect_push, hinted, hints, open, result, shown, text};

const ANSWER: u64 = 1;

#[derive(Deserialize)]
struct Go {
    hold: bool,
}

struct Slow {
    waiting: Option<(CallId, ParticipantId)>,
}

impl InstanceLogic for Slow {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        let args: Go = match call.args() {
            Ok(a) => a,
            Err(e) => return e.into(),
        };
        cx.hide(call.caller(), "go");
        cx.event(call.caller(), Event::text("Thinking."));
        if args.hold {
            cx.hold_for(call.id());
        }
        self.waiting = Some((call.id(), call.caller()));
        Reply::Later
    }

    fn wake(&mut self, tag: u64, cx: &mut InstanceContext) {
        if tag == ANSWER
            && let Some((call, who)) = self.waiting.take()
        {
            cx.show(who, "again");
            cx.answer(call, Ok(CallToolResult::text("Done.")));
        }
    }
}

type Slot = Arc<Mutex<Option<InstanceWaker>>>;

fn server(slot: Slot) -> Server {
    let slow = Toolset::new("slow")
        .tool(Tool::new("go", "Answers later", json!({"type": "object"})))
        .hidden_tool(Tool::new(
            "again",
            "Shown with the answer",
            json!({"type": "object"}),
        ))
        .on_open(move |_, cx| {
            *slot.lock().unwrap() = Some(cx.waker());
            Ok(Started::new(Slow { waiting: None }))
        });
    let other = Toolset::new("other")
        .tool(Tool::new("thing", "Another", json!({"type": "object"})))
        .on_open(|_, _| Ok(Started::new(Slow { waiting: None })));
    Server::builder("test-server", "0.1.0")
        .toolset(slow)
        .toolset(other)
        .build()
        .unwrap()
}

fn answer(slot: &Slot) {
    slot.lock().unwrap().as_ref().expect("open").wake(ANSWER);
}

/// Opens `slow` on `client` (rev 1 there).
async fn open_slow(client: &mut TestClient) {
    let got = client.exchange(open(1, "slow", None, None)).await;
    assert_eq!(
        got,
        result(
            json!(1),
            json!({"_meta": {"mcpl/hints": {"rev": 1, "tools": [shown("go", None, true)],
                "toolsets": [{"toolset": "slow", "state": "open"}]}}})
        )
    );
}

fn thinking(hints: Option<Value>) -> Value {
    let mut p = json!({"featureSet": "default", "tags": ["surface:activity"],
        "payload": {"content": [text("Thinking.")]}, "toolset": "slow"});
    if let Some(h) = hints {
        p["hints"] = h;
    }
    p
}

#[actix::test]
async fn held_changes_ride_in_the_answer_and_reach_other_connections_at_once() {
    let slot = Slot::default();
    let server = server(slot.clone());
    let (mut a1, _s1) = hinted(&server, "alice").await;
    let (mut a2, _s2) = hinted(&server, "alice").await;
    open_slow(&mut a1).await;
    a2.expect(hints(json!({"rev": 1, "tools": [shown("go", None, true)],
        "toolsets": [{"toolset": "slow", "state": "open"}]})))
        .await;
    a1.send(call(2, "go", json!({"hold": true}))).await;
    // The calling connection hears the event, without the changes it holds…
    expect_push(&mut a1, 1, thinking(None)).await;
    // …the other connection gets them at once, with the event.
    let hidden = json!({"rev": 2, "tools": [shown("go", None, false)]});
    expect_push(&mut a2, 1, thinking(Some(hidden))).await;
    answer(&slot);
    // The answer carries what was held, then its own step's changes, on one rev.
    a1.expect(result(
        json!(2),
        json!({"content": [text("Done.")], "_meta": {"mcpl/hints": {"rev": 2,
            "tools": [shown("go", None, false), shown("again", None, true)]}}}),
    ))
    .await;
    a2.expect(hints(
        json!({"rev": 3, "tools": [shown("again", None, true)]}),
    ))
    .await;
}

#[actix::test]
async fn without_a_hold_the_changes_go_at_once_as_before() {
    let slot = Slot::default();
    let server = server(slot.clone());
    let (mut a1, _s1) = hinted(&server, "alice").await;
    open_slow(&mut a1).await;
    a1.send(call(2, "go", json!({"hold": false}))).await;
    let hidden = json!({"rev": 2, "tools": [shown("go", None, false)]});
    expect_push(&mut a1, 1, thinking(Some(hidden))).await;
    answer(&slot);
    a1.expect(result(
        json!(2),
        json!({"content": [text("Done.")], "_meta": {"mcpl/hints": {"rev": 3,
            "tools": [shown("again", None, true)]}}}),
    ))
    .await;
}

#[actix::test]
async fn a_later_change_from_elsewhere_makes_the_held_ones_go_first() {
    let slot = Slot::default();
    let server = server(slot.clone());
    let (mut a1, _s1) = hinted(&server, "alice").await;
    let (mut a2, _s2) = hinted(&server, "alice").await;
    open_slow(&mut a1).await;
    a2.recv().await;
    a1.send(call(2, "go", json!({"hold": true}))).await;
    expect_push(&mut a1, 1, thinking(None)).await;
    expect_push(
        &mut a2,
        1,
        thinking(Some(json!({"rev": 2, "tools": [shown("go", None, false)]}))),
    )
    .await;
    // alice opens another toolset on her other connection: a change stated after the held
    // ones, so they go first (§5.2).
    let opened = a2.exchange(open(2, "other", None, None)).await;
    assert_eq!(
        opened["result"]["_meta"]["mcpl/hints"]["rev"], 3,
        "{opened:#}"
    );
    a1.expect(hints(
        json!({"rev": 2, "tools": [shown("go", None, false)]}),
    ))
    .await;
    a1.expect(hints(
        json!({"rev": 3, "tools": [shown("thing", None, true)],
        "toolsets": [{"toolset": "other", "state": "open"}]}),
    ))
    .await;
    answer(&slot);
    a1.expect(result(
        json!(2),
        json!({"content": [text("Done.")], "_meta": {"mcpl/hints": {"rev": 4,
            "tools": [shown("again", None, true)]}}}),
    ))
    .await;
}

#[actix::test]
async fn a_statement_takes_its_rev_after_the_held_changes() {
    let slot = Slot::default();
    let server = server(slot.clone());
    let (mut a1, _s1) = hinted(&server, "alice").await;
    open_slow(&mut a1).await;
    a1.send(call(2, "go", json!({"hold": true}))).await;
    expect_push(&mut a1, 1, thinking(None)).await;
    a1.send(support::request(json!(3), "toolsets/list", json!({})))
        .await;
    a1.expect(hints(
        json!({"rev": 2, "tools": [shown("go", None, false)]}),
    ))
    .await;
    let listed = a1.recv().await;
    assert_eq!(listed["id"], 3, "{listed:#}");
    // A full statement (§4.3): `go` is hidden, so nothing is stated visible.
    assert_eq!(
        listed,
        result(
            json!(3),
            json!({"open": [{"toolset": "slow"}], "ended": [], "_meta": {"mcpl/hints": {"rev": 3}}})
        )
    );
    answer(&slot);
    a1.expect(result(
        json!(2),
        json!({"content": [text("Done.")], "_meta": {"mcpl/hints": {"rev": 4,
            "tools": [shown("again", None, true)]}}}),
    ))
    .await;
}

#[actix::test]
async fn a_cancelled_call_sends_what_it_held_at_once() {
    let slot = Slot::default();
    let server = server(slot.clone());
    let (mut a1, _s1) = hinted(&server, "alice").await;
    open_slow(&mut a1).await;
    a1.send(call(2, "go", json!({"hold": true}))).await;
    expect_push(&mut a1, 1, thinking(None)).await;
    a1.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2}}),
    )
    .await;
    a1.expect(hints(
        json!({"rev": 2, "tools": [shown("go", None, false)]}),
    ))
    .await;
    // The answer that comes anyway writes no result; its changes go as tools/hints.
    answer(&slot);
    a1.expect(hints(
        json!({"rev": 3, "tools": [shown("again", None, true)]}),
    ))
    .await;
    let pong = a1
        .exchange(json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}))
        .await;
    assert_eq!(pong, result(json!("p"), json!({})));
}

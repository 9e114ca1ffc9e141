//! RFC-014 §5 on the server side, over a real WebSocket: the three carriers, who says
//! what, consecutive revs per connection, cancelled calls, pushes never retried, and reads
//! in the middle of a stream of changes.
//! Vectors 2, 3, 4, 7, 21 (server half), 29, 31, 35 (server half); and the [project]
//! reading for a cancelled wait that something else answers (`server/src/session/deliver.rs`).

mod server_support;

use serde_json::{Value, json};
use server_support::*;

/// What bob is pushed when alice takes `count`, leaving `left` (rev `rev`): `take`
/// becomes visible to him, with the legal moves when they changed (fewer than three
/// stones left).
fn alice_took(count: u32, left: u32, rev: u64) -> Value {
    let news = format!("alice took {count}; {left} left. Your move.");
    let def = (left < 3).then(|| take_def(left));
    json!({"featureSet": "default", "tags": ["surface:turn"],
        "payload": {"content": [text(&news)]},
        "hints": {"rev": rev, "tools": [tool_hint("take", Some("g1"), Some(true), def)]},
        "toolset": "nim", "instance": "g1"})
}

#[actix::test]
async fn vector_02_a_call_reports_its_own_changes_in_its_result_and_no_push_follows() {
    let h = arcade_server().await;
    let mut a1 = h.hinted("alice").await;
    let mut a2 = h.hinted("alice").await;
    a1.request(open(1, "solo", None, None)).await;
    a2.recv().await; // the open, as tools/hints
    a1.expect_after(
        call(2, "solo_hint", json!({})),
        result(json!(2), json!({"content": [text("Leave your opponent a multiple of four.")],
            "_meta": {"mcpl/hints": {"rev": 2, "tools": [tool_hint("solo_answer", None, Some(true), None)]}}})),
    )
    .await;
    a1.quiet().await;
    // The principal's other connection hears of it: nothing explains it there, so it is
    // standalone (§5.3), on that connection's own rev.
    a2.expect(hints(
        json!({"rev": 2, "tools": [tool_hint("solo_answer", None, Some(true), None)]}),
    ))
    .await;
    a2.quiet().await;
    let answer = a1.request(call(3, "solo_answer", json!({}))).await;
    assert_eq!(answer, says(json!(3), "Four."));
}

#[actix::test]
async fn vector_03_another_principals_move_is_pushed_with_its_hints() {
    let h = arcade_server().await;
    let (mut alice, mut bob) = game(&h, 4).await;
    alice
        .expect_after(
            call(2, "take", json!({"count": 2})),
            result(
                json!(2),
                json!({"content": [text("You took 2; 2 left. bob's move.")],
                "_meta": {"mcpl/hints": {"rev": 2, "tools": [
                    tool_hint("take", Some("g1"), Some(false), Some(take_def(2)))]}}}),
            ),
        )
        .await;
    bob.expect_push(2, alice_took(2, 2, 3)).await;
    // A refused push changes nothing on the server: nothing is restated.
    bob.send(json!({"jsonrpc": "2.0", "id": 2, "result": {"accepted": false, "reason": "busy"}}))
        .await;
    bob.quiet().await;
    alice.quiet().await;
    let took = bob.request(call(3, "take", json!({"count": 1}))).await;
    assert_eq!(
        took["result"]["content"],
        json!([text("You took 1; 1 left. alice's move.")])
    );
}

#[actix::test]
async fn vector_04_revs_are_consecutive_across_results_pushes_and_standalone_hints() {
    let h = arcade_server().await;
    let (mut alice, mut bob) = game(&h, 4).await; // bob: push rev 1, result rev 2
    alice.request(call(2, "take", json!({"count": 2}))).await;
    bob.expect_push(2, alice_took(2, 2, 3)).await;
    bob.accept_push(2).await;
    let took = bob.request(call(3, "take", json!({"count": 1}))).await;
    assert_eq!(took["result"]["_meta"]["mcpl/hints"]["rev"], 4);
    alice.recv().await; // bob's move
    alice.accept_push(1).await;
    // alice resigns: bob's record ends by the logic, with nothing to say to bob: standalone.
    let closed = alice.request(close(3, "nim", Some("g1"))).await;
    assert_eq!(closed["result"]["content"], json!([text("You resigned.")]));
    let got = bob.recv().await;
    let id = ended_id(&got["params"]);
    assert_eq!(
        got,
        hints(json!({"rev": 5,
            "tools": [tool_hint("board", Some("g1"), Some(false), None),
                      tool_hint("wait", Some("g1"), Some(false), None)],
            "toolsets": [{"toolset": "nim", "instance": "g1", "state": "closed",
                          "reason": "alice resigned; bob wins", "ended": id}]}))
    );
    let l = bob.request(list(4)).await;
    assert_eq!(l["result"]["_meta"]["mcpl/hints"]["rev"], 6);
    assert_eq!(bob.listed_rev().await, 6);
}

#[actix::test]
async fn vector_07_a_definition_change_arrives_without_tools_list_changed() {
    let h = arcade_server().await;
    let (mut alice, mut bob) = game(&h, 4).await;
    alice.request(call(2, "take", json!({"count": 2}))).await;
    // The legal moves (an instance's own definition) change with the push…
    let event = bob.expect_push(2, alice_took(2, 2, 3)).await;
    assert!(!event.is_empty());
    bob.accept_push(2).await;
    // …and nothing else: no notifications/tools/list_changed, no re-list.
    bob.quiet().await;
    alice.quiet().await;
}

#[actix::test]
async fn vector_21_statement_and_tools_list_answered_consistently_mid_stream() {
    let h = arcade_server().await;
    let (mut alice, mut bob) = game(&h, 4).await;
    // alice moves while bob reads both lists, without waiting in between: whichever the
    // server handles first, each answer states the state as of its own rev.
    alice.send(call(2, "take", json!({"count": 2}))).await;
    bob.send(list(2)).await;
    bob.send(request(json!(3), "tools/list", json!({}))).await;
    // In arrival order (the server writes in order on an ordered link).
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(bob.recv().await);
    }
    let at = |f: &dyn Fn(&Value) -> bool| got.iter().position(f).expect("all three arrive");
    let (p, st, tl) = (
        at(&|m| m["method"] == "push/event"),
        at(&|m| m["id"] == json!(2)),
        at(&|m| m["id"] == json!(3)),
    );
    assert!(st < tl, "answers keep their requests' order");
    let push_rev = got[p]["params"]["hints"]["rev"].as_u64().unwrap();
    let st_rev = got[st]["result"]["_meta"]["mcpl/hints"]["rev"]
        .as_u64()
        .unwrap();
    // Consecutive from bob's rev 2, in the order written.
    assert_eq!((push_rev, st_rev), if p < st { (3, 4) } else { (4, 3) });
    // The statement states the move exactly when its push came before it.
    let take = if p < st {
        tool_hint("take", Some("g1"), Some(true), Some(take_def(2)))
    } else {
        tool_hint("take", Some("g1"), None, Some(take_def(4)))
    };
    assert_eq!(
        got[st]["result"]["_meta"]["mcpl/hints"]["tools"],
        json!([
            tool_hint("board", Some("g1"), Some(true), None),
            tool_hint("lobby_who", None, Some(true), None),
            take,
            tool_hint("wait", Some("g1"), Some(true), None)
        ])
    );
    // tools/list names the last rev written before it, and agrees on what is visible then.
    let listed_rev = got[tl]["result"]["_meta"]["mcpl/rev"].as_u64().unwrap();
    assert_eq!(
        listed_rev,
        if p < tl { push_rev.max(st_rev) } else { st_rev }
    );
    let take_listed = got[tl]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "take")
        .unwrap()["_meta"]["mcpl/visible"]
        .clone();
    assert_eq!(take_listed, json!(p < tl));
    alice.recv().await;
}

/// What the `bell` pushes when it rings with `changes` (rev `rev` on that connection).
fn rang(rev: u64, changes: Value) -> Value {
    json!({"featureSet": "default", "tags": ["surface:activity"],
        "payload": {"content": [text("The bell rang.")]}, "toolset": "bell",
        "hints": {"rev": rev, "tools": changes}})
}

#[actix::test]
async fn vector_29_a_cancelled_call_sends_its_changes_as_tools_hints() {
    let (h, slot) = bell_server().await;
    let mut a1 = h.hinted("alice").await;
    let mut a2 = h.hinted("alice").await;
    let opened = a1.request(open(1, "bell", None, None)).await;
    assert_eq!(
        opened["result"]["_meta"]["mcpl/hints"]["rev"], 1,
        "{opened:#}"
    );
    a2.recv().await; // the open, as tools/hints (rev 1 there)

    // The call hides `bell_wait` from its caller and holds that change for its result; the host
    // gives up on it. §5.2: no result is written, and the call's own change goes as
    // tools/hints.
    a1.send(call(2, "bell_wait", json!({"hold": true}))).await;
    a1.send(cancelled(2)).await;
    let hidden = json!([tool_hint("bell_wait", None, Some(false), None)]);
    a1.expect(hints(json!({"rev": 2, "tools": hidden}))).await;
    // The other connection hears the same change on its own counter.
    a2.expect(hints(json!({"rev": 2, "tools": hidden}))).await;

    // The bell that then answers the wait is something else's consequence (§5.3): the
    // [project] reading pushes it with its event to the connection that gave up, as to the
    // one that never waited — a cancelled call accounts for nothing any more.
    bell::ring(&slot);
    let first = json!([
        tool_hint("bell_answer", None, Some(true), None),
        tool_hint("bell_wait", None, Some(true), None)
    ]);
    a1.expect_push(1, rang(3, first.clone())).await;
    a2.expect_push(1, rang(3, first)).await;
    a1.quiet().await;
    a2.quiet().await;

    // Not cancelled, a wait is answered with the changes in its result (§5.3), and only
    // the other connection is pushed.
    a1.send(call(3, "bell_wait", json!({}))).await;
    a1.quiet().await; // the wait is in before the bell rings
    bell::ring(&slot);
    let second = json!([tool_hint("bell_answer", None, Some(false), None)]);
    a1.expect(result(
        json!(3),
        json!({"content": [text("Rung.")], "_meta": {"mcpl/hints": {"rev": 4, "tools": second}}}),
    ))
    .await;
    a2.expect_push(2, rang(4, second)).await;
    a1.quiet().await;
    a2.quiet().await;
}

/// The arcade with the `bell` toolset, and the bell's waker slot.
async fn bell_server() -> (Harness, bell::Slot) {
    let slot = bell::Slot::default();
    let h = arcade_server_with({
        let slot = slot.clone();
        move |b| b.toolset(bell::bell(slot))
    })
    .await;
    (h, slot)
}

/// `notifications/cancelled` for request `id`.
fn cancelled(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "impatient"}})
}

#[actix::test]
async fn a_cancelled_wait_that_held_nothing_hears_its_answer_as_a_push_like_the_others() {
    let (h, slot) = bell_server().await;
    let mut a1 = h.hinted("alice").await;
    let mut a2 = h.hinted("alice").await;
    a1.request(open(1, "bell", None, None)).await;
    a2.recv().await; // the open, as tools/hints (rev 1 there)
    a1.send(call(2, "bell_wait", json!({}))).await;
    a1.send(cancelled(2)).await;
    a1.quiet().await; // the cancel is in before the bell rings
    bell::ring(&slot);
    // §5.3 [project]: no result for the cancelled call; the event that answered it is
    // pushed with its hints, exactly as to the connection that never waited.
    let shown = json!([tool_hint("bell_answer", None, Some(true), None)]);
    a1.expect_push(1, rang(2, shown.clone())).await;
    a2.expect_push(1, rang(2, shown)).await;
    a1.quiet().await;
    a2.quiet().await;
}

#[actix::test]
async fn without_the_push_grant_a_cancelled_waits_answer_comes_as_tools_hints() {
    let (h, slot) = bell_server().await;
    let mut a1 = h.connect("alice").await;
    a1.handshake(true, Some(&["tools"])).await;
    a1.request(open(1, "bell", None, None)).await;
    a1.send(call(2, "bell_wait", json!({}))).await;
    a1.send(cancelled(2)).await;
    a1.quiet().await;
    bell::ring(&slot);
    // §5.3, vector 31: pushing is not allowed, so the changes go standalone.
    a1.expect(hints(
        json!({"rev": 2, "tools": [tool_hint("bell_answer", None, Some(true), None)]}),
    ))
    .await;
    a1.quiet().await;
}

#[actix::test]
async fn vector_31_without_push_events_anothers_changes_come_as_tools_hints() {
    let h = arcade_server().await;
    let (mut alice, mut b1) = game(&h, 4).await;
    let mut no_push = h.connect("bob").await;
    no_push.handshake(true, Some(&["tools"])).await;
    let mut no_grant = h.connect("bob").await;
    no_grant.handshake(true, None).await;
    alice.request(call(2, "take", json!({"count": 1}))).await;
    b1.expect_push(2, alice_took(1, 3, 3)).await;
    let changes = json!({"rev": 1, "tools": [tool_hint("take", Some("g1"), Some(true), None)]});
    no_push.expect(hints(changes.clone())).await;
    no_grant.expect(hints(changes)).await;
    no_push.quiet().await;
    no_grant.quiet().await;
    let receipt = no_grant
        .request(request(
            json!("grant"),
            "featureSets/update",
            json!({"effectiveCapabilities": ["tools", "pushEvents"]}),
        ))
        .await;
    assert_eq!(receipt["result"]["accepted"], true);
    // bob's own move on b1 has no event for bob: standalone on his other connections.
    b1.accept_push(2).await;
    b1.request(call(3, "take", json!({"count": 1}))).await;
    alice.recv().await;
    alice.accept_push(1).await;
    let own =
        json!({"rev": 2, "tools": [tool_hint("take", Some("g1"), Some(false), Some(take_def(2)))]});
    no_push.expect(hints(own.clone())).await;
    no_grant.expect(hints(own)).await;
    // Once granted, the same connection is pushed to: alice's next move reaches it as a
    // push carrying the hints; the connection still without the grant gets tools/hints.
    alice.request(call(3, "take", json!({"count": 1}))).await;
    b1.expect_push(3, alice_took(1, 1, 5)).await;
    no_grant.expect_push(1, alice_took(1, 1, 3)).await;
    no_push
        .expect(hints(json!({"rev": 3,
            "tools": [tool_hint("take", Some("g1"), Some(true), Some(take_def(1)))]})))
        .await;
    b1.accept_push(3).await;
    no_grant.accept_push(1).await;
    no_grant.quiet().await;
    no_push.quiet().await;
}

#[actix::test]
async fn vector_35_a_push_with_hints_is_never_retried() {
    let h = arcade_server().await;
    let (mut alice, mut bob) = game(&h, 6).await;
    alice.request(call(2, "take", json!({"count": 1}))).await;
    let first = bob.expect_push(2, alice_took(1, 5, 3)).await;
    // The host answers with an error: the server does not send the event (or its hints)
    // again, under this eventId or another.
    bob.send(
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "host failure"}}),
    )
    .await;
    bob.quiet().await;
    // The next event is a new one, with a new id and the next rev.
    bob.request(call(3, "take", json!({"count": 1}))).await;
    alice.recv().await;
    alice.request(call(3, "take", json!({"count": 1}))).await;
    let second = bob.expect_push(3, alice_took(1, 3, 5)).await;
    assert_ne!(first, second);
    bob.accept_push(3).await;
    bob.quiet().await;
}

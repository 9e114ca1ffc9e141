//! §5.2's cancelled calls on the server side with the test arcade's `bell`, over a real
//! WebSocket: a cancelled call's held change goes as `tools/hints` to every connection of
//! the principal, and the **\[project\]** reading for a cancelled wait that something else
//! answers later (`server-core/src/carrier.rs`): that answer is another's consequence,
//! pushed with its event like to a connection that never waited, or sent as `tools/hints`
//! where pushing is not granted. Vector 29 itself runs in `server_vectors.rs`.

use mcpl_tests::server_support::*;
use serde_json::{Value, json};

/// What the `bell` pushes when it rings with `changes` (rev `rev` on that connection).
fn rang(rev: u64, changes: Value) -> Value {
    json!({"featureSet": "default", "tags": ["surface:activity"],
        "payload": {"content": [text("The bell rang.")]}, "toolset": "bell",
        "hints": {"rev": rev, "tools": changes}})
}

#[actix::test]
async fn a_cancelled_calls_held_change_reaches_every_connection_and_its_later_answer_is_pushed() {
    let (h, slot) = bell_server().await;
    let mut a1 = h.hinted("alice").await;
    let mut a2 = h.hinted("alice").await;
    let opened = a1.exchange(open(1, "bell", None, None)).await;
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
    a1.exchange(open(1, "bell", None, None)).await;
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
    a1.exchange(open(1, "bell", None, None)).await;
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

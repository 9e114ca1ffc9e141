//! RFC-014 §4.6 and §7 on the server side, over a real WebSocket: one principal's
//! connections share its toolsets, each on its own revs; principals are isolated, except
//! in an instance they share.
//! Vectors 14, 32; fan-out to three connections; isolation of two principals; a shared
//! instance ending for a participant that is not connected.

mod server_support;

use serde_json::{Value, json};
use server_support::*;

fn opened(instance: &str, pile: u32) -> Value {
    json!({
        "tools": [tool_hint("board", Some(instance), Some(true), None),
                  tool_hint("wait", Some(instance), Some(true), None),
                  tool_hint("take", Some(instance), Some(true), Some(take_def(pile)))],
        "toolsets": [{"toolset": "nim", "instance": instance, "state": "open", "title": "Nim vs bot"}]})
}

fn with_rev(mut changes: Value, rev: u64) -> Value {
    changes["rev"] = json!(rev);
    changes
}

#[actix::test]
async fn vector_14_an_open_on_one_connection_reaches_another_on_its_own_revs() {
    let h = arcade_server().await;
    let mut a1 = h.hinted("alice").await;
    let mut a2 = h.hinted("alice").await;
    // a2 reads the statement twice first: its counter is ahead of a1's.
    a2.request(list(1)).await;
    a2.request(list(2)).await;
    a1.expect_after(
        open(1, "nim", Some("g1"), Some(json!({"pile": 5}))),
        result(
            json!(1),
            json!({"instance": "g1", "title": "Nim vs bot",
            "content": [text("Pile: 5. Your move.")],
            "_meta": {"mcpl/hints": with_rev(opened("g1", 5), 1)}}),
        ),
    )
    .await;
    // The same changes, as hint changes on a2's own counter — not a suggestion.
    a2.expect(hints(with_rev(opened("g1", 5), 3))).await;
    a2.quiet().await;
    // a2 sees it open in its statement too, and adopts rather than opening another.
    let l = a2.request(list(3)).await;
    assert_eq!(l["result"]["_meta"]["mcpl/hints"]["rev"], 4);
    assert_eq!(l["result"]["open"][1]["instance"], "g1");
    let adopted = a2.request(open(4, "nim", Some("g1"), None)).await;
    assert_eq!(adopted["result"]["adopted"], true);
    a1.quiet().await;
}

#[actix::test]
async fn vector_32_a_close_and_a_visibility_change_reach_the_principals_others() {
    let h = arcade_server().await;
    let mut a1 = h.hinted("alice").await;
    let mut a2 = h.hinted("alice").await;
    a1.request(open(1, "solo", None, None)).await;
    a2.recv().await;
    // A visibility change on a1.
    a1.request(call(2, "solo_hint", json!({}))).await;
    a2.expect(hints(
        json!({"rev": 2, "tools": [tool_hint("solo_answer", None, Some(true), None)]}),
    ))
    .await;
    // A close on a1: a2 is told on its own rev. The principal asked for it, so there is no
    // ended record and no `ended` id (§4.3, revision 4).
    let closed = a1.request(close(3, "solo", None)).await;
    let changes = json!({
        "tools": [tool_hint("solo_answer", None, Some(false), None),
                  tool_hint("solo_hint", None, Some(false), None)],
        "toolsets": [{"toolset": "solo", "state": "closed", "reason": "closed"}]});
    assert_eq!(
        closed,
        result(
            json!(3),
            json!({"_meta": {"mcpl/hints": with_rev(changes.clone(), 3)}})
        )
    );
    a2.expect(hints(with_rev(changes, 3))).await;
    a2.quiet().await;
    a1.quiet().await;
}

/// Every rev in the messages, in the order received.
fn revs(messages: &[Value]) -> Vec<u64> {
    messages
        .iter()
        .filter_map(|m| {
            m["result"]["_meta"]["mcpl/hints"]["rev"]
                .as_u64()
                .or_else(|| m["params"]["hints"]["rev"].as_u64())
                .or_else(|| {
                    (m["method"] == "tools/hints")
                        .then(|| m["params"]["rev"].as_u64())
                        .flatten()
                })
        })
        .collect()
}

#[actix::test]
async fn three_connections_of_one_principal_each_get_every_change_on_consecutive_revs() {
    let h = arcade_server().await;
    let mut c = [
        h.hinted("alice").await,
        h.hinted("alice").await,
        h.hinted("alice").await,
    ];
    let mut seen: [Vec<Value>; 3] = Default::default();
    // Each connection acts in turn; the others hear of it.
    let steps: [(usize, Value); 6] = [
        (0, open(1, "nim", Some("g1"), Some(json!({"pile": 6})))),
        (1, list(1)),
        (2, open(1, "solo", None, None)),
        // The bot takes the last three: the game ends for every connection.
        (1, call_in(2, "take", json!({"count": 3}), "g1")),
        (0, call(2, "solo_hint", json!({}))),
        (2, close(2, "solo", None)),
    ];
    for (who, req) in steps {
        let changes_others = req["method"] != "toolsets/list";
        seen[who].push(c[who].request(req).await);
        if changes_others {
            for other in (0..3).filter(|o| *o != who) {
                let m = c[other].recv().await;
                assert_eq!(m["method"], "tools/hints", "{m:#}");
                seen[other].push(m);
            }
        }
    }
    for (i, conn) in c.iter_mut().enumerate() {
        conn.quiet().await;
        let got = revs(&seen[i]);
        let want: Vec<u64> = (1..=got.len() as u64).collect();
        assert_eq!(got, want, "connection {i}");
    }
    assert_eq!(
        [
            revs(&seen[0]).len(),
            revs(&seen[1]).len(),
            revs(&seen[2]).len()
        ],
        [5, 6, 5]
    );
    // The same changes reached all three: the game's end, with one record id.
    let ids: Vec<String> = seen
        .iter()
        .map(|s| {
            let end = s
                .iter()
                .map(changes_of)
                .find(|c| c.to_string().contains("bot wins by taking the last stone"))
                .expect("every connection is told the game ended");
            ended_id(end)
        })
        .collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
}

/// The hint changes a message carries (a result's, or a `tools/hints`' params).
fn changes_of(m: &Value) -> &Value {
    match m.get("result") {
        Some(r) => &r["_meta"]["mcpl/hints"],
        None => &m["params"],
    }
}

#[actix::test]
async fn principals_are_isolated_from_each_others_instances() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    let mut bob = h.hinted("bob").await;
    alice.request(open(1, "nim", Some("g1"), None)).await;
    alice.request(open(2, "nim", Some("g2"), None)).await;
    // bob lists nothing of alice's…
    let l = bob.request(list(1)).await;
    assert_eq!(
        l["result"]["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );
    assert_eq!(
        l["result"]["_meta"]["mcpl/hints"]["tools"],
        json!([tool_hint("lobby_who", None, Some(true), None)])
    );
    // …cannot call into them, and is not told their names…
    bob.expect_after(
        call_in(2, "board", json!({}), "g1"),
        result(
            json!(2),
            tool_error("board: no nim instance \"g1\" is open (open: none)"),
        ),
    )
    .await;
    bob.expect_after(
        call(3, "board", json!({})),
        result(
            json!(3),
            tool_error("board belongs to toolset nim, which is not open; open it first"),
        ),
    )
    .await;
    // …cannot close them…
    let refused = bob.request(close(4, "nim", Some("g1"))).await;
    assert_eq!(refused["error"]["code"], -32602);
    // …and opening the same name opens a game of his own.
    let own = bob
        .request(open(5, "nim", Some("g1"), Some(json!({"pile": 3}))))
        .await;
    assert_eq!(own["result"]["adopted"], Value::Null);
    let board = bob.request(call_in(6, "board", json!({}), "g1")).await;
    assert_eq!(board, says(json!(6), "Pile: 3. bob to move."));
    // alice heard nothing of any of it, and still has her two games of ten.
    alice.quiet().await;
    let board = alice.request(call_in(3, "board", json!({}), "g1")).await;
    assert_eq!(board, says(json!(3), "Pile: 10. alice to move."));
    let l = alice.request(list(4)).await;
    assert_eq!(l["result"]["open"].as_array().unwrap().len(), 3);
}

#[actix::test]
async fn a_shared_instance_ends_for_a_participant_that_is_not_connected() {
    let h = arcade_server().await;
    let (mut alice, mut bob) = game(&h, 4).await;
    alice.request(call(2, "take", json!({"count": 2}))).await;
    bob.recv().await;
    bob.accept_push(2).await;
    // A third principal hears nothing of their game.
    let mut carol = h.hinted("carol").await;
    let l = carol.request(list(1)).await;
    assert_eq!(
        l["result"]["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );
    // alice leaves (her toolsets are kept), then bob resigns.
    alice.close();
    h.sessions(2).await;
    let closed = bob.request(close(3, "nim", Some("g1"))).await;
    assert_eq!(closed["result"]["content"], json!([text("You resigned.")]));
    // bob asked for his end: no record of it (§4.3, revision 4).
    let bob_entry = &closed["result"]["_meta"]["mcpl/hints"]["toolsets"][0];
    assert_eq!(
        (&bob_entry["state"], bob_entry.get("ended")),
        (&json!("closed"), None)
    );
    // alice's record ended too, with the logic's reason, an end she did not ask for; she
    // learns it on her return.
    let mut alice = h.hinted("alice").await;
    let l = alice.request(list(1)).await;
    let ended = &l["result"]["ended"];
    assert_eq!(ended.as_array().unwrap().len(), 1);
    assert_eq!(ended[0]["toolset"], "nim");
    assert_eq!(ended[0]["instance"], "g1");
    assert_eq!(ended[0]["reason"], "bob resigned; alice wins");
    assert!(ended[0]["id"].is_string());
    assert_eq!(
        l["result"]["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );
    carol.quiet().await;
}

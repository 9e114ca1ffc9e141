//! RFC-014 §4.6 and §5.3 on the server side with the test arcade, over a real WebSocket:
//! what the fixture contract of the vectors cannot show, because its principals never
//! share an instance. Two principals in one game (each move pushed to the other with its
//! hints, a refused push not restated, a resignation ending the other's record told
//! standalone), a connection without `toolHints` pushed the invitation and the moves
//! without hints while a hinted one gets the suggestion, three
//! connections of one principal on their own revs, principals isolated from each other's
//! instances, and a shared instance ending for a participant who is not connected.
//! The vectors themselves run in `server_vectors.rs`.

use mcpl_tests::server_support::*;
use serde_json::{Value, json};

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

/// §4.6, §5.3: alice's move reaches bob as a push whose hints carry his visibility change
/// (`take` becomes visible) and the legal moves; bob refusing it changes nothing.
#[actix::test]
async fn a_move_in_a_shared_game_is_pushed_to_the_other_principal_with_its_hints() {
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
    let took = bob.exchange(call(3, "take", json!({"count": 1}))).await;
    assert_eq!(
        took["result"]["content"],
        json!([text("You took 1; 1 left. alice's move.")])
    );
}

/// §4.3, §5.2: in a shared game bob's revs run across a push, his own result and a
/// `tools/hints`; alice resigning ends his record with nothing to say to him: standalone,
/// with the reason and the record's id.
#[actix::test]
async fn a_resignation_ends_the_other_players_record_told_standalone_on_the_next_rev() {
    let h = arcade_server().await;
    let (mut alice, mut bob) = game(&h, 4).await; // bob: push rev 1, result rev 2
    alice.exchange(call(2, "take", json!({"count": 2}))).await;
    bob.expect_push(2, alice_took(2, 2, 3)).await;
    bob.accept_push(2).await;
    let took = bob.exchange(call(3, "take", json!({"count": 1}))).await;
    assert_eq!(took["result"]["_meta"]["mcpl/hints"]["rev"], 4);
    alice.recv().await; // bob's move
    alice.accept_push(1).await;
    // alice resigns: bob's record ends by the logic, with nothing to say to bob: standalone.
    let closed = alice.exchange(close(3, "nim", Some("g1"))).await;
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
    let l = bob.exchange(list(4)).await;
    assert_eq!(l["result"]["_meta"]["mcpl/hints"]["rev"], 6);
    assert_eq!(bob.listed_rev().await, 6);
}

#[actix::test]
async fn a_connection_without_tool_hints_is_pushed_the_invitation_and_moves_without_hints() {
    let h = arcade_server().await;
    let mut plain = h.connect("alice").await;
    plain.handshake(false, Some(&["tools", "pushEvents"])).await;
    let mut hinted = h.hinted("alice").await;
    // The hinted connection's changes do not reach the plain one.
    hinted.exchange(open(1, "nim", Some("g1"), None)).await;
    plain.quiet().await;
    // Its own results carry none; its list has no hint _meta and names no rev.
    let opened = plain
        .exchange(call(
            1,
            "toolset_open",
            json!({"toolset": "nim", "instance": "g2"}),
        ))
        .await;
    assert_eq!(
        opened,
        result(
            json!(1),
            json!({"content": [
        text("Opened nim:g2 (Nim vs bot). Name it as the `instance` argument of its tools when several are open."),
        text("Pile: 10. Your move.")]})
        )
    );
    hinted.recv().await; // the other connection's open, as tools/hints there
    let listed = plain
        .exchange(request(json!(2), "tools/list", json!({})))
        .await;
    assert!(listed["result"].get("_meta").is_none(), "{listed:#}");
    assert!(
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("_meta").is_none())
    );
    // toolsets/* are not methods for it.
    assert_eq!(plain.exchange(list(3)).await["error"]["code"], -32601);
    assert_eq!(
        plain.exchange(open(4, "solo", None, None)).await["error"]["code"],
        -32601
    );
    // Another principal invites alice: the plain connection is pushed the event without
    // `hints` (no suggestion); the hinted one gets the suggestion.
    let mut bob = h.hinted("bob").await;
    bob.exchange(open(
        1,
        "nim",
        Some("g1"),
        Some(json!({"pile": 5, "opponent": "alice"})),
    ))
    .await;
    let invite = json!({"featureSet": "default", "tags": ["surface:activity"],
        "payload": {"content": [text(r#"bob challenges you to Nim (pile 5) (call toolset_open {"toolset": "nim", "instance": "g1-2"} to join)"#)]},
        "toolset": "nim", "instance": "g1-2"});
    plain.expect_push(1, invite.clone()).await;
    // The hinted connection gets a suggestion, and the text names the open it would make.
    let mut with_hints = invite;
    with_hints["payload"]["content"] = json!([text(
        "bob challenges you to Nim (pile 5) (open nim:g1-2 to join)"
    )]);
    with_hints["hints"] = json!({"rev": 3, "suggest": [{"toolset": "nim", "instance": "g1-2",
        "action": "open", "reason": "bob challenges you to Nim (pile 5)", "options": {"pile": 5}}]});
    hinted.expect_push(1, with_hints).await;
    // The plain connection joins through the compat tool; bob's move is pushed to it
    // without hints, and to the hinted connection with them.
    let joined = plain
        .exchange(call(
            5,
            "toolset_open",
            json!({"toolset": "nim", "instance": "g1-2"}),
        ))
        .await;
    assert_eq!(
        joined["result"]["content"][0],
        text(
            "Opened nim:g1-2 (Nim vs bob). Name it as the `instance` argument of its tools when several are open."
        )
    );
    hinted.recv().await;
    bob.exchange(call_in(2, "take", json!({"count": 1}), "g1"))
        .await;
    plain
        .expect_push(
            2,
            json!({"featureSet": "default", "tags": ["surface:turn"],
        "payload": {"content": [text("bob took 1; 4 left. Your move.")]},
        "toolset": "nim", "instance": "g1-2"}),
        )
        .await;
    let pushed = hinted.recv().await;
    assert_eq!(
        pushed["params"]["hints"]["tools"],
        json!([tool_hint("take", Some("g1-2"), Some(true), None)])
    );
    plain.quiet().await;
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
        seen[who].push(c[who].exchange(req).await);
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
    alice.exchange(open(1, "nim", Some("g1"), None)).await;
    alice.exchange(open(2, "nim", Some("g2"), None)).await;
    // bob lists nothing of alice's…
    let l = bob.exchange(list(1)).await;
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
    let refused = bob.exchange(close(4, "nim", Some("g1"))).await;
    assert_eq!(refused["error"]["code"], -32602);
    // …and opening the same name opens a game of his own.
    let own = bob
        .exchange(open(5, "nim", Some("g1"), Some(json!({"pile": 3}))))
        .await;
    assert_eq!(own["result"]["adopted"], Value::Null);
    let board = bob.exchange(call_in(6, "board", json!({}), "g1")).await;
    assert_eq!(board, says(json!(6), "Pile: 3. bob to move."));
    // alice heard nothing of any of it, and still has her two games of ten.
    alice.quiet().await;
    let board = alice.exchange(call_in(3, "board", json!({}), "g1")).await;
    assert_eq!(board, says(json!(3), "Pile: 10. alice to move."));
    let l = alice.exchange(list(4)).await;
    assert_eq!(l["result"]["open"].as_array().unwrap().len(), 3);
}

#[actix::test]
async fn a_shared_instance_ends_for_a_participant_that_is_not_connected() {
    let h = arcade_server().await;
    let (mut alice, mut bob) = game(&h, 4).await;
    alice.exchange(call(2, "take", json!({"count": 2}))).await;
    bob.recv().await;
    bob.accept_push(2).await;
    // A third principal hears nothing of their game.
    let mut carol = h.hinted("carol").await;
    let l = carol.exchange(list(1)).await;
    assert_eq!(
        l["result"]["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );
    // alice leaves (her toolsets are kept), then bob resigns.
    alice.close();
    h.sessions(2).await;
    let closed = bob.exchange(close(3, "nim", Some("g1"))).await;
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
    let l = alice.exchange(list(1)).await;
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

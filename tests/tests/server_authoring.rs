//! The author's side of the SDK, over a real WebSocket: a panicking logic ends only its
//! instance; invitations reach a principal that connects later and are withdrawn when the
//! instance ends; withdrawing `toolHints` turns every connection plain (vector 34's server
//! side).

use mcpl_tests::server_support::*;
use serde_json::json;

#[actix::test]
async fn a_panicking_logic_ends_its_instance_and_nothing_else() {
    let h = arcade_server().await;
    let mut a1 = h.hinted("alice").await;
    let mut a2 = h.hinted("alice").await;
    a1.exchange(open(1, "nim", Some("g1"), None)).await;
    a2.recv().await;
    a1.exchange(open(2, "fragile", Some("f1"), None)).await;
    a2.recv().await;
    // The call fails with an internal error…
    let failed = a1.exchange(call_in(3, "boom", json!({}), "f1")).await;
    assert_eq!(failed["error"]["code"], -32603, "{failed:#}");
    // …and the instance ends for its participants, with the reason "internal error".
    let got = a1.recv().await;
    let id = ended_id(&got["params"]);
    let ended = json!({"tools": [tool_hint("boom", Some("f1"), Some(false), None)],
        "toolsets": [{"toolset": "fragile", "instance": "f1", "state": "closed",
                      "reason": mcpl_server::INTERNAL_ERROR, "ended": id}]});
    let mut want = ended;
    want["rev"] = json!(3);
    assert_eq!(got, hints(want.clone()));
    a2.expect(hints(want)).await;
    // Everything else goes on: the other game, the session, the server.
    a1.expect_after(
        call_in(4, "board", json!({}), "g1"),
        says(json!(4), "Pile: 10. alice to move."),
    )
    .await;
    let again = a1.exchange(open(5, "fragile", Some("f2"), None)).await;
    assert_eq!(again["result"]["instance"], "f2");
    a2.recv().await;
    a1.quiet().await;
    a2.quiet().await;
}

#[actix::test]
async fn an_invitation_waits_for_a_connection_and_is_withdrawn_when_the_game_ends() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice
        .exchange(open(
            1,
            "nim",
            Some("g1"),
            Some(json!({"pile": 5, "opponent": "bob"})),
        ))
        .await;
    // bob was not connected: his first connection is told once its handshake completes.
    let mut bob = h.hinted("bob").await;
    bob.expect_push(1, invitation(5)).await;
    bob.accept_push(1).await;
    bob.quiet().await;
    // alice gives up before bob joins: the invitation goes with the game.
    let closed = alice.exchange(close(2, "nim", Some("g1"))).await;
    assert_eq!(closed["result"]["content"], json!([text("You resigned.")]));
    // alice asked for this end: it is no "ended while you were away" (§4.3, revision 4).
    let l = alice.exchange(list(3)).await;
    assert_eq!(l["result"]["ended"], json!([]));
    // bob opening the suggested name now opens a game of his own.
    let own = bob.exchange(open(2, "nim", Some("g1"), None)).await;
    assert_eq!(own["result"]["title"], "Nim vs bot");
    let mut later = h.hinted("bob").await;
    later.quiet().await;
}

#[actix::test]
async fn withdrawing_tool_hints_makes_every_connection_plain() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice
        .exchange(open(1, "nim", Some("g1"), Some(json!({"pile": 5}))))
        .await;
    let mut next = (*h.server.manifest()).clone();
    next.tool_hints = None;
    let revision = mcpl_server::manifest::shown_to(&next, true)
        .revision
        .unwrap();
    h.server.replace_manifest(next).unwrap();
    alice
        .expect(json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
        "params": {"revision": revision, "domains": ["toolsets"]}}))
        .await;
    alice
        .expect(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
        .await;
    alice.quiet().await;
    // From now on: plain tools, no rev, no toolsets/*, calls as a plain host makes them.
    let listed = alice
        .exchange(request(json!(2), "tools/list", json!({})))
        .await;
    assert!(listed["result"].get("_meta").is_none());
    assert!(
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("_meta").is_none())
    );
    assert_eq!(alice.exchange(list(3)).await["error"]["code"], -32601);
    alice
        .expect_after(
            call(4, "board", json!({"instance": "g1"})),
            says(json!(4), "Pile: 5. alice to move."),
        )
        .await;
    let took = alice.exchange(call(5, "take", json!({"count": 1}))).await;
    assert!(took["result"].get("_meta").is_none(), "{took:#}");
    alice.quiet().await;
}

#[actix::test]
async fn a_bot_moving_on_a_timer_pushes_its_move_with_the_players_changes() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice
        .exchange(open(
            1,
            "nim",
            Some("g1"),
            Some(json!({"pile": 7, "think": true})),
        ))
        .await;
    alice
        .expect_after(
            call(2, "take", json!({"count": 2})),
            result(
                json!(2),
                json!({"content": [text("You took 2; 5 left. The bot is thinking.")],
                "_meta": {"mcpl/hints": {"rev": 2, "tools": [tool_hint("take", Some("g1"), Some(false), None)]}}}),
            ),
        )
        .await;
    // The timer's step is nobody's call: its changes go with the bot's event.
    alice
        .expect_push(
            1,
            json!({"featureSet": "default", "tags": ["surface:turn"],
            "payload": {"content": [text("bot took 1; 4 left. Your move.")]},
            "hints": {"rev": 3, "tools": [tool_hint("take", Some("g1"), Some(true), None)]},
            "toolset": "nim", "instance": "g1"}),
        )
        .await;
    alice.accept_push(1).await;
    alice.quiet().await;
}

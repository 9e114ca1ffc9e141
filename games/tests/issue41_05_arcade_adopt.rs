//! Issue #41 item 3 with the arcade's own Go (`docs/ownership.md` §4): a game against the
//! bot, released mid-game by the arcade's server and adopted again from its record, goes
//! on from the same position — the same board, the same legal moves, the bot answering —
//! with the player's host told nothing twice (the test host checks every hint change's
//! rev follows the last). Meanwhile a call is refused, worth retrying.

use crate::support;

use mcpl_games::arcade::ArcadeConfig;
use mcpl_server::{MemoryStore, Store};
use serde_json::{Value, json};
use std::sync::Arc;
use support::{Harness, PLAYERS, test_bot, text_of};

#[actix::test]
async fn a_go_game_released_and_adopted_again_goes_on_from_the_same_position() {
    let store = Arc::new(MemoryStore::new());
    let h = Harness::with(ArcadeConfig {
        bot: test_bot(),
        players: PLAYERS.iter().map(|p| p.to_string()).collect(),
        store: Some(store.clone()),
        ..Default::default()
    })
    .await;
    let mut alice = h.hinted("alice").await;
    alice.open("go", Some("g1"), json!({})).await;
    let r = alice
        .call("go_play", json!({"move": "E5"}), Some("g1"))
        .await;
    assert!(text_of(&r).contains("bot (White) "), "{r:#}");
    let before = text_of(&alice.call("go_board", json!({}), Some("g1")).await);
    let moves_before = alice.hints.moves("go_play", "g1");
    let server = h.arcade.server();
    // The Go game among the instances running (the lobby is one too).
    let mut go = None;
    for id in server.running_instances().await {
        let record: Value =
            serde_json::from_slice(&store.load_instance(id).unwrap().unwrap_or_default())
                .unwrap_or_default();
        if record["toolset"] == "go" {
            go = Some(id);
        }
    }
    let go = go.expect("the Go game runs");
    server.release_instance(go).await.expect("released");

    let refused = alice
        .request(
            "tools/call",
            mcpl_testkit::msg::call_params("go_board", json!({}), Some("g1")),
        )
        .await;
    assert_eq!(
        refused["error"]["data"],
        json!({"retryable": true, "ran": false}),
        "{refused:#}"
    );

    server.adopt_instance(go).await.expect("adopted");
    let after = text_of(&alice.call("go_board", json!({}), Some("g1")).await);
    assert_eq!(after, before);
    assert!(alice.hints.is_visible("go_play", "g1"));
    assert_eq!(alice.hints.moves("go_play", "g1"), moves_before);
    let mv = moves_before
        .iter()
        .find(|m| m.as_str() != "pass")
        .expect("a legal point")
        .clone();
    let r = alice.call("go_play", json!({"move": mv}), Some("g1")).await;
    assert!(text_of(&r).contains("bot (White) "), "{r:#}");
    // Nothing more came: no push, no hint change told again.
    alice.quiet().await;
    let unread = alice.take_unread();
    assert!(
        unread.iter().all(|m| m["method"] != "push/event"),
        "{unread:#?}"
    );
    let list = alice.list().await;
    let open: Vec<&Value> = list["open"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["toolset"] == "go")
        .collect();
    assert_eq!(open.len(), 1, "{list:#}");
    assert_eq!(list["ended"], json!([]), "{list:#}");
}

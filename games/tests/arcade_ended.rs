//! A player who was not connected when the game ended finds an `ended` record (§4.3):
//! one record, with the same id on every reconnect (so a host tells its agent once), until
//! it expires.

use crate::support;

use mcpl_games::arcade::ArcadeConfig;
use mcpl_server::{Clock, ManualClock};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};
use support::{Harness, PLAYERS, test_bot, text_of};

#[actix::test]
async fn a_player_away_at_the_end_finds_one_ended_record() {
    let clock = Arc::new(ManualClock::new(
        UNIX_EPOCH + Duration::from_secs(1_796_040_000),
    ));
    let h = Harness::with(ArcadeConfig {
        bot: test_bot(),
        players: PLAYERS.iter().map(|p| p.to_string()).collect(),
        clock: Some(clock.clone() as Arc<dyn Clock>),
        ..Default::default()
    })
    .await;
    let mut alice = h.hinted("alice").await;
    let mut bob = h.hinted("bob").await;
    alice
        .open("tictactoe", Some("t1"), json!({"opponent": "bob"}))
        .await;
    bob.next_push().await;
    bob.open("tictactoe", Some("t1"), Value::Null).await;
    alice.next_push().await;
    alice
        .call("tictactoe_play", json!({"move": "b2"}), Some("t1"))
        .await;
    bob.next_push().await;

    // bob goes away; the server keeps his seat (it keeps toolsets across connections).
    drop(bob);
    h.sessions(1).await;
    let r = alice.call("tictactoe_resign", json!({}), Some("t1")).await;
    assert!(text_of(&r).starts_with("You resigned."), "{r:#}");
    let reason = "O (bob) wins by resignation";
    assert_eq!(
        alice.hints.toolset("tictactoe", "t1").unwrap()["reason"],
        reason
    );

    // bob comes back: the end is in his statement, and nothing of the game is open.
    let mut ids = Vec::new();
    for _ in 0..2 {
        let mut bob = h.connect("bob").await;
        bob.handshake(true, &["tools", "pushEvents"]).await;
        let listed = bob.list().await;
        assert_eq!(
            listed["open"],
            json!([{"toolset": "lobby", "title": "Lobby"}])
        );
        let ended = listed["ended"].as_array().unwrap();
        assert_eq!(ended.len(), 1, "{listed:#}");
        assert_eq!(ended[0]["toolset"], "tictactoe");
        assert_eq!(ended[0]["instance"], "t1");
        assert_eq!(ended[0]["reason"], reason);
        assert_eq!(ended[0]["at"], "2026-11-30T12:00:00Z");
        assert!(
            bob.hints
                .visible
                .iter()
                .all(|(_, i)| i.as_deref() != Some("t1"))
        );
        ids.push(ended[0]["id"].as_str().unwrap().to_owned());
        // Nothing was pushed about it: the record is how he learns.
        bob.quiet().await;
        assert!(bob.pushes.is_empty(), "{:#?}", bob.pushes);
    }
    assert_eq!(ids[0], ids[1], "the same record on every reconnect");

    // An hour later the record has expired (§4.3).
    clock.advance(Duration::from_secs(3601));
    let mut bob = h.hinted("bob").await;
    assert_eq!(bob.list().await["ended"], json!([]));
}

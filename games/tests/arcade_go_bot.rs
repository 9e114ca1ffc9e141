//! A whole Go game against the bot over a real WebSocket: the scripted player reads the
//! legal points from `go_play`'s current per-instance definition (§5.1), plays a few, then
//! passes (at once when the bot passes), and the game ends by two passes with an area
//! count. The bot searches on a blocking thread with a fixed playout budget and a seed.

use crate::support;

use mcpl_games::arcade::{ArcadeConfig, BotBudget, BotSettings};
use serde_json::json;
use std::time::Duration;
use support::{Harness, ended_id, hints_of, text_of};

/// How many points the scripted player places before it only passes.
const STONES: usize = 12;

#[actix::test]
async fn a_go_game_against_the_bot_plays_to_the_end() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    // The lobby is open from the start (vector 25); no game is.
    let listed = alice.list().await;
    assert_eq!(
        listed["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );

    let opened = alice.open("go", Some("g1"), json!({})).await;
    let result = &opened["result"];
    assert_eq!(result["instance"], "g1");
    assert_eq!(result["title"], "Go 9x9 vs bot");
    let intro = text_of(result);
    assert!(intro.contains("You play Black"), "{intro}");
    assert!(intro.contains(" A B C D E F G H J"), "the board: {intro}");
    // Black moves first: play and pass are visible at once, with every point legal.
    assert!(alice.hints.is_visible("go_play", "g1"));
    assert!(alice.hints.is_visible("go_pass", "g1"));
    assert!(alice.hints.is_visible("go_board", "g1"));
    assert_eq!(alice.hints.moves("go_play", "g1").len(), 81);

    let mut placed = 0;
    let mut bot_passed = false;
    let mut turns = 0;
    let last = loop {
        turns += 1;
        assert!(turns < 200, "the game does not end");
        assert!(
            alice.hints.is_visible("go_play", "g1"),
            "play is visible on every turn of ours"
        );
        let legal = alice.hints.moves("go_play", "g1");
        let result = if placed < STONES && !bot_passed && !legal.is_empty() {
            // A spread of points, taken from the definition the server gave.
            let mv = legal[(placed * 37 + 11) % legal.len()].clone();
            placed += 1;
            let r = alice.call("go_play", json!({"move": mv}), Some("g1")).await;
            assert!(
                text_of(&r).starts_with(&format!("You played {mv}.")),
                "{r:#}"
            );
            r
        } else {
            alice.call("go_pass", json!({}), Some("g1")).await
        };
        assert_ne!(result["isError"], true, "{result:#}");
        let text = text_of(&result);
        // Against the bot, the answer carries the bot's move too (§5.3: the call reports
        // its consequences); no push follows for it.
        assert!(text.contains("bot (White)"), "{text}");
        bot_passed = text.contains("bot (White) passed");
        if text.contains("Game over:") {
            break result;
        }
    };
    let text = text_of(&last);
    assert!(text.contains("Moves: "), "the record: {text}");
    // The result names the winner ("White (bot) wins by 7.5"), in the text and as the
    // ended record's reason, with the record's id (§4.3).
    let hints = hints_of(&last);
    let closed = hints["toolsets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["instance"] == "g1")
        .expect("the game's end is in the result's hints")
        .clone();
    assert_eq!(closed["state"], "closed");
    let reason = closed["reason"].as_str().unwrap().to_owned();
    assert!(
        reason.contains(" wins by ") && (reason.contains("(bot)") || reason.contains("(alice)")),
        "{reason}"
    );
    assert!(text.contains(&format!("Game over: {reason}.")), "{text}");
    let id = ended_id(hints, "g1").unwrap();
    assert!(!alice.hints.is_visible("go_play", "g1"));

    // The end is recorded: listed as ended, not open.
    let listed = alice.list().await;
    assert_eq!(
        listed["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );
    let ended = listed["ended"].as_array().unwrap();
    assert_eq!(ended.len(), 1, "{listed:#}");
    assert_eq!(ended[0]["id"], id);
    assert_eq!(ended[0]["reason"], reason);
    assert_eq!(ended[0]["instance"], "g1");

    // One connection, so every change came with a result: nothing was pushed.
    alice.quiet().await;
    assert!(alice.pushes.is_empty(), "{:#?}", alice.pushes);
}

#[actix::test]
async fn the_bot_opens_when_the_player_takes_white_and_its_move_is_pushed() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    let opened = alice
        .open("go", Some("w"), json!({"color": "white", "size": 9}))
        .await;
    let text = text_of(&opened["result"]);
    assert!(text.contains("You play White"), "{text}");
    assert!(text.contains("The bot is thinking"), "{text}");
    assert!(!alice.hints.is_visible("go_play", "w"));
    // The search ran on a blocking thread; its move comes as a push whose hints give
    // alice her turn (§5.3: something else's consequence), tagged as her turn (§10).
    let push = alice.next_push().await;
    let params = &push["params"];
    assert_eq!(params["toolset"], "go");
    assert_eq!(params["instance"], "w");
    assert_eq!(params["tags"], json!(["surface:turn"]));
    assert!(
        text_of(&push).starts_with("bot (Black) played "),
        "{push:#}"
    );
    assert!(alice.hints.is_visible("go_play", "w"));
    assert_eq!(alice.hints.moves("go_play", "w").len(), 80);

    // A move out of turn order is refused by the table; an illegal one names the reason.
    let taken = text_of(&push)
        .split_whitespace()
        .nth(3)
        .unwrap()
        .trim_end_matches('.')
        .to_owned();
    let r = alice
        .call("go_play", json!({"move": taken}), Some("w"))
        .await;
    assert_eq!(r["isError"], true);
    assert!(text_of(&r).contains("already occupied"), "{r:#}");

    // Resigning ends it at once, for the bot's win.
    let r = alice.call("go_resign", json!({}), Some("w")).await;
    assert!(text_of(&r).starts_with("You resigned."), "{r:#}");
    let closed = &hints_of(&r)["toolsets"][0];
    assert_eq!(closed["reason"], "Black (bot) wins by resignation");
}

#[actix::test]
async fn nineteen_by_nineteen_gives_a_pattern_instead_of_361_moves() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    alice.open("go", Some("big"), json!({"size": 19})).await;
    let schema = alice
        .hints
        .schemas
        .get(&("go_play".to_owned(), Some("big".to_owned())))
        .unwrap();
    assert_eq!(
        schema["properties"]["move"]["pattern"],
        mcpl_games::arcade::POINT_PATTERN
    );
    let r = alice
        .call("go_play", json!({"move": "Q16"}), Some("big"))
        .await;
    assert!(text_of(&r).starts_with("You played Q16."), "{r:#}");
}

#[actix::test]
async fn a_thinking_bot_answers_the_call_and_the_other_connection_sees_both_moves() {
    // A time budget: the search runs on a blocking thread until its deadline, and its end
    // wakes the table.
    let h = Harness::with(ArcadeConfig {
        bot: BotSettings {
            budget: BotBudget::Time(Duration::from_millis(30)),
            seed: Some(1),
        },
        ..Default::default()
    })
    .await;
    let mut one = h.hinted("alice").await;
    let mut two = h.hinted("alice").await;
    one.open("go", Some("g"), json!({})).await;
    two.next_push().await;
    let r = one.call("go_play", json!({"move": "C3"}), Some("g")).await;
    let text = text_of(&r);
    assert!(text.starts_with("You played C3. bot (White) "), "{text}");
    assert!(text.ends_with("Your move."), "{text}");
    // The other connection: one push with both moves, and the new legal points.
    let push = two.next_push().await;
    assert_eq!(text_of(&push), text);
    assert_eq!(push["params"]["tags"], json!(["surface:turn"]));
    assert_eq!(
        two.hints.moves("go_play", "g"),
        one.hints.moves("go_play", "g")
    );
    assert_eq!(two.hints.moves("go_play", "g").len(), 79);
    // While the bot thought, `play` was hidden (its turn): `two` was told at once, `one`
    // in the answer, with the turn given back (held changes, §5.3) — nothing else.
    let hidden = two.next_hints().await;
    assert_eq!(
        hidden["params"]["tools"],
        json!([{"name": "go_play", "instance": "g", "visible": false},
               {"name": "go_pass", "instance": "g", "visible": false}]),
        "{hidden:#}"
    );
    let tools = hints_of(&r)["tools"].as_array().unwrap().clone();
    assert_eq!(
        tools[0],
        json!({"name": "go_play", "instance": "g", "visible": false}),
        "{r:#}"
    );
    assert!(one.hints.is_visible("go_play", "g"));
    assert!(one.hints.is_visible("go_pass", "g"));
    one.quiet().await;
    assert!(one.pushes.is_empty(), "{:#?}", one.pushes);
    assert!(
        one.take_unread()
            .iter()
            .all(|v| v["method"] != "tools/hints"),
        "the held changes came only in the answer"
    );
}

#[actix::test]
async fn resigning_while_the_bot_thinks_answers_the_waiting_call() {
    let h = Harness::with(ArcadeConfig {
        bot: BotSettings {
            budget: BotBudget::Time(Duration::from_millis(1500)),
            seed: Some(1),
        },
        ..Default::default()
    })
    .await;
    let mut one = h.hinted("alice").await;
    let mut two = h.hinted("alice").await;
    one.open("go", Some("g"), json!({})).await;
    two.next_push().await;
    // `one`'s move waits for the bot; `two` may not move meanwhile, but may resign.
    one.send(
        json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {
        "name": "go_play", "arguments": {"move": "E5"}, "_meta": {"mcpl/instance": "g"}}}),
    )
    .await;
    // Once `one`'s `tools/list` is answered, its call has gone through alice's principal
    // to the table (the principal handles both in order), so `two`'s comes after.
    one.quiet().await;
    // It is the bot's turn: `two` was told `go_play` is gone (§5.3), the call is refused
    // (vector 11), and the board says why.
    let hidden = two.next_hints().await;
    assert_eq!(
        hidden["params"]["tools"],
        json!([{"name": "go_play", "instance": "g", "visible": false},
               {"name": "go_pass", "instance": "g", "visible": false}]),
        "{hidden:#}"
    );
    let busy = two.call("go_play", json!({"move": "D4"}), Some("g")).await;
    assert_eq!(busy["isError"], true);
    assert!(
        text_of(&busy).contains("go_play is not available right now"),
        "{busy:#}"
    );
    let board = two.call("go_board", json!({}), Some("g")).await;
    assert!(
        text_of(&board).ends_with("The bot is thinking."),
        "{board:#}"
    );
    let resigned = two.call("go_resign", json!({}), Some("g")).await;
    assert!(
        text_of(&resigned).starts_with("You resigned."),
        "{resigned:#}"
    );
    let answer = one.next_where(|v| v["id"] == 99).await;
    let text = text_of(&answer["result"]);
    assert!(
        text.contains("Game over: White (bot) wins by resignation."),
        "{answer:#}"
    );
    assert_ne!(answer["result"]["isError"], true);
}

#[actix::test]
async fn two_players_pass_and_both_get_the_result() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    let mut bob = h.hinted("bob").await;
    alice
        .open("go", Some("duel"), json!({"opponent": "bob", "komi": 6.5}))
        .await;
    bob.next_push().await;
    bob.open("go", Some("duel"), serde_json::Value::Null).await;
    alice.next_push().await;
    let r = alice.call("go_pass", json!({}), Some("duel")).await;
    assert!(text_of(&r).starts_with("You passed."), "{r:#}");
    let push = bob.next_push().await;
    assert!(
        text_of(&push).starts_with("alice (Black) passed."),
        "{push:#}"
    );
    assert!(bob.hints.is_visible("go_pass", "duel"));
    assert!(!alice.hints.is_visible("go_pass", "duel"));
    let r = bob.call("go_pass", json!({}), Some("duel")).await;
    let text = text_of(&r);
    assert!(text.starts_with("You passed."), "{text}");
    assert!(
        text.contains("Game over: White (bob) wins by 6.5."),
        "{text}"
    );
    let push = alice.next_push().await;
    assert!(
        text_of(&push).starts_with("bob (White) passed."),
        "{push:#}"
    );
    for c in [&alice, &bob] {
        let entry = c.hints.toolset("go", "duel").unwrap();
        assert_eq!(entry["state"], "closed");
        assert_eq!(entry["reason"], "White (bob) wins by 6.5");
    }
}

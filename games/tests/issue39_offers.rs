//! Issue #39 item 7 in the arcade, from outside over a real WebSocket in raw JSON: each game
//! a player is in is a resource for that player only (in words and as SVG), "how to play"
//! is a prompt, and completion offers the games and the player's game numbers.

use crate::support;

use serde_json::{Value, json};
use support::Harness;

/// The URIs of a `resources/list` answer.
fn uris(listed: &Value) -> Vec<String> {
    listed["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("no resources: {listed:#}"))
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect()
}

#[actix::test]
async fn issue39_07_a_players_games_are_resources_only_they_read() {
    let h = Harness::start().await;
    let mut alice = h.connect("alice").await;
    let init = alice.handshake(true, &["tools", "pushEvents"]).await;
    alice.list().await;
    let caps = &init["capabilities"];
    assert_eq!(
        (&caps["resources"], &caps["prompts"], &caps["completions"]),
        (&json!({}), &json!({}), &json!({})),
        "{init:#}"
    );
    let before = alice.request("resources/list", json!({})).await;
    assert_eq!(
        uris(&before),
        Vec::<String>::new(),
        "no game yet: {before:#}"
    );
    let opened = alice.open("tictactoe", Some("t1"), json!(null)).await;
    assert!(opened.get("result").is_some(), "{opened:#}");
    alice
        .call("tictactoe_play", json!({"move": "b2"}), Some("t1"))
        .await;
    let listed = alice.request("resources/list", json!({})).await;
    let mine = uris(&listed);
    assert_eq!(mine.len(), 1, "{listed:#}");
    assert!(mine[0].starts_with("arcade://games/"), "{listed:#}");
    let title = listed["result"]["resources"][0]["title"].as_str().unwrap();
    assert!(
        title.starts_with("Tic-tac-toe") && title.contains("alice (X) vs bot (O)"),
        "{title}"
    );
    let read = alice
        .request("resources/read", json!({"uri": mine[0]}))
        .await;
    let contents = read["result"]["contents"].as_array().expect("contents");
    assert_eq!(contents.len(), 2, "{read:#}");
    assert_eq!(contents[0]["mimeType"], "text/plain");
    let words = contents[0]["text"].as_str().unwrap();
    // alice's move and the bot's answer are in; it is alice's turn again.
    assert!(
        words.contains("Moves played: 2") && words.contains("alice (X) to move"),
        "{words}"
    );
    assert_eq!(contents[1]["mimeType"], "image/svg+xml");
    assert!(
        contents[1]["text"].as_str().unwrap().starts_with("<svg"),
        "{read:#}"
    );
    // bob sees none of it: not listed, and reading it is "not found".
    let mut bob = h.connect("bob").await;
    bob.handshake_plain().await;
    let theirs = bob.request("resources/list", json!({})).await;
    assert_eq!(uris(&theirs), Vec::<String>::new(), "{theirs:#}");
    let refused = bob.request("resources/read", json!({"uri": mine[0]})).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused:#}");
    assert_eq!(refused["error"]["data"]["uri"], mine[0].as_str());
    // Completion of the template's id offers alice her game's number.
    let id = mine[0].trim_start_matches("arcade://games/");
    let done = alice
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "arcade://games/{id}"},
                   "argument": {"name": "id", "value": ""}}),
        )
        .await;
    assert_eq!(
        done["result"]["completion"]["values"],
        json!([id]),
        "{done:#}"
    );
}

#[actix::test]
async fn issue39_07_how_to_play_is_a_prompt_and_its_game_completes() {
    let h = Harness::start().await;
    let mut carol = h.connect("carol").await;
    carol.handshake_plain().await;
    let prompts = carol.request("prompts/list", json!({})).await;
    assert_eq!(
        prompts["result"]["prompts"][0]["name"], "how_to_play",
        "{prompts:#}"
    );
    let go = carol
        .request(
            "prompts/get",
            json!({"name": "how_to_play", "arguments": {"game": "go"}}),
        )
        .await;
    let text = go["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("go_play") && text.contains("komi"), "{text}");
    let chess = carol
        .request(
            "prompts/get",
            json!({"name": "how_to_play", "arguments": {"game": "chess"}}),
        )
        .await;
    assert_eq!(chess["error"]["code"], -32602, "{chess:#}");
    let done = carol
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "how_to_play"},
                   "argument": {"name": "game", "value": "t"}}),
        )
        .await;
    assert_eq!(
        done["result"]["completion"],
        json!({"values": ["tictactoe"], "total": 1, "hasMore": false}),
        "{done:#}"
    );
}

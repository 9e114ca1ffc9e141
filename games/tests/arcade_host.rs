//! The arcade through the project's own host (`mcpl_host::host::Host`): an agent opens a
//! game with `toolsets--open`, reads `tictactoe_play`'s current definition (the legal
//! cells, §5.1) and plays with `toolsets--act` until the game is over. The model's tool
//! list never changes meanwhile (§6, vector 12).

mod support;

use mcpl_host::host::{Host, HostConfig, ServerConfig};
use serde_json::json;
use support::{Harness, within};

#[actix::test]
async fn an_agent_plays_tictactoe_through_the_meta_tools() {
    let h = Harness::start().await;
    let host = Host::start(HostConfig::new(vec![ServerConfig::url(
        "arcade",
        h.listener.url(),
        Some("alice".into()),
    )]))
    .expect("a valid host");
    within(host.first_contact()).await.unwrap();
    let before = host.tools_json().await.unwrap();
    let names: Vec<String> = host
        .tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    // Every arcade tool is in a toolset: only the meta-tools reach the model's list.
    assert!(
        names.iter().all(|n| n.starts_with("toolsets--")),
        "{names:?}"
    );

    let games = host
        .call("toolsets--act", json!({"tool": "games"}))
        .await
        .unwrap();
    assert!(!games.is_error, "{games:?}");
    assert!(games.joined_text().contains("Players online"), "{games:?}");

    let opened = host
        .call(
            "toolsets--open",
            json!({"toolset": "tictactoe", "instance": "h1", "options": {}}),
        )
        .await
        .unwrap();
    assert!(!opened.is_error, "{opened:?}");
    assert!(
        opened.joined_text().contains("Tic-tac-toe against the bot"),
        "{opened:?}"
    );

    let mut turns = 0;
    let last = loop {
        turns += 1;
        assert!(turns <= 5, "at most five moves of ours");
        let play = host
            .definition(Some("arcade"), "tictactoe_play", Some("h1"))
            .await
            .unwrap()
            .expect("play is offered on our turn");
        let free = play.input_schema["properties"]["move"]["enum"]
            .as_array()
            .expect("the legal cells")
            .clone();
        let r = host
            .call(
                "toolsets--act",
                json!({"tool": "tictactoe_play", "instance": "h1", "args": {"move": free[0]}}),
            )
            .await
            .unwrap();
        assert!(!r.is_error, "{r:?}");
        let text = r.joined_text();
        if text.contains("Game over:") {
            break text;
        }
    };
    assert!(
        last.contains("O (bot) wins") || last.contains("Draw"),
        "{last}"
    );
    assert_eq!(host.tools_json().await.unwrap(), before, "vector 12");
    host.stop().await;
}

//! The arcade through the project's own host (`mcpl_host::host::Host`) against the bot:
//! an agent opens a game with `toolsets--open`, reads `play`'s current definition (the
//! legal moves, §5.1) and plays with `toolsets--act` until the game is over — tic-tac-toe,
//! and Go 9×9 to the end, where the bot's search runs off the arbiter and its move rides
//! in the answer to the agent's own (§5.3). The model's tool list never changes meanwhile
//! (§6, vector 12).

use crate::support;

use mcpl_host::host::{Host, HostConfig, ServerConfig, ShownKind};
use mcpl_testkit::within;
use serde_json::json;
use support::Harness;
use support::host::{Agent, LOOK, closed_line};

/// How many points the agent places before it only passes.
const STONES: usize = 12;

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

#[actix::test]
async fn an_agent_plays_go_against_the_bot_to_the_end() {
    // The harness's bot searches a small playout budget with a seed: fast and repeatable.
    let h = Harness::start().await;
    let alice = Agent::start(&h, "alice").await;
    let before = alice.tools_json().await;

    let opened = alice
        .open(json!({"toolset": "go", "instance": "g", "options": {"size": 9}}))
        .await;
    assert!(
        opened.contains("Opened [arcade/go:g] \"Go 9x9 vs bot\""),
        "{opened}"
    );
    assert!(opened.contains("You play Black"), "{opened}");
    assert!(
        opened.contains("   A B C D E F G H J"),
        "the board: {opened}"
    );
    assert!(
        opened.contains("- Usable: go_play in [arcade/go:g]"),
        "{opened}"
    );
    assert_eq!(alice.moves("go_play", "g").await.len(), 81);

    let mut placed = 0;
    let mut bot_passed = false;
    let mut turns = 0;
    let last = loop {
        turns += 1;
        assert!(turns < 200, "the game does not end");
        // The legal points, as the agent reads them from the current definition.
        let legal = alice.moves("go_play", "g").await;
        let text = if placed < STONES && !bot_passed && !legal.is_empty() {
            let mv = legal[(placed * 37 + 11) % legal.len()].clone();
            placed += 1;
            let text = alice.act("go_play", Some("g"), json!({"move": mv})).await;
            assert!(text.contains(&format!("You played {mv}.")), "{text}");
            if !text.contains("Game over:") {
                let now = alice.moves("go_play", "g").await;
                assert!(!now.contains(&mv), "{mv} is taken: {now:?}");
            }
            text
        } else {
            alice.act("go_pass", Some("g"), json!({})).await
        };
        // The answer carries the bot's move too (§5.3: the call reports its consequences).
        assert!(text.contains("bot (White)"), "{text}");
        bot_passed = text.contains("bot (White) passed");
        if text.contains("Game over:") {
            break text;
        }
        assert!(text.contains("Your move."), "{text}");
    };
    // The agent was shown the end with the result: the text, and the host's line that
    // the game closed with the server's reason (§4.3).
    let reason = last
        .lines()
        .find_map(|l| l.strip_prefix("- Closed [arcade/go:g]: \""))
        .and_then(|r| r.strip_suffix("\" (from arcade)."))
        .unwrap_or_else(|| panic!("the end is told: {last}"))
        .to_owned();
    assert!(
        reason.contains(" wins by ") && (reason.contains("(bot)") || reason.contains("(alice)")),
        "{reason}"
    );
    assert!(last.contains(&format!("Game over: {reason}.")), "{last}");
    assert!(last.contains("Moves: "), "the record: {last}");
    assert!(last.contains(&closed_line("go:g", &reason)), "{last}");
    let look = alice.call(LOOK, json!({})).await.joined_text();
    assert!(
        look.contains(&format!("Ended:\n- [arcade/go:g]: \"{reason}\"")),
        "{look}"
    );

    // One host, one connection: every change came with a result, nothing was pushed, and
    // the model's tool list never changed.
    let shown = alice.transcript().await;
    assert!(
        shown.iter().all(|s| s.kind != ShownKind::Push),
        "{shown:#?}"
    );
    assert_eq!(alice.tools_json().await, before, "vector 12");
    alice.stop().await;
}

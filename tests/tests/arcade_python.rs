//! Interop: the official MCP Python SDK's client, a plain MCP host with no MCPL, plays a
//! whole tic-tac-toe game against the arcade's bot over Streamable HTTP, through the
//! compat tools RFC-014 §8 gives such a host (`toolset_open`, and an `instance` argument on
//! the game's tools): in its default connect mode, which goes modern (MCP 2026-07-28) at a
//! server that answers `server/discover`, and in legacy mode (`initialize`, a session).

use mcpl_games::arcade::listen;
use mcpl_games::arcade::{Arcade, ArcadeConfig};
use mcpl_tests::interop::{python, script};
use mcpl_transport::ServerOptions;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

#[actix::test]
async fn a_python_plain_client_plays_tictactoe_to_the_end() {
    // Set up (or find) the venv before the arcade runs: it blocks.
    let python = python();
    let arcade = Arcade::new(ArcadeConfig {
        players: vec!["py".into()],
        ..Default::default()
    })
    .expect("a valid arcade");
    let mut opts = ServerOptions::default();
    opts.tokens.insert("py-token".into(), "py".into());
    let listener = listen::http(&arcade, "127.0.0.1:0".parse().unwrap(), Arc::new(opts))
        .await
        .expect("bind");
    for (mode, version) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let run = tokio::process::Command::new(&python)
            .arg(script("py_arcade.py"))
            .arg(listener.url())
            .arg("py-token")
            .arg(mode)
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(Duration::from_secs(120), run)
            .await
            .expect("the Python client finishes")
            .expect("python runs");
        let report: Value = mcpl_tests::interop::report(&out);
        assert_eq!(report["protocolVersion"], version, "{mode}: {report:#}");
        assert_played(&report);
    }
}

fn assert_played(report: &Value) {
    assert_eq!(report["server"], "mcpl-arcade", "{report:#}");
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for want in ["toolset_open", "toolset_close", "tictactoe_play", "games"] {
        assert!(tools.contains(&want), "{want} in {tools:?}");
    }
    let opened = report["opened"].as_str().unwrap();
    assert!(
        opened.starts_with("Opened tictactoe:py (Tic-tac-toe vs bot)"),
        "{opened}"
    );
    assert_eq!(report["errors"], Value::Array(vec![]), "{report:#}");
    let last = report["final"].as_str().expect("the game ended");
    // The perfect bot never loses.
    assert!(
        last.contains("Game over: O (bot) wins.") || last.contains("Game over: Draw."),
        "{last}"
    );
    let moves = report["moves"].as_array().unwrap();
    assert!((3..=5).contains(&moves.len()), "{report:#}");
}

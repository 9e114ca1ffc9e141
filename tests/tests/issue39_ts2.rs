//! Interop (issue #39): the official MCP TypeScript SDK 2.x client
//! (`@modelcontextprotocol/client`, pinned in `tests/inspector/package-lock.json`), a plain MCP
//! host with no MCPL, plays a whole tic-tac-toe game against the arcade's bot directly,
//! through the compat tools RFC-014 §8 gives such a host (`toolset_open`, and an `instance`
//! argument on the game's tools), pinned to MCP 2026-07-28 and in its `auto` mode, over
//! Streamable HTTP (the arcade in process) and over stdio (the client launches
//! `mcpl-arcade serve --stdio`). That the era is modern is read from what the server sent,
//! not from what the client says it negotiated: the `serverInfo` a modern result carries in
//! its `_meta` (a legacy one has none) and, over HTTP, the requests the server answered (a
//! `server/discover` and no `initialize`, no `Mcp-Session-Id`).

use mcpl_games::arcade::listen;
use mcpl_games::arcade::{Arcade, ArcadeConfig};
use mcpl_tests::interop::{arcade_bin, report, ts2_script};
use mcpl_transport::ServerOptions;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// How long one whole game may take, the npm install on first use aside.
const LIMIT: Duration = Duration::from_secs(120);

/// Runs `ts2_arcade.mjs` with `args`; its report.
async fn run_client(args: &[&str]) -> Value {
    let script = ts2_script("ts2_arcade.mjs");
    let run = tokio::process::Command::new("node")
        .arg(script)
        .args(args)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(LIMIT, run)
        .await
        .expect("the TypeScript client finishes")
        .expect("node runs");
    report(&out)
}

/// The TypeScript client over Streamable HTTP in `mode`, at an arcade in this process.
async fn over_http(mode: &str) -> Value {
    let arcade = Arcade::new(ArcadeConfig {
        players: vec!["ts".into()],
        ..Default::default()
    })
    .expect("a valid arcade");
    let mut opts = ServerOptions::default();
    opts.tokens.insert("ts-token".into(), "ts".into());
    let listener = listen::http(&arcade, "127.0.0.1:0".parse().unwrap(), Arc::new(opts))
        .await
        .expect("bind");
    run_client(&["http", listener.url(), "ts-token", mode]).await
}

/// The TypeScript client over stdio in `mode`, launching the arcade binary.
async fn over_stdio(mode: &str) -> Value {
    let arcade = arcade_bin().to_str().expect("a UTF-8 path").to_owned();
    run_client(&["stdio", mode, &arcade, "serve", "--stdio", "--in-memory"]).await
}

/// The results came from a server serving 2026-07-28: a modern result carries the server's
/// `serverInfo` in `_meta`.
fn assert_modern(report: &Value) {
    assert_eq!(report["stamped"], "mcpl-arcade", "{report:#}");
    assert_eq!(report["era"], "modern", "{report:#}");
    assert_eq!(report["protocolVersion"], "2026-07-28", "{report:#}");
}

/// Over HTTP, what the server answered: a `server/discover` first, never an `initialize`,
/// never a session.
fn assert_modern_wire(report: &Value) {
    let wire = report["wire"].as_array().expect("the wire record");
    assert_eq!(wire[0]["method"], "server/discover", "{report:#}");
    assert_eq!(wire[0]["status"], 200, "{report:#}");
    for exchange in wire {
        assert_ne!(exchange["method"], "initialize", "{report:#}");
        assert_eq!(exchange["session"], Value::Null, "{report:#}");
        assert_eq!(exchange["http"], "POST", "{report:#}");
    }
}

/// A whole game was played through the compat tools, and the bot did not lose.
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
        opened.starts_with("Opened tictactoe:ts (Tic-tac-toe vs bot)"),
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

#[actix::test]
async fn issue39_ts2_modern_plays_tictactoe_over_http() {
    let report = over_http("2026-07-28").await;
    assert_modern(&report);
    assert_modern_wire(&report);
    assert_played(&report);
}

#[actix::test]
async fn issue39_ts2_auto_chooses_modern_over_http() {
    let report = over_http("auto").await;
    assert_modern(&report);
    assert_modern_wire(&report);
    assert_played(&report);
}

#[tokio::test]
async fn issue39_ts2_modern_plays_tictactoe_over_stdio() {
    let report = over_stdio("2026-07-28").await;
    assert_modern(&report);
    assert_played(&report);
}

#[tokio::test]
async fn issue39_ts2_auto_chooses_modern_over_stdio() {
    let report = over_stdio("auto").await;
    assert_modern(&report);
    assert_played(&report);
}

//! Issue #39 items 1–3, driven by the official MCP Python SDK (`mcp`, pinned in
//! `tests/interop/requirements.txt`) pinned to protocol 2026-07-28 (`Client(mode=
//! "2026-07-28")`: no `initialize`, no discover probe, every request modern): it lists the
//! arcade's tools and plays tic-tac-toe against the bot through the compat tools, over
//! stdio (the binary spawned by the SDK) and over Streamable HTTP (with a bearer token).

use crate::support;

use mcpl_testkit::process::report;
use mcpl_testkit::python::{python, workspace_root};
use serde_json::Value;
use std::time::Duration;
use support::{BIN, serve};

/// Runs `py_arcade.py` with `args`; its one-line report.
async fn play(args: &[&str]) -> Value {
    let script = workspace_root().join("tests/interop/py_arcade.py");
    let run = tokio::process::Command::new(python())
        .arg(script)
        .args(args)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the Python client finishes")
        .expect("python runs");
    report(&out)
}

fn assert_played_modern(report: &Value) {
    assert_eq!(report["protocolVersion"], "2026-07-28", "{report:#}");
    assert_eq!(report["handshake"], "discover", "no initialize: {report:#}");
    assert_eq!(
        report["stamped"], "mcpl-arcade",
        "serverInfo on results: {report:#}"
    );
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for want in ["toolset_open", "tictactoe_play", "games"] {
        assert!(tools.contains(&want), "{want} in {tools:?}");
    }
    let opened = report["opened"].as_str().unwrap();
    assert!(opened.starts_with("Opened tictactoe:py"), "{opened}");
    assert_eq!(report["errors"], Value::Array(vec![]), "{report:#}");
    let last = report["final"].as_str().expect("the game ended");
    assert!(
        last.contains("Game over: O (bot) wins.") || last.contains("Game over: Draw."),
        "{last}"
    );
}

#[actix::test]
async fn issue39_python_sdk_pinned_to_2026_07_28_plays_the_arcade_over_stdio() {
    let report = play(&[
        "stdio",
        "2026-07-28",
        BIN,
        "serve",
        "--stdio",
        "--in-memory",
    ])
    .await;
    assert_played_modern(&report);
}

#[actix::test]
async fn issue39_python_sdk_pinned_to_2026_07_28_plays_the_arcade_over_streamable_http() {
    let (_child, urls) = serve(&["--http", "127.0.0.1:0", "--token", "py=py-token"], 1).await;
    let report = play(&[&urls[0], "py-token", "2026-07-28"]).await;
    assert_played_modern(&report);
}

/// In its default mode the SDK probes `server/discover`; the arcade answers it, so the
/// client goes modern (issue #39: "in auto mode they choose modern").
#[actix::test]
async fn issue39_python_sdk_in_auto_mode_chooses_modern_over_stdio() {
    let report = play(&["stdio", "auto", BIN, "serve", "--stdio", "--in-memory"]).await;
    assert_played_modern(&report);
    assert_eq!(report["server"], "mcpl-arcade", "from discover: {report:#}");
}

//! Interop: the official MCP Python SDK's client (pinned in `tests/interop/requirements.txt`,
//! in the venv `tests/interop/setup-venv.sh` makes) launches `mcpl-surface serve` over stdio
//! as it launches any server, and plays whole games against the real arcade binary's bot
//! through the four meta-tools, knowing only what the results say
//! (`tests/interop/py_surface.py`).

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use support::{BOT, SURFACE, arcade, write_config};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("surface/ has a parent")
        .to_path_buf()
}

/// The venv's interpreter, made on first use (as `mcpl_tests::interop::python` does).
fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let root = root();
            let venv = std::env::var_os("MCPL_INTEROP_VENV")
                .map(PathBuf::from)
                .unwrap_or_else(|| root.join("target/interop-venv"));
            let out = Command::new("bash")
                .arg(root.join("tests/interop/setup-venv.sh"))
                .env("MCPL_INTEROP_VENV", &venv)
                .output()
                .expect("bash runs");
            assert!(
                out.status.success(),
                "could not set up the interop venv:\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            venv.join("bin/python")
        })
        .clone()
}

/// Runs the Python client at `game` through a surface host in front of a stdio arcade;
/// its report.
async fn play(game: &str) -> Value {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["serve", "--stdio", "--principal", "py"];
    args.extend(BOT);
    let config = write_config(
        dir.path(),
        "surface.json",
        &json!({"mcpServers": {"arcade": {"command": arcade(), "args": args}}}),
    );
    let run = tokio::process::Command::new(python)
        .arg(root().join("tests/interop/py_surface.py"))
        .arg(game)
        .arg(SURFACE)
        .args(["serve", "--config"])
        .arg(&config)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(300), run)
        .await
        .expect("the Python client finishes")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the Python client failed:\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().expect("one line of output");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

fn common(report: &Value) {
    assert_eq!(report["server"], "mcpl-surface", "{report:#}");
    assert_eq!(
        report["tools"],
        json!([
            "toolsets--open",
            "toolsets--act",
            "toolsets--look",
            "toolsets--close"
        ]),
        "{report:#}"
    );
    assert_eq!(report["errors"], json!([]), "{report:#}");
    assert_eq!(report["tools_stable"], true, "{report:#}");
    // The lobby's opening was logged to the client as it was shown.
    let logs = report["logs"].as_array().unwrap();
    assert!(
        logs.iter()
            .any(|l| l["server"] == "arcade" && l["text"].as_str().unwrap().contains("Lobby")),
        "{report:#}"
    );
}

#[tokio::test]
async fn the_python_sdk_client_plays_tictactoe_through_the_surface_host() {
    let report = play("tictactoe").await;
    common(&report);
    let opened = report["opened"].as_str().unwrap();
    assert!(
        opened.contains("Opened [arcade/tictactoe:py]"),
        "{report:#}"
    );
    let last = report["final"].as_str().expect("the game ended");
    assert!(
        last.contains("O (bot) wins") || last.contains("Draw"),
        "{last}"
    );
    let moves = report["moves"].as_array().unwrap();
    assert!((3..=5).contains(&moves.len()), "{report:#}");
}

#[tokio::test]
async fn the_python_sdk_client_plays_go_to_the_end_through_the_surface_host() {
    let report = play("go").await;
    common(&report);
    let opened = report["opened"].as_str().unwrap();
    assert!(opened.contains("Opened [arcade/go:py]"), "{report:#}");
    assert!(opened.contains("You play Black"), "{opened}");
    let last = report["final"].as_str().expect("the game ended");
    assert!(last.contains("Game over:"), "{last}");
    let moves: Vec<&str> = report["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        moves.iter().filter(|m| **m != "pass").count(),
        10,
        "{moves:?}"
    );
}

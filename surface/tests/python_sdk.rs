//! Interop: the official MCP Python SDK's client (pinned in `tests/interop/requirements.txt`,
//! in the venv `tests/interop/setup-venv.sh` makes) launches `mcpl-surface serve` over stdio
//! as it launches any server, and plays whole games against the real arcade binary's bot
//! through the four meta-tools, knowing only what the results say
//! (`tests/interop/py_surface.py`).

mod support;

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use support::{SURFACE, check_sdk_game, check_sdk_report, peer_report, root, stdio_arcade_config};

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
    let config = stdio_arcade_config(dir.path(), "py");
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
    peer_report(&out)
}

#[tokio::test]
async fn the_python_sdk_client_plays_tictactoe_through_the_surface_host() {
    let report = play("tictactoe").await;
    check_sdk_report(&report);
    check_sdk_game(&report, "tictactoe", "py");
}

#[tokio::test]
async fn the_python_sdk_client_plays_go_to_the_end_through_the_surface_host() {
    let report = play("go").await;
    check_sdk_report(&report);
    check_sdk_game(&report, "go", "py");
}

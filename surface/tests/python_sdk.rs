//! Interop: the official MCP Python SDK's client (pinned in `tests/interop/requirements.txt`,
//! in the venv `tests/interop/setup-venv.sh` makes) launches `mcpl-surface serve` over stdio
//! as it launches any server, and plays whole games against the real arcade binary's bot
//! through the four meta-tools, knowing only what the results say
//! (`tests/interop/py_surface.py`).

mod support;

use mcpl_testkit::python::python;
use serde_json::Value;
use support::{SURFACE, check_sdk_game, check_sdk_report, peer_report, root, stdio_arcade_config};

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

//! Interop: the official MCP Python SDK's client (pinned in `tests/interop/requirements.txt`,
//! in the venv `tests/interop/setup-venv.sh` makes) launches `mcpl-surface serve` over stdio
//! as it launches any server, and plays whole games against the real arcade binary's bot
//! through the four meta-tools, knowing only what the results say
//! (`tests/interop/py_surface.py`).

use crate::support;

use mcpl_testkit::python::python;
use serde_json::Value;
use support::{check_sdk_game, check_sdk_report, play_sdk_client};

/// The Python client at `game`; its report.
async fn play(game: &str) -> Value {
    play_sdk_client(python(), "tests/interop/py_surface.py", game, "py").await
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

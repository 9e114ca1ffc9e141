//! Interop: the official MCP TypeScript SDK's client (`@modelcontextprotocol/sdk`, pinned in
//! `tests/inspector/package-lock.json`, installed by `tests/inspector/setup.sh`) launches
//! `mcpl-surface serve` over stdio and plays whole games against the real arcade binary's
//! bot through the four meta-tools, knowing only what the results say
//! (`tests/inspector/ts_surface.mjs`).

use crate::support;

use serde_json::Value;
use support::{check_sdk_game, check_sdk_report, play_sdk_client};

/// The TypeScript client at `game`; its report.
async fn play(game: &str) -> Value {
    mcpl_testkit::node::inspector_dir();
    play_sdk_client("node", "tests/inspector/ts_surface.mjs", game, "ts").await
}

#[tokio::test]
async fn the_typescript_sdk_client_plays_tictactoe_through_the_surface_host() {
    let report = play("tictactoe").await;
    check_sdk_report(&report);
    check_sdk_game(&report, "tictactoe", "ts");
}

#[tokio::test]
async fn the_typescript_sdk_client_plays_go_to_the_end_through_the_surface_host() {
    let report = play("go").await;
    check_sdk_report(&report);
    check_sdk_game(&report, "go", "ts");
}

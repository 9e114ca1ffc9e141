//! Interop: the official MCP TypeScript SDK's client (`@modelcontextprotocol/sdk`, pinned in
//! `tests/inspector/package-lock.json`, installed by `tests/inspector/setup.sh`) launches
//! `mcpl-surface serve` over stdio and plays whole games against the real arcade binary's
//! bot through the four meta-tools, knowing only what the results say
//! (`tests/inspector/ts_surface.mjs`).

mod support;

use serde_json::Value;
use std::process::Command;
use std::sync::Once;
use support::{check_sdk_game, check_sdk_report, play_sdk_client, root};

/// Installs the pinned npm packages once (a no-op when the lock has not changed).
fn setup() {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        let out = Command::new("bash")
            .arg(root().join("tests/inspector/setup.sh"))
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "could not install the TypeScript SDK:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// The TypeScript client at `game`; its report.
async fn play(game: &str) -> Value {
    setup();
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

//! The `mcpl-host play` binary end to end, its input piped (the line editor reads a pipe
//! line by line, without a prompt): what a person is told when the server cannot be
//! reached — a token refused on a WebSocket or on Streamable HTTP, a connection refused —
//! at the start, by `status`, and when a command needs the server. And `mcpl-host --help`
//! names every subcommand. Nothing sleeps: each run ends when its input says `quit`.

use mcpl_transport::{ServerOptions, http, ws};
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

const REFUSED_TOKEN: &str = "the server refused the token (HTTP 401)";

/// Runs `mcpl-host play` with `args`, types `input`, and returns its stdout and stderr.
async fn play(args: &[&str], input: &str) -> (String, String) {
    // A state directory of its own: the told ids it keeps are no other test's.
    let state = tempfile::tempdir().expect("a state directory");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpl-host"))
        // Its default state directory, away from the machine's own.
        .env("XDG_DATA_HOME", state.path())
        .arg("play")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("play ends at quit")
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Server options that let in only `right-token`.
fn tokens() -> Arc<ServerOptions> {
    Arc::new(ServerOptions {
        tokens: HashMap::from([("right-token".to_owned(), "alice".to_owned())]),
        allow_anonymous: false,
        ws_ping_interval: None,
        ..Default::default()
    })
}

/// What a wrong token is told on `url`: at the start, by `status`, and by `open`, and
/// no warnings on stderr.
async fn a_wrong_token_is_told(url: &str) {
    let server = format!("arcade={url}");
    let (out, err) = play(
        &["--server", &server, "--token", "arcade=wrong-token"],
        "status\nopen go\nquit\n",
    )
    .await;
    let told = format!("arcade: not connected: {REFUSED_TOKEN} (retrying)");
    assert!(
        out.lines().filter(|l| *l == told).count() >= 2,
        "told at the start and by status:\n{out}"
    );
    assert!(
        out.contains(&format!(
            "error: arcade is not connected right now: {REFUSED_TOKEN}."
        )),
        "open says why, not `no toolset named \"go\" is offered`:\n{out}"
    );
    assert!(!out.contains("no toolset named"), "{out}");
    assert!(
        !err.contains("WARN"),
        "the prompt says it; stderr need not:\n{err}"
    );
}

#[tokio::test]
async fn a_token_refused_on_a_websocket_is_told_with_its_cause() {
    let l = ws::bind("127.0.0.1:0".parse().unwrap(), tokens())
        .await
        .unwrap();
    a_wrong_token_is_told(&format!("ws://{}/mcp", l.local_addr())).await;
}

#[tokio::test]
async fn a_token_refused_on_streamable_http_is_told_with_its_cause() {
    let l = http::bind("127.0.0.1:0".parse().unwrap(), "/mcp", tokens())
        .await
        .unwrap();
    a_wrong_token_is_told(&format!("http://{}/mcp", l.local_addr())).await;
}

#[tokio::test]
async fn a_refused_connection_is_told_with_its_cause() {
    // A port that was just free: nothing listens there now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // Streamable HTTP's POST failing to connect says so as plainly as a WebSocket's.
    for scheme in ["ws", "http"] {
        let server = format!("arcade={scheme}://127.0.0.1:{port}/mcp");
        let (out, _) = play(&["--server", &server], "board\nquit\n").await;
        assert!(
            out.contains("arcade: not connected: connection refused: nothing listens there"),
            "{scheme}: {out}"
        );
        assert!(out.contains("no game is open"), "{scheme}: {out}");
    }
}

#[tokio::test]
async fn help_names_every_subcommand() {
    // A state directory of its own: the told ids it keeps are no other test's.
    let state = tempfile::tempdir().expect("a state directory");
    let out = Command::new(env!("CARGO_BIN_EXE_mcpl-host"))
        // Its default state directory, away from the machine's own.
        .env("XDG_DATA_HOME", state.path())
        .arg("--help")
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    // The subcommands as clap lists them: "  NAME  what it does".
    let listed: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(listed, ["console", "play", "help"], "{help}");
    // Each one's own help works, and play's names its commands' help.
    for sub in ["console", "play"] {
        // A state directory of its own: the told ids it keeps are no other test's.
        let state = tempfile::tempdir().expect("a state directory");
        let out = Command::new(env!("CARGO_BIN_EXE_mcpl-host"))
            // Its default state directory, away from the machine's own.
            .env("XDG_DATA_HOME", state.path())
            .args([sub, "--help"])
            .output()
            .await
            .unwrap();
        assert!(out.status.success(), "{sub}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("--server"));
    }
}

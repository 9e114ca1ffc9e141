//! The surface host's logs and errors keep secrets out and say only what happened (issue
//! #37, item 10), driven as an operator runs it: the binary over stdio, its stderr read.

use crate::support;

use mcpl_testkit::within;
use serde_json::json;
use support::{SURFACE, write_config};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A URL's password never reaches the log, even at debug, and a server that was never
/// reached is never said to be connected; a bad `url` in the configuration is refused
/// without echoing its password.
#[tokio::test]
async fn hardening2_10_url_credentials_never_reach_the_log_and_nothing_unreached_is_connected() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: the server is never reached.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = write_config(
        dir.path(),
        "surface.json",
        &json!({
            "mcpServers": {"far": {"url": format!("http://user:PASSWORD@127.0.0.1:{port}/mcp?key=SECRET")}},
            "surface": {"firstContactMs": 300}
        }),
    );
    let mut child = tokio::process::Command::new(SURFACE)
        .args(["serve", "--config"])
        .arg(&config)
        .env("RUST_LOG", "debug")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("mcpl-surface starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    // The list is answered once the first contact gave up on the server.
    loop {
        let line = within(stdout.next_line())
            .await
            .unwrap()
            .expect("an answer");
        if serde_json::from_str::<serde_json::Value>(&line).unwrap()["id"] == 2 {
            break;
        }
    }
    drop(stdin);
    let out = within(child.wait_with_output()).await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("127.0.0.1"), "the log names the server: {err}");
    assert!(
        !err.contains("PASSWORD") && !err.contains("SECRET"),
        "{err}"
    );
    assert!(!err.contains("connected: the server answered"), "{err}");

    let bad = write_config(
        dir.path(),
        "bad.json",
        &json!({"mcpServers": {"far": {"url": "ftp://user:PASSWORD@example.com/"}}}),
    );
    let out = within(
        tokio::process::Command::new(SURFACE)
            .args(["serve", "--config"])
            .arg(&bad)
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("ftp://"), "the error names the url: {err}");
    assert!(!err.contains("PASSWORD"), "{err}");
}

//! Issue #43 item 4, the surface host as a person starts it (or Claude Desktop does, its
//! stderr going to a file): a URL it cannot use is refused at start naming it; a stdio
//! server that exits at once (an arcade whose store another arcade holds) is said at WARN
//! with its own last words; a `command` not on the PATH is named with the PATH; no colour
//! codes reach a stderr that is not a terminal; `${VAR}` and `${VAR:-default}` are
//! expanded in `headers` as Claude Code does, and an unset one is refused at start.

use crate::support;

use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use support::{LIMIT, SURFACE, arcade, arcade_of_alice_and_bob, text, write_config};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, Command};

/// Runs `mcpl-surface serve --config PATH` to its end (stdin closed at once) and returns
/// its exit code and stderr.
fn serve_to_the_end(config: &Path, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = std::process::Command::new(SURFACE)
        .args(["serve", "--config"])
        .arg(config)
        .envs(env.iter().copied())
        .env("XDG_DATA_HOME", config.parent().unwrap().join("data"))
        .stdin(Stdio::null())
        .output()
        .expect("mcpl-surface runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// A surface host serving stdio with its stderr piped (not a terminal), after the MCP
/// handshake and a `tools/list` (so that its servers are being reached).
struct Surface {
    child: Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    stderr: tokio::io::Lines<BufReader<ChildStderr>>,
    /// Every stderr line read so far.
    said: String,
}

impl Surface {
    async fn start(config: &Path, env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(SURFACE)
            .args(["serve", "--config"])
            .arg(config)
            .envs(env.iter().copied())
            .env("XDG_DATA_HOME", config.parent().unwrap().join("data"))
            // The surface host's own default filter (`warn`), as a user runs it.
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("mcpl-surface starts");
        let mut s = Surface {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
            stderr: BufReader::new(child.stderr.take().unwrap()).lines(),
            child,
            said: String::new(),
        };
        s.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "issue43", "version": "0"}}}),
        )
        .await;
        s.response(0).await;
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        s
    }

    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn response(&mut self, id: i64) -> Value {
        let read = async {
            loop {
                let line = self.stdout.next_line().await.unwrap().expect("a response");
                let v: Value = serde_json::from_str(&line).unwrap();
                if v["id"] == id {
                    return v;
                }
            }
        };
        tokio::time::timeout(LIMIT, read)
            .await
            .expect("answered in time")
    }

    async fn call(&mut self, id: i64, name: &str, arguments: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments}}))
            .await;
        self.response(id).await["result"].clone()
    }

    /// Reads stderr until a line has every one of `needles`; that line.
    async fn said(&mut self, needles: &[&str]) -> String {
        let read = async {
            loop {
                let line = self.stderr.next_line().await.unwrap().unwrap_or_else(|| {
                    panic!("stderr ended before {needles:?}; it said:\n{}", self.said)
                });
                self.said.push_str(&line);
                self.said.push('\n');
                if needles.iter().all(|n| line.contains(n)) {
                    return line;
                }
            }
        };
        match tokio::time::timeout(LIMIT, read).await {
            Ok(line) => line,
            Err(_) => panic!("no stderr line with {needles:?}; it said:\n{}", self.said),
        }
    }
}

impl Drop for Surface {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

#[test]
fn issue43_04_a_the_surface_refuses_an_unusable_url_at_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    // A port out of range: before, it was retried as "bad server URL" forever.
    let config = write_config(
        dir.path(),
        "bad-port.json",
        &json!({"mcpServers": {"arcade": {"url": "http://127.0.0.1:87650/mcp"}}}),
    );
    let (code, stderr) = serve_to_the_end(&config, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("server \"arcade\"")
            && stderr.contains("http://127.0.0.1:87650/mcp")
            && stderr.contains("invalid port number"),
        "{stderr}"
    );
    // No scheme: what is expected, and what it probably is.
    let config = write_config(
        dir.path(),
        "no-scheme.json",
        &json!({"mcpServers": {"arcade": {"url": "127.0.0.1:8765"}}}),
    );
    let (code, stderr) = serve_to_the_end(&config, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("\"127.0.0.1:8765\" is not http://, https://, ws:// or wss://")
            && stderr.contains("ws://127.0.0.1:8765?"),
        "{stderr}"
    );
    assert!(!stderr.contains("Stack backtrace"), "{stderr}");
}

#[tokio::test]
async fn issue43_04_b_a_stdio_server_that_exits_at_once_is_said_at_warn_with_its_words() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("arcade-data");
    let data = data.to_str().unwrap();
    // The README's WebSocket arcade, on the data directory the stdio one will want too.
    let mut first = Command::new(arcade())
        .args(["serve", "--ws", "127.0.0.1:0", "--token", "a=s"])
        .args(["--data-dir", data])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    mcpl_testkit::process::listening(&mut first, 1).await;
    let config = write_config(
        dir.path(),
        "surface.json",
        &json!({"mcpServers": {"local": {
            "command": arcade(), "args": ["serve", "--stdio", "--data-dir", data]}}}),
    );
    let mut s = Surface::start(&config, &[]).await;
    s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let line = s
        .said(&["WARN", "stdio server exited by itself", "exit status: 2"])
        .await;
    assert!(
        line.contains("mcpl-state.redb is in use by another process")
            && line.contains(&format!("pid {}", first.id().unwrap()))
            && line.contains("Cannot acquire lock")
            && line.contains("--data-dir DIR")
            && line.contains("--in-memory"),
        "{line}"
    );
    // The client is told why too, not only "the connection closed".
    s.response(1).await;
    let look = text(&s.call(2, "toolsets--look", json!({})).await);
    assert!(
        look.contains("[local]: not connected just now (the connection closed: the server process exited (exit status: 2)")
            && look.contains("is in use by another process")
            && look.contains("--data-dir DIR"),
        "{look}"
    );
}

#[tokio::test]
async fn issue43_04_c_a_command_not_on_the_path_is_named_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "surface.json",
        &json!({"mcpServers": {"local": {"command": "mcpl-no-such-program-43"}}}),
    );
    let mut s = Surface::start(&config, &[("PATH", "/nowhere-43:/usr/bin")]).await;
    s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let line = s.said(&["mcpl-no-such-program-43"]).await;
    assert!(
        line.contains("cannot start the stdio server \"mcpl-no-such-program-43\"")
            && line.contains("PATH=/nowhere-43:/usr/bin"),
        "{line}"
    );
    // And the client is told why too, in the look.
    let look = s.call(2, "toolsets--look", json!({})).await;
    assert!(
        text(&look).contains("mcpl-no-such-program-43"),
        "{}",
        text(&look)
    );
}

#[tokio::test]
async fn issue43_04_d_no_colour_codes_reach_a_stderr_that_is_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "surface.json",
        &json!({"mcpServers": {"local": {"command": "mcpl-no-such-program-43"}}}),
    );
    let mut s = Surface::start(&config, &[]).await;
    s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    // A warning is logged: the failed attempt.
    s.said(&["WARN", "connection attempt failed"]).await;
    assert!(!s.said.contains('\x1b'), "colour codes in {:?}", s.said);
}

#[tokio::test]
async fn issue43_04_e_variables_in_headers_are_expanded_and_an_unset_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, url) = arcade_of_alice_and_bob().await;
    // As Claude Code's `.mcp.json` has it: `${VAR}`, and `${VAR:-default}`.
    let config = write_config(
        dir.path(),
        "surface.json",
        &json!({"mcpServers": {
            "alice": {"type": "http", "url": url,
                      "headers": {"Authorization": "Bearer ${ISSUE43_ALICE_TOKEN}"}},
            "bob": {"type": "http", "url": url,
                    "headers": {"Authorization": "Bearer ${ISSUE43_UNSET:-bob-arcade-secret}"}}
        }}),
    );
    let mut s = Surface::start(&config, &[("ISSUE43_ALICE_TOKEN", "alice-arcade-secret")]).await;
    s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    s.response(1).await;
    let look = text(&s.call(2, "toolsets--look", json!({})).await);
    assert!(
        !look.contains("not connected") && !look.contains("401"),
        "{look}"
    );
    assert!(look.contains("[alice]") && look.contains("[bob]"), "{look}");
    drop(s);

    // Unset, no default: refused at start, naming it (and never sent as it is written).
    let (code, stderr) = serve_to_the_end(&config, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("server \"alice\" headers: ${ISSUE43_ALICE_TOKEN} is not set"),
        "{stderr}"
    );
}

/// Issue #43: the README's surface configuration, as a person copies it from the
/// walkthrough, reads (its `${VAR}`s given as the walkthrough gives them) and names the
/// walkthrough's servers: the WebSocket arcade it started with `--ws 8765`, and the arcade
/// binary cargo builds, found from the repository's root.
#[test]
fn issue43_the_readme_surface_configuration_names_the_walkthroughs_servers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let from = readme
        .find("It is configured with the `mcpServers` JSON")
        .expect("the surface section");
    let start = readme[from..].find("```json").unwrap() + from + "```json".len();
    let end = readme[start..].find("```").unwrap() + start;
    let env = |name: &str| match name {
        "ARCADE_TOKEN" => Some("s3cret".to_owned()),
        "HOME" => Some("/home/alice".to_owned()),
        _ => None,
    };
    let config = mcpl_surface::config::SurfaceConfig::parse_with_env(&readme[start..end], &env)
        .expect("the README's configuration reads");
    config.host_config("alice").expect("alice is configured");
    use mcpl_surface::config::Endpoint;
    let endpoint = |name: &str| {
        &config
            .servers
            .iter()
            .find(|s| s.name == name)
            .expect("the server")
            .endpoint
    };
    assert!(
        matches!(endpoint("arcade"), Endpoint::Remote { url, .. } if url == "ws://127.0.0.1:8765"),
        "{:?}",
        endpoint("arcade")
    );
    assert!(
        matches!(endpoint("local"), Endpoint::Stdio { command, .. } if command == "target/debug/mcpl-arcade"),
        "{:?}",
        endpoint("local")
    );
}

//! The `mcpl-host console` binary end to end: the built binary, spawned, against a scripted
//! server on a real WebSocket. The test writes request lines to its stdin and reads its
//! stdout line by line as the lines come (no sleeps), asserting answers and events.

use crate::support;

use mcpl_testkit::tls::TestCa;
use mcpl_testkit::within;
use mcpl_transport::ServerTls;
use serde_json::{Value, json};
use std::process::Stdio;
use support::server::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

struct Console {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    /// Lines read while waiting for another.
    seen: Vec<Value>,
    /// Its state directory, removed when the console is dropped.
    _state: tempfile::TempDir,
}

impl Console {
    fn spawn(args: &[&str]) -> Console {
        // A state directory of its own: the told ids it keeps are no other test's.
        let state = tempfile::tempdir().expect("a state directory");
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpl-host"))
            // Its default state directory, away from the machine's own.
            .env("XDG_DATA_HOME", state.path())
            .arg("console")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("the binary runs");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Console {
            child,
            stdin,
            stdout,
            seen: Vec::new(),
            _state: state,
        }
    }

    async fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next line that `pick` accepts; the lines before it are kept in `seen`.
    async fn until(&mut self, mut pick: impl FnMut(&Value) -> bool) -> Value {
        loop {
            let line = self
                .stdout
                .next_line()
                .await
                .unwrap()
                .expect("the console ended early");
            let v: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if pick(&v) {
                return v;
            }
            self.seen.push(v);
        }
    }

    async fn answer(&mut self, id: Value) -> Value {
        self.until(|v| v.get("id") == Some(&id)).await
    }

    async fn event_containing(&mut self, text: &str) -> Value {
        if let Some(i) = self.seen.iter().position(|v| {
            v["event"]["text"]
                .as_str()
                .is_some_and(|t| t.contains(text))
        }) {
            return self.seen.remove(i);
        }
        self.until(|v| {
            v["event"]["text"]
                .as_str()
                .is_some_and(|t| t.contains(text))
        })
        .await
    }
}

#[tokio::test]
async fn the_console_plays_the_agent_over_json_lines() {
    within(async {
        let dir = tempfile::tempdir().unwrap();
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let mut console = Console::spawn(&[
            "--server",
            &format!("arcade={}", server.url()),
            "--state-dir",
            dir.path().to_str().unwrap(),
        ]);
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
            .await;
        let e = console.event_containing("Opened [arcade/lobby]").await;
        assert_eq!(e["event"]["kind"], "notice");
        assert_eq!(e["event"]["server"], "arcade");

        console.send(r#"{"id":1,"tools":true}"#).await;
        let tools = console.answer(json!(1)).await;
        let names: Vec<&str> = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["toolsets--open", "toolsets--act", "toolsets--look", "toolsets--close", "arcade--clock"]
        );

        console
            .send(r#"{"id":"open","tool":"toolsets--open","args":{"toolset":"game","instance":"g1"}}"#)
            .await;
        let req = conn.expect_next("toolsets/open").await;
        conn.reply(&req, game_opened("g1", 2)).await;
        let opened = console.answer(json!("open")).await;
        let all: String = opened["result"]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(all.contains("A fresh 9x9 board for g1."), "{opened}");
        assert!(all.contains("Opened [arcade/game:g1]"), "{opened}");
        assert!(all.contains("Usable: play in [arcade/game:g1]"), "{opened}");

        // A push: an event line as it happens, with the change it explains.
        conn.push(100, "e-1", "White played E5.", Some(changes(3, json!([vis("play", Some("g1"), false)]), json!([]))))
            .await;
        let push = console.event_containing("White played E5.").await;
        assert_eq!(push["event"]["kind"], "push");
        assert!(push["event"]["text"].as_str().unwrap().contains("No longer usable: play"), "{push}");

        // Bad lines are answered and the console goes on.
        console.send("this is not json").await;
        let bad = console.until(|v| v.get("error").is_some()).await;
        assert_eq!(bad["id"], Value::Null);
        console.send(r#"{"id":7,"tools":true,"transcript":true}"#).await;
        assert!(console.answer(json!(7)).await["error"].is_string());
        console.send(r#"{"id":8,"tool":"toolsets--act","args":{"tool":"play","args":{"move":"D4"}}}"#).await;
        let refused = console.answer(json!(8)).await;
        assert_eq!(refused["result"]["isError"], true, "{refused}");

        console.send(r#"{"id":9,"transcript":true}"#).await;
        let transcript = console.answer(json!(9)).await;
        let kinds: Vec<&str> = transcript["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["notice", "tool_result", "push", "tool_result"], "{transcript}");
        console.send(r#"{"id":10,"transcript":true}"#).await;
        assert_eq!(console.answer(json!(10)).await["transcript"], json!([]));

        // End of input ends it, cleanly.
        drop(console.stdin);
        let status = console.child.wait().await.unwrap();
        assert!(status.success(), "{status:?}");
    })
    .await;
}

#[tokio::test]
async fn a_token_for_no_server_is_refused_before_anything_starts() {
    // A state directory of its own: the told ids it keeps are no other test's.
    let state = tempfile::tempdir().expect("a state directory");
    let out = Command::new(env!("CARGO_BIN_EXE_mcpl-host"))
        // Its default state directory, away from the machine's own.
        .env("XDG_DATA_HOME", state.path())
        .args([
            "console",
            "--server",
            "arcade=ws://127.0.0.1:9/",
            "--token",
            "other=s3cret",
        ])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--token names \"other\""));
}

#[tokio::test]
async fn the_console_reaches_tls_servers_through_their_ca_file() {
    within(async {
        let dir = tempfile::tempdir().unwrap();
        let ca = TestCa::new("console test CA");
        let files = ca.server_cert(&["localhost"]).write(dir.path(), "server");
        let ca_file = ca.write(dir.path());
        for transport in [Transport::Ws, Transport::Http] {
            let tls = ServerTls::from_pem_files(&files.cert, &files.key).unwrap();
            let mut server = ScriptedServer::bind_tls(transport, Some(tls)).await;
            let mut console = Console::spawn(&[
                "--server",
                &format!("arcade={}", server.url()),
                "--ca-file",
                &format!("arcade={}", ca_file.display()),
            ]);
            let mut conn = server.accept().await;
            conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
                .await;
            let e = console.event_containing("Opened [arcade/lobby]").await;
            assert_eq!(e["event"]["server"], "arcade", "{transport:?}");
            drop(console.stdin);
            let status = console.child.wait().await.unwrap();
            assert!(status.success(), "{transport:?}: {status:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_ca_file_that_is_missing_or_for_no_server_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing-ca.pem");
    let missing = missing.to_str().unwrap();
    for (ca_file, says) in [
        (format!("arcade={missing}"), missing.to_owned()),
        (
            format!("other={missing}"),
            "--ca-file names \"other\"".to_owned(),
        ),
    ] {
        // A state directory of its own: the told ids it keeps are no other test's.
        let state = tempfile::tempdir().expect("a state directory");
        let out = Command::new(env!("CARGO_BIN_EXE_mcpl-host"))
            // Its default state directory, away from the machine's own.
            .env("XDG_DATA_HOME", state.path())
            .args([
                "console",
                "--server",
                "arcade=wss://localhost:9/",
                "--ca-file",
            ])
            .arg(&ca_file)
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{ca_file}");
        assert!(err.contains(&says), "{ca_file}: {err}");
    }
}

//! Issue #36, items 5–9, held from outside: a scripted server (or a raw MCPL server) over a
//! real WebSocket, against the real Host. Each test is named after the item it proves.

use crate::support;

use mcpl_testkit::within;
use mcpl_transport::ClientOptions;
use serde_json::json;
use std::time::Duration;
use support::server::*;

const HOLD: Duration = Duration::from_millis(250);

/// Item 5: a manifest re-read that no longer declares a toolset closes its instances
/// (§4.1, vector 33) — also when the announcement's params are not what SPEC §17.3 shows
/// (a server without §17.2's digest sends no `revision`) — and nothing said afterwards
/// re-opens one: an act naming the instance is refused without reaching the server, and
/// a later statement still reporting it open is not believed.
#[actix::test]
async fn issue36_05_a_manifest_reread_removing_a_toolset_closes_its_instances() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "a", 2).await;
        conn.send(json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
                         "params": {"domains": ["toolsets"]}}))
            .await;
        let req = conn.expect_next("mcpl/manifest").await;
        let mut manifest = arcade_manifest();
        manifest["toolsets"].as_object_mut().unwrap().remove("game");
        conn.reply(&req, manifest).await;
        host.wait_for(|s| s.server("arcade").is_some_and(|a| a.open.len() == 1))
            .await
            .unwrap();
        let t = texts(&host.transcript().await.unwrap());
        assert!(t.contains("Closed [arcade/game:a]"), "{t}");
        let (err, why) = local_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "instance": "a", "args": {"move": "D4"}}),
        )
        .await;
        assert!(err, "{why}");
        nothing_else_was_sent(&host, &mut conn).await;

        // A server that has not caught up still states `a` open: not believed.
        conn.hints(changes(9, json!([]), json!([]))).await; // a gap: the host recovers
        conn.serve_recovery(game_statement("a", 10), &arcade_tools(), 10)
            .await;
        hints_until(&host, |h| h.last_rev == 10 && !h.recovering).await;
        assert_eq!(
            host.status().server("arcade").unwrap().open,
            [("lobby".to_owned(), None)]
        );
        let (err, why) = local_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "instance": "a", "args": {"move": "D4"}}),
        )
        .await;
        assert!(err, "{why}");
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

/// A raw MCPL server over a real WebSocket, and a host linked to it.
async fn raw_rig() -> (mcpl_host::host::HostHandle, mcpl_testkit::ws::Peer) {
    let listener = mcpl_testkit::ws::Listener::bind().await;
    let connector = mcpl_host::link::Connector::url(listener.url(), ClientOptions::default());
    let host = start_host(connector, HOLD, |_| {});
    let mut peer = listener.accept().await;
    support::refuse_the_probe(&mut peer).await;
    (host, peer)
}

/// Item 7: a server request needing a capability the host did not grant (SPEC §5.4: as if
/// never advertised) is refused with §6.6's -32002 naming the capability, not -32601.
#[actix::test]
async fn issue36_07_a_denied_inbound_method_gets_32002_with_the_capability() {
    within(async {
        let (host, mut peer) = raw_rig().await;
        let req = peer.expect_request("initialize").await;
        let manifest = json!({"version": "0.5", "pushEvents": true, "modelInfo": true,
            "featureSets": {"news": {"description": "Headlines", "uses": ["pushEvents"]}}});
        peer.reply(
            &req,
            json!({"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "experimental": {"mcpl": manifest}},
            "serverInfo": {"name": "another-server", "version": "0.1"}}),
        )
        .await;
        peer.expect_request("notifications/initialized").await;
        let policy = peer.expect_request("featureSets/update").await;
        assert_eq!(
            policy["params"]["deniedCapabilities"],
            json!(["modelInfo"]),
            "{policy}"
        );
        peer.reply(&policy, json!({"accepted": true})).await;
        let list = peer.expect_request("tools/list").await;
        peer.reply(&list, json!({"tools": []})).await;
        for (id, method, capability) in [
            ("m1", "model/info", "modelInfo"),
            ("m2", "inference/request", "inferenceRequest"),
            ("m3", "channels/incoming", "channels.incoming"),
        ] {
            peer.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}))
                .await;
            let a = peer
                .next_where(|v| v["id"] == id && v.get("method").is_none())
                .await;
            assert_eq!(a["error"]["code"], -32002, "{a}");
            assert_eq!(a["error"]["data"]["capability"], capability, "{a}");
        }
        // A method no capability gates is still not found.
        peer.send(&json!({"jsonrpc": "2.0", "id": "u1", "method": "no/such", "params": {}}))
            .await;
        let a = peer
            .next_where(|v| v["id"] == "u1" && v.get("method").is_none())
            .await;
        assert_eq!(a["error"]["code"], -32601, "{a}");
        host.stop().await;
    })
    .await;
}

/// An ended record of game `instance`, id `id`.
fn ended_record(id: &str, instance: &str, reason: &str) -> serde_json::Value {
    json!({"id": id, "toolset": "game", "instance": instance, "reason": reason,
           "at": "2026-11-30T12:00:00Z"})
}

/// `mcpl-host console` with no `--state-dir`, its OS data directory pointed at `data`.
fn console(url: &str, data: &std::path::Path) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpl-host"))
        .args(["console", "--server", &format!("arcade={url}")])
        .env("XDG_DATA_HOME", data)
        .env("HOME", data)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary runs")
}

/// The console's stdout lines until one contains `needle`; all of them, joined.
async fn console_until(child: &mut tokio::process::Child, needle: &str) -> String {
    use tokio::io::AsyncBufReadExt;
    let out = child.stdout.as_mut().unwrap();
    let mut lines = tokio::io::BufReader::new(out).lines();
    let mut seen = String::new();
    loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the console ended early");
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(needle) {
            return seen;
        }
    }
}

/// What the console wrote on stderr, once it has ended.
async fn stderr_of(mut child: tokio::process::Child) -> String {
    use tokio::io::AsyncReadExt;
    child.kill().await.unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .await
        .unwrap();
    err
}

/// Item 9: with no state directory given, `mcpl-host` keeps the told ids under the OS
/// data directory, says where at start-up, and a new process does not tell again an end
/// an earlier one told — here of an instance whose name came back (another connection
/// opened a new g1), which without the record of the telling it would take for its own.
#[actix::test]
async fn issue36_09_ended_records_are_not_told_again_by_a_new_host_process() {
    within(async {
        let data = tempfile::tempdir().unwrap();
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let game_open = statement(
            1,
            json!([{"toolset": "lobby"}, {"toolset": "game", "instance": "g1"}]),
            json!([]),
            json!([vis("seek", None, true), vis("play", Some("g1"), true)]),
        );
        let mut first = console(server.url(), data.path());
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(game_open))
            .await;
        console_until(&mut first, "Opened [arcade/game:g1]").await;
        conn.hints(changes(
            2,
            json!([]),
            json!([{"toolset": "game", "instance": "g1", "state": "closed",
                    "reason": "White (bot) wins", "ended": "e-1"}]),
        ))
        .await;
        console_until(&mut first, "Closed [arcade/game:g1]").await;
        // The console is asked something after the close, so the told id has been saved
        // by the time it answers.
        use tokio::io::AsyncWriteExt;
        let stdin = first.stdin.as_mut().unwrap();
        stdin
            .write_all(b"{\"id\":1,\"tools\":true}\n")
            .await
            .unwrap();
        stdin.flush().await.unwrap();
        console_until(&mut first, "\"id\":1").await;
        let err = stderr_of(first).await;
        let dir = data.path().join("mcpl-host");
        assert!(err.contains(&format!("kept in {}", dir.display())), "{err}");
        drop(conn);

        let mut second = console(server.url(), data.path());
        let mut conn = server.accept().await;
        let reopened = statement(
            1,
            json!([{"toolset": "lobby"}, {"toolset": "game", "instance": "g1"}]),
            json!([ended_record("e-1", "g1", "White (bot) wins")]),
            json!([vis("seek", None, true), vis("play", Some("g1"), true)]),
        );
        conn.connect(arcade_init(), arcade_tools(), 0, Some(reopened))
            .await;
        let told = console_until(&mut second, "Opened [arcade/game:g1]").await;
        assert!(
            !told.contains("Ended [arcade/game:g1]"),
            "told again: {told}"
        );
        let stdin = second.stdin.as_mut().unwrap();
        stdin
            .write_all(b"{\"id\":2,\"tools\":true}\n")
            .await
            .unwrap();
        stdin.flush().await.unwrap();
        let told = console_until(&mut second, "\"id\":2").await;
        assert!(
            !told.contains("Ended [arcade/game:g1]"),
            "told again: {told}"
        );
        drop(second);
    })
    .await;
}

/// Item 6: an open entry that does not fit the manifest — a toolset nothing declares, an
/// instanced toolset without an instance, an instance of a toolset without instances — is
/// not believed, and costs only itself: the rest of its message applies.
#[actix::test]
async fn issue36_06_malformed_toolset_entries_are_not_believed() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        conn.hints(changes(
            2,
            json!([vis("play", Some("g3"), true)]),
            json!([
                {"toolset": "ghost", "state": "open"},
                {"toolset": "game", "state": "open"},
                {"toolset": "lobby", "instance": "l2", "state": "open"},
                {"toolset": "game", "instance": "g3", "state": "open"}
            ]),
        ))
        .await;
        let s = host
            .wait_for(|s| s.server("arcade").is_some_and(|a| a.open.len() > 1))
            .await
            .unwrap();
        assert_eq!(
            s.server("arcade").unwrap().open,
            [
                ("game".to_owned(), Some("g3".to_owned())),
                ("lobby".to_owned(), None)
            ]
        );
        let t = texts(&host.transcript().await.unwrap());
        assert!(t.contains("Opened [arcade/game:g3]"), "{t}");
        for wrong in ["ghost", "Opened [arcade/game]", "l2"] {
            assert!(!t.contains(wrong), "{wrong}: {t}");
        }
        let (err, look) = local_call(&host, "toolsets--look", json!({})).await;
        assert!(
            !err && !look.contains("ghost") && look.contains("g3"),
            "{look}"
        );
        // The one instance open is the one `act` finds.
        let call = spawn_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "args": {"move": "D4"}}),
        );
        let req = conn.expect_next("tools/call").await;
        assert_eq!(req["params"]["_meta"], json!({"mcpl/instance": "g3"}));
        conn.reply(&req, json!({"content": [{"type": "text", "text": "ok"}]}))
            .await;
        call.await.unwrap();

        // The same holds for a full statement's records.
        conn.hints(changes(9, json!([]), json!([]))).await; // a gap: the host recovers
        conn.serve_recovery(
            statement(
                10,
                json!([{"toolset": "lobby"}, {"toolset": "ghost"}, {"toolset": "game"},
                       {"toolset": "game", "instance": "g3"}]),
                json!([]),
                json!([vis("seek", None, true), vis("play", Some("g3"), true)]),
            ),
            &arcade_tools(),
            10,
        )
        .await;
        let h = hints_until(&host, |h| h.last_rev == 10 && !h.recovering).await;
        assert_eq!(h.last_rev, 10);
        let s = host.status();
        assert_eq!(
            s.server("arcade").unwrap().open,
            [
                ("game".to_owned(), Some("g3".to_owned())),
                ("lobby".to_owned(), None)
            ]
        );
        let t = texts(&host.transcript().await.unwrap());
        assert!(
            !t.contains("ghost") && !t.contains("Opened [arcade/game]"),
            "{t}"
        );
        host.stop().await;
    })
    .await;
}

/// Item 8: a finished game stays readable. The server keeps its record and answers its
/// read-only tools (`readOnlyHint`) with its last view (§4.3, this project's reading), so
/// the host lets such a call through — named, or with none open and none named — instead
/// of advising a re-open; a tool that would change it is refused saying what still
/// answers, with no advice to open it again (which would start a new game under the
/// finished one's name).
#[actix::test]
async fn issue36_08_a_finished_games_board_can_be_read() {
    within(async {
        let mut tools = arcade_tools();
        let mut board = listed(
            "board",
            json!({"mcpl/toolset": "game"}),
            json!({"type": "object"}),
        );
        board["annotations"] = json!({"readOnlyHint": true});
        tools.as_array_mut().unwrap().push(board);
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(ClientOptions::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), tools, 0, Some(lobby_statement(1)))
            .await;
        settled(&host, 1, 1, 7).await;
        open_game(&host, &mut conn, "g1", 2).await;
        conn.hints(changes(
            3,
            json!([]),
            json!([{"toolset": "game", "instance": "g1", "state": "closed",
                    "reason": "White (bot) wins", "ended": "e-1"}]),
        ))
        .await;
        hints_until(&host, |h| h.last_rev == 3).await;

        for args in [
            json!({"tool": "board", "instance": "g1"}),
            json!({"tool": "board"}),
        ] {
            let call = spawn_call(&host, "toolsets--act", args);
            let req = conn.expect_next("tools/call").await;
            assert_eq!(req["params"]["name"], "board");
            assert_eq!(req["params"]["_meta"], json!({"mcpl/instance": "g1"}));
            conn.reply(
                &req,
                json!({"content": [{"type": "text", "text": "Final position of g1: White wins."}]}),
            )
            .await;
            let r = call.await.unwrap();
            assert!(!r.is_error, "{r:?}");
            assert!(r.joined_text().contains("Final position of g1"), "{r:?}");
        }

        let (err, why) = local_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "instance": "g1", "args": {"move": "D4"}}),
        )
        .await;
        assert!(err, "{why}");
        assert!(why.contains("[arcade/game:g1] has ended"), "{why}");
        assert!(
            why.contains("White (bot) wins") && why.contains("board"),
            "{why}"
        );
        assert!(
            !why.contains("toolsets--open"),
            "no re-open is suggested: {why}"
        );

        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

/// The arcade, in this process on its own thread, serving WebSocket on a free port to
/// anyone (each connection its own principal); its URL.
fn arcade() -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        actix::System::new().block_on(async move {
            use mcpl_games::arcade::{Arcade, ArcadeConfig, listen};
            let arcade = Arcade::new(ArcadeConfig::default()).expect("the arcade builds");
            let opts = std::sync::Arc::new(mcpl_transport::ServerOptions {
                allow_anonymous: true,
                ws_ping_interval: None,
                ..Default::default()
            });
            let l = listen::ws(&arcade, "127.0.0.1:0".parse().unwrap(), opts)
                .await
                .expect("a port");
            tx.send(format!("ws://{}/mcp", l.local_addr())).unwrap();
            std::future::pending::<()>().await;
        });
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the arcade listens")
}

/// Item 8 against the real arcade: a resigned tic-tac-toe game's board is read through
/// the host after the end, named or not, and a move in it is refused without advising a
/// re-open.
#[actix::test]
async fn issue36_08_the_arcades_finished_board_is_read_through_the_host() {
    within(async {
        let url = arcade();
        let host = mcpl_host::host::Host::start(mcpl_host::host::HostConfig::new(vec![
            mcpl_host::host::ServerConfig::url_with("arcade", url, ClientOptions::default()),
        ]))
        .unwrap();
        host.wait_for(|s| {
            s.server("arcade")
                .is_some_and(|a| a.ready && a.hints.as_ref().is_some_and(|h| !h.connecting))
        })
        .await
        .unwrap();
        let ok = |r: mcpl_protocol::CallToolResult| {
            assert!(!r.is_error, "{r:?}");
            r.joined_text()
        };
        ok(host
            .call(
                "toolsets--open",
                json!({"toolset": "tictactoe", "instance": "t1"}),
            )
            .await
            .unwrap());
        ok(host
            .call(
                "toolsets--act",
                json!({"tool": "tictactoe_resign", "instance": "t1"}),
            )
            .await
            .unwrap());
        host.wait_for(|s| s.server("arcade").is_some_and(|a| a.open.len() == 1))
            .await
            .unwrap();
        for args in [
            json!({"tool": "tictactoe_board", "instance": "t1"}),
            json!({"tool": "tictactoe_board"}),
        ] {
            let text = ok(host.call("toolsets--act", args).await.unwrap());
            assert!(text.contains("resign"), "{text}");
        }
        let r = host
            .call(
                "toolsets--act",
                json!({"tool": "tictactoe_play", "instance": "t1", "args": {"move": "a1"}}),
            )
            .await
            .unwrap();
        assert!(r.is_error, "{r:?}");
        assert!(
            !r.joined_text().contains("toolsets--open"),
            "{}",
            r.joined_text()
        );
        host.stop().await;
    })
    .await;
}

//! Host-side conformance vectors of §4 (toolsets: instances in calls, adoption after a
//! reconnect, undeclared groups, ended records, full statements, manifest removals), each
//! driven by a scripted server over a real WebSocket.

use crate::support;

use mcpl_host::host::ShownKind;
use mcpl_testkit::within;
use mcpl_transport::ClientOptions;
use serde_json::json;
use std::time::Duration;
use support::server::*;

const HOLD: Duration = Duration::from_millis(250);

#[actix::test]
async fn vector_06_a_call_with_two_instances_open_and_none_named_fails_naming_them() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        open_game(&host, &mut conn, "g2", 3).await;
        let (err, why) = local_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "args": {"move": "D4"}}),
        )
        .await;
        assert!(err, "{why}");
        assert!(
            why.contains("several instances of [arcade/game] are open (g1, g2)"),
            "{why}"
        );
        nothing_else_was_sent(&host, &mut conn).await;
        assert_eq!(conn.count("tools/call"), 1, "only the clock");

        // Named, it goes to that one.
        let call = spawn_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "instance": "g2", "args": {"move": "D4"}}),
        );
        let req = conn.expect_next("tools/call").await;
        assert_eq!(req["params"]["_meta"], json!({"mcpl/instance": "g2"}));
        conn.reply(
            &req,
            json!({"content": [{"type": "text", "text": "Black D4 in g2."}]}),
        )
        .await;
        assert!(
            call.await
                .unwrap()
                .joined_text()
                .contains("Black D4 in g2.")
        );
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_09_after_a_reconnect_an_instance_the_server_kept_is_adopted_not_reopened() {
    within(async {
        let (mut server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        assert_eq!(conn.count("toolsets/open"), 1);
        host.transcript().await.unwrap();

        drop(conn); // the connection drops; the server keeps g1
        let mut conn = server.accept().await;
        let kept = game_statement("g1", 1);
        conn.connect(arcade_init(), arcade_tools(), 1, Some(kept))
            .await;
        settled(&host, 2, 1, 6).await;

        // Used as it was, with no open sent on the new connection.
        let call = spawn_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "args": {"move": "Q16"}}),
        );
        let req = conn.next_request().await;
        assert_eq!(
            req["method"], "tools/call",
            "nothing is opened again: {req}"
        );
        assert_eq!(req["params"]["_meta"], json!({"mcpl/instance": "g1"}));
        conn.reply(
            &req,
            json!({"content": [{"type": "text", "text": "Black Q16."}]}),
        )
        .await;
        call.await.unwrap();
        assert_eq!(conn.count("toolsets/open"), 0);
        let t = texts(&host.transcript().await.unwrap());
        assert!(
            !t.contains("Opened [arcade/game:g1]"),
            "adoption tells nothing twice: {t}"
        );
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_10_an_undeclared_group_is_opened_by_the_host_alone_and_gates_its_tools() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(ClientOptions::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        let stmt = statement(
            1,
            json!([{"toolset": "lobby"}]),
            json!([]),
            json!([vis("scratch", None, true)]),
        );
        conn.connect(arcade_init(), arcade_tools(), 0, Some(stmt))
            .await;
        settled(&host, 1, 1, 6).await;

        let (err, why) = local_call(&host, "toolsets--act", json!({"tool": "scratch"})).await;
        assert!(
            err && why.contains("scratch belongs to [arcade/notes], which is closed"),
            "{why}"
        );
        let (err, why) = local_call(&host, "toolsets--open", json!({"toolset": "notes"})).await;
        assert!(!err && why.contains("Opened [arcade/notes]"), "{why}");
        assert!(why.contains("nothing was sent to arcade"), "{why}");
        let open = |host: &mcpl_host::host::HostHandle| {
            host.status().server("arcade").unwrap().open.clone()
        };
        assert!(
            open(&host).contains(&("notes".to_owned(), None)),
            "the host holds the group open"
        );

        // Open: the call goes through, and nothing was sent before it.
        let call = spawn_call(
            &host,
            "toolsets--act",
            json!({"tool": "scratch", "args": {"text": "hi"}}),
        );
        let req = conn.next_request().await;
        assert_eq!(
            (req["method"].as_str(), req["params"]["name"].as_str()),
            (Some("tools/call"), Some("scratch"))
        );
        assert!(
            req["params"].get("_meta").is_none(),
            "groups have no instances: {req}"
        );
        conn.reply(
            &req,
            json!({"content": [{"type": "text", "text": "noted"}]}),
        )
        .await;
        assert_eq!(
            call.await.unwrap().joined_text(),
            "scratch in [arcade/notes] answered (from arcade):\nnoted"
        );

        let (err, _) = local_call(&host, "toolsets--close", json!({"toolset": "notes"})).await;
        assert!(!err);
        assert!(
            !open(&host).contains(&("notes".to_owned(), None)),
            "the host closed the group"
        );
        let (err, why) = local_call(&host, "toolsets--act", json!({"tool": "scratch"})).await;
        assert!(err && why.contains("which is closed"), "{why}");
        nothing_else_was_sent(&host, &mut conn).await;
        assert_eq!(
            (conn.count("toolsets/open"), conn.count("toolsets/close")),
            (0, 0)
        );
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_13_an_ended_record_is_told_once_across_reconnects_and_a_host_restart() {
    within(async {
        let dir = tempfile::tempdir().unwrap();
        let e1 = json!({"id": "e-1", "toolset": "game", "instance": "g0",
                        "reason": "White won by 3.5", "at": "2026-11-30T12:00:00Z"});
        let e2 = json!({"id": "e-2", "toolset": "game", "instance": "g9",
                        "reason": "Black resigned", "at": "2026-11-30T12:05:00Z"});
        let with_ended = |ended: serde_json::Value| {
            statement(
                1,
                json!([{"toolset": "lobby"}]),
                ended,
                json!([vis("seek", None, true)]),
            )
        };
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host_in(
            server.connector(ClientOptions::default()),
            HOLD,
            Some(dir.path()),
            |_| {},
        );
        let mut conn = server.accept().await;
        conn.connect(
            arcade_init(),
            arcade_tools(),
            0,
            Some(with_ended(json!([e1.clone()]))),
        )
        .await;
        settled(&host, 1, 1, 6).await;
        let t = texts(&host.transcript().await.unwrap());
        assert_eq!(t.matches("Ended [arcade/game:g0]").count(), 1, "{t}");
        assert!(t.contains("\"White won by 3.5\" (from arcade)"), "{t}");

        // A reconnect reports it again: not told again.
        drop(conn);
        let mut conn = server.accept().await;
        conn.connect(
            arcade_init(),
            arcade_tools(),
            0,
            Some(with_ended(json!([e1.clone()]))),
        )
        .await;
        settled(&host, 2, 1, 6).await;
        let t = texts(&host.transcript().await.unwrap());
        assert!(!t.contains("Ended [arcade/game:g0]"), "{t}");
        host.stop().await;
        drop(conn);

        // A new host on the same state directory: e-1 stays told; e-2 is news.
        let host = start_host_in(
            server.connector(ClientOptions::default()),
            HOLD,
            Some(dir.path()),
            |_| {},
        );
        let mut conn = server.accept().await;
        conn.connect(
            arcade_init(),
            arcade_tools(),
            0,
            Some(with_ended(json!([e1, e2]))),
        )
        .await;
        settled(&host, 1, 1, 6).await;
        let shown = host.transcript().await.unwrap();
        let t = texts(&shown);
        assert!(!t.contains("Ended [arcade/game:g0]"), "{t}");
        assert_eq!(t.matches("Ended [arcade/game:g9]").count(), 1, "{t}");
        assert!(shown.iter().all(|s| s.kind == ShownKind::Notice));
        host.stop().await;
    })
    .await;
}

/// The agent has g1 open with play and resign usable; a gap makes the host recover, and the
/// recovery's statement is `stated`.
async fn recover_into(
    stated: serde_json::Value,
) -> (ScriptedServer, mcpl_host::host::HostHandle, Conn, String) {
    let (server, host, mut conn) = connected(Transport::Ws, HOLD).await;
    open_game(&host, &mut conn, "g1", 2).await;
    host.transcript().await.unwrap();
    conn.hints(changes(4, json!([]), json!([]))).await;
    conn.serve_recovery(stated, &arcade_tools(), 5).await;
    hints_until(&host, |h| h.last_rev == 5 && !h.recovering).await;
    let t = texts(&host.transcript().await.unwrap());
    (server, host, conn, t)
}

#[actix::test]
async fn vector_23_a_statement_is_full_and_a_tool_it_does_not_state_visible_is_invisible() {
    within(async {
        let stated = statement(
            5,
            json!([{"toolset": "lobby"}, {"toolset": "game", "instance": "g1"}]),
            json!([]),
            json!([
                vis("seek", None, true),
                vis("roam", None, true),
                vis("resign", Some("g1"), true)
            ]),
        );
        let (_server, host, mut conn, t) = recover_into(stated).await;
        assert!(
            t.contains("No longer usable: play in [arcade/game:g1]."),
            "{t}"
        );
        assert!(!t.contains("resign"), "resign did not change: {t}");
        // The host's state: what the statement leaves out is invisible, what it states
        // visible stays so.
        assert!(
            !visible(&host, "play", Some("g1")).await,
            "play is still visible"
        );
        assert!(visible(&host, "resign", Some("g1")).await);
        assert!(visible(&host, "seek", None).await && visible(&host, "roam", None).await);
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_38_a_statement_with_nothing_visible_clears_what_the_host_believed_visible() {
    within(async {
        let stated = statement(
            5,
            json!([{"toolset": "lobby"}, {"toolset": "game", "instance": "g1"}]),
            json!([]),
            json!([]),
        );
        let (_server, host, _conn, t) = recover_into(stated).await;
        for line in [
            "No longer usable: seek in [arcade/lobby].",
            "No longer usable: roam in [arcade].",
            "No longer usable: play in [arcade/game:g1].",
            "No longer usable: resign in [arcade/game:g1].",
        ] {
            assert!(t.contains(line), "{line} missing: {t}");
        }
        for (tool, instance) in [
            ("seek", None),
            ("roam", None),
            ("play", Some("g1")),
            ("resign", Some("g1")),
        ] {
            assert!(
                !visible(&host, tool, instance).await,
                "{tool} is still visible"
            );
        }
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_33_a_manifest_change_removing_a_toolset_closes_its_instances_and_tells_the_agent() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        open_game(&host, &mut conn, "g2", 3).await;
        host.transcript().await.unwrap();
        conn.send(json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
                         "params": {"revision": "r2", "domains": ["toolsets"]}}))
            .await;
        let req = conn.expect_next("mcpl/manifest").await;
        let mut manifest = arcade_manifest();
        manifest["toolsets"].as_object_mut().unwrap().remove("game");
        conn.reply(&req, manifest).await;
        let s = host
            .wait_for(|s| s.server("arcade").is_some_and(|a| a.open.len() == 1))
            .await
            .unwrap();
        assert_eq!(
            s.server("arcade").unwrap().open,
            [("lobby".to_owned(), None)]
        );
        let t = texts(&host.transcript().await.unwrap());
        assert!(
            t.contains("Closed [arcade/game:g1]: arcade no longer declares game."),
            "{t}"
        );
        assert!(
            t.contains("Closed [arcade/game:g2]: arcade no longer declares game."),
            "{t}"
        );
        // Its tools now form a group the host has not opened: gated, nothing sent.
        let (err, why) = local_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "args": {"move": "D4"}}),
        )
        .await;
        assert!(err && why.contains("which is closed"), "{why}");
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

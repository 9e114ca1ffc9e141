//! The Host end to end over a real WebSocket: connect and settle, the model's tool list,
//! a game opened and played through the meta-tools, the transcript, a server that is down
//! answering with a clear tool error (not a hang), reminders, `list_changed` as a
//! boundary, and a failed recovery read tried again.

use crate::support;

use mcpl_host::host::{Host, HostConfig, HostError, ServerConfig, ShownKind};
use mcpl_testkit::within;
use serde_json::json;
use std::time::Duration;
use support::server::*;

const HOLD: Duration = Duration::from_millis(250);

#[actix::test]
async fn a_game_is_opened_and_played_through_the_meta_tools() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(Default::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
            .await;
        settled(&host, 1, 1, 6).await;

        let names: Vec<String> = host.tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            ["toolsets--open", "toolsets--act", "toolsets--look", "toolsets--close", "arcade--clock"]
        );
        let shown = host.transcript().await.unwrap();
        let t = texts(&shown);
        assert!(t.contains("Opened [arcade/lobby]"), "{t}");
        assert!(shown.iter().all(|s| s.kind == ShownKind::Notice), "{shown:?}");

        let open = tokio::spawn({
            let host = host.clone();
            async move { host.call("toolsets--open", json!({"toolset": "game", "options": {"size": 9}})).await }
        });
        let req = conn.expect_next("toolsets/open").await;
        assert_eq!(
            req["params"],
            json!({"toolset": "game", "instance": "game-1", "options": {"size": 9}})
        );
        conn.reply(&req, game_opened("game-1", 2)).await;
        let r = open.await.unwrap().unwrap();
        assert!(!r.is_error, "{r:?}");
        let t = r.joined_text();
        assert!(t.contains("A fresh 9x9 board for game-1."), "{t}");
        assert!(t.contains("Usable: play"), "the change rides on the result: {t}");

        let act = tokio::spawn({
            let host = host.clone();
            async move { host.call("toolsets--act", json!({"tool": "play", "args": {"move": "D4"}})).await }
        });
        let req = conn.expect_next("tools/call").await;
        assert_eq!(
            req["params"],
            json!({"name": "play", "arguments": {"move": "D4"}, "_meta": {"mcpl/instance": "game-1"}})
        );
        conn.reply(&req, json!({"content": [{"type": "text", "text": "Black D4. White E5."}]}))
            .await;
        let r = act.await.unwrap().unwrap();
        assert!(r.joined_text().contains("Black D4. White E5."), "{r:?}");

        let shown = host.transcript().await.unwrap();
        let kinds: Vec<ShownKind> = shown.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, [ShownKind::ToolResult, ShownKind::ToolResult]);
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn a_call_to_a_server_that_is_down_is_a_clear_tool_error() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        // No reconnect within the test: its port may be another test's by then.
        let host = start_host(server.connector(Default::default()), HOLD, |s| {
            s.link.backoff.initial = Duration::from_secs(3600);
            s.link.backoff.max = Duration::from_secs(3600);
        });
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
            .await;
        settled(&host, 1, 1, 6).await;
        drop(conn);
        drop(server);
        host.wait_for(|s| s.server("arcade").is_some_and(|a| !a.ready))
            .await
            .unwrap();

        let r = host.call("arcade--clock", json!({})).await.unwrap();
        assert!(r.is_error);
        assert!(r.joined_text().contains("arcade is not reachable"), "{r:?}");
        let r = host
            .call("toolsets--act", json!({"tool": "roam"}))
            .await
            .unwrap();
        assert!(r.is_error);
        assert!(
            r.joined_text()
                .contains("arcade is not connected right now"),
            "{r:?}"
        );
        let (_, look) = local_call(&host, "toolsets--look", json!({})).await;
        assert!(
            look.contains("(from arcade): not connected just now"),
            "{look}"
        );
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn a_bad_or_repeated_server_name_is_refused_at_start() {
    let bad = HostConfig::new(vec![ServerConfig::url(
        "ar/cade",
        "ws://127.0.0.1:1/",
        None,
    )]);
    assert!(matches!(
        Host::start(bad),
        Err(HostError::BadServerName { .. })
    ));
    let twice = HostConfig::new(vec![
        ServerConfig::url("arcade", "ws://127.0.0.1:1/", None),
        ServerConfig::url("arcade", "ws://127.0.0.1:2/", None),
    ]);
    assert!(matches!(
        Host::start(twice),
        Err(HostError::DuplicateServer { .. })
    ));
}

#[actix::test]
async fn a_reminder_restates_what_is_open_once_its_announcement_left_the_context() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        assert_eq!(
            host.start_turn().await.unwrap(),
            None,
            "the announcement is in view"
        );
        host.compact().await.unwrap();
        let r = host.start_turn().await.unwrap().expect("a reminder is due");
        assert_eq!(r.kind, ShownKind::Reminder);
        assert!(
            r.text.contains("[arcade/game:g1]") && r.text.contains("play"),
            "{}",
            r.text
        );
        assert_eq!(host.start_turn().await.unwrap(), None, "reminded once");
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn list_changed_is_a_tool_list_boundary() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        conn.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
            .await;
        let list = conn.expect_next("tools/list").await;
        let mut tools = arcade_tools();
        tools
            .as_array_mut()
            .unwrap()
            .push(listed("score", json!({}), json!({"type": "object"})));
        conn.reply(&list, tools_page(&tools, 1)).await;
        let names = |t: Vec<mcpl_protocol::Tool>| t.into_iter().map(|t| t.name).collect::<Vec<_>>();
        host.wait_for(|s| s.server("arcade").is_some_and(|a| a.listed_tools == 7))
            .await
            .unwrap();
        assert!(names(host.tools().await.unwrap()).contains(&"arcade--score".to_owned()));
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn a_recovery_read_the_server_refuses_is_tried_again() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        conn.hints(changes(3, json!([]), json!([]))).await;
        let stmt = conn.expect_next("toolsets/list").await;
        conn.send(json!({"jsonrpc": "2.0", "id": stmt["id"],
                         "error": {"code": -32603, "message": "busy"}}))
            .await;
        conn.serve_recovery(lobby_statement(4), &arcade_tools(), 4)
            .await;
        let h = hints_until(&host, |h| h.last_rev == 4 && !h.recovering).await;
        // One recovery; its first read failed and was made again (counted apart, #42).
        assert_eq!(
            (h.stats.recoveries, h.stats.reads_failed),
            (1, 1),
            "the first read failed: {h:?}"
        );
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn a_first_tools_list_that_fails_is_tried_again_until_the_host_settles() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(Default::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        conn.handshake(arcade_init()).await;
        let (mut failed, mut listed, mut stated) = (false, false, false);
        while !(listed && stated) {
            let m = conn.next_non_notification().await;
            match m["method"].as_str() {
                Some("tools/list") if !failed => {
                    conn.send(json!({"jsonrpc": "2.0", "id": m["id"],
                                     "error": {"code": -32603, "message": "busy"}}))
                        .await;
                    failed = true;
                }
                Some("tools/list") => {
                    conn.reply(&m, tools_page(&arcade_tools(), 0)).await;
                    listed = true;
                }
                Some("toolsets/list") => {
                    conn.reply(&m, lobby_statement(1)).await;
                    stated = true;
                }
                _ => panic!("unexpected at connect: {m}"),
            }
        }
        // Without its first listing nothing is settled: the link lists again by itself.
        settled(&host, 1, 1, 6).await;
        assert_eq!(conn.count("tools/list"), 2);
        host.stop().await;
    })
    .await;
}

/// §4.3: nothing is settled before a connection has read its first statement, even when
/// the first read failed. Before, the failed read made the empty state look settled and
/// the agent was told its open game closed ("it is no longer open"), then opened again
/// (the simulator's agents gave such games up after a server restart).
#[actix::test]
async fn a_reconnect_whose_first_statement_read_fails_tells_the_agent_nothing_closed() {
    within(async {
        let (mut server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        drop(conn);

        let mut conn = server.accept().await;
        conn.handshake(arcade_init()).await;
        let still_open = game_statement("g1", 1);
        let (mut refused, mut listed, mut stated) = (false, false, false);
        while !(listed && stated) {
            let m = conn.next_non_notification().await;
            match m["method"].as_str() {
                Some("tools/list") => {
                    conn.reply(&m, tools_page(&arcade_tools(), 0)).await;
                    listed = true;
                }
                Some("toolsets/list") if !refused => {
                    conn.send(json!({"jsonrpc": "2.0", "id": m["id"],
                                     "error": {"code": -32603, "message": "busy"}}))
                        .await;
                    refused = true;
                }
                Some("toolsets/list") => {
                    conn.reply(&m, still_open.clone()).await;
                    stated = true;
                }
                _ => panic!("unexpected at connect: {m}"),
            }
        }
        // The statement is read (whatever the host then does about its state).
        host.wait_for(|s| {
            s.server("arcade")
                .is_some_and(|a| a.epoch == 2 && a.hints.as_ref().is_some_and(|h| h.last_rev == 1))
        })
        .await
        .unwrap();
        let t = texts(&host.transcript().await.unwrap());
        assert!(!t.contains("no longer open"), "no close was told: {t}");
        // A connect-time read, not a recovery: no tools/list follows it.
        settled(&host, 2, 1, 6).await;
        assert_eq!(
            conn.count("toolsets/list"),
            2,
            "the failed read was tried again"
        );
        assert!(is_usable(&host, "play").await, "g1 is still played");
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn a_call_whose_answer_was_lost_on_streamable_http_starts_a_recovery() {
    // §5.2 [project]: the server may have carried the call out and stamped a rev on its
    // answer; nothing later on a quiet connection would show the gap, so the host reads
    // the state at once.
    within(async {
        let (_server, host, mut conn) = connected(Transport::Http, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        let call = spawn_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "instance": "g1", "args": {"move": "D4"}}),
        );
        let req = conn.expect_next("tools/call").await;
        conn.send(json!({"jsonrpc": "2.0", "id": req["id"],
                         "error": {"code": -32000, "message": "Streamable HTTP: the POST failed"}}))
            .await;
        let r = call.await.unwrap();
        assert!(r.is_error, "{r:?}");
        // The move was made: play is no longer visible in g1 (rev 3 was the lost answer's).
        let after = statement(
            4,
            json!([{"toolset": "lobby"}, {"toolset": "game", "instance": "g1"}]),
            json!([]),
            json!([
                vis("seek", None, true),
                vis("roam", None, true),
                vis("resign", Some("g1"), true)
            ]),
        );
        conn.serve_recovery(after, &arcade_tools(), 4).await;
        let h = hints_until(&host, |h| h.last_rev == 4 && !h.recovering).await;
        assert_eq!(h.stats.recoveries, 1, "{h:?}");
        assert!(!is_usable(&host, "play").await);
        host.stop().await;
    })
    .await;
}

/// Issue #36 item 16 (§5.2 [project]): the answer to an open is lost (its Streamable HTTP
/// POST cut), but the server opened the game. Until the recovery's statement is read the
/// host does not know that, so a look made then waits for the statement and reports the
/// game open — not the old state, which would tell the agent nothing is open there.
#[actix::test]
async fn issue36_16_a_look_right_after_a_lost_answer_reports_what_the_recovery_states() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Http, HOLD).await;
        let open = spawn_call(
            &host,
            "toolsets--open",
            json!({"toolset": "game", "instance": "g1"}),
        );
        let req = conn.expect_next("toolsets/open").await;
        conn.send(json!({"jsonrpc": "2.0", "id": req["id"],
                         "error": {"code": -32000, "message": "Streamable HTTP: the POST failed"}}))
            .await;
        assert!(open.await.unwrap().is_error);
        let stmt = conn.next_request().await;
        assert_eq!(stmt["method"], "toolsets/list", "the recovery's read");

        let mut look = spawn_call(&host, "toolsets--look", json!({}));
        tokio::select! {
            r = &mut look => panic!(
                "the look did not wait for the recovery's statement: {}",
                r.unwrap().joined_text()
            ),
            s = host.wait_for(|s| s.calls_waiting == 1) => { s.unwrap(); }
        }
        conn.reply(&stmt, game_statement("g1", 2)).await;
        let look = look.await.unwrap();
        assert!(!look.is_error, "{look:?}");
        assert!(look.joined_text().contains("g1"), "{}", look.joined_text());
        let list = conn.next_request().await;
        assert_eq!(
            list["method"], "tools/list",
            "then the recovery's tools/list"
        );
        conn.reply(&list, tools_page(&arcade_tools(), 2)).await;
        hints_until(&host, |h| h.last_rev == 2 && !h.recovering).await;
        host.stop().await;
    })
    .await;
}

/// MCP 2025-11-25 tasks: this host does not run them, so a tool only a task can call is
/// left out of the agent's tools, and the agent is told which and why (README).
#[actix::test]
async fn a_tool_that_needs_mcp_tasks_is_left_out_and_the_agent_is_told_why() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(Default::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        let tools = json!([
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "slow", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "required"}},
            {"name": "either", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "optional"}}
        ]);
        conn.connect(init_with(None), tools, 0, None).await;
        host.wait_for(|s| {
            s.server("arcade")
                .is_some_and(|a| a.ready && a.listed_tools == 2)
        })
        .await
        .unwrap();
        let names: Vec<String> = host
            .tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["arcade--echo", "arcade--either"]);
        let shown = host.transcript().await.unwrap();
        let t = texts(&shown);
        assert!(
            t.contains("arcade: left out of your tools: `slow` — they can only run as MCP tasks"),
            "{t}"
        );
        assert_eq!(t.matches("MCP tasks").count(), 1, "{t}");
        let r = host.call("arcade--slow", json!({})).await;
        assert!(
            r.as_ref().is_err() || r.as_ref().is_ok_and(|r| r.is_error),
            "a tool left out cannot be called: {r:?}"
        );
        // A new list: a newly left-out tool is told; one told before and still left out is
        // not told again, and one the list no longer leaves out is forgotten (told again
        // when it comes back), so what is remembered is never more than one list.
        let relist = async |conn: &mut Conn, tools: serde_json::Value, listed: usize| {
            conn.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
                .await;
            let list = conn.expect_next("tools/list").await;
            conn.reply(&list, json!({"tools": tools})).await;
            host.wait_for(|s| s.server("arcade").is_some_and(|a| a.listed_tools == listed))
                .await
                .unwrap();
        };
        let task = |name: &str| {
            json!({"name": name, "inputSchema": {"type": "object"},
                   "execution": {"taskSupport": "required"}})
        };
        let plain = |name: &str| json!({"name": name, "inputSchema": {"type": "object"}});
        // Each list offers a different number of tools than the one before, so the wait
        // sees each one read.
        relist(
            &mut conn,
            json!([plain("echo"), task("slow"), task("slower")]),
            1,
        )
        .await;
        relist(
            &mut conn,
            json!([plain("echo"), plain("either"), task("slower")]),
            2,
        )
        .await;
        relist(&mut conn, json!([plain("echo"), task("slow")]), 1).await;
        // What was shown since the first notice: `slower` when first left out (`slow`,
        // still left out, not again), nothing for the second list, `slow` on its return.
        let t = texts(&host.transcript().await.unwrap());
        assert_eq!(t.matches("MCP tasks").count(), 2, "{t}");
        assert_eq!(t.matches("`slow`").count(), 1, "{t}");
        assert_eq!(t.matches("`slower`").count(), 1, "{t}");
        assert!(t.find("`slower`") < t.find("`slow`"), "{t}");
        host.stop().await;
    })
    .await;
}

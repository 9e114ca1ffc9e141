//! Issue #36 items 1, 2 and 4, from outside: a scripted server over a real WebSocket on
//! 127.0.0.1 writes the JSON another implementation would (a name listed twice, an
//! `eventId` reused after a restart, revs written as doubles), and each test asserts what
//! the host sent back, what the model's tool list holds and what the agent was shown.
//! (Item 3, the bytes a long `eventId` costs, is `issue36_event_id_bytes.rs`: it counts
//! allocations, which takes a test binary of its own.)

use crate::support;

use mcpl_host::host::{Host, HostConfig, HostError, ServerConfig, ShownKind};
use mcpl_testkit::msg;
use mcpl_testkit::within;
use serde_json::{Value, json};
use std::time::Duration;
use support::server::*;

const HOLD: Duration = Duration::from_millis(250);

/// The arcade's tools with `clock` listed a second time (another description, another
/// schema): what a server with two handlers registered under one name lists.
fn tools_with_clock_twice() -> Value {
    let mut tools = arcade_tools();
    tools.as_array_mut().unwrap().push(json!({
        "name": "clock", "description": "a second clock",
        "inputSchema": {"type": "object", "properties": {"zone": {"type": "string"}}}
    }));
    tools
}

#[actix::test]
async fn issue36_01_a_tool_listed_twice_is_in_the_model_s_list_once_and_the_agent_is_told() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(Default::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        conn.connect(
            arcade_init(),
            tools_with_clock_twice(),
            0,
            Some(lobby_statement(1)),
        )
        .await;
        settled(&host, 1, 1, 6).await;
        let tools = host.tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a name twice: {names:?}");
        let clock: Vec<_> = tools.iter().filter(|t| t.name == "arcade--clock").collect();
        assert_eq!(clock.len(), 1, "{names:?}");
        assert_eq!(
            clock[0].description.as_deref(),
            Some("the clock tool"),
            "the first entry is the one offered"
        );
        let shown = host.transcript().await.unwrap();
        let notices: Vec<&str> = shown
            .iter()
            .filter(|s| s.kind == ShownKind::Notice && s.text.contains("more than once"))
            .map(|s| s.text.as_str())
            .collect();
        assert_eq!(notices.len(), 1, "{}", texts(&shown));
        assert!(notices[0].contains("`clock`"), "{}", notices[0]);
        // The same list read again (a recovery, a list_changed) is not told again.
        conn.send(msg::notification(
            "notifications/tools/list_changed",
            json!({}),
        ))
        .await;
        let list = conn.expect_next("tools/list").await;
        conn.reply(&list, tools_page(&tools_with_clock_twice(), 1))
            .await;
        nothing_else_was_sent(&host, &mut conn).await;
        // (The transcript holds what was shown since it was last taken.)
        let shown = host.transcript().await.unwrap();
        assert!(
            !shown.iter().any(|s| s.text.contains("more than once")),
            "{}",
            texts(&shown)
        );
        assert_eq!(host.tools().await.unwrap().len(), tools.len());
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn issue36_01_server_names_whose_tool_names_could_collide_are_refused_at_start() {
    let start = |names: &[&str]| {
        Host::start(HostConfig::new(
            names
                .iter()
                .map(|n| ServerConfig::url(*n, "ws://127.0.0.1:1/", None))
                .collect(),
        ))
    };
    // `toolsets` with a tool `open` would give a second `toolsets--open`.
    assert!(
        matches!(start(&["toolsets"]), Err(HostError::CollidingServerName { name, .. }) if name == "toolsets")
    );
    // `a` with tool `b--c` and `a--b` with tool `c` would both give `a--b--c`; `a-` with
    // tool `b` and `a` with tool `-b` both `a---b`.
    for clash in [&["a", "a--b"][..], &["a--b"], &["a", "a-"], &["a-"]] {
        assert!(
            matches!(start(clash), Err(HostError::CollidingServerName { .. })),
            "{clash:?}"
        );
    }
    // A refusal says what is wrong in words a user can act on.
    let e = start(&["a--b"]).err().unwrap().to_string();
    assert!(e.contains("a--b") && e.contains("--"), "{e}");
    // Names that cannot collide are fine.
    let ok = start(&["a", "a-b", "toolset", "my_tools"]).expect("unambiguous names");
    ok.stop().await;
}

#[actix::test]
async fn issue36_01_a_tool_name_holding_the_separator_is_called_on_its_own_server() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(Default::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        let mut tools = arcade_tools();
        tools
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "b--c", "inputSchema": {"type": "object"}}));
        conn.connect(arcade_init(), tools, 0, Some(lobby_statement(1)))
            .await;
        settled(&host, 1, 1, 7).await;
        let call = spawn_call(&host, "arcade--b--c", json!({}));
        let req = conn.expect_next("tools/call").await;
        assert_eq!(req["params"]["name"], "b--c");
        conn.reply(&req, json!({"content": [msg::text("done")]}))
            .await;
        assert_eq!(call.await.unwrap().joined_text(), "done");
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn issue36_02_a_restarted_server_s_push_under_an_old_event_id_is_shown() {
    within(async {
        let (mut server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        conn.push(100, "ev-1", "bob challenges you to Go.", None)
            .await;
        assert_eq!(conn.answer_to(100).await["result"]["accepted"], true);
        // The server restarts: its next process numbers its pushes from ev-1 again.
        drop(conn);
        let mut conn = server.accept().await;
        conn.connect(arcade_init(), arcade_tools(), 0, Some(lobby_statement(1)))
            .await;
        settled(&host, 2, 1, 6).await;
        conn.push(200, "ev-1", "carol challenges you to Go.", None)
            .await;
        assert_eq!(conn.answer_to(200).await["result"]["accepted"], true);
        // A retry of that push (SPEC §9.4: same id, same event) is still not shown twice.
        conn.push(201, "ev-1", "carol challenges you to Go.", None)
            .await;
        assert_eq!(conn.answer_to(201).await["result"]["accepted"], true);
        nothing_else_was_sent(&host, &mut conn).await;
        let shown = host.transcript().await.unwrap();
        let pushes: Vec<&str> = shown
            .iter()
            .filter(|s| s.kind == ShownKind::Push)
            .map(|s| s.text.as_str())
            .collect();
        assert_eq!(pushes.len(), 2, "{}", texts(&shown));
        assert!(pushes[0].contains("bob challenges"), "{pushes:?}");
        assert!(pushes[1].contains("carol challenges"), "{pushes:?}");
        host.stop().await;
    })
    .await;
}

/// A server that keeps numbers as doubles writes every rev with a fraction.
fn doubled(mut v: Value) -> Value {
    fn walk(v: &mut Value, key: Option<&str>) {
        match v {
            Value::Object(m) => m.iter_mut().for_each(|(k, x)| walk(x, Some(k))),
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, None)),
            Value::Number(n) if matches!(key, Some("rev" | "mcpl/rev")) => {
                *v = json!(n.as_f64().unwrap());
            }
            _ => {}
        }
    }
    walk(&mut v, None);
    v
}

#[actix::test]
async fn issue36_04_revs_written_as_doubles_are_the_same_revs() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(Default::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        let statement = doubled(lobby_statement(1));
        assert!(statement.to_string().contains("\"rev\":1.0"), "{statement}");
        conn.handshake(arcade_init()).await;
        let (mut listed, mut stated) = (false, false);
        while !(listed && stated) {
            let m = conn.next_non_notification().await;
            match m["method"].as_str() {
                Some("tools/list") => {
                    let page = doubled(tools_page(&arcade_tools(), 0));
                    assert!(page.to_string().contains("\"mcpl/rev\":0.0"));
                    conn.reply(&m, page).await;
                    listed = true;
                }
                Some("toolsets/list") => {
                    conn.reply(&m, statement.clone()).await;
                    stated = true;
                }
                _ => panic!("unexpected at connect: {m}"),
            }
        }
        settled(&host, 1, 1, 6).await;
        // A result's, a push's and a tools/hints' revs, all written as doubles.
        let call = spawn_call(
            &host,
            "toolsets--open",
            json!({"toolset": "game", "instance": "g1"}),
        );
        let req = conn.expect_next("toolsets/open").await;
        conn.reply(&req, doubled(game_opened("g1", 2))).await;
        assert!(!call.await.unwrap().is_error);
        conn.push(
            100,
            "e-1",
            "White played E5.",
            Some(doubled(changes(
                3,
                json!([vis("play", Some("g1"), false)]),
                json!([]),
            ))),
        )
        .await;
        conn.answer_to(100).await;
        conn.hints(doubled(changes(
            4,
            json!([vis("resign", Some("g1"), false)]),
            json!([]),
        )))
        .await;
        let h = hints_until(&host, |h| h.last_rev == 4).await;
        assert_eq!((h.stats.gaps, h.stats.recoveries), (0, 0), "{h:?}");
        assert!(!visible(&host, "play", Some("g1")).await);
        assert!(!visible(&host, "resign", Some("g1")).await);
        nothing_else_was_sent(&host, &mut conn).await;
        assert_eq!(
            conn.count("toolsets/list"),
            1,
            "the statement was read once"
        );
        // A rev that is not an integer is still no rev: that message is unreadable, its
        // entries are not applied, and the host reads the state again (§5.2).
        conn.hints(json!({"rev": 5.5, "tools": [vis("seek", None, false)]}))
            .await;
        conn.serve_recovery(doubled(lobby_statement(6)), &arcade_tools(), 6)
            .await;
        hints_until(&host, |h| h.last_rev == 6 && !h.recovering).await;
        assert!(visible(&host, "seek", None).await, "a rev of 5.5 applied");
        nothing_else_was_sent(&host, &mut conn).await;
        host.stop().await;
    })
    .await;
}

//! Host-side conformance vectors of §3 and §6 (what the model's tool list holds and when
//! it changes, suggestions, definitions, hints from a server that did not advertise them,
//! a withdrawn `toolHints`), each driven by a scripted server over a real WebSocket.

use crate::support;

use mcpl_testkit::within;
use mcpl_transport::ClientOptions;
use serde_json::{Value, json};
use std::time::Duration;
use support::server::*;

const HOLD: Duration = Duration::from_millis(250);

fn names(tools: &[mcpl_protocol::Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

#[actix::test]
async fn vector_12_hint_changes_never_change_the_model_s_tool_list() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        let before = host.tools_json().await.unwrap();
        open_game(&host, &mut conn, "g1", 2).await;
        conn.push(
            100,
            "e-1",
            "White played E5.",
            Some(changes(
                3,
                json!([vis("play", Some("g1"), false)]),
                json!([]),
            )),
        )
        .await;
        conn.hints(json!({"rev": 4, "tools": [
            vis("roam", None, false),
            {"name": "resign", "instance": "g1", "definition": {"description": "Resign g1 now"}}
        ]}))
        .await;
        // A gap and its recovery, whose statement changes everything again.
        conn.hints(changes(6, json!([]), json!([]))).await;
        conn.serve_recovery(lobby_statement(7), &arcade_tools(), 7)
            .await;
        hints_until(&host, |h| h.last_rev == 7 && !h.recovering).await;
        let after = host.tools_json().await.unwrap();
        assert_eq!(before, after, "byte for byte");
        assert_eq!(
            conn.count("tools/list"),
            2,
            "the connect's and the recovery's only"
        );
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_15_a_move_from_static_to_dynamic_waits_for_the_next_list_boundary() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        let before = host.tools_json().await.unwrap();
        assert!(before.contains("\"arcade--clock\""));
        conn.hints(
            json!({"rev": 2, "tools": [{"name": "clock", "presence": "dynamic", "visible": true}]}),
        )
        .await;
        hints_until(&host, |h| h.last_rev == 2).await;
        // No mid-conversation re-list: the list is as it was, and the tool still answers by
        // its listed name until the boundary.
        assert_eq!(host.tools_json().await.unwrap(), before);
        nothing_else_was_sent(&host, &mut conn).await;
        assert!(!texts(&host.transcript().await.unwrap()).contains("left your tool list"));

        assert!(
            host.boundary().await.unwrap(),
            "the boundary changes the list"
        );
        let tools = host.tools().await.unwrap();
        assert!(
            !names(&tools).contains(&"arcade--clock"),
            "{:?}",
            names(&tools)
        );
        let t = texts(&host.transcript().await.unwrap());
        assert!(t.contains("arcade--clock left your tool list"), "{t}");
        let (err, why) = local_call(&host, "arcade--clock", json!({})).await;
        assert!(
            err && why.contains("call it through toolsets--act"),
            "{why}"
        );
        let call = spawn_call(&host, "toolsets--act", json!({"tool": "clock"}));
        let req = conn.expect_next("tools/call").await;
        assert_eq!(req["params"], json!({"name": "clock"}));
        conn.reply(
            &req,
            json!({"content": [{"type": "text", "text": "12:01"}]}),
        )
        .await;
        assert!(call.await.unwrap().joined_text().contains("12:01"));
        assert_eq!(conn.count("tools/list"), 1);
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_24_a_move_from_dynamic_to_static_is_applied_at_the_next_boundary_with_a_notice() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        let before = host.tools_json().await.unwrap();
        conn.hints(json!({"rev": 2, "tools": [{"name": "roam", "presence": "static"}]}))
            .await;
        hints_until(&host, |h| h.last_rev == 2).await;
        assert_eq!(host.tools_json().await.unwrap(), before);
        assert!(
            is_usable(&host, "roam").await,
            "offered through act until the boundary"
        );

        assert!(host.boundary().await.unwrap());
        assert!(names(&host.tools().await.unwrap()).contains(&"arcade--roam"));
        let t = texts(&host.transcript().await.unwrap());
        assert!(
            t.contains("arcade--roam is now in your tool list: call it directly."),
            "{t}"
        );
        let (err, why) = local_call(&host, "toolsets--act", json!({"tool": "roam"})).await;
        assert!(
            err && why.contains("arcade--roam is in your tool list"),
            "{why}"
        );
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_19_suggestions_are_shown_and_never_acted_on() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        conn.hints(
            json!({"rev": 2, "suggest": [{"toolset": "game", "action": "open",
            "reason": "Bob challenges you to a game", "options": {"size": 9}}]}),
        )
        .await;
        hints_until(&host, |h| h.last_rev == 2).await;
        let t = texts(&host.transcript().await.unwrap());
        assert!(t.contains("\"Bob challenges you to a game\""), "{t}");
        assert!(
            t.contains("toolsets--open"),
            "the call that would accept it: {t}"
        );
        let (_, look) = local_call(&host, "toolsets--look", json!({})).await;
        assert!(look.contains("Suggested, not acted on:"), "{look}");
        nothing_else_was_sent(&host, &mut conn).await;
        assert_eq!(conn.count("toolsets/open"), 0);
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_20_a_definition_hint_changes_only_description_schema_and_annotations() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        host.transcript().await.unwrap();
        conn.hints(
            json!({"rev": 3, "tools": [{"name": "play", "instance": "g1", "definition": {
                "name": "hijack",
                "description": "Play a legal move: D4 or Q16",
                "inputSchema": {"type": "object", "properties": {"move": {"enum": ["D4", "Q16"], "maxLength": 3}},
                                "required": ["move"]},
                "_meta": {"mcpl/class": "admin", "mcpl/toolset": "elsewhere"}
            }}]}),
        )
        .await;
        hints_until(&host, |h| h.last_rev == 3).await;
        let t = texts(&host.transcript().await.unwrap());
        assert!(t.contains("Changed: play in [arcade/game:g1]"), "{t}");
        assert!(t.contains("Play a legal move: D4 or Q16"), "{t}");
        assert!(!t.contains("hijack") && !t.contains("elsewhere"), "{t}");
        // The new schema is the one checked (its `maxLength`: a value outside its `enum`
        // alone is the server's to explain, `args_check.rs`); the listed name is the one sent.
        let (err, why) = local_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "args": {"move": "Q16Q16"}}),
        )
        .await;
        assert!(
            err && why.contains("do not fit play's current definition"),
            "{why}"
        );
        let call = spawn_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "args": {"move": "Q16"}}),
        );
        let req = conn.expect_next("tools/call").await;
        assert_eq!(
            req["params"],
            json!({"name": "play", "arguments": {"move": "Q16"}, "_meta": {"mcpl/instance": "g1"}})
        );
        conn.reply(
            &req,
            json!({"content": [{"type": "text", "text": "Black Q16."}]}),
        )
        .await;
        call.await.unwrap();
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_30_hints_from_a_server_without_tool_hints_are_ignored() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(ClientOptions::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        let mut manifest = arcade_manifest();
        manifest.as_object_mut().unwrap().remove("toolHints");
        // Its tools still carry hint _meta: ignored, every tool static.
        conn.connect(init_with(Some(manifest)), arcade_tools(), 0, None)
            .await;
        host.wait_for(|s| {
            s.server("arcade")
                .is_some_and(|a| a.ready && a.listed_tools == 6)
        })
        .await
        .unwrap();
        let tools = host.tools().await.unwrap();
        assert_eq!(
            names(&tools),
            [
                "arcade--clock",
                "arcade--seek",
                "arcade--play",
                "arcade--resign",
                "arcade--scratch",
                "arcade--roam"
            ]
        );
        conn.hints(changes(
            1,
            json!([vis("play", None, false)]),
            json!([{"toolset": "game", "instance": "g1", "state": "open"}]),
        ))
        .await;
        let call = spawn_call(&host, "arcade--play", json!({"move": "D4"}));
        let req = conn.next_request().await;
        assert_eq!(
            req["params"],
            json!({"name": "play", "arguments": {"move": "D4"}}),
            "{req}"
        );
        conn.reply(
            &req,
            json!({"content": [{"type": "text", "text": "ok"}],
            "_meta": {"mcpl/hints": changes(2, json!([vis("roam", None, false)]), json!([]))}}),
        )
        .await;
        assert_eq!(call.await.unwrap().joined_text(), "ok");
        nothing_else_was_sent(&host, &mut conn).await;
        assert_eq!(conn.count("toolsets/list"), 0);
        let s = host.status();
        let a = s.server("arcade").unwrap();
        assert!(!a.hints_count && a.hints.is_none(), "{a:?}");
        let t = texts(&host.transcript().await.unwrap());
        assert!(!t.contains("usable") && !t.contains("Opened"), "{t}");
        assert_eq!(host.tools().await.unwrap(), tools);
        host.stop().await;
    })
    .await;
}

#[actix::test]
async fn vector_34_a_manifest_change_withdrawing_tool_hints_makes_every_tool_static() {
    within(async {
        let (_server, host, mut conn) = connected(Transport::Ws, HOLD).await;
        open_game(&host, &mut conn, "g1", 2).await;
        host.transcript().await.unwrap();
        conn.send(json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
                         "params": {"revision": "r2", "domains": ["toolsets"]}}))
            .await;
        let req = conn.expect_next("mcpl/manifest").await;
        let mut manifest: Value = arcade_manifest();
        manifest.as_object_mut().unwrap().remove("toolHints");
        conn.reply(&req, manifest).await;
        host.wait_for(|s| s.server("arcade").is_some_and(|a| !a.hints_count))
            .await
            .unwrap();
        let shown = host.transcript().await.unwrap();
        let t = texts(&shown);
        assert!(
            t.contains("arcade no longer presents toolsets: every tool of arcade is called directly from your tool list (from its next rebuild), not through toolsets--act. Closed with it: [arcade/game:g1], [arcade/lobby]."),
            "{t}"
        );
        assert_eq!(shown.len(), 1, "told once: {t}");

        host.boundary().await.unwrap();
        let tools = host.tools().await.unwrap();
        assert_eq!(
            names(&tools),
            ["arcade--clock", "arcade--seek", "arcade--play", "arcade--resign", "arcade--scratch", "arcade--roam"]
        );
        let (err, _) = local_call(&host, "toolsets--act", json!({"tool": "play", "args": {"move": "D4"}})).await;
        assert!(err);
        let call = spawn_call(&host, "arcade--play", json!({"move": "D4"}));
        let req = conn.expect_next("tools/call").await;
        assert_eq!(req["params"], json!({"name": "play", "arguments": {"move": "D4"}}));
        conn.reply(&req, json!({"content": [{"type": "text", "text": "ok"}]}))
            .await;
        call.await.unwrap();
        host.stop().await;
    })
    .await;
}

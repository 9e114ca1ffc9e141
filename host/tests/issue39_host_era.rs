//! Issue #39 item 8, raw JSON on a real WebSocket (an ordered transport, as stdio is): the
//! link's `server/discover` probe, its fallback to `initialize` on a legacy answer or on
//! silence, the era remembered across a reconnect, and with a modern server the stamped
//! `_meta`, no `notifications/initialized`, `subscriptions/listen`, and MRTR rounds.

use crate::support;

use actix::Actor;
use mcpl_host::link::{
    BackoffConfig, CallTool, DisconnectReason, Era, EraPolicy, EventSink, GetStatus, LinkConfig,
    LinkError, LinkEvent, MAX_INPUT_ROUNDS, ServerLink, Shutdown,
};
use mcpl_testkit::{msg, within};
use serde_json::{Value, json};
use std::time::Duration;
use support::server::*;
use tokio::sync::mpsc;

const VERSION: &str = "io.modelcontextprotocol/protocolVersion";

fn link(
    server: &ScriptedServer,
    era: EraPolicy,
) -> (actix::Addr<ServerLink>, mpsc::UnboundedReceiver<LinkEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut config = LinkConfig::new("s", server.connector(Default::default()))
        .with_era(era)
        .with_subscriber(EventSink::Channel(tx));
    config.handshake_timeout = Duration::from_millis(300);
    config.backoff = BackoffConfig {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(10),
        jitter: 0.0,
        seed: Some(1),
        ..Default::default()
    };
    (ServerLink::new(config).start(), rx)
}

async fn ready(events: &mut mpsc::UnboundedReceiver<LinkEvent>) {
    within(async {
        loop {
            match events.recv().await.unwrap() {
                LinkEvent::ToolsChanged { .. } => return,
                LinkEvent::Disconnected { reason, .. } => panic!("{reason}"),
                _ => {}
            }
        }
    })
    .await;
}

/// The next connection, each of its waits bounded (the support's peers wait an hour, for
/// tests on a paused clock; these run on real sockets).
async fn accept(server: &mut ScriptedServer) -> Conn {
    server
        .accept_showing_discover()
        .await
        .with_limit(mcpl_testkit::LIMIT)
}

async fn era_of(link: &actix::Addr<ServerLink>) -> Era {
    link.send(GetStatus).await.unwrap().session.unwrap().era
}

#[actix::test]
async fn issue39_08_a_probe_refused_as_by_a_legacy_server_falls_back_and_is_remembered() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut events) = link(&server, EraPolicy::Auto);
    let mut conn = accept(&mut server).await;
    let probe = conn.expect_next("server/discover").await;
    assert_eq!(probe["params"]["_meta"][VERSION], "2026-07-28");
    // What a legacy server says to a request before `initialize` (any code but the
    // modern era's own).
    conn.send(msg::error(&probe["id"], -32600, "not initialized"))
        .await;
    conn.handshake(init_with(None)).await;
    let list = conn.expect_next("tools/list").await;
    assert!(list["params"]["_meta"].get(VERSION).is_none(), "{list}");
    conn.reply(&list, tools_page(&json!([]), 1)).await;
    ready(&mut events).await;
    assert_eq!(era_of(&link).await, Era::Legacy);

    // The server went away and came back: the link remembers it is legacy.
    drop(conn);
    let mut conn = accept(&mut server).await;
    conn.handshake(init_with(None)).await;
    link.send(Shutdown).await.unwrap();
}

#[actix::test]
async fn issue39_08_a_probe_left_unanswered_falls_back_after_the_handshake_timeout() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut events) = link(&server, EraPolicy::Auto);
    let mut conn = accept(&mut server).await;
    conn.expect_next("server/discover").await;
    // Silence: `initialize` is what comes next, with no `notifications/cancelled` for the
    // probe first (a legacy server may know nothing of it).
    conn.handshake(init_with(None)).await;
    let list = conn.expect_next("tools/list").await;
    conn.reply(&list, tools_page(&json!([]), 1)).await;
    ready(&mut events).await;
    assert_eq!(era_of(&link).await, Era::Legacy);
    link.send(Shutdown).await.unwrap();
}

/// A legacy server silent to the probe is sent `initialize` after the probe's own timeout,
/// not the handshake's (10 s by default; here far past the test's limit): with `auto` the
/// default, such a server costs seconds, once.
#[actix::test]
async fn issue39_08_a_silent_probe_falls_back_after_the_probe_timeout() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (tx, _events) = mpsc::unbounded_channel();
    let mut config = LinkConfig::new("s", server.connector(Default::default()))
        .with_era(EraPolicy::Auto)
        .with_subscriber(EventSink::Channel(tx));
    config.handshake_timeout = Duration::from_secs(600);
    config.probe_timeout = Duration::from_millis(200);
    let link = ServerLink::new(config).start();
    let mut conn = accept(&mut server).await;
    conn.expect_next("server/discover").await;
    conn.expect_next("initialize").await;
    link.send(Shutdown).await.unwrap();
}

/// A server slow to answer the probe (a stdio server still starting on a loaded machine)
/// is sent `initialize` after the probe's timeout, as MCP says; when its `DiscoverResult`
/// then arrives before `initialize` is answered, the link is modern after all, and the
/// modern server's refusal of `initialize` ends nothing (**\[project\]**,
/// `host-core/src/link/mod.rs`, `late_discovery`).
#[actix::test]
async fn issue40_a_probe_answered_after_the_fallback_still_makes_the_link_modern() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (tx, mut events) = mpsc::unbounded_channel();
    let mut config = LinkConfig::new("s", server.connector(Default::default()))
        .with_era(EraPolicy::Auto)
        .with_subscriber(EventSink::Channel(tx));
    config.probe_timeout = Duration::from_millis(100);
    let link = ServerLink::new(config).start();
    let mut conn = accept(&mut server).await;
    let probe = conn.expect_next("server/discover").await;
    // Only once `initialize` came (the probe timed out) does the server answer the probe,
    // then refuse `initialize` as a modern-only server does.
    let init = conn.expect_next("initialize").await;
    conn.reply(&probe, discovered()).await;
    conn.send(msg::error(&init["id"], -32601, "no initialize in this era"))
        .await;
    let list = conn.expect_next("tools/list").await;
    assert_eq!(list["params"]["_meta"][VERSION], "2026-07-28", "{list}");
    conn.reply(
        &list,
        json!({"resultType": "complete", "tools": [], "ttlMs": 60000, "cacheScope": "public"}),
    )
    .await;
    conn.expect_next("subscriptions/listen").await;
    ready(&mut events).await;
    assert_eq!(era_of(&link).await, Era::Modern);
    link.send(Shutdown).await.unwrap();
}

/// A modern `server/discover` result, with tools whose list changes.
fn discovered() -> Value {
    json!({"resultType": "complete", "supportedVersions": ["2026-07-28", "2025-11-25"],
        "capabilities": {"tools": {"listChanged": true}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "1"}},
        "ttlMs": 60000, "cacheScope": "public"})
}

fn form(required: Value, properties: Value) -> Value {
    json!({"method": "elicitation/create", "params": {"mode": "form", "message": "?",
        "requestedSchema": {"type": "object", "properties": properties, "required": required}}})
}

#[actix::test]
async fn issue39_08_with_a_modern_server_requests_are_stamped_and_input_is_answered() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut events) = link(&server, EraPolicy::Auto);
    let mut conn = accept(&mut server).await;
    let probe = conn.expect_next("server/discover").await;
    conn.reply(&probe, discovered()).await;
    // No `notifications/initialized`: the listing comes first, stamped, then the listen.
    let list = conn.expect_next("tools/list").await;
    let meta = &list["params"]["_meta"];
    assert_eq!(meta[VERSION], "2026-07-28");
    // Form elicitation, and RFC-014's stateless profile (`mcpl/core`, issue #40): this
    // server declares no `mcpl/core`, so nothing else of the profile is sent.
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {"form": {}}, "extensions": {"mcpl/core":
            {"version": "0.5", "toolHints": true, "pushEvents": true}}})
    );
    assert!(meta.get("mcpl/since").is_none(), "{meta}");
    conn.reply(
        &list,
        json!({"resultType": "complete", "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
            "ttlMs": 60000, "cacheScope": "public"}),
    )
    .await;
    let listen = conn.expect_next("subscriptions/listen").await;
    assert_eq!(
        listen["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    ready(&mut events).await;
    assert_eq!(era_of(&link).await, Era::Modern);

    // A call asked for input: answered from the defaults, sent again with a new id, the
    // original params and the state echoed.
    let call = actix::spawn(
        link.send(CallTool::new("t").with_arguments(json!({"x": 1}).as_object().cloned().unwrap())),
    );
    let first = conn.expect_next("tools/call").await;
    conn.reply(
        &first,
        json!({"resultType": "input_required", "requestState": "S1",
            "inputRequests": {"q": form(json!(["ok"]), json!({"ok": {"type": "boolean", "default": true}}))}}),
    )
    .await;
    let second = conn.expect_next("tools/call").await;
    assert_ne!(second["id"], first["id"]);
    assert_eq!(second["params"]["arguments"], json!({"x": 1}));
    assert_eq!(second["params"]["requestState"], "S1");
    assert_eq!(
        second["params"]["inputResponses"],
        json!({"q": {"action": "accept", "content": {"ok": true}}})
    );
    assert_eq!(second["params"]["_meta"][VERSION], "2026-07-28");
    conn.reply(
        &second,
        json!({"resultType": "complete", "content": [msg::text("done")]}),
    )
    .await;
    let result = within(call).await.unwrap().unwrap().unwrap();
    assert_eq!(result.joined_text(), "done");

    // Sampling is not something this host gives: the call fails saying so, and is not
    // sent again.
    let call = actix::spawn(link.send(CallTool::new("t")));
    let asked = conn.expect_next("tools/call").await;
    conn.reply(
        &asked,
        json!({"resultType": "input_required",
            "inputRequests": {"s": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}}}),
    )
    .await;
    match within(call).await.unwrap().unwrap() {
        Err(LinkError::InputDeclined { asked, .. }) => assert_eq!(asked, "sampling/createMessage"),
        other => panic!("{other:?}"),
    }

    // A server that keeps asking is answered a bounded number of times.
    let call = actix::spawn(link.send(CallTool::new("t")));
    for _ in 0..=MAX_INPUT_ROUNDS {
        let again = conn.expect_next("tools/call").await;
        conn.reply(
            &again,
            json!({"resultType": "input_required", "requestState": "more"}),
        )
        .await;
    }
    match within(call).await.unwrap().unwrap() {
        Err(LinkError::InputRounds { rounds, .. }) => assert_eq!(rounds, MAX_INPUT_ROUNDS),
        other => panic!("{other:?}"),
    }

    // A change told on the listen stream is read.
    conn.send(msg::notification(
        "notifications/subscriptions/acknowledged",
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]},
            "notifications": {"toolsListChanged": true}}),
    ))
    .await;
    conn.send(msg::notification(
        "notifications/tools/list_changed",
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]}}),
    ))
    .await;
    let relist = conn.expect_next("tools/list").await;
    assert_eq!(relist["params"]["_meta"][VERSION], "2026-07-28");
    link.send(Shutdown).await.unwrap();
}

#[actix::test]
async fn issue39_08_a_modern_only_link_gives_up_on_a_legacy_server() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut events) = link(&server, EraPolicy::Modern);
    let mut conn = accept(&mut server).await;
    let probe = conn.expect_next("server/discover").await;
    conn.send(msg::error(&probe["id"], -32601, "Method not found"))
        .await;
    let reason = within(async {
        loop {
            if let LinkEvent::Disconnected { reason, .. } = events.recv().await.unwrap() {
                return reason;
            }
        }
    })
    .await;
    assert!(
        matches!(reason, DisconnectReason::NotModern { .. }),
        "{reason:?}"
    );
    assert_eq!(conn.count("initialize"), 0);
    link.send(Shutdown).await.unwrap();
}

/// A link configured with no era probes (the default is `auto`, as the binding pages ask
/// of a client that speaks both eras): `server/discover` comes first.
#[actix::test]
async fn issue39_08_a_link_probes_by_default() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (tx, mut events) = mpsc::unbounded_channel();
    let mut config = LinkConfig::new("s", server.connector(Default::default()))
        .with_subscriber(EventSink::Channel(tx));
    config.handshake_timeout = Duration::from_millis(300);
    assert_eq!(config.era, EraPolicy::Auto);
    let link = ServerLink::new(config).start();
    let mut conn = accept(&mut server).await;
    let probe = conn.expect_next("server/discover").await;
    conn.reply(&probe, discovered_still()).await;
    let list = conn.expect_next("tools/list").await;
    conn.reply(&list, json!({"resultType": "complete", "tools": []}))
        .await;
    ready(&mut events).await;
    assert_eq!(era_of(&link).await, Era::Modern);
    link.send(Shutdown).await.unwrap();
}

/// `mcpl-host console` run as a user would, on a modern-only server written with the
/// official Python SDK (`tests/interop/py_modern_server.py`, stdio): `--era py=auto` finds
/// it modern, its tools are offered, and a call whose server asks a question by MRTR is
/// answered from the form's defaults.
#[tokio::test]
async fn issue39_08_the_console_calls_a_modern_only_server_with_era_auto() {
    console_calls_a_modern_only_server(&["--era", "py=auto"]).await;
}

/// The same with no `--era`: the console's default is `auto`.
#[tokio::test]
async fn issue39_08_the_console_probes_by_default() {
    console_calls_a_modern_only_server(&[]).await;
}

async fn console_calls_a_modern_only_server(era: &[&str]) {
    use mcpl_testkit::python::{python, workspace_root};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let script = workspace_root().join("tests/interop/py_modern_server.py");
    let dir = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpl-host"))
        .args([
            "console",
            "--server",
            &format!("py=stdio:{} {} stdio", python().display(), script.display()),
            "--state-dir",
            dir.path().to_str().unwrap(),
        ])
        .args(era)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answer = async |line: &str, id: i64| -> Value {
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
        loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the console goes on");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    };
    within(async {
        let tools = answer(r#"{"id":1,"tools":true}"#, 1).await;
        let names: Vec<&str> = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(names.contains(&"py--confirm_size"), "{tools}");
        let called = answer(r#"{"id":2,"tool":"py--confirm_size","args":{}}"#, 2).await;
        let text = called["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(
            text, r#"answered {"action": "accept", "content": {"confirm": true, "size": 9}}"#,
            "{called}"
        );
    })
    .await;
    // End of input ends the console, and it its server, cleanly.
    drop(stdin);
    let status = within(child.wait()).await.unwrap();
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn issue39_08_the_command_line_refuses_an_era_it_does_not_know() {
    for (era, says) in [
        ("sometimes", "\"sometimes\" is no era"),
        ("other=auto", "--era names \"other\""),
    ] {
        // A state directory of its own: the told ids it keeps are no other test's.
        let state = tempfile::tempdir().expect("a state directory");
        let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpl-host"))
            .env("XDG_DATA_HOME", state.path())
            .args(["console", "--server", "s=ws://127.0.0.1:9/", "--era", era])
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{era}: {stderr}");
    }
}

/// -32022 as a modern server answers a version it does not serve, listing `supported`.
fn unsupported(request: &Value, supported: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": supported, "requested": request["params"]["_meta"][VERSION]}}})
}

/// A modern `server/discover` result whose tools do not change (no listen follows).
fn discovered_still() -> Value {
    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "1"}}})
}

async fn disconnect_reason(events: &mut mpsc::UnboundedReceiver<LinkEvent>) -> DisconnectReason {
    within(async {
        loop {
            if let LinkEvent::Disconnected { reason, .. } = events.recv().await.unwrap() {
                return reason;
            }
        }
    })
    .await
}

/// MCP 2026-07-28 `versioning.md`: a client whose version is refused "SHOULD select a
/// mutually supported version from the `supported` list and retry"; the stdio binding: "Use
/// one of the versions in its advertised `supported` list. Do not fall back".
#[actix::test]
async fn issue39_08_a_probe_refused_for_its_version_is_sent_again_with_a_supported_one() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut events) = link(&server, EraPolicy::Auto);
    let mut conn = accept(&mut server).await;
    let probe = conn.expect_next("server/discover").await;
    conn.send(unsupported(&probe, json!(["2099-01-01", "2026-07-28"])))
        .await;
    let again = conn.expect_next("server/discover").await;
    assert_ne!(again["id"], probe["id"]);
    assert_eq!(again["params"]["_meta"][VERSION], "2026-07-28");
    conn.reply(&again, discovered_still()).await;
    let list = conn.expect_next("tools/list").await;
    assert_eq!(list["params"]["_meta"][VERSION], "2026-07-28");
    conn.reply(&list, json!({"resultType": "complete", "tools": []}))
        .await;
    ready(&mut events).await;
    assert_eq!(era_of(&link).await, Era::Modern);
    assert_eq!(conn.count("initialize"), 0);
    link.send(Shutdown).await.unwrap();
}

/// Once only: a second refusal ends the connection with what the server said, and no
/// `initialize` follows (a modern server is not fallen back from).
#[actix::test]
async fn issue39_08_a_probe_refused_twice_for_its_version_ends_the_connection() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut events) = link(&server, EraPolicy::Auto);
    let mut conn = accept(&mut server).await;
    let probe = conn.expect_next("server/discover").await;
    conn.send(unsupported(&probe, json!(["2026-07-28"]))).await;
    let again = conn.expect_next("server/discover").await;
    conn.send(unsupported(&again, json!(["2026-07-28"]))).await;
    match disconnect_reason(&mut events).await {
        DisconnectReason::HandshakeRejected { method, error } => {
            assert_eq!((method, error.code.0), ("server/discover", -32022));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(conn.count("server/discover"), 2);
    assert_eq!(conn.count("initialize"), 0);
    link.send(Shutdown).await.unwrap();
}

/// A -32022 that lists only legacy versions this host speaks: `initialize` follows on the
/// same connection (the versions it lists are served that way); a link configured
/// `modern` gives up instead.
#[actix::test]
async fn issue39_08_a_probe_refused_with_only_legacy_versions_supported_falls_back() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut events) = link(&server, EraPolicy::Auto);
    let mut conn = accept(&mut server).await;
    let probe = conn.expect_next("server/discover").await;
    conn.send(unsupported(&probe, json!(["2025-06-18", "2025-11-25"])))
        .await;
    conn.handshake(init_with(None)).await;
    let list = conn.expect_next("tools/list").await;
    conn.reply(&list, tools_page(&json!([]), 1)).await;
    ready(&mut events).await;
    assert_eq!(era_of(&link).await, Era::Legacy);
    link.send(Shutdown).await.unwrap();

    let (link, mut events) = self::link(&server, EraPolicy::Modern);
    let mut conn = accept(&mut server).await;
    let probe = conn.expect_next("server/discover").await;
    conn.send(unsupported(&probe, json!(["2025-11-25"]))).await;
    let reason = disconnect_reason(&mut events).await;
    assert!(
        matches!(reason, DisconnectReason::NotModern { .. }),
        "{reason:?}"
    );
    assert_eq!(conn.count("initialize"), 0);
    link.send(Shutdown).await.unwrap();
}

/// A modern call refused for its version is sent again once, with a new id and the same
/// params, stamped with the version the server listed; a second refusal is the call's
/// answer.
#[actix::test]
async fn issue39_08_a_call_refused_for_its_version_is_sent_again_once() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut events) = link(&server, EraPolicy::Auto);
    let mut conn = accept(&mut server).await;
    let probe = conn.expect_next("server/discover").await;
    conn.reply(&probe, discovered_still()).await;
    let list = conn.expect_next("tools/list").await;
    conn.reply(
        &list,
        json!({"resultType": "complete", "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
    )
    .await;
    ready(&mut events).await;

    let args = json!({"x": 1}).as_object().cloned().unwrap();
    let call = actix::spawn(link.send(CallTool::new("t").with_arguments(args.clone())));
    let first = conn.expect_next("tools/call").await;
    conn.send(unsupported(&first, json!(["2026-07-28"]))).await;
    let second = conn.expect_next("tools/call").await;
    assert_ne!(second["id"], first["id"]);
    assert_eq!(second["params"]["arguments"], json!({"x": 1}));
    assert_eq!(second["params"]["_meta"][VERSION], "2026-07-28");
    conn.reply(
        &second,
        json!({"resultType": "complete", "content": [msg::text("done")]}),
    )
    .await;
    let result = within(call).await.unwrap().unwrap().unwrap();
    assert_eq!(result.joined_text(), "done");

    let call = actix::spawn(link.send(CallTool::new("t").with_arguments(args)));
    let first = conn.expect_next("tools/call").await;
    conn.send(unsupported(&first, json!(["2026-07-28"]))).await;
    let second = conn.expect_next("tools/call").await;
    conn.send(unsupported(&second, json!(["2026-07-28"]))).await;
    match within(call).await.unwrap().unwrap() {
        Err(LinkError::Server { error, .. }) => assert_eq!(error.code.0, -32022),
        other => panic!("{other:?}"),
    }
    link.send(Shutdown).await.unwrap();
}

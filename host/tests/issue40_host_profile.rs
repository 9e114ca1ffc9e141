//! Issue #40 item 3, raw JSON on a real WebSocket: the link under RFC-014's stateless
//! profile (`docs/rfc014-stateless.md`) against a scripted modern server — what it
//! declares and sends, and its `mcpl/hints` stream, reopened from the mark when the server
//! ends it (profile §3.5: a cut stream is reopened with the current `since`).

use crate::support;

use actix::Actor;
use mcpl_host::link::{
    BackoffConfig, EraPolicy, EventSink, LinkConfig, LinkEvent, ServerLink, Shutdown,
};
use mcpl_testkit::within;
use serde_json::{Value, json};
use std::time::Duration;
use support::mcpl_init_result;
use support::server::*;
use tokio::sync::mpsc;

fn link(server: &ScriptedServer) -> (actix::Addr<ServerLink>, mpsc::UnboundedReceiver<LinkEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut config = LinkConfig::new("s", server.connector(Default::default()))
        .with_era(EraPolicy::Modern)
        .with_subscriber(EventSink::Channel(tx));
    config.backoff = BackoffConfig {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(10),
        jitter: 0.0,
        seed: Some(1),
        ..Default::default()
    };
    (ServerLink::new(config).start(), rx)
}

/// A modern server's discovery declaring `mcpl/core` (its manifest) and hinting the probe
/// (`_meta["mcpl/hints"]`, a statement at version 3): it serves the profile to this host.
fn discovered() -> Value {
    let manifest = mcpl_init_result()["capabilities"]["experimental"]["mcpl"].clone();
    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {"listChanged": true}, "extensions": {"mcpl/core": manifest}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "1"},
                  "mcpl/hints": {"version": 3, "statement": true}},
        "ttlMs": 0, "cacheScope": "private"})
}

#[actix::test]
async fn s10_host_reopens_a_cut_hints_stream_from_its_mark() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut events) = link(&server);
    let mut conn = server
        .accept_showing_discover()
        .await
        .with_limit(mcpl_testkit::LIMIT);
    let probe = conn.expect_next("server/discover").await;
    assert_eq!(
        probe["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]["mcpl/core"],
        json!({"version": "0.5", "toolHints": true, "pushEvents": true})
    );
    conn.reply(&probe, discovered()).await;
    // Served MCPL: the grant is the policy's proposal, in force at once.
    let granted = within(async {
        loop {
            if let LinkEvent::Connected { mcpl, granted, .. } = events.recv().await.unwrap() {
                assert!(mcpl);
                return granted;
            }
        }
    })
    .await;
    let list = conn.expect_next("tools/list").await;
    let meta = &list["params"]["_meta"];
    assert_eq!(meta["mcpl/since"], 0, "{meta}");
    assert_eq!(
        meta["mcpl/grant"],
        json!({"effectiveCapabilities": granted})
    );
    conn.reply(
        &list,
        json!({"resultType": "complete", "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
            "ttlMs": 0, "cacheScope": "private"}),
    )
    .await;
    let listen = conn.expect_next("subscriptions/listen").await;
    // The policy grants `pushEvents`: the stream asks for events too (profile §3.5).
    assert_eq!(
        listen["params"]["notifications"],
        json!({"toolsListChanged": true, "mcpl/hints": true, "mcpl/events": true})
    );
    assert_eq!(listen["params"]["_meta"]["mcpl/since"], 0);
    conn.notify(
        "notifications/subscriptions/acknowledged",
        json!({"notifications": {"toolsListChanged": true, "mcpl/hints": true},
               "_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]}}),
    )
    .await;
    // The stream's first message is the delta since its mark: it raises the mark to 5.
    conn.notify(
        "notifications/mcpl/hints",
        json!({"version": 5, "statement": true,
               "_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]}}),
    )
    .await;
    // The server ends the stream: the link opens another from its mark, on the same
    // connection.
    conn.reply(&listen, json!({"resultType": "complete"})).await;
    let again = conn.expect_next("subscriptions/listen").await;
    assert_eq!(again["params"]["_meta"]["mcpl/since"], 5, "{again}");
    assert_eq!(again["params"]["notifications"]["mcpl/hints"], true);
    link.send(Shutdown).await.unwrap();
}

/// Connects a modern link with `listen_steady` and returns it with the first
/// `subscriptions/listen` request.
async fn listening(
    server: &mut ScriptedServer,
    listen_steady: Duration,
) -> (actix::Addr<ServerLink>, Conn, Value) {
    let (tx, mut events) = mpsc::unbounded_channel();
    let mut config = LinkConfig::new("s", server.connector(Default::default()))
        .with_era(EraPolicy::Modern)
        .with_subscriber(EventSink::Channel(tx));
    config.listen_steady = listen_steady;
    let link = ServerLink::new(config).start();
    let mut conn = server
        .accept_showing_discover()
        .await
        .with_limit(mcpl_testkit::LIMIT);
    let probe = conn.expect_next("server/discover").await;
    conn.reply(&probe, discovered()).await;
    within(async { while !matches!(events.recv().await.unwrap(), LinkEvent::Connected { .. }) {} })
        .await;
    let list = conn.expect_next("tools/list").await;
    conn.reply(
        &list,
        json!({"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"}),
    )
    .await;
    let listen = conn.expect_next("subscriptions/listen").await;
    (link, conn, listen)
}

/// Acknowledges a hints stream, then ends it (the server's graceful end).
async fn acknowledge_then_end(conn: &mut Conn, listen: &Value) {
    conn.notify(
        "notifications/subscriptions/acknowledged",
        json!({"notifications": {"toolsListChanged": true, "mcpl/hints": true},
               "_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]}}),
    )
    .await;
    conn.reply(listen, json!({"resultType": "complete"})).await;
}

/// Profile §3.5 and its bound **\[project\]**: a stream cut right after each
/// acknowledgment is reopened 16 times in a row on one connection, then no more — the
/// next request is the agent's own, and the results' deltas carry what the stream would
/// have told early.
#[actix::test]
async fn s10_a_stream_cut_again_and_again_is_reopened_16_times_in_a_row_then_left() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut conn, mut listen) = listening(&mut server, Duration::from_secs(3600)).await;
    for _ in 0..16 {
        acknowledge_then_end(&mut conn, &listen).await;
        listen = conn.expect_next("subscriptions/listen").await;
    }
    acknowledge_then_end(&mut conn, &listen).await;
    let call = tokio::spawn(link.send(mcpl_host::link::CallTool {
        name: "t".to_owned(),
        arguments: None,
        meta: None,
        timeout: None,
    }));
    let next = conn.next_request().await;
    assert_eq!(
        next["method"], "tools/call",
        "opened a 17th time in a row: {next}"
    );
    conn.reply(&next, json!({"resultType": "complete", "content": []}))
        .await;
    call.await.unwrap().unwrap().expect("the call is answered");
    link.send(Shutdown).await.unwrap();
}

/// The budget refills **\[project\]**: a stream that lived `listen_steady` (here no
/// time at all) was healthy, so a link that stays up for hours on a flaky network keeps
/// reopening its stream — far past 16 cuts on one connection.
#[actix::test]
async fn s10_a_stream_that_lived_long_enough_gives_the_reopenings_back() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut conn, mut listen) = listening(&mut server, Duration::ZERO).await;
    for _ in 0..40 {
        acknowledge_then_end(&mut conn, &listen).await;
        listen = conn.expect_next("subscriptions/listen").await;
    }
    link.send(Shutdown).await.unwrap();
}

/// A `server/discover` result of the arcade's manifest under the profile (hinting the
/// probe: a statement at version 1).
fn arcade_discovered() -> Value {
    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {"listChanged": true}, "extensions": {"mcpl/core": arcade_manifest()}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "1"},
                  "mcpl/hints": {"version": 1, "statement": true}},
        "ttlMs": 0, "cacheScope": "private"})
}

/// Answers a profiled link's reads at connect as the arcade would (the tools; the
/// statement at version 1: the lobby open, `seek` visible) and returns its
/// `subscriptions/listen` request, not yet acknowledged.
async fn arcade_connect(conn: &mut Conn) -> Value {
    let (mut listed, mut stated, mut listen) = (false, false, None);
    while !(listed && stated && listen.is_some()) {
        let m = conn.next_request().await;
        match m["method"].as_str() {
            Some("tools/list") => {
                conn.reply(
                    &m,
                    json!({"resultType": "complete", "tools": arcade_tools(),
                    "ttlMs": 0, "cacheScope": "private", "_meta": {"mcpl/version": 1}}),
                )
                .await;
                listed = true;
            }
            Some("toolsets/list") => {
                let statement = json!({"version": 1, "statement": true,
                    "tools": [{"name": "seek", "visible": true, "v": 1}],
                    "toolsets": [{"toolset": "lobby", "state": "open", "v": 1}]});
                let list = json!({"open": [{"toolset": "lobby"}], "ended": []});
                conn.reply(&m, hinted_result(list, statement)).await;
                stated = true;
            }
            Some("subscriptions/listen") => listen = Some(m),
            _ => panic!("unexpected at connect: {m}"),
        }
    }
    listen.expect("the loop ends with it")
}

/// A modern result carrying `hints` (stamped).
fn hinted_result(mut result: Value, hints: Value) -> Value {
    result["resultType"] = json!("complete");
    result["_meta"] = json!({ "mcpl/hints": hints });
    result
}

/// Issue #40 item 5, found by the sim (`sim --modern-hints` at chaos 2: every answer lost
/// on Streamable HTTP started a recovery read): under the profile an answer lost on an
/// unordered connection is no gap — the next result's delta since the mark carries what it
/// did (profile §3.3, vector S6) — so the host reads nothing again. Before, the host core
/// took the profiled link for an unordered legacy one and read `toolsets/list` and
/// `tools/list` at once (§5.2's rule for a lost answer).
#[actix::test]
async fn s06_a_lost_answer_on_an_unordered_profiled_link_is_made_good_by_the_next_delta() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::MemoryUnordered).await;
        let host = start_host(
            server.connector(Default::default()),
            Duration::from_millis(250),
            |s| s.link.era = EraPolicy::Modern,
        );
        let mut conn = server.accept_showing_discover().await;
        let probe = conn.expect_next("server/discover").await;
        conn.reply(&probe, arcade_discovered()).await;
        // At connect: the tools, the statement (version 1: the lobby open, seek visible);
        // the listen stream is acknowledged and then tells nothing (with it open, the
        // tools are not read again after each call).
        let m = arcade_connect(&mut conn).await;
        conn.notify(
            "notifications/subscriptions/acknowledged",
            json!({"notifications": {"toolsListChanged": true, "mcpl/hints": true},
                   "_meta": {"io.modelcontextprotocol/subscriptionId": m["id"]}}),
        )
        .await;
        hints_until(&host, |h| !h.connecting && !h.recovering).await;
        // Game g1 opened at version 2.
        let open = spawn_call(
            &host,
            "toolsets--open",
            json!({"toolset": "game", "instance": "g1"}),
        );
        let req = conn.expect_next("toolsets/open").await;
        assert_eq!(req["params"]["_meta"]["mcpl/since"], 1, "{req}");
        let opened = json!({"version": 2,
            "tools": [{"name": "play", "instance": "g1", "visible": true, "v": 2},
                      {"name": "resign", "instance": "g1", "visible": true, "v": 2}],
            "toolsets": [{"toolset": "game", "instance": "g1", "state": "open", "v": 2}]});
        let result = json!({"instance": "g1", "content": [{"type": "text", "text": "g1 opened"}]});
        conn.reply(&req, hinted_result(result, opened)).await;
        assert!(!open.await.unwrap().is_error);
        assert!(is_usable(&host, "play").await);
        // A move whose answer is lost on its way: the server made it (version 3: play is
        // no longer visible in g1), the host reads a made-up error.
        let lost = spawn_call(
            &host,
            "toolsets--act",
            json!({"tool": "play", "instance": "g1", "args": {"move": "D4"}}),
        );
        let req = conn.expect_next("tools/call").await;
        conn.send(json!({"jsonrpc": "2.0", "id": req["id"],
                         "error": {"code": -32000, "message": "Streamable HTTP: the POST failed"}}))
            .await;
        assert!(lost.await.unwrap().is_error);
        // No read of the state follows: the next request is the agent's next call, sent
        // with the mark still at 2, and its result's delta carries the lost answer's
        // change.
        let next = spawn_call(&host, "arcade--clock", json!({}));
        let req = conn.next_request().await;
        assert_eq!(req["method"], "tools/call", "nothing is read again: {req}");
        assert_eq!(req["params"]["_meta"]["mcpl/since"], 2, "{req}");
        let delta = json!({"version": 3,
            "tools": [{"name": "play", "instance": "g1", "visible": false, "v": 3}]});
        let result = json!({"content": [{"type": "text", "text": "12:00"}]});
        conn.reply(&req, hinted_result(result, delta)).await;
        assert_eq!(
            next.await.unwrap().joined_text().lines().next(),
            Some("12:00")
        );
        assert!(
            !is_usable(&host, "play").await,
            "the delta made the lost move good"
        );
        let h = hints_until(&host, |h| !h.recovering).await;
        assert_eq!(h.stats.recoveries, 0, "{h:?}");
        assert_eq!(conn.count("toolsets/list"), 1);
        host.stop().await;
    })
    .await;
}

/// Issue #40 item 5, found by the sim (`sim --modern-hints` at chaos 3: a host whose first
/// stream's answer was lost never had one again): a `mcpl/hints` stream whose answer is
/// lost before its acknowledgment (the transport's made-up -32000: a POST cut, a server
/// restarting) is opened again from the mark, after the backoff's first delay; one the
/// server refuses is not (profile §3.5: the stream is only a wake-up, and a refusal says
/// the server will not serve it).
#[actix::test]
async fn s10_host_opens_again_a_hints_stream_whose_answer_was_lost() {
    let mut server = ScriptedServer::bind(Transport::Ws).await;
    let (link, mut events) = link(&server);
    let mut conn = server
        .accept_showing_discover()
        .await
        .with_limit(mcpl_testkit::LIMIT);
    let probe = conn.expect_next("server/discover").await;
    conn.reply(&probe, discovered()).await;
    within(async { while !matches!(events.recv().await.unwrap(), LinkEvent::Connected { .. }) {} })
        .await;
    let list = conn.expect_next("tools/list").await;
    conn.reply(
        &list,
        json!({"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"}),
    )
    .await;
    let listen = conn.expect_next("subscriptions/listen").await;
    // Its answer lost on the way, before any acknowledgment.
    conn.send(json!({"jsonrpc": "2.0", "id": listen["id"],
                     "error": {"code": -32000, "message": "Streamable HTTP: the POST failed"}}))
        .await;
    let again = conn.expect_next("subscriptions/listen").await;
    assert_eq!(again["params"]["notifications"]["mcpl/hints"], true);
    // Refused by the server: not opened again; the next request is the agent's own.
    conn.send(json!({"jsonrpc": "2.0", "id": again["id"],
                     "error": {"code": -32601, "message": "no such method"}}))
        .await;
    let call = link.send(mcpl_host::link::CallTool {
        name: "t".to_owned(),
        arguments: None,
        meta: None,
        timeout: None,
    });
    let call = tokio::spawn(call);
    let next = conn.next_request().await;
    assert_eq!(next["method"], "tools/call", "{next}");
    conn.reply(&next, json!({"resultType": "complete", "content": []}))
        .await;
    call.await.unwrap().unwrap().expect("the call is answered");
    link.send(Shutdown).await.unwrap();
}

/// Profile §3.5 (vector S18): an event on the `mcpl/events` stream is handed to the agent
/// as a legacy `push/event` would be, its stamped hints applied, and shown once though the
/// stream carries it twice (SPEC §9.2: at most once per `eventId`); nothing is written back
/// (a notification has no answer).
#[actix::test]
async fn stateless_s18_an_event_on_the_stream_is_shown_once_with_its_hints_applied() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(
            server.connector(Default::default()),
            Duration::from_millis(250),
            |s| s.link.era = EraPolicy::Modern,
        );
        let mut shown = host.subscribe();
        let mut conn = server.accept_showing_discover().await;
        let probe = conn.expect_next("server/discover").await;
        conn.reply(&probe, arcade_discovered()).await;
        let m = arcade_connect(&mut conn).await;
        // The host wants events: the filter asks for them, under a grant
        // with `pushEvents`.
        assert_eq!(m["params"]["notifications"]["mcpl/events"], true, "{m}");
        let grant = &m["params"]["_meta"]["mcpl/grant"]["effectiveCapabilities"];
        assert!(
            grant.as_array().unwrap().contains(&json!("pushEvents")),
            "{m}"
        );
        conn.notify(
            "notifications/subscriptions/acknowledged",
            json!({"notifications": {"toolsListChanged": true, "mcpl/hints": true,
                                     "mcpl/events": true},
                   "_meta": {"io.modelcontextprotocol/subscriptionId": m["id"]}}),
        )
        .await;
        conn.notify(
            "notifications/mcpl/hints",
            json!({"version": 1,
                   "_meta": {"io.modelcontextprotocol/subscriptionId": m["id"]}}),
        )
        .await;
        let sub = m["id"].clone();
        hints_until(&host, |h| !h.connecting && !h.recovering).await;
        assert!(!is_usable(&host, "play").await);
        // The server's event: a game opened for this principal at version 2, `play`
        // visible in it. The stream carries it twice.
        let event = json!({"featureSet": "arcade.games", "eventId": "ev-7",
            "timestamp": "2026-12-07T01:00:00.000Z",
            "payload": {"content": [{"type": "text", "text": "bob challenges you"}]},
            "toolset": "game", "instance": "g1",
            "hints": {"version": 2,
                "tools": [{"name": "play", "instance": "g1", "visible": true, "v": 2}],
                "toolsets": [{"toolset": "game", "instance": "g1", "state": "open", "v": 2}]},
            "_meta": {"io.modelcontextprotocol/subscriptionId": sub}});
        conn.notify("notifications/mcpl/event", event.clone()).await;
        conn.notify("notifications/mcpl/event", event).await;
        let told = loop {
            let s = shown.recv().await.expect("the host runs");
            if s.text.contains("bob challenges you") {
                break s;
            }
        };
        assert!(
            told.text
                .starts_with("Event from arcade about [arcade/game:g1]:"),
            "{}",
            told.text
        );
        // Nothing was written back for either copy: the next thing the server reads is
        // the agent's next call; by its answer both copies were read.
        nothing_else_was_sent(&host, &mut conn).await;
        let transcript = host.transcript().await.expect("the host runs");
        assert_eq!(
            texts(&transcript).matches("bob challenges you").count(),
            1,
            "shown once: {}",
            texts(&transcript)
        );
        // Its hints applied by their stamps.
        assert!(visible(&host, "play", Some("g1")).await);
        assert!(is_usable(&host, "play").await);
        let status = host.status();
        let open = &status.server("arcade").unwrap().open;
        assert!(
            open.contains(&("game".to_owned(), Some("g1".to_owned()))),
            "{open:?}"
        );
        host.stop().await;
    })
    .await;
}

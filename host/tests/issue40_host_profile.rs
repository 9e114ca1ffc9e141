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
    assert_eq!(
        listen["params"]["notifications"],
        json!({"toolsListChanged": true, "mcpl/hints": true})
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

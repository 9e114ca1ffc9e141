//! Issue #38 item 5: the surface host receives a message by the server SDK's own receipt
//! (`mcpl_server_core::dispatch`, `requests`, `Lifecycle`), so it answers each edge case as
//! a server SDK session does. The same raw JSON-RPC lines go to the real `mcpl-surface`
//! binary and to the real `mcpl-arcade` (a server SDK server) on stdio, and the errors must
//! be the same, word for word; what only the surface host bounds (requests in flight) is
//! checked against the shared piece's own words, with the arcade's answers held so that
//! the requests are in flight for certain.

use crate::support;

use mcpl_protocol::jsonrpc::Id;
use mcpl_server_core::requests::{id_in_use, too_many};
use mcpl_surface::session::MAX_IN_FLIGHT;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use support::proxy::Proxy;
use support::{StdioClient, proxied_arcade_config, stdio_arcade_config, text, ws_arcade_of_alice};

/// What both are sent before `initialize`, each line with what its answer must be.
fn before_initialize() -> Vec<(&'static str, i64)> {
    vec![
        // Unknown in every phase.
        (r#"{"jsonrpc":"2.0","id":1,"method":"nope/nope"}"#, -32601),
        // Known, but not before `initialize`.
        (r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, -32600),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}"#,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"featureSets/update","params":{"effectiveCapabilities":[]}}"#,
            -32600,
        ),
        // Params that do not read as the marker's.
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":2025}}"#,
            -32602,
        ),
        // A modern method without the modern keys is unknown to the legacy era.
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"server/discover"}"#,
            -32601,
        ),
        // Modern: a `_meta` naming itself modern without a required key; a version not
        // served; a method the era removed.
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            -32022,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            -32601,
        ),
        // Not JSON-RPC at all.
        (r#"{"jsonrpc":"2.0","id":10,"method":"#, -32700),
    ]
}

/// What both are sent after the handshake.
fn after_initialize() -> Vec<(&'static str, i64)> {
    vec![
        (
            r#"{"jsonrpc":"2.0","id":20,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"again","version":"0"}}}"#,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":5}}"#,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"arguments":{}}}"#,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":23,"method":"tools/listed"}"#,
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":24,"method":"server/discover"}"#,
            -32601,
        ),
        (r#"{"jsonrpc":"2.0","id":25,"method":""}"#, -32601),
        // Once opened with `initialize`, a modern `_meta` changes nothing: a legacy ping.
        (
            r#"{"jsonrpc":"2.0","id":26,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            0,
        ),
    ]
}

/// Writes `line` and reads its answer (the next message that is no notification).
async fn answer(c: &mut StdioClient, line: &str) -> Value {
    c.write_line(line).await;
    loop {
        let m = c.read().await;
        if m.get("method").is_none() {
            return m;
        }
        c.notifications.push(m);
    }
}

/// Sends each line to both and checks that both answer it alike: the same error, code,
/// message and data (or both a result).
async fn same_answers(
    surface: &mut StdioClient,
    server: &mut StdioClient,
    lines: Vec<(String, i64)>,
) {
    for (line, code) in lines {
        let line = line.as_str();
        let ours = answer(surface, line).await;
        let sdk = answer(server, line).await;
        assert_eq!(ours["id"], sdk["id"], "{line}");
        match code {
            0 => assert!(
                ours.get("result").is_some() && sdk.get("result").is_some(),
                "{line}: surface {ours}, server SDK {sdk}"
            ),
            code => {
                assert_eq!(sdk["error"]["code"], code, "{line}: server SDK {sdk}");
                assert_eq!(
                    ours["error"], sdk["error"],
                    "{line}: the surface host answers as the server SDK does"
                );
            }
        }
    }
}

#[tokio::test]
async fn issue38_05_the_surface_host_refuses_what_the_server_sdk_refuses_in_its_words() {
    let dir = tempfile::tempdir().unwrap();
    let mut surface = StdioClient::start(&stdio_arcade_config(dir.path(), "alice"), &[]);
    let mut server = StdioClient::arcade("alice");
    let owned = |lines: Vec<(&str, i64)>| -> Vec<(String, i64)> {
        lines.into_iter().map(|(l, c)| (l.to_owned(), c)).collect()
    };
    same_answers(&mut surface, &mut server, owned(before_initialize())).await;
    let handshake = r#"{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    for c in [&mut surface, &mut server] {
        let init = answer(c, handshake).await;
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        c.write_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
    }
    same_answers(&mut surface, &mut server, owned(after_initialize())).await;
    // A message over the transport's limit (4 MiB on both): refused with id `null`, and
    // the session goes on.
    let pad = "x".repeat(mcpl_transport::DEFAULT_MAX_MESSAGE_SIZE);
    let huge = json!({"jsonrpc": "2.0", "id": 27, "method": "ping", "params": {"pad": pad}});
    same_answers(&mut surface, &mut server, vec![(huge.to_string(), -32600)]).await;
    // An unknown notification, a bad cancellation and an unknown id's cancellation are
    // ignored by both: the next request is answered, and nothing before it.
    for c in [&mut surface, &mut server] {
        c.write_line(r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#)
            .await;
        c.write_line(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}"#,
        )
        .await;
        c.write_line(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}"#,
        )
        .await;
        let pong = answer(c, r#"{"jsonrpc":"2.0","id":30,"method":"ping"}"#).await;
        assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 30, "result": {}}));
    }
    assert_eq!(surface.close().await, Some(0));
    assert_eq!(server.close().await, Some(0));
}

/// `toolsets--open` of a tic-tac-toe instance, as request `id`: it goes to the arcade.
fn open(id: i64, instance: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "toolsets--open",
                      "arguments": {"toolset": "tictactoe", "instance": instance}}})
}

#[tokio::test]
async fn issue38_05_requests_in_flight_are_bounded_unique_and_a_cancelled_one_unanswered() {
    // The arcade's answers are held: every call below is in flight until they are let go.
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, addr) = ws_arcade_of_alice().await;
    let proxy = Proxy::start(addr).await.unwrap();
    let mut c = StdioClient::ready(&proxied_arcade_config(dir.path(), &proxy), &[]).await;
    proxy.hold();
    let bound = i64::try_from(MAX_IN_FLIGHT).unwrap();
    let ids = 101..=100 + bound;
    for id in ids.clone() {
        c.send(&open(id, &format!("t{id}"))).await;
    }
    // The one past the bound is refused at once, in the shared piece's words.
    c.send(&json!({"jsonrpc": "2.0", "id": 200, "method": "tools/list"}))
        .await;
    let full = c.response(200).await;
    let words = serde_json::to_value(too_many(MAX_IN_FLIGHT)).unwrap();
    assert_eq!(full["error"], words, "{full}");
    assert_eq!(full["error"]["code"], -32600, "{full}");
    // A reused id is refused as such, full or not.
    c.send(&open(101, "again")).await;
    let reused = c.response(101).await;
    let words = serde_json::to_value(id_in_use(&Id::Number(101))).unwrap();
    assert_eq!(reused["error"], words, "{reused}");
    assert_eq!(
        reused["error"]["message"],
        "request id 101 is in use by a request still running"
    );
    // A cancelled request keeps its place until its call ends, and is never answered.
    c.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 102, "reason": "changed my mind"}}),
    )
    .await;
    c.send(&json!({"jsonrpc": "2.0", "id": 201, "method": "tools/list"}))
        .await;
    let still_full = c.response(201).await;
    assert_eq!(still_full["error"]["code"], -32600, "{still_full}");
    // Answered in order after the cancellation: ping is not bounded, and the surface host
    // has read everything before it.
    let ping = c.request("ping", json!({})).await;
    assert_eq!(ping["result"], json!({}), "{ping}");
    proxy.release();
    // Each call not cancelled is answered once, in whatever order the calls end.
    let mut waiting: BTreeSet<i64> = ids.clone().filter(|id| *id != 102).collect();
    while !waiting.is_empty() {
        let m = c.read().await;
        if m.get("method").is_some() {
            c.notifications.push(m);
            continue;
        }
        let id = m["id"].as_i64().unwrap_or_default();
        assert!(waiting.remove(&id), "an answer to no call waiting: {m}");
        assert!(m.get("result").is_some(), "{m}");
    }
    // Every call ended: there is room again, and the reused id 101 never ran.
    let look = c.call("toolsets--look", json!({})).await;
    assert!(text(&look).contains("tictactoe:t101"), "{look}");
    assert!(!text(&look).contains("tictactoe:again"), "{look}");
    let rest = c.close_and_read_rest().await;
    assert!(
        rest.iter().all(|m| m["id"] != 102),
        "the cancelled request was answered: {rest:?}"
    );
}

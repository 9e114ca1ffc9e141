//! Issue #38 item 5: the surface host serves MCP by the protocol crate's typed methods, and
//! receives a `featureSets/update` by the rule the server SDK follows
//! (`mcpl_protocol::grant`), where its own copy had drifted. Raw JSON-RPC lines on the real
//! `mcpl-surface` binary's stdio, in front of the real `mcpl-arcade`.

use crate::support;

use serde_json::{Value, json};
use support::{StdioClient, arcade_of_alice_and_bob, stdio_arcade_config, write_config};

/// `initialize` as a client that speaks MCPL, then `notifications/initialized`; the result.
async fn mcpl_handshake(c: &mut StdioClient) -> Value {
    let init = c
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25",
                   "capabilities": {"experimental": {"mcpl": {"version": "0.5", "pushEvents": true}}},
                   "clientInfo": {"name": "raw-mcpl-client", "version": "0"}}),
        )
        .await;
    assert!(
        init["result"]["capabilities"]["experimental"]["mcpl"]["featureSets"]["events"].is_object(),
        "the manifest: {init}"
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    init
}

#[tokio::test]
async fn issue38_05_unknown_methods_get_32601_and_bad_params_32602_saying_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = StdioClient::start(&stdio_arcade_config(dir.path(), "alice"), &[]);
    // Before `initialize`: unknown is unknown, known is refused until then — a
    // `featureSets/update` too, as the server SDK refuses it (it was -32601 here).
    let unknown = c.request("resources/list", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    assert_eq!(
        unknown["error"]["message"], "method not found: resources/list",
        "{unknown}"
    );
    let early = c
        .request(
            "featureSets/update",
            json!({"effectiveCapabilities": ["pushEvents"]}),
        )
        .await;
    assert_eq!(early["error"]["code"], -32600, "{early}");
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap()
            .contains("send initialize first"),
        "{early}"
    );
    let bad_init = c
        .request("initialize", json!({"protocolVersion": 2025}))
        .await;
    assert_eq!(bad_init["error"]["code"], -32602, "{bad_init}");
    assert!(
        bad_init["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid params: "),
        "{bad_init}"
    );

    c.handshake().await;
    for (method, params, says) in [
        ("tools/call", json!({"name": 5}), "expected a string"),
        (
            "tools/call",
            json!({"arguments": {}}),
            "missing field `name`",
        ),
        ("logging/setLevel", json!({"level": "loud"}), "loud"),
        ("tools/list", json!({"cursor": "x"}), "no such cursor"),
    ] {
        let bad = c.request(method, params).await;
        assert_eq!(bad["error"]["code"], -32602, "{method}: {bad}");
        let message = bad["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("invalid params: ") && message.contains(says),
            "{method}: {bad}"
        );
    }
    for method in ["prompts/list", "server/discover", "tools/listed", ""] {
        let unknown = c.request(method, json!({})).await;
        assert_eq!(unknown["error"]["code"], -32601, "{method}: {unknown}");
    }
    // A client that spoke no MCPL was shown no manifest: there is nothing to grant.
    let grant = c
        .request(
            "featureSets/update",
            json!({"effectiveCapabilities": ["pushEvents"]}),
        )
        .await;
    assert_eq!(grant["error"]["code"], -32601, "{grant}");
    // The session goes on: a result is typed as before.
    let ping = c.request("ping", json!({})).await;
    assert_eq!(
        ping,
        json!({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
    );
    assert_eq!(c.close().await, Some(0));
}

/// The receipt for a grant whose `disabled` names a feature set the manifest does not
/// declare: accepted, with a note saying so — the server SDK's receipt
/// (`server/tests/lifecycle.rs` has the same exchange); the surface host's own copy left
/// the note out.
#[tokio::test]
async fn issue38_05_the_receipt_notes_an_undeclared_feature_set_as_the_server_s_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = StdioClient::start(&stdio_arcade_config(dir.path(), "alice"), &[]);
    mcpl_handshake(&mut c).await;
    let receipt = c
        .request(
            "featureSets/update",
            json!({"effectiveCapabilities": ["tools", "pushEvents"], "disabled": ["nope"]}),
        )
        .await;
    assert_eq!(
        receipt["result"],
        json!({"accepted": true, "notes": ["feature set \"nope\" is not declared"]}),
        "{receipt}"
    );
    assert_eq!(c.close().await, Some(0));
}

/// Sends `request` and reads until its answer; what comes before it (notifications, and
/// the `push/event` requests of a client granted them) is kept in `c.notifications`.
async fn exchange(c: &mut StdioClient, request: Value) -> Value {
    c.send(&request).await;
    loop {
        let m = c.read().await;
        if m.get("id") == request.get("id") && m.get("method").is_none() {
            return m;
        }
        c.notifications.push(m);
    }
}

/// alice (an MCPL client granted `pushEvents`) and bob, each on a surface host of their
/// own in front of one arcade; `stop` is sent by alice, then bob challenges her: the
/// challenge reaches her as `notifications/message`, and no `push/event` came.
async fn pushes_stop_after(stop: Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let (_arcade, url) = arcade_of_alice_and_bob().await;
    let config = |who: &str| {
        write_config(
            dir.path(),
            &format!("{who}.json"),
            &json!({"mcpServers": {"arcade": {
                "url": url,
                "headers": {"Authorization": format!("Bearer {who}-arcade-secret")}
            }}}),
        )
    };
    let mut alice = StdioClient::start(&config("alice"), &[]);
    mcpl_handshake(&mut alice).await;
    let granted = exchange(
        &mut alice,
        json!({"jsonrpc": "2.0", "id": 80, "method": "featureSets/update",
               "params": {"effectiveCapabilities": ["pushEvents"]}}),
    )
    .await;
    assert_eq!(granted["result"], json!({"accepted": true}), "{granted}");
    // Listed once the servers settled: alice is online at the arcade.
    let listed = exchange(
        &mut alice,
        json!({"jsonrpc": "2.0", "id": 81, "method": "tools/list"}),
    )
    .await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    let answer = match stop.get("id") {
        Some(_) => exchange(&mut alice, stop.clone()).await,
        None => {
            alice.send(&stop).await;
            // Answered once the notification before it was taken.
            exchange(
                &mut alice,
                json!({"jsonrpc": "2.0", "id": 82, "method": "ping"}),
            )
            .await
        }
    };
    // What was pushed before the stop was taken, it was pushed under the grant.
    alice.notifications.clear();

    let mut bob = StdioClient::ready(&config("bob"), &[]).await;
    let sent = bob
        .call(
            "toolsets--act",
            json!({"tool": "challenge", "args": {"opponent": "alice", "game": "tictactoe"}}),
        )
        .await;
    assert_ne!(sent["isError"], true, "{sent}");
    loop {
        let n = alice.notification("notifications/message").await;
        if n["params"]["data"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("bob challenges you"))
        {
            break;
        }
    }
    let pushed: Vec<&Value> = alice
        .notifications
        .iter()
        .filter(|m| m["method"] == "push/event")
        .collect();
    assert!(pushed.is_empty(), "pushed after {stop}: {pushed:?}");
    assert_eq!(bob.close().await, Some(0));
    answer
}

/// SPEC §5.4, as the server SDK receives it (`Policy::receive`): a `featureSets/update`
/// that grants and denies `pushEvents` is refused, and what it denied is revoked from the
/// policy in force — the surface host kept pushing under the old grant.
#[tokio::test]
async fn issue38_05_a_refused_update_revokes_what_it_denied_so_pushes_stop() {
    let refused = pushes_stop_after(
        json!({"jsonrpc": "2.0", "id": 90, "method": "featureSets/update",
        "params": {"effectiveCapabilities": ["pushEvents"], "deniedCapabilities": ["pushEvents"]}}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(
        refused["error"]["data"],
        json!({"capability": "pushEvents"}),
        "{refused}"
    );
}

/// SPEC §6.7, as the server SDK reads it: a `featureSets/update` notification narrows the
/// policy in force by its `disabled` — the surface host ignored it and kept pushing.
#[tokio::test]
async fn issue38_05_a_notification_disabling_the_feature_set_stops_the_pushes() {
    let pong = pushes_stop_after(json!({"jsonrpc": "2.0", "method": "featureSets/update",
        "params": {"disabled": ["events"]}}))
    .await;
    assert_eq!(pong["result"], json!({}), "{pong}");
}

//! Issue #37 ("Hardening, second round"), the host's items: one tool nested too deep costs
//! only itself (item 12). Each test drives a scripted server over a real WebSocket, raw
//! JSON, against the real host.

use crate::support;

use mcpl_testkit::within;
use serde_json::{Value, json};
use std::time::Duration;
use support::server::*;

const HOLD: Duration = Duration::from_millis(250);

/// A schema `levels` JSON Schema levels deep: each is two JSON levels (`properties`, then
/// the property's schema), so 70 levels nest past what serde_json reads (128).
fn deep_schema(levels: usize) -> Value {
    let mut s = json!({"type": "string"});
    for _ in 0..levels {
        s = json!({"type": "object", "properties": {"a": s}});
    }
    s
}

#[actix::test]
async fn issue37_12_a_tool_nested_too_deep_costs_only_itself() {
    within(async {
        let mut server = ScriptedServer::bind(Transport::Ws).await;
        let host = start_host(server.connector(Default::default()), HOLD, |_| {});
        let mut conn = server.accept().await;
        let tools = json!([
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "deep", "inputSchema": deep_schema(70)},
            {"name": "either", "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}}}
        ]);
        conn.connect(init_with(None), tools.clone(), 0, None).await;
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
        let told = "arcade: left out of your tools: `deep` — their definitions nest too deep";
        let t = texts(&host.transcript().await.unwrap());
        assert_eq!(t.matches(told).count(), 1, "{t}");
        let r = host.call("arcade--deep", json!({})).await;
        assert!(
            r.as_ref().is_err() || r.as_ref().is_ok_and(|r| r.is_error),
            "a tool left out cannot be called: {r:?}"
        );

        // Listed again, still unreadable: not told again.
        conn.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
            .await;
        let m = conn.expect_next("tools/list").await;
        conn.reply(&m, json!({"tools": tools})).await;
        // A nesting bomb beside the tools still fails the page: the list stays as it was.
        conn.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
            .await;
        let m = conn.expect_next("tools/list").await;
        let mut bomb = json!({});
        for _ in 0..300 {
            bomb = json!({ "a": bomb });
        }
        conn.reply(&m, json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}], "_meta": {"x": bomb}}))
            .await;
        // The host's next read after the failure is answered with a list without `deep`.
        conn.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
            .await;
        let m = conn.expect_next("tools/list").await;
        conn.reply(&m, json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}))
            .await;
        host.wait_for(|s| {
            s.server("arcade")
                .is_some_and(|a| a.ready && a.listed_tools == 1)
        })
        .await
        .unwrap();
        // Shown since the first notice: `deep` was not told again.
        let t = texts(&host.transcript().await.unwrap());
        assert_eq!(t.matches("nest too deep").count(), 0, "{t}");
        host.stop().await;
    })
    .await;
}

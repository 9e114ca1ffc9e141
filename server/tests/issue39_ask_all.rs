//! `ToolContext::ask_all` from outside (issue #39 item 6, MRTR's "multiple input
//! requests"), in raw JSON on real sockets: to a modern client over Streamable HTTP the
//! three questions go out together in one `InputRequiredResult` and the retry answers them
//! together; to a legacy client over WebSocket they are asked one after the other.

// Shared with `hostile_client.rs`, which uses the rest of it.
#[allow(dead_code)]
use crate::raw;

use mcpl_protocol::client_features::{CreateMessageParams, ElicitParams};
use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::Listener;
use mcpl_server::tool::{ClientAnswer, ClientQuestion};
use mcpl_server::{Server, ToolContext, ToolError};
use mcpl_testkit::{msg, within};
use mcpl_transport::ServerOptions;
use raw::{exchange, post, ws_connect};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;

fn server() -> Server {
    Server::builder("ask-all", "1.0")
        .tool(
            Tool::new(
                "three",
                "Asks three questions at once",
                json!({"type": "object"}),
            ),
            |ctx: ToolContext, _: Value| async move {
                let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
                let answers = ctx
                    .ask_all(vec![
                        (
                            "name".into(),
                            ClientQuestion::Elicit(ElicitParams::form("Name?", schema)),
                        ),
                        (
                            "hi".into(),
                            ClientQuestion::Sample(CreateMessageParams::user_text("Greet", 9)),
                        ),
                        ("roots".into(), ClientQuestion::Roots),
                    ])
                    .await
                    .map_err(|e| ToolError::failed(e.to_string()))?;
                let said: Vec<String> = answers
                    .iter()
                    .map(|(k, a)| match a {
                        ClientAnswer::Elicited(e) => format!("{k}={}", json!(e.content)),
                        ClientAnswer::Sampled(s) => format!("{k}={}", s.text()),
                        ClientAnswer::Roots(r) => format!("{k}={}", r.roots.len()),
                        _ => format!("{k}=?"),
                    })
                    .collect();
                Ok::<_, ToolError>(CallToolResult::text(said.join("; ")))
            },
        )
        .build()
        .expect("a valid server")
}

fn opts() -> Arc<ServerOptions> {
    let mut opts = ServerOptions::default();
    opts.tokens.insert("t".into(), "alice".into());
    Arc::new(opts)
}

/// The server on a Streamable HTTP listener and a WebSocket listener (kept while the test
/// holds them).
async fn serve() -> (Listener, Listener) {
    let server = server();
    let http = server
        .serve_http("127.0.0.1:0".parse().unwrap(), opts())
        .await
        .expect("bind http");
    let ws = server
        .serve_ws("127.0.0.1:0".parse().unwrap(), opts())
        .await
        .expect("bind ws");
    (http, ws)
}

async fn modern_call(addr: SocketAddr, extra: Value) -> Value {
    let mut params = json!({"name": "three", "arguments": {},
        "_meta": msg::modern_meta(json!({"elicitation": {}, "sampling": {}, "roots": {}}))});
    if let (Some(p), Value::Object(extra)) = (params.as_object_mut(), extra) {
        p.extend(extra);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let headers = [
        ("Authorization", "Bearer t"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "three"),
    ];
    within(exchange(
        addr,
        post(addr, &headers, body.to_string().as_bytes()),
    ))
    .await
    .json()
}

#[actix::test]
async fn issue39_06_questions_asked_together_go_out_together_to_a_modern_client() {
    let (http, _ws) = serve().await;
    let addr = http.local_addr();
    let first = modern_call(addr, json!({})).await;
    let r = &first["result"];
    assert_eq!(r["resultType"], "input_required", "{first:#}");
    let asked = r["inputRequests"].as_object().unwrap();
    assert_eq!(
        asked
            .iter()
            .map(|(k, v)| (k.as_str(), v["method"].as_str().unwrap()))
            .collect::<Vec<_>>(),
        [
            ("hi", "sampling/createMessage"),
            ("name", "elicitation/create"),
            ("roots", "roots/list")
        ]
    );
    let retry = modern_call(
        addr,
        json!({"requestState": r["requestState"], "inputResponses": {
            "name": {"action": "accept", "content": {"name": "Ada"}},
            "hi": {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"},
            "roots": {"roots": [{"uri": "file:///a"}]}}}),
    )
    .await;
    assert_eq!(
        retry["result"]["content"][0]["text"], "hi=hello; name={\"name\":\"Ada\"}; roots=1",
        "{retry:#}"
    );
}

#[actix::test]
async fn issue39_06_questions_asked_together_are_asked_in_turn_of_a_legacy_client() {
    let (_http, ws_listener) = serve().await;
    let addr = ws_listener.local_addr();
    let mut ws = ws_connect(addr, &[("Authorization", "Bearer t")], None)
        .await
        .unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}, "sampling": {}, "roots": {}},
        "clientInfo": {"name": "raw", "version": "0"}}});
    ws.send_text(init.to_string().as_bytes()).await.unwrap();
    within(ws.recv_json()).await;
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    ws.send_text(done.to_string().as_bytes()).await.unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "three", "arguments": {}}});
    ws.send_text(call.to_string().as_bytes()).await.unwrap();
    let answers = [
        (
            "elicitation/create",
            json!({"action": "accept", "content": {"name": "Ada"}}),
        ),
        (
            "sampling/createMessage",
            json!({"role": "assistant", "model": "m",
            "content": {"type": "text", "text": "hello"}}),
        ),
        ("roots/list", json!({"roots": []})),
    ];
    for (method, answer) in answers {
        let asked = within(ws.recv_json()).await;
        assert_eq!(asked["method"], method, "asked in turn: {asked:#}");
        let reply = json!({"jsonrpc": "2.0", "id": asked["id"], "result": answer});
        ws.send_text(reply.to_string().as_bytes()).await.unwrap();
    }
    let result = within(ws.recv_json()).await;
    assert_eq!(
        result["result"]["content"][0]["text"], "hi=hello; name={\"name\":\"Ada\"}; roots=0",
        "{result:#}"
    );
}

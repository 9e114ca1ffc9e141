//! Issue #39 item 7 from outside: resources, templates, prompts and completion of a server
//! built on the SDK, in raw JSON on real sockets — legacy over WebSocket (after
//! `initialize`), modern over Streamable HTTP (per-request `_meta`) — with the errors the
//! spec gives, a handler's panic contained, and a list that depends on who asks.

// Shared with `hostile_client.rs`, which uses the rest of it.
#[allow(dead_code)]
use crate::raw;

use mcpl_protocol::server_features::{
    GetPromptResult, Prompt, PromptArgument, PromptMessage, Resource, ResourceContents,
    ResourceInfo, ResourceTemplate,
};
use mcpl_server::Listener;
use mcpl_server::Server;
use mcpl_server::features::{FeatureError, RequestContext};
use mcpl_testkit::within;
use mcpl_transport::ServerOptions;
use raw::{exchange, post, ws_connect};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

/// A server with one fixed resource, a template, a per-principal listing, a prompt, a
/// completion and a resource whose handler panics.
fn server() -> Server {
    Server::builder("features", "1.0")
        .resource(
            Resource::new(
                "notes://readme",
                ResourceInfo::new("readme", "text/plain", "What this is"),
            ),
            |_: RequestContext| async {
                Ok(vec![ResourceContents::text(
                    "notes://readme",
                    "text/plain",
                    "Hello.",
                )])
            },
        )
        .resource(
            Resource::new(
                "notes://broken",
                ResourceInfo::new("broken", "text/plain", "Panics"),
            ),
            |_: RequestContext| async { panic!("a handler bug") },
        )
        .resource_template(
            ResourceTemplate::new(
                "notes://{owner}/{id}",
                ResourceInfo::new("note", "text/plain", "A note"),
            ),
            |cx: RequestContext, uri: String, vars: BTreeMap<String, String>| async move {
                // Only the owner reads their notes.
                if cx.principal().name() != vars["owner"] {
                    return Err(FeatureError::ResourceNotFound(uri));
                }
                Ok(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    format!("note {} of {}", vars["id"], vars["owner"]),
                )])
            },
        )
        .resource_list(|cx: RequestContext| async move {
            let me = cx.principal().name();
            vec![Resource::new(
                format!("notes://{me}/1"),
                ResourceInfo::new("my first note", "text/plain", "Yours"),
            )]
        })
        .prompt(
            Prompt::new(
                "greet",
                "Greets someone",
                vec![PromptArgument::required("who", "Whom")],
            ),
            |_: RequestContext, args: BTreeMap<String, String>| async move {
                Ok(GetPromptResult {
                    description: None,
                    messages: vec![PromptMessage::user(format!(
                        "Say hello to {}.",
                        args["who"]
                    ))],
                })
            },
        )
        .completion(|_: RequestContext, p| async move {
            let words = ["alice", "alfred", "bob"];
            Ok(words
                .iter()
                .filter(|w| w.starts_with(&p.argument.value))
                .map(|w| (*w).to_owned())
                .collect())
        })
        .build()
        .expect("a valid server")
}

fn opts() -> Arc<ServerOptions> {
    let mut opts = ServerOptions::default();
    opts.tokens.insert("alice-token".into(), "alice".into());
    opts.tokens.insert("bob-token".into(), "bob".into());
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

/// A modern request as `token`'s, answered in one JSON body: its status and body.
async fn modern(addr: SocketAddr, token: &str, method: &str, params: Value) -> (u16, Value) {
    let mut params = params;
    params["_meta"] = mcpl_testkit::msg::modern_meta(json!({}));
    let name = params
        .get("uri")
        .or_else(|| params.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let auth = format!("Bearer {token}");
    let mut headers = vec![
        ("Authorization", auth.as_str()),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = name.as_deref().filter(|_| method != "completion/complete") {
        headers.push(("Mcp-Name", name));
    }
    let answer = within(exchange(
        addr,
        post(addr, &headers, body.to_string().as_bytes()),
    ))
    .await;
    (answer.status, answer.json())
}

#[actix::test]
async fn issue39_07_modern_requests_read_resources_prompts_and_completions() {
    let (http, _ws) = serve().await;
    let addr = http.local_addr();
    let (status, discover) = modern(addr, "alice-token", "server/discover", json!({})).await;
    assert_eq!(status, 200);
    let caps = &discover["result"]["capabilities"];
    assert_eq!(
        (&caps["resources"], &caps["prompts"], &caps["completions"]),
        (&json!({}), &json!({}), &json!({})),
        "{discover}"
    );
    // The list: the fixed ones, then alice's own; a per-principal list is private.
    let (_, list) = modern(addr, "alice-token", "resources/list", json!({})).await;
    let uris: Vec<&str> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        ["notes://readme", "notes://broken", "notes://alice/1"]
    );
    assert_eq!(
        (&list["result"]["cacheScope"], &list["result"]["ttlMs"]),
        (&json!("private"), &json!(0))
    );
    let (_, list) = modern(addr, "bob-token", "resources/list", json!({})).await;
    assert_eq!(list["result"]["resources"][2]["uri"], "notes://bob/1");
    // Reads: fixed, through the template, and refused to another principal.
    let (_, read) = modern(
        addr,
        "alice-token",
        "resources/read",
        json!({"uri": "notes://readme"}),
    )
    .await;
    assert_eq!(read["result"]["contents"][0]["text"], "Hello.", "{read}");
    assert_eq!(read["result"]["resultType"], "complete");
    let (_, read) = modern(
        addr,
        "alice-token",
        "resources/read",
        json!({"uri": "notes://alice/7"}),
    )
    .await;
    assert_eq!(
        read["result"]["contents"][0]["text"], "note 7 of alice",
        "{read}"
    );
    for (token, uri) in [
        ("bob-token", "notes://alice/7"),
        ("alice-token", "notes://nothing"),
    ] {
        let (status, read) = modern(addr, token, "resources/read", json!({"uri": uri})).await;
        assert_eq!(status, 200, "{read}");
        assert_eq!(read["error"]["code"], -32602, "{read}");
        assert_eq!(read["error"]["data"]["uri"], uri, "{read}");
    }
    // A handler's panic is its request's -32603, and the server goes on.
    let (_, broken) = modern(
        addr,
        "alice-token",
        "resources/read",
        json!({"uri": "notes://broken"}),
    )
    .await;
    assert_eq!(broken["error"]["code"], -32603, "{broken}");
    // Prompts: listed (public: built with the server), got, a missing argument named.
    let (_, prompts) = modern(addr, "alice-token", "prompts/list", json!({})).await;
    assert_eq!(prompts["result"]["prompts"][0]["name"], "greet");
    assert_eq!(prompts["result"]["cacheScope"], "public");
    let (_, got) = modern(
        addr,
        "alice-token",
        "prompts/get",
        json!({"name": "greet", "arguments": {"who": "Ada"}}),
    )
    .await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "Say hello to Ada.",
        "{got}"
    );
    let (_, missing) = modern(addr, "alice-token", "prompts/get", json!({"name": "greet"})).await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"who\""),
        "{missing}"
    );
    let (_, unknown) = modern(addr, "alice-token", "prompts/get", json!({"name": "nope"})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    // Completion.
    let (_, done) = modern(
        addr,
        "alice-token",
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"},
               "argument": {"name": "who", "value": "al"}}),
    )
    .await;
    assert_eq!(
        done["result"]["completion"],
        json!({"values": ["alice", "alfred"], "total": 2, "hasMore": false}),
        "{done}"
    );
}

#[actix::test]
async fn issue39_07_legacy_requests_read_them_after_initialize() {
    let (_http, ws_listener) = serve().await;
    let addr = ws_listener.local_addr();
    let mut ws = ws_connect(addr, &[("Authorization", "Bearer bob-token")], None)
        .await
        .expect("upgrade");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    ws.send_text(init.to_string().as_bytes()).await.unwrap();
    let answer = within(ws.recv_json()).await;
    assert_eq!(
        answer["result"]["capabilities"]["resources"],
        json!({}),
        "{answer}"
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    ws.send_text(initialized.to_string().as_bytes())
        .await
        .unwrap();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/templates/list"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "notes://bob/3"}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/list", "params": {"cursor": "x"}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe", "params": {"uri": "notes://readme"}}),
    ];
    for r in &requests {
        ws.send_text(r.to_string().as_bytes()).await.unwrap();
    }
    let mut answers = BTreeMap::new();
    for _ in &requests {
        let a = within(ws.recv_json()).await;
        answers.insert(a["id"].as_i64().unwrap(), a);
    }
    assert_eq!(
        answers[&1]["result"]["resourceTemplates"][0]["uriTemplate"],
        "notes://{owner}/{id}"
    );
    assert!(
        answers[&1]["result"].get("ttlMs").is_none(),
        "legacy results carry no caching hints: {}",
        answers[&1]
    );
    assert_eq!(
        answers[&2]["result"]["contents"][0]["text"],
        "note 3 of bob"
    );
    assert_eq!(answers[&3]["error"]["code"], -32602, "a cursor never given");
    assert_eq!(answers[&4]["error"]["code"], -32601, "no subscriptions");
}

/// SEP-2243: `Server::serve_http` checks each modern call's `Mcp-Param-*` headers against
/// its tools' `x-mcp-header` marks (-32020, 400 when one is missing or differs), and a tool
/// whose marks are invalid does not build.
#[actix::test]
async fn issue39_sep2243_serve_http_checks_marked_arguments_and_invalid_marks_do_not_build() {
    use mcpl_protocol::mcp::{CallToolResult, Tool};
    use mcpl_server::{BuildError, ToolContext, ToolError};
    let marked = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}}});
    let server = Server::builder("marks", "1.0")
        .tool(
            Tool::new("where", "Says the region", marked),
            |_: ToolContext, args: Value| async move {
                Ok::<_, ToolError>(CallToolResult::text(args["region"].to_string()))
            },
        )
        .build()
        .expect("a valid server");
    let listener = server
        .serve_http("127.0.0.1:0".parse().unwrap(), opts())
        .await
        .expect("bind");
    let addr = listener.local_addr();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "where", "arguments": {"region": "us-west1"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let base = [
        ("Authorization", "Bearer alice-token"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "where"),
    ];
    let without = within(exchange(addr, post(addr, &base, body.as_bytes()))).await;
    assert_eq!(without.status, 400, "{without:?}");
    assert_eq!(without.json()["error"]["code"], -32020);
    let mut with = base.to_vec();
    with.push(("Mcp-Param-Region", "us-west1"));
    let answered = within(exchange(addr, post(addr, &with, body.as_bytes()))).await;
    assert_eq!(answered.status, 200, "{answered:?}");
    assert_eq!(
        answered.json()["result"]["content"][0]["text"],
        "\"us-west1\""
    );
    let bad = json!({"type": "object", "properties": {
        "n": {"type": "number", "x-mcp-header": "N"}}});
    let refused = Server::builder("bad", "1.0")
        .tool(
            Tool::new("t", "Bad marks", bad),
            |_: ToolContext, _: Value| async { Ok::<_, ToolError>(CallToolResult::text("x")) },
        )
        .build();
    assert!(
        matches!(refused, Err(BuildError::HeaderMarks { .. })),
        "{refused:?}"
    );
}

/// A server whose prompt and resource handlers ask the client (MRTR on `prompts/get` and
/// `resources/read`), and whose resource listing tries to and may not.
fn asking_server() -> Server {
    use mcpl_protocol::client_features::ElicitParams;
    let schema = || json!({"type": "object", "properties": {"why": {"type": "string"}}});
    let said = |answer: mcpl_protocol::client_features::ElicitResult| {
        answer
            .content
            .and_then(|c| c.get("why").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| answer.action.as_str().to_owned())
    };
    Server::builder("asking", "1.0")
        .prompt(
            Prompt::new("confirm", "Asks why first", vec![]),
            move |cx: RequestContext, _| async move {
                let answer = cx
                    .elicit_as("why", ElicitParams::form("Why?", schema()))
                    .await?;
                Ok(GetPromptResult {
                    description: None,
                    messages: vec![PromptMessage::user(format!("because {}", said(answer)))],
                })
            },
        )
        .resource_template(
            ResourceTemplate::new(
                "vault://{id}",
                ResourceInfo::new("vault", "text/plain", "Asks first"),
            ),
            move |cx: RequestContext, uri: String, _| async move {
                let answer = cx.elicit(ElicitParams::form("Open it?", schema())).await?;
                Ok(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    format!("opened: {}", said(answer)),
                )])
            },
        )
        .resource_list(|cx: RequestContext| async move {
            let refused = cx
                .elicit(ElicitParams::form("List?", json!({"type": "object"})))
                .await
                .unwrap_err();
            vec![Resource::new(
                "vault://listed",
                ResourceInfo::new(
                    refused.to_string(),
                    "text/plain",
                    "What asking from a listing got",
                ),
            )]
        })
        .build()
        .expect("a valid server")
}

/// A modern request declaring elicitation, as `alice`: its status and body.
async fn modern_eliciting(addr: SocketAddr, method: &str, params: Value) -> (u16, Value) {
    let mut params = params;
    params["_meta"] = mcpl_testkit::msg::modern_meta(json!({"elicitation": {"form": {}}}));
    let name = params
        .get("uri")
        .or_else(|| params.get("name"))
        .and_then(Value::as_str)
        .unwrap()
        .to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let headers = [
        ("Authorization", "Bearer alice-token"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
        ("Mcp-Name", name.as_str()),
    ];
    let answer = within(exchange(
        addr,
        post(addr, &headers, body.to_string().as_bytes()),
    ))
    .await;
    (answer.status, answer.json())
}

/// Issue #39 (the official suite's `input-required-result-non-tool-request`): a prompt or
/// resource handler asks a modern client as a tool handler does — the request is answered
/// with an `InputRequiredResult`, and its retry carrying `inputResponses` (and the signed
/// `requestState`) runs the handler again with the answer; the state is bound to the prompt
/// or the URI it was issued for. A listing may not ask (MRTR serves `prompts/get`,
/// `resources/read` and `tools/call` only).
#[actix::test]
async fn issue39_06_modern_prompts_and_resource_reads_ask_in_an_input_required_result() {
    let http = asking_server()
        .serve_http("127.0.0.1:0".parse().unwrap(), opts())
        .await
        .expect("bind http");
    let addr = http.local_addr();

    let (status, first) = modern_eliciting(addr, "prompts/get", json!({"name": "confirm"})).await;
    assert_eq!(status, 200, "{first}");
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["why"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"].as_str().expect("a requestState");
    let answer = json!({"action": "accept", "content": {"why": "tests"}});
    let (status, done) = modern_eliciting(
        addr,
        "prompts/get",
        json!({"name": "confirm", "inputResponses": {"why": answer}, "requestState": state}),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(
        done["result"]["messages"][0]["content"]["text"],
        "because tests"
    );

    // A resource read asks under a key the SDK derives; the retry answers under it.
    let (_, first) = modern_eliciting(addr, "resources/read", json!({"uri": "vault://1"})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let (key, _) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let state = result["requestState"].as_str().unwrap();
    let (_, done) = modern_eliciting(
        addr,
        "resources/read",
        json!({"uri": "vault://1", "inputResponses": {key.clone(): answer}, "requestState": state}),
    )
    .await;
    assert_eq!(
        done["result"]["contents"][0]["text"], "opened: tests",
        "{done}"
    );
    // The state was issued for vault://1: another URI refuses it.
    let (status, refused) = modern_eliciting(
        addr,
        "resources/read",
        json!({"uri": "vault://2", "inputResponses": {key.clone(): answer}, "requestState": state}),
    )
    .await;
    // -32602 is an answer like any other (200), as for a tool call's state.
    assert_eq!(status, 200, "{refused}");
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(refused["error"]["data"]["reason"], "invalid_request_state");

    let (_, listed) = modern_eliciting(addr, "resources/list", json!({"name": "x"})).await;
    let name = listed["result"]["resources"][0]["name"].as_str().unwrap();
    assert!(
        name.contains("only a prompts/get or resources/read handler may ask"),
        "{listed}"
    );
}

/// Issue #39: to a legacy client (a connection opened with `initialize`) a prompt handler's
/// question is sent as `elicitation/create` while its `prompts/get` runs, and the prompt is
/// answered with what the client said.
#[actix::test]
async fn issue39_06_a_legacy_prompt_handler_sends_its_question_to_the_client() {
    let ws_listener = asking_server()
        .serve_ws("127.0.0.1:0".parse().unwrap(), opts())
        .await
        .expect("bind ws");
    let addr = ws_listener.local_addr();
    let mut ws = ws_connect(addr, &[("Authorization", "Bearer bob-token")], None)
        .await
        .expect("upgrade");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "raw", "version": "0"}}});
    ws.send_text(init.to_string().as_bytes()).await.unwrap();
    within(ws.recv_json()).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    ws.send_text(initialized.to_string().as_bytes())
        .await
        .unwrap();
    let get =
        json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "confirm"}});
    ws.send_text(get.to_string().as_bytes()).await.unwrap();
    let asked = within(ws.recv_json()).await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["params"]["message"], "Why?");
    let reply = json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "accept", "content": {"why": "a person said so"}}});
    ws.send_text(reply.to_string().as_bytes()).await.unwrap();
    let answer = within(ws.recv_json()).await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(
        answer["result"]["messages"][0]["content"]["text"],
        "because a person said so"
    );
}

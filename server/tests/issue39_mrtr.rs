//! Issue #39 item 6 from outside, in raw JSON on real sockets (Streamable HTTP in raw
//! HTTP/1.1, and an anonymous WebSocket): a tool handler's questions to an MCP 2026-07-28
//! client travel in an `InputRequiredResult` (`inputRequests`, `requestState`), the
//! client's retry with `inputResponses` answers them, and a `requestState` this server did
//! not issue for this request and principal, or that expired, is refused (-32602). Shapes
//! as in MCP `basic/patterns/mrtr.md`.

#[allow(dead_code)]
use crate::raw;

use mcpl_protocol::client_features::{CreateMessageParams, ElicitAction, ElicitParams};
use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{ManualClock, Server, ToolContext, ToolError};
use mcpl_testkit::within;
use mcpl_transport::{ServerOptions, http, ws};
use raw::{exchange, post, ws_connect};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

/// The server's listeners, its clock, and how many times `sign_up` started.
struct Fixture {
    http: SocketAddr,
    ws: SocketAddr,
    clock: Arc<ManualClock>,
    runs: Arc<AtomicUsize>,
}

/// A server with `sign_up`: it elicits a name, then samples a greeting for it, and
/// answers with both. Bearer tokens for alice and bob, on HTTP; anyone on WebSocket.
async fn serve() -> Fixture {
    let clock = Arc::new(ManualClock::new(
        SystemTime::UNIX_EPOCH + Duration::from_secs(1 << 30),
    ));
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let server = Server::builder("mrtr", "1.0")
        .clock(clock.clone())
        .tool(
            Tool::new("sign_up", "Signs a person up", json!({"type": "object"})),
            move |ctx: ToolContext, _: Value| {
                counted.fetch_add(1, Ordering::SeqCst);
                async move {
                    let schema = json!({"type": "object",
                        "properties": {"name": {"type": "string"}}, "required": ["name"]});
                    let asked = ctx
                        .elicit(ElicitParams::form("Your name?", schema))
                        .await
                        .map_err(|e| ToolError::failed(e.to_string()))?;
                    if asked.action != ElicitAction::Accept {
                        return Ok(CallToolResult::text("not signed up"));
                    }
                    let name = asked.content.unwrap_or_default()["name"]
                        .as_str()
                        .unwrap_or("?")
                        .to_owned();
                    let greeting = ctx
                        .create_message(CreateMessageParams::user_text(format!("Greet {name}"), 50))
                        .await
                        .map_err(|e| ToolError::failed(e.to_string()))?;
                    Ok::<_, ToolError>(CallToolResult::text(format!("{name}: {}", greeting.text())))
                }
            },
        )
        .build()
        .expect("a valid server");
    let mut opts = ServerOptions::default();
    opts.tokens.insert("alice-token".into(), "alice".into());
    opts.tokens.insert("bob-token".into(), "bob".into());
    let opts = Arc::new(opts);
    let any = "127.0.0.1:0".parse().unwrap();
    let mut hl = http::bind(any, "/mcp", opts.clone()).await.expect("bind");
    // The WebSocket listener takes anyone: its requests are anonymous.
    let open = Arc::new(ServerOptions {
        allow_anonymous: true,
        ..ServerOptions::default()
    });
    let mut wl = ws::bind(any, open).await.expect("bind ws");
    let (http, ws) = (hl.local_addr(), wl.local_addr());
    let s = server.clone();
    actix::spawn(async move {
        while let Some(conn) = hl.accept().await {
            s.serve(conn);
        }
    });
    actix::spawn(async move {
        while let Some(conn) = wl.accept().await {
            server.serve(conn);
        }
    });
    Fixture {
        http,
        ws,
        clock,
        runs,
    }
}

/// A modern `tools/call` of `sign_up` declaring elicitation and sampling, with `extra`
/// members in its params (`inputResponses`, `requestState`).
fn call(id: i64, arguments: Value, extra: Value) -> Value {
    let mut params = json!({"name": "sign_up", "arguments": arguments,
        "_meta": mcpl_testkit::msg::modern_meta(json!({"elicitation": {}, "sampling": {}}))});
    if let (Some(p), Value::Object(extra)) = (params.as_object_mut(), extra) {
        p.extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// POSTs `body` as `token`'s; the JSON answer.
async fn post_as(addr: SocketAddr, token: &str, body: &Value) -> Value {
    let auth = format!("Bearer {token}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "sign_up"),
    ];
    let answer = within(exchange(
        addr,
        post(addr, &headers, body.to_string().as_bytes()),
    ))
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer.json()
}

/// The one question of an `InputRequiredResult`: its key, its request, and the state.
fn question(answer: &Value) -> (String, Value, String) {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let requests = result["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1, "{answer}");
    let (key, request) = requests.iter().next().unwrap();
    let state = result["requestState"].as_str().expect("requestState");
    (key.clone(), request.clone(), state.to_owned())
}

#[actix::test]
async fn issue39_06_a_question_is_an_input_required_result_and_the_retry_answers_it() {
    let f = serve().await;
    let args = json!({"plan": "free"});
    // The first round: the elicitation, as mrtr.md's example shapes it.
    let first = post_as(f.http, "alice-token", &call(1, args.clone(), json!({}))).await;
    assert_eq!(first["id"], 1);
    let (elicit_key, request, state) = question(&first);
    assert_eq!(request["method"], "elicitation/create", "{first}");
    assert_eq!(request["params"]["message"], "Your name?");
    assert_eq!(request["params"]["requestedSchema"]["required"][0], "name");
    assert_eq!(
        first["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mrtr"
    );
    // A retry with the state but no answer is asked again (mrtr.md, "Error Handling").
    let again = post_as(
        f.http,
        "alice-token",
        &call(2, args.clone(), json!({"requestState": state})),
    )
    .await;
    assert_eq!(question(&again).0, elicit_key, "{again}");
    // The second round: the handler runs again, gets the name, and samples.
    let second = post_as(
        f.http,
        "alice-token",
        &call(
            3,
            args.clone(),
            json!({"requestState": state, "inputResponses": {
                &elicit_key: {"action": "accept", "content": {"name": "octocat"}}}}),
        ),
    )
    .await;
    let (sample_key, request, state) = question(&second);
    assert_ne!(sample_key, elicit_key);
    assert_eq!(request["method"], "sampling/createMessage", "{second}");
    assert_eq!(
        request["params"]["messages"][0]["content"]["text"],
        "Greet octocat"
    );
    assert_eq!(request["params"]["maxTokens"], 50);
    // The third: only the sampling result is sent; the name comes from the state.
    let done = post_as(
        f.http,
        "alice-token",
        &call(
            4,
            args,
            json!({"requestState": state, "inputResponses": {&sample_key: {
                "role": "assistant", "content": {"type": "text", "text": "Hello, octocat!"},
                "model": "m", "stopReason": "endTurn"}}}),
        ),
    )
    .await;
    assert_eq!(done["id"], 4);
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "octocat: Hello, octocat!",
        "{done}"
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 4, "one run per request");
}

#[actix::test]
async fn issue39_06_an_anonymous_websocket_call_is_asked_and_answered_too() {
    let f = serve().await;
    let mut socket = ws_connect(f.ws, &[], None).await.expect("upgrade");
    let send = |v: Value| v.to_string().into_bytes();
    socket
        .send_text(&send(call(1, json!({}), json!({}))))
        .await
        .expect("send");
    let first = within(socket.recv_json()).await;
    let (key, request, state) = question(&first);
    assert_eq!(request["method"], "elicitation/create", "{first}");
    socket
        .send_text(&send(call(
            2,
            json!({}),
            json!({"requestState": state, "inputResponses": {&key: {"action": "decline"}}}),
        )))
        .await
        .expect("send");
    let done = within(socket.recv_json()).await;
    assert_eq!(done["id"], 2, "{done}");
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "not signed up");
}

#[actix::test]
async fn issue39_06_a_bad_request_state_is_refused() {
    let f = serve().await;
    let args = json!({"plan": "free"});
    let first = post_as(f.http, "alice-token", &call(1, args.clone(), json!({}))).await;
    let (key, _, state) = question(&first);
    let answered = json!({&key: {"action": "accept", "content": {"name": "x"}}});
    let refused = |answer: &Value, why: &str| {
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert_eq!(
            answer["error"]["data"]["reason"], "invalid_request_state",
            "{answer}"
        );
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{why}: {answer}");
    };
    let runs = f.runs.load(Ordering::SeqCst);
    // Not one of ours.
    let forged = call(2, args.clone(), json!({"requestState": "m1.e30.AAAA"}));
    refused(&post_as(f.http, "alice-token", &forged).await, "not issued");
    // Ours, altered.
    let mut altered = state.clone();
    altered.replace_range(3..4, if &state[3..4] == "A" { "B" } else { "A" });
    let altered = call(3, args.clone(), json!({"requestState": altered}));
    refused(
        &post_as(f.http, "alice-token", &altered).await,
        "not issued",
    );
    // Ours, for other arguments.
    let other = call(
        4,
        json!({"plan": "pro"}),
        json!({"requestState": state, "inputResponses": answered}),
    );
    refused(
        &post_as(f.http, "alice-token", &other).await,
        "another request",
    );
    // Ours, presented by another principal.
    let stolen = call(
        5,
        args.clone(),
        json!({"requestState": state, "inputResponses": answered}),
    );
    refused(
        &post_as(f.http, "bob-token", &stolen).await,
        "another principal",
    );
    // Not a string; answers that are not results.
    let number = call(6, args.clone(), json!({"requestState": 7}));
    refused(&post_as(f.http, "alice-token", &number).await, "string");
    let junk = call(7, args.clone(), json!({"inputResponses": {&key: "yes"}}));
    refused(&post_as(f.http, "alice-token", &junk).await, "object");
    // No handler ran for any of them.
    assert_eq!(f.runs.load(Ordering::SeqCst), runs);
    // Ours, in time: accepted. Then the clock passes its expiry.
    let fine = call(
        8,
        args.clone(),
        json!({"requestState": state, "inputResponses": answered}),
    );
    let fine = post_as(f.http, "alice-token", &fine).await;
    assert_eq!(
        question(&fine).1["method"],
        "sampling/createMessage",
        "{fine}"
    );
    f.clock.advance(Duration::from_secs(601));
    let late = call(
        9,
        args,
        json!({"requestState": state, "inputResponses": answered}),
    );
    refused(&post_as(f.http, "alice-token", &late).await, "expired");
}

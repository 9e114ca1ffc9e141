//! A tool handler asking its client (MCP 2025-11-25, "Client Features"), over a real
//! WebSocket with a raw JSON-RPC client: `sampling/createMessage`, `elicitation/create`
//! and `roots/list` go out only to a client that declared the capability, the
//! client's answer (or error) reaches the handler, and a request whose call ends first,
//! or that is not answered in time, is cancelled towards the client.

use mcpl_server::{Server, ServerBuilder};
use mcpl_tests::asking::{self, email_schema};
use mcpl_tests::server_support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// A server with the tools of [`mcpl_tests::asking`], knobs set by `f`.
async fn asking_server(f: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Harness {
    let clock = Harness::clock();
    let builder = asking::tools(Server::builder("asking", "1.0").clock(clock.clone()));
    Harness::start(f(builder).build().expect("a valid server"), clock).await
}

/// A plain MCP client declaring `capabilities`.
async fn client(h: &Harness, capabilities: Value) -> Client {
    let mut c = h.connect("alice").await;
    let init = c
        .exchange(request(
            json!("init"),
            "initialize",
            initialize_params(capabilities, "raw-client"),
        ))
        .await;
    assert_eq!(init["id"], "init", "{init:#}");
    c.send(initialized()).await;
    c
}

/// Sends `call` and returns the request its tool then sends the client, which must be a
/// `method` request.
async fn asked_by(c: &mut Client, call: Value, method: &str) -> Value {
    c.send(call).await;
    let asked = c.recv().await;
    assert_eq!(asked["method"], method, "{asked:#}");
    asked
}

#[actix::test]
async fn a_tool_samples_the_clients_model_and_reads_its_answer() {
    let h = asking_server(|b| b).await;
    let mut c = client(&h, json!({"sampling": {}})).await;
    c.expect_after(
        call(1, "ask_model", json!({"prompt": "Say hi"})),
        request(
            json!(1),
            "sampling/createMessage",
            json!({"messages": [{"role": "user", "content": text("Say hi")}], "maxTokens": 100}),
        ),
    )
    .await;
    c.expect_after(
        result(
            json!(1),
            json!({"role": "assistant", "content": text("hi"), "model": "m", "stopReason": "endTurn"}),
        ),
        says(json!(1), "LLM response: hi"),
    )
    .await;
    c.quiet().await;
}

#[actix::test]
async fn a_tool_asks_the_clients_user_who_accepts_or_declines() {
    let h = asking_server(|b| b).await;
    let mut c = client(&h, json!({"elicitation": {"form": {}}})).await;
    let asked = |id: i64| {
        request(
            json!(id),
            "elicitation/create",
            json!({"message": "Your email?", "requestedSchema": email_schema()}),
        )
    };
    c.expect_after(
        call(1, "ask_user", json!({"message": "Your email?"})),
        asked(1),
    )
    .await;
    c.expect_after(
        result(
            json!(1),
            json!({"action": "accept", "content": {"email": "a@example.org"}}),
        ),
        says(
            json!(1),
            r#"User response: action=accept, content={"email":"a@example.org"}"#,
        ),
    )
    .await;
    // The session's own request ids go on counting.
    c.expect_after(
        call(2, "ask_user", json!({"message": "Your email?"})),
        asked(2),
    )
    .await;
    c.expect_after(
        result(json!(2), json!({"action": "decline"})),
        says(json!(2), "User response: action=decline, content=null"),
    )
    .await;
}

#[actix::test]
async fn a_tool_lists_the_clients_roots_only_when_it_declared_them() {
    let h = asking_server(|b| b).await;
    let mut c = client(&h, json!({"roots": {"listChanged": true}})).await;
    c.expect_after(
        call(1, "roots", json!({})),
        request(json!(1), "roots/list", json!({})),
    )
    .await;
    c.expect_after(
        result(
            json!(1),
            json!({"roots": [{"uri": "file:///src", "name": "Source"}, {"uri": "file:///notes.md"}]}),
        ),
        says(json!(1), "file:///src file:///notes.md"),
    )
    .await;
    let mut plain = client(&h, json!({"sampling": {}})).await;
    plain
        .expect_after(
            call(1, "roots", json!({})),
            result(
                json!(1),
                tool_error("the client does not support roots (it did not declare the capability)"),
            ),
        )
        .await;
}

#[actix::test]
async fn without_the_capability_nothing_is_asked_and_the_tool_says_why() {
    let h = asking_server(|b| b).await;
    // Elicitation in URL mode only is not form mode; sampling not declared at all.
    let mut c = client(&h, json!({"elicitation": {"url": {}}})).await;
    c.expect_after(
        call(1, "ask_model", json!({"prompt": "Say hi"})),
        result(
            json!(1),
            tool_error("the client does not support sampling (it did not declare the capability)"),
        ),
    )
    .await;
    c.expect_after(
        call(2, "ask_user", json!({"message": "Your email?"})),
        result(
            json!(2),
            tool_error(
                "the client does not support elicitation (it did not declare the capability)",
            ),
        ),
    )
    .await;
    c.quiet().await;
}

#[actix::test]
async fn the_clients_error_and_a_malformed_result_reach_the_tool() {
    let h = asking_server(|b| b).await;
    let mut c = client(&h, json!({"sampling": {}})).await;
    asked_by(
        &mut c,
        call(1, "ask_model", json!({"prompt": "Say hi"})),
        "sampling/createMessage",
    )
    .await;
    c.expect_after(
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "User rejected sampling request"}}),
        result(json!(1), tool_error("the client refused: User rejected sampling request (-1)")),
    )
    .await;
    let asked = asked_by(
        &mut c,
        call(2, "ask_model", json!({"prompt": "Say hi"})),
        "sampling/createMessage",
    )
    .await;
    assert_eq!(asked["id"], 2, "{asked:#}");
    let answer = c
        .exchange(result(json!(2), json!({"role": "assistant"})))
        .await;
    let said = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        answer["result"]["isError"] == true
            && said.starts_with("the client's result is malformed: missing field"),
        "{answer:#}"
    );
}

#[actix::test]
async fn a_cancelled_call_cancels_its_request_to_the_client_and_a_late_answer_is_ignored() {
    let h = asking_server(|b| b).await;
    let mut c = client(&h, json!({"elicitation": {}})).await;
    let asked = asked_by(
        &mut c,
        call(7, "ask_user", json!({"message": "Your email?"})),
        "elicitation/create",
    )
    .await;
    c.expect_after(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 7, "reason": "changed my mind"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": asked["id"], "reason": "the request it served has ended"}}),
    )
    .await;
    // The user answers anyway: nothing waits for it, and the cancelled call gets no result.
    c.send(result(asked["id"].clone(), json!({"action": "cancel"})))
        .await;
    c.quiet().await;
}

#[actix::test]
async fn a_request_unanswered_in_time_is_cancelled_and_the_tool_told() {
    let h = asking_server(|b| b.ask_timeout(Duration::from_millis(50))).await;
    let mut c = client(&h, json!({"sampling": {}})).await;
    let asked = asked_by(
        &mut c,
        call(1, "ask_model", json!({"prompt": "Say hi"})),
        "sampling/createMessage",
    )
    .await;
    // Not answered: the timer (not this test) decides when.
    c.expect(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": asked["id"], "reason": "timed out"}}),
    )
    .await;
    c.expect(result(
        json!(1),
        tool_error("the client did not answer in time"),
    ))
    .await;
}

/// Streamable HTTP, with our HTTP client (which keeps a GET stream open and tags each
/// message with the stream it came on): the sampling request rides the call's own answer
/// stream, before the call's result, not the GET stream (MCP: messages related to a
/// request SHOULD go on that request's stream).
#[actix::test]
async fn over_streamable_http_the_request_rides_the_calls_own_stream() {
    use mcpl_transport::testkit::{TestEnd, TestPeer};
    use mcpl_transport::{ClientOptions, ServerOptions, StreamId, http};

    let clock = Harness::clock();
    let server = asking::tools(Server::builder("asking", "1.0").clock(clock))
        .build()
        .expect("a valid server");
    let addr = "127.0.0.1:0".parse().unwrap();
    let mut opts = ServerOptions::default();
    opts.tokens.insert("alice".to_owned(), "alice".to_owned());
    let mut listener = http::bind(addr, "/mcp", Arc::new(opts))
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr());
    actix::spawn(async move {
        while let Some(conn) = listener.accept().await {
            server.serve(conn);
        }
    });
    let token = ClientOptions {
        token: Some("alice".to_owned()),
        ..Default::default()
    };
    let conn = http::connect(&url, &token).await.expect("connect");
    let mut c = TestEnd::peer(conn);
    // Each message with the stream it arrived on (Streamable HTTP tells them apart).
    async fn next(c: &mut TestPeer) -> (Option<StreamId>, Value) {
        let m = c.recv().await;
        (c.link().last_stream(), m)
    }
    c.send(request(
        json!(0),
        "initialize",
        initialize_params(json!({"sampling": {}}), "http-client"),
    ))
    .await;
    let (_, init) = next(&mut c).await;
    assert_eq!(init["id"], 0, "{init:#}");
    c.send(initialized()).await;
    c.send(call(1, "ask_model", json!({"prompt": "Say hi"})))
        .await;
    let (asked_on, asked) = next(&mut c).await;
    assert_eq!(asked["method"], "sampling/createMessage", "{asked:#}");
    c.send(result(
        asked["id"].clone(),
        json!({"role": "assistant", "content": text("hi"), "model": "m"}),
    ))
    .await;
    let (answered_on, answer) = next(&mut c).await;
    assert_eq!(answer, says(json!(1), "LLM response: hi"));
    assert_eq!(asked_on, answered_on, "the request rode the call's stream");
}

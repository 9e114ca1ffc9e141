//! Streamable HTTP for MCP 2026-07-28 (issue #39 item 3), driven by raw HTTP requests:
//! a request without a session is modern, checked against its headers, and served on a
//! connection of its own that ends with its answer; GET and DELETE without a session are
//! 405. Legacy sessions are untouched (`http_server.rs`).

use crate::support;

use futures_util::FutureExt;
use mcpl_protocol::{ErrorCode, ErrorObject, Id, Message, Response};
use mcpl_testkit::within_named;
use mcpl_transport::{Principal, ServerOptions};
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::*;

const MODERN: &str = "2026-07-28";

/// A modern request's body: `params` with the era's `_meta` (version `version`).
fn modern(id: i64, method: &str, mut params: Value, version: &str) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    request(id, method, params).encode()
}

impl Endpoint {
    /// A POST with alice's token and the headers a modern client sends for `method`
    /// (`name` as `Mcp-Name` when given), each replaced by `extra` or, given as `("x", "")`,
    /// left out.
    fn modern_post(
        &self,
        body: String,
        method: &str,
        name: Option<&str>,
        extra: &[(&str, &str)],
    ) -> reqwest::RequestBuilder {
        let mut pairs = vec![
            ("authorization", "Bearer s3cret"),
            ("accept", ACCEPT_BOTH),
            ("content-type", "application/json"),
            ("mcp-protocol-version", MODERN),
            ("mcp-method", method),
        ];
        if let Some(name) = name {
            pairs.push(("mcp-name", name));
        }
        let mut headers = reqwest::header::HeaderMap::new();
        for (k, v) in pairs.iter().chain(extra) {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap();
            if v.is_empty() {
                headers.remove(&name);
            } else {
                headers.insert(name, v.parse().unwrap());
            }
        }
        self.http.post(&self.url).headers(headers).body(body)
    }

    /// True when no connection waits to be accepted.
    fn nothing_accepted(&mut self) -> bool {
        self.listener.accept().now_or_never().is_none()
    }
}

/// The JSON-RPC error in an answer's body.
async fn body_error(resp: reqwest::Response) -> ErrorObject {
    match Message::decode(&resp.bytes().await.unwrap()) {
        Ok(Message::Response(r)) => r.outcome.unwrap_err(),
        other => panic!("expected a JSON-RPC error body, got {other:?}"),
    }
}

#[tokio::test]
async fn issue39_03_a_modern_post_is_a_connection_of_its_own_that_ends_with_its_answer() {
    let mut ep = endpoint(server_opts()).await;
    let body = modern(1, "server/discover", json!({}), MODERN);
    let post = tokio::spawn(ep.modern_post(body, "server/discover", None, &[]).send());
    let mut server = within_named("accept", ep.listener.accept()).await.unwrap();
    assert_eq!(
        server.info.principal,
        Some(Principal::Named("alice".into()))
    );
    let (_, discover) = next_request(&mut server).await;
    assert_eq!(
        (discover.method.as_str(), discover.id),
        ("server/discover", Id::Number(1))
    );
    server
        .outbound
        .send(ok(1, json!({"resultType": "complete"})))
        .await
        .unwrap();
    let resp = within_named("the answer", post).await.unwrap().unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "application/json");
    assert!(
        !resp.headers().contains_key("mcp-session-id"),
        "no session in 2026-07-28"
    );
    let body = Message::decode(&resp.bytes().await.unwrap()).unwrap();
    assert_eq!(body, ok(1, json!({"resultType": "complete"})));
    // Answered: its connection is over.
    expect_closed(&mut server).await;
}

#[tokio::test]
async fn issue39_03_headers_and_meta_are_checked_before_any_connection() {
    let mut ep = endpoint(server_opts()).await;
    let call = || modern(2, "tools/call", json!({"name": "echo"}), MODERN);
    let cases: Vec<(&str, reqwest::RequestBuilder, ErrorCode)> = vec![
        (
            "no MCP-Protocol-Version",
            ep.modern_post(
                call(),
                "tools/call",
                Some("echo"),
                &[("mcp-protocol-version", "")],
            ),
            ErrorCode::HEADER_MISMATCH,
        ),
        (
            "MCP-Protocol-Version not the body's",
            ep.modern_post(
                call(),
                "tools/call",
                Some("echo"),
                &[("mcp-protocol-version", "2025-11-25")],
            ),
            ErrorCode::HEADER_MISMATCH,
        ),
        (
            "Mcp-Method not the body's",
            ep.modern_post(call(), "tools/list", Some("echo"), &[]),
            ErrorCode::HEADER_MISMATCH,
        ),
        (
            "no Mcp-Name on tools/call",
            ep.modern_post(call(), "tools/call", None, &[]),
            ErrorCode::HEADER_MISMATCH,
        ),
        (
            "Mcp-Name not the body's",
            ep.modern_post(call(), "tools/call", Some("add"), &[]),
            ErrorCode::HEADER_MISMATCH,
        ),
        (
            "no clientCapabilities in _meta",
            ep.modern_post(
                request(
                    3,
                    "tools/list",
                    json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}),
                )
                .encode(),
                "tools/list",
                None,
                &[],
            ),
            ErrorCode::INVALID_PARAMS,
        ),
        (
            "no _meta, a modern header",
            ep.modern_post(
                request(4, "tools/list", json!({})).encode(),
                "tools/list",
                None,
                &[],
            ),
            ErrorCode::INVALID_PARAMS,
        ),
        (
            "a version not served",
            ep.modern_post(
                modern(5, "tools/list", json!({}), "1900-01-01"),
                "tools/list",
                None,
                &[("mcp-protocol-version", "1900-01-01")],
            ),
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        ),
    ];
    for (what, post, code) in cases {
        let resp = post.send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{what}");
        let error = body_error(resp).await;
        assert_eq!(error.code, code, "{what}: {error:?}");
        if code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
            let data = error.data.unwrap();
            assert_eq!(data["requested"], "1900-01-01");
            assert_eq!(data["supported"][0], MODERN);
        }
    }
    // A name that is no plain ASCII comes Base64-encoded, and is read so.
    let body = modern(6, "tools/call", json!({"name": "héllo"}), MODERN);
    let post = tokio::spawn(
        ep.modern_post(body, "tools/call", Some("=?base64?aMOpbGxv?="), &[])
            .send(),
    );
    let mut server = within_named("accept", ep.listener.accept()).await.unwrap();
    let (_, call) = next_request(&mut server).await;
    assert_eq!(call.id, Id::Number(6));
    server.outbound.send(ok(6, json!({}))).await.unwrap();
    let resp = within_named("the answer", post).await.unwrap().unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(ep.nothing_accepted(), "the refused ones reached no server");
}

#[tokio::test]
async fn issue39_03_the_eras_errors_set_the_status() {
    let mut ep = endpoint(server_opts()).await;
    for (code, status) in [
        (ErrorCode::METHOD_NOT_FOUND, StatusCode::NOT_FOUND),
        (
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            StatusCode::BAD_REQUEST,
        ),
        (ErrorCode::INVALID_PARAMS, StatusCode::OK),
    ] {
        let body = modern(7, "tools/list", json!({}), MODERN);
        let post = tokio::spawn(ep.modern_post(body, "tools/list", None, &[]).send());
        let mut server = within_named("accept", ep.listener.accept()).await.unwrap();
        next_request(&mut server).await;
        let error = Response::err(Some(Id::Number(7)), ErrorObject::new(code, "no"));
        server.outbound.send(error.into()).await.unwrap();
        let resp = within_named("the answer", post).await.unwrap().unwrap();
        assert_eq!(resp.status(), status, "{code:?}");
        assert_eq!(body_error(resp).await.code, code);
    }
}

#[tokio::test]
async fn issue39_03_what_relates_to_the_request_rides_its_answer_as_sse() {
    let mut ep = endpoint(server_opts()).await;
    let body = modern(8, "tools/call", json!({"name": "echo"}), MODERN);
    let post = tokio::spawn(ep.modern_post(body, "tools/call", Some("echo"), &[]).send());
    let mut server = within_named("accept", ep.listener.accept()).await.unwrap();
    next_request(&mut server).await;
    let log = notification(
        "notifications/message",
        json!({"level": "info", "data": "working"}),
    );
    server.outbound.send(log).await.unwrap();
    server.outbound.send(ok(8, json!({}))).await.unwrap();
    let resp = within_named("the answer", post).await.unwrap().unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let text = within_named("the stream", resp.text()).await.unwrap();
    let note = text.find("notifications/message").expect("the log message");
    let answer = text.find("\"id\":8").expect("the response");
    assert!(note < answer, "{text}");
    assert!(
        !text.contains("\nid:"),
        "no event ids: nothing is redelivered: {text}"
    );
}

#[tokio::test]
async fn issue39_03_closing_the_answer_cancels_the_request() {
    let mut ep = endpoint(server_opts()).await;
    let body = modern(9, "tools/call", json!({"name": "slow"}), MODERN);
    let post = tokio::spawn(ep.modern_post(body, "tools/call", Some("slow"), &[]).send());
    let mut server = within_named("accept", ep.listener.accept()).await.unwrap();
    next_request(&mut server).await;
    // The client goes away before the answer: its HTTP request is dropped.
    post.abort();
    let _ = post.await;
    expect_closed(&mut server).await;
}

#[tokio::test]
async fn issue39_03_get_and_delete_without_a_session_are_405_unless_the_version_is_legacy() {
    let ep = endpoint(server_opts()).await;
    let get = || {
        ep.http
            .get(&ep.url)
            .header("authorization", "Bearer s3cret")
            .header("accept", "text/event-stream")
    };
    let delete = || {
        ep.http
            .delete(&ep.url)
            .header("authorization", "Bearer s3cret")
    };
    for (what, request) in [
        ("GET", get()),
        ("DELETE", delete()),
        ("GET, modern", get().header("mcp-protocol-version", MODERN)),
    ] {
        let resp = request.send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED, "{what}");
        assert_eq!(resp.headers()["allow"], "POST", "{what}");
    }
    // A legacy client that lost its session id is told so, as before.
    for (what, request) in [
        (
            "GET, legacy",
            get().header("mcp-protocol-version", "2025-11-25"),
        ),
        (
            "DELETE, legacy",
            delete().header("mcp-protocol-version", "2025-11-25"),
        ),
    ] {
        let resp = request.send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{what}");
    }
}

#[tokio::test]
async fn issue39_03_each_anonymous_modern_request_is_a_principal_of_its_own() {
    let opts = ServerOptions {
        allow_anonymous: true,
        ..ServerOptions::default()
    };
    let mut ep = endpoint(opts).await;
    let mut principals = Vec::new();
    for id in [10, 11] {
        let body = modern(id, "tools/list", json!({}), MODERN);
        let post = tokio::spawn(
            ep.modern_post(body, "tools/list", None, &[("authorization", "")])
                .send(),
        );
        let mut server = within_named("accept", ep.listener.accept()).await.unwrap();
        principals.push(server.info.principal.clone());
        next_request(&mut server).await;
        server
            .outbound
            .send(ok(id, json!({"tools": []})))
            .await
            .unwrap();
        let resp = within_named("the answer", post).await.unwrap().unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        expect_closed(&mut server).await;
    }
    assert!(
        principals
            .iter()
            .all(|p| matches!(p, Some(Principal::Anonymous(_)))),
        "{principals:?}"
    );
    assert_ne!(principals[0], principals[1]);
}

/// A server that does not serve 2026-07-28 (`ServerOptions::http_modern` off) answers as
/// in 2025-11-25: a discover probe -32601, any other request without a session 400, GET
/// without one 400; nothing reaches `accept()`.
#[tokio::test]
async fn issue39_03_a_server_may_leave_the_modern_era_out() {
    let mut opts = server_opts();
    opts.http_modern = false;
    let mut ep = endpoint(opts).await;
    let probe = ep
        .modern_post(
            modern(1, "server/discover", json!({}), MODERN),
            "server/discover",
            None,
            &[],
        )
        .send()
        .await
        .unwrap();
    assert_eq!(probe.status(), StatusCode::OK);
    assert_eq!(body_error(probe).await.code, ErrorCode::METHOD_NOT_FOUND);
    let call = ep
        .modern_post(
            modern(2, "tools/list", json!({}), MODERN),
            "tools/list",
            None,
            &[],
        )
        .send()
        .await
        .unwrap();
    assert_eq!(call.status(), StatusCode::BAD_REQUEST);
    assert_eq!(body_error(call).await.code, ErrorCode::INVALID_REQUEST);
    let get = ep
        .http
        .get(&ep.url)
        .header("authorization", "Bearer s3cret")
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), StatusCode::BAD_REQUEST);
    assert!(ep.nothing_accepted());
}

/// The official conformance suite's `sep-2575-http-server-method-not-found-404-initialize`:
/// an `initialize` carrying modern `_meta` and no `protocolVersion` is a modern request for
/// a method 2026-07-28 removed, served on a connection of its own (no session opened), so
/// the server's -32601 is a 404. A legacy `initialize` (with `protocolVersion`) still opens
/// a session.
#[tokio::test]
async fn issue39_03_an_initialize_with_only_modern_meta_is_a_modern_request() {
    let mut ep = endpoint(server_opts()).await;
    let body = modern(5, "initialize", json!({}), MODERN);
    let post = tokio::spawn(ep.modern_post(body, "initialize", None, &[]).send());
    let mut server = within_named("accept", ep.listener.accept()).await.unwrap();
    let (_, init) = next_request(&mut server).await;
    assert_eq!(init.method, "initialize");
    let not_found = Message::Response(Response::err(
        Some(Id::Number(5)),
        ErrorObject::method_not_found("initialize"),
    ));
    server.outbound.send(not_found).await.unwrap();
    let resp = within_named("the answer", post).await.unwrap().unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert!(
        !resp.headers().contains_key("mcp-session-id"),
        "a modern initialize opens no session"
    );
    assert_eq!(body_error(resp).await.code, ErrorCode::METHOD_NOT_FOUND);
    expect_closed(&mut server).await;
}

/// Sessions a legacy client left open (most never DELETE) do not lock its address out of
/// the modern era: at `anonymous_per_source`, an anonymous modern request ends the
/// address's least recently active session, as a new session does, instead of 429 — the
/// conformance suite's modern scenarios all failed 429 after its legacy ones had run.
#[tokio::test]
async fn issue39_03_sessions_an_address_left_open_make_way_for_its_modern_requests() {
    let opts = ServerOptions {
        allow_anonymous: true,
        anonymous_per_source: 2,
        ..ServerOptions::default()
    };
    let mut ep = endpoint(opts).await;
    let (mut first, _) = open_anonymous(&mut ep, "127.0.0.1").await.unwrap();
    let (_second, _) = open_anonymous(&mut ep, "127.0.0.1").await.unwrap();
    let body = modern(7, "tools/list", json!({}), MODERN);
    let post = tokio::spawn(
        ep.modern_post(body, "tools/list", None, &[("authorization", "")])
            .send(),
    );
    let mut server = tokio::select! {
        conn = ep.listener.accept() => conn.unwrap(),
        refused = post => panic!("refused: {:?}", refused.unwrap().map(|r| r.status())),
    };
    // The least recently active session made way.
    expect_closed(&mut first).await;
    next_request(&mut server).await;
    server
        .outbound
        .send(ok(7, json!({"tools": []})))
        .await
        .unwrap();
}

/// A modern request whose connection the server ends before answering (it stops, or
/// restarts under the request) is answered 503 with -32603 saying it may have run — not
/// 404 "the session ended": a modern request has no session, and 404 is an unknown method's
/// in this era. (The sim's modern agents met it at the arcade's restarts.)
#[tokio::test]
async fn issue39_03_a_request_the_server_stops_under_is_503_and_may_have_run() {
    let mut ep = endpoint(server_opts()).await;
    let body = modern(7, "tools/call", json!({"name": "x"}), MODERN);
    let post = tokio::spawn(ep.modern_post(body, "tools/call", Some("x"), &[]).send());
    let mut server = within_named("accept", ep.listener.accept()).await.unwrap();
    let (_, call) = next_request(&mut server).await;
    assert_eq!(call.id, Id::Number(7));
    drop(server);
    let resp = within_named("the answer", post).await.unwrap().unwrap();
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body = Message::decode(&resp.bytes().await.unwrap()).unwrap();
    let Message::Response(r) = body else {
        panic!("{body:?}")
    };
    assert_eq!(r.id, Some(Id::Number(7)));
    let e = r.outcome.unwrap_err();
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    assert!(e.message.contains("may have run"), "{}", e.message);
}

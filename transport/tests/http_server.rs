//! The Streamable HTTP server, driven by raw HTTP requests (reqwest) so that each status
//! code and header MCP 2025-11-25 asks for can be checked on its own.

use crate::support;

use futures_util::FutureExt;
use mcpl_protocol::{ErrorCode, Id, Message};
use mcpl_testkit::within_named;
use mcpl_transport::{
    Connection, HttpResponseMode, Inbound, Principal, ServerOptions, TransportKind,
};
use reqwest::StatusCode;
use serde_json::json;
use support::*;

impl Endpoint {
    /// A POST with the headers a well-behaved client sends (alice's token included), each
    /// replaced or added by `extra`.
    fn post(
        &self,
        body: impl Into<reqwest::Body>,
        extra: &[(&str, &str)],
    ) -> reqwest::RequestBuilder {
        let mut headers = reqwest::header::HeaderMap::new();
        let defaults = [
            ("authorization", "Bearer s3cret"),
            ("accept", ACCEPT_BOTH),
            ("content-type", "application/json"),
        ];
        for (k, v) in defaults.iter().chain(extra) {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap();
            headers.insert(name, v.parse().unwrap());
        }
        self.http.post(&self.url).headers(headers).body(body)
    }

    /// A GET for the server's SSE stream, with alice's token, in `session` if given.
    fn get(&self, session: Option<&str>) -> reqwest::RequestBuilder {
        let b = self
            .http
            .get(&self.url)
            .header("authorization", "Bearer s3cret")
            .header("accept", "text/event-stream");
        match session {
            Some(id) => b.header("mcp-session-id", id),
            None => b,
        }
    }

    /// A DELETE, with alice's token, of `session` if given.
    fn delete(&self, session: Option<&str>) -> reqwest::RequestBuilder {
        let b = self
            .http
            .delete(&self.url)
            .header("authorization", "Bearer s3cret");
        match session {
            Some(id) => b.header("mcp-session-id", id),
            None => b,
        }
    }

    /// Opens a session: POSTs `initialize`, answers it on the accepted connection, and
    /// returns the connection and the session id.
    async fn open(&mut self) -> (Connection, String) {
        self.open_as("s3cret").await
    }

    /// [`Endpoint::open`], presenting `token`.
    async fn open_as(&mut self, token: &str) -> (Connection, String) {
        let authorization = format!("Bearer {token}");
        let init = self.post(initialize(0).encode(), &[("authorization", &authorization)]);
        let post = tokio::spawn(init.send());
        let mut server = within_named("accept", self.listener.accept())
            .await
            .unwrap();
        let (_, init) = next_request(&mut server).await;
        assert_eq!(
            (init.method.as_str(), init.id),
            ("initialize", Id::Number(0))
        );
        server
            .outbound
            .send(ok(0, json!({"protocolVersion": "2025-11-25"})))
            .await
            .unwrap();
        let resp = within_named("the initialize answer", post)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()["content-type"], "application/json");
        let session = resp.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let body: Message = Message::decode(&resp.bytes().await.unwrap()).unwrap();
        assert_eq!(body, ok(0, json!({"protocolVersion": "2025-11-25"})));
        (server, session)
    }
}

/// The JSON-RPC error code in an error answer's body.
async fn body_code(resp: reqwest::Response) -> ErrorCode {
    match Message::decode(&resp.bytes().await.unwrap()) {
        Ok(Message::Response(r)) => r.outcome.unwrap_err().code,
        other => panic!("expected a JSON-RPC error body, got {other:?}"),
    }
}

#[tokio::test]
async fn initialize_opens_a_session_and_requests_are_answered_as_json() {
    let mut ep = endpoint(server_opts()).await;
    let (mut server, session) = ep.open().await;
    assert_eq!(session.len(), 32);
    assert!(session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    assert_eq!(
        (server.info.kind, server.info.ordered),
        (TransportKind::StreamableHttp, false)
    );
    assert_eq!(
        server.info.principal,
        Some(Principal::Named("alice".into()))
    );

    let post = tokio::spawn(
        ep.post(
            request(1, "tools/list", json!({})).encode(),
            &[("Mcp-Session-Id", &session)],
        )
        .send(),
    );
    let (stream, req) = next_request(&mut server).await;
    assert_eq!(req.id, Id::Number(1));
    server
        .outbound
        .send(ok(1, json!({"tools": []})))
        .await
        .unwrap();
    let resp = within_named("the answer", post).await.unwrap().unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        Message::decode(&resp.bytes().await.unwrap()).unwrap(),
        ok(1, json!({"tools": []}))
    );

    // Each POST is a stream of its own.
    let post = tokio::spawn(
        ep.post(
            request(2, "ping", json!({})).encode(),
            &[("mcp-session-id", &session)],
        )
        .send(),
    );
    let (stream2, _) = next_request(&mut server).await;
    assert_ne!(stream, stream2);
    server.outbound.send(ok(2, json!({}))).await.unwrap();
    assert_eq!(
        within_named("the answer", post)
            .await
            .unwrap()
            .unwrap()
            .status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn notifications_and_responses_get_202_with_no_body() {
    let mut ep = endpoint(server_opts()).await;
    let (mut server, session) = ep.open().await;
    let resp = ep
        .post(
            notification("notifications/initialized", json!({})).encode(),
            &[("mcp-session-id", &session)],
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    assert!(resp.bytes().await.unwrap().is_empty());
    assert_eq!(
        next_notification(&mut server).await.1.method,
        "notifications/initialized"
    );

    let resp = ep
        .post(ok(9, json!({})).encode(), &[("mcp-session-id", &session)])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    assert_eq!(next_response(&mut server).await.1.id, Some(Id::Number(9)));
}

#[tokio::test]
async fn session_ids_are_required_checked_and_ended_by_delete() {
    let mut ep = endpoint(server_opts()).await;
    let (mut server, session) = ep.open().await;
    let ping = request(1, "ping", json!({})).encode();

    let resp = ep.post(ping.clone(), &[]).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "no session id");
    assert_eq!(body_code(resp).await, ErrorCode::INVALID_REQUEST);
    let resp = ep
        .post(ping.clone(), &[("mcp-session-id", "0123456789abcdef")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND, "unknown session id");

    // Bob may not use alice's session, and is not told it exists: 404, as for an unknown
    // id (the issue on hardening, item 6).
    let resp = ep
        .post(
            ping.clone(),
            &[
                ("mcp-session-id", &session),
                ("authorization", "Bearer t0ken"),
            ],
        )
        .send()
        .await;
    assert_eq!(resp.unwrap().status(), StatusCode::NOT_FOUND);

    let resp = ep.delete(Some(&session)).send().await;
    assert_eq!(resp.unwrap().status(), StatusCode::OK);
    expect_closed(&mut server).await;
    let resp = ep
        .post(ping, &[("mcp-session-id", &session)])
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status(),
        StatusCode::NOT_FOUND,
        "a deleted session is gone"
    );
    let resp = ep.delete(Some(&session)).send().await;
    assert_eq!(resp.unwrap().status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn accept_content_type_and_protocol_version_are_checked() {
    let mut ep = endpoint(server_opts()).await;
    let (mut server, session) = ep.open().await;
    let note = notification("n", json!({})).encode();
    let sid = ("mcp-session-id", session.as_str());

    let resp = ep
        .post(note.clone(), &[sid, ("accept", "application/json")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_ACCEPTABLE);
    let resp = ep
        .post(note.clone(), &[sid, ("content-type", "text/plain")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let resp = ep
        .post(note.clone(), &[sid, ("mcp-protocol-version", "1999-01-01")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    // A supported version, or none (2025-03-26 assumed), is fine.
    for extra in [
        &[sid, ("MCP-Protocol-Version", "2025-06-18")][..],
        &[sid][..],
    ] {
        let resp = ep.post(note.clone(), extra).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::ACCEPTED);
        assert_eq!(next_notification(&mut server).await.1.method, "n");
    }
    let resp = ep
        .http
        .get(&ep.url)
        .header("authorization", "Bearer s3cret")
        .header("mcp-session-id", &session);
    let resp = resp
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status(),
        StatusCode::NOT_ACCEPTABLE,
        "a GET must accept text/event-stream"
    );
}

#[tokio::test]
async fn tokens_and_origins_are_checked_on_every_request() {
    let mut ep = endpoint(server_opts()).await;
    // Refused initializes carry id 7; the one that opens a session below carries 0.
    let init = initialize(7).encode();
    let resp = ep
        .post(init.clone(), &[("authorization", "Bearer wrong")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(resp.headers()["www-authenticate"], "Bearer");
    assert!(!resp.headers().contains_key("mcp-session-id"), "bad token");
    let resp = ep
        .http
        .post(&ep.url)
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json");
    let resp = resp.body(init.clone()).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "no token");
    assert_eq!(resp.headers()["www-authenticate"], "Bearer");
    assert!(!resp.headers().contains_key("mcp-session-id"), "no token");
    let resp = ep
        .post(init.clone(), &[("origin", "http://evil.example")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert!(!resp.headers().contains_key("mcp-session-id"), "bad origin");

    // Each refusal was answered, so a session any of them opened would be queued ahead of
    // this one (and carry id 7, which `open_as` rejects): the next accepted is bob's.
    let (bobs, _) = ep.open_as("t0ken").await;
    assert_eq!(bobs.info.principal, Some(Principal::Named("bob".into())));
    assert!(
        ep.listener.accept().now_or_never().is_none(),
        "a refused initialize opened a session"
    );

    let (_server, session) = ep.open().await;
    let get = |token: &str| {
        let b = ep
            .http
            .get(&ep.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session);
        b.header("authorization", format!("Bearer {token}")).send()
    };
    assert_eq!(
        get("wrong").await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
    let resp = ep.post(
        notification("n", json!({})).encode(),
        &[
            ("mcp-session-id", &session),
            ("origin", "http://evil.example"),
        ],
    );
    assert_eq!(resp.send().await.unwrap().status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn anonymous_sessions_when_allowed() {
    let mut ep = endpoint(ServerOptions {
        allow_anonymous: true,
        ..server_opts()
    })
    .await;
    let post = ep
        .http
        .post(&ep.url)
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json");
    let post = tokio::spawn(post.body(initialize(0).encode()).send());
    let mut server = within_named("accept", ep.listener.accept()).await.unwrap();
    assert!(matches!(
        server.info.principal,
        Some(Principal::Anonymous(_))
    ));
    next_request(&mut server).await;
    server.outbound.send(ok(0, json!({}))).await.unwrap();
    assert_eq!(
        within_named("the answer", post)
            .await
            .unwrap()
            .unwrap()
            .status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn malformed_and_oversized_bodies_are_refused_and_the_server_goes_on() {
    let mut ep = endpoint(ServerOptions {
        max_message_size: 1024,
        ..server_opts()
    })
    .await;
    let resp = ep.post("{not json", &[]).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(body_code(resp).await, ErrorCode::PARSE_ERROR);

    let (mut server, session) = ep.open().await;
    let sid = [("mcp-session-id", session.as_str())];
    let resp = ep.post("{not json", &sid).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(body_code(resp).await, ErrorCode::PARSE_ERROR);
    assert!(matches!(next(&mut server).await, Inbound::Malformed { .. }));
    let resp = ep
        .post(r#"{"jsonrpc":"2.0","id":3}"#, &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(body_code(resp).await, ErrorCode::INVALID_REQUEST);
    assert!(matches!(next(&mut server).await, Inbound::Malformed { .. }));

    let big = request(1, "big", json!({"pad": filler(2000)})).encode();
    let resp = ep.post(big, &sid).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body_code(resp).await, ErrorCode::INVALID_REQUEST);
    assert!(matches!(
        next(&mut server).await,
        Inbound::TooLarge { limit: 1024, .. }
    ));

    let resp = ep
        .post(notification("after", json!({})).encode(), &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    assert_eq!(next_notification(&mut server).await.1.method, "after");
}

#[tokio::test]
async fn server_messages_wait_for_the_get_stream_which_carries_them_as_sse() {
    let mut ep = endpoint(server_opts()).await;
    let (server, session) = ep.open().await;
    // Written before any stream is open: queued.
    server
        .outbound
        .send(request(100, "roots/list", json!({})))
        .await
        .unwrap();
    server
        .outbound
        .send(notification("tick", json!({})))
        .await
        .unwrap();
    let mut resp = ep.get(Some(&session)).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut text = String::new();
    while text.matches("\n\n").count() < 2 {
        let chunk = within_named("SSE events", resp.chunk())
            .await
            .unwrap()
            .expect("the stream ended");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let events: Vec<&str> = text.split("\n\n").filter(|e| e.contains("data:")).collect();
    assert!(
        events[0].contains("event: message") && events[0].contains("\"roots/list\""),
        "{text}"
    );
    assert!(events[1].contains("\"tick\""), "{text}");
    drop(server);
}

#[tokio::test]
async fn in_sse_mode_a_request_is_answered_with_a_stream_that_ends_after_the_response() {
    let mut ep = endpoint(ServerOptions {
        http_response_mode: HttpResponseMode::Sse,
        ..server_opts()
    })
    .await;
    let post = tokio::spawn(ep.post(initialize(0).encode(), &[]).send());
    let mut server = within_named("accept", ep.listener.accept()).await.unwrap();
    next_request(&mut server).await;
    // No GET stream is open, so the notification rides on the pending answer.
    server
        .outbound
        .send(notification(
            "notifications/message",
            json!({"level": "info"}),
        ))
        .await
        .unwrap();
    server
        .outbound
        .send(ok(0, json!({"protocolVersion": "2025-11-25"})))
        .await
        .unwrap();
    let resp = within_named("the answer", post).await.unwrap().unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert!(resp.headers().contains_key("mcp-session-id"));
    let text = within_named("the whole stream", resp.text()).await.unwrap();
    let note = text
        .find("notifications/message")
        .expect("the notification");
    let answer = text.find("protocolVersion").expect("the response");
    assert!(note < answer, "{text}");
}

#[tokio::test]
async fn get_and_delete_without_a_session_id_get_400_and_with_an_unknown_one_404() {
    let mut ep = endpoint(server_opts()).await;
    // A live session, so that 404 means "this id is unknown", not "there are none".
    let (_server, session) = ep.open().await;
    let unknown = "0123456789abcdef0123456789abcdef";
    assert_ne!(unknown, session);
    let cases = [
        // Without an id, only a legacy client's GET or DELETE (its version says so) is
        // told the id is missing; any other is 405, as MCP 2026-07-28 answers
        // (`http_modern.rs`).
        (
            "GET, no session id",
            ep.get(None).header("mcp-protocol-version", "2025-11-25"),
            StatusCode::BAD_REQUEST,
        ),
        (
            "DELETE, no session id",
            ep.delete(None).header("mcp-protocol-version", "2025-11-25"),
            StatusCode::BAD_REQUEST,
        ),
        (
            "GET, unknown session id",
            ep.get(Some(unknown)),
            StatusCode::NOT_FOUND,
        ),
        (
            "DELETE, unknown session id",
            ep.delete(Some(unknown)),
            StatusCode::NOT_FOUND,
        ),
    ];
    for (what, request, status) in cases {
        let resp = request.send().await.unwrap();
        assert_eq!(resp.status(), status, "{what}");
        assert_eq!(body_code(resp).await, ErrorCode::INVALID_REQUEST, "{what}");
    }

    // None of that touched the real session: its GET stream opens.
    let resp = ep.get(Some(&session)).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
}

/// Only the endpoint's path is served: another path is 404 (a path that merely starts like
/// it, or has a trailing slash, too); a method the endpoint does not take is 405 naming the
/// ones it does. HEAD is one of those: a GET opens (and replaces) the session's stream.
#[tokio::test]
async fn other_paths_get_404_and_other_methods_405_with_allow() {
    let mut ep = endpoint(server_opts()).await;
    let (_server, session) = ep.open().await;
    let base = ep.url.trim_end_matches("/mcp").to_owned();
    for path in [
        "/",
        "/mcp/",
        "/mcpx",
        "/mcp/x",
        "/MCP",
        "/.well-known/oauth-protected-resource",
    ] {
        let resp = ep
            .http
            .post(format!("{base}{path}"))
            .header("authorization", "Bearer s3cret")
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json")
            .body(request(1, "ping", json!({})).encode())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{path}");
    }
    for method in ["HEAD", "PUT", "PATCH", "OPTIONS"] {
        let resp = ep
            .http
            .request(
                reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
                &ep.url,
            )
            .header("authorization", "Bearer s3cret")
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(resp.headers()["allow"], "GET, POST, DELETE", "{method}");
    }
    // The session is untouched: its GET stream opens.
    let resp = ep.get(Some(&session)).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
}

#[tokio::test]
async fn with_no_limit_configured_a_post_past_4_mib_gets_413_and_exactly_4_mib_is_taken() {
    // `max_message_size` is not set: the default applies.
    let mut ep = endpoint(server_opts()).await;
    let (mut server, session) = ep.open().await;
    let sid = [("mcp-session-id", session.as_str())];

    let resp = ep
        .post(notification_of_size("over", FOUR_MIB + 1).encode(), &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body_code(resp).await, ErrorCode::INVALID_REQUEST);
    match next(&mut server).await {
        Inbound::TooLarge { size, limit, .. } => {
            assert_eq!((size, limit), (FOUR_MIB + 1, FOUR_MIB))
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }

    // The limit is inclusive.
    let resp = ep
        .post(notification_of_size("at", FOUR_MIB).encode(), &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    assert_eq!(next_notification(&mut server).await.1.method, "at");
    let resp = ep
        .post(notification("small", json!({})).encode(), &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    assert_eq!(next_notification(&mut server).await.1.method, "small");
}

/// The messages of an SSE stream as they come, read by an SSE parser; the stream ends with
/// the HTTP body.
fn sse_messages(resp: reqwest::Response) -> impl futures_util::Stream<Item = Message> + Unpin {
    use eventsource_stream::Eventsource as _;
    use futures_util::StreamExt as _;
    resp.bytes_stream()
        .eventsource()
        .map(|event| Message::decode(event.expect("an SSE event").data.as_bytes()).unwrap())
}

/// The next message of an SSE stream; fails if it ends first.
async fn next_sse(stream: &mut (impl futures_util::Stream<Item = Message> + Unpin)) -> Message {
    use futures_util::StreamExt as _;
    within_named("an SSE message", stream.next())
        .await
        .expect("the stream goes on")
}

/// The `params.i` of a numbered notification.
fn number_of(m: Message) -> u64 {
    match m {
        Message::Notification(n) => n.params_value().unwrap()["i"].as_u64().unwrap(),
        other => panic!("expected a numbered notification, got {other:?}"),
    }
}

#[tokio::test]
async fn a_get_stream_that_does_not_keep_up_ends_and_what_follows_waits_for_the_next() {
    const LIMIT: usize = 8;
    const N: u64 = 48;
    let mut ep = endpoint(ServerOptions {
        http_queue_limit: LIMIT,
        ..server_opts()
    })
    .await;
    let (server, session) = ep.open().await;
    let first = ep.get(Some(&session)).send().await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    // 48 MiB written while the client reads nothing: more than loopback's socket buffers
    // and the stream's channel of 8 hold, so the server finds the stream full.
    let pad = "x".repeat(1 << 20);
    for i in 0..N {
        server
            .outbound
            .send(notification("tick", json!({"i": i, "pad": pad})))
            .await
            .unwrap();
    }
    // The full stream ended after writing what it held: a run from the start, no gaps.
    let before: Vec<u64> = within_named(
        "the full stream's end",
        futures_util::StreamExt::collect::<Vec<_>>(sse_messages(first)),
    )
    .await
    .into_iter()
    .map(number_of)
    .collect();
    assert!(
        !before.is_empty() && (before.len() as u64) < N,
        "{before:?}"
    );
    assert_eq!(before, (0..before.len() as u64).collect::<Vec<_>>());
    // What followed waited (the newest `LIMIT` of it) for the stream the client reopens.
    let second = ep.get(Some(&session)).send().await.unwrap();
    assert_eq!(second.status(), StatusCode::OK);
    let mut second = sse_messages(second);
    let mut after = Vec::new();
    while after.last() != Some(&(N - 1)) {
        after.push(number_of(next_sse(&mut second).await));
    }
    assert!(after.len() <= LIMIT + 1, "{after:?}");
    assert!(
        after[0] > *before.last().unwrap(),
        "{before:?} then {after:?}"
    );
    assert!(after.windows(2).all(|w| w[0] < w[1]), "{after:?}");
    drop(server);
}

#[tokio::test]
async fn a_requests_progress_rides_its_own_answer_which_turns_to_sse_for_it() {
    let mut ep = endpoint(server_opts()).await; // JSON answers
    let (mut server, session) = ep.open().await;
    let get = ep.get(Some(&session)).send().await.unwrap();
    assert_eq!(get.status(), StatusCode::OK);
    let mut get = sse_messages(get);
    let progress = |token: &str, n: u32| {
        notification(
            "notifications/progress",
            json!({"progressToken": token, "progress": n}),
        )
    };

    // A request with a progress token: its progress goes on its own answer, before the
    // response, while an unrelated notification takes the GET stream.
    let call = request(
        5,
        "tools/call",
        json!({"name": "slow", "_meta": {"progressToken": "p5"}}),
    );
    let post = tokio::spawn(
        ep.post(call.encode(), &[("mcp-session-id", &session)])
            .send(),
    );
    next_request(&mut server).await;
    for m in [
        progress("p5", 1),
        notification("tick", json!({})),
        progress("p5", 2),
        ok(5, json!({"content": []})),
    ] {
        server.outbound.send(m).await.unwrap();
    }
    let resp = within_named("the answer", post).await.unwrap().unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let messages: Vec<Message> = within_named(
        "the whole answer",
        futures_util::StreamExt::collect(sse_messages(resp)),
    )
    .await;
    assert_eq!(
        messages,
        [
            progress("p5", 1),
            progress("p5", 2),
            ok(5, json!({"content": []}))
        ]
    );
    // The GET stream has the unrelated notification and none of the progress.
    assert_eq!(next_sse(&mut get).await, notification("tick", json!({})));

    // Without a token, nothing is related: the answer stays JSON, and a progress naming an
    // unknown token goes on the GET stream.
    let post = tokio::spawn(
        ep.post(
            request(6, "ping", json!({})).encode(),
            &[("mcp-session-id", &session)],
        )
        .send(),
    );
    next_request(&mut server).await;
    server.outbound.send(progress("nobody", 1)).await.unwrap();
    server.outbound.send(ok(6, json!({}))).await.unwrap();
    let resp = within_named("the answer", post).await.unwrap().unwrap();
    assert_eq!(resp.headers()["content-type"], "application/json");
    assert_eq!(
        Message::decode(&resp.bytes().await.unwrap()).unwrap(),
        ok(6, json!({}))
    );
    assert_eq!(next_sse(&mut get).await, progress("nobody", 1));
}

/// MCP resumability on the GET stream: each message carries an event id, and a client that
/// reopens the stream with `Last-Event-ID` gets again what followed that id, with the same
/// ids, then what comes next.
#[tokio::test]
async fn a_get_stream_reopened_with_last_event_id_resumes_after_it() {
    use eventsource_stream::Eventsource as _;
    use futures_util::StreamExt as _;
    let ids_and_messages = |resp: reqwest::Response| {
        resp.bytes_stream().eventsource().map(|event| {
            let event = event.expect("an SSE event");
            (event.id, Message::decode(event.data.as_bytes()).unwrap())
        })
    };
    let mut ep = endpoint(server_opts()).await;
    let (server, session) = ep.open().await;
    let first = ep.get(Some(&session)).send().await.unwrap();
    let mut first = ids_and_messages(first);
    let tick = |i: u64| notification("tick", json!({"i": i}));
    for i in 1..=3 {
        server.outbound.send(tick(i)).await.unwrap();
    }
    let mut read = Vec::new();
    for _ in 1..=3 {
        read.push(within_named("a GET event", first.next()).await.unwrap());
    }
    let expected = |ids: &[u64]| -> Vec<(String, Message)> {
        ids.iter().map(|&i| (i.to_string(), tick(i))).collect()
    };
    assert_eq!(read, expected(&[1, 2, 3]));
    // The client kept only the first; it reopens from there.
    drop(first);
    let again = ep
        .get(Some(&session))
        .header("last-event-id", "1")
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::OK);
    let mut again = ids_and_messages(again);
    server.outbound.send(tick(4)).await.unwrap();
    let mut resumed = Vec::new();
    for _ in 2..=4 {
        resumed.push(within_named("a resumed event", again.next()).await.unwrap());
    }
    assert_eq!(resumed, expected(&[2, 3, 4]));
    drop(server);
}

/// A ping in `session`, without a token, from `from`; the HTTP status.
async fn anonymous_ping(ep: &Endpoint, from: &str, session: &str) -> StatusCode {
    let client = reqwest::Client::builder()
        .local_address(from.parse::<std::net::IpAddr>().unwrap())
        .timeout(DEADLINE)
        .build()
        .unwrap();
    client
        .post(&ep.url)
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json")
        .header("mcp-session-id", session)
        .body(notification("notifications/initialized", json!({})).encode())
        .send()
        .await
        .unwrap()
        .status()
}

/// Item 2 of the issue on hardening: a session with no request and no stream for
/// `http_session_idle` ends — its connection closes on the server's side, and its id is
/// unknown afterwards.
#[tokio::test]
async fn hardening_02_an_idle_session_ends_and_its_connection_closes() {
    let mut ep = endpoint(ServerOptions {
        http_session_idle: std::time::Duration::from_millis(200),
        ..server_opts()
    })
    .await;
    let (mut server, session) = ep.open().await;
    within_named("the session's end", expect_closed(&mut server)).await;
    let ping = request(1, "ping", json!({})).encode();
    let resp = ep
        .post(ping, &[("mcp-session-id", &session)])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}

/// Item 2: one principal holds at most `http_sessions_per_principal` sessions; opening one
/// more ends its least recently active one, and the others go on.
#[tokio::test]
async fn hardening_02_a_principal_past_its_session_cap_loses_its_oldest_session() {
    let mut ep = endpoint(ServerOptions {
        http_sessions_per_principal: 2,
        ..server_opts()
    })
    .await;
    let (mut first, first_id) = ep.open().await;
    let (_second, second_id) = ep.open().await;
    let (_third, _) = ep.open().await;
    within_named("the oldest session's end", expect_closed(&mut first)).await;
    let note = notification("notifications/initialized", json!({})).encode();
    let gone = ep
        .post(note.clone(), &[("mcp-session-id", &first_id)])
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    let kept = ep
        .post(note, &[("mcp-session-id", &second_id)])
        .send()
        .await
        .unwrap();
    assert_eq!(kept.status(), StatusCode::ACCEPTED);
}

/// Item 2: a listener holds at most `http_max_sessions`; past it `initialize` gets 503.
#[tokio::test]
async fn hardening_02_a_listener_past_its_session_cap_refuses_initialize() {
    let mut ep = endpoint(ServerOptions {
        http_max_sessions: 1,
        ..server_opts()
    })
    .await;
    let (_conn, _) = ep.open().await;
    let resp = ep.post(initialize(0).encode(), &[]).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
}

/// Item 5: an anonymous session's id is not its credential: the same id from another
/// address is an unknown session (404). And one address holds at most
/// `anonymous_per_source` anonymous sessions: past it, its least recently active one ends
/// (clients that never DELETE are not locked out); another address has its own.
#[tokio::test]
async fn hardening_05_anonymous_sessions_are_bound_to_their_address_and_capped_per_address() {
    let mut ep = endpoint(ServerOptions {
        allow_anonymous: true,
        anonymous_per_source: 2,
        ..server_opts()
    })
    .await;
    let (_a, a) = open_anonymous(&mut ep, "127.0.0.1").await.unwrap();
    assert_eq!(
        anonymous_ping(&ep, "127.0.0.1", &a).await,
        StatusCode::ACCEPTED
    );
    assert_eq!(
        anonymous_ping(&ep, "127.0.0.2", &a).await,
        StatusCode::NOT_FOUND
    );

    let (_b, b) = open_anonymous(&mut ep, "127.0.0.1").await.unwrap();
    // `b` is used after `a`: a third session ends `a`, the least recently active.
    assert_eq!(
        anonymous_ping(&ep, "127.0.0.1", &b).await,
        StatusCode::ACCEPTED
    );
    let (_c, c) = open_anonymous(&mut ep, "127.0.0.1").await.unwrap();
    assert_eq!(
        anonymous_ping(&ep, "127.0.0.1", &a).await,
        StatusCode::NOT_FOUND
    );
    for id in [&b, &c] {
        assert_eq!(
            anonymous_ping(&ep, "127.0.0.1", id).await,
            StatusCode::ACCEPTED
        );
    }
    assert!(open_anonymous(&mut ep, "127.0.0.2").await.is_ok());
}

/// Item 4: bound to loopback, a request naming another host (a page whose name was
/// rebound to 127.0.0.1) is refused with 403 before anything else.
#[tokio::test]
async fn hardening_04_a_request_for_another_host_is_refused_on_loopback() {
    let ep = endpoint(server_opts()).await;
    let resp = ep
        .post(initialize(0).encode(), &[("host", "evil.example")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let resp = ep
        .post(
            initialize(0).encode(),
            &[("origin", "http://localhost:80@evil.example")],
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
}

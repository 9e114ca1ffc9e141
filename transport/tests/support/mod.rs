//! Shared test helpers: message builders, options, and awaiting what a connection reads
//! with a generous deadline (a deadline turns a hang into a failure; no test sleeps).

#![allow(dead_code)] // each test crate uses a subset

use mcpl_protocol::{ErrorCode, Id, Message, Notification, Request, Response};
use mcpl_testkit::within_named;
use mcpl_transport::{ClientOptions, Connection, Inbound, ServerOptions, StreamId};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;

/// How long a test's HTTP client request may take before it fails (other waits:
/// [`mcpl_testkit::within_named`]).
pub const DEADLINE: Duration = Duration::from_secs(20);

/// `127.0.0.1:0`.
pub fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// The token `s3cret` is alice's and `t0ken` is bob's.
pub fn server_opts() -> ServerOptions {
    let mut o = ServerOptions::default();
    o.tokens.insert("s3cret".into(), "alice".into());
    o.tokens.insert("t0ken".into(), "bob".into());
    o
}

/// Client options presenting `token`.
pub fn client_opts(token: Option<&str>) -> ClientOptions {
    ClientOptions {
        token: token.map(str::to_owned),
        ..ClientOptions::default()
    }
}

pub fn request(id: i64, method: &str, params: Value) -> Message {
    Request {
        id: Id::Number(id),
        method: method.into(),
        params: Some(mcpl_protocol::jsonrpc::to_raw(&params)),
    }
    .into()
}

pub fn notification(method: &str, params: Value) -> Message {
    Notification {
        method: method.into(),
        params: Some(mcpl_protocol::jsonrpc::to_raw(&params)),
    }
    .into()
}

pub fn ok(id: i64, result: Value) -> Message {
    Response::ok(Id::Number(id), result).into()
}

/// The `initialize` request a client opens with (the transport reads only its method).
pub fn initialize(id: i64) -> Message {
    request(
        id,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    )
}

/// The next thing read; fails if the link closed.
pub async fn next(conn: &mut Connection) -> Inbound {
    within_named("an inbound item", conn.inbound.recv())
        .await
        .expect("the link closed")
}

/// The next message read, with its stream; fails on anything else.
pub async fn next_message(conn: &mut Connection) -> (StreamId, Message) {
    match next(conn).await {
        Inbound::Message { stream, message } => (stream, message),
        other => panic!("expected a message, got {other:?}"),
    }
}

/// The next message, which must be a request; returns it with its stream.
pub async fn next_request(conn: &mut Connection) -> (StreamId, Request) {
    match next_message(conn).await {
        (stream, Message::Request(r)) => (stream, r),
        other => panic!("expected a request, got {other:?}"),
    }
}

/// The next message, which must be a response.
pub async fn next_response(conn: &mut Connection) -> (StreamId, Response) {
    match next_message(conn).await {
        (stream, Message::Response(r)) => (stream, r),
        other => panic!("expected a response, got {other:?}"),
    }
}

/// The next message, which must be a notification.
pub async fn next_notification(conn: &mut Connection) -> (StreamId, Notification) {
    match next_message(conn).await {
        (stream, Message::Notification(n)) => (stream, n),
        other => panic!("expected a notification, got {other:?}"),
    }
}

/// Asserts that the link closes with nothing more read.
pub async fn expect_closed(conn: &mut Connection) {
    if let Some(item) = within_named("the link to close", conn.inbound.recv()).await {
        panic!("expected the link to close, got {item:?}");
    }
}

/// The error of a response, with its code and `data.httpStatus` (if any).
pub fn error_of(response: &Response) -> (ErrorCode, Option<u64>) {
    let error = response
        .outcome
        .as_ref()
        .expect_err("expected an error response");
    let status = error
        .data
        .as_ref()
        .and_then(|d| d.get("httpStatus"))
        .and_then(Value::as_u64);
    (error.code, status)
}

/// A string of `n` bytes, to make messages of a chosen size.
pub fn filler(n: usize) -> String {
    "x".repeat(n)
}

/// A notification whose encoding is exactly `n` bytes, padded with `x` (which JSON does not
/// escape), to probe a size limit at its edge.
pub fn notification_of_size(method: &str, n: usize) -> Message {
    let bare = notification(method, json!({"pad": ""})).encode().len();
    let pad = n.checked_sub(bare).expect("a size too small to pad to");
    let message = notification(method, json!({"pad": filler(pad)}));
    assert_eq!(message.encode().len(), n);
    message
}

/// 4 MiB, written out: the default limit the tests hold the transports to.
pub const FOUR_MIB: usize = 4_194_304;

/// Sends `from` → `to` a message one byte over `limit`, which `to` refuses as
/// [`Inbound::TooLarge`] naming the limit, then one of exactly `limit` and a small one, which
/// it reads in that order: the limit is inclusive and the link goes on.
pub async fn limit_is_inclusive(from: &Connection, to: &mut Connection, limit: usize) {
    limit_is_inclusive_in(from, to, limit, true).await
}

/// [`limit_is_inclusive`] for a direction that keeps no order between messages: a
/// Streamable HTTP client's POSTs, sent at once, may arrive in either order (the small one
/// overtakes the 4 MiB one on a loaded machine).
pub async fn limit_is_inclusive_unordered(from: &Connection, to: &mut Connection, limit: usize) {
    limit_is_inclusive_in(from, to, limit, false).await
}

async fn limit_is_inclusive_in(
    from: &Connection,
    to: &mut Connection,
    limit: usize,
    ordered: bool,
) {
    from.outbound
        .send(notification_of_size("over", limit + 1))
        .await
        .unwrap();
    match next(to).await {
        Inbound::TooLarge { size, limit: l, .. } => assert_eq!((size, l), (limit + 1, limit)),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    for m in [
        notification_of_size("at", limit),
        notification("small", json!({})),
    ] {
        from.outbound.send(m).await.unwrap();
    }
    let mut read = vec![
        next_notification(to).await.1.method,
        next_notification(to).await.1.method,
    ];
    if !ordered {
        read.sort();
    }
    assert_eq!(read, ["at", "small"]);
}

/// A request from `client` answered by `server`, then a notification from `server`: the
/// link carries both ways. Returns the stream the request arrived on.
pub async fn round_trip(client: &mut Connection, server: &mut Connection) -> StreamId {
    client
        .outbound
        .send(request(1, "tools/list", json!({})))
        .await
        .unwrap();
    let (stream, req) = next_request(server).await;
    assert_eq!(req.id, Id::Number(1));
    server
        .outbound
        .send(ok(1, json!({"tools": []})))
        .await
        .unwrap();
    assert_eq!(
        next_response(client).await.1.result_value(),
        Ok(json!({"tools": []}))
    );
    server
        .outbound
        .send(notification("from/server", json!({})))
        .await
        .unwrap();
    assert_eq!(next_notification(client).await.1.method, "from/server");
    stream
}

/// What a Streamable HTTP POST accepts.
pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// A Streamable HTTP listener on loopback at `/mcp`, its URL, and a raw HTTP client for it.
pub struct Endpoint {
    /// The listener (its sessions come out of `accept`).
    pub listener: mcpl_transport::http::HttpListener,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// A client whose every request fails past [`DEADLINE`].
    pub http: reqwest::Client,
}

/// Binds an [`Endpoint`] with `opts`.
pub async fn endpoint(opts: ServerOptions) -> Endpoint {
    let listener = mcpl_transport::http::bind(loopback(), "/mcp", std::sync::Arc::new(opts))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", listener.local_addr());
    // The deadline turns a request the server never answers into a failure, not a hang.
    let http = reqwest::Client::builder()
        .timeout(DEADLINE)
        .build()
        .unwrap();
    Endpoint {
        listener,
        url,
        http,
    }
}

/// A session opened as `Anonymous` from `from`: POSTs `initialize` without a token from that
/// local address and answers it; returns the session id (or the refusal's status).
pub async fn open_anonymous(
    ep: &mut Endpoint,
    from: &str,
) -> Result<(Connection, String), reqwest::StatusCode> {
    let client = reqwest::Client::builder()
        .local_address(from.parse::<std::net::IpAddr>().unwrap())
        .timeout(DEADLINE)
        .build()
        .unwrap();
    let post = client
        .post(&ep.url)
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json")
        .body(initialize(0).encode());
    let mut post = tokio::spawn(post.send());
    let mut server = tokio::select! {
        conn = ep.listener.accept() => conn.unwrap(),
        refused = &mut post => return Err(refused.unwrap().unwrap().status()),
    };
    next_request(&mut server).await;
    server.outbound.send(ok(0, json!({}))).await.unwrap();
    let resp = within_named("the answer", post).await.unwrap().unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::OK);
    let id = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    Ok((server, id))
}

//! Slow clients of the Streamable HTTP server (issue 7, "a slow HTTP client"): over raw
//! loopback sockets, a client that stops part way through its request head, one that sends
//! nothing, one that stops part way through its body and one that trickles its body in are
//! each cut off once `http_read_timeout` has passed, while a well-behaved session on the same
//! server goes on, its request held longer than that timeout and still answered.
//!
//! No test sleeps: each awaits the server closing the connection, under an outer deadline,
//! and checks that the close came no sooner than the timeout (so it was the timeout's doing).

use crate::support;

use mcpl_protocol::{ErrorCode, Id, Message};
use mcpl_testkit::within_named;
use mcpl_transport::ServerOptions;
use mcpl_transport::http::{self, HttpListener};
use serde_json::json;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The server's read timeout in these tests.
const READ_TIMEOUT: Duration = Duration::from_millis(250);
/// How long a test waits for the server to close a slow connection before it fails.
const CLOSE_LIMIT: Duration = Duration::from_secs(5);

async fn listen() -> (HttpListener, SocketAddr) {
    let opts = ServerOptions {
        http_read_timeout: READ_TIMEOUT,
        ..server_opts()
    };
    let listener = http::bind(loopback(), "/mcp", Arc::new(opts))
        .await
        .unwrap();
    let addr = listener.local_addr();
    (listener, addr)
}

/// The head of a well-formed POST of `initialize` (alice's token), announcing
/// `content_length` bytes of body.
fn post_head(addr: SocketAddr, content_length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer s3cret\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         Content-Length: {content_length}\r\n\r\n"
    )
}

/// A connection that has written `bytes`, and when it was opened.
async fn open(addr: SocketAddr, bytes: &[u8]) -> (TcpStream, Instant) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(bytes).await.expect("write");
    (stream, started)
}

/// Everything the server writes until it closes the connection (a reset counts as a close:
/// the server may reset a connection with unread bytes). Fails after [`CLOSE_LIMIT`].
async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let read = async {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) => return got,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::ConnectionReset => return got,
                Err(e) => panic!("reading failed: {e}"),
            }
        }
    };
    tokio::time::timeout(CLOSE_LIMIT, read)
        .await
        .expect("the server did not close a slow connection")
}

/// Asserts that the connection was open for at least the read timeout.
fn assert_held_for_the_timeout(started: Instant) {
    let held = started.elapsed();
    assert!(
        held >= READ_TIMEOUT,
        "closed after {held:?}, sooner than the read timeout"
    );
}

/// Asserts that the server closed an unfinished head without an answer, or (should hyper
/// start sending one) with 408.
fn assert_no_answer_but_408(written: &[u8]) {
    assert!(
        written.is_empty() || written.starts_with(b"HTTP/1.1 408 "),
        "unexpected answer: {:?}",
        String::from_utf8_lossy(written)
    );
}

/// Asserts that `written` is a whole 408 answer that announces the close and carries a
/// JSON-RPC error without id.
fn assert_408(written: &[u8]) {
    let text = String::from_utf8_lossy(written);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP head in {text:?}"));
    let mut lines = head.split("\r\n");
    assert!(
        lines.next().unwrap().starts_with("HTTP/1.1 408 "),
        "not a 408: {text:?}"
    );
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_ascii_lowercase()))
        .collect();
    assert!(
        headers.contains(&("connection".into(), "close".into())),
        "no `Connection: close` in {headers:?}"
    );
    let Ok(Message::Response(response)) = Message::decode(body.as_bytes()) else {
        panic!("not a JSON-RPC response: {body:?}");
    };
    assert_eq!(response.id, None);
    assert_eq!(
        response.outcome.expect_err("an error").code,
        ErrorCode::INVALID_REQUEST
    );
}

#[tokio::test]
async fn a_request_head_cut_off_part_way_is_closed_after_the_read_timeout() {
    let (_listener, addr) = listen().await;
    let (mut slow, started) = open(addr, b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-").await;
    let written = read_until_closed(&mut slow).await;
    assert_held_for_the_timeout(started);
    assert_no_answer_but_408(&written);
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_read_timeout() {
    let (_listener, addr) = listen().await;
    let (mut silent, started) = open(addr, b"").await;
    let written = read_until_closed(&mut silent).await;
    assert_held_for_the_timeout(started);
    assert_no_answer_but_408(&written);
}

#[tokio::test]
async fn a_body_that_stops_part_way_is_answered_408_and_closed() {
    let (_listener, addr) = listen().await;
    let body = initialize(0).encode();
    let mut request = post_head(addr, body.len()).into_bytes();
    request.extend_from_slice(&body.as_bytes()[..body.len() / 2]);
    let (mut slow, started) = open(addr, &request).await;
    let written = read_until_closed(&mut slow).await;
    assert_held_for_the_timeout(started);
    assert_408(&written);
}

#[tokio::test]
async fn a_body_trickled_in_is_answered_408_once_the_whole_of_it_is_late() {
    let (_listener, addr) = listen().await;
    // A byte every 10 ms: never silent for long, but 10,000 bytes would take 100 s.
    let (slow, started) = open(addr, post_head(addr, 10_000).as_bytes()).await;
    let (mut rd, mut wr) = slow.into_split();
    let trickle = tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_millis(10));
        for _ in 0..10_000 {
            every.tick().await;
            if wr.write_all(b" ").await.is_err() {
                return; // the server closed
            }
        }
        panic!("the server read a trickled body to its end");
    });
    let read = async {
        let mut got = Vec::new();
        match rd.read_to_end(&mut got).await {
            Ok(_) => got,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => got,
            Err(e) => panic!("reading failed: {e}"),
        }
    };
    let written = tokio::time::timeout(CLOSE_LIMIT, read)
        .await
        .expect("the server did not close a trickling connection");
    assert_held_for_the_timeout(started);
    assert_408(&written);
    trickle.abort();
}

#[tokio::test]
async fn a_session_is_served_while_slow_clients_are_cut_off() {
    let (mut listener, addr) = listen().await;
    let url = format!("http://{addr}/mcp");
    let (mut head_cut, head_started) =
        open(addr, b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-").await;
    let mut body_cut = post_head(addr, 1000).into_bytes();
    body_cut.extend_from_slice(b"{\"jsonrpc\":");
    let (mut body_cut, body_started) = open(addr, &body_cut).await;

    // A well-behaved client opens a session and sends a request while they hang.
    let mut client = http::connect(&url, &client_opts(Some("s3cret")))
        .await
        .unwrap();
    client.outbound.send(initialize(0)).await.unwrap();
    let mut server = within_named("accept", listener.accept()).await.unwrap();
    assert_eq!(next_request(&mut server).await.1.method, "initialize");
    server
        .outbound
        .send(ok(0, json!({"protocolVersion": "2025-11-25"})))
        .await
        .unwrap();
    assert!(next_response(&mut client).await.1.outcome.is_ok());
    client
        .outbound
        .send(request(1, "tools/list", json!({})))
        .await
        .unwrap();
    assert_eq!(next_request(&mut server).await.1.id, Id::Number(1));

    // The slow ones are cut off...
    assert_no_answer_but_408(&read_until_closed(&mut head_cut).await);
    assert_held_for_the_timeout(head_started);
    assert_408(&read_until_closed(&mut body_cut).await);
    assert_held_for_the_timeout(body_started);

    // ...but the request, held longer than the read timeout by now, is still answered: the
    // timeout bounds what a client sends, not how long it waits.
    server
        .outbound
        .send(ok(1, json!({"tools": []})))
        .await
        .unwrap();
    let (_, answer) = next_response(&mut client).await;
    assert_eq!(
        (answer.id.clone(), answer.result_value()),
        (Some(Id::Number(1)), Ok(json!({"tools": []})))
    );
}

#[tokio::test]
async fn dropping_the_listener_still_answers_a_request_in_flight() {
    let (mut listener, addr) = listen().await;
    let url = format!("http://{addr}/mcp");
    let mut client = http::connect(&url, &client_opts(Some("s3cret")))
        .await
        .unwrap();
    client.outbound.send(initialize(0)).await.unwrap();
    let mut server = within_named("accept", listener.accept()).await.unwrap();
    assert_eq!(next_request(&mut server).await.1.method, "initialize");
    drop(listener);
    let result = json!({"protocolVersion": "2025-11-25"});
    server.outbound.send(ok(0, result.clone())).await.unwrap();
    // The real answer, not one the client made up for a POST that failed.
    let (_, answer) = next_response(&mut client).await;
    assert_eq!(
        (answer.id.clone(), answer.result_value()),
        (Some(Id::Number(0)), Ok(result))
    );
}

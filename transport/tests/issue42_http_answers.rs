//! Issue #42, item 3: a JSON-mode POST's answer waits in a one-shot slot, not a channel,
//! and becomes a stream only when something related to the request comes first. Every
//! way such an answer can go, over raw HTTP/1.1 on a real socket: one JSON body; an SSE
//! stream carrying the request's progress and then its response; an SSE stream that ends
//! at once for a request the client cancelled; 404 for one whose session ended.

use crate::support;

use mcpl_protocol::Message;
use mcpl_testkit::within_named;
use mcpl_transport::Connection;
use serde_json::json;
use std::net::SocketAddr;
use support::*;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// An HTTP answer as read off the wire.
struct Raw {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The `data` of each SSE event of the body.
    fn events(&self) -> Vec<Message> {
        String::from_utf8(self.body.clone())
            .expect("UTF-8")
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| Message::decode(d.trim().as_bytes()).expect("a JSON-RPC message"))
            .collect()
    }
}

/// Sends one request as alice (`Connection: close`), reads the answer to the end.
async fn raw(addr: SocketAddr, method: &str, session: Option<&str>, body: &str) -> Raw {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer s3cret\r\n\
         Accept: {ACCEPT_BOTH}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(s) = session {
        head.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
    }
    head.push_str("\r\n");
    tcp.write_all(head.as_bytes()).await.expect("write");
    tcp.write_all(body.as_bytes()).await.expect("write");
    let mut bytes = Vec::new();
    tcp.read_to_end(&mut bytes).await.expect("read");
    parse(&bytes)
}

fn parse(bytes: &[u8]) -> Raw {
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete head");
    let head = std::str::from_utf8(&bytes[..end]).expect("an ASCII head");
    let mut lines = head.split("\r\n");
    let status = lines.next().expect("a status line")[9..12]
        .parse()
        .expect("a status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut raw = Raw {
        status,
        headers,
        body: Vec::new(),
    };
    let rest = &bytes[end + 4..];
    raw.body = if raw
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    raw
}

fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let eol = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("a chunk size");
        let size = usize::from_str_radix(std::str::from_utf8(&rest[..eol]).unwrap().trim(), 16)
            .expect("a hex chunk size");
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&rest[eol + 2..eol + 2 + size]);
        rest = &rest[eol + 2 + size + 2..];
    }
}

/// A session opened with a raw `initialize`: its server end and its id.
async fn open(ep: &mut Endpoint, addr: SocketAddr) -> (Connection, String) {
    let post = tokio::spawn(async move { raw(addr, "POST", None, &initialize(0).encode()).await });
    let mut server = within_named("the session", ep.listener.accept())
        .await
        .expect("a session");
    next_request(&mut server).await;
    server.outbound.send(ok(0, json!({}))).await.unwrap();
    let answer = within_named("the initialize answer", post).await.unwrap();
    assert_eq!(answer.status, 200);
    let id = answer
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    (server, id)
}

async fn endpoint_with_queue(limit: usize) -> (Endpoint, SocketAddr) {
    let mut opts = server_opts();
    opts.http_queue_limit = limit;
    let ep = endpoint(opts).await;
    let addr = ep.listener.local_addr();
    (ep, addr)
}

#[tokio::test]
async fn issue42_03_a_json_answer_is_one_body_and_progress_first_turns_it_into_a_stream() {
    let (mut ep, addr) = endpoint_with_queue(4).await;
    let (mut server, session) = open(&mut ep, addr).await;

    // Nothing but the response: one JSON body.
    let s = session.clone();
    let post = tokio::spawn(async move {
        raw(
            addr,
            "POST",
            Some(&s),
            &request(1, "ping", json!({})).encode(),
        )
        .await
    });
    let (_, r) = next_request(&mut server).await;
    assert_eq!(r.id, mcpl_protocol::Id::Number(1));
    server.outbound.send(ok(1, json!({}))).await.unwrap();
    let answer = within_named("the JSON answer", post).await.unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(answer.header("mcp-session-id"), Some(session.as_str()));
    assert_eq!(
        Message::decode(&answer.body).expect("one JSON-RPC message"),
        ok(1, json!({}))
    );

    // Its progress first: an SSE stream with the progress, then the response, then its end.
    let progress = |n: u32| {
        notification(
            "notifications/progress",
            json!({"progressToken": "t2", "progress": n}),
        )
    };
    let s = session.clone();
    let call = request(
        2,
        "tools/call",
        json!({"name": "slow", "_meta": {"progressToken": "t2"}}),
    );
    let post = tokio::spawn(async move { raw(addr, "POST", Some(&s), &call.encode()).await });
    next_request(&mut server).await;
    for m in [progress(1), progress(2), ok(2, json!({"content": []}))] {
        server.outbound.send(m).await.unwrap();
    }
    let answer = within_named("the SSE answer", post).await.unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    assert_eq!(
        answer.events(),
        [progress(1), progress(2), ok(2, json!({"content": []}))]
    );
}

#[tokio::test]
async fn issue42_03_a_cancelled_json_answer_ends_as_an_empty_stream_and_an_ended_session_gets_404()
{
    let (mut ep, addr) = endpoint_with_queue(4).await;
    let (mut server, session) = open(&mut ep, addr).await;

    let s = session.clone();
    let post = tokio::spawn(async move {
        raw(
            addr,
            "POST",
            Some(&s),
            &request(3, "tools/call", json!({"name": "slow"})).encode(),
        )
        .await
    });
    next_request(&mut server).await;
    let cancel = notification("notifications/cancelled", json!({"requestId": 3}));
    let sent = raw(addr, "POST", Some(&session), &cancel.encode()).await;
    assert_eq!(sent.status, 202);
    match next_message(&mut server).await {
        (_, Message::Notification(n)) => assert_eq!(n.method, "notifications/cancelled"),
        other => panic!("expected the cancellation, got {other:?}"),
    }
    let answer = within_named("the cancelled answer", post).await.unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    assert!(answer.events().is_empty(), "no response comes");
    // The response the server writes after all goes nowhere; the session goes on.
    server.outbound.send(ok(3, json!({}))).await.unwrap();

    // A request pending when its session ends: 404.
    let s = session.clone();
    let post = tokio::spawn(async move {
        raw(
            addr,
            "POST",
            Some(&s),
            &request(4, "ping", json!({})).encode(),
        )
        .await
    });
    next_request(&mut server).await;
    let deleted = raw(addr, "DELETE", Some(&session), "").await;
    assert_eq!(deleted.status, 200);
    let answer = within_named("the ended session's answer", post)
        .await
        .unwrap();
    assert_eq!(answer.status, 404);
}

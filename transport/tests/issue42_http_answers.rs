//! Issue #42, item 3: a JSON-mode POST's answer waits in a one-shot slot, not a channel,
//! and becomes a stream only when something related to the request comes first. Every
//! way such an answer can go, over raw HTTP/1.1 on a real socket: one JSON body; an SSE
//! stream carrying the request's progress and then its response; an SSE stream that ends
//! at once for a request the client cancelled; 404 for one whose session ended.

use crate::support;

use mcpl_protocol::{ErrorCode, Message};
use mcpl_testkit::within_named;
use mcpl_transport::{Connection, Inbound};
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

/// Sends one POST of `body` (as alice unless `token` says otherwise) in `session`, with
/// `Content-Type: content_type`, in `chunks` chunks (`Transfer-Encoding: chunked`) when
/// more than one, and reads the answer to the end.
async fn raw_post(
    addr: SocketAddr,
    session: &str,
    token: &str,
    content_type: &str,
    body: &[u8],
    chunks: usize,
) -> Raw {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Accept: {ACCEPT_BOTH}\r\nContent-Type: {content_type}\r\n\
         Mcp-Session-Id: {session}\r\nConnection: close\r\n"
    );
    let mut bytes = Vec::new();
    if chunks > 1 {
        head.push_str("Transfer-Encoding: chunked\r\n\r\n");
        bytes.extend_from_slice(head.as_bytes());
        for part in body.chunks(body.len().div_ceil(chunks)) {
            bytes.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
            bytes.extend_from_slice(part);
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(b"0\r\n\r\n");
    } else {
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        bytes.extend_from_slice(head.as_bytes());
        bytes.extend_from_slice(body);
    }
    tcp.write_all(&bytes).await.expect("write");
    let mut answer = Vec::new();
    tcp.read_to_end(&mut answer).await.expect("read");
    parse(&answer)
}

/// A POST's body is taken whole in its first poll when it came with its head, with no
/// copy and no timer (issue #42's HTTP path): what the session is handed stays what the
/// client sent however the body came — in chunks, with a `Content-Type` that has
/// parameters or another case, with bytes that are not UTF-8 (a parse error, as before) —
/// and a token is compared with the session's principal without being made one: another
/// principal's token naming the session gets 404.
#[tokio::test]
async fn issue42_03_a_body_in_chunks_or_not_utf8_and_another_principals_token_are_read_as_before() {
    let (mut ep, addr) = endpoint_with_queue(4).await;
    let (mut server, session) = open(&mut ep, addr).await;
    let call = request(
        5,
        "tools/call",
        json!({"name": "light", "arguments": {"k": "v"}}),
    );
    let text = call.encode();
    for (content_type, chunks) in [
        ("application/json", 1),
        ("application/json; charset=utf-8", 3),
        ("Application/JSON", 7),
    ] {
        let s = session.clone();
        let body = text.clone();
        let post = tokio::spawn(async move {
            raw_post(addr, &s, "s3cret", content_type, body.as_bytes(), chunks).await
        });
        let (_, got) = next_request(&mut server).await;
        assert_eq!(Message::from(got), call, "{content_type}, {chunks} chunks");
        server.outbound.send(ok(5, json!({}))).await.unwrap();
        let answer = within_named("the answer", post).await.unwrap();
        assert_eq!(answer.status, 200, "{content_type}, {chunks} chunks");
        assert_eq!(
            Message::decode(&answer.body).expect("one JSON-RPC message"),
            ok(5, json!({}))
        );
    }

    // Not UTF-8 inside a string: a parse error on the POST, and the session is told.
    let bad = b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"p\xff\"}";
    let answer = raw_post(addr, &session, "s3cret", "application/json", bad, 1).await;
    assert_eq!(answer.status, 400);
    match Message::decode(&answer.body) {
        Ok(Message::Response(r)) => {
            assert_eq!(r.outcome.unwrap_err().code, ErrorCode::PARSE_ERROR)
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    assert!(matches!(next(&mut server).await, Inbound::Malformed { .. }));

    // Bob's token naming alice's session.
    let answer = raw_post(
        addr,
        &session,
        "t0ken",
        "application/json",
        text.as_bytes(),
        1,
    )
    .await;
    assert_eq!(answer.status, 404);
    // Nothing reached the session: the next thing it reads is alice's.
    let s = session.clone();
    let ping = request(7, "ping", json!({}));
    let body = ping.encode();
    let post = tokio::spawn(async move {
        raw_post(addr, &s, "s3cret", "application/json", body.as_bytes(), 1).await
    });
    let (_, got) = next_request(&mut server).await;
    assert_eq!(Message::from(got), ping);
    server.outbound.send(ok(7, json!({}))).await.unwrap();
    assert_eq!(within_named("the answer", post).await.unwrap().status, 200);
}

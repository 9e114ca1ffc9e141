//! The Streamable HTTP client against servers of the test's own, on 127.0.0.1: a bare hyper
//! server that records each request and counts the TCP connections it accepts, a port where
//! nothing listens, and a TLS server whose certificate changes after the client's probe.

use crate::support;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::HeaderMap;
use hyper::service::service_fn;
use hyper::{Method, StatusCode};
use hyper_util::rt::TokioIo;
use mcpl_protocol::{ErrorCode, Id, Message, Response};
use mcpl_testkit::tls::TestCa;
use mcpl_testkit::within_named;
use mcpl_transport::{ClientOptions, ClientTls, ServerTls, http};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::*;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// A request as the server read it.
struct Seen {
    method: Method,
    /// The request target: path and query.
    target: String,
    headers: HeaderMap,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }
}

/// The session id the recording server assigns.
const SESSION: &str = "c0ffee";

/// A bare HTTP/1 server: it records every request, answers a POSTed request with a JSON
/// result (`initialize` also with a session id), a POSTed notification with 202, GET with
/// 405 and DELETE with 200, and counts the TCP connections it accepts.
async fn recording_server() -> (SocketAddr, Arc<AtomicUsize>, mpsc::UnboundedReceiver<Seen>) {
    let listener = TcpListener::bind(loopback()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let (seen_tx, seen_rx) = mpsc::unbounded_channel();
    let count = accepted.clone();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            count.fetch_add(1, Ordering::SeqCst);
            let seen = seen_tx.clone();
            let service = service_fn(move |request| answer(request, seen.clone()));
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service),
            );
        }
    });
    (addr, accepted, seen_rx)
}

async fn answer(
    request: hyper::Request<Incoming>,
    seen: mpsc::UnboundedSender<Seen>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let _ = seen.send(Seen {
        method: parts.method.clone(),
        target: parts.uri.path_and_query().unwrap().to_string(),
        headers: parts.headers,
    });
    let mut response = hyper::Response::new(Full::new(Bytes::new()));
    match (parts.method, Message::decode(&body)) {
        (Method::POST, Ok(Message::Request(r))) => {
            let initialize = r.method == "initialize";
            let result = if initialize {
                json!({"protocolVersion": "2025-11-25"})
            } else {
                json!({"echo": r.method})
            };
            let text = Message::from(Response::ok(r.id, result)).encode();
            *response.body_mut() = Full::new(Bytes::from(text));
            let headers = response.headers_mut();
            headers.insert("content-type", "application/json".parse().unwrap());
            if initialize {
                headers.insert("mcp-session-id", SESSION.parse().unwrap());
            }
        }
        (Method::POST, _) => *response.status_mut() = StatusCode::ACCEPTED,
        (Method::GET, _) => *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED,
        _ => {}
    }
    Ok(response)
}

/// Makes `tools/call` number `id` and checks that its answer is the servers' echo of it.
async fn echoed_call(client: &mut mcpl_transport::Connection, id: i64) {
    client
        .outbound
        .send(request(id, "tools/call", json!({})))
        .await
        .unwrap();
    let (_, resp) = next_response(client).await;
    assert_eq!(
        (resp.id.clone(), resp.result_value()),
        (Some(Id::Number(id)), Ok(json!({"echo": "tools/call"})))
    );
}

async fn next_seen(seen: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    within_named("a request at the server", seen.recv())
        .await
        .expect("the server stopped")
}

#[tokio::test]
async fn requests_reach_the_endpoint_as_written_over_one_pooled_connection() {
    let (addr, accepted, mut seen) = recording_server().await;
    let target = "/mcp/a%20b?tenant=x&k=1";
    let url = format!("http://{addr}{target}#not-sent");
    let mut client = http::connect(&url, &client_opts(Some("s3cret")))
        .await
        .unwrap();

    client.outbound.send(initialize(0)).await.unwrap();
    assert_eq!(next_response(&mut client).await.1.id, Some(Id::Number(0)));
    let first = next_seen(&mut seen).await;
    assert_eq!(
        (&first.method, first.target.as_str()),
        (&Method::POST, target)
    );
    let host = addr.to_string();
    assert_eq!(first.header("host"), Some(host.as_str()));
    // A request after `initialize`: `method` at the endpoint as written, same Host, and
    // the session the answer assigned.
    let in_session = |request: &Seen, method: Method| {
        assert_eq!(
            (&request.method, request.target.as_str()),
            (&method, target)
        );
        assert_eq!(request.header("host"), Some(host.as_str()));
        assert_eq!(request.header("mcp-session-id"), Some(SESSION));
    };
    assert_eq!(first.header("authorization"), Some("Bearer s3cret"));
    assert_eq!(
        first.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(first.header("content-type"), Some("application/json"));
    assert_eq!(first.header("mcp-session-id"), None);
    assert_eq!(first.header("mcp-protocol-version"), None);

    // Calls one at a time: each finds the connection the last one left in the pool.
    for id in 1..=20 {
        echoed_call(&mut client, id).await;
        let call = next_seen(&mut seen).await;
        in_session(&call, Method::POST);
        assert_eq!(call.header("mcp-protocol-version"), Some("2025-11-25"));
    }

    // Closing DELETEs the session, at the same address.
    drop(client);
    in_session(&next_seen(&mut seen).await, Method::DELETE);
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "22 requests, one connection"
    );
}

#[tokio::test]
async fn a_certificate_refused_at_a_post_fails_the_request_naming_tls() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("client test CA");
    let tls = |names: &[&str], stem: &str| {
        let files = ca.server_cert(names).write(dir.path(), stem);
        ServerTls::from_pem_files(&files.cert, &files.key).unwrap()
    };
    let (good, other) = (
        tls(&["localhost"], "good"),
        tls(&["elsewhere.test"], "other"),
    );
    // The connect-time probe is served a good certificate; every later connection one for
    // another name.
    let listener = TcpListener::bind(loopback()).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut first = true;
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let tls = if std::mem::take(&mut first) {
                good.clone()
            } else {
                other.clone()
            };
            tokio::spawn(async move { tls.accept(tcp).await });
        }
    });

    let opts = ClientOptions {
        tls: ClientTls::with_ca_file(ca.write(dir.path())).unwrap(),
        ..ClientOptions::default()
    };
    let mut client = http::connect(&format!("https://localhost:{port}/mcp"), &opts)
        .await
        .unwrap();
    client.outbound.send(initialize(0)).await.unwrap();
    let (_, resp) = next_response(&mut client).await;
    let error = resp.outcome.unwrap_err();
    assert_eq!(error.code, ErrorCode::CONNECTION_CLOSED);
    // The message is the one place the made-up error says TLS was the cause.
    assert!(
        error.message.contains("TLS: invalid peer certificate"),
        "{}",
        error.message
    );
    assert!(
        error
            .data
            .as_ref()
            .and_then(|d| d.get("httpStatus"))
            .is_none(),
        "{:?}",
        error.data.as_ref().map(Value::to_string)
    );
}

/// What a raw server does on one connection after answering a request.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum AfterAnswer {
    /// Waits for the next request.
    KeepAlive,
    /// Ends its side (FIN) and waits for the client to close its own.
    CloseIdle,
}

/// A request as the raw server read it: its JSON-RPC id and method, and the connection it
/// came on (1, 2, … in the order they were accepted).
#[derive(Debug, PartialEq, Eq)]
struct RawSeen {
    connection: usize,
    id: Option<Id>,
    method: String,
}

/// What the raw server tells the test: a request read, or a connection the client closed.
#[derive(Debug, PartialEq, Eq)]
enum RawEvent {
    Request(RawSeen),
    ClientClosed(usize),
}

/// A server written on TCP, so that the test says when a connection closes: on connection
/// `n` (from 1) it answers requests with a JSON result, then does `plan(n, request)`:
/// `None` closes the connection *without* answering that request.
async fn raw_server(
    plan: fn(usize, &RawSeen) -> Option<AfterAnswer>,
) -> (SocketAddr, mpsc::UnboundedReceiver<RawEvent>) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let listener = TcpListener::bind(loopback()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (events_tx, events) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        for connection in 1.. {
            let (tcp, _) = listener.accept().await.unwrap();
            let events = events_tx.clone();
            tokio::spawn(async move {
                let mut tcp = BufReader::new(tcp);
                loop {
                    // The head, to its empty line; then a body of its Content-Length.
                    let mut length = 0usize;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if tcp.read_line(&mut line).await.unwrap_or(0) == 0 {
                            let _ = events.send(RawEvent::ClientClosed(connection));
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        let lower = line.to_ascii_lowercase();
                        if let Some(v) = lower.strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    tcp.read_exact(&mut body).await.unwrap();
                    let Ok(Message::Request(r)) = Message::decode(&body) else {
                        panic!("not a request: {}", String::from_utf8_lossy(&body));
                    };
                    let seen = RawSeen {
                        connection,
                        id: Some(r.id.clone()),
                        method: r.method.clone(),
                    };
                    let after = plan(connection, &seen);
                    let _ = events.send(RawEvent::Request(seen));
                    let Some(after) = after else {
                        return; // closed, unanswered
                    };
                    let text =
                        Message::from(Response::ok(r.id, json!({"echo": r.method}))).encode();
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: {SESSION}\r\ncontent-length: {}\r\n\r\n",
                        text.len()
                    );
                    tcp.write_all(format!("{head}{text}").as_bytes())
                        .await
                        .unwrap();
                    if after == AfterAnswer::CloseIdle {
                        tcp.get_mut().shutdown().await.unwrap();
                    }
                }
            });
        }
    });
    (addr, events)
}

async fn next_raw(events: &mut mpsc::UnboundedReceiver<RawEvent>) -> RawEvent {
    within_named("an event at the raw server", events.recv())
        .await
        .expect("the raw server stopped")
}

/// A client of the raw server at `addr`, its `initialize` answered on connection 1.
async fn initialized(
    addr: SocketAddr,
    events: &mut mpsc::UnboundedReceiver<RawEvent>,
) -> mcpl_transport::Connection {
    let mut client = http::connect(&format!("http://{addr}/mcp"), &client_opts(None))
        .await
        .unwrap();
    client.outbound.send(initialize(0)).await.unwrap();
    assert!(next_response(&mut client).await.1.outcome.is_ok());
    assert_eq!(next_raw(events).await, raw_request(1, 0, "initialize"));
    client
}

fn raw_request(connection: usize, id: i64, method: &str) -> RawEvent {
    RawEvent::Request(RawSeen {
        connection,
        id: Some(Id::Number(id)),
        method: method.to_owned(),
    })
}

/// A pooled connection the server closed while it was idle costs no request: the next ones
/// go on a new connection and are answered.
#[tokio::test]
async fn an_idle_connection_the_server_closed_is_not_used_again() {
    let (addr, mut events) = raw_server(|connection, _| {
        Some(if connection == 1 {
            AfterAnswer::CloseIdle
        } else {
            AfterAnswer::KeepAlive
        })
    })
    .await;
    let mut client = initialized(addr, &mut events).await;
    // The client saw the server's end and closed its own: the connection is gone.
    assert_eq!(next_raw(&mut events).await, RawEvent::ClientClosed(1));

    for id in 1..=3 {
        echoed_call(&mut client, id).await;
        assert_eq!(
            next_raw(&mut events).await,
            raw_request(2, id, "tools/call")
        );
    }
}

/// A request the server read and then hung up on is failed, not sent again (a POST is not
/// idempotent: the server may have acted on it); the next request takes a new connection.
#[tokio::test]
async fn a_request_the_server_hung_up_on_is_failed_and_never_sent_twice() {
    let (addr, mut events) = raw_server(|connection, seen| {
        (connection != 1 || seen.method == "initialize").then_some(AfterAnswer::KeepAlive)
    })
    .await;
    let mut client = initialized(addr, &mut events).await;

    client
        .outbound
        .send(request(1, "tools/call", json!({})))
        .await
        .unwrap();
    assert_eq!(next_raw(&mut events).await, raw_request(1, 1, "tools/call"));
    let (_, failed) = next_response(&mut client).await;
    assert_eq!(failed.id, Some(Id::Number(1)));
    assert_eq!(
        failed.outcome.unwrap_err().code,
        ErrorCode::CONNECTION_CLOSED
    );

    client
        .outbound
        .send(request(2, "tools/call", json!({})))
        .await
        .unwrap();
    let (_, resp) = next_response(&mut client).await;
    assert_eq!(resp.id, Some(Id::Number(2)));
    assert!(resp.outcome.is_ok());
    // Call 1 was read once, on the connection that hung up; call 2 came on a new one.
    assert_eq!(next_raw(&mut events).await, raw_request(2, 2, "tools/call"));
}

/// What the gated server tells the test: a POST read (its JSON-RPC method) or a GET read.
#[derive(Debug, PartialEq, Eq)]
enum Arrived {
    Post(String),
    Get,
}

/// A hyper server whose GET stream opens only when the test says: it tells the test of each
/// request as it arrives, answers POSTs at once (`initialize` with a session id, other
/// requests with an empty result, notifications with 202), and holds a GET's head until
/// `open_get` fires, then answers it with an SSE stream asking for no reopening for a minute.
async fn gated_get_server() -> (
    SocketAddr,
    mpsc::UnboundedReceiver<Arrived>,
    tokio::sync::watch::Sender<bool>,
) {
    let listener = TcpListener::bind(loopback()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (arrived_tx, arrived) = mpsc::unbounded_channel();
    let (open_get, get_opens) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let (arrived, get_opens) = (arrived_tx.clone(), get_opens.clone());
            let service = service_fn(move |request: hyper::Request<Incoming>| {
                let (arrived, mut get_opens) = (arrived.clone(), get_opens.clone());
                async move {
                    let (parts, body) = request.into_parts();
                    let body = body.collect().await.unwrap().to_bytes();
                    let mut response = hyper::Response::new(Full::new(Bytes::new()));
                    if parts.method == Method::GET {
                        let _ = arrived.send(Arrived::Get);
                        get_opens.wait_for(|open| *open).await.unwrap();
                        *response.body_mut() =
                            Full::new(Bytes::from("id: 1\nretry: 60000\ndata: \n\n"));
                        response
                            .headers_mut()
                            .insert("content-type", "text/event-stream".parse().unwrap());
                        return Ok::<_, Infallible>(response);
                    }
                    match Message::decode(&body).unwrap() {
                        Message::Request(r) => {
                            let _ = arrived.send(Arrived::Post(r.method.clone()));
                            let text = Message::from(Response::ok(r.id, json!({}))).encode();
                            *response.body_mut() = Full::new(Bytes::from(text));
                            let headers = response.headers_mut();
                            headers.insert("content-type", "application/json".parse().unwrap());
                            headers.insert("mcp-session-id", SESSION.parse().unwrap());
                        }
                        Message::Notification(n) => {
                            let _ = arrived.send(Arrived::Post(n.method.clone()));
                            *response.status_mut() = StatusCode::ACCEPTED;
                        }
                        Message::Response(_) => *response.status_mut() = StatusCode::ACCEPTED,
                    }
                    Ok(response)
                }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service),
            );
        }
    });
    (addr, arrived, open_get)
}

async fn next_arrived(arrived: &mut mpsc::UnboundedReceiver<Arrived>) -> Arrived {
    within_named("a request at the server", arrived.recv())
        .await
        .expect("the server stopped")
}

/// Issue #39 (the official suite's `sse-retry`, failed once in CI): after
/// `notifications/initialized` the client opens its GET stream before it sends anything
/// else, so a server that answers a call on a stream the client opens, or tells a change
/// right after the handshake, finds the client listening. Without the wait, the request
/// sent with the notification reached the server before the GET did.
#[tokio::test]
async fn issue39_the_get_stream_opens_before_the_first_request_after_the_handshake() {
    let (addr, mut arrived, open_get) = gated_get_server().await;
    let mut client = http::connect(&format!("http://{addr}/mcp"), &client_opts(None))
        .await
        .unwrap();
    client.outbound.send(initialize(0)).await.unwrap();
    assert!(next_response(&mut client).await.1.outcome.is_ok());
    assert_eq!(
        next_arrived(&mut arrived).await,
        Arrived::Post("initialize".into())
    );

    // The link sends the notification and its first request together, as the host does.
    client
        .outbound
        .send(notification("notifications/initialized", json!({})))
        .await
        .unwrap();
    client
        .outbound
        .send(request(1, "tools/list", json!({})))
        .await
        .unwrap();
    assert_eq!(
        next_arrived(&mut arrived).await,
        Arrived::Post("notifications/initialized".into())
    );
    assert_eq!(next_arrived(&mut arrived).await, Arrived::Get);
    open_get.send_replace(true);
    assert_eq!(
        next_arrived(&mut arrived).await,
        Arrived::Post("tools/list".into())
    );
    let (_, listed) = next_response(&mut client).await;
    assert_eq!(listed.id, Some(Id::Number(1)));
}

//! The Streamable HTTP client against servers of the test's own, on 127.0.0.1: a bare hyper
//! server that records each request and counts the TCP connections it accepts, a port where
//! nothing listens, and a TLS server whose certificate changes after the client's probe.

mod support;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::HeaderMap;
use hyper::service::service_fn;
use hyper::{Method, StatusCode};
use hyper_util::rt::TokioIo;
use mcpl_protocol::{ErrorCode, Id, Message, Response};
use mcpl_testkit::tls::TestCa;
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

async fn next_seen(seen: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    within("a request at the server", seen.recv())
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
        client
            .outbound
            .send(request(id, "tools/call", json!({})))
            .await
            .unwrap();
        let (_, resp) = next_response(&mut client).await;
        assert_eq!(
            (resp.id.clone(), resp.result_value()),
            (Some(Id::Number(id)), Ok(json!({"echo": "tools/call"})))
        );
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

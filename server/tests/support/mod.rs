//! A raw JSON-RPC test client for server sessions: it sends exact JSON and hands back
//! exact JSON, so tests assert on the wire form.
//!
//! Two links: [`connect`] runs the session over `mcpl_transport::memory::pair`, as a real
//! transport would; [`connect_raw`] hands the test the session's inbound channel, to feed it
//! what only a transport produces (malformed bytes, oversized messages).
//!
//! Nothing here sleeps: `recv` awaits the next message, bounded by a timeout that only a
//! failing test reaches (under a paused clock it fires as soon as everything is idle, which
//! is how [`TestClient::expect_silence`] proves that nothing more is coming).

#![allow(dead_code)] // each test file uses a different part of this module

use mcpl_protocol::jsonrpc::Message;
use mcpl_server::{Server, SessionHandle};
use mcpl_transport::memory;
use mcpl_transport::{
    Connection, ConnectionInfo, Inbound, Outbound, Principal, StreamId, TransportKind,
};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long `recv` waits before failing the test.
const RECV_LIMIT: Duration = Duration::from_secs(10);

/// The principal every test connection authenticates as.
pub const PRINCIPAL: &str = "alice";

/// The client end of a test link.
pub struct TestClient {
    to_server: ToServer,
    from_server: FromServer,
}

enum ToServer {
    Memory(Outbound),
    Raw(mpsc::Sender<Inbound>),
}

enum FromServer {
    Memory(mpsc::Receiver<Inbound>),
    Raw(mpsc::Receiver<Message>),
}

/// A session over an in-memory pair, as a transport would run it.
pub fn connect(server: &Server) -> (TestClient, SessionHandle) {
    connect_as(server, Principal::Named(PRINCIPAL.into()))
}

/// A session of `principal` over an in-memory pair.
pub fn connect_as(server: &Server, principal: Principal) -> (TestClient, SessionHandle) {
    let (client, conn) = memory::pair(principal, true);
    let session = server.serve(conn);
    (TestClient::from_connection(client), session)
}

/// A session of the named principal `who` through the whole MCPL handshake, advertising
/// `toolHints` and granted `tools` and `pushEvents`.
pub async fn hinted(server: &Server, who: &str) -> (TestClient, SessionHandle) {
    let (mut client, session) = connect_as(server, Principal::Named(who.into()));
    client.handshake_mcpl(true, &["tools", "pushEvents"]).await;
    (client, session)
}

impl TestClient {
    /// A test client over the client end of a memory pair whose server end is served
    /// elsewhere (e.g. on another arbiter).
    pub fn from_connection(client: Connection) -> TestClient {
        TestClient {
            to_server: ToServer::Memory(client.outbound),
            from_server: FromServer::Memory(client.inbound),
        }
    }
}

/// A session whose inbound channel the test feeds directly.
pub fn connect_raw(server: &Server) -> (TestClient, SessionHandle) {
    let (in_tx, in_rx) = mpsc::channel(64);
    let (out_tx, out_rx) = mpsc::channel(64);
    let info = ConnectionInfo {
        kind: TransportKind::Memory,
        ordered: true,
        principal: Some(Principal::Named(PRINCIPAL.into())),
        peer: "raw test link".into(),
    };
    let session = server.serve(Connection {
        info,
        outbound: Outbound::new(out_tx),
        inbound: in_rx,
    });
    (
        TestClient {
            to_server: ToServer::Raw(in_tx),
            from_server: FromServer::Raw(out_rx),
        },
        session,
    )
}

impl TestClient {
    /// Sends one message given as exact JSON (it must be a valid message: tests of bad
    /// input use [`TestClient::send_bytes`]).
    pub async fn send(&self, v: Value) {
        let message =
            Message::from_value(v.clone()).unwrap_or_else(|e| panic!("not a message: {v}: {e}"));
        match &self.to_server {
            ToServer::Memory(out) => out.send(message).await.expect("link open"),
            ToServer::Raw(tx) => tx
                .send(Inbound::Message {
                    stream: StreamId(0),
                    message,
                })
                .await
                .expect("link open"),
        }
    }

    /// Sends one message given as exact JSON; false once the session stopped reading.
    pub async fn try_send(&self, v: Value) -> bool {
        let message = Message::from_value(v).expect("a message");
        match &self.to_server {
            ToServer::Memory(out) => out.send(message).await.is_ok(),
            ToServer::Raw(tx) => tx
                .send(Inbound::Message {
                    stream: StreamId(0),
                    message,
                })
                .await
                .is_ok(),
        }
    }

    /// Delivers bytes as a transport would: decoded, or as `Inbound::Malformed`. Raw links only.
    pub async fn send_bytes(&self, bytes: &[u8]) {
        let item = match Message::decode(bytes) {
            Ok(message) => Inbound::Message {
                stream: StreamId(0),
                message,
            },
            Err(error) => Inbound::Malformed {
                stream: StreamId(0),
                error,
            },
        };
        self.raw().send(item).await.expect("link open");
    }

    /// Delivers what a transport reports for an oversized message. Raw links only.
    pub async fn send_too_large(&self, size: usize, limit: usize) {
        self.raw()
            .send(Inbound::TooLarge {
                stream: StreamId(0),
                size,
                limit,
            })
            .await
            .expect("link open");
    }

    fn raw(&self) -> &mpsc::Sender<Inbound> {
        match &self.to_server {
            ToServer::Raw(tx) => tx,
            ToServer::Memory(_) => panic!("only a raw link takes bytes"),
        }
    }

    /// Closes the client's write side: the session's inbound ends.
    pub fn close(self) -> ClosedClient {
        ClosedClient {
            from_server: self.from_server,
        }
    }

    /// The next message from the server, as JSON; `None` when the link closed.
    pub async fn try_recv(&mut self) -> Option<Value> {
        next(&mut self.from_server).await
    }

    /// The next message from the server, as JSON.
    pub async fn recv(&mut self) -> Value {
        self.try_recv().await.expect("the server closed the link")
    }

    /// Asserts the next message is exactly `expected`.
    pub async fn expect(&mut self, expected: Value) {
        assert_eq!(self.recv().await, expected);
    }

    /// Sends a request and returns the next message (its response, in these tests).
    pub async fn request(&mut self, v: Value) -> Value {
        self.send(v).await;
        self.recv().await
    }

    /// Asserts nothing more arrives. Only meaningful under a paused clock, where the wait
    /// ends as soon as every task is idle.
    pub async fn expect_silence(&mut self) {
        let got =
            tokio::time::timeout(Duration::from_secs(60), next_raw(&mut self.from_server)).await;
        assert!(got.is_err(), "expected silence, got {got:?}");
    }

    /// `initialize` with these capabilities and protocol version; returns the result.
    pub async fn initialize_with(&mut self, version: &str, capabilities: Value) -> Value {
        let reply = self
            .request(
                json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": capabilities,
                "clientInfo": {"name": "test-host", "version": "1.0"}}}),
            )
            .await;
        assert_eq!(reply["id"], "init", "{reply}");
        reply["result"].clone()
    }

    /// The full MCPL handshake: initialize (advertising `toolHints` when asked),
    /// initialized, and a grant of `capabilities`; returns the initialize result.
    pub async fn handshake_mcpl(&mut self, tool_hints: bool, grant: &[&str]) -> Value {
        let mut mcpl = json!({"version": "0.5", "pushEvents": true});
        if tool_hints {
            mcpl["toolHints"] = json!(true);
        }
        let result = self
            .initialize_with("2025-11-25", json!({"experimental": {"mcpl": mcpl}}))
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        let receipt = self.grant(grant).await;
        assert_eq!(receipt["result"]["accepted"], true, "{receipt}");
        result
    }

    /// The plain MCP handshake (no `experimental.mcpl`); returns the initialize result.
    pub async fn handshake_plain(&mut self) -> Value {
        let result = self.initialize_with("2025-11-25", json!({})).await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        result
    }

    /// Sends `featureSets/update` granting `capabilities`; returns the response.
    pub async fn grant(&mut self, capabilities: &[&str]) -> Value {
        self.request(
            json!({"jsonrpc": "2.0", "id": "grant", "method": "featureSets/update",
            "params": {"effectiveCapabilities": capabilities}}),
        )
        .await
    }
}

/// A client whose write side is closed; it can still read what the server wrote.
pub struct ClosedClient {
    from_server: FromServer,
}

impl ClosedClient {
    /// The next message, or `None` once the server's side closed.
    pub async fn try_recv(&mut self) -> Option<Value> {
        next(&mut self.from_server).await
    }
}

async fn next(from: &mut FromServer) -> Option<Value> {
    tokio::time::timeout(RECV_LIMIT, next_raw(from))
        .await
        .expect("no message from the server in time")
}

async fn next_raw(from: &mut FromServer) -> Option<Value> {
    let message = match from {
        FromServer::Memory(rx) => match rx.recv().await? {
            Inbound::Message { message, .. } => message,
            other => panic!("the server wrote something undecodable: {other:?}"),
        },
        FromServer::Raw(rx) => rx.recv().await?,
    };
    Some(serde_json::to_value(&message).expect("messages serialize"))
}

/// A request.
pub fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A successful response.
pub fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// `tools/call` of `tool` with `args`.
pub fn call(id: i64, tool: &str, args: Value) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": tool, "arguments": args}),
    )
}

/// `toolsets/open`.
pub fn open(id: i64, toolset: &str, instance: Option<&str>, options: Option<Value>) -> Value {
    let mut params = json!({"toolset": toolset});
    if let Some(i) = instance {
        params["instance"] = json!(i);
    }
    if let Some(o) = options {
        params["options"] = o;
    }
    request(json!(id), "toolsets/open", params)
}

/// A `tools/hints` notification.
pub fn hints(changes: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "tools/hints", "params": changes})
}

/// A text content block.
pub fn text(s: &str) -> Value {
    json!({"type": "text", "text": s})
}

/// A tool entry of a hint change: `visible` in `instance`.
pub fn shown(name: &str, instance: Option<&str>, visible: bool) -> Value {
    let mut e = json!({"name": name, "visible": visible});
    if let Some(i) = instance {
        e["instance"] = json!(i);
    }
    e
}

/// Expects a `push/event` request with id `id` whose params, apart from `eventId` and
/// `timestamp`, are `params`; answers it (accepted) and returns the params.
pub async fn expect_push(client: &mut TestClient, id: i64, params: Value) -> Value {
    let got = client.recv().await;
    assert_eq!(got["method"], "push/event", "{got:#}");
    assert_eq!(got["id"], id, "{got:#}");
    let mut rest = got["params"].clone();
    let map = rest.as_object_mut().expect("params");
    assert!(
        map.remove("eventId").is_some_and(|e| e.is_string()),
        "{got:#}"
    );
    assert!(
        map.remove("timestamp").is_some_and(|t| t.is_string()),
        "{got:#}"
    );
    assert_eq!(rest, params, "\n got: {rest:#}\nwant: {params:#}");
    client
        .send(json!({"jsonrpc": "2.0", "id": id, "result": {"accepted": true}}))
        .await;
    got["params"].clone()
}

/// An error response's code.
pub fn code(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error response: {reply}"))
}

/// Awaits `f`, failing the test if it does not complete in time (a bound only a failing
/// test reaches; under a paused clock it fires as soon as everything is idle).
pub async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(RECV_LIMIT, f)
        .await
        .expect("did not complete in time")
}

/// Awaits every principal being forgotten: every session gone, then each principal actor
/// retired on its own mailbox turn (bounded, so a bug fails the assertion instead of
/// hanging).
pub async fn forgotten(server: &Server) {
    let mut sessions = server.watch_sessions();
    sessions
        .wait_for(|n| *n == 0)
        .await
        .expect("the server is alive");
    for _ in 0..10_000 {
        if server.principal_count() == 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(server.principal_count(), 0, "the principal is forgotten");
}

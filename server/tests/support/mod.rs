//! Test support for server sessions: the one raw peer of the tests (`mcpl_testkit`, on
//! the test's end of a connection) sends exact JSON and hands back exact JSON, so tests
//! assert on the wire form; this adds the MCPL handshake and what only a transport
//! delivers ([`Client`]).
//!
//! Two links: [`connect`] runs the session over `mcpl_transport::memory::pair`, as a real
//! transport would; [`connect_raw`] hands the test the session's inbound channel, to feed it
//! what only a transport produces (malformed bytes, oversized messages).
//!
//! Nothing here sleeps: `recv` awaits the next message, bounded by a timeout that only a
//! failing test reaches (under a paused clock it fires as soon as everything is idle, which
//! is how [`Client::expect_silence`] proves that nothing more is coming).

#![allow(dead_code)] // each test file uses a different part of this module

use mcpl_server::{Server, SessionHandle};
use mcpl_testkit::ReadError;
use mcpl_testkit::msg::{PROTOCOL_VERSION, initialized, mcpl_capabilities};
#[allow(unused_imports)] // each test file uses a different part of this module
pub use mcpl_testkit::msg::{call, hints, open, request, result, text};
use mcpl_transport::memory;
use mcpl_transport::testkit::{TestEnd, TestPeer};
use mcpl_transport::{Connection, ConnectionInfo, Inbound, Principal, StreamId, TransportKind};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::time::Instant;

/// How long `recv` waits before failing the test.
const RECV_LIMIT: Duration = Duration::from_secs(10);

/// The principal every test connection authenticates as.
pub const PRINCIPAL: &str = "alice";

/// The client end of a test link: the one raw peer of the tests (`mcpl_testkit`) on the
/// test's end of a connection (`mcpl_transport::testkit`). [`Client`] adds what these
/// tests do beyond writing and reading JSON.
pub type TestClient = TestPeer;

/// A client whose write side is closed; it can still read what the server wrote.
pub type ClosedClient = TestPeer;

/// A session over an in-memory pair, as a transport would run it.
pub fn connect(server: &Server) -> (TestClient, SessionHandle) {
    connect_as(server, Principal::Named(PRINCIPAL.into()))
}

/// A session of `principal` over an in-memory pair.
pub fn connect_as(server: &Server, principal: Principal) -> (TestClient, SessionHandle) {
    let (client, conn) = memory::pair(principal, true);
    let session = server.serve(conn);
    (from_connection(client), session)
}

/// A session of the named principal `who` through the whole MCPL handshake, advertising
/// `toolHints` and granted `tools` and `pushEvents`.
pub async fn hinted(server: &Server, who: &str) -> (TestClient, SessionHandle) {
    let (mut client, session) = connect_as(server, Principal::Named(who.into()));
    client.handshake_mcpl(true, &["tools", "pushEvents"]).await;
    (client, session)
}

/// A test client over the client end of a memory pair whose server end is served
/// elsewhere (e.g. on another arbiter).
pub fn from_connection(client: Connection) -> TestClient {
    TestEnd::peer(client).with_limit(RECV_LIMIT)
}

/// A session whose inbound channel the test feeds directly.
pub fn connect_raw(server: &Server) -> (TestClient, SessionHandle) {
    let info = ConnectionInfo {
        kind: TransportKind::Memory,
        ordered: true,
        principal: Some(Principal::Named(PRINCIPAL.into())),
        peer: "raw test link".into(),
    };
    let (conn, end) = TestEnd::raw_pair(info);
    let session = server.serve(conn);
    (TestPeer::new(end).with_limit(RECV_LIMIT), session)
}

/// What the server tests do with a [`TestClient`] beyond writing and reading JSON.
#[allow(async_fn_in_trait)] // the tests run on one thread; no Send bound is needed
pub trait Client {
    /// Delivers bytes as a transport would: decoded, or as `Inbound::Malformed`. Raw
    /// links only.
    async fn send_bytes(&mut self, bytes: &[u8]);
    /// Delivers what a transport reports for an oversized message. Raw links only.
    async fn send_too_large(&mut self, size: usize, limit: usize);
    /// Closes the client's write side: the session's inbound ends.
    fn close(self) -> ClosedClient;
    /// The next message from the server (an unread one first); `None` when the link
    /// closed.
    async fn try_recv(&mut self) -> Option<Value>;
    /// Asserts nothing more arrives. Only meaningful under a paused clock, where the wait
    /// ends as soon as every task is idle.
    async fn expect_silence(&mut self);
    /// `initialize` with these capabilities and protocol version; returns the result.
    async fn initialize_with(&mut self, version: &str, capabilities: Value) -> Value;
    /// The full MCPL handshake: initialize (advertising `toolHints` when asked),
    /// initialized, and a grant of `capabilities`; returns the initialize result.
    async fn handshake_mcpl(&mut self, tool_hints: bool, grant: &[&str]) -> Value;
    /// The plain MCP handshake (no `experimental.mcpl`); returns the initialize result.
    async fn handshake_plain(&mut self) -> Value;
    /// Sends `featureSets/update` granting `capabilities`; returns the response.
    async fn grant(&mut self, capabilities: &[&str]) -> Value;
}

impl Client for TestClient {
    async fn send_bytes(&mut self, bytes: &[u8]) {
        self.link_mut()
            .deliver_bytes(bytes)
            .await
            .expect("link open");
    }

    async fn send_too_large(&mut self, size: usize, limit: usize) {
        self.link_mut()
            .deliver(Inbound::TooLarge {
                stream: StreamId(0),
                size,
                limit,
            })
            .await
            .expect("link open");
    }

    fn close(mut self) -> ClosedClient {
        self.link_mut().close_write();
        self
    }

    async fn try_recv(&mut self) -> Option<Value> {
        if !self.unread().is_empty() {
            return Some(self.recv().await);
        }
        let deadline = self.deadline();
        match self.read(deadline).await {
            Ok(v) => Some(v),
            Err(ReadError::Closed(_)) => None,
            Err(e) => panic!("no message from the server in time: {e:?}"),
        }
    }

    async fn expect_silence(&mut self) {
        assert!(
            self.unread().is_empty(),
            "expected silence, got {:?}",
            self.unread()
        );
        let got = self.read(Instant::now() + Duration::from_secs(60)).await;
        assert!(
            matches!(got, Err(ReadError::Timeout)),
            "expected silence, got {got:?}"
        );
    }

    async fn initialize_with(&mut self, version: &str, capabilities: Value) -> Value {
        let reply = self
            .exchange(request(
                json!("init"),
                "initialize",
                json!({"protocolVersion": version, "capabilities": capabilities,
                       "clientInfo": {"name": "test-host", "version": "1.0"}}),
            ))
            .await;
        assert_eq!(reply["id"], "init", "{reply}");
        reply["result"].clone()
    }

    async fn handshake_mcpl(&mut self, tool_hints: bool, grant: &[&str]) -> Value {
        let result = self
            .initialize_with(PROTOCOL_VERSION, mcpl_capabilities(tool_hints))
            .await;
        self.send(initialized()).await;
        let receipt = self.grant(grant).await;
        assert_eq!(receipt["result"]["accepted"], true, "{receipt}");
        result
    }

    async fn handshake_plain(&mut self) -> Value {
        let result = self.initialize_with(PROTOCOL_VERSION, json!({})).await;
        self.send(initialized()).await;
        result
    }

    async fn grant(&mut self, capabilities: &[&str]) -> Value {
        self.exchange(request(
            json!("grant"),
            "featureSets/update",
            json!({"effectiveCapabilities": capabilities}),
        ))
        .await
    }
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
        .send(result(json!(id), json!({"accepted": true})))
        .await;
    got["params"].clone()
}

/// An error response's code.
pub fn code(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error response: {reply}"))
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

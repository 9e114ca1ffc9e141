//! Support for the server-side conformance vectors (`server_*.rs`): a server on a real
//! WebSocket listener on 127.0.0.1:0, a raw JSON-RPC client that sends and receives exact
//! JSON, message builders, and the example toolsets the vectors run against
//! ([`arcade`]; the SDK ships none).
//!
//! Nothing here sleeps. `recv` awaits the next message (bounded by a limit only a failing
//! test reaches). To show that nothing more is coming, [`Client::quiet`] sends a
//! `tools/list` and expects its answer to be the very next message: the request goes
//! through the session's principal and back through the session's mailbox, behind every
//! change the principal had already sent that session — and it takes no rev.

#![allow(dead_code)] // each test file uses a different part of this module

pub mod arcade;
pub mod bell;

use mcpl_protocol::jsonrpc::Message;
use mcpl_server::{ManualClock, Server};
use mcpl_transport::{ClientOptions, Inbound, Outbound, ServerOptions, ws};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;

/// How long `recv` waits before failing the test.
const RECV_LIMIT: Duration = Duration::from_secs(10);

/// The time every test server starts at: 2026-11-30T12:00:00Z.
pub fn start_time() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_796_040_000)
}

/// Push timestamps at [`start_time`].
pub const T0: &str = "2026-11-30T12:00:00.000Z";

/// A server listening on a WebSocket on 127.0.0.1, serving every connection.
pub struct Harness {
    pub server: Server,
    pub clock: Arc<ManualClock>,
    url: String,
}

impl Harness {
    /// Serves `server` (built with [`Harness::clock`]) on a fresh port. Principals are
    /// `alice`, `bob` and `carol`, each presenting its name as its bearer token.
    pub async fn start(server: Server, clock: Arc<ManualClock>) -> Harness {
        let mut opts = ServerOptions {
            ws_ping_interval: None,
            ..Default::default()
        };
        for who in ["alice", "bob", "carol"] {
            opts.tokens.insert(who.to_owned(), who.to_owned());
        }
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let mut listener = ws::bind(addr, Arc::new(opts)).await.expect("bind");
        let url = format!("ws://{}/mcp", listener.local_addr());
        let serving = server.clone();
        actix::spawn(async move {
            while let Some(conn) = listener.accept().await {
                serving.serve(conn);
            }
        });
        Harness { server, clock, url }
    }

    /// The URL it serves (`ws://127.0.0.1:<port>/mcp`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A clock standing at [`start_time`].
    pub fn clock() -> Arc<ManualClock> {
        Arc::new(ManualClock::new(start_time()))
    }

    /// A new connection of `who`.
    pub async fn connect(&self, who: &str) -> Client {
        let opts = ClientOptions {
            token: Some(who.to_owned()),
            ..Default::default()
        };
        let conn = ws::connect(&self.url, &opts).await.expect("connect");
        Client {
            out: conn.outbound,
            inbound: conn.inbound,
            syncs: 0,
        }
    }

    /// A connection of `who` through the whole handshake, advertising `toolHints` and
    /// granted `tools` and `pushEvents`.
    pub async fn hinted(&self, who: &str) -> Client {
        let mut c = self.connect(who).await;
        c.handshake(true, Some(&["tools", "pushEvents"])).await;
        c
    }

    /// Waits until the server has no live session (a principal's last connection gone).
    pub async fn all_closed(&self) {
        self.sessions(0).await;
    }

    /// Waits until the server has exactly `n` live sessions.
    pub async fn sessions(&self, n: usize) {
        let mut w = self.server.watch_sessions();
        within(w.wait_for(|live| *live == n)).await.unwrap();
    }
}

/// The [`arcade`] served on a fresh port.
pub async fn arcade_server() -> Harness {
    arcade_server_with(|b| b).await
}

/// The [`arcade`], with `f` setting knobs on its builder, served on a fresh port.
pub async fn arcade_server_with(
    f: impl FnOnce(mcpl_server::ServerBuilder) -> mcpl_server::ServerBuilder,
) -> Harness {
    let clock = Harness::clock();
    let builder = Server::builder("arcade", "1.0").clock(clock.clone());
    let server = f(arcade::arcade(builder))
        .build()
        .expect("the arcade is valid");
    Harness::start(server, clock).await
}

/// A raw JSON-RPC client over a WebSocket.
pub struct Client {
    out: Outbound,
    inbound: mpsc::Receiver<Inbound>,
    syncs: u64,
}

impl Client {
    /// Sends one message given as exact JSON.
    pub async fn send(&self, v: Value) {
        let m =
            Message::from_value(v.clone()).unwrap_or_else(|e| panic!("not a message: {v}: {e}"));
        self.out.send(m).await.expect("link open");
    }

    /// The next message, as JSON.
    pub async fn recv(&mut self) -> Value {
        let item = tokio::time::timeout(RECV_LIMIT, self.inbound.recv())
            .await
            .expect("no message from the server in time")
            .expect("the server closed the link");
        match item {
            Inbound::Message { message, .. } => serde_json::to_value(&message).unwrap(),
            other => panic!("the server wrote something undecodable: {other:?}"),
        }
    }

    /// The next message matching `pred`; those before it are dropped.
    pub async fn next_where(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let m = self.recv().await;
            if pred(&m) {
                return m;
            }
        }
    }

    /// Asserts the next message is exactly `expected`.
    pub async fn expect(&mut self, expected: Value) {
        let got = self.recv().await;
        assert_eq!(got, expected, "\n got: {got:#}\nwant: {expected:#}");
    }

    /// Sends a request and returns the next message.
    pub async fn request(&mut self, v: Value) -> Value {
        self.send(v).await;
        self.recv().await
    }

    /// Sends a request and asserts the next message is exactly `expected`.
    pub async fn expect_after(&mut self, request: Value, expected: Value) {
        self.send(request).await;
        self.expect(expected).await;
    }

    /// Shows that nothing else is on its way to this connection (module docs).
    pub async fn quiet(&mut self) {
        self.syncs += 1;
        let id = format!("quiet-{}", self.syncs);
        let got = self
            .request(request(json!(id), "tools/list", json!({})))
            .await;
        assert_eq!(
            got["id"],
            json!(id),
            "expected nothing before the barrier, got {got:#}"
        );
    }

    /// `tools/list`'s `_meta["mcpl/rev"]` now.
    pub async fn listed_rev(&mut self) -> u64 {
        let got = self
            .request(request(json!("rev"), "tools/list", json!({})))
            .await;
        got["result"]["_meta"]["mcpl/rev"]
            .as_u64()
            .unwrap_or_else(|| panic!("no mcpl/rev: {got:#}"))
    }

    /// The MCPL handshake: `initialize` (advertising `toolHints` when asked),
    /// `notifications/initialized`, and, when `grant` is given, `featureSets/update`.
    pub async fn handshake(&mut self, tool_hints: bool, grant: Option<&[&str]>) -> Value {
        let mut mcpl = json!({"version": "0.5", "pushEvents": true});
        if tool_hints {
            mcpl["toolHints"] = json!(true);
        }
        let init = self
            .request(request(
                json!("init"),
                "initialize",
                json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"experimental": {"mcpl": mcpl}},
                "clientInfo": {"name": "raw-host", "version": "1"}}),
            ))
            .await;
        assert_eq!(init["id"], "init", "{init:#}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        if let Some(caps) = grant {
            let receipt = self
                .request(request(
                    json!("grant"),
                    "featureSets/update",
                    json!({"effectiveCapabilities": caps}),
                ))
                .await;
            assert_eq!(receipt["result"]["accepted"], true, "{receipt:#}");
        }
        init["result"].clone()
    }

    /// The plain MCP handshake (no `experimental.mcpl`).
    pub async fn handshake_plain(&mut self) -> Value {
        let init = self
            .request(request(
                json!("init"),
                "initialize",
                json!({
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "plain-host", "version": "1"}}),
            ))
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        init["result"].clone()
    }

    /// Expects a `push/event` request with id `id`, whose params are `params` plus an
    /// `eventId` (captured and returned) and the time [`T0`].
    pub async fn expect_push(&mut self, id: i64, params: Value) -> String {
        let got = self.recv().await;
        assert_eq!(got["method"], "push/event", "{got:#}");
        let event_id = got["params"]["eventId"]
            .as_str()
            .unwrap_or_else(|| panic!("no eventId: {got:#}"))
            .to_owned();
        let mut want = params;
        want["eventId"] = json!(event_id);
        want["timestamp"] = json!(T0);
        let want = json!({"jsonrpc": "2.0", "id": id, "method": "push/event", "params": want});
        assert_eq!(got, want, "\n got: {got:#}\nwant: {want:#}");
        event_id
    }

    /// Answers the server's push `id`.
    pub async fn accept_push(&self, id: i64) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": {"accepted": true}}))
            .await;
    }

    /// Closes this connection.
    pub fn close(self) {
        drop(self);
    }
}

/// A request.
pub fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A successful response.
pub fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A successful result of one text block: what a tool that only says something answers.
pub fn says(id: Value, s: &str) -> Value {
    result(id, json!({"content": [text(s)]}))
}

/// `tools/call` of `tool` with `args`.
pub fn call(id: i64, tool: &str, args: Value) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": tool, "arguments": args}),
    )
}

/// `tools/call` naming the instance (§4.5).
pub fn call_in(id: i64, tool: &str, args: Value, instance: &str) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": tool, "arguments": args, "_meta": {"mcpl/instance": instance}}),
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

/// `toolsets/close`.
pub fn close(id: i64, toolset: &str, instance: Option<&str>) -> Value {
    let mut params = json!({"toolset": toolset});
    if let Some(i) = instance {
        params["instance"] = json!(i);
    }
    request(json!(id), "toolsets/close", params)
}

/// `toolsets/list`.
pub fn list(id: i64) -> Value {
    request(json!(id), "toolsets/list", json!({}))
}

/// A `tools/hints` notification.
pub fn hints(changes: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "tools/hints", "params": changes})
}

/// `take`'s definition in a nim instance with `pile` stones.
pub fn take_def(pile: u32) -> Value {
    json!({"name": "take", "description": "Take 1 to 3 stones", "inputSchema": arcade::legal(pile)})
}

/// A tool entry of a hint change.
pub fn tool_hint(
    name: &str,
    instance: Option<&str>,
    visible: Option<bool>,
    definition: Option<Value>,
) -> Value {
    let mut e = json!({"name": name});
    if let Some(i) = instance {
        e["instance"] = json!(i);
    }
    if let Some(v) = visible {
        e["visible"] = json!(v);
    }
    if let Some(d) = definition {
        e["definition"] = d;
    }
    e
}

/// The invitation bob's connections are pushed when alice opens `g1` against him.
pub fn invitation(pile: u32) -> Value {
    let reason = format!("alice challenges you to Nim (pile {pile})");
    json!({"featureSet": "default", "tags": ["surface:activity"],
        "payload": {"content": [text(&format!("{reason} (open nim:g1 to join)"))]},
        "hints": {"rev": 1, "suggest": [{"toolset": "nim", "instance": "g1", "action": "open",
                                         "reason": reason, "options": {"pile": pile}}]},
        "toolset": "nim", "instance": "g1"})
}

/// alice (hinted, one connection) opens `g1` against bob (hinted, one connection) with
/// `pile` stones, and bob joins it. Each has taken these revs: alice 1, bob 2.
pub async fn game(h: &Harness, pile: u32) -> (Client, Client) {
    let mut alice = h.hinted("alice").await;
    let mut bob = h.hinted("bob").await;
    let opened = alice
        .request(open(
            1,
            "nim",
            Some("g1"),
            Some(json!({"pile": pile, "opponent": "bob"})),
        ))
        .await;
    assert_eq!(
        opened,
        result(
            json!(1),
            json!({"instance": "g1", "title": "Nim vs bob",
            "content": [text(&format!("Pile: {pile}. Your move."))],
            "_meta": {"mcpl/hints": {"rev": 1,
                "tools": [tool_hint("board", Some("g1"), Some(true), None),
                          tool_hint("wait", Some("g1"), Some(true), None),
                          tool_hint("take", Some("g1"), Some(true), Some(take_def(pile)))],
                "toolsets": [{"toolset": "nim", "instance": "g1", "state": "open", "title": "Nim vs bob"}]}}})
        )
    );
    bob.expect_push(1, invitation(pile)).await;
    bob.accept_push(1).await;
    bob.expect_after(
        open(1, "nim", Some("g1"), None),
        result(json!(1), json!({"instance": "g1", "title": "Nim vs alice",
            "content": [text(&format!("Pile: {pile}. alice moves first."))],
            "_meta": {"mcpl/hints": {"rev": 2,
                "tools": [tool_hint("board", Some("g1"), Some(true), None),
                          tool_hint("wait", Some("g1"), Some(true), None),
                          tool_hint("take", Some("g1"), None, Some(take_def(pile)))],
                "toolsets": [{"toolset": "nim", "instance": "g1", "state": "open", "title": "Nim vs alice"}]}}})),
    )
    .await;
    (alice, bob)
}

/// A text content block.
pub fn text(s: &str) -> Value {
    json!({"type": "text", "text": s})
}

/// A tool error result with one text block.
pub fn tool_error(s: &str) -> Value {
    json!({"content": [text(s)], "isError": true})
}

/// The ended-record id a closed `toolsets` entry carries.
pub fn ended_id(changes: &Value) -> String {
    changes["toolsets"]
        .as_array()
        .and_then(|a| a.iter().find_map(|t| t["ended"].as_str()))
        .unwrap_or_else(|| panic!("no ended id in {changes:#}"))
        .to_owned()
}

/// Awaits `f`, failing the test if it does not complete in time.
pub async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(RECV_LIMIT, f)
        .await
        .expect("did not complete in time")
}

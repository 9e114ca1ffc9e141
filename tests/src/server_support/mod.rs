//! Support for the server-side tests with the tests' arcade (`server_*.rs`,
//! `rfc014_boundaries.rs`): a server on a real WebSocket listener on 127.0.0.1:0, its
//! connections as the one raw peer of the tests (`mcpl_testkit`, which also writes the
//! messages), the MCPL handshake and waits they share ([`Arcade`]), and the example
//! toolsets they run against ([`arcade`], [`bell`]; the SDK ships none). The RFC-014
//! vectors themselves are the conformance runner's (`server_vectors.rs`).
//!
//! Nothing here sleeps. `recv` awaits the next message (bounded by a limit only a failing
//! test reaches). To show that nothing more is coming, [`Arcade::quiet`] sends a
//! `tools/list` and expects its answer to be the very next message: the request goes
//! through the session's principal and back through the session's mailbox, behind every
//! change the principal had already sent that session — and it takes no rev.

pub mod arcade;
pub mod bell;

use mcpl_server::{ManualClock, Server};
pub use mcpl_testkit::msg::{
    call, call_in, close, hints, initialize_params, initialized, list, mcpl_capabilities, open,
    request, result, says_result, text, tool_error,
};
pub use mcpl_testkit::within;
use mcpl_transport::{ServerOptions, ws};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
        Client::connect(&self.url, Some(who))
            .await
            .with_limit(RECV_LIMIT)
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

/// A connection to the arcade: the one raw peer of the tests (`mcpl_testkit`) on a
/// WebSocket. [`Arcade`] adds the MCPL handshake and the waits these tests share.
pub type Client = mcpl_testkit::ws::Peer;

/// What the server-side tests do with a [`Client`] beyond sending and reading JSON.
#[allow(async_fn_in_trait)] // the tests run on one thread; no Send bound is needed
pub trait Arcade {
    /// Shows that nothing else is on its way to this connection (module docs).
    async fn quiet(&mut self);
    /// `tools/list`'s `_meta["mcpl/rev"]` now.
    async fn listed_rev(&mut self) -> u64;
    /// The MCPL handshake: `initialize` (advertising `toolHints` when asked),
    /// `notifications/initialized`, and, when `grant` is given, `featureSets/update`.
    async fn handshake(&mut self, tool_hints: bool, grant: Option<&[&str]>) -> Value;
    /// The plain MCP handshake (no `experimental.mcpl`).
    async fn handshake_plain(&mut self) -> Value;
    /// Expects a `push/event` request with id `id`, whose params are `params` plus an
    /// `eventId` (captured and returned) and the time [`T0`].
    async fn expect_push(&mut self, id: i64, params: Value) -> String;
    /// Answers the server's push `id`.
    async fn accept_push(&mut self, id: i64);
    /// Closes this connection.
    fn close(self);
}

impl Arcade for Client {
    async fn quiet(&mut self) {
        let id = json!(format!("quiet-{}", self.take_id()));
        let got = self
            .exchange(request(id.clone(), "tools/list", json!({})))
            .await;
        assert_eq!(
            got["id"], id,
            "expected nothing before the barrier, got {got:#}"
        );
    }

    async fn listed_rev(&mut self) -> u64 {
        let got = self
            .exchange(request(json!("rev"), "tools/list", json!({})))
            .await;
        got["result"]["_meta"]["mcpl/rev"]
            .as_u64()
            .unwrap_or_else(|| panic!("no mcpl/rev: {got:#}"))
    }

    async fn handshake(&mut self, tool_hints: bool, grant: Option<&[&str]>) -> Value {
        let init = self
            .exchange(request(
                json!("init"),
                "initialize",
                initialize_params(mcpl_capabilities(tool_hints), "raw-host"),
            ))
            .await;
        assert_eq!(init["id"], "init", "{init:#}");
        self.send(initialized()).await;
        if let Some(caps) = grant {
            let receipt = self
                .exchange(request(
                    json!("grant"),
                    "featureSets/update",
                    json!({"effectiveCapabilities": caps}),
                ))
                .await;
            assert_eq!(receipt["result"]["accepted"], true, "{receipt:#}");
        }
        init["result"].clone()
    }

    async fn handshake_plain(&mut self) -> Value {
        let init = self
            .exchange(request(
                json!("init"),
                "initialize",
                initialize_params(json!({}), "plain-host"),
            ))
            .await;
        self.send(initialized()).await;
        init["result"].clone()
    }

    async fn expect_push(&mut self, id: i64, params: Value) -> String {
        let got = self.recv().await;
        assert_eq!(got["method"], "push/event", "{got:#}");
        let event_id = got["params"]["eventId"]
            .as_str()
            .unwrap_or_else(|| panic!("no eventId: {got:#}"))
            .to_owned();
        let mut want = params;
        want["eventId"] = json!(event_id);
        want["timestamp"] = json!(T0);
        let want = request(id, "push/event", want);
        assert_eq!(got, want, "\n got: {got:#}\nwant: {want:#}");
        event_id
    }

    async fn accept_push(&mut self, id: i64) {
        self.send(result(json!(id), json!({"accepted": true})))
            .await;
    }

    fn close(self) {
        drop(self);
    }
}

/// A successful result of one text block: what a tool that only says something answers.
pub fn says(id: Value, s: &str) -> Value {
    result(id, says_result(s))
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
        .exchange(open(
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

/// The ended-record id a closed `toolsets` entry carries.
pub fn ended_id(changes: &Value) -> String {
    changes["toolsets"]
        .as_array()
        .and_then(|a| a.iter().find_map(|t| t["ended"].as_str()))
        .unwrap_or_else(|| panic!("no ended id in {changes:#}"))
        .to_owned()
}

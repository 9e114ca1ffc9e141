//! Test support: a scripted server peer (the one raw peer, `mcpl_testkit`, on the server
//! end of a connection: `mcpl_transport::testkit`), a connector that hands out a fresh `memory::pair`
//! per attempt (or refuses, as planned), and channels that collect the link's events and
//! tapped reads.
//!
//! The peer reads the host's exact JSON and answers exact JSON, so each test states the
//! wire it expects. Nothing here sleeps: every wait is on a channel, and tests that need
//! timeouts or backoff pause tokio's clock (it advances only while everything is idle).

#![allow(dead_code)] // each test binary uses a different part

pub mod server;

use mcpl_host::link::{BackoffConfig, Connector, EventSink, LinkConfig, LinkEvent, Tap, TapEvent};
use mcpl_protocol::Message;
use mcpl_protocol::mcp::Implementation;
use mcpl_testkit::msg;
use mcpl_transport::testkit::TestEnd;
use mcpl_transport::{
    Connection, ConnectionInfo, Principal, TransportError, TransportKind, memory,
};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How much virtual time a paused test may take.
const STALL: Duration = Duration::from_secs(3600);

/// What the connector does on an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Connection refused.
    Refuse,
    /// A `memory::pair`.
    Accept { ordered: bool },
    /// A hand-built pair whose peer can also inject unreadable input.
    AcceptRaw,
    /// An attempt that never completes.
    Hang,
}

/// The test's side of the scripted connector.
pub struct Servers {
    peers: mpsc::UnboundedReceiver<Peer>,
    attempts: mpsc::UnboundedReceiver<Instant>,
    plan: Arc<Mutex<VecDeque<Plan>>>,
}

/// A connector whose attempts follow a plan (accept, ordered, when the plan is empty).
pub fn scripted() -> (Connector, Servers) {
    let (peer_tx, peers) = mpsc::unbounded_channel();
    let (attempt_tx, attempts) = mpsc::unbounded_channel();
    let plan: Arc<Mutex<VecDeque<Plan>>> = Arc::default();
    let script = plan.clone();
    let connector = Connector::from_fn(move || {
        let _ = attempt_tx.send(Instant::now());
        let step = script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Plan::Accept { ordered: true });
        let outcome = match step {
            Plan::Hang => return Box::pin(std::future::pending()),
            Plan::Refuse => Err(TransportError::Io(
                std::io::ErrorKind::ConnectionRefused.into(),
            )),
            Plan::Accept { ordered } => {
                let (client, server) = memory::pair(Principal::Named("alice".into()), ordered);
                let _ = peer_tx.send(from_connection(server));
                Ok(client)
            }
            Plan::AcceptRaw => {
                let (client, peer) = raw_pair();
                let _ = peer_tx.send(peer);
                Ok(client)
            }
        };
        Box::pin(async move { outcome })
    });
    (
        connector,
        Servers {
            peers,
            attempts,
            plan,
        },
    )
}

fn raw_pair() -> (Connection, Peer) {
    let info = ConnectionInfo {
        kind: TransportKind::Memory,
        ordered: true,
        principal: None,
        peer: "raw".into(),
    };
    let (conn, end) = TestEnd::raw_pair(info);
    (conn, Peer::new(LegacyEnd::legacy(end)).with_limit(STALL))
}

impl Servers {
    /// Plans the next attempts.
    pub fn plan(&self, steps: impl IntoIterator<Item = Plan>) {
        self.plan.lock().unwrap().extend(steps);
    }

    /// The server end of the next accepted connection.
    pub async fn next_peer(&mut self) -> Peer {
        self.peers.recv().await.expect("the connector is gone")
    }

    /// When the next attempt was made (tokio's clock).
    pub async fn next_attempt(&mut self) -> Instant {
        self.attempts.recv().await.expect("the connector is gone")
    }
}

/// The server end of a connection the host made, as the one raw peer of the tests
/// (`mcpl_testkit`): a scripted server writing exact JSON and reading the host's. Its waits
/// last [`STALL`], as long as a paused test may take (the host's timers run on that clock).
pub type Peer = mcpl_testkit::Peer<LegacyEnd>;

/// The scripted server's end of a connection, which answers the host's era probe as a
/// legacy server does (MCP 2026-07-28, stdio "Backward Compatibility": "any other error
/// ... the server is legacy"): `server/discover` gets -32601 and is not shown to the
/// test, which then scripts the legacy era from `initialize` on. The probe's id is the
/// link's first, so the host's own requests count from 2. [`LegacyEnd::modern`] shows
/// the probe instead, for the tests of the era itself.
pub struct LegacyEnd {
    end: TestEnd,
    answers_discover: bool,
}

impl LegacyEnd {
    /// An end that answers the probe.
    pub fn legacy(end: TestEnd) -> Self {
        LegacyEnd {
            end,
            answers_discover: true,
        }
    }

    /// An end that shows the probe to the test like any request.
    pub fn modern(end: TestEnd) -> Self {
        LegacyEnd {
            end,
            answers_discover: false,
        }
    }
}

impl mcpl_testkit::Link for LegacyEnd {
    async fn send(&mut self, message: Value) -> Result<(), String> {
        self.end.send(message).await
    }

    async fn next(&mut self) -> mcpl_testkit::Received {
        loop {
            match self.end.next().await {
                mcpl_testkit::Received::Message(m)
                    if self.answers_discover
                        && msg::is_method(&m, "server/discover")
                        && m.get("id").is_some() =>
                {
                    let refusal = msg::error(&m["id"], -32601, "Method not found");
                    if self.end.send(refusal).await.is_err() {
                        return mcpl_testkit::Received::Closed(mcpl_testkit::Closed::Dropped);
                    }
                }
                other => return other,
            }
        }
    }
}

/// Reads the host's era probe, which must come first, and refuses it as a legacy server
/// does (-32601): for a peer that is no [`LegacyEnd`] (a WebSocket listener's).
pub async fn refuse_the_probe<L: mcpl_testkit::Link>(peer: &mut mcpl_testkit::Peer<L>) {
    let probe = peer.expect_next("server/discover").await;
    peer.send(msg::error(&probe["id"], -32601, "Method not found"))
        .await;
}

/// A peer on the server end of any connection (a real transport's), answering the era
/// probe as a legacy server ([`LegacyEnd`]).
pub fn from_connection(conn: Connection) -> Peer {
    mcpl_testkit::Peer::new(LegacyEnd::legacy(TestEnd::of(conn))).with_limit(STALL)
}

/// A peer on the server end of any connection that shows the era probe to the test.
pub fn from_connection_modern(conn: Connection) -> Peer {
    mcpl_testkit::Peer::new(LegacyEnd::modern(TestEnd::of(conn))).with_limit(STALL)
}

/// What the host tests' scripted server does beyond writing and reading JSON.
#[allow(async_fn_in_trait)] // the tests run on one thread; no Send bound is needed
pub trait Scripted {
    /// Delivers bytes the host cannot decode (a raw peer only), as a transport would.
    async fn send_unreadable(&mut self, bytes: &[u8]);
    /// Serves the MCPL handshake exactly as the host must write it, then the first
    /// `tools/list` with `tools`.
    async fn serve_mcpl_handshake(&mut self, tools: Value);
    /// Serves the MCPL handshake exactly as the host must write it; returns the first
    /// `tools/list` request, unanswered.
    async fn serve_mcpl_handshake_to_list(&mut self) -> Value;
    /// [`Scripted::serve_mcpl_handshake_to_list`] answering `initialize` with `init`.
    async fn serve_mcpl_handshake_answering(&mut self, init: Value) -> Value;
}

impl Scripted for Peer {
    async fn send_unreadable(&mut self, bytes: &[u8]) {
        assert!(Message::decode(bytes).is_err(), "the bytes must not decode");
        self.link_mut()
            .end
            .deliver_bytes(bytes)
            .await
            .expect("the host end is gone");
    }

    async fn serve_mcpl_handshake(&mut self, tools: Value) {
        let list = self.serve_mcpl_handshake_to_list().await;
        self.reply(&list, json!({"tools": tools})).await;
    }

    async fn serve_mcpl_handshake_to_list(&mut self) -> Value {
        self.serve_mcpl_handshake_answering(mcpl_init_result())
            .await
    }

    async fn serve_mcpl_handshake_answering(&mut self, answer: Value) -> Value {
        // Id 1 is the era probe (answered by `LegacyEnd`) on a first connection, and
        // `initialize` on one to a server the link already found legacy.
        let init = self.recv().await;
        let id = init["id"].as_i64().expect("a numeric id");
        assert!(id == 1 || id == 2, "{init}");
        assert_eq!(init, initialize_request(id));
        self.reply(&init, answer).await;
        assert_eq!(self.recv().await, msg::initialized());
        let grant = self.recv().await;
        assert_eq!(
            grant,
            msg::request(
                id + 1,
                "featureSets/update",
                json!({"effectiveCapabilities": ["pushEvents", "tools"]})
            )
        );
        self.reply(&grant, json!({"accepted": true})).await;
        let list = self.recv().await;
        assert_eq!(list, msg::request(id + 2, "tools/list", json!({})));
        list
    }
}

/// The `initialize` request the test host writes.
pub fn initialize_request(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"experimental": {"mcpl": {"version": "0.5", "pushEvents": true, "toolHints": true,
                                                   "featureSets": true}}},
        "clientInfo": {"name": "test-host", "version": "1.0.0"}
    }})
}

/// An MCPL server's `initialize` result.
pub fn mcpl_init_result() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": true},
                         "experimental": {"mcpl": {"version": "0.5", "toolHints": true, "pushEvents": true,
                                                   "featureSets": {"arcade.games": {"description": "Games",
                                                                                     "uses": ["pushEvents"]}}}}},
        "serverInfo": {"name": "arcade", "version": "1.0.0"}
    })
}

/// A plain MCP server's `initialize` result.
pub fn plain_init_result() -> Value {
    json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "plain", "version": "1.0.0"}
    })
}

/// A tool as listed.
pub fn tool(name: &str) -> Value {
    json!({"name": name, "description": format!("the {name} tool"), "inputSchema": {"type": "object"}})
}

/// Collects the link's events.
pub struct Events(mpsc::UnboundedReceiver<LinkEvent>);

/// A subscriber and its collector.
pub fn events() -> (EventSink, Events) {
    let (tx, rx) = mpsc::unbounded_channel();
    (EventSink::Channel(tx), Events(rx))
}

impl Events {
    /// The next event.
    pub async fn next(&mut self) -> LinkEvent {
        self.0
            .recv()
            .await
            .expect("the link dropped its subscribers")
    }

    /// Skips events until `pick` takes one.
    pub async fn until<T>(&mut self, mut pick: impl FnMut(LinkEvent) -> Option<T>) -> T {
        loop {
            if let Some(t) = pick(self.next().await) {
                return t;
            }
        }
    }
}

/// Collects tapped events.
pub struct TapLog(mpsc::UnboundedReceiver<TapEvent>);

/// A tap and its collector.
pub fn tap() -> (Tap, TapLog) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Tap::from_fn(move |e| drop(tx.send(e.clone()))), TapLog(rx))
}

impl TapLog {
    /// The next tapped event.
    pub async fn next(&mut self) -> TapEvent {
        self.0.recv().await.expect("the link dropped its tap")
    }

    /// The next tapped event if one is already there.
    pub fn try_next(&mut self) -> Option<TapEvent> {
        self.0.try_recv().ok()
    }

    /// Skips events until `pick` takes one.
    pub async fn until<T>(&mut self, mut pick: impl FnMut(TapEvent) -> Option<T>) -> T {
        loop {
            if let Some(t) = pick(self.next().await) {
                return t;
            }
        }
    }
}

/// Runs `test` in an actix System on tokio's paused clock, paused from the runtime's start
/// so that timers fall on whole milliseconds and waits measure exactly (pausing later
/// leaves the clock between ticks, and every timer then rounds up by a millisecond).
///
/// A test that waits for something that never comes fails after an hour of virtual time
/// (an instant of real time) instead of hanging: the paused clock jumps to that deadline
/// as soon as nothing else can run.
pub fn paused(test: impl std::future::Future<Output = ()>) {
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("a tokio runtime")
    };
    actix::System::with_tokio_rt(runtime).block_on(async {
        tokio::time::timeout(STALL, test)
            .await
            .expect("the test stalled: it waited for something that never came");
    });
}

/// The tests' link configuration: backoff 250 ms doubling to 1 s without jitter.
pub fn config(connector: Connector, events: EventSink, tap: Tap) -> LinkConfig {
    let mut c = LinkConfig::new("arcade", connector)
        .with_subscriber(events)
        .with_tap(tap);
    c.client_info = Implementation::new("test-host", "1.0.0");
    c.backoff = BackoffConfig {
        initial: Duration::from_millis(250),
        max: Duration::from_secs(1),
        jitter: 0.0,
        seed: Some(7),
        ..Default::default()
    };
    c
}

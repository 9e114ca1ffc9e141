//! Issue #41 (`docs/ownership.md` §3) on a real `nats-server` and a real PostgreSQL, both
//! started by the test: nothing lost between nodes when NATS goes away mid-game. A game
//! opened by alice on the first node is adopted by the second while she stays on the
//! first; her `bump` reaches it, and its answer is made while `nats-server` is down. The
//! answer waits in the game's outbox (kept with its record); its sends fail (the second
//! node's peer time-out is short, so NATS buffering it across the outage would not do),
//! and it is sent again once NATS is back, reaching her exactly once.

use crate::support::Client;
use mcpl_cluster::bus::BusConfig;
use mcpl_cluster::{NatsBus, NatsPeers, PgStore};
use mcpl_server::peers::{Inbox, PeerAddress, PeerFuture, Peers};
use mcpl_server::protocol::mcp::CallToolResult;
use mcpl_server::{
    Blocking, CallId, Durable, InstanceContext, InstanceLogic, Reply, Server, Started, Tool,
    ToolCall, Toolset,
};
use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use mcpl_testkit::{within, within_named};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use tokio::sync::watch;

/// What the test holds of the game: the `bump` it waits on, and the go-ahead for it.
#[derive(Clone, Default)]
struct Hold {
    /// The go-ahead the next `bump`'s work waits for.
    go: Arc<Mutex<Option<mpsc::Receiver<()>>>>,
    /// How many `bump`s reached the game.
    bumps: Arc<Mutex<Option<watch::Sender<u64>>>>,
}

/// A durable counter: `peek` tells; `bump` counts once the test lets it (blocking work
/// waiting for the go-ahead), answering then.
#[derive(Serialize, Deserialize)]
struct Counter {
    n: u64,
    #[serde(skip)]
    hold: Hold,
    #[serde(skip)]
    waiting: Option<(Blocking<()>, CallId)>,
}

impl InstanceLogic for Counter {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        if call.tool() != "bump" {
            return Reply::text(self.n.to_string());
        }
        let go = self.hold.go.lock().unwrap().take();
        let work = cx.spawn_blocking(
            move || {
                if let Some(go) = go {
                    let _ = go.recv();
                }
            },
            1,
        );
        self.waiting = Some((work, call.id()));
        if let Some(bumps) = self.hold.bumps.lock().unwrap().as_ref() {
            bumps.send_modify(|n| *n += 1);
        }
        Reply::Later
    }

    fn wake(&mut self, _: u64, cx: &mut InstanceContext) {
        if let Some((mut work, call)) = self.waiting.take() {
            if work.try_take().is_none() {
                self.waiting = Some((work, call));
                return;
            }
            self.n += 1;
            cx.answer(call, Ok(CallToolResult::text(self.n.to_string())));
        }
    }
}

impl Durable for Counter {
    const FORMAT: u32 = 1;
}

/// A database of its own on the PostgreSQL this binary's tests share.
fn database() -> (Arc<Postgres>, String) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let pg = Postgres::shared().expect("a private PostgreSQL starts");
    let name = format!("outbox_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    postgres::Client::connect(&pg.url(), postgres::NoTls)
        .expect("connect")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test's database");
    let url = pg.url_of(&name);
    (pg, url)
}

/// [`NatsPeers`] counting the messages to principals that failed, and those to
/// instances answered.
#[derive(Clone)]
struct Counted {
    inner: NatsPeers,
    failed: watch::Sender<usize>,
    answered: watch::Sender<usize>,
}

impl Peers for Counted {
    fn serve(&self, to: PeerAddress) -> PeerFuture<Inbox> {
        self.inner.serve(to)
    }

    fn request(&self, to: PeerAddress, body: Vec<u8>, timeout: Duration) -> PeerFuture<Vec<u8>> {
        let principal = matches!(to, PeerAddress::Principal(_));
        let (failed, answered) = (self.failed.clone(), self.answered.clone());
        let asked = self.inner.request(to, body, timeout);
        Box::pin(async move {
            let answer = asked.await;
            if principal && answer.is_err() {
                failed.send_modify(|n| *n += 1);
            }
            if !principal && answer.is_ok() {
                answered.send_modify(|n| *n += 1);
            }
            answer
        })
    }

    fn served(&self, to: PeerAddress) -> PeerFuture<bool> {
        self.inner.served(to)
    }

    fn max_message(&self) -> usize {
        self.inner.max_message()
    }
}

/// A node: a server on a `PgStore` of its own, reaching the others through `peers`.
fn node(url: &str, peers: Counted, hold: &Hold) -> Server {
    let (opened, restored) = (hold.clone(), hold.clone());
    let counter = Toolset::new("game")
        .instances()
        .tool(Tool::new("bump", "bump", json!({"type": "object"})))
        .tool(Tool::new("peek", "peek", json!({"type": "object"})))
        .on_open(move |_, _| {
            Ok(Started::durable(Counter {
                n: 0,
                hold: opened.clone(),
                waiting: None,
            }))
        })
        .durable_with(move |_, state| {
            let mut counter: Counter = serde_json::from_value(state).map_err(|e| e.to_string())?;
            counter.hold = restored.clone();
            Ok(counter)
        });
    let store = Arc::new(PgStore::connect(url).expect("the store connects"));
    Server::builder("outbox-nats-test", "0.1.0")
        .toolset(counter)
        .store(store)
        .peers(Arc::new(peers))
        .peer_timeout(Duration::from_millis(300))
        .resume_instances(false)
        .build()
        .expect("a valid server")
}

/// A hinted modern request.
fn req(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"mcpl/core":
            {"version": "0.5", "toolHints": true, "pushEvents": true}}}});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn call(id: i64, tool: &str) -> Value {
    let mut r = req(id, "tools/call", json!({"name": tool, "arguments": {}}));
    r["params"]["_meta"]["mcpl/instance"] = json!("live");
    r
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {reply:#}"))
}

/// A node's bus, reconnecting every 100 ms at most.
async fn bus(nats: &Nats, node: &str) -> Arc<NatsBus> {
    let mut config = BusConfig::new(node);
    config.reconnect_max = Duration::from_millis(100);
    let bus = NatsBus::connect(&nats.url(), config)
        .await
        .expect("the bus connects");
    Arc::new(bus)
}

/// Awaits the node's connection being `up` (or not).
async fn connection(bus: &NatsBus, up: bool) {
    let mut connected = bus.connected();
    within_named(
        if up { "reconnection" } else { "disconnection" },
        connected.wait_for(|now| *now == up),
    )
    .await
    .expect("the bus is open");
}

#[actix::test]
async fn issue41_10_an_answer_made_while_nats_is_down_reaches_the_player_once_it_is_back() {
    let mut nats = Nats::start().expect("nats-server starts");
    let (_pg, url) = tokio::task::spawn_blocking(database).await.unwrap();
    let (bus_a, bus_b) = (bus(&nats, "a").await, bus(&nats, "b").await);
    let hold = Hold::default();
    let failed = watch::Sender::new(0);
    let answered = watch::Sender::new(0);
    let (bumps, _) = watch::channel(0);
    *hold.bumps.lock().unwrap() = Some(bumps.clone());
    let probe = NatsPeers::new(bus_a.clone());
    let (first, second) = {
        let (url, hold) = (url.clone(), hold.clone());
        let counted = |bus: &Arc<NatsBus>| Counted {
            inner: NatsPeers::new(bus.clone()),
            failed: failed.clone(),
            answered: answered.clone(),
        };
        let (a, b) = (counted(&bus_a), counted(&bus_b));
        tokio::task::spawn_blocking(move || (node(&url, a, &hold), node(&url, b, &hold)))
            .await
            .unwrap()
    };
    let mut alice = Client::connect(&first, "alice");
    alice
        .exchange(req(
            1,
            "toolsets/open",
            json!({"toolset": "game", "instance": "live"}),
        ))
        .await;
    let id = first.running_instances().await[0];
    first.release_instance(id).await.expect("released");
    second.adopt_instance(id).await.expect("adopted");
    assert!(
        within(probe.served(PeerAddress::Instance(id)))
            .await
            .unwrap()
    );
    assert_eq!(text(&alice.exchange(call(2, "bump")).await), "1");

    // Her next bump reaches the game on the second node and waits there.
    let (go, wait) = mpsc::channel();
    *hold.go.lock().unwrap() = Some(wait);
    let before = *answered.borrow();
    alice.send(call(3, "bump")).await;
    let mut reached = bumps.subscribe();
    within(reached.wait_for(|n| *n >= 2)).await.unwrap();
    // Its message acknowledged on the first node (a principal's messages are not sent
    // again: one lost with NATS is answered "retry").
    let mut acknowledged = answered.subscribe();
    within(acknowledged.wait_for(|n| *n > before))
        .await
        .unwrap();
    // NATS goes away; the game answers meanwhile: its answer waits in its outbox.
    nats.stop();
    connection(&bus_a, false).await;
    connection(&bus_b, false).await;
    let before = *failed.borrow();
    go.send(()).unwrap();
    // Its sends fail while NATS is away.
    let mut failing = failed.subscribe();
    within(failing.wait_for(|n| *n > before)).await.unwrap();
    // NATS comes back: the outbox sends the answer again until it is acknowledged.
    nats.restart()
        .expect("nats-server starts again on its port");
    connection(&bus_a, true).await;
    connection(&bus_b, true).await;
    let answer = alice.response().await;
    assert_eq!(answer["id"], 3, "{answer:#}");
    assert_eq!(text(&answer), "2", "{answer:#}");
    // Told once: the next response is the next call's.
    alice.send(call(4, "peek")).await;
    let peek = alice.response().await;
    assert_eq!(peek["id"], 4, "{peek:#}");
    assert_eq!(text(&peek), "2", "{peek:#}");
}

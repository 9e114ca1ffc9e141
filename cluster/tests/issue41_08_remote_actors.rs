//! Issue #41 (`docs/ownership.md` §2) on a real `nats-server` and a real PostgreSQL, both
//! started by the test: two nodes, each a server on a `PgStore` of its own over one
//! database and on a NATS connection of its own ([`NatsPeers`]). A game opened by alice
//! on the first node is released there and adopted by the second while alice's principal
//! stays on the first: her calls on the first reach the game on the second over NATS
//! (subjects named by the actor: `mcpl.i.<id>`, `mcpl.a.alice`) and the answers come
//! back. While nobody runs the game a call meets NATS's "no responders": answered at
//! once "retry, nothing ran". Each node writes its own actors' records: the game's moves
//! land in the database through the second node.

use crate::support::Client;
use mcpl_cluster::bus::BusConfig;
use mcpl_cluster::{NatsBus, NatsPeers, PgStore};
use mcpl_server::peers::{PeerAddress, Peers};
use mcpl_server::{
    Durable, InstanceContext, InstanceLogic, Reply, Server, Started, Store, Tool, ToolCall, Toolset,
};
use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A durable counter: `bump` counts, `peek` tells.
#[derive(Serialize, Deserialize)]
struct Counter {
    n: u64,
}

impl InstanceLogic for Counter {
    fn call(&mut self, call: ToolCall, _: &mut InstanceContext) -> Reply {
        if call.tool() == "bump" {
            self.n += 1;
        }
        Reply::text(self.n.to_string())
    }
}

impl Durable for Counter {
    const FORMAT: u32 = 1;
}

/// A database of its own on the PostgreSQL this binary's tests share.
pub(crate) fn database() -> (Arc<Postgres>, String) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let pg = Postgres::shared().expect("a private PostgreSQL starts");
    let name = format!("remote_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    postgres::Client::connect(&pg.url(), postgres::NoTls)
        .expect("connect")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test's database");
    let url = pg.url_of(&name);
    (pg, url)
}

/// A node: a server on a `PgStore` of its own, reaching the others through `peers`.
fn node(url: &str, peers: NatsPeers, resume: bool) -> Server {
    node_on(url, Some(peers), resume)
}

/// A node on a `PgStore` of its own, reaching the others through `peers` (none: nobody).
pub(crate) fn node_on(url: &str, peers: Option<NatsPeers>, resume: bool) -> Server {
    let counter = Toolset::new("game")
        .instances()
        .tool(Tool::new("bump", "bump", json!({"type": "object"})))
        .tool(Tool::new("peek", "peek", json!({"type": "object"})))
        .on_open(|_, _| Ok(Started::durable(Counter { n: 0 })))
        .durable::<Counter>();
    let store = Arc::new(PgStore::connect(url).expect("the store connects"));
    let builder = Server::builder("remote-pg-test", "0.1.0")
        .toolset(counter)
        .store(store)
        .resume_instances(resume);
    match peers {
        Some(peers) => builder.peers(Arc::new(peers)),
        None => builder,
    }
    .build()
    .expect("a valid server")
}

/// A hinted modern request.
pub(crate) fn req(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"mcpl/core":
            {"version": "0.5", "toolHints": true, "pushEvents": true}}}});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub(crate) fn call(id: i64, tool: &str) -> Value {
    let mut r = req(id, "tools/call", json!({"name": tool, "arguments": {}}));
    r["params"]["_meta"]["mcpl/instance"] = json!("live");
    r
}

pub(crate) fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {reply:#}"))
}

pub(crate) async fn peers(nats: &Nats, node: &str) -> NatsPeers {
    let bus = NatsBus::connect(&nats.url(), BusConfig::new(node))
        .await
        .expect("the bus connects");
    NatsPeers::new(Arc::new(bus))
}

#[actix::test]
async fn issue41_08_a_players_calls_on_one_node_reach_her_game_adopted_by_another_over_nats() {
    let nats = Nats::start().expect("nats-server starts");
    // The synchronous client runs a runtime of its own: off this one's thread.
    let (_pg, url) = tokio::task::spawn_blocking(database).await.unwrap();
    let (on_a, on_b) = (peers(&nats, "a").await, peers(&nats, "b").await);
    let probe = on_b.clone();
    let (first, second) = {
        let url = url.clone();
        tokio::task::spawn_blocking(move || (node(&url, on_a, true), node(&url, on_b, false)))
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
    assert_eq!(text(&alice.exchange(call(2, "bump")).await), "1");
    let running = first.running_instances().await;
    assert_eq!(running.len(), 1, "{running:?}");
    let id = running[0];
    // Alice's actor serves `mcpl.a.alice` on the first node; the game `mcpl.i.<id>`.
    assert!(
        probe
            .served(PeerAddress::Principal("alice".into()))
            .await
            .unwrap()
    );
    assert!(probe.served(PeerAddress::Instance(id)).await.unwrap());

    // Released: nobody serves the game's subject; a call meets "no responders".
    first.release_instance(id).await.expect("released");
    assert!(!probe.served(PeerAddress::Instance(id)).await.unwrap());
    let refused = alice.exchange(call(3, "peek")).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused:#}");
    assert_eq!(
        refused["error"]["data"],
        json!({"retryable": true, "ran": false}),
        "{refused:#}"
    );

    // Adopted by the second node, which finds alice served on the first and reads no
    // principal for it.
    second.adopt_instance(id).await.expect("adopted");
    assert_eq!(second.running_instances().await, [id]);
    assert_eq!(second.principal_count(), 0, "alice runs on the first node");
    assert!(probe.served(PeerAddress::Instance(id)).await.unwrap());

    // Her calls on the first node reach it on the second, from the same position.
    assert_eq!(text(&alice.exchange(call(4, "peek")).await), "1");
    assert_eq!(text(&alice.exchange(call(5, "bump")).await), "2");
    assert_eq!(text(&alice.exchange(call(6, "bump")).await), "3");

    // The moves were committed by the second node, over the revisions it read.
    let check = url.clone();
    let record = tokio::task::spawn_blocking(move || {
        PgStore::connect(&check)
            .expect("the store connects")
            .load_instance(id)
            .expect("read")
            .expect("live")
    })
    .await
    .unwrap();
    let record: Value = serde_json::from_slice(&record).unwrap();
    assert_eq!(record["logic"]["Kept"]["state"]["n"], 3, "{record:#}");
}

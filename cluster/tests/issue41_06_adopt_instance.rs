//! Issue #41 item 3 on a real PostgreSQL (`mcpl_testkit::postgres`, started by this
//! binary's tests; `docs/ownership.md` §4): two servers, each on a `PgStore` of its own
//! over one database — two nodes. A game played on the first is released there and
//! adopted by the second, which resumes nothing at start: the second reads the game's
//! record and its player's (remembering their revisions), and the player's next moves,
//! made on the second, commit over exactly what it read — the revision check passes — and
//! go on from the same position. The first, its game released, refuses a call there as
//! worth retrying and writes nothing of it.

use crate::support::Client;
use mcpl_cluster::PgStore;
use mcpl_server::Tool;
use mcpl_server::{
    Durable, InstanceContext, InstanceLogic, Reply, Server, Started, Store, ToolCall, Toolset,
};
use mcpl_testkit::postgres::Postgres;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A durable counter: `bump` counts.
#[derive(Serialize, Deserialize)]
struct Counter {
    n: u64,
}

impl InstanceLogic for Counter {
    fn call(&mut self, _: ToolCall, _: &mut InstanceContext) -> Reply {
        self.n += 1;
        Reply::text(self.n.to_string())
    }
}

impl Durable for Counter {
    const FORMAT: u32 = 1;
}

/// A database of its own on the PostgreSQL this binary's tests share.
fn database() -> (Arc<Postgres>, String) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let pg = Postgres::shared().expect("a private PostgreSQL starts");
    let name = format!("adopt_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    postgres::Client::connect(&pg.url(), postgres::NoTls)
        .expect("connect")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test's database");
    let url = pg.url_of(&name);
    (pg, url)
}

/// A node: a server on a `PgStore` of its own; `resume` as
/// `ServerBuilder::resume_instances`.
fn node(url: &str, resume: bool) -> Server {
    let counter = Toolset::new("game")
        .instances()
        .tool(Tool::new("bump", "bump", json!({"type": "object"})))
        .on_open(|_, _| Ok(Started::durable(Counter { n: 0 })))
        .durable::<Counter>();
    let store = Arc::new(PgStore::connect(url).expect("the store connects"));
    Server::builder("adopt-pg-test", "0.1.0")
        .toolset(counter)
        .store(store)
        .resume_instances(resume)
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

fn bump(id: i64) -> Value {
    let mut r = req(id, "tools/call", json!({"name": "bump", "arguments": {}}));
    r["params"]["_meta"]["mcpl/instance"] = json!("live");
    r
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {reply:#}"))
}

#[actix::test]
async fn issue41_06_a_game_released_on_one_node_is_adopted_by_another_and_goes_on() {
    // The synchronous client runs a runtime of its own: off this one's thread.
    let (_pg, url) = tokio::task::spawn_blocking(database).await.unwrap();
    let (first, second) = {
        let url = url.clone();
        tokio::task::spawn_blocking(move || (node(&url, true), node(&url, false)))
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
    assert_eq!(text(&alice.exchange(bump(2)).await), "1");
    assert_eq!(text(&alice.exchange(bump(3)).await), "2");
    let running = first.running_instances().await;
    assert_eq!(running.len(), 1, "{running:?}");
    let id = running[0];
    first.release_instance(id).await.expect("released");

    // The second node started with nothing; it adopts the game from the database.
    assert_eq!(second.running_instances().await, Vec::<u64>::new());
    second.adopt_instance(id).await.expect("adopted");
    assert_eq!(second.running_instances().await, [id]);
    let mut there = Client::connect(&second, "alice");
    // Each move commits over the revisions the second node read: they pass.
    assert_eq!(text(&there.exchange(bump(1)).await), "3");
    assert_eq!(text(&there.exchange(bump(2)).await), "4");

    // On the first node the game no longer runs: "retry", and nothing written there.
    let refused = alice.exchange(bump(4)).await;
    assert_eq!(
        refused["error"]["data"],
        json!({"retryable": true, "ran": false}),
        "{refused:#}"
    );
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
    assert_eq!(record["logic"]["Kept"]["state"]["n"], 4, "{record:#}");
}

//! Issue #41, on a real PostgreSQL (`mcpl_testkit::postgres`, started by this binary's
//! tests): a server started on a `PgStore` holding many principals' records reads the
//! instances and the principals they name, and every other principal on its first use —
//! counted through a store wrapped to count its reads, never by timing. The principal
//! read then has its whole state (its ended record, its tombstone, its version past its
//! record's), first uses at once read it once, and what it writes next is guarded by the
//! revision read (`PgStore` remembers it as `load` did).

use crate::support::Client;
use mcpl_cluster::PgStore;
use mcpl_server::Tool;
use mcpl_server::{
    Durable, InstanceContext, InstanceLogic, LiveInstance, Loaded, PrincipalLoaded, Reply, Server,
    Started, Store, StoreError, ToolCall, Toolset, Writes,
};
use mcpl_testkit::postgres::Postgres;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// How many idle principals the database holds besides the players.
const IDLE: usize = 2000;

/// A durable counter: `bump` counts, `finish` ends it.
#[derive(Serialize, Deserialize)]
struct Counter {
    n: u64,
}

impl InstanceLogic for Counter {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        if call.tool() == "finish" {
            cx.end(format!("finished at {}", self.n));
            return Reply::text("Over.");
        }
        self.n += 1;
        Reply::text(self.n.to_string())
    }
}

impl Durable for Counter {
    const FORMAT: u32 = 1;
}

/// A `PgStore` that counts its reads: everything (`load`), and each principal's by name;
/// the reads of the principal `hold` names wait for `release`.
struct Counting {
    inner: PgStore,
    loads: AtomicUsize,
    principals: Mutex<Vec<String>>,
    hold: Mutex<Option<String>>,
    released: (Mutex<bool>, Condvar),
}

impl Counting {
    fn new(url: &str) -> Self {
        Counting {
            inner: PgStore::connect(url).expect("the store connects"),
            loads: AtomicUsize::new(0),
            principals: Mutex::new(Vec::new()),
            hold: Mutex::new(None),
            released: (Mutex::new(false), Condvar::new()),
        }
    }

    fn read(&self) -> Vec<String> {
        self.principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn reads_of(&self, name: &str) -> usize {
        self.read().iter().filter(|n| *n == name).count()
    }

    fn release(&self) {
        let (done, wake) = &self.released;
        *done.lock().unwrap_or_else(PoisonError::into_inner) = true;
        wake.notify_all();
    }
}

impl Store for Counting {
    fn load(&self) -> Result<Loaded, StoreError> {
        self.loads.fetch_add(1, Ordering::SeqCst);
        self.inner.load()
    }

    fn commit(&self, steps: &[Writes]) -> Result<(), StoreError> {
        self.inner.commit(steps)
    }

    fn location(&self) -> String {
        self.inner.location()
    }
    fn reserve_instance_ids(&self, count: u64) -> Result<std::ops::Range<u64>, StoreError> {
        self.inner.reserve_instance_ids(count)
    }

    fn load_principal(&self, principal: &str) -> Result<PrincipalLoaded, StoreError> {
        self.principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(principal.to_owned());
        let held = self
            .hold
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if held.as_deref() == Some(principal) {
            let (done, wake) = &self.released;
            let mut done = done.lock().unwrap_or_else(PoisonError::into_inner);
            while !*done {
                done = wake.wait(done).unwrap_or_else(PoisonError::into_inner);
            }
        }
        self.inner.load_principal(principal)
    }

    fn load_instance(&self, id: u64) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.load_instance(id)
    }

    fn live_instances(&self) -> Result<Vec<LiveInstance>, StoreError> {
        self.inner.live_instances()
    }
}

/// A database of its own on the PostgreSQL this binary's tests share.
fn database() -> (Arc<Postgres>, String) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let pg = Postgres::shared().expect("a private PostgreSQL starts");
    let name = format!("lazy_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    postgres::Client::connect(&pg.url(), postgres::NoTls)
        .expect("connect")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test's database");
    let url = pg.url_of(&name);
    (pg, url)
}

fn tool(name: &str) -> Tool {
    Tool::new(name, name, json!({"type": "object"}))
}

fn server(store: Arc<dyn Store>) -> Server {
    let counter = Toolset::new("game")
        .instances()
        .tool(tool("bump"))
        .tool(tool("finish"))
        .on_open(|_, _| Ok(Started::durable(Counter { n: 0 })))
        .durable::<Counter>();
    // A lobby: open by default, one plain instance per principal, which every principal
    // that ever connected keeps open — started anew when its principal is, never a
    // reason to read that principal at start.
    let lobby = Toolset::new("lobby").open_by_default();
    Server::builder("lazy-pg-test", "0.1.0")
        .toolset(counter)
        .toolset(lobby)
        .store(store)
        .build()
        .expect("a valid server")
}

/// A hinted modern request whose `since` is `since`.
fn req(id: i64, method: &str, since: u64, mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"mcpl/core":
            {"version": "0.5", "toolHints": true, "pushEvents": true}}},
        "mcpl/since": since});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn game(id: i64, method: &str, instance: &str, since: u64) -> Value {
    req(
        id,
        method,
        since,
        json!({"toolset": "game", "instance": instance}),
    )
}

fn call(id: i64, tool: &str, instance: &str, since: u64) -> Value {
    let mut r = req(
        id,
        "tools/call",
        since,
        json!({"name": tool, "arguments": {}}),
    );
    r["params"]["_meta"]["mcpl/instance"] = json!(instance);
    r
}

fn version(reply: &Value) -> u64 {
    reply["result"]["_meta"]["mcpl/hints"]["version"]
        .as_u64()
        .unwrap_or_else(|| panic!("no mcpl/hints version: {reply:#}"))
}

/// `(instance, reason)` of every ended record of a `toolsets/list` result.
fn ended(list: &Value) -> Vec<(String, String)> {
    list["result"]["ended"]
        .as_array()
        .unwrap_or_else(|| panic!("{list:#}"))
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            (s("instance"), s("reason"))
        })
        .collect()
}

/// Drops the clients and awaits their sessions' end.
async fn leave(server: &Server, clients: Vec<Client>) {
    drop(clients);
    server
        .watch_sessions()
        .wait_for(|n| *n == 0)
        .await
        .expect("the server is alive");
}

/// The first life: alice's game running, bob's ended record and tombstone (copied to
/// `IDLE` principals more); bob's version then.
async fn first_life(url: &str) -> u64 {
    let store = Arc::new(PgStore::connect(url).expect("the store connects"));
    let first = server(store.clone());
    let mut alice = Client::connect(&first, "alice");
    let opened = alice.exchange(game(1, "toolsets/open", "live", 0)).await;
    let bumped = alice
        .exchange(call(2, "bump", "live", version(&opened)))
        .await;
    assert_eq!(bumped["result"]["content"][0]["text"], "1", "{bumped:#}");
    let mut bob = Client::connect(&first, "bob");
    let opened = bob.exchange(game(1, "toolsets/open", "over", 0)).await;
    let over = bob
        .exchange(call(2, "finish", "over", version(&opened)))
        .await;
    let opened = bob
        .exchange(game(3, "toolsets/open", "gone", version(&over)))
        .await;
    let closed = bob
        .exchange(game(4, "toolsets/close", "gone", version(&opened)))
        .await;
    let before = version(&closed);
    leave(&first, vec![alice, bob]).await;
    let bob = store.load_principal("bob").unwrap();
    assert!(
        bob.parts.iter().any(|(n, _)| n.starts_with("closed/")),
        "{:?}",
        bob.parts
    );
    let copies: Vec<Writes> = (0..IDLE)
        .map(|i| {
            let name = format!("idle-{i:04}");
            Writes {
                principals: vec![(name.clone(), bob.core.clone())],
                parts: bob
                    .parts
                    .iter()
                    .map(|(p, r)| (name.clone(), p.clone(), Some(r.clone())))
                    .collect(),
                ..Writes::default()
            }
        })
        .collect();
    store.commit(&copies).unwrap();
    before
}

#[actix::test]
async fn issue41_04_a_node_reads_the_principals_its_instances_need_and_the_others_on_first_use() {
    // The synchronous client runs a runtime of its own: off this one's thread.
    let (_pg, url) = tokio::task::spawn_blocking(database).await.unwrap();
    let before = first_life(&url).await;

    let store = Arc::new(Counting::new(&url));
    let second = server(store.clone());
    assert_eq!(store.read(), ["alice"], "read at start");
    assert_eq!(store.loads.load(Ordering::SeqCst), 0, "nothing read whole");
    let mut alice = Client::connect(&second, "alice");
    let bumped = alice.exchange(call(1, "bump", "live", 0)).await;
    assert_eq!(bumped["result"]["content"][0]["text"], "2", "{bumped:#}");

    let mut idle = Client::connect(&second, "idle-1234");
    let listed = idle
        .exchange(req(1, "toolsets/list", before, json!({})))
        .await;
    assert_eq!(store.read(), ["alice", "idle-1234"]);
    assert_eq!(
        ended(&listed),
        [("over".to_owned(), "finished at 0".to_owned())],
        "{listed:#}"
    );
    assert_eq!(
        listed["result"]["_meta"]["mcpl/hints"]["statement"], true,
        "{listed:#}"
    );
    assert!(version(&listed) >= before + mcpl_server::RESTART_GAP);
    // It writes over the revision it read: a change of its record is kept.
    let opened = idle
        .exchange(game(2, "toolsets/open", "new", version(&listed)))
        .await;
    assert!(opened.get("result").is_some(), "{opened:#}");
    let kept = PgStore::connect(&url)
        .unwrap()
        .load_principal("idle-1234")
        .unwrap();
    assert!(
        kept.parts.iter().any(|(n, _)| n.starts_with("closed/")),
        "its tombstone is kept: {:?}",
        kept.parts
    );
    assert!(
        String::from_utf8_lossy(kept.core.as_deref().unwrap_or_default()).contains("\"new\""),
        "its open is kept"
    );

    // Two first requests at once: one read.
    *store.hold.lock().unwrap() = Some("idle-0042".to_owned());
    let mut one = Client::connect(&second, "idle-0042");
    one.send(req(1, "toolsets/list", before, json!({}))).await;
    let mut two = Client::connect(&second, "idle-0042");
    two.send(req(1, "toolsets/list", before, json!({}))).await;
    second
        .watch_sessions()
        .wait_for(|n| *n == 4)
        .await
        .expect("the server is alive");
    store.release();
    let (a, b) = (one.response().await, two.response().await);
    assert_eq!(ended(&a), ended(&b));
    assert_eq!(ended(&a).len(), 1, "{a:#}");
    assert_eq!(store.reads_of("idle-0042"), 1, "read once for both");
    assert_eq!(store.read().len(), 3);
    assert_eq!(store.loads.load(Ordering::SeqCst), 0, "nothing read whole");
}

//! Issue #41 (`docs/ownership.md` §5, slice 3's first part): instance ids come from the
//! store, a block at a time (`Store::reserve_instance_ids`), so servers sharing one store
//! never give two instances one id, and a server started again on its store never gives
//! an id it — or the process before it — gave, even one whose instance ended and was
//! forgotten, or one of a block reserved and not used. A reservation the store refuses
//! starts nothing: the open is answered "retry" and leaves nothing behind.
//!
//! Through the public interface: `toolsets/open` and `Server::running_instances`. The
//! same on PostgreSQL: `cluster/tests/issue41_07_instance_ids.rs`.

use crate::support;

use mcpl_server::{
    InstanceContext, InstanceLogic, Loaded, MemoryStore, RedbStore, Reply, Server, Started, Store,
    StoreError, Tool, ToolCall, Toolset, Writes,
};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use support::{TestClient, hinted};

/// A pad: any call scribbles.
struct Pad;

impl InstanceLogic for Pad {
    fn call(&mut self, _: ToolCall, _: &mut InstanceContext) -> Reply {
        Reply::text("scribbled")
    }
}

fn server(store: Arc<dyn Store>) -> Server {
    let pad = Toolset::new("pad")
        .instances()
        .tool(Tool::new("scribble", "scribble", json!({"type": "object"})))
        .on_open(|_, _| Ok(Started::new(Pad)));
    Server::builder("instance-ids-test", "0.1.0")
        .toolset(pad)
        .store(store)
        .build()
        .expect("a valid server")
}

async fn open(c: &mut TestClient, instance: &str) -> Value {
    c.request(
        "toolsets/open",
        json!({"toolset": "pad", "instance": instance}),
    )
    .await
}

async fn close(c: &mut TestClient, instance: &str) -> Value {
    c.request(
        "toolsets/close",
        json!({"toolset": "pad", "instance": instance}),
    )
    .await
}

/// `players` principals named `{prefix}{n}` each open `each` pads on `server`, all at
/// once (each player's opens in turn).
async fn open_many(server: &Server, prefix: &str, players: usize, each: usize) {
    let opens = (0..players).map(|p| async move {
        let (mut c, _session) = hinted(server, &format!("{prefix}{p}")).await;
        for i in 0..each {
            let r = open(&mut c, &format!("p{i}")).await;
            assert!(r.get("result").is_some(), "{r:#}");
        }
        (c, _session)
    });
    // The clients stay connected until every open is answered.
    drop(futures_util::future::join_all(opens).await);
}

#[actix::test]
async fn two_servers_on_one_store_opening_at_once_never_give_two_instances_one_id() {
    // 4 players × 40 pads on each server: five blocks of ids each, reserved while the
    // other server reserves too.
    let store = Arc::new(MemoryStore::new());
    let (first, second) = (server(store.clone()), server(store.clone()));
    tokio::join!(
        open_many(&first, "a", 4, 40),
        open_many(&second, "b", 4, 40)
    );
    let (on_first, on_second) = (
        first.running_instances().await,
        second.running_instances().await,
    );
    assert_eq!((on_first.len(), on_second.len()), (160, 160));
    let all: BTreeSet<u64> = on_first.iter().chain(&on_second).copied().collect();
    assert_eq!(
        all.len(),
        320,
        "an id given twice: {on_first:?} / {on_second:?}"
    );
}

/// One life of a server on the redb file in `dir`, in an actix system of its own (the
/// file is closed when it ends): a player opens `each` pads, one at a time, each closed
/// before the next is opened, and the ids the pads ran under are given back.
fn life(dir: &Path, prefix: &'static str, each: usize) -> BTreeSet<u64> {
    let dir = dir.to_owned();
    std::thread::spawn(move || {
        actix::System::new().block_on(async move {
            let store = Arc::new(RedbStore::open_dir(&dir).expect("the store opens"));
            let s = server(store.clone());
            let (mut c, _session) = hinted(&s, prefix).await;
            let mut ids = BTreeSet::new();
            for i in 0..each {
                let r = open(&mut c, &format!("p{i}")).await;
                assert!(r.get("result").is_some(), "{r:#}");
                let running = s.running_instances().await;
                assert_eq!(running.len(), 1, "{running:?}");
                assert!(ids.insert(running[0]), "{running:?} given twice");
                let r = close(&mut c, &format!("p{i}")).await;
                assert!(r.get("result").is_some(), "{r:#}");
            }
            // Ended and forgotten: the store keeps no record of them.
            assert_eq!(store.live_instances().expect("read").len(), 0);
            ids
        })
    })
    .join()
    .expect("a life of the server panicked")
}

#[test]
fn a_server_started_again_on_its_file_never_gives_an_id_given_before() {
    let dir = tempfile::tempdir().unwrap();
    // Three ids of a block: the rest of it is never used.
    let first = life(dir.path(), "alice", 3);
    let second = life(dir.path(), "bob", 3);
    // More than a block.
    let third = life(dir.path(), "carol", 70);
    assert!(first.is_disjoint(&second), "{first:?} / {second:?}");
    let before: BTreeSet<u64> = first.union(&second).copied().collect();
    assert!(before.is_disjoint(&third), "{before:?} / {third:?}");
    // Each start went past everything given before, even the block's unused ids.
    assert!(first.last() < second.first(), "{first:?} / {second:?}");
    assert!(second.last() < third.first(), "{second:?} / {third:?}");
}

/// A memory store whose reservations of ids fail while `refusing` is set, as a database
/// gone away does.
struct Refusing {
    inner: MemoryStore,
    refusing: AtomicBool,
}

impl Store for Refusing {
    fn load(&self) -> Result<Loaded, StoreError> {
        self.inner.load()
    }

    fn commit(&self, steps: &[Writes]) -> Result<(), StoreError> {
        self.inner.commit(steps)
    }

    fn location(&self) -> String {
        "refusing memory".into()
    }

    fn reserve_instance_ids(&self, count: u64) -> Result<std::ops::Range<u64>, StoreError> {
        if self.refusing.load(Ordering::SeqCst) {
            return Err(StoreError::Io {
                path: "refusing".into(),
                detail: "the database went away".into(),
            });
        }
        self.inner.reserve_instance_ids(count)
    }
}

#[actix::test]
async fn an_open_the_store_gives_no_id_for_is_answered_retry_and_leaves_nothing_behind() {
    let store = Arc::new(Refusing {
        inner: MemoryStore::new(),
        refusing: AtomicBool::new(true),
    });
    let s = server(store.clone());
    let (mut c, _session) = hinted(&s, "alice").await;
    let refused = open(&mut c, "p").await;
    assert_eq!(refused["error"]["code"], -32603, "{refused:#}");
    assert_eq!(
        refused["error"]["data"],
        json!({"retryable": true, "ran": false}),
        "{refused:#}"
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the database went away") && message.contains("try again"),
        "{message}"
    );
    // Nothing half-opened: no instance runs, none is listed, none is kept.
    assert_eq!(s.running_instances().await, Vec::<u64>::new());
    let list = c.request("toolsets/list", json!({})).await;
    let open_now = list["result"]["open"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(open_now.iter().all(|r| r["toolset"] != "pad"), "{list:#}");
    assert!(store.inner.load().expect("read").instances.is_empty());

    // The store back: the same open goes through.
    store.refusing.store(false, Ordering::SeqCst);
    let opened = open(&mut c, "p").await;
    assert_eq!(opened["result"]["instance"], "p", "{opened:#}");
    assert_eq!(s.running_instances().await.len(), 1);
}

//! Issue #41 on a real PostgreSQL (`mcpl_testkit::postgres`, started by this binary's
//! tests; `docs/ownership.md` §5): instance ids come from the database, a block at a time
//! (`PgStore::reserve_instance_ids`: a counter row moved in one statement). Two servers,
//! each on a `PgStore` of its own over one database — two nodes — opening instances at
//! once never give two one id; a server started again on the database (a node restarted,
//! or a third) never gives an id given before, not even one of a block the others
//! reserved and did not use.

use crate::support::Client;
use mcpl_cluster::PgStore;
use mcpl_server::{
    InstanceContext, InstanceLogic, Reply, Server, Started, Store, Tool, ToolCall, Toolset,
};
use mcpl_testkit::postgres::Postgres;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A pad: any call scribbles.
struct Pad;

impl InstanceLogic for Pad {
    fn call(&mut self, _: ToolCall, _: &mut InstanceContext) -> Reply {
        Reply::text("scribbled")
    }
}

/// A database of its own on the PostgreSQL this binary's tests share.
fn database() -> (Arc<Postgres>, String) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let pg = Postgres::shared().expect("a private PostgreSQL starts");
    let name = format!("ids_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    postgres::Client::connect(&pg.url(), postgres::NoTls)
        .expect("connect")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test's database");
    let url = pg.url_of(&name);
    (pg, url)
}

/// A node: a server on a `PgStore` of its own (connected off the caller's runtime: the
/// synchronous client runs one of its own); `resume` as `ServerBuilder::resume_instances`.
async fn node(url: &str, resume: bool) -> Server {
    let url = url.to_owned();
    let store = tokio::task::spawn_blocking(move || PgStore::connect(&url))
        .await
        .unwrap()
        .expect("the store connects");
    let pad = Toolset::new("pad")
        .instances()
        .tool(Tool::new("scribble", "scribble", json!({"type": "object"})))
        .on_open(|_, _| Ok(Started::new(Pad)));
    Server::builder("instance-ids-pg-test", "0.1.0")
        .toolset(pad)
        .store(Arc::new(store))
        .resume_instances(resume)
        .build()
        .expect("a valid server")
}

/// A modern `toolsets/open` of pad `instance`.
fn open(id: i64, instance: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "toolsets/open", "params": {
        "toolset": "pad", "instance": instance,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"mcpl/core":
                {"version": "0.5", "toolHints": true}}}}}})
}

/// `players` principals named `{prefix}{n}` each open `each` pads on `server`, all at
/// once (each player's opens in turn).
async fn open_many(server: &Server, prefix: &str, players: usize, each: usize) {
    let opens = (0..players).map(|p| async move {
        let mut c = Client::connect(server, &format!("{prefix}{p}"));
        for i in 0..each {
            let r = c.exchange(open(i as i64, &format!("p{i}"))).await;
            assert!(r.get("result").is_some(), "{r:#}");
        }
        c
    });
    // The clients stay connected until every open is answered.
    drop(futures_util::future::join_all(opens).await);
}

#[actix::test]
async fn issue41_07_two_nodes_opening_at_once_never_give_two_instances_one_id() {
    let (_pg, url) = tokio::task::spawn_blocking(database).await.unwrap();
    let (first, second) = (node(&url, true).await, node(&url, true).await);
    // 4 players × 40 pads on each node: blocks reserved while the other node reserves.
    tokio::join!(
        open_many(&first, "a", 4, 40),
        open_many(&second, "b", 4, 40)
    );
    let (on_first, on_second) = (
        first.running_instances().await,
        second.running_instances().await,
    );
    assert_eq!((on_first.len(), on_second.len()), (160, 160));
    let given: BTreeSet<u64> = on_first.iter().chain(&on_second).copied().collect();
    assert_eq!(
        given.len(),
        320,
        "an id given twice: {on_first:?} / {on_second:?}"
    );

    // Both nodes hold ids of their last blocks unused; two more nodes started on the
    // database (each a node restarted: the first two's actors still run in this process,
    // so these take none of their instances over) go past every block reserved.
    drop((first, second));
    let (again, third) = (node(&url, false).await, node(&url, false).await);
    tokio::join!(open_many(&again, "d", 1, 3), open_many(&third, "c", 1, 3));
    let later: BTreeSet<u64> = again
        .running_instances()
        .await
        .into_iter()
        .chain(third.running_instances().await)
        .collect();
    assert_eq!(later.len(), 6, "{later:?}");
    assert!(
        given.last() < later.first(),
        "an id given again: {given:?} / {later:?}"
    );
    // Every instance's record is kept under its own id.
    let check = url.clone();
    let kept = tokio::task::spawn_blocking(move || {
        PgStore::connect(&check)
            .expect("the store connects")
            .live_instances()
            .expect("read")
            .len()
    })
    .await
    .unwrap();
    assert_eq!(kept, 326);
}

#[actix::test]
async fn issue41_07_blocks_follow_each_other_past_every_instance_kept() {
    let (_pg, url) = tokio::task::spawn_blocking(database).await.unwrap();
    tokio::task::spawn_blocking(move || {
        let store = PgStore::connect(&url).expect("the store connects");
        // A database written before the counter: blocks start past what it keeps.
        store.put_instance(7, b"{}").expect("written");
        assert_eq!(store.reserve_instance_ids(64).unwrap(), 8..72);
        // Another connection (another node) takes the next block.
        let other = PgStore::connect(&url).expect("the store connects");
        assert_eq!(other.reserve_instance_ids(64).unwrap(), 72..136);
        // A record put by hand past the counter is gone past too.
        other.put_instance(500, b"{}").expect("written");
        assert_eq!(store.reserve_instance_ids(1).unwrap(), 501..502);
    })
    .await
    .unwrap();
}

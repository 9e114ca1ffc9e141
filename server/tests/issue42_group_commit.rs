//! Group commit (issue #42 item 1): concurrent steps share one commit of the store (one
//! fsync for redb), and a step is answered only once its records are kept.
//!
//! The store is a `redb` file behind a gate the test holds: while it is held, the commit
//! under way cannot end, so every step made meanwhile waits in the commit queue, and none
//! of them is answered. Released, the steps waiting go in one commit.
//!
//! A step and the steps promised to follow it share one commit: a move's instance record
//! and its principal's record of it (a tool shown or hidden), an open's, each move of a
//! lone player one commit, not two; a step nothing follows is committed at once. The
//! server is built with a bound on that wait longer than the test may run
//! (`ServerBuilder::follow_wait`), so the counts do not depend on how fast the machine
//! is, and a commit held for a follow-up that never comes fails the test. The moves that
//! survive a SIGKILL of the arcade binary under concurrent load are in
//! `games/tests/issue42_group_commit.rs`.

use crate::support;

use mcpl_protocol::mcp::Tool;
use mcpl_server::{
    Durable, InstanceContext, InstanceLogic, Loaded, RedbStore, Reply, Server, Started, Store,
    StoreError, ToolCall, Toolset, Writes,
};
use mcpl_testkit::within;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;
use support::{TestClient, hinted, open, request};

/// A durable counter: each `bump` changes its record.
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

/// A `redb` store whose commits wait while the test holds the gate, and which says how
/// many steps each commit took.
struct Gated {
    inner: RedbStore,
    held: Mutex<bool>,
    opened: Condvar,
    commits: Mutex<Vec<usize>>,
}

impl Gated {
    fn hold(&self, held: bool) {
        *self.held.lock().unwrap_or_else(PoisonError::into_inner) = held;
        self.opened.notify_all();
    }

    fn commits(&self) -> Vec<usize> {
        self.commits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Store for Gated {
    fn load(&self) -> Result<Loaded, StoreError> {
        self.inner.load()
    }

    fn commit(&self, steps: &[Writes]) -> Result<(), StoreError> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        while *held {
            held = self
                .opened
                .wait(held)
                .unwrap_or_else(PoisonError::into_inner);
        }
        drop(held);
        self.inner.commit(steps)?;
        self.commits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(steps.len());
        Ok(())
    }

    fn location(&self) -> String {
        self.inner.location()
    }
    fn reserve_instance_ids(&self, count: u64) -> Result<std::ops::Range<u64>, StoreError> {
        self.inner.reserve_instance_ids(count)
    }
}

fn server(store: Arc<Gated>) -> Server {
    builder(store).build().unwrap()
}

fn builder(store: Arc<Gated>) -> mcpl_server::ServerBuilder {
    let tool = Tool::new("bump", "bump", json!({"type": "object"}));
    let counter = Toolset::new("counter")
        .instances()
        .tool(tool)
        .on_open(|_, _| Ok(Started::durable(Counter { n: 0 })))
        .durable::<Counter>();
    let flip = Tool::new("flip", "flip", json!({"type": "object"}));
    let peek = Tool::new("peek", "peek", json!({"type": "object"}));
    let flips = Toolset::new("flips")
        .instances()
        .tool(flip)
        .tool(peek)
        .on_open(|_, _| Ok(Started::durable(Flips { n: 0 })))
        .durable::<Flips>();
    Server::builder("group-commit-test", "0.1.0")
        .toolset(counter)
        .toolset(flips)
        .store(store)
}

/// A durable counter whose `flip` also shows `peek` to the caller, or hides it: each
/// changes the instance's record and the caller's principal's (the tools visible to it),
/// as a move in a game does (its turn).
#[derive(Serialize, Deserialize)]
struct Flips {
    n: u64,
}

impl InstanceLogic for Flips {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        self.n += 1;
        cx.set_visible(call.caller(), "peek", self.n.is_multiple_of(2));
        Reply::text(self.n.to_string())
    }
}

impl Durable for Flips {
    const FORMAT: u32 = 1;
}

/// Longer than the test may run (`ServerBuilder::follow_wait`): a commit held this long
/// for a follow-up fails it.
const FOREVER: Duration = Duration::from_secs(3600);

fn gated(dir: &std::path::Path) -> Arc<Gated> {
    Arc::new(Gated {
        inner: RedbStore::open_dir(dir).unwrap(),
        held: Mutex::new(false),
        opened: Condvar::new(),
        commits: Mutex::new(Vec::new()),
    })
}

fn call(id: i64, tool: &str, instance: &str) -> serde_json::Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": {"mcpl/instance": instance}}),
    )
}

fn bump(id: i64) -> serde_json::Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": "bump", "arguments": {}, "_meta": {"mcpl/instance": "c"}}),
    )
}

/// Players whose moves are made at the same time.
const PLAYERS: usize = 8;

#[actix::test]
async fn issue42_01_concurrent_steps_share_commits_and_are_answered_once_kept() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Gated {
        inner: RedbStore::open_dir(dir.path()).unwrap(),
        held: Mutex::new(false),
        opened: Condvar::new(),
        commits: Mutex::new(Vec::new()),
    });
    let server = server(store.clone());
    let mut players: Vec<(TestClient, _)> = Vec::new();
    for i in 0..PLAYERS {
        let (mut c, session) = hinted(&server, &format!("p{i}")).await;
        let r = c.exchange(open(1, "counter", Some("c"), None)).await;
        assert!(r.get("result").is_some(), "{r:#}");
        players.push((c, session));
    }
    let before = server.store_stats().expect("a store");
    let batches_before = store.commits().len();

    // Every player bumps its counter at once, the store held: each step's record waits.
    store.hold(true);
    for (c, _) in &mut players {
        c.send(bump(2)).await;
    }
    let handed = before.steps + PLAYERS as u64;
    within(async {
        // No event says "handed over" outside the queue: look again each turn of the
        // runtime until all are (bounded by `within`).
        while server.store_stats().expect("a store").steps < handed {
            tokio::task::yield_now().await;
        }
    })
    .await;
    let waiting = server.store_stats().expect("a store");
    assert_eq!(
        waiting.commits - before.commits,
        0,
        "no commit ended while held"
    );

    // Released: the steps waiting share one commit, and each is answered after it.
    store.hold(false);
    for (c, _) in &mut players {
        let r = c.recv().await;
        assert_eq!(r["id"], 2, "{r:#}");
        assert_eq!(r["result"]["content"][0]["text"], "1", "{r:#}");
    }
    let after = server.store_stats().expect("a store");
    let commits = after.commits - before.commits;
    assert!(
        commits <= 2 && commits < PLAYERS as u64,
        "{PLAYERS} concurrent steps took {commits} commits: {:?}",
        store.commits()
    );
    // The committer may have taken any number of the steps before the gate stopped it
    // (a loaded machine wakes it late): those went in the commit under way, and every
    // step that arrived while it was held went in the one after it.
    let batches = store.commits()[batches_before..].to_vec();
    assert_eq!(
        batches.iter().sum::<usize>(),
        PLAYERS,
        "each step kept once: {batches:?}"
    );

    // What was answered is in the file.
    drop(players);
    let loaded = store.inner.load().unwrap();
    let counts: Vec<u64> = loaded
        .instances
        .iter()
        .filter_map(|(_, r)| serde_json::from_slice::<serde_json::Value>(r).ok())
        .filter_map(|r| r["logic"]["Kept"]["state"]["n"].as_u64())
        .collect();
    assert_eq!(counts, vec![1; PLAYERS], "{loaded:?}");
}

#[actix::test]
async fn issue42_02_a_move_and_its_principals_record_share_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let store = gated(dir.path());
    let server = builder(store.clone()).follow_wait(FOREVER).build().unwrap();
    let (mut c, _session) = hinted(&server, "lone").await;

    // The open: the instance's record and the principal's (its new instance), one commit.
    let r = c.exchange(open(1, "flips", Some("f"), None)).await;
    assert!(r.get("result").is_some(), "{r:#}");
    assert_eq!(
        store.commits(),
        vec![2],
        "the open's two records in one commit"
    );

    // A lone player's moves, one after the other: each changes both records (the
    // instance's count, the tool shown or hidden to the player) and is answered once both
    // are kept — in one commit, one fsync, not two.
    const MOVES: usize = 6;
    for i in 0..MOVES {
        let id = json!(10 + i);
        c.send(call(10 + i as i64, "flip", "f")).await;
        let r = c.response(&id).await;
        assert_eq!(
            r["result"]["content"][0]["text"],
            (i + 1).to_string(),
            "{r:#}"
        );
    }
    let stats = server.store_stats().expect("a store");
    assert_eq!(stats.steps, 2 + 2 * MOVES as u64, "{:?}", store.commits());
    assert_eq!(
        store.commits(),
        vec![2; MOVES + 1],
        "each move's two records in one commit"
    );
}

#[actix::test]
async fn issue42_03_a_step_nothing_follows_is_committed_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = gated(dir.path());
    // Were a commit held for a follow-up nobody promised, the test would wait an hour.
    let server = builder(store.clone()).follow_wait(FOREVER).build().unwrap();
    let (mut c, _session) = hinted(&server, "lone").await;
    let r = c.exchange(open(1, "counter", Some("c"), None)).await;
    assert!(r.get("result").is_some(), "{r:#}");
    for i in 0..3 {
        // A bump changes only the instance's record: its principal writes nothing.
        let r = c.exchange(bump(10 + i)).await;
        assert_eq!(r["id"], 10 + i, "{r:#}");
        assert_eq!(
            r["result"]["content"][0]["text"],
            (i + 1).to_string(),
            "{r:#}"
        );
    }
    assert_eq!(
        store.commits(),
        vec![2, 1, 1, 1],
        "each step its own commit"
    );
}

#[actix::test]
async fn issue42_04_concurrent_moves_take_no_more_commits_than_moves() {
    let dir = tempfile::tempdir().unwrap();
    let store = gated(dir.path());
    let server = builder(store.clone()).follow_wait(FOREVER).build().unwrap();
    let mut players = Vec::new();
    for i in 0..PLAYERS {
        let (mut c, session) = hinted(&server, &format!("p{i}")).await;
        let r = c.exchange(open(1, "flips", Some("f"), None)).await;
        assert!(r.get("result").is_some(), "{r:#}");
        players.push((c, session));
    }
    let before = server.store_stats().expect("a store");

    // Every player moves at once, the store free: the commits take what waits, and each
    // holds its first step's follow-up, so no move's two records are split unless the
    // second joined the next commit — at most one commit a move, never two.
    for (c, _) in &mut players {
        c.send(call(2, "flip", "f")).await;
    }
    for (c, _) in &mut players {
        let r = c.response(&json!(2)).await;
        assert_eq!(r["result"]["content"][0]["text"], "1", "{r:#}");
    }
    let after = server.store_stats().expect("a store");
    assert_eq!(after.steps - before.steps, 2 * PLAYERS as u64);
    let commits = after.commits - before.commits;
    assert!(
        commits <= PLAYERS as u64,
        "{PLAYERS} moves (two steps each) took {commits} commits: {:?}",
        store.commits()
    );
}

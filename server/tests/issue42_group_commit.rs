//! Group commit (issue #42 item 1): concurrent steps share one commit of the store (one
//! fsync for redb), and a step is answered only once its records are kept.
//!
//! The store is a `redb` file behind a gate the test holds: while it is held, the commit
//! under way cannot end, so every step made meanwhile waits in the commit queue, and none
//! of them is answered. Released, the steps waiting go in one commit. The moves that
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
}

fn server(store: Arc<Gated>) -> Server {
    let tool = Tool::new("bump", "bump", json!({"type": "object"}));
    let counter = Toolset::new("counter")
        .instances()
        .tool(tool)
        .on_open(|_, _| Ok(Started::durable(Counter { n: 0 })))
        .durable::<Counter>();
    Server::builder("group-commit-test", "0.1.0")
        .toolset(counter)
        .store(store)
        .build()
        .unwrap()
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

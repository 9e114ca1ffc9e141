//! Issue #41: a server started on a store reads the records its instances need — every
//! instance's, and the principals they name — and every other principal's record on its
//! first use, not every record there is (`actors/restore.rs`, `actors/registry.rs`).
//! Counted through a store that counts its reads, never by timing. A principal read on
//! its first use gets its whole state (its ended records, its closed instances'
//! tombstones, its version past its record's by `RESTART_GAP`); first uses at once read
//! it once; a read that fails refuses the request, retryable, and loses nothing.
//!
//! The requests are modern ones (MCP 2026-07-28) over the stdio transport's framing on a
//! loopback socket, as in `stateless.rs`.

use crate::raw;

use mcpl_protocol::mcp::Tool;
use mcpl_server::{
    Durable, InstanceContext, InstanceLogic, Joined, LiveInstance, Loaded, MemoryStore,
    ParticipantId, PrincipalLoaded, Refusal, Reply, Server, Started, Store, StoreError, ToolCall,
    Toolset, Writes,
};
use mcpl_transport::Principal;
use raw::{Lines, stdio_socket};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// How many idle principals the store holds besides the players.
const IDLE: usize = 2000;

/// A durable counter: `bump` counts, `finish` ends it; whoever it invites may join.
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

    fn join(&mut self, _: ParticipantId, _: &mut InstanceContext) -> Result<Joined, Refusal> {
        Ok(Joined::new().text("Joined."))
    }
}

impl Durable for Counter {
    const FORMAT: u32 = 1;
}

/// A memory store that counts its reads: everything (`load`), and each principal's read
/// by name. A principal's read may be held (`hold`) until released, or fail (`failing`).
#[derive(Default)]
struct Counting {
    inner: MemoryStore,
    loads: AtomicUsize,
    principals: Mutex<Vec<String>>,
    /// The principal whose reads wait for `release`, and the reads begun for it.
    hold: Mutex<Option<String>>,
    held: AtomicUsize,
    released: (Mutex<bool>, std::sync::Condvar),
    failing: AtomicBool,
}

impl Counting {
    fn reads_of(&self, name: &str) -> usize {
        self.read().iter().filter(|n| *n == name).count()
    }

    fn read(&self) -> Vec<String> {
        self.principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn forget_reads(&self) {
        self.principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.loads.store(0, Ordering::SeqCst);
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
        "counting memory".to_owned()
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
            self.held.fetch_add(1, Ordering::SeqCst);
            let (done, wake) = &self.released;
            let mut done = done.lock().unwrap_or_else(PoisonError::into_inner);
            while !*done {
                done = wake.wait(done).unwrap_or_else(PoisonError::into_inner);
            }
        }
        if self.failing.load(Ordering::SeqCst) {
            return Err(StoreError::Io {
                path: "counting memory".into(),
                detail: "the database went away".into(),
            });
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

fn tool(name: &str) -> Tool {
    Tool::new(name, name, json!({"type": "object"}))
}

fn server(store: Arc<Counting>) -> Server {
    let counter = Toolset::new("game")
        .instances()
        .tool(tool("bump"))
        .tool(tool("finish"))
        .options(json!({"type": "object", "properties": {"opponent": {"type": "string"}}}))
        .on_open(|opening, cx| {
            if let Some(opponent) = opening.options()["opponent"].as_str() {
                cx.invite(Principal::Named(opponent.to_owned()), "a game");
            }
            Ok(Started::durable(Counter { n: 0 }))
        })
        .durable::<Counter>();
    // A lobby: open by default, one plain instance per principal, which every principal
    // that ever connected keeps open — started anew when its principal is, never a
    // reason to read that principal at start.
    let lobby = Toolset::new("lobby").open_by_default();
    Server::builder("lazy-test", "0.1.0")
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

fn open(id: i64, instance: &str, since: u64) -> Value {
    req(
        id,
        "toolsets/open",
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

async fn connect(server: &Server, who: &str) -> (Lines, mcpl_server::SessionHandle) {
    stdio_socket(server, Principal::Named(who.into())).await
}

/// Drops the sessions and awaits their end.
async fn leave(server: &Server, sessions: Vec<(Lines, mcpl_server::SessionHandle)>) {
    drop(sessions);
    server
        .watch_sessions()
        .wait_for(|n| *n == 0)
        .await
        .expect("the server is alive");
}

/// What the first life leaves: alice with a game running; bob with an ended record and
/// a closed game's tombstone, copied to `IDLE` more principals through the store; bob's
/// version then.
async fn first_life(store: &Arc<Counting>) -> u64 {
    let first = server(store.clone());
    let mut alice = connect(&first, "alice").await;
    let opened = alice.0.exchange(open(1, "live", 0)).await;
    let bumped = alice
        .0
        .exchange(call(2, "bump", "live", version(&opened)))
        .await;
    assert_eq!(bumped["result"]["content"][0]["text"], "1", "{bumped:#}");
    let mut bob = connect(&first, "bob").await;
    let opened = bob.0.exchange(open(1, "over", 0)).await;
    let over = bob
        .0
        .exchange(call(2, "finish", "over", version(&opened)))
        .await;
    let opened = bob.0.exchange(open(3, "gone", version(&over))).await;
    let closed = bob
        .0
        .exchange(req(
            4,
            "toolsets/close",
            version(&opened),
            json!({"toolset": "game", "instance": "gone"}),
        ))
        .await;
    let bob_version = version(&closed);
    leave(&first, vec![alice, bob]).await;
    drop(first);
    // Bob's record, core and parts, under `IDLE` more names: principals that played and
    // went away, none with a game running.
    let bob = store.inner.load_principal("bob").unwrap();
    assert!(
        bob.parts.iter().any(|(n, _)| n.starts_with("ended/"))
            && bob.parts.iter().any(|(n, _)| n.starts_with("closed/")),
        "bob's record has an ended record and a tombstone: {:?}",
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
    store.inner.commit(&copies).unwrap();
    store.forget_reads();
    bob_version
}

/// alice opens the duel inviting the idle principal `idle-0300`.
async fn invites_idle(alice: &mut (Lines, mcpl_server::SessionHandle)) {
    let invited = alice
        .0
        .exchange(req(
            1,
            "toolsets/open",
            0,
            json!({"toolset": "game", "instance": "duel", "options": {"opponent": "idle-0300"}}),
        ))
        .await;
    assert!(invited.get("result").is_some(), "{invited:#}");
}

/// The invitee joins the duel by opening it: the answer.
async fn joins_duel(idle: &mut (Lines, mcpl_server::SessionHandle), since: u64) -> Value {
    let joined = idle
        .0
        .exchange(req(
            2,
            "toolsets/open",
            since,
            json!({"toolset": "game", "instance": "duel"}),
        ))
        .await;
    assert!(joined.get("result").is_some(), "{joined:#}");
    joined
}

/// Moves the paused clock on by `by` in steps of 100 ms, letting every task run between
/// steps (the backoff's timers are armed again after each failed read, from then).
async fn pass(by: std::time::Duration) {
    let step = std::time::Duration::from_millis(100);
    let mut gone = std::time::Duration::ZERO;
    while gone < by {
        tokio::time::advance(step).await;
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        gone += step;
    }
}

#[actix::test]
async fn issue41_lazy_01_a_start_reads_only_the_principals_its_instances_need() {
    let store = Arc::new(Counting::default());
    let before = first_life(&store).await;

    let second = server(store.clone());
    // Built: the instances and the one principal they need, nothing else, never all.
    assert_eq!(store.read(), ["alice"], "read at start");
    assert_eq!(store.loads.load(Ordering::SeqCst), 0, "nothing read whole");
    let mut alice = connect(&second, "alice").await;
    let bumped = alice.0.exchange(call(1, "bump", "live", 0)).await;
    assert_eq!(bumped["result"]["content"][0]["text"], "2", "{bumped:#}");
    let restored = second.restored().expect("started");
    assert_eq!((restored.principals, restored.instances), (1, 1));
    eprintln!(
        "{} principals in the store; read at start: {:?}",
        IDLE + 2,
        store.read()
    );

    // An idle principal's first request reads its record, and it has its whole state.
    let mut idle = connect(&second, "idle-1234").await;
    let listed = idle
        .0
        .exchange(req(1, "toolsets/list", before, json!({})))
        .await;
    assert_eq!(store.reads_of("idle-1234"), 1);
    assert_eq!(store.read().len(), 2, "alice at start, then idle-1234 only");
    assert_eq!(
        ended(&listed),
        [("over".to_owned(), "finished at 0".to_owned())],
        "its ended record, and no other (its lobby is started anew): {listed:#}"
    );
    let open: Vec<&str> = listed["result"]["open"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["toolset"].as_str())
        .collect();
    assert_eq!(open, ["lobby"], "{listed:#}");
    // Its version goes on past its record's (issue #41's rule for a new life): a host
    // that knew `before` is stated everything once.
    let hints = &listed["result"]["_meta"]["mcpl/hints"];
    assert_eq!(hints["statement"], true, "{listed:#}");
    assert!(
        version(&listed) >= before + mcpl_server::RESTART_GAP,
        "{} vs {before}",
        version(&listed)
    );
    // Its closed game's tombstone is kept, with the stamp it had: an end is never told
    // twice, and what it keeps is not lost.
    let kept = store.inner.load_principal("idle-1234").unwrap();
    assert!(
        kept.parts.iter().any(|(n, _)| n.starts_with("closed/")),
        "{:?}",
        kept.parts
    );
    let now = version(&listed);
    let again = idle.0.exchange(req(2, "tools/list", now, json!({}))).await;
    assert_eq!(
        again["result"]["_meta"]["mcpl/hints"],
        json!({"version": now}),
        "nothing new once stated: {again:#}"
    );
    // Touched again by another session while its actor lives: not read again.
    let mut more = connect(&second, "idle-1234").await;
    more.0.exchange(req(1, "tools/list", now, json!({}))).await;
    assert_eq!(store.reads_of("idle-1234"), 1);
    assert_eq!(store.loads.load(Ordering::SeqCst), 0, "nothing read whole");
}

#[actix::test]
async fn issue41_lazy_02_first_requests_at_once_read_a_principal_once() {
    let store = Arc::new(Counting::default());
    let before = first_life(&store).await;
    let second = server(store.clone());
    *store.hold.lock().unwrap() = Some("idle-0042".to_owned());

    let mut one = connect(&second, "idle-0042").await;
    one.0.send(req(1, "toolsets/list", before, json!({}))).await;
    let mut two = connect(&second, "idle-0042").await;
    two.0.send(req(1, "toolsets/list", before, json!({}))).await;
    // Both sessions reached the registry (it counts a session as it routes it): the
    // second waits for the first's read.
    second
        .watch_sessions()
        .wait_for(|n| *n == 2)
        .await
        .expect("the server is alive");
    store.release();
    let (a, b) = (one.0.recv().await, two.0.recv().await);
    for listed in [&a, &b] {
        assert_eq!(
            ended(listed),
            [("over".to_owned(), "finished at 0".to_owned())],
            "{listed:#}"
        );
    }
    assert_eq!(store.reads_of("idle-0042"), 1, "read once for both");
    assert_eq!(store.held.load(Ordering::SeqCst), 1);
    assert_eq!(version(&a), version(&b), "one state");
}

#[actix::test]
async fn issue41_lazy_03_a_read_that_fails_is_refused_retryable_and_loses_nothing() {
    let store = Arc::new(Counting::default());
    let before = first_life(&store).await;
    let second = server(store.clone());
    store.failing.store(true, Ordering::SeqCst);
    let mut idle = connect(&second, "idle-0007").await;
    let refused = idle
        .0
        .exchange(req(1, "toolsets/list", before, json!({})))
        .await;
    let error = &refused["error"];
    assert_eq!(error["code"], -32603, "{refused:#}");
    assert_eq!(error["data"]["retryable"], true, "{refused:#}");
    assert_eq!(error["data"]["ran"], false, "{refused:#}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("idle-0007") && message.contains("the database went away"),
        "{message}"
    );
    drop(idle);
    second
        .watch_sessions()
        .wait_for(|n| *n == 0)
        .await
        .expect("the server is alive");
    // Nothing was written over its record: once the store reads again, it is all there.
    store.failing.store(false, Ordering::SeqCst);
    let mut idle = connect(&second, "idle-0007").await;
    let listed = idle
        .0
        .exchange(req(2, "toolsets/list", before, json!({})))
        .await;
    assert_eq!(
        ended(&listed),
        [("over".to_owned(), "finished at 0".to_owned())],
        "{listed:#}"
    );
    assert_eq!(store.reads_of("idle-0007"), 2);
}

#[actix::test]
async fn issue41_lazy_04_an_invitation_naming_an_idle_principal_reads_it_once() {
    let store = Arc::new(Counting::default());
    let before = first_life(&store).await;
    let second = server(store.clone());
    let mut alice = connect(&second, "alice").await;
    invites_idle(&mut alice).await;
    // The invitation and the invitee's first request, in whatever order they reach the
    // registry: one read, and the invitee has its whole state.
    let mut idle = connect(&second, "idle-0300").await;
    let listed = idle
        .0
        .exchange(req(1, "toolsets/list", before, json!({})))
        .await;
    assert_eq!(
        ended(&listed),
        [("over".to_owned(), "finished at 0".to_owned())],
        "{listed:#}"
    );
    assert_eq!(store.reads_of("idle-0300"), 1);
    // The invitation reached it: it joins the duel by opening it.
    let joined = joins_duel(&mut idle, version(&listed)).await;
    let bumped = idle
        .0
        .exchange(call(3, "bump", "duel", version(&joined)))
        .await;
    assert_eq!(bumped["result"]["content"][0]["text"], "1", "{bumped:#}");
    assert_eq!(store.reads_of("idle-0300"), 1);
    assert_eq!(store.loads.load(Ordering::SeqCst), 0, "nothing read whole");
}

#[actix::test]
async fn issue41_lazy_05_an_invitation_for_an_unreadable_principal_is_read_again_backing_off() {
    let store = Arc::new(Counting::default());
    first_life(&store).await;
    let second = server(store.clone());
    let mut alice = connect(&second, "alice").await;
    store.failing.store(true, Ordering::SeqCst);
    invites_idle(&mut alice).await;
    // A minute of a store that cannot read the invitee: read when the invitation came,
    // then 1, 2, 4, 8 and 16 s after each failure (at 1, 3, 7, 15 and 31 s; the next at
    // 61 s): six reads, not one a second. (The clock is paused and moved on by the test,
    // a tenth of a second at a time.)
    tokio::time::pause();
    pass(std::time::Duration::from_secs(60)).await;
    let reads = store.reads_of("idle-0300");
    assert!((2..=6).contains(&reads), "{reads} reads in a minute");
    // The waits stop growing at 30 s, and the invitation was kept: once the store reads
    // again, the next read delivers it.
    store.failing.store(false, Ordering::SeqCst);
    pass(std::time::Duration::from_secs(31)).await;
    assert_eq!(store.reads_of("idle-0300"), reads + 1);
    tokio::time::resume();
    let mut idle = connect(&second, "idle-0300").await;
    let listed = idle.0.exchange(req(1, "toolsets/list", 0, json!({}))).await;
    joins_duel(&mut idle, version(&listed)).await;
    assert_eq!(
        store.reads_of("idle-0300"),
        reads + 1,
        "read once more, not again"
    );
}

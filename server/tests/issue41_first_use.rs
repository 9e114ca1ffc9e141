//! Issue #41 (`docs/ownership.md` §4, §5 slice 3): a principal read on its first use — a
//! principal's takeover — links to its instances running on other servers by reference
//! instead of ending them, and adopts one nobody runs. Raw JSON on real sockets (the stdio
//! framing on loopback), with `issue41_remote.rs`'s game against a bot: servers in one
//! process on one [`MemoryStore`], reaching each other through [`InProcessPeers`].
//!
//! "Her node" is a server on the same store whose peers reach nobody else's: it stands for
//! a node that died (its actors are beyond the others' reach). A principal's actor on
//! another node, while a game is adopted, is the test serving her address (so the
//! adoption links her by name, reading nothing), closed when that node dies too.
//!
//! Nothing sleeps: every wait is for a message or an answer.

use crate::issue41_remote::{call_in, player, server, server_on, text, until};
use crate::raw::Lines;

use mcpl_server::peers::{Inbox, PeerFuture};
use mcpl_server::{
    InProcessPeers, MemoryStore, OwnershipError, PeerAddress, Peers, REASON_LOST, Server,
};
use mcpl_testkit::msg::{open, request};
use mcpl_testkit::within;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Alice's game against the bot, played on her node (`home`): opened, one move made and
/// answered by the bot (the board at 11), then released — its record live, nobody running
/// it. Returns its id and her `toolsets/list` there.
async fn played_and_released(home: &Server) -> (u64, Value) {
    let (mut alice, _session) = player(home, "alice").await;
    let opened = alice.exchange(open(1, "duel", Some("d1"), None)).await;
    assert!(opened.get("result").is_some(), "{opened:#}");
    alice.send(call_in(2, "move")).await;
    let first = until(&mut alice, 2).await;
    assert_eq!(text(&first.response), "11");
    let list = alice
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    let id = home.running_instances().await[0];
    home.release_instance(id).await.expect("released");
    (id, list)
}

/// The instances open in a `toolsets/list`, and its ended records' reasons.
fn listed(list: &Value) -> (Vec<Value>, Vec<String>) {
    let open_now = list["result"]["open"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let ended = list["result"]["ended"].as_array().into_iter().flatten();
    let reasons = ended
        .map(|r| r["reason"].as_str().unwrap_or_default().to_owned())
        .collect();
    (open_now, reasons)
}

/// Her next move on the game, wherever it runs: told once, the bot's answer and its hint
/// with it.
async fn moves_on(alice: &mut Lines, id: i64) {
    alice.send(call_in(id, "move")).await;
    let told = until(alice, id).await;
    assert_eq!(told.pushes, ["You played: 12"], "told once");
    assert_eq!(told.shown, ["resign"], "the hint of the bot's step");
    assert_eq!(text(&told.response), "22");
}

/// Waits until `server` runs instance `id` (each look one message to its registry).
async fn runs(server: &Server, id: u64) {
    within(async {
        while server.running_instances().await != [id] {
            tokio::task::yield_now().await;
        }
    })
    .await;
}

/// Instance `id` adopted by a server B on peers of its own while alice's actor runs on
/// another node there (linked by name, her record not read on B); that node then dies.
async fn adopted_while_she_runs_elsewhere(
    store: &Arc<MemoryStore>,
    id: u64,
) -> (InProcessPeers, Server) {
    let peers = InProcessPeers::new();
    let her_node = within(peers.serve(PeerAddress::Principal("alice".into())))
        .await
        .expect("her address served");
    let b = server(store, &peers, false);
    b.adopt_instance(id).await.expect("adopted");
    assert_eq!(b.principal_count(), 0, "alice is not read on B");
    within(her_node.split().1.close()).await;
    (peers, b)
}

#[actix::test]
async fn a_principal_read_on_her_first_use_links_to_her_game_running_on_another_server() {
    let store = Arc::new(MemoryStore::new());
    let home = server(&store, &InProcessPeers::new(), true);
    let (id, before) = played_and_released(&home).await;

    // Adopted by B while her actor runs on another node (linked there by name, her record
    // not read); that node then dies.
    let (peers, b) = adopted_while_she_runs_elsewhere(&store, id).await;

    // Her first use on A: linked to the game on B, nothing ended, nothing adopted here.
    let a = server(&store, &peers, false);
    let (mut alice, _session) = player(&a, "alice").await;
    let list = alice
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    let (open_now, ended) = listed(&list);
    assert_eq!(open_now, listed(&before).0, "the same view: {list:#}");
    assert_eq!(ended, Vec::<String>::new(), "nothing ended: {list:#}");
    let board = alice.exchange(call_in(3, "board")).await;
    assert_eq!(text(&board), "11", "from the same position: {board:#}");
    moves_on(&mut alice, 4).await;
    assert_eq!(a.running_instances().await, Vec::<u64>::new());
    assert_eq!(b.running_instances().await, [id], "it runs on B alone");
    let list = alice
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    assert_eq!(listed(&list).1, Vec::<String>::new(), "{list:#}");
}

#[actix::test]
async fn an_instance_nobody_runs_is_adopted_on_its_principals_first_use() {
    let store = Arc::new(MemoryStore::new());
    let home = server(&store, &InProcessPeers::new(), true);
    let (id, before) = played_and_released(&home).await;

    // Her node died with the game released; her first use on A takes it over.
    let peers = InProcessPeers::new();
    let a = server(&store, &peers, false);
    let (mut alice, _session) = player(&a, "alice").await;
    runs(&a, id).await;
    let list = alice
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    assert_eq!(listed(&list), (listed(&before).0, vec![]), "{list:#}");
    let board = alice.exchange(call_in(3, "board")).await;
    assert_eq!(text(&board), "11", "{board:#}");
    moves_on(&mut alice, 4).await;
    assert!(
        within(peers.served(PeerAddress::Instance(id)))
            .await
            .unwrap(),
        "A serves it to the other servers"
    );
}

#[actix::test]
async fn without_peers_a_first_use_ends_what_does_not_run_here_as_before() {
    let store = Arc::new(MemoryStore::new());
    let home = server(&store, &InProcessPeers::new(), true);
    let (id, _) = played_and_released(&home).await;

    let a = server_on(&store, None, false);
    let (mut alice, _session) = player(&a, "alice").await;
    let list = alice
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    let (open_now, ended) = listed(&list);
    assert_eq!(open_now, Vec::<Value>::new(), "{list:#}");
    assert_eq!(ended, [REASON_LOST], "{list:#}");
    assert_eq!(a.running_instances().await, Vec::<u64>::new(), "{id}");
}

#[actix::test]
async fn two_servers_adopting_one_instance_at_once_run_it_once_and_her_calls_reach_it() {
    let store = Arc::new(MemoryStore::new());
    let peers = InProcessPeers::new();
    let a = server(&store, &peers, true);
    let (mut alice, _session) = player(&a, "alice").await;
    alice.exchange(open(1, "duel", Some("d1"), None)).await;
    alice.send(call_in(2, "move")).await;
    assert_eq!(text(&until(&mut alice, 2).await.response), "11");
    let id = a.running_instances().await[0];
    a.release_instance(id).await.expect("released");

    // Both look, see nobody, and adopt at once: the first to claim its address runs it.
    let b = server(&store, &peers, false);
    let (on_a, on_b) = tokio::join!(a.adopt_instance(id), b.adopt_instance(id));
    let (winner, loser, lost) = match (on_a, on_b) {
        (Ok(()), Err(e)) => (&a, &b, e),
        (Err(e), Ok(())) => (&b, &a, e),
        other => panic!("one adoption wins, the other is refused: {other:?}"),
    };
    assert!(
        matches!(lost, OwnershipError::Elsewhere { id: lost } if lost == id),
        "{lost}"
    );
    assert_eq!(winner.running_instances().await, [id]);
    assert_eq!(loser.running_instances().await, Vec::<u64>::new());
    moves_on(&mut alice, 3).await;
    let board = alice.exchange(call_in(4, "board")).await;
    assert_eq!(text(&board), "22", "{board:#}");
}

/// `InProcessPeers` whose probes of instances are stale: each says nobody serves it, as a
/// probe answered just before another server's claim landed would.
struct StaleProbes(InProcessPeers);

impl Peers for StaleProbes {
    fn serve(&self, to: PeerAddress) -> PeerFuture<Inbox> {
        self.0.serve(to)
    }

    fn request(&self, to: PeerAddress, body: Vec<u8>, timeout: Duration) -> PeerFuture<Vec<u8>> {
        self.0.request(to, body, timeout)
    }

    fn served(&self, to: PeerAddress) -> PeerFuture<bool> {
        match to {
            PeerAddress::Instance(_) => Box::pin(std::future::ready(Ok(false))),
            PeerAddress::Principal(_) => self.0.served(to),
        }
    }

    fn max_message(&self) -> usize {
        self.0.max_message()
    }
}

#[actix::test]
async fn a_first_use_adopting_what_another_server_claimed_first_links_to_it_there() {
    let store = Arc::new(MemoryStore::new());
    let home = server(&store, &InProcessPeers::new(), true);
    let (id, _) = played_and_released(&home).await;
    let (peers, b) = adopted_while_she_runs_elsewhere(&store, id).await;

    // A sees nobody (stale) and tries to adopt it on her first use: its claim finds B's,
    // it runs nothing, and her calls reach the game on B.
    let a = server_on(&store, Some(Arc::new(StaleProbes(peers.clone()))), false);
    assert!(
        matches!(
            a.adopt_instance(id).await,
            Err(OwnershipError::Elsewhere { .. })
        ),
        "claimed by B first"
    );
    let (mut alice, _session) = player(&a, "alice").await;
    let board = alice.exchange(call_in(3, "board")).await;
    assert_eq!(text(&board), "11", "{board:#}");
    moves_on(&mut alice, 4).await;
    assert_eq!(a.running_instances().await, Vec::<u64>::new());
    assert_eq!(b.running_instances().await, [id]);
}

/// `InProcessPeers` whose probes of instances never answer, as a bus that hangs.
struct StuckProbes(InProcessPeers);

impl Peers for StuckProbes {
    fn serve(&self, to: PeerAddress) -> PeerFuture<Inbox> {
        self.0.serve(to)
    }

    fn request(&self, to: PeerAddress, body: Vec<u8>, timeout: Duration) -> PeerFuture<Vec<u8>> {
        self.0.request(to, body, timeout)
    }

    fn served(&self, to: PeerAddress) -> PeerFuture<bool> {
        match to {
            PeerAddress::Instance(_) => Box::pin(std::future::pending()),
            PeerAddress::Principal(_) => self.0.served(to),
        }
    }

    fn max_message(&self) -> usize {
        self.0.max_message()
    }
}

#[actix::test]
async fn a_probe_that_never_answers_holds_up_no_read_and_is_given_up_in_time() {
    let store = Arc::new(MemoryStore::new());
    let home = server(&store, &InProcessPeers::new(), true);
    let (id, before) = played_and_released(&home).await;
    let a = server_on(
        &store,
        Some(Arc::new(StuckProbes(InProcessPeers::new()))),
        false,
    );

    // Her first use is answered at once, her game linked and not ended; a call to it is
    // "retry, nothing ran" while nobody runs it. Another principal's first use goes on.
    let (mut alice, _session) = player(&a, "alice").await;
    let list = alice
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    assert_eq!(listed(&list), (listed(&before).0, vec![]), "{list:#}");
    let refused = alice.exchange(call_in(3, "board")).await;
    assert_eq!(
        refused["error"]["data"],
        json!({"retryable": true, "ran": false}),
        "{refused:#}"
    );
    let (mut bob, _bobs) = player(&a, "bob").await;
    let list = bob
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    assert!(list.get("result").is_some(), "{list:#}");

    // An adoption waiting on the probe gives up within its bound: nothing ran.
    let asked = std::time::Instant::now();
    let refused = within(a.adopt_instance(id)).await;
    assert!(
        matches!(
            refused,
            Err(OwnershipError::Peers {
                source: mcpl_server::PeerError::TimedOut(_),
                ..
            })
        ),
        "{refused:?}"
    );
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(a.running_instances().await, Vec::<u64>::new());
}

/// `InProcessPeers` whose first probe of an instance fails, as a bus that drops a request.
struct FlakyProbe(InProcessPeers, std::sync::atomic::AtomicBool);

impl Peers for FlakyProbe {
    fn serve(&self, to: PeerAddress) -> PeerFuture<Inbox> {
        self.0.serve(to)
    }

    fn request(&self, to: PeerAddress, body: Vec<u8>, timeout: Duration) -> PeerFuture<Vec<u8>> {
        self.0.request(to, body, timeout)
    }

    fn served(&self, to: PeerAddress) -> PeerFuture<bool> {
        let first = matches!(to, PeerAddress::Instance(_))
            && !self.1.swap(true, std::sync::atomic::Ordering::SeqCst);
        if first {
            let down = mcpl_server::PeerError::Down("a dropped probe".into());
            return Box::pin(std::future::ready(Err(down)));
        }
        self.0.served(to)
    }

    fn max_message(&self) -> usize {
        self.0.max_message()
    }
}

#[actix::test]
async fn an_adoption_the_peers_could_not_decide_is_tried_again() {
    let store = Arc::new(MemoryStore::new());
    let home = server(&store, &InProcessPeers::new(), true);
    let (id, _) = played_and_released(&home).await;
    let flaky = FlakyProbe(InProcessPeers::new(), Default::default());
    let a = server_on(&store, Some(Arc::new(flaky)), false);

    // Her first use: the probe fails, nothing is adopted; asked again after 1 s, it is.
    let (mut alice, _session) = player(&a, "alice").await;
    runs(&a, id).await;
    moves_on(&mut alice, 3).await;
}

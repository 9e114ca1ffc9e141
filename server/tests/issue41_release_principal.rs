//! Issue #41 (`docs/ownership.md` §1, §4): a principal's actor stopped without ending
//! anything (`Server::release_principal`, what a node does with a principal whose lease
//! it lost): her sessions close, her memory is freed, her game goes on where it runs, and
//! her next first use on another server over the same store reads her from her record —
//! every link kept — and reaches the game, which tells her there, once.
//!
//! Two servers in one process on one [`MemoryStore`], reaching each other through
//! [`InProcessPeers`], with `issue41_remote.rs`'s game against a bot; raw JSON on real
//! sockets. Nothing sleeps: every wait is for a message, an answer or a watch.

use crate::issue41_remote::{call_in, player, server, server_on, text, until};

use mcpl_server::{InProcessPeers, MemoryStore, OwnershipError, Server};
use mcpl_testkit::msg::{open, request};
use mcpl_testkit::within;
use serde_json::{Value, json};
use std::sync::Arc;

/// The instances open in a `toolsets/list`, and its ended records.
fn listed(list: &Value) -> (Value, Value) {
    (
        list["result"]["open"].clone(),
        list["result"]["ended"].clone(),
    )
}

/// Waits until `server` has no live session.
async fn no_session(server: &Server) {
    let mut sessions = server.watch_sessions();
    within(sessions.wait_for(|n| *n == 0))
        .await
        .expect("the server stays");
}

#[actix::test]
async fn a_released_principal_runs_nowhere_here_and_her_next_use_elsewhere_sees_everything_kept() {
    let store = Arc::new(MemoryStore::new());
    let peers = InProcessPeers::new();
    let a = server(&store, &peers, true);
    let b = server(&store, &peers, false);
    let (mut alice, _session) = player(&a, "alice").await;
    let opened = alice.exchange(open(1, "duel", Some("d1"), None)).await;
    assert!(opened.get("result").is_some(), "{opened:#}");
    alice.send(call_in(2, "move")).await;
    assert_eq!(text(&until(&mut alice, 2).await.response), "11");
    let before = alice
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    let id = a.running_instances().await[0];

    a.release_principal("alice").await.expect("released");
    // Her session closed, her actor gone; the game goes on here.
    no_session(&a).await;
    assert_eq!(a.principal_count(), 0, "her memory freed");
    assert_eq!(a.running_instances().await, [id]);
    assert!(
        matches!(
            a.release_principal("alice").await,
            Err(OwnershipError::PrincipalNotRunning { principal }) if principal == "alice"
        ),
        "released once"
    );

    // Her next use, on B: her record read, linked to the game on A, nothing ended.
    let (mut alice, _session) = player(&b, "alice").await;
    let list = alice
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    assert_eq!(listed(&list), listed(&before), "the same view: {list:#}");
    let board = alice.exchange(call_in(3, "board")).await;
    assert_eq!(text(&board), "11", "{board:#}");
    // The game reaches her on B: her move's push, the bot's answer and its hint, once.
    alice.send(call_in(4, "move")).await;
    let told = until(&mut alice, 4).await;
    assert_eq!(told.pushes, ["You played: 12"], "told once");
    assert_eq!(told.shown, ["resign"], "the hint of the bot's step");
    assert_eq!(text(&told.response), "22");
    assert_eq!(b.running_instances().await, Vec::<u64>::new());
    assert_eq!(a.running_instances().await, [id], "it runs on A alone");
    assert_eq!(a.principal_count(), 0, "nothing of her started on A again");
}

#[actix::test]
async fn a_move_in_flight_when_she_is_released_is_kept_and_seen_on_her_next_server() {
    let store = Arc::new(MemoryStore::new());
    let peers = InProcessPeers::new();
    let a = server(&store, &peers, true);
    let b = server(&store, &peers, false);
    let (mut alice, _session) = player(&a, "alice").await;
    alice.exchange(open(1, "duel", Some("d1"), None)).await;
    // Released once her move ran, while the bot's answer may be under way (a timer of no
    // time): kept before the release is answered, or reaching her where she runs next.
    alice.send(call_in(2, "move")).await;
    let pushed = alice.recv().await;
    assert_eq!(pushed["method"], "push/event", "{pushed:#}");
    a.release_principal("alice").await.expect("released");
    no_session(&a).await;

    let (mut alice, _session) = player(&b, "alice").await;
    let board = alice.exchange(call_in(3, "board")).await;
    assert_eq!(
        text(&board),
        "11",
        "her move and the bot's, kept: {board:#}"
    );
    let list = alice
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    assert_eq!(
        list["result"]["ended"],
        json!([]),
        "nothing ended: {list:#}"
    );
}

#[actix::test]
async fn a_principal_is_released_only_when_she_runs_here_and_her_games_can_reach_her() {
    let store = Arc::new(MemoryStore::new());
    // No peers: her game here could reach her nowhere else.
    let a = server_on(&store, None, true);
    assert!(
        matches!(
            a.release_principal("alice").await,
            Err(OwnershipError::PrincipalNotRunning { .. })
        ),
        "nobody runs before the first session"
    );
    let (mut alice, _session) = player(&a, "alice").await;
    alice.exchange(open(1, "duel", Some("d1"), None)).await;
    let id = a.running_instances().await[0];
    match a.release_principal("alice").await {
        Err(OwnershipError::PrincipalLinked {
            principal,
            instance,
        }) => assert_eq!((principal.as_str(), instance), ("alice", id)),
        other => panic!("refused: {other:?}"),
    }
    assert!(
        matches!(
            a.release_principal("bob").await,
            Err(OwnershipError::PrincipalNotRunning { principal }) if principal == "bob"
        ),
        "bob never came"
    );
    // Nothing changed: she plays on here.
    alice.send(call_in(2, "move")).await;
    assert_eq!(text(&until(&mut alice, 2).await.response), "11");
    assert_eq!(a.principal_count(), 1);

    // Without a game here she is released on a server without peers too, and her next
    // use reads her again from her record.
    let (mut bob, _bob) = player(&a, "bob").await;
    let list = bob
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    assert_eq!(list["result"]["open"], json!([]), "{list:#}");
    a.release_principal("bob").await.expect("released");
    let mut sessions = a.watch_sessions();
    within(sessions.wait_for(|n| *n == 1))
        .await
        .expect("the server stays");
    assert_eq!(a.principal_count(), 1, "alice alone");
}

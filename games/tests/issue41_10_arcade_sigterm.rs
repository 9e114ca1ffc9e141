//! Issue #41, ownership per principal (`docs/ownership.md` §1, §4): a node stopped by
//! SIGTERM hands what it runs on at once. `mcpl-arcade serve … --ownership principal`
//! nodes on one private PostgreSQL and one private `nats-server`:
//!
//! - a node SIGTERMed while the bot thinks on a Go game, and nobody comes back: it exits
//!   0, its game's lease let expire (the row kept) and alice's deleted; a survivor's next
//!   scan adopts the game — within a scan period of the exit, far sooner than the lease
//!   would have expired — and takes alice's lease, the bot's owed move is made there, and
//!   alice, later, on a hinted connection landing on the other survivor, finds every
//!   acknowledged move and is told the end once (`issue41_09`'s support). Before, the
//!   node deleted the game's lease without releasing the game: no scan ever found it;
//! - a node SIGTERMed with alice's WebSocket connection open: it closes her connection
//!   and exits 0; her host reconnects through a survivor, lands where her lease now is,
//!   and finds her game with every acknowledged move.
//!
//! Nothing sleeps: the test awaits the nodes' log lines, the exit, the answers, and each
//! write of the game's record (a trigger's `NOTIFY`).

use crate::issue41_02_arcade_nodes::{signal, stones};
use crate::issue41_04_arcade_tunnels::{hinted, ws_of};
use crate::issue41_06_arcade_principals::holder;
use crate::issue41_09_arcade_scan::{
    BotThinking, adopted_by, bot_thinking_on_n1, comes_back_and_resigns, instances_held, moves_of,
    node, written_with,
};
use crate::support::text_of;
use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use mcpl_testkit::within_named;
use nix::sys::signal::Signal;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::process::Child;

/// The lease's time to live here: a scan every 2 s. Long enough that an adoption within
/// it of the node's exit is the scan finding a lease let expire at once, not one that
/// ran out.
const TTL_MS: &str = "6000";

/// SIGTERMs `child` by its own id and waits for its exit: a clean stop, status 0.
async fn terminated(child: &mut Child, name: &str) -> Instant {
    signal(child, Signal::SIGTERM);
    let status = within_named(&format!("{name} stopping on SIGTERM"), child.wait())
        .await
        .expect("the node's status");
    assert!(status.success(), "{name} exits 0 on SIGTERM: {status:?}");
    Instant::now()
}

#[actix::test]
async fn issue41_10_a_node_stopped_by_sigterm_hands_its_game_on_to_a_scan_while_nobody_comes_back()
{
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    // n1's bot thinks 6 s a move: the node stops (the call in flight given a second,
    // then everything released) well before it answers.
    let BotThinking {
        mut n1,
        n2,
        n3,
        game,
        acknowledged,
        mut writes,
        unanswered,
    } = bot_thinking_on_n1(&url, &bus, TTL_MS, "6000").await;
    let exited = terminated(&mut n1.child, "n1").await;
    n1.said("node \"n1\" stopped: 1 players and 1 games handed on (0 games stopped unreleased")
        .await;
    // The call in flight got its answer before n1 exited — alice released, her session
    // closed under it: "it may have run, read the state again" — and not the bot's move,
    // which n1 never made (the adopter makes it).
    let (status, _, answer) = unanswered
        .await
        .expect("the call's task")
        .expect("G7's call answered before n1 exited");
    eprintln!("G7's call, in flight at the stop: {status} {answer:#}");
    assert!(answer.get("result").is_none(), "{answer:#}");
    let said = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(said.contains("stopped before answering"), "{answer:#}");
    assert!(instances_held(&url, "n1").await.is_empty(), "{game}");

    // Nobody comes back: a scan on n2 or n3 adopts the game within a scan period of the
    // exit, taking alice's lease (her row deleted at the stop: nobody serves her).
    let (adopter, other) = adopted_by(&n2, &n3, game).await;
    let adopted_after = exited.elapsed();
    let moved = written_with(&mut writes, &url, game, 6).await;
    let bot_moved_after = exited.elapsed();
    assert_eq!(moves_of(&moved), 6, "the bot's owed move: {moved:#}");
    eprintln!(
        "the game adopted by {} {adopted_after:?} after n1's exit (lease {TTL_MS} ms, a scan every third of it), the bot's move kept {bot_moved_after:?} after it",
        adopter.name
    );
    assert!(
        adopted_after < Duration::from_millis(TTL_MS.parse().unwrap()),
        "handed on at once, not left to expire: {adopted_after:?}"
    );
    assert!(
        instances_held(&url, &adopter.name)
            .await
            .contains(&game.to_string())
    );
    assert_eq!(holder(&url, "alice").await, adopter.name);
    comes_back_and_resigns(adopter, other, &acknowledged).await;
}

#[actix::test]
async fn issue41_10_a_node_stopped_by_sigterm_closes_her_stream_and_her_host_lands_on_a_survivor() {
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let ttl = crate::issue41_02_arcade_nodes::TTL_MS;
    let mut n1 = node("n1", &url, &bus, ttl, &[]).await;
    let n2 = node("n2", &url, &bus, ttl, &[]).await;
    let _n3 = node("n3", &url, &bus, ttl, &[]).await;

    // alice on n1, her connection open: a Go game, a move, the bot's answer.
    let mut alice = hinted(ws_of(&n1), "alice").await;
    assert_eq!(holder(&url, "alice").await, "n1");
    let opened = alice.open("go", Some("g1"), json!({})).await;
    assert!(opened.get("result").is_some(), "{opened:#}");
    let played = alice
        .call("go_play", json!({"move": "E5"}), Some("g1"))
        .await;
    assert!(text_of(&played).contains("bot (White) "), "{played:#}");
    let board = text_of(&alice.call("go_board", json!({}), Some("g1")).await);
    assert_eq!(
        (stones(&board, 'X'), stones(&board, 'O')),
        (1, 1),
        "{board}"
    );

    terminated(&mut n1.child, "n1").await;
    // Her connection closed by n1 as it released her.
    let closed = alice.closed().await;
    eprintln!("alice's connection on n1: {closed:?}");

    // Her host reconnects through n2: she is served on a survivor, her game there with
    // every acknowledged move, and goes on.
    let mut again = hinted(ws_of(&n2), "alice").await;
    let served = holder(&url, "alice").await;
    assert_ne!(served, "n1", "a survivor serves her");
    let listed = again.list().await;
    assert!(
        listed["open"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["toolset"] == "go" && o["instance"] == "g1"),
        "{listed:#}"
    );
    let now = text_of(&again.call("go_board", json!({}), Some("g1")).await);
    assert_eq!(now, board, "nothing lost");
    let played = again
        .call("go_play", json!({"move": "C3"}), Some("g1"))
        .await;
    assert!(text_of(&played).contains("bot (White) "), "{played:#}");
}

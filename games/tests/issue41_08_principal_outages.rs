//! Issue #41's "Done when" outages with ownership per principal (`docs/ownership.md` §1,
//! §5 slice 5): three `mcpl-arcade serve … --ownership principal` nodes on one private
//! PostgreSQL and one private `nats-server`, both started by the test on loopback (the
//! coarse mode's versions are `issue41_02_arcade_nodes` and `issue41_03_arcade_outages`,
//! whose helpers these reuse). Shown from outside:
//!
//! - NATS killed and started again mid-game, alice and bob on different nodes in one
//!   tic-tac-toe game, each on a hinted WebSocket connection to her own node: a move made
//!   meanwhile beside the game is answered at once, and its push reaches the other player
//!   once the bus is back (the game's outbox sends it again); play goes on to the end,
//!   every push told once, every hint change's rev the next one (the test host checks);
//! - PostgreSQL stopped as `pg_ctl stop -m immediate` stops it, mid Go game, and started
//!   again: calls in flight meanwhile get a clear, retryable error; the node serving alice,
//!   whose leases can no longer be renewed, stops (status 3); once the database is back her
//!   next request takes her and her game over on another node, from the same position,
//!   and play goes on; what was acknowledged is in the database (that node killed too,
//!   the third reads every acknowledged move back);
//! - two nodes hammering one principal at once, first while nobody holds her lease (the
//!   two race for it: one takes it, the other forwards) and then with her stream of
//!   changes open: her versions stay consecutive (each told once, in order), no change is
//!   lost, as the node loading the committed records after her node's death states them.
//!
//! Every process is stopped by its own id; nothing sleeps: the test awaits the nodes' log
//! lines and the answers, each within the testkit's limit.

use crate::issue41_02_arcade_nodes::{
    Node, TTL_MS, board, go_g1_against_the_bot, gone_from_the_bus, is_retryable, modern,
    play_some_point, post, stones, try_post,
};
use crate::issue41_03_arcade_outages::{Listen, entries_of, hinted, hints, version};
use crate::issue41_04_arcade_tunnels::{challenged_and_accepted, hinted as hinted_ws, ws_of};
use crate::issue41_06_arcade_principals::{holder, runs_instances};
use crate::issue41_07_arcade_principal_takeover::until_served;
use crate::support::text_of;

use mcpl_games::arcade::node::SERVED_BY;
use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use serde_json::{Value, json};
use std::collections::BTreeSet;

const PLAY: &str = "tictactoe_play";

/// Three nodes serving by principal, listening for WebSocket too.
async fn ws_nodes(pg: &str, nats: &str) -> Vec<Node> {
    let mut nodes = Vec::new();
    for name in ["n1", "n2", "n3"] {
        let node =
            Node::start_with(name, pg, nats, TTL_MS, true, &["--ownership", "principal"]).await;
        node.said("serves the players whose leases it holds").await;
        nodes.push(node);
    }
    nodes
}

/// A lease of five seconds for the tests that run many steps on a database under load
/// (a renewal waits at most half of it): with the shared one and every test binary busy,
/// a renewal may miss its bound and its node stop, as it must, before the test is done.
const LONG_TTL_MS: &str = "5000";

/// Three nodes serving by principal with a lease of `ttl_ms`.
async fn principal_nodes(pg: &str, nats: &str, ttl_ms: &str) -> Vec<Node> {
    let mut nodes = Vec::new();
    for name in ["n1", "n2", "n3"] {
        let node =
            Node::start_with(name, pg, nats, ttl_ms, false, &["--ownership", "principal"]).await;
        node.said("serves the players whose leases it holds").await;
        nodes.push(node);
    }
    nodes
}

/// How many of `pushes` have a text starting with `start`.
fn told(pushes: &[Value], start: &str) -> usize {
    pushes
        .iter()
        .filter(|p| text_of(p).starts_with(start))
        .count()
}

#[actix::test]
async fn issue41_08_nats_killed_and_started_again_mid_game_pushes_resume_each_told_once() {
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let mut nats = Nats::start().expect("a private nats-server starts");
    let nodes = ws_nodes(&pg.url(), &nats.url()).await;
    // alice on n1, bob on n2: each one's lease where her connection landed.
    let mut alice = hinted_ws(ws_of(&nodes[0]), "alice").await;
    let mut bob = hinted_ws(ws_of(&nodes[1]), "bob").await;
    assert_eq!(holder(&pg.url(), "alice").await, "n1");
    assert_eq!(holder(&pg.url(), "bob").await, "n2");

    // The game runs on n1, beside alice; bob reaches it over NATS.
    challenged_and_accepted(&mut alice, &mut bob).await;
    let r = alice.call(PLAY, json!({"move": "a1"}), Some("t1")).await;
    assert!(text_of(&r).starts_with("You played a1."), "{r:#}");
    let push = bob.next_push().await;
    assert!(
        text_of(&push).starts_with("alice (X) played a1."),
        "{push:#}"
    );
    let r = bob.call(PLAY, json!({"move": "b1"}), Some("t1")).await;
    assert!(text_of(&r).starts_with("You played b1."), "{r:#}");
    let push = alice.next_push().await;
    assert!(text_of(&push).starts_with("bob (O) played b1."), "{push:#}");

    // NATS dies; every node says so.
    nats.stop();
    for n in &nodes {
        n.said(&format!("node {:?} lost its connection to NATS", n.name))
            .await;
    }
    // alice's move, on her node beside the game, is answered at once and kept; bob's
    // push cannot cross meanwhile.
    let r = alice.call(PLAY, json!({"move": "a2"}), Some("t1")).await;
    assert!(text_of(&r).starts_with("You played a2."), "{r:#}");

    // NATS comes back on its port: the push reaches bob, and play goes on to the end.
    nats.restart().expect("nats-server starts again");
    for n in &nodes {
        n.said(&format!("node {:?} is connected to NATS again", n.name))
            .await;
    }
    let push = bob.next_push().await;
    assert!(
        text_of(&push).starts_with("alice (X) played a2."),
        "{push:#}"
    );
    assert!(
        bob.hints.is_visible(PLAY, "t1"),
        "his turn, told by the push"
    );
    let r = bob.call(PLAY, json!({"move": "b2"}), Some("t1")).await;
    assert!(text_of(&r).starts_with("You played b2."), "{r:#}");
    let push = alice.next_push().await;
    assert!(text_of(&push).starts_with("bob (O) played b2."), "{push:#}");
    let won = alice.call(PLAY, json!({"move": "a3"}), Some("t1")).await;
    assert!(text_of(&won).contains("X (alice) wins"), "{won:#}");
    let end = bob.next_push().await;
    assert!(text_of(&end).contains("X (alice) wins"), "{end:#}");

    // Nothing told twice: after a barrier on each connection, every move's push was read
    // once (every hint change's rev was the next one: the test host checks as it reads).
    alice.quiet().await;
    bob.quiet().await;
    for cell in ["a1", "a2", "a3"] {
        let text = format!("alice (X) played {cell}.");
        assert_eq!(told(&bob.pushes, &text), 1, "{text}: {:#?}", bob.pushes);
    }
    for cell in ["b1", "b2"] {
        let text = format!("bob (O) played {cell}.");
        assert_eq!(told(&alice.pushes, &text), 1, "{text}: {:#?}", alice.pushes);
    }
    assert_eq!(bob.pushes.len(), 4, "{:#?}", bob.pushes);
    assert_eq!(alice.pushes.len(), 3, "{:#?}", alice.pushes);
    // Both read the same finished game.
    for c in [&mut alice, &mut bob] {
        let b = c.call("tictactoe_board", json!({}), Some("t1")).await;
        let text = text_of(&b);
        assert!(
            text.contains("has ended: X (alice) wins") && text.contains("Moves: a1 b1 a2 b2 a3"),
            "{text}"
        );
    }
    assert_eq!(holder(&pg.url(), "alice").await, "n1");
    assert_eq!(holder(&pg.url(), "bob").await, "n2");
}

#[actix::test]
async fn issue41_08_postgres_stopped_immediately_and_started_again_keeps_every_acknowledged_move() {
    let mut pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let mut nodes = principal_nodes(&url, &bus, LONG_TTL_MS).await;
    let http = reqwest::Client::new();
    let on_n1 = nodes[0].url.clone();
    // alice's first request lands on n1: her lease and her Go game there.
    let before = go_g1_against_the_bot(&http, &on_n1).await;
    assert_eq!(holder(&url, "alice").await, "n1");

    // PostgreSQL stops at once (SIGQUIT to its postmaster, by its id). A move on her node
    // and a read landing on another one meanwhile: each refused, clearly and retryable.
    pg.stop_immediate();
    let play = modern(
        3,
        "tools/call",
        json!({"name": "go_play", "arguments": {"move": "G7", "instance": "g1"}}),
    );
    let read = modern(
        4,
        "tools/call",
        json!({"name": "go_board", "arguments": {"instance": "g1"}}),
    );
    let (moved, elsewhere) = tokio::join!(
        try_post(&http, &on_n1, "alice", &play),
        post(&http, &nodes[1].url, "alice", &read)
    );
    // The move: refused by her node, which cannot keep it — unless her node stopped
    // that very moment (below), its connection closed before the request was read or
    // answered; either way it is not kept (the board after shows it).
    let mut answers = vec![(4, elsewhere)];
    match moved {
        Ok(answer) => answers.push((3, answer)),
        Err(e) => eprintln!("the move's connection closed as n1 stopped: {e}"),
    }
    for (i, (status, headers, refused)) in answers {
        eprintln!("a call with the database down: {status} {refused}");
        assert_eq!(refused["id"], i, "{refused:#}");
        assert_eq!(refused["error"]["data"]["retryable"], true, "{refused:#}");
        assert!(refused["error"]["message"].is_string(), "{refused:#}");
        assert!(
            status == 200 || is_retryable(status, &headers, &refused),
            "{status} {refused:#}"
        );
    }

    // Her node cannot renew its leases: it stops at once (status 3), saying why — its
    // server takes no change once a commit failed, and its actors cannot be stopped one
    // by one — rather than serve on refusing every change.
    let code = mcpl_testkit::within(nodes[0].child.wait())
        .await
        .expect("n1 ends");
    assert_eq!(code.code(), Some(3), "{code:?}");
    nodes[0].said("stops serving at once").await;
    assert!(!nodes[1].has_said("stops serving") && !nodes[2].has_said("stops serving"));

    // PostgreSQL comes back on its port: alice's next request, landing on n2, waits out
    // her lease there and takes her over, her game with her, from the same position (the
    // refused move not in it); play goes on.
    pg.restart().expect("PostgreSQL starts again");
    let on_n2 = nodes[1].url.clone();
    let (result, by, refused) = until_served(
        &http,
        &on_n2,
        "alice",
        "go_board",
        json!({"instance": "g1"}),
    )
    .await;
    eprintln!("her board read again on {by}, {refused} request(s) refused meanwhile");
    assert_eq!(by, "n2");
    assert_eq!(text_of(&result), before, "the same position");
    runs_instances(&nodes[1], 2).await;
    let (mv, r) = play_some_point(&http, &on_n2).await;
    assert!(r.contains("bot (White) "), "the bot answers again: {r}");
    let now = board(&http, &on_n2).await;
    assert_eq!(stones(&now, 'X'), 3, "{mv} is kept: {now}");
    assert_eq!(holder(&url, "alice").await, "n2");

    // What was acknowledged is in the database: n2 dies too, and n3, where her next
    // request lands, takes her over and reads the same board back.
    nodes[1].child.kill().await.expect("n2 is killed");
    gone_from_the_bus(&nats, "n2").await;
    let (result, by, _) = until_served(
        &http,
        &nodes[2].url,
        "alice",
        "go_board",
        json!({"instance": "g1"}),
    )
    .await;
    assert_eq!(by, "n3");
    assert_eq!(text_of(&result), now, "every acknowledged move, read back");
}

/// A hinted `toolsets/list` as alice through `url` (a full statement), asked again while
/// it is refused retryable (her node died: held until her lease expires): the answer.
async fn statement_until_served(http: &reqwest::Client, url: &str) -> Value {
    let body = hinted(90, "toolsets/list", json!({}), 0);
    mcpl_testkit::within_named("alice's statement served", async {
        loop {
            let (status, headers, answer) = post(http, url, "alice", &body).await;
            if is_retryable(status, &headers, &answer)
                || answer["error"]["data"]["retryable"] == true
            {
                continue;
            }
            assert_eq!(status, 200, "{answer:#}");
            break answer;
        }
    })
    .await
}

/// The open entries of `h`: (instance, stamp), sorted.
fn open_entries(h: &Value) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = h["toolsets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["state"] == "open" && e["toolset"] == "go")
        .map(|e| {
            (
                e["instance"].as_str().unwrap_or("").to_owned(),
                e["v"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    v.sort();
    v
}

/// `EACH` opens of alice's Go games named `{prefix}a{i}` through `a` and `{prefix}b{i}`
/// through `b`, all at once, each holding every change up to `since`: each instance with
/// its answer and the node that served it.
async fn hammer(
    http: &reqwest::Client,
    (a, b): (&str, &str),
    prefix: &str,
    each: usize,
    since: u64,
) -> Vec<(String, Value, String)> {
    let opens = (0..each).flat_map(|i| {
        [
            (a.to_owned(), format!("{prefix}a{i}")),
            (b.to_owned(), format!("{prefix}b{i}")),
        ]
    });
    let sent = opens.enumerate().map(|(id, (url, instance))| {
        let http = http.clone();
        async move {
            let body = hinted(
                10 + id as i64,
                "toolsets/open",
                json!({"toolset": "go", "instance": instance}),
                since,
            );
            let (status, headers, answer) = post(&http, &url, "alice", &body).await;
            assert_eq!(status, 200, "{instance}: {answer:#}");
            assert!(answer["result"].is_object(), "{instance}: {answer:#}");
            let by = headers
                .get(SERVED_BY)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            // Its own entry, open, stamped no later than the result.
            let own = entries_of(hints(&answer), &instance);
            assert_eq!(own.len(), 1, "{instance}: {answer:#}");
            assert_eq!(own[0]["state"], "open", "{answer:#}");
            assert!(
                own[0]["v"].as_u64().unwrap() <= version(&answer),
                "{answer:#}"
            );
            (instance, answer, by)
        }
    });
    futures_util::future::join_all(sent).await
}

#[actix::test]
async fn issue41_08_two_nodes_hammering_one_principal_keep_her_versions_consecutive() {
    const EACH: usize = 6;
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let mut nodes = principal_nodes(&url, &bus, LONG_TTL_MS).await;
    let http = reqwest::Client::new();
    let (on_n2, on_n3) = (nodes[1].url.clone(), nodes[2].url.clone());

    // Nobody holds alice: her first requests land on n2 and n3 at once. One node takes
    // her lease; every request, wherever it landed, is served there.
    let raced = hammer(&http, (&on_n2, &on_n3), "r", EACH, 0).await;
    let first = holder(&url, "alice").await;
    assert!(first == "n2" || first == "n3", "{first}");
    for (instance, _, by) in &raced {
        assert_eq!(by, &first, "{instance} served on her node");
    }
    let statement = |id| hinted(id, "toolsets/list", json!({}), 0);
    let (_, _, told) = post(&http, &on_n2, "alice", &statement(2)).await;
    let base = version(&told);
    let stated = open_entries(hints(&told));
    // Every open there, each at a version of its own.
    let names: BTreeSet<&str> = stated.iter().map(|(i, _)| i.as_str()).collect();
    let stamps: BTreeSet<u64> = stated.iter().map(|(_, v)| *v).collect();
    assert_eq!(names.len(), 2 * EACH, "{told:#}");
    assert_eq!(stamps.len(), 2 * EACH, "no version given twice: {told:#}");
    for (instance, _, _) in &raced {
        assert!(names.contains(instance.as_str()), "{instance}: {told:#}");
    }

    // Her stream of changes (a third node's request, carried to hers), then 2 × EACH
    // opens more at once through n2 and n3: one serves them, the other forwards.
    let mut changes = Listen::open(&http, &nodes[0].url, "alice", base).await;
    let answers = hammer(&http, (&on_n2, &on_n3), "s", EACH, base).await;
    for (instance, _, by) in &answers {
        assert_eq!(by, &first, "{instance} served on her node");
    }
    let (_, _, told) = post(&http, &on_n3, "alice", &statement(3)).await;
    assert_eq!(hints(&told)["statement"], true, "{told:#}");
    let last = version(&told);

    // The stream told every version from `base` to the last, each once, in order.
    let mut versions = Vec::new();
    let mut opened_on_stream = BTreeSet::new();
    while versions.last() != Some(&last) {
        let m = changes.next().await;
        if m["method"] != "notifications/mcpl/hints" {
            continue;
        }
        let v = m["params"]["version"].as_u64().expect("a version");
        for e in m["params"]["toolsets"].as_array().into_iter().flatten() {
            assert_eq!(e["v"], v, "{m:#}");
            if e["state"] == "open" {
                opened_on_stream.insert(e["instance"].as_str().unwrap_or("").to_owned());
            }
        }
        versions.push(v);
    }
    let expected: Vec<u64> = (base..=last).collect();
    assert_eq!(
        versions, expected,
        "alice's versions, as her stream told them"
    );
    let instances: BTreeSet<String> = answers.iter().map(|(i, _, _)| i.clone()).collect();
    assert_eq!(opened_on_stream, instances, "every open told on the stream");
    eprintln!(
        "{} opens through two nodes, served on {first}: versions {base}..={last}",
        raced.len() + answers.len()
    );

    // The committed records say the same: her node is killed, and the node her next
    // request reaches takes her over and states every open, each stamped again past
    // every version the dead one may have told.
    let at = nodes.iter().position(|n| n.name == first).unwrap();
    nodes[at].child.kill().await.expect("her node is killed");
    gone_from_the_bus(&nats, &first).await;
    let loaded = statement_until_served(&http, &nodes[0].url).await;
    let jumped = last + mcpl_server::RESTART_GAP;
    assert!(version(&loaded) >= jumped, "{loaded:#}");
    let reloaded = open_entries(hints(&loaded));
    let kept: BTreeSet<&str> = reloaded.iter().map(|(i, _)| i.as_str()).collect();
    let all: BTreeSet<&str> = raced
        .iter()
        .chain(&answers)
        .map(|(i, _, _)| i.as_str())
        .collect();
    assert_eq!(kept, all, "every open kept: {loaded:#}");
    assert!(reloaded.iter().all(|(_, v)| *v >= jumped), "{loaded:#}");
    assert_eq!(holder(&url, "alice").await, "n1");
}

/// How many times `node` has said it lists `n` players online on other nodes.
fn times_listing(node: &Node, n: usize) -> usize {
    let line = format!("lists {n} player(s) online on other nodes");
    node.log
        .borrow()
        .iter()
        .filter(|l| l.contains(&line))
        .count()
}

/// Waits until `node` says, once more than `before` times, that it lists `n` players
/// online on other nodes.
async fn lists_elsewhere(node: &Node, n: usize, before: usize) {
    let line = format!("lists {n} player(s) online on other nodes");
    let mut log = node.log.clone();
    mcpl_testkit::within_named(&format!("node {} saying {line:?}", node.name), async {
        log.wait_for(|lines| lines.iter().filter(|l| l.contains(&line)).count() > before)
            .await
            .expect("the node's log is read");
    })
    .await;
}

/// The lobby's "players online" across nodes (`games/src/arcade/node/online.rs`): alice
/// connected to n1 (her lease there) and bob to n2 (his there), each one's lobby lists
/// the other online; once alice's connection closes, bob's lobby no longer lists her.
#[actix::test]
async fn issue41_08_a_player_online_on_one_node_is_listed_online_by_the_others_lobby() {
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let mut nodes = Vec::new();
    for name in ["n1", "n2"] {
        let node = Node::start_with(
            name,
            &url,
            &bus,
            TTL_MS,
            true,
            &["--ownership", "principal"],
        )
        .await;
        node.said("serves the players whose leases it holds").await;
        nodes.push(node);
    }
    let mut alice = hinted_ws(ws_of(&nodes[0]), "alice").await;
    let mut bob = hinted_ws(ws_of(&nodes[1]), "bob").await;
    assert_eq!(holder(&url, "alice").await, "n1");
    assert_eq!(holder(&url, "bob").await, "n2");

    // Each node hears of the other's player at its next rounds.
    lists_elsewhere(&nodes[0], 1, 0).await;
    lists_elsewhere(&nodes[1], 1, 0).await;
    let games = bob.call("games", json!({}), None).await;
    assert_eq!(
        games["structuredContent"]["online"],
        json!(["alice"]),
        "{games:#}"
    );
    assert_eq!(games["structuredContent"]["online_total"], 1, "{games:#}");
    assert!(
        text_of(&games).contains("Players online: alice."),
        "{games:#}"
    );
    let games = alice.call("games", json!({}), None).await;
    assert_eq!(
        games["structuredContent"]["online"],
        json!(["bob"]),
        "{games:#}"
    );

    // alice goes away: n2 lists nobody elsewhere from its next rounds on.
    let before = times_listing(&nodes[1], 0);
    drop(alice);
    lists_elsewhere(&nodes[1], 0, before).await;
    let games = bob.call("games", json!({}), None).await;
    assert_eq!(games["structuredContent"]["online"], json!([]), "{games:#}");
    assert_eq!(games["structuredContent"]["online_total"], 0, "{games:#}");
    // Her lease lives on on n1 (her games and kept toolsets are there): a lease is not
    // being online.
    assert_eq!(holder(&url, "alice").await, "n1");
}

//! Issue #41, ownership per principal (`docs/ownership.md` §4, §5 slice 4): the node
//! serving a player dies mid-game and her next request takes her over on another node,
//! her game with her. Three `mcpl-arcade serve … --ownership principal` nodes on one
//! private PostgreSQL and one private `nats-server`, behind the tests' round-robin
//! balancer; shown from outside, in raw modern POSTs:
//!
//! - alice's first request lands on n1, which takes her lease; she opens Go against the
//!   bot there (leased by n1 as an instance) and plays two moves, each answered;
//! - n1 is SIGKILLed by its own pid; the balancer, its health check failing, sends on to
//!   n2 and n3 only;
//! - her next request, wherever it lands, is held by that node until her lease expires,
//!   then takes it there: the node reads her record on her first use, finds nobody serving
//!   her game (`mcpl.i.ID`) and adopts it from its record, leasing it as an instance;
//! - the same board, every acknowledged move; her next move is answered by the bot, and
//!   her game ends there.
//!
//! Nothing sleeps: the test awaits the nodes' log lines and the answers, each within the
//! testkit's limit.

use crate::issue41_02_arcade_nodes::{
    Node, balancer, board, call, call_raw, fresh_connections, go_g1_against_the_bot,
    gone_from_the_bus, is_retryable, modern, play_some_point, post, stones,
};
use crate::issue41_06_arcade_principals::{holder, principal_node, runs_instances};
use crate::support::text_of;
use mcpl_cluster::PgLeases;
use mcpl_cluster::leases::INSTANCE;
use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use serde_json::json;

/// The ids of the instances `node` has said it runs under their leases.
fn leased_instances(node: &Node) -> Vec<String> {
    leased_in(&node.log.borrow())
}

/// The ids of the instances a node's log `lines` say it runs under their leases.
fn leased_in(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| {
            let (_, rest) = l.split_once(" runs instance ")?;
            Some(rest.split_whitespace().next()?.to_owned())
        })
        .collect()
}

/// Who holds the instance `id`'s lease now, as the lease table says.
async fn instance_holder(pg: &str, id: &str) -> Option<String> {
    let (pg, id) = (pg.to_owned(), id.to_owned());
    tokio::task::spawn_blocking(move || {
        let leases = PgLeases::connect(&pg, "the-test").expect("the leases");
        leases
            .holder(INSTANCE, &id)
            .expect("the lease table answers")
            .map(|h| h.node)
    })
    .await
    .unwrap()
}

/// A tool call as `who` through `url`, asked again while it is refused retryable (the
/// node's `503` while her lease is another's, or the arcade's "retry" while her game is
/// not reached yet: either says the request did not run), until it succeeds: its result,
/// the node that served it, and how many times it was refused.
pub(crate) async fn until_served(
    http: &reqwest::Client,
    url: &str,
    who: &str,
    tool: &str,
    args: serde_json::Value,
) -> (serde_json::Value, String, usize) {
    let body = modern(7, "tools/call", json!({"name": tool, "arguments": args}));
    let mut refused = 0;
    mcpl_testkit::within_named(&format!("{who}'s {tool} served"), async {
        loop {
            let (status, headers, answer) = post(http, url, who, &body).await;
            if is_retryable(status, &headers, &answer)
                || answer["error"]["data"]["retryable"] == true
            {
                assert_eq!(answer["error"]["data"]["ran"], false, "{answer:#}");
                refused += 1;
                continue;
            }
            assert_eq!(status, 200, "{who} {tool}: {answer:#}");
            assert_ne!(
                answer["result"]["isError"], true,
                "{who} {tool}: {answer:#}"
            );
            let by = headers
                .get("mcpl-served-by")
                .and_then(|v| v.to_str().ok())
                .expect("the node that served it")
                .to_owned();
            break (answer["result"].clone(), by, refused);
        }
    })
    .await
}

/// `tool` called as `who` through `url` until `told` says its result shows what another
/// node's change brought (an invitation, a turn): such a change crosses NATS after the
/// answer that made it, so the first call may come too early. Asked again at once, each
/// call awaited, within the testkit's limit; a call refused otherwise fails the test.
async fn until_told(
    http: &reqwest::Client,
    url: &str,
    who: &str,
    tool: &str,
    args: serde_json::Value,
    told: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    mcpl_testkit::within_named(
        &format!("{who}'s {tool} showing another node's change"),
        async {
            loop {
                let (status, answer) = call_raw(http, url, who, tool, args.clone()).await;
                assert_eq!(status, 200, "{who} {tool}: {answer:#}");
                let result = &answer["result"];
                if result["isError"] == true {
                    // Not her turn yet, as her node knows it: the move that gave it her is
                    // on its way.
                    assert!(
                        text_of(result).contains("is not available right now"),
                        "{who} {tool}: {answer:#}"
                    );
                    continue;
                }
                if told(result) {
                    break result.clone();
                }
            }
        },
    )
    .await
}

#[actix::test]
async fn issue41_07_a_players_node_killed_mid_game_her_next_request_takes_her_and_her_game_over() {
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let mut nodes = Vec::new();
    for name in ["n1", "n2", "n3"] {
        nodes.push(principal_node(name, &url, &bus).await);
    }
    let front = balancer(nodes.iter().map(|n| n.url.clone()).collect()).await;
    let http = fresh_connections();

    // Her first request lands on n1: her lease there, her game opened there.
    let before = go_g1_against_the_bot(&http, &front).await;
    assert_eq!(holder(&url, "alice").await, "n1");
    // Her lobby and her game, each leased by n1.
    runs_instances(&nodes[0], 2).await;
    let on_n1 = leased_instances(&nodes[0]);

    // n1 dies; the balancer sends on to the others only.
    let killed_at = std::time::Instant::now();
    nodes[0].child.kill().await.expect("n1 is killed (SIGKILL)");
    gone_from_the_bus(&nats, "n1").await;
    let survivors = balancer(vec![nodes[1].url.clone(), nodes[2].url.clone()]).await;

    // Her next request: held until her lease expires, then served where it landed. A
    // request the takeover cannot answer yet (her game linked by reference, nobody
    // serving it until it is adopted) is refused retryable, the request not run, and
    // asked again.
    let (result, by, refused) = until_served(
        &http,
        &survivors,
        "alice",
        "go_board",
        json!({"instance": "g1"}),
    )
    .await;
    let after = text_of(&result);
    eprintln!(
        "alice's game read on {by} {:?} after the kill, {refused} request(s) refused meanwhile",
        killed_at.elapsed()
    );
    assert_eq!(after, before, "the same position, every acknowledged move");
    assert_ne!(by, "n1");
    assert_eq!(holder(&url, "alice").await, by, "her lease moved with her");
    let owner = nodes.iter().find(|n| n.name == by).unwrap();

    // Her game runs there now, leased by her new node: of the instances n1 leased, the
    // one her new node leases too (her lobby is started anew there, a new instance).
    let mut log = owner.log.clone();
    mcpl_testkit::within_named(&format!("{by} leasing her game"), async {
        log.wait_for(|lines| leased_in(lines).iter().any(|id| on_n1.contains(id)))
            .await
            .expect("the node's log is read");
    })
    .await;
    let game: Vec<String> = leased_instances(owner)
        .into_iter()
        .filter(|id| on_n1.contains(id))
        .collect();
    assert_eq!(game.len(), 1, "{game:?} of {on_n1:?}");
    assert_eq!(
        instance_holder(&url, &game[0]).await.as_deref(),
        Some(by.as_str())
    );

    // Her next move works, wherever it lands, answered by the bot; every move is kept.
    let (mv, r) = play_some_point(&http, &survivors).await;
    assert!(r.contains("bot (White) "), "the bot answers again: {r}");
    let now = board(&http, &survivors).await;
    assert_eq!(stones(&now, 'X'), 3, "{mv} is kept: {now}");
    assert_eq!(holder(&url, "alice").await, by, "served on one node");
    let other = nodes[1..].iter().find(|n| n.name != by).unwrap();
    assert!(
        leased_instances(other).iter().all(|id| !on_n1.contains(id)),
        "{} never ran her game",
        other.name
    );
}

/// The two-player variant: alice (her lease on n1) and bob (his on n2) play tic-tac-toe
/// opened on n1; n1 is SIGKILLed mid-game. alice's next request takes her over on
/// another node, which adopts the game; bob, whose node lives, reaches it there (over
/// NATS, or on his own node); the game goes on for both to the end, every move kept.
#[actix::test]
async fn issue41_07_a_shared_games_node_killed_the_game_goes_on_for_both_players() {
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let mut nodes = Vec::new();
    for name in ["n1", "n2", "n3"] {
        nodes.push(principal_node(name, &url, &bus).await);
    }
    let http = fresh_connections();
    let (n1, n2) = (nodes[0].url.clone(), nodes[1].url.clone());
    // Each one's first request: alice's lease on n1, bob's on n2.
    call(&http, &n1, "alice", "games", json!({})).await;
    call(&http, &n2, "bob", "games", json!({})).await;
    let sent = call(
        &http,
        &n1,
        "alice",
        "challenge",
        json!({"opponent": "bob", "game": "tictactoe"}),
    )
    .await;
    let game = sent["structuredContent"]["instance"]
        .as_str()
        .unwrap()
        .to_owned();
    // The invitation reaches bob's node over NATS after alice's answer.
    until_told(&http, &n2, "bob", "games", json!({}), |games| {
        games["structuredContent"]["challenges"][0]["instance"] == json!(game)
    })
    .await;
    call(
        &http,
        &n2,
        "bob",
        "toolset_open",
        json!({"toolset": "tictactoe", "instance": game}),
    )
    .await;
    assert_eq!(holder(&url, "alice").await, "n1");
    assert_eq!(holder(&url, "bob").await, "n2");
    for (who, at, cell) in [
        ("alice", &n1, "a1"),
        ("bob", &n2, "b1"),
        ("alice", &n1, "a2"),
    ] {
        // Each move reaches the other player's node over NATS after its answer.
        until_told(
            &http,
            at,
            who,
            "tictactoe_play",
            json!({"move": cell, "instance": game}),
            |_| true,
        )
        .await;
    }

    nodes[0].child.kill().await.expect("n1 is killed (SIGKILL)");
    gone_from_the_bus(&nats, "n1").await;
    let survivors = balancer(vec![nodes[1].url.clone(), nodes[2].url.clone()]).await;

    // alice comes back: her lease and her game taken over where her request landed.
    let (read, by, _) = until_served(
        &http,
        &survivors,
        "alice",
        "tictactoe_board",
        json!({"instance": game}),
    )
    .await;
    let text = text_of(&read);
    assert!(
        text.contains(" 2 (X)| . | .")
            && text.contains(" 1  X | O | .")
            && text.contains("O to move"),
        "every move kept: {text}"
    );
    assert_eq!(holder(&url, "alice").await, by);
    // bob, still on n2, plays on; alice wins; both read the same end.
    let (_, bob_by, _) = until_served(
        &http,
        &survivors,
        "bob",
        "tictactoe_play",
        json!({"move": "b2", "instance": game}),
    )
    .await;
    assert_eq!(bob_by, "n2", "bob is still served on his node");
    let (won, _, _) = until_served(
        &http,
        &survivors,
        "alice",
        "tictactoe_play",
        json!({"move": "a3", "instance": game}),
    )
    .await;
    assert!(text_of(&won).contains("X (alice) wins"), "{won:#}");
    for who in ["bob", "alice"] {
        let (b, _, _) = until_served(
            &http,
            &survivors,
            who,
            "tictactoe_board",
            json!({"instance": game}),
        )
        .await;
        let text = text_of(&b);
        assert!(
            text.contains("has ended: X (alice) wins") && text.contains("Moves: a1 b1 a2 b2 a3"),
            "{who}: {text}"
        );
    }
}

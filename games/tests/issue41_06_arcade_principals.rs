//! Issue #41, ownership per principal (`docs/ownership.md` §1, §5 slice 4): three
//! `mcpl-arcade serve … --ownership principal` nodes on one private PostgreSQL and one
//! private `nats-server`, behind the tests' round-robin balancer (one node per
//! connection). Every node serves; each player is served on the node holding her lease,
//! taken by the node her first request reached. Shown from outside, in raw modern POSTs:
//!
//! - alice and bob, every request of theirs landing on the next node in turn, are each
//!   served on their own node — the one the lease table names, a different one each —
//!   whichever node a request reached (the answer's `mcpl-served-by` says where it ran);
//! - they play tic-tac-toe through the lobby to the end: alice's challenge opens the game
//!   on her node (leased there as an instance), bob finds it in his lobby on his node (the
//!   invitation crossed over NATS), joins it and plays from his node; the end is told to
//!   both, and each reads the same finished game.
//!
//! Nothing sleeps: the test awaits the nodes' log lines and the answers.

use crate::issue41_02_arcade_nodes::{Node, TTL_MS, balancer, fresh_connections, modern, post};
use crate::support::text_of;
use mcpl_cluster::PgLeases;
use mcpl_cluster::leases::PRINCIPAL;
use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use serde_json::{Value, json};

/// A node serving the principals whose leases it holds.
async fn principal_node(name: &str, pg: &str, nats: &str) -> Node {
    let node = Node::start_with(name, pg, nats, TTL_MS, false, &["--ownership", "principal"]).await;
    node.said(&format!(
        "node {name:?} serves the players whose leases it holds"
    ))
    .await;
    node
}

/// Who holds `who`'s lease now, as the lease table says.
async fn holder(pg: &str, who: &str) -> String {
    let (pg, name) = (pg.to_owned(), who.to_owned());
    tokio::task::spawn_blocking(move || {
        let leases = PgLeases::connect(&pg, "the-test").expect("the leases");
        leases
            .holder(PRINCIPAL, &name)
            .expect("the lease table answers")
            .map(|h| h.node)
    })
    .await
    .unwrap()
    .unwrap_or_else(|| panic!("nobody holds a lease of the principal {who:?}"))
}

/// A tool call through `front` as `who`: its result (it must succeed) and the node that
/// served it.
async fn call(
    http: &reqwest::Client,
    front: &str,
    who: &str,
    tool: &str,
    args: Value,
) -> (Value, String) {
    let body = modern(1, "tools/call", json!({"name": tool, "arguments": args}));
    let (status, headers, answer) = post(http, front, who, &body).await;
    assert_eq!(status, 200, "{who} {tool} {args}: {answer:#}");
    let result = answer["result"].clone();
    assert_eq!(result["resultType"], "complete", "{tool}: {answer:#}");
    assert_ne!(result["isError"], true, "{who} {tool} {args}: {answer:#}");
    let served_by = headers
        .get("mcpl-served-by")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("{who} {tool}: no mcpl-served-by in {headers:?}"))
        .to_owned();
    (result, served_by)
}

#[actix::test]
async fn issue41_06_each_player_served_on_her_own_node_and_a_game_played_across_nodes() {
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let mut nodes = Vec::new();
    for name in ["n1", "n2", "n3"] {
        nodes.push(principal_node(name, &url, &bus).await);
    }
    let front = balancer(nodes.iter().map(|n| n.url.clone()).collect()).await;
    let http = fresh_connections();
    // Where each request landed: the balancer sends each connection to the next node.
    let mut landed = 0usize;
    let mut served = Vec::new();
    let mut each = async |who: &str, tool: &str, args: Value| {
        let (result, by) = call(&http, &front, who, tool, args).await;
        served.push((who.to_owned(), nodes[landed % 3].name.clone(), by));
        landed += 1;
        result
    };

    // Their first requests: alice's lands on n1, bob's on n2; each takes the lease there.
    each("alice", "games", json!({})).await;
    each("bob", "games", json!({})).await;
    let (alice_at, bob_at) = (holder(&url, "alice").await, holder(&url, "bob").await);
    assert_eq!((alice_at.as_str(), bob_at.as_str()), ("n1", "n2"));

    // alice challenges bob; bob finds the challenge and accepts it.
    let sent = each(
        "alice",
        "challenge",
        json!({"opponent": "bob", "game": "tictactoe"}),
    )
    .await;
    let game = sent["structuredContent"]["instance"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text_of(&sent).contains("You challenged bob to Tic-tac-toe; you play X"),
        "{sent:#}"
    );
    let games = each("bob", "games", json!({})).await;
    assert_eq!(
        games["structuredContent"]["challenges"][0]["instance"],
        json!(game),
        "{games:#}"
    );
    let joined = each(
        "bob",
        "toolset_open",
        json!({"toolset": "tictactoe", "instance": game}),
    )
    .await;
    assert!(text_of(&joined).contains("vs alice"), "{joined:#}");
    // The game runs on alice's node, leased there.
    nodes[0].said("runs instance").await;
    assert!(!nodes[1].has_said("runs instance") && !nodes[2].has_said("runs instance"));

    // X takes column a; O answers in column b; each move from wherever it lands.
    let moves = [
        ("alice", "a1"),
        ("bob", "b1"),
        ("alice", "a2"),
        ("bob", "b2"),
    ];
    for (who, cell) in moves {
        each(
            who,
            "tictactoe_play",
            json!({"move": cell, "instance": game}),
        )
        .await;
    }
    let last = each(
        "alice",
        "tictactoe_play",
        json!({"move": "a3", "instance": game}),
    )
    .await;
    assert!(text_of(&last).contains("X (alice) wins"), "{last:#}");
    // bob, on his node, is told the end; both read the same finished game.
    let mut boards = Vec::new();
    for who in ["bob", "alice"] {
        let b = each(who, "tictactoe_board", json!({"instance": game})).await;
        let text = text_of(&b);
        assert!(
            text.contains("has ended: X (alice) wins") && text.contains("Moves: a1 b1 a2 b2 a3"),
            "{who}: {text}"
        );
        boards.push(text);
    }

    // Every request was served on its principal's node, wherever it landed; and each
    // landed on every node, so most went through another node first.
    for (who, at, by) in &served {
        let owner = if who == "alice" { &alice_at } else { &bob_at };
        assert_eq!(by, owner, "{who}'s request landing on {at} ran on {by}");
    }
    for who in ["alice", "bob"] {
        let landed_on: std::collections::BTreeSet<&str> = served
            .iter()
            .filter(|(w, _, _)| w == who)
            .map(|(_, at, _)| at.as_str())
            .collect();
        assert_eq!(landed_on.len(), 3, "{who} landed on {landed_on:?}");
    }
    // The leases did not move while they played.
    assert_eq!(holder(&url, "alice").await, alice_at);
    assert_eq!(holder(&url, "bob").await, bob_at);
}

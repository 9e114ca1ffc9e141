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

use crate::issue41_02_arcade_nodes::{
    Node, TTL_MS, balancer, fresh_connections, modern, post, signal,
};
use crate::issue41_04_arcade_tunnels::challenged_and_accepted;
use crate::support::text_of;
use mcpl_cluster::PgLeases;
use mcpl_cluster::leases::PRINCIPAL;
use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use serde_json::{Value, json};

/// A node serving the principals whose leases it holds.
pub(crate) async fn principal_node(name: &str, pg: &str, nats: &str) -> Node {
    let node = Node::start_with(name, pg, nats, TTL_MS, false, &["--ownership", "principal"]).await;
    node.said(&format!(
        "node {name:?} serves the players whose leases it holds"
    ))
    .await;
    node
}

/// Who holds `who`'s lease now, as the lease table says.
pub(crate) async fn holder(pg: &str, who: &str) -> String {
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

/// Waits until `node` has said it runs `n` instances under their leases (taken as they
/// opened, before they were first written).
pub(crate) async fn runs_instances(node: &Node, n: usize) {
    let mut log = node.log.clone();
    let count = |lines: &Vec<String>| lines.iter().filter(|l| l.contains("runs instance")).count();
    mcpl_testkit::within_named(
        &format!("node {} leasing {n} instances", node.name),
        async {
            log.wait_for(|lines| count(lines) >= n)
                .await
                .expect("the node's log is read");
        },
    )
    .await;
    assert_eq!(count(&node.log.borrow()), n, "{}", node.name);
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
    // Every instance runs on its opener's node, leased there: alice's two (the game
    // among them) on n1, bob's one on n2, none on n3, where nobody is served.
    runs_instances(&nodes[0], 2).await;
    runs_instances(&nodes[1], 1).await;
    assert!(!nodes[2].has_said("runs instance"));

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

/// Legacy WebSocket connections routed by principal: alice's first connection lands on
/// n1 and bob's on n2, each node taking the lease of the principal it got first and
/// serving the connection itself; alice's challenge (a game on n1) reaches bob's socket
/// on n2 as a push, and each move the other's — across nodes, through the SDK's peers.
/// A second connection of alice landing on n3 is carried to n1 through a tunnel and
/// reads the game there.
#[actix::test]
async fn issue41_06_websocket_connections_go_to_their_principals_node() {
    use crate::issue41_04_arcade_tunnels::{hinted, tunnel_counts, ws_of};
    const PLAY: &str = "tictactoe_play";
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let mut nodes = Vec::new();
    for name in ["n1", "n2", "n3"] {
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
    let mut alice = hinted(ws_of(&nodes[0]), "alice").await;
    let mut bob = hinted(ws_of(&nodes[1]), "bob").await;
    assert_eq!(holder(&url, "alice").await, "n1");
    assert_eq!(holder(&url, "bob").await, "n2");

    challenged_and_accepted(&mut alice, &mut bob).await;
    for (is_alice, cell) in [(true, "a1"), (false, "b1"), (true, "a2"), (false, "b2")] {
        let (mover, other, name) = if is_alice {
            (&mut alice, &mut bob, "alice (X)")
        } else {
            (&mut bob, &mut alice, "bob (O)")
        };
        let r = mover.call(PLAY, json!({"move": cell}), Some("t1")).await;
        assert!(
            text_of(&r).starts_with(&format!("You played {cell}.")),
            "{r:#}"
        );
        let push = other.next_push().await;
        assert!(
            text_of(&push).starts_with(&format!("{name} played {cell}.")),
            "{push:#}"
        );
    }
    // Nothing was tunneled yet: each connection was served where it landed.
    for n in &nodes {
        assert_eq!(tunnel_counts(n).await, (200, 0, 0), "{}", n.name);
    }
    // alice again, landing on n3: carried to n1, where her game is.
    let mut again = hinted(ws_of(&nodes[2]), "alice").await;
    let board = again.call("tictactoe_board", json!({}), Some("t1")).await;
    assert!(
        text_of(&board).contains("You play X against bob. Your move."),
        "{board:#}"
    );
    assert_eq!(tunnel_counts(&nodes[2]).await, (200, 1, 0));
    assert_eq!(tunnel_counts(&nodes[0]).await, (200, 0, 1));
    // Her winning move on n1 is told to bob on n2.
    let won = alice.call(PLAY, json!({"move": "a3"}), Some("t1")).await;
    assert!(text_of(&won).contains("X (alice) wins"), "{won:#}");
    let told = bob.next_push().await;
    assert!(text_of(&told).contains("X (alice) wins"), "{told:#}");
}

/// A node paused past a principal's lease (SIGSTOP: a long pause, a cut network) loses
/// it: a request for her landing on another node meanwhile is refused retryable (the
/// holder does not answer), the next one takes her lease there; the paused node, woken,
/// finds the lease lost at its next renewal, says so, and from then on forwards her
/// requests to her new node rather than serving them.
#[actix::test]
async fn issue41_06_a_node_paused_past_a_players_lease_stops_serving_her() {
    use nix::sys::signal::Signal;
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let n1 = principal_node("n1", &url, &bus).await;
    let n2 = principal_node("n2", &url, &bus).await;
    let http = reqwest::Client::new();
    let (_, by) = call(&http, &n1.url, "alice", "games", json!({})).await;
    assert_eq!(
        (by.as_str(), holder(&url, "alice").await.as_str()),
        ("n1", "n1")
    );

    signal(&n1.child, Signal::SIGSTOP);
    // On n2: forwarded to n1, which does not answer within the forward's time-out
    // (past the lease's time to live): refused, retryable, "may have run".
    let body = modern(1, "tools/call", json!({"name": "games", "arguments": {}}));
    let (status, headers, answer) = post(&http, &n2.url, "alice", &body).await;
    assert!(
        status == 503
            && headers.get("retry-after").is_some()
            && answer["error"]["data"]["retryable"] == true,
        "{status} {answer:#}"
    );
    // The next one finds the lease expired: n2 takes it and serves her.
    let (_, by) = call(&http, &n2.url, "alice", "games", json!({})).await;
    assert_eq!(
        (by.as_str(), holder(&url, "alice").await.as_str()),
        ("n2", "n2")
    );

    signal(&n1.child, Signal::SIGCONT);
    n1.said("node \"n1\" lost the principal lease \"alice\": it serves it no more")
        .await;
    let (_, by) = call(&http, &n1.url, "alice", "games", json!({})).await;
    assert_eq!(by, "n2", "n1 forwards her requests to her new node");
    assert_eq!(holder(&url, "alice").await, "n2");
}

/// A node paused past a principal's lease stops her actor once woken (`docs/ownership.md`
/// §1): alice's WebSocket connection, served on n1, is closed by n1 as soon as it finds her
/// lease lost — n1 no longer runs her, so nothing of her is served there twice — and her
/// host, reconnecting through n1, is carried to n2, where her lease now is, and finds the
/// lobby there. Fails without the stop: her connection on n1 stays open, served by an
/// actor of her that no lease covers.
#[actix::test]
async fn issue41_06_a_node_paused_past_a_players_lease_stops_her_actor_once_woken() {
    use crate::issue41_04_arcade_tunnels::{hinted, tunnel_counts, ws_of};
    use nix::sys::signal::Signal;
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let mut nodes = Vec::new();
    for name in ["n1", "n2"] {
        let args = ["--ownership", "principal"];
        let node = Node::start_with(name, &url, &bus, TTL_MS, true, &args).await;
        node.said("serves the players whose leases it holds").await;
        nodes.push(node);
    }
    let (n1, n2) = (&nodes[0], &nodes[1]);
    let mut alice = hinted(ws_of(n1), "alice").await;
    assert_eq!(holder(&url, "alice").await, "n1");

    signal(&n1.child, Signal::SIGSTOP);
    // Her requests on n2 wait out her lease (the first refused retryable), then take it.
    let http = reqwest::Client::new();
    let body = modern(1, "tools/call", json!({"name": "games", "arguments": {}}));
    let (status, _, answer) = post(&http, &n2.url, "alice", &body).await;
    assert_eq!(status, 503, "{answer:#}");
    let (_, by) = call(&http, &n2.url, "alice", "games", json!({})).await;
    assert_eq!(by, "n2");

    signal(&n1.child, Signal::SIGCONT);
    n1.said("node \"n1\" lost the principal lease \"alice\": it serves it no more")
        .await;
    n1.said("node \"n1\" stopped the principal \"alice\": its lease was lost")
        .await;
    // Her connection on n1 closed by n1: her actor there is gone.
    let closed = alice.closed().await;
    println!("alice's connection on n1: {closed:?}");
    // Her host reconnects through n1: carried to n2, where she is served.
    let mut again = hinted(ws_of(n1), "alice").await;
    let games = again.call("games", json!({}), None).await;
    assert_ne!(games["result"]["isError"], true, "{games:#}");
    assert_eq!(tunnel_counts(n1).await.1, 1, "n1 tunneled her to n2");
    assert_eq!(holder(&url, "alice").await, "n2");
}

/// A player an invitation brings to a node while she runs nowhere is started there only
/// under her lease (`docs/ownership.md` §1): alice, on n1, challenges bob, who has used
/// no node yet; n1 takes bob's lease before starting him (the lease table names n1), so
/// bob's first request, landing on n2, is served on n1, where the challenge waits for
/// him. Without the placement, n1 started bob holding no lease of him, and n2 took it
/// for his request and read him there, without the challenge.
#[actix::test]
async fn issue41_06_an_invitee_running_nowhere_is_started_under_her_lease() {
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let n1 = principal_node("n1", &url, &bus).await;
    let n2 = principal_node("n2", &url, &bus).await;
    let http = reqwest::Client::new();
    let (sent, by) = call(
        &http,
        &n1.url,
        "alice",
        "challenge",
        json!({"opponent": "bob", "game": "tictactoe"}),
    )
    .await;
    assert_eq!(by, "n1");
    let game = sent["structuredContent"]["instance"]
        .as_str()
        .unwrap_or_else(|| panic!("{sent:#}"))
        .to_owned();
    n1.said("node \"n1\" starts \"bob\", brought by an invitation, under the lease it holds")
        .await;
    assert_eq!(
        holder(&url, "bob").await,
        "n1",
        "bob leased where he started"
    );

    let (games, by) = call(&http, &n2.url, "bob", "games", json!({})).await;
    assert_eq!(by, "n1", "bob served under his lease");
    assert_eq!(
        games["structuredContent"]["challenges"][0]["instance"],
        json!(game),
        "{games:#}"
    );
}

//! Issue #41, ownership per principal (`docs/ownership.md` §4, §5 slice 4): no game left
//! behind by a dead node, and no game written under no lease. `mcpl-arcade serve …
//! --ownership principal` nodes on one private PostgreSQL and one private `nats-server`:
//!
//! - a game is leased by its node as it opens — the lease table names the node right
//!   after the open is answered, though the node's next renewal is far off;
//! - a node running a Go game against the bot is SIGKILLed while the bot thinks, and
//!   nobody comes back: a surviving node's scan of the expired instance leases adopts the
//!   game (taking its player's lease too: the game runs beside her), and the bot's owed
//!   move is made there; later the player, on a hinted connection landing on another
//!   node, finds the game open with every acknowledged move and the bot's, resigns, and
//!   is told the end once — in the answer, then as the same ended record on a new
//!   connection.
//!
//! Nothing sleeps: the test awaits the nodes' log lines, the answers, and each write of
//! the game's record (a trigger's `NOTIFY` on the test's own database).

use crate::issue41_02_arcade_nodes::{
    Node, call, go_g1_against_the_bot, gone_from_the_bus, modern, post, stones, try_post,
};
use crate::issue41_04_arcade_tunnels::{hinted, ws_of};
use crate::issue41_06_arcade_principals::holder;
use crate::support::{ended_id, text_of};
use mcpl_cluster::leases::INSTANCE;
use mcpl_cluster::{PgLeases, PgStore};
use mcpl_server::Store;
use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use mcpl_testkit::within_named;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// A node serving the principals whose leases it holds, with a lease of `ttl_ms`, its
/// WebSocket front listening too, and `extra` arguments.
pub(crate) async fn node(name: &str, pg: &str, nats: &str, ttl_ms: &str, extra: &[&str]) -> Node {
    let mut args = vec!["--ownership", "principal"];
    args.extend_from_slice(extra);
    let node = Node::start_with(name, pg, nats, ttl_ms, true, &args).await;
    node.said(&format!(
        "node {name:?} serves the players whose leases it holds"
    ))
    .await;
    node
}

/// The instances `node` holds the leases of now, as the lease table says.
pub(crate) async fn instances_held(pg: &str, node: &str) -> Vec<String> {
    let (pg, node) = (pg.to_owned(), node.to_owned());
    tokio::task::spawn_blocking(move || {
        PgLeases::connect(&pg, "the-test")
            .expect("the leases")
            .held_by(&node, INSTANCE)
            .expect("the lease table answers")
    })
    .await
    .unwrap()
}

/// Instance `id`'s record in the store, as JSON.
pub(crate) async fn record(pg: &str, id: u64) -> Value {
    let pg = pg.to_owned();
    tokio::task::spawn_blocking(move || {
        let store = PgStore::connect(&pg).expect("the store");
        let bytes = store
            .load_instance(id)
            .expect("the store answers")
            .unwrap_or_else(|| panic!("no record of instance {id}"));
        serde_json::from_slice(&bytes).expect("a record is JSON")
    })
    .await
    .unwrap()
}

/// How many moves a Go table's record says were played (its logic's state).
pub(crate) fn moves_of(record: &Value) -> u64 {
    record["logic"]["Kept"]["state"]["moves"]
        .as_u64()
        .unwrap_or_else(|| panic!("no moves in {record:#}"))
}

/// The id of each instance written from now on, each time it is written: a trigger on
/// the store's `instances` table (made by the nodes) notifies a connection of the test's
/// own, read on a thread of its own until the database goes.
pub(crate) async fn instance_writes(pg: &str) -> mpsc::UnboundedReceiver<u64> {
    let pg = pg.to_owned();
    let (tx, rx) = mpsc::unbounded_channel();
    let (ready, made) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        use postgres::fallible_iterator::FallibleIterator as _;
        let mut client = postgres::Client::connect(&pg, postgres::NoTls).expect("connect");
        client
            .batch_execute(
                "CREATE FUNCTION mcpl_test_written() RETURNS trigger LANGUAGE plpgsql AS $$ \
                 BEGIN PERFORM pg_notify('mcpl_test_instances', NEW.key::text); RETURN NEW; END $$; \
                 CREATE TRIGGER mcpl_test_written AFTER INSERT OR UPDATE ON instances \
                 FOR EACH ROW EXECUTE FUNCTION mcpl_test_written(); \
                 LISTEN mcpl_test_instances;",
            )
            .expect("the trigger is made");
        let _ = ready.send(());
        let mut notes = client.notifications();
        let mut notes = notes.blocking_iter();
        while let Ok(Some(note)) = notes.next() {
            let Ok(id) = note.payload().parse() else {
                continue;
            };
            if tx.send(id).is_err() {
                break;
            }
        }
    });
    within_named("the trigger made", made)
        .await
        .expect("the trigger's thread");
    rx
}

/// Awaits the writes of instance `id` until its record has `moves` moves: the record
/// then.
pub(crate) async fn written_with(
    writes: &mut mpsc::UnboundedReceiver<u64>,
    pg: &str,
    id: u64,
    moves: u64,
) -> Value {
    within_named(
        &format!("instance {id} written with {moves} moves"),
        async {
            loop {
                let r = record(pg, id).await;
                if moves_of(&r) >= moves {
                    return r;
                }
                while writes.recv().await.expect("the trigger's connection") != id {}
            }
        },
    )
    .await
}

#[actix::test]
async fn issue41_09_a_game_is_leased_by_its_node_before_its_open_is_answered() {
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let url = pg.url();
    // A lease of a minute: the node renews (and, before the start hook, leased what it
    // runs) every 20 s, the first time as it starts — never between an open and the read
    // just after it.
    let n1 = node("n1", &url, &nats.url(), "60000", &[]).await;
    let http = reqwest::Client::new();
    call(&http, &n1.url, "alice", "games", json!({})).await;
    let lobby = instances_held(&url, "n1").await;
    assert_eq!(lobby.len(), 1, "her lobby, leased as it opened: {lobby:?}");
    let opened = call(
        &http,
        &n1.url,
        "alice",
        "toolset_open",
        json!({"toolset": "go", "instance": "g1"}),
    )
    .await;
    assert!(text_of(&opened).contains("g1"), "{opened:#}");
    let now = instances_held(&url, "n1").await;
    assert_eq!(
        now.len(),
        2,
        "her game leased before the open was answered: {now:?}"
    );
    let game: u64 = now
        .iter()
        .find(|k| !lobby.contains(k))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(record(&url, game).await["toolset"], "go");
    // Its first move is answered under that lease, still n1's.
    let r = call(
        &http,
        &n1.url,
        "alice",
        "go_play",
        json!({"move": "E5", "instance": "g1"}),
    )
    .await;
    assert!(text_of(&r).contains("bot (White) "), "{r:#}");
    assert_eq!(instances_held(&url, "n1").await, now);
    n1.said(&format!(
        "node \"n1\" runs instance {game} under its lease (opened here)"
    ))
    .await;
}

#[actix::test]
async fn issue41_09_a_dead_nodes_game_against_the_bot_is_adopted_by_a_scan_while_nobody_comes_back()
{
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let ttl = crate::issue41_02_arcade_nodes::TTL_MS;
    let BotThinking {
        mut n1,
        n2,
        n3,
        game,
        acknowledged,
        mut writes,
        unanswered,
    } = bot_thinking_on_n1(&url, &bus, ttl, "3000").await;
    n1.child.kill().await.expect("n1 is killed (SIGKILL)");
    let killed_at = std::time::Instant::now();
    unanswered.abort();
    let at_kill = record(&url, game).await;
    assert_eq!(
        moves_of(&at_kill),
        5,
        "the bot had not answered G7 on n1: {at_kill:#}"
    );
    gone_from_the_bus(&nats, "n1").await;

    // Nobody comes back. A scan on n2 or n3 adopts the game once its lease expired — or
    // her lobby first (its lease expired first), whose adoption reads alice there, her
    // first use there adopting her game: either way, the scan's doing.
    let (adopter, other) = adopted_by(&n2, &n3, game).await;
    let adopted_after = killed_at.elapsed();
    // The bot's owed move, made there: the record moves on while nobody is connected.
    let moved = written_with(&mut writes, &url, game, 6).await;
    let bot_moved_after = killed_at.elapsed();
    assert_eq!(moves_of(&moved), 6, "{moved:#}");
    eprintln!(
        "the game adopted by {} {adopted_after:?} after the kill (lease {ttl} ms, a scan every third of it), the bot's move kept {bot_moved_after:?} after it",
        adopter.name
    );
    // Leased there, and alice with it: her game runs beside her.
    assert!(
        instances_held(&url, &adopter.name)
            .await
            .contains(&game.to_string())
    );
    assert!(
        !instances_held(&url, &other.name)
            .await
            .contains(&game.to_string())
    );
    assert_eq!(holder(&url, "alice").await, adopter.name);
    comes_back_and_resigns(adopter, other, &acknowledged).await;
}

/// Three nodes (n1's bot thinking `bot_ms` a move) on `url` and `bus`, and alice's Go
/// game against the bot on n1: two moves each answered, her third kept and the bot
/// thinking on it, its call not answered yet.
pub(crate) struct BotThinking {
    pub(crate) n1: Node,
    pub(crate) n2: Node,
    pub(crate) n3: Node,
    /// Her game's id, leased by n1.
    pub(crate) game: u64,
    /// The board as her second move's answer showed it.
    pub(crate) acknowledged: String,
    /// Each write of an instance's record from now on.
    pub(crate) writes: mpsc::UnboundedReceiver<u64>,
    /// Her third move's call, not answered yet (an error: no answer came).
    pub(crate) unanswered:
        tokio::task::JoinHandle<Result<(u16, reqwest::header::HeaderMap, Value), reqwest::Error>>,
}

/// See [`BotThinking`].
pub(crate) async fn bot_thinking_on_n1(
    url: &str,
    bus: &str,
    ttl: &str,
    bot_ms: &str,
) -> BotThinking {
    let n1 = node("n1", url, bus, ttl, &["--bot-time-ms", bot_ms]).await;
    let n2 = node("n2", url, bus, ttl, &[]).await;
    let n3 = node("n3", url, bus, ttl, &[]).await;
    let mut writes = instance_writes(url).await;

    // alice plays on n1: two moves, each answered by the bot.
    let http = reqwest::Client::new();
    let acknowledged = go_g1_against_the_bot(&http, &n1.url).await;
    assert_eq!(holder(url, "alice").await, "n1");
    let mut game = None;
    for id in instances_held(url, "n1").await {
        let id: u64 = id.parse().unwrap();
        if record(url, id).await["toolset"] == "go" {
            game = Some(id);
        }
    }
    let game = game.expect("her game, leased by n1");

    // Her third move: kept, the bot thinking on it.
    let body = modern(
        9,
        "tools/call",
        json!({"name": "go_play", "arguments": {"move": "G7", "instance": "g1"}}),
    );
    let (h, to) = (http.clone(), n1.url.clone());
    let unanswered = tokio::spawn(async move { try_post(&h, &to, "alice", &body).await });
    let kept = written_with(&mut writes, url, game, 5).await;
    assert_eq!(moves_of(&kept), 5);
    BotThinking {
        n1,
        n2,
        n3,
        game,
        acknowledged,
        writes,
        unanswered,
    }
}

/// Waits until n2 or n3 says it runs instance `game` under its lease: the adopter and
/// the other, which must not have said so.
pub(crate) async fn adopted_by<'a>(n2: &'a Node, n3: &'a Node, game: u64) -> (&'a Node, &'a Node) {
    let line = format!("runs instance {game} under its lease");
    let (mut l2, mut l3) = (n2.log.clone(), n3.log.clone());
    within_named("a scan adopting the game", async {
        tokio::select! {
            _ = l2.wait_for(|lines| lines.iter().any(|l| l.contains(&line))) => {}
            _ = l3.wait_for(|lines| lines.iter().any(|l| l.contains(&line))) => {}
        }
    })
    .await;
    let (adopter, other) = if n2.has_said(&line) {
        (n2, n3)
    } else {
        (n3, n2)
    };
    assert!(!other.has_said(&line), "adopted once");
    (adopter, other)
}

/// alice, after her game was adopted by `adopter`, comes back on a hinted connection
/// landing on `other` (carried to hers): the game is open — adopted, no re-open — with
/// every move of `acknowledged` and G7 and the bot's answer to it, her turn; she resigns
/// and is told the end once, in the answer, and a new connection on `adopter` finds the
/// same ended record.
pub(crate) async fn comes_back_and_resigns(adopter: &Node, other: &Node, acknowledged: &str) {
    let mut alice = hinted(ws_of(other), "alice").await;
    let listed = alice.list().await;
    assert!(
        listed["open"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["toolset"] == "go" && o["instance"] == "g1"),
        "{listed:#}"
    );
    assert!(alice.hints.is_visible("go_play", "g1"), "her turn");
    let now = text_of(&alice.call("go_board", json!({}), Some("g1")).await);
    assert_eq!((stones(&now, 'X'), stones(&now, 'O')), (3, 3), "{now}");
    for (row_before, row_now) in acknowledged.lines().zip(now.lines()) {
        if row_before
            .trim_start()
            .starts_with(|c: char| c.is_ascii_digit())
        {
            for (b, n) in row_before.chars().zip(row_now.chars()) {
                assert!(b != 'X' && b != 'O' || b == n, "{acknowledged}\n{now}");
            }
        }
    }

    // She resigns: told the end once, in the answer; nothing pushed about it.
    let resigned = alice.call("go_resign", json!({}), Some("g1")).await;
    assert!(text_of(&resigned).contains("wins"), "{resigned:#}");
    let closed = alice.hints.toolset("go", "g1").expect("g1 closed").clone();
    assert_eq!(closed["state"], "closed", "{closed:#}");
    let told = closed["ended"]
        .as_str()
        .expect("its ended record's id")
        .to_owned();
    alice.quiet().await;
    assert!(
        alice
            .pushes
            .iter()
            .all(|p| ended_id(&p["params"]["hints"], "g1").is_none()),
        "{:#?}",
        alice.pushes
    );
    // A new connection (on the adopter itself) finds the same record: a host tells its
    // agent about each id once.
    let mut again = hinted(ws_of(adopter), "alice").await;
    let listed = again.list().await;
    let ended: Vec<&Value> = listed["ended"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["instance"] == "g1")
        .collect();
    assert_eq!(ended.len(), 1, "{listed:#}");
    assert_eq!(ended[0]["id"], told.as_str(), "{listed:#}");
    assert!(
        !listed["open"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["instance"] == "g1")
    );
}

/// A game whose adoption was refused after its start hook took its lease is left to a
/// scan, not to nobody (`docs/ownership.md` §4): alice's node n1 dies while another
/// server still serves her game's address (what a node whose leases lapsed does in its
/// last second, or a node paused past them and woken: stood in for by the test's own
/// subscription). Her next request takes her lease on n2; her first use there adopts her
/// game — its lease taken by the start hook — and finds it served elsewhere: refused,
/// linked there, her calls sent there. Once that server goes, a scan adopts the game
/// on n2 and her calls reach it. Without letting that lease expire (n2 released it, its
/// row deleted, once the game had not run there for a time to live), no scan found the
/// game: nobody ran it, and each of her calls to it was answered "try again" for good —
/// `sim --nodes 3 --ownership principal`'s drains that never ended (seeds 3, 879860).
#[actix::test]
async fn issue41_09_a_game_whose_adoption_was_refused_under_its_lease_is_adopted_by_a_later_scan() {
    use futures_util::StreamExt as _;
    use mcpl_cluster::NatsPeers;
    use mcpl_cluster::bus::{BusConfig, NatsBus};
    use mcpl_server::{PeerAddress, Peers as _};
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let ttl = crate::issue41_02_arcade_nodes::TTL_MS;
    let mut n1 = node("n1", &url, &bus, ttl, &[]).await;
    let n2 = node("n2", &url, &bus, ttl, &[]).await;
    let http = reqwest::Client::new();
    go_g1_against_the_bot(&http, &n1.url).await;
    let mut game = None;
    for id in instances_held(&url, "n1").await {
        let id: u64 = id.parse().unwrap();
        if record(&url, id).await["toolset"] == "go" {
            game = Some(id);
        }
    }
    let game = game.expect("her game, leased by n1");

    // A server still serving the game's address (it answers the probes; what it is sent
    // waits unanswered).
    let stale = NatsBus::connect(&bus, BusConfig::new("stale"))
        .await
        .expect("the stale server on the bus");
    let stale = NatsPeers::new(std::sync::Arc::new(stale));
    let (mut arrivals, closer) = stale
        .serve(PeerAddress::Instance(game))
        .await
        .expect("the game's address served")
        .split();
    n1.child.kill().await.expect("n1 is killed (SIGKILL)");
    gone_from_the_bus(&nats, "n1").await;

    // Her next request on n2 waits out her lease on n1, then takes it there.
    call(&http, &n2.url, "alice", "games", json!({})).await;
    assert_eq!(holder(&url, "alice").await, "n2");
    // Her calls to the game are answered "retry" while its adoption is tried, then sent
    // to the server that serves it: its adoption was refused.
    let board = modern(
        3,
        "tools/call",
        json!({"name": "go_board", "arguments": {"instance": "g1"}}),
    );
    within_named(
        "her call sent to the server still serving her game",
        async {
            loop {
                let (h, to, body) = (http.clone(), n2.url.clone(), board.clone());
                let mut asked = tokio::spawn(async move { post(&h, &to, "alice", &body).await });
                tokio::select! {
                    _ = arrivals.next() => {
                        asked.abort();
                        return;
                    }
                    answer = &mut asked => {
                        let (_, _, answer) = answer.expect("the call's task");
                        // "Retry" (an error, or a tool error): not run here.
                        assert!(
                            answer.get("error").is_some() || answer["result"]["isError"] == true,
                            "not adopted: {answer:#}"
                        );
                    }
                }
            }
        },
    )
    .await;
    assert!(
        n2.has_said(&format!(
            "node \"n2\" runs instance {game} under its lease (adopted here)"
        )),
        "the refused adoption took the game's lease first"
    );

    // That server goes: a scan on n2 adopts the game, beside her.
    closer.close().await;
    drop(arrivals);
    n2.said(&format!(
        "node \"n2\" runs instance {game} under its lease, adopted by a scan"
    ))
    .await;
    let (status, _, answer) = post(&http, &n2.url, "alice", &board).await;
    assert_eq!(status, 200, "{answer:#}");
    assert_ne!(answer["result"]["isError"], true, "{answer:#}");
    let now = text_of(&answer["result"]);
    assert_eq!((stones(&now, 'X'), stones(&now, 'O')), (2, 2), "{now}");
}

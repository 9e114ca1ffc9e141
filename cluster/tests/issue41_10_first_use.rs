//! Issue #41 (`docs/ownership.md` §4, a principal's takeover) on a real `nats-server` and a
//! real PostgreSQL, both started by the test: a principal read on its first use links to
//! her game running on another node by reference — over NATS — instead of ending it, and
//! adopts a game nobody runs. "Her node" is a server on the same database with no peers:
//! beyond the others' reach, as a node that died. While a game is adopted by the second
//! node, her actor on another node is the test serving `mcpl.a.alice` (so the adoption
//! links her by name), closed once it is adopted.

use crate::issue41_08_remote_actors::{call, database, node_on, peers, req, text};
use crate::support::Client;
use mcpl_server::peers::{PeerAddress, Peers};
use mcpl_server::{Server, Store};
use mcpl_testkit::nats::Nats;
use serde_json::{Value, json};

/// A game opened on `home` by `who` as `live`, bumped once, then released there: its
/// record live, nobody running it. Its id.
async fn bumped_and_released(home: &Server, who: &str) -> u64 {
    let mut c = Client::connect(home, who);
    let open = json!({"toolset": "game", "instance": "live"});
    c.exchange(req(1, "toolsets/open", open)).await;
    assert_eq!(text(&c.exchange(call(2, "bump")).await), "1");
    let list = c.exchange(req(3, "toolsets/list", json!({}))).await;
    assert_eq!(list["result"]["open"].as_array().map(Vec::len), Some(1));
    // The only game running there: any earlier one was released.
    let running = home.running_instances().await;
    assert_eq!(running.len(), 1, "{running:?}");
    let id = running[0];
    home.release_instance(id).await.expect("released");
    id
}

/// `(instances open, ended records)` of a `toolsets/list`.
async fn listed(c: &mut Client, id: i64) -> (usize, Vec<Value>) {
    let list = c.exchange(req(id, "toolsets/list", json!({}))).await;
    let open = list["result"]["open"].as_array().map_or(0, Vec::len);
    let ended = list["result"]["ended"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    (open, ended)
}

#[actix::test]
async fn issue41_10_a_first_use_links_to_her_game_on_another_node_and_adopts_one_nobody_runs() {
    let nats = Nats::start().expect("nats-server starts");
    // The synchronous client runs a runtime of its own: off this one's thread.
    let (_pg, url) = tokio::task::spawn_blocking(database).await.unwrap();
    let (on_a, on_b) = (peers(&nats, "a").await, peers(&nats, "b").await);
    let on_c = peers(&nats, "c").await;
    let (home, a, b) = {
        let url = url.clone();
        tokio::task::spawn_blocking(move || {
            (
                node_on(&url, None, true),
                node_on(&url, Some(on_a), false),
                node_on(&url, Some(on_b), false),
            )
        })
        .await
        .unwrap()
    };
    let alices = bumped_and_released(&home, "alice").await;

    // Adopted by B while her actor runs on another node, which then dies.
    let her_node = on_c
        .serve(PeerAddress::Principal("alice".into()))
        .await
        .expect("her address served");
    b.adopt_instance(alices).await.expect("adopted");
    assert_eq!(b.principal_count(), 0, "alice is not read on B");
    her_node.split().1.close().await;

    // Her first use on A: linked to the game on B over NATS, nothing ended.
    let mut alice = Client::connect(&a, "alice");
    assert_eq!(text(&alice.exchange(call(1, "peek")).await), "1");
    assert_eq!(text(&alice.exchange(call(2, "bump")).await), "2");
    assert_eq!(listed(&mut alice, 3).await, (1, vec![]));
    assert_eq!(a.running_instances().await, Vec::<u64>::new());
    assert_eq!(b.running_instances().await, [alices]);

    // Bob's game, released on his node, which dies: nobody runs it, and his first use on
    // A adopts it there.
    let bobs = bumped_and_released(&home, "bob").await;
    assert!(!on_c.served(PeerAddress::Instance(bobs)).await.unwrap());
    let mut bob = Client::connect(&a, "bob");
    let first = bob.exchange(call(1, "peek")).await;
    // Her request may come before the adoption is done: "retry, nothing ran", as a host
    // is told while a game moves; it is then adopted.
    if first.get("error").is_some() {
        assert_eq!(
            first["error"]["data"],
            json!({"retryable": true, "ran": false}),
            "{first:#}"
        );
    } else {
        assert_eq!(text(&first), "1");
    }
    mcpl_testkit::within(async {
        while !a.running_instances().await.contains(&bobs) {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(text(&bob.exchange(call(2, "bump")).await), "2");
    assert_eq!(listed(&mut bob, 3).await, (1, vec![]));
    assert!(
        on_c.served(PeerAddress::Instance(bobs)).await.unwrap(),
        "A serves it"
    );

    // Each game's moves committed where it runs, over the revisions read.
    let check = url.clone();
    let records = tokio::task::spawn_blocking(move || {
        let store = mcpl_cluster::PgStore::connect(&check).expect("the store connects");
        [alices, bobs].map(|id| store.load_instance(id).expect("read").expect("live"))
    })
    .await
    .unwrap();
    for record in records {
        let record: Value = serde_json::from_slice(&record).unwrap();
        assert_eq!(record["logic"]["Kept"]["state"]["n"], 2, "{record:#}");
    }
}

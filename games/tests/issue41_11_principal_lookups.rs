//! Issue #41, ownership per principal (`docs/ownership.md` §1): a node looks several
//! principals' leases up at once, one look-up per principal at a time, each on a
//! connection of the look-ups' own (`mcpl_games::arcade::node::LOOKUPS`).
//!
//! Shown from outside on one `mcpl-arcade serve … --ownership principal` node: the test
//! holds alice's lease row in a transaction of its own (inserted, not committed), so her
//! first request's look-up waits on it in PostgreSQL; bob's first request meanwhile is
//! served, his lease taken, while hers still waits; once the test rolls back, hers is
//! served too, her lease taken by the node. (With one look-up at a time on the node, bob's
//! would wait behind hers until the database call's bound gave hers up.)
//!
//! Nothing sleeps: the test awaits PostgreSQL's own account of who waits on a lock.

use crate::issue41_02_arcade_nodes::{fresh_connections, modern, post};
use crate::issue41_06_arcade_principals::{holder, principal_node};
use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use serde_json::json;
use std::time::Duration;

/// One row of `sql` with `arg` on a connection of its own (a plain one: connecting
/// `PgLeases` checks the leases' table with a lock on all of it, which would wait behind
/// the test's transaction and hold every lease statement up).
async fn one(pg: &str, sql: &'static str, arg: &str) -> Option<postgres::Row> {
    let (pg, arg) = (pg.to_owned(), arg.to_owned());
    tokio::task::spawn_blocking(move || {
        let mut c = postgres::Client::connect(&pg, postgres::NoTls).expect("the database");
        c.query_opt(sql, &[&arg]).expect("the database answers")
    })
    .await
    .unwrap()
}

/// How many statements on the leases' table wait on a lock now, as PostgreSQL says.
async fn waiting_on_leases(pg: &str) -> i64 {
    let sql = "SELECT count(*) FROM pg_stat_activity \
               WHERE wait_event_type = 'Lock' AND query LIKE $1";
    one(pg, sql, "%mcpl_leases%").await.expect("a count").get(0)
}

/// The node holding `who`'s lease now, if any, as the committed lease table says.
async fn holder_now(pg: &str, who: &str) -> Option<String> {
    let sql = "SELECT node FROM mcpl_leases \
               WHERE kind = 'principal' AND key = $1 AND expires_at > now()";
    one(pg, sql, who).await.map(|r| r.get(0))
}

#[actix::test]
async fn issue41_11_a_principals_look_up_held_by_the_database_holds_up_no_other_principals() {
    let pg = Postgres::start().expect("a private PostgreSQL starts");
    let nats = Nats::start().expect("a private nats-server starts");
    let (url, bus) = (pg.url(), nats.url());
    let node = principal_node("n1", &url, &bus).await;
    let http = fresh_connections();

    // The test's own transaction holds alice's lease row: inserted, not committed.
    let (inserted_tx, inserted) = tokio::sync::oneshot::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let holding = {
        let url = url.clone();
        std::thread::spawn(move || {
            let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("the database");
            let mut t = c.transaction().expect("a transaction");
            t.execute(
                "INSERT INTO mcpl_leases (kind, key, node, token, expires_at) \
                 VALUES ('principal', 'alice', 'the-test', nextval('mcpl_lease_tokens'), now())",
                &[],
            )
            .expect("alice's row inserted");
            let _ = inserted_tx.send(());
            let _ = released.recv();
            t.rollback().expect("rolled back");
        })
    };
    inserted.await.expect("the row is held");

    // Alice's first request: its look-up waits on her row.
    let list = modern(1, "tools/list", json!({}));
    let alice = {
        let (http, url, list) = (http.clone(), node.url.clone(), list.clone());
        tokio::spawn(async move { post(&http, &url, "alice", &list).await })
    };
    mcpl_testkit::within_named("alice's look-up waiting on her row", async {
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        while waiting_on_leases(&url).await < 1 {
            tick.tick().await;
        }
    })
    .await;

    // Bob's first request meanwhile: served on n1, his lease taken, while hers waits.
    let (status, headers, answer) = post(&http, &node.url, "bob", &list).await;
    assert_eq!(status, 200, "{answer:#}");
    assert!(answer["result"]["tools"].is_array(), "{answer:#}");
    assert_eq!(
        headers.get("mcpl-served-by").and_then(|v| v.to_str().ok()),
        Some("n1")
    );
    assert_eq!(holder_now(&url, "bob").await.as_deref(), Some("n1"));
    assert!(!alice.is_finished(), "alice's request still waits");
    assert_eq!(waiting_on_leases(&url).await, 1, "her look-up still waits");

    // The test lets go: her look-up takes her lease, her request is served.
    release.send(()).expect("the holding thread waits");
    holding.join().expect("the holding thread ends");
    let (status, headers, answer) = alice.await.expect("alice's request");
    assert_eq!(status, 200, "{answer:#}");
    assert!(answer["result"]["tools"].is_array(), "{answer:#}");
    assert_eq!(
        headers.get("mcpl-served-by").and_then(|v| v.to_str().ok()),
        Some("n1")
    );
    assert_eq!(holder(&url, "alice").await, "n1");
}

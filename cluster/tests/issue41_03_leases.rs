//! Issue #41 item 3: leases in PostgreSQL, on a real server shared by this binary's tests
//! (`Postgres::shared`, a database each). Two nodes racing for a lease: one wins; a holder
//! that stops renewing loses it, after its expiry by the database's clock, to another
//! node; the stale holder's renewal fails and so does its store's next write, fenced by
//! the lease's token, while the revision check alone would have let it through. A node
//! started again under its name after the database restarted takes its own old lease back
//! at once, rather than standing by for it (forwarding to itself) until it expires. Who
//! is online is marked on the principals' leases and read by every node.

use mcpl_cluster::leases::{ARCADE, INSTANCE, LeaseError, PRINCIPAL};
use mcpl_cluster::{Fence, PgLeases, PgStore};
use mcpl_server::{Store, StoreError, Writes};
use mcpl_testkit::postgres::Postgres;
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// A database of its own on the shared server: its URL (the server kept alive with it).
fn database(name: &str) -> (Arc<Postgres>, String) {
    let pg = Postgres::shared().expect("a private PostgreSQL starts");
    postgres::Client::connect(&pg.url(), postgres::NoTls)
        .expect("connect")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test's database");
    let url = pg.url_of(name);
    (pg, url)
}

fn principal(name: &str, record: &[u8]) -> Writes {
    Writes {
        principals: vec![(name.to_owned(), Some(record.to_vec()))],
        instances: vec![],
        ..Writes::default()
    }
}

#[test]
fn issue41_03_two_nodes_race_for_a_lease_and_one_wins() {
    let (_pg, url) = database("lease_race");
    let a = Arc::new(PgLeases::connect(&url, "a").unwrap());
    let b = Arc::new(PgLeases::connect(&url, "b").unwrap());
    let ttl = Duration::from_secs(60);
    let mut last_token = 0;
    let mut wins = [0; 2];
    for round in 0..20 {
        let key = format!("game-{round}");
        let start = Arc::new(Barrier::new(2));
        let racers: Vec<_> = [a.clone(), b.clone()]
            .into_iter()
            .map(|leases| {
                let (start, key) = (start.clone(), key.clone());
                std::thread::spawn(move || {
                    start.wait();
                    leases.acquire(INSTANCE, &key, ttl)
                })
            })
            .collect();
        let results: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
        let won: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(won.len(), 1, "round {round}: {results:?}");
        let winner = won[0].clone();
        wins[usize::from(winner.node == "b")] += 1;
        assert!(winner.token > last_token, "tokens only grow");
        last_token = winner.token;
        let lost = results.iter().find_map(|r| r.as_ref().err()).unwrap();
        match lost {
            LeaseError::Held { holder, key: k, .. } => {
                assert_eq!(
                    (holder.node.as_str(), holder.token),
                    (winner.node.as_str(), winner.token)
                );
                assert_eq!(k, &key);
                assert!(holder.expires_in <= ttl && holder.expires_in > Duration::ZERO);
            }
            other => panic!("round {round}: the loser got {other:?}"),
        }
        let holder = a.holder(INSTANCE, &key).unwrap().expect("held");
        assert_eq!(holder.node, winner.node);
        // The winner renews; the loser cannot renew, nor release, the winner's lease.
        let (own, other) = if winner.node == "a" {
            (&a, &b)
        } else {
            (&b, &a)
        };
        own.renew(&winner, ttl).unwrap();
        let forged = mcpl_cluster::leases::Lease {
            node: other.node().to_owned(),
            ..winner.clone()
        };
        assert!(matches!(
            other.renew(&forged, ttl),
            Err(LeaseError::Lost { .. })
        ));
        assert!(!other.release(&forged).unwrap());
        assert_eq!(
            own.holder(INSTANCE, &key).unwrap().unwrap().node,
            winner.node
        );
    }
    println!("wins a/b over 20 rounds: {wins:?}");
}

#[test]
fn issue41_03_a_holder_that_stops_renewing_loses_the_lease_and_its_writes() {
    let (_pg, url) = database("lease_takeover");
    let a = PgLeases::connect(&url, "a").unwrap();
    let b = PgLeases::connect(&url, "b").unwrap();
    let ttl = Duration::from_millis(300);
    // Node a owns alice and instance 7, and writes under those leases.
    let (fence_a, fence_b) = (Fence::new(), Fence::new());
    let alice_a = a.acquire(PRINCIPAL, "alice", ttl).unwrap();
    let game_a = a.acquire(INSTANCE, "7", ttl).unwrap();
    fence_a.hold(&alice_a);
    fence_a.hold(&game_a);
    let store_a = PgStore::connect_fenced(&url, fence_a.clone()).unwrap();
    store_a.load().unwrap();
    store_a
        .commit(&[Writes {
            principals: vec![("alice".to_owned(), Some(b"a1".to_vec()))],
            instances: vec![(7, Some(b"g1".to_vec()))],
            ..Writes::default()
        }])
        .expect("a writes under its leases");
    // b cannot take them while a renews.
    match b.acquire(PRINCIPAL, "alice", ttl) {
        Err(LeaseError::Held { holder, .. }) => assert_eq!(holder.node, "a"),
        other => panic!("b took a held lease: {other:?}"),
    }
    a.renew(&alice_a, ttl).unwrap();
    // a stops renewing (paused, cut off): b takes both over once they expire.
    let limit = Duration::from_secs(30);
    let alice_b = b.take_over(PRINCIPAL, "alice", ttl * 100, limit).unwrap();
    let game_b = b.take_over(INSTANCE, "7", ttl * 100, limit).unwrap();
    assert!(alice_b.token > alice_a.token && game_b.token > game_a.token);
    assert_eq!(a.holder(PRINCIPAL, "alice").unwrap().unwrap().node, "b");
    fence_b.hold(&alice_b);
    fence_b.hold(&game_b);
    let store_b = PgStore::connect_fenced(&url, fence_b).unwrap();
    let loaded = store_b.load().unwrap();
    assert_eq!(
        loaded.principals,
        vec![("alice".to_owned(), b"a1".to_vec())]
    );
    // a wakes up: its renewal fails, and so do its writes under the stale leases, though
    // nobody wrote the records since a did (the revision check alone would pass them).
    match a.renew(&alice_a, ttl) {
        Err(LeaseError::Lost { token, .. }) => assert_eq!(token, alice_a.token),
        other => panic!("a stale holder renewed: {other:?}"),
    }
    match store_a.commit(&[principal("alice", b"a2")]) {
        Err(StoreError::Conflict { what, detail, .. }) => {
            assert_eq!(what, "the principal lease \"alice\"");
            assert!(
                detail.contains(&format!("token {}", alice_a.token)),
                "{detail}"
            );
        }
        other => panic!("the stale holder's write went through: {other:?}"),
    }
    match store_a.commit(&[Writes {
        principals: vec![],
        instances: vec![(7, Some(b"g2".to_vec()))],
        ..Writes::default()
    }]) {
        Err(StoreError::Conflict { what, .. }) => assert_eq!(what, "the instance lease \"7\""),
        other => panic!("the stale holder's game write went through: {other:?}"),
    }
    // A record no lease of a's covers is written with the revision check alone.
    store_a
        .commit(&[principal("bob", b"b1")])
        .expect("an unfenced record");
    // The new holder writes; a's stale release changes nothing.
    store_b
        .commit(&[principal("alice", b"a2 by b")])
        .expect("the new holder writes");
    assert!(!a.release(&alice_a).unwrap());
    assert_eq!(
        b.holder(PRINCIPAL, "alice").unwrap().unwrap().token,
        alice_b.token
    );
    // Released, the lease is free at once, with a new token.
    assert!(b.release(&alice_b).unwrap());
    assert_eq!(b.holder(PRINCIPAL, "alice").unwrap(), None);
    let again = a.acquire(PRINCIPAL, "alice", ttl).unwrap();
    assert!(again.token > alice_b.token);
    // A lease already expired (a time to live of zero, by the database's clock) is not
    // its holder's to renew, even though nobody took it: it is free.
    let gone = a.acquire(INSTANCE, "8", Duration::ZERO).unwrap();
    assert_eq!(a.holder(INSTANCE, "8").unwrap(), None);
    match a.renew(&gone, ttl) {
        Err(LeaseError::Lost { .. }) => {}
        other => panic!("an expired lease was renewed: {other:?}"),
    }
    let taken = b
        .acquire(INSTANCE, "8", ttl)
        .expect("an expired lease is free");
    assert!(taken.token > gone.token);
    let reader = PgStore::connect(&url).unwrap();
    let mut loaded = reader.load().unwrap();
    loaded.principals.sort();
    assert_eq!(
        loaded.principals,
        vec![
            ("alice".to_owned(), b"a2 by b".to_vec()),
            ("bob".to_owned(), b"b1".to_vec())
        ]
    );
    assert_eq!(loaded.instances, vec![(7, b"g1".to_vec())]);
}

#[test]
fn issue41_03_leases_are_served_again_once_the_database_restarted() {
    // A server of its own: it is stopped and started again.
    let mut pg = Postgres::start().expect("a private PostgreSQL starts");
    let url = pg.url();
    let a = PgLeases::connect(&url, "a").unwrap();
    let ttl = Duration::from_secs(60);
    let lease = a.acquire(INSTANCE, "7", ttl).unwrap();

    // Stopped as `pg_ctl stop -m immediate` does: a call fails at once, clearly, and
    // keeps failing while the database is down (no hang on the lost connection).
    pg.stop_immediate();
    for _ in 0..2 {
        match a.renew(&lease, ttl) {
            Err(LeaseError::Database { detail, .. }) => assert!(!detail.is_empty()),
            other => panic!("a renewal with the database down: {other:?}"),
        }
    }

    // Started again: the next call connects again and the lease (on the database's
    // clock, unexpired) is still this node's; another node sees it held.
    pg.restart().expect("PostgreSQL starts again");
    a.renew(&lease, ttl)
        .expect("renewed once the database is back");
    let b = PgLeases::connect(&url, "b").unwrap();
    let holder = b.holder(INSTANCE, "7").unwrap().expect("held");
    assert_eq!((holder.node.as_str(), holder.token), ("a", lease.token));
}

/// Issue #41 (`sim --nodes 3` with a PostgreSQL restart): the owner's lease row survived
/// the database's immediate stop unexpired; the owner stopped (its renewal failed) and was
/// started again under its name. It read the row as another node's and stood by,
/// forwarding to itself — a name no process served — until its own old lease expired.
/// It takes it back at once instead, with a fresh token, and its earlier life is fenced
/// out; another node still finds it held.
#[test]
fn issue41_03_a_node_started_again_takes_its_own_lease_back_after_a_database_restart() {
    let mut pg = Postgres::start().expect("a private PostgreSQL starts");
    let url = pg.url();
    let ttl = Duration::from_secs(120);
    let earlier = PgLeases::connect(&url, "n1").unwrap();
    let lease = earlier.acquire(ARCADE, "arcade", ttl).unwrap();
    let fence = Fence::new();
    fence.hold(&lease);
    let store = PgStore::connect_fenced(&url, fence).unwrap();
    store.load().unwrap();
    store.commit(&[principal("alice", b"a1")]).unwrap();

    pg.stop_immediate();
    assert!(
        matches!(earlier.renew(&lease, ttl), Err(LeaseError::Database { .. })),
        "the owner's renewal fails: it stops serving"
    );
    pg.restart().expect("PostgreSQL starts again");

    // Its row survived, unexpired: read plainly, it names the node itself.
    let again = PgLeases::connect(&url, "n1").unwrap();
    match again.acquire(ARCADE, "arcade", ttl) {
        Err(LeaseError::Held { holder, .. }) => {
            assert_eq!((holder.node.as_str(), holder.token), ("n1", lease.token))
        }
        other => panic!("the surviving row: {other:?}"),
    }
    // Another node waits for it; the node itself takes it back at once.
    let n2 = PgLeases::connect(&url, "n2").unwrap();
    match n2.acquire_or_reclaim(ARCADE, "arcade", ttl) {
        Err(LeaseError::Held { holder, .. }) => assert_eq!(holder.node, "n1"),
        other => panic!("another node took n1's lease: {other:?}"),
    }
    let back = again
        .acquire_or_reclaim(ARCADE, "arcade", ttl)
        .expect("its own lease, taken back");
    assert_eq!(back.node, "n1");
    assert!(back.token > lease.token, "a fresh token");
    let holder = n2.holder(ARCADE, "arcade").unwrap().expect("held");
    assert_eq!((holder.node.as_str(), holder.token), ("n1", back.token));

    // The earlier life, were it still running (its store connected again), is fenced
    // out.
    assert!(matches!(
        earlier.renew(&lease, ttl),
        Err(LeaseError::Lost { .. })
    ));
    let fence = Fence::new();
    fence.hold(&lease);
    let stale = PgStore::connect_fenced(&url, fence).unwrap();
    assert_eq!(stale.load().unwrap().principals.len(), 1);
    match stale.commit(&[principal("alice", b"a2")]) {
        Err(StoreError::Conflict { what, .. }) => assert_eq!(what, "the arcade lease \"arcade\""),
        other => panic!("the earlier life wrote: {other:?}"),
    }
    // The new life's own renewal goes on.
    again.renew(&back, ttl).expect("renewed");
}

/// A node renews all of its leases in one statement (`docs/ownership.md` §1): those still
/// its own are extended, and the one another node took once it expired comes back as
/// lost — its token renewed no more, the others' expiry moved on.
#[test]
fn issue41_03_all_of_a_nodes_leases_renewed_at_once_and_the_lost_one_named() {
    let (_pg, url) = database("lease_renew_all");
    let a = PgLeases::connect(&url, "a").unwrap();
    let b = PgLeases::connect(&url, "b").unwrap();
    let short = Duration::from_millis(300);
    let alice = a.acquire(PRINCIPAL, "alice", short).unwrap();
    let bob = a.acquire(PRINCIPAL, "bob", short).unwrap();
    let game = a.acquire(INSTANCE, "7", short).unwrap();
    assert_eq!(a.renew_all(&[], short).unwrap(), Vec::new());
    // b takes bob over once his lease expires (a stopped renewing it), a renews the rest.
    let bob_b = b
        .take_over(
            PRINCIPAL,
            "bob",
            Duration::from_secs(60),
            Duration::from_secs(30),
        )
        .unwrap();
    assert!(bob_b.token > bob.token);
    let long = Duration::from_secs(60);
    // alice and the game expired too by now (they share bob's time to live): a takes
    // them back under fresh tokens, then renews the three it believes it holds.
    let alice2 = a.acquire(PRINCIPAL, "alice", short).unwrap();
    let game2 = a.acquire(INSTANCE, "7", short).unwrap();
    let lost = a
        .renew_all(
            &[
                alice2.clone(),
                bob.clone(),
                game2.clone(),
                alice.clone(),
                game,
            ],
            long,
        )
        .unwrap();
    assert_eq!(lost.len(), 3, "{lost:?}");
    assert!(lost.contains(&bob) && lost.contains(&alice), "{lost:?}");
    // The renewed ones now outlive the short time to live by far.
    for key in [(PRINCIPAL, "alice"), (INSTANCE, "7")] {
        let holder = a.holder(key.0, key.1).unwrap().expect("held");
        assert_eq!(holder.node, "a");
        assert!(
            holder.expires_in > Duration::from_secs(30),
            "{key:?}: {holder:?}"
        );
    }
    assert_eq!(b.holder(PRINCIPAL, "bob").unwrap().unwrap().node, "b");
    // b's one lease, renewed by b, is none of a's business: a's renewal never touched it.
    assert_eq!(b.renew_all(&[bob_b], long).unwrap(), Vec::new());
}

/// The lobby's "players online" across nodes (`PgLeases::share_online`): each node marks
/// its own principals' leases online or not and reads every live lease marked online, in
/// key order, at most the limit, with how many in all. A key this node holds no lease of
/// is not marked; a lease taken over starts unmarked, whatever its dead holder marked.
#[test]
fn issue41_03_players_online_are_marked_on_their_leases_and_read_by_every_node() {
    let (_pg, url) = database("lease_online");
    let a = PgLeases::connect(&url, "a").unwrap();
    let b = PgLeases::connect(&url, "b").unwrap();
    let long = Duration::from_secs(60);
    for who in ["alice", "bob", "carol"] {
        a.acquire(PRINCIPAL, who, long).unwrap();
    }
    b.acquire(PRINCIPAL, "dave", long).unwrap();
    a.acquire(INSTANCE, "alice", long).unwrap();
    let keys = |o: &mcpl_cluster::leases::OnlineLeases| {
        o.keys
            .iter()
            .map(|(k, n)| format!("{k}@{n}"))
            .collect::<Vec<_>>()
    };

    // dave is b's: a cannot mark him; an instance's lease of the same key is not read.
    let read = a
        .share_online(
            PRINCIPAL,
            &["alice".into(), "carol".into(), "dave".into()],
            10,
        )
        .unwrap();
    assert_eq!(keys(&read), ["alice@a", "carol@a"]);
    assert_eq!(read.total, 2);
    // b marks dave; the limit bounds what is read, the total says how many in all.
    let read = b.share_online(PRINCIPAL, &["dave".into()], 2).unwrap();
    assert_eq!(keys(&read), ["alice@a", "carol@a"]);
    assert_eq!(read.total, 3);
    // alice leaves a: unmarked at a's next round.
    let read = a.share_online(PRINCIPAL, &["carol".into()], 10).unwrap();
    assert_eq!(keys(&read), ["carol@a", "dave@b"]);

    // erin, online on a, whose lease expires (a stopped renewing it): never read once
    // expired, and b taking it over starts it unmarked.
    let short = Duration::from_millis(300);
    a.acquire(PRINCIPAL, "erin", short).unwrap();
    let read = a
        .share_online(PRINCIPAL, &["carol".into(), "erin".into()], 10)
        .unwrap();
    assert_eq!(keys(&read), ["carol@a", "dave@b", "erin@a"]);
    b.take_over(PRINCIPAL, "erin", long, Duration::from_secs(30))
        .expect("b takes erin's lease once it expired");
    let read = b.share_online(PRINCIPAL, &["dave".into()], 10).unwrap();
    assert_eq!(keys(&read), ["carol@a", "dave@b"]);
    assert_eq!(read.total, 2);
}

/// The scan for a dead node's instances (issue #41, `docs/ownership.md` §4): the expired
/// instance leases listed, longest expired first, bounded, with their last holder; a
/// lease let expire on purpose (`expire`, its row kept) listed at once; one taken again
/// no longer listed; and what each node holds now (`held_by`).
#[test]
fn issue41_03_expired_instance_leases_are_listed_for_a_scan() {
    let (_pg, url) = database("lease_expired");
    let a = PgLeases::connect(&url, "a").unwrap();
    let b = PgLeases::connect(&url, "b").unwrap();
    let long = Duration::from_secs(60);
    let short = Duration::from_millis(200);
    a.acquire(INSTANCE, "1", short).unwrap();
    let second = a.acquire(INSTANCE, "2", short).unwrap();
    a.acquire(INSTANCE, "3", long).unwrap();
    a.acquire(PRINCIPAL, "alice", short).unwrap();
    assert_eq!(a.held_by("a", INSTANCE).unwrap(), ["1", "2", "3"]);
    assert!(a.expired(INSTANCE, 10).unwrap().is_empty());
    // Nothing renews 1 and 2: once both expired (b waits for the later), both are listed,
    // the longer expired first, each with its holder; 3, still held, is not; nor alice,
    // of another kind.
    b.take_over(INSTANCE, "2", long, Duration::from_secs(30))
        .map(|l| b.expire(&l).unwrap())
        .unwrap();
    let listed = b.expired(INSTANCE, 10).unwrap();
    let keys: Vec<(&str, &str)> = listed
        .iter()
        .map(|e| (e.key.as_str(), e.node.as_str()))
        .collect();
    assert_eq!(keys, [("1", "a"), ("2", "b")], "{listed:?}");
    assert!(listed[0].ago >= listed[1].ago, "{listed:?}");
    // Bounded: the longest expired first.
    let one = b.expired(INSTANCE, 1).unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].key, "1");
    // a's lease of 2, taken by b since: no longer a's to expire.
    assert!(!a.expire(&second).unwrap());
    // b takes 1: only 2 is left; b holds 1 now, a only 3.
    b.acquire(INSTANCE, "1", long).unwrap();
    let left: Vec<String> = b
        .expired(INSTANCE, 10)
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(left, ["2"]);
    assert_eq!(b.held_by("b", INSTANCE).unwrap(), ["1"]);
    assert_eq!(b.held_by("a", INSTANCE).unwrap(), ["3"]);
}

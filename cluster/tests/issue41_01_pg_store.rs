//! Issue #41 item 1, first brick: the SDK's durable state on a real PostgreSQL, started by
//! this binary's tests (`mcpl_testkit::postgres`, one server shared, a database each). A
//! group commit is one transaction, all of it or none; a record another node wrote,
//! created or deleted since this store read it fails the whole commit with
//! `StoreError::Conflict`, and nothing of that commit is written.

use mcpl_cluster::PgStore;
use mcpl_server::{Loaded, Store, StoreError, Writes};
use mcpl_testkit::postgres::Postgres;

/// A database of its own on the PostgreSQL this binary's tests share while they run
/// (`Postgres::shared`: one `initdb` rather than one per test).
struct Db {
    _pg: std::sync::Arc<Postgres>,
    url: String,
}

impl Db {
    fn url(&self) -> String {
        self.url.clone()
    }
}

fn server() -> Db {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let pg = Postgres::shared().expect("a private PostgreSQL starts");
    let name = format!(
        "store_{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    postgres::Client::connect(&pg.url(), postgres::NoTls)
        .expect("connect")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test's database");
    let url = pg.url_of(&name);
    Db { _pg: pg, url }
}

/// A plain client of the test's own, to look at the tables as they are.
fn inspect(pg: &Db) -> postgres::Client {
    postgres::Client::connect(&pg.url(), postgres::NoTls).expect("connect")
}

fn principal(name: &str, record: &[u8]) -> (String, Option<Vec<u8>>) {
    (name.to_owned(), Some(record.to_vec()))
}

fn loaded(principals: &[(&str, &[u8])], instances: &[(u64, &[u8])]) -> Loaded {
    Loaded {
        principals: principals
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.to_vec()))
            .collect(),
        instances: instances.iter().map(|(k, v)| (*k, v.to_vec())).collect(),
        parts: Vec::new(),
    }
}

/// The `what` of a conflict, or a panic naming what came instead.
fn conflict_on(result: Result<(), StoreError>) -> String {
    match result {
        Err(StoreError::Conflict { what, .. }) => what,
        other => panic!("expected a conflict, got {other:?}"),
    }
}

#[test]
fn issue41_01_records_round_trip_and_steps_committed_together_are_one_transaction() {
    let pg = server();
    let store = PgStore::connect(&pg.url()).expect("the store connects");
    assert_eq!(store.load().unwrap(), Loaded::default());
    assert!(
        store
            .location()
            .starts_with("postgres://postgres@127.0.0.1:"),
        "{}",
        store.location()
    );
    // Two steps in one commit, the second replacing and deleting what the first wrote.
    let first = Writes {
        principals: vec![principal("alice", b"a1")],
        instances: vec![(1, Some(b"i1".to_vec())), (2, Some(b"i2".to_vec()))],
        ..Writes::default()
    };
    let second = Writes {
        principals: vec![principal("bob", b"b1"), principal("alice", b"a2")],
        instances: vec![(2, None), (u64::MAX, Some(b"max".to_vec()))],
        ..Writes::default()
    };
    store.commit(&[first, second]).expect("the commit");
    let expected = loaded(
        &[("alice", b"a2"), ("bob", b"b1")],
        &[(1, b"i1"), (u64::MAX, b"max")],
    );
    // Read back by another store, as a node started on the same database.
    let other = PgStore::connect(&pg.url()).unwrap();
    let mut got = other.load().unwrap();
    got.instances.sort();
    assert_eq!(got, expected);
    // Every row the commit left was written by one transaction (one WAL flush).
    let writers: i64 = inspect(&pg)
        .query_one(
            "SELECT count(DISTINCT x) FROM (SELECT xmin::text AS x FROM principals \
             UNION ALL SELECT xmin::text FROM instances) AS rows",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(writers, 1, "the steps committed in one transaction");

    // One-record writes, as the trait's helpers make them, go on from there.
    store.delete_principal("bob").unwrap();
    store.put_instance(1, b"i1'").unwrap();
    let mut got = PgStore::connect(&pg.url()).unwrap().load().unwrap();
    got.instances.sort();
    assert_eq!(
        got,
        loaded(&[("alice", b"a2")], &[(1, b"i1'"), (u64::MAX, b"max")])
    );
}

#[test]
fn issue41_01_a_commit_that_fails_midway_keeps_nothing_of_it() {
    let pg = server();
    let store = PgStore::connect(&pg.url()).unwrap();
    store.put_principal("alice", b"a1").unwrap();
    // Alice's record is written first (key order), then a name PostgreSQL refuses (a NUL
    // in `text`) fails the transaction: alice's second version must not be kept.
    let step = Writes {
        principals: vec![principal("alice", b"a2"), principal("bad\0name", b"x")],
        instances: vec![(7, Some(b"i7".to_vec()))],
        ..Writes::default()
    };
    let err = store
        .commit(&[step])
        .expect_err("a NUL in a name is refused");
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    assert!(
        err.to_string().contains("127.0.0.1"),
        "names the store: {err}"
    );
    let kept = PgStore::connect(&pg.url()).unwrap().load().unwrap();
    assert_eq!(kept, loaded(&[("alice", b"a1")], &[]), "nothing of it kept");

    // A conflict on the last record of a commit undoes the records written before it.
    let other = PgStore::connect(&pg.url()).unwrap();
    other.put_instance(9, b"theirs").unwrap();
    let step = Writes {
        principals: vec![principal("alice", b"a3"), principal("bob", b"b1")],
        instances: vec![(3, Some(b"i3".to_vec())), (9, Some(b"mine".to_vec()))],
        ..Writes::default()
    };
    assert_eq!(conflict_on(store.commit(&[step])), "instance 9");
    let kept = PgStore::connect(&pg.url()).unwrap().load().unwrap();
    assert_eq!(
        kept,
        loaded(&[("alice", b"a1")], &[(9, b"theirs")]),
        "nothing of it kept"
    );
    // What the store knew is unchanged by the commit it rolled back: alice's revision is
    // still the one it wrote, so its next write of her goes through.
    store.put_principal("alice", b"a4").unwrap();
    let kept = PgStore::connect(&pg.url()).unwrap().load().unwrap();
    assert_eq!(kept.principals, loaded(&[("alice", b"a4")], &[]).principals);
}

#[test]
fn issue41_01_a_node_writing_a_record_another_wrote_since_it_read_it_fails_and_writes_nothing() {
    let pg = server();
    let first = PgStore::connect(&pg.url()).unwrap();
    let second = PgStore::connect(&pg.url()).unwrap();
    first.put_principal("alice", b"a1").unwrap();
    first.put_principal("carol", b"c1").unwrap();
    // The second node reads everything: alice and carol at the first's revisions.
    assert_eq!(second.load().unwrap().principals.len(), 2);

    // The first writes alice's next version; the second, from what it read, cannot.
    first.put_principal("alice", b"a2 by first").unwrap();
    let stale = Writes {
        principals: vec![principal("alice", b"a2 by second"), principal("bob", b"b1")],
        instances: vec![(5, Some(b"i5".to_vec()))],
        ..Writes::default()
    };
    let err = second.commit(&[stale]).expect_err("a stale write fails");
    let text = err.to_string();
    match &err {
        StoreError::Conflict { what, store, .. } => {
            assert_eq!(what, "principal \"alice\"");
            assert_eq!(store, &second.location());
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(text.contains("revision"), "says which revisions: {text}");
    let kept = PgStore::connect(&pg.url()).unwrap().load().unwrap();
    assert_eq!(
        kept,
        loaded(&[("alice", b"a2 by first"), ("carol", b"c1")], &[]),
        "the second node wrote nothing"
    );

    // Deleted meanwhile: the second's write of carol fails too.
    first.delete_principal("carol").unwrap();
    assert_eq!(
        conflict_on(second.put_principal("carol", b"c2")),
        "principal \"carol\""
    );
    // Created meanwhile: a record the second never saw was made by the first.
    first.put_instance(6, b"i6 by first").unwrap();
    assert_eq!(
        conflict_on(second.put_instance(6, b"i6 by second")),
        "instance 6"
    );
    assert_eq!(conflict_on(second.delete_instance(6)), "instance 6");
    // Deleted and created again (a new revision, never the one the second read).
    first.delete_principal("alice").unwrap();
    first.put_principal("alice", b"a3 by first").unwrap();
    let third = PgStore::connect(&pg.url()).unwrap();
    third.load().unwrap();
    first.delete_principal("alice").unwrap();
    first.put_principal("alice", b"a4 by first").unwrap();
    assert_eq!(
        conflict_on(third.put_principal("alice", b"a4 by third")),
        "principal \"alice\""
    );

    // Once it read afresh (a restarted node), the second writes again.
    second.load().unwrap();
    second.put_principal("alice", b"a5 by second").unwrap();
    assert_eq!(
        conflict_on(first.put_principal("alice", b"a5 by first")),
        "principal \"alice\""
    );
    let kept = PgStore::connect(&pg.url()).unwrap().load().unwrap();
    assert_eq!(
        kept,
        loaded(&[("alice", b"a5 by second")], &[(6, b"i6 by first")])
    );
}

#[test]
fn issue41_01_an_unreachable_database_is_an_error_naming_it_without_its_password() {
    // A loopback port nothing listens on now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = PgStore::connect(&format!(
        "postgres://someone:secret@127.0.0.1:{port}/arcade"
    ))
    .expect_err("nothing listens there now");
    let text = err.to_string();
    assert!(
        text.contains(&format!("postgres://someone@127.0.0.1:{port}/arcade")),
        "{text}"
    );
    assert!(!text.contains("secret"), "{text}");
    let err = PgStore::connect("postgres://[not a url").expect_err("not a URL");
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
}

/// One step writing `name`'s core record (when given) and its parts.
fn with_parts(name: &str, core: Option<&[u8]>, parts: &[(&str, Option<&[u8]>)]) -> Writes {
    Writes {
        principals: core
            .map(|c| vec![(name.to_owned(), Some(c.to_vec()))])
            .unwrap_or_default(),
        parts: parts
            .iter()
            .map(|(p, r)| (name.to_owned(), (*p).to_owned(), r.map(<[u8]>::to_vec)))
            .collect(),
        ..Writes::default()
    }
}

/// `(principal, part, record)` of every part a store holds.
fn parts_in(store: &PgStore) -> Vec<(String, String, Vec<u8>)> {
    store.load().unwrap().parts
}

#[test]
fn issue42_a_principals_parts_are_written_with_its_record_and_guarded_by_its_revision() {
    let pg = server();
    let first = PgStore::connect(&pg.url()).unwrap();
    let second = PgStore::connect(&pg.url()).unwrap();
    first
        .commit(&[with_parts(
            "alice",
            Some(b"core 1"),
            &[("ended/1", Some(b"e1")), ("ended/2", Some(b"e2"))],
        )])
        .unwrap();
    second.load().unwrap();
    // Only a part of alice's record: her core record's revision is checked, and moves on.
    first
        .commit(&[with_parts(
            "alice",
            None,
            &[("ended/1", None), ("ended/3", Some(b"e3"))],
        )])
        .unwrap();
    let fresh = PgStore::connect(&pg.url()).unwrap();
    assert_eq!(
        parts_in(&fresh),
        [
            ("alice".to_owned(), "ended/2".to_owned(), b"e2".to_vec()),
            ("alice".to_owned(), "ended/3".to_owned(), b"e3".to_vec()),
        ]
    );
    assert_eq!(
        fresh.load().unwrap().principals,
        [("alice".to_owned(), b"core 1".to_vec())],
        "the core record unchanged"
    );
    // The second node read alice before that: neither her core nor a part of hers goes.
    assert_eq!(
        conflict_on(second.commit(&[with_parts("alice", None, &[("ended/4", Some(b"x"))])])),
        "principal \"alice\""
    );
    assert_eq!(
        conflict_on(second.put_principal("alice", b"core by second")),
        "principal \"alice\""
    );
    // Parts of a record another node created meanwhile are refused too.
    first.put_principal("bob", b"b1").unwrap();
    assert_eq!(
        conflict_on(second.commit(&[with_parts("bob", None, &[("ended/1", Some(b"x"))])])),
        "principal \"bob\""
    );
    assert_eq!(parts_in(&fresh).len(), 2, "the second wrote nothing");

    // Forgetting a record forgets its parts, and a record made again in the same commit
    // keeps only the parts written after.
    first
        .commit(&[
            Writes::principal("alice", None),
            with_parts("alice", Some(b"core 2"), &[("ended/9", Some(b"e9"))]),
        ])
        .unwrap();
    assert_eq!(
        parts_in(&fresh),
        [("alice".to_owned(), "ended/9".to_owned(), b"e9".to_vec())]
    );
    first.delete_principal("alice").unwrap();
    assert!(parts_in(&fresh).is_empty());
}

#[test]
fn issue42_a_database_of_records_written_whole_loads_and_is_marked_for_parts() {
    let pg = server();
    PgStore::connect(&pg.url()).unwrap();
    // The database as a server before parts left it: format 1, no table of parts.
    inspect(&pg)
        .batch_execute(
            "UPDATE mcpl_meta SET value = 1 WHERE key = 'format';
             DROP TABLE principal_parts;
             INSERT INTO principals (key, record, revision)
                 VALUES ('alice', 'whole', nextval('mcpl_revisions'));",
        )
        .unwrap();
    let store = PgStore::connect(&pg.url()).unwrap();
    let loaded = store.load().unwrap();
    assert_eq!(loaded.principals, [("alice".to_owned(), b"whole".to_vec())]);
    assert!(loaded.parts.is_empty());
    let format: i64 = inspect(&pg)
        .query_one("SELECT value FROM mcpl_meta WHERE key = 'format'", &[])
        .unwrap()
        .get(0);
    assert_eq!(format, 2);
    // Its next change, in parts.
    store
        .commit(&[with_parts(
            "alice",
            Some(b"core"),
            &[("ended/1", Some(b"e1"))],
        )])
        .unwrap();
    assert_eq!(parts_in(&store).len(), 1);
}

/// An instance's record as the SDK writes it, but for its logic: `alice` present, `bob`
/// gone, a bot.
const GAME: &[u8] = br#"{"toolset":"go","name":"g","options":null,
    "participants":[{"Principal":"alice"},{"Left":"bob"},{"Bot":"gnugo"}],
    "names":{},"links":{"0":{"toolset":"go","instance":"g"}},"invited":{},"next_call":0,
    "ended":null,"logic":"NotKept"}"#;

/// Issue #41: a node reads one principal's record (with its parts), one instance's, and
/// the list of instances with the principals each needs — never everything — and what it
/// read is guarded by its revision as what `load` read is.
#[test]
fn issue41_01_one_record_is_read_at_a_time_and_guarded_by_the_revision_read() {
    let pg = server();
    let first = PgStore::connect(&pg.url()).unwrap();
    first
        .commit(&[
            with_parts(
                "alice",
                Some(b"a1"),
                &[("ended/1", Some(b"1")), ("closed/x", Some(b"x"))],
            ),
            with_parts("alice2", Some(b"b1"), &[("ended/1", Some(b"9"))]),
            Writes::instance(7, Some(GAME)),
            Writes::instance(3, Some(b"not a record")),
        ])
        .unwrap();
    let second = PgStore::connect(&pg.url()).unwrap();
    let alice = second.load_principal("alice").unwrap();
    assert_eq!(alice.core.as_deref(), Some(&b"a1"[..]));
    assert_eq!(
        alice.parts,
        [
            ("closed/x".to_owned(), b"x".to_vec()),
            ("ended/1".to_owned(), b"1".to_vec())
        ],
        "hers only, in name order"
    );
    assert_eq!(
        second.load_principal("nobody").unwrap(),
        mcpl_server::PrincipalLoaded::default()
    );
    assert_eq!(second.load_instance(7).unwrap().as_deref(), Some(GAME));
    assert_eq!(second.load_instance(8).unwrap(), None);
    let live = second.live_instances().unwrap();
    let listed: Vec<(u64, Vec<String>)> =
        live.iter().map(|l| (l.id, l.principals.clone())).collect();
    assert_eq!(listed, [(3, vec![]), (7, vec!["alice".to_owned()])]);

    // What the second read, it writes over: alice's revision and instance 7's are known
    // without a `load`.
    second
        .commit(&[with_parts("alice", None, &[("ended/2", Some(b"2"))])])
        .unwrap();
    second.put_instance(7, b"moved").unwrap();
    // The first's view is stale now: its writes of them fail.
    assert_eq!(
        conflict_on(first.put_principal("alice", b"a2 by first")),
        "principal \"alice\""
    );
    assert_eq!(conflict_on(first.put_instance(7, b"x")), "instance 7");
    // And a record the second did not read is one it cannot write over: alice2 (the
    // first made it, the second never read it).
    assert_eq!(
        conflict_on(second.put_principal("alice2", b"b2")),
        "principal \"alice2\""
    );
    // Read again after another wrote it, the record is written over the new revision.
    let third = PgStore::connect(&pg.url()).unwrap();
    third.load_principal("alice").unwrap();
    second.put_principal("alice", b"a3 by second").unwrap();
    assert_eq!(
        conflict_on(third.put_principal("alice", b"a3 by third")),
        "principal \"alice\""
    );
    assert_eq!(
        third.load_principal("alice").unwrap().core.as_deref(),
        Some(&b"a3 by second"[..])
    );
    third.put_principal("alice", b"a4 by third").unwrap();
    // A principal read as having no record is created, once.
    third.load_principal("dave").unwrap();
    second.put_principal("dave", b"d1 by second").unwrap();
    assert_eq!(
        conflict_on(third.put_principal("dave", b"d1 by third")),
        "principal \"dave\""
    );
}

//! Issue #41: a database that stops answering without closing the connection (a server
//! stopped but not dead, SIGSTOPped; a network black hole) bounds a call rather than
//! hanging it. The PostgreSQL backend serving a store's or the leases' connection is
//! SIGSTOPped (on the server `Postgres::shared` runs, found by the connection's
//! `application_name`, and sent SIGCONT by the test afterwards): a commit, or an owner's
//! lease renewal, fails within the bound (the URL's `tcp_user_timeout`, 1 s here) with the
//! retryable error a lost connection gives; the store gives up, failing later calls at
//! once; and once the backend runs again a new connection works and what was
//! acknowledged is there. A server that answers but is stuck on a lock ends the statement
//! itself (the session's `statement_timeout`/`lock_timeout`), within the bound too.

use mcpl_cluster::leases::{ARCADE, CALL_TIMEOUT, LeaseError};
use mcpl_cluster::{PgLeases, PgStore};
use mcpl_server::{Store, StoreError, Writes};
use mcpl_testkit::postgres::Postgres;
use mcpl_testkit::within_named;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bound the tests' URLs set (`tcp_user_timeout=1`).
const BOUND: Duration = Duration::from_secs(1);

/// How long past the bound a failing call may take to be told (this 2-core machine under
/// load schedules threads late); far below what hanging would take.
const SLACK: Duration = Duration::from_secs(2);

/// Runs blocking `f` (the `postgres` client runs a runtime of its own) off the test's
/// runtime, bounded by the testkit's limit.
async fn blocking<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    within_named(what, tokio::task::spawn_blocking(f))
        .await
        .expect("the blocking call panicked")
}

/// A database of its own on the shared server: the server, its superuser's URL on
/// `postgres`, and the URL of the database for a connection named `application` bounded
/// to [`BOUND`].
fn database(name: &str, application: &str) -> (Arc<Postgres>, String, String) {
    let pg = Postgres::shared().expect("a private PostgreSQL starts");
    postgres::Client::connect(&pg.url(), postgres::NoTls)
        .expect("connect")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test's database");
    let url = format!(
        "{}?application_name={application}&tcp_user_timeout={}",
        pg.url_of(name),
        BOUND.as_secs()
    );
    (pg.clone(), pg.url(), url)
}

/// The pid of the one backend serving the connection named `application`.
fn backend_of(admin: &str, application: &str) -> i32 {
    let rows = postgres::Client::connect(admin, postgres::NoTls)
        .expect("connect")
        .query(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
            &[&application],
        )
        .expect("read pg_stat_activity");
    assert_eq!(rows.len(), 1, "one backend serves {application:?}");
    rows[0].get(0)
}

/// A backend SIGSTOPped until this is dropped (SIGCONT, also when the test fails: the
/// shared server's shutdown waits for its backends).
struct Stopped(i32);

impl Stopped {
    fn new(pid: i32) -> Stopped {
        signal("-STOP", pid);
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        signal("-CONT", self.0);
    }
}

fn signal(which: &str, pid: i32) {
    let status = std::process::Command::new("kill")
        .args([which, &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill {which} {pid}");
}

fn principal(name: &str, record: &[u8]) -> Writes {
    Writes {
        principals: vec![(name.to_owned(), Some(record.to_vec()))],
        instances: vec![],
        ..Writes::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_05_a_commit_to_a_stopped_backend_fails_within_the_bound_and_nothing_acknowledged_is_lost()
 {
    let (_pg, admin, url) = blocking("a database", || database("hung_store", "hung_store")).await;
    let u = url.clone();
    let store = Arc::new(blocking("connect", move || PgStore::connect(&u).unwrap()).await);
    assert_eq!(
        store.bound(),
        BOUND,
        "the URL's tcp_user_timeout bounds the calls"
    );
    let s = store.clone();
    blocking("an acknowledged commit", move || {
        s.load().unwrap();
        s.commit(&[principal("alice", b"acknowledged")]).unwrap();
    })
    .await;
    let a = admin.clone();
    let backend = blocking("the backend", move || backend_of(&a, "hung_store")).await;
    let stopped = Stopped::new(backend);

    let s = store.clone();
    let started = Instant::now();
    let failed = blocking("a commit to a stopped backend", move || {
        s.commit(&[principal("bob", b"never acknowledged")])
    })
    .await;
    let took = started.elapsed();
    eprintln!("failed after {took:?} (bound {BOUND:?})");
    match failed {
        Err(StoreError::Io { detail, .. }) => assert!(
            detail.contains("did not answer a call within 1s"),
            "a clear error: {detail}"
        ),
        other => panic!("a commit to a stopped backend: {other:?}"),
    }
    assert!(
        took >= BOUND && took < BOUND + SLACK,
        "failed after {took:?}, the bound {BOUND:?}"
    );
    // The store gave up: a later call fails at once, not after another bound.
    let s = store.clone();
    let started = Instant::now();
    let later = blocking("a later read", move || s.load_principal("alice")).await;
    assert!(matches!(later, Err(StoreError::Io { .. })), "{later:?}");
    assert!(
        started.elapsed() < BOUND,
        "the given-up store answered at once"
    );

    // The backend runs again: a new store connects, and what was acknowledged is there.
    drop(stopped);
    let u = url.clone();
    let alice = blocking("a new store", move || {
        PgStore::connect(&u)
            .unwrap()
            .load_principal("alice")
            .unwrap()
    })
    .await;
    assert_eq!(alice.core.as_deref(), Some(&b"acknowledged"[..]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_05_a_renewal_on_a_stopped_backend_fails_within_the_bound_then_a_new_connection_renews()
 {
    let (_pg, admin, url) = blocking("a database", || database("hung_leases", "hung_leases")).await;
    let u = url.clone();
    let leases = Arc::new(blocking("connect", move || PgLeases::connect(&u, "a").unwrap()).await);
    assert_eq!(leases.bound(), BOUND);
    let l = leases.clone();
    let lease = blocking("acquire", move || {
        l.acquire(ARCADE, "arcade", Duration::from_secs(60))
            .unwrap()
    })
    .await;
    let a = admin.clone();
    let backend = blocking("the backend", move || backend_of(&a, "hung_leases")).await;
    let stopped = Stopped::new(backend);

    let (l, held) = (leases.clone(), lease.clone());
    let started = Instant::now();
    let renewed = blocking("a renewal on a stopped backend", move || {
        l.renew(&held, Duration::from_secs(60))
    })
    .await;
    let took = started.elapsed();
    eprintln!("failed after {took:?} (bound {BOUND:?})");
    match renewed {
        Err(LeaseError::Database { detail, .. }) => {
            assert!(detail.contains("did not answer within 1s"), "{detail}")
        }
        other => panic!("a renewal on a stopped backend: {other:?}"),
    }
    assert!(
        took >= BOUND && took < BOUND + SLACK,
        "failed after {took:?}, the bound {BOUND:?}"
    );

    // Running again, the next call connects anew and the lease is still the node's.
    drop(stopped);
    let (l, held) = (leases.clone(), lease.clone());
    blocking("a renewal after SIGCONT", move || {
        l.renew(&held, Duration::from_secs(60))
            .expect("renewed on a new connection")
    })
    .await;
    let l = leases.clone();
    let holder = blocking("the holder", move || l.holder(ARCADE, "arcade").unwrap())
        .await
        .expect("held");
    assert_eq!((holder.node.as_str(), holder.token), ("a", lease.token));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_05_a_renewal_of_a_short_lease_fails_within_half_of_it_not_the_call_bound() {
    // A URL that sets no bound: calls wait CALL_TIMEOUT (5 s), longer than a 1.5 s lease.
    let (_pg, admin, bounded) =
        blocking("a database", || database("hung_short", "hung_short")).await;
    let url = bounded
        .split_once("&tcp_user_timeout")
        .map_or(bounded.as_str(), |(u, _)| u)
        .to_owned();
    let u = url.clone();
    let leases = Arc::new(blocking("connect", move || PgLeases::connect(&u, "a").unwrap()).await);
    assert_eq!(leases.bound(), CALL_TIMEOUT);
    let ttl = Duration::from_millis(1500);
    let half = Duration::from_millis(750);
    assert_eq!(leases.renewal_bound(ttl), half);
    assert_eq!(leases.renewal_bound(Duration::from_secs(60)), CALL_TIMEOUT);
    let l = leases.clone();
    let lease = blocking("acquire", move || l.acquire(ARCADE, "arcade", ttl).unwrap()).await;
    let a = admin.clone();
    let backend = blocking("the backend", move || backend_of(&a, "hung_short")).await;
    let stopped = Stopped::new(backend);

    // Renewed at a third of the lease, as a node renews: it fails by five sixths of it,
    // before the lease expires, not after the connection's 5 s.
    let (l, held) = (leases.clone(), lease.clone());
    let started = Instant::now();
    let renewed = blocking("a renewal on a stopped backend", move || {
        l.renew(&held, ttl)
    })
    .await;
    let took = started.elapsed();
    eprintln!("failed after {took:?} (renewal bound {half:?}, call bound {CALL_TIMEOUT:?})");
    match renewed {
        Err(LeaseError::Database { detail, .. }) => {
            assert!(detail.contains("did not answer within 750ms"), "{detail}")
        }
        other => panic!("a renewal on a stopped backend: {other:?}"),
    }
    assert!(
        took >= half && took < half + SLACK && took < CALL_TIMEOUT,
        "failed after {took:?}, the renewal bound {half:?}"
    );
    drop(stopped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue41_05_a_commit_stuck_on_a_lock_ends_with_the_sessions_own_timeout() {
    let (pg, _, url) = blocking("a database", || database("locked_store", "locked_store")).await;
    let u = url.clone();
    let store = Arc::new(blocking("connect", move || PgStore::connect(&u).unwrap()).await);
    let s = store.clone();
    blocking("load", move || s.load().unwrap()).await;
    // Another session holds the table: the server answers, the statement waits.
    let locked = pg.url_of("locked_store");
    let (hold, release) = std::sync::mpsc::channel::<()>();
    let (held, holding) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let mut c = postgres::Client::connect(&locked, postgres::NoTls).expect("connect");
        let mut tx = c.transaction().unwrap();
        tx.batch_execute("LOCK TABLE principals IN ACCESS EXCLUSIVE MODE")
            .unwrap();
        held.send(()).unwrap();
        let _ = release.recv();
        tx.rollback().unwrap();
    });
    blocking("the lock taken", move || holding.recv().unwrap()).await;
    let s = store.clone();
    let started = Instant::now();
    let failed = blocking("a commit waiting on the lock", move || {
        s.commit(&[principal("carol", b"c")])
    })
    .await;
    let took = started.elapsed();
    eprintln!("failed after {took:?} (bound {BOUND:?})");
    match failed {
        Err(StoreError::Io { detail, .. }) => {
            assert!(
                detail.contains("canceling statement due to"),
                "the server's own timeout: {detail}"
            )
        }
        other => panic!("a commit waiting on a lock: {other:?}"),
    }
    assert!(took < BOUND + SLACK, "failed after {took:?}");
    drop(hold);
    blocking("the holder ends", move || holder.join().unwrap()).await;
    // The server ended the statement, not the caller's deadline: the connection still
    // serves (it is the server, not this store, that gives a store up after a failure).
    let s = store.clone();
    let read = blocking("a read after", move || s.load_principal("carol")).await;
    assert_eq!(read.expect("the connection still serves").core, None);
    // Where the URL sets no `tcp_user_timeout`, the default bound.
    let plain = url.split('?').next().unwrap().to_owned();
    let bound = blocking("connect", move || PgStore::connect(&plain).unwrap().bound()).await;
    assert_eq!(bound, CALL_TIMEOUT);
}

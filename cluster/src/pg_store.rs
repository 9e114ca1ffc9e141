//! [`PgStore`]: the SDK's durable state on PostgreSQL (issue #41 item 1).
//!
//! Two tables hold the records, as [`RedbStore`](mcpl_server::RedbStore)'s file does:
//! `principals` (key `text`) and `instances` (key `bigint`), each row a record (`bytea`)
//! and its **revision** (`bigint`). They are created when missing, with a `mcpl_meta`
//! table holding the records' format (a database written in another format is refused,
//! as a `redb` file is) and the counter new instance ids are reserved from, a block at a
//! time ([`Store::reserve_instance_ids`], issue #41: nodes sharing the database never give
//! two instances one id), and the sequence `mcpl_revisions` the revisions are drawn from.
//!
//! **Parts** (issue #42 item 1). A principal's record is written in parts: its core in
//! `principals`, each part (an ended record, a tombstone) a row of `principal_parts`
//! (key `(principal, part)`), a step writing only the parts that changed. A part has no
//! revision of its own: it is written in the same transaction as its principal's core
//! record, whose revision is checked as ever — and a step that writes only parts of a
//! record still checks it, taking the core record's next revision without changing it —
//! so another node's write of any of a principal's record fails the commit. Forgetting a
//! principal's record forgets its parts.
//!
//! **One commit, one transaction.** [`Store::commit`] gets every step the server's commit
//! queue took at once (group commit, issue #42 item 1) and writes all their records in one
//! transaction: one WAL flush, all of them or none.
//!
//! **Revision check** (issue #41 item 1: two nodes can never both write a record's next
//! version). The store remembers the revision of each record it loaded, read or last
//! wrote, and of each it did not see, that there was none. A server reads one principal's
//! record (with its parts, in one snapshot) on its first use and the instances' at start
//! ([`Store::load_principal`], [`Store::load_instance`], [`Store::live_instances`]): each
//! read remembers what it saw beside what is known, so a principal read when first used
//! is written over the revision read. Every write says which revision it
//! replaces: an update is made only where the row still has that revision, a creation
//! only where there is still no row, a deletion only of that revision. A write whose
//! record another writer changed, created or deleted meanwhile fails the whole commit
//! (rolled back) with [`StoreError::Conflict`] naming the record. The server then gives
//! its store up until a restart (the commit queue's "failure"): a node that lost a record
//! to another no longer owns it, and reads everything afresh when started again.
//!
//! **Fencing** (issue #41 item 3). A store made with [`PgStore::connect_fenced`] is bound
//! to a node's [`Fence`], the leases it holds: before writing, each commit checks in its
//! transaction that every lease covering a record it writes is still the node's with the
//! same token and unexpired (a lease of kind [`ARCADE`](crate::leases::ARCADE) covers every
//! record), and holds that lease's row (`FOR SHARE`) until it ends. A
//! stale lease fails the commit with [`StoreError::Conflict`] even where the record's
//! revision is unchanged (the new owner has not written yet). The [`Store`] trait is
//! unchanged; [`PgStore::connect`] makes a store without a fence. See
//! [`leases`](crate::leases).
//!
//! **\[project\]** Revisions are drawn from one sequence, never reused: a record deleted
//! and created again by another node meanwhile has a revision this store never saw, so it
//! cannot be mistaken for the one it read (no ABA).
//!
//! **\[project\]** A record written by several of the steps of one commit is written once,
//! as the last step left it (what writing them in order leaves), and the records are
//! written in key order, principals then instances: two nodes committing at once take
//! their rows' locks in the same order and never deadlock.
//!
//! **\[project\]** The connection lives on a thread of its own, the store's calls handed
//! to it: the synchronous `postgres` client runs a small runtime of its own, which must
//! not be entered from inside another's, and the store is read where the server is built
//! — inside the arcade's actix system, say — and when a principal is first used. The commit queue's writer thread then
//! waits for the answer as it waits for redb's fsync. A connection lost (the database
//! restarted, the network cut) fails the call it was lost in, and the server gives its
//! store up until restarted, as for any write that failed: a node of several stops and
//! another takes over once the database is back, reading every record afresh
//! (`docs/cluster.md` §6; an owner riding a short outage through is a later step of
//! issue #41).
//!
//! **A database that stops answering** (a stopped but not dead server, a process
//! SIGSTOPped, a network black hole: the connection stays open, nothing comes back). Each
//! call waits at most the store's **bound** ([`CALL_TIMEOUT`](crate::leases::CALL_TIMEOUT),
//! 5 s, unless the URL sets `tcp_user_timeout`; where the URL does not set them, also TCP
//! keepalives after half of it, `tcp_user_timeout` the bound, and the session's
//! `statement_timeout`, `lock_timeout` and `idle_in_transaction_session_timeout` at four
//! fifths of it: `docs/cluster.md` §6 says why) and then fails with [`StoreError::Io`],
//! retryable, as a lost connection fails: the server gives its store up. The store gives itself up too: its connection's thread may still wait on
//! the database, so every later call fails at once, and a commit the database answers
//! after all is rolled back rather than committed (the thread checks before `COMMIT`);
//! only a commit cut at its very `COMMIT` may have landed, as on a lost connection.

use crate::leases::{Fence, INSTANCE, PRINCIPAL};
use mcpl_server::{LiveInstance, Loaded, Net, PrincipalLoaded, Store, StoreError, Writes};
use postgres::types::ToSql;
use postgres::{Client, Config, IsolationLevel, NoTls, Statement, Transaction};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// The format of the records this store holds ([`RedbStore`](mcpl_server::RedbStore)'s
/// too: the SDK encodes them, a store keeps bytes). Format 2 keeps principals' records in
/// parts (issue #42 item 1); a database in format 1 (records whole) is read as it is and
/// marked 2 when a store connects, its records written in parts on their next change.
const FORMAT: i64 = 2;
/// The format before parts, read and upgraded.
const FORMAT_WHOLE: i64 = 1;

/// Serialises creating the schema between nodes starting at once (`CREATE ... IF NOT
/// EXISTS` alone races on the catalog): an advisory lock's key, "mcpl" in ASCII.
const SCHEMA_LOCK: i64 = 0x6d63_706c;

const SCHEMA: &str = "
    CREATE SEQUENCE IF NOT EXISTS mcpl_revisions;
    CREATE TABLE IF NOT EXISTS mcpl_meta (
        key text PRIMARY KEY,
        value bigint NOT NULL
    );
    CREATE TABLE IF NOT EXISTS principals (
        key text PRIMARY KEY,
        record bytea NOT NULL,
        revision bigint NOT NULL
    );
    CREATE TABLE IF NOT EXISTS instances (
        key bigint PRIMARY KEY,
        record bytea NOT NULL,
        revision bigint NOT NULL
    );
    CREATE TABLE IF NOT EXISTS principal_parts (
        principal text NOT NULL,
        part text NOT NULL,
        record bytea NOT NULL,
        PRIMARY KEY (principal, part)
    );
";

/// The key in `mcpl_meta` of the next instance id no node was given (issue #41,
/// [`Store::reserve_instance_ids`]).
const NEXT_INSTANCE: &str = "next_instance_id";

/// Moves the counter `$1` past a block of `$2` ids and returns where the block ends:
/// created on the first reservation, past every instance kept.
const RESERVE_INSTANCE_IDS: &str = "
    INSERT INTO mcpl_meta AS m (key, value)
    VALUES ($1, (SELECT coalesce(max(key), 0) + 1 FROM instances) + $2)
    ON CONFLICT (key) DO UPDATE
        SET value = greatest(m.value, (SELECT coalesce(max(key), 0) + 1 FROM instances)) + $2
    RETURNING value
";

/// Creates the tables and sequences where missing (the store's and the leases'), under
/// the schema's advisory lock: nodes starting at once do not race on the catalog.
pub(crate) fn create_schema(client: &mut Client) -> Result<(), postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])?;
    tx.batch_execute(SCHEMA)?;
    tx.batch_execute(crate::leases::SCHEMA)?;
    tx.commit()
}

/// A call handed to the connection's thread.
type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// An [`mcpl_server::Store`] on PostgreSQL. See the module docs.
///
/// ```no_run
/// # fn main() -> Result<(), mcpl_server::StoreError> {
/// use mcpl_cluster::PgStore;
/// let store = PgStore::connect("postgres://arcade@127.0.0.1:5432/arcade")?;
/// // mcpl_server::Server::builder(..).store(std::sync::Arc::new(store))
/// # Ok(()) }
/// ```
pub struct PgStore {
    location: String,
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// How long a call may wait for the database (module docs).
    bound: Duration,
    /// Set once a call went unanswered within `bound`: the store has given up (shared
    /// with the connection's thread, which then commits nothing more).
    hung: Arc<AtomicBool>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to the database `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME`, or
    /// libpq's `key=value` form; no TLS; within
    /// [`CONNECT_TIMEOUT`](crate::leases::CONNECT_TIMEOUT) unless the URL sets
    /// `connect_timeout`, each call then bounded as the module docs say), creates the
    /// tables where they are missing and
    /// checks the records' format. A URL that cannot be read, a database that cannot be
    /// reached and one holding another format are errors naming it (without its
    /// password).
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        PgStore::open(url, None)
    }

    /// [`PgStore::connect`], bound to a node's leases: each commit writing a record that
    /// a lease of `fence` covers checks, in its transaction, that the lease is still the
    /// node's with its token, and fails with [`StoreError::Conflict`] naming the lease
    /// otherwise (see [`leases`](crate::leases): fencing a stale owner).
    pub fn connect_fenced(url: &str, fence: Fence) -> Result<PgStore, StoreError> {
        PgStore::open(url, Some(fence))
    }

    fn open(url: &str, fence: Option<Fence>) -> Result<PgStore, StoreError> {
        let mut config: Config = url.parse().map_err(|e: postgres::Error| StoreError::Open {
            path: "the PostgreSQL URL".into(),
            detail: format!("it cannot be read: {}", chain(&e)),
        })?;
        // A database that does not answer fails the connection or the call, never hangs
        // it (a node taking the arcade over connects its store right after it took the
        // lease; the commit queue waits on each commit).
        let bound = bound_calls(&mut config);
        let connecting = bound + *config.get_connect_timeout().unwrap_or(&bound);
        let location = location_of(&config);
        let hung = Arc::new(AtomicBool::new(false));
        let given_up = hung.clone();
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, started) = mpsc::channel();
        let at = location.clone();
        let thread = std::thread::Builder::new()
            .name("mcpl-pg-store".to_owned())
            .spawn(
                move || match Connection::open(config.clone(), at, fence, given_up) {
                    Ok(mut connection) => {
                        let _ = ready.send(Ok(()));
                        for job in queue {
                            connection.again_if_closed(&config);
                            job(&mut connection);
                        }
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                    }
                },
            )
            .map_err(|e| StoreError::Open {
                path: location.clone().into(),
                detail: format!("cannot start its connection's thread: {e}"),
            })?;
        let store = PgStore {
            location: location.clone(),
            jobs: Some(jobs),
            thread: Some(thread),
            bound,
            hung,
        };
        match started.recv_timeout(connecting) {
            Ok(Ok(())) => Ok(store),
            Ok(Err(e)) => Err(e),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                store.hung.store(true, Ordering::SeqCst);
                Err(StoreError::Open {
                    path: location.into(),
                    detail: format!(
                        "the database did not answer within {connecting:?} (it accepted the \
                         connection but stopped answering)"
                    ),
                })
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(StoreError::Open {
                path: location.into(),
                detail: "its connection's thread stopped".to_owned(),
            }),
        }
    }

    /// How long each call waits for the database at most before failing (module docs).
    pub fn bound(&self) -> Duration {
        self.bound
    }

    /// Runs `f` on the connection's thread and waits for its answer, at most the store's
    /// bound: past it the store gives up (module docs).
    fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        let stopped = || StoreError::Io {
            path: self.location.clone().into(),
            detail: "its connection's thread stopped".to_owned(),
        };
        let hung = || StoreError::Io {
            path: self.location.clone().into(),
            detail: format!(
                "the database did not answer a call within {:?} (it accepted the connection \
                 but stopped answering): this store has given up, retry on another",
                self.bound
            ),
        };
        if self.hung.load(Ordering::SeqCst) {
            return Err(hung());
        }
        let (answer, answered) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |c| {
            let _ = answer.send(f(c));
        });
        self.jobs
            .as_ref()
            .ok_or_else(stopped)?
            .send(job)
            .map_err(|_| stopped())?;
        match answered.recv_timeout(self.bound) {
            Ok(answer) => answer,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.hung.store(true, Ordering::SeqCst);
                tracing::warn!(store = %self.location, bound = ?self.bound, "the database stopped answering: the store gives up");
                Err(hung())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(stopped()),
        }
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // The thread ends once the queue is closed, closing the connection; one still
        // waiting on a database that stopped answering is left to end when it answers
        // or its connection dies (the keepalives, `tcp_user_timeout`), never waited for.
        self.jobs.take();
        if let Some(thread) = self.thread.take()
            && !self.hung.load(Ordering::SeqCst)
        {
            let _ = thread.join();
        }
    }
}

impl Store for PgStore {
    fn load(&self) -> Result<Loaded, StoreError> {
        self.call(Connection::load)
    }

    fn commit(&self, steps: &[Writes]) -> Result<(), StoreError> {
        // A record written by several steps is written once, as the last left it; in key
        // order (see the module docs).
        let Net {
            principals,
            instances,
        } = Writes::net(steps);
        if principals.is_empty() && instances.is_empty() {
            return Ok(());
        }
        let principals: Vec<PrincipalWrite> = principals
            .into_iter()
            .map(|(name, p)| PrincipalWrite {
                name: name.to_owned(),
                record: p.record.map(|r| r.map(<[u8]>::to_vec)),
                cleared: p.cleared,
                parts: p
                    .parts
                    .into_iter()
                    .map(|(part, r)| (part.to_owned(), r.map(<[u8]>::to_vec)))
                    .collect(),
            })
            .collect();
        let instances: Vec<(u64, Option<Vec<u8>>)> = instances
            .into_iter()
            .map(|(k, r)| (k, r.map(<[u8]>::to_vec)))
            .collect();
        self.call(move |c| c.commit(principals, instances))
    }

    fn location(&self) -> String {
        self.location.clone()
    }

    fn reserve_instance_ids(&self, count: u64) -> Result<std::ops::Range<u64>, StoreError> {
        self.call(move |c| c.reserve_instance_ids(count))
    }

    fn load_principal(&self, principal: &str) -> Result<PrincipalLoaded, StoreError> {
        let name = principal.to_owned();
        self.call(move |c| c.load_principal(&name))
    }

    fn load_instance(&self, id: u64) -> Result<Option<Vec<u8>>, StoreError> {
        self.call(move |c| c.load_instance(id))
    }

    fn live_instances(&self) -> Result<Vec<LiveInstance>, StoreError> {
        self.call(Connection::live_instances)
    }
}

/// `postgres://USER@HOST:PORT/DBNAME`: where the store is, without a password.
pub(crate) fn location_of(config: &Config) -> String {
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) if h.contains(':') => format!("[{h}]"),
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config
        .get_dbname()
        .or(config.get_user())
        .unwrap_or_default();
    format!("postgres://{user}{host}:{port}/{db}")
}

/// Bounds, on `config`, how long the database may leave a connection unanswered (issue
/// #41: a stopped but not dead server, a network black hole), where the URL did not say,
/// and returns the **call bound**: how long a call waits before failing. **\[project\]**
/// The bound is the URL's `tcp_user_timeout` (whole seconds, as the `postgres` crate reads
/// it), else [`CALL_TIMEOUT`](crate::leases::CALL_TIMEOUT), 5 s: under two thirds of the
/// arcade's default lease (10 s, renewed every third), so an owner whose renewal hangs
/// fails it, and stops, before its lease can expire and a standby take over. Besides
/// the caller's own deadline (the one that holds when the server's process is stopped: its
/// kernel still acknowledges what is sent), unless the URL sets them: connecting within
/// [`CONNECT_TIMEOUT`](crate::leases::CONNECT_TIMEOUT); `tcp_user_timeout` the bound and
/// TCP keepalives after half of it, every second, three tries (a black-holed network
/// closes the connection, ending a thread left waiting on it); and, on the session, the
/// server's `statement_timeout`, `lock_timeout` and `idle_in_transaction_session_timeout`
/// at four fifths of the bound (a server that answers but is stuck on a lock ends the
/// statement cleanly, before the caller's deadline, and a node paused mid-transaction
/// does not hold its locks — a lease row — forever).
pub(crate) fn bound_calls(config: &mut Config) -> Duration {
    use crate::leases::{CALL_TIMEOUT, CONNECT_TIMEOUT};
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    let bound = config
        .get_tcp_user_timeout()
        .copied()
        .unwrap_or(CALL_TIMEOUT);
    config.tcp_user_timeout(bound);
    // The `postgres` crate's default idle time is two hours: any other was the URL's.
    if config.get_keepalives_idle() == Duration::from_secs(2 * 60 * 60) {
        config.keepalives_idle((bound / 2).max(Duration::from_secs(1)));
    }
    if config.get_keepalives_interval().is_none() {
        config.keepalives_interval(Duration::from_secs(1));
    }
    if config.get_keepalives_retries().is_none() {
        config.keepalives_retries(3);
    }
    let server_side = (bound * 4 / 5).as_millis().max(1);
    let mut options = config.get_options().unwrap_or_default().to_owned();
    for setting in [
        "statement_timeout",
        "lock_timeout",
        "idle_in_transaction_session_timeout",
    ] {
        if !options.contains(setting) {
            if !options.is_empty() {
                options.push(' ');
            }
            options.push_str(&format!("-c {setting}={server_side}"));
        }
    }
    config.options(&options);
    bound
}

/// An error and its causes, as one line (a database error's own message is its source).
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

/// What one commit writes of a principal's record (`Writes::net`, owned for the
/// connection's thread).
struct PrincipalWrite {
    name: String,
    /// The core record put or forgotten; `None`: only parts are written (the core's
    /// revision is checked all the same).
    record: Option<Option<Vec<u8>>>,
    /// Every part kept before goes first.
    cleared: bool,
    /// Parts put or forgotten, by name.
    parts: Vec<(String, Option<Vec<u8>>)>,
}

/// The statements writing principals' parts.
struct Parts {
    /// Puts parts `$2` (names) with records `$3` of principal `$1`.
    put: Statement,
    /// Forgets parts `$2` (names) of principal `$1`.
    delete: Statement,
    /// Forgets every part of principal `$1`.
    clear: Statement,
}

impl Parts {
    fn prepare(client: &mut Client) -> Result<Parts, postgres::Error> {
        Ok(Parts {
            put: client.prepare(
                "INSERT INTO principal_parts (principal, part, record) \
                 SELECT $1, u.part, u.record FROM unnest($2::text[], $3::bytea[]) AS u(part, record) \
                 ON CONFLICT (principal, part) DO UPDATE SET record = EXCLUDED.record",
            )?,
            delete: client
                .prepare("DELETE FROM principal_parts WHERE principal = $1 AND part = ANY($2)")?,
            clear: client.prepare("DELETE FROM principal_parts WHERE principal = $1")?,
        })
    }

    /// Writes `p`'s parts: every part kept before forgotten when it was cleared, then the
    /// parts forgotten, then those put.
    fn write(&self, tx: &mut Transaction<'_>, p: &PrincipalWrite) -> Result<(), postgres::Error> {
        if p.cleared {
            tx.execute(&self.clear, &[&p.name])?;
        }
        let gone: Vec<&str> = p
            .parts
            .iter()
            .filter(|(_, r)| r.is_none())
            .map(|(n, _)| n.as_str())
            .collect();
        if !gone.is_empty() {
            tx.execute(&self.delete, &[&p.name, &gone])?;
        }
        let (names, records): (Vec<&str>, Vec<&[u8]>) = p
            .parts
            .iter()
            .filter_map(|(n, r)| Some((n.as_str(), r.as_deref()?)))
            .unzip();
        if !names.is_empty() {
            tx.execute(&self.put, &[&p.name, &names, &records])?;
        }
        Ok(())
    }
}

/// A table's statements.
struct Table {
    /// `principal "alice"` / `instance 7`, for errors.
    kind: &'static str,
    /// Replaces the record where the row has the revision expected; the new revision.
    update: Statement,
    /// Creates the record where there is no row; its revision.
    insert: Statement,
    /// Deletes the row where it has the revision expected.
    delete_at: Statement,
    /// Deletes the row, whatever its revision (one no row was expected for); how many.
    delete_any: Statement,
    /// The row's revision now.
    revision: Statement,
    /// Takes the next revision where the row has the revision expected, changing nothing
    /// else; the new revision.
    touch: Statement,
}

impl Table {
    fn prepare(
        client: &mut Client,
        name: &str,
        kind: &'static str,
    ) -> Result<Table, postgres::Error> {
        Ok(Table {
            kind,
            update: client.prepare(&format!(
                "UPDATE {name} SET record = $2, revision = nextval('mcpl_revisions') \
                 WHERE key = $1 AND revision = $3 RETURNING revision"
            ))?,
            insert: client.prepare(&format!(
                "INSERT INTO {name} (key, record, revision) \
                 VALUES ($1, $2, nextval('mcpl_revisions')) \
                 ON CONFLICT (key) DO NOTHING RETURNING revision"
            ))?,
            delete_at: client.prepare(&format!(
                "DELETE FROM {name} WHERE key = $1 AND revision = $2"
            ))?,
            delete_any: client.prepare(&format!("DELETE FROM {name} WHERE key = $1"))?,
            revision: client.prepare(&format!("SELECT revision FROM {name} WHERE key = $1"))?,
            touch: client.prepare(&format!(
                "UPDATE {name} SET revision = nextval('mcpl_revisions') \
                 WHERE key = $1 AND revision = $2 RETURNING revision"
            ))?,
        })
    }

    /// Writes one record (`None`: deletes it) over the revision `expected` (`None`: no
    /// row). `Ok(Ok(revision))` once written (`None` once deleted), `Ok(Err(detail))`
    /// when the row is not as expected.
    fn write(
        &self,
        tx: &mut Transaction<'_>,
        key: &(dyn ToSql + Sync),
        record: Option<&[u8]>,
        expected: Option<i64>,
    ) -> Result<Result<Option<i64>, String>, postgres::Error> {
        let written = match (record, expected) {
            (Some(r), Some(rev)) => tx
                .query_opt(&self.update, &[key, &r, &rev])?
                .map(|row| Some(row.get::<_, i64>(0))),
            (Some(r), None) => tx
                .query_opt(&self.insert, &[key, &r])?
                .map(|row| Some(row.get::<_, i64>(0))),
            (None, Some(rev)) => (tx.execute(&self.delete_at, &[key, &rev])? == 1).then_some(None),
            (None, None) => (tx.execute(&self.delete_any, &[key])? == 0).then_some(None),
        };
        self.checked(tx, key, expected, written)
    }

    /// Checks that the row still has the revision `expected` (`None`: that there is no
    /// row), taking the next revision when it has one, for a write of parts of its record
    /// only (module docs). As [`Table::write`].
    fn touch(
        &self,
        tx: &mut Transaction<'_>,
        key: &(dyn ToSql + Sync),
        expected: Option<i64>,
    ) -> Result<Result<Option<i64>, String>, postgres::Error> {
        let touched = match expected {
            Some(rev) => tx
                .query_opt(&self.touch, &[key, &rev])?
                .map(|row| Some(row.get::<_, i64>(0))),
            None => tx
                .query_opt(&self.revision, &[key])?
                .is_none()
                .then_some(None),
        };
        self.checked(tx, key, expected, touched)
    }

    /// `Ok(Ok(written))` when the row was as expected, else what it has instead.
    fn checked(
        &self,
        tx: &mut Transaction<'_>,
        key: &(dyn ToSql + Sync),
        expected: Option<i64>,
        written: Option<Option<i64>>,
    ) -> Result<Result<Option<i64>, String>, postgres::Error> {
        if let Some(now) = written {
            return Ok(Ok(now));
        }
        let found: Option<i64> = tx.query_opt(&self.revision, &[key])?.map(|r| r.get(0));
        let expected = match expected {
            Some(rev) => format!("revision {rev} expected"),
            None => "no record expected".to_owned(),
        };
        let found = match found {
            Some(rev) => format!("the database has revision {rev}"),
            None => "the database has none".to_owned(),
        };
        Ok(Err(format!("{expected}, {found}")))
    }
}

/// The revisions this store last saw: of each record it loaded or wrote. A record not
/// here had none (it was not there when loaded, or this store deleted it).
#[derive(Default)]
struct Known {
    principals: HashMap<String, i64>,
    instances: HashMap<u64, i64>,
}

/// The connection, on its own thread.
struct Connection {
    location: String,
    client: Client,
    principals: Table,
    instances: Table,
    parts: Parts,
    known: Known,
    /// The leases commits check, and the statement checking one.
    fence: Option<(Fence, Statement)>,
    /// The store gave up waiting (module docs): a commit answered after that is rolled
    /// back, never committed.
    given_up: Arc<AtomicBool>,
}

/// An instance's id as its key: the same 64 bits (ids past `i64::MAX` read back as the
/// same id).
fn instance_key(id: u64) -> i64 {
    i64::from_ne_bytes(id.to_ne_bytes())
}

fn instance_id(key: i64) -> u64 {
    u64::from_ne_bytes(key.to_ne_bytes())
}

impl Connection {
    /// Connects, creates the schema where missing, checks the format, prepares the
    /// statements.
    fn open(
        config: Config,
        location: String,
        fence: Option<Fence>,
        given_up: Arc<AtomicBool>,
    ) -> Result<Connection, StoreError> {
        let open = |e: &postgres::Error| StoreError::Open {
            path: location.clone().into(),
            detail: chain(e),
        };
        let mut client = config.connect(NoTls).map_err(|e| open(&e))?;
        let found = {
            let mut tx = client.transaction().map_err(|e| open(&e))?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
                .map_err(|e| open(&e))?;
            tx.batch_execute(SCHEMA).map_err(|e| open(&e))?;
            tx.batch_execute(crate::leases::SCHEMA)
                .map_err(|e| open(&e))?;
            tx.execute(
                "INSERT INTO mcpl_meta (key, value) VALUES ('format', $1) ON CONFLICT (key) DO NOTHING",
                &[&FORMAT],
            )
            .map_err(|e| open(&e))?;
            // A database of records written whole reads as it is (module docs).
            tx.execute(
                "UPDATE mcpl_meta SET value = $1 WHERE key = 'format' AND value = $2",
                &[&FORMAT, &FORMAT_WHOLE],
            )
            .map_err(|e| open(&e))?;
            let found: i64 = tx
                .query_one("SELECT value FROM mcpl_meta WHERE key = 'format'", &[])
                .map_err(|e| open(&e))?
                .get(0);
            tx.commit().map_err(|e| open(&e))?;
            found
        };
        if found != FORMAT {
            return Err(StoreError::Incompatible {
                path: location.into(),
                found: u64::try_from(found).unwrap_or_default(),
                expected: FORMAT as u64,
            });
        }
        let principals =
            Table::prepare(&mut client, "principals", "principal").map_err(|e| open(&e))?;
        let instances =
            Table::prepare(&mut client, "instances", "instance").map_err(|e| open(&e))?;
        let parts = Parts::prepare(&mut client).map_err(|e| open(&e))?;
        let fence = match fence {
            Some(fence) => Some((
                fence,
                client
                    .prepare(crate::leases::FENCE_CHECK)
                    .map_err(|e| open(&e))?,
            )),
            None => None,
        };
        Ok(Connection {
            location,
            client,
            principals,
            instances,
            parts,
            known: Known::default(),
            fence,
            given_up,
        })
    }

    /// Issue #41: a connection the database closed (it was restarted: `pg_ctl stop -m
    /// immediate`, a crash) is made again before the next call, the revisions known kept
    /// (the rows outlive the restart, and the revision check stays whole); one that
    /// cannot be made yet leaves the call to fail as before, and the next one tries
    /// again. A node of several serving by principal keeps its store from its start, so
    /// without this a database restarted once would refuse it every read until the
    /// process ended.
    fn again_if_closed(&mut self, config: &Config) {
        if !self.client.is_closed() {
            return;
        }
        let fence = self.fence.as_ref().map(|(f, _)| f.clone());
        match Connection::open(
            config.clone(),
            self.location.clone(),
            fence,
            self.given_up.clone(),
        ) {
            Ok(mut fresh) => {
                fresh.known = std::mem::take(&mut self.known);
                *self = fresh;
                tracing::info!(store = %self.location, "the store's connection made again");
            }
            Err(e) => {
                tracing::debug!(store = %self.location, error = %e, "the store's connection cannot be made again yet");
            }
        }
    }

    fn io(&self, e: &postgres::Error) -> StoreError {
        StoreError::Io {
            path: self.location.clone().into(),
            detail: chain(e),
        }
    }

    /// Every record, read in one snapshot; their revisions remembered.
    fn load(&mut self) -> Result<Loaded, StoreError> {
        let mut tx = self
            .client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|e| StoreError::Io {
                path: self.location.clone().into(),
                detail: chain(&e),
            })?;
        let read = (|| {
            let principals = tx.query(
                "SELECT key, record, revision FROM principals ORDER BY key",
                &[],
            )?;
            let instances = tx.query(
                "SELECT key, record, revision FROM instances ORDER BY key",
                &[],
            )?;
            let parts = tx.query(
                "SELECT principal, part, record FROM principal_parts ORDER BY principal, part",
                &[],
            )?;
            Ok::<_, postgres::Error>((principals, instances, parts))
        })();
        let (principals, instances, parts) = match read {
            Ok(rows) => rows,
            Err(e) => {
                drop(tx);
                return Err(self.io(&e));
            }
        };
        drop(tx);
        let mut loaded = Loaded::default();
        let mut known = Known::default();
        for row in principals {
            let key: String = row.get(0);
            known.principals.insert(key.clone(), row.get(2));
            loaded.principals.push((key, row.get(1)));
        }
        for row in instances {
            let id = instance_id(row.get(0));
            known.instances.insert(id, row.get(2));
            loaded.instances.push((id, row.get(1)));
        }
        for row in parts {
            loaded.parts.push((row.get(0), row.get(1), row.get(2)));
        }
        self.known = known;
        Ok(loaded)
    }

    /// A read-only snapshot for the reads of one call.
    fn snapshot(&mut self) -> Result<Transaction<'_>, StoreError> {
        let location = self.location.clone();
        self.client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|e| StoreError::Io {
                path: location.into(),
                detail: chain(&e),
            })
    }

    /// One principal's core record and parts, read in one snapshot; its revision
    /// remembered (none: that it has none), beside those already known (issue #41: a
    /// principal read when first used).
    fn load_principal(&mut self, name: &str) -> Result<PrincipalLoaded, StoreError> {
        let mut tx = self.snapshot()?;
        let read = (|| {
            let core = tx.query_opt(
                "SELECT record, revision FROM principals WHERE key = $1",
                &[&name],
            )?;
            let parts = tx.query(
                "SELECT part, record FROM principal_parts WHERE principal = $1 ORDER BY part",
                &[&name],
            )?;
            Ok::<_, postgres::Error>((core, parts))
        })();
        drop(tx);
        let (core, parts) = read.map_err(|e| self.io(&e))?;
        let core = core.map(|row| {
            self.known.principals.insert(name.to_owned(), row.get(1));
            row.get::<_, Vec<u8>>(0)
        });
        if core.is_none() {
            self.known.principals.remove(name);
        }
        Ok(PrincipalLoaded {
            core,
            parts: parts.into_iter().map(|r| (r.get(0), r.get(1))).collect(),
        })
    }

    /// One instance's record; its revision remembered, as for a principal's.
    /// A block of `count` instance ids from the counter row of `mcpl_meta`, in one
    /// statement (one round trip, its own transaction): the row's lock orders nodes
    /// reserving at once, and the block starts past every instance kept too (a database
    /// written before the counter, a record put by hand).
    fn reserve_instance_ids(&mut self, count: u64) -> Result<std::ops::Range<u64>, StoreError> {
        let count = i64::try_from(count.max(1)).unwrap_or(i64::MAX);
        let end: i64 = self
            .client
            .query_one(RESERVE_INSTANCE_IDS, &[&NEXT_INSTANCE, &count])
            .map_err(|e| self.io(&e))?
            .get(0);
        let end = u64::try_from(end).unwrap_or(0);
        // `count` is positive: the block is `end - count .. end`.
        Ok(end.saturating_sub(count.unsigned_abs())..end)
    }

    fn load_instance(&mut self, id: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let row = self
            .client
            .query_opt(
                "SELECT record, revision FROM instances WHERE key = $1",
                &[&instance_key(id)],
            )
            .map_err(|e| self.io(&e))?;
        Ok(match row {
            Some(row) => {
                self.known.instances.insert(id, row.get(1));
                Some(row.get(0))
            }
            None => {
                self.known.instances.remove(&id);
                None
            }
        })
    }

    /// Every instance's record, listed ([`LiveInstance::of`]); their revisions
    /// remembered.
    fn live_instances(&mut self) -> Result<Vec<LiveInstance>, StoreError> {
        let rows = self
            .client
            .query(
                "SELECT key, record, revision FROM instances ORDER BY key",
                &[],
            )
            .map_err(|e| self.io(&e))?;
        let mut live = Vec::with_capacity(rows.len());
        for row in rows {
            let id = instance_id(row.get(0));
            self.known.instances.insert(id, row.get(2));
            live.push(LiveInstance::of(id, row.get(1)));
        }
        Ok(live)
    }

    /// Writes the records in one transaction, each over the revision last seen; the
    /// revisions written remembered once it committed.
    fn commit(
        &mut self,
        principals: Vec<PrincipalWrite>,
        instances: Vec<(u64, Option<Vec<u8>>)>,
    ) -> Result<(), StoreError> {
        let Connection {
            client,
            location,
            principals: p_table,
            instances: i_table,
            parts,
            known,
            fence,
            given_up,
        } = self;
        let io = |e: &postgres::Error| StoreError::Io {
            path: location.clone().into(),
            detail: chain(e),
        };
        let conflict = |table: &Table, key: String, detail: String| StoreError::Conflict {
            store: location.clone(),
            what: format!("{} {key}", table.kind),
            detail,
        };
        let mut tx = client.transaction().map_err(|e| io(&e))?;
        // The leases covering what is written first: those covering every record (kind
        // `arcade`) and the records' own, in `LOCK_ORDER`; each still this node's, and
        // kept so (`FOR SHARE`) until the commit ends.
        if let Some((fence, check)) = fence {
            let mut covering: Vec<_> = fence
                .covering_all()
                .into_iter()
                .chain(
                    principals
                        .iter()
                        .filter_map(|p| fence.get(PRINCIPAL, &p.name)),
                )
                .chain(
                    instances
                        .iter()
                        .filter_map(|(id, _)| fence.get(INSTANCE, &id.to_string())),
                )
                .collect();
            // In the one order every statement locking several lease rows takes them:
            // a commit and a renewal in different orders deadlocked.
            crate::leases::sort_for_locking(&mut covering);
            for lease in &covering {
                let held = tx
                    .query_opt(check, &[&lease.kind, &lease.key, &lease.node, &lease.token])
                    .map_err(|e| io(&e))?;
                if held.is_none() {
                    return Err(StoreError::Conflict {
                        store: location.clone(),
                        what: format!("the {} lease {:?}", lease.kind, lease.key),
                        detail: format!(
                            "node {:?} no longer holds it with token {} (it expired or \
                             another node took it over): this node must stop writing what \
                             it covers",
                            lease.node, lease.token
                        ),
                    });
                }
            }
        }
        let mut wrote_principals = Vec::with_capacity(principals.len());
        for p in &principals {
            let name = &p.name;
            let expected = known.principals.get(name).copied();
            let written = match &p.record {
                Some(record) => p_table.write(&mut tx, name, record.as_deref(), expected),
                // Only parts: the core's revision is checked all the same (module docs).
                None => p_table.touch(&mut tx, name, expected),
            };
            match written.map_err(|e| io(&e))? {
                Ok(now) => wrote_principals.push((name, now)),
                // Dropping the transaction rolls it back.
                Err(detail) => return Err(conflict(p_table, format!("{name:?}"), detail)),
            }
            parts.write(&mut tx, p).map_err(|e| io(&e))?;
        }
        let mut wrote_instances = Vec::with_capacity(instances.len());
        for (id, record) in &instances {
            let expected = known.instances.get(id).copied();
            match i_table
                .write(&mut tx, &instance_key(*id), record.as_deref(), expected)
                .map_err(|e| io(&e))?
            {
                Ok(now) => wrote_instances.push((*id, now)),
                Err(detail) => return Err(conflict(i_table, id.to_string(), detail)),
            }
        }
        if given_up.load(Ordering::SeqCst) {
            // The caller was told this commit failed: it must not land (dropping the
            // transaction rolls it back).
            return Err(StoreError::Io {
                path: location.clone().into(),
                detail: "the store gave up waiting for the database: rolled back".to_owned(),
            });
        }
        tx.commit().map_err(|e| io(&e))?;
        for (name, now) in wrote_principals {
            match now {
                Some(rev) => known.principals.insert(name.clone(), rev),
                None => known.principals.remove(name),
            };
        }
        for (id, now) in wrote_instances {
            match now {
                Some(rev) => known.instances.insert(id, rev),
                None => known.instances.remove(&id),
            };
        }
        Ok(())
    }
}

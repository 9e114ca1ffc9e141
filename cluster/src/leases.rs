//! [`PgLeases`]: who runs what, in PostgreSQL (issue #41 item 3), and the [`Fence`] a
//! [`PgStore`](crate::PgStore) checks them with.
//!
//! A lease is a row of `mcpl_leases`: `(kind, key)` → `(node, token, expires_at)`. Kinds
//! name what is owned ([`PRINCIPAL`]: a principal's actor, [`INSTANCE`]: an instance, its
//! bot and its timers); the key names which. Time is the **database's clock** (`now()`),
//! one clock for every node, so nodes' clocks need not agree.
//!
//! - [`PgLeases::acquire`] takes a lease only where there is none or it expired, with a
//!   fresh **fencing token** drawn from the sequence `mcpl_lease_tokens`: a later holder
//!   always has a larger token than any before it.
//! - [`PgLeases::renew`] extends it, only by its holder with its current token, and only
//!   while it has not expired (**\[project\]**: an expired lease is lost even when nobody
//!   took it yet, so a holder never renews across a gap in which another node could have
//!   held it; it acquires again, with a new token).
//! - [`PgLeases::release`] gives it up (only the current holder's release counts);
//!   [`PgLeases::holder`] says who holds it now.
//! - [`PgLeases::take_over`] waits for another holder's lease to expire (by the expiry the
//!   database gives) and acquires it: what a node does for a dead node's work.
//! - [`PgLeases::acquire_or_reclaim`] also takes back at once, with a fresh token, a lease
//!   held under this node's own name: an earlier life of the node (a process started
//!   again under the same name), which can no longer renew it (**\[project\]**).
//!
//! **Fencing.** A node that stopped renewing (paused, cut off) may still believe it holds
//! a lease and write. A [`PgStore`](crate::PgStore) made with
//! [`PgStore::connect_fenced`](crate::PgStore::connect_fenced) carries a [`Fence`]: the
//! leases its node holds, shared with the code that acquires and renews them. Each commit
//! checks, in its own transaction and before writing, that every lease of the fence
//! covering a record it writes (a principal's record: the [`PRINCIPAL`] lease of its
//! name; an instance's: the [`INSTANCE`] lease of its id in decimal) is still this node's
//! with the same token and unexpired, and locks that row (`FOR SHARE`) until the commit
//! ends, so a takeover waits for a commit in flight and a commit after a takeover sees
//! it. A lease of kind [`ARCADE`] covers every record: a commit checks it whatever it
//! writes (the coarse ownership `mcpl-arcade serve --nats` uses for now, one node running
//! everything). A stale lease fails the whole commit with
//! [`StoreError::Conflict`](mcpl_server::StoreError::Conflict) naming the lease. The
//! [`Store`](mcpl_server::Store) trait is unchanged: the fence is the store's own state,
//! and the embedded stores have none. A record no lease of the fence covers is written
//! with the revision check alone.
//!
//! The connection lives on a thread of its own, as [`PgStore`](crate::PgStore)'s does;
//! the calls block until the database answers (from async code: `spawn_blocking`).
//!
//! **A database that restarts** (issue #41: PostgreSQL stopped with `-m immediate` and
//! started again). The call the connection was lost in fails ([`LeaseError::Database`]);
//! the next call connects again first (one try, within [`CONNECT_TIMEOUT`] unless the URL
//! sets `connect_timeout`), and fails the same while the database is down. So a caller
//! that tries again at its own pace (a standby waiting for the arcade's lease) is back as
//! soon as the database is, never stuck on a connection that is gone; the pace, and so
//! any backoff, is the caller's.
//!
//! **A database that stops answering** (issue #41: the connection open, nothing coming
//! back — a server stopped but not dead, a network black hole). Each call waits at most
//! [`PgLeases::bound`] ([`CALL_TIMEOUT`], 5 s, unless the URL sets `tcp_user_timeout`;
//! see [`PgStore`](crate::PgStore)'s module docs for the keepalives and server-side
//! timeouts set with it) and then fails with [`LeaseError::Database`], retryable: an
//! owner's renewal that hangs fails within the bound — within half the lease's time to
//! live when that is shorter ([`PgLeases::renewal_bound`]), so a short lease is never
//! outlived by a hung renewal — and the owner stops as when the connection is lost. The connection's thread, still waiting, is left to end when the
//! database answers or its connection dies; the next call connects again on a thread of
//! its own. **\[project\]** At most two such threads are left waiting at once: past that
//! a call fails at once, without connecting, until one of them ends.

use crate::pg_store::{chain, location_of};
use postgres::{Client, Config, NoTls};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

/// The kind of a principal's lease: its actor runs on the holder.
pub const PRINCIPAL: &str = "principal";
/// The kind of an instance's lease: the instance (a game, its bot, its timers) runs on
/// the holder.
pub const INSTANCE: &str = "instance";
/// The kind of a lease covering **every** record: the holder runs the whole arcade (issue
/// #41's coarse ownership, the first step: one node serves, the others stand by and
/// forward to it). A fenced commit checks every lease of this kind its [`Fence`] holds,
/// whatever it writes, before the leases of the records themselves.
pub const ARCADE: &str = "arcade";

/// The leases' table and token sequence, created where missing (under the schema's
/// advisory lock, with the store's tables).
pub(crate) const SCHEMA: &str = "
    CREATE SEQUENCE IF NOT EXISTS mcpl_lease_tokens;
    CREATE TABLE IF NOT EXISTS mcpl_leases (
        kind text NOT NULL,
        key text NOT NULL,
        node text NOT NULL,
        token bigint NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (kind, key)
    );
    ALTER TABLE mcpl_leases ADD COLUMN IF NOT EXISTS online boolean NOT NULL DEFAULT false;
";

/// The order in which every statement locking several lease rows locks them: by kind,
/// then key, each compared byte by byte (Rust's `str` order, PostgreSQL's `COLLATE "C"`).
/// A fenced commit locks its leases `FOR SHARE` in this order ([`sort_for_locking`]) and
/// [`PgLeases::renew_all`] and [`PgLeases::share_online`] lock theirs `FOR UPDATE` in it
/// too, so no two of them wait for each other in a cycle: a renewal in the join's order
/// deadlocked with a commit (`sim-perf --only cluster`, principal mode; PostgreSQL
/// aborted one after its `deadlock_timeout`, the renewal's bound ran out first, and the
/// node stopped).
pub const LOCK_ORDER: &str = "(kind, key), byte order";

/// Sorts `leases` into [`LOCK_ORDER`].
pub fn sort_for_locking(leases: &mut [Lease]) {
    leases.sort_by(|a, b| {
        (a.kind.as_bytes(), a.key.as_bytes()).cmp(&(b.kind.as_bytes(), b.key.as_bytes()))
    });
}

/// The check a fenced commit makes of one lease (see the module docs).
pub(crate) const FENCE_CHECK: &str = "SELECT 1 FROM mcpl_leases \
     WHERE kind = $1 AND key = $2 AND node = $3 AND token = $4 AND expires_at > now() \
     FOR SHARE";

/// A lease held: what a node keeps to renew, release and fence with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// What kind of thing is owned ([`PRINCIPAL`], [`INSTANCE`], …).
    pub kind: String,
    /// Which one.
    pub key: String,
    /// The holder.
    pub node: String,
    /// The fencing token: larger than any earlier holder's.
    pub token: i64,
}

/// The leases marked online, as [`PgLeases::share_online`] read them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OnlineLeases {
    /// (key, holder) of the first ones, in key order.
    pub keys: Vec<(String, String)>,
    /// How many are marked online in all.
    pub total: usize,
}

/// Who holds a lease now.
#[derive(Debug, Clone, PartialEq)]
pub struct Holder {
    /// The node.
    pub node: String,
    /// Its fencing token.
    pub token: i64,
    /// How long until the lease expires unless renewed, by the database's clock.
    pub expires_in: Duration,
}

/// A lease that expired ([`PgLeases::expired`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Expired {
    /// Its key.
    pub key: String,
    /// The node that held it last.
    pub node: String,
    /// How long ago it expired, by the database's clock.
    pub ago: Duration,
}

/// What went wrong with a lease.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Another node holds the lease and it has not expired.
    #[error("the {kind} lease {key:?} is held by node {:?} for {:?} more", holder.node, holder.expires_in)]
    Held {
        /// The lease's kind.
        kind: String,
        /// Its key.
        key: String,
        /// Who holds it.
        holder: Holder,
    },
    /// The lease is no longer this holder's (expired, taken over or released): it must
    /// stop what the lease covered.
    #[error("the {kind} lease {key:?} is no longer node {node:?}'s with token {token}")]
    Lost {
        /// The lease's kind.
        kind: String,
        /// Its key.
        key: String,
        /// The node that held it.
        node: String,
        /// The token it held it with.
        token: i64,
    },
    /// A wait for a lease to free ([`PgLeases::take_over`]) reached its limit.
    #[error("the {kind} lease {key:?} was still held after {after:?}")]
    StillHeld {
        /// The lease's kind.
        kind: String,
        /// Its key.
        key: String,
        /// The wait.
        after: Duration,
    },
    /// The database could not be reached or failed.
    #[error("the leases at {location}: {detail}")]
    Database {
        /// Where (without a password).
        location: String,
        /// What went wrong.
        detail: String,
    },
}

/// How long connecting (and connecting again) may take, unless the URL says.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one call (to [`PgLeases`] or [`PgStore`](crate::PgStore)) waits for the
/// database at most, unless the URL sets `tcp_user_timeout`. **\[project\]** Under two
/// thirds of the arcade's default lease (10 s, renewed every third of it): an owner whose
/// renewal hangs gives up, and stops, before its lease can expire and a standby take
/// over (`docs/cluster.md` §6).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// The most connection threads left waiting on a database that stopped answering.
const MAX_LEFT_WAITING: usize = 2;

/// A call handed to the connection's thread: the connection, or why there is none now.
type Job = Box<dyn FnOnce(Result<&mut Client, postgres::Error>) + Send>;

/// The leases of one node, in PostgreSQL. See the module docs.
pub struct PgLeases {
    node: String,
    location: String,
    /// The connection's settings, bounds set, to connect again on a new thread.
    config: Config,
    /// How long a call waits for the database at most.
    bound: Duration,
    threads: Mutex<Threads>,
}

/// The connection's thread in use, and those left waiting on a database that stopped
/// answering (module docs).
#[derive(Default)]
struct Threads {
    /// The one in use: its generation, queue and handle; `None` after it was left.
    current: Option<(u64, mpsc::Sender<Job>, std::thread::JoinHandle<()>)>,
    /// The last generation started.
    generation: u64,
    /// Threads left waiting.
    left: Vec<std::thread::JoinHandle<()>>,
}

/// Serves the calls of `queue` on `client`, connecting again before a call once the
/// connection is lost (or there is none yet); a call fails when it cannot be.
fn serve(config: &Config, mut client: Option<Client>, queue: mpsc::Receiver<Job>) {
    for job in queue {
        if client.as_ref().is_none_or(Client::is_closed) {
            client = None;
            match config.connect(NoTls) {
                Ok(c) => client = Some(c),
                Err(e) => {
                    job(Err(e));
                    continue;
                }
            }
        }
        if let Some(c) = client.as_mut() {
            job(Ok(c));
        }
    }
}

impl std::fmt::Debug for PgLeases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgLeases")
            .field("node", &self.node)
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

/// A duration as the seconds PostgreSQL's `make_interval` takes.
fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Seconds from PostgreSQL as a duration (negative: none).
fn duration(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs.max(0.0)).unwrap_or(Duration::MAX)
}

impl PgLeases {
    /// Connects to the database `url` as the node `node`, creating the leases' table
    /// where it is missing.
    pub fn connect(url: &str, node: &str) -> Result<PgLeases, LeaseError> {
        let mut config: Config =
            url.parse()
                .map_err(|e: postgres::Error| LeaseError::Database {
                    location: "the PostgreSQL URL".to_owned(),
                    detail: format!("it cannot be read: {}", chain(&e)),
                })?;
        let bound = crate::pg_store::bound_calls(&mut config);
        let connecting = bound + *config.get_connect_timeout().unwrap_or(&bound);
        let location = location_of(&config);
        let db = |detail: String| LeaseError::Database {
            location: location.clone(),
            detail,
        };
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, started) = mpsc::channel();
        let config_of_thread = config.clone();
        let thread = std::thread::Builder::new()
            .name("mcpl-pg-leases".to_owned())
            .spawn(move || {
                let config = config_of_thread;
                let opened = (|| {
                    let mut client = config.connect(NoTls)?;
                    crate::pg_store::create_schema(&mut client)?;
                    Ok::<_, postgres::Error>(client)
                })();
                match opened {
                    Ok(client) => {
                        let _ = ready.send(Ok(()));
                        // A connection lost (the database restarted) is made again
                        // before the next call, which fails when it cannot be.
                        serve(&config, Some(client), queue);
                    }
                    Err(e) => {
                        let _ = ready.send(Err(chain(&e)));
                    }
                }
            })
            .map_err(|e| db(format!("cannot start its connection's thread: {e}")))?;
        let leases = PgLeases {
            node: node.to_owned(),
            location: location.clone(),
            config,
            bound,
            threads: Mutex::new(Threads {
                current: Some((0, jobs, thread)),
                ..Threads::default()
            }),
        };
        match started.recv_timeout(connecting) {
            Ok(Ok(())) => Ok(leases),
            Ok(Err(detail)) => Err(db(detail)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // The thread is left to end on its own (dropping its handle detaches it).
                leases.threads_now().current.take();
                Err(db(format!(
                    "the database did not answer within {connecting:?} (it accepted the \
                     connection but stopped answering)"
                )))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(db("its connection's thread stopped".to_owned()))
            }
        }
    }

    /// How long each call waits for the database at most before failing (module docs).
    pub fn bound(&self) -> Duration {
        self.bound
    }

    /// How long a renewal to `ttl` waits for the database at most: the connection's
    /// [`bound`](PgLeases::bound), or half of `ttl` when that is shorter. **\[project\]**
    /// Half: the owner renews at a third of the lease's time, so a renewal that hangs is
    /// given up by five sixths of it, leaving a sixth (250 ms of a 1.5 s lease) for the
    /// owner to stop serving before the lease expires; a hung renewal is never outlived
    /// by the lease it renews, and one that merely answers late (under half the lease) is
    /// still waited for.
    pub fn renewal_bound(&self, ttl: Duration) -> Duration {
        self.bound.min(ttl / 2)
    }

    fn threads_now(&self) -> std::sync::MutexGuard<'_, Threads> {
        self.threads.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The queue of the connection's thread in use, and its generation: a new thread
    /// (connecting on its first call) where the last was left waiting, unless too many
    /// are.
    fn queue(&self) -> Result<(u64, mpsc::Sender<Job>), LeaseError> {
        let mut threads = self.threads_now();
        threads.left.retain(|t| !t.is_finished());
        if let Some((generation, jobs, _)) = &threads.current {
            return Ok((*generation, jobs.clone()));
        }
        let db = |detail: String| LeaseError::Database {
            location: self.location.clone(),
            detail,
        };
        if threads.left.len() >= MAX_LEFT_WAITING {
            return Err(db(format!(
                "the database has not answered {} earlier calls (each left after {:?}): \
                 not connecting again until one of them ends",
                threads.left.len(),
                self.bound
            )));
        }
        let (jobs, queue) = mpsc::channel::<Job>();
        let config = self.config.clone();
        let thread = std::thread::Builder::new()
            .name("mcpl-pg-leases".to_owned())
            .spawn(move || serve(&config, None, queue))
            .map_err(|e| db(format!("cannot start its connection's thread: {e}")))?;
        threads.generation += 1;
        let generation = threads.generation;
        threads.current = Some((generation, jobs.clone(), thread));
        Ok((generation, jobs))
    }

    /// This node's name.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Where the leases are: `postgres://USER@HOST:PORT/DBNAME`, without a password.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Runs `f` on the connection's thread and waits for its answer, at most
    /// [`PgLeases::bound`].
    fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<R, postgres::Error> + Send + 'static,
    ) -> Result<R, LeaseError> {
        self.call_within(self.bound, f)
    }

    /// Runs `f` on the connection's thread and waits for its answer, at most `bound`.
    fn call_within<R: Send + 'static>(
        &self,
        bound: Duration,
        f: impl FnOnce(&mut Client) -> Result<R, postgres::Error> + Send + 'static,
    ) -> Result<R, LeaseError> {
        let stopped = || LeaseError::Database {
            location: self.location.clone(),
            detail: "its connection's thread stopped".to_owned(),
        };
        let (answer, answered) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |c| {
            let _ = answer.send(c.and_then(f));
        });
        let (generation, jobs) = self.queue()?;
        jobs.send(job).map_err(|_| stopped())?;
        match answered.recv_timeout(bound) {
            Ok(answer) => answer.map_err(|e| LeaseError::Database {
                location: self.location.clone(),
                detail: chain(&e),
            }),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // Leave the thread waiting (once, whichever call saw it first); the next
                // call connects again on a new one.
                let mut threads = self.threads_now();
                if threads
                    .current
                    .as_ref()
                    .is_some_and(|(g, _, _)| *g == generation)
                    && let Some((_, _, thread)) = threads.current.take()
                {
                    threads.left.push(thread);
                }
                drop(threads);
                tracing::warn!(leases = %self.location, ?bound, "the database stopped answering a lease call");
                Err(LeaseError::Database {
                    location: self.location.clone(),
                    detail: format!(
                        "the database did not answer within {bound:?} (it accepted the \
                         connection but stopped answering)"
                    ),
                })
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(stopped()),
        }
    }

    /// Takes the lease `(kind, key)` for `ttl`, only where nobody holds it or its holder's
    /// expired; [`LeaseError::Held`] naming the holder otherwise (this node too: it renews
    /// what it holds).
    pub fn acquire(&self, kind: &str, key: &str, ttl: Duration) -> Result<Lease, LeaseError> {
        self.take(kind, key, ttl, false)
    }

    /// [`acquire`](PgLeases::acquire), and also where the holder is **this node's own
    /// name**: an earlier life of this node (the process that held it, died or stopped —
    /// SIGKILLed, or ended when the database went away — and was started again under the
    /// same name), which can no longer renew it. **\[project\]** Node names are unique
    /// among the nodes, so such a lease is taken back at once rather than waited out:
    /// otherwise the node would stand by, forwarding to itself — to a name no process
    /// serves — until its own old lease expired. It is taken with a fresh token, never
    /// renewed under the old one: were the earlier life still running after all (paused),
    /// its commits are fenced out and its next renewal fails
    /// ([`LeaseError::Lost`]), as after any takeover.
    pub fn acquire_or_reclaim(
        &self,
        kind: &str,
        key: &str,
        ttl: Duration,
    ) -> Result<Lease, LeaseError> {
        self.take(kind, key, ttl, true)
    }

    /// Takes `(kind, key)` where nobody holds it, its holder's expired, or (`reclaim`) its
    /// holder is this node's own name.
    fn take(
        &self,
        kind: &str,
        key: &str,
        ttl: Duration,
        reclaim: bool,
    ) -> Result<Lease, LeaseError> {
        let secs = seconds(ttl);
        loop {
            let (k, y, node) = (kind.to_owned(), key.to_owned(), self.node.clone());
            let taken = self.call(move |c| {
                let row = c.query_opt(
                    "INSERT INTO mcpl_leases AS l (kind, key, node, token, expires_at) \
                     VALUES ($1, $2, $3, nextval('mcpl_lease_tokens'), \
                             now() + make_interval(secs => $4)) \
                     ON CONFLICT (kind, key) DO UPDATE \
                     SET node = EXCLUDED.node, token = EXCLUDED.token, \
                         expires_at = EXCLUDED.expires_at, online = false \
                     WHERE l.expires_at <= now() OR ($5 AND l.node = EXCLUDED.node) \
                     RETURNING token",
                    &[&k, &y, &node, &secs, &reclaim],
                )?;
                Ok(row.map(|r| r.get::<_, i64>(0)))
            })?;
            if let Some(token) = taken {
                return Ok(Lease {
                    kind: kind.to_owned(),
                    key: key.to_owned(),
                    node: self.node.clone(),
                    token,
                });
            }
            // Held; unless it expired in between (then try again).
            if let Some(holder) = self.holder(kind, key)? {
                return Err(LeaseError::Held {
                    kind: kind.to_owned(),
                    key: key.to_owned(),
                    holder,
                });
            }
        }
    }

    /// Extends `lease` to `ttl` from now, only while it is still this holder's with its
    /// token and unexpired; [`LeaseError::Lost`] otherwise.
    ///
    /// The call waits at most [`PgLeases::renewal_bound`] of `ttl`: a renewal made at a
    /// third of the lease's time (as the arcade's nodes renew) fails, if the database
    /// hangs, by five sixths of it — before the lease can expire and another node take
    /// over — however short the lease, where the connection's bound ([`CALL_TIMEOUT`],
    /// 5 s) would outlive a lease of 1.5 s.
    pub fn renew(&self, lease: &Lease, ttl: Duration) -> Result<(), LeaseError> {
        let l = lease.clone();
        let bound = self.renewal_bound(ttl);
        let ttl = seconds(ttl);
        let renewed = self.call_within(bound, move |c| {
            c.execute(
                "UPDATE mcpl_leases SET expires_at = now() + make_interval(secs => $5) \
                 WHERE kind = $1 AND key = $2 AND node = $3 AND token = $4 AND expires_at > now()",
                &[&l.kind, &l.key, &l.node, &l.token, &ttl],
            )
        })?;
        if renewed == 1 {
            Ok(())
        } else {
            Err(lost(lease))
        }
    }

    /// [`renew`](PgLeases::renew) for many leases in one statement (issue #41,
    /// `docs/ownership.md` §1: a node renews all of its leases at a third of their time
    /// to live): each of `leases` still this node's with its token and unexpired is
    /// extended to `ttl` from now. Returns those that were not — lost, each to stop being
    /// served at once. Bounded as [`renew`](PgLeases::renew) is; a database that fails
    /// gives the error, and then none of them is known renewed.
    pub fn renew_all(&self, leases: &[Lease], ttl: Duration) -> Result<Vec<Lease>, LeaseError> {
        if leases.is_empty() {
            return Ok(Vec::new());
        }
        let kinds: Vec<String> = leases.iter().map(|l| l.kind.clone()).collect();
        let keys: Vec<String> = leases.iter().map(|l| l.key.clone()).collect();
        let tokens: Vec<i64> = leases.iter().map(|l| l.token).collect();
        let node = self.node.clone();
        let bound = self.renewal_bound(ttl);
        let ttl = seconds(ttl);
        let renewed = self.call_within(bound, move |c| {
            let rows = c.query(
                // The rows locked first, in (kind, key) order, as a fenced commit locks
                // them ([`LOCK_ORDER`]): an update taking them in the join's order
                // deadlocked with a commit holding one of them `FOR SHARE`.
                "UPDATE mcpl_leases AS l SET expires_at = now() + make_interval(secs => $1) \
                 FROM (SELECT m.kind, m.key FROM mcpl_leases AS m \
                       JOIN unnest($3::text[], $4::text[], $5::bigint[]) AS h(kind, key, token) \
                         ON m.kind = h.kind AND m.key = h.key AND m.token = h.token \
                       WHERE m.node = $2 AND m.expires_at > now() \
                       ORDER BY m.kind COLLATE \"C\", m.key COLLATE \"C\" FOR UPDATE OF m) AS o \
                 WHERE l.kind = o.kind AND l.key = o.key \
                 RETURNING l.kind, l.key, l.token",
                &[&ttl, &node, &kinds, &keys, &tokens],
            )?;
            Ok(rows
                .iter()
                .map(|r| {
                    (
                        r.get::<_, String>(0),
                        r.get::<_, String>(1),
                        r.get::<_, i64>(2),
                    )
                })
                .collect::<std::collections::HashSet<_>>())
        })?;
        Ok(leases
            .iter()
            .filter(|l| !renewed.contains(&(l.kind.clone(), l.key.clone(), l.token)))
            .cloned()
            .collect())
    }

    /// Who is online across the nodes (issue #41: the lobby's "players online",
    /// `docs/ownership.md` §1), in one call: marks this node's live `kind` leases whose
    /// keys are among `online` as online and the rest of its own as not, then reads the
    /// keys of every live `kind` lease any node marked online, in order, at most `limit`,
    /// with their holders and how many there are in all. A lease taken over starts
    /// unmarked ([`acquire`](PgLeases::acquire)); an expired one is never read.
    pub fn share_online(
        &self,
        kind: &str,
        online: &[String],
        limit: usize,
    ) -> Result<OnlineLeases, LeaseError> {
        let (k, node, online) = (kind.to_owned(), self.node.clone(), online.to_vec());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.call(move |c| {
            c.execute(
                // Locked first in key order, as a fenced commit locks them
                // ([`LOCK_ORDER`]).
                "UPDATE mcpl_leases AS l SET online = (l.key = ANY($3)) \
                 FROM (SELECT m.kind, m.key FROM mcpl_leases AS m \
                       WHERE m.kind = $1 AND m.node = $2 AND m.expires_at > now() \
                         AND m.online IS DISTINCT FROM (m.key = ANY($3)) \
                       ORDER BY m.key COLLATE \"C\" FOR UPDATE OF m) AS o \
                 WHERE l.kind = o.kind AND l.key = o.key",
                &[&k, &node, &online],
            )?;
            let rows = c.query(
                "SELECT key, node, count(*) OVER () FROM mcpl_leases \
                 WHERE kind = $1 AND online AND expires_at > now() ORDER BY key LIMIT $2",
                &[&k, &limit],
            )?;
            Ok(OnlineLeases {
                total: rows
                    .first()
                    .map_or(0, |r| usize::try_from(r.get::<_, i64>(2)).unwrap_or(0)),
                keys: rows.iter().map(|r| (r.get(0), r.get(1))).collect(),
            })
        })
    }

    /// Gives `lease` up: another node may take it at once. `Ok(false)` when it was no
    /// longer this holder's (nothing changed).
    pub fn release(&self, lease: &Lease) -> Result<bool, LeaseError> {
        let l = lease.clone();
        let released = self.call(move |c| {
            c.execute(
                "DELETE FROM mcpl_leases WHERE kind = $1 AND key = $2 AND node = $3 AND token = $4",
                &[&l.kind, &l.key, &l.node, &l.token],
            )
        })?;
        Ok(released == 1)
    }

    /// Lets `lease` expire now, its row kept (`Ok(false)` when it was no longer this
    /// holder's: nothing changed): another node may take it at once, and a scan of the
    /// expired leases ([`PgLeases::expired`]) finds it — what a node does with an instance
    /// it took the lease of but could not adopt now, for another try (issue #41).
    pub fn expire(&self, lease: &Lease) -> Result<bool, LeaseError> {
        let l = lease.clone();
        let expired = self.call(move |c| {
            c.execute(
                "UPDATE mcpl_leases SET expires_at = now() \
                 WHERE kind = $1 AND key = $2 AND node = $3 AND token = $4",
                &[&l.kind, &l.key, &l.node, &l.token],
            )
        })?;
        Ok(expired == 1)
    }

    /// Who holds `(kind, key)` now; `None` when nobody does or the lease expired.
    pub fn holder(&self, kind: &str, key: &str) -> Result<Option<Holder>, LeaseError> {
        let (k, y) = (kind.to_owned(), key.to_owned());
        self.call(move |c| {
            let row = c.query_opt(
                "SELECT node, token, EXTRACT(EPOCH FROM expires_at - now())::float8 \
                 FROM mcpl_leases WHERE kind = $1 AND key = $2 AND expires_at > now()",
                &[&k, &y],
            )?;
            Ok(row.map(|r| Holder {
                node: r.get(0),
                token: r.get(1),
                expires_in: duration(r.get(2)),
            }))
        })
    }

    /// Up to `limit` leases of `kind` that expired (and were not taken again), the longest
    /// expired first: what a dead node held (issue #41, `docs/ownership.md` §4: every node
    /// scans the expired [`INSTANCE`] leases and adopts each instance on one node; taking
    /// the lease decides which). Each with its last holder.
    pub fn expired(&self, kind: &str, limit: usize) -> Result<Vec<Expired>, LeaseError> {
        let (k, limit) = (kind.to_owned(), i64::try_from(limit).unwrap_or(i64::MAX));
        self.call(move |c| {
            let rows = c.query(
                "SELECT key, node, EXTRACT(EPOCH FROM now() - expires_at)::float8 \
                 FROM mcpl_leases WHERE kind = $1 AND expires_at <= now() \
                 ORDER BY expires_at LIMIT $2",
                &[&k, &limit],
            )?;
            Ok(rows
                .iter()
                .map(|r| Expired {
                    key: r.get(0),
                    node: r.get(1),
                    ago: duration(r.get(2)),
                })
                .collect())
        })
    }

    /// The keys of the unexpired leases of `kind` node `node` holds now, sorted (what runs
    /// where: for an operator, and the tests).
    pub fn held_by(&self, node: &str, kind: &str) -> Result<Vec<String>, LeaseError> {
        let (n, k) = (node.to_owned(), kind.to_owned());
        self.call(move |c| {
            let rows = c.query(
                "SELECT key FROM mcpl_leases \
                 WHERE node = $1 AND kind = $2 AND expires_at > now() ORDER BY key",
                &[&n, &k],
            )?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    /// Acquires `(kind, key)` for `ttl`, waiting while another node holds it: until its
    /// lease expires (as the database says) unless renewed meanwhile, then again; at most
    /// `limit` ([`LeaseError::StillHeld`]). What a node does to take over a dead node's
    /// work: the wait is the lease's own expiry.
    pub fn take_over(
        &self,
        kind: &str,
        key: &str,
        ttl: Duration,
        limit: Duration,
    ) -> Result<Lease, LeaseError> {
        let deadline = Instant::now() + limit;
        loop {
            match self.acquire(kind, key, ttl) {
                Err(LeaseError::Held { holder, .. }) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(LeaseError::StillHeld {
                            kind: kind.to_owned(),
                            key: key.to_owned(),
                            after: limit,
                        });
                    }
                    // Until the holder's expiry, and a millisecond past it (the
                    // database's clock counts from its own now()).
                    let wait = (holder.expires_in + Duration::from_millis(1))
                        .min(deadline.saturating_duration_since(now));
                    std::thread::sleep(wait);
                }
                other => return other,
            }
        }
    }
}

/// The error of a lease no longer held.
fn lost(lease: &Lease) -> LeaseError {
    LeaseError::Lost {
        kind: lease.kind.clone(),
        key: lease.key.clone(),
        node: lease.node.clone(),
        token: lease.token,
    }
}

impl Drop for PgLeases {
    fn drop(&mut self) {
        // The thread in use ends once its queue is closed; those left waiting end on
        // their own, never waited for.
        if let Some((_, jobs, thread)) = self.threads_now().current.take() {
            drop(jobs);
            let _ = thread.join();
        }
    }
}

/// The leases a node holds, as its [`PgStore`](crate::PgStore)'s commits check them (see
/// the module docs). Cloning shares it: the code that acquires and renews leases
/// [`hold`](Fence::hold)s and [`forget`](Fence::forget)s them, the store reads them at
/// each commit.
#[derive(Debug, Clone, Default)]
pub struct Fence {
    held: Arc<Mutex<HashMap<(String, String), Lease>>>,
}

impl Fence {
    /// An empty fence.
    pub fn new() -> Fence {
        Fence::default()
    }

    /// Commits writing what `lease` covers must hold it from now on (it replaces an
    /// earlier lease of the same kind and key).
    pub fn hold(&self, lease: &Lease) {
        self.lock()
            .insert((lease.kind.clone(), lease.key.clone()), lease.clone());
    }

    /// Commits no longer check the lease `(kind, key)` (released on purpose).
    pub fn forget(&self, kind: &str, key: &str) {
        self.lock().remove(&(kind.to_owned(), key.to_owned()));
    }

    /// The leases of kind [`ARCADE`] held: each covers every record.
    pub fn covering_all(&self) -> Vec<Lease> {
        let mut all: Vec<Lease> = self
            .lock()
            .values()
            .filter(|l| l.kind == ARCADE)
            .cloned()
            .collect();
        // In key order, as a commit takes the rows' locks (never a deadlock).
        all.sort_by(|a, b| a.key.cmp(&b.key));
        all
    }

    /// The lease of `(kind, key)` held, if any.
    pub fn get(&self, kind: &str, key: &str) -> Option<Lease> {
        self.lock().get(&(kind.to_owned(), key.to_owned())).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Lease>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PgStore;
    use mcpl_server::{Store, StoreError, Writes};
    use mcpl_testkit::postgres::Postgres;

    /// A lease of kind `arcade` covers every record: once it is lost, a commit of records
    /// no other lease covers (a principal, an instance) is refused too, naming it.
    #[test]
    fn an_arcade_lease_fences_every_record() {
        let pg = Postgres::start().expect("a private PostgreSQL starts");
        let url = pg.url();
        let a = PgLeases::connect(&url, "a").unwrap();
        let b = PgLeases::connect(&url, "b").unwrap();
        let ttl = Duration::from_millis(200);
        let lease = a.acquire(ARCADE, "arcade", ttl).unwrap();
        let fence = Fence::new();
        fence.hold(&lease);
        assert_eq!(fence.covering_all(), vec![lease.clone()]);
        let store = PgStore::connect_fenced(&url, fence).unwrap();
        store.load().unwrap();
        let write = |principal: &str, id: u64| Writes {
            principals: vec![(principal.to_owned(), Some(b"p".to_vec()))],
            instances: vec![(id, Some(b"i".to_vec()))],
            ..Writes::default()
        };
        store
            .commit(&[write("alice", 1)])
            .expect("the holder writes");
        // b takes the arcade over once a stops renewing; a's next commit is refused
        // though no record lease covers what it writes.
        let taken = b
            .take_over(
                ARCADE,
                "arcade",
                Duration::from_secs(60),
                Duration::from_secs(30),
            )
            .unwrap();
        assert!(taken.token > lease.token);
        match store.commit(&[write("bob", 2)]) {
            Err(StoreError::Conflict { what, .. }) => {
                assert_eq!(what, "the arcade lease \"arcade\"")
            }
            other => panic!("a stale arcade owner wrote: {other:?}"),
        }
    }
}

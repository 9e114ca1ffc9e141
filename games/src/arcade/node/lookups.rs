//! A node's look-ups of principals' leases (issue #41, `docs/ownership.md` §1): the
//! first request for a principal nobody here holds takes her lease, or learns who holds it.
//!
//! **Concurrently, one per principal.** Each look-up holds a lock of its principal's own
//! (two requests for one principal nobody holds take her lease once: the second finds it
//! held here), not a node-wide one, and runs on a connection of the look-ups' own — at most
//! [`LOOKUPS`] at once, on as many connections made as the node starts — so a look-up the
//! database holds up (her row locked by another transaction, a slow disk) holds up neither
//! the other principals' look-ups nor the node's renewals (which keep their own
//! connection). The connections are made at the start, not when first needed: connecting
//! checks the leases' table (`ALTER TABLE … ADD COLUMN IF NOT EXISTS`, which locks it
//! whole), and behind a look-up held on a row that would queue every lease statement.
//!
//! **When the holder's lease expires.** A look-up that finds her lease held elsewhere
//! remembers when it expires (the lease row's `expires_at`, as the database counts it from
//! now). A request forwarded to that holder that finds nobody on the bus (it died) waits
//! until then and a small margin ([`EXPIRY_MARGIN`]), at most a third of the lease's time
//! to live at a time, then looks her up again — taking her lease once it expired — rather
//! than asking every 25 ms: a dead holder is looked up about four times (a wait of a third
//! of the lease at most each), not sixty (a 1.5 s lease) or four hundred (10 s). A holder whose lease a look-up finds renewed since
//! the one before is alive (its subscription not seen yet: NATS reconnecting, a node
//! starting), and is asked again after the short pause as before; a third of the lease's
//! time is as long as its renewal can take to show. **\[project\]**

use mcpl_cluster::PgLeases;
use mcpl_cluster::leases::{Holder, Lease, LeaseError, PRINCIPAL};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;
use tokio::sync::{OwnedMutexGuard, Semaphore};
use tokio::time::Instant;

/// The most look-ups of principals' leases one node runs at once, each on a connection
/// of its own (**\[project\]**, `docs/ownership.md` §1): enough that a look-up held up
/// by the database (a locked row, a slow disk) leaves others going, and few enough that a
/// cluster's nodes stay well inside PostgreSQL's connections (each node keeps its
/// renewals', the store's and who-is-online's besides; the tests' server allows 50). A
/// look-up beyond them waits for one to end.
pub const LOOKUPS: usize = 4;

/// How long after a dead holder's lease expires a request waits for it before looking
/// its principal up again (**\[project\]**): what the database's answer took to arrive
/// is already on the late side, so a little more is enough; one woken too early finds
/// the lease still held, its expiry unchanged, and waits the rest.
pub const EXPIRY_MARGIN: Duration = Duration::from_millis(10);

/// The most principals whose holders' expiries a node remembers: one is kept for each
/// principal held elsewhere that a request here looked up, so a node seeing many players
/// served elsewhere would keep one each for good. At the bound those past their lease's
/// time (and a sixth, the renewal check's span) go; when none have, all go **\[project\]**:
/// a forgotten expiry costs only the short retry of a principal never looked up.
pub const EXPIRIES_KEPT: usize = 10_000;

/// When a principal's lease, held on another node, expires as last looked up.
#[derive(Debug, Clone)]
struct Expiry {
    /// The holder.
    node: String,
    /// When its lease expires unless renewed.
    at: Instant,
    /// Whether this look-up saw it renewed since the one before: the holder is alive.
    renewed: bool,
}

/// The look-ups of one node (module docs).
pub(super) struct Lookups {
    /// Set once the look-ups' own connections are made ([`Lookups::connect_on`]); unset:
    /// each look-up on the node's lease connection.
    connected: OnceLock<()>,
    /// This node's name, as its leases name it.
    node: String,
    /// The principals being looked up (or waited for), each with her look-up's lock.
    each: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// One a look-up running: at most [`LOOKUPS`].
    permits: Semaphore,
    /// The look-ups' connections not in use.
    idle: Mutex<Vec<Arc<PgLeases>>>,
    /// When the leases of principals held elsewhere expire, as last looked up.
    expiries: Mutex<HashMap<String, Expiry>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A principal's look-up under way: the next for her waits until this one is dropped.
pub(super) struct OneLookUp<'a> {
    lookups: &'a Lookups,
    name: String,
    lock: Arc<tokio::sync::Mutex<()>>,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Drop for OneLookUp<'_> {
    fn drop(&mut self) {
        let mut each = lock(&self.lookups.each);
        self.guard.take();
        // Nobody else waits for her (the map's and this one's): forgotten.
        if Arc::strong_count(&self.lock) == 2 {
            each.remove(&self.name);
        }
    }
}

impl Lookups {
    /// The look-ups of node `node`, on its lease connection until
    /// [`Lookups::connect_on`].
    pub(super) fn new(node: &str) -> Lookups {
        Lookups {
            connected: OnceLock::new(),
            node: node.to_owned(),
            each: Mutex::default(),
            permits: Semaphore::new(LOOKUPS),
            idle: Mutex::default(),
            expiries: Mutex::default(),
        }
    }

    /// Runs the look-ups on [`LOOKUPS`] connections of their own to `url`, made now (a
    /// blocking call; once: a second call changes nothing).
    pub(super) fn connect_on(&self, url: &str) -> Result<(), LeaseError> {
        if self.connected.get().is_some() {
            return Ok(());
        }
        let mut made = Vec::with_capacity(LOOKUPS);
        for _ in 0..LOOKUPS {
            made.push(Arc::new(PgLeases::connect(url, &self.node)?));
        }
        if self.connected.set(()).is_ok() {
            lock(&self.idle).extend(made);
        }
        Ok(())
    }

    /// Waits for `name`'s look-up before this one to end, and holds hers until dropped.
    pub(super) async fn one(&self, name: &str) -> OneLookUp<'_> {
        let mutex = lock(&self.each).entry(name.to_owned()).or_default().clone();
        let guard = mutex.clone().lock_owned().await;
        OneLookUp {
            lookups: self,
            name: name.to_owned(),
            lock: mutex,
            guard: Some(guard),
        }
    }

    /// Takes `name`'s lease for `ttl` (one under this node's own name, an earlier life's,
    /// taken back: [`PgLeases::acquire_or_reclaim`]) on a look-up connection, or on
    /// `leases` when they have none; [`LeaseError::Held`] names the holder, whose expiry
    /// is remembered.
    pub(super) async fn take(
        &self,
        leases: &Arc<PgLeases>,
        name: &str,
        ttl: Duration,
    ) -> Result<Lease, LeaseError> {
        let Ok(_permit) = self.permits.acquire().await else {
            return Err(LeaseError::Database {
                location: "the leases".to_owned(),
                detail: "the look-ups were closed".to_owned(),
            });
        };
        // As many connections as permits: one is idle for each permit held.
        let connection = lock(&self.idle).pop();
        let on = connection.clone().unwrap_or_else(|| leases.clone());
        let key = name.to_owned();
        let taken = super::blocking(move || on.acquire_or_reclaim(PRINCIPAL, &key, ttl)).await;
        if let Some(c) = connection {
            lock(&self.idle).push(c);
        }
        match &taken {
            Ok(_) => {
                lock(&self.expiries).remove(name);
            }
            Err(LeaseError::Held { holder, .. }) => self.saw_held(name, holder, ttl),
            Err(_) => {}
        }
        taken
    }

    /// Remembers when `name`'s lease, held by `holder`, expires; renewed since the last
    /// look-up (later by more than a sixth of `ttl`: a renewal moves it by a third) says
    /// the holder is alive.
    fn saw_held(&self, name: &str, holder: &Holder, ttl: Duration) {
        let at = Instant::now() + holder.expires_in;
        let mut expiries = lock(&self.expiries);
        if expiries.len() >= EXPIRIES_KEPT && !expiries.contains_key(name) {
            let now = Instant::now();
            expiries.retain(|_, e| e.at + ttl / 6 > now);
            if expiries.len() >= EXPIRIES_KEPT {
                expiries.clear();
            }
        }
        let renewed = expiries
            .get(name)
            .is_some_and(|e| e.node == holder.node && at > e.at + ttl / 6);
        expiries.insert(
            name.to_owned(),
            Expiry {
                node: holder.node.clone(),
                at,
                renewed,
            },
        );
    }

    /// How long a request for `name` waits before looking her up again, after her holder
    /// `node` was found on no bus (module docs): until its lease expires and
    /// [`EXPIRY_MARGIN`], at most a third of `ttl` (its renewal shows by then), when a
    /// look-up said when and saw no renewal; `pause` otherwise. Never past `give_up`.
    pub(super) fn after_no_responder(
        &self,
        name: &str,
        node: &str,
        (pause, ttl): (Duration, Duration),
        give_up: Instant,
    ) -> Duration {
        let now = Instant::now();
        let wait = match lock(&self.expiries).get(name) {
            Some(e) if e.node == node && !e.renewed => {
                e.at.saturating_duration_since(now).min(ttl / 3) + EXPIRY_MARGIN
            }
            _ => pause,
        };
        wait.min(give_up.saturating_duration_since(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(node: &str, expires_in: Duration) -> Holder {
        Holder {
            node: node.to_owned(),
            token: 1,
            expires_in,
        }
    }

    /// A dead holder (its expiry unchanged between look-ups) is waited for until its
    /// lease expires, a third of the lease at most at a time; one seen renewed is asked
    /// again after the short pause; one never looked up too; never past the bound.
    #[tokio::test(start_paused = true)]
    async fn a_dead_holders_expiry_is_waited_for_and_a_live_ones_is_not() {
        let l = Lookups::new("n2");
        let ms = Duration::from_millis;
        let times = (ms(25), ms(1500));
        let far = Instant::now() + Duration::from_secs(60);
        assert_eq!(l.after_no_responder("alice", "n1", times, far), ms(25));
        l.saw_held("alice", &holder("n1", ms(400)), times.1);
        assert_eq!(
            l.after_no_responder("alice", "n1", times, far),
            ms(400) + EXPIRY_MARGIN
        );
        // Another holder than the one that was not on the bus: asked again soon.
        assert_eq!(l.after_no_responder("alice", "n3", times, far), ms(25));
        // Never past the bound.
        let soon = Instant::now() + ms(100);
        assert_eq!(l.after_no_responder("alice", "n1", times, soon), ms(100));
        // Renewed (a third of the lease on): alive, asked again after the pause.
        l.saw_held("alice", &holder("n1", ms(1400)), times.1);
        assert_eq!(l.after_no_responder("alice", "n1", times, far), ms(25));
        // Looked up again 300 ms on, the same expiry: no renewal, so waited for — a third
        // of the lease at most, then until it expires.
        tokio::time::advance(ms(300)).await;
        l.saw_held("alice", &holder("n1", ms(1100)), times.1);
        assert_eq!(
            l.after_no_responder("alice", "n1", times, far),
            ms(500) + EXPIRY_MARGIN
        );
        tokio::time::advance(ms(500)).await;
        l.saw_held("alice", &holder("n1", ms(600)), times.1);
        assert_eq!(
            l.after_no_responder("alice", "n1", times, far),
            ms(500) + EXPIRY_MARGIN
        );
        tokio::time::advance(ms(510)).await;
        l.saw_held("alice", &holder("n1", ms(90)), times.1);
        assert_eq!(
            l.after_no_responder("alice", "n1", times, far),
            ms(90) + EXPIRY_MARGIN
        );
    }

    /// The expiries remembered stay within [`EXPIRIES_KEPT`]: at the bound the stale go
    /// first, and all when none is.
    #[tokio::test(start_paused = true)]
    async fn the_expiries_remembered_are_bounded() {
        let l = Lookups::new("n2");
        let (ttl, ms) = (Duration::from_millis(1500), Duration::from_millis);
        for i in 0..EXPIRIES_KEPT / 2 {
            l.saw_held(&format!("old{i}"), &holder("n1", ms(100)), ttl);
        }
        tokio::time::advance(ms(400)).await;
        for i in 0..EXPIRIES_KEPT / 2 {
            l.saw_held(&format!("new{i}"), &holder("n1", ms(1000)), ttl);
        }
        assert_eq!(lock(&l.expiries).len(), EXPIRIES_KEPT);
        // At the bound: the stale half goes, the live half stays.
        l.saw_held("alice", &holder("n1", ms(1000)), ttl);
        assert_eq!(lock(&l.expiries).len(), EXPIRIES_KEPT / 2 + 1);
        assert!(lock(&l.expiries).contains_key("new0"));
        for i in 0..EXPIRIES_KEPT / 2 - 1 {
            l.saw_held(&format!("more{i}"), &holder("n1", ms(1000)), ttl);
        }
        assert_eq!(lock(&l.expiries).len(), EXPIRIES_KEPT);
        // At the bound with none stale: all go, the new one kept.
        l.saw_held("bob", &holder("n1", ms(1000)), ttl);
        assert_eq!(lock(&l.expiries).len(), 1);
        assert!(lock(&l.expiries).contains_key("bob"));
    }

    /// One look-up per principal at a time; another principal's goes on meanwhile, and
    /// a principal nobody looks up is forgotten.
    #[tokio::test(start_paused = true)]
    async fn one_look_up_per_principal_and_others_meanwhile() {
        let l = Lookups::new("n1");
        let alice = l.one("alice").await;
        assert!(
            tokio::time::timeout(Duration::from_millis(1), l.one("alice"))
                .await
                .is_err(),
            "a second look-up of alice waits"
        );
        let bob = l.one("bob").await;
        drop(bob);
        drop(alice);
        let again = l.one("alice").await;
        drop(again);
        assert!(lock(&l.each).is_empty(), "nobody looked up is kept");
    }
}

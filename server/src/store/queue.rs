//! [`CommitQueue`]: group commit in front of a [`Store`] (issue #42 item 1).
//!
//! An actor that changed a record hands the step's [`Writes`] over with
//! [`CommitQueue::submit`] and gets a [`Ticket`] at once: it never blocks on the disk. One
//! writer thread owns the store's write side: it takes every step waiting, commits them in
//! one [`Store::commit`] (one transaction, one fsync), then says how far it got. Whoever
//! must not tell before a record is durable waits for its ticket
//! ([`CommitQueue::outcome`], [`CommitQueue::wait`]); steps that came while a commit ran
//! share the next one, the way databases commit groups.
//!
//! **Order.** Tickets are handed out in the order steps are submitted and committed in that
//! order, so a ticket kept means every earlier one is kept too: waiting for the last ticket
//! an actor took covers everything it handed over before. A principal applying an
//! instance's batch submits its own record after the instance's, so its record is never
//! kept without the instance's.
//!
//! **Failure** (issue #37 item 2). The first commit that fails gives the store up until a
//! restart: its tickets and every later one fail with the same [`NotKept`] (said once in
//! the log), and nothing more is written. A panic inside the store counts as a failure.
//! A shared store's revision check failing ([`StoreError::Conflict`], issue #41: another
//! node wrote one of the records since this one read it) is such a failure, and giving up
//! is what a node that lost a record's ownership must do **\[project\]**: what it holds in
//! memory is stale, so it takes no change it cannot keep, tells no one of one, and reads
//! the records afresh when it is started again.
//!
//! **Follow-ups** (issue #42 item 1, **\[project\]**). A step whose telling needs another
//! actor's step too — an instance's move, told by each principal only once the
//! principal's own record of it is kept as well — is no use committed alone: the
//! instance hands its record over, then its batches, each with a [`Follow`] taken from
//! the queue ([`CommitQueue::follow`]); the principal drops it once it has handed its own
//! record over (or found nothing to write). An actor holds the queue
//! ([`CommitQueue::hold`]) while it hands a step over and promises what follows it, so
//! that the writer, on another thread, cannot take the step before its follow-ups are
//! promised. The writer, before it takes the steps waiting, holds the commit open while
//! a follow-up of one of them is still to come — at most [`FOLLOW_WAIT`] (or what the
//! server was built with), a bound for a follow-up that does not come soon, never reached
//! when the actors keep up — so the two records of one move share one fsync, and steps
//! arriving meanwhile share it too. What nobody
//! promised is never held: a lone step with no follow-up is committed at once, so no
//! step waits for a linger that nobody joins (databases' `commit_delay` guesses; this
//! waits only for steps known to be coming, without which the step waiting could not be
//! told anyway).
//!
//! **\[project\]** The thread is a plain `std` thread, not a task: a store's commit is a
//! blocking call (redb's fsync), and an actor's arbiter must never wait for it.

use super::not_kept::NotKept;
use super::{Store, StoreError, Ticket, Writes};
use crate::shared::Shared;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How long at most the writer holds a commit open for the follow-ups promised for the
/// steps it is about to commit (**\[project\]**, see the module docs): a bound for a
/// follow-up that does not come soon (an actor's mailbox far behind), not a linger —
/// follow-ups come as soon as their actors handle the message carrying them, in
/// microseconds when the actors keep up.
pub const FOLLOW_WAIT: Duration = Duration::from_millis(5);

/// What the store did, for a server's owner (`Server::store_stats`) and `sim perf`: how
/// many steps were handed over and how many commits (each one fsync, for redb) kept them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Steps handed to the store (each an actor's records of one step).
    pub steps: u64,
    /// Commits made: each took every step waiting when it began.
    pub commits: u64,
    /// Bytes of the records (and parts of records) the steps put: what the store was
    /// given to write ([`Writes::bytes`]). A principal's record is written in parts, only
    /// those that changed (issue #42 item 1), so a step's bytes do not grow with what the
    /// principal keeps unchanged.
    pub bytes: u64,
}

/// How far the writer got.
#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    /// Every ticket up to this one is kept.
    kept: u64,
    /// This ticket and every later one failed.
    failed: Option<u64>,
}

impl Progress {
    /// What became of `t`, once decided.
    fn of(&self, t: Ticket) -> Option<bool> {
        if self.failed.is_some_and(|f| t.get() >= f) {
            Some(false)
        } else if t.get() <= self.kept {
            Some(true)
        } else {
            None
        }
    }
}

/// The steps waiting for the writer.
#[derive(Default)]
struct Waiting {
    /// The last ticket handed out.
    last: u64,
    steps: Vec<Writes>,
    /// The last ticket the writer took.
    taken: u64,
    /// Follow-ups still to come, by the last ticket handed out when each was promised:
    /// a step waiting up to that ticket is committed with them ([`Follow`]).
    expected: BTreeMap<u64, usize>,
    /// The writer holds a commit open for follow-ups.
    holding: bool,
    /// The server is gone: the writer commits what waits and stops.
    closed: bool,
}

impl Waiting {
    /// Whether a follow-up of a step waiting, up to ticket `upto`, is still to come.
    fn expects(&self, upto: u64) -> bool {
        upto > self.taken && self.expected.range(self.taken + 1..=upto).next().is_some()
    }
}

struct Inner {
    store: Arc<dyn Store>,
    waiting: Mutex<Waiting>,
    /// Wakes the writer when a step is handed over or a follow-up is settled.
    wake: Condvar,
    /// How long at most a commit is held open for follow-ups ([`FOLLOW_WAIT`]).
    follow_wait: Duration,
    progress: watch::Sender<Progress>,
    /// Why the store was given up, once it was.
    failed: OnceLock<String>,
    steps: AtomicU64,
    commits: AtomicU64,
    bytes: AtomicU64,
}

/// Group commit in front of a store. See the module docs. Dropping it lets the writer
/// commit what waits, and waits for it to stop: the store is closed once the server is
/// gone (redb's file is free for the next server, as after a process's exit).
pub(crate) struct CommitQueue {
    inner: Arc<Inner>,
    writer: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for CommitQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitQueue")
            .field("store", &self.inner.store.location())
            .finish_non_exhaustive()
    }
}

impl CommitQueue {
    /// A queue in front of `store`, with its writer thread started, holding a commit
    /// open at most `follow_wait` for follow-ups ([`FOLLOW_WAIT`]). Fails only when the
    /// thread cannot be started.
    pub(crate) fn start(store: Arc<dyn Store>, follow_wait: Duration) -> std::io::Result<Self> {
        let inner = Arc::new(Inner {
            store,
            waiting: Mutex::new(Waiting::default()),
            wake: Condvar::new(),
            follow_wait,
            progress: watch::Sender::new(Progress::default()),
            failed: OnceLock::new(),
            steps: AtomicU64::new(0),
            commits: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        });
        let writer = inner.clone();
        let writer = std::thread::Builder::new()
            .name("mcpl-store".to_owned())
            .spawn(move || writer.run())?;
        Ok(CommitQueue {
            inner,
            writer: Some(writer),
        })
    }

    /// Hands a step's records over; its ticket. Refused at once once the store was given
    /// up.
    pub(crate) fn submit(&self, writes: Writes) -> Result<Ticket, NotKept> {
        if let Some(cause) = self.inner.failed.get() {
            return Err(NotKept(cause.clone()));
        }
        let bytes = writes.bytes() as u64;
        let mut waiting = self.inner.lock();
        waiting.last += 1;
        waiting.steps.push(writes);
        let ticket = Ticket::new(waiting.last);
        drop(waiting);
        self.inner.steps.fetch_add(1, Ordering::Relaxed);
        self.inner.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.inner.wake.notify_one();
        Ok(ticket)
    }

    /// Promises a step to follow those handed over so far, from an actor that will hand
    /// it over (or find it has nothing to write) when it handles what carries the
    /// [`Follow`]: the writer does not commit the steps waiting without it until it is
    /// dropped, or [`FOLLOW_WAIT`] passed. A follow of nothing waiting (all taken by the
    /// writer already) promises nothing.
    pub(crate) fn follow(&self) -> Follow {
        let mut waiting = self.inner.lock();
        if waiting.last == waiting.taken {
            return Follow::NONE;
        }
        let after = waiting.last;
        *waiting.expected.entry(after).or_default() += 1;
        Follow(Some((self.inner.clone(), after)))
    }

    /// Holds the next step handed over (and those after it) back from the writer until
    /// dropped, or [`FOLLOW_WAIT`] passed: an actor takes it before it hands a step over
    /// and promises what follows it ([`CommitQueue::follow`]), dropping it once done, so
    /// that the writer never takes the step before its follow-ups are promised. It holds
    /// nothing back when nothing is handed over while it lives.
    pub(crate) fn hold(&self) -> Follow {
        let mut waiting = self.inner.lock();
        let after = waiting.last + 1;
        *waiting.expected.entry(after).or_default() += 1;
        Follow(Some((self.inner.clone(), after)))
    }

    /// What became of `t`, if that is decided yet.
    pub(crate) fn outcome(&self, t: Ticket) -> Option<Result<(), NotKept>> {
        let decided = self.inner.progress.borrow().of(t)?;
        Some(self.inner.result(decided))
    }

    /// Resolves once `t` is decided: kept, or not (the store was given up).
    pub(crate) fn wait(&self, t: Ticket) -> impl Future<Output = Result<(), NotKept>> + 'static {
        let inner = self.inner.clone();
        let mut progress = inner.progress.subscribe();
        async move {
            let decided = match progress.wait_for(|p| p.of(t).is_some()).await {
                Ok(p) => p.of(t).unwrap_or(false),
                // The writer is gone (it cannot be, while this `Inner` lives).
                Err(_) => false,
            };
            inner.result(decided)
        }
    }

    /// Resolves once the store was given up (a commit failed: from then on no change is
    /// taken), with why.
    pub(crate) fn given_up(&self) -> impl Future<Output = String> + Send + 'static {
        let inner = self.inner.clone();
        let mut progress = inner.progress.subscribe();
        async move {
            if progress.wait_for(|p| p.failed.is_some()).await.is_err() {
                // The writer is gone (it cannot be, while this `Inner` lives).
                std::future::pending::<()>().await;
            }
            inner.failed.get().cloned().unwrap_or_default()
        }
    }

    /// The last ticket handed out: once it is decided, so is every step handed over
    /// before (a read made then sees them, issue #41).
    pub(crate) fn last(&self) -> Ticket {
        Ticket::new(self.inner.lock().last)
    }

    /// What the store did so far.
    pub(crate) fn stats(&self) -> StoreStats {
        StoreStats {
            steps: self.inner.steps.load(Ordering::Relaxed),
            commits: self.inner.commits.load(Ordering::Relaxed),
            bytes: self.inner.bytes.load(Ordering::Relaxed),
        }
    }
}

impl Drop for CommitQueue {
    fn drop(&mut self) {
        self.inner.lock().closed = true;
        self.inner.wake.notify_one();
        if let Some(writer) = self.writer.take() {
            // It ends once what waits is committed; a panic in it was a store's, caught.
            let _ = writer.join();
        }
    }
}

/// A step promised to follow those handed over before it ([`CommitQueue::follow`]):
/// carried to the actor that will hand it over, and dropped once it did (or found nothing
/// to write). While it lives, the steps it follows are not committed without it, for at
/// most the queue's bound.
#[must_use = "dropping it settles the promise at once"]
pub(crate) struct Follow(Option<(Arc<Inner>, u64)>);

impl Follow {
    /// No follow-up promised (no store, or nothing waiting to follow).
    pub(crate) const NONE: Follow = Follow(None);
}

impl std::fmt::Debug for Follow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Follow")
            .field(&self.0.as_ref().map(|(_, after)| after))
            .finish()
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        let Some((inner, after)) = self.0.take() else {
            return;
        };
        let mut waiting = inner.lock();
        if let std::collections::btree_map::Entry::Occupied(mut e) = waiting.expected.entry(after) {
            *e.get_mut() -= 1;
            if *e.get() == 0 {
                e.remove();
            }
        }
        // Only a writer holding a commit open waits for follow-ups.
        let holding = waiting.holding;
        drop(waiting);
        if holding {
            inner.wake.notify_one();
        }
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn result(&self, kept: bool) -> Result<(), NotKept> {
        if kept {
            return Ok(());
        }
        let cause = self.failed.get().cloned();
        Err(NotKept(cause.unwrap_or_else(|| {
            format!("the store {} was closed", self.store.location())
        })))
    }

    /// The writer: takes every step waiting, commits them at once, says how far it got.
    fn run(&self) {
        loop {
            let (steps, last) = {
                let mut waiting = self.lock();
                while waiting.steps.is_empty() && !waiting.closed {
                    waiting = self
                        .wake
                        .wait(waiting)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                if waiting.steps.is_empty() {
                    return;
                }
                // Follow-ups promised for the steps waiting: hold the commit open for
                // them, bounded (the module docs). Steps arriving meanwhile join it; the
                // follow-ups of those are not waited for (the next commit's).
                let upto = waiting.last;
                let until = Instant::now() + self.follow_wait;
                waiting.holding = true;
                while !waiting.closed && waiting.expects(upto) {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    waiting = self
                        .wake
                        .wait_timeout(waiting, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
                waiting.holding = false;
                waiting.taken = waiting.last;
                (std::mem::take(&mut waiting.steps), waiting.last)
            };
            let first = last + 1 - steps.len() as u64;
            if self.failed.get().is_some() {
                // Given up: nothing more is written (`Progress::failed` covers these).
                continue;
            }
            let store = &self.store;
            let done =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| store.commit(&steps)));
            self.commits.fetch_add(1, Ordering::Relaxed);
            match done {
                Ok(Ok(())) => self.progress.send_modify(|p| p.kept = last),
                Ok(Err(e)) => self.give_up(&e, first),
                Err(_) => self.give_up(
                    &StoreError::Io {
                        path: store.location().into(),
                        detail: "the store panicked writing".to_owned(),
                    },
                    first,
                ),
            }
        }
    }

    /// The store failed: given up from now on, said once.
    fn give_up(&self, e: &StoreError, first: u64) {
        if self.failed.set(e.to_string()).is_ok() {
            tracing::error!(
                error = %e,
                "the store cannot be written: from now on the server takes no change it \
                 cannot keep (each is refused, and no one is told of it); restart it once \
                 the store can be written"
            );
        }
        self.progress.send_modify(|p| p.failed = Some(first));
    }
}

impl Shared {
    /// Hands an instance's record (`Some`) or its forgetting (`None`) to the store; the
    /// ticket to wait for before telling what it keeps ([`Ticket::NONE`] without a store).
    /// Once the store was given up, nothing is written ([`NotKept`]).
    pub(crate) fn write_instance(&self, id: u64, record: Option<&[u8]>) -> Result<Ticket, NotKept> {
        self.submit(Writes::instance(id, record))
    }

    /// Hands a principal's record (`Some`) or its forgetting (`None`, with its parts) to
    /// the store. See [`Shared::write_instance`].
    pub(crate) fn write_principal(
        &self,
        principal: &str,
        record: Option<&[u8]>,
    ) -> Result<Ticket, NotKept> {
        self.submit(Writes::principal(principal, record))
    }

    /// Promises a step to follow those handed over so far ([`CommitQueue::follow`]);
    /// [`Follow::NONE`] without a store.
    pub(crate) fn follow(&self) -> Follow {
        match &self.commits {
            Some(queue) => queue.follow(),
            None => Follow::NONE,
        }
    }

    /// Holds the steps handed over from now on back from the writer while promising what
    /// follows them ([`CommitQueue::hold`]); [`Follow::NONE`] without a store.
    pub(crate) fn hold(&self) -> Follow {
        match &self.commits {
            Some(queue) => queue.hold(),
            None => Follow::NONE,
        }
    }

    /// Hands a step's writes to the store. See [`Shared::write_instance`].
    pub(crate) fn submit(&self, writes: Writes) -> Result<Ticket, NotKept> {
        match &self.commits {
            Some(queue) => queue.submit(writes),
            None => Ok(Ticket::NONE),
        }
    }

    /// What became of `t`, when that is decided: kept, or not (the store was given up).
    pub(crate) fn outcome(&self, t: Ticket) -> Option<Result<(), NotKept>> {
        match &self.commits {
            Some(queue) => queue.outcome(t),
            None => Some(Ok(())),
        }
    }

    /// Resolves once every step handed over so far is decided: a record read from the
    /// store then is what they left (issue #41: a principal read on its first use, right
    /// after an earlier actor of it forgot its record).
    pub(crate) fn settled(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> {
        match &self.commits {
            Some(queue) => {
                let decided = queue.wait(queue.last());
                Box::pin(async move {
                    let _ = decided.await;
                })
            }
            None => Box::pin(std::future::ready(())),
        }
    }

    /// Resolves once `t` is decided. See [`Shared::outcome`].
    pub(crate) fn kept(
        &self,
        t: Ticket,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), NotKept>>>> {
        match &self.commits {
            Some(queue) => Box::pin(queue.wait(t)),
            None => Box::pin(std::future::ready(Ok(()))),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Follow-ups (issue #42 item 1): the writer does not commit a step before what was
    //! promised to follow it, and holds nothing nobody promised. Judged by the commits
    //! counted, never by time: a wait the queue should not make is one of an hour, which
    //! `within` turns into a failure.
    use super::*;
    use crate::store::MemoryStore;
    use mcpl_testkit::within;

    /// Longer than any test runs: a commit held for it fails the test.
    const FOREVER: Duration = Duration::from_secs(3600);

    fn queue(follow_wait: Duration) -> CommitQueue {
        CommitQueue::start(Arc::new(MemoryStore::new()), follow_wait).unwrap()
    }

    fn step(id: u64) -> Writes {
        Writes::instance(id, Some(b"record"))
    }

    #[tokio::test]
    async fn a_step_is_committed_with_its_follow_up_and_what_arrives_meanwhile() {
        let q = queue(FOREVER);
        // An actor hands a step over and promises its follow-up, as an instance does.
        let hold = q.hold();
        let first = q.submit(step(1)).unwrap();
        let follow = q.follow();
        drop(hold);
        // The writer holds the commit open (or, were it not waiting for follow-ups, made
        // it).
        within(async {
            while !q.inner.lock().holding && q.stats().commits == 0 {
                tokio::task::yield_now().await;
            }
        })
        .await;
        // Another step arrives, then the follow-up, handed over by the actor the promise
        // went to; only then is anything committed, all of it at once.
        let other = q.submit(step(2)).unwrap();
        let follow_up = q.submit(step(3)).unwrap();
        assert_eq!(
            q.outcome(first).map(|r| r.is_ok()),
            None,
            "not committed alone"
        );
        drop(follow);
        within(q.wait(follow_up)).await.unwrap();
        assert!(matches!(q.outcome(first), Some(Ok(()))));
        assert!(matches!(q.outcome(other), Some(Ok(()))));
        assert_eq!(
            q.stats(),
            StoreStats {
                steps: 3,
                commits: 1,
                bytes: 3 * 6
            }
        );
    }

    #[tokio::test]
    async fn a_step_nothing_follows_is_committed_at_once() {
        let q = queue(FOREVER);
        for id in 1..=3 {
            let t = q.submit(step(id)).unwrap();
            within(q.wait(t)).await.unwrap();
        }
        // A hold under which nothing was handed over holds nothing back.
        let _hold = q.hold();
        assert_eq!(q.stats().commits, 3);
    }

    #[tokio::test]
    async fn a_follow_up_that_never_comes_holds_the_commit_for_the_bound_only() {
        let q = queue(Duration::from_millis(10));
        let hold = q.hold();
        let first = q.submit(step(1)).unwrap();
        let _never = q.follow();
        drop(hold);
        within(q.wait(first)).await.unwrap();
        assert_eq!(q.stats().commits, 1);
    }

    #[tokio::test]
    async fn a_follow_of_steps_already_taken_promises_nothing() {
        let q = queue(FOREVER);
        let t = q.submit(step(1)).unwrap();
        within(q.wait(t)).await.unwrap();
        let follow = q.follow();
        assert!(follow.0.is_none(), "{follow:?}");
        let t = q.submit(step(2)).unwrap();
        within(q.wait(t)).await.unwrap();
        assert_eq!(q.stats().commits, 2);
    }
}

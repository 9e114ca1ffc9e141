//! One connection's write path: its rev counter and its outbound queue behind one lock
//! (§5.2: allocation and writing are one step).
//!
//! [`RevWriter`] takes the next rev *and* enqueues the message carrying it in a single
//! critical section, so whichever threads write to a connection — the SessionActor alone
//! here, or several Streamable HTTP request handlers in another design — the queue holds
//! the messages in rev order and the revs are 1, 2, 3, … with no gap and no duplicate. The
//! classic bug it rules out: taking the rev under the lock and enqueuing after releasing
//! it, so that rev 5 can reach the queue before rev 4.
//!
//! - **Never blocks under the lock.** The enqueue is non-blocking ([`Enqueue`], `try_send`
//!   semantics); a full queue comes back as [`EnqueueError::Full`] for the caller to act on
//!   (the SessionActor closes the link rather than lose order).
//! - **A rev is taken only by a message that was enqueued.** The counter advances after
//!   the enqueue succeeds, so a failed enqueue leaves no gap (§5.2: a rev is spent when
//!   written). For the same reason a panicking `build` leaves the state as it was, and a
//!   lock poisoned by one is used on.
//! - **Which lock** is a type parameter ([`Lock`]): `std::sync::Mutex` for the server, and
//!   with the `loom` feature `loom::sync::Mutex` (`LoomRevWriter`), so the model checker
//!   explores every interleaving of this very code (`tests/loom_rev_queue.rs`). Being a
//!   parameter rather than a cfg switch, the `loom` feature changes nothing for the server.
//!
//! `build` closures run under the lock: they must only assemble the message (no blocking,
//! no call back into the same writer, which would deadlock).

/// What a writer numbers and sends (the pure cores' types, re-exported for the loom test).
pub use crate::core::{HintDraft, Sequencer};
use mcpl_protocol::hints::HintChanges;
use mcpl_protocol::jsonrpc::Message;
use mcpl_transport::{Outbound, TransportError};
use std::marker::PhantomData;

/// Why a message was not enqueued. Nothing was enqueued and no rev was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnqueueError {
    /// The queue is full: the peer stopped reading.
    #[error("the connection's outbound queue is full")]
    Full,
    /// The link's write side is gone.
    #[error("the connection is closed")]
    Closed,
}

/// A bounded queue written without blocking: where a [`RevWriter`] puts its messages.
pub trait Enqueue {
    /// What the queue carries.
    type Item;

    /// Queues `item` now, or says why it cannot; never waits for room.
    fn try_enqueue(&mut self, item: Self::Item) -> Result<(), EnqueueError>;
}

impl Enqueue for Outbound {
    type Item = Message;

    fn try_enqueue(&mut self, item: Message) -> Result<(), EnqueueError> {
        self.try_send(item).map_err(|e| match e {
            TransportError::Backpressure => EnqueueError::Full,
            _ => EnqueueError::Closed,
        })
    }
}

/// A mutual-exclusion lock around a value; see the module docs for why it is a parameter.
pub trait Lock {
    /// The value guarded.
    type Target;

    /// A lock around `value`.
    fn new(value: Self::Target) -> Self;

    /// Runs `f` with the value, holding the lock throughout.
    fn with<R>(&self, f: impl FnOnce(&mut Self::Target) -> R) -> R;
}

impl<T> Lock for std::sync::Mutex<T> {
    type Target = T;

    fn new(value: T) -> Self {
        std::sync::Mutex::new(value)
    }

    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // Nothing is committed before the enqueue succeeds, so a panic under the lock
        // left the state consistent: a poisoned lock is safe to use on.
        let mut guard = self
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }
}

#[cfg(feature = "loom")]
impl<T> Lock for loom::sync::Mutex<T> {
    type Target = T;

    fn new(value: T) -> Self {
        loom::sync::Mutex::new(value)
    }

    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut guard = self
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }
}

/// What a [`RevWriter`]'s lock guards: the counter and the queue, never one without the
/// other.
#[derive(Debug)]
pub struct Guarded<S> {
    sequencer: Sequencer,
    sink: S,
}

/// One connection's write path; see the module docs. `L` is the lock (std's by default).
#[derive(Debug)]
pub struct RevWriter<S, L = std::sync::Mutex<Guarded<S>>> {
    lock: L,
    _sink: PhantomData<fn() -> S>,
}

/// A [`RevWriter`] on loom's mutex, for model checking (`--features loom`).
#[cfg(feature = "loom")]
pub type LoomRevWriter<S> = RevWriter<S, loom::sync::Mutex<Guarded<S>>>;

impl<S, L> RevWriter<S, L>
where
    S: Enqueue,
    L: Lock<Target = Guarded<S>>,
{
    /// A writer for a new connection: the first rev it takes is 1 (§4.6).
    pub fn new(sink: S) -> Self {
        RevWriter {
            lock: L::new(Guarded {
                sequencer: Sequencer::new(),
                sink,
            }),
            _sink: PhantomData,
        }
    }

    /// Enqueues a message that carries no hint changes: it takes no rev (§5.2), but goes
    /// through the same lock, so it keeps its place among the numbered ones.
    pub fn enqueue(&self, message: S::Item) -> Result<(), EnqueueError> {
        self.lock.with(|g| g.sink.try_enqueue(message))
    }

    /// Numbers `draft` with the next rev — even when it is empty, as a `toolsets/list`
    /// statement must be (§4.3) — and enqueues what `build` makes with it. Returns the rev.
    pub fn enqueue_stamped(
        &self,
        draft: HintDraft,
        build: impl FnOnce(HintChanges) -> S::Item,
    ) -> Result<u64, EnqueueError> {
        self.lock.with(|g| {
            let mut next = g.sequencer.clone();
            let hints = next.stamp(draft);
            let rev = hints.rev;
            g.sink.try_enqueue(build(hints))?;
            // §5.2: the rev is spent only now that its message is in the queue.
            g.sequencer = next;
            Ok(rev)
        })
    }

    /// Like [`RevWriter::enqueue_stamped`] when `draft` has entries; an empty one takes no
    /// rev and `build` gets `None` (§5.2: a message without changes takes none). Returns
    /// the rev taken, if any.
    pub fn enqueue_if_any(
        &self,
        draft: HintDraft,
        build: impl FnOnce(Option<HintChanges>) -> S::Item,
    ) -> Result<Option<u64>, EnqueueError> {
        if draft.is_empty() {
            self.enqueue(build(None)).map(|()| None)
        } else {
            self.enqueue_stamped(draft, |h| build(Some(h))).map(Some)
        }
    }

    /// Enqueues what `build` makes with the last rev taken (0 before any), read in the same
    /// step: `tools/list`'s `_meta["mcpl/rev"]` names exactly the revs queued before it (§3).
    pub fn enqueue_at_last(&self, build: impl FnOnce(u64) -> S::Item) -> Result<(), EnqueueError> {
        self.lock.with(|g| {
            let last = g.sequencer.last();
            g.sink.try_enqueue(build(last))
        })
    }

    /// Runs `f` on the queue under the lock, enqueuing nothing and taking no rev: to tell
    /// the transport how to route the next message, say
    /// ([`Outbound::relate`](mcpl_transport::Outbound::relate)).
    pub fn with_sink<R>(&self, f: impl FnOnce(&S) -> R) -> R {
        self.lock.with(|g| f(&g.sink))
    }

    /// The last rev taken (0 before any).
    pub fn last(&self) -> u64 {
        self.lock.with(|g| g.sequencer.last())
    }
}

#[cfg(test)]
mod tests;

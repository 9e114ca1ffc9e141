//! How far a link may read ahead of whoever consumes what it reads.
//!
//! A link hands every read to its tap and its subscribers at once, synchronously; they
//! queue it (the Host's mailbox). A server that writes faster than the consumer takes its
//! messages — a flood of `notifications/message` or `tools/hints` — would grow that queue
//! without bound, and a request of the agent's would wait behind all of it. With a
//! [`ReadGate`], each message handed on carries a [`Ticket`]; the consumer drops it once
//! it has taken the message. While `limit` tickets are out, the link stops reading the
//! connection: the transport's bounded buffers fill, then the socket's, and the server is
//! slowed by TCP itself. Nothing read is dropped, and nothing is ever skipped: hints must
//! apply in read order (§5.2), so the bound is on reading, never on what was read.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;

/// A count of messages handed on and not yet taken, shared by a link and its consumer.
#[derive(Debug, Clone)]
pub struct ReadGate {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    limit: usize,
    out: AtomicUsize,
    peak: AtomicUsize,
    room: Notify,
}

/// The default bound: how many handed-on messages a consumer may have waiting.
pub const DEFAULT_READ_AHEAD: usize = 256;

impl ReadGate {
    /// A gate that stops reading while `limit` (at least 1) tickets are out.
    pub fn new(limit: usize) -> Self {
        ReadGate {
            inner: Arc::new(Inner {
                limit: limit.max(1),
                out: AtomicUsize::new(0),
                peak: AtomicUsize::new(0),
                room: Notify::new(),
            }),
        }
    }

    /// Counts one message handed on; the count drops when the ticket does. Never refuses:
    /// one read may be handed on as more than one message (tapped, then an event), so the
    /// count can pass the limit by a few; reading waits until it is back below.
    pub fn ticket(&self) -> Ticket {
        let now = self.inner.out.fetch_add(1, Ordering::AcqRel) + 1;
        self.inner.peak.fetch_max(now, Ordering::AcqRel);
        Ticket {
            inner: self.inner.clone(),
        }
    }

    /// Resolves once fewer than `limit` tickets are out.
    pub async fn room(&self) {
        loop {
            if self.inner.out.load(Ordering::Acquire) < self.inner.limit {
                return;
            }
            // `notify_one` leaves a permit when nobody waits yet: a ticket dropped between
            // the check above and this wait is not missed.
            self.inner.room.notified().await;
        }
    }

    /// Tickets out now.
    pub fn out(&self) -> usize {
        self.inner.out.load(Ordering::Acquire)
    }

    /// The most tickets ever out at once.
    pub fn peak(&self) -> usize {
        self.inner.peak.load(Ordering::Acquire)
    }

    /// The bound.
    pub fn limit(&self) -> usize {
        self.inner.limit
    }
}

/// One message handed on through a [`ReadGate`]: drop it when the message is taken.
#[derive(Debug)]
pub struct Ticket {
    inner: Arc<Inner>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let before = self.inner.out.fetch_sub(1, Ordering::AcqRel);
        // The count moves by one, so any fall from the limit or above passes exactly here.
        if before == self.inner.limit {
            self.inner.room.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    fn ready(f: impl Future<Output = ()>) -> bool {
        let mut f = pin!(f);
        let mut cx = Context::from_waker(Waker::noop());
        f.as_mut().poll(&mut cx) == Poll::Ready(())
    }

    #[tokio::test]
    async fn reading_waits_at_the_limit_and_goes_on_when_one_is_taken() {
        let gate = ReadGate::new(3);
        let tickets: Vec<Ticket> = (0..3).map(|_| gate.ticket()).collect();
        assert!(!ready(gate.room()), "three out: no room");
        let extra = gate.ticket();
        assert_eq!((gate.out(), gate.peak()), (4, 4));
        let waiting = tokio::spawn({
            let gate = gate.clone();
            async move { gate.room().await }
        });
        tokio::task::yield_now().await;
        drop(extra);
        assert!(!waiting.is_finished(), "back at the limit: still no room");
        drop(tickets);
        waiting.await.unwrap();
        assert_eq!((gate.out(), gate.peak()), (0, 4));
        assert!(ready(gate.room()));
    }
}

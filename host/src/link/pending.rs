//! A connection's request ids: those awaited, and those that timed out.
//!
//! Ids are integers from 1, per connection (a new connection starts again; nothing from an
//! old one can arrive on it). A request that times out moves to the timed-out table rather
//! than being forgotten, so that its late result is still recognised and tapped with its
//! method (§5.2, vector 28: the hints on it must be applied). That table is bounded: the
//! oldest id is forgotten first.

use super::error::LinkError;
use super::tap::{Answered, AwaitStatus};
use actix::SpawnHandle;
use mcpl_protocol::Id;
use mcpl_protocol::jsonrpc::RawValue;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// Who is waiting for a response.
pub(super) enum Waiter {
    /// A caller; the closure decodes the result by the method's type and replies.
    Caller(Box<dyn FnOnce(Result<Box<RawValue>, LinkError>)>),
    /// The link's own handshake and refresh requests.
    Initialize,
    /// The initial policy's receipt; the grant proposed.
    GrantReceipt(Vec<String>),
    /// A later policy's receipt (after a manifest change): its number and the grant.
    PolicyReceipt(u64, Vec<String>),
    ToolsPage,
    Manifest,
    /// The era probe (`server/discover`); `retried`: the second, sent after the server
    /// refused the version of the first (-32022).
    Discover {
        /// Whether this is that second probe.
        retried: bool,
    },
    /// A caller's request to a modern server, answered again while the server asks for
    /// input (`mrtr.rs`).
    Input(Box<InputRound>),
    /// A modern session's `subscriptions/listen`: awaited without a timeout, for as long
    /// as the server keeps it open.
    Listen,
}

/// A caller's request to a modern server, between its rounds.
pub(super) struct InputRound {
    pub(super) method: &'static str,
    /// The params as the caller gave them (the link stamps `_meta` on each send).
    pub(super) params: Box<RawValue>,
    /// Retries made so far.
    pub(super) rounds: u32,
    /// Whether it was sent again after the server refused its protocol version (-32022):
    /// that is done once (`era.rs`, "A version refused").
    pub(super) version_retried: bool,
    pub(super) timeout: Option<Duration>,
    pub(super) reply: Box<dyn FnOnce(Result<Box<RawValue>, LinkError>)>,
}

/// A request in flight.
pub(super) struct Pending {
    pub(super) method: &'static str,
    pub(super) waiter: Waiter,
    pub(super) timeout: Duration,
    /// The timeout timer, cancelled when the response arrives.
    pub(super) timer: SpawnHandle,
}

/// The table.
pub(super) struct PendingTable {
    next: i64,
    awaited: HashMap<i64, Pending>,
    timed_out: BTreeMap<i64, &'static str>,
    capacity: usize,
}

impl PendingTable {
    pub(super) fn new(timed_out_capacity: usize) -> Self {
        PendingTable {
            next: 1,
            awaited: HashMap::new(),
            timed_out: BTreeMap::new(),
            capacity: timed_out_capacity,
        }
    }

    /// The id the next request takes.
    pub(super) fn allocate(&mut self) -> i64 {
        let id = self.next;
        self.next += 1;
        id
    }

    pub(super) fn insert(&mut self, id: i64, pending: Pending) {
        self.awaited.insert(id, pending);
    }

    /// What a response with this id answers, if it answers one of ours.
    pub(super) fn answers(&self, id: Option<&Id>) -> Option<Answered> {
        let Some(id @ Id::Number(n)) = id else {
            return None;
        };
        if let Some(p) = self.awaited.get(n) {
            Some(Answered {
                id: id.clone(),
                method: p.method,
                status: AwaitStatus::Awaited,
            })
        } else {
            self.timed_out.get(n).map(|method| Answered {
                id: id.clone(),
                method,
                status: AwaitStatus::TimedOut,
            })
        }
    }

    /// Takes an awaited request: its response arrived.
    pub(super) fn take(&mut self, id: &Id) -> Option<Pending> {
        let Id::Number(n) = id else { return None };
        self.awaited.remove(n)
    }

    /// Moves an awaited request to the timed-out table and returns it.
    pub(super) fn time_out(&mut self, id: i64) -> Option<Pending> {
        let pending = self.awaited.remove(&id)?;
        if self.capacity > 0 {
            while self.timed_out.len() >= self.capacity {
                self.timed_out.pop_first();
            }
            self.timed_out.insert(id, pending.method);
        }
        Some(pending)
    }

    /// Forgets a timed-out request whose late response arrived; returns its method.
    pub(super) fn take_late(&mut self, id: &Id) -> Option<&'static str> {
        let Id::Number(n) = id else { return None };
        self.timed_out.remove(n)
    }

    /// Everything awaited, oldest first, leaving the table empty (the connection went).
    pub(super) fn drain(&mut self) -> Vec<Pending> {
        self.timed_out.clear();
        let mut all: Vec<_> = self.awaited.drain().collect();
        all.sort_by_key(|(id, _)| *id);
        all.into_iter().map(|(_, p)| p).collect()
    }

    /// The awaited requests whose waiter is the link's own tools listing, with their
    /// current timeouts.
    pub(super) fn listing_pages(&mut self) -> impl Iterator<Item = (i64, &mut Pending)> {
        self.awaited
            .iter_mut()
            .filter(|(_, p)| matches!(p.waiter, Waiter::ToolsPage))
            .map(|(id, p)| (*id, p))
    }

    /// How many requests are awaited.
    pub(super) fn awaited_len(&self) -> usize {
        self.awaited.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(method: &'static str) -> Pending {
        Pending {
            method,
            waiter: Waiter::ToolsPage,
            timeout: Duration::from_secs(1),
            timer: SpawnHandle::default(),
        }
    }

    #[test]
    fn ids_count_from_one_and_responses_find_their_method() {
        let mut t = PendingTable::new(4);
        let a = t.allocate();
        let b = t.allocate();
        assert_eq!((a, b), (1, 2));
        t.insert(a, pending("tools/list"));
        t.insert(b, pending("tools/call"));
        let ans = t.answers(Some(&Id::Number(2))).unwrap();
        assert_eq!(
            (ans.method, ans.status),
            ("tools/call", AwaitStatus::Awaited)
        );
        assert!(t.answers(Some(&Id::Number(3))).is_none());
        assert!(t.answers(Some(&Id::String("2".into()))).is_none());
        assert!(t.answers(None).is_none());
        assert_eq!(t.take(&Id::Number(2)).unwrap().method, "tools/call");
        assert!(t.take(&Id::Number(2)).is_none());
    }

    #[test]
    fn a_timed_out_id_is_still_recognised_once() {
        let mut t = PendingTable::new(4);
        let id = t.allocate();
        t.insert(id, pending("tools/call"));
        assert_eq!(t.time_out(id).unwrap().method, "tools/call");
        assert!(t.time_out(id).is_none(), "a request times out once");
        let ans = t.answers(Some(&Id::Number(id))).unwrap();
        assert_eq!(
            (ans.method, ans.status),
            ("tools/call", AwaitStatus::TimedOut)
        );
        assert!(
            t.take(&Id::Number(id)).is_none(),
            "no caller waits for it any more"
        );
        assert_eq!(t.take_late(&Id::Number(id)), Some("tools/call"));
        assert_eq!(t.take_late(&Id::Number(id)), None);
    }

    #[test]
    fn the_timed_out_table_forgets_the_oldest_first() {
        let mut t = PendingTable::new(2);
        for _ in 0..3 {
            let id = t.allocate();
            t.insert(id, pending("tools/call"));
            t.time_out(id);
        }
        assert!(t.answers(Some(&Id::Number(1))).is_none());
        assert!(t.answers(Some(&Id::Number(2))).is_some());
        assert!(t.answers(Some(&Id::Number(3))).is_some());
    }

    #[test]
    fn drain_returns_the_awaited_in_order_and_forgets_the_timed_out() {
        let mut t = PendingTable::new(2);
        for m in ["a", "b", "c"] {
            let id = t.allocate();
            t.insert(id, pending(m));
        }
        t.time_out(2);
        let methods: Vec<_> = t.drain().into_iter().map(|p| p.method).collect();
        assert_eq!(methods, ["a", "c"]);
        assert_eq!(t.awaited_len(), 0);
        assert!(t.answers(Some(&Id::Number(2))).is_none());
    }
}

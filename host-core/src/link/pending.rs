//! A connection's request ids: those awaited, with their deadlines, and those that timed
//! out.
//!
//! Ids are integers from 1, per connection (a new connection starts again; nothing from an
//! old one can arrive on it). Each awaited request has a deadline (none for one awaited for
//! as long as the connection lives: `subscriptions/listen`); the earliest is what the
//! driver arms its one timer for ([`PendingTable::next_deadline`]), and what is past it
//! when the timer fires times out ([`PendingTable::expire`]). A request that times out
//! moves to the timed-out table rather than being forgotten, so that its late result is
//! still recognised and tapped with its method (§5.2, vector 28: the hints on it must be
//! applied). That table is bounded: the oldest id is forgotten first.

use mcpl_protocol::Id;
use mcpl_protocol::jsonrpc::RawValue;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// Whether a response's request is still awaited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AwaitStatus {
    /// A caller (or the link itself) is waiting for it.
    Awaited,
    /// It timed out; no one waits, but its content still counts (§5.2, vector 28).
    TimedOut,
}

/// The request a response answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Answered {
    /// Its id.
    pub id: Id,
    /// Its method, by which the result is decoded.
    pub method: &'static str,
    /// Whether it is still awaited.
    pub status: AwaitStatus,
}

/// Who is waiting for a response. `C` is how a caller is answered (the driver's business:
/// a closure replying on a channel); every other waiter is one of the link's own steps.
pub enum Waiter<C> {
    /// A caller.
    Caller(C),
    /// The handshake's `initialize`.
    Initialize,
    /// The initial policy's receipt; the grant proposed.
    GrantReceipt(Vec<String>),
    /// A later policy's receipt (after a manifest change): its number and the grant.
    PolicyReceipt(u64, Vec<String>),
    /// One page of the link's own tools listing.
    ToolsPage,
    /// A manifest re-read.
    Manifest,
    /// The era probe (`server/discover`); `retried`: the second, sent after the server
    /// refused the version of the first (-32022).
    Discover {
        /// Whether this is that second probe.
        retried: bool,
    },
    /// A caller's request to a modern server, answered again while the server asks for
    /// input (`mrtr.rs`).
    Input(Box<InputRound<C>>),
    /// A modern session's `subscriptions/listen`: awaited without a timeout, for as long
    /// as the server keeps it open.
    Listen,
}

/// A caller's request to a modern server, between its rounds.
pub struct InputRound<C> {
    pub method: &'static str,
    /// The params as the caller gave them (the link stamps `_meta` on each send).
    pub params: Box<RawValue>,
    /// Retries made so far.
    pub rounds: u32,
    /// Whether it was sent again after the server refused its protocol version (-32022):
    /// that is done once (`era.rs`, "A version refused").
    pub version_retried: bool,
    pub timeout: Option<Duration>,
    pub reply: C,
}

/// A request in flight.
pub struct Pending<C> {
    pub method: &'static str,
    pub waiter: Waiter<C>,
    /// How long it may wait (`Duration::MAX`: for as long as the connection lives).
    pub timeout: Duration,
    /// When it times out; none when it does not.
    pub deadline: Option<Instant>,
}

/// The table.
pub struct PendingTable<C> {
    next: i64,
    awaited: HashMap<i64, Pending<C>>,
    timed_out: BTreeMap<i64, &'static str>,
    capacity: usize,
}

impl<C> PendingTable<C> {
    pub fn new(timed_out_capacity: usize) -> Self {
        PendingTable {
            next: 1,
            awaited: HashMap::new(),
            timed_out: BTreeMap::new(),
            capacity: timed_out_capacity,
        }
    }

    /// Awaits a request sent `now` that may wait `timeout` (none: for as long as the
    /// connection lives); returns the id it takes.
    pub fn insert(
        &mut self,
        method: &'static str,
        waiter: Waiter<C>,
        timeout: Option<Duration>,
        now: Instant,
    ) -> i64 {
        let id = self.next;
        self.next += 1;
        let deadline = timeout.and_then(|t| now.checked_add(t));
        self.awaited.insert(
            id,
            Pending {
                method,
                waiter,
                timeout: timeout.unwrap_or(Duration::MAX),
                deadline,
            },
        );
        id
    }

    /// What a response with this id answers, if it answers one of ours.
    pub fn answers(&self, id: Option<&Id>) -> Option<Answered> {
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
    pub fn take(&mut self, id: &Id) -> Option<Pending<C>> {
        let Id::Number(n) = id else { return None };
        self.awaited.remove(n)
    }

    /// The earliest deadline of an awaited request.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.awaited.values().filter_map(|p| p.deadline).min()
    }

    /// Moves every awaited request whose deadline is `now` or before to the timed-out
    /// table and returns them, lowest id first.
    pub fn expire(&mut self, now: Instant) -> Vec<(i64, Pending<C>)> {
        let mut due: Vec<i64> = self
            .awaited
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| *id)
            .collect();
        due.sort_unstable();
        due.into_iter()
            .filter_map(|id| self.time_out(id).map(|p| (id, p)))
            .collect()
    }

    /// Moves an awaited request to the timed-out table and returns it.
    fn time_out(&mut self, id: i64) -> Option<Pending<C>> {
        let pending = self.awaited.remove(&id)?;
        if self.capacity > 0 {
            while self.timed_out.len() >= self.capacity {
                self.timed_out.pop_first();
            }
            self.timed_out.insert(id, pending.method);
        }
        Some(pending)
    }

    /// Stops awaiting every request of `method` (no waiter is answered): each moves to the
    /// timed-out table, so its answer is still recognised, read and dropped. Returns how
    /// many.
    pub fn abandon(&mut self, method: &'static str) -> usize {
        let ids: Vec<i64> = self
            .awaited
            .iter()
            .filter(|(_, p)| p.method == method)
            .map(|(id, _)| *id)
            .collect();
        for id in &ids {
            self.time_out(*id);
        }
        ids.len()
    }

    /// Forgets a timed-out request whose late response arrived; returns its method.
    pub fn take_late(&mut self, id: &Id) -> Option<&'static str> {
        let Id::Number(n) = id else { return None };
        self.timed_out.remove(n)
    }

    /// Everything awaited, oldest first, leaving the table empty (the connection went).
    pub fn drain(&mut self) -> Vec<Pending<C>> {
        self.timed_out.clear();
        let mut all: Vec<_> = self.awaited.drain().collect();
        all.sort_by_key(|(id, _)| *id);
        all.into_iter().map(|(_, p)| p).collect()
    }

    /// Gives the link's own tools listing's awaited pages `grace` from `now` at most:
    /// something unreadable arrived, which may have been one's answer. Returns how many
    /// deadlines came nearer.
    pub fn hasten_listing(&mut self, grace: Duration, now: Instant) -> usize {
        let mut hastened = 0;
        for pending in self.awaited.values_mut() {
            if matches!(pending.waiter, Waiter::ToolsPage) && pending.timeout > grace {
                pending.timeout = grace;
                pending.deadline = now.checked_add(grace);
                hastened += 1;
            }
        }
        hastened
    }

    /// How many requests are awaited.
    pub fn awaited_len(&self) -> usize {
        self.awaited.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insert(t: &mut PendingTable<()>, method: &'static str, now: Instant) -> i64 {
        t.insert(method, Waiter::ToolsPage, Some(Duration::from_secs(1)), now)
    }

    #[test]
    fn ids_count_from_one_and_responses_find_their_method() {
        let now = Instant::now();
        let mut t = PendingTable::<()>::new(4);
        let a = insert(&mut t, "tools/list", now);
        let b = insert(&mut t, "tools/call", now);
        assert_eq!((a, b), (1, 2));
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
        let now = Instant::now();
        let mut t = PendingTable::<()>::new(4);
        let id = insert(&mut t, "tools/call", now);
        assert!(t.expire(now).is_empty(), "not yet due");
        let later = now + Duration::from_secs(1);
        let expired = t.expire(later);
        assert_eq!(expired.len(), 1);
        assert_eq!(expired[0].1.method, "tools/call");
        assert!(t.expire(later).is_empty(), "a request times out once");
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
        let now = Instant::now();
        let mut t = PendingTable::<()>::new(2);
        for _ in 0..3 {
            insert(&mut t, "tools/call", now);
        }
        assert_eq!(t.expire(now + Duration::from_secs(2)).len(), 3);
        assert!(t.answers(Some(&Id::Number(1))).is_none());
        assert!(t.answers(Some(&Id::Number(2))).is_some());
        assert!(t.answers(Some(&Id::Number(3))).is_some());
    }

    #[test]
    fn drain_returns_the_awaited_in_order_and_forgets_the_timed_out() {
        let now = Instant::now();
        let mut t = PendingTable::<()>::new(2);
        for (m, secs) in [("a", 5), ("b", 1), ("c", 5)] {
            t.insert(m, Waiter::Manifest, Some(Duration::from_secs(secs)), now);
        }
        assert_eq!(t.next_deadline(), Some(now + Duration::from_secs(1)));
        t.expire(now + Duration::from_secs(1));
        let methods: Vec<_> = t.drain().into_iter().map(|p| p.method).collect();
        assert_eq!(methods, ["a", "c"]);
        assert_eq!(t.awaited_len(), 0);
        assert!(t.answers(Some(&Id::Number(2))).is_none());
    }

    #[test]
    fn issue38_02_deadlines_are_polled_earliest_first_and_a_listing_is_hastened() {
        let now = Instant::now();
        let mut t = PendingTable::<()>::new(8);
        let listen = t.insert("subscriptions/listen", Waiter::Listen, None, now);
        assert_eq!(t.next_deadline(), None, "awaited for the connection's life");
        let call = t.insert(
            "tools/call",
            Waiter::Manifest,
            Some(Duration::from_secs(30)),
            now,
        );
        let page = t.insert(
            "tools/list",
            Waiter::ToolsPage,
            Some(Duration::from_secs(30)),
            now,
        );
        assert_eq!(t.next_deadline(), Some(now + Duration::from_secs(30)));
        let at = now + Duration::from_secs(2);
        assert_eq!(t.hasten_listing(Duration::from_secs(1), at), 1);
        assert_eq!(
            t.hasten_listing(Duration::from_secs(1), at),
            0,
            "once hastened it is not pushed back"
        );
        assert_eq!(t.next_deadline(), Some(at + Duration::from_secs(1)));
        let expired: Vec<i64> = t
            .expire(at + Duration::from_secs(1))
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(expired, [page]);
        assert!(t.take(&Id::Number(call)).is_some());
        assert!(t.take(&Id::Number(listen)).is_some());
    }
}

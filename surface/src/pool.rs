//! Which principals have a host kept for their modern requests, and which is closed:
//! at most [`Limits::max`] at once, each closed once it has been idle (no request in
//! flight) for [`Limits::idle`].
//!
//! **\[project\]** (MCP 2026-07-28 names no bound: a stateless server keeps nothing, but a
//! surface host's state is its principals' agents, each with its links — and a stdio
//! child per backing server on stdio — so it bounds them). A principal is admitted
//! ([`Pool::admit`]) for each request and released when it is answered
//! ([`Pool::release`]). A new principal beyond the cap makes the least recently used idle
//! one's host close; when every kept principal has a request in flight it is refused
//! ([`Admit::Full`]): a request is never cut off to make room. Closing a host for
//! idleness loses what it showed and nobody was told yet, and its open toolsets with it
//! (as a legacy client's closed session does); the next request of that principal starts
//! a new host, which adopts what its servers kept (§4.3).
//!
//! Pure: time is an argument, nothing is started or stopped here.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most principals with a host kept at once.
    pub max: usize,
    /// How long a principal with no request in flight keeps its host.
    pub idle: Duration,
    /// The most requests of one principal's in flight at once (a legacy connection's bound,
    /// [`crate::session::MAX_IN_FLIGHT`], for all of a principal's modern requests).
    pub in_flight: usize,
}

impl Default for Limits {
    /// 16 principals, 10 minutes, 16 requests each.
    fn default() -> Self {
        Limits {
            max: 16,
            idle: Duration::from_secs(600),
            in_flight: 16,
        }
    }
}

/// What a request of a principal's finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admit {
    /// Its host is kept: use it.
    Kept,
    /// It has none: start one, after closing `evict`'s host when it names one (the least
    /// recently used idle principal's, to stay within the cap).
    Start {
        /// The principal whose host makes room.
        evict: Option<String>,
    },
    /// Every kept principal has a request in flight, and there are as many as the cap.
    Full,
    /// The principal has [`Limits::in_flight`] requests in flight already.
    Busy,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    in_flight: usize,
    last_used: Instant,
}

/// The principals whose hosts are kept (module docs).
#[derive(Debug)]
pub struct Pool {
    limits: Limits,
    slots: HashMap<String, Slot>,
}

impl Pool {
    /// None kept yet. A cap of 0 is taken as 1.
    pub fn new(limits: Limits) -> Self {
        Pool {
            limits: Limits {
                max: limits.max.max(1),
                idle: limits.idle,
                in_flight: limits.in_flight.max(1),
            },
            slots: HashMap::new(),
        }
    }

    /// The bounds.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// A request of `principal`'s starts at `now`; on [`Admit::Kept`] and
    /// [`Admit::Start`] it counts as in flight until [`Pool::release`] (on [`Admit::Full`]
    /// and [`Admit::Busy`] it is not admitted, and not released).
    pub fn admit(&mut self, principal: &str, now: Instant) -> Admit {
        if let Some(slot) = self.slots.get_mut(principal) {
            if slot.in_flight >= self.limits.in_flight {
                return Admit::Busy;
            }
            slot.in_flight += 1;
            slot.last_used = now;
            return Admit::Kept;
        }
        let mut evict = None;
        if self.slots.len() >= self.limits.max {
            let oldest = self
                .slots
                .iter()
                .filter(|(_, s)| s.in_flight == 0)
                // Ties broken by name: the same choice on every run.
                .min_by(|(a, x), (b, y)| x.last_used.cmp(&y.last_used).then(a.cmp(b)))
                .map(|(name, _)| name.clone());
            let Some(oldest) = oldest else {
                return Admit::Full;
            };
            self.slots.remove(&oldest);
            evict = Some(oldest);
        }
        self.slots.insert(
            principal.to_owned(),
            Slot {
                in_flight: 1,
                last_used: now,
            },
        );
        Admit::Start { evict }
    }

    /// A request of `principal`'s was answered at `now`.
    pub fn release(&mut self, principal: &str, now: Instant) {
        if let Some(slot) = self.slots.get_mut(principal) {
            slot.in_flight = slot.in_flight.saturating_sub(1);
            slot.last_used = now;
        }
    }

    /// Forgets `principal` (its host could not be started).
    pub fn forget(&mut self, principal: &str) {
        self.slots.remove(principal);
    }

    /// The principals idle for [`Limits::idle`] at `now`, in name order; they are no
    /// longer kept.
    pub fn expire(&mut self, now: Instant) -> Vec<String> {
        let idle = self.limits.idle;
        let mut gone: Vec<String> = self
            .slots
            .iter()
            .filter(|(_, s)| s.in_flight == 0 && now.saturating_duration_since(s.last_used) >= idle)
            .map(|(name, _)| name.clone())
            .collect();
        gone.sort();
        for name in &gone {
            self.slots.remove(name);
        }
        gone
    }

    /// When the next idle principal expires, if one is idle.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.slots
            .values()
            .filter(|s| s.in_flight == 0)
            .map(|s| s.last_used + self.limits.idle)
            .min()
    }

    /// How many principals are kept.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when none is.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_secs(60);

    fn pool(max: usize) -> (Pool, Instant) {
        let limits = Limits {
            max,
            idle: 10 * MIN,
            in_flight: 3,
        };
        (Pool::new(limits), Instant::now())
    }

    #[test]
    fn issue39_10_one_host_per_principal_shared_by_its_requests() {
        let (mut p, t) = pool(4);
        assert_eq!(p.admit("alice", t), Admit::Start { evict: None });
        assert_eq!(p.admit("alice", t), Admit::Kept, "two requests at once");
        p.release("alice", t);
        p.release("alice", t);
        assert_eq!(p.admit("alice", t + MIN), Admit::Kept);
        assert_eq!(p.admit("bob", t + MIN), Admit::Start { evict: None });
        assert_eq!(p.len(), 2);
        // alice has one in flight: two more at once, and no further.
        assert_eq!(p.admit("alice", t + MIN), Admit::Kept);
        assert_eq!(p.admit("alice", t + MIN), Admit::Kept);
        assert_eq!(p.admit("alice", t + MIN), Admit::Busy);
        p.release("alice", t + MIN);
        assert_eq!(p.admit("alice", t + MIN), Admit::Kept);
    }

    #[test]
    fn issue39_10_past_the_cap_the_least_recently_used_idle_host_closes() {
        let (mut p, t) = pool(2);
        p.admit("alice", t);
        p.release("alice", t);
        p.admit("bob", t + MIN);
        p.release("bob", t + MIN);
        assert_eq!(
            p.admit("carol", t + 2 * MIN),
            Admit::Start {
                evict: Some("alice".into())
            }
        );
        // bob is busy now, carol too: dave finds every kept principal in flight.
        assert_eq!(p.admit("bob", t + 3 * MIN), Admit::Kept);
        assert_eq!(p.admit("dave", t + 3 * MIN), Admit::Full);
        assert_eq!(p.len(), 2, "a refused principal is not kept");
        p.release("carol", t + 4 * MIN);
        assert_eq!(
            p.admit("dave", t + 4 * MIN),
            Admit::Start {
                evict: Some("carol".into())
            },
            "a busy principal is never cut off"
        );
    }

    #[test]
    fn issue39_10_an_idle_host_expires_and_a_busy_one_never_does() {
        let (mut p, t) = pool(4);
        p.admit("alice", t);
        p.admit("bob", t);
        p.release("bob", t + MIN);
        assert_eq!(p.next_expiry(), Some(t + 11 * MIN));
        assert!(p.expire(t + 11 * MIN - Duration::from_millis(1)).is_empty());
        assert_eq!(p.expire(t + 11 * MIN), vec!["bob".to_owned()]);
        assert_eq!(p.next_expiry(), None, "alice is in flight");
        assert!(p.expire(t + 100 * MIN).is_empty());
        p.release("alice", t + 100 * MIN);
        assert_eq!(p.expire(t + 110 * MIN), vec!["alice".to_owned()]);
        assert!(p.is_empty());
        // Gone, a principal starts again.
        assert_eq!(p.admit("bob", t + 111 * MIN), Admit::Start { evict: None });
    }

    #[test]
    fn a_principal_whose_host_did_not_start_is_forgotten() {
        let (mut p, t) = pool(1);
        p.admit("alice", t);
        p.forget("alice");
        assert_eq!(p.admit("bob", t), Admit::Start { evict: None });
        p.release("nobody", t);
        let zero = Pool::new(Limits {
            max: 0,
            idle: MIN,
            in_flight: 0,
        });
        assert_eq!((zero.limits().max, zero.limits().in_flight), (1, 1));
    }
}

//! A bounded set of push event ids seen on one connection (§5.2, vector 35).
//!
//! Servers never retry a hint-carrying push, so a repeated id is a rare anomaly; the set
//! forgets its oldest ids past a capacity so a long-lived connection does not grow without
//! bound.

use std::collections::{HashSet, VecDeque};

/// Remembers up to `capacity` ids, forgetting the oldest first.
#[derive(Debug, Clone)]
pub(crate) struct SeenIds {
    set: HashSet<String>,
    order: VecDeque<String>,
    capacity: usize,
}

impl SeenIds {
    /// An empty set holding at most `capacity` ids (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        SeenIds {
            set: HashSet::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// True when `id` is remembered.
    pub(crate) fn contains(&self, id: &str) -> bool {
        self.set.contains(id)
    }

    /// Records `id`; returns false when it was already there.
    pub(crate) fn insert(&mut self, id: &str) -> bool {
        if self.set.contains(id) {
            return false;
        }
        if self.order.len() == self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            self.set.remove(&oldest);
        }
        self.set.insert(id.to_owned());
        self.order.push_back(id.to_owned());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_until_capacity_then_forgets_the_oldest() {
        let mut s = SeenIds::new(2);
        assert!(s.insert("a"));
        assert!(!s.insert("a"));
        assert!(s.insert("b"));
        assert!(s.insert("c"));
        assert!(s.insert("a"), "a was the oldest and is forgotten");
        assert!(!s.insert("c"));
    }
}

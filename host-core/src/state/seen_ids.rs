//! Bounded sets of push event ids: those seen on one connection (§5.2, vector 35), and
//! those a link admitted across its connections with what they said (SPEC §9.4).
//!
//! Servers never retry a hint-carrying push, so a repeated id is a rare anomaly; the sets
//! forget their oldest ids past a capacity so a long-lived connection does not grow without
//! bound. A peer chooses an id's length too (a message may be megabytes), so what is kept of
//! an id is bounded in bytes as well: its [`event_key`], the id itself up to
//! [`KEPT_ID_BYTES`] and a digest of it beyond.

use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};

/// The longest event id kept as it is; a longer one is kept as its digest.
pub const KEPT_ID_BYTES: usize = 64;

/// What the host keeps of an event id (issue #36 item 3: a 1 MiB id kept whole in several
/// tables cost megabytes each): the id when it is at most [`KEPT_ID_BYTES`] long, otherwise
/// `sha256:` and the hex of its SHA-256, 71 bytes. A kept id is never as long as a digest,
/// so the two never meet; two long ids meet only if SHA-256 collides.
pub fn event_key(id: &str) -> Cow<'_, str> {
    if id.len() <= KEPT_ID_BYTES {
        return Cow::Borrowed(id);
    }
    let digest = Sha256::digest(id.as_bytes());
    let mut key = String::with_capacity(7 + 64);
    key.push_str("sha256:");
    for b in digest {
        key.push_str(&format!("{b:02x}"));
    }
    Cow::Owned(key)
}

/// Remembers up to `capacity` ids (by [`event_key`]), forgetting the oldest first.
#[derive(Debug, Clone)]
pub struct SeenIds {
    set: HashSet<String>,
    order: VecDeque<String>,
    capacity: usize,
}

impl SeenIds {
    /// An empty set holding at most `capacity` ids (at least one).
    pub fn new(capacity: usize) -> Self {
        SeenIds {
            set: HashSet::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// True when `id` is remembered.
    pub fn contains(&self, id: &str) -> bool {
        self.set.contains(event_key(id).as_ref())
    }

    /// Records `id`; returns false when it was already there.
    pub fn insert(&mut self, id: &str) -> bool {
        let key = event_key(id);
        if self.set.contains(key.as_ref()) {
            return false;
        }
        if self.order.len() == self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            self.set.remove(&oldest);
        }
        let key = key.into_owned();
        self.set.insert(key.clone());
        self.order.push_back(key);
        true
    }
}

/// How a push's id and content compare with the pushes admitted before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// An id not admitted before (or forgotten since).
    New,
    /// The id and content of a push admitted before: a retry (SPEC §9.4).
    Retry,
    /// An id admitted before with other content: the server reused it for another event.
    Reused,
}

/// The push ids a link admitted, across its connections, each with a digest of what its
/// push said; up to `capacity`, the oldest forgotten first.
#[derive(Debug, Clone)]
pub struct SeenEvents {
    content: HashMap<String, u64>,
    order: VecDeque<String>,
    capacity: usize,
}

impl SeenEvents {
    /// An empty set holding at most `capacity` ids (at least one).
    pub fn new(capacity: usize) -> Self {
        SeenEvents {
            content: HashMap::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// Records that a push with `id` saying `content` (a digest) was admitted, and says how
    /// it compares with what was admitted before; a reused id now stands for this content.
    pub fn admit(&mut self, id: &str, content: u64) -> Seen {
        let key = event_key(id);
        if let Some(before) = self.content.get_mut(key.as_ref()) {
            if *before == content {
                return Seen::Retry;
            }
            *before = content;
            return Seen::Reused;
        }
        if self.order.len() == self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            self.content.remove(&oldest);
        }
        let key = key.into_owned();
        self.content.insert(key.clone(), content);
        self.order.push_back(key);
        Seen::New
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

    #[test]
    fn a_long_id_is_kept_as_a_digest_that_tells_ids_apart() {
        let long = |c: char| c.to_string().repeat(1 << 20);
        let (a, b) = (long('a'), long('b'));
        let key = event_key(&a);
        assert!(key.starts_with("sha256:") && key.len() == 71, "{key}");
        assert_ne!(key, event_key(&b));
        let short = "x".repeat(KEPT_ID_BYTES);
        assert_eq!(event_key(&short), short.as_str());
        let mut s = SeenIds::new(4);
        assert!(s.insert(&a));
        assert!(s.contains(&a) && !s.contains(&b));
        assert!(!s.insert(&a));
        assert!(s.insert(&b));
        assert!(s.order.iter().all(|k| k.len() <= 71));
    }

    #[test]
    fn an_id_again_is_a_retry_with_the_same_content_and_reused_with_other() {
        let mut s = SeenEvents::new(2);
        assert_eq!(s.admit("ev-1", 7), Seen::New);
        assert_eq!(s.admit("ev-1", 7), Seen::Retry);
        assert_eq!(s.admit("ev-1", 8), Seen::Reused);
        assert_eq!(
            s.admit("ev-1", 8),
            Seen::Retry,
            "it stands for the new content"
        );
        assert_eq!(s.admit("ev-2", 1), Seen::New);
        assert_eq!(s.admit("ev-3", 1), Seen::New);
        assert_eq!(s.admit("ev-1", 8), Seen::New, "the oldest was forgotten");
    }
}

//! The ended-record ids already told to the agent, per server (§4.3, vector 13: told once
//! per id across reconnects and restarts). Pure; `mcpl_host::host::ToldStore` persists it.
//!
//! Also the ends told **without** an id (a server that says a close without `ended`, or an
//! end it recorded only later): each is kept by its instance until a record for that
//! instance comes, which then counts told, so an end is told once whichever way it
//! arrives.
//!
//! Bounded: a server reports a record only until it expires (an hour by default), so the
//! oldest ids past the capacity can be forgotten without being told again.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet, VecDeque};

/// How many ids are kept per server by default.
pub const DEFAULT_TOLD_CAPACITY: usize = 4_096;

/// Told ids per server, oldest first, with a dirty flag for persistence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToldIds {
    servers: BTreeMap<String, Told>,
    capacity: usize,
    dirty: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Told {
    order: VecDeque<String>,
    set: HashSet<String>,
    /// Instances whose end was told without a record id, oldest first.
    unrecorded: VecDeque<String>,
}

/// The key of an instance for [`ToldIds::mark_end_told`].
fn instance_key(toolset: &str, instance: Option<&str>) -> String {
    format!("{toolset}\u{0}{}", instance.unwrap_or_default())
}

impl Default for ToldIds {
    fn default() -> Self {
        ToldIds::new(DEFAULT_TOLD_CAPACITY)
    }
}

/// The persisted form: `{"version": 2, "servers": {"arcade": ["e-1", …]},
/// "unrecorded": {"arcade": ["go\u0000g1", …]}}` (version 1 had no `unrecorded`).
#[derive(Debug, Serialize, Deserialize)]
pub struct ToldFile {
    /// The format's version (1 or 2).
    pub version: u32,
    /// The told ended ids per server, oldest first.
    pub servers: BTreeMap<String, Vec<String>>,
    /// Per server, the ends told without a record id (toolset and instance).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unrecorded: BTreeMap<String, Vec<String>>,
}

impl ToldIds {
    /// An empty set keeping up to `capacity` ids per server (at least one).
    pub fn new(capacity: usize) -> Self {
        ToldIds {
            servers: BTreeMap::new(),
            capacity: capacity.max(1),
            dirty: false,
        }
    }

    /// True when `id` of `server` was told.
    pub fn contains(&self, server: &str, id: &str) -> bool {
        self.servers.get(server).is_some_and(|t| t.set.contains(id))
    }

    /// Records `id` of `server` as told; false when it already was.
    pub fn mark_told(&mut self, server: &str, id: &str) -> bool {
        let cap = self.capacity;
        let t = self.servers.entry(server.to_owned()).or_default();
        if !t.set.insert(id.to_owned()) {
            return false;
        }
        t.order.push_back(id.to_owned());
        if t.order.len() > cap
            && let Some(old) = t.order.pop_front()
        {
            t.set.remove(&old);
        }
        self.dirty = true;
        true
    }

    /// Records that the end of `instance` of `toolset` was told without a record id: the
    /// next record for it counts told ([`ToldIds::take_end_told`]).
    pub fn mark_end_told(&mut self, server: &str, toolset: &str, instance: Option<&str>) {
        let cap = self.capacity;
        let t = self.servers.entry(server.to_owned()).or_default();
        t.unrecorded.push_back(instance_key(toolset, instance));
        if t.unrecorded.len() > cap {
            t.unrecorded.pop_front();
        }
        self.dirty = true;
    }

    /// True (once) when the end of that instance was told without a record id: the record
    /// that came for it now is the same end, told already.
    pub fn take_end_told(&mut self, server: &str, toolset: &str, instance: Option<&str>) -> bool {
        let key = instance_key(toolset, instance);
        let Some(t) = self.servers.get_mut(server) else {
            return false;
        };
        match t.unrecorded.iter().position(|k| *k == key) {
            Some(i) => {
                t.unrecorded.remove(i);
                self.dirty = true;
                true
            }
            None => false,
        }
    }

    /// The told ids of `server`, oldest first.
    pub fn ids(&self, server: &str) -> impl Iterator<Item = &str> {
        self.servers
            .get(server)
            .into_iter()
            .flat_map(|t| t.order.iter().map(String::as_str))
    }

    /// How many ids are kept, over all servers.
    pub fn len(&self) -> usize {
        self.servers.values().map(|t| t.order.len()).sum()
    }

    /// True when none are.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True (once) when ids were added since the last call: time to persist.
    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    /// The persisted form of these ids.
    pub fn to_file(&self) -> ToldFile {
        ToldFile {
            version: 2,
            servers: self
                .servers
                .iter()
                .map(|(s, t)| (s.clone(), t.order.iter().cloned().collect()))
                .collect(),
            unrecorded: self
                .servers
                .iter()
                .filter(|(_, t)| !t.unrecorded.is_empty())
                .map(|(s, t)| (s.clone(), t.unrecorded.iter().cloned().collect()))
                .collect(),
        }
    }

    /// The ids a persisted form holds, keeping up to `capacity` per server.
    pub fn from_file(file: ToldFile, capacity: usize) -> Self {
        let mut ids = ToldIds::new(capacity);
        for (server, list) in file.servers {
            for id in list {
                ids.mark_told(&server, &id);
            }
        }
        for (server, keys) in file.unrecorded {
            let t = ids.servers.entry(server).or_default();
            t.unrecorded.extend(keys.into_iter().take(capacity.max(1)));
        }
        ids.dirty = false;
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn told_once_per_server_and_id() {
        let mut t = ToldIds::new(8);
        assert!(t.mark_told("arcade", "e-1"));
        assert!(!t.mark_told("arcade", "e-1"));
        assert!(t.mark_told("other", "e-1"), "ids are per server");
        assert!(t.contains("arcade", "e-1") && !t.contains("arcade", "e-2"));
        assert!(t.take_dirty());
        assert!(!t.take_dirty());
    }

    #[test]
    fn the_oldest_are_forgotten_past_capacity() {
        let mut t = ToldIds::new(2);
        for id in ["a", "b", "c"] {
            t.mark_told("s", id);
        }
        assert_eq!(t.ids("s").collect::<Vec<_>>(), ["b", "c"]);
        assert!(!t.contains("s", "a"));
    }

    #[test]
    fn the_file_form_round_trips() {
        let mut t = ToldIds::new(8);
        t.mark_told("arcade", "e-2");
        t.mark_told("arcade", "e-1");
        t.mark_end_told("arcade", "go", Some("g1"));
        let mut back = ToldIds::from_file(t.to_file(), 8);
        assert_eq!(back.ids("arcade").collect::<Vec<_>>(), ["e-2", "e-1"]);
        assert!(back.take_end_told("arcade", "go", Some("g1")));
        // A version-1 file (no unrecorded ends) still reads.
        let v1: ToldFile =
            serde_json::from_str(r#"{"version": 1, "servers": {"arcade": ["e-9"]}}"#).unwrap();
        assert!(ToldIds::from_file(v1, 8).contains("arcade", "e-9"));
    }

    #[test]
    fn an_end_told_without_an_id_matches_its_record_once() {
        let mut t = ToldIds::new(8);
        t.mark_end_told("arcade", "go", Some("g1"));
        assert!(!t.take_end_told("arcade", "go", Some("g2")));
        assert!(!t.take_end_told("other", "go", Some("g1")));
        assert!(t.take_end_told("arcade", "go", Some("g1")));
        assert!(!t.take_end_told("arcade", "go", Some("g1")), "once");
    }
}

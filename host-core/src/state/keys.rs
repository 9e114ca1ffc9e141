//! Keys of the host's per-tool tables, and lookups that do not allocate.
//!
//! The hint state and the presenter key their tables by `(name, instance)` pairs of owned
//! strings: `(tool, instance)` for visibility and definitions, `(toolset, instance)` for
//! what is open. A lookup with `&(tool.to_owned(), instance.map(str::to_owned))` allocates
//! twice per probe, which for a server listing 20,000 tools was a large share of the
//! host's settle time (issue #13 item 9). [`Pair`] lets such a map be probed with borrowed
//! strings: `map.get(pair(tool, instance))`.
//!
//! Hash maps keyed by peer-chosen names use [`FastMap`]: ahash, seeded at random per
//! process (so a server cannot pick names that collide), several times faster than the
//! standard library's SipHash on short names.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// A hash map keyed by names a peer chose: ahash, randomly seeded.
pub type FastMap<K, V> = HashMap<K, V, ahash::RandomState>;
/// A hash set of names a peer chose: ahash, randomly seeded.
pub type FastSet<K> = HashSet<K, ahash::RandomState>;

/// `(name, instance)`: a key of a tool or toolset table, owned.
pub type PairKey = (String, Option<String>);

/// A `(name, instance)` key, owned or borrowed: what an ordered map keyed by [`PairKey`]
/// can be probed with. Two pairs compare as the tuples `(&str, Option<&str>)` do, which
/// is how `(String, Option<String>)` compares, so the map's order is the same either way.
pub trait Pair {
    /// The pair, borrowed.
    fn pair(&self) -> (&str, Option<&str>);
}

impl Pair for PairKey {
    fn pair(&self) -> (&str, Option<&str>) {
        (&self.0, self.1.as_deref())
    }
}

impl Pair for (&str, Option<&str>) {
    fn pair(&self) -> (&str, Option<&str>) {
        *self
    }
}

impl<'a> Borrow<dyn Pair + 'a> for PairKey {
    fn borrow(&self) -> &(dyn Pair + 'a) {
        self
    }
}

impl PartialEq for dyn Pair + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.pair() == other.pair()
    }
}

impl Eq for dyn Pair + '_ {}

impl PartialOrd for dyn Pair + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn Pair + '_ {
    fn cmp(&self, other: &Self) -> Ordering {
        self.pair().cmp(&other.pair())
    }
}

/// A borrowed probe of a [`PairKey`] table: `map.get(probe(&key))`, where `key` is a
/// `(&str, Option<&str>)` built by the caller.
pub fn probe<'k>(key: &'k (&'k str, Option<&'k str>)) -> &'k (dyn Pair + 'k) {
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn owned(name: &str, instance: Option<&str>) -> PairKey {
        (name.to_owned(), instance.map(str::to_owned))
    }

    #[test]
    fn a_borrowed_probe_finds_what_an_owned_key_finds() {
        let names = ["a", "ab", "b", "", "a\u{0}"];
        let instances = [None, Some(""), Some("x"), Some("y")];
        let mut set = BTreeSet::new();
        let mut map = BTreeMap::new();
        for (i, n) in names.iter().enumerate() {
            for inst in instances.iter().take(i % 4 + 1) {
                set.insert(owned(n, *inst));
                map.insert(owned(n, *inst), (n.to_string(), *inst));
            }
        }
        for n in names.iter().chain(["c", "aa"].iter()) {
            for inst in instances.iter().chain([Some("z")].iter()) {
                let key = (*n, *inst);
                assert_eq!(
                    set.contains(probe(&key)),
                    set.contains(&owned(n, *inst)),
                    "{key:?}"
                );
                assert_eq!(map.get(probe(&key)), map.get(&owned(n, *inst)), "{key:?}");
            }
        }
    }

    #[test]
    fn pairs_order_as_owned_keys_do() {
        let keys = [
            owned("a", None),
            owned("a", Some("")),
            owned("a", Some("b")),
            owned("ab", None),
            owned("b", Some("a")),
        ];
        for x in &keys {
            for y in &keys {
                let (px, py): (&dyn Pair, &dyn Pair) = (x, y);
                assert_eq!(px.cmp(py), x.cmp(y), "{x:?} {y:?}");
            }
        }
    }
}

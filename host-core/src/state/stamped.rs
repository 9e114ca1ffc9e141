//! `StampedView`: one server's hint state as a host holds it on MCP 2026-07-28, under this
//! project's stateless profile (`docs/rfc014-stateless.md`, **\[project\]**, issue #40).
//! Sans-IO: no clock, no async.
//!
//! The legacy [`HintState`](super::HintState) applies changes in the order of a
//! connection's revs, with a hold window and a recovery read for a gap. Without
//! connections there is no such order; instead every entry carries the version at which
//! it last changed (its stamp), and states its key's whole value (profile §2, §3.3). So
//! the rules here are few:
//!
//! 1. **Newest stamp wins, per key.** An entry applies only when its stamp is newer than
//!    the one held for its key; with no entry held, newer than the **floor** (the version
//!    of the newest statement applied, or of the newest closed entry forgotten, never
//!    above the mark: every change at or below it is held, so an entry at or below the
//!    floor for a key not held is one the host knows is gone). Applying
//!    is idempotent: a message delivered twice, late or out of order changes nothing it
//!    should not.
//! 2. **A closed instance is a tombstone**, kept apart from its toolset entry (the same
//!    name may open again): a close newer than the tombstone held drops the instance's
//!    tool entries stamped before it, and a tool entry of that instance stamped before the
//!    close is ignored later (profile §2, vector S7) — also when a newer open of the same
//!    name came first.
//! 3. **A statement replaces.** Every key the statement does not state and whose entry is
//!    not newer than the statement is dropped; the floor rises to the statement's version,
//!    so an older entry of a key it left out cannot come back.
//! 4. **The mark** ([`StampedView::since`], sent as `_meta["mcpl/since"]`): the version up
//!    to which the host holds every change. A complete answer — a result, or a listen
//!    stream's first message — carries every change since the mark its request named, so
//!    it raises the mark to its version. A stream's change notification carries one change:
//!    it raises the mark only when it is the next version (profile §3.5); after a lost
//!    one, the next result fills the gap.
//!
//! Bounds: at most [`StampedView::MAX_ENTRIES`] keys held, and at most
//! [`StampedView::max_bytes`] bytes of what they hold (names, titles, reasons, ended ids,
//! definitions as JSON: a server's own definitions can be large, and their number alone
//! would not bound them). An entry for a new key past either, or a held one whose new
//! value would pass the bytes, is not applied and the mark drops to 0, so the next request
//! gets a full statement (which is correct, only larger); closed entries are forgotten oldest first past
//! [`StampedView::MAX_CLOSED`], raising the floor to the newest one forgotten (at most to
//! the mark).

use super::keys::{FastMap, PairKey};
use mcpl_protocol::hints::{ToolDefinition, ToolsetState};
use mcpl_protocol::stateless::VersionedHints;
use mcpl_protocol::{Presence, Suggestion};
use std::collections::BTreeMap;

/// What carried a [`VersionedHints`] (rule 4 of the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StampedCarrier {
    /// A complete answer: a result, or a listen stream's first message after its
    /// acknowledgment. It holds every change since the mark its request named.
    Complete {
        /// The mark the request was sent with.
        since: u64,
    },
    /// A stream's `notifications/mcpl/hints` (or an event's hints): one change.
    Change,
}

/// A tool entry held: its stamp and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolValue {
    /// The version at which it last changed.
    pub v: u64,
    /// Visible now.
    pub visible: bool,
    /// Its own definition there; `None`: the listed one.
    pub definition: Option<ToolDefinition>,
    /// A presence moved from the listed one.
    pub presence: Option<Presence>,
}

/// A toolset or instance entry held: its stamp and its state.
#[derive(Debug, Clone, PartialEq)]
pub struct SetValue {
    /// The version at which it last changed.
    pub v: u64,
    /// Open or closed (a closed instance is a tombstone).
    pub state: ToolsetState,
    /// Its title.
    pub title: Option<String>,
    /// Why it closed.
    pub reason: Option<String>,
    /// Its ended record's id, when closed with one (§4.3).
    pub ended: Option<String>,
}

/// What applying one message did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StampedApplied {
    /// Tool keys whose value changed (or that were dropped).
    pub tools: Vec<PairKey>,
    /// Toolset keys whose value changed (or that were dropped).
    pub toolsets: Vec<PairKey>,
    /// Ended records newly learned: `(toolset, instance, ended id, reason)`. The presenter
    /// tells each once, by its id (§4.3, vector S11).
    pub ended: Vec<(String, Option<String>, String, Option<String>)>,
    /// Suggestions carried: shown once with this message (§5.3).
    pub suggest: Vec<Suggestion>,
    /// Entries ignored as older than what is held (delivered late or twice).
    pub stale: usize,
    /// Entries not applied for the bound; the mark was dropped to 0.
    pub over_bound: usize,
}

/// One server's hint state under the stateless profile (module docs).
#[derive(Debug, Clone)]
pub struct StampedView {
    since: u64,
    floor: u64,
    /// What the held entries weigh ([`tool_weight`], [`set_weight`]).
    bytes: usize,
    /// The most they may weigh.
    max_bytes: usize,
    tools: FastMap<PairKey, ToolValue>,
    toolsets: FastMap<PairKey, SetValue>,
    /// Each closed instance's newest close stamp, kept apart from its toolset entry: the
    /// same name may open again, and what was held of the earlier life still goes.
    tombstones: FastMap<PairKey, u64>,
    /// The tombstones by stamp, oldest first, for forgetting them in order.
    closed: BTreeMap<u64, Vec<PairKey>>,
}

impl StampedView {
    /// Keys held at most (tools and toolsets together).
    pub const MAX_ENTRIES: usize = 65_536;
    /// Closed entries (tombstones) held at most.
    pub const MAX_CLOSED: usize = 4_096;
    /// The bytes held entries may weigh by default (**\[project\]**: 32 MiB, eight
    /// times a largest message of the default transport bound; a real server's hints weigh
    /// kilobytes).
    pub const DEFAULT_MAX_BYTES: usize = 32 << 20;

    /// An empty view: it holds nothing, and its mark is 0 (the next answer is a
    /// statement).
    pub fn new() -> Self {
        StampedView::with_max_bytes(Self::DEFAULT_MAX_BYTES)
    }

    /// An empty view whose held entries may weigh at most `max_bytes`.
    pub fn with_max_bytes(max_bytes: usize) -> Self {
        StampedView {
            since: 0,
            floor: 0,
            bytes: 0,
            max_bytes,
            tools: FastMap::default(),
            toolsets: FastMap::default(),
            tombstones: FastMap::default(),
            closed: BTreeMap::new(),
        }
    }

    /// What the held entries weigh now, in bytes (as the bound counts them).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The most the held entries may weigh, in bytes.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The mark to send as `_meta["mcpl/since"]`.
    pub fn since(&self) -> u64 {
        self.since
    }

    /// A tool's value in an instance (or outside instances), if one is held.
    pub fn tool(&self, name: &str, instance: Option<&str>) -> Option<&ToolValue> {
        self.tools
            .get(&(name.to_owned(), instance.map(str::to_owned)))
    }

    /// A toolset's or instance's state, if held (closed ones are tombstones).
    pub fn toolset(&self, toolset: &str, instance: Option<&str>) -> Option<&SetValue> {
        self.toolsets
            .get(&(toolset.to_owned(), instance.map(str::to_owned)))
    }

    /// Every tool visible now, by key, in order.
    pub fn visible(&self) -> BTreeMap<PairKey, Option<ToolDefinition>> {
        self.tools
            .iter()
            .filter(|(_, t)| t.visible)
            .map(|(k, t)| (k.clone(), t.definition.clone()))
            .collect()
    }

    /// Every toolset and instance open now, with its title, in order.
    pub fn open(&self) -> BTreeMap<PairKey, Option<String>> {
        self.toolsets
            .iter()
            .filter(|(_, s)| s.state == ToolsetState::Open)
            .map(|(k, s)| (k.clone(), s.title.clone()))
            .collect()
    }

    /// Applies one message's hints (module docs). `toolset_of` names the toolset a listed
    /// tool belongs to (the catalog's), so that a closed instance's tombstone reaches its
    /// tools.
    pub fn apply(
        &mut self,
        hints: &VersionedHints,
        carrier: StampedCarrier,
        toolset_of: impl Fn(&str) -> Option<String>,
    ) -> StampedApplied {
        let mut out = StampedApplied {
            suggest: hints.entries.suggest.clone(),
            ..StampedApplied::default()
        };
        // Toolsets first: a tombstone in this message blocks its instance's older tools.
        for e in &hints.entries.toolsets {
            let c = &e.change;
            let key = (c.toolset.clone(), c.instance.clone());
            let mut applied = false;
            if c.state == ToolsetState::Closed && c.instance.is_some() {
                // Rule 2, apart from the toolset entry's own stamp: a close the host had
                // not heard of drops what it held of that life, even when a newer open of
                // the same name came first.
                let newer = match self.tombstones.get(&key) {
                    Some(t) => e.v > *t,
                    None => e.v > self.floor,
                };
                if newer {
                    self.bury(&key, e.v, &toolset_of, &mut out);
                    if let Some(id) = &c.ended {
                        out.ended.push((
                            c.toolset.clone(),
                            c.instance.clone(),
                            id.clone(),
                            c.reason.clone(),
                        ));
                    }
                    applied = true;
                }
            }
            if self.newer(self.toolsets.get(&key).map(|s| s.v), e.v) {
                let value = SetValue {
                    v: e.v,
                    state: c.state,
                    title: c.title.clone(),
                    reason: c.reason.clone(),
                    ended: c.ended.clone(),
                };
                let held = self.toolsets.get(&key).map(|s| set_weight(&key, s));
                let weight = set_weight(&key, &value);
                if !self.room(held, weight) {
                    out.over_bound += 1;
                    continue;
                }
                self.bytes = self.bytes - held.unwrap_or(0) + weight;
                self.toolsets.insert(key.clone(), value);
                applied = true;
            }
            if applied {
                out.toolsets.push(key);
            } else {
                out.stale += 1;
            }
        }
        for e in &hints.entries.tools {
            let h = &e.hint;
            let key = (h.name.clone(), h.instance.clone());
            let tombstone = h.instance.as_ref().and_then(|i| {
                let set = toolset_of(&h.name)?;
                self.tombstones.get(&(set, Some(i.clone()))).copied()
            });
            if !self.newer(self.tools.get(&key).map(|t| t.v), e.v)
                || tombstone.is_some_and(|closed| e.v < closed)
            {
                out.stale += 1;
                continue;
            }
            let value = ToolValue {
                v: e.v,
                visible: h.visible.unwrap_or(false),
                definition: h.definition.clone(),
                presence: h.presence,
            };
            let held = self.tools.get(&key).map(|t| tool_weight(&key, t));
            let weight = tool_weight(&key, &value);
            if !self.room(held, weight) {
                out.over_bound += 1;
                continue;
            }
            self.bytes = self.bytes - held.unwrap_or(0) + weight;
            self.tools.insert(key.clone(), value);
            out.tools.push(key);
        }
        if hints.statement {
            self.replace(hints, &mut out);
        }
        self.forget_closed();
        if out.over_bound > 0 {
            // Something was not kept: only a statement can say it again, and until it
            // comes nothing older is known to be gone.
            self.since = 0;
            self.floor = 0;
        } else {
            match carrier {
                StampedCarrier::Complete { since } if since <= self.since || hints.statement => {
                    self.since = self.since.max(hints.version);
                }
                // A complete answer to a request sent with a mark above this one (a view
                // reset since): it does not cover what lies between.
                StampedCarrier::Complete { .. } => {}
                StampedCarrier::Change if hints.version == self.since + 1 => {
                    self.since = hints.version;
                }
                StampedCarrier::Change => {}
            }
        }
        out
    }

    /// Rule 3: a statement's version is a floor, and every key it did not state whose
    /// entry is not newer is dropped.
    fn replace(&mut self, hints: &VersionedHints, out: &mut StampedApplied) {
        let version = hints.version;
        let stated_tools: std::collections::HashSet<PairKey> = hints
            .entries
            .tools
            .iter()
            .map(|e| (e.hint.name.clone(), e.hint.instance.clone()))
            .collect();
        let stated_sets: std::collections::HashSet<PairKey> = hints
            .entries
            .toolsets
            .iter()
            .map(|e| (e.change.toolset.clone(), e.change.instance.clone()))
            .collect();
        let tools: Vec<PairKey> = self
            .tools
            .iter()
            .filter(|(k, t)| t.v <= version && !stated_tools.contains(*k))
            .map(|(k, _)| k.clone())
            .collect();
        for k in tools {
            self.drop_tool(&k);
            out.tools.push(k);
        }
        let sets: Vec<PairKey> = self
            .toolsets
            .iter()
            // Tombstones stay: they still block older entries, and their ended id was
            // told (the statement names it again in `ended` while the record lives).
            .filter(|(k, s)| {
                s.v <= version && s.state == ToolsetState::Open && !stated_sets.contains(*k)
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in sets {
            if let Some(s) = self.toolsets.remove(&k) {
                self.bytes -= set_weight(&k, &s);
            }
            out.toolsets.push(k);
        }
        self.floor = self.floor.max(version);
    }

    /// True when `v` is newer than what is held for its key (`held`), or than the floor
    /// when nothing is.
    fn newer(&self, held: Option<u64>, v: u64) -> bool {
        match held {
            Some(h) => v > h,
            None => v > self.floor,
        }
    }

    /// Whether an entry weighing `weight` may replace one weighing `held` (`None`: a new
    /// key): the keys and the bytes stay within their bounds.
    fn room(&self, held: Option<usize>, weight: usize) -> bool {
        let keys = held.is_some() || self.tools.len() + self.toolsets.len() < Self::MAX_ENTRIES;
        keys && self.bytes - held.unwrap_or(0) + weight <= self.max_bytes
    }

    /// Drops a tool entry, and its weight.
    fn drop_tool(&mut self, key: &PairKey) {
        if let Some(t) = self.tools.remove(key) {
            self.bytes -= tool_weight(key, &t);
        }
    }

    /// Records a close stamped `v` of the instance `key` and drops the instance's tool
    /// entries stamped before it.
    fn bury(
        &mut self,
        key: &PairKey,
        v: u64,
        toolset_of: &impl Fn(&str) -> Option<String>,
        out: &mut StampedApplied,
    ) {
        if let Some(before) = self.tombstones.insert(key.clone(), v)
            && let Some(keys) = self.closed.get_mut(&before)
        {
            keys.retain(|k| k != key);
            if keys.is_empty() {
                self.closed.remove(&before);
            }
        }
        self.closed.entry(v).or_default().push(key.clone());
        let (toolset, instance) = (&key.0, key.1.as_deref());
        let gone: Vec<PairKey> = self
            .tools
            .iter()
            .filter(|((name, i), t)| {
                i.as_deref() == instance
                    && t.v < v
                    && toolset_of(name).as_deref() == Some(toolset.as_str())
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in gone {
            self.drop_tool(&k);
            out.tools.push(k);
        }
    }

    /// Forgets the oldest tombstones past the bound; the floor rises to the newest one
    /// forgotten, so nothing older can bring its instance back.
    fn forget_closed(&mut self) {
        while self.tombstones.len() > Self::MAX_CLOSED {
            let Some((v, keys)) = self.closed.pop_first() else {
                break;
            };
            for k in keys {
                self.tombstones.remove(&k);
            }
            // Never past the mark: entries between it and the tombstone may still be on
            // their way, and must apply (a late one of the forgotten instance is put
            // right by the next answer, which states the close again or a statement).
            self.floor = self.floor.max(v.min(self.since));
        }
    }
}

#[cfg(test)]
impl StampedView {
    /// What the held entries weigh, counted again from them (the tests check the kept
    /// weight against it).
    pub(crate) fn weigh_again(&self) -> usize {
        let tools: usize = self.tools.iter().map(|(k, t)| tool_weight(k, t)).sum();
        let sets: usize = self.toolsets.iter().map(|(k, s)| set_weight(k, s)).sum();
        tools + sets
    }
}

impl Default for StampedView {
    fn default() -> Self {
        StampedView::new()
    }
}

/// What an entry's key costs beside its value: the strings, and a fixed share for the
/// maps' own bookkeeping.
fn key_weight(key: &PairKey) -> usize {
    const ENTRY: usize = 64;
    ENTRY + key.0.len() + key.1.as_ref().map_or(0, String::len)
}

/// What a tool entry weighs: its key, and its own definition as JSON.
fn tool_weight(key: &PairKey, t: &ToolValue) -> usize {
    let definition = t
        .definition
        .as_ref()
        .and_then(|d| serde_json::to_vec(d).ok())
        .map_or(0, |json| json.len());
    key_weight(key) + definition
}

/// What a toolset entry weighs: its key and its strings.
fn set_weight(key: &PairKey, s: &SetValue) -> usize {
    let text = |o: &Option<String>| o.as_ref().map_or(0, String::len);
    key_weight(key) + text(&s.title) + text(&s.reason) + text(&s.ended)
}

#[cfg(test)]
mod tests;

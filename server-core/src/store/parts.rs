//! A principal's record written in parts (issue #42 item 1): what a step writes of it is
//! what changed, never the whole list of what it keeps.
//!
//! A principal's record holds its ended records (up to `max_ended`, an hour each, with
//! their last views) and the tombstones of its closed instances (up to `max_tombstones`):
//! written whole, a player who has played many games writes tens of KiB on every change.
//! So the record is kept as
//!
//! | part | name **\[project\]** | written |
//! |---|---|---|
//! | the core ([`PrincipalRecord`]: the state without them, and the links) | (the principal's record itself) | when it changed |
//! | each ended record ([`EndedPart`]) | `ended/` and a 20-digit sequence number | once when made (again if its last view is left after), forgotten when it expires or is pushed out |
//! | each tombstone ([`TombstonePart`]) | `closed/` and the instance's key as JSON `[toolset, instance]` | when its instance closes, forgotten when bounded out |
//!
//! **\[project\]** The ended records' names carry a number the [`Ledger`] counts up for
//! the principal, zero-padded, so that a store's key order is the order they were made —
//! the order the log keeps (its oldest goes first) — without reading the ids, whose
//! numbers are not padded and whose epochs are only ordered while clocks are. A
//! tombstone's order does not matter (the oldest goes by its stamp), so its name is its
//! key. A part's value names what it is: a part's name is only where it is kept.
//!
//! The [`Ledger`] remembers what was handed to the store — the core's bytes, each ended
//! record's number and last view (the state's own shared pointer: a view is compared by
//! pointer, not re-encoded), each tombstone's stamp — and [`Ledger::change`] gives what
//! differs from the state now: the core when its bytes differ, the parts made or changed
//! since, and those gone. [`Stored`] is what the store holds, as bytes, for going back
//! to when a change could not be kept; [`read`] reads a record back from its core and
//! parts (a restart, or a roll-back), a record written whole before parts included.

use super::records::{LinkRecord, PrincipalRecord};
use crate::principal::{EndedPart, KeptEnded, PrincipalState, TombstonePart};
use crate::InstanceKey;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// The prefix of an ended record's part's name.
pub const ENDED: &str = "ended/";
/// The prefix of a tombstone's part's name.
pub const CLOSED: &str = "closed/";

/// The name of the ended record numbered `seq`.
fn ended_name(seq: u64) -> String {
    format!("{ENDED}{seq:020}")
}

/// The name of `key`'s tombstone.
fn closed_name(key: &InstanceKey) -> String {
    let json = serde_json::to_string(&(&key.toolset, &key.instance))
        .unwrap_or_else(|_| format!("{key:?}"));
    format!("{CLOSED}{json}")
}

/// What was handed to the store of one principal's record. See the module docs.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    /// The core's bytes; `None`: nothing handed over.
    core: Option<Vec<u8>>,
    /// Each ended record's number and the view written with it, by id.
    ended: HashMap<String, (u64, Option<Arc<str>>)>,
    /// Each tombstone's stamp, by its instance's key.
    tombstones: HashMap<InstanceKey, u64>,
    /// Parts kept that are not read (damaged, or of a later server): forgotten on the next
    /// change.
    strays: Vec<String>,
    /// The next ended record's number.
    next: u64,
}

/// What one step writes of a principal's record ([`Ledger::change`]).
#[derive(Debug, Clone, Default)]
pub struct Change {
    /// The core record, when it changed.
    pub core: Option<Vec<u8>>,
    /// Parts put (`Some`) or forgotten (`None`), by name.
    pub parts: Vec<(String, Option<Vec<u8>>)>,
    /// The ledger's side of it.
    ended: Vec<(String, Option<(u64, Option<Arc<str>>)>)>,
    tombstones: Vec<(InstanceKey, Option<u64>)>,
    next: u64,
}

impl Change {
    /// The bytes it writes.
    pub fn bytes(&self) -> usize {
        let parts: usize = self.parts.iter().filter_map(|(_, b)| b.as_ref()).map(Vec::len).sum();
        self.core.as_ref().map_or(0, Vec::len) + parts
    }
}

/// True when `written` is `now`'s view: the same pointer, or (a view read back, or left
/// again) the same text.
fn same_view(written: Option<&Arc<str>>, now: Option<&Arc<str>>) -> bool {
    match (written, now) {
        (None, None) => true,
        (Some(w), Some(n)) => Arc::ptr_eq(w, n) || **w == **n,
        _ => false,
    }
}

impl Ledger {
    /// True when anything was handed over (a record to forget).
    pub fn is_written(&self) -> bool {
        self.core.is_some()
    }

    /// What differs between what was handed over and `state` with its `links` now;
    /// `None` when nothing does. Encodes only the core and what changed.
    pub fn change(
        &self,
        state: &PrincipalState,
        links: Vec<LinkRecord>,
    ) -> Result<Option<Change>, serde_json::Error> {
        let core = serde_json::to_vec(&PrincipalRecord {
            state: state.core_snapshot(),
            links,
        })?;
        let mut change = Change {
            next: self.next,
            ..Change::default()
        };
        if self.core.as_deref() != Some(&core) {
            change.core = Some(core);
        }
        let mut matched = 0;
        for kept in state.ended_kept() {
            let id = kept.record.id.as_str();
            let seq = match self.ended.get(id) {
                Some((seq, view)) => {
                    matched += 1;
                    if same_view(view.as_ref(), kept.view) {
                        continue;
                    }
                    *seq
                }
                None => {
                    change.next += 1;
                    change.next
                }
            };
            change.put_ended(seq, kept)?;
        }
        if matched < self.ended.len() {
            let now: HashSet<&str> = state.ended_kept().map(|k| k.record.id.as_str()).collect();
            for (id, (seq, _)) in &self.ended {
                if !now.contains(id.as_str()) {
                    change.parts.push((ended_name(*seq), None));
                    change.ended.push((id.clone(), None));
                }
            }
        }
        let stamps = state.stamps();
        let mut matched = 0;
        for (key, stamp) in stamps.tombstone_stamps() {
            if let Some(written) = self.tombstones.get(key) {
                matched += 1;
                if *written == stamp {
                    continue;
                }
            }
            if let Some(part) = stamps.tombstone_part(key) {
                change
                    .parts
                    .push((closed_name(key), Some(serde_json::to_vec(&part)?)));
                change.tombstones.push((key.clone(), Some(stamp)));
            }
        }
        if matched < self.tombstones.len() {
            for key in self.tombstones.keys() {
                if !stamps.has_tombstone(key) {
                    change.parts.push((closed_name(key), None));
                    change.tombstones.push((key.clone(), None));
                }
            }
        }
        for stray in &self.strays {
            change.parts.push((stray.clone(), None));
        }
        if change.core.is_none() && change.parts.is_empty() {
            return Ok(None);
        }
        Ok(Some(change))
    }

    /// `change` was handed over: it is what the store will hold.
    pub fn apply(&mut self, change: &Change) {
        if let Some(core) = &change.core {
            self.core = Some(core.clone());
        }
        for (id, written) in &change.ended {
            match written {
                Some(w) => self.ended.insert(id.clone(), w.clone()),
                None => self.ended.remove(id),
            };
        }
        for (key, written) in &change.tombstones {
            match written {
                Some(stamp) => self.tombstones.insert(key.clone(), *stamp),
                None => self.tombstones.remove(key),
            };
        }
        self.strays.clear();
        self.next = change.next;
    }

    /// Shares the views of `state` where they are the ones written (read back, each view
    /// is a copy of its own): later changes tell them by pointer.
    pub fn adopt(&mut self, state: &PrincipalState) {
        for kept in state.ended_kept() {
            if let Some((_, written)) = self.ended.get_mut(kept.record.id.as_str())
                && let (Some(w), Some(now)) = (written.as_ref(), kept.view)
                && **w == **now
            {
                *written = Some(now.clone());
            }
        }
    }
}

impl Change {
    fn put_ended(&mut self, seq: u64, kept: KeptEnded<'_>) -> Result<(), serde_json::Error> {
        self.parts
            .push((ended_name(seq), Some(serde_json::to_vec(&kept)?)));
        self.ended
            .push((kept.record.id.clone(), Some((seq, kept.view.cloned()))));
        Ok(())
    }
}

/// What the store holds of one principal's record, as bytes: its core and its parts by
/// name. What a change that could not be kept goes back to ([`read`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stored {
    /// The core record.
    pub core: Vec<u8>,
    /// The parts, by name.
    pub parts: BTreeMap<String, Vec<u8>>,
}

impl Stored {
    /// `core` (when written) and `parts` were kept.
    pub fn apply(&mut self, core: Option<Vec<u8>>, parts: Vec<(String, Option<Vec<u8>>)>) {
        if let Some(core) = core {
            self.core = core;
        }
        for (name, bytes) in parts {
            match bytes {
                Some(b) => self.parts.insert(name, b),
                None => self.parts.remove(&name),
            };
        }
    }
}

/// A principal's record read back from its core and parts ([`read`]).
#[derive(Debug)]
pub struct Read {
    /// The record, its parts in its state.
    pub record: PrincipalRecord,
    /// What the store holds of it, for the next change to differ from (call
    /// [`Ledger::adopt`] with the state restored from `record`).
    pub ledger: Ledger,
    /// The parts that could not be read, each with why: left out, and forgotten on the
    /// next change.
    pub unread: Vec<(String, String)>,
}

/// Reads a principal's record back from its `core` and its `parts` (by name, in any
/// order). A record written whole, before parts, holds its ended records and tombstones
/// in itself: it reads as it is, and its next change writes it in parts (nothing of it is
/// in the ledger). Fails only when the core cannot be read.
pub fn read<'a>(
    core: &[u8],
    parts: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<Read, serde_json::Error> {
    let mut record: PrincipalRecord = serde_json::from_slice(core)?;
    let mut ledger = Ledger {
        core: Some(core.to_vec()),
        ..Ledger::default()
    };
    let mut unread = Vec::new();
    let mut ended: BTreeMap<u64, EndedPart> = BTreeMap::new();
    for (name, bytes) in parts {
        let why = if let Some(seq) = name.strip_prefix(ENDED) {
            match (seq.parse::<u64>(), serde_json::from_slice::<EndedPart>(bytes)) {
                (Ok(seq), Ok(part)) => {
                    ended.insert(seq, part);
                    continue;
                }
                (Err(e), _) => format!("its number does not read: {e}"),
                (_, Err(e)) => e.to_string(),
            }
        } else if name.starts_with(CLOSED) {
            match serde_json::from_slice::<TombstonePart>(bytes) {
                Ok(part) => {
                    ledger.tombstones.insert(part.key().clone(), part.stamp());
                    record.state.keep_tombstone(part);
                    continue;
                }
                Err(e) => e.to_string(),
            }
        } else {
            "no part of that name is known".to_owned()
        };
        ledger.strays.push(name.to_owned());
        unread.push((name.to_owned(), why));
    }
    ledger.next = ended.keys().next_back().copied().unwrap_or(0);
    for (seq, part) in ended {
        ledger
            .ended
            .insert(part.id().to_owned(), (seq, part.view().map(Arc::from)));
        record.state.keep_ended(part);
    }
    Ok(Read {
        record,
        ledger,
        unread,
    })
}

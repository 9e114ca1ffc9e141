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
use crate::InstanceKey;
use crate::principal::{EndedPart, KeptEnded, PrincipalState, TombstonePart};
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

/// An ended record's part as written: its number and the view written with it.
type EndedWritten = (u64, Option<Arc<str>>);

/// What was handed to the store of one principal's record. See the module docs.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    /// The core's bytes; `None`: nothing handed over.
    core: Option<Vec<u8>>,
    /// Each ended record's number and the view written with it, by id.
    ended: HashMap<String, EndedWritten>,
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
    ended: Vec<(String, Option<EndedWritten>)>,
    tombstones: Vec<(InstanceKey, Option<u64>)>,
    next: u64,
}

/// What a [`Change`] writes, once handed over: its core (when it changed) and its parts
/// put or forgotten, what [`Stored`] moves on by once it is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delta {
    /// The core record, when it changed.
    pub core: Option<Vec<u8>>,
    /// Parts put (`Some`) or forgotten (`None`), by name.
    pub parts: Vec<(String, Option<Vec<u8>>)>,
}

impl Change {
    /// What it writes, the ledger's side left behind.
    pub fn into_delta(self) -> Delta {
        Delta {
            core: self.core,
            parts: self.parts,
        }
    }

    /// The bytes it writes.
    pub fn bytes(&self) -> usize {
        let parts: usize = self
            .parts
            .iter()
            .filter_map(|(_, b)| b.as_ref())
            .map(Vec::len)
            .sum();
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
        // Strays first: a part put under a stray's name after it is kept.
        for stray in &self.strays {
            change.parts.push((stray.clone(), None));
        }
        if self.core.as_deref() != Some(&core) {
            // Kept until the next change (as the last record kept): no room beyond it
            // (issue #42: up to half again of an idle principal's record).
            let mut core = core;
            core.shrink_to_fit();
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
            // Oldest first, whatever the map's order.
            let mut gone: Vec<(u64, &String)> = self
                .ended
                .iter()
                .filter(|(id, _)| !now.contains(id.as_str()))
                .map(|(id, (seq, _))| (*seq, id))
                .collect();
            gone.sort_unstable();
            for (seq, id) in gone {
                change.parts.push((ended_name(seq), None));
                change.ended.push((id.clone(), None));
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
            let mut gone: Vec<&InstanceKey> = self
                .tombstones
                .keys()
                .filter(|key| !stamps.has_tombstone(key))
                .collect();
            gone.sort_unstable();
            for key in gone {
                change.parts.push((closed_name(key), None));
                change.tombstones.push((key.clone(), None));
            }
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
    /// `delta` was kept.
    pub fn apply(&mut self, delta: Delta) {
        if let Some(core) = delta.core {
            self.core = core;
        }
        for (name, bytes) in delta.parts {
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
            let seq = seq.parse::<u64>();
            if let Ok(seq) = seq {
                // Numbers go on past every part's, read or not.
                ledger.next = ledger.next.max(seq);
            }
            match (seq, serde_json::from_slice::<EndedPart>(bytes)) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Catalog, ToolDecl};
    use crate::principal::{EndedIds, PrincipalConfig};
    use mcpl_protocol::mcp::Tool;
    use mcpl_protocol::toolsets::ToolsetDecl;
    use serde_json::json;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_796_040_000 + secs)
    }

    fn state(config: PrincipalConfig) -> PrincipalState {
        let go = ToolsetDecl {
            instances: true,
            ..Default::default()
        };
        let play =
            ToolDecl::new(Tool::new("play", "p", json!({"type": "object"}))).in_toolset("go");
        let catalog = Catalog::new(vec![play], [("go".to_owned(), go)].into(), None).unwrap();
        PrincipalState::new(Arc::new(catalog), config, EndedIds::new(7), at(0))
    }

    /// Plays game `name` to its end at `secs`, leaving `view`.
    fn play(s: &mut PrincipalState, name: &str, view: Option<&str>, secs: u64) {
        s.open("go", Some(name), None, at(secs)).unwrap();
        s.restamp(&[]);
        let key = InstanceKey::instance("go", name);
        s.end_showing(&key, "over", view.map(Arc::from), at(secs))
            .unwrap();
        s.restamp(&[]);
    }

    /// The names of the parts `change` puts and forgets.
    fn names(change: &Change) -> (Vec<&str>, Vec<&str>) {
        let put = change.parts.iter().filter(|(_, b)| b.is_some());
        let gone = change.parts.iter().filter(|(_, b)| b.is_none());
        (
            put.map(|(n, _)| n.as_str()).collect(),
            gone.map(|(n, _)| n.as_str()).collect(),
        )
    }

    /// Hands `s`'s change over to `ledger` and `stored`; the change.
    fn step(ledger: &mut Ledger, stored: &mut Stored, s: &PrincipalState) -> Option<Change> {
        let change = ledger.change(s, Vec::new()).unwrap()?;
        ledger.apply(&change);
        stored.apply(change.clone().into_delta());
        Some(change)
    }

    #[test]
    fn only_what_changed_is_written_and_what_goes_is_forgotten() {
        let config = PrincipalConfig {
            max_ended: 3,
            ended_ttl: Duration::from_secs(100),
            ..PrincipalConfig::default()
        };
        let mut s = state(config);
        let (mut ledger, mut stored) = (Ledger::default(), Stored::default());
        let first = step(&mut ledger, &mut stored, &s).expect("the first writes the core");
        assert!(first.core.is_some() && first.parts.is_empty());
        assert!(
            step(&mut ledger, &mut stored, &s).is_none(),
            "nothing changed"
        );

        play(&mut s, "g1", Some("board 1"), 1);
        let end = step(&mut ledger, &mut stored, &s).unwrap();
        let closed_g1 = closed_name(&InstanceKey::instance("go", "g1"));
        assert_eq!(
            names(&end),
            (vec![ended_name(1).as_str(), closed_g1.as_str()], vec![])
        );
        play(&mut s, "g2", None, 2);
        let end = step(&mut ledger, &mut stored, &s).unwrap();
        assert_eq!(names(&end).0.len(), 2, "g2's record and tombstone only");
        assert!(step(&mut ledger, &mut stored, &s).is_none());

        // Two more: the oldest record is pushed out (at most 3), its part forgotten.
        play(&mut s, "g3", None, 3);
        play(&mut s, "g4", Some("board 4"), 4);
        let end = step(&mut ledger, &mut stored, &s).unwrap();
        assert_eq!(names(&end).1, [ended_name(1).as_str()]);
        // Expired, the rest go.
        s.expire(at(103));
        let end = step(&mut ledger, &mut stored, &s).unwrap();
        assert_eq!(
            names(&end).1,
            [ended_name(2).as_str(), ended_name(3).as_str()]
        );

        // Read back from what the store holds: the same records, and nothing to write.
        let parts = stored.parts.iter().map(|(n, b)| (n.as_str(), b.as_slice()));
        let read = read(&stored.core, parts).unwrap();
        assert!(read.unread.is_empty());
        let back = PrincipalState::restore(
            s.catalog().clone(),
            PrincipalConfig::default(),
            EndedIds::new(8),
            read.record.state,
            at(103),
        );
        assert_eq!(back.statement(at(103)), s.statement(at(103)));
        let mut ledger = read.ledger;
        ledger.adopt(&back);
        assert!(ledger.change(&back, Vec::new()).unwrap().is_none());
        // The next record read back goes on numbering after the last.
        let mut back = back;
        play(&mut back, "g5", None, 105);
        let end = ledger.change(&back, Vec::new()).unwrap().unwrap();
        assert!(
            names(&end).0.contains(&ended_name(5).as_str()),
            "{:?}",
            names(&end)
        );
    }

    #[test]
    fn a_record_written_whole_is_written_in_parts_and_strays_are_forgotten() {
        let mut s = state(PrincipalConfig::default());
        play(&mut s, "g1", Some("board"), 1);
        play(&mut s, "g2", None, 2);
        let whole = serde_json::to_vec(&PrincipalRecord {
            state: s.snapshot(),
            links: Vec::new(),
        })
        .unwrap();
        let stray: &[u8] = b"not json";
        let read = read(
            &whole,
            [("ended/00000000000000000001", stray), ("what", b"x")],
        )
        .unwrap();
        assert_eq!(read.unread.len(), 2, "{:?}", read.unread);
        assert_eq!(read.record.state.ended_len(), 2);
        let back = PrincipalState::restore(
            s.catalog().clone(),
            PrincipalConfig::default(),
            EndedIds::new(8),
            read.record.state,
            at(3),
        );
        assert_eq!(back.statement(at(3)), s.statement(at(3)));
        let change = read.ledger.change(&back, Vec::new()).unwrap().unwrap();
        let (put, gone) = names(&change);
        assert!(change.core.is_some(), "the core, without them");
        assert_eq!(put.iter().filter(|n| n.starts_with(ENDED)).count(), 2);
        assert_eq!(put.iter().filter(|n| n.starts_with(CLOSED)).count(), 2);
        assert_eq!(gone, ["ended/00000000000000000001", "what"]);
    }
}

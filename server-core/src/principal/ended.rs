//! Ended records (§4.3 **\[project\]**).
//!
//! Every end of an instance — a close the host asked for, a game over, a timeout, a manifest
//! removal, the principal's last connection closing — gets a record
//! `{id, toolset, instance?, reason, at}`, reported on every `toolsets/list` until it
//! expires (default one hour).
//!
//! **Ids are unique for the principal and never reused.** A host persists the ids it told
//! its agent (vector 13), so an id issued twice would hide the second end from the agent.
//! The state that issues them does not live long enough to remember: a principal is
//! forgotten once its last connection closed and nothing of it is kept (no open toolsets,
//! every record expired), and is created afresh when it comes back; a server restarts. So
//! ids come from an [`EndedIds`] source that outlives every principal's state — the
//! server's, shared by all its principals — and read `e<epoch>-<n>`:
//!
//! - `n` counts from 1 for the source and is never reset, so no two records of one
//!   server share an id, whatever principals come and go;
//! - `epoch` (16 hex digits) is chosen when the source is made: the server takes the time
//!   it was built at, in nanoseconds, moved past any epoch taken before in the same process
//!   (`Server`'s builder). A restarted server therefore never reissues an id of an earlier
//!   one, unless its clock shows a time at or before the earlier server's start — a clock
//!   set back, or a [`ManualClock`](crate::ManualClock) that stands still across two
//!   processes. Under an injected clock the ids stay deterministic: the same clock and the
//!   same order of builds give the same ids.
//!
//! A record may keep the instance's last view, left by its logic as it ended (a game's
//! final position and result): the instance's read-only tools answer with it for as long
//! as the record is kept (`call.rs`), so what a finished instance showed stays readable.
//!
//! The log is bounded ([`PrincipalConfig::max_ended`](super::PrincipalConfig)): a peer
//! opening and closing in a loop cannot grow it without limit; past the bound the oldest
//! record is dropped early.

use super::InstanceKey;
use mcpl_protocol::time::rfc3339_seconds;
use mcpl_protocol::toolsets::EndedRecord;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where ended records' ids come from (§4.3: unique for the principal, never reused): one
/// epoch and one counter, shared by every principal state given a clone. See the module
/// docs.
///
/// It also keeps the server's **version floor** (issue #40, `stamps.rs`): the newest
/// version any principal of the server reached, starting from the epoch read as
/// milliseconds times 1024, so that a principal forgotten and created again, or a server
/// restarted without a store, never gives a change a version a host may hold from an
/// earlier life (**\[project\]**: under 2^53, a JSON-safe integer, until the year 2248).
#[derive(Debug, Clone)]
pub struct EndedIds {
    epoch: u64,
    issued: Arc<AtomicU64>,
    versions: Arc<AtomicU64>,
}

impl EndedIds {
    /// A source whose ids start with `epoch` (16 hex digits) and count from 1. Two sources
    /// with the same epoch issue the same ids: give every state of one server a clone of
    /// one source, and each server its own epoch.
    pub fn new(epoch: u64) -> Self {
        let ids = EndedIds {
            epoch,
            issued: Arc::new(AtomicU64::new(0)),
            versions: Arc::new(AtomicU64::new(0)),
        };
        ids.reached(ids.life_floor());
        ids
    }

    /// The newest version any principal of the server reached (type docs): where a new
    /// principal's versions start.
    pub(super) fn version_floor(&self) -> u64 {
        self.versions.load(Ordering::Relaxed)
    }

    /// The floor this source started from, its epoch read as milliseconds times 1024
    /// (type docs), whatever versions were reached since: a version past every one a
    /// server whose clock read earlier could have given at that rate.
    pub(super) fn life_floor(&self) -> u64 {
        (self.epoch / 1_000_000).saturating_mul(1024).min(1 << 52)
    }

    /// A principal reached version `v`.
    pub(super) fn reached(&self, v: u64) {
        self.versions.fetch_max(v, Ordering::Relaxed);
    }

    /// The epoch a source made at `at` takes: the time in nanoseconds since 1970 (0 for a
    /// clock before 1970, which is broken; the largest for one past 2554).
    pub fn epoch_at(at: SystemTime) -> u64 {
        at.duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }

    /// The epoch its ids start with.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// A fresh id.
    pub(super) fn issue(&self) -> String {
        let n = self.issued.fetch_add(1, Ordering::Relaxed) + 1;
        format!("e{:016x}-{n}", self.epoch)
    }
}

/// A record kept, with the time it expires (`None`: the clock cannot add the TTL; it then
/// goes only when the bound pushes it out) and the instance's last view, if its logic left
/// one ([`InstanceContext::end_showing`](crate::InstanceContext::end_showing)).
type Kept = (EndedRecord, Option<SystemTime>, Option<Arc<str>>);

/// A principal's ended records, oldest first.
#[derive(Debug, Clone)]
pub(super) struct EndedLog {
    records: VecDeque<Kept>,
    ids: EndedIds,
    ttl: Duration,
    max: usize,
}

impl EndedLog {
    /// The source of its ids (and of the server's version floor).
    pub(super) fn ids(&self) -> &EndedIds {
        &self.ids
    }

    pub(super) fn new(ids: EndedIds, ttl: Duration, max: usize) -> Self {
        EndedLog {
            records: VecDeque::new(),
            ids,
            ttl,
            max: max.max(1),
        }
    }

    /// Records an end and returns the record.
    pub(super) fn record(
        &mut self,
        key: &InstanceKey,
        reason: &str,
        now: SystemTime,
    ) -> EndedRecord {
        let record = EndedRecord {
            id: self.ids.issue(),
            toolset: key.toolset.clone(),
            instance: key.instance.clone(),
            reason: reason.to_owned(),
            at: rfc3339_seconds(now),
        };
        self.records
            .push_back((record.clone(), now.checked_add(self.ttl), None));
        while self.records.len() > self.max {
            self.records.pop_front();
        }
        record
    }

    /// Keeps a record read back from a snapshot (`snapshot.rs`), as it was.
    pub(super) fn keep(
        &mut self,
        record: EndedRecord,
        expires: Option<SystemTime>,
        view: Option<Arc<str>>,
    ) {
        self.records.push_back((record, expires, view));
        while self.records.len() > self.max {
            self.records.pop_front();
        }
    }

    /// Every record kept with its expiry and last view, oldest first.
    pub(super) fn kept(
        &self,
    ) -> impl Iterator<Item = (&EndedRecord, Option<SystemTime>, Option<&str>)> {
        self.records.iter().map(|(r, e, v)| (r, *e, v.as_deref()))
    }

    /// Every record kept with its expiry and last view (shared, so that who keeps a copy
    /// can tell the same view by its pointer), oldest first.
    pub(super) fn kept_shared(
        &self,
    ) -> impl Iterator<Item = (&EndedRecord, Option<SystemTime>, Option<&Arc<str>>)> {
        self.records.iter().map(|(r, e, v)| (r, *e, v.as_ref()))
    }

    /// Drops the records expired at `now`.
    pub(super) fn expire(&mut self, now: SystemTime) {
        self.records
            .retain(|(_, expires, _)| expires.is_none_or(|e| e > now));
    }

    /// Every record kept, oldest first (some may have expired since the last `expire`).
    pub(super) fn all(&self) -> impl Iterator<Item = &EndedRecord> {
        self.records.iter().map(|(r, _, _)| r)
    }

    /// The records not expired at `now`, oldest first.
    pub(super) fn live(&self, now: SystemTime) -> impl Iterator<Item = &EndedRecord> {
        self.records
            .iter()
            .filter(move |(_, e, _)| e.is_none_or(|e| e > now))
            .map(|(r, _, _)| r)
    }

    /// When the oldest record expires (records are kept in the order they were made, all
    /// with the same TTL, so the oldest expires first); `None` when none is kept.
    pub(super) fn next_expiry(&self) -> Option<SystemTime> {
        self.records.front().and_then(|(_, e, _)| *e)
    }

    /// Leaves `view` with the record `id`, if it is kept.
    pub(super) fn set_view(&mut self, id: &str, view: Arc<str>) {
        if let Some(kept) = self.records.iter_mut().rev().find(|(r, _, _)| r.id == id) {
            kept.2 = Some(view);
        }
    }

    /// The newest kept record of `toolset` (of `instance`, when named) that has a last
    /// view, with it.
    pub(super) fn view_of(
        &self,
        toolset: &str,
        instance: Option<&str>,
    ) -> Option<(&EndedRecord, &str)> {
        self.records
            .iter()
            .rev()
            .filter(|(r, _, _)| {
                r.toolset == toolset && instance.is_none_or(|i| r.instance.as_deref() == Some(i))
            })
            .find_map(|(r, _, v)| v.as_deref().map(|v| (r, v)))
    }

    /// The newest record of this instance, if one is kept.
    pub(super) fn last_for(&self, key: &InstanceKey) -> Option<&EndedRecord> {
        self.all()
            .filter(|r| r.toolset == key.toolset && r.instance == key.instance)
            .last()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_796_040_000 + secs)
    }

    fn ids() -> EndedIds {
        EndedIds::new(EndedIds::epoch_at(at(0)))
    }

    #[test]
    fn ids_count_up_and_expiry_keeps_the_counter() {
        let mut log = EndedLog::new(ids(), Duration::from_secs(60), 100);
        let k = InstanceKey::instance("go", "g1");
        let a = log.record(&k, "won", at(1));
        let b = log.record(&k, "lost", at(2));
        assert_ne!(a.id, b.id);
        assert_eq!(a.at, "2026-11-30T12:00:01Z");
        assert_eq!(log.live(at(61)).count(), 1, "the first expired at 61 s");
        assert_eq!(log.all().count(), 2, "until expire() reclaims it");
        log.expire(at(61));
        assert_eq!(
            log.all().map(|r| r.id.clone()).collect::<Vec<_>>(),
            std::slice::from_ref(&b.id)
        );
        log.expire(at(1000));
        let c = log.record(&k, "again", at(1001));
        assert!(c.id != a.id && c.id != b.id, "never reused after expiry");
        assert_eq!(log.last_for(&k).map(|r| r.id.clone()), Some(c.id));
    }

    #[test]
    fn a_last_view_is_found_while_its_record_is_kept() {
        let mut log = EndedLog::new(ids(), Duration::from_secs(60), 100);
        let g1 = InstanceKey::instance("go", "g1");
        let g2 = InstanceKey::instance("go", "g2");
        let first = log.record(&g1, "Black wins", at(1));
        log.set_view(&first.id, Arc::from("board 1"));
        let second = log.record(&g2, "White wins", at(2));
        assert_eq!(
            log.view_of("go", Some("g1")).map(|(_, v)| v),
            Some("board 1")
        );
        assert_eq!(
            log.view_of("go", None).map(|(r, _)| r.id.clone()),
            Some(first.id.clone()),
            "g2 left no view"
        );
        log.set_view(&second.id, Arc::from("board 2"));
        assert_eq!(log.view_of("go", None).map(|(_, v)| v), Some("board 2"));
        assert!(log.view_of("tictactoe", None).is_none());
        log.expire(at(61));
        assert!(
            log.view_of("go", Some("g1")).is_none(),
            "gone with its record"
        );
        assert_eq!(
            log.view_of("go", Some("g2")).map(|(_, v)| v),
            Some("board 2")
        );
    }

    #[test]
    fn logs_sharing_a_source_never_share_ids() {
        // A principal forgotten and created again at the same time: its new log draws from
        // the same source, so it goes on counting.
        let k = InstanceKey::toolset("lobby");
        let source = ids();
        let first = EndedLog::new(source.clone(), Duration::ZERO, 10).record(&k, "x", at(1));
        let second = EndedLog::new(source, Duration::ZERO, 10).record(&k, "x", at(1));
        assert_eq!(first.id, "e18ecd0dd3a648000-1");
        assert_eq!(second.id, "e18ecd0dd3a648000-2");
    }

    #[test]
    fn epochs_have_sixteen_digits_and_a_broken_clock_still_gives_ids() {
        let k = InstanceKey::toolset("lobby");
        let before_1970 = UNIX_EPOCH - Duration::from_secs(5);
        let zero = EndedIds::new(EndedIds::epoch_at(before_1970));
        assert_eq!(zero.epoch(), 0);
        let record = EndedLog::new(zero, Duration::ZERO, 1).record(&k, "x", before_1970);
        assert_eq!(record.id, "e0000000000000000-1");
        let far = UNIX_EPOCH + Duration::from_secs(u64::MAX / 2);
        assert_eq!(EndedIds::epoch_at(far), u64::MAX);
    }

    #[test]
    fn the_log_is_bounded_oldest_first() {
        let mut log = EndedLog::new(ids(), Duration::from_secs(3600), 2);
        let k = InstanceKey::toolset("lobby");
        let ids: Vec<String> = (0..3).map(|i| log.record(&k, "x", at(i)).id).collect();
        assert_eq!(
            log.all().map(|r| r.id.clone()).collect::<Vec<_>>(),
            ids[1..]
        );
    }
}

//! Ended records (§4.3 **\[project\]**).
//!
//! Every end of an instance — a close the host asked for, a game over, a timeout, a manifest
//! removal, the principal's last connection closing — gets a record
//! `{id, toolset, instance?, reason, at}`, reported on every `toolsets/list` until it
//! expires (default one hour).
//!
//! **Ids are unique for the principal and never reused.** A host persists the ids it told
//! its agent (vector 13), so an id must stay unique even across a re-created state — the
//! principal's last connection closing and a new one arriving later, or a server restart.
//! Each log therefore numbers its records `<epoch>-<n>`: `n` counts from 1 and is never
//! reset, and `epoch` is the creation time of the log in nanoseconds (hex), so two logs of
//! the same principal never share an id unless created in the same nanosecond.
//!
//! The log is bounded ([`PrincipalConfig::max_ended`](super::PrincipalConfig)): a peer
//! opening and closing in a loop cannot grow it without limit; past the bound the oldest
//! record is dropped early.

use super::InstanceKey;
use crate::core::time::rfc3339;
use mcpl_protocol::toolsets::EndedRecord;
use std::collections::VecDeque;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A principal's ended records, oldest first.
#[derive(Debug, Clone)]
pub(super) struct EndedLog {
    /// Each record with the time it expires (`None`: the clock cannot add the TTL; it then
    /// goes only when the bound pushes it out).
    records: VecDeque<(EndedRecord, Option<SystemTime>)>,
    epoch: String,
    next: u64,
    ttl: Duration,
    max: usize,
}

impl EndedLog {
    pub(super) fn new(created: SystemTime, ttl: Duration, max: usize) -> Self {
        // Before 1970 means a broken clock: 0 still yields valid, if less unique, ids.
        let nanos = created
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        EndedLog {
            records: VecDeque::new(),
            epoch: format!("e{nanos:x}"),
            next: 0,
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
        self.next += 1;
        let record = EndedRecord {
            id: format!("{}-{}", self.epoch, self.next),
            toolset: key.toolset.clone(),
            instance: key.instance.clone(),
            reason: reason.to_owned(),
            at: rfc3339(now),
        };
        self.records
            .push_back((record.clone(), now.checked_add(self.ttl)));
        while self.records.len() > self.max {
            self.records.pop_front();
        }
        record
    }

    /// Drops the records expired at `now`.
    pub(super) fn expire(&mut self, now: SystemTime) {
        self.records
            .retain(|(_, expires)| expires.is_none_or(|e| e > now));
    }

    /// Every record kept, oldest first (some may have expired since the last `expire`).
    pub(super) fn all(&self) -> impl Iterator<Item = &EndedRecord> {
        self.records.iter().map(|(r, _)| r)
    }

    /// The records not expired at `now`, oldest first.
    pub(super) fn live(&self, now: SystemTime) -> impl Iterator<Item = &EndedRecord> {
        self.records
            .iter()
            .filter(move |(_, e)| e.is_none_or(|e| e > now))
            .map(|(r, _)| r)
    }

    /// When the oldest record expires (records are kept in the order they were made, all
    /// with the same TTL, so the oldest expires first); `None` when none is kept.
    pub(super) fn next_expiry(&self) -> Option<SystemTime> {
        self.records.front().and_then(|(_, e)| *e)
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

    #[test]
    fn ids_count_up_and_expiry_keeps_the_counter() {
        let mut log = EndedLog::new(at(0), Duration::from_secs(60), 100);
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
    fn logs_created_at_different_times_never_share_ids() {
        let k = InstanceKey::toolset("lobby");
        let first = EndedLog::new(at(0), Duration::from_secs(60), 10).record(&k, "x", at(1));
        let second = EndedLog::new(at(5), Duration::from_secs(60), 10).record(&k, "x", at(6));
        assert_ne!(first.id, second.id);
    }

    #[test]
    fn the_log_is_bounded_oldest_first() {
        let mut log = EndedLog::new(at(0), Duration::from_secs(3600), 2);
        let k = InstanceKey::toolset("lobby");
        let ids: Vec<String> = (0..3).map(|i| log.record(&k, "x", at(i)).id).collect();
        assert_eq!(
            log.all().map(|r| r.id.clone()).collect::<Vec<_>>(),
            ids[1..]
        );
    }
}

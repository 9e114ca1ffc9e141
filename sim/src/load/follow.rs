//! Following each host's status while a run goes: its hint counters summed over its
//! connections (each connection's state starts from zero), its reconnects, and the
//! applied rev checked never to go back within a connection.
//!
//! The status is a `watch`: a follower sees the latest value, not every one, so counters
//! of a connection that ended between two looks may be slightly under-counted.

use crate::hosts::SERVER;
use crate::metrics::Metrics;
use crate::report::HintTotals;
use mcpl_host::host::{HostHandle, HostStatus};
use mcpl_host::state::HintStats;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::watch;
use tokio::time::Instant;

/// When the last mass drop happened, and when the next fault (a restart) ended its timing:
/// set by the run's timeline, read by the followers to time each host's resynchronisation.
/// A host whose connection the drop did not end (a Streamable HTTP session outlives its TCP
/// connections) is not resynchronised by the drop, so what settles after the next fault is
/// not counted.
#[derive(Debug, Default)]
pub struct DropClock(Mutex<Option<(Instant, Option<Instant>)>>);

impl DropClock {
    /// A mass drop starts now.
    pub fn dropping(&self) {
        *self.lock() = Some((Instant::now(), None));
    }

    /// Another fault starts now: nothing settling later is the drop's doing.
    pub fn other_fault(&self) {
        if let Some((_, until)) = self.lock().as_mut() {
            until.get_or_insert_with(Instant::now);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(Instant, Option<Instant>)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn last(&self) -> Option<(Instant, Option<Instant>)> {
        *self.lock()
    }
}

/// Each host's status, followed: stats summed over its connections, reconnects, and the
/// applied rev checked never to go back within a connection.
#[derive(Default)]
struct Follow {
    totals: HintTotals,
    last: Option<(u64, HintStats, u64)>,
    epoch: u64,
    /// The mass drop being timed, and the connection it found.
    drop: Option<(Instant, u64)>,
    /// The last mass drop timed (or found not to have cut this host).
    timed: Option<Instant>,
}

impl Follow {
    fn see(&mut self, s: &HostStatus, name: &str, metrics: &Metrics, drops: &DropClock) {
        let Some(server) = s.server(SERVER) else {
            return;
        };
        let before = self.epoch;
        self.epoch = self.epoch.max(server.epoch);
        if let Some((t0, until)) = drops.last().filter(|(t, _)| self.timed != Some(*t)) {
            // The first look after the drop fixes the connection it may have cut.
            let (_, base) = *self.drop.get_or_insert((t0, before));
            let settled = server.ready
                && server
                    .hints
                    .as_ref()
                    .is_some_and(|h| !h.connecting && !h.recovering);
            if server.epoch > base && settled {
                let now = Instant::now();
                if until.is_none_or(|u| now <= u) {
                    metrics.resynced(now - t0);
                }
                self.timed = Some(t0);
                self.drop = None;
            }
        }
        let Some(h) = &server.hints else { return };
        match self.last {
            Some((epoch, _, rev)) if epoch == server.epoch && h.last_rev < rev => {
                metrics.violation(format!(
                    "{name}: the applied rev went back from {rev} to {} on connection {epoch}",
                    h.last_rev
                ));
            }
            Some((epoch, stats, _)) if epoch != server.epoch => self.totals.add(&stats),
            _ => {}
        }
        self.last = Some((server.epoch, h.stats, h.last_rev));
    }

    fn finish(mut self) -> (HintTotals, u64) {
        if let Some((_, stats, _)) = self.last.take() {
            self.totals.add(&stats);
        }
        (self.totals, self.epoch.saturating_sub(1))
    }
}

/// Follows `host` until `stop`; returns its hint totals and reconnects.
pub async fn follow(
    host: HostHandle,
    name: String,
    metrics: Arc<Metrics>,
    mut stop: watch::Receiver<bool>,
    drops: Arc<DropClock>,
) -> (HintTotals, u64) {
    let mut f = Follow::default();
    tokio::select! {
        _ = host.wait_for(|s| { f.see(s, &name, &metrics, &drops); false }) => {}
        _ = stop.wait_for(|s| *s) => {}
    }
    f.see(&host.status(), &name, &metrics, &drops);
    f.finish()
}

/// Waits (up to 30 s each) until every host first reached the arcade; a host that did not
/// is a violation.
pub async fn first_contact(hosts: &[HostHandle], names: &[String], metrics: &Arc<Metrics>) {
    let contact = hosts.iter().zip(names).map(|(h, name)| async move {
        if tokio::time::timeout(std::time::Duration::from_secs(30), h.first_contact())
            .await
            .is_err()
        {
            metrics.violation(format!(
                "{name}: the host never reached the arcade: {:?}",
                h.status().server(SERVER)
            ));
        }
    });
    futures_util::future::join_all(contact).await;
}

/// Follows every host (see [`follow`]) on this thread's local set until `stop`.
pub fn spawn_followers(
    hosts: &[HostHandle],
    names: &[String],
    metrics: &Arc<Metrics>,
    stop: &watch::Receiver<bool>,
    drops: &Arc<DropClock>,
) -> Vec<tokio::task::JoinHandle<(HintTotals, u64)>> {
    hosts
        .iter()
        .zip(names)
        .map(|(h, name)| {
            tokio::task::spawn_local(follow(
                h.clone(),
                name.clone(),
                metrics.clone(),
                stop.clone(),
                drops.clone(),
            ))
        })
        .collect()
}

/// What every follower counted, once each has stopped: the hint totals and the reconnects
/// (a follower whose task failed counts nothing).
pub async fn followed(
    followers: Vec<tokio::task::JoinHandle<(HintTotals, u64)>>,
) -> (HintTotals, u64) {
    let mut hints = HintTotals::default();
    let mut reconnects = 0;
    for f in followers {
        if let Ok((t, r)) = f.await {
            hints.add(&t);
            reconnects += r;
        }
    }
    (hints, reconnects)
}

//! [`Metrics`]: counters every agent of a run adds to — calls and their latencies, games,
//! refusals — and the violations found while the run goes (the end adds its own).

use serde::Serialize;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Call latency percentiles, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Latency {
    /// The median.
    pub p50_ms: f64,
    /// The 99th percentile.
    pub p99_ms: f64,
    /// The slowest.
    pub max_ms: f64,
}

/// A snapshot of the counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counts {
    /// Calls started.
    pub calls: u64,
    /// Calls answered (with a result or a tool error).
    pub answered: u64,
    /// Answers that were tool errors.
    pub tool_errors: u64,
    /// Calls the host never answered because it stopped.
    pub lost: u64,
    /// Calls not answered within [`crate::agent::io::HUNG_AFTER`].
    pub hung: u64,
    /// Calls refused because the agent acted on a stale view (it believed a tool usable
    /// that no longer was, or a game open that had ended).
    pub stale_refusals: u64,
    /// Resigns in the drain that the host could not take to the server (not connected
    /// just now, an answer lost): tried again, not counted as refused.
    pub drain_unreachable: u64,
    /// Deliberately wrong calls (the clumsy agent).
    pub clumsy_calls: u64,
    /// Games started or joined, counted per agent (a game of two agents counts twice).
    pub games_started: u64,
    /// Games whose end an agent was told, per agent.
    pub games_ended: u64,
    /// Challenges declined.
    pub declined: u64,
    /// Latency of answered calls.
    pub latency: Latency,
    /// Tool errors by kind: the start of each error's text with its digits and quoted
    /// names blanked ([`error_kind`]), at most [`MAX_ERROR_KINDS`] kinds (the rest under
    /// `other`); what a run's report says its tool errors were.
    pub tool_error_kinds: std::collections::BTreeMap<String, u64>,
}

/// How many kinds of tool error [`Counts::tool_error_kinds`] tells apart.
pub const MAX_ERROR_KINDS: usize = 40;

/// A tool error's kind: its first sentence, at most 80 characters, with digits as `#`
/// and what is quoted (`'…'`, `"…"`, `` `…` ``) as `…`, so that errors differing only in
/// a name or a number are one kind.
pub fn error_kind(text: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        if out.chars().count() >= 80 {
            break;
        }
        match quote {
            Some(q) if c == q => {
                quote = None;
                out.push(c);
            }
            Some(_) => {}
            None if matches!(c, '\'' | '"' | '`') => {
                quote = Some(c);
                out.push(c);
                out.push('…');
            }
            None if c.is_ascii_digit() => {
                if !out.ends_with('#') {
                    out.push('#');
                }
            }
            None if c == '\n' => break,
            None => out.push(c),
        }
    }
    out
}

#[derive(Default)]
struct Inner {
    counts: Counts,
    latencies_us: Vec<u64>,
    violations: Vec<String>,
    resync_us: Vec<u64>,
}

/// The run's counters. See the module docs.
#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("counts", &self.counts())
            .finish()
    }
}

impl Metrics {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A host whose connection a mass drop cut was connected and settled again `after`
    /// the drop.
    pub fn resynced(&self, after: Duration) {
        let us = u64::try_from(after.as_micros()).unwrap_or(u64::MAX);
        self.lock().resync_us.push(us);
    }

    /// How long hosts took to resynchronise after a mass drop: percentiles, and how many.
    pub fn resync(&self) -> Option<(Latency, usize)> {
        let mut v = self.lock().resync_us.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        let pick = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
        let l = Latency {
            p50_ms: pick(0.5),
            p99_ms: pick(0.99),
            max_ms: pick(1.0),
        };
        Some((l, v.len()))
    }

    /// A call went out.
    pub fn call_started(&self) {
        self.lock().counts.calls += 1;
    }

    /// A call was answered after `took`.
    pub fn call_finished(&self, took: Duration, error: bool) {
        let mut i = self.lock();
        i.counts.answered += 1;
        i.counts.tool_errors += u64::from(error);
        i.latencies_us
            .push(u64::try_from(took.as_micros()).unwrap_or(u64::MAX));
    }

    /// A call's answer was a tool error saying `text`: counted under its kind.
    pub fn tool_error(&self, text: &str) {
        let kind = error_kind(text);
        let mut i = self.lock();
        let kinds = &mut i.counts.tool_error_kinds;
        let key = if kinds.contains_key(&kind) || kinds.len() < MAX_ERROR_KINDS {
            kind
        } else {
            "other".to_owned()
        };
        *kinds.entry(key).or_default() += 1;
    }

    /// The host stopped before answering.
    pub fn call_lost(&self) {
        self.lock().counts.lost += 1;
    }

    /// A call was not answered in time: a violation (every request gets one answer).
    pub fn call_hung(&self, agent: &str, tool: &str) {
        let mut i = self.lock();
        i.counts.hung += 1;
        i.violations
            .push(format!("{agent}: {tool} got no answer within the limit"));
    }

    /// Adds one to a counter.
    pub fn bump(&self, what: impl FnOnce(&mut Counts)) {
        what(&mut self.lock().counts);
    }

    /// Records a violation.
    pub fn violation(&self, what: impl Into<String>) {
        self.lock().violations.push(what.into());
    }

    /// The violations so far.
    pub fn violations(&self) -> Vec<String> {
        self.lock().violations.clone()
    }

    /// The counters now, with latency percentiles.
    pub fn counts(&self) -> Counts {
        let i = self.lock();
        let mut c = i.counts.clone();
        let mut l = i.latencies_us.clone();
        drop(i);
        l.sort_unstable();
        let at = |q: f64| -> f64 {
            if l.is_empty() {
                return 0.0;
            }
            let idx = ((l.len() as f64 - 1.0) * q).round() as usize;
            l[idx.min(l.len() - 1)] as f64 / 1000.0
        };
        c.latency = Latency {
            p50_ms: at(0.5),
            p99_ms: at(0.99),
            max_ms: at(1.0),
        };
        c
    }
}

/// The peak resident set size of this process, in KiB (`VmHWM` in `/proc/self/status`);
/// `None` where that file is not there.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_answered_calls() {
        let m = Metrics::default();
        for ms in 1..=100 {
            m.call_started();
            m.call_finished(Duration::from_millis(ms), ms % 10 == 0);
        }
        let c = m.counts();
        assert_eq!((c.calls, c.answered, c.tool_errors), (100, 100, 10));
        assert_eq!(c.latency.max_ms, 100.0);
        assert!((50.0..=51.0).contains(&c.latency.p50_ms), "{c:?}");
        assert_eq!(c.latency.p99_ms, 99.0);
        m.call_hung("a", "t");
        assert_eq!(m.violations().len(), 1);
    }

    #[test]
    fn tool_errors_are_counted_by_kind_within_a_bound() {
        assert_eq!(
            error_kind("Game 'g-12' is over: 3 moves.\nmore"),
            "Game '…' is over: # moves."
        );
        let m = Metrics::default();
        m.tool_error("the server 'arcade' did not answer in time (30 s)");
        m.tool_error("the server 'x' did not answer in time (5 s)");
        for n in 0..2 * MAX_ERROR_KINDS {
            m.tool_error(&format!("kind {}", "x".repeat(n)));
        }
        let kinds = m.counts().tool_error_kinds;
        assert_eq!(kinds.len(), MAX_ERROR_KINDS + 1, "{kinds:?}");
        assert_eq!(kinds["the server '…' did not answer in time (# s)"], 2);
        assert_eq!(kinds["other"], MAX_ERROR_KINDS as u64 + 1);
    }

    #[test]
    fn peak_rss_is_read_on_linux() {
        if std::path::Path::new("/proc/self/status").exists() {
            assert!(peak_rss_kib().is_some_and(|k| k > 0));
        }
    }
}

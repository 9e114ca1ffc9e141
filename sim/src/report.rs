//! [`LoadReport`]: what a load run measured and found, as a table for people and JSON for
//! tools.

use crate::metrics::{Counts, Latency};
use mcpl_host::state::HintStats;
use serde::Serialize;
use std::fmt::Write as _;

/// The host-side RFC-014 counters, summed over every agent's connections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HintTotals {
    /// Hint-carrying messages applied in rev order.
    pub applied: u64,
    /// Messages read past `last + 1`.
    pub gaps: u64,
    /// Early revs held (Streamable HTTP).
    pub held: u64,
    /// Held revs applied within the hold window.
    pub resolved_in_window: u64,
    /// Held revs whose window passed.
    pub expired: u64,
    /// Stale revs (at or below `last`).
    pub stale: u64,
    /// Held revs superseded by a statement.
    pub superseded: u64,
    /// Pushes seen twice (their hints ignored).
    pub duplicates: u64,
    /// Recoveries started.
    pub recoveries: u64,
    /// Full statements applied (every connect, every recovery).
    pub statements: u64,
}

impl HintTotals {
    /// Adds one connection's counters.
    pub fn add(&mut self, s: &HintStats) {
        self.applied += s.applied;
        self.gaps += s.gaps;
        self.held += s.held;
        self.resolved_in_window += s.resolved_in_window;
        self.expired += s.expired;
        self.stale += s.stale;
        self.superseded += s.superseded;
        self.duplicates += s.duplicates;
        self.recoveries += s.recoveries;
        self.statements += s.statements;
    }
}

/// The chaos a run suffered.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChaosTotals {
    /// The level.
    pub level: u8,
    /// Connections the proxies accepted.
    pub proxied: u64,
    /// Connections cut at random.
    pub dropped: u64,
    /// Connections cut by mass drops.
    pub mass_dropped: u64,
    /// Mass drops.
    pub mass_drops: u32,
    /// Server restarts.
    pub restarts: u32,
    /// Games running at the restarts, resumed after them, and lost (issue #15: none may
    /// be; the invariants check it).
    pub games_at_restarts: (usize, usize, usize),
    /// WebSocket frames sent twice.
    pub duplicated_frames: u64,
    /// Streamable HTTP deliveries held back (GET stream, POST responses, past the window).
    pub delayed: (u64, u64, u64),
}

/// The agents that played through a surface host ([`crate::load::LoadConfig::surface_agents`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SurfaceTotals {
    /// How many.
    pub agents: usize,
    /// Their games that ended (one each).
    pub ended: usize,
    /// Why those that could not play did not.
    pub failed: Vec<String>,
}

/// What a load run measured and found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LoadReport {
    /// The seed (a failing run is repeated with it).
    pub seed: u64,
    /// Agents.
    pub agents: usize,
    /// `ws`, `http` or `mixed`.
    pub transport: String,
    /// How long it ran, in seconds (play, drain and checks).
    pub elapsed_s: f64,
    /// How long agents played, in seconds.
    pub played_s: f64,
    /// How long the drain took, in seconds.
    pub drained_s: f64,
    /// Calls, errors, games, latency.
    pub counts: Counts,
    /// Calls answered per second of play.
    pub calls_per_sec: f64,
    /// The hosts' hint counters.
    pub hints: HintTotals,
    /// Reconnects, over every agent.
    pub reconnects: u64,
    /// The chaos.
    pub chaos: ChaosTotals,
    /// Peak resident set size, KiB.
    pub peak_rss_kib: Option<u64>,
    /// Time from a mass drop until each host it cut was connected and settled again
    /// (statement read, no recovery under way), and how many hosts.
    pub resync_after_drop: Option<(Latency, usize)>,
    /// Panics seen.
    pub panics: u64,
    /// Invariant violations.
    pub violations: Vec<String>,
    /// The agents through a surface host.
    pub surface: SurfaceTotals,
}

impl LoadReport {
    /// True when nothing was violated.
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }

    /// The table printed at the end.
    pub fn table(&self) -> String {
        let c = &self.counts;
        let h = &self.hints;
        let x = &self.chaos;
        let rows: Vec<(&str, String)> = vec![
            ("seed", self.seed.to_string()),
            ("agents", format!("{} ({})", self.agents, self.transport)),
            (
                "time",
                format!(
                    "{:.1} s played, {:.1} s in all",
                    self.played_s, self.elapsed_s
                ),
            ),
            (
                "games started / ended",
                format!(
                    "{} / {} (per player; {} declined)",
                    c.games_started, c.games_ended, c.declined
                ),
            ),
            (
                "calls",
                format!(
                    "{} ({:.0}/s), {} tool errors, {} clumsy",
                    c.calls, self.calls_per_sec, c.tool_errors, c.clumsy_calls
                ),
            ),
            (
                "call latency",
                format!(
                    "p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
                    c.latency.p50_ms, c.latency.p99_ms, c.latency.max_ms
                ),
            ),
            ("stale-view refusals", c.stale_refusals.to_string()),
            (
                "drain resigns unreachable",
                format!("{} (tried again)", c.drain_unreachable),
            ),
            (
                "unanswered calls",
                format!("{} hung, {} lost", c.hung, c.lost),
            ),
            ("hint messages applied", h.applied.to_string()),
            (
                "early revs held",
                format!(
                    "{} ({} resolved in window, {} expired, {} superseded)",
                    h.held, h.resolved_in_window, h.expired, h.superseded
                ),
            ),
            (
                "gaps / stale / duplicates",
                format!("{} / {} / {}", h.gaps, h.stale, h.duplicates),
            ),
            (
                "recoveries / statements",
                format!("{} / {}", h.recoveries, h.statements),
            ),
            ("reconnects", self.reconnects.to_string()),
            (
                "resync after a mass drop",
                match &self.resync_after_drop {
                    Some((l, n)) => format!(
                        "{n} hosts: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
                        l.p50_ms, l.p99_ms, l.max_ms
                    ),
                    None => "no mass drop cut a connection".into(),
                },
            ),
            ("games resumed after a restart", {
                let (running, resumed, lost) = x.games_at_restarts;
                format!(
                    "{resumed} of the {running} running at {} restarts, {lost} lost",
                    x.restarts
                )
            }),
            (
                "chaos",
                format!(
                    "level {}: {} proxied, {} cut, {} in {} mass drops, {} restarts, {} frames doubled, delayed {}/{}/{} (GET/POST/late)",
                    x.level,
                    x.proxied,
                    x.dropped,
                    x.mass_dropped,
                    x.mass_drops,
                    x.restarts,
                    x.duplicated_frames,
                    x.delayed.0,
                    x.delayed.1,
                    x.delayed.2
                ),
            ),
            (
                "peak RSS",
                self.peak_rss_kib
                    .map(|k| {
                        // Everything of one agent in this process: its host, its agent
                        // and its server session(s) (`sim perf` measures a session alone).
                        let per = k as f64 / self.agents.max(1) as f64;
                        format!(
                            "{:.1} MiB ({per:.0} KiB per agent, host and session included)",
                            k as f64 / 1024.0
                        )
                    })
                    .unwrap_or_else(|| "unknown".into()),
            ),
            (
                "through a surface host",
                if self.surface.agents == 0 {
                    "none".to_owned()
                } else {
                    format!(
                        "{} agents as plain MCP clients of one surface host: {} tic-tac-toe games ended{}",
                        self.surface.agents,
                        self.surface.ended,
                        self.surface
                            .failed
                            .first()
                            .map(|f| format!(
                                ", {} could not play ({f})",
                                self.surface.failed.len()
                            ))
                            .unwrap_or_default()
                    )
                },
            ),
            ("panics", self.panics.to_string()),
            ("violations", self.violations.len().to_string()),
        ];
        let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        let mut s = String::new();
        for (k, v) in rows {
            let _ = writeln!(s, "{k:<width$}  {v}");
        }
        for v in self.violations.iter().take(20) {
            let _ = writeln!(s, "  ✗ {v}");
        }
        if self.violations.len() > 20 {
            let _ = writeln!(s, "  … and {} more", self.violations.len() - 20);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_every_measure_and_lists_violations() {
        let r = LoadReport {
            seed: 7,
            violations: vec!["a: x".into()],
            ..Default::default()
        };
        let t = r.table();
        for k in [
            "seed",
            "call latency",
            "early revs held",
            "reconnects",
            "resync after a mass drop",
            "peak RSS",
            "violations",
        ] {
            assert!(t.contains(k), "{k} missing from\n{t}");
        }
        assert!(t.contains("✗ a: x"));
        assert!(!r.ok());
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["seed"], 7);
    }
}

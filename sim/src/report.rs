//! [`LoadReport`]: what a load run measured and found, as a table for people and JSON for
//! tools.

use crate::load::Play;
use crate::metrics::{Counts, Latency, Metrics, peak_rss_kib};
use mcpl_host::state::HintStats;
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Duration;

/// The host-side RFC-014 counters, summed over every agent's connections: the host's own
/// per-connection counters ([`HintStats`]), added with [`HintStats::add`].
pub type HintTotals = HintStats;

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
    /// Accepts the proxies failed (out of file descriptors, say) and went on past.
    pub accept_failures: u64,
    /// Streamable HTTP deliveries held back (GET stream, POST responses, past the window).
    pub delayed: (u64, u64, u64),
    /// With `--nodes` (issue #41): what the chaos did to the nodes; `restarts` are their
    /// deaths.
    pub nodes: Option<NodeTotals>,
}

/// What a run with `--nodes` did to them ([`crate::nodes`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NodeTotals {
    /// The nodes.
    pub nodes: usize,
    /// Nodes killed (SIGKILL) and started again.
    pub deaths: u32,
    /// Of those, how many owned the arcade (`principal`: held players' leases).
    pub owner_deaths: u32,
    /// Deaths after which the arcade was served again (a takeover, after an owner's;
    /// `principal`: the node started again, and each of its players leased again).
    pub survived: u32,
    /// The longest time from an owner's death to a node owning the arcade again, in
    /// milliseconds (`principal`: to each of its players leased again).
    pub longest_takeover_ms: u64,
    /// NATS killed and started again.
    pub nats_restarts: u32,
    /// PostgreSQL stopped at once (`-m immediate`) and started again.
    pub pg_restarts: u32,
    /// Nodes that ended by themselves (a lost lease) and were started again.
    pub revived: u32,
    /// How the balancer sent WebSocket connections and streams: `round-robin` or `owner`
    /// (`sim --balance`, [`crate::nodes::Balance`]).
    pub balance: String,
    /// Tunnels the nodes opened (a standby carrying a client's WebSocket connection or
    /// stream to the owner), as the balancer's health checks counted them: a floor.
    pub tunnels_opened: u64,
    /// Tunnels the nodes accepted (the owner's side of them): a floor.
    pub tunnels_accepted: u64,
    /// What one node owned: `arcade` or `principal` (`sim --ownership`,
    /// [`crate::nodes::Ownership`]).
    pub ownership: String,
    /// With `principal`: the players whose leases the dead nodes held at their deaths,
    /// added up over the deaths (each served again after: a survived death).
    pub players_moved: u32,
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

/// The agents on MCP 2026-07-28 ([`crate::load::LoadConfig::modern`], issue #39).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModernTotals {
    /// How many.
    pub agents: usize,
    /// Their requests the server answered.
    pub answered: u64,
    /// Connections the arcade's Streamable HTTP listener handed it for them: one a
    /// request on the modern era (the listen streams and probes among them).
    pub connections: u64,
    /// Their games that ended.
    pub ended: usize,
    /// Challenges from legacy agents they declined.
    pub declined: u64,
}

/// The agents on MCP 2026-07-28 with hints, served RFC-014's stateless profile
/// ([`crate::load::LoadConfig::modern_hints`], issue #40): what the profile sent them,
/// counted as it reached their hosts ([`crate::load::hinted::ProfileCounts`]), and the
/// chaos of their era.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HintedTotals {
    /// How many.
    pub agents: usize,
    /// Connections the arcade's Streamable HTTP listener handed it for them (one a
    /// request: probes, calls, reads, listen streams).
    pub connections: u64,
    /// Results whose hints were a full statement.
    pub statements: u64,
    /// Results whose hints were a delta since the host's mark.
    pub deltas: u64,
    /// `notifications/mcpl/hints` read from their listen streams.
    pub stream_changes: u64,
    /// Listen streams acknowledged with `mcpl/hints`: each host's first, then reopenings.
    pub listens: u64,
    /// Answers their proxy cut as they started (the request was served).
    pub answers_lost: u64,
    /// Requests their transport answered itself, having got no answer (a lost answer, a
    /// connection refused at a restart).
    pub unanswered: u64,
    /// Calls the agents re-issued after their answer was lost.
    pub reissued: u64,
    /// Ends the agents were told.
    pub ended: u64,
    /// Their hosts' hint counters (the profile's results handed on in order: no gap, no
    /// hold, no recovery is expected).
    pub hints: HintTotals,
    /// Their hosts' reconnects.
    pub reconnects: u64,
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
    /// The agents on MCP 2026-07-28.
    pub modern: ModernTotals,
    /// The agents on MCP 2026-07-28 with hints.
    pub hinted: HintedTotals,
}

/// What each word of the report means, one line per row (issue #43: "clumsy" and
/// "stale-view refusals" were explained nowhere). Printed under the report by
/// `sim --explain`, and in the README's sim section.
pub const GLOSSARY: &[(&str, &str)] = &[
    (
        "seed",
        "seeds every choice of the run; the same seed repeats a run (exactly with --deterministic)",
    ),
    (
        "agents",
        "simulated players, each with its own MCPL host, and the transport(s) they reach the arcade by (those on MCP 2026-07-28 among them)",
    ),
    (
        "time",
        "seconds the agents played, and in all (the drain, where agents resign what is open, and the checks)",
    ),
    (
        "games started / ended",
        "games started or joined, and games whose end an agent was told, counted per player (a game of two counts twice); declined: challenges turned down",
    ),
    (
        "calls",
        "tool calls the agents made, per second of play; tool errors: answers that were errors; clumsy: calls made wrong on purpose (a bad move, a tool of another game) by the clumsy agents, which must be refused and must not break anything",
    ),
    (
        "call latency",
        "time from a call to its answer: median (p50), 99th percentile (p99), slowest (max)",
    ),
    (
        "stale-view refusals",
        "calls refused because the agent acted on a view that was out of date: a tool it believed usable that no longer was, a game it believed open that had ended",
    ),
    (
        "drain resigns unreachable",
        "resigns at the end that the host could not take to the server just then (not connected); tried again, not counted as refused",
    ),
    (
        "unanswered calls",
        "hung: calls not answered in time; lost: calls never answered because the host stopped",
    ),
    (
        "hint messages applied",
        "messages carrying an RFC-014 hint (what is open and usable, with its rev) that the hosts applied in rev order",
    ),
    (
        "early revs held",
        "hints that came ahead of their turn (Streamable HTTP does not keep order) and were held: resolved in window (their turn came within the hold window), expired (it did not; the host read the state again), superseded (a full statement replaced them)",
    ),
    (
        "gaps / stale / duplicates",
        "gaps: a rev past the next one expected; stale: a rev at or below the last applied (ignored); duplicates: a push seen twice (its hint ignored)",
    ),
    (
        "recoveries / statements",
        "recoveries: times a host read the server's state again because something was missing (a gap, an expired hold, a lost message); statements: full states applied (every connect and every recovery)",
    ),
    (
        "failed reads",
        "reads of the server's state (a connection's first, or a recovery's) that failed (an error, no answer in time, a stale statement) and were made again after a backoff; not recoveries",
    ),
    (
        "reconnects",
        "connections the hosts made again after one was cut",
    ),
    (
        "resync after a mass drop",
        "time from a mass drop (many connections cut at once) until each host it cut was connected and settled again",
    ),
    (
        "games resumed after a restart",
        "games running when the arcade was restarted that went on after it, and those lost (none may be)",
    ),
    (
        "node deaths survived",
        "with --nodes: arcade nodes killed (SIGKILL) mid-run and started again, and how many of them owned the arcade, after which the arcade was served again (another node took the lease over and read every game back from PostgreSQL); the longest takeover (with --ownership principal: deaths of nodes serving players, after which the node was started again and each of its players was served again, by the node their next request reached, and the players so moved; the longest such wait); NATS restarts; PostgreSQL stopped at once and restarted; how the balancer sent WebSocket connections and streams (--balance round-robin: to any node, a standby tunneling them to the owner over NATS; owner: to the owner) and the tunnels the nodes opened and accepted",
    ),
    (
        "chaos",
        "what was done to the run: connections through the chaos proxies, cut one by one and in mass drops, arcade restarts, WebSocket frames sent twice, Streamable HTTP deliveries delayed (GET stream / POST answers / past the hold window)",
    ),
    (
        "peak RSS",
        "the most memory the whole process held at once (hosts, agents and the arcade; with --nodes the arcade runs in processes of its own, not counted)",
    ),
    (
        "through a surface host",
        "agents that reached the arcade as plain MCP clients of one surface host (--surface-agents), and their games",
    ),
    (
        "on MCP 2026-07-28",
        "agents (--modern) whose hosts speak MCP 2026-07-28 over Streamable HTTP (no session, every request with its _meta), shown the arcade as a plain MCP host is; the requests the arcade answered them, over how many connections (one a request), their games and the challenges they declined",
    ),
    (
        "on 2026-07-28 with hints",
        "agents (--modern-hints) whose hosts speak MCP 2026-07-28 with RFC-014's stateless profile (docs/rfc014-stateless.md): their requests (connections), results carrying a full statement or a delta since the host's mark, hint changes read from listen streams, streams acknowledged (each host's first, then reopenings after a cut), answers lost on their way (cut as they started, the request served), calls re-issued after one, ends told, the hosts' reconnects, and their reads of the state again (recoveries: only a connection's first toolsets/list read again when its answer was lost; stamps order the changes, so no gap and no hold)",
    ),
    ("panics", "panics seen in any thread (any is a failure)"),
    (
        "violations",
        "invariants found broken (each listed with a ✗); any makes the run fail and names its seed",
    ),
];

/// [`GLOSSARY`] as printed: a heading, then `row  meaning` lines.
pub fn glossary() -> String {
    let width = GLOSSARY.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut s = String::from("What the rows mean:\n");
    for (k, v) in GLOSSARY {
        let _ = writeln!(s, "  {k:<width$}  {v}");
    }
    s
}

impl LoadReport {
    /// What both runs report alike: what was played (`play`, `agents`), how long the run,
    /// the play and the drain took, the rate of calls answered by the end of play, and what
    /// `metrics` counted, measured and found; the hints, reconnects, chaos, panics and the
    /// other kinds of agent are the run's own to fill in.
    pub(crate) fn head(
        play: &Play,
        agents: usize,
        elapsed: Duration,
        played: Duration,
        drained: Duration,
        answered_by_end_of_play: u64,
        metrics: &Metrics,
    ) -> LoadReport {
        LoadReport {
            seed: play.seed,
            agents,
            transport: play.transport.name().to_owned(),
            elapsed_s: elapsed.as_secs_f64(),
            played_s: played.as_secs_f64(),
            drained_s: drained.as_secs_f64(),
            calls_per_sec: answered_by_end_of_play as f64 / played.as_secs_f64().max(0.001),
            counts: metrics.counts(),
            peak_rss_kib: peak_rss_kib(),
            resync_after_drop: metrics.resync(),
            violations: metrics.violations(),
            ..LoadReport::default()
        }
    }

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
            (
                "agents",
                match (self.modern.agents, self.hinted.agents) {
                    (0, 0) => format!("{} ({})", self.agents, self.transport),
                    (m, 0) => format!(
                        "{} ({} legacy: {}; {m} on MCP 2026-07-28: http)",
                        self.agents,
                        self.agents - m.min(self.agents),
                        self.transport
                    ),
                    (m, k) => format!(
                        "{} ({} legacy: {}; {m} on MCP 2026-07-28: http; {k} on 2026-07-28 with hints: http)",
                        self.agents,
                        self.agents - (m + k).min(self.agents),
                        self.transport
                    ),
                },
            ),
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
            ("failed reads", h.reads_failed.to_string()),
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
                "node deaths survived",
                match &x.nodes {
                    None => "none (the arcade runs in process)".to_owned(),
                    Some(n) => format!(
                        "{} of {} ({}) on {} nodes; NATS restarted {} times, PostgreSQL {} times; {} nodes ended by themselves and were started again; balanced {}, {} tunnels opened, {} accepted",
                        n.survived,
                        n.deaths,
                        if n.ownership == "principal" {
                            format!(
                                "ownership per principal: {} serving players, {} players served again; longest {} ms",
                                n.owner_deaths, n.players_moved, n.longest_takeover_ms
                            )
                        } else {
                            format!(
                                "{} owners; longest takeover {} ms",
                                n.owner_deaths, n.longest_takeover_ms
                            )
                        },
                        n.nodes,
                        n.nats_restarts,
                        n.pg_restarts,
                        n.revived,
                        n.balance,
                        n.tunnels_opened,
                        n.tunnels_accepted
                    ),
                },
            ),
            (
                "chaos",
                format!(
                    "level {}: {} proxied, {} cut, {} in {} mass drops, {} restarts, {} frames doubled, delayed {}/{}/{} (GET/POST/late){}",
                    x.level,
                    x.proxied,
                    x.dropped,
                    x.mass_dropped,
                    x.mass_drops,
                    x.restarts,
                    x.duplicated_frames,
                    x.delayed.0,
                    x.delayed.1,
                    x.delayed.2,
                    match x.accept_failures {
                        0 => String::new(),
                        n => format!(", {n} accepts failed"),
                    }
                ),
            ),
            (
                "peak RSS",
                self.peak_rss_kib
                    .map(|k| {
                        // Everything of one agent in this process: its host, its agent
                        // and its server session(s) (`sim-perf` measures a session alone).
                        let per = k as f64 / self.agents.max(1) as f64;
                        if x.nodes.is_some() {
                            // The sessions are the nodes', in processes of their own.
                            return format!(
                                "{:.1} MiB ({per:.0} KiB per agent, its host; the nodes are processes of their own)",
                                k as f64 / 1024.0
                            );
                        }
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
            (
                "on MCP 2026-07-28",
                if self.modern.agents == 0 {
                    "none".to_owned()
                } else {
                    let m = &self.modern;
                    format!(
                        "{} agents: {} requests answered over {} connections, {} tic-tac-toe games ended, {} challenges declined",
                        m.agents, m.answered, m.connections, m.ended, m.declined
                    )
                },
            ),
            (
                "on 2026-07-28 with hints",
                if self.hinted.agents == 0 {
                    "none".to_owned()
                } else {
                    let k = &self.hinted;
                    format!(
                        "{} agents: {} requests, {} statements / {} deltas in results, {} stream changes, {} streams ({} reopened), {} answers lost, {} re-issued, {} ends told, {} reconnects, {} recoveries ({} gaps, {} held)",
                        k.agents,
                        k.connections,
                        k.statements,
                        k.deltas,
                        k.stream_changes,
                        k.listens,
                        k.listens.saturating_sub(k.agents as u64),
                        k.answers_lost,
                        k.reissued,
                        k.ended,
                        k.reconnects,
                        k.hints.recoveries,
                        k.hints.gaps,
                        k.hints.held
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
        // Every row has its glossary line, and the glossary no row that is gone.
        let rows: Vec<&str> = t
            .lines()
            .filter(|l| !l.starts_with("  "))
            .map(|l| l.split("  ").next().unwrap_or_default().trim_end())
            .collect();
        for row in &rows {
            assert!(
                GLOSSARY.iter().any(|(k, _)| k == row),
                "{row:?} has no glossary line"
            );
        }
        for (k, _) in GLOSSARY {
            assert!(rows.contains(k), "glossary line {k:?} names no row of\n{t}");
        }
        assert!(!r.ok());
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["seed"], 7);
    }
}

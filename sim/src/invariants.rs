//! The checks at the end of a load run, per agent, against the server's [`Truth`] for its
//! principal (read as a fresh connection would, `truth.rs`):
//!
//! 1. **The view equals the truth** once quiet: what the host says is open (its status)
//!    and usable (`toolsets--look`, as the agent reads it) is what the server states.
//! 2. **Every ended record is told exactly once** (§4.3, vector 13): for each record the
//!    agent was told that instance's end with a reason once; no end was told twice, nor
//!    one the server has no record of.
//! 3. **Every game ends**: after the drain nothing is open but the default-open lobby.
//! 4. **A restart loses no game** (issue #15): every game running when the arcade was
//!    restarted runs again after it, read back from its durable store ([`check_resumed`]).
//! 5. **Modern agents** (issue #39, [`check_modern`]): a host on MCP 2026-07-28 is served
//!    as a plain MCP host, with no hints and no pushes, so rules 1 and 2 become what such a
//!    host can know: nothing is open for the principal after the drain but the lobby, and
//!    every ended record is the end of a game whose end the agent read in a result (a
//!    move's, a resign's, a board's), and no end was read without a record.
//!    And it spoke modern: the arcade's Streamable HTTP listener handed it at least one
//!    connection per request the server answered (MCP 2026-07-28 serves each request on a
//!    connection of its own; a legacy session is one connection for all of them).
//! 6. **Modern agents with hints** (issue #40): served RFC-014's stateless profile, they
//!    see what a legacy agent sees, so rules 1–4 are theirs as they are ([`check_all`]
//!    over their hosts), and they were served the profile
//!    ([`crate::load::hinted::check_profile`]).
//!
//! [`check_all`] runs them at the end of a run; [`check_views`] runs rule 1 alone at a
//! quiet point in the middle of one (the deterministic mode pauses its agents for it),
//! where games are still open and a stale tool state has not been washed out by the drain.
//!
//! The view is read while the run is quiet; a view that differs is read again as the
//! host's status changes (a push still on its way), up to a limit.

use crate::agent::perceive::read_look;
use crate::agent::{AgentReport, GameRecord};
use crate::hosts::SERVER;
use crate::metrics::Metrics;
use crate::truth::{self, Key, Source, Truth};
use mcpl_games::arcade::LOBBY;
use mcpl_host::host::HostHandle;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// How long the view may take to settle to the truth.
pub const SETTLE: Duration = Duration::from_secs(5);

/// What the host shows one agent: open toolsets and instances, and usable tools.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    /// Open, as (toolset, instance).
    pub open: BTreeSet<Key>,
    /// Usable, as (tool, instance).
    pub usable: BTreeSet<Key>,
    /// Where the host stood and the start of what `toolsets--look` said, for a violation's
    /// report.
    pub note: String,
}

/// Reads the agent's view: the host's status for what is open, `toolsets--look` for what
/// is usable (the one place the host lists it).
pub async fn view(host: &HostHandle) -> Option<View> {
    let status = host.status();
    let server = status.server(SERVER)?;
    if !server.settled {
        return None;
    }
    let look = host.call("toolsets--look", json!({})).await.ok()?;
    let text = look.joined_text();
    let looked = read_look(&text);
    let head: String = text.chars().take(NOTE_CHARS).collect();
    // Every counter of the hint state: a view that differs is chased from these (an end
    // never read leaves `applied` short; one read and dropped shows as stale, duplicate
    // or superseded).
    let note = format!(
        "epoch {}, {} tools listed, rev {:?}, {} recoveries, {:?}; look said {head:?}",
        server.epoch,
        server.listed_tools,
        server.hints.as_ref().map(|h| h.last_rev),
        server.hints.as_ref().map_or(0, |h| h.stats.recoveries),
        server.hints.as_ref().map(|h| h.stats)
    );
    Some(View {
        note,
        open: server.open.iter().cloned().collect(),
        usable: looked
            .usable
            .into_iter()
            .map(|(tool, m)| (tool, m.instance))
            .collect(),
    })
}

/// How much of the look a violation quotes.
const NOTE_CHARS: usize = 600;

/// How long each host may take to settle after the drain.
pub const SETTLE_HOST: Duration = Duration::from_secs(20);

/// The end of a run (load or deterministic): waits for every host to settle (connected,
/// nothing held, no recovery under way), then [`check`]s each agent (`hosts`, `names` and
/// `reports` in the same order); every violation goes to `metrics`.
pub async fn check_all(
    arcade: &Source,
    hosts: &[HostHandle],
    names: &[String],
    reports: &[AgentReport],
    metrics: &Metrics,
) {
    wait_settled(hosts, names, metrics, "after the drain").await;
    let checks = hosts.iter().zip(reports).map(|(h, r)| check(arcade, h, r));
    for v in at_most(CHECKS_AT_ONCE, checks).await.into_iter().flatten() {
        metrics.violation(v);
    }
}

/// How many agents are checked at once. Each check reads the truth on a fresh session of
/// its own: all 3,000 of a large run at once held 3,000 more sessions, which made the end
/// of the run the process's peak (issue #42: the run's memory per agent is its peak
/// resident set, and what is measured is the hosts and their sessions, not the checker).
/// Each check keeps its own [`SETTLE`] from its start.
pub const CHECKS_AT_ONCE: usize = 128;

/// Runs `futures` with at most `n` under way at once; their outputs in their order.
pub async fn at_most<F: Future>(n: usize, futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    use futures_util::StreamExt as _;
    futures_util::stream::iter(futures)
        .buffered(n.max(1))
        .collect()
        .await
}

/// Rule 4: every game running at a restart was resumed after it, and none was lost.
pub fn check_resumed(resumed: &crate::arcade::Resumed, metrics: &Metrics) {
    if resumed.lost > 0 || resumed.resumed != resumed.running {
        metrics.violation(format!(
            "a restart lost games: {} were running, {} resumed, {} lost",
            resumed.running, resumed.resumed, resumed.lost
        ));
    }
}

/// A quiet point in the middle of a run (every agent idle, games open): waits for every
/// host to settle, then checks rule 1 alone for each; every violation goes to `metrics`,
/// saying `when`. The view is read with `toolsets--look`, whose result the agent will find
/// in its transcript.
pub async fn check_views(
    arcade: &Source,
    hosts: &[HostHandle],
    names: &[String],
    metrics: &Metrics,
    when: &str,
) {
    wait_settled(hosts, names, metrics, when).await;
    let checks = hosts
        .iter()
        .zip(names)
        .map(|(h, name)| check_view(arcade, h, name));
    for v in at_most(CHECKS_AT_ONCE, checks).await.into_iter().flatten() {
        metrics.violation(format!("{v} ({when})"));
    }
}

/// Waits (up to [`SETTLE_HOST`]) for each host to be settled with nothing held and no
/// recovery under way; one that is not is a violation.
async fn wait_settled(hosts: &[HostHandle], names: &[String], metrics: &Metrics, when: &str) {
    let settling = hosts.iter().zip(names).map(|(h, name)| async move {
        let settled = h.wait_for(|s| {
            s.server(SERVER).is_some_and(|x| {
                x.settled
                    && x.hints
                        .as_ref()
                        .is_some_and(|h| !h.recovering && h.held.is_empty())
            })
        });
        if tokio::time::timeout(SETTLE_HOST, settled).await.is_err() {
            metrics.violation(format!(
                "{name}: the host did not settle {when}: {:?}",
                h.status().server(SERVER)
            ));
        }
    });
    futures_util::future::join_all(settling).await;
}

/// Rule 1 for one agent: the view equals the truth once settled; the violation if not.
pub async fn check_view(arcade: &Source, host: &HostHandle, name: &str) -> Option<String> {
    match settle(arcade, host, name).await {
        Err(e) => Some(format!("{name}: {e}")),
        Ok((truth, seen)) => compare(name, &truth, seen.as_ref()),
    }
}

/// Rule 1: the violation when the view is not the truth.
fn compare(name: &str, truth: &Truth, seen: Option<&View>) -> Option<String> {
    match seen {
        Some(v) if v.open == truth.open && v.usable == truth.visible => None,
        Some(v) => Some(format!(
            "{name}: the host's view differs from the server's: open {:?} vs {:?}; usable {:?} vs {:?} ({})",
            v.open, truth.open, v.usable, truth.visible, v.note
        )),
        None => Some(format!("{name}: the host never settled")),
    }
}

/// Checks one agent; returns the violations found, each naming the agent.
pub async fn check(arcade: &Source, host: &HostHandle, report: &AgentReport) -> Vec<String> {
    let name = &report.name;
    let mut out = Vec::new();
    let (truth, seen) = match settle(arcade, host, name).await {
        Ok(pair) => pair,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    out.extend(compare(name, &truth, seen.as_ref()));
    out.extend(ends_told(name, &truth, &report.ends_told));
    out.extend(still_open(name, &truth, report, |g, key| match g {
        None => "the agent never knew of it".to_owned(),
        Some(g) => match (&g.result, g.open) {
            (Some(r), _) => format!("the agent was told it ended: {r}"),
            (None, true) => format!(
                "the agent believed it open; {} resigns refused",
                report.resigns_refused.get(key).copied().unwrap_or(0)
            ),
            (None, false) => format!(
                "the agent believed it closed, never told it ended; {} resigns refused",
                report.resigns_refused.get(key).copied().unwrap_or(0)
            ),
        },
    }));
    out
}

/// Rule 5 for a modern agent that had `answered` calls answered by the server and
/// `connections` Streamable HTTP connections at the arcade; the violations, each naming it.
pub async fn check_modern(
    arcade: &Source,
    report: &AgentReport,
    answered: u64,
    connections: u64,
) -> Vec<String> {
    let name = &report.name;
    let truth = match truth::read(arcade, name).await {
        Ok(t) => t,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    let mut out = ends_told(name, &truth, &report.ends_told);
    out.extend(still_open(name, &truth, report, |g, _| match g {
        None => "the agent never knew of it".to_owned(),
        Some(g) if g.open => "the agent believed it open".to_owned(),
        Some(_) => "the agent believed it over".to_owned(),
    }));
    if connections < answered {
        out.push(format!(
            "{name}: did not speak MCP 2026-07-28: {answered} requests answered over {connections} Streamable HTTP connections (a modern request has one of its own)"
        ));
    }
    out
}

/// The games other than the lobby still open at the arcade after the drain, each a
/// violation naming the agent and saying what it knew of the game (`knew`, given the
/// agent's record of it and its key), for whoever chases it.
fn still_open(
    name: &str,
    truth: &Truth,
    report: &AgentReport,
    knew: impl Fn(Option<&GameRecord>, &(String, String)) -> String,
) -> Vec<String> {
    let mut out = Vec::new();
    for (toolset, instance) in &truth.open {
        if toolset != LOBBY {
            let instance = instance.as_deref().unwrap_or("-");
            let key = (toolset.clone(), instance.to_owned());
            let known = report
                .games
                .iter()
                .find(|g| g.toolset == *toolset && g.instance == instance);
            let knew = knew(known, &key);
            out.push(format!(
                "{name}: {toolset}:{instance} is still open after the drain ({knew})"
            ));
        }
    }
    out
}

/// Reads truth and view until they agree or [`SETTLE`] passes; returns the last of each.
async fn settle(
    arcade: &Source,
    host: &HostHandle,
    name: &str,
) -> Result<(Truth, Option<View>), truth::TruthError> {
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        let truth = truth::read(arcade, name).await?;
        let seen = view(host).await;
        let agree = seen
            .as_ref()
            .is_some_and(|v| v.open == truth.open && v.usable == truth.visible);
        if agree || tokio::time::Instant::now() >= deadline {
            return Ok((truth, seen));
        }
        // Something may still be on its way: read again once the host's state moves.
        let before = host.status();
        let _ = tokio::time::timeout_at(
            deadline.min(tokio::time::Instant::now() + Duration::from_millis(500)),
            host.wait_for(|s| *s != before),
        )
        .await;
    }
}

/// Rule 2: each record told once, nothing told twice or without a record.
pub fn ends_told(name: &str, truth: &Truth, told: &BTreeMap<(String, String), u32>) -> Vec<String> {
    let mut out = Vec::new();
    let mut recorded = BTreeSet::new();
    for rec in &truth.ended {
        let Some(instance) = &rec.instance else {
            continue;
        };
        let key = (rec.toolset.clone(), instance.clone());
        let n = told.get(&key).copied().unwrap_or(0);
        if n != 1 {
            out.push(format!(
                "{name}: the end of {}:{instance} (record {}, {:?}) was told {n} times",
                rec.toolset, rec.id, rec.reason
            ));
        }
        recorded.insert(key);
    }
    for (key, n) in told {
        if !recorded.contains(key) {
            out.push(format!(
                "{name}: the end of {}:{} was told {n} times but the server has no record of it",
                key.0, key.1
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::toolsets::EndedRecord;

    fn record(id: &str, instance: &str) -> EndedRecord {
        EndedRecord {
            id: id.into(),
            toolset: "go".into(),
            instance: Some(instance.into()),
            reason: "over".into(),
            at: "2026-01-01T00:00:00Z".into(),
        }
    }

    /// Issue #42: the checks at the end of a run are bounded in number at once (each
    /// holds a session of its own), and each one's outcome keeps its agent's place.
    #[tokio::test]
    async fn at_most_n_checks_run_at_once_and_keep_their_order() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (now, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let checks = (0..40u64).map(|i| {
            let (now, peak) = (&now, &peak);
            async move {
                let running = now.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(running, Ordering::SeqCst);
                // Later ones finish sooner: the order is the input's, not the finishing one.
                tokio::task::yield_now().await;
                for _ in 0..(40 - i) {
                    tokio::task::yield_now().await;
                }
                now.fetch_sub(1, Ordering::SeqCst);
                i
            }
        });
        let out = at_most(8, checks).await;
        assert_eq!(out, (0..40).collect::<Vec<_>>());
        assert_eq!(
            peak.load(Ordering::SeqCst),
            8,
            "at most 8 at once, and 8 were"
        );
    }

    #[test]
    fn each_record_must_be_told_once() {
        let truth = Truth {
            ended: vec![record("1-1", "g1"), record("1-2", "g2")],
            ..Default::default()
        };
        let key = |i: &str| ("go".to_owned(), i.to_owned());
        let good = BTreeMap::from([(key("g1"), 1), (key("g2"), 1)]);
        assert!(ends_told("a", &truth, &good).is_empty());
        let bad = BTreeMap::from([(key("g1"), 2), (key("g9"), 1)]);
        let v = ends_told("a", &truth, &bad);
        assert_eq!(v.len(), 3, "{v:?}");
    }
}

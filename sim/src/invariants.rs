//! The checks at the end of a load run, per agent, against the server's [`Truth`] for its
//! principal (read as a fresh connection would, `truth.rs`):
//!
//! 1. **The view equals the truth** once quiet: what the host says is open (its status)
//!    and usable (`toolsets--look`, as the agent reads it) is what the server states.
//! 2. **Every ended record is told exactly once** (§4.3, vector 13): for each record the
//!    agent was told that instance's end with a reason once; no end was told twice, nor
//!    one the server has no record of.
//! 3. **Every game ends**: after the drain nothing is open but the default-open lobby.
//!
//! The view is read while the run is quiet; a view that differs is read again as the
//! host's status changes (a push still on its way), up to a limit.

use crate::agent::AgentReport;
use crate::agent::perceive::read_look;
use crate::truth::{self, Key, Truth};
use mcpl_games::arcade::{Arcade, LOBBY};
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
}

/// Reads the agent's view: the host's status for what is open, `toolsets--look` for what
/// is usable (the one place the host lists it).
pub async fn view(host: &HostHandle) -> Option<View> {
    let status = host.status();
    let server = status.server(crate::hosts::SERVER)?;
    if !server.settled {
        return None;
    }
    let look = host.call("toolsets--look", json!({})).await.ok()?;
    let looked = read_look(&look.joined_text());
    Some(View {
        open: server.open.iter().cloned().collect(),
        usable: looked
            .usable
            .into_iter()
            .map(|(tool, m)| (tool, m.instance))
            .collect(),
    })
}

/// Checks one agent; returns the violations found, each naming the agent.
pub async fn check(arcade: &Arcade, host: &HostHandle, report: &AgentReport) -> Vec<String> {
    let name = &report.name;
    let mut out = Vec::new();
    let (truth, seen) = match settle(arcade, host, name).await {
        Ok(pair) => pair,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    match seen {
        Some(v) if v.open == truth.open && v.usable == truth.visible => {}
        Some(v) => out.push(format!(
            "{name}: the host's view differs from the server's: open {:?} vs {:?}; usable {:?} vs {:?}",
            v.open, truth.open, v.usable, truth.visible
        )),
        None => out.push(format!("{name}: the host never settled")),
    }
    out.extend(ends_told(name, &truth, &report.ends_told));
    for (toolset, instance) in &truth.open {
        if toolset != LOBBY {
            out.push(format!(
                "{name}: {toolset}:{} is still open after the drain",
                instance.as_deref().unwrap_or("-")
            ));
        }
    }
    out
}

/// Reads truth and view until they agree or [`SETTLE`] passes; returns the last of each.
async fn settle(
    arcade: &Arcade,
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
                "{name}: the end of {}:{instance} (record {}) was told {n} times",
                rec.toolset, rec.id
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

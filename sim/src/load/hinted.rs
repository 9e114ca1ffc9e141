//! The agents on MCP 2026-07-28 **with hints** (`--modern-hints`, issue #40 item 5):
//! scripted agents whose hosts speak the modern era over Streamable HTTP and advertise
//! `toolHints` as a named principal, so the arcade serves them RFC-014's stateless profile
//! (`docs/rfc014-stateless.md`): every request carries `mcpl/since` and `mcpl/grant`,
//! every result its stamped `mcpl/hints`, and a `subscriptions/listen` stream carries
//! `notifications/mcpl/hints`. The agent sees what a legacy agent sees (the meta-tools,
//! the news, the ends), so it plays the legacy policies against the bot and is checked by
//! the same invariants, plus [`check_profile`].
//!
//! What the profile did is counted on the wire, as each message reaches the host (the
//! transport's delivery hook, before the host reads it; nothing of the host's internals):
//! results carrying a statement or a delta, stream messages, streams acknowledged with
//! `mcpl/hints` (a host's first, then every reopening), and answers the transport made up
//! for a POST that got none ([`ProfileCounts`]).
//!
//! Their chaos, besides the level's ([`crate::chaos`]): a proxy of their own in front of
//! the Streamable HTTP listener cuts connections at random (the listen stream with them)
//! and **loses answers** — the request reached the arcade, its answer is cut as it starts
//! ([`crate::chaos::answer_loss`]); the agent **re-issues** a call whose answer was lost
//! once ([`crate::agent::AgentIo::reissuing`]); mass drops and restarts reach them like
//! every other agent.

use crate::agent::{GameKind, Mover, Plan, Policy};
use crate::chaos::{Calm, DelayStats, Delays, seeing_hook};
use mcpl_protocol::meta::HINTS;
use mcpl_protocol::modern::SUBSCRIPTIONS_ACKNOWLEDGED;
use mcpl_protocol::stateless::{FILTER_HINTS, HINTS_NOTIFICATION};
use mcpl_protocol::{ErrorCode, Message};
use mcpl_transport::delivery::DeliveryHook;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What one hinted agent's host was sent under the profile (module docs).
#[derive(Debug, Default)]
pub struct ProfileCounts {
    /// Results whose `mcpl/hints` was a full statement (`statement: true`).
    pub statements: AtomicU64,
    /// Results whose `mcpl/hints` was a delta (a version, and the entries after the mark).
    pub deltas: AtomicU64,
    /// `notifications/mcpl/hints` read from a listen stream.
    pub stream_changes: AtomicU64,
    /// Listen streams acknowledged with `mcpl/hints` (the first, then reopenings).
    pub listens: AtomicU64,
    /// Answers the transport made up for a request whose POST got none (a lost answer, a
    /// refused connection at a restart).
    pub unanswered: AtomicU64,
    /// Calls the agent re-issued after their answer was lost.
    pub reissued: Arc<AtomicU64>,
}

impl ProfileCounts {
    fn get(a: &AtomicU64) -> u64 {
        a.load(Ordering::Relaxed)
    }

    /// Reads one delivered message.
    fn see(&self, m: &Message) {
        let bump = |a: &AtomicU64| {
            a.fetch_add(1, Ordering::Relaxed);
        };
        match m {
            Message::Response(r) => match &r.outcome {
                Ok(result) => {
                    let hints = serde_json::from_str::<Value>(result.get())
                        .ok()
                        .and_then(|v| v.get("_meta")?.get(HINTS).cloned());
                    // Only a stamped message counts (a version): a legacy one has a rev.
                    match hints {
                        Some(h) if h.get("version").is_some() => {
                            if h.get("statement") == Some(&Value::Bool(true)) {
                                bump(&self.statements)
                            } else {
                                bump(&self.deltas)
                            }
                        }
                        _ => {}
                    }
                }
                Err(e) if e.code == ErrorCode::CONNECTION_CLOSED => bump(&self.unanswered),
                Err(_) => {}
            },
            Message::Notification(n) if n.method == HINTS_NOTIFICATION => {
                bump(&self.stream_changes)
            }
            Message::Notification(n) if n.method == SUBSCRIPTIONS_ACKNOWLEDGED => {
                let hinted = n
                    .params_value()
                    .and_then(|p| p.get("notifications")?.get(FILTER_HINTS).cloned())
                    == Some(Value::Bool(true));
                if hinted {
                    bump(&self.listens)
                }
            }
            _ => {}
        }
    }

    /// A snapshot: (statements, deltas, stream changes, listens, unanswered, re-issued).
    pub fn snapshot(&self) -> [u64; 6] {
        [
            Self::get(&self.statements),
            Self::get(&self.deltas),
            Self::get(&self.stream_changes),
            Self::get(&self.listens),
            Self::get(&self.unanswered),
            Self::get(&self.reissued),
        ]
    }
}

/// The delivery hook of a hinted agent's host: counts what it is sent ([`ProfileCounts`]),
/// and delays it per the chaos level's [`Delays`] (seeded, until `calm`) — POST answers,
/// the listen stream among them, so results and stream messages arrive out of the order
/// the arcade wrote them.
pub fn hook(
    counts: Arc<ProfileCounts>,
    delays: Option<Delays>,
    seed: u64,
    calm: Arc<Calm>,
    stats: Arc<DelayStats>,
) -> DeliveryHook {
    seeing_hook(delays, seed, calm, stats, move |d| counts.see(d.message))
}

/// The policy of hinted agent `k`: games against the bot only — an invitation is a push
/// event, which the profile does not carry yet (`notifications/mcpl/event`, profile
/// §3.5), so nobody waits on them. In turn: random tic-tac-toe and Go, two open at once;
/// clumsy tic-tac-toe; random Go; perfect tic-tac-toe.
pub fn policy(k: usize, think: Duration) -> Policy {
    let mut p = match k % 4 {
        0 => {
            let mut p = Policy::random(GameKind::TicTacToe);
            p.max_open = 2;
            p.plans = vec![Plan::Bot(GameKind::TicTacToe), Plan::Bot(GameKind::Go9)];
            p.go = Mover::Random { pass_after: 20 };
            p
        }
        1 => Policy::clumsy(GameKind::TicTacToe, 0.2),
        2 => {
            let mut p = Policy::random(GameKind::Go9);
            p.go = Mover::Random { pass_after: 20 };
            p
        }
        _ => Policy::engine(GameKind::TicTacToe, 0),
    };
    p.think = think;
    p.patience = Duration::from_secs(8);
    p
}

/// The modern check for a hinted agent: it was served the profile — its host applied
/// results stamped with the principal's version (statements or deltas) and opened a
/// listen stream the arcade acknowledged with `mcpl/hints`. The violation if not.
pub fn check_profile(name: &str, counts: &ProfileCounts) -> Option<String> {
    let [statements, deltas, _, listens, ..] = counts.snapshot();
    (statements + deltas == 0 || listens == 0).then(|| {
        format!(
            "{name}: was not served RFC-014's stateless profile: {statements} statements and {deltas} deltas in results, {listens} mcpl/hints streams acknowledged"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::to_raw;
    use mcpl_protocol::{ErrorObject, Id, Notification, Response};
    use serde_json::json;

    fn result(v: Value) -> Message {
        Message::Response(Response {
            id: Some(Id::Number(1)),
            outcome: Ok(to_raw(&v)),
        })
    }

    #[test]
    fn stamped_results_streams_and_lost_answers_are_counted_apart() {
        let c = ProfileCounts::default();
        assert!(check_profile("h", &c).is_some());
        c.see(&result(
            json!({"_meta": {"mcpl/hints": {"version": 3, "statement": true}}}),
        ));
        c.see(&result(json!({"_meta": {"mcpl/hints": {"version": 4}}})));
        // A legacy result's hints (a rev) are not the profile's.
        c.see(&result(json!({"_meta": {"mcpl/hints": {"rev": 4}}})));
        c.see(&Message::Notification(Notification {
            method: HINTS_NOTIFICATION.into(),
            params: Some(to_raw(&json!({"version": 5}))),
        }));
        assert!(check_profile("h", &c).is_some(), "no stream yet");
        for hints in [true, false] {
            c.see(&Message::Notification(Notification {
                method: SUBSCRIPTIONS_ACKNOWLEDGED.into(),
                params: Some(to_raw(
                    &json!({"notifications": {"toolsListChanged": true, "mcpl/hints": hints}}),
                )),
            }));
        }
        c.see(&Message::Response(Response::err(
            Some(Id::Number(2)),
            ErrorObject::new(ErrorCode::CONNECTION_CLOSED, "gone"),
        )));
        assert_eq!(c.snapshot(), [1, 1, 1, 1, 1, 0]);
        assert_eq!(check_profile("h", &c), None);
    }
}

//! The host core driven as the `Host` actor drives it, without links or timers: the
//! connection's phases, the reads of a server's state and their retries, the hold timer
//! asked for and disarmed, and (a property test) random sequences of what links tell.

use super::*;
use crate::link::phase::LinkPhase;
use crate::state::fixtures::{arcade_manifest, arcade_tools, changes, open_rec, vis};
use crate::state::{
    ConversationConfig, HintConfig, MetaConfig, PresenterConfig, ToldIds, ToolPolicy,
};
use mcpl_protocol::method::{Method, ToolHints, ToolsetsList};
use mcpl_protocol::toolsets::ToolsetsListResult;
use mcpl_protocol::{HintChanges, Id, Message, Meta, Notification, Response, Tool};
use proptest::prelude::*;
use std::sync::Arc;

const S: &str = "arcade";

fn core(config: HintConfig) -> HostCore {
    jittered_core(config, 0.0, 0)
}

/// A core whose read retries wait with `jitter` taken off at most, seeded with `seed`.
fn jittered_core(config: HintConfig, jitter: f64, seed: u64) -> HostCore {
    HostCore::new(
        [ServerSlot::new(S, true, ToolPolicy::allow_all(), config)],
        Presenter::new(PresenterConfig::default(), ToldIds::default()),
        Conversation::new(ConversationConfig::default()),
        MetaTools::new(MetaConfig::default()),
        CoreConfig {
            retry_delay: Duration::from_secs(1),
            retry_jitter: jitter,
            retry_seed: seed,
        },
    )
}

fn actions(c: &mut HostCore) -> Vec<Action> {
    std::iter::from_fn(|| c.poll_action()).collect()
}

fn reads(actions: &[Action]) -> Vec<(u64, ReadStep)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Read { token, step, .. } => Some((*token, *step)),
            _ => None,
        })
        .collect()
}

fn tools() -> Arc<[Tool]> {
    arcade_tools().into()
}

/// The tapped answer to a `toolsets/list` read: the statement at `rev`, the lobby open.
fn statement(c: &mut HostCore, epoch: u64, rev: u64, now: Instant) {
    let result = ToolsetsListResult {
        open: vec![open_rec("lobby", None)],
        ended: vec![],
        meta: Meta::with_hints(changes(rev, vec![vis("seek", None, true)], vec![])),
    };
    let id = Id::Number(900 + rev as i64);
    let response = Response::ok_typed(id.clone(), &result);
    c.read(
        S,
        epoch,
        Message::Response(response),
        Some((id, ToolsetsList::NAME)),
        now,
    );
}

fn standalone(c: &mut HostCore, epoch: u64, h: HintChanges, now: Instant) {
    let n = Notification {
        method: ToolHints::NAME.to_owned(),
        params: Some(mcpl_protocol::jsonrpc::to_raw(&h)),
    };
    c.read(S, epoch, Message::Notification(n), None, now);
}

/// Connected, handshake done, tools listed, statement read: settled at rev 1.
fn settled(config: HintConfig, now: Instant) -> HostCore {
    let mut c = core(config);
    c.connected(S, 1, config.ordered, Some(&arcade_manifest(true, true)));
    c.handshake_done(S, 1, true, &[], now);
    c.listed(S, 1, &tools(), None, false);
    let asked = reads(&actions(&mut c));
    statement(&mut c, 1, 1, now);
    c.read_done(S, 1, asked[0].0, asked[0].1, ReadOutcome::Answered);
    assert!(actions(&mut c).is_empty());
    c
}

#[test]
fn a_connection_moves_through_its_phases_and_its_status_says_so() {
    let now = Instant::now();
    let mut c = core(HintConfig::ordered());
    let phase = |c: &HostCore| c.slot(S).unwrap().phase();
    assert_eq!(phase(&c), LinkPhase::Connecting);
    c.connect_failed(S, "connection refused");
    assert_eq!(phase(&c), LinkPhase::Backoff);
    assert!(c.status(0).servers[S].unreachable);

    c.connected(S, 1, true, Some(&arcade_manifest(true, true)));
    assert_eq!(phase(&c), LinkPhase::AwaitingGrantReceipt);
    let st = &c.status(0).servers[S];
    assert!(!st.ready && !st.unreachable && st.hints.as_ref().unwrap().connecting);
    assert!(
        actions(&mut c).is_empty(),
        "nothing is read before the handshake"
    );

    // §4.3: the statement is read once the handshake is done.
    c.handshake_done(S, 1, true, &[], now);
    assert_eq!(phase(&c), LinkPhase::Ready);
    assert_eq!(reads(&actions(&mut c)), [(1, ReadStep::Statement)]);
    assert!(c.settling(), "a meta-tool call now waits for the statement");
    c.listed(S, 1, &tools(), None, false);
    assert!(
        !c.status(0).servers[S].settled,
        "the statement is not read yet"
    );
    statement(&mut c, 1, 1, now);
    c.read_done(S, 1, 1, ReadStep::Statement, ReadOutcome::Answered);
    let st = &c.status(0).servers[S];
    assert!(st.settled && st.ready);
    assert_eq!(st.hints.as_ref().unwrap().last_rev, 1);
    assert_eq!(st.open, [("lobby".to_owned(), None)]);
    assert!(!c.settling());

    c.disconnected(S, 1, "closed");
    assert_eq!(phase(&c), LinkPhase::Backoff);
    let st = &c.status(0).servers[S];
    assert!(!st.ready && !st.settled && st.unreachable && st.hints.is_none());
    // What belongs to the old connection is dropped.
    c.disconnected(S, 1, "closed again");
    c.listed(S, 1, &tools(), None, false);
    assert!(actions(&mut c).is_empty());
}

#[test]
fn the_status_says_why_a_server_is_not_connected_until_a_handshake_completes() {
    let now = Instant::now();
    let mut c = core(HintConfig::ordered());
    let why = |c: &HostCore| c.status(0).servers[S].down_because.clone();
    assert_eq!(why(&c), None, "nothing has failed yet");
    // A refused initialize (Streamable HTTP's 401): the connection never had its
    // initialize result read, and the server is unreachable as after a failed attempt.
    c.connection_ended(S, 1, "the server refused the token (HTTP 401)");
    assert!(c.status(0).servers[S].unreachable);
    assert_eq!(
        why(&c).as_deref(),
        Some("the server refused the token (HTTP 401)")
    );
    c.connect_failed(S, "connection refused");
    assert_eq!(why(&c).as_deref(), Some("connection refused"));
    assert_eq!(
        c.slot(S).unwrap().view().down_because,
        Some("connection refused")
    );

    c.connected(S, 2, true, Some(&arcade_manifest(true, true)));
    c.handshake_done(S, 2, true, &[], now);
    assert_eq!(why(&c), None, "connected again");
    // An old connection's end does not touch the one that is up.
    c.connection_ended(S, 1, "the connection closed");
    assert!(c.status(0).servers[S].ready && why(&c).is_none());
    // The current one's end does.
    c.connection_ended(S, 2, "the connection closed");
    let st = &c.status(0).servers[S];
    assert!(st.unreachable && !st.ready);
    assert_eq!(st.down_because.as_deref(), Some("the connection closed"));
}

#[test]
fn an_ordered_gap_recovers_with_a_statement_then_the_tools_list() {
    let now = Instant::now();
    let mut c = settled(HintConfig::ordered(), now);
    // §5.2: rev 3 after 1 on an ordered link: a message was lost, recover.
    standalone(
        &mut c,
        1,
        changes(3, vec![vis("roam", None, true)], vec![]),
        now,
    );
    let asked = reads(&actions(&mut c));
    assert_eq!(asked, [(2, ReadStep::Statement)]);
    assert!(c.status(0).servers[S].hints.as_ref().unwrap().recovering);
    statement(&mut c, 1, 3, now);
    c.read_done(S, 1, 2, ReadStep::Statement, ReadOutcome::Answered);
    assert_eq!(reads(&actions(&mut c)), [(3, ReadStep::ToolsList)]);
    c.listed(S, 1, &tools(), Some(3), false);
    c.read_done(S, 1, 3, ReadStep::ToolsList, ReadOutcome::Answered);
    assert!(actions(&mut c).is_empty());
    let st = &c.status(0).servers[S];
    assert!(!st.hints.as_ref().unwrap().recovering && st.settled);
}

#[test]
fn an_unreadable_message_is_a_rate_limited_peer_warning_and_recovers() {
    let now = Instant::now();
    let mut c = settled(HintConfig::ordered(), now);
    // A peer may send unreadable messages without end: each one is a peer warning (the
    // driver logs those through its per-peer limit), never a line of its own.
    c.unreadable(S, 1, "not JSON-RPC", now);
    let acts = actions(&mut c);
    let warned: Vec<&str> = acts
        .iter()
        .filter_map(|a| match a {
            Action::PeerWarning { server, what } if server == S => Some(what.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(warned, ["a message was lost on connection 1: not JSON-RPC"]);
    // §5.2 [project]: whatever it carried is lost, so the state is read again.
    assert_eq!(reads(&acts), [(2, ReadStep::Statement)]);
    // A stale connection's loss is nobody's concern now.
    c.unreadable(S, 7, "too large", now);
    assert!(actions(&mut c).is_empty());
}

/// Issue #36 item 16 (§5.2 [project]): while a recovery's statement is read, the host does
/// not know what is open (a lost answer may have opened something), so meta-tool calls wait
/// for it as after a connect — through a failed read and its retry too; once the statement
/// is read they go, though the recovery's `tools/list` is still to come.
#[test]
fn issue36_16_a_recovery_read_in_flight_holds_meta_tool_calls_until_its_statement() {
    let now = Instant::now();
    let mut c = settled(HintConfig::unordered(), now);
    assert!(!c.settling());
    c.unreadable(S, 1, "the POST failed", now);
    let (token, step) = reads(&actions(&mut c))[0];
    assert_eq!(step, ReadStep::Statement);
    assert!(c.settling(), "a recovery's statement is awaited");
    let later = now + Duration::from_millis(500);
    c.read_done(S, 1, token, step, ReadOutcome::Failed("timed out".into()));
    assert!(c.settling(), "a failed read leaves it awaited");
    actions(&mut c);
    c.retry_due(S, 1, token, later);
    let (again, _) = reads(&actions(&mut c))[0];
    assert!(c.settling());
    statement(&mut c, 1, 2, later);
    c.read_done(S, 1, again, ReadStep::Statement, ReadOutcome::Answered);
    assert_eq!(reads(&actions(&mut c))[0].1, ReadStep::ToolsList);
    assert!(!c.settling(), "the statement is read: calls go");
    assert!(c.status(0).servers[S].hints.as_ref().unwrap().recovering);
}

#[test]
fn a_failed_read_is_retried_later_each_time_and_a_superseded_one_is_ignored() {
    let now = Instant::now();
    let mut c = settled(HintConfig::ordered(), now);
    standalone(&mut c, 1, changes(3, vec![], vec![]), now);
    let (token, step) = reads(&actions(&mut c))[0];
    c.read_done(S, 1, token, step, ReadOutcome::Failed("timed out".into()));
    let retry = actions(&mut c);
    assert_eq!(
        retry,
        [Action::RetryAfter {
            server: S.into(),
            epoch: 1,
            token,
            delay: Duration::from_secs(1)
        }]
    );
    c.retry_due(S, 1, token, now);
    let (again, _) = reads(&actions(&mut c))[0];
    assert!(again > token);
    // The first read's answer, late: superseded, nothing follows.
    c.read_done(S, 1, token, step, ReadOutcome::Answered);
    c.retry_due(S, 1, token, now);
    assert!(actions(&mut c).is_empty());
    c.read_done(S, 1, again, step, ReadOutcome::Failed("refused".into()));
    let delays: Vec<Duration> = actions(&mut c)
        .into_iter()
        .filter_map(|a| match a {
            Action::RetryAfter { delay, .. } => Some(delay),
            _ => None,
        })
        .collect();
    assert_eq!(delays, [Duration::from_secs(2)], "the wait doubles");
    // A read whose connection went ends quietly: the next connection reads its own.
    c.read_done(S, 1, again, step, ReadOutcome::Gone);
    assert!(actions(&mut c).is_empty());
}

/// Issue #42: hosts whose reads failed together (a server too busy to answer them) read
/// again spread out over the wait's last half, each host's waits repeating with its seed;
/// without the jitter every host read again at the same instant.
#[test]
fn hosts_seeded_apart_read_again_apart() {
    let now = Instant::now();
    // The waits of three failures in a row (1 s, 2 s, 4 s before jitter).
    let waits = |seed: u64| -> Vec<Duration> {
        let mut c = jittered_core(HintConfig::ordered(), DEFAULT_RETRY_JITTER, seed);
        c.connected(S, 1, true, Some(&arcade_manifest(true, true)));
        c.handshake_done(S, 1, true, &[], now);
        let mut out = Vec::new();
        for _ in 0..3 {
            let (token, step) = reads(&actions(&mut c))[0];
            c.read_done(S, 1, token, step, ReadOutcome::Failed("timed out".into()));
            for a in actions(&mut c) {
                if let Action::RetryAfter { delay, .. } = a {
                    out.push(delay);
                }
            }
            c.retry_due(S, 1, token, now);
        }
        out
    };
    let mut firsts = std::collections::BTreeSet::new();
    for seed in 0..20u64 {
        let w = waits(seed);
        assert_eq!(w, waits(seed), "seed {seed}: the same seed waits the same");
        for (i, d) in w.iter().enumerate() {
            let base = Duration::from_secs(1 << i);
            assert!(
                *d > base / 2 && *d <= base,
                "seed {seed}: wait {i} is {d:?}, outside ({:?}, {base:?}]",
                base / 2
            );
        }
        firsts.insert(w[0]);
    }
    assert!(
        firsts.len() >= 18,
        "20 hosts' first retries fall at {} instants",
        firsts.len()
    );
}

#[test]
fn an_early_rev_asks_for_the_hold_timer_and_a_lost_connection_disarms_it() {
    let now = Instant::now();
    let config = HintConfig::unordered();
    let mut c = settled(config, now);
    // §5.2: on an unordered link an early rev is held for the window.
    standalone(
        &mut c,
        1,
        changes(3, vec![vis("roam", None, true)], vec![]),
        now,
    );
    let asked = actions(&mut c);
    let at = now + config.hold_window;
    assert_eq!(
        asked,
        [Action::Hold {
            server: S.into(),
            epoch: 1,
            at: Some(at)
        }]
    );
    assert_eq!(c.status(0).servers[S].hints.as_ref().unwrap().held, [3]);
    c.disconnected(S, 1, "closed");
    assert_eq!(
        actions(&mut c),
        [Action::Hold {
            server: S.into(),
            epoch: 1,
            at: None
        }]
    );
    // A timer that fired anyway, for the old connection, does nothing.
    c.hold_expired(S, 1, at);
    assert!(actions(&mut c).is_empty());
}

#[test]
fn the_hold_expiring_recovers_and_a_filled_gap_disarms_it() {
    let now = Instant::now();
    let config = HintConfig::unordered();
    let mut c = settled(config, now);
    standalone(&mut c, 1, changes(3, vec![], vec![]), now);
    actions(&mut c);
    // Rev 2 arrives in the window: 2 and 3 apply, nothing is held, the timer goes.
    standalone(&mut c, 1, changes(2, vec![], vec![]), now);
    assert_eq!(
        actions(&mut c),
        [Action::Hold {
            server: S.into(),
            epoch: 1,
            at: None
        }]
    );
    assert_eq!(c.status(0).servers[S].hints.as_ref().unwrap().last_rev, 3);
    // Rev 5 is held and its window runs out: the state is read again.
    standalone(&mut c, 1, changes(5, vec![], vec![]), now);
    actions(&mut c);
    c.hold_expired(S, 1, now + config.hold_window);
    let after = actions(&mut c);
    assert_eq!(reads(&after).len(), 1, "{after:?}");
    assert_eq!(reads(&after)[0].1, ReadStep::Statement);
}

#[test]
fn a_server_left_as_plain_mcp_counts_no_hints_and_reads_nothing() {
    let now = Instant::now();
    let mut c = core(HintConfig::ordered());
    c.connected(S, 1, true, Some(&arcade_manifest(true, true)));
    // SPEC §3.2: MCPL not in force on this connection.
    c.handshake_done(S, 1, false, &[], now);
    assert!(actions(&mut c).is_empty());
    c.listed(S, 1, &tools(), None, false);
    let st = &c.status(0).servers[S];
    assert!(st.settled && !st.hints_count && st.hints.is_none());
    standalone(
        &mut c,
        1,
        changes(9, vec![vis("roam", None, true)], vec![]),
        now,
    );
    assert!(actions(&mut c).is_empty());
}

/// One input, as a link or a timer would give it.
#[derive(Debug, Clone)]
enum Input {
    ConnectFailed,
    Connected {
        ordered: bool,
    },
    Handshake {
        mcpl: bool,
    },
    Listed {
        rev: Option<u64>,
    },
    Statement {
        rev: u64,
    },
    Hints {
        rev: u64,
    },
    /// The answer to the `n`th read asked for so far (late ones included).
    ReadDone {
        n: usize,
        outcome: u8,
    },
    /// The `n`th retry asked for comes due.
    RetryDue {
        n: usize,
    },
    /// Time passes by this many ms, and the armed hold timer fires if it is due.
    Tick {
        ms: u64,
    },
    Disconnected,
    Boundary,
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        Just(Input::ConnectFailed),
        any::<bool>().prop_map(|ordered| Input::Connected { ordered }),
        prop::bool::weighted(0.9).prop_map(|mcpl| Input::Handshake { mcpl }),
        prop::option::of(0u64..8).prop_map(|rev| Input::Listed { rev }),
        (0u64..8).prop_map(|rev| Input::Statement { rev }),
        (1u64..10).prop_map(|rev| Input::Hints { rev }),
        (0usize..6, 0u8..3).prop_map(|(n, outcome)| Input::ReadDone { n, outcome }),
        (0usize..4).prop_map(|n| Input::RetryDue { n }),
        (0u64..400).prop_map(|ms| Input::Tick { ms }),
        Just(Input::Disconnected),
        Just(Input::Boundary),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever links tell, in any order: the core never panics; the hold timer the
    /// driver holds (replaying every `Hold` action) is always the one the core wants; a
    /// read is asked for only on the current connection, with a token newer than any
    /// before it; a settled server is ready with its statement read; and a lost
    /// connection leaves no hint state behind.
    #[test]
    fn whatever_links_tell_the_driver_s_timers_and_reads_match_the_core(
        inputs in prop::collection::vec(input(), 1..60)
    ) {
        let t0 = Instant::now();
        let mut now = t0;
        let mut c = core(HintConfig::ordered());
        let mut epoch = 0;
        let mut armed: Option<Instant> = None;
        let mut asked: Vec<(u64, u64, ReadStep)> = Vec::new();
        let mut retries: Vec<(u64, u64)> = Vec::new();
        let mut last_token = 0;
        for input in inputs {
            match input {
                Input::ConnectFailed => c.connect_failed(S, "connection refused"),
                Input::Connected { ordered } => {
                    epoch += 1;
                    c.connected(S, epoch, ordered, Some(&arcade_manifest(true, true)));
                }
                Input::Handshake { mcpl } => c.handshake_done(S, epoch, mcpl, &[], now),
                Input::Listed { rev } => c.listed(S, epoch, &tools(), rev, false),
                Input::Statement { rev } => statement(&mut c, epoch, rev, now),
                Input::Hints { rev } => standalone(
                    &mut c,
                    epoch,
                    changes(rev, vec![vis("roam", None, rev % 2 == 0)], vec![]),
                    now,
                ),
                Input::ReadDone { n, outcome } => {
                    if let Some(&(e, token, step)) = asked.get(n) {
                        let outcome = match outcome {
                            0 => ReadOutcome::Answered,
                            1 => ReadOutcome::Gone,
                            _ => ReadOutcome::Failed("refused".into()),
                        };
                        c.read_done(S, e, token, step, outcome);
                    }
                }
                Input::RetryDue { n } => {
                    if let Some(&(e, token)) = retries.get(n) {
                        c.retry_due(S, e, token, now);
                    }
                }
                Input::Tick { ms } => {
                    now += Duration::from_millis(ms);
                    if let Some(at) = armed.filter(|at| *at <= now) {
                        armed = None;
                        c.hold_expired(S, epoch, at.max(now));
                    }
                }
                Input::Disconnected => c.disconnected(S, epoch, "closed"),
                Input::Boundary => {
                    c.boundary();
                }
            }
            for a in actions(&mut c) {
                match a {
                    Action::Hold { epoch: e, at, .. } => {
                        prop_assert_eq!(e, epoch);
                        armed = at;
                    }
                    Action::Read { epoch: e, token, step, .. } => {
                        prop_assert_eq!(e, epoch);
                        prop_assert!(token > last_token);
                        last_token = token;
                        asked.push((e, token, step));
                    }
                    Action::RetryAfter { epoch: e, token, delay, .. } => {
                        prop_assert!(delay <= MAX_RETRY_DELAY);
                        retries.push((e, token));
                    }
                    Action::ListTools { .. } | Action::PeerWarning { .. } => {}
                }
            }
            while c.poll_shown().is_some() {}
            let slot = c.slot(S).unwrap();
            prop_assert_eq!(armed, slot.hold, "the driver's timer is the core's");
            let st = &c.status(0).servers[S];
            if st.settled {
                prop_assert!(st.ready);
                prop_assert!(st.hints.as_ref().is_none_or(|h| !h.connecting));
            }
            if slot.phase() == LinkPhase::Backoff {
                prop_assert!(slot.hints().is_none() && armed.is_none());
            }
        }
    }
}

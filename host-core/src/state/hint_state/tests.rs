//! Unit tests for `HintState`, one rule each; vectors named where they apply.

use super::*;
use crate::state::fixtures::{open_rec, set as ts, vis};
use crate::state::output::ResultOf;
use mcpl_protocol::hints::{HintEntries, SuggestAction, Suggestion, ToolHint};
use mcpl_protocol::toolsets::{EndedRecord, OpenRecord};
use mcpl_protocol::{Id, Meta, ToolsetState};
use serde_json::json;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn pres(tool: &str, p: Presence) -> ToolHint {
    ToolHint {
        name: tool.into(),
        presence: Some(p),
        ..Default::default()
    }
}

fn def(tool: &str, instance: Option<&str>, description: &str) -> ToolHint {
    let d = ToolDefinition {
        description: Some(description.into()),
        ..Default::default()
    };
    ToolHint {
        name: tool.into(),
        instance: instance.map(Into::into),
        definition: Some(d),
        ..Default::default()
    }
}

fn msg(rev: u64, tools: Vec<ToolHint>) -> HintChanges {
    HintChanges {
        rev,
        entries: HintEntries {
            tools,
            ..Default::default()
        },
    }
}

fn ended(id: &str, toolset: &str, instance: Option<&str>) -> EndedRecord {
    EndedRecord {
        id: id.into(),
        toolset: toolset.into(),
        instance: instance.map(Into::into),
        reason: "game over".into(),
        at: "2026-01-01T00:00:00Z".into(),
    }
}

fn tool(name: &str, toolset: Option<&str>, presence: Option<Presence>) -> Tool {
    let mut t = Tool::new(name, format!("{name} declared"), json!({"type": "object"}));
    let meta = Meta {
        toolset: toolset.map(Into::into),
        presence,
        ..Default::default()
    };
    if !meta.is_empty() {
        t.meta = Some(meta);
    }
    t
}

/// play, pass: toolset `game` (instanced); seek: toolset `lobby`; roam: dynamic outside
/// toolsets; clock: static.
fn tools() -> Vec<Tool> {
    vec![
        tool("play", Some("game"), None),
        tool("pass", Some("game"), Some(Presence::Static)),
        tool("seek", Some("lobby"), None),
        tool("roam", None, Some(Presence::Dynamic)),
        tool("clock", None, None),
    ]
}

/// A state past its connect-time reads: tools/list at 0, an empty statement at rev 1.
fn ready(config: HintConfig, now: Instant) -> HintState {
    let mut s = HintState::new(config);
    assert!(s.handle_tools_list(&tools(), 0).is_empty());
    assert!(
        s.handle_statement(&msg(1, vec![]), &[], &[], now)
            .is_empty()
    );
    assert_eq!(s.last_rev(), 1);
    assert!(!s.is_connecting() && !s.is_recovering());
    s
}

/// The same, with `game` instances open (a tool entry for an instance counts only while it
/// is open, `apply.rs`).
fn ready_with_games(config: HintConfig, now: Instant, instances: &[&str]) -> HintState {
    let mut s = HintState::new(config);
    s.handle_tools_list(&tools(), 0);
    let open: Vec<OpenRecord> = instances
        .iter()
        .map(|i| open_rec("game", Some(i)))
        .collect();
    s.handle_statement(&msg(1, vec![]), &open, &[], now);
    assert_eq!(s.last_rev(), 1);
    s
}

fn changes(out: &[Output]) -> Vec<Change> {
    out.iter().filter_map(|o| o.change().cloned()).collect()
}

fn recovers(out: &[Output]) -> Vec<RecoverReason> {
    out.iter()
        .filter_map(|o| match o {
            Output::Recover(r) => Some(*r),
            Output::Changed { .. } => None,
        })
        .collect()
}

fn visible(tool: &str, instance: Option<&str>, v: bool) -> Change {
    Change::Visibility {
        tool: tool.into(),
        instance: instance.map(Into::into),
        visible: v,
    }
}

const SA: Carrier = Carrier::Standalone;

fn push(id: &str) -> Carrier {
    Carrier::Push {
        event_id: id.into(),
        coalesce: false,
    }
}

#[test]
fn next_rev_applies_once_and_restating_reports_nothing() {
    let now = Instant::now();
    let mut s = ready_with_games(HintConfig::ordered(), now, &["g1"]);
    // Vector 28: a result the call no longer waits for applies the same way.
    let carrier = Carrier::Result {
        of: ResultOf::CallTool,
        request: Id::Number(7),
    };
    let out = s.handle_hints(
        carrier.clone(),
        msg(2, vec![vis("play", Some("g1"), true)]),
        now,
    );
    assert_eq!(
        out,
        vec![Output::Changed {
            cause: Cause::Message { rev: 2, carrier },
            change: visible("play", Some("g1"), true)
        }]
    );
    assert!(
        s.handle_hints(SA, msg(3, vec![vis("play", Some("g1"), true)]), now)
            .is_empty()
    );
    assert!(s.is_visible("play", Some("g1")) && !s.is_visible("play", None));
    assert_eq!((s.last_rev(), s.stats().applied), (3, 2));
}

#[test]
fn stale_rev_is_ignored_and_recovers_only_on_an_ordered_link() {
    // Vector 4 (unordered: normal, ignored).
    let now = Instant::now();
    let mut u = ready(HintConfig::unordered(), now);
    u.handle_hints(SA, msg(2, vec![vis("roam", None, true)]), now);
    let out = u.handle_hints(SA, msg(2, vec![vis("roam", None, false)]), now);
    assert!(out.is_empty());
    assert!(u.is_visible("roam", None));
    assert_eq!(u.stats().stale, 1);
    // Vector 21 (ordered: a step back recovers).
    let mut o = ready(HintConfig::ordered(), now);
    o.handle_hints(SA, msg(2, vec![vis("roam", None, true)]), now);
    let out = o.handle_hints(SA, msg(1, vec![vis("roam", None, false)]), now);
    assert_eq!(recovers(&out), vec![RecoverReason::Stale { rev: 1 }]);
    assert!(o.is_visible("roam", None) && o.is_recovering());
}

#[test]
fn a_gap_on_an_ordered_link_starts_exactly_one_recovery() {
    // Vector 21.
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    let out = s.handle_hints(SA, msg(4, vec![vis("roam", None, true)]), now);
    assert_eq!(
        recovers(&out),
        vec![RecoverReason::Gap {
            expected: 2,
            got: 4
        }]
    );
    assert!(
        !s.is_visible("roam", None),
        "a gap's state waits for the statement"
    );
    assert!(
        s.handle_hints(SA, msg(5, vec![]), now).is_empty(),
        "no second recovery"
    );
    assert!(
        s.handle_hints(SA, msg(1, vec![]), now).is_empty(),
        "nor for a stale rev meanwhile"
    );
    let out = s.handle_statement(&msg(6, vec![vis("roam", None, true)]), &[], &[], now);
    assert_eq!(changes(&out), vec![visible("roam", None, true)]);
    assert!(s.is_recovering(), "tools/list is still to be read");
    assert!(s.handle_tools_list(&tools(), 6).is_empty());
    assert!(!s.is_recovering());
    assert_eq!(s.stats().recoveries, 1);
    assert_eq!(s.handle_hints(SA, msg(7, vec![]), now), vec![]);
}

#[test]
fn an_early_rev_is_held_and_applied_in_order_when_the_gap_fills() {
    // Vector 37, first half.
    let now = Instant::now();
    let mut s = ready(HintConfig::unordered(), now);
    assert!(
        s.handle_hints(SA, msg(3, vec![vis("roam", None, false)]), now)
            .is_empty()
    );
    assert_eq!(
        (s.held_count(), s.poll_timeout()),
        (1, Some(now + DEFAULT_HOLD_WINDOW))
    );
    let out = s.handle_hints(SA, msg(2, vec![vis("roam", None, true)]), now + ms(100));
    // Applied in rev order: visible at 2, invisible at 3.
    assert_eq!(
        changes(&out),
        vec![visible("roam", None, true), visible("roam", None, false)]
    );
    assert_eq!(
        (s.last_rev(), s.held_count(), s.poll_timeout()),
        (3, 0, None)
    );
    assert_eq!((s.stats().held, s.stats().resolved_in_window), (1, 1));
}

#[test]
fn a_hold_that_expires_recovers_and_the_statement_supersedes_it() {
    // Vector 37, second half; vector 22.
    let now = Instant::now();
    let cfg = HintConfig::unordered().with_hold_window(ms(100));
    let mut s = ready(cfg, now);
    s.handle_hints(SA, msg(3, vec![vis("roam", None, true)]), now);
    assert!(s.handle_timeout(now + ms(99)).is_empty());
    let out = s.handle_timeout(now + ms(100));
    assert_eq!(recovers(&out), vec![RecoverReason::HoldExpired { rev: 3 }]);
    assert_eq!(s.poll_timeout(), None, "an expired hold fires once");
    let out = s.handle_statement(&msg(5, vec![]), &[], &[], now + ms(150));
    assert!(out.is_empty());
    assert_eq!(
        (s.last_rev(), s.held_count(), s.stats().superseded),
        (5, 0, 1)
    );
    // The missing rev 2 arrives late: stale, ignored.
    assert!(
        s.handle_hints(SA, msg(2, vec![vis("roam", None, true)]), now + ms(160))
            .is_empty()
    );
    assert!(!s.is_visible("roam", None));
    assert!(s.handle_tools_list(&tools(), 5).is_empty());
    assert_eq!(s.stats().expired, 1);
}

#[test]
fn what_a_statement_leaves_held_gets_a_fresh_window_and_drains_after_it() {
    let now = Instant::now();
    let cfg = HintConfig::unordered().with_hold_window(ms(100));
    let mut s = ready(cfg, now);
    s.handle_hints(SA, msg(3, vec![]), now);
    s.handle_hints(SA, msg(7, vec![vis("roam", None, true)]), now);
    s.handle_hints(SA, msg(9, vec![vis("roam", None, false)]), now);
    assert_eq!(
        recovers(&s.handle_timeout(now + ms(100))),
        vec![RecoverReason::HoldExpired { rev: 3 }]
    );
    // The statement at 6 supersedes 3; 7 drains after it. 9 was held before the recovery
    // began, so an honest statement would have reached it: it is dropped, not waited for.
    let out = s.handle_statement(&msg(6, vec![]), &[], &[], now + ms(150));
    assert_eq!(changes(&out), vec![visible("roam", None, true)]);
    assert_eq!((s.last_rev(), s.held_count()), (7, 0));
    assert_eq!(s.poll_timeout(), None);
    assert!(
        s.handle_tools_list(&tools(), 6).is_empty(),
        "the recovery ends"
    );
    // What is held after the recovery began waits with its own window.
    s.handle_hints(SA, msg(9, vec![]), now + ms(200));
    assert_eq!(s.poll_timeout(), Some(now + ms(300)));
    assert_eq!(s.stats().expired, 3, "3, 7 and 9 at 100 ms");
}

#[test]
fn a_rev_held_before_a_recovery_began_is_dropped_if_its_statement_does_not_reach_it() {
    // A peer's fault: no honest statement is below a rev written before it. Waiting for
    // its predecessors would start a recovery per hold window for ever.
    let now = Instant::now();
    let mut s = ready(HintConfig::unordered().with_hold_window(ms(100)), now);
    s.handle_hints(SA, msg(u64::MAX, vec![vis("roam", None, true)]), now);
    assert_eq!(recovers(&s.handle_timeout(now + ms(100))).len(), 1);
    s.handle_statement(&msg(2, vec![]), &[], &[], now + ms(110));
    assert!(recovers(&s.handle_tools_list(&tools(), 2)).is_empty());
    assert_eq!((s.held_count(), s.poll_timeout()), (0, None));
    assert!(!s.is_visible("roam", None));
}

#[test]
fn statement_successors_drain_at_once() {
    let now = Instant::now();
    let mut s = ready(HintConfig::unordered(), now);
    s.handle_hints(SA, msg(4, vec![]), now);
    s.handle_hints(SA, msg(5, vec![vis("roam", None, true)]), now);
    assert_eq!(
        recovers(&s.handle_timeout(now + DEFAULT_HOLD_WINDOW)).len(),
        1
    );
    let out = s.handle_statement(&msg(4, vec![]), &[], &[], now + ms(300));
    assert_eq!(
        changes(&out),
        vec![visible("roam", None, true)],
        "5 drains after the statement at 4"
    );
    assert_eq!(
        (s.last_rev(), s.held_count(), s.stats().superseded),
        (5, 0, 1)
    );
}

#[test]
fn a_statement_is_full_and_clears_what_it_does_not_state() {
    // Vectors 23, 38.
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    s.handle_hints(
        SA,
        msg(2, vec![vis("roam", None, true), vis("seek", None, true)]),
        now,
    );
    let out = s.handle_statement(&msg(3, vec![vis("roam", None, true)]), &[], &[], now);
    assert_eq!(changes(&out), vec![visible("seek", None, false)]);
    let out = s.handle_statement(&msg(4, vec![]), &[], &[], now);
    assert_eq!(changes(&out), vec![visible("roam", None, false)]);
    assert_eq!(s.visible_tools().count(), 0);
}

#[test]
fn a_statement_adopts_what_is_open_and_reports_vanished_instances_with_their_record() {
    // Vector 9 (adoption), §4.3 ended records.
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    let mut open_g1 = ts("game", Some("g1"), ToolsetState::Open);
    open_g1.title = Some("Go vs bot".into());
    let mut m = msg(
        2,
        vec![
            vis("play", Some("g1"), true),
            def("play", Some("g1"), "g1 moves"),
        ],
    );
    m.entries.toolsets = vec![open_g1];
    s.handle_hints(SA, m, now);
    let open = [open_rec("game", Some("g2")), open_rec("lobby", None)];
    let records = [
        ended("e1", "game", Some("g1")),
        ended("e0", "game", Some("g0")),
    ];
    let out = s.handle_statement(
        &msg(3, vec![vis("play", Some("g2"), true)]),
        &open,
        &records,
        now,
    );
    assert_eq!(
        changes(&out),
        vec![
            Change::Closed {
                toolset: "game".into(),
                instance: Some("g1".into()),
                reason: Some("game over".into()),
                ended: Some("e1".into())
            },
            Change::Opened {
                toolset: "game".into(),
                instance: Some("g2".into()),
                title: None
            },
            Change::Opened {
                toolset: "lobby".into(),
                instance: None,
                title: None
            },
            visible("play", Some("g2"), true),
            Change::Ended(ended("e0", "game", Some("g0"))),
        ]
    );
    assert_eq!(s.instances_of("game"), vec!["g2"]);
    assert!(s.is_open("lobby", None) && !s.is_open("game", Some("g1")));
    // Read again: every record already reported on this connection.
    let out = s.handle_statement(
        &msg(4, vec![vis("play", Some("g2"), true)]),
        &open,
        &records,
        now,
    );
    assert!(out.is_empty());
}

#[test]
fn a_close_takes_its_instance_state_and_reports_only_the_close() {
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    let mut m = msg(
        2,
        vec![
            vis("play", Some("g1"), true),
            vis("pass", Some("g1"), true),
            def("play", Some("g1"), "x"),
        ],
    );
    m.entries.toolsets = vec![
        ts("game", Some("g1"), ToolsetState::Open),
        ts("game", Some("g2"), ToolsetState::Open),
    ];
    s.handle_hints(SA, m, now);
    s.handle_hints(SA, msg(3, vec![vis("play", Some("g2"), true)]), now);
    let mut close = ts("game", Some("g1"), ToolsetState::Closed);
    close.reason = Some("White won by 3.5".into());
    close.ended = Some("e1".into());
    let out = s.handle_hints(
        SA,
        HintChanges {
            rev: 4,
            entries: HintEntries {
                toolsets: vec![close],
                ..Default::default()
            },
        },
        now,
    );
    assert_eq!(
        changes(&out),
        vec![Change::Closed {
            toolset: "game".into(),
            instance: Some("g1".into()),
            reason: Some("White won by 3.5".into()),
            ended: Some("e1".into()),
        }]
    );
    assert_eq!(
        s.visible_tools().collect::<Vec<_>>(),
        vec![("play", Some("g2"))]
    );
    assert!(s.definition_override("play", Some("g1")).is_none());
    // The statement's record for it was already reported with the close.
    let out = s.handle_statement(
        &msg(5, vec![vis("play", Some("g2"), true)]),
        &[open_rec("game", Some("g2"))],
        &[ended("e1", "game", Some("g1"))],
        now,
    );
    assert!(out.is_empty());
}

/// §5.1 [project]: a message from another server that closes and re-opens one instance
/// leaves it open with the visibility its entries state; a close wins over visibility
/// stated with it.
#[test]
fn boundary_01_a_message_closing_and_reopening_an_instance_leaves_it_open() {
    let now = Instant::now();
    let mut s = ready_with_games(HintConfig::ordered(), now, &["g2"]);
    s.handle_hints(SA, msg(2, vec![vis("play", Some("g2"), true)]), now);
    let mut restart = msg(
        3,
        vec![
            vis("play", Some("g2"), false),
            vis("play", Some("g2"), true),
        ],
    );
    restart.entries.toolsets = vec![
        ts("game", Some("g2"), ToolsetState::Closed),
        ts("game", Some("g2"), ToolsetState::Open),
    ];
    s.handle_hints(SA, restart, now);
    assert!(
        s.is_visible("play", Some("g2")),
        "the re-open's visibility stands"
    );
    assert_eq!(s.open_instances().count(), 1);
    let mut game_over = msg(4, vec![vis("play", Some("g2"), true)]);
    game_over.entries.toolsets = vec![ts("game", Some("g2"), ToolsetState::Closed)];
    s.handle_hints(SA, game_over, now);
    assert!(!s.is_visible("play", Some("g2")), "a close wins");
    assert_eq!(s.open_instances().count(), 0);
}

#[test]
fn a_retitle_is_reported_and_a_restated_open_is_not() {
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    let mut o = ts("game", Some("g1"), ToolsetState::Open);
    o.title = Some("Go".into());
    s.handle_hints(
        SA,
        HintChanges {
            rev: 2,
            entries: HintEntries {
                toolsets: vec![o.clone()],
                ..Default::default()
            },
        },
        now,
    );
    assert!(
        s.handle_hints(
            SA,
            HintChanges {
                rev: 3,
                entries: HintEntries {
                    toolsets: vec![o.clone()],
                    ..Default::default()
                }
            },
            now
        )
        .is_empty()
    );
    o.title = Some("Go, move 30".into());
    let out = s.handle_hints(
        SA,
        HintChanges {
            rev: 4,
            entries: HintEntries {
                toolsets: vec![o],
                ..Default::default()
            },
        },
        now,
    );
    assert_eq!(
        changes(&out),
        vec![Change::Retitled {
            toolset: "game".into(),
            instance: Some("g1".into()),
            title: "Go, move 30".into()
        }]
    );
    assert_eq!(
        s.open_instances().next().unwrap().title.as_deref(),
        Some("Go, move 30")
    );
}

#[test]
fn a_definition_takes_only_description_schema_and_annotations() {
    // Vector 20.
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    let mut other = serde_json::Map::new();
    other.insert("mcpl/class".into(), json!("admin"));
    let d = ToolDefinition {
        name: Some("steal".into()),
        description: Some("Play a move".into()),
        input_schema: Some(json!({"type": "object", "properties": {"move": {"enum": ["D4"]}}})),
        annotations: None,
        meta: Some(Meta {
            toolset: Some("other".into()),
            other,
            ..Default::default()
        }),
    };
    let h = ToolHint {
        name: "play".into(),
        definition: Some(d),
        ..Default::default()
    };
    let out = s.handle_hints(SA, msg(2, vec![h]), now);
    assert_eq!(
        changes(&out),
        vec![Change::Definition {
            tool: "play".into(),
            instance: None
        }]
    );
    let t = s.definition("play", None).unwrap();
    assert_eq!(t.name, "play");
    assert_eq!(
        t.meta,
        tools()[0].meta,
        "listed _meta kept: toolset game, no class"
    );
    assert_eq!(t.description.as_deref(), Some("Play a move"));
    assert_eq!(t.input_schema["properties"]["move"]["enum"], json!(["D4"]));
    assert_eq!(s.toolset_of("play"), Some("game"));
}

#[test]
fn an_instance_definition_lies_over_the_shared_one() {
    let now = Instant::now();
    let mut s = ready_with_games(HintConfig::ordered(), now, &["g1", "g2"]);
    let mut own = def("play", Some("g1"), "g1 moves");
    own.definition.as_mut().unwrap().description = None;
    own.definition.as_mut().unwrap().input_schema = Some(json!({"enum": ["A1"]}));
    s.handle_hints(SA, msg(2, vec![def("play", None, "shared"), own]), now);
    let g1 = s.definition("play", Some("g1")).unwrap();
    assert_eq!(
        (g1.description.as_deref(), &g1.input_schema),
        (Some("shared"), &json!({"enum": ["A1"]}))
    );
    let g2 = s.definition("play", Some("g2")).unwrap();
    assert_eq!(
        (g2.description.as_deref(), &g2.input_schema),
        (Some("shared"), &json!({"type": "object"}))
    );
    // A static tool's definition is the listed one (§5.1).
    let out = s.handle_hints(SA, msg(3, vec![def("clock", None, "hijack")]), now);
    assert!(out.is_empty());
    assert_eq!(
        s.definition("clock", None).unwrap().description.as_deref(),
        Some("clock declared")
    );
}

#[test]
fn presence_applies_by_stamp_whatever_the_message_fate() {
    // §3: early, stale and superseded messages still carry presence by stamp.
    let now = Instant::now();
    let mut s = ready(HintConfig::unordered(), now);
    assert_eq!(s.presence("clock"), Some(Presence::Static));
    let out = s.handle_hints(SA, msg(4, vec![pres("clock", Presence::Dynamic)]), now);
    assert_eq!(
        changes(&out),
        vec![Change::Presence {
            tool: "clock".into(),
            presence: Presence::Dynamic
        }]
    );
    assert_eq!(s.held_count(), 1, "held, yet its presence applied");
    // An older stamp does not undo it, though the message applies in order.
    let out = s.handle_hints(SA, msg(3, vec![pres("clock", Presence::Static)]), now);
    assert!(changes(&out).is_empty());
    // tools/list at rev 2 is older too; at rev 5 it is newer.
    assert!(s.handle_tools_list(&tools(), 2).is_empty());
    assert_eq!(s.presence("clock"), Some(Presence::Dynamic));
    let out = s.handle_tools_list(&tools(), 5);
    assert_eq!(
        changes(&out),
        vec![Change::Presence {
            tool: "clock".into(),
            presence: Presence::Static
        }]
    );
    // A stale message's presence counts when its stamp is newest (here: equal, 5).
    s.handle_hints(SA, msg(2, vec![]), now);
    s.handle_hints(SA, msg(5, vec![]), now);
    assert_eq!(s.last_rev(), 5);
    let out = s.handle_hints(
        SA,
        msg(
            5,
            vec![pres("clock", Presence::Dynamic), vis("roam", None, true)],
        ),
        now,
    );
    assert_eq!(
        changes(&out),
        vec![Change::Presence {
            tool: "clock".into(),
            presence: Presence::Dynamic
        }]
    );
    assert!(!s.is_visible("roam", None));
}

#[test]
fn a_toolset_tool_stays_dynamic_whatever_a_hint_says() {
    // Vector 16, in tools/list (pass is listed static) and in a hint change.
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    assert_eq!(s.presence("pass"), Some(Presence::Dynamic));
    assert!(
        s.handle_hints(SA, msg(2, vec![pres("play", Presence::Static)]), now)
            .is_empty()
    );
    assert_eq!(s.presence("play"), Some(Presence::Dynamic));
}

#[test]
fn a_duplicate_push_counts_its_rev_but_not_its_hints() {
    // Vector 35.
    let now = Instant::now();
    let mut s = ready(HintConfig::unordered(), now);
    s.handle_hints(push("e1"), msg(2, vec![vis("roam", None, true)]), now);
    let out = s.handle_hints(
        push("e1"),
        msg(
            3,
            vec![vis("roam", None, false), pres("clock", Presence::Dynamic)],
        ),
        now,
    );
    assert!(out.is_empty());
    assert_eq!((s.last_rev(), s.stats().duplicates), (3, 1));
    assert!(s.is_visible("roam", None) && s.presence("clock") == Some(Presence::Static));
    // Early: held as an empty message so the gap before it can close.
    assert!(
        s.handle_hints(push("e1"), msg(5, vec![vis("roam", None, false)]), now)
            .is_empty()
    );
    assert_eq!(s.held_count(), 1);
    s.handle_hints(SA, msg(4, vec![]), now);
    assert_eq!((s.last_rev(), s.held_count()), (5, 0));
    assert!(s.is_visible("roam", None));
    // At or below last: nothing at all, even on an ordered link.
    let mut o = ready(HintConfig::ordered(), now);
    o.handle_hints(push("e1"), msg(2, vec![]), now);
    assert!(
        o.handle_hints(push("e1"), msg(2, vec![vis("roam", None, true)]), now)
            .is_empty()
    );
    assert!(!o.is_recovering());
    assert_eq!(
        o.handle_hints(SA, msg(3, vec![]), now),
        vec![],
        "no false gap after it"
    );
}

#[test]
fn a_coalesced_push_with_hints_is_ignored_and_recovers() {
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    let carrier = Carrier::Push {
        event_id: "e9".into(),
        coalesce: true,
    };
    let out = s.handle_hints(carrier, msg(2, vec![vis("roam", None, true)]), now);
    assert_eq!(recovers(&out), vec![RecoverReason::Coalesced { rev: 2 }]);
    assert_eq!(out.len(), 1);
    assert!(!s.is_visible("roam", None));
    assert_eq!(
        (s.last_rev(), s.stats().coalesced),
        (2, 1),
        "its rev is read: rev 3 is no gap"
    );
    assert!(recovers(&s.handle_hints(SA, msg(3, vec![]), now)).is_empty());
}

#[test]
fn something_the_statement_does_not_cover_starts_the_next_recovery_after_this_one() {
    // §5.2: one recovery at a time, and nothing lost.
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    assert_eq!(recovers(&s.handle_hints(SA, msg(3, vec![]), now)).len(), 1);
    s.handle_statement(&msg(4, vec![]), &[], &[], now);
    // A gap after the statement (6 is missing 5), during step 2.
    assert!(s.handle_hints(SA, msg(6, vec![]), now).is_empty());
    let out = s.handle_tools_list(&tools(), 4);
    assert_eq!(recovers(&out), vec![RecoverReason::Again]);
    assert_eq!(s.stats().recoveries, 2);
    // A gap before the statement is covered by it.
    s.handle_hints(SA, msg(9, vec![]), now);
    s.handle_statement(&msg(10, vec![]), &[], &[], now);
    assert!(s.handle_tools_list(&tools(), 10).is_empty());
    assert!(!s.is_recovering());
}

#[test]
fn the_connect_time_statement_covers_what_came_before_it() {
    let now = Instant::now();
    let mut s = HintState::new(HintConfig::ordered());
    assert!(s.is_connecting() && !s.is_recovering());
    assert!(
        s.handle_hints(SA, msg(2, vec![vis("roam", None, true)]), now)
            .is_empty(),
        "gap: no recovery yet"
    );
    let out = s.handle_statement(&msg(3, vec![vis("roam", None, true)]), &[], &[], now);
    assert_eq!(changes(&out), vec![visible("roam", None, true)]);
    assert!(!s.is_connecting() && !s.is_recovering());
    assert_eq!(s.stats().recoveries, 0);
    // A coalesced push read beyond the connect-time statement is not covered by it.
    let mut u = HintState::new(HintConfig::unordered());
    let c = Carrier::Push {
        event_id: "e".into(),
        coalesce: true,
    };
    u.handle_hints(c, msg(5, vec![vis("roam", None, true)]), now);
    let out = u.handle_statement(&msg(3, vec![]), &[], &[], now);
    assert_eq!(recovers(&out), vec![RecoverReason::Again]);
}

#[test]
fn a_failed_recovery_starts_again() {
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    assert!(s.handle_recovery_failed().is_empty(), "nothing under way");
    s.handle_hints(SA, msg(3, vec![]), now);
    assert_eq!(
        recovers(&s.handle_recovery_failed()),
        vec![RecoverReason::Failed]
    );
    assert!(s.is_recovering());
    // Issue #42: one recovery (the gap), its read made again once: counted apart.
    assert_eq!((s.stats().recoveries, s.stats().reads_failed), (1, 1));
    s.handle_statement(&msg(5, vec![]), &[], &[], now);
    s.handle_tools_list(&tools(), 5);
    assert!(!s.is_recovering());
}

/// §4.3: a connection whose first `toolsets/list` failed has still read no statement, so
/// it stays connecting (not settled): before, it moved to a recovery's phase and looked
/// settled with nothing open, and the agent was told every open game closed (the
/// simulator's "end told 0 times" after a server restart).
#[test]
fn a_failed_connect_time_read_keeps_the_connection_connecting() {
    let now = Instant::now();
    let mut s = HintState::new(HintConfig::ordered());
    // Something read before the statement that the statement must cover.
    s.handle_hints(SA, msg(4, vec![vis("roam", None, true)]), now);
    assert_eq!(
        recovers(&s.handle_recovery_failed()),
        vec![RecoverReason::Failed]
    );
    assert!(s.is_connecting() && s.awaits_statement() && !s.is_recovering());
    assert!(s.open_instances().next().is_none());
    assert_eq!((s.stats().recoveries, s.stats().reads_failed), (0, 1));

    // The next read's statement settles it like a connect-time one (no tools/list step),
    // and still owes what it did not cover.
    let out = s.handle_statement(
        &msg(3, vec![vis("play", Some("g1"), true)]),
        &[open_rec("game", Some("g1"))],
        &[],
        now,
    );
    assert!(!s.is_connecting() && !s.awaits_tools_list());
    assert_eq!(s.open_instances().count(), 1);
    assert_eq!(recovers(&out), vec![RecoverReason::Again]);
}

#[test]
fn a_stale_statement_is_ignored_on_an_unordered_link() {
    let now = Instant::now();
    let mut s = ready(HintConfig::unordered(), now);
    s.handle_hints(SA, msg(2, vec![vis("roam", None, true)]), now);
    let out = s.handle_statement(
        &msg(2, vec![]),
        &[],
        &[ended("e1", "game", Some("g1"))],
        now,
    );
    assert_eq!(
        changes(&out),
        vec![Change::Ended(ended("e1", "game", Some("g1")))]
    );
    assert!(s.is_visible("roam", None) && recovers(&out).is_empty());
    let mut o = ready(HintConfig::ordered(), now);
    o.handle_hints(SA, msg(2, vec![]), now);
    let out = o.handle_statement(&msg(2, vec![]), &[], &[], now);
    assert_eq!(recovers(&out), vec![RecoverReason::Stale { rev: 2 }]);
}

#[test]
fn tools_list_moves_no_rev_and_forgets_unlisted_tools() {
    // Vector 27.
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    s.handle_hints(SA, msg(2, vec![vis("roam", None, true)]), now);
    let fewer: Vec<Tool> = tools().into_iter().filter(|t| t.name != "roam").collect();
    let out = s.handle_tools_list(&fewer, 9);
    assert_eq!(changes(&out), vec![visible("roam", None, false)]);
    assert_eq!((s.last_rev(), s.presence("roam")), (2, None));
    assert!(s.definition("roam", None).is_none());
}

#[test]
fn suggestions_are_reported_as_read_and_change_nothing() {
    // Vector 19.
    let now = Instant::now();
    let mut s = ready(HintConfig::unordered(), now);
    let sug = Suggestion {
        toolset: "game".into(),
        instance: Some("m1".into()),
        action: SuggestAction::Open,
        reason: "bob challenges you".into(),
        options: None,
    };
    let out = s.handle_hints(
        push("e1"),
        HintChanges {
            rev: 3,
            entries: HintEntries {
                suggest: vec![sug.clone()],
                ..Default::default()
            },
        },
        now,
    );
    assert_eq!(changes(&out), vec![Change::Suggested(sug)]);
    assert_eq!(s.open_instances().count(), 0);
    assert!(
        changes(&s.handle_hints(SA, msg(2, vec![]), now)).is_empty(),
        "not reported again when applied"
    );
}

#[test]
fn a_toolset_removed_from_the_manifest_closes_here_and_is_not_told_twice() {
    // Vector 33.
    let now = Instant::now();
    let mut s = ready(HintConfig::ordered(), now);
    let mut m = msg(2, vec![vis("play", Some("g1"), true)]);
    m.entries.toolsets = vec![
        ts("game", Some("g1"), ToolsetState::Open),
        ts("game", Some("g2"), ToolsetState::Open),
        ts("lobby", None, ToolsetState::Open),
    ];
    s.handle_hints(SA, m, now);
    let out = s.close_toolset("game");
    let closed = |i: &str| Output::Changed {
        cause: Cause::ManifestChange,
        change: Change::Closed {
            toolset: "game".into(),
            instance: Some(i.into()),
            reason: None,
            ended: None,
        },
    };
    assert_eq!(out, vec![closed("g1"), closed("g2")]);
    assert_eq!(
        s.open_instances()
            .map(|o| o.toolset.as_str())
            .collect::<Vec<_>>(),
        vec!["lobby"]
    );
    assert_eq!(s.visible_tools().count(), 0);
    // The server's close of g1, with its record: counted, not told again.
    let mut c = ts("game", Some("g1"), ToolsetState::Closed);
    c.ended = Some("e1".into());
    assert!(
        s.handle_hints(
            SA,
            HintChanges {
                rev: 3,
                entries: HintEntries {
                    toolsets: vec![c],
                    ..Default::default()
                }
            },
            now
        )
        .is_empty()
    );
    // g2's record in a statement: the same; a record of another end is still news.
    let records = [
        ended("e1", "game", Some("g1")),
        ended("e2", "game", Some("g2")),
        ended("e3", "game", Some("g0")),
    ];
    let out = s.handle_statement(&msg(4, vec![]), &[open_rec("lobby", None)], &records, now);
    assert_eq!(
        changes(&out),
        vec![Change::Ended(ended("e3", "game", Some("g0")))]
    );
}

#[test]
fn revs_at_the_top_of_the_range_do_not_panic() {
    // A session never panics on what a peer sends.
    let now = Instant::now();
    let mut s = ready(HintConfig::unordered(), now);
    s.handle_hints(SA, msg(u64::MAX, vec![vis("roam", None, true)]), now);
    assert_eq!(s.held_revs().collect::<Vec<_>>(), vec![u64::MAX]);
    s.handle_statement(&msg(u64::MAX - 1, vec![]), &[], &[], now);
    assert_eq!((s.last_rev(), s.held_count()), (u64::MAX, 0));
    assert!(s.is_visible("roam", None));
    s.handle_statement(&msg(u64::MAX, vec![]), &[], &[], now);
    s.handle_hints(SA, msg(u64::MAX, vec![]), now);
    assert_eq!(s.last_rev(), u64::MAX);
}

#[test]
fn a_full_hold_drops_and_recovers() {
    let now = Instant::now();
    let cfg = HintConfig {
        max_held: 2,
        ..HintConfig::unordered()
    };
    let mut s = ready(cfg, now);
    assert!(s.handle_hints(SA, msg(3, vec![]), now).is_empty());
    assert!(s.handle_hints(SA, msg(4, vec![]), now).is_empty());
    let out = s.handle_hints(SA, msg(6, vec![vis("roam", None, true)]), now);
    assert_eq!(
        recovers(&out),
        vec![RecoverReason::Gap {
            expected: 2,
            got: 6
        }]
    );
    assert_eq!(s.held_revs().collect::<Vec<_>>(), vec![3, 4]);
}

#[test]
fn a_hold_past_its_bytes_drops_and_recovers_and_gives_the_bytes_back() {
    // The bytes held are bounded, not only the count: two early messages carrying 40 KiB
    // definitions fit in 100 KiB, a third does not, and what was held is weighed no more
    // once applied.
    let now = Instant::now();
    let cfg = HintConfig {
        max_held_bytes: 100 << 10,
        ..HintConfig::unordered()
    };
    let mut s = ready(cfg, now);
    let heavy = "x".repeat(40 << 10);
    assert!(
        s.handle_hints(SA, msg(3, vec![def("roam", None, &heavy)]), now)
            .is_empty()
    );
    assert!(
        s.handle_hints(SA, msg(4, vec![def("roam", None, &heavy)]), now)
            .is_empty()
    );
    assert!(
        s.held_bytes() > 80 << 10 && s.held_bytes() <= 100 << 10,
        "{}",
        s.held_bytes()
    );
    let out = s.handle_hints(SA, msg(5, vec![def("roam", None, &heavy)]), now);
    assert_eq!(
        recovers(&out),
        vec![RecoverReason::Gap {
            expected: 2,
            got: 5
        }]
    );
    assert_eq!(s.held_revs().collect::<Vec<_>>(), vec![3, 4]);
    // Rev 2 comes: 3 and 4 apply in order, and nothing is weighed any more.
    s.handle_hints(SA, msg(2, vec![]), now);
    assert_eq!(s.held_revs().count(), 0);
    assert_eq!(s.held_bytes(), 0);
}

#[test]
fn a_lost_answer_recovers_and_during_a_read_one_more_follows() {
    let now = Instant::now();
    let mut s = ready(HintConfig::unordered(), now);
    let out = s.handle_lost_message();
    assert_eq!(recovers(&out), vec![RecoverReason::LostMessage]);
    // A second loss while that recovery reads: no second read now, one after it (the
    // read under way may predate the lost request).
    assert!(s.handle_lost_message().is_empty());
    let out = s.handle_statement(&msg(2, vec![]), &[], &[], now);
    assert!(recovers(&out).is_empty());
    let out = s.handle_tools_list(&tools(), 2);
    assert_eq!(recovers(&out), vec![RecoverReason::Again]);
    s.handle_statement(&msg(3, vec![]), &[], &[], now);
    let out = s.handle_tools_list(&tools(), 3);
    assert!(recovers(&out).is_empty());
    assert!(!s.is_recovering());
}

#[test]
fn the_shown_definition_is_the_definition_without_copying_the_tool() {
    let now = Instant::now();
    let mut s = ready_with_games(HintConfig::ordered(), now, &["g1", "g2"]);
    let schema = json!({"type": "object", "properties": {"move": {"type": "string"}}});
    // The shared definition changes the schema only; g1's own, the description only.
    let shared = ToolHint {
        name: "play".into(),
        definition: Some(ToolDefinition {
            input_schema: Some(schema.clone()),
            ..Default::default()
        }),
        ..Default::default()
    };
    s.handle_hints(
        Carrier::Standalone,
        msg(2, vec![shared, def("play", Some("g1"), "play in g1")]),
        now,
    );
    for (tool, instance) in [
        ("play", None),
        ("play", Some("g1")),
        ("play", Some("g2")),
        ("pass", Some("g1")),
        ("seek", None),
        ("nothing", None),
    ] {
        let full = s.definition(tool, instance);
        let shown = s.description_and_schema(tool, instance);
        assert_eq!(
            shown.map(|(d, s)| (d.cloned(), s.clone())),
            full.map(|t| (t.description, t.input_schema)),
            "{tool} in {instance:?}"
        );
    }
    let (d, sch) = s.description_and_schema("play", Some("g1")).unwrap();
    assert_eq!((d.map(String::as_str), sch), (Some("play in g1"), &schema));
    assert_eq!(s.instances_of("game"), ["g1", "g2"]);
    assert!(s.instances_of("lobby").is_empty() && s.instances_of("gam").is_empty());
}

#[test]
fn a_list_that_drops_most_tools_forgets_each_with_its_own_keys_only() {
    let now = Instant::now();
    let many: Vec<Tool> = (0..300)
        .map(|i| tool(&format!("t{i:03}"), None, Some(Presence::Dynamic)))
        .collect();
    let mut s = HintState::new(HintConfig::ordered());
    s.handle_tools_list(&many, 0);
    let visible: Vec<ToolHint> = many
        .iter()
        .flat_map(|t| [vis(&t.name, None, true), vis(&t.name, Some("x"), true)])
        .collect();
    s.handle_statement(&msg(1, visible), &[], &[], now);
    assert_eq!(s.visible_tools().count(), 600);
    // Every other tool goes: each is reported invisible where it was visible, in order.
    let kept: Vec<Tool> = many.iter().step_by(2).cloned().collect();
    let out = changes(&s.handle_tools_list(&kept, 1));
    let gone: Vec<(String, Option<String>)> = out
        .iter()
        .map(|c| match c {
            Change::Visibility {
                tool,
                instance,
                visible: false,
            } => (tool.clone(), instance.clone()),
            other => panic!("only tools gone are reported: {other:?}"),
        })
        .collect();
    let expected: Vec<(String, Option<String>)> = many
        .iter()
        .skip(1)
        .step_by(2)
        .flat_map(|t| [(t.name.clone(), None), (t.name.clone(), Some("x".into()))])
        .collect();
    assert_eq!(gone, expected);
    assert_eq!(s.visible_tools().count(), 300);
    assert!(s.is_visible("t000", Some("x")) && !s.is_visible("t001", None));
}

#[test]
fn a_name_listed_twice_is_compared_with_its_previous_entry() {
    let mut s = HintState::new(HintConfig::ordered());
    let first = tool("roam", None, Some(Presence::Dynamic));
    let mut second = first.clone();
    second.description = Some("roam, again".into());
    s.handle_tools_list(std::slice::from_ref(&first), 0);
    // The second entry differs from the first: its definition changed; the list's last
    // entry is what the state keeps.
    let out = changes(&s.handle_tools_list(&[first, second], 1));
    assert_eq!(
        out,
        [Change::Definition {
            tool: "roam".into(),
            instance: None
        }]
    );
    assert_eq!(
        s.definition("roam", None).and_then(|t| t.description),
        Some("roam, again".into())
    );
}

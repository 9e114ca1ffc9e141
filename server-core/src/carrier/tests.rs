//! The carrier choice as a second implementation would check it: vectors 2, 3, 8, 29 and
//! 31 as generated cases, and, over any delivery and any held changes, every change
//! written once, in the order it was stated (§5.2).

use super::*;
use mcpl_protocol::ToolsetState;
use mcpl_protocol::hints::{ToolHint, ToolsetChange};
use proptest::prelude::*;

/// A draft making `tools` visible (also used by `server-core/src/session/tests.rs`).
pub(crate) fn draft(tools: &[&str]) -> HintDraft {
    HintDraft {
        tools: tools
            .iter()
            .map(|t| ToolHint {
                name: (*t).into(),
                visible: Some(true),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub(crate) fn id(n: i64) -> Id {
    Id::Number(n)
}

fn answer(n: i64, kind: AnswerKind, fate: Fate, deferred: bool) -> AnswerFacts {
    AnswerFacts {
        request: id(n),
        kind,
        deferred,
        fate,
    }
}

const HINTED_PUSH: Conditions = Conditions {
    hinted: true,
    may_push: true,
};

#[test]
fn a_call_accumulates_its_changes_in_order() {
    let mut c = Carriers::default();
    assert_eq!(c.hold(id(1), draft(&["a"])), None);
    assert_eq!(c.hold(id(1), draft(&["b"])), None);
    assert_eq!(c.take_for(&id(2), true), None);
    assert_eq!(c.take_for(&id(1), true), Some(draft(&["a", "b"])));
    assert_eq!(c.flush(), None);
}

#[test]
fn boundary_01_a_reopen_of_a_held_close_pushes_the_close_out_first() {
    let set = |state| HintDraft {
        toolsets: vec![ToolsetChange {
            toolset: "game".into(),
            instance: Some("g2".into()),
            state,
            title: None,
            reason: None,
            ended: None,
        }],
        ..Default::default()
    };
    let mut c = Carriers::default();
    assert_eq!(c.hold(id(1), set(ToolsetState::Closed)), None);
    assert_eq!(
        c.hold(id(1), set(ToolsetState::Open)),
        Some(Carry::Hints(set(ToolsetState::Closed)))
    );
    // The same at a result: the held close goes alone, the re-open rides the result.
    let mut c = Carriers::default();
    assert_eq!(c.hold(id(1), set(ToolsetState::Closed)), None);
    let steps = c.deliver(
        Delivery {
            draft: set(ToolsetState::Open),
            answers: vec![answer(1, AnswerKind::Result, Fate::Awaited, false)],
            events: 0,
            hold: None,
        },
        HINTED_PUSH,
    );
    assert_eq!(
        steps,
        [
            Carry::Hints(set(ToolsetState::Closed)),
            Carry::Answer {
                n: 0,
                hints: Some(set(ToolsetState::Open))
            }
        ]
    );
}

#[test]
fn another_calls_changes_push_the_held_ones_out_first() {
    let mut c = Carriers::default();
    assert_eq!(c.hold(id(1), draft(&["a"])), None);
    assert_eq!(
        c.hold(id(2), draft(&["b"])),
        Some(Carry::Hints(draft(&["a"])))
    );
    // The first call's result now carries nothing: its changes went before.
    assert_eq!(c.take_for(&id(1), true), None);
    assert_eq!(c.flush(), Some(Carry::Hints(draft(&["b"]))));
}

#[test]
fn an_error_answer_is_written_bare_and_its_changes_follow_as_tools_hints() {
    let mut c = Carriers::default();
    assert_eq!(c.hold(id(1), draft(&["held"])), None);
    let steps = c.deliver(
        Delivery {
            draft: draft(&["a"]),
            answers: vec![answer(1, AnswerKind::Error, Fate::Awaited, false)],
            events: 2,
            hold: None,
        },
        HINTED_PUSH,
    );
    assert_eq!(
        steps,
        [
            Carry::Answer { n: 0, hints: None },
            Carry::Hints(draft(&["held", "a"]))
        ]
    );
}

#[test]
fn a_running_handlers_open_holds_the_changes_for_its_result() {
    let mut c = Carriers::default();
    let handler = |running| AnswerKind::Handler {
        call: Some(id(4)),
        running,
    };
    let steps = c.deliver(
        Delivery {
            draft: draft(&["a"]),
            answers: vec![answer(9, handler(true), Fate::Awaited, false)],
            events: 1,
            hold: None,
        },
        HINTED_PUSH,
    );
    assert!(
        steps.is_empty(),
        "held, and the result accounts for the event"
    );
    assert_eq!(c.take_for(&id(4), true), Some(draft(&["a"])));
    // A handler that stopped: the changes are pushed with the event.
    let steps = c.deliver(
        Delivery {
            draft: draft(&["b"]),
            answers: vec![answer(9, handler(false), Fate::Awaited, false)],
            events: 1,
            hold: None,
        },
        HINTED_PUSH,
    );
    assert_eq!(
        steps,
        [Carry::Push {
            n: 0,
            hints: Some(draft(&["b"]))
        }]
    );
}

/// A draft of `n` changes named `prefix0`, `prefix1`, …
fn named(prefix: &str, n: usize) -> HintDraft {
    let names: Vec<String> = (0..n).map(|i| format!("{prefix}{i}")).collect();
    draft(&names.iter().map(String::as_str).collect::<Vec<_>>())
}

fn fate() -> impl Strategy<Value = Fate> {
    prop_oneof![
        Just(Fate::Awaited),
        Just(Fate::Cancelled),
        Just(Fate::NobodyWaits)
    ]
}

fn kind() -> impl Strategy<Value = AnswerKind> {
    prop_oneof![
        Just(AnswerKind::Result),
        Just(AnswerKind::Error),
        Just(AnswerKind::RunHandler),
        (prop::option::of(0i64..3), any::<bool>()).prop_map(|(call, running)| {
            AnswerKind::Handler {
                call: call.map(id),
                running,
            }
        }),
    ]
}

fn answers() -> impl Strategy<Value = Vec<AnswerFacts>> {
    prop::collection::vec(
        (0i64..3, kind(), fate(), any::<bool>())
            .prop_map(|(n, k, f, deferred)| answer(n, k, f, deferred)),
        0..3,
    )
}

/// The changes a step writes, by name, in order.
fn written(steps: &[Carry]) -> Vec<String> {
    steps
        .iter()
        .flat_map(|s| match s {
            Carry::Hints(d) => Some(d),
            Carry::Answer { hints, .. } | Carry::Push { hints, .. } => hints.as_ref(),
            Carry::Run { .. } => None,
        })
        .flat_map(|d| d.tools.iter().map(|t| t.name.clone()))
        .collect()
}

fn carries_changes(step: &Carry) -> bool {
    match step {
        Carry::Hints(_) => true,
        Carry::Answer { hints, .. } | Carry::Push { hints, .. } => hints.is_some(),
        Carry::Run { .. } => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Vector 2: a call's result carries its consequences, and nothing is pushed for them.
    #[test]
    fn vector_02_a_result_carries_the_changes_and_no_push_follows(
        n in 1usize..4, events in 0usize..4, may_push in any::<bool>()
    ) {
        let mut c = Carriers::default();
        let steps = c.deliver(
            Delivery {
                draft: named("d", n),
                answers: vec![answer(1, AnswerKind::Result, Fate::Awaited, false)],
                events,
                hold: None,
            },
            Conditions { hinted: true, may_push },
        );
        prop_assert_eq!(steps, vec![Carry::Answer { n: 0, hints: Some(named("d", n)) }]);
    }

    /// Vector 3: changes explained by events ride the first push, as its `hints`.
    #[test]
    fn vector_03_the_first_push_carries_the_changes(n in 1usize..4, events in 1usize..4) {
        let mut c = Carriers::default();
        let steps = c.deliver(
            Delivery { draft: named("d", n), answers: vec![], events, hold: None },
            HINTED_PUSH,
        );
        let mut want = vec![Carry::Push { n: 0, hints: Some(named("d", n)) }];
        want.extend((1..events).map(|n| Carry::Push { n, hints: None }));
        prop_assert_eq!(steps, want);
    }

    /// Vector 8: a host not shown hints gets no changes, whatever carries them.
    #[test]
    fn vector_08_a_host_not_shown_hints_gets_no_changes(
        n in 0usize..4, answers in answers(), events in 0usize..3,
        hold in prop::option::of(0i64..3), may_push in any::<bool>()
    ) {
        let mut c = Carriers::default();
        let steps = c.deliver(
            Delivery { draft: named("d", n), answers, events, hold: hold.map(id) },
            Conditions { hinted: false, may_push },
        );
        prop_assert!(!steps.iter().any(carries_changes), "{:?}", steps);
        prop_assert_eq!(c.flush(), None);
    }

    /// Vector 29: a cancelled call gets no result; its own consequences go as
    /// `tools/hints` and are not pushed. A cancelled *deferred* call's delivery is what
    /// something else caused: it goes as it would have without the call.
    #[test]
    fn vector_29_a_cancelled_call_gets_no_result_and_its_changes_go_as_tools_hints(
        n in 1usize..4, events in 0usize..3, error in any::<bool>(), deferred in any::<bool>()
    ) {
        let kind = if error { AnswerKind::Error } else { AnswerKind::Result };
        let mut c = Carriers::default();
        let steps = c.deliver(
            Delivery {
                draft: named("d", n),
                answers: vec![answer(1, kind, Fate::Cancelled, deferred)],
                events,
                hold: None,
            },
            HINTED_PUSH,
        );
        let answered = steps.iter().any(|s| matches!(s, Carry::Answer { .. }));
        prop_assert!(!answered, "{:?}", steps);
        if deferred && events > 0 {
            prop_assert_eq!(&steps[0], &Carry::Push { n: 0, hints: Some(named("d", n)) });
            prop_assert_eq!(steps.len(), events);
        } else {
            prop_assert_eq!(steps, vec![Carry::Hints(named("d", n))]);
        }
    }

    /// Vector 31: where pushing is not allowed, changes go as `tools/hints`.
    #[test]
    fn vector_31_without_push_the_changes_go_as_tools_hints(
        n in 1usize..4, events in 0usize..4
    ) {
        let mut c = Carriers::default();
        let steps = c.deliver(
            Delivery { draft: named("d", n), answers: vec![], events, hold: None },
            Conditions { hinted: true, may_push: false },
        );
        prop_assert_eq!(steps, vec![Carry::Hints(named("d", n))]);
    }

    /// Over any delivery, with or without changes held before it: every change is
    /// written at most once, none of the delivery's is lost (written, or still held), and
    /// what was held before is written before the delivery's own (§5.2: in the order
    /// stated).
    #[test]
    fn every_change_is_written_once_and_in_the_order_stated(
        held in prop::option::of((0i64..3, 1usize..3)),
        n in 0usize..4, answers in answers(), events in 0usize..3,
        hold in prop::option::of(0i64..3), may_push in any::<bool>()
    ) {
        let mut c = Carriers::default();
        if let Some((call, k)) = held {
            prop_assert_eq!(c.hold(id(call), named("h", k)), None);
        }
        let steps = c.deliver(
            Delivery { draft: named("d", n), answers, events, hold: hold.map(id) },
            Conditions { hinted: true, may_push },
        );
        let mut out = written(&steps);
        let later = match c.flush() {
            Some(Carry::Hints(d)) => d.tools.iter().map(|t| t.name.clone()).collect(),
            _ => Vec::new(),
        };
        out.extend(later);
        let mut seen = std::collections::BTreeSet::new();
        for name in &out {
            prop_assert!(seen.insert(name.clone()), "{} written twice: {:?}", name, steps);
        }
        // The delivery's changes are all written or held: none is lost.
        for i in 0..n {
            prop_assert!(seen.contains(&format!("d{i}")), "d{} lost: {:?}", i, steps);
        }
        // Earlier changes first.
        let first_d = out.iter().position(|s| s.starts_with('d'));
        let last_h = out.iter().rposition(|s| s.starts_with('h'));
        if let (Some(d), Some(h)) = (first_d, last_h) {
            prop_assert!(h < d, "held after the delivery's own: {:?}", out);
        }
    }
}

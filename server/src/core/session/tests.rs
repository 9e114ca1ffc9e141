//! The rules that join a connection's requests and its held changes, as a host would see
//! them on the wire: vector 29 for a handler call and for a forwarded one, a call's held
//! changes riding in its result, a hold for a call no longer awaited, an answer nobody
//! waits for.

use super::*;
use crate::core::carrier::tests::{draft, id};

fn incoming(n: i64, kind: AnswerKind) -> Incoming {
    Incoming {
        request: id(n),
        kind,
        deferred: false,
    }
}

const HINTED: Conditions = Conditions {
    hinted: true,
    may_push: true,
};

/// A `tools/call` (id 1) whose principal sent it to the tool's handler, running with key
/// `key`; the handler then opened a toolset for its caller, changing `opened`.
fn a_running_handler_that_opened(core: &mut SessionCore<&'static str>, opened: &[&str]) -> u64 {
    core.forward(id(1));
    let run = core.deliver(
        HintDraft::default(),
        vec![incoming(1, AnswerKind::RunHandler)],
        0,
        None,
        HINTED,
    );
    assert_eq!(run.steps, [Carry::Run { n: 0 }]);
    let key = core.new_key();
    core.start(id(1), key, "stop-1");
    // The handler's own request (not the host's) is answered with the changes.
    let handler_open = Incoming {
        request: id(900),
        kind: AnswerKind::Handler {
            call: Some(id(1)),
            running: true,
        },
        deferred: false,
    };
    let held = core.deliver(draft(opened), vec![handler_open], 0, None, HINTED);
    assert!(
        !held.steps.iter().any(|s| matches!(s, Carry::Hints(_))),
        "held for the call's result, not sent: {:?}",
        held.steps
    );
    key
}

#[test]
fn a_handler_calls_result_carries_what_it_opened() {
    let mut core = SessionCore::default();
    let key = a_running_handler_that_opened(&mut core, &["game_play"]);
    assert_eq!(
        core.call_ended(&id(1), key, true),
        CallEnd::Respond(Some(draft(&["game_play"])))
    );
    assert!(!core.in_use(&id(1)));
}

#[test]
fn vector_29_a_cancelled_handler_call_sends_what_it_held_as_tools_hints_and_no_result() {
    let mut core = SessionCore::default();
    let key = a_running_handler_that_opened(&mut core, &["game_play"]);
    let (stop, steps) = core.cancel(&id(1), true).expect("in flight");
    assert_eq!(stop, Some("stop-1"), "the handler is stopped");
    assert_eq!(steps, [Carry::Hints(draft(&["game_play"]))]);
    assert_eq!(core.call_ended(&id(1), key, true), CallEnd::Cancelled);
    assert!(
        core.cancel(&id(1), true).is_none(),
        "a second cancel does nothing"
    );
}

#[test]
fn vector_29_a_cancelled_forwarded_call_gets_no_answer_and_its_changes_go_as_tools_hints() {
    let mut core = SessionCore::<()>::default();
    core.forward(id(2));
    let (stop, steps) = core.cancel(&id(2), true).expect("in flight");
    assert_eq!((stop, steps), (None, vec![]));
    assert!(
        core.in_use(&id(2)),
        "its id is in use until its answer is back"
    );
    let got = core.deliver(
        draft(&["a"]),
        vec![incoming(2, AnswerKind::Result)],
        0,
        None,
        HINTED,
    );
    assert_eq!(got.fates, [Fate::Cancelled]);
    assert_eq!(got.steps, [Carry::Hints(draft(&["a"]))]);
    assert!(!core.in_use(&id(2)));
}

#[test]
fn vector_02_a_calls_own_changes_ride_in_its_result_and_a_hold_for_it_is_dropped() {
    let mut core = SessionCore::<()>::default();
    core.forward(id(3));
    // The logic asked to hold for call 3, which this very delivery answers: nothing would
    // ever release the hold, so the changes go with the answer.
    let got = core.deliver(
        draft(&["b"]),
        vec![incoming(3, AnswerKind::Result)],
        0,
        Some(id(3)),
        HINTED,
    );
    assert_eq!(got.fates, [Fate::Awaited]);
    assert_eq!(
        got.steps,
        [Carry::Answer {
            n: 0,
            hints: Some(draft(&["b"]))
        }]
    );
    assert_eq!(core.flush(), None, "nothing left held");
}

#[test]
fn an_answer_nobody_waits_for_is_not_written_and_its_changes_still_go() {
    let mut core = SessionCore::<()>::default();
    let got = core.deliver(
        draft(&["c"]),
        vec![incoming(7, AnswerKind::Result)],
        0,
        None,
        HINTED,
    );
    assert_eq!(got.fates, [Fate::NobodyWaits]);
    assert_eq!(got.steps, [Carry::Hints(draft(&["c"]))]);
}

//! The requests core: unit cases, and a property test of random request traffic against
//! a model of what MCP asks (each request answered at most once, a cancelled one never,
//! ids not reused while in flight, progress only increasing).

use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

fn id(n: i64) -> Id {
    Id::Number(n)
}

#[test]
fn a_forwarded_request_is_answered_once_and_frees_its_id() {
    let mut r = Requests::<()>::default();
    r.forward(id(1));
    assert!(r.in_use(&id(1)) && r.awaits_answer(&id(1)));
    assert_eq!(r.settle(&id(1)), Settled::Answer);
    assert!(!r.in_use(&id(1)));
    assert_eq!(r.settle(&id(1)), Settled::Unknown, "answered once");
}

#[test]
fn vector_29_a_cancelled_forwarded_request_keeps_its_id_and_gets_no_answer() {
    let mut r = Requests::<()>::default();
    r.forward(id(1));
    assert_eq!(r.cancel(&id(1)), Cancelled::Forwarded);
    assert!(!r.awaits_answer(&id(1)), "nothing is held for it any more");
    assert!(r.in_use(&id(1)), "its answer is still to come");
    assert_eq!(
        r.cancel(&id(1)),
        Cancelled::Nothing,
        "a second cancel does nothing"
    );
    assert_eq!(r.settle(&id(1)), Settled::Cancelled);
    assert!(!r.in_use(&id(1)));
}

#[test]
fn a_cancelled_handler_call_is_stopped_and_its_late_end_writes_nothing() {
    let mut r = Requests::default();
    let key = r.new_key();
    r.start(id(7), key, "abort-7");
    assert_eq!(r.running(), 1);
    assert_eq!(r.cancel(&id(7)), Cancelled::Running("abort-7"));
    assert!(!r.finish(&id(7), key), "no response after a cancel");
    // The id is free again; a later call with it is another call.
    let later = r.new_key();
    r.start(id(7), later, "abort-7b");
    assert!(
        !r.finish(&id(7), key),
        "the first call's end is not the second's"
    );
    assert!(r.finish(&id(7), later));
}

#[test]
fn progress_only_increases_and_stops_with_the_call() {
    let mut r = Requests::default();
    let key = r.new_key();
    r.start(id(1), key, ());
    assert_eq!(r.progress(&id(1), key, 0.5), Ok(()));
    assert_eq!(
        r.progress(&id(1), key, 0.5),
        Err(ProgressRefused::NotIncreasing {
            last: 0.5,
            given: 0.5
        })
    );
    assert_eq!(r.progress(&id(1), key, 0.7), Ok(()));
    assert!(r.finish(&id(1), key));
    assert_eq!(r.progress(&id(1), key, 0.9), Err(ProgressRefused::Ended));
}

#[test]
fn stopping_hands_back_every_running_call() {
    let mut r = Requests::default();
    r.forward(id(1));
    let k = r.new_key();
    r.start(id(2), k, 2);
    let k = r.new_key();
    r.start(id(3), k, 3);
    let mut stopped = r.cancel_all();
    stopped.sort();
    assert_eq!(stopped, [2, 3]);
    assert!(!r.in_use(&id(1)) && r.running() == 0);
}

#[test]
fn issue38_05_a_reused_id_and_one_past_the_bound_are_refused_in_shared_words() {
    let mut r = Requests::<()>::default();
    assert_eq!(r.admit(&id(1), 2), Ok(()));
    r.forward(id(1));
    let reused = r.admit(&id(1), 2).unwrap_err();
    assert_eq!(reused.code, mcpl_protocol::ErrorCode::INVALID_REQUEST);
    assert_eq!(
        reused.message,
        "request id 1 is in use by a request still running"
    );
    assert_eq!(r.refuse_reused(&id(1)), Err(reused));
    r.forward(id(2));
    let full = r.admit(&id(3), 2).unwrap_err();
    assert_eq!(full.code, mcpl_protocol::ErrorCode::INVALID_REQUEST);
    assert_eq!(
        full.message,
        "2 requests are being answered already; wait for one"
    );
    // A reused id is told as such even when the table is full.
    assert_eq!(
        r.admit(&id(2), 2).unwrap_err().message,
        "request id 2 is in use by a request still running"
    );
    // A cancelled request keeps its place until its answer comes back, unwritten.
    assert_eq!(r.cancel(&id(2)), Cancelled::Forwarded);
    assert!(r.admit(&id(3), 2).is_err() && r.len() == 2);
    assert_eq!(r.settle(&id(2)), Settled::Cancelled);
    assert_eq!(r.admit(&id(3), 2), Ok(()));
    assert_eq!(
        r.admit(&Id::String("1".into()), 2),
        Ok(()),
        "\"1\" is not 1"
    );
}

/// One step of a host and a principal around one session.
#[derive(Debug, Clone)]
enum Op {
    /// A request to forward, if its id is free (as dispatch checks).
    Request(i64),
    /// The principal answers a forwarded request, perhaps with a handler to run.
    Answer(i64, bool),
    /// A running call's task ends.
    TaskEnds(i64),
    Cancel(i64),
    Progress(i64, u8),
    Stop,
}

fn op() -> impl Strategy<Value = Op> {
    let id = 0i64..4;
    prop_oneof![
        3 => id.clone().prop_map(Op::Request),
        3 => (id.clone(), any::<bool>()).prop_map(|(i, h)| Op::Answer(i, h)),
        2 => id.clone().prop_map(Op::TaskEnds),
        2 => id.clone().prop_map(Op::Cancel),
        2 => (id, 0u8..5).prop_map(|(i, p)| Op::Progress(i, p)),
        1 => Just(Op::Stop),
    ]
}

/// What MCP asks, kept naively: per id, the current request's state.
#[derive(Debug, Clone, PartialEq)]
enum Model {
    Forwarded { cancelled: bool },
    Running { key: u64, last: Option<u8> },
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn requests_follow_the_model(ops in proptest::collection::vec(op(), 1..60)) {
        let mut r = Requests::<u64>::default();
        let mut model: BTreeMap<i64, Model> = BTreeMap::new();
        // Responses written per request (by a serial number per accepted request).
        let mut serial: BTreeMap<i64, u64> = BTreeMap::new();
        let mut next_serial = 0u64;
        let mut answered: BTreeMap<u64, u32> = BTreeMap::new();
        let mut cancelled_serials = std::collections::BTreeSet::new();
        for op in ops {
            match op {
                Op::Request(i) => {
                    prop_assert_eq!(r.in_use(&id(i)), model.contains_key(&i));
                    if let std::collections::btree_map::Entry::Vacant(e) = model.entry(i) {
                        r.forward(id(i));
                        e.insert(Model::Forwarded { cancelled: false });
                        next_serial += 1;
                        serial.insert(i, next_serial);
                    }
                }
                Op::Answer(i, handler) => {
                    let got = r.settle(&id(i));
                    match model.get(&i).cloned() {
                        Some(Model::Forwarded { cancelled }) => {
                            prop_assert_eq!(got, if cancelled { Settled::Cancelled } else { Settled::Answer });
                            model.remove(&i);
                            if !cancelled && handler {
                                let key = r.new_key();
                                r.start(id(i), key, key);
                                model.insert(i, Model::Running { key, last: None });
                            } else if !cancelled {
                                *answered.entry(serial[&i]).or_default() += 1;
                            }
                        }
                        _ => prop_assert_eq!(got, Settled::Unknown),
                    }
                }
                Op::TaskEnds(i) => {
                    if let Some(Model::Running { key, .. }) = model.get(&i).cloned() {
                        prop_assert!(r.finish(&id(i), key));
                        model.remove(&i);
                        *answered.entry(serial[&i]).or_default() += 1;
                    }
                }
                Op::Cancel(i) => {
                    let got = r.cancel(&id(i));
                    match model.get(&i).cloned() {
                        Some(Model::Forwarded { cancelled: false }) => {
                            prop_assert_eq!(got, Cancelled::Forwarded);
                            model.insert(i, Model::Forwarded { cancelled: true });
                            cancelled_serials.insert(serial[&i]);
                        }
                        Some(Model::Running { key, .. }) => {
                            prop_assert_eq!(got, Cancelled::Running(key));
                            model.remove(&i);
                            cancelled_serials.insert(serial[&i]);
                            prop_assert!(!r.finish(&id(i), key), "a cancelled call's end writes nothing");
                        }
                        _ => prop_assert_eq!(got, Cancelled::Nothing),
                    }
                }
                Op::Progress(i, p) => {
                    match model.get_mut(&i) {
                        Some(Model::Running { key, last }) => {
                            let got = r.progress(&id(i), *key, f64::from(p));
                            if last.is_some_and(|l| p <= l) {
                                prop_assert!(got.is_err());
                            } else {
                                prop_assert_eq!(got, Ok(()));
                                *last = Some(p);
                            }
                        }
                        _ => {
                            // Any key: nothing runs under this id.
                            prop_assert_eq!(r.progress(&id(i), 1, f64::from(p)), Err(ProgressRefused::Ended));
                        }
                    }
                }
                Op::Stop => {
                    let mut got = r.cancel_all();
                    got.sort();
                    let mut want: Vec<u64> = model.iter().filter_map(|(i, m)| match m {
                        Model::Running { key, .. } => { cancelled_serials.insert(serial[i]); Some(*key) }
                        Model::Forwarded { .. } => None,
                    }).collect();
                    want.sort();
                    prop_assert_eq!(got, want);
                    model.clear();
                }
            }
            prop_assert_eq!(r.running(), model.values().filter(|m| matches!(m, Model::Running { .. })).count());
            for (i, m) in &model {
                prop_assert!(r.in_use(&id(*i)));
                prop_assert_eq!(r.awaits_answer(&id(*i)), matches!(m, Model::Forwarded { cancelled: false }));
            }
        }
        // Each request answered at most once; a cancelled one never.
        for (s, n) in &answered {
            prop_assert!(*n <= 1, "request {} answered {} times", s, n);
            prop_assert!(!cancelled_serials.contains(s), "cancelled request {} was answered", s);
        }
    }
}

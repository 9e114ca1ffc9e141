//! The rev writer's unit tests.
use super::*;
use mcpl_protocol::hints::ToolHint;
use mcpl_protocol::jsonrpc::Notification;
use mcpl_protocol::method::ToolHints;
use std::sync::Arc;
use tokio::sync::mpsc;

fn one_change(tool: &str) -> HintDraft {
    HintDraft {
        tools: vec![ToolHint {
            name: tool.into(),
            visible: Some(true),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn hints_message(h: &HintChanges) -> Message {
    Notification::new::<ToolHints>(&h.clone().into()).into()
}

/// The rev a queued `tools/hints` carries.
fn rev_of(message: &Message) -> u64 {
    match message {
        Message::Notification(n) => n.params_as::<HintChanges>().expect("tools/hints").rev,
        other => panic!("expected tools/hints, got {other:?}"),
    }
}

fn writer(capacity: usize) -> (RevWriter<Outbound>, mpsc::Receiver<Message>) {
    let (tx, rx) = mpsc::channel(capacity);
    (RevWriter::new(Outbound::new(tx)), rx)
}

fn drain(rx: &mut mpsc::Receiver<Message>) -> Vec<Message> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

#[test]
fn revs_are_consecutive_and_queued_in_order() {
    let (w, mut rx) = writer(8);
    assert_eq!(w.last(), 0);
    assert_eq!(
        w.enqueue_stamped(one_change("a"), |h| hints_message(&h)),
        Ok(1)
    );
    assert_eq!(
        w.enqueue_stamped(one_change("b"), |h| hints_message(&h)),
        Ok(2)
    );
    assert_eq!(w.last(), 2);
    let revs: Vec<u64> = drain(&mut rx).iter().map(rev_of).collect();
    assert_eq!(revs, [1, 2]);
}

#[test]
fn only_changes_and_statements_take_revs() {
    let (w, mut rx) = writer(8);
    let plain = |h: Option<HintChanges>| {
        assert!(h.is_none(), "an empty draft is written without hints");
        hints_message(&HintChanges::default())
    };
    assert_eq!(w.enqueue_if_any(HintDraft::new(), plain), Ok(None));
    assert_eq!(w.last(), 0);
    let got = w.enqueue_if_any(one_change("a"), |h| hints_message(&h.expect("a change")));
    assert_eq!(got, Ok(Some(1)));
    // §4.3, vector 38: a statement takes the next rev even when empty.
    assert_eq!(
        w.enqueue_stamped(HintDraft::new(), |h| hints_message(&h)),
        Ok(2)
    );
    // §3: tools/list names the last rev and takes none.
    let mut named = None;
    w.enqueue_at_last(|last| {
        named = Some(last);
        hints_message(&HintChanges::default())
    })
    .expect("room");
    assert_eq!(named, Some(2));
    assert_eq!(w.last(), 2);
    assert_eq!(drain(&mut rx).len(), 4);
}

#[test]
fn a_full_queue_is_reported_and_takes_no_rev() {
    let (w, mut rx) = writer(1);
    assert_eq!(
        w.enqueue_stamped(one_change("a"), |h| hints_message(&h)),
        Ok(1)
    );
    assert_eq!(
        w.enqueue_stamped(one_change("b"), |h| hints_message(&h)),
        Err(EnqueueError::Full)
    );
    assert_eq!(w.last(), 1, "the refused message spent no rev");
    assert_eq!(drain(&mut rx).iter().map(rev_of).collect::<Vec<_>>(), [1]);
    assert_eq!(
        w.enqueue_stamped(one_change("c"), |h| hints_message(&h)),
        Ok(2)
    );
    assert_eq!(drain(&mut rx).iter().map(rev_of).collect::<Vec<_>>(), [2]);
}

#[test]
fn a_closed_link_is_reported_and_takes_no_rev() {
    let (w, rx) = writer(4);
    drop(rx);
    assert_eq!(
        w.enqueue_stamped(one_change("a"), |h| hints_message(&h)),
        Err(EnqueueError::Closed)
    );
    assert_eq!(
        w.enqueue(hints_message(&HintChanges::default())),
        Err(EnqueueError::Closed)
    );
    assert_eq!(w.last(), 0);
}

#[test]
fn a_panicking_build_takes_no_rev_and_the_writer_goes_on() {
    let (w, mut rx) = writer(4);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = w.enqueue_stamped(one_change("a"), |_| panic!("build failed"));
    }));
    assert!(panicked.is_err());
    assert_eq!(w.last(), 0);
    assert_eq!(
        w.enqueue_stamped(one_change("b"), |h| hints_message(&h)),
        Ok(1)
    );
    assert_eq!(drain(&mut rx).iter().map(rev_of).collect::<Vec<_>>(), [1]);
}

#[test]
fn many_threads_on_one_connection_queue_in_rev_order() {
    const THREADS: u64 = 8;
    const EACH: u64 = 200;
    let (w, mut rx) = writer((THREADS * EACH) as usize);
    let w = Arc::new(w);
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let w = Arc::clone(&w);
            std::thread::spawn(move || {
                let name = format!("t{t}");
                let mut mine = Vec::new();
                for _ in 0..EACH {
                    let rev = w.enqueue_stamped(one_change(&name), |h| hints_message(&h));
                    mine.push(rev.expect("room for every message"));
                }
                mine
            })
        })
        .collect();
    for h in handles {
        let mine = h.join().expect("a writer thread");
        assert!(
            mine.windows(2).all(|p| p[0] < p[1]),
            "a thread's own revs rise"
        );
    }
    let revs: Vec<u64> = drain(&mut rx).iter().map(rev_of).collect();
    assert_eq!(revs, (1..=THREADS * EACH).collect::<Vec<_>>());
}

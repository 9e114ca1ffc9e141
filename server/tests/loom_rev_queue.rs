//! Model checks (loom) of one connection's write path, `session::rev_writer::RevWriter`, with
//! several threads writing at once, as Streamable HTTP request handlers would (§5.2):
//!
//! - the revs in the queue are 1, 2, 3, … with no gap and no duplicate;
//! - the queue holds the messages in rev order;
//! - a message without changes takes no rev, and `tools/list`'s last rev names exactly
//!   the revs queued before it (§3);
//! - a full queue refuses a message without spending a rev.
//!
//! Loom runs each model under every interleaving of its threads. To show these checks can
//! fail, the file also models the two classic broken writers — the rev taken under the lock
//! but enqueued after it is released (out of order), and the counter copied, bumped and
//! stored back (duplicates) — and loom finds the violation in each.
//!
//! `cargo test -p mcpl-server --features loom --test loom_rev_queue --release`

#![cfg(feature = "loom")]

use loom::sync::{Arc, Mutex, mpsc};
use loom::thread;
use mcpl_protocol::hints::{HintChanges, ToolHint};
use mcpl_server::session::rev_writer::{
    Enqueue, EnqueueError, HintDraft, LoomRevWriter, Sequencer,
};
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the queue carries in these models.
#[derive(Debug)]
enum Queued {
    /// A message carrying hint changes, from writer `writer`.
    Hints { writer: usize, hints: HintChanges },
    /// A message without changes.
    Plain,
    /// A `tools/list` result naming the last rev (§3).
    List { last: u64 },
}

/// A bounded queue on loom's channel, so every enqueue is a point where loom may switch
/// threads.
struct LoomQueue {
    tx: mpsc::Sender<Queued>,
    room: usize,
}

impl Enqueue for LoomQueue {
    type Item = Queued;

    fn try_enqueue(&mut self, item: Queued) -> Result<(), EnqueueError> {
        if self.room == 0 {
            return Err(EnqueueError::Full);
        }
        self.tx.send(item).map_err(|_| EnqueueError::Closed)?;
        self.room -= 1;
        Ok(())
    }
}

/// One change from writer `writer`: the tool `w{writer}` becomes visible.
fn change_from(writer: usize) -> HintDraft {
    HintDraft {
        tools: vec![ToolHint {
            name: format!("w{writer}"),
            visible: Some(true),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn from(writer: usize) -> impl FnOnce(HintChanges) -> Queued {
    move |hints| Queued::Hints { writer, hints }
}

/// Everything queued, in queue order.
fn drain(rx: &mpsc::Receiver<Queued>) -> Vec<Queued> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

/// The properties of §5.2 and §3 over a queue's contents, `numbered` being how many
/// messages carry changes.
fn check_queue(queued: &[Queued], numbered: u64) {
    let mut revs = Vec::new();
    for q in queued {
        match q {
            Queued::Hints { writer, hints } => {
                assert_eq!(
                    hints.entries.tools[0].name,
                    format!("w{writer}"),
                    "a message carries its own writer's changes"
                );
                revs.push(hints.rev);
            }
            Queued::List { last } => assert_eq!(
                *last,
                revs.len() as u64,
                "tools/list names exactly the revs queued before it: {queued:?}"
            ),
            Queued::Plain => {}
        }
    }
    let mut sorted = revs.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (1..=numbered).collect::<Vec<_>>(),
        "revs not consecutive from 1 without duplicates: {queued:?}"
    );
    assert_eq!(revs, sorted, "enqueued out of rev order: {queued:?}");
}

/// Runs `model` under every interleaving; returns how many executions loom explored.
fn explore(model: impl Fn() + Sync + Send + 'static) -> usize {
    // std's atomics, not loom's: the count is outside what loom explores.
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&runs);
    loom::model(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        model();
    });
    runs.load(Ordering::Relaxed)
}

fn writer(room: usize) -> (Arc<LoomRevWriter<LoomQueue>>, mpsc::Receiver<Queued>) {
    let (tx, rx) = mpsc::channel();
    (Arc::new(LoomRevWriter::new(LoomQueue { tx, room })), rx)
}

#[test]
fn two_writers_of_two_messages_queue_in_rev_order() {
    let runs = explore(|| {
        let (w, rx) = writer(usize::MAX);
        let threads: Vec<_> = (0..2)
            .map(|t| {
                let w = Arc::clone(&w);
                thread::spawn(move || {
                    let first = w.enqueue_stamped(change_from(t), from(t)).expect("room");
                    let second = w.enqueue_stamped(change_from(t), from(t)).expect("room");
                    assert!(first < second, "a writer's own revs rise");
                })
            })
            .collect();
        for t in threads {
            t.join().expect("writer");
        }
        check_queue(&drain(&rx), 4);
        assert_eq!(w.last(), 4);
    });
    assert!(runs > 1, "loom explored {runs} interleavings");
    println!("two writers × two messages: {runs} interleavings");
}

#[test]
fn numbered_plain_and_list_messages_from_three_writers() {
    let runs = explore(|| {
        let (w, rx) = writer(usize::MAX);
        let numbered = {
            let w = Arc::clone(&w);
            thread::spawn(move || {
                w.enqueue_stamped(change_from(0), from(0)).expect("room");
            })
        };
        let mixed = {
            let w = Arc::clone(&w);
            thread::spawn(move || {
                // §5.2: an empty draft takes no rev; a change does.
                let none = w.enqueue_if_any(HintDraft::new(), |h| {
                    assert!(h.is_none());
                    Queued::Plain
                });
                assert_eq!(none, Ok(None));
                let some = w.enqueue_if_any(change_from(1), |h| Queued::Hints {
                    writer: 1,
                    hints: h.expect("a change is numbered"),
                });
                assert!(matches!(some, Ok(Some(_))));
            })
        };
        let list = {
            let w = Arc::clone(&w);
            thread::spawn(move || {
                w.enqueue_at_last(|last| Queued::List { last })
                    .expect("room");
            })
        };
        for t in [numbered, mixed, list] {
            t.join().expect("writer");
        }
        check_queue(&drain(&rx), 2);
    });
    assert!(runs > 1, "loom explored {runs} interleavings");
    println!("numbered, plain and list messages from three writers: {runs} interleavings");
}

#[test]
fn a_full_queue_refuses_one_writer_and_spends_no_rev() {
    let runs = explore(|| {
        let (w, rx) = writer(2);
        let threads: Vec<_> = (0..3)
            .map(|t| {
                let w = Arc::clone(&w);
                thread::spawn(move || w.enqueue_stamped(change_from(t), from(t)))
            })
            .collect();
        let outcomes: Vec<_> = threads
            .into_iter()
            .map(|t| t.join().expect("writer"))
            .collect();
        let refused = outcomes
            .iter()
            .filter(|o| **o == Err(EnqueueError::Full))
            .count();
        assert_eq!(refused, 1, "{outcomes:?}");
        check_queue(&drain(&rx), 2);
        assert_eq!(w.last(), 2, "the refused message spent no rev");
    });
    assert!(runs > 1, "loom explored {runs} interleavings");
    println!("three writers, room for two: {runs} interleavings");
}

/// The broken writer: takes the rev under the lock, enqueues after releasing it.
fn broken_stamp_then_enqueue(writers: usize, each: usize) {
    let (tx, rx) = mpsc::channel();
    let sequencer = Arc::new(Mutex::new(Sequencer::new()));
    let threads: Vec<_> = (0..writers)
        .map(|t| {
            let (sequencer, tx) = (Arc::clone(&sequencer), tx.clone());
            thread::spawn(move || {
                for _ in 0..each {
                    let hints = sequencer.lock().unwrap().stamp(change_from(t));
                    // The lock is released here: another writer may enqueue a later rev first.
                    tx.send(Queued::Hints { writer: t, hints }).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("writer");
    }
    check_queue(&drain(&rx), (writers * each) as u64);
}

#[test]
fn the_broken_writer_passes_with_a_single_thread() {
    // So the failure below comes from the interleaving, not from the model itself.
    explore(|| broken_stamp_then_enqueue(1, 2));
}

#[test]
#[should_panic(expected = "enqueued out of rev order")]
fn loom_finds_a_rev_enqueued_after_the_lock_is_released() {
    explore(|| broken_stamp_then_enqueue(2, 1));
}

#[test]
#[should_panic(expected = "revs not consecutive from 1 without duplicates")]
fn loom_finds_a_counter_copied_and_stored_back() {
    explore(|| {
        let (tx, rx) = mpsc::channel();
        let sequencer = Arc::new(Mutex::new(Sequencer::new()));
        let threads: Vec<_> = (0..2)
            .map(|t| {
                let (sequencer, tx) = (Arc::clone(&sequencer), tx.clone());
                thread::spawn(move || {
                    // Copy under one lock, bump, store back under another: a lost update.
                    let mut mine = sequencer.lock().unwrap().clone();
                    let hints = mine.stamp(change_from(t));
                    let mut shared = sequencer.lock().unwrap();
                    *shared = mine;
                    tx.send(Queued::Hints { writer: t, hints }).unwrap();
                    drop(shared);
                })
            })
            .collect();
        for t in threads {
            t.join().expect("writer");
        }
        check_queue(&drain(&rx), 2);
    });
}

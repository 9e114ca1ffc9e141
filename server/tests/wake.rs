//! Waking an instance from outside its actor (`InstanceContext::spawn_blocking`,
//! `InstanceContext::waker`): work on a blocking thread hands its result back to the logic
//! with one wake and no timer; a waker reaches the logic from any thread, and does nothing
//! once the instance ended.

use crate::support;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    Audience, Blocking, BlockingError, CallId, Event, InstanceContext, InstanceLogic,
    InstanceWaker, Reply, Server, Started, ToolCall, Toolset,
};
use serde::Deserialize;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::ThreadId;
use support::{Client, call, expect_push, hinted, open, result, shown, text};

const WORK: u64 = 1;
const OUTSIDE: u64 = 2;

/// What the test and the logic share.
#[derive(Default)]
struct Probe {
    /// Every wake the logic saw, with its tag.
    wakes: Mutex<Vec<u64>>,
    /// The thread each step and each piece of work ran on.
    step_thread: Mutex<Option<ThreadId>>,
    work_thread: Mutex<Option<ThreadId>>,
    /// The work waits for its input here, so the test decides when it finishes.
    input: Mutex<Option<mpsc::Receiver<u32>>>,
    /// The waker `arm` hands out.
    waker: Mutex<Option<InstanceWaker>>,
    steps: AtomicUsize,
}

#[derive(Deserialize)]
struct Compute {
    #[serde(default)]
    panic: bool,
}

struct Calc {
    probe: Arc<Probe>,
    work: Option<(Blocking<u32>, CallId)>,
}

impl InstanceLogic for Calc {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        self.probe.steps.fetch_add(1, Ordering::SeqCst);
        *self.probe.step_thread.lock().unwrap() = Some(std::thread::current().id());
        match call.tool() {
            "compute" => {
                let args: Compute = match call.args() {
                    Ok(a) => a,
                    Err(e) => return e.into(),
                };
                let probe = self.probe.clone();
                let work = cx.spawn_blocking(
                    move || {
                        *probe.work_thread.lock().unwrap() = Some(std::thread::current().id());
                        let input = probe.input.lock().unwrap().take().expect("an input");
                        let n = input.recv().expect("the test sends the input");
                        assert!(!args.panic, "the work was told to panic");
                        n * 2
                    },
                    WORK,
                );
                self.work = Some((work, call.id()));
                Reply::Later
            }
            "arm" => {
                *self.probe.waker.lock().unwrap() = Some(cx.waker());
                Reply::text("Armed.")
            }
            other => Reply::error(format!("no {other}")),
        }
    }

    fn wake(&mut self, tag: u64, cx: &mut InstanceContext) {
        self.probe.wakes.lock().unwrap().push(tag);
        match tag {
            WORK => {
                let Some((mut work, call)) = self.work.take() else {
                    return;
                };
                let answer = match work.try_take() {
                    Some(Ok(n)) => CallToolResult::text(format!("Result: {n}")),
                    Some(Err(BlockingError::Panicked(_))) => {
                        CallToolResult::error("The work panicked.")
                    }
                    Some(Err(_)) => CallToolResult::error("The work never ran."),
                    None => return self.work = Some((work, call)),
                };
                cx.answer(call, Ok(answer));
            }
            OUTSIDE => {
                cx.show(Audience::All, "done");
                cx.event(Audience::All, Event::text("Woken from outside."));
            }
            _ => {}
        }
    }
}

fn server(probe: Arc<Probe>) -> Server {
    let calc = Toolset::new("calc")
        .tool(Tool::new(
            "compute",
            "Computes on a blocking thread",
            json!({"type": "object"}),
        ))
        .tool(Tool::new(
            "arm",
            "Hands out a waker",
            json!({"type": "object"}),
        ))
        .hidden_tool(Tool::new(
            "done",
            "Shown when woken",
            json!({"type": "object"}),
        ))
        .on_open(move |_, _| {
            Ok(Started::new(Calc {
                probe: probe.clone(),
                work: None,
            }))
        });
    Server::builder("test-server", "0.1.0")
        .toolset(calc)
        .build()
        .unwrap()
}

#[actix::test]
async fn blocking_work_hands_its_result_back_with_one_wake_and_no_timer() {
    let probe = Arc::new(Probe::default());
    let (tx, rx) = mpsc::channel();
    *probe.input.lock().unwrap() = Some(rx);
    let server = server(probe.clone());
    let (mut alice, _s) = hinted(&server, "alice").await;
    let opened = alice.exchange(open(1, "calc", None, None)).await;
    assert_eq!(opened["id"], 1, "{opened:#}");
    alice.send(call(2, "compute", json!({}))).await;
    // The work blocks on its input: the call waits, and the instance is not woken.
    let ping = alice
        .exchange(json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}))
        .await;
    assert_eq!(ping["id"], "p");
    assert!(probe.wakes.lock().unwrap().is_empty());
    tx.send(21).unwrap();
    alice
        .expect(result(json!(2), json!({"content": [text("Result: 42")]})))
        .await;
    assert_eq!(
        *probe.wakes.lock().unwrap(),
        [WORK],
        "woken once, by the work"
    );
    let step = probe.step_thread.lock().unwrap().unwrap();
    let work = probe.work_thread.lock().unwrap().unwrap();
    assert_ne!(step, work, "the work ran off the instance's thread");
}

#[actix::test]
async fn work_that_panics_is_reported_to_the_logic() {
    let probe = Arc::new(Probe::default());
    let (tx, rx) = mpsc::channel();
    *probe.input.lock().unwrap() = Some(rx);
    let server = server(probe.clone());
    let (mut alice, _s) = hinted(&server, "alice").await;
    alice.exchange(open(1, "calc", None, None)).await;
    tx.send(1).unwrap();
    let got = alice
        .exchange(call(2, "compute", json!({"panic": true})))
        .await;
    assert_eq!(
        got,
        result(
            json!(2),
            json!({"content": [text("The work panicked.")], "isError": true})
        )
    );
    assert_eq!(*probe.wakes.lock().unwrap(), [WORK]);
}

#[actix::test]
async fn a_waker_reaches_the_logic_from_any_thread_until_the_instance_ends() {
    let probe = Arc::new(Probe::default());
    let server = server(probe.clone());
    let (mut alice, _s) = hinted(&server, "alice").await;
    alice.exchange(open(1, "calc", None, None)).await;
    let armed = alice.exchange(call(2, "arm", json!({}))).await;
    assert_eq!(
        armed,
        result(json!(2), json!({"content": [text("Armed.")]}))
    );
    let waker = probe.waker.lock().unwrap().clone().expect("armed");
    let w = waker.clone();
    std::thread::spawn(move || w.wake(OUTSIDE)).join().unwrap();
    // A wake is a step nobody awaits: its changes ride on its event (§5.3).
    expect_push(
        &mut alice,
        1,
        json!({"featureSet": "default", "tags": ["surface:activity"],
            "payload": {"content": [text("Woken from outside.")]},
            "hints": {"rev": 2, "tools": [shown("done", None, true)]},
            "toolset": "calc"}),
    )
    .await;
    assert_eq!(*probe.wakes.lock().unwrap(), [OUTSIDE]);
    let closed = alice
        .exchange(support::request(
            json!(3),
            "toolsets/close",
            json!({"toolset": "calc"}),
        ))
        .await;
    assert_eq!(closed["id"], 3, "{closed:#}");
    // Ended: the same waker does nothing.
    waker.wake(OUTSIDE);
    tokio::time::pause();
    alice.expect_silence().await;
    assert_eq!(*probe.wakes.lock().unwrap(), [OUTSIDE]);
}

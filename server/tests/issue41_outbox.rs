//! Issue #41 (`docs/ownership.md` §3): nothing lost between servers. An instance's
//! batches for a player whose principal runs on another server go from its **outbox** —
//! numbered, kept with the instance's record, sent again until acknowledged, in order —
//! and the principal keeps the last number it applied in its own record, so it drops
//! what it applied even when read again elsewhere. The send queues are bounded.
//!
//! The servers are in one process ([`InProcessPeers`]) behind a [`Lossy`] wrapper the
//! test steers: it loses the first send of a chosen batch, or delivers it and loses its
//! acknowledgement, or loses every batch for a while. Every player talks raw JSON on a
//! real socket. Nothing sleeps: every wait is for a message or a count the wrapper keeps.

use crate::raw;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::peers::{Inbox, PeerFuture};
use mcpl_server::{
    CallId, Durable, Event, InProcessPeers, InstanceContext, InstanceLogic, MemoryStore,
    ParticipantId, PeerAddress, PeerBounds, PeerError, Peers, Principal, Reply, Server, Started,
    Store, ToolCall, Toolset,
};
use mcpl_testkit::msg::{PROTOCOL_VERSION, initialized, mcpl_capabilities, open, request, result};
use mcpl_testkit::within;
use raw::Lines;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Semaphore, watch};

/// `poke` adds one and tells its caller "poked n" at once; it answers n at its next wake
/// (a timer of no time), so each poke is two batches for its caller: the event, then the
/// answer. Each answer is counted on `woke` once its step ran.
#[derive(Serialize, Deserialize)]
struct Counter {
    n: u64,
    #[serde(skip)]
    waiting: VecDeque<CallId>,
    #[serde(skip)]
    woke: Option<watch::Sender<u64>>,
}

impl InstanceLogic for Counter {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        match call.tool() {
            "poke" => {
                self.n += 1;
                cx.event(call.caller(), Event::text(format!("poked {}", self.n)));
                self.waiting.push_back(call.id());
                cx.wake_after(Duration::ZERO, self.n);
                Reply::Later
            }
            "board" => Reply::text(self.n.to_string()),
            _ => Reply::error("no such tool"),
        }
    }

    fn wake(&mut self, n: u64, cx: &mut InstanceContext) {
        if let Some(call) = self.waiting.pop_front() {
            cx.answer(call, Ok(CallToolResult::text(n.to_string())));
        }
        if let Some(woke) = &self.woke {
            woke.send_modify(|answered| *answered += 1);
        }
    }
}

impl Durable for Counter {
    const FORMAT: u32 = 1;
}

/// How one attempt at sending a batch fails.
#[derive(Clone, Copy, Debug)]
enum Loss {
    /// Lost on its way: never delivered.
    Send,
    /// Delivered and applied, its acknowledgement lost.
    Ack,
}

#[derive(Default)]
struct Rules {
    /// By batch number: how its next attempts fail, in turn.
    losses: HashMap<u64, VecDeque<Loss>>,
    /// Every batch for a principal is lost.
    blackhole: bool,
    /// The bodies of the batches delivered to principals, in order.
    delivered: Vec<Vec<u8>>,
    /// Calls to instances wait for a permit (when set).
    gate: Option<Arc<Semaphore>>,
    /// Invitations to principals wait for a permit (when set).
    invitations: Option<Arc<Semaphore>>,
}

/// [`InProcessPeers`] losing what the test says. Clones share their rules.
#[derive(Clone)]
struct Lossy {
    inner: InProcessPeers,
    rules: Arc<Mutex<Rules>>,
    /// How many batch sends it lost (or whose acknowledgement it lost).
    lost: watch::Sender<usize>,
    /// How many numbered messages to instances were acknowledged.
    acked: watch::Sender<usize>,
    /// How many pokes the counter answered (its steps ran), on any server.
    woke: watch::Sender<u64>,
    /// How many batches principals acknowledged.
    applied: watch::Sender<usize>,
}

impl Lossy {
    fn new() -> Self {
        Lossy {
            inner: InProcessPeers::new(),
            rules: Arc::default(),
            lost: watch::Sender::new(0),
            acked: watch::Sender::new(0),
            woke: watch::Sender::new(0),
            applied: watch::Sender::new(0),
        }
    }

    fn rules(&self) -> std::sync::MutexGuard<'_, Rules> {
        self.rules.lock().unwrap()
    }

    fn lose(&self, number: u64, how: Loss) {
        self.rules()
            .losses
            .entry(number)
            .or_default()
            .push_back(how);
    }

    async fn lost_at_least(&self, n: usize) {
        let mut rx = self.lost.subscribe();
        within(rx.wait_for(|lost| *lost >= n)).await.unwrap();
    }

    async fn answered_at_least(&self, n: u64) {
        let mut rx = self.woke.subscribe();
        within(rx.wait_for(|woke| *woke >= n)).await.unwrap();
    }

    async fn acked_at_least(&self, n: usize) {
        let mut rx = self.acked.subscribe();
        within(rx.wait_for(|acked| *acked >= n)).await.unwrap();
    }
}

/// The number of a batch for a principal (`None` for anything else, or answers alone).
fn batch_number(body: &[u8]) -> Option<u64> {
    let v: Value = serde_json::from_slice(body).ok()?;
    v["message"].get("batched")?;
    v["number"].as_u64().filter(|n| *n > 0)
}

impl Peers for Lossy {
    fn serve(&self, to: PeerAddress) -> PeerFuture<Inbox> {
        self.inner.serve(to)
    }

    fn request(&self, to: PeerAddress, body: Vec<u8>, timeout: Duration) -> PeerFuture<Vec<u8>> {
        let me = self.clone();
        Box::pin(async move {
            let number = matches!(to, PeerAddress::Principal(_))
                .then(|| batch_number(&body))
                .flatten();
            if let Some(number) = number {
                let loss = {
                    let mut rules = me.rules();
                    if rules.blackhole {
                        Some(Loss::Send)
                    } else {
                        rules.losses.get_mut(&number).and_then(VecDeque::pop_front)
                    }
                };
                if matches!(loss, Some(Loss::Send)) {
                    me.lost.send_modify(|n| *n += 1);
                    return Err(PeerError::TimedOut(to));
                }
                me.rules().delivered.push(body.clone());
                let answer = me.inner.request(to.clone(), body, timeout).await;
                if matches!(loss, Some(Loss::Ack)) && answer.is_ok() {
                    me.lost.send_modify(|n| *n += 1);
                    return Err(PeerError::TimedOut(to));
                }
                if answer.is_ok() {
                    me.applied.send_modify(|n| *n += 1);
                }
                return answer;
            }
            let instance = matches!(to, PeerAddress::Instance(_));
            let invitation = serde_json::from_slice::<Value>(&body)
                .is_ok_and(|v| v["message"].get("invitation").is_some());
            let gate = match (instance, invitation) {
                (true, _) => me.rules().gate.clone(),
                (false, true) => me.rules().invitations.clone(),
                (false, false) => None,
            };
            let _permit = match gate {
                Some(gate) => Some(gate.acquire_owned().await.unwrap()),
                None => None,
            };
            let numbered = serde_json::from_slice::<Value>(&body)
                .is_ok_and(|v| v["number"].as_u64().is_some_and(|n| n > 0));
            let answer = me.inner.request(to, body, timeout).await;
            if instance && numbered && answer.is_ok() {
                me.acked.send_modify(|n| *n += 1);
            }
            answer
        })
    }

    fn served(&self, to: PeerAddress) -> PeerFuture<bool> {
        self.inner.served(to)
    }

    fn max_message(&self) -> usize {
        self.inner.max_message()
    }
}

fn tool(name: &str) -> Tool {
    Tool::new(name, name, json!({"type": "object"}))
}

/// A server on `store`, reaching the others through `peers`, holding at most `bounds`
/// for each of them.
fn server(store: &Arc<MemoryStore>, peers: &Lossy, bounds: PeerBounds) -> Server {
    let (woke, at_restore) = (peers.woke.clone(), peers.woke.clone());
    let counter = Toolset::new("counter")
        .instances()
        .tool(tool("poke"))
        .tool(tool("board"))
        .on_open(move |_, _| {
            Ok(Started::durable(Counter {
                n: 0,
                waiting: VecDeque::new(),
                woke: Some(woke.clone()),
            }))
        })
        .durable_with(move |format, state| {
            assert_eq!(format, Counter::FORMAT);
            let mut counter: Counter = serde_json::from_value(state).map_err(|e| e.to_string())?;
            counter.woke = Some(at_restore.clone());
            Ok(counter)
        });
    Server::builder("outbox-test", "0.1.0")
        .toolset(counter)
        .store(store.clone())
        .peers(Arc::new(peers.clone()))
        .peer_bounds(bounds)
        .resume_instances(false)
        .build()
        .unwrap()
}

/// `who` connected to `server` (its session on `arbiter` when given), through the MCPL
/// handshake with push events granted.
async fn player(server: &Server, who: &str, arbiter: Option<&actix::ArbiterHandle>) -> Lines {
    let (mut c, _session) =
        raw::stdio_socket_in(server, Principal::Named(who.into()), arbiter).await;
    let init = c
        .exchange(request(
            json!("init"),
            "initialize",
            json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": mcpl_capabilities(true),
                   "clientInfo": {"name": "test-host", "version": "1.0"}}),
        ))
        .await;
    assert!(init.get("result").is_some(), "{init:#}");
    c.send(initialized()).await;
    let grant = c
        .exchange(request(
            json!("grant"),
            "featureSets/update",
            json!({"effectiveCapabilities": ["tools", "pushEvents"]}),
        ))
        .await;
    assert_eq!(grant["result"]["accepted"], true, "{grant:#}");
    c
}

fn call_in(id: i64, tool: &str) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": {"mcpl/instance": "c1"}}),
    )
}

/// The pushes' texts (each answered) until the response to `id` and `pushes` pushes
/// (a step's events are pushed after the answer it carries), and that response.
async fn until(c: &mut Lines, id: i64, pushes: usize) -> (Vec<String>, Value) {
    let (expected, mut pushes, mut response) = (pushes, Vec::new(), None);
    loop {
        if response.is_some() && pushes.len() >= expected {
            return (pushes, response.unwrap_or_default());
        }
        let m = c.recv().await;
        match m["method"].as_str() {
            Some("push/event") => {
                let text = m["params"]["payload"]["content"][0]["text"].as_str();
                pushes.push(text.unwrap_or_default().to_owned());
                c.send(result(m["id"].clone(), json!({"accepted": true})))
                    .await;
            }
            Some(_) => {}
            None if m["id"] == id => response = Some(m),
            None => panic!("an answer to another request: {m:#}"),
        }
    }
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {reply:#}"))
}

/// Alice on server A with her counter `c1` running on server B (opened on A, released
/// there and adopted by B): her calls go to B and what it tells her comes back from B's
/// outbox. Returns A, B, her connection and the instance.
async fn split(
    store: &Arc<MemoryStore>,
    peers: &Lossy,
    bounds: (PeerBounds, PeerBounds),
) -> (Server, Server, Lines, u64) {
    let a = server(store, peers, bounds.0);
    let mut alice = player(&a, "alice", None).await;
    let opened = alice.exchange(open(1, "counter", Some("c1"), None)).await;
    assert!(opened.get("result").is_some(), "{opened:#}");
    let id = a.running_instances().await[0];
    a.release_instance(id).await.expect("released");
    let b = server(store, peers, bounds.1);
    b.adopt_instance(id).await.expect("adopted");
    (a, b, alice, id)
}

const DEFAULT: (PeerBounds, PeerBounds) = (
    PeerBounds {
        count: 1024,
        bytes: 8 << 20,
    },
    PeerBounds {
        count: 1024,
        bytes: 8 << 20,
    },
);

/// The instance's record as the store holds it.
fn record(store: &MemoryStore, id: u64) -> Value {
    serde_json::from_slice(&store.load_instance(id).unwrap().unwrap()).unwrap()
}

#[actix::test]
async fn a_batch_lost_or_not_acknowledged_is_sent_again_in_order_and_told_once() {
    let store = Arc::new(MemoryStore::new());
    let peers = Lossy::new();
    let (_a, _b, mut alice, _id) = split(&store, &peers, DEFAULT).await;

    // Each poke is two batches for her (its event, its answer). B's first is lost on its
    // way; the second is applied and its acknowledgement lost; the third both, one after
    // the other.
    peers.lose(1, Loss::Send);
    peers.lose(2, Loss::Ack);
    peers.lose(3, Loss::Send);
    peers.lose(3, Loss::Ack);
    for n in 1..=3 {
        let (pushes, answer) = until_after(&mut alice, call_in(n + 1, "poke"), 1).await;
        assert_eq!(pushes, [format!("poked {n}")], "told once, in order");
        assert_eq!(text(&answer), n.to_string(), "{answer:#}");
    }
    peers.lost_at_least(4).await;
    // Nothing told again after: the next answer comes alone.
    let (pushes, board) = until_after(&mut alice, call_in(9, "board"), 0).await;
    assert_eq!(pushes, Vec::<String>::new());
    assert_eq!(text(&board), "3");
    // Each batch delivered once but the ones whose acknowledgement was lost: 2 and 3.
    let numbers: Vec<u64> = peers
        .rules()
        .delivered
        .iter()
        .filter_map(|b| batch_number(b))
        .collect();
    assert_eq!(
        numbers,
        [1, 2, 2, 3, 3, 4, 5, 6, 7],
        "in order, never a later one first"
    );
}

/// Sends `m` and reads until its response and `pushes` pushes.
async fn until_after(c: &mut Lines, m: Value, pushes: usize) -> (Vec<String>, Value) {
    let id = m["id"].as_i64().unwrap();
    c.send(m).await;
    within(until(c, id, pushes)).await
}

#[actix::test]
async fn an_outbox_not_acknowledged_is_sent_again_by_whoever_adopts_the_instance() {
    let store = Arc::new(MemoryStore::new());
    let peers = Lossy::new();
    let (_a, b, mut alice, id) = split(&store, &peers, DEFAULT).await;

    // Two pokes run on B (their calls acknowledged) while nothing reaches alice.
    peers.rules().blackhole = true;
    alice.send(call_in(2, "poke")).await;
    alice.send(call_in(3, "poke")).await;
    peers.answered_at_least(2).await;
    peers.lost_at_least(1).await;
    // Released on B: its record holds their four batches, on B's stream.
    b.release_instance(id).await.expect("released");
    let kept = record(&store, id);
    let outbox = &kept["outbox"]["0"];
    assert_eq!(outbox["principal"], "alice", "{kept:#}");
    assert_eq!(outbox["sent"], 4, "{kept:#}");
    let numbers: Vec<u64> = outbox["held"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h[0].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3, 4], "{kept:#}");

    // C adopts it and sends them again; the first is applied and its acknowledgement
    // lost, so C sends it twice: alice applies it once.
    peers.rules().blackhole = false;
    peers.lose(1, Loss::Ack);
    let c = server(&store, &peers, PeerBounds::default());
    c.adopt_instance(id).await.expect("adopted");
    let (pushes, first) = within(until(&mut alice, 2, 1)).await;
    assert_eq!(pushes, ["poked 1"]);
    assert_eq!(text(&first), "1", "{first:#}");
    let (pushes, second) = within(until(&mut alice, 3, 1)).await;
    assert_eq!(pushes, ["poked 2"], "told once");
    assert_eq!(text(&second), "2", "{second:#}");
    // C's own batches go on after them, on the same stream.
    let (pushes, third) = until_after(&mut alice, call_in(4, "poke"), 1).await;
    assert_eq!(pushes, ["poked 3"], "nothing told twice");
    assert_eq!(text(&third), "3", "{third:#}");
    let stream = |b: &Vec<u8>| serde_json::from_slice::<Value>(b).unwrap()["stream"].clone();
    let delivered = peers.rules().delivered.clone();
    let streams: Vec<Value> = delivered.iter().map(stream).collect();
    assert!(
        streams.windows(2).all(|w| w[0] == w[1]),
        "one stream, B's and then C's: {streams:?}"
    );
    let numbers: Vec<u64> = delivered.iter().filter_map(|b| batch_number(b)).collect();
    assert_eq!(numbers, [1, 1, 2, 3, 4, 5, 6]);
}

/// Alice on server A, running on an arbiter of its own (stopped, it goes as a crashed
/// server does), opens a counter; A releases it and B adopts it: the arbiter, A, her
/// connection, the instance and B.
async fn moved_from_her_server(
    store: &Arc<MemoryStore>,
    peers: &Lossy,
) -> (actix::Arbiter, Server, Lines, u64, Server) {
    let arbiter = actix::Arbiter::new();
    let a = server(store, peers, PeerBounds::default());
    let mut alice = player(&a, "alice", Some(&arbiter.handle())).await;
    let opened = alice.exchange(open(1, "counter", Some("c1"), None)).await;
    assert!(opened.get("result").is_some(), "{opened:#}");
    let id = a.running_instances().await[0];
    a.release_instance(id).await.expect("released");
    let b = server(store, peers, PeerBounds::default());
    b.adopt_instance(id).await.expect("adopted");
    (arbiter, a, alice, id, b)
}

#[actix::test]
async fn a_principal_read_again_on_another_server_drops_a_batch_it_applied() {
    let store = Arc::new(MemoryStore::new());
    let peers = Lossy::new();
    // Server A runs on an arbiter of its own: stopped, it goes as a crashed server does.
    let (arbiter, _a, mut alice, _, b) = moved_from_her_server(&store, &peers).await;
    let (pushes, first) = until_after(&mut alice, call_in(2, "poke"), 1).await;
    assert_eq!(pushes, ["poked 1"]);
    assert_eq!(text(&first), "1");
    // Its first batch (the event) as B sent it.
    let applied = peers.rules().delivered[0].clone();
    assert_eq!(batch_number(&applied), Some(1));

    // A goes away with alice's actor.
    drop(alice);
    arbiter.stop();
    let joined = within(tokio::task::spawn_blocking(move || arbiter.join())).await;
    assert!(
        joined.is_ok_and(|j| j.is_ok()),
        "server A's arbiter stopped"
    );
    let alice_at = PeerAddress::Principal("alice".into());
    assert!(!within(peers.served(alice_at.clone())).await.unwrap());

    // She connects to B, which reads her record: she applied batch 1 of B's stream.
    let mut alice = player(&b, "alice", None).await;
    // Batch 1 sent again (as an instance adopted after a lost acknowledgement would):
    // acknowledged, not applied.
    let ack = within(
        peers
            .inner
            .request(alice_at, applied, Duration::from_secs(5)),
    )
    .await
    .unwrap();
    let ack: Value = serde_json::from_slice(&ack).unwrap();
    assert_eq!(ack, json!({"number": 1}));
    let (pushes, second) = until_after(&mut alice, call_in(3, "poke"), 1).await;
    assert_eq!(pushes, ["poked 2"], "batch 1 not told again");
    assert_eq!(text(&second), "2", "{second:#}");
}

#[actix::test]
async fn an_outbox_past_its_bound_ends_the_instance_for_that_player_answering_her_calls() {
    let store = Arc::new(MemoryStore::new());
    let peers = Lossy::new();
    let small = PeerBounds {
        count: 2,
        bytes: 1 << 20,
    };
    let (_a, _b, mut alice, _id) = split(&store, &peers, (DEFAULT.0, small)).await;
    peers.rules().blackhole = true;
    for n in 2..=4 {
        alice.send(call_in(n, "board")).await;
    }
    peers.acked_at_least(3).await;
    peers.rules().blackhole = false;
    for n in 2..=4 {
        let (pushes, answer) = within(until(&mut alice, n, 0)).await;
        assert_eq!(pushes, Vec::<String>::new());
        assert_eq!(answer["error"]["code"], -32603, "{answer:#}");
        assert_eq!(
            answer["error"]["data"],
            json!({"retryable": false, "ran": true}),
            "{answer:#}"
        );
    }
    // Each answer was a batch: the third found two held, and all three were dropped —
    // what went (once nothing was lost any more) is the end, their answers with it.
    let delivered = peers.rules().delivered.clone();
    let numbers: Vec<u64> = delivered.iter().filter_map(|b| batch_number(b)).collect();
    assert_eq!(
        numbers,
        [3],
        "the first two dropped, the end numbered after them"
    );
    let end: Value = serde_json::from_slice(&delivered[0]).unwrap();
    let end = &end["message"]["batched"];
    assert!(
        end["ended"]
            .as_str()
            .is_some_and(|r| r.contains("not acknowledged")),
        "{end:#}"
    );
    assert_eq!(end["answers"].as_array().map(Vec::len), Some(3), "{end:#}");
    let list = alice
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    assert_eq!(list["result"]["open"], json!([]), "{list:#}");
    let ended = &list["result"]["ended"][0];
    assert_eq!(ended["instance"], "c1", "{list:#}");
    assert!(
        ended["reason"]
            .as_str()
            .is_some_and(|r| r.contains("not acknowledged")),
        "{list:#}"
    );
}

#[actix::test]
async fn a_call_past_the_bound_of_what_waits_for_a_remote_instance_is_refused_retryable() {
    let store = Arc::new(MemoryStore::new());
    let peers = Lossy::new();
    let one = PeerBounds {
        count: 1,
        bytes: 1 << 20,
    };
    let (_a, _b, mut alice, _id) = split(&store, &peers, (one, DEFAULT.1)).await;
    // What goes to the instance waits at a gate: the first poke is held there.
    let gate = Arc::new(Semaphore::new(0));
    peers.rules().gate = Some(gate.clone());
    alice.send(call_in(2, "poke")).await;
    let (pushes, refused) = until_after(&mut alice, call_in(3, "poke"), 0).await;
    assert_eq!(pushes, Vec::<String>::new());
    assert_eq!(refused["error"]["code"], -32603, "{refused:#}");
    assert_eq!(
        refused["error"]["data"],
        json!({"retryable": true, "ran": false}),
        "{refused:#}"
    );
    gate.add_permits(Semaphore::MAX_PERMITS / 2);
    let (pushes, first) = within(until(&mut alice, 2, 1)).await;
    assert_eq!(pushes, ["poked 1"]);
    assert_eq!(text(&first), "1");
    let (pushes, board) = until_after(&mut alice, call_in(4, "board"), 0).await;
    assert_eq!(pushes, Vec::<String>::new());
    assert_eq!(text(&board), "1", "the refused call did not run");
}

#[actix::test]
async fn a_batch_for_a_principal_nobody_serves_starts_it_on_the_instances_server() {
    let store = Arc::new(MemoryStore::new());
    let peers = Lossy::new();
    let (arbiter, _a, mut alice, _, b) = moved_from_her_server(&store, &peers).await;
    // A poke runs on B while nothing reaches her; then A goes away with her actor.
    peers.rules().blackhole = true;
    alice.send(call_in(2, "poke")).await;
    peers.answered_at_least(1).await;
    drop(alice);
    arbiter.stop();
    let joined = within(tokio::task::spawn_blocking(move || arbiter.join())).await;
    assert!(
        joined.is_ok_and(|j| j.is_ok()),
        "server A's arbiter stopped"
    );
    assert_eq!(b.principal_count(), 0);

    // Nobody serves her now: B starts her on her first use (reading her record), and
    // the outbox reaches her there with both batches of the poke.
    peers.rules().blackhole = false;
    let mut applied = peers.applied.subscribe();
    within(applied.wait_for(|n| *n >= 2)).await.unwrap();
    assert_eq!(b.principal_count(), 1, "alice runs on B");
    let alice_at = PeerAddress::Principal("alice".into());
    assert!(within(peers.served(alice_at)).await.unwrap());
    // She applied them (her record says so), and is told nothing of them again.
    let mut alice = player(&b, "alice", None).await;
    let (pushes, second) = until_after(&mut alice, call_in(3, "poke"), 1).await;
    assert_eq!(
        pushes,
        ["poked 2"],
        "the first poke's batches not told again"
    );
    assert_eq!(text(&second), "2", "{second:#}");
}

/// A shared duel: its opener names an `opponent`, who is invited; told when the invitee
/// sees it or declines (the duel then ends).
struct Duel {
    host: ParticipantId,
}

impl InstanceLogic for Duel {
    fn call(&mut self, _: ToolCall, _: &mut InstanceContext) -> Reply {
        Reply::text("hit")
    }

    fn invited(&mut self, who: ParticipantId, _: Option<&str>, cx: &mut InstanceContext) {
        let text = format!("{} sees it", cx.name(who));
        cx.event(self.host, Event::text(text));
    }

    fn declined(&mut self, who: ParticipantId, cx: &mut InstanceContext) {
        let name = cx.name(who);
        cx.event(self.host, Event::text(format!("{name} declined")));
        cx.end(format!("{name} declined the duel"));
    }
}

fn duels(store: &Arc<MemoryStore>, peers: &Lossy, bounds: PeerBounds) -> Server {
    let duel = Toolset::new("duel")
        .instances()
        .options(json!({"type": "object", "properties": {"opponent": {"type": "string"}}}))
        .tool(tool("hit"))
        .on_open(|opening, cx| {
            if let Some(opponent) = opening.options()["opponent"].as_str() {
                cx.invite(Principal::Named(opponent.to_owned()), "a duel");
            }
            Ok(Started::new(Duel {
                host: opening.opener(),
            }))
        });
    Server::builder("outbox-invite-test", "0.1.0")
        .toolset(duel)
        .store(store.clone())
        .peers(Arc::new(peers.clone()))
        .peer_bounds(bounds)
        .build()
        .unwrap()
}

/// The next push's text (answered), skipping other notifications.
async fn next_push(c: &mut Lines) -> String {
    loop {
        let m = c.recv().await;
        match m["method"].as_str() {
            Some("push/event") => {
                c.send(result(m["id"].clone(), json!({"accepted": true})))
                    .await;
                let text = m["params"]["payload"]["content"][0]["text"].as_str();
                return text.unwrap_or_default().to_owned();
            }
            Some(_) => {}
            None => panic!("a response while waiting for a push: {m:#}"),
        }
    }
}

#[actix::test]
async fn an_invitation_past_the_bound_of_what_waits_for_a_principal_elsewhere_is_declined() {
    let store = Arc::new(MemoryStore::new());
    let peers = Lossy::new();
    let one = PeerBounds {
        count: 1,
        bytes: 1 << 20,
    };
    let a = duels(&store, &peers, one);
    let b = duels(&store, &peers, PeerBounds::default());
    let mut bob = player(&b, "bob", None).await;
    let mut alice = player(&a, "alice", None).await;
    // The invitations to bob wait on their way: the first holds the one place.
    let gate = Arc::new(Semaphore::new(0));
    peers.rules().invitations = Some(gate.clone());
    let bob_options = json!({"opponent": "bob"});
    let first = alice
        .exchange(open(1, "duel", Some("d1"), Some(bob_options.clone())))
        .await;
    assert!(first.get("result").is_some(), "{first:#}");
    let second = alice
        .exchange(open(2, "duel", Some("d2"), Some(bob_options)))
        .await;
    assert!(second.get("result").is_some(), "{second:#}");
    // The second found no room: declined on bob's behalf, so its duel ends at once.
    assert_eq!(next_push(&mut alice).await, "bob declined");
    // The first goes on once let through: bob is told, and alice hears he sees it.
    gate.add_permits(Semaphore::MAX_PERMITS / 2);
    let invited = next_push(&mut bob).await;
    assert!(invited.contains("a duel"), "{invited}");
    assert_eq!(next_push(&mut alice).await, "bob sees it");
}

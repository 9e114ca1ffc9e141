//! Issue #41 (`docs/ownership.md` §2): a principal's actor on one server talks to an
//! instance's actor on another, through the servers' peers ([`InProcessPeers`]: servers in
//! one process). A game against a bot is released on server A and adopted by server B
//! while its player's principal stays on A: her `tools/call` on A reaches the game on B,
//! and its answers, pushes and hints come back to her session on A — raw JSON on a real
//! socket (the stdio framing on loopback). While nobody runs the game, a call is answered
//! "retry, nothing ran". A message another server sends twice (its acknowledgement lost)
//! runs once, and a peer's unreadable one is not taken.
//!
//! The store is one [`MemoryStore`] shared by both servers, as a cluster's nodes share one
//! PostgreSQL. Nothing sleeps: the bot moves on a timer of no time, and every wait is for
//! a message.

use crate::raw;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    Audience, CallId, Durable, Event, InProcessPeers, InstanceContext, InstanceLogic, MemoryStore,
    PeerAddress, Peers, Principal, Reply, Server, Started, ToolCall, Toolset,
};
use mcpl_testkit::msg::{PROTOCOL_VERSION, initialized, mcpl_capabilities, open, request, result};
use mcpl_testkit::within;
use raw::{Lines, stdio_socket};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// A game against a bot: `tally` adds 100 at once, `move` adds 1 and the bot answers it by adding 10 at its next
/// wake (a timer of no time), answering the call then; once the bot passes 20 it shows
/// `resign` to everyone (a hint).
#[derive(Serialize, Deserialize)]
struct Duel {
    n: u64,
    #[serde(skip)]
    waiting: Option<CallId>,
}

impl InstanceLogic for Duel {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        match call.tool() {
            "move" => {
                self.n += 1;
                self.waiting = Some(call.id());
                cx.event(
                    call.caller(),
                    Event::text(format!("You played: {}", self.n)),
                );
                cx.wake_after(Duration::ZERO, 0);
                Reply::Later
            }
            "board" => Reply::text(self.n.to_string()),
            "tally" => {
                self.n += 100;
                Reply::text(self.n.to_string())
            }
            _ => Reply::error("no such tool"),
        }
    }

    fn wake(&mut self, _: u64, cx: &mut InstanceContext) {
        let Some(call) = self.waiting.take() else {
            return;
        };
        self.n += 10;
        if self.n > 20 {
            cx.show(Audience::All, "resign");
        }
        cx.answer(call, Ok(CallToolResult::text(self.n.to_string())));
    }
}

impl Durable for Duel {
    const FORMAT: u32 = 1;
}

fn tool(name: &str) -> Tool {
    Tool::new(name, name, json!({"type": "object"}))
}

/// A server on `store`, reaching the others through `peers`.
pub(crate) fn server(store: &Arc<MemoryStore>, peers: &InProcessPeers, resume: bool) -> Server {
    server_on(store, Some(Arc::new(peers.clone())), resume)
}

/// A server on `store`, reaching the others through `peers` (none: it reaches nobody).
pub(crate) fn server_on(
    store: &Arc<MemoryStore>,
    peers: Option<Arc<dyn Peers>>,
    resume: bool,
) -> Server {
    let duel = Toolset::new("duel")
        .instances()
        .tool(tool("move"))
        .tool(tool("board"))
        .tool(tool("tally"))
        .hidden_tool(tool("resign"))
        .on_open(|_, _| {
            Ok(Started::durable(Duel {
                n: 0,
                waiting: None,
            }))
        })
        .durable::<Duel>();
    let builder = Server::builder("remote-test", "0.1.0")
        .toolset(duel)
        .store(store.clone())
        .resume_instances(resume);
    match peers {
        Some(peers) => builder.peers(peers),
        None => builder,
    }
    .build()
    .unwrap()
}

/// `who` connected to `server` over a loopback socket, through the MCPL handshake with
/// `toolHints` and push events granted.
pub(crate) async fn player(server: &Server, who: &str) -> (Lines, mcpl_server::SessionHandle) {
    let (mut c, session) = stdio_socket(server, Principal::Named(who.into())).await;
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
    (c, session)
}

pub(crate) fn call_in(id: i64, tool: &str) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": {"mcpl/instance": "d1"}}),
    )
}

/// What came until the response to `id`: the pushes' texts (each answered), the tools
/// the hints told visible (as `tools/hints` or on the response), and the response.
pub(crate) struct Told {
    pub(crate) pushes: Vec<String>,
    pub(crate) shown: Vec<String>,
    pub(crate) response: Value,
}

pub(crate) async fn until(c: &mut Lines, id: i64) -> Told {
    let mut told = Told {
        pushes: Vec::new(),
        shown: Vec::new(),
        response: Value::Null,
    };
    loop {
        let m = c.recv().await;
        match m["method"].as_str() {
            Some("push/event") => {
                let text = m["params"]["payload"]["content"][0]["text"].as_str();
                told.pushes.push(text.unwrap_or_default().to_owned());
                c.send(result(m["id"].clone(), json!({"accepted": true})))
                    .await;
            }
            Some("tools/hints") => told.shown.extend(visible(&m["params"])),
            Some(_) => {}
            None if m["id"] == id => {
                // Hints may ride on the answer (SPEC §5.2).
                told.shown
                    .extend(visible(&m["result"]["_meta"]["mcpl/hints"]));
                told.response = m;
                return told;
            }
            None => panic!("an answer to another request: {m:#}"),
        }
    }
}

/// The tools a hint tells visible.
fn visible(hints: &Value) -> Vec<String> {
    let tools = hints["tools"].as_array().into_iter().flatten();
    tools
        .filter(|t| t["visible"] == true)
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

pub(crate) fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {reply:#}"))
}

#[actix::test]
async fn a_players_calls_on_one_server_reach_her_game_adopted_by_another_and_all_it_tells_comes_back()
 {
    let store = Arc::new(MemoryStore::new());
    let peers = InProcessPeers::new();
    let a = server(&store, &peers, true);
    let (mut alice, _session) = player(&a, "alice").await;
    let opened = alice.exchange(open(1, "duel", Some("d1"), None)).await;
    assert!(opened.get("result").is_some(), "{opened:#}");
    alice.send(call_in(2, "move")).await;
    let first = until(&mut alice, 2).await;
    assert_eq!(first.pushes, ["You played: 1"]);
    assert_eq!(text(&first.response), "11");
    let running = a.running_instances().await;
    let id = running[0];
    assert!(
        within(peers.served(PeerAddress::Principal("alice".into())))
            .await
            .unwrap(),
        "alice's actor serves her address on A"
    );

    // Released on A: nobody runs it, and a call is answered at once "retry, nothing ran".
    a.release_instance(id).await.expect("released");
    let refused = alice.exchange(call_in(3, "board")).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused:#}");
    assert_eq!(
        refused["error"]["data"],
        json!({"retryable": true, "ran": false}),
        "{refused:#}"
    );

    // Adopted by B, which reads no principal for it: alice runs on A.
    let b = server(&store, &peers, false);
    b.adopt_instance(id).await.expect("adopted");
    assert_eq!(b.running_instances().await, [id]);
    assert_eq!(a.running_instances().await, Vec::<u64>::new());
    assert_eq!(b.principal_count(), 0, "alice is not read on B");

    // Her calls on A reach it on B, from the same position; what it tells comes back.
    let board = alice.exchange(call_in(4, "board")).await;
    assert_eq!(text(&board), "11", "{board:#}");
    alice.send(call_in(5, "move")).await;
    let second = until(&mut alice, 5).await;
    assert_eq!(second.pushes, ["You played: 12"], "pushed once, from B");
    assert_eq!(second.shown, ["resign"], "the hint of the bot's step on B");
    assert_eq!(text(&second.response), "22");
    // Kept where each record lives: the game by B, her record (the hint) by A.
    let record: Value = serde_json::from_slice(
        &mcpl_server::Store::load_instance(&*store, id)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(record["logic"]["Kept"]["state"]["n"], 22, "{record:#}");

    // Nothing told twice, nothing ended: the game open once on her side.
    let list = alice
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    let open_now: Vec<&Value> = list["result"]["open"].as_array().unwrap().iter().collect();
    assert_eq!(open_now.len(), 1, "{list:#}");
    assert_eq!(open_now[0]["instance"], "d1", "{list:#}");
    assert_eq!(list["result"]["ended"], json!([]), "{list:#}");
    let board = alice.exchange(call_in(6, "board")).await;
    assert_eq!(text(&board), "22", "{board:#}");
}

#[actix::test]
async fn a_message_from_another_server_sent_twice_runs_once_and_an_unreadable_one_is_not_taken() {
    let store = Arc::new(MemoryStore::new());
    let peers = InProcessPeers::new();
    let a = server(&store, &peers, true);
    let (mut alice, _session) = player(&a, "alice").await;
    alice.exchange(open(1, "duel", Some("d1"), None)).await;
    let id = a.running_instances().await[0];
    a.release_instance(id).await.expect("released");
    let b = server(&store, &peers, false);
    b.adopt_instance(id).await.expect("adopted");

    // Alice's `tally`, as her server sends it (number 1 of a stream of its own), sent
    // twice, as a sender that missed the first acknowledgement would: acknowledged both
    // times, run once.
    let tally = json!({"stream": 77, "number": 1, "message": {"call": {
        "who": 0, "principal": "alice", "key": {"toolset": "duel", "instance": "d1"},
        "session": 999, "request": 1, "tool": "tally", "arguments": {}}}});
    let to = PeerAddress::Instance(id);
    let wait = Duration::from_secs(5);
    for _ in 0..2 {
        let body = serde_json::to_vec(&tally).unwrap();
        let ack = within(peers.request(to.clone(), body, wait)).await.unwrap();
        let ack: Value = serde_json::from_slice(&ack).unwrap();
        assert_eq!(ack, json!({"number": 1}));
    }
    // A peer's unreadable message, or one of another kind, is dropped unanswered: its
    // sender hears nobody took it, and nothing ran.
    for bad in [
        &b"{"[..],
        br#"{"stream": 1, "number": 1, "message": {"fly": {}}}"#,
    ] {
        let refused = within(peers.request(to.clone(), bad.to_vec(), wait)).await;
        assert!(
            matches!(refused, Err(mcpl_server::PeerError::NoResponders(_))),
            "{refused:?}"
        );
    }
    let board = alice.exchange(call_in(2, "board")).await;
    assert_eq!(text(&board), "100", "run once: {board:#}");
}

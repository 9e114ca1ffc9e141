//! Issue #41 item 3 (`docs/ownership.md` §4): a server releases a running instance —
//! stopped without ending, once every step it handed to the store is decided, its record
//! left live — and adopts one mid-life from its record, on the same server or on another
//! over the same store: its bot and timers resume, its principals' calls reach it again,
//! the game goes on from the same position, and nothing is told twice. Bad cases give
//! clear errors.
//!
//! The stores are one [`MemoryStore`] shared by the servers (a clone of its `Arc`), as a
//! cluster's nodes share one PostgreSQL. Nothing sleeps: the bot's thinking time is an
//! hour while the test wants it to wait, and none once it wants the move.

use crate::support;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    Audience, CallId, Durable, Event, InstanceContext, InstanceLogic, Joined, MemoryStore,
    OwnershipError, ParticipantId, Principal, Refusal, Reply, Server, Started, Store, ToolCall,
    Toolset,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use support::{TestClient, hinted, open, request, result};

/// How long the bot thinks, in seconds, shared by the test and every duel.
type Think = Arc<AtomicU64>;

/// A game against a bot: the player's `move` adds 1, the bot answers it by adding 10 after
/// thinking (a timer), and the call is answered with the position then.
#[derive(Serialize, Deserialize)]
struct Duel {
    n: u64,
    bot_to_move: bool,
    #[serde(skip)]
    waiting: Option<CallId>,
    #[serde(skip)]
    think: Think,
}

impl Duel {
    fn bot_thinks(&self, cx: &mut InstanceContext) {
        cx.wake_after(Duration::from_secs(self.think.load(Ordering::SeqCst)), 0);
    }
}

impl InstanceLogic for Duel {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        match call.tool() {
            "move" if self.bot_to_move => Reply::error("Not your turn."),
            "move" => {
                self.n += 1;
                self.bot_to_move = true;
                self.waiting = Some(call.id());
                cx.event(
                    call.caller(),
                    Event::text(format!("You played: {}", self.n)),
                );
                self.bot_thinks(cx);
                Reply::Later
            }
            "board" => Reply::text(self.n.to_string()),
            _ => Reply::error("no such tool"),
        }
    }

    fn wake(&mut self, _: u64, cx: &mut InstanceContext) {
        if !self.bot_to_move {
            return;
        }
        self.n += 10;
        self.bot_to_move = false;
        match self.waiting.take() {
            Some(call) => cx.answer(call, Ok(CallToolResult::text(self.n.to_string()))),
            None => cx.event(
                Audience::All,
                Event::text(format!("The bot moved: {}", self.n)),
            ),
        }
    }
}

impl Durable for Duel {
    const FORMAT: u32 = 1;

    fn resumed(&mut self, cx: &mut InstanceContext) {
        if self.bot_to_move {
            self.bot_thinks(cx);
        }
    }
}

/// A rally of two principals: the opener invites its opponent, and each `hit` counts,
/// told to both.
#[derive(Serialize, Deserialize)]
struct Rally {
    n: u64,
}

impl InstanceLogic for Rally {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        self.n += 1;
        let who = cx.name(call.caller());
        cx.event(Audience::All, Event::text(format!("{who} hit: {}", self.n)));
        Reply::text(self.n.to_string())
    }

    fn join(&mut self, _: ParticipantId, _: &mut InstanceContext) -> Result<Joined, Refusal> {
        Ok(Joined::new().text("Joined."))
    }
}

impl Durable for Rally {
    const FORMAT: u32 = 1;
}

/// A scratchpad whose logic is not kept.
struct Scratch;

impl InstanceLogic for Scratch {
    fn call(&mut self, _: ToolCall, _: &mut InstanceContext) -> Reply {
        Reply::text("scribbled")
    }
}

fn tool(name: &str) -> Tool {
    Tool::new(name, name, json!({"type": "object"}))
}

fn server(store: Option<Arc<MemoryStore>>, think: &Think) -> Server {
    builder(store, think).build().unwrap()
}

fn builder(store: Option<Arc<MemoryStore>>, think: &Think) -> mcpl_server::ServerBuilder {
    let at_open = think.clone();
    let at_restore = think.clone();
    let duel = Toolset::new("duel")
        .instances()
        .tool(tool("move"))
        .tool(tool("board"))
        .on_open(move |_, _| {
            Ok(Started::durable(Duel {
                n: 0,
                bot_to_move: false,
                waiting: None,
                think: at_open.clone(),
            }))
        })
        .durable_with(move |format, state| {
            assert_eq!(format, Duel::FORMAT);
            let mut duel: Duel = serde_json::from_value(state).map_err(|e| e.to_string())?;
            duel.think = at_restore.clone();
            Ok(duel)
        });
    let scratch = Toolset::new("scratch")
        .instances()
        .tool(tool("scribble"))
        .on_open(|_, _| Ok(Started::new(Scratch)));
    let rally = Toolset::new("rally")
        .instances()
        .tool(tool("hit"))
        .on_open(|opening, cx| {
            let reason = format!("{} wants a rally", opening.principal().name());
            cx.invite(Principal::Named("bob".into()), reason);
            Ok(Started::durable(Rally { n: 0 }))
        })
        .durable::<Rally>();
    let builder = Server::builder("ownership-test", "0.1.0")
        .toolset(duel)
        .toolset(rally)
        .toolset(scratch);
    match store {
        Some(store) => builder.store(store),
        None => builder,
    }
}

fn call_in(id: i64, tool: &str, instance: &str) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": {"mcpl/instance": instance}}),
    )
}

/// The first text block of a call's result.
fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {reply:#}"))
}

/// Awaits the next push event, answers it, and returns its text.
async fn pushed(c: &mut TestClient) -> String {
    let got = c.recv().await;
    assert_eq!(got["method"], "push/event", "{got:#}");
    c.send(result(got["id"].clone(), json!({"accepted": true})))
        .await;
    got["params"]["payload"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {got:#}"))
        .to_owned()
}

/// `(open instances, ended records)` of a `toolsets/list`, as `toolset:instance`.
async fn listed(c: &mut TestClient) -> (Vec<String>, Vec<String>) {
    let list = c
        .exchange(request(json!("list"), "toolsets/list", json!({})))
        .await;
    let keys = |what: &str| -> Vec<String> {
        list["result"][what]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| format!("{}:{}", r["toolset"].as_str().unwrap(), r["instance"]))
            .collect()
    };
    (keys("open"), keys("ended"))
}

/// The one instance `server` runs.
async fn the_instance(server: &Server) -> u64 {
    let running = server.running_instances().await;
    assert_eq!(running.len(), 1, "{running:?}");
    running[0]
}

#[actix::test]
async fn a_released_game_adopted_again_resumes_its_bot_and_goes_on_from_the_same_position() {
    let store = Arc::new(MemoryStore::new());
    let think: Think = Arc::default();
    let s = server(Some(store.clone()), &think);
    let (mut a, _session) = hinted(&s, "alice").await;
    a.exchange(open(1, "duel", Some("d1"), None)).await;
    a.send(call_in(2, "move", "d1")).await;
    assert_eq!(pushed(&mut a).await, "You played: 1");
    assert_eq!(text(&a.recv().await), "11", "the bot answered at once");
    let id = the_instance(&s).await;

    // The bot thinks for an hour: released while it does.
    think.store(3600, Ordering::SeqCst);
    a.send(call_in(3, "move", "d1")).await;
    assert_eq!(pushed(&mut a).await, "You played: 12", "the step was kept");
    s.release_instance(id).await.expect("released");
    // The move waiting for the bot is answered: it ran and was kept.
    let waited = a.recv().await;
    assert_eq!(waited["id"], 3, "{waited:#}");
    assert_eq!(waited["error"]["code"], -32603, "{waited:#}");
    assert_eq!(
        waited["error"]["data"],
        json!({"retryable": false, "ran": true, "kept": true}),
        "{waited:#}"
    );
    assert_eq!(s.running_instances().await, Vec::<u64>::new());
    // The record stays live, as of the last step.
    let record: Value = serde_json::from_slice(&store.load_instance(id).unwrap().unwrap()).unwrap();
    assert_eq!(record["ended"], Value::Null, "{record:#}");
    assert_eq!(record["logic"]["Kept"]["state"]["n"], 12, "{record:#}");

    // Meanwhile a call is refused at once, worth retrying; releasing again is refused.
    let refused = a.exchange(call_in(4, "board", "d1")).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused:#}");
    assert_eq!(
        refused["error"]["data"],
        json!({"retryable": true, "ran": false}),
        "{refused:#}"
    );
    assert!(
        matches!(
            s.release_instance(id).await,
            Err(OwnershipError::NotRunning { id: i }) if i == id
        ),
        "released twice"
    );

    // Adopted again: the bot resumes and makes the move it owed, told once.
    think.store(0, Ordering::SeqCst);
    s.adopt_instance(id).await.expect("adopted");
    assert_eq!(s.running_instances().await, [id]);
    assert_eq!(pushed(&mut a).await, "The bot moved: 22");
    assert_eq!(text(&a.exchange(call_in(5, "board", "d1")).await), "22");
    a.send(call_in(6, "move", "d1")).await;
    assert_eq!(pushed(&mut a).await, "You played: 23");
    assert_eq!(text(&a.recv().await), "33");
    assert!(
        matches!(
            s.adopt_instance(id).await,
            Err(OwnershipError::Running { .. })
        ),
        "adopted twice"
    );
    // Nothing told twice: the game is open once, nothing ended, nothing else came.
    let (open_now, ended) = listed(&mut a).await;
    assert_eq!(open_now, ["duel:\"d1\""]);
    assert_eq!(ended, Vec::<String>::new());
    assert!(a.unread().is_empty(), "{:?}", a.unread());
}

#[actix::test]
async fn both_players_of_a_shared_game_reach_it_again_once_adopted_and_are_told_each_hit_once() {
    let store = Arc::new(MemoryStore::new());
    let s = server(Some(store.clone()), &Think::default());
    let (mut bob, _b) = hinted(&s, "bob").await;
    let (mut alice, _a) = hinted(&s, "alice").await;
    alice.exchange(open(1, "rally", Some("r"), None)).await;
    let invited = bob.recv().await;
    assert_eq!(invited["params"]["instance"], "r", "{invited:#}");
    bob.send(result(invited["id"].clone(), json!({"accepted": true})))
        .await;
    let id = the_instance(&s).await;
    // Its invitation lives in bob's actor: not released before he answers it.
    assert!(matches!(
        s.release_instance(id).await,
        Err(OwnershipError::InvitationsPending { .. })
    ));
    let joined = bob.exchange(open(1, "rally", Some("r"), None)).await;
    assert_eq!(
        joined["result"]["content"][0]["text"], "Joined.",
        "{joined:#}"
    );
    assert_eq!(text(&alice.exchange(call_in(2, "hit", "r")).await), "1");
    assert_eq!(pushed(&mut bob).await, "alice hit: 1");

    s.release_instance(id).await.expect("released");
    let refused = bob.exchange(call_in(2, "hit", "r")).await;
    assert_eq!(refused["error"]["data"]["retryable"], true, "{refused:#}");
    s.adopt_instance(id).await.expect("adopted");

    // Both reach it, from where it was; each hit told to the other once (the caller has
    // it with its answer).
    assert_eq!(text(&bob.exchange(call_in(3, "hit", "r")).await), "2");
    assert_eq!(pushed(&mut alice).await, "bob hit: 2");
    assert_eq!(text(&alice.exchange(call_in(3, "hit", "r")).await), "3");
    assert_eq!(pushed(&mut bob).await, "alice hit: 3");
    for c in [&mut alice, &mut bob] {
        let (open_now, ended) = listed(c).await;
        assert_eq!(open_now, ["rally:\"r\""]);
        assert_eq!(ended, Vec::<String>::new());
        assert!(c.unread().is_empty(), "{:?}", c.unread());
    }
}

#[actix::test]
async fn a_game_released_on_one_server_is_adopted_by_another_over_the_same_store() {
    let store = Arc::new(MemoryStore::new());
    let think: Think = Arc::default();
    let first = server(Some(store.clone()), &think);
    let (mut a, _session) = hinted(&first, "alice").await;
    a.exchange(open(1, "duel", Some("d1"), None)).await;
    a.send(call_in(2, "move", "d1")).await;
    assert_eq!(pushed(&mut a).await, "You played: 1");
    assert_eq!(text(&a.recv().await), "11");
    let id = the_instance(&first).await;
    first.release_instance(id).await.expect("released");

    // The other server, a node that resumes nothing at start, runs nothing of alice's
    // until it adopts the game: it reads her record then, linked to the game.
    let second = builder(Some(store.clone()), &think)
        .resume_instances(false)
        .build()
        .unwrap();
    let (mut b, _other) = hinted(&second, "bob").await;
    assert_eq!(second.running_instances().await, Vec::<u64>::new());
    let principals = second.principal_count();
    second.adopt_instance(id).await.expect("adopted");
    assert_eq!(second.running_instances().await, [id]);
    assert_eq!(
        second.principal_count(),
        principals + 1,
        "alice, read for it"
    );

    // Alice's calls reach it on the second server, from the same position.
    let (mut a2, _session2) = hinted(&second, "alice").await;
    let (open_now, ended) = listed(&mut a2).await;
    assert_eq!(open_now, ["duel:\"d1\""], "adopted with no re-open");
    assert_eq!(ended, Vec::<String>::new(), "nothing ended, nothing told");
    assert_eq!(text(&a2.exchange(call_in(3, "board", "d1")).await), "11");
    a2.send(call_in(4, "move", "d1")).await;
    assert_eq!(pushed(&mut a2).await, "You played: 12");
    assert_eq!(text(&a2.recv().await), "22");
    // On the first server the game no longer runs: a call there is worth retrying
    // (elsewhere), and it cannot be released there again.
    let refused = a.exchange(call_in(5, "board", "d1")).await;
    assert_eq!(refused["error"]["data"]["retryable"], true, "{refused:#}");
    assert!(matches!(
        first.release_instance(id).await,
        Err(OwnershipError::NotRunning { .. })
    ));
    // Bob, on the second server all along, heard nothing of it.
    let (bobs, _) = listed(&mut b).await;
    assert_eq!(bobs, Vec::<String>::new());
    assert!(b.unread().is_empty(), "{:?}", b.unread());
}

#[actix::test]
async fn what_cannot_be_released_or_adopted_is_refused_saying_why() {
    let store = Arc::new(MemoryStore::new());
    let think: Think = Arc::default();
    let s = server(Some(store.clone()), &think);
    let (mut a, _session) = hinted(&s, "alice").await;

    // An instance the store holds no record of.
    let unknown = s.adopt_instance(999).await.unwrap_err();
    assert!(
        matches!(unknown, OwnershipError::Unknown { id: 999, .. }),
        "{unknown}"
    );
    assert_eq!(
        unknown.to_string(),
        "the store memory holds no record of instance 999"
    );
    assert!(matches!(
        s.release_instance(999).await,
        Err(OwnershipError::NotRunning { id: 999 })
    ));

    // An instance whose logic is not kept: releasing it would lose it.
    a.exchange(open(1, "scratch", Some("s1"), None)).await;
    let scratch = the_instance(&s).await;
    let kept_not = s.release_instance(scratch).await.unwrap_err();
    assert!(
        matches!(kept_not, OwnershipError::NotDurable { .. }),
        "{kept_not}"
    );
    assert_eq!(s.running_instances().await, [scratch], "it still runs");
    assert_eq!(
        text(&a.exchange(call_in(2, "scribble", "s1")).await),
        "scribbled"
    );
    // Running here: not adopted again.
    assert!(matches!(
        s.adopt_instance(scratch).await,
        Err(OwnershipError::Running { .. })
    ));

    // An instance whose record says it ended.
    a.exchange(open(3, "duel", Some("d1"), None)).await;
    let running = s.running_instances().await;
    let duel = *running.iter().find(|i| **i != scratch).unwrap();
    let mut record: Value =
        serde_json::from_slice(&store.load_instance(duel).unwrap().unwrap()).unwrap();
    record["ended"] = json!("resigned");
    store
        .put_instance(77, &serde_json::to_vec(&record).unwrap())
        .unwrap();
    let ended = s.adopt_instance(77).await.unwrap_err();
    assert!(
        matches!(&ended, OwnershipError::Ended { id: 77, reason } if reason == "resigned"),
        "{ended}"
    );
    // A record that is not one.
    store.put_instance(78, b"not a record").unwrap();
    let unreadable = s.adopt_instance(78).await.unwrap_err();
    assert!(
        matches!(unreadable, OwnershipError::Unreadable { id: 78, .. }),
        "{unreadable}"
    );
    assert_eq!(s.running_instances().await.len(), 2, "nothing else started");

    // A server without a store has nothing to adopt from.
    let bare = server(None, &think);
    let (_c, _bare_session) = hinted(&bare, "carol").await;
    assert!(matches!(
        bare.adopt_instance(1).await,
        Err(OwnershipError::NoStore { id: 1 })
    ));
}

/// What a start hook saw: the instance, how it started, and whether the store held a
/// record of it when asked.
type Seen = Arc<std::sync::Mutex<Vec<(u64, mcpl_server::InstanceStart, bool)>>>;

/// The start hook (issue #41, `ServerBuilder::on_instance_start`: a cluster takes the
/// instance's lease there): asked before an opened instance's first write and before an
/// adoption reads anything; while it refuses, nothing starts — an open is answered
/// "retry, it did not run", an adoption refused `Elsewhere` or `StartRefused` — and once
/// it lets the instance start, it runs as without one.
#[actix::test]
async fn an_instance_starts_only_once_the_start_hook_lets_it_before_its_first_write() {
    use mcpl_server::{InstanceStart, StartRefused};
    let store = Arc::new(MemoryStore::new());
    let think: Think = Arc::default();
    let seen: Seen = Arc::default();
    let refuse: Arc<std::sync::Mutex<Option<StartRefused>>> = Arc::default();
    let (at, kept, no) = (seen.clone(), store.clone(), refuse.clone());
    let s = builder(Some(store.clone()), &think)
        .on_instance_start(move |id, how| {
            let written = kept.load_instance(id).unwrap().is_some();
            at.lock().unwrap().push((id, how, written));
            let answer = match no.lock().unwrap().clone() {
                Some(refused) => Err(refused),
                None => Ok(()),
            };
            async move { answer }
        })
        .build()
        .unwrap();
    let (mut a, _session) = hinted(&s, "alice").await;

    // Opened: asked with no record of it written yet; written once it ran.
    a.exchange(open(1, "duel", Some("d1"), None)).await;
    let id = the_instance(&s).await;
    assert_eq!(*seen.lock().unwrap(), [(id, InstanceStart::Opened, false)]);
    assert!(store.load_instance(id).unwrap().is_some());

    // Refused: the open is answered "retry", nothing ran, nothing was written.
    *refuse.lock().unwrap() = Some(StartRefused::Unavailable("the leases are down".into()));
    let refused = a.exchange(open(2, "duel", Some("d2"), None)).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused:#}");
    assert_eq!(refused["error"]["data"]["retryable"], true, "{refused:#}");
    assert_eq!(refused["error"]["data"]["ran"], false, "{refused:#}");
    let (asked, how, _) = seen.lock().unwrap()[1];
    assert_eq!(how, InstanceStart::Opened);
    assert_eq!(s.running_instances().await, [id], "d2 did not start");
    assert!(
        store.load_instance(asked).unwrap().is_none(),
        "nothing of d2 written"
    );
    let (open_now, _) = listed(&mut a).await;
    assert!(!open_now.iter().any(|k| k.contains("d2")), "{open_now:?}");

    // Adopted: asked first; another server's, or not now, refuses it with nothing read.
    a.send(call_in(3, "move", "d1")).await;
    assert_eq!(pushed(&mut a).await, "You played: 1");
    assert_eq!(text(&a.recv().await), "11");
    s.release_instance(id).await.expect("released");
    *refuse.lock().unwrap() = Some(StartRefused::Elsewhere);
    assert!(matches!(
        s.adopt_instance(id).await,
        Err(OwnershipError::Elsewhere { id: i }) if i == id
    ));
    *refuse.lock().unwrap() = Some(StartRefused::Unavailable("the leases are down".into()));
    let not_now = s.adopt_instance(id).await.unwrap_err();
    assert!(
        matches!(&not_now, OwnershipError::StartRefused { id: i, .. } if *i == id),
        "{not_now}"
    );
    assert_eq!(
        not_now.to_string(),
        format!("instance {id} may not start on this server now: the leases are down")
    );
    assert_eq!(s.running_instances().await, Vec::<u64>::new());
    // Let: adopted, asked with its record there, and it goes on.
    *refuse.lock().unwrap() = None;
    s.adopt_instance(id).await.expect("adopted");
    let last = *seen.lock().unwrap().last().unwrap();
    assert_eq!(last, (id, InstanceStart::Adopted, true));
    a.send(call_in(4, "move", "d1")).await;
    assert_eq!(pushed(&mut a).await, "You played: 12");
    assert_eq!(text(&a.recv().await), "22");
}

//! Issue #41 (`docs/ownership.md` §2, §4.6 shared instances): an instance on server A
//! invites a principal whose connection is on server B. The invitation goes to B (the
//! server serving that principal's address), not to a principal started on A; B's
//! connection is told (the push with its `suggest`, §4.6); opening it on B joins the
//! instance on A, and from then on each player's calls and the other's moves cross the
//! servers both ways. Declining on B reaches the instance's logic on A, whose player is
//! told. Raw JSON on real sockets (the stdio framing on loopback), two [`Server`]s in one
//! process reaching each other through [`InProcessPeers`], on one [`MemoryStore`].
//!
//! Nothing sleeps: every wait is for a message.

use crate::issue41_remote::player;
use crate::raw;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    Event, InProcessPeers, InstanceContext, InstanceLogic, Joined, MemoryStore, ParticipantId,
    Placed, Placement, Principal, Refusal, Reply, Server, Started, ToolCall, ToolContext,
    ToolError, Toolset,
};
use mcpl_testkit::msg::{open, request, result};
use raw::Lines;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// A shared duel: its opener names an `opponent`, who is invited; `hit` counts, and every
/// other participant is told who hit.
struct Duel {
    host: ParticipantId,
    hits: u64,
}

impl InstanceLogic for Duel {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        self.hits += 1;
        let text = format!("{} hit: {}", cx.name(call.caller()), self.hits);
        let others: Vec<ParticipantId> = cx
            .participants()
            .map(|p| p.id())
            .filter(|p| *p != call.caller())
            .collect();
        for other in others {
            cx.event(other, Event::text(text.clone()));
        }
        Reply::text(self.hits.to_string())
    }

    fn join(&mut self, _: ParticipantId, _: &mut InstanceContext) -> Result<Joined, Refusal> {
        Ok(Joined::new().title("Duel").text("Joined."))
    }

    fn invited(&mut self, who: ParticipantId, name: Option<&str>, cx: &mut InstanceContext) {
        let text = format!("{} sees the duel as {}", cx.name(who), name.unwrap_or("-"));
        cx.event(self.host, Event::text(text));
    }

    fn declined(&mut self, who: ParticipantId, cx: &mut InstanceContext) {
        let name = cx.name(who);
        cx.event(self.host, Event::text(format!("{name} declined.")));
        cx.end(format!("{name} declined the duel"));
    }
}

#[derive(Deserialize)]
struct DeclineArgs {
    instance: String,
}

/// A server on `store`, reaching the other through `peers`.
fn server(store: &Arc<MemoryStore>, peers: &InProcessPeers) -> Server {
    server_placed(store, peers, None)
}

/// [`server`], asking `placement` (when given) before starting a principal an invitation
/// brings.
fn server_placed(
    store: &Arc<MemoryStore>,
    peers: &InProcessPeers,
    placement: Option<Arc<dyn Placement>>,
) -> Server {
    let duel = Toolset::new("duel")
        .instances()
        .options(json!({"type": "object", "properties": {"opponent": {"type": "string"}}}))
        .tool(Tool::new("hit", "Hits", json!({"type": "object"})))
        .on_open(|opening, cx| {
            if let Some(opponent) = opening.options()["opponent"].as_str() {
                let reason = format!("{} challenges you to a duel", opening.principal().name());
                cx.invite(Principal::Named(opponent.to_owned()), reason);
            }
            Ok(Started::new(Duel {
                host: opening.opener(),
                hits: 0,
            })
            .title("Duel"))
        });
    let builder = Server::builder("remote-invite-test", "0.1.0")
        .toolset(duel)
        .tool(
            Tool::new(
                "decline",
                "Declines an invitation",
                json!({"type": "object"}),
            ),
            |ctx: ToolContext, args: DeclineArgs| async move {
                match ctx.decline_invitation("duel", Some(&args.instance)).await {
                    Ok(inv) => Ok(CallToolResult::text(format!(
                        "Declined {}:{}",
                        inv.toolset,
                        inv.instance.unwrap_or_default()
                    ))),
                    Err(e) => Err(ToolError::failed(e.to_string())),
                }
            },
        )
        .tool(
            Tool::new("pending", "Lists invitations", json!({"type": "object"})),
            |ctx: ToolContext, _: Value| async move {
                let list = ctx.invitations().await.map_err(ToolError::internal)?;
                let lines: Vec<String> = list
                    .iter()
                    .map(|i| {
                        let instance = i.instance.as_deref().unwrap_or("-");
                        format!("{}:{instance} from {}", i.toolset, i.from.name())
                    })
                    .collect();
                Ok(CallToolResult::text(lines.join("\n")))
            },
        )
        .store(store.clone())
        .peers(Arc::new(peers.clone()));
    match placement {
        Some(p) => builder.placement(p),
        None => builder,
    }
    .build()
    .unwrap()
}

/// The next `push/event` (answered), skipping hint notifications: its params.
async fn next_push(c: &mut Lines) -> Value {
    loop {
        let m = c.recv().await;
        match m["method"].as_str() {
            Some("push/event") => {
                c.send(result(m["id"].clone(), json!({"accepted": true})))
                    .await;
                return m["params"].clone();
            }
            Some(_) => {}
            None => panic!("a response while waiting for a push: {m:#}"),
        }
    }
}

/// The response to `request` (sent now), answering the pushes that come first: (their
/// params, the response).
async fn answered(c: &mut Lines, request: Value) -> (Vec<Value>, Value) {
    let id = request["id"].clone();
    c.send(request).await;
    let mut pushes = Vec::new();
    loop {
        let m = c.recv().await;
        match m["method"].as_str() {
            Some("push/event") => {
                c.send(result(m["id"].clone(), json!({"accepted": true})))
                    .await;
                pushes.push(m["params"].clone());
            }
            Some(_) => {}
            None if m["id"] == id => return (pushes, m),
            None => panic!("an answer to another request: {m:#}"),
        }
    }
}

fn push_text(params: &Value) -> &str {
    params["payload"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {params:#}"))
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {reply:#}"))
}

fn hit(id: i64, instance: &str) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": "hit", "arguments": {}, "_meta": {"mcpl/instance": instance}}),
    )
}

/// The pushes before `request`'s answer and after it, until `want` of them came.
async fn pushes_around(c: &mut Lines, request: Value, want: usize) -> (Vec<Value>, Value) {
    let (mut pushes, response) = answered(c, request).await;
    while pushes.len() < want {
        pushes.push(next_push(c).await);
    }
    (pushes, response)
}

#[actix::test]
async fn an_invitation_reaches_the_invitees_server_and_the_game_is_played_across_both() {
    let store = Arc::new(MemoryStore::new());
    let peers = InProcessPeers::new();
    let a = server(&store, &peers);
    let b = server(&store, &peers);
    let (mut bob, _bob_session) = player(&b, "bob").await;
    let (mut alice, _alice_session) = player(&a, "alice").await;

    // alice opens a duel on A naming bob, whose connection is on B.
    let (mut told_alice, opened) = pushes_around(
        &mut alice,
        open(1, "duel", Some("g1"), Some(json!({"opponent": "bob"}))),
        0,
    )
    .await;
    assert_eq!(opened["result"]["instance"], "g1", "{opened:#}");
    // bob's connection on B is told, with the suggestion to open it (§4.6).
    let invited = next_push(&mut bob).await;
    let reason = "alice challenges you to a duel";
    assert_eq!(
        push_text(&invited),
        format!("{reason} (open duel:g1 to join)"),
        "{invited:#}"
    );
    assert_eq!(
        invited["hints"]["suggest"],
        json!([{"toolset": "duel", "instance": "g1", "action": "open", "reason": reason,
                "options": {"opponent": "bob"}}]),
        "{invited:#}"
    );
    // The name bob shows it under came back to the logic on A.
    if told_alice.is_empty() {
        told_alice.push(next_push(&mut alice).await);
    }
    assert_eq!(push_text(&told_alice[0]), "bob sees the duel as g1");
    // bob runs on B only: A started no principal of him for the invitation.
    assert_eq!(a.principal_count(), 1, "only alice on A");
    assert_eq!(b.principal_count(), 1, "only bob on B");
    assert_eq!(a.running_instances().await.len(), 1);
    assert_eq!(b.running_instances().await, Vec::<u64>::new());

    // bob opens it on B: he joins the duel running on A.
    let (_, joined) = answered(&mut bob, open(2, "duel", Some("g1"), None)).await;
    assert_eq!(joined["result"]["instance"], "g1", "{joined:#}");
    assert_eq!(
        joined["result"]["content"],
        json!([{"type": "text", "text": "Joined."}]),
        "{joined:#}"
    );

    // A move each: each is answered, and the other is told.
    let (_, first) = answered(&mut alice, hit(2, "g1")).await;
    assert_eq!(text(&first), "1", "{first:#}");
    assert_eq!(push_text(&next_push(&mut bob).await), "alice hit: 1");
    let (_, second) = answered(&mut bob, hit(3, "g1")).await;
    assert_eq!(text(&second), "2", "{second:#}");
    assert_eq!(push_text(&next_push(&mut alice).await), "bob hit: 2");

    // A second duel, which bob declines on B: alice on A is told, and the duel ends.
    let (mut told_alice, _) = pushes_around(
        &mut alice,
        open(3, "duel", Some("g2"), Some(json!({"opponent": "bob"}))),
        0,
    )
    .await;
    let invited = next_push(&mut bob).await;
    assert_eq!(
        invited["hints"]["suggest"][0]["instance"], "g2",
        "{invited:#}"
    );
    if told_alice.is_empty() {
        told_alice.push(next_push(&mut alice).await);
    }
    assert_eq!(push_text(&told_alice[0]), "bob sees the duel as g2");
    let decline = request(
        json!(4),
        "tools/call",
        json!({"name": "decline", "arguments": {"instance": "g2"}}),
    );
    let (_, declined) = answered(&mut bob, decline).await;
    assert_eq!(text(&declined), "Declined duel:g2", "{declined:#}");
    let heard = next_push(&mut alice).await;
    assert_eq!(push_text(&heard), "bob declined.", "{heard:#}");
    assert_eq!(
        heard["hints"]["toolsets"][0]["reason"], "bob declined the duel",
        "{heard:#}"
    );
    assert_eq!(a.principal_count(), 1, "still only alice on A");
}

#[actix::test]
async fn an_invitation_for_a_principal_no_server_runs_starts_it_on_the_instances_server() {
    let store = Arc::new(MemoryStore::new());
    let peers = InProcessPeers::new();
    let a = server(&store, &peers);
    let b = server(&store, &peers);
    let (_bob, _bob_session) = player(&b, "bob").await;
    let (mut alice, _alice_session) = player(&a, "alice").await;

    // carol is connected nowhere: nobody serves her, so A starts her, as it always did.
    let (mut told_alice, _) = pushes_around(
        &mut alice,
        open(1, "duel", Some("g3"), Some(json!({"opponent": "carol"}))),
        0,
    )
    .await;
    if told_alice.is_empty() {
        told_alice.push(next_push(&mut alice).await);
    }
    assert_eq!(push_text(&told_alice[0]), "carol sees the duel as g3");
    assert_eq!(a.principal_count(), 2, "alice and carol on A");
    assert_eq!(b.principal_count(), 1, "only bob on B");

    // carol connecting to A finds it waiting for her.
    let (mut carol, _carol_session) = player(&a, "carol").await;
    let pending = request(
        json!(1),
        "tools/call",
        json!({"name": "pending", "arguments": {}}),
    );
    let (_, listed) = answered(&mut carol, pending).await;
    assert_eq!(text(&listed), "duel:g3 from alice", "{listed:#}");
}

/// A placement that says where each principal runs as the test sets it (nobody named:
/// here), and publishes who it was asked about, in order.
#[derive(Default)]
struct Placements {
    elsewhere: std::sync::Mutex<Vec<String>>,
    asked: tokio::sync::watch::Sender<Vec<String>>,
}

impl Placement for Placements {
    fn place(
        &self,
        name: &str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Placed> + Send>> {
        self.asked.send_modify(|a| a.push(name.to_owned()));
        let away = self.elsewhere.lock().unwrap().iter().any(|n| n == name);
        let placed = if away {
            Placed::Elsewhere
        } else {
            Placed::Here
        };
        Box::pin(std::future::ready(placed))
    }
}

#[actix::test]
async fn an_invitation_for_a_principal_placed_elsewhere_is_sent_there_and_starts_nothing_here() {
    let store = Arc::new(MemoryStore::new());
    let peers = InProcessPeers::new();
    let placements = Arc::new(Placements::default());
    placements
        .elsewhere
        .lock()
        .unwrap()
        .push("carol".to_owned());
    let a = server_placed(&store, &peers, Some(placements.clone()));
    let b = server(&store, &peers);
    let (mut alice, _alice_session) = player(&a, "alice").await;
    let mut asked = placements.asked.subscribe();

    // carol runs nowhere, and her lease is another node's: A asks, and starts nothing.
    let opened = alice
        .exchange(open(
            1,
            "duel",
            Some("g3"),
            Some(json!({"opponent": "carol"})),
        ))
        .await;
    assert!(opened.get("result").is_some(), "{opened:#}");
    mcpl_testkit::within(asked.wait_for(|a| a.iter().any(|n| n == "carol")))
        .await
        .unwrap();
    assert_eq!(a.principal_count(), 1, "carol is not started on A");

    // She comes to B (where her lease is): the invitation, sent to her again, reaches her
    // there, and alice hears where she sees it.
    let (mut carol, _carol_session) = player(&b, "carol").await;
    let invited = next_push(&mut carol).await;
    assert_eq!(
        invited["hints"]["suggest"][0]["reason"], "alice challenges you to a duel",
        "{invited:#}"
    );
    let told = next_push(&mut alice).await;
    assert_eq!(push_text(&told), "carol sees the duel as g3");
    assert_eq!(a.principal_count(), 1, "still only alice on A");
    assert_eq!(b.principal_count(), 1, "carol on B");
}

#[actix::test]
async fn an_invitation_for_a_principal_placed_here_starts_her_here_once_placed() {
    let store = Arc::new(MemoryStore::new());
    let peers = InProcessPeers::new();
    let placements = Arc::new(Placements::default());
    let a = server_placed(&store, &peers, Some(placements.clone()));
    let (mut alice, _alice_session) = player(&a, "alice").await;
    let (mut told_alice, _) = pushes_around(
        &mut alice,
        open(1, "duel", Some("g4"), Some(json!({"opponent": "dave"}))),
        0,
    )
    .await;
    if told_alice.is_empty() {
        told_alice.push(next_push(&mut alice).await);
    }
    assert_eq!(push_text(&told_alice[0]), "dave sees the duel as g4");
    assert_eq!(
        *placements.asked.borrow(),
        ["dave"],
        "placed before she started"
    );
    assert_eq!(a.principal_count(), 2, "alice and dave on A");
}

/// A placement that answers nothing until the test opens its gate, then "here" for
/// everyone.
struct Gated {
    open: tokio::sync::watch::Sender<bool>,
}

impl Placement for Gated {
    fn place(
        &self,
        _: &str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Placed> + Send>> {
        let mut open = self.open.subscribe();
        Box::pin(async move {
            let _ = open.wait_for(|o| *o).await;
            Placed::Here
        })
    }
}

/// What waits for a principal while her placement is asked is bounded
/// (`mcpl_server::WAITING_INVITATIONS`): alice and bob open one duel more than the bound
/// naming erin, whose placement does not answer; the one past it is declined on erin's
/// behalf (bob told, the duel ended), the others wait, and once erin is placed here she
/// is told each of them and lists them all. A withdrawal of one still waiting (its duel
/// closed by alice) takes it back: erin never sees it.
#[actix::test]
async fn invitations_past_the_bound_of_what_waits_for_a_principal_being_placed_are_declined() {
    use mcpl_server::WAITING_INVITATIONS;
    let store = Arc::new(MemoryStore::new());
    let peers = InProcessPeers::new();
    let gate = Arc::new(Gated {
        open: tokio::sync::watch::Sender::new(false),
    });
    let a = server_placed(&store, &peers, Some(gate.clone()));
    // A principal opens at most 64 toolsets: alice opens the first 40 duels, bob the rest.
    let (mut alice, _alice_session) = player(&a, "alice").await;
    let (mut bob, _bob_session) = player(&a, "bob").await;
    let alice_opens = 40;
    let (mut told_alice, mut told_bob) = (Vec::new(), Vec::new());
    for n in 0..=WAITING_INVITATIONS {
        let (opener, told) = if n < alice_opens {
            (&mut alice, &mut told_alice)
        } else {
            (&mut bob, &mut told_bob)
        };
        let name = format!("w{n}");
        let id = i64::try_from(n).unwrap() + 1;
        let options = json!({"opponent": "erin"});
        let (pushes, opened) = answered(opener, open(id, "duel", Some(&name), Some(options))).await;
        assert!(opened.get("result").is_some(), "{opened:#}");
        told.extend(pushes);
    }
    // The one past the bound (bob's last): declined on erin's behalf, its duel ended.
    if told_bob.is_empty() {
        told_bob.push(next_push(&mut bob).await);
    }
    assert_eq!(told_bob.len(), 1, "{told_bob:#?}");
    assert_eq!(push_text(&told_bob[0]), "erin declined.", "{told_bob:#?}");
    assert!(told_alice.is_empty(), "{told_alice:#?}");
    assert_eq!(
        a.principal_count(),
        2,
        "erin not started: still being placed"
    );
    // One still waiting withdrawn: its duel closed.
    let close = request(
        json!("close"),
        "toolsets/close",
        json!({"toolset": "duel", "instance": "w0"}),
    );
    let (_, closed) = answered(&mut alice, close).await;
    assert!(closed.get("result").is_some(), "{closed:#}");

    // Placed here: erin sees every invitation that waited but the one withdrawn.
    gate.open.send_replace(true);
    let mut seen = Vec::new();
    while seen.len() < alice_opens - 1 {
        seen.push(push_text(&next_push(&mut alice).await).to_owned());
    }
    while seen.len() < WAITING_INVITATIONS - 1 {
        seen.push(push_text(&next_push(&mut bob).await).to_owned());
    }
    assert!(
        seen.iter()
            .all(|s| s.starts_with("erin sees the duel as w")),
        "{seen:#?}"
    );
    let (mut erin, _erin_session) = player(&a, "erin").await;
    let pending = request(
        json!(1),
        "tools/call",
        json!({"name": "pending", "arguments": {}}),
    );
    let (_, listed) = answered(&mut erin, pending).await;
    let lines: Vec<&str> = text(&listed).lines().collect();
    assert_eq!(lines.len(), WAITING_INVITATIONS - 1, "{listed:#}");
    assert!(
        !lines.contains(&"duel:w0 from alice"),
        "withdrawn: {lines:?}"
    );
    assert!(lines.contains(&"duel:w1 from alice"), "{lines:?}");
}

//! Issue #41 (`docs/ownership.md` §2, §4.6 shared instances) on a real `nats-server` and
//! a real PostgreSQL, both started by the test: alice on the first node opens a shared
//! duel naming bob, whose connection is on the second. The invitation goes over NATS to
//! `mcpl.a.bob` (the first node starts no actor of bob), bob's connection is told with
//! the suggestion to open it, bob opens it on the second node — joining the duel running
//! on the first — and each player's move is told to the other across the nodes.

use crate::support::Client;
use mcpl_cluster::bus::BusConfig;
use mcpl_cluster::{NatsBus, NatsPeers, PgStore};
use mcpl_server::{
    Event, InstanceContext, InstanceLogic, Joined, ParticipantId, Principal, Refusal, Reply,
    Server, Started, Tool, ToolCall, Toolset,
};
use mcpl_testkit::msg::{PROTOCOL_VERSION, initialized, mcpl_capabilities, open, request};
use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A shared duel: its opener names an `opponent`, who is invited; `hit` counts, and the
/// other participants are told who hit.
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
}

/// A database of its own on the PostgreSQL this binary's tests share.
fn database() -> (Arc<Postgres>, String) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let pg = Postgres::shared().expect("a private PostgreSQL starts");
    let name = format!("remote_invite_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    postgres::Client::connect(&pg.url(), postgres::NoTls)
        .expect("connect")
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test's database");
    let url = pg.url_of(&name);
    (pg, url)
}

/// A node: a server on a `PgStore` of its own, reaching the others through `peers`.
fn node(url: &str, peers: NatsPeers) -> Server {
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
    let store = Arc::new(PgStore::connect(url).expect("the store connects"));
    Server::builder("remote-invite-pg-test", "0.1.0")
        .toolset(duel)
        .store(store)
        .peers(Arc::new(peers))
        .build()
        .expect("a valid server")
}

async fn peers(nats: &Nats, node: &str) -> NatsPeers {
    let bus = NatsBus::connect(&nats.url(), BusConfig::new(node))
        .await
        .expect("the bus connects");
    NatsPeers::new(Arc::new(bus))
}

/// `who` on `server`, through the MCPL handshake with `toolHints` and push events granted.
async fn player(server: &Server, who: &str) -> Client {
    let mut c = Client::connect(server, who);
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

fn hit(id: i64) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": "hit", "arguments": {}, "_meta": {"mcpl/instance": "g1"}}),
    )
}

fn text(v: &Value) -> &str {
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {v:#}"))
}

#[actix::test]
async fn issue41_09_an_invitation_crosses_to_the_invitees_node_over_nats_and_both_play() {
    let nats = Nats::start().expect("nats-server starts");
    // The synchronous client runs a runtime of its own: off this one's thread.
    let (_pg, url) = tokio::task::spawn_blocking(database).await.unwrap();
    let (on_a, on_b) = (peers(&nats, "a").await, peers(&nats, "b").await);
    let (first, second) = tokio::task::spawn_blocking(move || (node(&url, on_a), node(&url, on_b)))
        .await
        .unwrap();
    let mut bob = player(&second, "bob").await;
    let mut alice = player(&first, "alice").await;

    let opened = alice
        .exchange(open(
            1,
            "duel",
            Some("g1"),
            Some(json!({"opponent": "bob"})),
        ))
        .await;
    assert_eq!(opened["result"]["instance"], "g1", "{opened:#}");
    let invited = bob.push().await;
    assert_eq!(
        invited["hints"]["suggest"],
        json!([{"toolset": "duel", "instance": "g1", "action": "open",
                "reason": "alice challenges you to a duel", "options": {"opponent": "bob"}}]),
        "{invited:#}"
    );
    assert_eq!(
        text(&alice.push().await["payload"]),
        "bob sees the duel as g1"
    );
    assert_eq!(
        first.principal_count(),
        1,
        "no actor of bob on the first node"
    );

    let joined = bob.exchange(open(2, "duel", Some("g1"), None)).await;
    assert_eq!(text(&joined["result"]), "Joined.", "{joined:#}");
    assert_eq!(second.running_instances().await, Vec::<u64>::new());

    let first_hit = alice.exchange(hit(2)).await;
    assert_eq!(text(&first_hit["result"]), "1", "{first_hit:#}");
    assert_eq!(text(&bob.push().await["payload"]), "alice hit: 1");
    let second_hit = bob.exchange(hit(3)).await;
    assert_eq!(text(&second_hit["result"]), "2", "{second_hit:#}");
    assert_eq!(text(&alice.push().await["payload"]), "bob hit: 2");
}

//! Invitations as server code sees them (§4.6, §7): the logic learns the name an invitee
//! sees (`InstanceLogic::invited`, `InstanceContext::name_for`), a handler lists its
//! caller's invitations and declines one (`ToolContext::invitations`,
//! `decline_invitation`) and the inviting logic hears it (`InstanceLogic::declined`); and
//! who is online (`Server::online_principals`).

use crate::support;

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    DeclineError, Event, InstanceContext, InstanceLogic, Joined, ParticipantId, Refusal, Reply,
    Server, Started, ToolCall, ToolContext, ToolError, Toolset,
};
use mcpl_transport::Principal;
use serde::Deserialize;
use serde_json::{Value, json};
use support::{
    Client, TestClient, call, connect_as, expect_push, hinted, open, result, shown, text,
};

struct Duel {
    host: ParticipantId,
}

impl InstanceLogic for Duel {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        match call.tool() {
            // Each participant with the name its principal knows the duel by (§7).
            "names" => Reply::text(
                cx.participants()
                    .map(|p| format!("{}={}", p.name(), cx.name_for(p.id()).unwrap_or("?")))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => Reply::text("Hit."),
        }
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

fn server() -> Server {
    let duel = Toolset::new("duel")
        .instances()
        .options(json!({"type": "object", "properties": {"opponent": {"type": "string"}}}))
        .tool(Tool::new(
            "names",
            "Who knows it as what",
            json!({"type": "object"}),
        ))
        .tool(Tool::new("hit", "Hits", json!({"type": "object"})))
        .on_open(|opening, cx| {
            if let Some(opponent) = opening.options()["opponent"].as_str() {
                let reason = format!("{} challenges you to a duel", opening.principal().name());
                cx.invite(Principal::Named(opponent.to_owned()), reason);
            }
            Ok(Started::new(Duel {
                host: opening.opener(),
            })
            .title("Duel"))
        });
    Server::builder("test-server", "0.1.0")
        .toolset(duel)
        .tool(
            Tool::new("pending", "Lists invitations", json!({"type": "object"})),
            |ctx: ToolContext, _: Value| async move {
                let list = ctx.invitations().await.map_err(ToolError::internal)?;
                let lines: Vec<String> = list
                    .iter()
                    .map(|i| {
                        format!(
                            "{}:{} from {}: {}",
                            i.toolset,
                            i.instance.as_deref().unwrap_or("-"),
                            i.from.name(),
                            i.reason
                        )
                    })
                    .collect();
                Ok(CallToolResult::text(if lines.is_empty() {
                    "none".to_owned()
                } else {
                    lines.join("\n")
                }))
            },
        )
        .tool(
            Tool::new(
                "decline",
                "Declines an invitation",
                json!({"type": "object"}),
            ),
            |ctx: ToolContext, args: DeclineArgs| async move {
                match ctx.decline_invitation("duel", Some(&args.instance)).await {
                    Ok(inv) => Ok(CallToolResult::text(format!(
                        "Declined {}:{}: {}",
                        inv.toolset,
                        inv.instance.unwrap_or_default(),
                        inv.reason
                    ))),
                    Err(DeclineError::NotInvited { open, .. }) => {
                        Err(ToolError::failed(format!("not invited (open: {open})")))
                    }
                    Err(e) => Err(ToolError::internal(e)),
                }
            },
        )
        .build()
        .unwrap()
}

async fn text_of(client: &mut TestClient, id: i64, tool: &str, args: Value) -> Value {
    let got = client.exchange(call(id, tool, args)).await;
    assert_eq!(got["id"], id, "{got:#}");
    got["result"].clone()
}

#[actix::test]
async fn the_logic_learns_the_invitees_name_and_hears_the_decline() {
    let server = server();
    let (mut bob, _b) = hinted(&server, "bob").await;
    // bob has a duel of his own named g1, so alice's g1 reaches him as g1-2.
    let own = bob.exchange(open(1, "duel", Some("g1"), None)).await;
    assert_eq!(own["result"]["instance"], "g1", "{own:#}");
    let (mut alice, _a) = hinted(&server, "alice").await;
    let opened = alice
        .exchange(open(
            1,
            "duel",
            Some("g1"),
            Some(json!({"opponent": "bob"})),
        ))
        .await;
    assert_eq!(opened["result"]["instance"], "g1", "{opened:#}");
    let reason = "alice challenges you to a duel";
    expect_push(
        &mut bob,
        1,
        json!({"featureSet": "default", "tags": ["surface:activity"],
            "payload": {"content": [text(&format!("{reason} (open duel:g1-2 to join)"))]},
            "hints": {"rev": 2, "suggest": [{"toolset": "duel", "instance": "g1-2",
                "action": "open", "reason": reason, "options": {"opponent": "bob"}}]},
            "toolset": "duel", "instance": "g1-2"}),
    )
    .await;
    // The inviting logic is told the name bob sees.
    expect_push(
        &mut alice,
        1,
        json!({"featureSet": "default", "tags": ["surface:activity"],
            "payload": {"content": [text("bob sees the duel as g1-2")]},
            "toolset": "duel", "instance": "g1"}),
    )
    .await;
    assert_eq!(
        text_of(&mut alice, 2, "names", json!({})).await,
        json!({"content": [text("alice=g1 bob=g1-2")]})
    );
    // bob's handler sees his invitation under his name for it, and declines it.
    assert_eq!(
        text_of(&mut bob, 2, "pending", json!({})).await,
        json!({"content": [text(&format!("duel:g1-2 from alice: {reason}"))]})
    );
    assert_eq!(
        text_of(&mut bob, 3, "decline", json!({"instance": "g1-2"})).await,
        json!({"content": [text(&format!("Declined duel:g1-2: {reason}"))]})
    );
    // alice's logic heard it and ended the duel: the push carries the end (§4.3).
    let got = alice.recv().await;
    let ended = got["params"]["hints"]["toolsets"][0]["ended"]
        .as_str()
        .unwrap_or_else(|| panic!("an ended id: {got:#}"))
        .to_owned();
    assert_eq!(got["id"], 2, "{got:#}");
    let params = &got["params"];
    assert_eq!(
        params["payload"],
        json!({"content": [text("bob declined.")]})
    );
    assert_eq!(
        params["hints"],
        json!({"rev": 2,
            "tools": [shown("hit", Some("g1"), false), shown("names", Some("g1"), false)],
            "toolsets": [{"toolset": "duel", "instance": "g1", "state": "closed",
                          "reason": "bob declined the duel", "ended": ended}]})
    );
    // Gone: nothing to list, nothing to decline again; bob's own g1 is untouched.
    assert_eq!(
        text_of(&mut bob, 4, "pending", json!({})).await,
        json!({"content": [text("none")]})
    );
    assert_eq!(
        text_of(&mut bob, 5, "decline", json!({"instance": "g1-2"})).await,
        json!({"content": [text("not invited (open: false)")], "isError": true})
    );
    assert_eq!(
        text_of(&mut bob, 6, "decline", json!({"instance": "g1"})).await,
        json!({"content": [text("not invited (open: true)")], "isError": true})
    );
}

#[actix::test]
async fn a_joined_invitee_is_known_by_its_own_name() {
    let server = server();
    let (mut bob, _b) = hinted(&server, "bob").await;
    let (mut alice, _a) = hinted(&server, "alice").await;
    alice
        .exchange(open(1, "duel", Some("d"), Some(json!({"opponent": "bob"}))))
        .await;
    bob.recv().await;
    alice.recv().await;
    let joined = bob.exchange(open(1, "duel", Some("d"), None)).await;
    assert_eq!(
        joined,
        result(
            json!(1),
            json!({"instance": "d", "title": "Duel", "content": [text("Joined.")],
                "_meta": {"mcpl/hints": {"rev": 2,
                    "tools": [shown("hit", Some("d"), true), shown("names", Some("d"), true)],
                    "toolsets": [{"toolset": "duel", "instance": "d", "state": "open", "title": "Duel"}]}}})
        )
    );
    assert_eq!(
        text_of(&mut bob, 2, "names", json!({})).await,
        json!({"content": [text("alice=d bob=d")]})
    );
    // Joined: the invitation is no longer there to decline.
    assert_eq!(
        text_of(&mut bob, 3, "decline", json!({"instance": "d"})).await,
        json!({"content": [text("not invited (open: true)")], "isError": true})
    );
}

#[actix::test]
async fn online_principals_are_the_named_ones_with_a_live_session() {
    let server = server();
    let (alice, _a) = hinted(&server, "alice").await;
    let (mut bob, _b) = hinted(&server, "bob").await;
    // bob's toolsets outlive his connection; he is not online for that.
    bob.exchange(open(1, "duel", Some("g1"), None)).await;
    let (mut anon, _n) = connect_as(&server, Principal::anonymous());
    anon.handshake_plain().await;
    let named = |names: &[&str]| -> Vec<Principal> {
        names
            .iter()
            .map(|n| Principal::Named((*n).into()))
            .collect()
    };
    assert_eq!(server.online_principals(), named(&["alice", "bob"]));
    let bob_p = Principal::Named("bob".into());
    assert!(server.is_online(&bob_p));
    assert!(!server.is_online(&Principal::Named("zed".into())));
    drop(bob.close());
    let mut live = server.watch_sessions();
    mcpl_testkit::within(live.wait_for(|n| *n == 2))
        .await
        .unwrap();
    assert_eq!(server.online_principals(), named(&["alice"]));
    assert!(!server.is_online(&bob_p), "bob's last session ended");
    assert_eq!(
        server.principal_count(),
        3,
        "bob is kept, anonymous too while connected"
    );
    drop(alice);
}

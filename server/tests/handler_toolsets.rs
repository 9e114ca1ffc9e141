//! A plain tool handler opening and closing toolsets for its caller
//! (`ToolContext::open_toolset`, `close_toolset`): checked, named and adopted as
//! `toolsets/open` would be; the changes ride in the handler's own result on the calling
//! connection and reach the principal's other connections as hint changes (§5.3, §4.6);
//! held changes never overtake later ones (§5.2), and a cancelled call sends them at once
//! (vector 29).

use crate::support;

use mcpl_protocol::mcp::{CallToolResult, ContentBlock, Tool};
use mcpl_server::OpenError;
use mcpl_server::{
    Event, InstanceContext, InstanceLogic, OpenToolsetError, Refusal, Reply, Server, Started,
    ToolCall, ToolContext, ToolError, Toolset,
};
use mcpl_testkit::within;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use support::{Client, TestClient, call, expect_push, hinted, hints, result, shown, text};
use tokio::sync::{mpsc, oneshot};

/// Lets a test hold a handler between its open and its return.
#[derive(Default)]
struct Gate {
    /// The handler says it opened (with the instance's name).
    opened: Mutex<Option<mpsc::UnboundedSender<String>>>,
    /// The handler returns once this fires.
    release: Mutex<Option<oneshot::Receiver<()>>>,
}

struct Game;

impl InstanceLogic for Game {
    fn call(&mut self, _: ToolCall, _: &mut InstanceContext) -> Reply {
        Reply::text("ok")
    }

    fn close(
        &mut self,
        _: mcpl_server::ParticipantId,
        _: &mut InstanceContext,
    ) -> Vec<ContentBlock> {
        vec![ContentBlock::text("You resigned.")]
    }
}

#[derive(Deserialize)]
struct Start {
    #[serde(default)]
    instance: Option<String>,
    #[serde(default)]
    size: Option<u32>,
    /// Wait at the gate after opening.
    #[serde(default)]
    wait: bool,
}

#[derive(Deserialize)]
struct Leave {
    instance: String,
}

fn texts(content: &[ContentBlock]) -> String {
    let v = serde_json::to_value(content).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

async fn start(
    ctx: ToolContext,
    args: Start,
    gate: Arc<Gate>,
) -> Result<CallToolResult, ToolError> {
    let options = args.size.map(|s| json!({"size": s}));
    let opened = match ctx
        .open_toolset("game", args.instance.as_deref(), options)
        .await
    {
        Ok(o) => o,
        Err(OpenToolsetError::Invalid(OpenError::InvalidOptions { .. })) => {
            return Err(ToolError::failed("invalid options"));
        }
        Err(OpenToolsetError::Invalid(OpenError::BadInstanceName { .. })) => {
            return Err(ToolError::failed("bad name"));
        }
        Err(OpenToolsetError::Refused(r)) => {
            return Err(ToolError::failed(format!("refused: {}", r.message())));
        }
        Err(other) => return Err(other.into()),
    };
    let name = opened.instance.clone().unwrap_or_default();
    if args.wait {
        let opened_tx = gate.opened.lock().unwrap().take().expect("a gate");
        let release = gate.release.lock().unwrap().take().expect("a gate");
        opened_tx.send(name.clone()).unwrap();
        let _ = release.await;
    }
    Ok(CallToolResult::text(format!(
        "Opened {}:{name} ({}) adopted={}: {}",
        opened.toolset,
        opened.title.unwrap_or_default(),
        opened.adopted,
        texts(&opened.content)
    )))
}

fn server(gate: Arc<Gate>) -> Server {
    let game = Toolset::new("game")
        .instances()
        .options(json!({"type": "object", "properties": {"size": {"enum": [3, 5]}}}))
        .tool(Tool::new("look", "Looks", json!({"type": "object"})))
        .hidden_tool(Tool::new("play", "Plays", json!({"type": "object"})))
        .on_open(|opening, cx| {
            if opening.options()["size"] == 5 {
                return Err(Refusal::new("size 5 is not ready"));
            }
            cx.show(opening.opener(), "play");
            cx.event(opening.opener(), Event::text("You started a game."));
            Ok(Started::new(Game).title("Game vs bot").text("Board 3"))
        });
    Server::builder("test-server", "0.1.0")
        .toolset(game)
        .tool(
            Tool::new("start", "Starts a game", json!({"type": "object"})),
            move |ctx: ToolContext, args: Start| start(ctx, args, gate.clone()),
        )
        .tool(
            Tool::new("leave", "Leaves a game", json!({"type": "object"})),
            |ctx: ToolContext, args: Leave| async move {
                let said = ctx.close_toolset("game", Some(&args.instance)).await?;
                Ok(CallToolResult::text(texts(&said)))
            },
        )
        .build()
        .unwrap()
}

/// The changes of opening `game:<name>`.
fn opened_hints(rev: u64, name: &str) -> Value {
    json!({"rev": rev,
        "tools": [shown("look", Some(name), true), shown("play", Some(name), true)],
        "toolsets": [{"toolset": "game", "instance": name, "state": "open", "title": "Game vs bot"}]})
}

/// A gate whose handler reports to the returned receiver and waits for the sender.
fn gate() -> (
    Arc<Gate>,
    mpsc::UnboundedReceiver<String>,
    oneshot::Sender<()>,
) {
    let (opened_tx, opened_rx) = mpsc::unbounded_channel();
    let (release_tx, release_rx) = oneshot::channel();
    let gate = Gate {
        opened: Mutex::new(Some(opened_tx)),
        release: Mutex::new(Some(release_rx)),
    };
    (Arc::new(gate), opened_rx, release_tx)
}

async fn ping(client: &mut TestClient) {
    let pong = client
        .exchange(json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"}))
        .await;
    assert_eq!(pong, result(json!("ping"), json!({})));
}

#[actix::test]
async fn an_open_by_a_handler_rides_in_its_result_and_reaches_the_other_connections() {
    let server = server(Arc::default());
    let (mut a1, _s1) = hinted(&server, "alice").await;
    let (mut a2, _s2) = hinted(&server, "alice").await;
    // The next message on the calling connection is the result, carrying the changes.
    let got = a1.exchange(call(1, "start", json!({}))).await;
    assert_eq!(
        got,
        result(
            json!(1),
            json!({"content": [text("Opened game:game-1 (Game vs bot) adopted=false: Board 3")],
                "_meta": {"mcpl/hints": opened_hints(1, "game-1")}})
        )
    );
    // §5.3: the other connection hears it with the logic's event, on its own rev.
    expect_push(
        &mut a2,
        1,
        json!({"featureSet": "default", "tags": ["surface:activity"],
            "payload": {"content": [text("You started a game.")]},
            "hints": opened_hints(1, "game-1"),
            "toolset": "game", "instance": "game-1"}),
    )
    .await;
    ping(&mut a1).await;
    ping(&mut a2).await;
}

#[actix::test]
async fn a_handler_open_is_checked_named_and_adopted_as_toolsets_open() {
    let server = server(Arc::default());
    let (mut a1, _s1) = hinted(&server, "alice").await;
    let first = a1
        .exchange(call(1, "start", json!({"instance": "g1"})))
        .await;
    assert_eq!(
        first["result"]["_meta"]["mcpl/hints"],
        opened_hints(1, "g1"),
        "{first:#}"
    );
    // Adopted: nothing changed, so no hints and no rev (vector 17).
    let again = a1
        .exchange(call(2, "start", json!({"instance": "g1"})))
        .await;
    assert_eq!(
        again,
        result(
            json!(2),
            json!({"content": [text("Opened game:g1 (Game vs bot) adopted=true: game:g1 is already open; it was adopted, nothing changed.")]})
        )
    );
    let refusals = [
        (json!({"size": 4}), "invalid options"),
        (json!({"instance": "no good"}), "bad name"),
        (json!({"size": 5}), "refused: size 5 is not ready"),
    ];
    for (n, (args, why)) in (3..).zip(refusals) {
        let got = a1.exchange(call(n, "start", args)).await;
        assert_eq!(
            got,
            result(json!(n), json!({"content": [text(why)], "isError": true}))
        );
    }
    let listed = a1
        .exchange(support::request(json!(9), "tools/list", json!({})))
        .await;
    assert_eq!(listed["result"]["_meta"]["mcpl/rev"], 1, "{listed:#}");
}

#[actix::test]
async fn a_close_by_a_handler_rides_in_its_result() {
    let server = server(Arc::default());
    let (mut a1, _s1) = hinted(&server, "alice").await;
    a1.exchange(call(1, "start", json!({"instance": "g1"})))
        .await;
    let left = a1
        .exchange(call(2, "leave", json!({"instance": "g1"})))
        .await;
    // §4.3 (revision 4): a close the principal asked for (through a handler on its
    // behalf) has no ended record, so its entry carries no `ended`.
    assert_eq!(
        left,
        result(
            json!(2),
            json!({"content": [text("You resigned.")],
                "_meta": {"mcpl/hints": {"rev": 2,
                    "tools": [shown("look", Some("g1"), false), shown("play", Some("g1"), false)],
                    "toolsets": [{"toolset": "game", "instance": "g1", "state": "closed",
                                  "reason": "closed"}]}}})
        )
    );
    let again = a1
        .exchange(call(3, "leave", json!({"instance": "g1"})))
        .await;
    assert_eq!(again["result"]["isError"], true, "{again:#}");
}

#[actix::test]
async fn held_changes_go_before_anything_later_and_the_result_carries_the_rest() {
    let (gate, mut opened, release) = gate();
    let server = server(gate);
    let (mut a1, _s1) = hinted(&server, "alice").await;
    let (mut a2, _s2) = hinted(&server, "alice").await;
    a1.send(call(1, "start", json!({"instance": "g1", "wait": true})))
        .await;
    assert_eq!(within(opened.recv()).await.as_deref(), Some("g1"));
    expect_push(
        &mut a2,
        1,
        json!({"featureSet": "default", "tags": ["surface:activity"],
            "payload": {"content": [text("You started a game.")]},
            "hints": opened_hints(1, "g1"), "toolset": "game", "instance": "g1"}),
    )
    .await;
    // The other connection closes the game while the handler still runs.
    let closed = a2
        .exchange(support::request(
            json!("c"),
            "toolsets/close",
            json!({"toolset": "game", "instance": "g1"}),
        ))
        .await;
    let closing = |rev: u64| {
        json!({"rev": rev,
            "tools": [shown("look", Some("g1"), false), shown("play", Some("g1"), false)],
            "toolsets": [{"toolset": "game", "instance": "g1", "state": "closed",
                          "reason": "closed"}]})
    };
    assert_eq!(closed["result"]["_meta"]["mcpl/hints"], closing(2));
    // §5.2: the open's held changes go first, as tools/hints, then the close's.
    a1.expect(hints(opened_hints(1, "g1"))).await;
    a1.expect(hints(closing(2))).await;
    release.send(()).unwrap();
    // The result has nothing left to carry.
    a1.expect(result(
        json!(1),
        json!({"content": [text("Opened game:g1 (Game vs bot) adopted=false: Board 3")]}),
    ))
    .await;
    ping(&mut a1).await;
}

#[actix::test]
async fn a_cancelled_handler_call_sends_what_it_held_at_once() {
    let (gate, mut opened, _release) = gate();
    let server = server(gate);
    let (mut a1, _s1) = hinted(&server, "alice").await;
    a1.send(call(1, "start", json!({"instance": "g1", "wait": true})))
        .await;
    assert_eq!(within(opened.recv()).await.as_deref(), Some("g1"));
    a1.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1}}),
    )
    .await;
    // Vector 29: no result will come, so the changes go now.
    a1.expect(hints(opened_hints(1, "g1"))).await;
    ping(&mut a1).await;
}

#[actix::test]
async fn a_host_without_tool_hints_gets_the_result_without_hints() {
    let server = server(Arc::default());
    let (mut bob, _s) =
        support::connect_as(&server, mcpl_transport::Principal::Named("bob".into()));
    bob.handshake_plain().await;
    let got = bob
        .exchange(call(1, "start", json!({"instance": "g1"})))
        .await;
    assert_eq!(
        got,
        result(
            json!(1),
            json!({"content": [text("Opened game:g1 (Game vs bot) adopted=false: Board 3")]})
        )
    );
}

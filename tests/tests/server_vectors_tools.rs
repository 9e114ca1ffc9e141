//! RFC-014 §3 on the server side, over a real WebSocket: `tools/list` with hints, its rev,
//! calls refused with a reason, and the toolset that implies dynamic.
//! Vectors 1, 11, 16, 27.

mod server_support;

use serde_json::{Value, json};
use server_support::arcade::{legal, take_tool};
use server_support::*;

fn object() -> Value {
    json!({"type": "object", "properties": {}})
}

fn meta(presence: &str, visible: bool, toolset: Option<&str>) -> Value {
    let mut m = json!({"mcpl/presence": presence, "mcpl/visible": visible});
    if let Some(t) = toolset {
        m["mcpl/toolset"] = json!(t);
    }
    m
}

/// The arcade's tools as a host with hints is shown them, `visible` naming those visible
/// now.
fn listed(visible: &[&str], rev: u64) -> Value {
    let v = |name: &str| visible.contains(&name);
    let tool =
        |name: &str, description: &str, schema: Value, presence: &str, toolset: Option<&str>| {
            json!({"name": name, "description": description, "inputSchema": schema,
               "_meta": meta(presence, v(name), toolset)})
        };
    let take = take_tool();
    json!({"tools": [
        tool("lobby_who", "Who is in the lobby", object(), "dynamic", Some("lobby")),
        tool("take", "Take 1 to 3 stones", take.input_schema, "dynamic", Some("nim")),
        tool("board", "Shows the pile", object(), "dynamic", Some("nim")),
        tool("wait", "Waits for the opponent's move", object(), "dynamic", Some("nim")),
        tool("solo_hint", "A hint", object(), "dynamic", Some("solo")),
        tool("solo_answer", "The answer the hint leads to", object(), "dynamic", Some("solo")),
        tool("boom", "Breaks the toolset's logic", object(), "dynamic", Some("fragile")),
        tool("echo", "Says it back", json!({"type": "object", "properties": {"text": {"type": "string"}}}), "static", None),
        tool("news", "Today's news", object(), "dynamic", None),
    ], "_meta": {"mcpl/rev": rev}})
}

#[actix::test]
async fn vector_01_tools_list_lists_every_tool_visible_or_not() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    // Before any rev: the lobby (open by default) and echo are visible; the rest is listed
    // anyway, invisible.
    let got = alice
        .request(request(json!(1), "tools/list", json!({})))
        .await;
    assert_eq!(got, result(json!(1), listed(&["lobby_who", "echo"], 0)));
    // An open nim instance makes its visible tools visible "in at least one instance".
    let opened = alice
        .request(open(2, "nim", Some("g1"), Some(json!({"pile": 5}))))
        .await;
    assert_eq!(opened["result"]["_meta"]["mcpl/hints"]["rev"], 1);
    let got = alice
        .request(request(json!(3), "tools/list", json!({})))
        .await;
    assert_eq!(
        got,
        result(
            json!(3),
            listed(&["lobby_who", "take", "board", "wait", "echo"], 1)
        )
    );
}

#[actix::test]
async fn vector_11_calls_of_invisible_tools_or_closed_toolsets_say_why() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    // A tool outside toolsets that is invisible.
    alice
        .expect_after(
            call(1, "news", json!({})),
            result(json!(1), tool_error("news is not available right now")),
        )
        .await;
    // A declared toolset that is not open.
    alice
        .expect_after(
            call(2, "solo_hint", json!({})),
            result(
                json!(2),
                tool_error("solo_hint belongs to toolset solo, which is not open; open it first"),
            ),
        )
        .await;
    alice
        .expect_after(
            call(3, "take", json!({"count": 1})),
            result(
                json!(3),
                tool_error("take belongs to toolset nim, which is not open; open it first"),
            ),
        )
        .await;
    // A tool invisible in its instance: against bob (not joined), alice moves first; then it
    // is bob's move and `take` is invisible to her.
    alice
        .request(open(
            4,
            "nim",
            Some("g1"),
            Some(json!({"pile": 5, "opponent": "bob"})),
        ))
        .await;
    let took = alice.request(call(5, "take", json!({"count": 1}))).await;
    assert_eq!(
        took["result"]["content"],
        json!([text("You took 1; 4 left. bob's move.")])
    );
    alice
        .expect_after(
            call(6, "take", json!({"count": 1})),
            result(
                json!(6),
                tool_error("take is not available right now in nim:g1"),
            ),
        )
        .await;
    // An unknown tool is a protocol error (MCP), not a tool error.
    let unknown = alice.request(call(7, "nope", json!({}))).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown:#}");
    alice.quiet().await;
}

#[actix::test]
async fn vector_16_a_toolsets_tool_is_dynamic_though_declared_static() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    assert_eq!(
        take_tool().meta.unwrap().presence,
        Some(mcpl_protocol::Presence::Static)
    );
    let got = alice
        .request(request(json!(1), "tools/list", json!({})))
        .await;
    let take = got["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "take")
        .unwrap()
        .clone();
    assert_eq!(take["_meta"], meta("dynamic", false, Some("nim")));
    // In a hint change it is a dynamic tool: per-instance visibility and definition, never
    // a presence.
    let opened = alice.request(open(2, "nim", Some("g1"), None)).await;
    let entry = opened["result"]["_meta"]["mcpl/hints"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "take")
        .unwrap()
        .clone();
    assert_eq!(
        entry,
        json!({"name": "take", "instance": "g1", "visible": true,
               "definition": {"name": "take", "description": "Take 1 to 3 stones", "inputSchema": legal(10)}})
    );
}

#[actix::test]
async fn vector_27_results_with_hints_take_the_next_rev_and_tools_list_names_the_last() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    assert_eq!(alice.listed_rev().await, 0);
    let l = alice.request(list(1)).await;
    assert_eq!(l["result"]["_meta"]["mcpl/hints"]["rev"], 1);
    assert_eq!(alice.listed_rev().await, 1, "tools/list takes no rev");
    let o = alice.request(open(2, "solo", None, None)).await;
    assert_eq!(o["result"]["_meta"]["mcpl/hints"]["rev"], 2);
    assert_eq!(alice.listed_rev().await, 2);
    let c = alice.request(call(3, "solo_hint", json!({}))).await;
    assert_eq!(c["result"]["_meta"]["mcpl/hints"]["rev"], 3);
    // A call that changes nothing carries no hints and takes no rev.
    let c = alice.request(call(4, "solo_hint", json!({}))).await;
    assert_eq!(c, says(json!(4), "Leave your opponent a multiple of four."));
    let x = alice.request(close(5, "solo", None)).await;
    assert_eq!(x["result"]["_meta"]["mcpl/hints"]["rev"], 4);
    let l = alice.request(list(6)).await;
    assert_eq!(l["result"]["_meta"]["mcpl/hints"]["rev"], 5);
    assert_eq!(alice.listed_rev().await, 5);
}

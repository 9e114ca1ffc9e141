//! RFC-014 §2 and §8 on the server side, over a real WebSocket: hosts that did not
//! advertise `toolHints` get plain tools, the compat tools, implicit opens, and never a
//! hint.
//! Vectors 8, 26, 36.

mod server_support;

use serde_json::{Value, json};
use server_support::*;

/// The `instance` argument an instance-bound tool gains for a host without hints.
fn instance_arg(toolset: &str) -> Value {
    json!({"type": "string", "description": format!(
        "Which open {toolset} instance this call is for; may be left out when only one is open.")})
}

fn tool_named<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not listed"))
}

#[actix::test]
async fn vector_08_a_host_without_tool_hints_gets_no_hints_of_any_kind() {
    let h = arcade_server().await;
    let mut plain = h.connect("alice").await;
    plain.handshake(false, Some(&["tools", "pushEvents"])).await;
    let mut hinted = h.hinted("alice").await;
    // The hinted connection's changes do not reach the plain one.
    hinted.request(open(1, "nim", Some("g1"), None)).await;
    plain.quiet().await;
    // Its own results carry none; its list has no hint _meta and names no rev.
    let opened = plain
        .request(call(
            1,
            "toolset_open",
            json!({"toolset": "nim", "instance": "g2"}),
        ))
        .await;
    assert_eq!(
        opened,
        result(
            json!(1),
            json!({"content": [
        text("Opened nim:g2 (Nim vs bot). Name it as the `instance` argument of its tools when several are open."),
        text("Pile: 10. Your move.")]})
        )
    );
    hinted.recv().await; // the other connection's open, as tools/hints there
    let listed = plain
        .request(request(json!(2), "tools/list", json!({})))
        .await;
    assert!(listed["result"].get("_meta").is_none(), "{listed:#}");
    assert!(
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("_meta").is_none())
    );
    // toolsets/* are not methods for it.
    assert_eq!(plain.request(list(3)).await["error"]["code"], -32601);
    assert_eq!(
        plain.request(open(4, "solo", None, None)).await["error"]["code"],
        -32601
    );
    // Another principal invites alice: the plain connection is pushed the event without
    // `hints` (no suggestion); the hinted one gets the suggestion.
    let mut bob = h.hinted("bob").await;
    bob.request(open(
        1,
        "nim",
        Some("g1"),
        Some(json!({"pile": 5, "opponent": "alice"})),
    ))
    .await;
    let invite = json!({"featureSet": "default", "tags": ["surface:activity"],
        "payload": {"content": [text("bob challenges you to Nim (pile 5) (open nim:g1-2 to join)")]},
        "toolset": "nim", "instance": "g1-2"});
    plain.expect_push(1, invite.clone()).await;
    let mut with_hints = invite;
    with_hints["hints"] = json!({"rev": 3, "suggest": [{"toolset": "nim", "instance": "g1-2",
        "action": "open", "reason": "bob challenges you to Nim (pile 5)", "options": {"pile": 5}}]});
    hinted.expect_push(1, with_hints).await;
    // The plain connection joins through the compat tool; bob's move is pushed to it
    // without hints, and to the hinted connection with them.
    let joined = plain
        .request(call(
            5,
            "toolset_open",
            json!({"toolset": "nim", "instance": "g1-2"}),
        ))
        .await;
    assert_eq!(
        joined["result"]["content"][0],
        text(
            "Opened nim:g1-2 (Nim vs bob). Name it as the `instance` argument of its tools when several are open."
        )
    );
    hinted.recv().await;
    bob.request(call_in(2, "take", json!({"count": 1}), "g1"))
        .await;
    plain
        .expect_push(
            2,
            json!({"featureSet": "default", "tags": ["surface:turn"],
        "payload": {"content": [text("bob took 1; 4 left. Your move.")]},
        "toolset": "nim", "instance": "g1-2"}),
        )
        .await;
    let pushed = hinted.recv().await;
    assert_eq!(
        pushed["params"]["hints"]["tools"],
        json!([tool_hint("take", Some("g1-2"), Some(true), None)])
    );
    plain.quiet().await;
}

#[actix::test]
async fn vector_26_a_plain_host_plays_through_compat_tools_and_implicit_opens() {
    let h = arcade_server().await;
    let mut m = h.connect("alice").await;
    m.handshake_plain().await;
    let listed = m.request(request(json!(1), "tools/list", json!({}))).await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "lobby_who",
            "take",
            "board",
            "wait",
            "solo_hint",
            "solo_answer",
            "boom",
            "echo",
            "news",
            "toolset_open",
            "toolset_close"
        ]
    );
    // Only toolsets that need an open are offered by the compat tools.
    assert_eq!(
        tool_named(&listed, "toolset_open")["inputSchema"]["properties"]["toolset"]["enum"],
        json!(["fragile", "nim"])
    );
    // solo has no instances and no required options: implicitly open (the lobby is open by
    // default).
    m.expect_after(
        call(2, "solo_hint", json!({})),
        says(json!(2), "Leave your opponent a multiple of four."),
    )
    .await;
    m.expect_after(
        call(3, "lobby_who", json!({})),
        says(json!(3), "alice is here."),
    )
    .await;
    // A game, through the compat tools.
    m.expect_after(
        call(4, "toolset_open", json!({"toolset": "nim", "options": {"pile": 6}})),
        result(json!(4), json!({"content": [
            text("Opened nim:nim-1 (Nim vs bot). Name it as the `instance` argument of its tools when several are open."),
            text("Pile: 6. Your move.")]})),
    ).await;
    m.expect_after(
        call(5, "take", json!({"count": 1})),
        says(json!(5), "You took 1; bot took 1; 4 left. Your move."),
    )
    .await;
    m.request(call(
        6,
        "toolset_open",
        json!({"toolset": "nim", "instance": "second"}),
    ))
    .await;
    m.expect_after(call(7, "take", json!({"count": 1})),
        result(json!(7), tool_error("take: several nim instances are open (nim-1, second); name the one this call is for"))).await;
    m.expect_after(
        call(8, "board", json!({"instance": "nim-1"})),
        says(json!(8), "Pile: 4. alice to move."),
    )
    .await;
    m.expect_after(
        call(9, "toolset_close", json!({"toolset": "nim"})),
        result(
            json!(9),
            tool_error(
                "toolset \"nim\" has instances; name the one to close (open: nim-1, second)",
            ),
        ),
    )
    .await;
    m.expect_after(
        call(
            10,
            "toolset_close",
            json!({"toolset": "nim", "instance": "nim-1"}),
        ),
        result(
            json!(10),
            json!({"content": [text("Closed nim:nim-1."), text("You resigned.")]}),
        ),
    )
    .await;
    // With one left, the instance may be left out again.
    m.expect_after(
        call(11, "toolset_close", json!({"toolset": "nim"})),
        result(
            json!(11),
            json!({"content": [text("Closed nim:second."), text("You resigned.")]}),
        ),
    )
    .await;
    // Bad compat arguments are tool errors the model can correct.
    m.expect_after(
        call(12, "toolset_open", json!({})),
        result(
            json!(12),
            tool_error("toolset_open: the argument `toolset` is required"),
        ),
    )
    .await;
    let refused = m
        .request(call(
            13,
            "toolset_open",
            json!({"toolset": "nim", "options": {"pile": 99}}),
        ))
        .await;
    assert_eq!(refused["result"]["isError"], true);
    assert!(
        refused["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("at /pile"),
        "{refused:#}"
    );
    m.quiet().await;
}

#[actix::test]
async fn vector_36_hinted_tools_are_plain_static_tools_and_calls_reach_the_only_instance() {
    let h = arcade_server().await;
    let mut plain = h.connect("alice").await;
    plain.handshake(false, Some(&["tools", "pushEvents"])).await;
    let listed = plain
        .request(request(json!(1), "tools/list", json!({})))
        .await;
    // take declared `mcpl/presence: "static"` in a toolset: shown as a plain tool with the
    // optional instance argument, no hint _meta.
    let mut schema = server_support::arcade::take_tool().input_schema;
    schema["properties"]["instance"] = instance_arg("nim");
    assert_eq!(
        tool_named(&listed, "take"),
        &json!({"name": "take", "description": "Take 1 to 3 stones", "inputSchema": schema})
    );
    assert_eq!(
        tool_named(&listed, "news"),
        &json!({"name": "news", "description": "Today's news", "inputSchema": {"type": "object", "properties": {}}})
    );
    assert!(
        tool_named(&listed, "solo_hint")["inputSchema"]["properties"]
            .get("instance")
            .is_none()
    );
    // With one instance open, a call without any instance goes to it.
    plain
        .request(call(
            2,
            "toolset_open",
            json!({"toolset": "nim", "instance": "g1", "options": {"pile": 3}}),
        ))
        .await;
    plain
        .expect_after(
            call(3, "board", json!({})),
            says(json!(3), "Pile: 3. alice to move."),
        )
        .await;
    plain
        .expect_after(
            call(4, "take", json!({"count": 3})),
            says(json!(4), "You took the last stone and won."),
        )
        .await;
    plain.quiet().await;
}

/// §8 over §4.6 **\[project\]** (the issue on RFC-014's boundaries, item 4): a plain
/// connection's implicit opens are its own. The principal's hinted connection is told
/// nothing of them and finds `solo` closed; opening it, it gets the instance the plain
/// connection is using, stated whole; closing it, it does not strand the plain connection,
/// whose tools work on.
#[actix::test]
async fn boundary_04_implicit_opens_neither_reach_nor_strand_the_principals_hinted_connection() {
    let h = arcade_server().await;
    let mut hinted = h.hinted("alice").await;
    let mut plain = h.connect("alice").await;
    plain.handshake_plain().await;
    plain
        .expect_after(
            call(1, "solo_hint", json!({})),
            says(json!(1), "Leave your opponent a multiple of four."),
        )
        .await;
    // Nothing reached the hinted connection; its statement has the lobby alone.
    hinted.quiet().await;
    hinted
        .expect_after(
            list(2),
            result(
                json!(2),
                json!({"_meta": {"mcpl/hints": {"rev": 1, "tools": [
                        {"name": "lobby_who", "visible": true}]}},
                    "open": [{"toolset": "lobby", "title": "Lobby"}],
                    "ended": []}),
            ),
        )
        .await;
    hinted
        .expect_after(
            call(3, "solo_hint", json!({})),
            result(
                json!(3),
                tool_error("solo_hint belongs to toolset solo, which is not open; open it first"),
            ),
        )
        .await;
    // Opening it: the instance the plain connection uses, with what its call revealed.
    hinted
        .expect_after(
            open(4, "solo", None, None),
            result(
                json!(4),
                json!({"title": "Solo practice", "_meta": {"mcpl/hints": {"rev": 2,
                    "toolsets": [{"toolset": "solo", "state": "open", "title": "Solo practice"}],
                    "tools": [{"name": "solo_answer", "visible": true},
                              {"name": "solo_hint", "visible": true}]}}}),
            ),
        )
        .await;
    hinted
        .expect_after(
            close(5, "solo", None),
            result(
                json!(5),
                json!({"_meta": {"mcpl/hints": {"rev": 3,
                    "toolsets": [{"toolset": "solo", "state": "closed", "reason": "closed"}],
                    "tools": [{"name": "solo_answer", "visible": false},
                              {"name": "solo_hint", "visible": false}]}}}),
            ),
        )
        .await;
    // The plain connection is not stranded: solo is open for it again, unseen.
    plain
        .expect_after(
            call(2, "solo_hint", json!({})),
            says(json!(2), "Leave your opponent a multiple of four."),
        )
        .await;
    hinted.quiet().await;
}

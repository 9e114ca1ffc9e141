//! RFC-014 rules on the server side that no numbered vector states alone, over a real
//! WebSocket: the declarations a host is shown in the manifest (§4.1, §8), the ended
//! records' lifetime, default and configured, and no record for a close the principal
//! asked for (§4.3, boundary 3), a plain connection's implicit opens kept apart from the
//! principal's hinted one (§8 over §4.6, boundary 4), `toolHints` withdrawn from several
//! connections and principals at once (§4.1), implicit opens only without required options
//! (§8), manifest changes ending instances (§4.1), `toolsets/close`'s instance rules
//! (§4.2), and `mcpl/visible` across instances (§3).

use mcpl_protocol::digest::revision_of_value;
use mcpl_tests::server_support::{self, *};
use serde_json::{Value, json};
use std::time::Duration;

/// The arcade's manifest as a host with `toolHints` is shown it, without its revision:
/// written out from the declarations in `server_support::arcade`, not read from the server.
fn arcade_manifest() -> Value {
    json!({
        "version": "0.5",
        "pushEvents": true,
        "toolHints": true,
        "featureSets": {"default": {"description": "The server's tools, and the events it pushes about them",
                    "uses": ["tools", "pushEvents"]}},
        "toolsets": {
            "fragile": {"title": "Fragile", "default": "closed", "instances": true},
            "lobby": {"title": "Lobby", "summary": "Who is here", "default": "open"},
            "nim": {"title": "Nim", "summary": "Take stones; whoever takes the last one wins",
                    "default": "closed", "instances": true,
                    "options": {"type": "object", "properties": {
                        "pile": {"type": "integer", "minimum": 1, "maximum": 30},
                        "opponent": {"type": "string"},
                        "think": {"type": "boolean"}}, "additionalProperties": false}},
            "solo": {"title": "Solo", "summary": "Hints for practice", "default": "closed"}},
        "surface": {"title": "Arcade", "summary": "Small games"}})
}

/// `m` with its SPEC §17.2 revision, computed here over exactly `m`.
fn with_revision(mut m: Value) -> Value {
    m["revision"] = json!(revision_of_value(&m).expect("a manifest object"));
    m
}

/// `m` without RFC-014's members (§4.1 **\[project\]**: what a host without `toolHints`
/// is shown).
fn without_rfc014(mut m: Value) -> Value {
    let o = m.as_object_mut().unwrap();
    for k in ["toolHints", "toolsets", "surface"] {
        o.remove(k);
    }
    m
}

fn get_manifest(id: i64) -> Value {
    request(json!(id), "mcpl/manifest", json!({}))
}

#[actix::test]
async fn the_declarations_reach_a_hinted_hosts_manifest_and_a_plain_host_sees_none() {
    let h = arcade_server().await;
    let shown = with_revision(arcade_manifest());
    let mut hinted = h.connect("alice").await;
    let init = hinted.handshake(true, Some(&["tools", "pushEvents"])).await;
    assert_eq!(
        init["capabilities"],
        json!({"tools": {"listChanged": true}, "experimental": {"mcpl": shown}})
    );
    hinted
        .expect_after(get_manifest(1), result(json!(1), shown.clone()))
        .await;
    // An MCPL host without toolHints, and a plain MCP host: no toolHints, toolsets or
    // surface, and a revision over what they are shown.
    let tailored = with_revision(without_rfc014(arcade_manifest()));
    assert_ne!(tailored["revision"], shown["revision"]);
    let mut mcpl_only = h.connect("alice").await;
    let init = mcpl_only
        .handshake(false, Some(&["tools", "pushEvents"]))
        .await;
    assert_eq!(init["capabilities"]["experimental"]["mcpl"], tailored);
    mcpl_only
        .expect_after(get_manifest(1), result(json!(1), tailored.clone()))
        .await;
    let mut plain = h.connect("alice").await;
    let init = plain.handshake_plain().await;
    assert_eq!(init["capabilities"]["experimental"]["mcpl"], tailored);
    plain
        .expect_after(get_manifest(1), result(json!(1), tailored.clone()))
        .await;
}

#[actix::test]
async fn ended_records_live_as_long_as_the_configured_ttl() {
    let h = arcade_server_with(|b| b.ended_ttl(Duration::from_secs(60))).await;
    let mut alice = h.hinted("alice").await;
    alice
        .exchange(open(1, "nim", Some("g1"), Some(json!({"pile": 3}))))
        .await;
    // Won outright: an end the host did not ask for, so recorded (§4.3).
    let over = alice
        .exchange(call_in(2, "take", json!({"count": 3}), "g1"))
        .await;
    let id = ended_id(&over["result"]["_meta"]["mcpl/hints"]);
    let listed = alice.exchange(list(5)).await;
    let record = listed["result"]["ended"][0].clone();
    assert_eq!(
        (&record["id"], &record["at"]),
        (&json!(id), &json!("2026-11-30T12:00:00Z"))
    );
    h.clock.advance(Duration::from_secs(59));
    assert_eq!(
        alice.exchange(list(3)).await["result"]["ended"],
        json!([record])
    );
    // 60 s, not the default hour.
    h.clock.advance(Duration::from_secs(1));
    assert_eq!(alice.exchange(list(4)).await["result"]["ended"], json!([]));
}

/// §4.3 **\[project\]**: a record's `at` is the end's time; it is reported the same on every
/// later connection for the default hour, then no more; a later end gets a new id. (That it
/// is reported at all, under one id, is vector 13.)
#[actix::test]
async fn ended_records_persist_across_connections_for_the_default_hour_and_ids_are_never_reused() {
    let h = arcade_server().await;
    let mut first = h.hinted("alice").await;
    first
        .exchange(open(1, "nim", Some("g1"), Some(json!({"pile": 3}))))
        .await;
    // A game over is an end the host did not ask for: it gets a record (§4.3).
    let over = first
        .exchange(call_in(2, "take", json!({"count": 3}), "g1"))
        .await;
    let id = ended_id(&over["result"]["_meta"]["mcpl/hints"]);
    first.close();
    h.all_closed().await;
    // Every later connection reports it, with the same id, until it expires.
    let mut record = None;
    for _ in 0..2 {
        let mut again = h.hinted("alice").await;
        let l = again.exchange(list(1)).await;
        let ended = l["result"]["ended"].clone();
        assert_eq!(ended.as_array().map(Vec::len), Some(1), "{l:#}");
        assert_eq!(
            (
                &ended[0]["id"],
                &ended[0]["toolset"],
                &ended[0]["instance"],
                &ended[0]["at"]
            ),
            (
                &json!(id),
                &json!("nim"),
                &json!("g1"),
                &json!("2026-11-30T12:00:00Z")
            )
        );
        assert!(ended[0]["reason"].is_string());
        assert_eq!(
            *record.get_or_insert(ended.clone()),
            ended,
            "the same record"
        );
        again.close();
        h.all_closed().await;
    }
    let record = record.unwrap();
    h.clock.advance(Duration::from_secs(3599));
    let mut before = h.hinted("alice").await;
    assert_eq!(before.exchange(list(1)).await["result"]["ended"], record);
    h.clock.advance(Duration::from_secs(1));
    assert_eq!(before.exchange(list(2)).await["result"]["ended"], json!([]));
    // A later end gets a new id, never the expired one.
    before
        .exchange(open(3, "nim", Some("g1"), Some(json!({"pile": 3}))))
        .await;
    let over = before
        .exchange(call_in(4, "take", json!({"count": 3}), "g1"))
        .await;
    assert_ne!(ended_id(&over["result"]["_meta"]["mcpl/hints"]), id);
}

/// §4.3 (revision 4: "ended records every end the host did not ask for"): a close the
/// principal asked for is told by its own hint changes, without a record, so a later
/// `toolsets/list` never reports it as an end "while you were away".
#[actix::test]
async fn boundary_03_a_close_the_principal_asked_for_leaves_no_ended_record() {
    let h = arcade_server().await;
    let mut first = h.hinted("alice").await;
    let mut other = h.hinted("alice").await;
    first.exchange(open(1, "nim", Some("g1"), None)).await;
    let closed = first.exchange(close(2, "nim", Some("g1"))).await;
    let entry = &closed["result"]["_meta"]["mcpl/hints"]["toolsets"][0];
    assert_eq!(
        (&entry["state"], entry.get("ended")),
        (&json!("closed"), None),
        "{closed:#}"
    );
    // The principal's other connection is told of the close (after the open), without a
    // record either.
    fn closes(m: &Value) -> Vec<Value> {
        let changes = if m["method"] == "push/event" {
            &m["params"]["hints"]
        } else {
            &m["params"]
        };
        changes["toolsets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["state"] == "closed")
            .cloned()
            .collect()
    }
    let told = other.next_where(|m| !closes(m).is_empty()).await;
    assert_eq!(told["method"], "tools/hints", "{told:#}");
    assert!(closes(&told)[0].get("ended").is_none(), "{told:#}");
    first.close();
    other.close();
    h.all_closed().await;
    let mut again = h.hinted("alice").await;
    assert_eq!(again.exchange(list(1)).await["result"]["ended"], json!([]));
}

/// The push a connection without hints gets for a move in `g1`.
fn move_pushed(news: &str) -> Value {
    json!({"featureSet": "default", "tags": ["surface:turn"],
        "payload": {"content": [text(news)]}, "toolset": "nim", "instance": "g1"})
}

#[actix::test]
async fn withdrawing_tool_hints_turns_every_connection_of_every_principal_plain() {
    let h = arcade_server().await;
    let (mut a1, mut bob) = game(&h, 6).await;
    let mut a2 = h.hinted("alice").await;
    let mut next = (*h.server.manifest()).clone();
    next.tool_hints = None;
    h.server.replace_manifest(next).unwrap();
    // What a host that advertised toolHints is now shown: the declarations stay, toolHints
    // goes.
    let mut now_shown = arcade_manifest();
    now_shown.as_object_mut().unwrap().remove("toolHints");
    let now_shown = with_revision(now_shown);
    for c in [&mut a1, &mut a2, &mut bob] {
        c.expect(json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
            "params": {"revision": now_shown["revision"], "domains": ["toolsets"]}}))
            .await;
        c.expect(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
            .await;
        c.expect_after(get_manifest(10), result(json!(10), now_shown.clone()))
            .await;
        assert_eq!(c.exchange(list(11)).await["error"]["code"], -32601);
    }
    // alice moves: her result carries no hints, her other connection hears nothing (no
    // tools/hints), and bob is pushed the move without `hints`.
    a1.expect_after(
        call(12, "take", json!({"count": 1})),
        says(json!(12), "You took 1; 5 left. bob's move."),
    )
    .await;
    bob.expect_push(2, move_pushed("alice took 1; 5 left. Your move."))
        .await;
    bob.accept_push(2).await;
    // bob's move reaches both of alice's connections the same way.
    bob.expect_after(
        call(12, "take", json!({"count": 2})),
        says(json!(12), "You took 2; 3 left. alice's move."),
    )
    .await;
    for c in [&mut a1, &mut a2] {
        c.expect_push(1, move_pushed("bob took 2; 3 left. Your move."))
            .await;
        c.accept_push(1).await;
    }
    for c in [&mut a1, &mut a2, &mut bob] {
        c.quiet().await;
    }
}

/// [`arcade`](server_support::arcade) with `drill`: no instances, a required option.
async fn arcade_with_drill() -> Harness {
    arcade_server_with(|b| b.toolset(server_support::arcade::drill())).await
}

#[actix::test]
async fn a_toolset_with_required_options_is_not_implicitly_open_for_a_plain_host() {
    let h = arcade_with_drill().await;
    let mut m = h.connect("alice").await;
    m.handshake_plain().await;
    let listed = m.exchange(request(json!(1), "tools/list", json!({}))).await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    let enum_of = |tool: &str| {
        let t = tools.iter().find(|t| t["name"] == tool).unwrap();
        t["inputSchema"]["properties"]["toolset"]["enum"].clone()
    };
    // §8: solo (no instances, no required options) is implicitly open; drill needs an
    // open, so the compat tools offer it.
    assert_eq!(enum_of("toolset_open"), json!(["drill", "fragile", "nim"]));
    assert_eq!(enum_of("toolset_close"), json!(["drill", "fragile", "nim"]));
    m.expect_after(
        call(2, "solo_hint", json!({})),
        says(json!(2), "Leave your opponent a multiple of four."),
    )
    .await;
    let not_open =
        || tool_error("drill_task belongs to toolset drill, which is not open; open it first");
    m.expect_after(
        call(3, "drill_task", json!({})),
        result(json!(3), not_open()),
    )
    .await;
    // Opening without the required option is refused, and opens nothing.
    let refused = m
        .exchange(call(4, "toolset_open", json!({"toolset": "drill"})))
        .await;
    assert_eq!(refused["result"]["isError"], true, "{refused:#}");
    assert!(
        refused["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"level\""),
        "{refused:#}"
    );
    m.expect_after(
        call(5, "drill_task", json!({})),
        result(json!(5), not_open()),
    )
    .await;
    m.expect_after(
        call(
            6,
            "toolset_open",
            json!({"toolset": "drill", "options": {"level": 3}}),
        ),
        says(json!(6), "Opened drill (Drill, level 3)."),
    )
    .await;
    m.expect_after(
        call(7, "drill_task", json!({})),
        says(json!(7), "Level 3 task: take one stone."),
    )
    .await;
    // Closed again, it is not open again on its own.
    m.expect_after(
        call(8, "toolset_close", json!({"toolset": "drill"})),
        says(json!(8), "Closed drill."),
    )
    .await;
    m.expect_after(
        call(9, "drill_task", json!({})),
        result(json!(9), not_open()),
    )
    .await;
    m.quiet().await;
}

/// The closed entries of a `tools/hints` after a manifest change; returns the ended ids,
/// in the entries' order.
/// Why nim's instances ended when the manifest dropped it.
const GONE: &str = "the server no longer offers the toolset nim";
/// Why they ended when nim's `instances` flag was turned off (§4.1).
const FLIPPED: &str = "the server now offers the toolset nim without instances";

fn closed_ids(changes: &Value, instances: &[&str], reason: &str) -> Vec<String> {
    let entries = changes["toolsets"].as_array().unwrap();
    assert_eq!(entries.len(), instances.len(), "{changes:#}");
    entries
        .iter()
        .zip(instances)
        .map(|(e, i)| {
            let id = e["ended"].as_str().unwrap_or_else(|| panic!("{e:#}"));
            assert_eq!(
                e,
                &json!({"toolset": "nim", "instance": i, "state": "closed",
                    "reason": reason, "ended": id})
            );
            id.to_owned()
        })
        .collect()
}

/// `tools` hidden in `instance`, as closing it states them.
fn hidden_in(instance: &str, tools: &[&str]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| tool_hint(t, Some(instance), Some(false), None))
        .collect()
}

#[actix::test]
async fn removing_an_instanced_toolset_ends_its_instances_for_every_connection() {
    let h = arcade_server().await;
    let (mut a1, mut bob) = game(&h, 6).await;
    let mut a2 = h.hinted("alice").await;
    a1.exchange(open(2, "nim", Some("g2"), None)).await;
    a2.recv().await; // the open, as tools/hints
    let mut next = (*h.server.manifest()).clone();
    next.toolsets.remove("nim");
    h.server.replace_manifest(next).unwrap();
    let mut now_shown = arcade_manifest();
    now_shown["toolsets"].as_object_mut().unwrap().remove("nim");
    let changed = json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
        "params": {"revision": with_revision(now_shown)["revision"], "domains": ["toolsets"]}});
    // nim's tools are now an undeclared group's, at their declared visibility (§4.4; as in
    // vector 33).
    let undeclared = [
        tool_hint("board", None, Some(true), None),
        tool_hint("wait", None, Some(true), None),
    ];
    let mut alice_ids = Vec::new();
    for (c, rev) in [(&mut a1, 3), (&mut a2, 2)] {
        c.expect(changed.clone()).await;
        let got = c.recv().await;
        let ids = closed_ids(&got["params"], &["g1", "g2"], GONE);
        let mut tools = hidden_in("g1", &["board", "take", "wait"]);
        tools.extend(hidden_in("g2", &["board", "take", "wait"]));
        tools.extend(undeclared.clone());
        assert_eq!(
            got,
            hints(json!({"rev": rev, "tools": tools, "toolsets": got["params"]["toolsets"]}))
        );
        alice_ids.push(ids);
    }
    // Each instance has its own record; both connections are told the same ones.
    assert_ne!(alice_ids[0][0], alice_ids[0][1]);
    assert_eq!(alice_ids[0], alice_ids[1]);
    // bob's share of g1 ends too (take was not visible to him: it was alice's move).
    bob.expect(changed).await;
    let got = bob.recv().await;
    let bob_ids = closed_ids(&got["params"], &["g1"], GONE);
    let mut tools = hidden_in("g1", &["board", "wait"]);
    tools.extend(undeclared);
    assert_eq!(
        got,
        hints(json!({"rev": 3, "tools": tools, "toolsets": got["params"]["toolsets"]}))
    );
    // The statements report the records, and nothing of nim open.
    let record = |id: &str, instance: &str| {
        json!({"id": id, "toolset": "nim", "instance": instance,
            "reason": GONE, "at": "2026-11-30T12:00:00Z"})
    };
    let l = a2.exchange(list(3)).await;
    assert_eq!(
        l["result"]["ended"],
        json!([
            record(&alice_ids[0][0], "g1"),
            record(&alice_ids[0][1], "g2")
        ])
    );
    assert_eq!(
        l["result"]["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );
    let l = bob.exchange(list(2)).await;
    assert_eq!(l["result"]["ended"], json!([record(&bob_ids[0], "g1")]));
    for c in [&mut a1, &mut a2, &mut bob] {
        c.quiet().await;
    }
}

#[actix::test]
async fn flipping_a_toolsets_instances_flag_ends_its_instances() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice.exchange(open(1, "nim", Some("g1"), None)).await;
    let mut next = (*h.server.manifest()).clone();
    next.toolsets.get_mut("nim").unwrap().instances = false;
    h.server.replace_manifest(next).unwrap();
    let mut now_shown = arcade_manifest();
    now_shown["toolsets"]["nim"]
        .as_object_mut()
        .unwrap()
        .remove("instances");
    alice
        .expect(json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
            "params": {"revision": with_revision(now_shown)["revision"], "domains": ["toolsets"]}}))
        .await;
    // §4.1: a removal plus an addition: g1 ends, and the new nim starts closed.
    let got = alice.recv().await;
    let ids = closed_ids(&got["params"], &["g1"], FLIPPED);
    assert_eq!(
        got,
        hints(
            json!({"rev": 2, "tools": hidden_in("g1", &["board", "take", "wait"]),
            "toolsets": got["params"]["toolsets"]})
        )
    );
    let l = alice.exchange(list(2)).await;
    assert_eq!(
        l["result"],
        json!({"open": [{"toolset": "lobby", "title": "Lobby"}],
            "ended": [{"id": ids[0], "toolset": "nim", "instance": "g1",
                "reason": FLIPPED, "at": "2026-11-30T12:00:00Z"}],
            "_meta": {"mcpl/hints": {"rev": 3, "tools": [tool_hint("lobby_who", None, Some(true), None)]}}})
    );
    // nim now takes no instance name, and opens as a toolset without instances.
    let refused = alice.exchange(open(3, "nim", Some("g1"), None)).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused:#}");
    let opened = alice.exchange(open(4, "nim", None, None)).await;
    assert_eq!(
        opened["result"]["_meta"]["mcpl/hints"]["toolsets"],
        json!([{"toolset": "nim", "state": "open", "title": "Nim vs bot"}])
    );
    assert!(opened["result"].get("instance").is_none(), "{opened:#}");
    alice.quiet().await;
}

#[actix::test]
async fn close_needs_an_instance_exactly_when_the_toolset_has_instances() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice.exchange(open(1, "nim", Some("g1"), None)).await;
    alice.exchange(open(2, "solo", None, None)).await;
    // §4.2: required for an instanced toolset — even with only one open…
    let refused = alice.exchange(close(3, "nim", None)).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused:#}");
    assert!(refused.get("result").is_none());
    // …and refused for one without instances.
    let refused = alice.exchange(close(4, "solo", Some("s1"))).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused:#}");
    assert!(refused.get("result").is_none());
    // Neither closed anything, nor took a rev.
    alice.quiet().await;
    let l = alice.exchange(list(5)).await;
    assert_eq!(
        l["result"]["open"],
        json!([{"toolset": "lobby", "title": "Lobby"},
               {"toolset": "nim", "instance": "g1", "title": "Nim vs bot"},
               {"toolset": "solo", "title": "Solo practice"}])
    );
    assert_eq!(l["result"]["ended"], json!([]));
    assert_eq!(l["result"]["_meta"]["mcpl/hints"]["rev"], 3);
}

/// The `_meta` of nim's `take` and `board` in `c`'s `tools/list` now.
async fn nim_listed(c: &mut Client) -> [Value; 2] {
    let got = c
        .exchange(request(json!("tl"), "tools/list", json!({})))
        .await;
    let meta = |name: &str| {
        got["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not listed: {got:#}"))["_meta"]
            .clone()
    };
    [meta("take"), meta("board")]
}

/// `take` listed at `visible`, and `board` visible: the answer is per tool.
fn nim_meta(take_visible: bool) -> [Value; 2] {
    let m = |visible: bool| json!({"mcpl/presence": "dynamic", "mcpl/visible": visible, "mcpl/toolset": "nim"});
    [m(take_visible), m(true)]
}

#[actix::test]
async fn visible_in_tools_list_means_visible_in_at_least_one_open_instance() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    // Three games against people who have not joined: alice moves first in each, and after
    // her move `take` is invisible to her there.
    for (id, game, opponent) in [(1, "g1", "bob"), (2, "g2", "carol"), (3, "g3", "bob")] {
        alice
            .exchange(open(
                id,
                "nim",
                Some(game),
                Some(json!({"pile": 5, "opponent": opponent})),
            ))
            .await;
    }
    assert_eq!(nim_listed(&mut alice).await, nim_meta(true));
    // Hidden in the first and the last instance, visible only in the middle one: still
    // visible (neither the first nor the last instance decides).
    for (id, game) in [(4, "g1"), (5, "g3")] {
        let took = alice
            .exchange(call_in(id, "take", json!({"count": 1}), game))
            .await;
        assert_eq!(
            took["result"]["_meta"]["mcpl/hints"]["tools"],
            json!([tool_hint("take", Some(game), Some(false), None)])
        );
    }
    assert_eq!(nim_listed(&mut alice).await, nim_meta(true));
    let l = alice.exchange(list(6)).await;
    let take_entries: Vec<&Value> = l["result"]["_meta"]["mcpl/hints"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] == "take")
        .collect();
    // Per instance, the statement says where it is visible (and states each instance's
    // own definition, visible or not).
    assert_eq!(
        take_entries,
        [
            &tool_hint("take", Some("g1"), None, Some(take_def(4))),
            &tool_hint("take", Some("g2"), Some(true), Some(take_def(5))),
            &tool_hint("take", Some("g3"), None, Some(take_def(4)))
        ]
    );
    // Hidden in all three: invisible.
    alice
        .exchange(call_in(7, "take", json!({"count": 1}), "g2"))
        .await;
    assert_eq!(nim_listed(&mut alice).await, nim_meta(false));
    alice.quiet().await;
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

/// §4.6: a server that does not keep toolsets across connections ends them, each with a
/// record, when the principal's last connection closes, and not before.
#[actix::test]
async fn a_server_that_does_not_keep_toolsets_ends_them_with_the_last_connection() {
    let h = arcade_server_with(|b| b.keep_toolsets(false)).await;
    let mut first = h.hinted("alice").await;
    first.exchange(open(1, "nim", Some("g1"), None)).await;
    let mut second = h.hinted("alice").await;
    first.close();
    // One connection is left: nothing ends.
    second.quiet().await;
    assert_eq!(
        second.exchange(list(1)).await["result"]["open"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    second.close();
    h.all_closed().await;
    let mut again = h.hinted("alice").await;
    let l = again.exchange(list(1)).await;
    // Default-open toolsets open again with the new session; everything that was open
    // ended, each with a record.
    assert_eq!(
        l["result"]["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );
    let ended = l["result"]["ended"].as_array().unwrap();
    let what: Vec<(&str, &str)> = ended
        .iter()
        .map(|r| {
            (
                r["toolset"].as_str().unwrap(),
                r["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        what,
        [
            ("lobby", "every connection of the principal closed"),
            ("nim", "every connection of the principal closed"),
        ]
    );
}

/// §4.1, §4.4: removing `solo` (no instances) from the manifest announces the `toolsets`
/// domain, ends the open toolset with a record, and leaves its tool an undeclared group's
/// tool at its declared visibility, one entry with the final value. (Ending instances is
/// vector 33.)
#[actix::test]
async fn removing_a_toolset_without_instances_ends_it_and_its_tool_joins_an_undeclared_group() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice.exchange(open(1, "solo", None, None)).await;
    let mut next = (*h.server.manifest()).clone();
    next.toolsets.remove("solo");
    let revision = mcpl_server::manifest::shown_to(&next, true)
        .revision
        .unwrap();
    h.server.replace_manifest(next).unwrap();
    alice
        .expect(json!({"jsonrpc": "2.0", "method": "mcpl/manifestChanged",
            "params": {"revision": revision, "domains": ["toolsets"]}}))
        .await;
    let got = alice.recv().await;
    let id = ended_id(&got["params"]);
    assert_eq!(
        got,
        hints(json!({"rev": 2,
            // Its tool leaves the instance and is now an undeclared group's tool, at its
            // declared visibility (§4.4: the host gates those): one entry, the final value.
            "tools": [{"name": "solo_hint", "visible": true}],
            "toolsets": [{"toolset": "solo", "state": "closed",
                          "reason": "the server no longer offers the toolset solo", "ended": id}]}))
    );
    alice.quiet().await;
    let l = alice.exchange(list(2)).await;
    assert_eq!(l["result"]["ended"][0]["id"], json!(id));
    assert_eq!(
        l["result"]["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );
}

/// §4.2 (the issue on RFC-014's boundaries, item 6): absent options are `{}`, so adopting
/// without options an instance opened with some reports that they differ and what it keeps.
#[actix::test]
async fn boundary_06_adopting_without_options_says_which_options_the_instance_keeps() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice
        .exchange(open(1, "nim", Some("g1"), Some(json!({"pile": 5}))))
        .await;
    alice
        .expect_after(
            open(2, "nim", Some("g1"), None),
            result(json!(2), json!({"instance": "g1", "title": "Nim vs bot", "adopted": true,
                "content": [text("nim:g1 is already open; it was adopted, nothing changed. The requested options {} were not applied: it keeps {\"pile\":5}.")]})),
        )
        .await;
    alice.quiet().await;
}

/// §4.1 **\[project\]** (the issue on RFC-014's boundaries, item 8): a name a host proposes
/// is taken within the peer grammar — SPEC §17.2's identifier charset `[A-Za-z0-9._:*-]`,
/// at most 128 characters — and the instance is then used under it; past the bound, or
/// outside the charset, the open is refused and nothing opens.
#[actix::test]
async fn boundary_08_names_within_the_peer_grammar_are_taken_and_used() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    let longest = "n".repeat(128);
    for (id, name) in [(1, "g.1"), (2, "a:b"), (3, "*-_.:"), (4, longest.as_str())] {
        let o = alice.exchange(open(id, "nim", Some(name), None)).await;
        assert_eq!(o["result"]["instance"], name, "{o:#}");
    }
    let too_long = "n".repeat(129);
    for (id, name) in [(5, too_long.as_str()), (6, "g/1"), (7, "g 1"), (8, "ü")] {
        let o = alice.exchange(open(id, "nim", Some(name), None)).await;
        assert_eq!(o["error"]["code"], -32602, "{name}: {o:#}");
    }
    // A call into such an instance reaches it.
    let board = alice.exchange(call_in(9, "board", json!({}), "g.1")).await;
    assert!(board["result"]["isError"].is_null(), "{board:#}");
    let l = alice.exchange(list(10)).await;
    assert_eq!(l["result"]["open"].as_array().unwrap().len(), 5, "{l:#}");
}

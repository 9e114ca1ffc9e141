//! RFC-014 §4 on the server side, over a real WebSocket: opening (names, adoption,
//! options), closing, the full statement, ended records, reconnects and manifest changes.
//! Vectors 5, 6, 9 (server half), 13 (server half), 17, 18, 23, 25, 33, 38.

mod server_support;

use serde_json::{Value, json};
use server_support::arcade::legal;
use server_support::*;
use std::time::Duration;

/// `take`'s definition in an instance with `pile` stones.
fn take_def(pile: u32) -> Value {
    json!({"name": "take", "description": "Take 1 to 3 stones", "inputSchema": legal(pile)})
}

/// The changes a fresh nim instance against the bot states: open with its title, its tools
/// visible, `take` with the instance's legal moves.
fn nim_opened(rev: u64, instance: &str, pile: u32) -> Value {
    json!({"rev": rev,
        "tools": [
            {"name": "board", "instance": instance, "visible": true},
            {"name": "wait", "instance": instance, "visible": true},
            {"name": "take", "instance": instance, "visible": true, "definition": take_def(pile)}],
        "toolsets": [{"toolset": "nim", "instance": instance, "state": "open", "title": "Nim vs bot"}]})
}

fn lobby_statement(rev: u64) -> Value {
    json!({"open": [{"toolset": "lobby", "title": "Lobby"}], "ended": [],
           "_meta": {"mcpl/hints": {"rev": rev, "tools": [{"name": "lobby_who", "visible": true}]}}})
}

#[actix::test]
async fn vector_05_open_returns_instance_name_and_calls_carry_it() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    // No name proposed: the server picks one.
    alice
        .expect_after(
            open(1, "nim", None, Some(json!({"pile": 2}))),
            result(
                json!(1),
                json!({"instance": "nim-1", "title": "Nim vs bot",
                "content": [text("Pile: 2. Your move.")],
                "_meta": {"mcpl/hints": nim_opened(1, "nim-1", 2)}}),
            ),
        )
        .await;
    // The call names it; the bot answers in the same step, and wins: the instance ends,
    // with its ended record's id in the closed entry.
    let got = alice
        .request(call_in(2, "take", json!({"count": 1}), "nim-1"))
        .await;
    let id = ended_id(&got["result"]["_meta"]["mcpl/hints"]);
    assert_eq!(
        got,
        result(
            json!(2),
            json!({"content": [text("You took 1; bot took 1 and won.")],
            "_meta": {"mcpl/hints": {"rev": 2,
                "tools": [{"name": "board", "instance": "nim-1", "visible": false},
                          {"name": "take", "instance": "nim-1", "visible": false},
                          {"name": "wait", "instance": "nim-1", "visible": false}],
                "toolsets": [{"toolset": "nim", "instance": "nim-1", "state": "closed",
                              "reason": "bot wins by taking the last stone", "ended": id}]}}})
        )
    );
    // A second open without a name is another instance (not idempotent, §4.2).
    let second = alice.request(open(3, "nim", None, None)).await;
    assert_eq!(second["result"]["instance"], "nim-2");
    let board = alice.request(call_in(4, "board", json!({}), "nim-2")).await;
    assert_eq!(board, says(json!(4), "Pile: 10. alice to move."));
    alice.quiet().await;
}

#[actix::test]
async fn vector_06_several_instances_and_none_named_fails_naming_them() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice.request(open(1, "nim", Some("g1"), None)).await;
    alice.request(open(2, "nim", Some("g2"), None)).await;
    alice
        .expect_after(
            call(3, "board", json!({})),
            result(
                json!(3),
                tool_error(
                    "board: several nim instances are open (g1, g2); name the one this call is for",
                ),
            ),
        )
        .await;
    alice
        .expect_after(
            call_in(4, "board", json!({}), "g9"),
            result(
                json!(4),
                tool_error("board: no nim instance \"g9\" is open (open: g1, g2)"),
            ),
        )
        .await;
    alice
        .expect_after(
            call_in(5, "board", json!({}), "g2"),
            says(json!(5), "Pile: 10. alice to move."),
        )
        .await;
}

#[actix::test]
async fn vector_17_opening_an_open_instance_adopts_it_and_reports_other_options() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice
        .request(open(1, "nim", Some("g1"), Some(json!({"pile": 5}))))
        .await;
    // Same name, same options: adopted, nothing changed, no hints.
    alice
        .expect_after(
            open(2, "nim", Some("g1"), Some(json!({"pile": 5}))),
            result(
                json!(2),
                json!({"instance": "g1", "title": "Nim vs bot", "adopted": true,
                "content": [text("nim:g1 is already open; it was adopted, nothing changed.")]}),
            ),
        )
        .await;
    // Other options: still adopted, and the content says they were not applied.
    alice
        .expect_after(
            open(3, "nim", Some("g1"), Some(json!({"pile": 7}))),
            result(json!(3), json!({"instance": "g1", "title": "Nim vs bot", "adopted": true,
                "content": [text("nim:g1 is already open; it was adopted, nothing changed. The requested options {\"pile\":7} were not applied: it keeps {\"pile\":5}.")]})),
        )
        .await;
    // A toolset without instances adopts the same way (the lobby is open by default).
    let lobby = alice.request(open(4, "lobby", None, None)).await;
    assert_eq!(lobby["result"]["adopted"], true);
    // One instance, and the adoptions took no rev.
    let l = alice.request(list(5)).await;
    assert_eq!(
        l["result"]["open"],
        json!([
        {"toolset": "lobby", "title": "Lobby"},
        {"toolset": "nim", "instance": "g1", "title": "Nim vs bot", "options": {"pile": 5}}])
    );
    assert_eq!(l["result"]["_meta"]["mcpl/hints"]["rev"], 2);
}

#[actix::test]
async fn vector_18_a_proposed_name_is_used_as_given_or_refused() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    let o = alice.request(open(1, "nim", Some("my-game_1"), None)).await;
    assert_eq!(o["result"]["instance"], "my-game_1");
    // §4.1 [project]: a proposed name is taken within the peer grammar (`.` and `:`
    // included, SPEC §17.2's charset); outside it, refused, never substituted.
    let dotted = alice.request(open(8, "nim", Some("g.1:x"), None)).await;
    assert_eq!(dotted["result"]["instance"], "g.1:x", "{dotted:#}");
    for (id, bad) in [(2, "bad name"), (3, "-dash/x"), (4, "")] {
        let refused = alice.request(open(id, "nim", Some(bad), None)).await;
        assert_eq!(refused["error"]["code"], -32602, "{bad}: {refused:#}");
        assert!(refused.get("result").is_none());
    }
    // A toolset without instances takes no name.
    let refused = alice.request(open(5, "solo", Some("s1"), None)).await;
    assert_eq!(refused["error"]["code"], -32602);
    // Invalid options are refused naming the problem (§4.2).
    let refused = alice
        .request(open(6, "nim", Some("g2"), Some(json!({"pile": 99}))))
        .await;
    assert_eq!(refused["error"]["code"], -32602);
    assert_eq!(refused["error"]["data"]["problems"][0]["at"], "/pile");
    // Nothing was opened by any refusal.
    let l = alice.request(list(7)).await;
    let open_names: Vec<&str> = l["result"]["open"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["instance"].as_str())
        .collect();
    assert_eq!(open_names, ["g.1:x", "my-game_1"]);
}

#[actix::test]
async fn vector_25_a_default_open_toolset_is_listed_without_an_open() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice
        .expect_after(list(1), result(json!(1), lobby_statement(1)))
        .await;
    let who = alice.request(call(2, "lobby_who", json!({}))).await;
    assert_eq!(who, says(json!(2), "alice is here."));
}

#[actix::test]
async fn vector_23_the_statement_is_full_and_what_it_leaves_out_is_invisible() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice
        .request(open(1, "nim", Some("g1"), Some(json!({"pile": 5}))))
        .await;
    alice.request(open(2, "solo", None, None)).await;
    alice.request(call(3, "solo_hint", json!({}))).await;
    alice
        .expect_after(
            list(4),
            result(json!(4), json!({
                "open": [{"toolset": "lobby", "title": "Lobby"},
                         {"toolset": "nim", "instance": "g1", "title": "Nim vs bot", "options": {"pile": 5}},
                         {"toolset": "solo", "title": "Solo practice"}],
                "ended": [],
                "_meta": {"mcpl/hints": {"rev": 4, "tools": [
                    {"name": "board", "instance": "g1", "visible": true},
                    {"name": "lobby_who", "visible": true},
                    {"name": "solo_answer", "visible": true},
                    {"name": "solo_hint", "visible": true},
                    {"name": "take", "instance": "g1", "visible": true, "definition": take_def(5)},
                    {"name": "wait", "instance": "g1", "visible": true}]}}})),
        )
        .await;
    // After closing both, the statement no longer states their tools: they are invisible.
    alice.request(close(5, "nim", Some("g1"))).await;
    alice.request(close(6, "solo", None)).await;
    let l = alice.request(list(7)).await;
    assert_eq!(
        l["result"]["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );
    assert_eq!(
        l["result"]["_meta"]["mcpl/hints"],
        json!({"rev": 7, "tools": [{"name": "lobby_who", "visible": true}]})
    );
    // Both closes were asked for: no ended records (§4.3, revision 4).
    assert_eq!(l["result"]["ended"], json!([]));
}

#[actix::test]
async fn vector_38_an_empty_statement_still_takes_a_rev() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    let closed = alice.request(close(1, "lobby", None)).await;
    assert_eq!(
        closed,
        result(
            json!(1),
            json!({"_meta": {"mcpl/hints": {"rev": 1,
            "tools": [{"name": "lobby_who", "visible": false}],
            "toolsets": [{"toolset": "lobby", "state": "closed", "reason": "closed"}]}}})
        )
    );
    alice
        .expect_after(
            list(2),
            result(
                json!(2),
                json!({"open": [], "ended": [],
                "_meta": {"mcpl/hints": {"rev": 2}}}),
            ),
        )
        .await;
}

#[actix::test]
async fn vector_13_ended_records_persist_across_connections_until_expiry() {
    let h = arcade_server().await;
    let mut first = h.hinted("alice").await;
    first
        .request(open(1, "nim", Some("g1"), Some(json!({"pile": 3}))))
        .await;
    // A game over is an end the host did not ask for: it gets a record (§4.3).
    let over = first
        .request(call_in(2, "take", json!({"count": 3}), "g1"))
        .await;
    let id = ended_id(&over["result"]["_meta"]["mcpl/hints"]);
    first.close();
    h.all_closed().await;
    // Every later connection reports it, with the same id, until it expires.
    let mut record = None;
    for _ in 0..2 {
        let mut again = h.hinted("alice").await;
        let l = again.request(list(1)).await;
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
    assert_eq!(before.request(list(1)).await["result"]["ended"], record);
    h.clock.advance(Duration::from_secs(1));
    assert_eq!(before.request(list(2)).await["result"]["ended"], json!([]));
    // A later end gets a new id, never the expired one.
    before
        .request(open(3, "nim", Some("g1"), Some(json!({"pile": 3}))))
        .await;
    let over = before
        .request(call_in(4, "take", json!({"count": 3}), "g1"))
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
    first.request(open(1, "nim", Some("g1"), None)).await;
    let closed = first.request(close(2, "nim", Some("g1"))).await;
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
    assert_eq!(again.request(list(1)).await["result"]["ended"], json!([]));
}

#[actix::test]
async fn vector_09_after_a_reconnect_the_kept_instance_is_listed_and_reopening_adopts() {
    let h = arcade_server().await;
    let mut first = h.hinted("alice").await;
    first
        .request(open(1, "nim", Some("g1"), Some(json!({"pile": 5}))))
        .await;
    first.close();
    h.all_closed().await;
    let mut again = h.hinted("alice").await;
    again
        .expect_after(
            list(1),
            result(json!(1), json!({
                "open": [{"toolset": "lobby", "title": "Lobby"},
                         {"toolset": "nim", "instance": "g1", "title": "Nim vs bot", "options": {"pile": 5}}],
                "ended": [],
                "_meta": {"mcpl/hints": {"rev": 1, "tools": [
                    {"name": "board", "instance": "g1", "visible": true},
                    {"name": "lobby_who", "visible": true},
                    {"name": "take", "instance": "g1", "visible": true, "definition": take_def(5)},
                    {"name": "wait", "instance": "g1", "visible": true}]}}})),
        )
        .await;
    let o = again
        .request(open(2, "nim", Some("g1"), Some(json!({"pile": 5}))))
        .await;
    assert_eq!(o["result"]["adopted"], true);
    assert!(o["result"].get("_meta").is_none());
    let l = again.request(list(3)).await;
    assert_eq!(
        l["result"]["open"].as_array().unwrap().len(),
        2,
        "one lobby, one game"
    );
}

#[actix::test]
async fn a_server_that_does_not_keep_toolsets_ends_them_with_the_last_connection() {
    let h = arcade_server_with(|b| b.keep_toolsets(false)).await;
    let mut first = h.hinted("alice").await;
    first.request(open(1, "nim", Some("g1"), None)).await;
    let mut second = h.hinted("alice").await;
    first.close();
    // One connection is left: nothing ends.
    second.quiet().await;
    assert_eq!(
        second.request(list(1)).await["result"]["open"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    second.close();
    h.all_closed().await;
    let mut again = h.hinted("alice").await;
    let l = again.request(list(1)).await;
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

#[actix::test]
async fn vector_33_a_manifest_change_removing_a_toolset_ends_its_instances() {
    let h = arcade_server().await;
    let mut alice = h.hinted("alice").await;
    alice.request(open(1, "solo", None, None)).await;
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
    let l = alice.request(list(2)).await;
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
        .request(open(1, "nim", Some("g1"), Some(json!({"pile": 5}))))
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
        let o = alice.request(open(id, "nim", Some(name), None)).await;
        assert_eq!(o["result"]["instance"], name, "{o:#}");
    }
    let too_long = "n".repeat(129);
    for (id, name) in [(5, too_long.as_str()), (6, "g/1"), (7, "g 1"), (8, "ü")] {
        let o = alice.request(open(id, "nim", Some(name), None)).await;
        assert_eq!(o["error"]["code"], -32602, "{name}: {o:#}");
    }
    // A call into such an instance reaches it.
    let board = alice.request(call_in(9, "board", json!({}), "g.1")).await;
    assert!(board["result"]["isError"].is_null(), "{board:#}");
    let l = alice.request(list(10)).await;
    assert_eq!(l["result"]["open"].as_array().unwrap().len(), 5, "{l:#}");
}

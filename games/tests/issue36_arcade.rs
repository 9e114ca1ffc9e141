//! Issue #36, items 11 and 14, from outside: raw JSON-RPC on a real WebSocket to the
//! arcade, and the project's own host in front of it. Each test is named after its item.

use crate::support;

use serde_json::json;
use support::host::{ACT, Agent};
use support::{Harness, text_of};

/// Item 11: options the declared schema accepts (`"size": {"enum": [9, 13, 19]}` holds
/// `13.0`: RFC 8259 has one number) are not refused by the decoder behind it — an open's
/// options, and a tool's arguments (the lobby's `challenge`).
#[actix::test]
async fn issue36_11_a_whole_number_written_13_0_opens_the_go_board_the_schema_accepts() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    let opened = alice.open("go", Some("g1"), json!({"size": 13.0})).await;
    assert!(opened.get("result").is_some(), "{opened:#}");
    assert!(text_of(&opened["result"]).contains("13x13"), "{opened:#}");
    let sent = alice
        .call(
            "challenge",
            json!({"opponent": "bob", "game": "go", "size": 9.0}),
            None,
        )
        .await;
    assert_ne!(sent["isError"], true, "{sent:#}");
    assert!(text_of(&sent).contains("Go 9x9"), "{sent:#}");
}

/// Item 14: the `play` tools' descriptions do not send the agent to a schema it may never
/// see (a host without `toolHints`) or see only part of (`look` cuts a long `enum`).
#[actix::test]
async fn issue36_14_the_play_descriptions_name_the_board_tool_not_the_schema() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    alice.open("go", Some("g1"), json!({})).await;
    alice.open("tictactoe", Some("t1"), json!({})).await;
    for (tool, instance, board) in [
        ("go_play", "g1", "go_board"),
        ("tictactoe_play", "t1", "tictactoe_board"),
    ] {
        let said = alice
            .hints
            .descriptions
            .get(&(tool.to_owned(), Some(instance.to_owned())))
            .cloned()
            .unwrap_or_default();
        assert!(said.contains(board) && !said.contains("schema"), "{said:?}");
    }
    // A host without toolHints, opening through the compat tool.
    let mut plain = h.connect("bob").await;
    plain.handshake_plain().await;
    plain
        .call(
            "toolset_open",
            json!({"toolset": "tictactoe", "instance": "t2"}),
            None,
        )
        .await;
    let listed = plain.request("tools/list", json!({})).await;
    let play = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "tictactoe_play")
        .unwrap_or_else(|| panic!("tictactoe_play is listed: {listed:#}"))
        .clone();
    let said = play["description"].as_str().unwrap_or_default();
    assert!(
        said.contains("tictactoe_board") && !said.contains("schema"),
        "{said:?}"
    );
}

/// Item 14 (§6 **\[project\]**, `host-core/src/state/args_check.rs`): through the host, a point
/// outside the instance's `enum` reaches the arcade, which says why it is refused (taken)
/// or reads it (`B2`, `e5` for the enum's `b2`, `E5`), instead of the host's "not one of
/// the values allowed now".
#[actix::test]
async fn issue36_14_a_taken_or_differently_written_point_gets_the_arcades_answer_through_the_host()
{
    let h = Harness::start().await;
    let alice = Agent::start(&h, "alice").await;
    alice
        .open(json!({"toolset": "tictactoe", "instance": "t1"}))
        .await;
    let played = alice
        .act("tictactoe_play", Some("t1"), json!({"move": "B2"}))
        .await;
    assert!(played.contains("b2"), "{played}");
    let again = alice
        .call(
            ACT,
            json!({"tool": "tictactoe_play", "instance": "t1", "args": {"move": "b2"}}),
        )
        .await;
    let said = again.joined_text();
    assert!(again.is_error, "{said}");
    assert!(said.contains("b2 is already taken"), "{said}");
    assert!(!said.contains("allowed now"), "{said}");

    alice.open(json!({"toolset": "go", "instance": "g1"})).await;
    let played = alice
        .act("go_play", Some("g1"), json!({"move": "e5"}))
        .await;
    assert!(!played.contains("allowed now"), "{played}");
}

/// Item 14: the tic-tac-toe board marks the last move in parentheses, as its `board` tool
/// says (and as Go's does).
#[actix::test]
async fn issue36_14_the_tictactoe_board_marks_the_last_move_in_parentheses() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    alice.open("tictactoe", Some("t1"), json!({})).await;
    alice
        .call("tictactoe_play", json!({"move": "b2"}), Some("t1"))
        .await;
    let board = text_of(&alice.call("tictactoe_board", json!({}), Some("t1")).await);
    let rows: Vec<&str> = board.lines().filter(|l| l.contains('|')).collect();
    assert_eq!(rows.len(), 3, "{board}");
    // The bot (O) answered: its mark is the last, and the only one marked.
    assert_eq!(
        rows.iter().map(|r| r.matches("(O)").count()).sum::<usize>(),
        1,
        "{board}"
    );
    assert!(!board.contains("(X)"), "{board}");
    assert!(rows.iter().any(|r| r.contains(" X ")), "{board}");
}

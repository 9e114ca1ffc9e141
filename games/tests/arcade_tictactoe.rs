//! Tic-tac-toe between two principals, each on two connections (§4.6): the challenge, the
//! join, every move and the end reach all four connections — the mover's by its result
//! and a push to its other connection, the opponent's as a turn push whose hints show
//! `tictactoe_play` with the free cells (§5.3). And a host without `toolHints` playing
//! the bot through the compat tools (§8).

use crate::support;

use serde_json::{Value, json};
use support::{Client, Harness, ended_id, text_of};

const PLAY: &str = "tictactoe_play";

fn free_after(played: &[&str]) -> Vec<String> {
    let all = ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"];
    all.iter()
        .filter(|c| !played.contains(c))
        .map(|c| c.to_string())
        .collect()
}

#[actix::test]
async fn two_players_on_two_connections_each_see_every_change() {
    let h = Harness::start().await;
    let mut alice = [h.hinted("alice").await, h.hinted("alice").await];
    let mut bob = [h.hinted("bob").await, h.hinted("bob").await];

    // alice challenges bob by opening the game with him as the opponent.
    let opened = alice[0]
        .open("tictactoe", Some("t1"), json!({"opponent": "bob"}))
        .await;
    assert_eq!(
        opened["result"]["title"], "Tic-tac-toe vs bob",
        "{opened:#}"
    );
    assert!(alice[0].hints.is_visible("tictactoe_board", "t1"));
    assert!(
        !alice[0].hints.is_visible(PLAY, "t1"),
        "the game waits for bob"
    );
    // alice's other connection hears of it, with the same changes (§4.6).
    let push = alice[1].next_push().await;
    assert!(
        text_of(&push).starts_with("You challenged bob to Tic-tac-toe"),
        "{push:#}"
    );
    assert_eq!(
        alice[1].hints.toolset("tictactoe", "t1").unwrap()["state"],
        "open"
    );
    assert!(alice[1].hints.is_visible("tictactoe_resign", "t1"));
    // Both of bob's connections are invited: a push whose hints suggest the open.
    for b in &mut bob {
        let push = b.next_push().await;
        assert_eq!(
            push["params"]["hints"]["suggest"],
            json!([{"toolset": "tictactoe", "instance": "t1", "action": "open",
                    "reason": "alice challenges you to Tic-tac-toe, you play O",
                    "options": {"opponent": "alice", "color": "o"}}]),
            "{push:#}"
        );
    }

    // bob accepts on his first connection.
    let joined = bob[0].open("tictactoe", Some("t1"), Value::Null).await;
    let result = &joined["result"];
    assert_eq!(result["title"], "Tic-tac-toe vs alice");
    assert!(
        text_of(result).contains("You play O against alice."),
        "{joined:#}"
    );
    assert!(text_of(result).ends_with("alice's move."), "{joined:#}");
    // His other connection gets the open as hint changes (nothing to explain, §5.2).
    bob[1].next_hints().await;
    assert_eq!(
        bob[1].hints.toolset("tictactoe", "t1").unwrap()["state"],
        "open"
    );
    // alice's two connections: it is her turn, with the nine cells.
    for a in &mut alice {
        let push = a.next_push().await;
        assert_eq!(push["params"]["tags"], json!(["surface:turn"]));
        assert!(
            text_of(&push).starts_with("bob accepted your challenge"),
            "{push:#}"
        );
        assert!(a.hints.is_visible(PLAY, "t1"));
        assert_eq!(a.hints.moves(PLAY, "t1"), free_after(&[]));
    }
    // Out of turn, bob's play is not visible: the SDK refuses it (§3, vector 11).
    let r = bob[1].call(PLAY, json!({"move": "b2"}), Some("t1")).await;
    assert_eq!(r["isError"], true, "{r:#}");

    // X takes the a column; each move from a different connection.
    let script = [
        (true, 0, "a1"),
        (false, 1, "b1"),
        (true, 1, "a2"),
        (false, 0, "b2"),
        (true, 0, "a3"),
    ];
    let mut played: Vec<&str> = Vec::new();
    let mut ended: Vec<String> = Vec::new();
    for (i, &(is_alice, conn, cell)) in script.iter().enumerate() {
        let last = i + 1 == script.len();
        let (movers, others) = if is_alice {
            (&mut alice, &mut bob)
        } else {
            (&mut bob, &mut alice)
        };
        assert_eq!(movers[conn].hints.moves(PLAY, "t1"), free_after(&played));
        let r = movers[conn]
            .call(PLAY, json!({"move": cell}), Some("t1"))
            .await;
        played.push(cell);
        let text = text_of(&r);
        assert!(text.starts_with(&format!("You played {cell}.")), "{r:#}");
        // The mover's other connection sees the same move, pushed.
        let push = movers[1 - conn].next_push().await;
        assert!(
            text_of(&push).starts_with(&format!("You played {cell}.")),
            "{push:#}"
        );
        let (mark, name) = if is_alice {
            ("X", "alice")
        } else {
            ("O", "bob")
        };
        for o in others.iter_mut() {
            let push = o.next_push().await;
            assert!(
                text_of(&push).starts_with(&format!("{name} ({mark}) played {cell}.")),
                "{push:#}"
            );
            if !last {
                assert_eq!(push["params"]["tags"], json!(["surface:turn"]));
                assert!(o.hints.is_visible(PLAY, "t1"));
                assert_eq!(o.hints.moves(PLAY, "t1"), free_after(&played));
            }
        }
        for m in movers.iter() {
            assert!(!m.hints.is_visible(PLAY, "t1"));
        }
        if last {
            assert!(text.contains("Game over: X (alice) wins."), "{text}");
            assert!(text.contains("Moves: a1 b1 a2 b2 a3"), "{text}");
            ended.push(ended_id(&r["_meta"]["mcpl/hints"], "t1").unwrap());
        }
    }
    // Every connection saw the end, with its principal's ended record id (§4.3).
    let mut ids = Vec::new();
    for c in alice.iter().chain(bob.iter()) {
        let entry = c.hints.toolset("tictactoe", "t1").unwrap();
        assert_eq!(entry["state"], "closed");
        assert_eq!(entry["reason"], "X (alice) wins");
        ids.push(entry["ended"].as_str().unwrap().to_owned());
        assert!(
            c.hints
                .visible
                .iter()
                .all(|(_, i)| i.as_deref() != Some("t1"))
        );
    }
    assert_eq!(ids[0], ended[0]);
    assert_eq!(ids[0], ids[1], "one record for alice");
    assert_eq!(ids[2], ids[3], "one record for bob");
}

/// Reads the free cells from a text ("Free cells: a1, b1").
fn free_cells(text: &str) -> Vec<String> {
    text.lines()
        .find_map(|l| l.split("Free cells: ").nth(1))
        .map(|cells| cells.split(", ").map(str::to_owned).collect())
        .unwrap_or_default()
}

async fn plain_player(h: &Harness) -> Client {
    let mut c = h.connect("carol").await;
    let init = c.handshake_plain().await;
    // §2, §4.1: no RFC-014 members in the manifest a plain host is shown.
    let mcpl = &init["capabilities"]["experimental"]["mcpl"];
    for member in ["toolHints", "toolsets", "surface"] {
        assert!(mcpl.get(member).is_none(), "{member} in {mcpl:#}");
    }
    c
}

#[actix::test]
async fn a_host_without_tool_hints_plays_through_the_compat_tools() {
    let h = Harness::start().await;
    let mut carol = plain_player(&h).await;
    let tools = carol.request("tools/list", json!({})).await;
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in [
        "games",
        "challenge",
        "toolset_open",
        "toolset_close",
        PLAY,
        "go_play",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    let play = tools.iter().find(|t| t["name"] == PLAY).unwrap();
    assert!(
        play.get("_meta").is_none(),
        "no hint _meta for a plain host"
    );
    // Its `move` is a bare string: the description does not promise a list in the schema.
    let description = play["description"].as_str().unwrap();
    assert!(
        !description.contains("schema") && description.contains("tictactoe_board"),
        "{description}"
    );
    assert_eq!(
        play["inputSchema"]["properties"]["instance"]["type"], "string",
        "{play:#}"
    );
    // The lobby is implicitly open (§8): its tools just work.
    let games = carol.call("games", json!({}), None).await;
    assert!(text_of(&games).contains("Players online"), "{games:#}");

    // Options are all optional: the bot, by default.
    let opened = carol
        .call(
            "toolset_open",
            json!({"toolset": "tictactoe", "instance": "p1"}),
            None,
        )
        .await;
    let text = text_of(&opened);
    assert!(
        text.starts_with("Opened tictactoe:p1 (Tic-tac-toe vs bot)"),
        "{text}"
    );
    let mut free = free_cells(&text);
    let mut turns = 0;
    let last = loop {
        turns += 1;
        assert!(turns <= 5, "tic-tac-toe lasts at most five turns of ours");
        let cell = free.first().expect("a free cell on our turn").clone();
        let r = carol
            .call(PLAY, json!({"move": cell, "instance": "p1"}), None)
            .await;
        assert_ne!(r["isError"], true, "{r:#}");
        let text = text_of(&r);
        assert!(text.contains("bot (O) played"), "{text}");
        if text.contains("Game over:") {
            break text;
        }
        free = free_cells(&text);
    };
    // The perfect bot never loses.
    assert!(
        last.contains("Game over: O (bot) wins.") || last.contains("Game over: Draw."),
        "{last}"
    );
    // The final position and result stay readable from the board tool while the ended
    // record is kept: by the instance's name, and with none open and none named.
    for args in [json!({"instance": "p1"}), json!({})] {
        let board = carol.call("tictactoe_board", args.clone(), None).await;
        assert_ne!(board["isError"], true, "{args}: {board:#}");
        let text = text_of(&board);
        let (head, view) = text
            .split_once("Its last view:\n\n")
            .unwrap_or_else(|| panic!("{text}"));
        assert!(head.starts_with("tictactoe p1 has ended: "), "{text}");
        assert!(
            view.contains("Game over: ") && last.ends_with(view),
            "{view}\n---\n{last}"
        );
    }
    // A tool that acts is still refused: the game is over.
    let late = carol
        .call(PLAY, json!({"move": "a1", "instance": "p1"}), None)
        .await;
    assert_eq!(late["isError"], true, "{late:#}");
    // Nothing RFC-014 reached this host: no hints, no tools/hints.
    carol.quiet().await;
    assert!(carol.hints.rev == 0);
    assert!(
        carol
            .take_unread()
            .iter()
            .all(|m| m["method"] != "tools/hints")
    );
}

#[actix::test]
async fn on_its_turn_a_hinted_host_is_told_where_the_free_cells_are_and_its_schema_lists_them() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    alice.open("tictactoe", Some("t1"), json!({})).await;
    // alice plays X against the bot: her turn first, with the instance's own definition.
    let key = (PLAY.to_owned(), Some("t1".to_owned()));
    let said = alice
        .hints
        .descriptions
        .get(&key)
        .cloned()
        .unwrap_or_default();
    assert!(
        said.contains("tictactoe_board shows the position and the free cells"),
        "{said:?}"
    );
    assert!(!said.contains("schema"), "{said:?}");
    assert_eq!(alice.hints.moves(PLAY, "t1").len(), 9);
}

#[actix::test]
async fn closing_a_game_resigns_it_and_closing_a_challenge_withdraws_it() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    let mut bob = h.hinted("bob").await;
    alice
        .open(
            "tictactoe",
            Some("t1"),
            json!({"opponent": "bob", "color": "o"}),
        )
        .await;
    bob.next_push().await;
    let joined = bob.open("tictactoe", Some("t1"), Value::Null).await;
    // bob plays X, so he moves first: his join result gives him the turn.
    assert!(
        text_of(&joined["result"])
            .ends_with("Your move. Free cells: a1, b1, c1, a2, b2, c2, a3, b3, c3")
    );
    assert!(bob.hints.is_visible(PLAY, "t1"));
    let push = alice.next_push().await;
    assert_eq!(push["params"]["tags"], json!(["surface:activity"]));
    assert!(text_of(&push).ends_with("bob's move."), "{push:#}");

    // §4.2: closing a game in progress resigns it, and the result says so.
    let closed = alice
        .request(
            "toolsets/close",
            json!({"toolset": "tictactoe", "instance": "t1"}),
        )
        .await;
    let text = text_of(&closed["result"]);
    assert!(
        text.starts_with("You resigned by closing the game."),
        "{closed:#}"
    );
    let push = bob.next_push().await;
    assert!(
        text_of(&push).starts_with("alice (O) resigned by closing the game."),
        "{push:#}"
    );
    assert_eq!(
        bob.hints.toolset("tictactoe", "t1").unwrap()["reason"],
        "X (bob) wins by resignation"
    );

    // Before the invitee joins, closing withdraws the challenge: the lobby forgets it.
    alice
        .open("tictactoe", Some("t2"), json!({"opponent": "bob"}))
        .await;
    bob.next_push().await;
    let games = bob.call("games", json!({}), None).await;
    assert_eq!(
        games["structuredContent"]["challenges"][0]["instance"],
        "t2"
    );
    let closed = alice
        .request(
            "toolsets/close",
            json!({"toolset": "tictactoe", "instance": "t2"}),
        )
        .await;
    assert_eq!(text_of(&closed["result"]), "You withdrew the challenge.");
    assert_eq!(
        alice.hints.toolset("tictactoe", "t2").unwrap()["reason"],
        "alice withdrew the challenge"
    );
    let games = bob.call("games", json!({}), None).await;
    assert_eq!(games["structuredContent"]["challenges"], json!([]));
}

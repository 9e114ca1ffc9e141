//! Two principals playing each other through the project's own host (`mcpl_host::host::Host`),
//! as agents do (§6): tic-tac-toe with two hosts per player, where every host of a player
//! shows every change and the model's tool list never changes (§4.6, vector 12); a
//! challenge the invitee's host shows as a suggestion, accepted by opening the suggested
//! instance, and one declined, which the challenger's host is told (§5.3); and a player
//! whose host was stopped before the end, shown the `ended` record once across host
//! restarts that keep the same state directory (§4.3, vector 13).

use crate::support;

use mcpl_host::host::ShownKind;
use mcpl_testkit::within;
use serde_json::json;
use support::Harness;
use support::host::{Agent, LOOK, closed_line, count, host_config, suggested_open};

const PLAY: &str = "tictactoe_play";

fn free_after(played: &[&str]) -> Vec<String> {
    let all = ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"];
    all.iter()
        .filter(|c| !played.contains(c))
        .map(|c| c.to_string())
        .collect()
}

/// The instance a result's host line says was opened: `- Opened [arcade/<toolset>:NAME] …`.
fn opened_instance(text: &str, toolset: &str) -> String {
    let head = format!("Opened [arcade/{toolset}:");
    text.lines()
        .find_map(|l| l.split_once(&head).map(|(_, rest)| rest))
        .and_then(|rest| rest.split_once(']'))
        .map(|(name, _)| name.to_owned())
        .unwrap_or_else(|| panic!("an open of {toolset}: {text}"))
}

#[actix::test]
async fn two_players_with_two_hosts_each_see_every_move() {
    let h = Harness::start().await;
    let mut alice = [
        Agent::start(&h, "alice").await,
        Agent::start(&h, "alice").await,
    ];
    let mut bob = [Agent::start(&h, "bob").await, Agent::start(&h, "bob").await];
    let mut lists = Vec::new();
    for a in alice.iter().chain(bob.iter()) {
        lists.push(a.tools_json().await);
    }

    // alice challenges bob by opening the game with him as the opponent.
    let opened = alice[0]
        .open(json!({"toolset": "tictactoe", "instance": "t1", "options": {"opponent": "bob"}}))
        .await;
    assert!(
        opened.contains("Opened [arcade/tictactoe:t1] \"Tic-tac-toe vs bob\""),
        "{opened}"
    );
    alice[1]
        .push_with("You challenged bob to Tic-tac-toe")
        .await;
    // Both of bob's hosts show the invitation as a suggestion, with the open that accepts it.
    let mut accept = Vec::new();
    for b in &mut bob {
        let shown = b
            .push_with("alice challenges you to Tic-tac-toe, you play O")
            .await;
        accept.push(suggested_open(&shown.text).expect("a suggested open"));
    }
    assert_eq!(
        accept[0],
        json!({"server": "arcade", "toolset": "tictactoe", "instance": "t1",
               "options": {"opponent": "alice", "color": "o"}})
    );
    assert_eq!(accept[0], accept[1]);
    let joined = bob[0].open(accept[0].clone()).await;
    assert!(joined.contains("You play O against alice."), "{joined}");
    // bob's other host hears of the open (nothing explains it: a notice).
    bob[1]
        .until(|s| s.kind == ShownKind::Notice && s.text.contains("Opened [arcade/tictactoe:t1]"))
        .await;
    for a in &mut alice {
        a.push_with("bob accepted your challenge").await;
        assert_eq!(a.moves(PLAY, "t1").await, free_after(&[]));
    }

    // X takes the a column; each move from a different host.
    let script = [
        (true, 0, "a1"),
        (false, 1, "b1"),
        (true, 1, "a2"),
        (false, 0, "b2"),
        (true, 0, "a3"),
    ];
    let mut played: Vec<&str> = Vec::new();
    for (i, &(is_alice, host, cell)) in script.iter().enumerate() {
        let last = i + 1 == script.len();
        let (movers, others) = if is_alice {
            (&mut alice, &mut bob)
        } else {
            (&mut bob, &mut alice)
        };
        assert_eq!(movers[host].moves(PLAY, "t1").await, free_after(&played));
        let text = movers[host]
            .act(PLAY, Some("t1"), json!({"move": cell}))
            .await;
        played.push(cell);
        assert!(text.contains(&format!("You played {cell}.")), "{text}");
        // The mover's other host is shown the same move, pushed.
        movers[1 - host]
            .push_with(&format!("You played {cell}."))
            .await;
        let (mark, name) = if is_alice {
            ("X", "alice")
        } else {
            ("O", "bob")
        };
        for o in others.iter_mut() {
            let shown = o
                .push_with(&format!("{name} ({mark}) played {cell}."))
                .await;
            if !last {
                assert!(
                    shown
                        .text
                        .contains(&format!("Changed: {PLAY} in [arcade/tictactoe:t1]"))
                        || shown
                            .text
                            .contains(&format!("Usable: {PLAY} in [arcade/tictactoe:t1]")),
                    "the push gives the turn: {}",
                    shown.text
                );
                assert_eq!(o.moves(PLAY, "t1").await, free_after(&played));
            }
        }
        if last {
            assert!(text.contains("Game over: X (alice) wins."), "{text}");
            assert!(text.contains("Moves: a1 b1 a2 b2 a3"), "{text}");
        }
    }

    // Every host of each player showed every move and the end, once; no host's tool
    // list changed.
    let end = closed_line("tictactoe:t1", "X (alice) wins");
    for (agent, list) in alice.iter().chain(bob.iter()).zip(&lists) {
        let shown = agent.transcript().await;
        for (j, &(is_alice, _, cell)) in script.iter().enumerate() {
            let own = is_alice == (agent.who == "alice");
            let said = if own {
                format!("You played {cell}.")
            } else if is_alice {
                format!("alice (X) played {cell}.")
            } else {
                format!("bob (O) played {cell}.")
            };
            assert_eq!(
                count(&shown, &said),
                1,
                "move {j} on a host of {}",
                agent.who
            );
        }
        assert_eq!(count(&shown, &end), 1, "the end on a host of {}", agent.who);
        assert_eq!(&agent.tools_json().await, list, "vector 12");
    }
}

#[actix::test]
async fn a_challenge_accepted_is_played_and_one_declined_is_told() {
    let h = Harness::start().await;
    let mut alice = Agent::start(&h, "alice").await;
    let mut bob = Agent::start(&h, "bob").await;
    let mut carol = Agent::start(&h, "carol").await;

    let sent = alice
        .act(
            "challenge",
            None,
            json!({"opponent": "bob", "game": "go", "size": 9}),
        )
        .await;
    assert!(sent.contains("You challenged bob to Go 9x9"), "{sent}");
    // The open rides in the challenge's own result (§5.3).
    let game = opened_instance(&sent, "go");

    // bob's host shows the suggestion; bob opens what it suggests.
    let invitation = bob
        .push_with("alice challenges you to Go 9x9, you play White")
        .await;
    let accept = suggested_open(&invitation.text).expect("a suggested open");
    assert_eq!(
        accept,
        json!({"server": "arcade", "toolset": "go", "instance": game,
               "options": {"opponent": "alice", "color": "white", "size": 9, "komi": 7.5}})
    );
    let listed = bob.act("games", None, json!({})).await;
    assert!(
        listed.contains(&format!(
            "Challenge for you: alice challenges you to Go 9x9, you play White. Accept by opening go:{game}"
        )),
        "{listed}"
    );
    let joined = bob.open(accept).await;
    assert!(
        joined.contains(&format!("Opened [arcade/go:{game}] \"Go 9x9 vs alice\"")),
        "{joined}"
    );
    assert!(joined.contains("You play White against alice."), "{joined}");
    alice.push_with("bob accepted your challenge").await;

    // They play: a stone, two passes, and the count.
    assert!(
        alice
            .moves("go_play", &game)
            .await
            .contains(&"E5".to_owned())
    );
    let text = alice
        .act("go_play", Some(&game), json!({"move": "E5"}))
        .await;
    assert!(text.contains("You played E5."), "{text}");
    bob.push_with("alice (Black) played E5.").await;
    assert_eq!(bob.moves("go_play", &game).await.len(), 80);
    let text = bob.act("go_pass", Some(&game), json!({})).await;
    assert!(text.contains("You passed."), "{text}");
    alice.push_with("bob (White) passed.").await;
    let result = "Black (alice) wins by 73.5";
    let text = alice.act("go_pass", Some(&game), json!({})).await;
    assert!(text.contains(&format!("Game over: {result}.")), "{text}");
    // How it was counted, so a player can see why (issue #43 item 3): one black stone
    // holds the 81 points of the empty board; White has 7.5 komi.
    assert!(
        text.contains("Score: Black 81 (area), White 7.5 (0 area + 7.5 komi).\n"),
        "{text}"
    );
    assert!(
        text.contains(&closed_line(&format!("go:{game}"), result)),
        "{text}"
    );
    let told = bob.push_with("alice (Black) passed.").await;
    assert!(
        told.text.contains(&format!("Game over: {result}.")),
        "{}",
        told.text
    );
    assert!(
        told.text
            .contains(&closed_line(&format!("go:{game}"), result)),
        "{}",
        told.text
    );

    // carol declines hers: alice's host is told, with the end.
    let sent = alice
        .act(
            "challenge",
            None,
            json!({"opponent": "carol", "game": "tictactoe"}),
        )
        .await;
    let offered = opened_instance(&sent, "tictactoe");
    let invitation = carol
        .push_with("alice challenges you to Tic-tac-toe, you play O")
        .await;
    let suggested = suggested_open(&invitation.text).expect("a suggested open");
    assert_eq!(suggested["instance"], offered);
    let declined = carol
        .act("decline", None, json!({"instance": suggested["instance"]}))
        .await;
    assert!(
        declined.contains(
            "You declined alice's challenge to Tic-tac-toe, you play O; they have been told."
        ),
        "{declined}"
    );
    let told = alice
        .push_with("carol declined your challenge to Tic-tac-toe.")
        .await;
    let end = closed_line(
        &format!("tictactoe:{offered}"),
        "carol declined the challenge",
    );
    assert!(told.text.contains(&end), "{}", told.text);
    // carol never had the game: nothing of it is open or ended for her.
    let look = carol.call(LOOK, json!({})).await.joined_text();
    assert!(!look.contains("Ended:"), "{look}");
    assert!(
        !look.contains(&format!("- [arcade/tictactoe:{offered}] \"")),
        "{look}"
    );
}

#[actix::test]
async fn a_player_away_at_the_end_is_shown_the_ended_record_once() {
    let h = Harness::start().await;
    let state = tempfile::tempdir().expect("a temporary directory");
    let bob_host = || host_config(&h, "bob", Some(state.path()));
    let mut alice = Agent::start(&h, "alice").await;
    let mut bob = Agent::with(bob_host(), "bob").await;

    alice
        .open(json!({"toolset": "tictactoe", "instance": "t1", "options": {"opponent": "bob"}}))
        .await;
    let invitation = bob.push_with("alice challenges you to Tic-tac-toe").await;
    bob.open(suggested_open(&invitation.text).expect("a suggested open"))
        .await;
    alice.push_with("bob accepted your challenge").await;
    alice.act(PLAY, Some("t1"), json!({"move": "b2"})).await;
    bob.push_with("alice (X) played b2.").await;

    // bob's host stops; the server keeps his seat (it keeps toolsets across connections).
    bob.stop().await;
    h.sessions(1).await;
    let reason = "O (bob) wins by resignation";
    let text = alice.act("tictactoe_resign", Some("t1"), json!({})).await;
    assert!(
        text.contains(&closed_line("tictactoe:t1", reason)),
        "{text}"
    );

    // A new host for bob with the same state directory is shown the record, once.
    let ended = "Ended [arcade/tictactoe:t1] at ";
    let bob = Agent::with(bob_host(), "bob").await;
    let shown = bob.transcript().await;
    assert_eq!(count(&shown, ended), 1, "{shown:#?}");
    assert_eq!(
        count(&shown, &format!("\"{reason}\" (from arcade).")),
        1,
        "{shown:#?}"
    );
    assert_eq!(
        count(&shown, "Opened [arcade/tictactoe:t1]"),
        0,
        "{shown:#?}"
    );
    // Going on with it tells nothing again.
    bob.call(LOOK, json!({})).await;
    within(bob.host.boundary()).await.expect("the host runs");
    assert_eq!(count(&bob.transcript().await, ended), 0);
    bob.stop().await;
    h.sessions(1).await;

    // A third host with the same state directory: the server still reports the record,
    // and the host, having told it, does not show it again (vector 13).
    let mut raw = h.hinted("bob").await;
    let listed = raw.list().await;
    assert_eq!(listed["ended"][0]["reason"], reason, "{listed:#}");
    drop(raw);
    h.sessions(1).await;
    let bob = Agent::with(bob_host(), "bob").await;
    let shown = bob.transcript().await;
    assert_eq!(count(&shown, ended), 0, "{shown:#?}");
    assert_eq!(count(&shown, reason), 0, "{shown:#?}");
    bob.stop().await;
}

//! The lobby: who is online, a challenge accepted (the invitee's connection is pushed a
//! `suggest` to open the shared instance, §4.6, and joins by opening it) and one declined
//! (the challenger is told, and its game ends with a record, §4.3); and the lobby's tools as
//! declared, each once with its argument type (issue #38).

use crate::support;

use mcpl_games::arcade::ArcadeConfig;
use serde_json::{Value, json};
use support::{Harness, hints_of, text_of};

#[actix::test]
async fn a_challenge_accepted_becomes_a_shared_game() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    let mut bob = h.hinted("bob").await;

    let games = alice.call("games", json!({}), None).await;
    assert_eq!(
        games["structuredContent"]["online"],
        json!(["bob"]),
        "{games:#}"
    );
    assert!(
        text_of(&games).contains("Players online: bob."),
        "{games:#}"
    );

    let sent = alice
        .call(
            "challenge",
            json!({"opponent": "bob", "game": "go", "size": 9}),
            None,
        )
        .await;
    assert_ne!(sent["isError"], true, "{sent:#}");
    let instance = sent["structuredContent"]["instance"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text_of(&sent).contains("You challenged bob to Go 9x9"),
        "{sent:#}"
    );
    // The game was opened for alice by the lobby's handler: the open's changes ride in the
    // challenge's own result (§5.3: a call reports its own consequences), and nothing is
    // pushed to the calling connection.
    let opened = hints_of(&sent)["toolsets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["toolset"] == "go" && t["instance"] == json!(instance))
        .unwrap_or_else(|| panic!("the open is in the result's hints: {sent:#}"))
        .clone();
    assert_eq!(opened["state"], "open");
    assert_eq!(opened["title"], "Go 9x9 vs bob");
    alice.quiet().await;
    assert!(alice.pushes.is_empty(), "{:#?}", alice.pushes);
    assert_eq!(
        alice.hints.toolset("go", &instance).unwrap()["state"],
        "open"
    );
    assert!(alice.hints.is_visible("go_board", &instance));

    // bob is invited: a push whose hints suggest opening the shared instance.
    let invitation = bob.next_push().await;
    assert_eq!(
        invitation["params"]["hints"]["suggest"],
        json!([{"toolset": "go", "instance": instance, "action": "open",
                "reason": "alice challenges you to Go 9x9, you play White",
                "options": {"opponent": "alice", "color": "white", "size": 9, "komi": 7.5}}])
    );
    let games = bob.call("games", json!({}), None).await;
    let listed = &games["structuredContent"]["challenges"];
    assert_eq!(listed[0]["from"], "alice", "{games:#}");
    assert_eq!(listed[0]["instance"], json!(instance));
    assert!(
        text_of(&games).contains(&format!("Accept by opening go:{instance}")),
        "{games:#}"
    );
    let games = alice.call("games", json!({}), None).await;
    assert_eq!(games["structuredContent"]["sent"][0]["to"], "bob");

    // bob accepts by opening it.
    let joined = bob.open("go", Some(&instance), Value::Null).await;
    assert_eq!(joined["result"]["title"], "Go 9x9 vs alice", "{joined:#}");
    let push = alice.next_push().await;
    assert!(
        text_of(&push).starts_with("bob accepted your challenge"),
        "{push:#}"
    );
    assert!(alice.hints.is_visible("go_play", &instance));
    let games = bob.call("games", json!({}), None).await;
    assert_eq!(games["structuredContent"]["challenges"], json!([]));

    // A move reaches bob as a push giving him his turn.
    alice
        .call("go_play", json!({"move": "E5"}), Some(&instance))
        .await;
    let push = bob.next_push().await;
    assert!(
        text_of(&push).starts_with("alice (Black) played E5."),
        "{push:#}"
    );
    assert!(bob.hints.is_visible("go_play", &instance));
    assert_eq!(bob.hints.moves("go_play", &instance).len(), 80);

    // bob resigns: both see the end with the result.
    let r = bob.call("go_resign", json!({}), Some(&instance)).await;
    assert!(text_of(&r).starts_with("You resigned."), "{r:#}");
    let push = alice.next_push().await;
    assert!(
        text_of(&push).starts_with("bob (White) resigned."),
        "{push:#}"
    );
    let entry = alice.hints.toolset("go", &instance).unwrap();
    assert_eq!(entry["state"], "closed");
    assert_eq!(entry["reason"], "Black (alice) wins by resignation");
}

#[actix::test]
async fn a_challenge_declined_ends_with_the_challenger_told() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    let mut bob = h.hinted("bob").await;
    let sent = alice
        .call(
            "challenge",
            json!({"opponent": "bob", "game": "tictactoe"}),
            None,
        )
        .await;
    let instance = sent["structuredContent"]["instance"]
        .as_str()
        .unwrap()
        .to_owned();
    bob.next_push().await;

    let declined = bob
        .call("decline", json!({"instance": instance}), None)
        .await;
    assert_ne!(declined["isError"], true, "{declined:#}");
    assert_eq!(
        text_of(&declined),
        "You declined alice's challenge to Tic-tac-toe, you play O; they have been told."
    );
    let push = alice.next_push().await;
    assert_eq!(
        text_of(&push),
        "bob declined your challenge to Tic-tac-toe."
    );
    let entry = alice.hints.toolset("tictactoe", &instance).unwrap();
    assert_eq!(entry["state"], "closed");
    assert_eq!(entry["reason"], "bob declined the challenge");
    let listed = alice.list().await;
    assert_eq!(listed["ended"][0]["reason"], "bob declined the challenge");

    // bob never had the game: nothing of it in his state, no record.
    bob.quiet().await;
    assert!(bob.hints.toolset("tictactoe", &instance).is_none());
    let listed = bob.list().await;
    assert_eq!(listed["ended"], json!([]));
    assert_eq!(
        listed["open"],
        json!([{"toolset": "lobby", "title": "Lobby"}])
    );
    let games = bob.call("games", json!({}), None).await;
    assert_eq!(games["structuredContent"]["challenges"], json!([]));
    // Declining again finds nothing.
    let again = bob
        .call("decline", json!({"instance": instance}), None)
        .await;
    assert_eq!(again["isError"], true);
    assert_eq!(text_of(&again), "No challenge is waiting for you.");
}

#[actix::test]
async fn the_lobbys_tools_are_declared_once_with_their_argument_types() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    let listed = alice.request("tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().expect("tools").clone();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    // The lobby's three, in the lobby (its `mcpl/toolset`), after the games' tools.
    let at = |name: &str| {
        names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("no {name} in {names:?}"))
    };
    assert_eq!(
        [at("games"), at("challenge"), at("decline")],
        [names.len() - 3, names.len() - 2, names.len() - 1],
        "{names:?}"
    );
    let tool = |name: &str| tools[at(name)].clone();
    for name in ["games", "challenge", "decline"] {
        assert_eq!(tool(name)["_meta"]["mcpl/toolset"], "lobby", "{name}");
    }
    // Each schema is its argument type's: nothing unknown, the required members only, no
    // description but the members' own. `games` takes one, optional: where its page of
    // players online starts.
    let games = tool("games")["inputSchema"].clone();
    assert_eq!(games["additionalProperties"], false, "{games}");
    assert!(games.get("required").is_none(), "{games}");
    assert_eq!(
        games["properties"]["online_after"]["maxLength"], 64,
        "{games}"
    );
    let challenge = tool("challenge")["inputSchema"].clone();
    assert_eq!(
        challenge["required"],
        json!(["opponent", "game"]),
        "{challenge}"
    );
    assert_eq!(
        challenge["properties"]["size"]["enum"],
        json!([9, 13, 19]),
        "{challenge}"
    );
    assert_eq!(
        challenge["properties"]["opponent"]["maxLength"], 64,
        "{challenge}"
    );
    assert_eq!(challenge["additionalProperties"], false, "{challenge}");
    assert!(challenge.get("description").is_none(), "{challenge}");
    let decline = tool("decline")["inputSchema"].clone();
    assert_eq!(decline["required"], json!(["instance"]), "{decline}");
    assert_eq!(decline["additionalProperties"], false, "{decline}");
    assert!(decline.get("description").is_none(), "{decline}");
    // And the handler decodes what the schema says: an argument it does not name is the
    // SDK's decode error, for `games` as for the others.
    for (name, args) in [
        ("games", json!({"all": true})),
        ("decline", json!({"instance": "g", "all": true})),
    ] {
        let r = alice.call(name, args, None).await;
        assert_eq!(r["isError"], true, "{name}: {r:#}");
        assert!(
            text_of(&r).starts_with(&format!("invalid arguments for tool \"{name}\"")),
            "{name}: {r:#}"
        );
    }
}

#[actix::test]
async fn challenges_that_cannot_be_made_say_why() {
    let h = Harness::start().await;
    let mut alice = h.hinted("alice").await;
    for (args, why) in [
        (
            json!({"opponent": "zed", "game": "go"}),
            "no player named \"zed\"",
        ),
        (
            json!({"opponent": "alice", "game": "go"}),
            "against yourself",
        ),
        (
            json!({"opponent": "bob", "game": "tictactoe", "size": 9}),
            "no size",
        ),
        (
            json!({"opponent": "bob", "game": "go", "color": "x"}),
            "/color",
        ),
    ] {
        let r = alice.call("challenge", args.clone(), None).await;
        assert_eq!(r["isError"], true, "{args}: {r:#}");
        assert!(text_of(&r).contains(why), "{args}: {r:#}");
    }
    // carol is offline but a configured player: she can be challenged, and will find the
    // invitation when she connects.
    let r = alice
        .call(
            "challenge",
            json!({"opponent": "carol", "game": "tictactoe"}),
            None,
        )
        .await;
    assert_ne!(r["isError"], true, "{r:#}");
    let instance = r["structuredContent"]["instance"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut carol = h.connect("carol").await;
    carol.handshake(true, &["tools", "pushEvents"]).await;
    let invitation = carol.next_push().await;
    assert_eq!(
        invitation["params"]["hints"]["suggest"][0]["instance"],
        json!(instance)
    );

    // Anonymous players share nothing (§4.6): they can play the bot, not challenge.
    let mut anon = h.connect_anonymous().await;
    anon.handshake(true, &["tools", "pushEvents"]).await;
    let r = anon
        .call(
            "challenge",
            json!({"opponent": "alice", "game": "go"}),
            None,
        )
        .await;
    assert_eq!(r["isError"], true);
    let games = alice.call("games", json!({}), None).await;
    assert_eq!(
        games["structuredContent"]["online"],
        json!(["carol"]),
        "{games:#}"
    );
    let opened = anon
        .open("tictactoe", Some("solo"), json!({"opponent": "alice"}))
        .await;
    assert_eq!(opened["error"]["code"], -32602, "{opened:#}");
    let opened = anon.open("tictactoe", Some("solo"), json!({})).await;
    assert_eq!(opened["result"]["title"], "Tic-tac-toe vs bot");
}

/// The pushes in `pushes` that invite to a game (their hints suggest opening it).
fn invitations(pushes: &[Value]) -> usize {
    pushes
        .iter()
        .filter(|p| {
            p["params"]["hints"]["suggest"]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| s["action"] == "open"))
        })
        .count()
}

#[actix::test]
async fn issue37_06_challenge_and_withdraw_cycles_push_the_invitee_at_most_the_bound() {
    use mcpl_games::arcade::ArcadeConfig;
    use mcpl_server::ManualClock;
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    let clock = Arc::new(ManualClock::new(
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
    ));
    let h = Harness::with(ArcadeConfig {
        bot: support::test_bot(),
        players: support::PLAYERS.iter().map(|p| p.to_string()).collect(),
        clock: Some(clock.clone()),
        ..Default::default()
    })
    .await;
    let mut alice = h.hinted("alice").await;
    let mut bob = h.hinted("bob").await;

    let (mut sent, mut refused) = (0, Vec::new());
    for _ in 0..200 {
        let r = alice
            .call(
                "challenge",
                json!({"opponent": "bob", "game": "tictactoe"}),
                None,
            )
            .await;
        if r["isError"] == true {
            refused.push(text_of(&r));
            continue;
        }
        sent += 1;
        let instance = r["structuredContent"]["instance"]
            .as_str()
            .unwrap()
            .to_owned();
        // Withdrawn: resigning before bob joined.
        let w = alice
            .call("tictactoe_resign", json!({}), Some(&instance))
            .await;
        assert_ne!(w["isError"], true, "{w:#}");
    }
    bob.quiet().await;
    let pushed = invitations(&bob.pushes);
    assert_eq!(sent, 5, "five challenges went out in the window");
    assert_eq!(pushed, 5, "bob was invited five times: {:#?}", bob.pushes);
    assert_eq!(refused.len(), 195);
    // The challenger is told why and when to try again (ten minutes after the first).
    assert!(
        refused[0].contains("you challenged bob 5 times in the last 10 min")
            && refused[0].contains("challenge bob again in 10 min"),
        "{}",
        refused[0]
    );

    // Others may still challenge bob, and alice may challenge others.
    let r = alice
        .call(
            "challenge",
            json!({"opponent": "carol", "game": "tictactoe"}),
            None,
        )
        .await;
    assert_ne!(r["isError"], true, "{r:#}");

    // Once the window has passed, alice may challenge bob again.
    clock.advance(Duration::from_secs(10 * 60));
    let r = alice
        .call(
            "challenge",
            json!({"opponent": "bob", "game": "tictactoe"}),
            None,
        )
        .await;
    assert_ne!(r["isError"], true, "{r:#}");
    bob.quiet().await;
    assert_eq!(invitations(&bob.pushes), 6);
}

#[actix::test]
async fn a_challenge_to_nobody_lists_at_most_twenty_players_online() {
    let names: Vec<String> = (0..23).map(|i| format!("p{i:02}")).collect();
    let h = Harness::with(ArcadeConfig {
        bot: support::test_bot(),
        players: names.clone(),
        ..Default::default()
    })
    .await;
    let mut alice = h.hinted("alice").await;
    let mut others = Vec::new();
    for name in &names {
        others.push(h.hinted(name).await);
    }
    let r = alice
        .call("challenge", json!({"opponent": "zed", "game": "go"}), None)
        .await;
    assert_eq!(r["isError"], true, "{r:#}");
    let text = text_of(&r);
    // 23 others online (alice, asking, not among them), sorted: the first 20 named, the
    // rest counted.
    assert!(text.contains("no player named \"zed\""), "{text}");
    assert!(text.contains("(online now: p00, p01"), "{text}");
    assert!(text.contains("p19 and 3 more)"), "{text}");
    assert!(!text.contains("p20") && !text.contains("alice,"), "{text}");
    drop(others);
}

#[actix::test]
async fn the_players_online_come_fifty_at_a_time_with_the_next_page_named() {
    let names: Vec<String> = (0..55).map(|i| format!("p{i:02}")).collect();
    let h = Harness::with(ArcadeConfig {
        bot: support::test_bot(),
        players: names.iter().cloned().chain(["zoe".to_owned()]).collect(),
        ..Default::default()
    })
    .await;
    let mut others = Vec::new();
    for name in &names {
        others.push(h.hinted(name).await);
    }
    // p10 asks: 55 others online (zoe too), sorted; the first 50 named, p10 not among
    // them.
    let mut zoe = h.hinted("zoe").await;
    let first = others[10].call("games", json!({}), None).await;
    let online = &first["structuredContent"];
    let page: Vec<String> = (0..55)
        .filter(|i| *i != 10)
        .take(50)
        .map(|i| format!("p{i:02}"))
        .collect();
    assert_eq!(online["online"], json!(page), "{first:#}");
    assert_eq!(online["online_total"], 55, "{first:#}");
    assert_eq!(online["online_next"], "p50", "{first:#}");
    let text = text_of(&first);
    assert!(
        text.contains("Players online: 55 in all; the first: p00, p01"),
        "{text}"
    );
    assert!(
        text.contains(r#"More: call games with {"online_after": "p50"}."#),
        "{text}"
    );

    // The next page: the rest, no page after it.
    let next = others[10]
        .call("games", json!({"online_after": "p50"}), None)
        .await;
    assert_eq!(
        next["structuredContent"]["online"],
        json!(["p51", "p52", "p53", "p54", "zoe"]),
        "{next:#}"
    );
    assert_eq!(
        next["structuredContent"]["online_next"],
        Value::Null,
        "{next:#}"
    );
    assert!(!text_of(&next).contains("More:"), "{next:#}");

    // A name past everyone: an empty page, still counted.
    let past = zoe
        .call("games", json!({"online_after": "zzz"}), None)
        .await;
    assert_eq!(past["structuredContent"]["online"], json!([]), "{past:#}");
    assert_eq!(past["structuredContent"]["online_total"], 55, "{past:#}");
    assert!(text_of(&past).contains("after \"zzz\": none."), "{past:#}");

    // Not a name at all (the schema's 64 characters are a hint the SDK does not enforce):
    // it still only says where the page starts.
    let long = zoe
        .call(
            "games",
            json!({"online_after": format!("p5{}", "0".repeat(63))}),
            None,
        )
        .await;
    assert_eq!(
        long["structuredContent"]["online"],
        json!(["p51", "p52", "p53", "p54"]),
        "sorts between p50 and p51: {long:#}"
    );
    drop(others);
}

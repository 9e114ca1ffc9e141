//! Games survive a crash of the arcade (issue #15): `mcpl-arcade serve --data-dir DIR` is
//! killed with SIGKILL mid-game and started again on the same directory; the players
//! reconnect, find their games open in `toolsets/list` (§4.3) with their turn's tools and
//! legal moves, play on from the same position without opening anything again (§4.6,
//! vector 9), and finish. A player who was away when the game ended is told the end once
//! by its host (§4.3, vector 13).

use crate::support;

use mcpl_host::host::{HostConfig, ServerConfig};
use mcpl_transport::{ClientOptions, ws};
use serde_json::{Value, json};
use std::path::Path;
use support::host::{ACT, Agent, SERVER};
use support::{Client, serve_kept, text_of};
use tokio::process::Child;

/// The arcade binary keeping its games in `dir`: the child and its WebSocket URL.
async fn arcade(dir: &Path) -> (Child, String) {
    let (child, urls) = serve_kept(
        Some(dir),
        &[
            "--ws",
            "127.0.0.1:0",
            "--token",
            "alice=alice",
            "--token",
            "bob=bob",
            "--bot-playouts",
            "48",
            "--seed",
            "7",
        ],
        1,
    )
    .await;
    (child, urls[0].clone())
}

/// A hinted connection of `who` that has read `toolsets/list`.
async fn player(url: &str, who: &str) -> Client {
    let opts = ClientOptions {
        token: Some(who.to_owned()),
        ..Default::default()
    };
    let conn = ws::connect(url, &opts).await.expect("connect");
    let mut c = Client::from_connection(conn);
    c.handshake(true, &["tools", "pushEvents"]).await;
    c.list().await;
    c
}

/// SIGKILL: nothing is flushed or closed by the arcade itself.
async fn crash(mut child: Child) {
    child.kill().await.expect("the arcade is killed");
}

/// `(toolset, instance)` of each open record of a `toolsets/list` result.
fn open_records(list: &Value) -> Vec<(String, String)> {
    list["open"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some((
                r["toolset"].as_str()?.to_owned(),
                r["instance"].as_str()?.to_owned(),
            ))
        })
        .collect()
}

#[actix::test]
async fn a_go_game_against_the_bot_goes_on_after_a_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url) = arcade(dir.path()).await;
    let mut alice = player(&url, "alice").await;
    alice.open("go", Some("g1"), json!({})).await;
    let r = alice
        .call("go_play", json!({"move": "E5"}), Some("g1"))
        .await;
    assert!(text_of(&r).contains("bot (White) "), "{r:#}");
    let r = alice
        .call("go_play", json!({"move": "C3"}), Some("g1"))
        .await;
    assert!(text_of(&r).contains("bot (White) "), "{r:#}");
    let before = text_of(&alice.call("go_board", json!({}), Some("g1")).await);
    let moves_before = alice.hints.moves("go_play", "g1");
    crash(child).await;
    drop(alice);

    let (_child, url) = arcade(dir.path()).await;
    let mut alice = player(&url, "alice").await;
    let list = alice.list().await;
    assert!(
        open_records(&list).contains(&("go".to_owned(), "g1".to_owned())),
        "the game is open again: {list:#}"
    );
    // Its turn, as kept: play visible, the same legal moves, the same position.
    assert!(alice.hints.is_visible("go_play", "g1"));
    assert_eq!(alice.hints.moves("go_play", "g1"), moves_before);
    let after = text_of(&alice.call("go_board", json!({}), Some("g1")).await);
    assert_eq!(after, before);
    // It goes on, without opening it again, and finishes.
    let mv = moves_before
        .iter()
        .find(|m| m.as_str() != "pass")
        .expect("a legal point")
        .clone();
    let r = alice.call("go_play", json!({"move": mv}), Some("g1")).await;
    assert!(text_of(&r).contains("bot (White) "), "{r:#}");
    let r = alice.call("go_resign", json!({}), Some("g1")).await;
    assert!(text_of(&r).contains("wins"), "{r:#}");
    let list = alice.list().await;
    assert!(
        list["ended"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["instance"] == "g1"),
        "{list:#}"
    );
}

#[actix::test]
async fn a_two_player_game_goes_on_after_a_sigkill_and_the_away_player_is_told_the_end_once() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let (child, url) = arcade(dir.path()).await;
    let mut alice = player(&url, "alice").await;
    let mut bob = player(&url, "bob").await;
    alice
        .open("tictactoe", Some("t1"), json!({"opponent": "bob"}))
        .await;
    let invitation = bob.next_push().await;
    let suggested = &invitation["params"]["hints"]["suggest"][0];
    let name = suggested["instance"].as_str().unwrap().to_owned();
    bob.open("tictactoe", Some(&name), Value::Null).await;
    alice.next_push().await; // bob accepted
    alice
        .call("tictactoe_play", json!({"move": "a1"}), Some("t1"))
        .await;
    bob.next_push().await; // alice played
    bob.call("tictactoe_play", json!({"move": "b1"}), Some(&name))
        .await;
    alice.next_push().await; // bob played
    let before = text_of(&alice.call("tictactoe_board", json!({}), Some("t1")).await);
    crash(child).await;
    drop((alice, bob));

    let (_child, url) = arcade(dir.path()).await;
    let mut alice = player(&url, "alice").await;
    let mut bob = player(&url, "bob").await;
    assert!(
        alice.hints.is_visible("tictactoe_play", "t1"),
        "alice's turn, as kept"
    );
    assert!(!bob.hints.is_visible("tictactoe_play", &name));
    let after = text_of(&alice.call("tictactoe_board", json!({}), Some("t1")).await);
    assert_eq!(after, before);
    alice
        .call("tictactoe_play", json!({"move": "a2"}), Some("t1"))
        .await;
    bob.next_push().await;
    let r = bob
        .call("tictactoe_play", json!({"move": "b2"}), Some(&name))
        .await;
    assert_ne!(r["isError"], true, "{r:#}");
    alice.next_push().await;
    // bob goes away; alice wins meanwhile.
    drop(bob);
    let r = alice
        .call("tictactoe_play", json!({"move": "a3"}), Some("t1"))
        .await;
    assert!(text_of(&r).contains("wins"), "{r:#}");

    // bob's host comes back: it tells him the end, once; a new host on the same state
    // directory does not tell it again.
    let config = || {
        let server = ServerConfig::url(SERVER, &url, Some("bob".to_owned()));
        HostConfig::new(vec![server]).with_state_dir(state.path())
    };
    let ended = format!("Ended [{SERVER}/tictactoe:{name}]");
    let host = Agent::with(config(), "bob").await;
    let shown = host.transcript().await;
    let told: Vec<_> = shown.iter().filter(|s| s.text.contains(&ended)).collect();
    assert_eq!(told.len(), 1, "{shown:#?}");
    assert!(told[0].text.contains("X (alice) wins"), "{:?}", told[0]);
    host.stop().await;
    let host = Agent::with(config(), "bob").await;
    let shown = host.transcript().await;
    assert!(
        !shown.iter().any(|s| s.text.contains(&ended)),
        "told again: {shown:#?}"
    );
    host.stop().await;
}

/// The same game through the project's own host, which stays up across the crash: it
/// reconnects by itself to the arcade started again on the same port, adopts the game from
/// `toolsets/list` (§4.6, vector 9: no open), and plays it to its end from the same position.
#[actix::test]
async fn a_running_host_reconnects_adopts_and_finishes_a_go_game_after_a_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url) = arcade(dir.path()).await;
    let server = ServerConfig::url(SERVER, &url, Some("alice".to_owned()));
    let alice = Agent::with(HostConfig::new(vec![server]), "alice").await;
    let opened = alice
        .open(json!({"toolset": "go", "instance": "g1", "options": {"size": 9}}))
        .await;
    assert!(opened.contains("You play Black"), "{opened}");
    let r = alice
        .act("go_play", Some("g1"), json!({"move": "E5"}))
        .await;
    assert!(r.contains("bot (White) "), "{r}");
    let moves_before = alice.moves("go_play", "g1").await;
    let board = |a: &Agent| {
        let host = a.host.clone();
        async move {
            let r = host
                .call(
                    ACT,
                    json!({"tool": "go_board", "instance": "g1", "args": {}}),
                )
                .await
                .expect("the host runs");
            assert!(!r.is_error, "{}", r.joined_text());
            r.joined_text()
        }
    };
    let before = board(&alice).await;
    let epoch = alice.host.status().servers[SERVER].epoch;
    crash(child).await;

    // The same port, so the host's configured URL reaches the new process.
    let port = url
        .trim_start_matches("ws://127.0.0.1:")
        .split(['/', '?'])
        .next()
        .unwrap()
        .to_owned();
    let (_child, again) = serve_kept(
        Some(dir.path()),
        &[
            "--ws",
            &format!("127.0.0.1:{port}"),
            "--token",
            "alice=alice",
            "--bot-playouts",
            "48",
            "--seed",
            "7",
        ],
        1,
    )
    .await;
    assert_eq!(again[0], url);
    let status = mcpl_testkit::within(
        alice
            .host
            .wait_for(|s| s.servers[SERVER].epoch > epoch && s.servers[SERVER].settled),
    )
    .await
    .expect("the host runs");
    assert!(
        status.servers[SERVER]
            .open
            .contains(&("go".to_owned(), Some("g1".to_owned()))),
        "adopted, not opened again: {status:?}"
    );
    assert_eq!(alice.moves("go_play", "g1").await, moves_before);
    assert_eq!(board(&alice).await, before);
    let mv = moves_before
        .iter()
        .find(|m| m.as_str() != "pass" && m.as_str() != "E5")
        .expect("a legal point")
        .clone();
    let r = alice.act("go_play", Some("g1"), json!({"move": mv})).await;
    assert!(r.contains("bot (White) "), "{r}");
    let r = alice.act("go_resign", Some("g1"), json!({})).await;
    assert!(r.contains("wins"), "{r}");
    alice.stop().await;
}

#[actix::test]
async fn a_damaged_store_stops_the_arcade_with_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcpl-state.redb");
    std::fs::write(&file, b"these bytes were never a store").unwrap();
    let out = tokio::process::Command::new(support::BIN)
        .args([
            "serve",
            "--ws",
            "127.0.0.1:0",
            "--token",
            "alice=alice",
            "--data-dir",
        ])
        .arg(dir.path())
        .output()
        .await
        .expect("the binary runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&file.display().to_string()) && err.contains("cannot open the store"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[actix::test]
async fn a_challenge_waiting_for_its_answer_is_sent_again_after_a_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url) = arcade(dir.path()).await;
    let mut alice = player(&url, "alice").await;
    // bob is offline: a configured player may be challenged all the same.
    let r = alice
        .call(
            "challenge",
            json!({"opponent": "bob", "game": "tictactoe"}),
            None,
        )
        .await;
    assert_ne!(r["isError"], true, "{r:#}");
    crash(child).await;
    drop(alice);

    let (_child, url) = arcade(dir.path()).await;
    let mut alice = player(&url, "alice").await;
    let games = alice.call("games", json!({}), None).await;
    assert_eq!(
        games["structuredContent"]["sent"][0]["to"], "bob",
        "the lobby lists it again: {games:#}"
    );
    let mut bob = player(&url, "bob").await;
    let games = bob.call("games", json!({}), None).await;
    let waiting = &games["structuredContent"]["challenges"][0];
    assert_eq!(waiting["from"], "alice", "{games:#}");
    let name = waiting["instance"].as_str().unwrap().to_owned();
    let joined = bob.open("tictactoe", Some(&name), Value::Null).await;
    assert_eq!(
        joined["result"]["title"], "Tic-tac-toe vs alice",
        "{joined:#}"
    );
    let push = alice.next_push().await;
    assert!(
        text_of(&push).starts_with("bob accepted your challenge"),
        "{push:#}"
    );
}

/// The arcade binary keeping its games in `dir`, with a public spectator page: the child,
/// its WebSocket URL and its page's URL. `ws` is the address to listen on.
async fn arcade_with_page(dir: &Path, ws: &str) -> (Child, String, String) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(support::BIN)
        .args(["serve", "--data-dir"])
        .arg(dir)
        .args([
            "--ws",
            ws,
            "--web",
            "127.0.0.1:0",
            "--web-public",
            "--token",
            "alice=alice",
            "--bot-playouts",
            "48",
            "--seed",
            "7",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut url, mut page) = (None, None);
    while url.is_none() || page.is_none() {
        let line = mcpl_testkit::within(lines.next_line())
            .await
            .unwrap()
            .expect("a line naming a listener");
        if let Some(u) = line.strip_prefix("listening on ") {
            url = Some(u.to_owned());
        } else if let Some(p) = line.strip_prefix("spectator page on ") {
            page = Some(p.to_owned());
        }
    }
    (child, url.unwrap(), page.unwrap())
}

/// A game as the page shows it: (number, state, players).
type Shown = (u64, String, String);

fn shown_of(g: &Value) -> Shown {
    let players: Vec<&str> = g["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    (
        g["id"].as_u64().unwrap(),
        g["state"]["state"].as_str().unwrap().to_owned(),
        players.join(" "),
    )
}

/// What the page's stream (`/events`) shows, read until `count` games are shown (games
/// read back after a restart appear as their tables resume): each game once, by number.
async fn shown(page: &str, count: usize) -> Vec<Shown> {
    let mut r = reqwest::get(format!("{page}events")).await.unwrap();
    let mut games = std::collections::BTreeMap::new();
    let mut text = String::new();
    let read = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while games.len() < count {
            let chunk = r.chunk().await.unwrap().expect("the stream goes on");
            text.push_str(std::str::from_utf8(&chunk).unwrap());
            while let Some(end) = text.find("\n\n") {
                let event: String = text.drain(..end + 2).collect();
                let data: String = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if data.is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(&data).unwrap();
                match v.get("games").and_then(Value::as_array) {
                    Some(all) => games.extend(all.iter().map(|g| (g["id"].as_u64(), shown_of(g)))),
                    None if v.get("players").is_some() => {
                        games.insert(v["id"].as_u64(), shown_of(&v));
                    }
                    None => {}
                }
            }
        }
    })
    .await;
    assert!(read.is_ok(), "{count} games not shown: {games:?}");
    games.into_values().collect()
}

/// Issue #43: after a restart on the same data directory, a game under way keeps the
/// number the page showed it by, the games that had finished are still shown, and a new
/// game never takes the number of one shown before.
#[actix::test]
async fn issue43_games_keep_their_numbers_and_the_finished_ones_stay_shown_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url, page) = arcade_with_page(dir.path(), "127.0.0.1:0").await;
    let mut alice = player(&url, "alice").await;
    // Three games: the first two end (resigned), the third goes on.
    for name in ["t1", "t2", "t3"] {
        alice.open("tictactoe", Some(name), json!({})).await;
    }
    for name in ["t1", "t2"] {
        let r = alice.call("tictactoe_resign", json!({}), Some(name)).await;
        assert!(text_of(&r).contains("resign"), "{r}");
    }
    let before = shown(&page, 3).await;
    let playing: Vec<_> = before.iter().filter(|g| g.1 != "over").collect();
    let over: Vec<_> = before.iter().filter(|g| g.1 == "over").collect();
    assert_eq!((playing.len(), over.len()), (1, 2), "{before:?}");
    // Connected at the crash: the game under way is kept (a last connection that closes
    // ends the principal's toolsets, §4.6).
    crash(child).await;
    drop(alice);

    let (_child, url, page) = arcade_with_page(dir.path(), "127.0.0.1:0").await;
    let after = shown(&page, 3).await;
    assert_eq!(after, before, "the same games under the same numbers");
    let mut alice = player(&url, "alice").await;
    alice.open("tictactoe", Some("t4"), json!({})).await;
    let highest = before.iter().map(|g| g.0).max().unwrap();
    let new: Vec<_> = shown(&page, 4)
        .await
        .into_iter()
        .filter(|g| !before.iter().any(|b| b.0 == g.0))
        .collect();
    assert_eq!(new.len(), 1, "{new:?}");
    assert!(new[0].0 > highest, "{new:?} after {highest}");
}

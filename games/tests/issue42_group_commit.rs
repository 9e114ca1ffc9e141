//! Group commit (issue #42 item 1) keeps what it acknowledged: players move at the same
//! time in their tic-tac-toe games against the bot on `mcpl-arcade serve --data-dir DIR`
//! (their steps sharing commits), the arcade is killed with SIGKILL the moment one of a
//! round of concurrent moves is answered, and started again on the same directory: every
//! move that was answered is on its board; a move in flight may or may not be.
//!
//! That concurrent steps share commits is shown in `server/tests/issue42_group_commit.rs`
//! (the store's own count, with a gate on its commits).

use crate::support;

use mcpl_testkit::msg;
use mcpl_transport::{ClientOptions, ws};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use support::{Client, serve_kept, text_of};
use tokio::process::Child;

/// Players, each in its own game against the bot.
const PLAYERS: usize = 8;

fn name(i: usize) -> String {
    format!("p{i}")
}

/// The arcade binary keeping its games in `dir`, every player with a token.
async fn arcade(dir: &Path) -> (Child, String) {
    let mut args: Vec<String> = ["--ws", "127.0.0.1:0", "--bot-playouts", "16", "--seed", "7"]
        .map(str::to_owned)
        .to_vec();
    for i in 0..PLAYERS {
        args.push("--token".to_owned());
        args.push(format!("{}={}", name(i), name(i)));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (child, urls) = serve_kept(Some(dir), &args, 1).await;
    (child, urls[0].clone())
}

async fn player(url: &str, who: &str) -> Client {
    let opts = ClientOptions {
        token: Some(who.to_owned()),
        ..Default::default()
    };
    let conn = ws::connect(url, &opts).await.expect("connect");
    let mut c = Client::from_connection(conn);
    c.handshake(true, &["tools", "pushEvents"]).await;
    c
}

/// The cells holding `mark` on a board as `tictactoe_board` draws it (` 3  X | . |(O)`
/// rows, columns a–c), and the free cells.
fn cells(board: &str, mark: char) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut marked, mut free) = (BTreeSet::new(), BTreeSet::new());
    for line in board.lines() {
        let b = line.as_bytes();
        if b.len() < 4 || b[0] != b' ' || !b[1].is_ascii_digit() || b[2] != b' ' {
            continue;
        }
        let row = char::from(b[1]);
        for (col, cell) in ['a', 'b', 'c'].into_iter().zip(line[3..].split('|')) {
            let symbol = cell.trim().trim_matches(|c| c == '(' || c == ')');
            let at = format!("{col}{row}");
            if symbol == mark.to_string() {
                marked.insert(at);
            } else if symbol == "." {
                free.insert(at);
            }
        }
    }
    (marked, free)
}

async fn board(c: &mut Client) -> String {
    text_of(&c.call("tictactoe_board", json!({}), Some("t")).await)
}

fn play(id: i64, cell: &str) -> Value {
    msg::request(
        json!(id),
        "tools/call",
        msg::call_params("tictactoe_play", json!({"move": cell}), Some("t")),
    )
}

#[actix::test]
async fn issue42_01_every_move_answered_under_concurrent_load_survives_a_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = arcade(dir.path()).await;
    let mut players = Vec::new();
    for i in 0..PLAYERS {
        let mut c = player(&url, &name(i)).await;
        let r = c.open("tictactoe", Some("t"), json!({})).await;
        assert!(r.get("result").is_some(), "{r:#}");
        players.push(c);
    }
    // What each player was answered: its marks.
    let mut answered: Vec<BTreeSet<String>> = vec![BTreeSet::new(); PLAYERS];

    // A round of moves made at the same time, every one answered.
    for c in &mut players {
        c.send(play(100, "b2")).await;
    }
    for (i, c) in players.iter_mut().enumerate() {
        let r = c
            .next_where(|v| v["id"] == 100 && v.get("method").is_none())
            .await;
        assert_ne!(r["result"]["isError"], true, "{r:#}");
        answered[i].insert("b2".to_owned());
    }

    // Another, and the arcade is killed the moment the first of them is answered.
    let mut free = Vec::new();
    for c in &mut players {
        let (_, open) = cells(&board(c).await, 'X');
        free.push(open.into_iter().next().expect("a free cell"));
    }
    for (c, cell) in players.iter_mut().zip(&free) {
        c.send(play(101, cell)).await;
    }
    let r = players[0]
        .next_where(|v| v["id"] == 101 && v.get("method").is_none())
        .await;
    child.kill().await.expect("the arcade is killed");
    assert_ne!(r["result"]["isError"], true, "{r:#}");
    answered[0].insert(free[0].clone());
    drop(players);

    // Started again: every answered move is on its board.
    let (_child, url) = arcade(dir.path()).await;
    let mut in_flight_kept = 0;
    for (i, kept) in answered.iter().enumerate() {
        let mut c = player(&url, &name(i)).await;
        let (marks, _) = cells(&board(&mut c).await, 'X');
        assert!(
            kept.is_subset(&marks),
            "{}: answered {kept:?}, kept {marks:?}",
            name(i)
        );
        if i > 0 && marks.contains(&free[i]) {
            in_flight_kept += 1;
        }
    }
    eprintln!(
        "moves in flight at the SIGKILL that were kept: {in_flight_kept} of {}",
        PLAYERS - 1
    );
}

//! A person plays Go against the bot with `mcpl-host play`'s commands (`open
//! arcade/go:g size=9`, `act go_play:g E5`, `act go_pass:g`), against the real
//! `mcpl-arcade serve --ws` binary, and reads a board in every answer: coordinates on
//! all sides, stones, the last move marked, whose move it is.
//!
//! The commands are read and filled by `mcpl_host::cli::play` — the library half of
//! `mcpl-host play` — and sent through a `Host`, as the binary does. The binary's own loop
//! (the line editor and printing) is not run here: Cargo builds another package's binary
//! for a test only when this package depends on it as an artifact, which stable Cargo
//! cannot do.

use crate::support;

use mcpl_host::cli::play::{self, Command};
use mcpl_host::host::HostHandle;
use mcpl_host::state::meta_tools::ACT;
use support::host::{Agent, SERVER};
use support::serve;

/// What typing `line` at `mcpl-host play` prints, as its loop runs it: a result's text, or
/// `error: …` for a tool error or a line that does not read.
async fn typed(host: &HostHandle, line: &str) -> String {
    let print = |r: mcpl_protocol::CallToolResult| {
        if r.is_error {
            format!("error: {}", r.joined_text())
        } else {
            r.joined_text()
        }
    };
    match play::parse(line) {
        Ok(Command::Call { tool, args }) => print(host.call(&tool, args).await.unwrap()),
        Ok(Command::Act(act)) => {
            let t = &act.target;
            let def = host
                .definition(t.server.as_deref(), &t.name, t.instance.as_deref())
                .await
                .unwrap();
            match play::fill_act(&act, def.as_ref()) {
                Ok(args) => print(host.call(ACT, args).await.unwrap()),
                Err(e) => format!("error: {e}"),
            }
        }
        Ok(other) => panic!("{line:?} is not a call: {other:?}"),
        Err(e) => format!("error: {e}"),
    }
}

/// True when `text` shows a 9×9 board a person can read: the column letters above and
/// below, each row numbered at both ends with its nine points.
fn shows_a_board(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().map(|l| l.trim_start_matches("│ ")).collect();
    let columns = lines
        .iter()
        .filter(|l| l.trim() == "A B C D E F G H J")
        .count();
    let rows = (1..=9).all(|r| {
        lines.iter().any(|l| {
            let points = l
                .strip_prefix(&format!("{r:>2} "))
                .and_then(|rest| rest.strip_suffix(&format!("  {r}")));
            points.is_some_and(|p| p.chars().filter(|c| ".+XO".contains(*c)).count() == 9)
        })
    });
    columns == 2 && rows
}

#[actix::test]
async fn a_person_plays_go_against_the_bot_with_the_play_commands() {
    let (_arcade, urls) = serve(
        &[
            "--ws",
            "127.0.0.1:0",
            "--token",
            "ann=s3cret",
            "--bot-playouts",
            "48",
            "--seed",
            "7",
        ],
        1,
    )
    .await;
    let config = mcpl_host::host::HostConfig::new(vec![mcpl_host::host::ServerConfig::url(
        SERVER,
        urls[0].clone(),
        Some("s3cret".into()),
    )]);
    let person = Agent::with(config, "ann").await;
    let host = &person.host;

    let look = typed(host, "look").await;
    assert!(look.contains("[arcade/go] \"Go\""), "{look}");
    let opened = typed(host, "open arcade/go:g size=9").await;
    assert!(opened.contains("You play Black"), "{opened}");
    assert!(shows_a_board(&opened), "{opened}");
    assert!(opened.contains("Your move."), "{opened}");

    // A point that is not on the board is refused with the arcade's reason (issue #36,
    // item 14: the host leaves a value outside the enum to the server).
    let wrong = typed(host, "act go_play:g Z9").await;
    assert!(wrong.starts_with("error: "), "{wrong}");
    assert!(wrong.contains("invalid column"), "{wrong}");

    // The person's favourite points while they are free, then passes until the end.
    let favourites = ["E5", "C3", "G7", "C7", "G3", "E3", "E7", "C5", "G5"];
    let mut turns = 0;
    let last = loop {
        turns += 1;
        assert!(turns < 200, "the game does not end");
        let legal = person.moves("go_play", "g").await;
        let line = match favourites.iter().find(|p| legal.iter().any(|l| l == *p)) {
            Some(p) if turns <= favourites.len() => format!("act go_play:g {p}"),
            _ => "act go_pass:g".to_owned(),
        };
        let text = typed(host, &line).await;
        assert!(!text.starts_with("error"), "{line}: {text}");
        assert!(shows_a_board(&text), "{line}: {text}");
        assert!(text.contains("bot (White)"), "the bot's answer: {text}");
        if text.contains("Game over:") {
            break text;
        }
        assert!(text.contains("Your move."), "{text}");
        if !text.contains("bot (White) passed") {
            assert!(
                text.contains("(O)"),
                "the bot's last move is marked: {text}"
            );
        }
    };
    assert!(last.contains(" wins by "), "{last}");
    assert!(last.contains("- Closed [arcade/go:g]: \""), "{last}");
    let after = typed(host, "act go_pass:g").await;
    assert!(after.starts_with("error: "), "the game is over: {after}");
    person.stop().await;
}

//! Issue #43 item 4, `mcpl-arcade serve` as a person starts it: it says where its games
//! are kept (the default is a file in the OS data directory, which nothing said); a second
//! arcade on the same data directory (the README's WebSocket one, then a surface host's
//! `serve --stdio`) is refused at start naming the file, the process holding it and the
//! flags to use; and no colour codes reach a stderr that is not a terminal.

use mcpl_testkit::process::listening;
use std::path::Path;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const ARCADE: &str = env!("CARGO_BIN_EXE_mcpl-arcade");

/// `mcpl-arcade serve ARGS` with `data_home` as the OS data directory (XDG_DATA_HOME), its
/// stdout and stderr piped; up once it says where it listens.
async fn serve(data_home: &Path, args: &[&str]) -> Child {
    let mut child = Command::new(ARCADE)
        .arg("serve")
        .args(args)
        .env("XDG_DATA_HOME", data_home)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the arcade starts");
    listening(&mut child, 1).await;
    child
}

/// The first stderr line of `child`.
async fn first_stderr_line(child: &mut Child) -> String {
    let stderr = child.stderr.take().unwrap();
    mcpl_testkit::within(BufReader::new(stderr).lines().next_line())
        .await
        .unwrap()
        .expect("a line on stderr")
}

#[tokio::test]
async fn issue43_04_b_the_arcade_says_where_its_games_are_kept() {
    let home = tempfile::tempdir().unwrap();
    // The default: the OS data directory's mcpl-arcade/.
    let mut arcade = serve(home.path(), &["--ws", "127.0.0.1:0", "--token", "a=s"]).await;
    let file = home.path().join("mcpl-arcade").join("mcpl-state.redb");
    let line = first_stderr_line(&mut arcade).await;
    assert!(
        line.contains(&format!("games are kept in {}", file.display()))
            && line.contains("--data-dir DIR or --in-memory"),
        "{line}"
    );
    drop(arcade);
    // In memory: said too.
    let mut arcade = serve(
        home.path(),
        &["--ws", "127.0.0.1:0", "--token", "a=s", "--in-memory"],
    )
    .await;
    let line = first_stderr_line(&mut arcade).await;
    assert!(line.contains("kept in memory only"), "{line}");
}

#[tokio::test]
async fn issue43_04_b_a_second_arcade_on_the_same_data_dir_is_refused_naming_the_file_the_holder_and_the_flags()
 {
    let home = tempfile::tempdir().unwrap();
    // The README's WebSocket arcade...
    let first = serve(home.path(), &["--ws", "127.0.0.1:0", "--token", "a=s"]).await;
    // ...then the surface configuration's `mcpl-arcade serve --stdio`, on the same default.
    let out = std::process::Command::new(ARCADE)
        .args(["serve", "--stdio"])
        .env("XDG_DATA_HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let file = home.path().join("mcpl-arcade").join("mcpl-state.redb");
    for said in [
        format!("the store {} is in use by another process", file.display()),
        format!("pid {}", first.id().unwrap()),
        "Database already open. Cannot acquire lock.".to_owned(),
        "give this one --data-dir DIR".to_owned(),
        "--in-memory".to_owned(),
    ] {
        assert!(stderr.contains(&said), "{said:?} not in {stderr}");
    }
}

#[tokio::test]
async fn issue43_04_d_no_colour_codes_reach_a_stderr_that_is_not_a_terminal() {
    let home = tempfile::tempdir().unwrap();
    // Anonymous and beyond loopback: a warning at bind.
    let mut arcade = serve(
        home.path(),
        &["--ws", "0.0.0.0:0", "--allow-anonymous", "--in-memory"],
    )
    .await;
    let stderr = arcade.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let mut said = String::new();
    while !said.contains("WARN") {
        let line = mcpl_testkit::within(lines.next_line())
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("no warning; stderr said:\n{said}"));
        said.push_str(&line);
        said.push('\n');
    }
    assert!(said.contains("anonymous"), "{said}");
    assert!(!said.contains('\x1b'), "colour codes in {said:?}");
}

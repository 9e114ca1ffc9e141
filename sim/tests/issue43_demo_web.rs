//! Issue #43, item 1: `sim demo --web ADDR` serves the spectator page for the demo's games,
//! and keeps serving them, finished, after its summary until it is stopped.

use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio::sync::oneshot;

#[tokio::test]
async fn issue43_05_sim_demo_serves_its_games_to_spectators() {
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args([
            "demo",
            "--fast",
            "--seed",
            "7",
            "--limit",
            "40",
            "--web",
            "127.0.0.1:0",
            "--out",
        ])
        .arg(out.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the sim binary starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let limit = Duration::from_secs(120);
    let page = tokio::time::timeout(limit, async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the page's line");
            if let Some(url) = line.strip_prefix("spectator page on ") {
                return url.to_owned();
            }
        }
    })
    .await
    .expect("the page is served before the demo plays");
    // The demo prints every move: its stdout is read to its last line meanwhile.
    let (done_tx, done) = oneshot::channel();
    tokio::spawn(async move {
        let mut done_tx = Some(done_tx);
        while let Ok(Some(line)) = lines.next_line().await {
            if line.starts_with("The games stay on the spectator page")
                && let Some(tx) = done_tx.take()
            {
                let _ = tx.send(line);
            }
        }
    });
    let last = tokio::time::timeout(limit, done)
        .await
        .expect("the demo ends")
        .expect("its last line");
    assert!(last.contains(&page), "{last}");
    // After the summary the process still serves the games, every one of them over.
    let games: Value = reqwest::get(format!("{page}games"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let games = games["games"].as_array().unwrap();
    let mut seen: Vec<(String, String)> = games
        .iter()
        .map(|g| {
            let mut names: Vec<&str> = g["players"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            // Sides aside: who played whom.
            names.sort();
            (g["game"].as_str().unwrap().to_owned(), names.join(" "))
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("go".to_owned(), "alice bob".to_owned()),
            ("tictactoe".to_owned(), "bot carol".to_owned())
        ],
        "the demo's two games"
    );
    for g in games {
        assert_eq!(g["state"]["state"], "over", "{g}");
    }
    let go = games.iter().find(|g| g["game"] == "go").unwrap();
    assert!(go["svg"].as_str().unwrap().starts_with("<svg"), "{go}");
    child.kill().await.unwrap();
}

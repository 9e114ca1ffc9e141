//! Issue #43, item 1: the spectator page (`mcpl-arcade serve --web ADDR`), driven as a
//! person sees it — in a real headless browser (Debian's chromium, started by the test) —
//! and at its edges: who may watch, how many at once, and a watcher too slow for a burst.

use crate::support;

use mcpl_games::arcade::spectate::web::{self, Access, WebOptions};
use mcpl_games::arcade::spectate::{Gallery, GameState, GameView, PlayerView};
use mcpl_games::go::{BoardSize, Color, Game, Move};
use mcpl_testkit::within;
use mcpl_transport::{ClientOptions, ws};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;
use support::browser::{Browser, save};
use support::{BIN, Client, text_of};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

/// How long the page may take to show a change.
const SHOWN: Duration = Duration::from_secs(20);

/// `mcpl-arcade serve --in-memory` with `args`, its stdout read up to the lines that name
/// the WebSocket listener and the spectator page: (child, ws URL, page URL).
async fn serve_web(args: &[&str]) -> (Child, String, String) {
    let mut child = Command::new(BIN)
        .arg("serve")
        .arg("--in-memory")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut ws, mut page) = (None, None);
    while ws.is_none() || page.is_none() {
        let line = within(lines.next_line())
            .await
            .unwrap()
            .expect("a line naming a listener");
        if let Some(url) = line.strip_prefix("listening on ") {
            ws = Some(url.to_owned());
        } else if let Some(url) = line.strip_prefix("spectator page on ") {
            page = Some(url.to_owned());
        } else {
            panic!("unexpected line {line:?}");
        }
    }
    (child, ws.unwrap(), page.unwrap())
}

/// A connection of `who` (its name is its token) after the MCPL handshake and a list.
async fn player(url: &str, who: &str) -> Client {
    let opts = ClientOptions {
        token: Some(who.to_owned()),
        ..Default::default()
    };
    let mut c = Client::from_connection(ws::connect(url, &opts).await.expect("connect"));
    c.handshake(true, &["tools", "pushEvents"]).await;
    c.list().await;
    c
}

/// The moves of the Go game the browser test plays, Black (alice) first: White's E5 is
/// captured at the seventh move, then both pass.
const GO_MOVES: [&str; 10] = [
    "D5", "E5", "F5", "C3", "E6", "G3", "E4", "D3", "pass", "pass",
];

/// A JavaScript expression for the card of the game between `players` ("alice bob").
fn card(players: &str) -> String {
    format!("document.querySelector('.game[data-players=\"{players}\"]')")
}

#[actix::test]
async fn issue43_01_a_browser_watches_games_live() {
    let (mut arcade, ws_url, page) = serve_web(&[
        "--ws",
        "127.0.0.1:0",
        "--token",
        "alice=alice",
        "--token",
        "bob=bob",
        "--token",
        "carol=carol",
        "--bot-playouts",
        "48",
        "--seed",
        "43",
        "--web",
        "127.0.0.1:0",
        "--web-token",
        "w4tch",
    ])
    .await;
    let mut browser = Browser::start().await;
    browser.navigate(&format!("{page}?token=w4tch")).await;
    browser
        .wait_for(
            "document.getElementById('live').dataset.live === 'live'",
            SHOWN,
        )
        .await;
    // The token went into a cookie and out of the address bar.
    assert_eq!(browser.eval("location.search").await, Ok(json!("")));
    // Set once: still there at the end shows the page was never reloaded.
    browser.eval("window.sameDocument = true").await.unwrap();

    // alice challenges bob to Go 9x9: the page shows the game waiting for him.
    let mut alice = player(&ws_url, "alice").await;
    let mut bob = player(&ws_url, "bob").await;
    alice
        .open("go", Some("duel"), json!({"opponent": "bob", "komi": 6.5}))
        .await;
    let duel = card("alice bob");
    let waiting = browser
        .wait_for(
            &format!(
                "{duel}.dataset.state === 'waiting' && {duel}.querySelector('.state').textContent"
            ),
            SHOWN,
        )
        .await;
    assert_eq!(waiting, "Waiting for bob to accept the challenge.");
    bob.next_push().await;
    bob.open("go", Some("duel"), Value::Null).await;
    alice.next_push().await;
    browser
        .wait_for(
            &format!("{duel}.dataset.state === 'playing' && {duel}.querySelector('.board svg')"),
            SHOWN,
        )
        .await;

    // Each move appears on the page as it is made, without a reload.
    let mut game = Game::with_komi(BoardSize::Nine, 6.5);
    for (i, mv) in GO_MOVES.iter().enumerate() {
        let (mover, other) = if i % 2 == 0 {
            (&mut alice, &mut bob)
        } else {
            (&mut bob, &mut alice)
        };
        let r = if *mv == "pass" {
            mover.call("go_pass", json!({}), Some("duel")).await
        } else {
            mover
                .call("go_play", json!({"move": mv}), Some("duel"))
                .await
        };
        assert_ne!(r["isError"], true, "{mv}: {}", text_of(&r));
        other.next_push().await;
        game.play(Move::parse(mv, BoardSize::Nine).unwrap())
            .unwrap();
        let moves = i + 1;
        if moves == 1 {
            let shown = browser
                .wait_for(
                    &format!(
                        "{duel}.dataset.moves === '1' && {duel}.querySelector('.state').textContent"
                    ),
                    SHOWN,
                )
                .await;
            assert_eq!(shown, "White (bob) to move.");
            let stones = browser
                .eval(&format!(
                    "{duel}.querySelectorAll('.board svg circle[fill=\"url(#black-stone)\"]').length"
                ))
                .await;
            assert_eq!(stones, Ok(json!(1)), "alice's stone is on the board");
        }
        if moves == 7 {
            let facts = browser
                .wait_for(
                    &format!(
                        "{duel}.dataset.moves === '7' && {duel}.querySelector('.facts').textContent"
                    ),
                    SHOWN,
                )
                .await;
            assert!(
                facts
                    .as_str()
                    .unwrap()
                    .contains("captures: Black 1, White 0"),
                "{facts}"
            );
        }
    }

    // Over: the result, and the count that decided it.
    let result = game.result().expect("two passes end it");
    let score = result.score.expect("counted");
    let winner = match result.winner {
        Some(Color::Black) => "Black (alice)",
        Some(Color::White) => "White (bob)",
        None => panic!("no draw with komi 6.5"),
    };
    let expected = result.text.replacen(
        match result.winner {
            Some(Color::Black) => "Black",
            _ => "White",
        },
        winner,
        1,
    );
    let state = browser
        .wait_for(
            &format!(
                "{duel}.dataset.state === 'over' && {duel}.querySelector('.state').textContent"
            ),
            SHOWN,
        )
        .await;
    assert_eq!(state, json!(format!("Game over: {expected}.")));
    let rows = browser
        .eval(&format!(
            "[...{duel}.querySelectorAll('table.score tr[data-side]')].map(r => [...r.children].map(c => c.textContent))"
        ))
        .await
        .unwrap();
    let black_stones = game.board().stone_count(Color::Black) as u32;
    let white_stones = game.board().stone_count(Color::White) as u32;
    assert_eq!(
        rows,
        json!([
            [
                "Black (alice)",
                black_stones.to_string(),
                (score.black_area - black_stones).to_string(),
                "0",
                score.black().to_string()
            ],
            [
                "White (bob)",
                white_stones.to_string(),
                (score.white_area - white_stones).to_string(),
                "6.5",
                score.white().to_string()
            ],
        ]),
        "the count, side by side"
    );
    assert_eq!(
        browser.eval(&format!("{duel}.closest('section').id")).await,
        Ok(json!("finished"))
    );

    // carol plays tic-tac-toe against the bot: under way beside the finished game.
    let mut carol = player(&ws_url, "carol").await;
    carol.open("tictactoe", Some("t"), json!({})).await;
    carol
        .call("tictactoe_play", json!({"move": "b2"}), Some("t"))
        .await;
    let tictactoe = card("carol bot");
    browser
        .wait_for(
            &format!("{tictactoe}.dataset.moves === '2' && {tictactoe}.closest('section').id === 'playing'"),
            SHOWN,
        )
        .await;
    // carol challenges alice, carol playing O: the page names who it waits for, X.
    carol
        .open(
            "tictactoe",
            Some("t2"),
            json!({"opponent": "alice", "color": "o"}),
        )
        .await;
    let challenge = card("alice carol");
    let waiting = browser
        .wait_for(
            &format!("{challenge}.dataset.state === 'waiting' && {challenge}.querySelector('.state').textContent"),
            SHOWN,
        )
        .await;
    assert_eq!(waiting, "Waiting for alice to accept the challenge.");
    assert_eq!(browser.eval("window.sameDocument").await, Ok(json!(true)));
    // Issue #43: the games under way sit side by side in their wider column (two cards fit
    // at the window's 1280 pixels), not one under the other beside empty space.
    let rows = browser
        .eval(
            "[...document.querySelectorAll('#playing .game')].map(g => { \
               const r = g.getBoundingClientRect(); return [Math.round(r.top), Math.round(r.left)]; })",
        )
        .await
        .unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0][0], rows[1][0], "on one row: {rows:?}");
    assert_ne!(rows[0][1], rows[1][1], "side by side: {rows:?}");

    let png = browser.screenshot().await;
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    let path = save(&png, "issue43-spectator.png");
    eprintln!("the page as a person sees it: {}", path.display());
    browser.close().await;
    arcade.kill().await.unwrap();
}

/// An HTTP client that shows redirects rather than following them.
fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Runs the binary to its end; its exit code and stderr.
async fn refused_start(args: &[&str]) -> (Option<i32>, String) {
    let out = within(
        Command::new(BIN)
            .arg("serve")
            .arg("--in-memory")
            .args(args)
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[actix::test]
async fn issue43_02_games_are_private_without_the_token() {
    // Neither a token nor --web-public: the arcade does not start.
    let base = [
        "--ws",
        "127.0.0.1:0",
        "--token",
        "alice=alice",
        "--web",
        "127.0.0.1:0",
    ];
    let (code, err) = refused_start(&base).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--web-token") && err.contains("--web-public"),
        "{err}"
    );
    let mut bad = base.to_vec();
    bad.extend(["--web-token", "two words"]);
    let (code, err) = refused_start(&bad).await;
    assert_eq!(code, Some(2), "{err}");

    let (mut arcade, _, page) = serve_web(&[
        "--ws",
        "127.0.0.1:0",
        "--token",
        "alice=alice",
        "--web",
        "127.0.0.1:0",
        "--web-token",
        "s3cret-w4tch",
    ])
    .await;
    let client = http();
    let get = |path: &str| client.get(format!("{page}{}", path.trim_start_matches('/')));
    for path in ["/", "/events", "/games", "/app.js"] {
        let r = get(path).send().await.unwrap();
        assert_eq!(r.status(), 401, "{path} without the token");
        let r = get(path).bearer_auth("s3cret-w4tc").send().await.unwrap();
        assert_eq!(r.status(), 401, "{path} with a wrong token");
    }
    let r = get("/?token=nope").send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert!(
        r.text().await.unwrap().contains("?token="),
        "says what to do"
    );

    // The token as a bearer, in the query, and as the cookie the page's address sets.
    let r = get("/games")
        .bearer_auth("s3cret-w4tch")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"games": []}));
    let r = get("/?token=s3cret-w4tch").send().await.unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_owned();
    let r = get("/").header("cookie", &pair).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("<title>mcpl-arcade"));
    let r = get("/events").header("cookie", &pair).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    // A name rebound to loopback is still not this page's (DNS rebinding).
    let r = get("/games")
        .bearer_auth("s3cret-w4tch")
        .header("host", "attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    arcade.kill().await.unwrap();

    // The token from a file (kept off the command line), and an empty file refused.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("web-token");
    std::fs::write(&file, "").unwrap();
    let path = file.to_str().unwrap().to_owned();
    let mut empty = base.to_vec();
    empty.extend(["--web-token-file", path.as_str()]);
    let (code, err) = refused_start(&empty).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("first line is empty"), "{err}");
    std::fs::write(&file, "f1le-t0ken\n").unwrap();
    let (mut arcade, _, page) = serve_web(&empty).await;
    let r = http()
        .get(format!("{page}games"))
        .bearer_auth("f1le-t0ken")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the file's token lets in");
    let r = http().get(format!("{page}games")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    arcade.kill().await.unwrap();

    // --web-public: anyone who reaches the address watches.
    let (mut arcade, _, page) = serve_web(&[
        "--ws",
        "127.0.0.1:0",
        "--token",
        "alice=alice",
        "--web",
        "127.0.0.1:0",
        "--web-public",
    ])
    .await;
    let r = http().get(format!("{page}games")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    arcade.kill().await.unwrap();
}

/// Opens the page's event stream and reads its first event (the snapshot): the
/// connection is served and counted.
async fn watching(page: &str) -> reqwest::Response {
    let mut r = http().get(format!("{page}events")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let first = within(r.chunk()).await.unwrap().expect("the snapshot");
    assert!(first.starts_with(b"event: snapshot"), "{first:?}");
    r
}

#[actix::test]
async fn issue43_03_connections_past_the_bound_are_told_503() {
    let (mut arcade, _, page) = serve_web(&[
        "--ws",
        "127.0.0.1:0",
        "--token",
        "alice=alice",
        "--web",
        "127.0.0.1:0",
        "--web-public",
        "--web-max-connections",
        "2",
    ])
    .await;
    let first = watching(&page).await;
    let _second = watching(&page).await;
    let r = http().get(format!("{page}games")).send().await.unwrap();
    assert_eq!(r.status(), 503, "a third connection");
    assert_eq!(r.headers()["retry-after"], "5");
    // One watcher leaves: its room is free again once the arcade has seen it go.
    drop(first);
    let ok = within(async {
        loop {
            let r = http().get(format!("{page}games")).send().await.unwrap();
            if r.status() == 200 {
                return r;
            }
            assert_eq!(r.status(), 503);
        }
    })
    .await;
    assert_eq!(ok.json::<Value>().await.unwrap(), json!({"games": []}));
    arcade.kill().await.unwrap();
}

/// A Go game's view with `moves` and a picture of `svg_bytes`.
fn view(moves: u64, svg_bytes: usize) -> GameView {
    let player = |name: &str, side: &str| PlayerView {
        name: name.into(),
        side: side.into(),
        bot: false,
    };
    GameView {
        id: 1,
        game: "go".into(),
        title: "Go 9x9".into(),
        players: [player("alice", "Black"), player("bob", "White")],
        state: GameState::Playing {
            to_move: (moves % 2) as usize,
            thinking: false,
        },
        moves,
        last_move: None,
        captures: Some([0, 0]),
        score: None,
        svg: format!("<svg>{}</svg>", "x".repeat(svg_bytes)),
    }
}

/// An SSE stream read as it comes: its complete events, (name, data).
#[derive(Default)]
struct Events {
    pending: String,
    seen: Vec<(String, Value)>,
}

impl Events {
    /// Takes `bytes` read from the stream; the events they complete are parsed.
    fn feed(&mut self, bytes: &[u8]) {
        self.pending.push_str(std::str::from_utf8(bytes).unwrap());
        while let Some(end) = self.pending.find("\n\n") {
            let block: String = self.pending.drain(..end + 2).collect();
            let name = block.lines().find_map(|l| l.strip_prefix("event: "));
            let data = block.lines().find_map(|l| l.strip_prefix("data: "));
            if let (Some(name), Some(data)) = (name, data) {
                let data = serde_json::from_str(data).expect("each event's data is JSON");
                self.seen.push((name.to_owned(), data));
            }
        }
    }

    /// The highest `moves` among the games of the last event.
    fn latest(&self) -> Option<u64> {
        let (_, d) = self.seen.last()?;
        let games = match d.get("games") {
            Some(games) => games.as_array().cloned().unwrap_or_default(),
            None => vec![d.clone()],
        };
        games.iter().filter_map(|g| g["moves"].as_u64()).max()
    }

    fn count(&self, name: &str) -> usize {
        self.seen.iter().filter(|(n, _)| n == name).count()
    }
}

#[tokio::test]
async fn issue43_04_a_watcher_too_slow_for_a_burst_gets_a_fresh_snapshot() {
    // A ring of 4 changes; 300 changes of 64 KiB each (19 MiB, more than any socket
    // buffers) while the watcher reads nothing.
    let gallery = Gallery::new(4, 8);
    let listener = web::serve(
        gallery.clone(),
        "127.0.0.1:0".parse().unwrap(),
        WebOptions::new(Access::Public),
    )
    .await
    .unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut tcp = socket.connect(listener.local_addr()).await.unwrap();
    tcp.write_all(b"GET /events HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    // The stream is open once the arcade counts its watcher.
    let mut head = [0u8; 12];
    tcp.read_exact(&mut head).await.unwrap();
    assert_eq!(&head[9..], b"200");
    assert_eq!(gallery.watchers(), 1);
    const BURST: u64 = 300;
    for moves in 1..=BURST {
        gallery.publish(view(moves, 64 * 1024));
    }
    // Now read: the stream goes on, and brings the game as it is now.
    let mut events = Events::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut bytes = 0;
    within(async {
        while events.latest() != Some(BURST) {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "the stream ended");
            bytes += n;
            events.feed(&buf[..n]);
        }
    })
    .await;
    let (snapshots, games) = (events.count("snapshot"), events.count("game"));
    eprintln!("read {bytes} bytes: {snapshots} snapshots, {games} single changes");
    assert!(snapshots >= 2, "fell behind, and was sent the games afresh");
    assert!(
        (games as u64) < BURST,
        "what it missed was not kept for it: {games} of {BURST} changes"
    );
    // And it goes on with the next change.
    gallery.publish(view(BURST + 1, 16));
    within(async {
        while events.latest() != Some(BURST + 1) {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "the stream ended");
            events.feed(&buf[..n]);
        }
    })
    .await;
    assert_eq!(events.seen.last().unwrap().0, "game");
}

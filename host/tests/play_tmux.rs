//! `mcpl-host play` at a real terminal: tmux runs the binary in a pane, the test types
//! what `help` shows (`open`, `act … go_play`, `act go_pass`, `board`, `status`, `quit`)
//! and reads what the pane prints — the prompt with the connection, each answer — through
//! `tmux pipe-pane` into a FIFO, so every wait is on output arriving, never a sleep. A Go
//! game against the arcade (in this process, its bot seeded) is played to the end; a wrong
//! token is told at the prompt and by the command that needed the server.
//!
//! tmux is needed (`.ci/run` installs it where it is missing); a machine without it may set
//! `MCPL_SKIP_TMUX=1`, and the tests then say so and do nothing — never silently.

use mcpl_games::arcade::{Arcade, ArcadeConfig, BotBudget, BotSettings, listen};
use mcpl_transport::ServerOptions;
use std::collections::HashMap;
use std::io::Read as _;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long one answer may take to show (the bot's search included).
const ANSWER: Duration = Duration::from_secs(60);

const TOKEN: &str = "s3cret";

/// True when tmux runs here; without it the test fails unless `MCPL_SKIP_TMUX` says to
/// skip (module docs).
fn tmux_found() -> bool {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("MCPL_SKIP_TMUX").is_some(),
            "tmux is not installed: install it (apt-get install tmux) or set MCPL_SKIP_TMUX=1 to skip these tests"
        );
        eprintln!("tmux is not installed and MCPL_SKIP_TMUX is set: nothing to drive");
    }
    found
}

/// An arcade serving WebSocket on a free port, `ann` let in by [`TOKEN`]; its URL. It runs
/// on its own thread's actix system until the test process ends.
fn arcade() -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        actix::System::new().block_on(async move {
            let arcade = Arcade::new(ArcadeConfig {
                bot: BotSettings {
                    budget: BotBudget::Playouts(48),
                    seed: Some(7),
                },
                ..Default::default()
            })
            .expect("the arcade builds");
            let opts = Arc::new(ServerOptions {
                tokens: HashMap::from([(TOKEN.to_owned(), "ann".to_owned())]),
                ws_ping_interval: None,
                ..Default::default()
            });
            let l = listen::ws(&arcade, "127.0.0.1:0".parse().unwrap(), opts)
                .await
                .expect("a port");
            tx.send(format!("ws://{}/mcp", l.local_addr())).unwrap();
            std::future::pending::<()>().await;
        });
    });
    rx.recv_timeout(ANSWER).expect("the arcade listens")
}

/// A tmux server of its own running `mcpl-host play` in one pane, its output read as it
/// comes. Dropping it ends the tmux server (and the binary with it).
struct Pane {
    /// The tmux server's socket, in `dir`.
    socket: String,
    out: mpsc::Receiver<Vec<u8>>,
    /// Everything printed so far, and how far the test has read.
    seen: String,
    read: usize,
    dir: PathBuf,
}

impl Pane {
    fn start(play_args: &[String]) -> Pane {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("mcpl-play-test-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("tmux").to_string_lossy().into_owned();
        let fifo = dir.join("out");
        assert!(
            Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // The pane waits for a first Enter, so the pipe is in place before the binary
        // prints anything; it says how the binary exited.
        // Its own state directory: the default one is the user's, shared by every run.
        let state = dir.join("state").to_string_lossy().into_owned();
        let mut command = vec![
            shell_quote(env!("CARGO_BIN_EXE_mcpl-host")),
            "play".into(),
            "--state-dir".into(),
            shell_quote(&state),
        ];
        command.extend(play_args.iter().map(|a| shell_quote(a)));
        let script = format!(
            "read _; {}; echo \"play exited with $?\"; read _",
            command.join(" ")
        );
        let tmux = |args: &[&str]| {
            let ok = Command::new("tmux")
                .args(["-S", &socket, "-f", "/dev/null"])
                .args(args)
                .status()
                .unwrap()
                .success();
            assert!(ok, "tmux {args:?}");
        };
        tmux(&[
            "new-session",
            "-d",
            "-s",
            "play",
            "-x",
            "160",
            "-y",
            "50",
            "sh",
            "-c",
            &script,
        ]);
        let (tx, out) = mpsc::channel();
        let reading = fifo.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::File::open(reading).unwrap();
            let mut buf = [0u8; 4096];
            while let Ok(n) = f.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    return;
                }
            }
        });
        let pipe = format!("cat > {}", shell_quote(&fifo.to_string_lossy()));
        tmux(&["pipe-pane", "-t", "play", "-o", &pipe]);
        let pane = Pane {
            socket,
            out,
            seen: String::new(),
            read: 0,
            dir,
        };
        pane.keys("");
        pane
    }

    /// Types `text` and Enter.
    fn keys(&self, text: &str) {
        let mut args = vec!["-S", &self.socket, "send-keys", "-t", "play"];
        if !text.is_empty() {
            args.extend(["-l", text]);
        }
        assert!(Command::new("tmux").args(&args).status().unwrap().success());
        let enter = ["-S", &self.socket, "send-keys", "-t", "play", "Enter"];
        assert!(Command::new("tmux").args(enter).status().unwrap().success());
    }

    /// Waits until the pane has printed one of `wanted` past what was read; returns what
    /// was printed up to and including it, and which one it was.
    fn expect(&mut self, wanted: &[&str]) -> (String, usize) {
        let deadline = Instant::now() + ANSWER;
        loop {
            let rest = &self.seen[self.read..];
            let found = wanted
                .iter()
                .enumerate()
                .filter_map(|(i, w)| rest.find(w).map(|at| (at + w.len(), i)))
                .min();
            if let Some((end, which)) = found {
                let text = rest[..end].to_owned();
                self.read += end;
                return (text, which);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.out.recv_timeout(left) {
                Ok(bytes) => self.seen.push_str(&String::from_utf8_lossy(&bytes)),
                Err(_) => panic!(
                    "none of {wanted:?} was printed; the pane shows:\n{}",
                    &self.seen[self.read..]
                ),
            }
        }
    }

    /// Types `line` and waits for `wanted`; what was printed up to it.
    fn run(&mut self, line: &str, wanted: &str) -> String {
        self.keys(line);
        self.expect(&[wanted]).0
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-S", &self.socket, "kill-server"])
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn a_wrong_token_is_told_at_the_prompt_and_by_the_command_that_needs_the_server() {
    if !tmux_found() {
        return;
    }
    let url = arcade();
    let mut pane = Pane::start(&[
        "--server".into(),
        format!("arcade={url}"),
        "--token".into(),
        "arcade=wrong".into(),
    ]);
    pane.expect(&["arcade: not connected: the server refused the token (HTTP 401)"]);
    pane.expect(&["[arcade: not connected] > "]);
    let said = pane.run("open go", "[arcade: not connected] > ");
    assert!(
        said.contains("error: arcade is not connected right now: the server refused the token"),
        "{said}"
    );
    pane.run("quit", "play exited with 0");
}

#[test]
fn a_go_game_is_played_to_the_end_with_the_commands_help_shows() {
    if !tmux_found() {
        return;
    }
    let url = arcade();
    let mut pane = Pane::start(&[
        "--server".into(),
        format!("arcade={url}"),
        "--token".into(),
        format!("arcade={TOKEN}"),
    ]);
    const PROMPT: &str = "[arcade: connected] > ";
    pane.expect(&["arcade: connected"]);
    pane.expect(&[PROMPT]);
    let help = pane.run("help", PROMPT);
    for command in ["open ", "board ", "status ", "act ", "go_pass", "quit "] {
        assert!(help.contains(command), "help shows {command:?}:\n{help}");
    }
    let opened = pane.run("open go size=9", PROMPT);
    assert!(opened.contains("You play Black"), "{opened}");
    // The tools it opened are named in the commands a person types, not in the model's
    // meta-tool syntax (issue #43 item 3).
    assert!(
        opened.contains("Call it with act arcade/go_play:go-1") && !opened.contains("toolsets--"),
        "{opened}"
    );
    let board = pane.run("board", PROMPT);
    assert!(
        board.contains("A B C D E F G H J") && board.contains("Your move."),
        "{board}"
    );
    let status = pane.run("status", PROMPT);
    assert!(
        status.contains("arcade: connected")
            && status.contains("arcade/go:go-1")
            && status.contains("arcade/lobby"),
        "{status}"
    );
    // An illegal point is refused with the arcade's reason, not the host's "not one of the
    // values allowed now" (issue #36, item 14), and without a dump of the legal ones.
    let wrong = pane.run("act go_play Z9", PROMPT);
    assert!(
        wrong.contains("invalid column") && !wrong.contains("allowed now"),
        "{wrong}"
    );
    let played = pane.run("act go_play E5", PROMPT);
    assert!(played.contains("bot (White)"), "{played}");
    // Pass until the game ends (the bot passes too once nothing is worth playing).
    let mut turns = 0;
    let last = loop {
        turns += 1;
        assert!(turns < 150, "the game does not end");
        pane.keys("act go_pass");
        let (text, which) = pane.expect(&["Game over:", "Your move."]);
        let (rest, _) = pane.expect(&[PROMPT]);
        if which == 0 {
            break format!("{text}{rest}");
        }
    };
    assert!(last.contains(" wins by "), "{last}");
    // And how it was counted (a resignation has no count; the bot does not resign).
    assert!(last.contains("Score: Black "), "{last}");
    let after = pane.run("status", PROMPT);
    assert!(
        after.contains("open: arcade/lobby") && !after.contains("go-1"),
        "{after}"
    );
    let board = pane.run("board", PROMPT);
    assert!(board.contains("no game is open"), "{board}");
    pane.run("quit", "play exited with 0");
}

/// Issue #40 item 3: the same commands against the arcade's modern era (`--era modern`,
/// MCP 2026-07-28, RFC-014's stateless profile: `ann` is a named principal, so the arcade
/// hints this host's requests): a Go game opens with its toolsets, is played, shows in
/// `status`, and is resigned — the tools named as on legacy, the meta-tools never.
#[test]
fn issue40_a_go_game_is_played_on_the_modern_era_with_toolsets() {
    if !tmux_found() {
        return;
    }
    let url = arcade();
    let mut pane = Pane::start(&[
        "--server".into(),
        format!("arcade={url}"),
        "--token".into(),
        format!("arcade={TOKEN}"),
        "--era".into(),
        "modern".into(),
    ]);
    const PROMPT: &str = "[arcade: connected] > ";
    pane.expect(&["arcade: connected"]);
    pane.expect(&[PROMPT]);
    let opened = pane.run("open go size=9", PROMPT);
    assert!(opened.contains("You play Black"), "{opened}");
    assert!(
        opened.contains("Call it with act arcade/go_play:go-1") && !opened.contains("toolsets--"),
        "{opened}"
    );
    // The arcade's "You started Go" event comes on the listen stream, on its own time:
    // before the open's answer or after it, with the prompt printed again. So the board
    // is waited for by what it shows, then the prompt.
    let board = pane.run("board", "Your move.");
    pane.expect(&[PROMPT]);
    assert!(board.contains("A B C D E F G H J"), "{board}");
    // Read from the status's own lines: the event may print between them and a prompt.
    pane.run("status", "  open: ");
    let open = pane.expect(&["\n"]).0;
    assert!(
        open.contains("arcade/go:go-1") && open.contains("arcade/lobby"),
        "open: {open}"
    );
    pane.expect(&[PROMPT]);
    let wrong = pane.run("act go_play Z9", PROMPT);
    assert!(
        wrong.contains("invalid column") && !wrong.contains("allowed now"),
        "{wrong}"
    );
    let played = pane.run("act go_play E5", PROMPT);
    assert!(played.contains("bot (White)"), "{played}");
    pane.run("act go_resign", "Game over:");
    pane.expect(&[PROMPT]);
    // The end may also come as an event on the stream, printed again on its own time
    // (before `status` prints or after): the status is read from its own `open:` line.
    pane.run("status", "  open: ");
    let open = pane.expect(&["\n"]).0;
    assert!(
        open.contains("arcade/lobby") && !open.contains("go-1"),
        "open: {open}"
    );
    pane.expect(&[PROMPT]);
    pane.run("quit", "play exited with 0");
}

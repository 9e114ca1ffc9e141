//! `mcpl-host play`: a person plays the agent's part. A thread runs the line editor
//! (history, editing) and hands each line to the async side, which runs it against the
//! host and hands back the text to print; notices, pushes and reminders are printed as
//! they arrive. At the prompt, one replaces the prompt line and the prompt is drawn again
//! after it (rustyline's own external printer is not used: with it, input typed faster
//! than it is read waits for the next key).
//!
//! The prompt names each server's connection (`[arcade: connected] > `); when one changes
//! a line says so, with the cause when it goes (`mcpl_host::cli::status`).

use anyhow::Context as _;
use mcpl_host::cli::play::{self, Command, HELP};
use mcpl_host::cli::status::{self, Links};
use mcpl_host::host::{HostHandle, Shown, ShownKind};
use mcpl_host::state::meta_tools::{ACT, CLOSE};
use mcpl_protocol::CallToolResult;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as sync_mpsc;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// A line typed, and where its output goes (`None`: the end).
type Typed = (String, sync_mpsc::Sender<Option<String>>);

/// The terminal as both sides share it: whether the editor waits at its prompt, the
/// prompt it drew (a line printed above it draws that one again), and the prompt the
/// next read draws.
#[derive(Default)]
struct Screen {
    at_prompt: AtomicBool,
    drawn: Mutex<String>,
    next: Mutex<String>,
}

impl Screen {
    fn set(cell: &Mutex<String>, text: String) {
        *cell.lock().unwrap_or_else(|e| e.into_inner()) = text;
    }

    fn get(cell: &Mutex<String>) -> String {
        cell.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Prints `text`. At the prompt the terminal is in raw mode: the prompt line is
    /// cleared, lines end in CR LF, and the prompt is drawn again (what was typed is
    /// redrawn by the editor at the next key).
    fn print(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = if self.at_prompt.load(Ordering::SeqCst) {
            let prompt = Self::get(&self.drawn);
            write!(out, "\r\x1b[2K{}\r\n{prompt}", text.replace('\n', "\r\n"))
        } else {
            writeln!(out, "{text}")
        };
        let _ = out.flush();
    }
}

pub async fn run(host: HostHandle) -> anyhow::Result<()> {
    let editor = DefaultEditor::new().context("starting the line editor")?;
    let screen = Arc::new(Screen::default());
    let mut events = host.subscribe();
    let printing = screen.clone();
    actix::spawn(async move {
        while let Some(s) = events.recv().await {
            printing.print(&shown(&s));
        }
    });
    crate::first_contact(&host).await?;
    println!("mcpl-host play — type help for the commands, quit to leave.");
    // Every server's connection as first contact left it, then each change as it comes.
    let mut watch = host.status_watch();
    let mut links = status::links(&watch.borrow_and_update());
    for line in status::changes(&Links::new(), &links) {
        println!("{line}");
    }
    Screen::set(&screen.next, status::prompt(&links));
    let watching = screen.clone();
    actix::spawn(async move {
        while watch.changed().await.is_ok() {
            let now = status::links(&watch.borrow_and_update());
            let lines = status::changes(&links, &now);
            if lines.is_empty() {
                continue;
            }
            Screen::set(&watching.next, status::prompt(&now));
            watching.print(&format!("── connection ──\n{}", lines.join("\n")));
            links = now;
        }
    });
    let (tx, mut typed) = mpsc::unbounded_channel::<Typed>();
    let repl = std::thread::spawn(move || read_lines(editor, tx, &screen));
    while let Some((line, reply)) = typed.recv().await {
        host.start_turn().await?;
        let out = run_line(&host, &line).await;
        let quit = out.is_none();
        // The editor thread waits for this; it only goes if the thread has.
        let _ = reply.send(out);
        if quit {
            break;
        }
    }
    host.stop().await;
    drop(typed);
    let _ = repl.join();
    Ok(())
}

/// The editor's thread: reads lines until the end, handing each over and printing what
/// comes back.
fn read_lines(mut editor: DefaultEditor, tx: mpsc::UnboundedSender<Typed>, screen: &Screen) {
    loop {
        let prompt = Screen::get(&screen.next);
        Screen::set(&screen.drawn, prompt.clone());
        screen.at_prompt.store(true, Ordering::SeqCst);
        let read = editor.readline(&prompt);
        screen.at_prompt.store(false, Ordering::SeqCst);
        match read {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                }
                let (reply, answer) = sync_mpsc::channel();
                if tx.send((line, reply)).is_err() {
                    return;
                }
                match answer.recv() {
                    Ok(Some(text)) if !text.is_empty() => println!("{text}"),
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => return,
                }
            }
            // Ctrl-C clears the line; Ctrl-D ends.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => return,
            Err(e) => {
                eprintln!("error: {e}");
                return;
            }
        }
    }
}

/// What a line prints; `None` to quit.
async fn run_line(host: &HostHandle, line: &str) -> Option<String> {
    let command = match play::parse(line) {
        Ok(c) => c,
        Err(e) => return Some(format!("error: {e}")),
    };
    let text = match command {
        Command::Empty => String::new(),
        Command::Quit => return None,
        Command::Help => HELP.to_owned(),
        Command::Tools => match host.tools().await {
            Ok(tools) => tools
                .iter()
                .map(|t| format!("{} — {}", t.name, t.description.as_deref().unwrap_or("")))
                .collect::<Vec<_>>()
                .join("\n"),
            Err(e) => format!("error: {e}"),
        },
        Command::Call { tool, args } => call(host, &tool, args).await,
        Command::Act(act) => {
            let t = &act.target;
            let def = host
                .definition(t.server.as_deref(), &t.name, t.instance.as_deref())
                .await
                .ok()
                .flatten();
            match play::fill_act(&act, def.as_ref()) {
                Ok(args) => call(host, ACT, args).await,
                Err(e) => format!("error: {e}"),
            }
        }
        Command::CloseOnly => match play::close_only(&open(host)) {
            Ok(args) => call(host, CLOSE, args).await,
            Err(say) => say,
        },
        Command::Board(target) => match play::board_of(&open(host), target.as_ref()) {
            Ok(game) => {
                let (server, toolset, instance) = &game;
                let has_board = host
                    .definition(
                        Some(server),
                        &play::board_tool(toolset),
                        instance.as_deref(),
                    )
                    .await
                    .ok()
                    .flatten()
                    .is_some();
                let (tool, args) = play::board_call(&game, has_board);
                call(host, tool, args).await
            }
            Err(say) => say,
        },
        Command::Status => status::status_text(&host.status()),
    };
    Some(text)
}

/// What is open on every server, as the host's status has it.
fn open(host: &HostHandle) -> Vec<play::OpenEntry> {
    host.status()
        .servers
        .iter()
        .flat_map(|(s, st)| {
            st.open
                .iter()
                .map(move |(t, i)| (s.clone(), t.clone(), i.clone()))
        })
        .collect()
}

async fn call(host: &HostHandle, tool: &str, args: serde_json::Value) -> String {
    match host.call(tool, args).await {
        Ok(r) => result(&r),
        Err(e) => format!("error: {e}"),
    }
}

/// A result's text, in the terminal's words; an error says so first.
fn result(r: &CallToolResult) -> String {
    let text = play::in_terminal_words(&r.joined_text());
    if r.is_error {
        format!("error: {text}")
    } else {
        text
    }
}

/// A notice, push or reminder, with a line saying what it is.
fn shown(s: &Shown) -> String {
    let what = match s.kind {
        ShownKind::Push => "event",
        ShownKind::Notice => "notice",
        ShownKind::Reminder => "reminder",
        _ => "message",
    };
    let from = s
        .server
        .as_deref()
        .map(|n| format!(" · {n}"))
        .unwrap_or_default();
    format!("── {what}{from} ──\n{}", play::in_terminal_words(&s.text))
}

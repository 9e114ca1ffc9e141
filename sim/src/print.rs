//! [`Printer`]: the demo's view of what each agent does and is shown, as it happens,
//! every line prefixed by the time and the agent's name.
//!
//! Go boards are long: unless `full`, only the first board of each game and the final one
//! are printed in full; the others shrink to one line (the agent still read them all).

use crate::agent::Observer;
use crate::agent::beliefs::about;
use mcpl_host::host::{Shown, ShownKind};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Prints to stdout. See the module docs.
pub struct Printer {
    start: Instant,
    full: bool,
    boards: Mutex<BTreeSet<(String, String)>>,
    /// Only these agents (none: all).
    only: Option<BTreeSet<String>>,
}

impl Printer {
    /// A printer; `full` prints every board.
    pub fn new(full: bool) -> Self {
        Printer {
            start: Instant::now(),
            full,
            boards: Mutex::new(BTreeSet::new()),
            only: None,
        }
    }

    /// A printer of these agents only, every board in full (for tracing a load run).
    pub fn only(agents: BTreeSet<String>) -> Self {
        Printer {
            only: Some(agents),
            ..Self::new(true)
        }
    }

    fn wanted(&self, agent: &str) -> bool {
        self.only.as_ref().is_none_or(|o| o.contains(agent))
    }

    fn stamp(&self) -> String {
        format!("{:>7.2}s", self.start.elapsed().as_secs_f64())
    }
}

/// True for a line of a Go board as the arcade draws it (` 9 . . X …  9`, `   A B C …`).
fn board_line(line: &str) -> bool {
    let t = line.trim_start_matches("│ ").trim();
    let words: Vec<&str> = t.split_whitespace().collect();
    let header = words.len() >= 9
        && words
            .iter()
            .all(|w| w.len() == 1 && w.chars().all(|c| c.is_ascii_uppercase()));
    let row =
        words.len() >= 9 && words[0].parse::<u32>().is_ok() && words[0] == words[words.len() - 1];
    header || row
}

/// The text without its Go board (issue #43 item 3: no `[board]` placeholder line; the
/// board is printed in full the first time and at the end, and `--web` shows it live).
pub fn shrink_board(text: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for line in text.lines() {
        if board_line(line) {
            continue;
        }
        // The blank line that framed the board is not doubled once the board is gone.
        let blank = line.trim_start_matches('│').trim().is_empty();
        let after_blank = out
            .last()
            .is_some_and(|l| l.trim_start_matches('│').trim().is_empty());
        if !(blank && after_blank) {
            out.push(line);
        }
    }
    out.join("\n")
}

impl Observer for Printer {
    fn calling(&self, agent: &str, tool: &str, args: &Value) {
        if !self.wanted(agent) {
            return;
        }
        let line = format!("{} {agent:<6} ▶ {tool} {args}\n", self.stamp());
        let _ = std::io::stdout().lock().write_all(line.as_bytes());
    }

    fn shown(&self, agent: &str, shown: &Shown) {
        if !self.wanted(agent) {
            return;
        }
        let kind = match shown.kind {
            ShownKind::ToolResult => "result",
            ShownKind::Push => "event",
            ShownKind::Notice => "notice",
            ShownKind::Reminder => "reminder",
            ShownKind::User => "user",
            ShownKind::Assistant => "assistant",
        };
        let mut text = shown.text.clone();
        if !self.full && text.lines().any(board_line) && !text.contains("Game over:") {
            let game = about(&text).map(|m| m.to_string()).unwrap_or_default();
            let first = self
                .boards
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert((agent.to_owned(), game));
            if !first {
                text = shrink_board(&text);
            }
        }
        let mut out = format!("{} {agent:<6} ◀ {kind}\n", self.stamp());
        for line in text.lines() {
            out.push_str(&format!("         {agent:<6} │ {line}\n"));
        }
        let _ = std::io::stdout().lock().write_all(out.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue43_03_a_go_board_is_left_out_with_no_placeholder_line() {
        let text = "You played E5.\n\n   A B C D E F G H J\n 9 . . . . . . . . .  9\n 1 . . . . . . . . .  1\n   A B C D E F G H J\n\nCaptures: 0";
        assert_eq!(shrink_board(text), "You played E5.\n\nCaptures: 0");
        let quoted = "│ x\n│  9 . . . . . . . . .  9\n│ y";
        assert_eq!(shrink_board(quoted), "│ x\n│ y");
        assert_eq!(shrink_board(" 3  X | . | O"), " 3  X | . | O");
    }
}

/// Keeps what each agent did and was shown, in memory, to write out the agents a run
/// found at fault (`SIM_DUMP=PATH`): cheaper than printing, so it disturbs timing less.
#[derive(Default)]
pub struct Recorder {
    start: Option<Instant>,
    lines: Mutex<std::collections::BTreeMap<String, Vec<String>>>,
}

impl Recorder {
    /// An empty recorder.
    pub fn new() -> Self {
        Recorder {
            start: Some(Instant::now()),
            lines: Mutex::default(),
        }
    }

    fn push(&self, agent: &str, line: String) {
        let t = self.start.map(|s| s.elapsed().as_secs_f64()).unwrap_or(0.0);
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(agent.to_owned())
            .or_default()
            .push(format!("{t:>8.3}s {line}"));
    }

    /// Everything recorded for `agent`.
    pub fn log(&self, agent: &str) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(agent)
            .cloned()
            .unwrap_or_default()
    }
}

impl Observer for Recorder {
    fn calling(&self, agent: &str, tool: &str, args: &Value) {
        self.push(agent, format!("▶ {tool} {args}"));
    }

    fn shown(&self, agent: &str, shown: &Shown) {
        self.push(
            agent,
            format!("◀ {:?} #{}\n{}", shown.kind, shown.seq, shown.text),
        );
    }
}

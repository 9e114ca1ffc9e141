//! [`TurnBudget`]: how much the agent is shown outside tool results between two of its
//! actions (issue #37 item 5: 3,000 pushes of 1 KB put 3.2 MB before the agent at once).
//!
//! The same idea as the surface host's block of news (`mcpl_surface::news`): a bound in
//! bytes, and a line saying how much was left out and where to look instead. Here messages
//! are shown as they come (subscribers get them at once), so it is the *latest* ones that
//! are left out once the bound is reached, not the oldest.
//!
//! **\[project\]** (§6 "RFC §8.3" does not bound what one turn shows): a turn, for this
//! bound, runs from one action of the agent's — the start of its turn
//! ([`super::HostCore::start_turn`]) or a call — to the next, so a driver that only calls
//! tools gets a fresh budget with each call (the surface host counts each call a turn
//! too). Pushes, notices and reminders count; tool results are the agent's own asks and do
//! not (each server string in them is bounded already). Once the budget is spent:
//!
//! - the message that does not fit is cut to the lines that fit (when more than its first
//!   line does), saying how many lines were left out, or left out whole;
//! - one short notice says the rest of the turn's events and notices are left out;
//! - everything after is left out, counted;
//! - at the next action a notice says how many events and notices were left out and points
//!   at `toolsets--look`, which states what is open and usable now; open toolsets whose
//!   announcements were left out are restated by the reminder (§6 "RFC §8.3 Reminders").

use crate::state::{AgentMessage, MessageKind};

/// What one turn shows by default: 32 KiB of events, notices and reminders.
pub const DEFAULT_MAX_TURN_BYTES: usize = 32 * 1024;

/// Kept back from the budget for the notice that the rest is left out.
const RESERVE: usize = 512;

/// The smallest budget: room for a message and the notices about what was left out.
pub const MIN_TURN_BYTES: usize = 4 * RESERVE;

/// Kept back, in a message cut short, for its last line.
const TRAILER: usize = 96;

/// What one turn has shown, and what it left out.
#[derive(Debug, Clone, Default)]
pub(crate) struct TurnBudget {
    max: usize,
    used: usize,
    /// The budget is spent: everything else this turn is left out.
    full: bool,
    events: usize,
    notices: usize,
    cut: usize,
}

impl TurnBudget {
    /// A budget of `max` bytes per turn (at least [`MIN_TURN_BYTES`]).
    pub(crate) fn new(max: usize) -> Self {
        TurnBudget {
            max: max.max(MIN_TURN_BYTES),
            ..Default::default()
        }
    }

    /// A message to show: what of it is shown, with the notice that the rest of the turn
    /// is left out when this is where the budget ran out (nothing: left out, counted).
    pub(crate) fn admit(&mut self, m: AgentMessage) -> Vec<AgentMessage> {
        if !counted(m.kind) {
            return vec![m];
        }
        let cap = self.max - RESERVE;
        if !self.full && self.used + m.text.len() <= cap {
            self.used += m.text.len();
            return vec![m];
        }
        let mut out = Vec::new();
        if self.full {
            self.left_out(m.kind);
            return out;
        }
        self.full = true;
        match cut(&m.text, cap - self.used) {
            Some(text) => {
                self.cut += 1;
                self.used += text.len();
                out.push(AgentMessage { text, ..m });
            }
            None => self.left_out(m.kind),
        }
        let note = AgentMessage::plain(
            MessageKind::Notice,
            format!(
                "Notice from the host: more events and notices came than it shows between two of your actions ({} bytes); the rest are left out, and counted at your next turn or call. toolsets--look shows what is open and usable now.",
                self.max
            ),
        );
        self.used += note.text.len();
        out.push(note);
        out
    }

    /// The agent acts (its turn starts, or it calls a tool): a fresh budget, and the notice
    /// of what the last one left out, if anything (counted in the new one).
    pub(crate) fn renew(&mut self) -> Option<AgentMessage> {
        let (events, notices, cut) = (self.events, self.notices, self.cut);
        *self = TurnBudget::new(self.max);
        if events + notices + cut == 0 {
            return None;
        }
        let mut parts = Vec::new();
        if events > 0 {
            parts.push(count(events, "event", "events"));
        }
        if notices > 0 {
            parts.push(count(notices, "notice", "notices"));
        }
        let mut text = String::from("Notice from the host: since your previous turn or call, ");
        if !parts.is_empty() {
            let verb = if events + notices == 1 { "was" } else { "were" };
            text.push_str(&format!("{} {verb} left out", parts.join(" and ")));
            if cut > 0 {
                text.push_str(" and ");
            }
        }
        if cut > 0 {
            text.push_str(&format!(
                "{} cut short",
                count(cut, "message was", "messages were")
            ));
        }
        text.push_str(&format!(
            " (the host shows at most {} bytes of them between two of your actions). toolsets--look shows what is open and usable now.",
            self.max
        ));
        let m = AgentMessage::plain(MessageKind::Notice, text);
        self.used = m.text.len();
        Some(m)
    }

    fn left_out(&mut self, kind: MessageKind) {
        match kind {
            MessageKind::Push => self.events += 1,
            _ => self.notices += 1,
        }
    }
}

/// True for the messages the budget counts: those shown outside tool results.
fn counted(kind: MessageKind) -> bool {
    matches!(
        kind,
        MessageKind::Push | MessageKind::Notice | MessageKind::Reminder
    )
}

fn count(n: usize, one: &str, many: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

/// `text` cut to the whole lines that fit in `room` bytes with a last line saying how many
/// were left out; `None` when no more than the first line would be left.
fn cut(text: &str, room: usize) -> Option<String> {
    let room = room.checked_sub(TRAILER)?;
    let lines: Vec<&str> = text.split('\n').collect();
    let mut kept = 0;
    let mut len = 0;
    for l in &lines {
        let add = l.len() + usize::from(kept > 0);
        if len + add > room {
            break;
        }
        len += add;
        kept += 1;
    }
    if kept < 2 {
        return None;
    }
    let mut out = lines[..kept].join("\n");
    out.push_str(&format!(
        "\n- …and {} more lines left out here (over what the host shows between two of your actions).",
        lines.len() - kept
    ));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(text: &str) -> AgentMessage {
        AgentMessage::plain(MessageKind::Push, text)
    }

    #[test]
    fn a_turn_shows_at_most_its_budget_then_says_what_it_left_out() {
        let mut b = TurnBudget::new(MIN_TURN_BYTES);
        let one = "x".repeat(100);
        let mut shown = 0;
        let mut messages = 0;
        for _ in 0..100 {
            for m in b.admit(push(&one)) {
                shown += m.text.len();
                messages += 1;
            }
        }
        assert!(shown <= MIN_TURN_BYTES, "{shown}");
        assert_eq!(
            messages,
            (MIN_TURN_BYTES - RESERVE) / 100 + 1,
            "and the note"
        );
        let renewed = b.renew().expect("something was left out");
        let left = 100 - (MIN_TURN_BYTES - RESERVE) / 100;
        assert!(
            renewed.text.contains(&format!(
                "since your previous turn or call, {left} events were left out"
            )),
            "{}",
            renewed.text
        );
        assert!(b.renew().is_none(), "told once");
        let r = AgentMessage::plain(MessageKind::ToolResult, "y".repeat(10 * MIN_TURN_BYTES));
        assert_eq!(b.admit(r.clone()), vec![r], "tool results are not counted");
    }

    #[test]
    fn a_message_too_large_is_cut_by_lines() {
        let mut b = TurnBudget::new(MIN_TURN_BYTES);
        let text: Vec<String> = (0..1000).map(|i| format!("- line {i}")).collect();
        let out = b.admit(push(&text.join("\n")));
        assert_eq!(out.len(), 2, "the message cut, then the note");
        assert!(out[0].text.starts_with("- line 0\n- line 1\n"));
        assert!(out[0].text.contains("more lines left out here"));
        assert!(out.iter().map(|m| m.text.len()).sum::<usize>() <= MIN_TURN_BYTES);
        assert!(
            b.admit(push("small")).is_empty(),
            "the rest of the turn is left out"
        );
        let n = b.renew().unwrap().text;
        assert!(
            n.contains("1 event was left out and 1 message was cut short"),
            "{n}"
        );
    }
}

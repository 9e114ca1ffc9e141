//! What happened between a client's calls, kept for its next result (§6 "RFC §8.3": a change
//! reaches the agent once, in words): pushes, notices and reminders the host showed, in
//! order, bounded. A plain MCP client has no other place that reaches the model for sure —
//! `notifications/message` goes to the client's log view, which a model may never read.
//!
//! Pure: no I/O, no clock.

use mcpl_host::host::{Shown, ShownKind};
use mcpl_protocol::mcp::{LoggingLevel, LoggingMessageParams};
use serde_json::json;
use std::collections::VecDeque;

/// The most messages kept between two calls; older ones are counted and left out.
pub const MAX_ITEMS: usize = 32;

/// The most characters kept between two calls (each message is bounded by the host's
/// presenter already).
pub const MAX_CHARS: usize = 16 * 1024;

/// The heading of the block added to a result.
pub const HEADING: &str = "Since your previous call:";

/// The logger named in `notifications/message`.
pub const LOGGER: &str = "mcpl-surface";

/// Messages shown since the last result, waiting for the next.
#[derive(Debug, Default)]
pub struct News {
    /// Each message's kind, words, and whether it only restates what is open and usable.
    items: VecDeque<(ShownKind, String, bool)>,
    chars: usize,
    dropped: usize,
}

impl News {
    /// Nothing waiting.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps a message for the next result; past the bounds the oldest go.
    pub fn push(&mut self, shown: &Shown) {
        if !matters(shown.kind) {
            return;
        }
        self.chars += shown.text.len();
        self.items
            .push_back((shown.kind, shown.text.clone(), shown.restates));
        while self.items.len() > MAX_ITEMS || (self.chars > MAX_CHARS && self.items.len() > 1) {
            if let Some((_, t, _)) = self.items.pop_front() {
                self.chars -= t.len();
                self.dropped += 1;
            }
        }
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.dropped == 0
    }

    /// The block for the next result, if anything waits; what waited is then gone.
    ///
    /// `looked`: the result is a look at everything, which states what is open and usable
    /// now; messages that only restate that are left out, so the model reads it once — the
    /// first look of a session listed the lobby, then the host's notice that opened it
    /// (issue #36 item 14).
    pub fn take(&mut self, looked: bool) -> Option<String> {
        if looked {
            self.items.retain(|(_, _, restates)| !restates);
            self.chars = self.items.iter().map(|(_, t, _)| t.len()).sum();
        }
        if self.is_empty() {
            self.chars = 0;
            return None;
        }
        let mut out = String::from(HEADING);
        if self.dropped > 0 {
            out.push_str(&format!(
                "\n- ({} earlier messages left out; toolsets--look shows what is open now)",
                self.dropped
            ));
        }
        for (kind, text, _) in self.items.drain(..) {
            out.push_str("\n- ");
            out.push_str(label(kind));
            out.push_str(": ");
            out.push_str(&text.replace('\n', "\n  "));
        }
        self.chars = 0;
        self.dropped = 0;
        Some(out)
    }
}

/// True for what is shown outside results: the rest is the client's own calls.
fn matters(kind: ShownKind) -> bool {
    matches!(
        kind,
        ShownKind::Push | ShownKind::Notice | ShownKind::Reminder
    )
}

fn label(kind: ShownKind) -> &'static str {
    match kind {
        ShownKind::Push => "Event",
        ShownKind::Reminder => "Reminder",
        _ => "Notice",
    }
}

/// The `notifications/message` params for a message shown outside results (MCP "Logging"),
/// or `None` for one that is not.
pub fn log_message(shown: &Shown) -> Option<LoggingMessageParams> {
    if !matters(shown.kind) {
        return None;
    }
    Some(LoggingMessageParams {
        level: LoggingLevel::Notice,
        logger: Some(LOGGER.to_owned()),
        data: json!({
            "kind": shown.kind,
            "server": shown.server,
            "text": shown.text,
        }),
        meta: None,
    })
}

/// `notifications/message` params for messages shown before the client's
/// `notifications/initialized`, held to be sent once it comes, in order, under the same
/// bounds as [`News`] (the oldest go first).
///
/// **\[project\]** (MCP "Lifecycle" allows logging before `initialized` but does not say a
/// client is ready for it; this server logs only once the client says it is): the backing
/// servers' first messages — the lobby's opening — are often shown while the handshake is
/// still under way, and were dropped; held until the client is ready, every message shown
/// is logged, these a little late.
#[derive(Debug, Default)]
pub struct Held {
    items: VecDeque<LoggingMessageParams>,
    chars: usize,
}

impl Held {
    /// Holds one message; past the bounds the oldest go.
    pub fn push(&mut self, params: LoggingMessageParams) {
        self.chars += text_len(&params);
        self.items.push_back(params);
        while self.items.len() > MAX_ITEMS || (self.chars > MAX_CHARS && self.items.len() > 1) {
            if let Some(old) = self.items.pop_front() {
                self.chars -= text_len(&old);
            }
        }
    }

    /// Every message held, oldest first; none is held after.
    pub fn release(&mut self) -> impl Iterator<Item = LoggingMessageParams> + '_ {
        self.chars = 0;
        self.items.drain(..)
    }
}

/// The size that counts against [`MAX_CHARS`]: the text shown.
fn text_len(params: &LoggingMessageParams) -> usize {
    params.data["text"].as_str().map_or(0, str::len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(kind: ShownKind, text: &str) -> Shown {
        Shown::told(0, kind, "arcade", text)
    }

    #[test]
    fn keeps_what_happened_once_in_order() {
        let mut n = News::new();
        assert_eq!(n.take(false), None);
        n.push(&shown(ShownKind::Push, "bob challenged you"));
        n.push(&shown(ShownKind::ToolResult, "not news"));
        n.push(&shown(ShownKind::Notice, "[arcade] lost\nsecond line"));
        let block = n.take(false).unwrap();
        assert_eq!(
            block,
            "Since your previous call:\n- Event: bob challenged you\n- Notice: [arcade] lost\n  second line"
        );
        assert_eq!(n.take(false), None, "told once");
    }

    #[test]
    fn a_look_at_everything_leaves_out_what_only_restates_it() {
        let mut n = News::new();
        let opened = Shown {
            restates: true,
            ..shown(ShownKind::Notice, "Opened [arcade/lobby]")
        };
        n.push(&opened);
        n.push(&shown(ShownKind::Push, "bob challenged you"));
        n.push(&shown(ShownKind::Notice, "[arcade/go:g1] ended"));
        assert_eq!(
            n.take(true).unwrap(),
            "Since your previous call:\n- Event: bob challenged you\n- Notice: [arcade/go:g1] ended"
        );
        n.push(&opened);
        assert_eq!(n.take(true), None, "nothing else waited");
        assert!(n.is_empty());
        n.push(&opened);
        assert!(
            n.take(false).unwrap().contains("Opened [arcade/lobby]"),
            "another call's result does not state it"
        );
    }

    #[test]
    fn is_bounded_and_says_what_it_left_out() {
        let mut n = News::new();
        for i in 0..(MAX_ITEMS + 5) {
            n.push(&shown(ShownKind::Push, &format!("event {i}")));
        }
        let block = n.take(false).unwrap();
        assert!(block.contains("(5 earlier messages left out"), "{block}");
        assert!(!block.contains("event 4\n"), "{block}");
        assert!(
            block.ends_with(&format!("event {}", MAX_ITEMS + 4)),
            "{block}"
        );
        let big = "x".repeat(MAX_CHARS / 2 + 1);
        for _ in 0..3 {
            n.push(&shown(ShownKind::Notice, &big));
        }
        let block = n.take(false).unwrap();
        assert!(block.len() < MAX_CHARS + 200, "{}", block.len());
    }

    #[test]
    fn logs_only_what_is_shown_outside_results() {
        assert!(log_message(&shown(ShownKind::ToolResult, "r")).is_none());
        let m = log_message(&shown(ShownKind::Push, "p")).unwrap();
        assert_eq!(m.data["kind"], "push");
        assert_eq!(m.data["server"], "arcade");
        assert_eq!(m.data["text"], "p");
    }

    #[test]
    fn holds_messages_in_order_and_bounded_until_released() {
        let mut h = Held::default();
        assert_eq!(h.release().count(), 0);
        for i in 0..(MAX_ITEMS + 3) {
            h.push(log_message(&shown(ShownKind::Notice, &format!("n{i}"))).unwrap());
        }
        let texts: Vec<String> = h.release().map(|p| p.data["text"].to_string()).collect();
        assert_eq!(texts.len(), MAX_ITEMS);
        assert_eq!(texts[0], "\"n3\"", "the oldest went first");
        assert_eq!(h.release().count(), 0, "released once");
        let big = "x".repeat(MAX_CHARS / 2 + 1);
        for _ in 0..3 {
            h.push(log_message(&shown(ShownKind::Push, &big)).unwrap());
        }
        assert_eq!(h.release().count(), 1, "bounded in bytes too");
    }
}

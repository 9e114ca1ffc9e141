//! One connection's `rev` counter (§5.2, §3).
//!
//! - Every message that carries hint changes — a result's `_meta["mcpl/hints"]`, a push's
//!   `hints`, a `tools/hints` notification — takes the next rev: 1, 2, 3, … consecutive
//!   per connection, whichever way it travels (§5.2, vector 4). A message without changes
//!   takes none.
//! - A `toolsets/list` result always takes one, even when its statement is empty (§4.3,
//!   vectors 27, 38): the actor calls [`Sequencer::stamp`], not
//!   [`Sequencer::stamp_if_any`], for it.
//! - `tools/list` takes none and reports [`Sequencer::last`] as `_meta["mcpl/rev"]` (§3,
//!   vector 27): 0 before any rev was taken.
//!
//! **Allocation and writing are one step** (§5.2): the actor stamps a message in the same
//! handler step that enqueues it on the transport's writer, with no other hint-carrying
//! write possible between. The SessionActor has a single write path for that reason; never
//! stamp a message and hand it to another task to write later. A push carrying hints is
//! never retried with them: its rev is spent when written (§5.2).
//!
//! A connection whose host did not advertise `toolHints` never stamps anything: nothing is
//! sent to it with hints (§2, §8, vector 8).

use super::draft::HintDraft;
use mcpl_protocol::hints::HintChanges;

/// A connection's rev counter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sequencer {
    last: u64,
}

impl Sequencer {
    /// A counter for a new connection: the first rev taken is 1 (§4.6: each connection has
    /// its own counter from 1).
    pub fn new() -> Self {
        Self::default()
    }

    /// Numbers `draft` with the next rev. Use it for a message that carries changes, and for
    /// every `toolsets/list` result even when its statement is empty (§4.3).
    pub fn stamp(&mut self, draft: HintDraft) -> HintChanges {
        // 2^64 messages on one connection cannot happen; wrapping would break consecutiveness.
        self.last = self
            .last
            .checked_add(1)
            .expect("a connection never writes 2^64 messages");
        draft.into_changes(self.last)
    }

    /// Numbers `draft` with the next rev when it has entries; an empty draft takes none and
    /// the message goes without hints (§5.2: a message without changes takes no rev).
    pub fn stamp_if_any(&mut self, draft: HintDraft) -> Option<HintChanges> {
        (!draft.is_empty()).then(|| self.stamp(draft))
    }

    /// The last rev taken, 0 before any: `tools/list`'s `_meta["mcpl/rev"]` (§3).
    pub fn last(&self) -> u64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::hints::ToolHint;

    fn one_change() -> HintDraft {
        HintDraft {
            tools: vec![ToolHint {
                name: "play".into(),
                visible: Some(true),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn revs_start_at_one_and_are_consecutive() {
        let mut s = Sequencer::new();
        assert_eq!(s.last(), 0, "tools/list before any rev names 0");
        let revs: Vec<u64> = (0..5).map(|_| s.stamp(one_change()).rev).collect();
        assert_eq!(revs, [1, 2, 3, 4, 5]);
        assert_eq!(s.last(), 5);
    }

    #[test]
    fn a_message_without_changes_takes_no_rev() {
        let mut s = Sequencer::new();
        assert_eq!(s.stamp_if_any(HintDraft::new()), None);
        assert_eq!(s.last(), 0);
        let h = s.stamp_if_any(one_change()).expect("a change takes a rev");
        assert_eq!(h.rev, 1);
        assert_eq!(h.entries.tools[0].name, "play");
        assert_eq!(s.stamp_if_any(HintDraft::new()), None);
        assert_eq!(s.last(), 1);
    }

    #[test]
    fn an_empty_statement_still_takes_the_next_rev() {
        // §4.3, vector 38: the toolsets/list result always takes a rev.
        let mut s = Sequencer::new();
        s.stamp(one_change());
        let statement = s.stamp(HintDraft::new());
        assert_eq!(statement.rev, 2);
        assert!(statement.is_empty());
        assert_eq!(s.last(), 2);
    }

    #[test]
    fn connections_count_separately() {
        // §4.6, vector 14: the same draft takes each connection's own next rev.
        let (mut a, mut b) = (Sequencer::new(), Sequencer::new());
        a.stamp(one_change());
        a.stamp(one_change());
        assert_eq!(a.stamp(one_change()).rev, 3);
        assert_eq!(b.stamp(one_change()).rev, 1);
    }
}

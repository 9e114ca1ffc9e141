//! Changes held for a call's result (§5.3: a call reports its own consequences, in its
//! result), without ever breaking the order of revs (§5.2).
//!
//! Two things hold changes for a call that has not been answered yet: a tool handler that
//! opened or closed a toolset for its caller (`ToolContext::open_toolset`), and a deferred
//! instance call whose logic asked for it (`InstanceContext::hold_for`). Their changes are
//! stated by the principal *now*, in the principal's order, but are to be written *later*,
//! with the result.
//!
//! **The rule.** Revs are taken as messages are written (`Sequencer`), so held changes
//! take theirs only when they are written — but they must not be written after changes
//! the principal stated later. So at most one call's changes are held at a time, and they
//! are always the latest the session was given:
//!
//! - changes for the call already holding are appended to what it holds;
//! - changes for another call make the held ones go first, as `tools/hints`;
//! - before any other hint-carrying write (a result, a push, `tools/hints`, a
//!   `toolsets/list` statement), the held changes go first, as `tools/hints`;
//! - the call's result carries what is still held for it; a call cancelled (vector 29),
//!   or answered with a JSON-RPC error, sends what it held as `tools/hints`.
//!
//! Writes without hint changes (a push without hints, a `tools/list` result, which takes
//! no rev) do not disturb what is held.

use crate::core::HintDraft;
use mcpl_protocol::jsonrpc::Id;

/// What one session holds. See the module docs.
#[derive(Debug, Default)]
pub(crate) struct Holding {
    held: Option<(Id, HintDraft)>,
}

impl Holding {
    /// Holds `draft` for `call`, after what that call holds already. Returns what must be
    /// written before anything else: what another call held, or what this call held when
    /// `draft` re-opens an instance it closed (they never share a message, `draft.rs`).
    #[must_use]
    pub(crate) fn hold(&mut self, call: Id, draft: HintDraft) -> Option<HintDraft> {
        match &mut self.held {
            Some((holder, held)) if *holder == call && !held.reopens(&draft) => {
                held.append(draft);
                None
            }
            _ => self.held.replace((call, draft)).map(|(_, d)| d),
        }
    }

    /// What `call` holds, for its result.
    pub(crate) fn take_for(&mut self, call: &Id) -> Option<HintDraft> {
        match &self.held {
            Some((holder, _)) if holder == call => self.held.take().map(|(_, d)| d),
            _ => None,
        }
    }

    /// Whatever is held, to write before another hint-carrying message.
    pub(crate) fn take(&mut self) -> Option<HintDraft> {
        self.held.take().map(|(_, d)| d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::hints::ToolHint;

    fn draft(tool: &str, visible: bool) -> HintDraft {
        HintDraft {
            tools: vec![ToolHint {
                name: tool.into(),
                visible: Some(visible),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn id(n: i64) -> Id {
        Id::Number(n)
    }

    #[test]
    fn a_call_accumulates_its_changes_in_order() {
        let mut h = Holding::default();
        assert_eq!(h.hold(id(1), draft("a", false)), None);
        assert_eq!(h.hold(id(1), draft("a", true)), None);
        assert_eq!(h.take_for(&id(2)), None);
        assert_eq!(
            h.take_for(&id(1)),
            Some(draft("a", false).and(draft("a", true)))
        );
        assert_eq!(h.take(), None);
    }

    #[test]
    fn boundary_01_a_reopen_of_a_held_close_pushes_the_close_out_first() {
        use mcpl_protocol::ToolsetState;
        use mcpl_protocol::hints::ToolsetChange;
        let set = |state| HintDraft {
            toolsets: vec![ToolsetChange {
                toolset: "game".into(),
                instance: Some("g2".into()),
                state,
                title: None,
                reason: None,
                ended: None,
            }],
            ..Default::default()
        };
        let mut h = Holding::default();
        assert_eq!(h.hold(id(1), set(ToolsetState::Closed)), None);
        assert_eq!(
            h.hold(id(1), set(ToolsetState::Open)),
            Some(set(ToolsetState::Closed))
        );
        assert_eq!(h.take_for(&id(1)), Some(set(ToolsetState::Open)));
    }

    #[test]
    fn another_calls_changes_push_the_held_ones_out_first() {
        let mut h = Holding::default();
        assert_eq!(h.hold(id(1), draft("a", true)), None);
        assert_eq!(h.hold(id(2), draft("b", true)), Some(draft("a", true)));
        // The first call's result now carries nothing: its changes went before.
        assert_eq!(h.take_for(&id(1)), None);
        assert_eq!(h.take(), Some(draft("b", true)));
        assert_eq!(h.take(), None);
    }
}

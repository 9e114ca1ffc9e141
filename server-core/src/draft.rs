//! Hint changes not yet numbered (§5.1).
//!
//! The cores return a [`HintDraft`]: what changed, as **values** (§5.1: `visible: true`, a
//! whole definition — never a difference), the same for every connection of a principal.
//! Only a connection's [`Sequencer`](super::Sequencer) turns a draft into a wire
//! [`HintChanges`] by giving it that connection's next `rev`, so an unnumbered change can
//! never be written by mistake.
//!
//! Drafts concatenate with [`HintDraft::append`]: the actor merges what one request caused
//! (an open, then the toolset's first `set_visible`s, then a retitle) into one message.
//! Entries keep their order. One rule for every merge: **a close of an instance and a
//! re-open of the same instance never share a message** ([`HintDraft::reopens`]). A message
//! states values with no order between its `toolsets` and its `tools` entries, so a host
//! cannot tell which of the instance's tool entries belong before the close and which after
//! the open; as two messages on consecutive revs, the order is the revs'. (This project's
//! host applies a message's `toolsets` entries first, then its `tools` entries, so that it
//! reads such a message from another server as the last state of each instance; see
//! `mcpl-host`'s `apply.rs`.)

use mcpl_protocol::hints::{HintChanges, HintEntries, Suggestion, ToolHint, ToolsetChange};

/// Hint changes without a `rev`: what to send to every connection of a principal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HintDraft {
    /// Per-tool changes, in order.
    pub tools: Vec<ToolHint>,
    /// Toolset state changes, in order.
    pub toolsets: Vec<ToolsetChange>,
    /// Suggestions (§5.3: shown to the agent, never acted on by the host).
    pub suggest: Vec<Suggestion>,
}

impl HintDraft {
    /// An empty draft.
    pub fn new() -> Self {
        Self::default()
    }

    /// True when there is nothing to send. A message without changes takes no rev (§5.2).
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.toolsets.is_empty() && self.suggest.is_empty()
    }

    /// Appends another draft's entries after this one's.
    pub fn append(&mut self, other: HintDraft) {
        self.tools.extend(other.tools);
        self.toolsets.extend(other.toolsets);
        self.suggest.extend(other.suggest);
    }

    /// True when `later` opens an instance this draft closes: the two must be written as
    /// separate messages, this one first (module docs; issue: a handler's "restart").
    pub fn reopens(&self, later: &HintDraft) -> bool {
        use mcpl_protocol::ToolsetState;
        later
            .toolsets
            .iter()
            .filter(|c| c.state == ToolsetState::Open)
            .any(|open| {
                self.toolsets.iter().any(|c| {
                    c.state == ToolsetState::Closed
                        && c.toolset == open.toolset
                        && c.instance == open.instance
                })
            })
    }

    /// This draft followed by `other`.
    pub fn and(mut self, other: HintDraft) -> Self {
        self.append(other);
        self
    }

    /// Adds a suggestion (an invitation to a game, a hint to close what is idle).
    pub fn suggest(&mut self, suggestion: Suggestion) {
        self.suggest.push(suggestion);
    }

    /// Folds entries about the same thing into one, keeping the latest value of each member:
    /// tool entries by `(name, instance)` (at the first one's place), and consecutive
    /// `toolsets` entries of the same instance and state (an open with its retitle).
    ///
    /// Entries are values (§5.1), so the folded draft leaves a host exactly where the whole
    /// one would. **Only for a draft that does not close and re-open one instance**: there
    /// the order between the `toolsets` and `tools` entries matters (module docs), and
    /// folding would move a re-opened instance's visibility before its close. The actors
    /// fold what one step of one instance did, which never re-opens it.
    pub fn compact(&mut self) {
        let mut tools: Vec<ToolHint> = Vec::with_capacity(self.tools.len());
        for t in self.tools.drain(..) {
            match tools
                .iter_mut()
                .find(|k| k.name == t.name && k.instance == t.instance)
            {
                Some(kept) => {
                    kept.presence = t.presence.or(kept.presence);
                    kept.visible = t.visible.or(kept.visible);
                    kept.definition = t.definition.or(kept.definition.take());
                }
                None => tools.push(t),
            }
        }
        self.tools = tools;
        let mut toolsets: Vec<ToolsetChange> = Vec::with_capacity(self.toolsets.len());
        for c in self.toolsets.drain(..) {
            match toolsets.last_mut() {
                Some(last)
                    if last.toolset == c.toolset
                        && last.instance == c.instance
                        && last.state == c.state =>
                {
                    last.title = c.title.or(last.title.take());
                    last.reason = c.reason.or(last.reason.take());
                    last.ended = c.ended.or(last.ended.take());
                }
                _ => toolsets.push(c),
            }
        }
        self.toolsets = toolsets;
    }

    /// The wire form with `rev`. Only the sequencer calls this: a rev is taken and the
    /// message written in one step (§5.2).
    pub(super) fn into_changes(self, rev: u64) -> HintChanges {
        HintChanges {
            rev,
            entries: HintEntries {
                tools: self.tools,
                toolsets: self.toolsets,
                suggest: self.suggest,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_01_a_reopen_of_what_was_closed_is_detected() {
        use mcpl_protocol::ToolsetState;
        let change = |instance: &str, state| ToolsetChange {
            toolset: "game".into(),
            instance: Some(instance.into()),
            state,
            title: None,
            reason: None,
            ended: None,
        };
        let closed = HintDraft {
            toolsets: vec![change("g2", ToolsetState::Closed)],
            ..Default::default()
        };
        let reopened = HintDraft {
            toolsets: vec![change("g2", ToolsetState::Open)],
            ..Default::default()
        };
        let other = HintDraft {
            toolsets: vec![change("g3", ToolsetState::Open)],
            ..Default::default()
        };
        assert!(closed.reopens(&reopened));
        assert!(
            !reopened.reopens(&closed),
            "an open then a close may share a message"
        );
        assert!(!closed.reopens(&other));
    }
    use mcpl_protocol::hints::{SuggestAction, ToolsetState};

    fn hint(name: &str) -> ToolHint {
        ToolHint {
            name: name.into(),
            visible: Some(true),
            ..Default::default()
        }
    }

    #[test]
    fn append_keeps_order_and_emptiness_counts_every_member() {
        let mut a = HintDraft::new();
        assert!(a.is_empty());
        a.tools.push(hint("a"));
        let mut b = HintDraft::new();
        b.tools.push(hint("b"));
        b.toolsets.push(ToolsetChange {
            toolset: "go".into(),
            instance: Some("g1".into()),
            state: ToolsetState::Open,
            title: None,
            reason: None,
            ended: None,
        });
        let merged = a.and(b);
        assert_eq!(
            merged
                .tools
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(merged.toolsets.len(), 1);

        let mut s = HintDraft::new();
        s.suggest(Suggestion {
            toolset: "go".into(),
            instance: None,
            action: SuggestAction::Open,
            reason: "bob challenges you".into(),
            options: None,
        });
        assert!(!s.is_empty());
        assert_eq!(s.into_changes(4).rev, 4);
    }

    fn open(title: &str) -> ToolsetChange {
        ToolsetChange {
            toolset: "go".into(),
            instance: Some("g1".into()),
            state: ToolsetState::Open,
            title: Some(title.into()),
            reason: None,
            ended: None,
        }
    }

    #[test]
    fn compact_folds_entries_about_one_thing_keeping_the_latest_values() {
        let mut d = HintDraft::new();
        d.toolsets.push(open("Go"));
        d.toolsets.push(open("Go vs bot"));
        d.tools.push(ToolHint {
            instance: Some("g1".into()),
            ..hint("play")
        });
        d.tools.push(hint("other"));
        d.tools.push(ToolHint {
            name: "play".into(),
            instance: Some("g1".into()),
            visible: Some(false),
            definition: Some(Default::default()),
            ..Default::default()
        });
        d.tools.push(ToolHint {
            instance: Some("g2".into()),
            ..hint("play")
        });
        d.compact();
        assert_eq!(d.toolsets, [open("Go vs bot")]);
        assert_eq!(d.tools.len(), 3);
        assert_eq!(
            (d.tools[0].visible, d.tools[0].definition.is_some()),
            (Some(false), true)
        );
        assert_eq!(d.tools[1].name, "other");
        assert_eq!(d.tools[2].instance.as_deref(), Some("g2"));
    }

    #[test]
    fn compact_keeps_an_open_and_a_close_apart() {
        let mut d = HintDraft::new();
        d.toolsets.push(open("Go"));
        d.toolsets.push(ToolsetChange {
            state: ToolsetState::Closed,
            title: None,
            reason: Some("over".into()),
            ..open("")
        });
        d.compact();
        assert_eq!(d.toolsets.len(), 2);
    }
}

//! The one write path (§5.2): every message to the host goes through here, in handler
//! order, into the transport's bounded queue through the connection's [`RevWriter`]; a
//! hint-carrying message takes its rev and is queued in one step, after what a call held.

use super::SessionActor;
use super::rev_writer::{EnqueueError, RevWriter};
use crate::core::{Carry, HintDraft};
use mcpl_protocol::hints::HintChanges;
use mcpl_protocol::jsonrpc::{Message, Notification};
use mcpl_protocol::method::ToolHints;
use mcpl_transport::Outbound;

impl SessionActor {
    /// The single place anything is written (module docs): runs `enqueue` on the writer
    /// and gives up writing when it could not.
    pub(super) fn enqueue<T>(
        &mut self,
        enqueue: impl FnOnce(&RevWriter<Outbound>) -> Result<T, EnqueueError>,
    ) {
        let Some(writer) = &self.writer else {
            tracing::debug!(session = %self.id, "write after the session stopped writing; dropped");
            return;
        };
        match enqueue(writer) {
            Ok(_) => {}
            Err(EnqueueError::Full) => {
                tracing::warn!(session = %self.id, "the host stopped reading; closing the link");
                self.writer = None;
                if let Some(me) = &self.self_addr {
                    me.do_send(super::handle::Stop);
                }
            }
            Err(_) => {
                tracing::debug!(session = %self.id, "the transport closed; writes dropped");
                self.writer = None;
            }
        }
    }

    /// Queues a message without hint changes for the host (it takes no rev).
    pub(super) fn write(&mut self, message: Message) {
        self.enqueue(|w| w.enqueue(message));
    }

    /// §5.2: numbers `draft` with the next rev — even when it is empty, as a statement
    /// must be (§4.3) — and writes the message `build` makes with it, in one step. Changes
    /// held for a call go first (`core/carrier.rs`): they were stated earlier.
    pub(super) fn write_stamped(
        &mut self,
        draft: HintDraft,
        build: impl FnOnce(HintChanges) -> Message,
    ) {
        self.flush_held();
        self.enqueue(|w| w.enqueue_stamped(draft, build));
    }

    /// §5.2: numbers `draft` with this connection's next rev (none when it is empty) and
    /// writes the message `build` makes with it, in one step. Only for a host shown hints:
    /// callers pass `None` for any other (§2, §8, vector 8). Changes held for a call go
    /// first (`core/carrier.rs`): they were stated earlier.
    pub(super) fn write_with_hints(
        &mut self,
        draft: Option<HintDraft>,
        build: impl FnOnce(Option<HintChanges>) -> Message,
    ) {
        if draft.as_ref().is_some_and(|d| !d.is_empty()) {
            self.flush_held();
        }
        self.write_hinted(draft, build);
    }

    /// [`Self::write_with_hints`] without writing what is held first: for the steps
    /// [`Carriers`] planned, which flushed where they had to.
    pub(super) fn write_hinted(
        &mut self,
        draft: Option<HintDraft>,
        build: impl FnOnce(Option<HintChanges>) -> Message,
    ) {
        let draft = draft.filter(|d| !d.is_empty()).unwrap_or_default();
        self.enqueue(|w| w.enqueue_if_any(draft, build));
    }

    /// Writes `held` as `tools/hints` with the next rev.
    pub(super) fn write_held(&mut self, held: HintDraft) {
        self.enqueue(|w| {
            w.enqueue_stamped(held, |h| Notification::new::<ToolHints>(&h.into()).into())
        });
    }

    /// Writes what is held for a call as `tools/hints`, before another hint-carrying
    /// message.
    pub(super) fn flush_held(&mut self) {
        if let Some(Carry::Hints(held)) = self.core.flush() {
            self.write_held(held);
        }
    }
}

//! The one write path (§5.2): the core's output drained in the order it was queued; every
//! message goes into the transport's bounded queue through the connection's [`RevWriter`],
//! a hint-carrying one taking its rev and being queued in one step.

use super::rev_writer::{EnqueueError, RevWriter};
use super::{ActorIo, SessionActor};
use crate::core::session::{ModernReply, Output, Transmit};
use crate::core::{HintDraft, Statement};
use actix::prelude::*;
use mcpl_protocol::hints::HintChanges;
use mcpl_protocol::jsonrpc::{Message, Notification, Response};
use mcpl_protocol::meta::Meta;
use mcpl_protocol::method::ToolHints;
use mcpl_protocol::toolsets::ToolsetsListResult;
use mcpl_transport::Outbound;

impl SessionActor {
    /// Drains what the core asks for, in order: after every input the actor feeds it.
    pub(super) fn drive(&mut self, ctx: &mut Context<Self>) {
        while let Some(out) = self.core.poll() {
            match out {
                Output::Transmit(t) => self.transmit(t, ctx),
                Output::Event(e) => self.act(e, ctx),
            }
        }
    }

    fn transmit(&mut self, t: Transmit<ActorIo>, ctx: &mut Context<Self>) {
        if let Some(reply) = self.core.modern_reply(&t) {
            return self.write_modern(t, reply);
        }
        match t {
            Transmit::Message(m) => self.write(m),
            Transmit::Hints(draft) => self.enqueue(|w| {
                w.enqueue_stamped(draft, |h| Notification::new::<ToolHints>(&h.into()).into())
            }),
            Transmit::Answer {
                request,
                answer,
                hints,
            } => self.write_answer(request, answer, hints),
            Transmit::CallResult {
                request,
                mut result,
                hints,
            } => self.write_hinted(hints, |h| {
                with_meta(&mut result.meta, h);
                Response::ok_typed(request, &result).into()
            }),
            Transmit::Push {
                event,
                feature_set,
                hints,
            } => self.push_event(event, feature_set, hints, ctx),
            Transmit::StreamEvent {
                listen,
                event,
                feature_set,
                hints,
            } => self.stream_event(listen, event, feature_set, hints),
            // §4.3: the full statement always takes the next rev, even when empty.
            Transmit::Statement { request, statement } => {
                let Statement { open, ended, hints } = statement;
                self.enqueue(|w| {
                    w.enqueue_stamped(hints, |hints| {
                        let result = ToolsetsListResult {
                            open,
                            ended,
                            meta: Meta::with_hints(hints),
                        };
                        Response::ok_typed(request, &result).into()
                    })
                });
            }
            // §3: the last rev is read in the step that enqueues the list.
            Transmit::ToolsList(page) => {
                self.enqueue(|w| w.enqueue_at_last(|last| page.response(last)))
            }
        }
    }

    /// The answer to a modern request (MCP 2026-07-28), made modern by `reply`: it takes
    /// no rev; a hinted one carries the principal's stamped hints instead
    /// (`server-core/src/session/modern.rs`).
    fn write_modern(&mut self, t: Transmit<ActorIo>, reply: ModernReply) {
        let message = match t {
            Transmit::Message(m) => Some(m),
            Transmit::Answer {
                request, answer, ..
            } => Self::plain_answer(request, answer),
            Transmit::CallResult {
                request, result, ..
            } => Some(Response::ok_typed(request, &result).into()),
            Transmit::ToolsList(mut page) => {
                // A hinted modern host is listed hints (§3); its `mcpl/version` is the
                // reply's (`server-core/src/session/modern.rs`).
                if reply.hinted() {
                    page.view = page.catalog.view_for(true);
                    page.by_name = true;
                }
                Some(page.response(0))
            }
            // `toolsets/list` to a hinted modern host: its hints are the reply's, a full
            // statement with stamps (profile §3.4).
            Transmit::Statement { request, statement } => {
                let result = ToolsetsListResult {
                    open: statement.open,
                    ended: statement.ended,
                    meta: Meta::default(),
                };
                Some(Response::ok_typed(request, &result).into())
            }
            other => {
                tracing::error!(session = %self.id, transmit = ?other, "not an answer to a modern request; dropped");
                None
            }
        };
        if let Some(message) = message {
            self.write(reply.apply(message));
        }
    }

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
                // The host is told why where its transport can say it (a WebSocket's 1008).
                writer.with_sink(|link| link.give_up(mcpl_transport::GiveUp::Unread));
                self.writer = None;
                if let Some(me) = &self.handle {
                    me.close();
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

    /// §5.2: numbers `draft` with this connection's next rev (none when it is empty) and
    /// writes the message `build` makes with it, in one step. The core queued what was
    /// held for calls before it, where it had to.
    pub(super) fn write_hinted(
        &mut self,
        draft: Option<HintDraft>,
        build: impl FnOnce(Option<HintChanges>) -> Message,
    ) {
        let draft = draft.filter(|d| !d.is_empty()).unwrap_or_default();
        self.enqueue(|w| w.enqueue_if_any(draft, build));
    }
}

/// Puts `hints` in a result's `_meta["mcpl/hints"]`.
pub(super) fn with_meta(meta: &mut Option<Meta>, hints: Option<HintChanges>) {
    if let Some(h) = hints {
        meta.get_or_insert_with(Meta::default).hints = Some(h);
    }
}

//! What the principal sends a session, written with the right carrier (§5.2, §5.3).
//!
//! A [`Deliver`] holds one draft of changes to the principal's state and what explains it.
//! This session chooses how the draft travels:
//!
//! 1. **In a result**, when the delivery answers one of this session's requests: the call
//!    reports its own consequences, and no push follows for them (vector 2). Events of the
//!    same delivery are not pushed here: the result is this connection's account of them.
//!    If that request was cancelled, no result is written (vector 29):
//!    - the call's own consequences — the step that ran for it — go as `tools/hints`
//!      (§5.2 "Cancelled calls"), and what it held went at the cancel (`hold.rs`);
//!    - a **deferred** call answered by a step something else caused (another's move, a
//!      timer) accounts for nothing any more: the delivery is that something's
//!      consequences, so it goes as it would have without the call — its events pushed
//!      with the draft as hints (§5.3), or `tools/hints` where pushing is not allowed.
//!      **\[project\]** reading of §5.2/§5.3: the agent that gave up waiting still hears
//!      what happened ("bob took 1…").
//! 2. **On a push**, when it has events and the session may push: the first event carries
//!    the draft as its `hints`, beside `toolset` and `instance` (vector 3). Such a push is
//!    never retried and never has `coalesce` (§5.2); it is tagged `surface:activity` or
//!    `surface:turn` (§10).
//! 3. **Standalone** `tools/hints` otherwise: nothing explains it, or pushing is not
//!    allowed — no `pushEvents` grant, or the handshake not complete (vector 31).
//!
//! A host not shown hints never gets a draft (vector 8): results go without
//! `_meta["mcpl/hints"]`, pushes without `hints`, and no `tools/hints` is written.
//!
//! **Held for a result** (`hold.rs`). A delivery that answers a tool handler's open or
//! close, or one whose changes a deferred call of this session holds (`hold`), keeps its
//! draft for that call's result instead of writing it now; an answer later carries what its
//! call held, before the answer's own changes. Events of a held delivery are still pushed,
//! without hints.

use super::Session;
use crate::actors::principal::{Answer, AnswerBody, CatalogSwapped, Deliver};
use crate::author::Event;
use crate::core::{HintDraft, InstanceKey};
use crate::push;
use actix::prelude::*;
use mcpl_protocol::hints::HintChanges;
use mcpl_protocol::jsonrpc::{Id, Message, Notification, Response};
use mcpl_protocol::mcp::Empty;
use mcpl_protocol::mcpl::{PushEventParams, PushPayload};
use mcpl_protocol::meta::Meta;
use mcpl_protocol::method::{ToolHints, ToolListChanged};
use std::collections::BTreeSet;

impl Handler<Deliver> for Session {
    type Result = ();

    fn handle(&mut self, d: Deliver, ctx: &mut Context<Self>) {
        let mut draft = Some(d.draft).filter(|_| self.hinted());
        // True once an answer stands for the delivery on this connection (see
        // `write_answer`): its events are then not pushed here.
        let mut answered = false;
        for answer in d.answers {
            answered |= self.write_answer(answer, &mut draft, ctx);
        }
        if let Some(call) = d.hold
            && self.forwarded.get(&call).is_some_and(|f| !f.cancelled)
            && let Some(changes) = draft.take().filter(|c| !c.is_empty())
        {
            self.hold(call, changes);
        }
        if !answered {
            for event in d.events {
                self.push_event(event, d.about.as_ref(), &mut draft, ctx);
            }
        }
        self.write_standalone(draft);
    }
}

impl Handler<CatalogSwapped> for Session {
    type Result = ();

    /// A manifest change (§4.1): the new manifest's domains, then what it changed for the
    /// principal (ended instances, vector 33), then `tools/list_changed` when the list this
    /// host is shown changed (a withdrawn `toolHints` turns hints off, vector 34).
    fn handle(&mut self, m: CatalogSwapped, _: &mut Context<Self>) {
        // What this host is shown, visibility aside (that travels as hints, never as a
        // list change): declarations, presence, toolsets, compat tools.
        let shown = |s: &Self| s.catalog.list_tools(s.view(), &BTreeSet::new(), 0).tools;
        let before = shown(self);
        self.catalog = m.catalog;
        self.on_manifest_replaced();
        if !self.hinted() {
            // Vector 34: a host no longer shown hints gets none, held ones included.
            self.holding.take();
        }
        let draft = Some(m.draft).filter(|_| self.hinted());
        self.write_standalone(draft);
        if before != shown(self) && self.lifecycle.negotiated().is_some() {
            self.write(Notification::new::<ToolListChanged>(&Empty::default()).into());
        }
    }
}

impl Session {
    /// Writes the answer to a request, carrying `draft` if it is still unsent; true when
    /// the answer stands for the delivery's events on this connection: it was written, or
    /// it was a cancelled call's own step, or nobody waits for it. Not so for a handler to
    /// run (not an answer yet), a handler's open or close whose changes were not held, or
    /// a cancelled deferred call (see the module docs).
    fn write_answer(
        &mut self,
        Answer {
            request,
            body,
            deferred,
        }: Answer,
        draft: &mut Option<HintDraft>,
        ctx: &mut Context<Self>,
    ) -> bool {
        // §5.2 "Cancelled calls" and §5.3, a [project] reading: a cancelled call's own
        // changes go as `tools/hints` and nothing is pushed for them; but when the call
        // was deferred and something else answered it, the delivery is that something's
        // consequences — pushed with the explaining event, as without the call.
        let unwritten = |u: Unwritten| match u {
            Unwritten::NobodyWaits => true,
            Unwritten::Cancelled => !deferred,
        };
        match body {
            AnswerBody::Handler { token, answer } => {
                return self.handler_answered(token, answer, draft);
            }
            AnswerBody::RunHandler {
                tool,
                arguments,
                instance,
                meta,
            } => {
                let changes = match self.settle_answer(&request, draft) {
                    Ok(changes) => changes,
                    Err(u) => return unwritten(u),
                };
                *draft = changes;
                self.run_handler(request, tool, arguments, instance, meta, ctx);
                return false;
            }
            AnswerBody::Call(Ok(mut result)) => {
                let changes = match self.settle_answer(&request, draft) {
                    Ok(changes) => changes,
                    Err(u) => return unwritten(u),
                };
                self.write_with_hints(changes, |h| {
                    with_meta(&mut result.meta, h);
                    Response::ok_typed(request, &result).into()
                });
            }
            AnswerBody::Open(Ok(mut result)) => {
                let changes = match self.settle_answer(&request, draft) {
                    Ok(changes) => changes,
                    Err(u) => return unwritten(u),
                };
                self.write_with_hints(changes, |h| {
                    with_meta(&mut result.meta, h);
                    Response::ok_typed(request, &result).into()
                });
            }
            AnswerBody::Close(Ok(mut result)) => {
                let changes = match self.settle_answer(&request, draft) {
                    Ok(changes) => changes,
                    Err(u) => return unwritten(u),
                };
                self.write_with_hints(changes, |h| {
                    with_meta(&mut result.meta, h);
                    Response::ok_typed(request, &result).into()
                });
            }
            AnswerBody::Call(Err(e)) | AnswerBody::Open(Err(e)) | AnswerBody::Close(Err(e)) => {
                let changes = match self.settle_answer(&request, draft) {
                    Ok(changes) => changes,
                    Err(u) => return unwritten(u),
                };
                *draft = changes;
                self.write(Response::err(Some(request), e).into());
            }
        }
        true
    }

    /// Settles a forwarded request whose answer came: the changes its result is to carry
    /// — what the call held first (it was stated earlier), then `draft` — or why no result
    /// is written (its changes then stay in `draft`: vector 29).
    fn settle_answer(
        &mut self,
        request: &Id,
        draft: &mut Option<HintDraft>,
    ) -> Result<Option<HintDraft>, Unwritten> {
        let Some(forwarded) = self.settle(request) else {
            tracing::warn!(session = %self.id, %request, "an answer nobody waits for; dropped");
            return Err(Unwritten::NobodyWaits);
        };
        if forwarded.cancelled {
            return Err(Unwritten::Cancelled);
        }
        Ok(match (self.take_held(request), draft.take()) {
            // A close and a re-open never share a message: the held close goes first.
            (Some(held), Some(now)) if held.reopens(&now) => {
                self.write_held(held);
                Some(now)
            }
            (Some(held), Some(now)) => Some(held.and(now)),
            (held, now) => held.or(now),
        })
    }

    /// Pushes an event, with `draft` as its hints when unsent; an event this session may not
    /// push is left out (its changes then go as `tools/hints`).
    fn push_event(
        &mut self,
        event: Event,
        about: Option<&InstanceKey>,
        draft: &mut Option<HintDraft>,
        ctx: &mut Context<Self>,
    ) {
        let feature_set = match self.lifecycle.push_grant() {
            Ok(grant) => push::feature_set_for(&self.current_view(), grant, None),
            Err(e) => Err(e),
        };
        let feature_set = match feature_set {
            Ok(f) => f,
            Err(e) => {
                tracing::debug!(session = %self.id, error = %e, "may not push; the event is left out");
                return;
            }
        };
        // SPEC §16.1: a producer never emits a bare tag; the logic's are left out.
        let tags = mcpl_protocol::mcpl::valid_tags(&event.tags);
        if tags.len() != event.tags.len() {
            tracing::warn!(session = %self.id, tags = ?event.tags, "an event's tags that are not namespace:value (or repeated) are left out");
        }
        let params = PushEventParams {
            feature_set,
            event_id: self.server.next_event_id(),
            timestamp: push::rfc3339(self.server.now()),
            origin: None,
            tags,
            payload: PushPayload {
                content: event.content,
            },
            // §5.2: a push carrying hints never has `coalesce`.
            coalesce: None,
            hints: None,
            toolset: about.map(|k| k.toolset.clone()),
            instance: about.and_then(|k| k.instance.clone()),
            meta: None,
        };
        let changes = draft.take();
        // §5.2: never retried — its rev is spent when written. The host's answer is logged.
        let answer = self.write_push(params, changes, ctx);
        let session = self.id;
        ctx.spawn(actix::fut::wrap_future(async move {
            match answer.await {
                Ok(r) if r.accepted => {}
                Ok(r) => tracing::debug!(%session, reason = ?r.reason, "the host refused an event"),
                Err(e) => tracing::debug!(%session, error = %e, "an event got no answer"),
            }
        }));
    }
}

/// Why an answer that came gets no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unwritten {
    /// No request of this session waits for it.
    NobodyWaits,
    /// The host cancelled the request (MCP `notifications/cancelled`).
    Cancelled,
}

/// Puts `hints` in a result's `_meta["mcpl/hints"]`.
fn with_meta(meta: &mut Option<Meta>, hints: Option<HintChanges>) {
    if let Some(h) = hints {
        meta.get_or_insert_with(Meta::default).hints = Some(h);
    }
}

impl Session {
    /// `tools/hints` (§5.2: standalone changes), when there are any.
    pub(super) fn write_standalone(&mut self, draft: Option<HintDraft>) {
        if let Some(d) = draft.filter(|d| !d.is_empty()) {
            self.write_with_hints(Some(d), |h| {
                let hints = h.unwrap_or_default();
                Message::from(Notification::new::<ToolHints>(&hints.into()))
            });
        }
    }
}

//! What the principal sends a session, carried as `core::Carriers` decides (§5.2, §5.3; the
//! rules are in `core/carrier.rs`). The session settles each answer — what it knows of the
//! request, a handler's open or close handed to the handler — asks the core where the
//! delivery's parts go, and takes the steps it returns in order: write `tools/hints`, write
//! an answer with the changes it carries, run a handler, push an event.

use super::SessionActor;
use crate::actors::principal::{Answer, AnswerBody, CatalogSwapped, Deliver};
use crate::author::Event;
use crate::core::carrier::{AnswerKind, Conditions, Fate};
use crate::core::session::Incoming;
use crate::core::{Carry, InstanceKey};
use crate::push;
use actix::prelude::*;
use mcpl_protocol::hints::HintChanges;
use mcpl_protocol::jsonrpc::{Id, Notification, Response};
use mcpl_protocol::mcp::Empty;
use mcpl_protocol::mcpl::{PushEventParams, PushPayload};
use mcpl_protocol::meta::Meta;
use mcpl_protocol::method::ToolListChanged;
use std::collections::BTreeSet;

impl Handler<Deliver> for SessionActor {
    type Result = ();

    fn handle(&mut self, d: Deliver, ctx: &mut Context<Self>) {
        let Deliver {
            about,
            draft,
            answers,
            events,
            hold,
        } = d;
        // Settle every answer first: whether its request is still awaited (it is then no
        // longer), or, for a handler's open or close, hand the handler its outcome.
        let mut bodies = Vec::with_capacity(answers.len());
        let mut incoming = Vec::with_capacity(answers.len());
        for Answer {
            request,
            body,
            deferred,
        } in answers
        {
            let (kind, body) = match body {
                AnswerBody::Handler { token, answer } => {
                    let (call, running) = self.handler_answered(token, answer).unzip();
                    let running = running.unwrap_or(false);
                    (AnswerKind::Handler { call, running }, None)
                }
                body => {
                    let kind = match &body {
                        AnswerBody::RunHandler { .. } => AnswerKind::RunHandler,
                        AnswerBody::Call(Ok(_))
                        | AnswerBody::Open(Ok(_))
                        | AnswerBody::Close(Ok(_)) => AnswerKind::Result,
                        _ => AnswerKind::Error,
                    };
                    (kind, Some(body))
                }
            };
            incoming.push(Incoming {
                request: request.clone(),
                kind,
                deferred,
            });
            bodies.push(body.map(|b| (request, b)));
        }
        // Only a delivery with events needs to know where it may push (the manifest view
        // this costs is not built for every call's answer).
        let feature_set = if events.is_empty() {
            Err(crate::push::PushError::NotGranted)
        } else {
            match self.lifecycle.push_grant() {
                Ok(grant) => push::feature_set_for(&self.current_view(), grant, None),
                Err(e) => Err(e),
            }
        };
        if let Err(e) = &feature_set
            && !events.is_empty()
        {
            tracing::debug!(session = %self.id, error = %e, "may not push; the events are left out");
        }
        let conditions = Conditions {
            hinted: self.hinted(),
            may_push: feature_set.is_ok(),
        };
        let delivered = self
            .core
            .deliver(draft, incoming, events.len(), hold, conditions);
        for (fate, body) in delivered.fates.iter().zip(&bodies) {
            if let (Fate::NobodyWaits, Some((request, _))) = (fate, body) {
                tracing::warn!(session = %self.id, %request, "an answer nobody waits for; dropped");
            }
        }
        let steps = delivered.steps;
        let mut events: Vec<Option<Event>> = events.into_iter().map(Some).collect();
        for step in steps {
            match step {
                Carry::Hints(d) => self.write_held(d),
                Carry::Answer { n, hints } => {
                    if let Some((request, body)) = bodies.get_mut(n).and_then(Option::take) {
                        self.write_answer(request, body, hints);
                    }
                }
                Carry::Run { n } => {
                    if let Some((
                        request,
                        AnswerBody::RunHandler {
                            tool,
                            arguments,
                            instance,
                            meta,
                        },
                    )) = bodies.get_mut(n).and_then(Option::take)
                    {
                        self.run_handler(request, tool, arguments, instance, meta, ctx);
                    }
                }
                Carry::Push { n, hints } => {
                    if let (Some(event), Ok(feature_set)) =
                        (events.get_mut(n).and_then(Option::take), &feature_set)
                    {
                        let feature_set = feature_set.clone();
                        self.push_event(event, about.as_ref(), feature_set, hints, ctx);
                    }
                }
            }
        }
    }
}

impl Handler<CatalogSwapped> for SessionActor {
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
            self.core.clear_held();
        }
        let draft = Some(m.draft).filter(|_| self.hinted());
        self.write_standalone(draft);
        if before != shown(self) && self.lifecycle.negotiated().is_some() {
            self.write(Notification::new::<ToolListChanged>(&Empty::default()).into());
        }
    }
}

impl SessionActor {
    /// Writes an answer; a result carries `hints` in its `_meta`.
    fn write_answer(
        &mut self,
        request: Id,
        body: AnswerBody,
        hints: Option<crate::core::HintDraft>,
    ) {
        match body {
            AnswerBody::Call(Ok(mut result)) => self.write_hinted(hints, |h| {
                with_meta(&mut result.meta, h);
                Response::ok_typed(request, &result).into()
            }),
            AnswerBody::Open(Ok(mut result)) => self.write_hinted(hints, |h| {
                with_meta(&mut result.meta, h);
                Response::ok_typed(request, &result).into()
            }),
            AnswerBody::Close(Ok(mut result)) => self.write_hinted(hints, |h| {
                with_meta(&mut result.meta, h);
                Response::ok_typed(request, &result).into()
            }),
            AnswerBody::Call(Err(e)) | AnswerBody::Open(Err(e)) | AnswerBody::Close(Err(e)) => {
                self.write(Response::err(Some(request), e).into())
            }
            AnswerBody::RunHandler { .. } | AnswerBody::Handler { .. } => {
                tracing::error!(session = %self.id, %request, "not an answer to write; dropped");
            }
        }
    }

    /// Pushes an event, with `hints` as its hints (§5.2: a push carrying hints is never
    /// retried and never has `coalesce`).
    fn push_event(
        &mut self,
        event: Event,
        about: Option<&InstanceKey>,
        feature_set: String,
        hints: Option<crate::core::HintDraft>,
        ctx: &mut Context<Self>,
    ) {
        // SPEC §16.1: a producer never emits a bare tag; the logic's are left out.
        let tags = mcpl_protocol::mcpl::valid_tags(&event.tags);
        if tags.len() != event.tags.len() {
            tracing::warn!(session = %self.id, tags = ?event.tags, "an event's tags that are not namespace:value (or repeated) are left out");
        }
        let params = PushEventParams {
            feature_set,
            event_id: self.shared.next_event_id(),
            timestamp: push::rfc3339(self.shared.now()),
            origin: None,
            tags,
            payload: PushPayload {
                content: event.content,
            },
            coalesce: None,
            hints: None,
            toolset: about.map(|k| k.toolset.clone()),
            instance: about.and_then(|k| k.instance.clone()),
            meta: None,
        };
        // §5.2: never retried — its rev is spent when written. The host's answer is logged.
        let answer = self.write_push(params, hints, ctx);
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

/// Puts `hints` in a result's `_meta["mcpl/hints"]`.
fn with_meta(meta: &mut Option<Meta>, hints: Option<HintChanges>) {
    if let Some(h) = hints {
        meta.get_or_insert_with(Meta::default).hints = Some(h);
    }
}

impl SessionActor {
    /// `tools/hints` (§5.2: standalone changes), when there are any.
    pub(super) fn write_standalone(&mut self, draft: Option<crate::core::HintDraft>) {
        let steps = self.core.standalone(draft);
        self.take_steps(steps);
    }

    /// Takes steps that only write `tools/hints` (a cancel's, standalone changes').
    pub(super) fn take_steps(&mut self, steps: Vec<Carry>) {
        for step in steps {
            if let Carry::Hints(d) = step {
                self.write_held(d);
            }
        }
    }
}

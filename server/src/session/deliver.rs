//! What the principal sends a session, fed to the core, which carries it as §5.2/§5.3 say
//! (`server-core/src/session.rs`, `server-core/src/carrier.rs`). The actor first hands a tool handler the outcome
//! of its own open or close; it writes the answers and pushes the events the core asks for
//! (`write.rs` drains it).

use super::write::with_meta;
use super::{SessionActor, ToPush};
use crate::actors::principal::{Answer, AnswerBody, CatalogSwapped, Deliver, ToSession};
use crate::core::carrier::AnswerKind;
use crate::core::session::{Answered, Delivery};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{Id, Response};
use mcpl_protocol::mcpl::{PushEventParams, PushPayload};
use mcpl_protocol::time::rfc3339_millis;

impl Handler<ToSession> for SessionActor {
    type Result = ();

    fn handle(&mut self, ToSession(d): ToSession, ctx: &mut Context<Self>) {
        let Deliver {
            about,
            draft,
            answers,
            events,
            hold,
        } = d;
        // A handler's open or close is settled here first: the handler gets its outcome.
        let answers = answers
            .into_iter()
            .map(
                |Answer {
                     request,
                     body,
                     deferred,
                 }| {
                    let direct = match &body {
                        AnswerBody::RunHandler {
                            tool, direct: true, ..
                        } => Some(tool.clone()),
                        _ => None,
                    };
                    let (kind, answer) = match body {
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
                    Answered {
                        request,
                        kind,
                        deferred,
                        answer,
                        direct,
                    }
                },
            )
            .collect();
        let events = events
            .into_iter()
            .map(|event| ToPush {
                event,
                about: about.clone(),
            })
            .collect();
        self.refresh_manifest();
        self.core.deliver(Delivery {
            draft,
            answers,
            events,
            hold,
        });
        self.drive(ctx);
    }
}

impl Handler<CatalogSwapped> for SessionActor {
    type Result = ();

    /// A manifest change (§4.1): what to tell this host is the core's.
    fn handle(&mut self, m: CatalogSwapped, ctx: &mut Context<Self>) {
        self.refresh_manifest();
        self.core.catalog_swapped(m.catalog, m.draft);
        self.drive(ctx);
    }
}

impl SessionActor {
    /// Writes an answer; a result carries `hints` in its `_meta`.
    pub(super) fn write_answer(
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

    /// The response an answer makes without hint changes, or `None` for an answer that is no
    /// response (a handler to run, a handler's own open or close).
    pub(super) fn plain_answer(
        request: Id,
        body: AnswerBody,
    ) -> Option<mcpl_protocol::jsonrpc::Message> {
        Some(match body {
            AnswerBody::Call(Ok(result)) => Response::ok_typed(request, &result).into(),
            AnswerBody::Open(Ok(result)) => Response::ok_typed(request, &result).into(),
            AnswerBody::Close(Ok(result)) => Response::ok_typed(request, &result).into(),
            AnswerBody::Call(Err(e)) | AnswerBody::Open(Err(e)) | AnswerBody::Close(Err(e)) => {
                Response::err(Some(request), e).into()
            }
            AnswerBody::RunHandler { .. } | AnswerBody::Handler { .. } => {
                tracing::error!(%request, "not an answer to write; dropped");
                return None;
            }
        })
    }

    /// An event's `push/event` params (SPEC §9), one event id spent: what a legacy push
    /// and a modern stream's `notifications/mcpl/event` both carry, without hints.
    fn push_params(&self, ToPush { event, about }: ToPush, feature_set: String) -> PushEventParams {
        // SPEC §16.1: a producer never emits a bare tag; the logic's are left out.
        let tags = mcpl_protocol::mcpl::valid_tags(&event.tags);
        if tags.len() != event.tags.len() {
            tracing::warn!(session = %self.id, tags = ?event.tags, "an event's tags that are not namespace:value (or repeated) are left out");
        }
        PushEventParams {
            feature_set,
            event_id: self.shared.next_event_id(),
            timestamp: rfc3339_millis(self.shared.now()),
            origin: None,
            tags,
            payload: PushPayload {
                content: event.content,
            },
            coalesce: None,
            hints: None,
            toolset: about.as_ref().map(|k| k.toolset.clone()),
            instance: about.and_then(|k| k.instance),
            meta: None,
        }
    }

    /// Sends an event on the listen stream `listen` as `notifications/mcpl/event`
    /// (`docs/rfc014-stateless.md` §3.5): the legacy `push/event` params (SPEC §9), its
    /// `hints` the stamped ones, the subscription id in `_meta`. A notification: no answer,
    /// no retry. Written like any message of the stream: into the transport's bounded
    /// queue, where one that finds a Streamable HTTP answer full is dropped (the listen
    /// module's docs, `server-core/src/session/listen.rs`).
    pub(super) fn stream_event(
        &mut self,
        listen: Id,
        push: ToPush,
        feature_set: String,
        hints: mcpl_protocol::stateless::VersionedHints,
    ) {
        let params = self.push_params(push, feature_set);
        let Ok(serde_json::Value::Object(mut params)) = serde_json::to_value(&params) else {
            return;
        };
        params.insert(
            "hints".to_owned(),
            serde_json::to_value(&hints).unwrap_or_default(),
        );
        params.insert(
            "_meta".to_owned(),
            serde_json::json!({ mcpl_protocol::modern::SUBSCRIPTION_ID_KEY: listen }),
        );
        let told = mcpl_protocol::jsonrpc::Notification {
            method: mcpl_protocol::stateless::EVENT_NOTIFICATION.to_owned(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(&params)),
        };
        self.write(told.into());
    }

    /// Pushes an event, with `hints` as its hints (§5.2: a push carrying hints is never
    /// retried and never has `coalesce`).
    pub(super) fn push_event(
        &mut self,
        push: ToPush,
        feature_set: String,
        hints: Option<crate::core::HintDraft>,
        ctx: &mut Context<Self>,
    ) {
        let params = self.push_params(push, feature_set);
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

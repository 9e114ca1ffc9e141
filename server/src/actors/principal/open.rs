//! `toolsets/open` (§4.2): adopt what is open, start a new instance, or join one this
//! principal was invited to. The principal awaits the instance's open (or join), so no
//! request sees an instance whose opening is not settled.

use super::{InstanceLink, Open, PrincipalActor, ReplyTo, Via};
use crate::actors::instance::{EnterFailure, Entered, InstanceActor, Join, Link, Start};
use crate::actors::principal::{Answer, AnswerBody};
use crate::author::{Opening, ParticipantId};
use crate::core::{HintDraft, InstanceKey, OpenError, OpenOutcome};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject};
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
use mcpl_protocol::toolsets::ToolsetsOpenResult;
use serde_json::Value;

impl Handler<Open> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: Open, ctx: &mut Context<Self>) {
        self.open(m.reply, m.toolset, m.instance, m.options, ctx);
    }
}

impl PrincipalActor {
    pub(super) fn open(
        &mut self,
        reply: ReplyTo,
        toolset: String,
        instance: Option<String>,
        options: Option<Value>,
        ctx: &mut Context<Self>,
    ) {
        let now = self.server.now();
        let invited = InstanceKey {
            toolset: toolset.clone(),
            instance: instance.clone(),
        };
        if self.state.instance(&invited).is_none()
            && let Some(pending) = self.invitations.remove(&invited)
        {
            // The options are the shared instance's own, not the request's.
            return match self.state.join(
                &toolset,
                instance.as_deref(),
                pending.options.clone(),
                now,
            ) {
                Ok(opened) => {
                    let link = Link {
                        principal: ctx.address(),
                        key: opened.key.clone(),
                    };
                    let join = Join {
                        who: pending.who,
                        principal: self.principal.clone(),
                        link,
                    };
                    let (addr, id, who) = (pending.instance.clone(), pending.id, pending.who);
                    let fut = addr.send(join).into_actor(self).map(move |res, act, _| {
                        let res = res.unwrap_or(Err(EnterFailure::Internal));
                        act.entered(
                            opened.key,
                            opened.draft,
                            Some(reply),
                            InstanceLink { addr, id, who },
                            res,
                        );
                    });
                    ctx.wait(fut);
                }
                Err(e) => {
                    self.invitations.insert(invited, pending);
                    self.refuse_open(reply, &e);
                }
            };
        }
        match self
            .state
            .open(&toolset, instance.as_deref(), options.clone(), now)
        {
            Err(e) => self.refuse_open(reply, &e),
            Ok(OpenOutcome::Adopted {
                key,
                options_differ,
            }) => {
                let body = self.adopted(&key, options.as_ref(), options_differ, reply.via);
                self.answer(reply.session, reply.request, body);
            }
            Ok(OpenOutcome::Opened(o)) => {
                self.start_instance(o.key, o.draft, options, Some(reply), ctx)
            }
        }
    }

    /// Starts the actor of a new instance (opened in the state already, with `base` saying
    /// so) and awaits its open. `reply` is `None` for an open nobody asked for (default
    /// open, implicit open, §4.1, §8).
    pub(super) fn start_instance(
        &mut self,
        key: InstanceKey,
        base: HintDraft,
        options: Option<Value>,
        reply: Option<ReplyTo>,
        ctx: &mut Context<Self>,
    ) {
        let id = self.server.next_instance_id();
        let addr = InstanceActor::new(self.server.clone(), id, key.toolset.clone()).start();
        let who = ParticipantId(0);
        let start = Start {
            logic: self.server.logic_of(&key.toolset),
            opening: Opening {
                toolset: key.toolset.clone(),
                instance: key.instance.clone(),
                options: options.unwrap_or_else(|| Value::Object(Default::default())),
                opener: who,
                principal: self.principal.clone(),
            },
            link: Link {
                principal: ctx.address(),
                key: key.clone(),
            },
        };
        let fut = addr.send(start).into_actor(self).map(move |res, act, _| {
            let res = res.unwrap_or(Err(EnterFailure::Internal));
            act.entered(key, base, reply, InstanceLink { addr, id, who }, res);
        });
        ctx.wait(fut);
    }

    /// The instance answered an open or a join: announce it, or take it back.
    fn entered(
        &mut self,
        key: InstanceKey,
        base: HintDraft,
        reply: Option<ReplyTo>,
        link: InstanceLink,
        res: Result<Entered, EnterFailure>,
    ) {
        let entered = match res {
            Ok(e) => e,
            Err(failure) => {
                // Its open entry was never sent: no ended record, no hints.
                self.state.cancel_open(&key);
                let error = match failure {
                    EnterFailure::Refused(r) => {
                        ErrorObject::new(ErrorCode::INVALID_PARAMS, r.message().to_owned())
                    }
                    EnterFailure::Internal => ErrorObject::internal("the toolset failed to open"),
                };
                if reply.is_none() {
                    // A default or implicit open: nobody asked, so only the log tells.
                    tracing::warn!(principal = %self.principal.name(), %key, %error, "a toolset opened for the principal failed to open");
                } else {
                    tracing::debug!(principal = %self.principal.name(), %key, %error, "open failed");
                }
                if let Some(r) = reply {
                    let body = match r.via {
                        Via::Rpc => AnswerBody::Open(Err(error)),
                        Via::Compat => AnswerBody::Call(Ok(CallToolResult::error(error.message))),
                    };
                    self.answer(r.session, r.request, body);
                }
                return;
            }
        };
        self.links.insert(key.clone(), link);
        let mut draft = base;
        if let Some(title) = &entered.title
            && let Ok(d) = self.state.retitle(&key, title)
        {
            draft.append(d);
        }
        let (mut answers, mut events) = (Vec::new(), Vec::new());
        if let Some(batch) = entered.batch {
            let applied = self.apply(batch, false);
            draft.append(applied.draft);
            answers = applied.answers;
            events = applied.events;
        }
        draft.compact();
        if let Some(r) = reply {
            let title = self
                .state
                .instance(&key)
                .and_then(|i| i.title().map(str::to_owned))
                .or(entered.title);
            let body = match r.via {
                Via::Rpc => AnswerBody::Open(Ok(ToolsetsOpenResult {
                    instance: key.instance.clone(),
                    title,
                    adopted: None,
                    content: (!entered.content.is_empty()).then_some(entered.content),
                    meta: None,
                })),
                Via::Compat => {
                    AnswerBody::Call(Ok(compat_opened(&key, title.as_deref(), entered.content)))
                }
            };
            answers.insert(
                0,
                (
                    r.session,
                    Answer {
                        request: r.request,
                        body,
                    },
                ),
            );
        }
        self.fan_out(Some(key), draft, answers, events);
    }

    /// §4.2, vector 17: what is open is adopted — described, unchanged, and told when the
    /// requested options were not applied.
    fn adopted(
        &self,
        key: &InstanceKey,
        requested: Option<&Value>,
        options_differ: bool,
        via: Via,
    ) -> AnswerBody {
        let inst = self.state.instance(key);
        let title = inst.and_then(|i| i.title()).map(str::to_owned);
        let mut text = format!("{key} is already open; it was adopted, nothing changed.");
        if options_differ {
            let current = inst
                .and_then(|i| i.options())
                .map_or_else(|| "{}".to_owned(), Value::to_string);
            let asked = requested.map_or_else(|| "{}".to_owned(), Value::to_string);
            text.push_str(&format!(
                " The requested options {asked} were not applied: it keeps {current}."
            ));
        }
        match via {
            Via::Rpc => AnswerBody::Open(Ok(ToolsetsOpenResult {
                instance: key.instance.clone(),
                title,
                adopted: Some(true),
                content: Some(vec![ContentBlock::text(text)]),
                meta: None,
            })),
            Via::Compat => AnswerBody::Call(Ok(CallToolResult::text(text))),
        }
    }

    fn refuse_open(&mut self, reply: ReplyTo, e: &OpenError) {
        let body = match reply.via {
            Via::Rpc => AnswerBody::Open(Err(e.to_error_object())),
            // §8: the model called a tool; it reads why as a tool error.
            Via::Compat => AnswerBody::Call(Ok(CallToolResult::error(e.to_string()))),
        };
        self.answer(reply.session, reply.request, body);
    }

    /// §8: opens the toolsets a host without `toolHints` uses without opening (adopting
    /// those that are open).
    pub(super) fn implicit_opens(&mut self, ctx: &mut Context<Self>) {
        let catalog = self.state.catalog().clone();
        for ts in catalog.implicitly_open() {
            if self.state.instance(&InstanceKey::toolset(ts)).is_some() {
                continue;
            }
            if let Ok(OpenOutcome::Opened(o)) = self.state.open(ts, None, None, self.server.now()) {
                self.start_instance(o.key, o.draft, None, None, ctx);
            }
        }
    }
}

/// What a host without `toolHints` reads after `toolset_open` (§8).
fn compat_opened(
    key: &InstanceKey,
    title: Option<&str>,
    content: Vec<ContentBlock>,
) -> CallToolResult {
    let mut text = format!("Opened {key}");
    if let Some(t) = title {
        text.push_str(&format!(" ({t})"));
    }
    if key.instance.is_some() {
        text.push_str(". Name it as the `instance` argument of its tools when several are open");
    }
    text.push('.');
    let mut blocks = vec![ContentBlock::text(text)];
    blocks.extend(content);
    CallToolResult {
        content: blocks,
        ..Default::default()
    }
}

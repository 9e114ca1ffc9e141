//! `toolsets/close` (§4.2), and the ends the principal decides itself (§4.1, §4.6).

use super::{Close, InstanceLink, PrincipalActor, REASON_CLOSED, ReplyTo, Via};
use crate::actors::instance::{self, Closed, Leave};
use crate::actors::principal::{Answer, AnswerBody};
use crate::core::{HintDraft, InstanceKey};
use actix::prelude::*;
use mcpl_protocol::mcp::CallToolResult;
use mcpl_protocol::toolsets::ToolsetsCloseResult;

impl Handler<Close> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: Close, ctx: &mut Context<Self>) {
        self.close(m.reply, m.toolset, m.instance, ctx);
    }
}

impl PrincipalActor {
    pub(super) fn close(
        &mut self,
        reply: ReplyTo,
        toolset: String,
        instance: Option<String>,
        ctx: &mut Context<Self>,
    ) {
        // §8: `toolset_close` may leave the instance out when only one is open.
        let instance = match (reply.via, instance) {
            (Via::Compat, None) if self.state.catalog().is_instanced(&toolset) => {
                self.state.sole_instance(&toolset)
            }
            (_, i) => i,
        };
        let key = match self.state.resolve_close(&toolset, instance.as_deref()) {
            Ok(key) => key,
            Err(e) => {
                let body = match reply.via {
                    Via::Rpc => AnswerBody::Close(Err(e.to_error_object())),
                    Via::Compat => AnswerBody::Call(Ok(CallToolResult::error(e.to_string()))),
                };
                return self.answer(reply.session, reply.request, body);
            }
        };
        match self.links.remove(&key) {
            Some(link) => {
                // A game in progress may be resigned: the logic says what closing did.
                let fut = link
                    .addr
                    .send(instance::Close { who: link.who })
                    .into_actor(self)
                    .map(move |res, act, ctx| act.closed(key, reply, res.ok(), ctx));
                ctx.wait(fut);
            }
            None => self.closed(key, reply, None, ctx),
        }
    }

    /// The instance said what closing did: end this principal's record (unless the logic
    /// ended the whole instance) and answer with the close's changes (§4.2).
    fn closed(
        &mut self,
        key: InstanceKey,
        reply: ReplyTo,
        closed: Option<Closed>,
        ctx: &mut Context<Self>,
    ) {
        let (content, batch) = closed.map_or((Vec::new(), None), |c| (c.content, c.batch));
        let mut draft = HintDraft::new();
        let (mut answers, mut events) = (Vec::new(), Vec::new());
        if let Some(batch) = batch {
            let applied = self.apply(batch, false);
            draft = applied.draft;
            answers = applied.answers;
            events = applied.events;
        }
        if self.state.instance(&key).is_some()
            && let Ok(ended) = self.state.end(&key, REASON_CLOSED, self.server.now())
        {
            draft.append(ended.draft);
        }
        draft.compact();
        let body = match reply.via {
            Via::Rpc => AnswerBody::Close(Ok(ToolsetsCloseResult {
                content: (!content.is_empty()).then_some(content),
                meta: None,
            })),
            Via::Compat => {
                let mut result = CallToolResult::text(format!("Closed {key}."));
                result.content.extend(content);
                AnswerBody::Call(Ok(result))
            }
        };
        answers.insert(
            0,
            (
                reply.session,
                Answer {
                    request: reply.request,
                    body,
                },
            ),
        );
        self.fan_out(Some(key), draft, answers, events);
        self.maybe_retire(ctx);
    }

    /// The principal ended its record of an instance itself: the instance hears it as a
    /// close by this participant.
    pub(super) fn leave(&mut self, key: &InstanceKey) {
        if let Some(InstanceLink { addr, who, .. }) = self.links.remove(key) {
            addr.do_send(Leave { who });
        }
    }
}

//! `toolsets/close` (§4.2), and the ends the principal decides itself (§4.1, §4.6).

use super::fanout::Applied;
use super::{CloseToolset, InstanceLink, PrincipalActor, REASON_CLOSED, ReplyTo, Via};
use crate::actors::instance::{self, Closed, Leave};
use crate::actors::principal::{Answer, AnswerBody, HandlerAnswer};
use crate::core::{CloseError, InstanceKey};
use crate::tool::outcome::CloseToolsetError;
use actix::prelude::*;
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
use mcpl_protocol::toolsets::ToolsetsCloseResult;

/// The answer to a close, in the asker's terms: `toolsets/close`'s result or error, a
/// compat tool's result (§8), or a handler's typed outcome.
fn close_body(
    via: Via,
    key: &InstanceKey,
    outcome: Result<Vec<ContentBlock>, CloseError>,
) -> AnswerBody {
    match via {
        Via::Rpc => AnswerBody::Close(match outcome {
            Ok(content) => Ok(ToolsetsCloseResult {
                content: (!content.is_empty()).then_some(content),
                meta: None,
            }),
            Err(e) => Err(e.to_error_object()),
        }),
        Via::Compat => AnswerBody::Call(Ok(match outcome {
            Ok(content) => {
                let mut result = CallToolResult::text(format!("Closed {key}."));
                result.content.extend(content);
                result
            }
            Err(e) => CallToolResult::error(e.to_string()),
        })),
        Via::Handler(token) => AnswerBody::Handler {
            token,
            answer: HandlerAnswer::Close(outcome.map_err(CloseToolsetError::Invalid)),
        },
    }
}

impl Handler<CloseToolset> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: CloseToolset, ctx: &mut Context<Self>) {
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
                let named = InstanceKey { toolset, instance };
                let body = close_body(reply.via, &named, Err(e));
                return self.answer(reply.session, reply.request, body);
            }
        };
        match self.links.remove(&key) {
            Some(link) => {
                // A game in progress may be resigned: the logic says what closing did.
                let fut = link
                    .addr
                    .send(instance::CloseInstance { who: link.who })
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
        let mut applied = Applied::empty();
        // §4.3 (revision 4): the principal asked for this end, whatever the logic's batch
        // says of it, so it leaves no ended record.
        self.closing = Some(key.clone());
        if let Some(batch) = batch {
            applied = self.apply(batch, false);
        }
        self.closing = None;
        if self.state.instance(&key).is_some()
            && let Ok(ended) = self.state.end_asked(&key, REASON_CLOSED)
        {
            applied.draft.append(ended.draft);
        }
        applied.draft.compact();
        let body = close_body(reply.via, &key, Ok(content));
        applied.answers.insert(
            0,
            (
                reply.session,
                Answer {
                    request: reply.request,
                    body,
                    deferred: false,
                },
            ),
        );
        self.fan_out(Some(key), applied, ctx);
        self.reopen_for_plain_hosts(ctx);
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

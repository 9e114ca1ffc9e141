//! `tools/call` (§3, §4.5, §8): a host without `toolHints` may be opening or closing
//! through the compat tools; otherwise the state resolves the call — refused with a reason,
//! to a tool's own handler (run by the session), or into the instance's logic.

use super::{CallTool, PrincipalActor, ReplyTo, Via};
use crate::actors::instance::{CallIn, Link};
use crate::actors::principal::AnswerBody;
use crate::core::{CallReply, PlainCall};
use actix::prelude::*;
use mcpl_protocol::mcp::CallToolResult;

impl Handler<CallTool> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: CallTool, ctx: &mut Context<Self>) {
        let CallTool {
            session,
            request,
            tool,
            arguments,
            instance,
            plain,
            meta,
        } = m;
        let (tool, instance, arguments) = if plain {
            let compat = |request| ReplyTo {
                session,
                request,
                via: Via::Compat,
            };
            match self.state.catalog().plain_call(&tool, arguments) {
                Err(e) => {
                    return self.answer(session, request, AnswerBody::Call(Ok(e.to_tool_result())));
                }
                Ok(PlainCall::Open {
                    toolset,
                    instance,
                    options,
                }) => return self.open(compat(request), toolset, instance, options, ctx),
                Ok(PlainCall::Close { toolset, instance }) => {
                    return self.close(compat(request), toolset, instance, ctx);
                }
                Ok(PlainCall::Tool {
                    name,
                    instance,
                    arguments,
                }) => (name, instance, arguments),
            }
        } else {
            (tool, instance, arguments)
        };
        let resolved = if plain {
            self.state.resolve_plain_call(&tool, instance.as_deref())
        } else {
            self.state.resolve_call(&tool, instance.as_deref())
        };
        let target = match resolved {
            Ok(target) => target,
            Err(refusal) => {
                let body = match refusal.reply() {
                    CallReply::ToolError(result) | CallReply::Answer(result) => {
                        AnswerBody::Call(Ok(result))
                    }
                    CallReply::Rpc(error) => AnswerBody::Call(Err(error)),
                };
                return self.answer(session, request, body);
            }
        };
        if self.shared.has_handler(&tool) {
            // No key: a loose tool, visible to this principal now (`core/session.rs`:
            // direct calls).
            let direct = target.key.is_none();
            let instance = target.key.and_then(|k| k.instance);
            let body = AnswerBody::RunHandler {
                tool,
                arguments,
                instance,
                meta,
                direct,
            };
            return self.answer(session, request, body);
        }
        match target.key.and_then(|k| self.links.get(&k).map(|l| (k, l))) {
            Some((key, link)) => link.addr.do_send(CallIn {
                who: link.who,
                link: Link {
                    principal: ctx.address().recipient(),
                    key,
                },
                session,
                request,
                tool,
                arguments: arguments.unwrap_or_default(),
            }),
            // A logic toolset's tool whose toolset a manifest change removed (§4.4: it is an
            // undeclared group's tool now, and nothing answers it).
            None => {
                let text =
                    format!("{tool} cannot be used: the server no longer offers its toolset.");
                self.answer(
                    session,
                    request,
                    AnswerBody::Call(Ok(CallToolResult::error(text))),
                );
            }
        }
    }
}

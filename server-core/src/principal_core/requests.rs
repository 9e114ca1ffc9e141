//! A host's (or a handler's) requests to the principal: `toolsets/open` (§4.2: adopt what
//! is open, start a new instance, join one this principal was invited to, reveal an
//! implicit one, §8), `toolsets/close` (§4.2) and `tools/call` (§3, §4.5, §8: where a call
//! goes). The instance's answer to an open or a close comes back as an input
//! ([`PrincipalCore::handle_entered`], [`PrincipalCore::handle_closed`]): the actor awaits
//! it, so no request sees an instance whose opening is not settled.

use super::{
    Answer, AnswerBody, Applied, InstanceLink, OpenReply, Output, PrincipalCore, REASON_CLOSED,
    ReplyTo, Via, close_body,
};
use crate::batch::{Closed, EnterFailure, Entered};
use crate::ids::SessionId;
use crate::{CallReply, HintDraft, InstanceKey, OpenError, OpenOutcome, Opened, PlainCall};
use mcpl_protocol::jsonrpc::Id;
use mcpl_protocol::mcp::CallToolResult;
use mcpl_protocol::meta::Meta;
use serde_json::{Map, Value};
use std::time::SystemTime;

/// A host's `tools/call`, as its session forwards it ([`crate::session::Forward::Call`]).
#[derive(Debug, Clone, PartialEq)]
pub struct HostCall {
    /// The call's request id.
    pub request: Id,
    /// The tool.
    pub tool: String,
    /// The call's arguments.
    pub arguments: Option<Map<String, Value>>,
    /// `_meta["mcpl/instance"]` (§4.5) from a host shown hints; a host without `toolHints`
    /// names it as an argument.
    pub instance: Option<String>,
    /// The host sees the plain list (§8): compat tools and `instance` arguments apply.
    pub plain: bool,
    /// The call's `_meta`, for a handler.
    pub meta: Option<Meta>,
}

/// `tools/call`, as the principal gets it: the host's call and the session it came on.
#[derive(Debug)]
pub struct CallRequest {
    /// The session the call came on.
    pub session: SessionId,
    /// The call.
    pub call: HostCall,
}

impl<A: Clone> PrincipalCore<A> {
    /// `toolsets/open` (or `toolset_open`, or a handler's open).
    pub fn handle_open(
        &mut self,
        reply: ReplyTo,
        toolset: String,
        instance: Option<String>,
        options: Option<Value>,
        now: SystemTime,
    ) {
        let invited = InstanceKey {
            toolset: toolset.clone(),
            instance: instance.clone(),
        };
        if self.state.instance(&invited).is_none()
            && let Some(pending) = self.invitations.remove(&invited)
        {
            // §4.6, §7: opening the name an invitation suggested joins the shared
            // instance. The options are the shared instance's own, not the request's.
            match self
                .state
                .join(&toolset, instance.as_deref(), pending.options.clone(), now)
            {
                Ok(opened) => self.out.push_back(Output::Join {
                    key: opened.key,
                    base: opened.draft,
                    reply,
                    link: InstanceLink {
                        addr: pending.instance,
                        id: pending.id,
                        who: pending.who,
                    },
                }),
                Err(e) => {
                    self.invitations.insert(invited, pending);
                    self.refuse_open(reply, e);
                }
            }
            return;
        }
        match self
            .state
            .open(&toolset, instance.as_deref(), options.clone(), now)
        {
            Err(e) => self.refuse_open(reply, e),
            Ok(OpenOutcome::Adopted {
                key,
                options_differ,
            }) => {
                let body = self
                    .adopted(key, options.as_ref(), options_differ)
                    .body(reply.via);
                self.answer(reply.session, reply.request, body);
            }
            Ok(OpenOutcome::Opened(o)) => {
                // An implicit instance replaced for other options (§8): its logic goes.
                self.leave(&o.key);
                self.out.push_back(Output::Start {
                    key: o.key,
                    base: o.draft,
                    options,
                    reply: Some(reply),
                });
            }
            Ok(OpenOutcome::Revealed(o)) => self.revealed(o, reply),
        }
    }

    /// An open or a join did not go through (the logic refused or failed, or no instance
    /// could be started): take it back and say why.
    pub fn handle_open_failed(
        &mut self,
        key: InstanceKey,
        reply: Option<ReplyTo>,
        failure: EnterFailure,
    ) {
        // Its open entry was never sent: no ended record, no hints.
        self.state.cancel_open(&key);
        let failure = match failure {
            EnterFailure::Refused(r) => OpenReply::Refused(r),
            EnterFailure::Internal => OpenReply::Failed,
            EnterFailure::Unavailable(why) => OpenReply::Unavailable(why),
        };
        let why = match &failure {
            OpenReply::Refused(r) => r.message(),
            OpenReply::Unavailable(why) => why,
            _ => "the toolset's logic failed",
        };
        match reply {
            // A default or implicit open: nobody asked, so only the log tells.
            None => {
                tracing::warn!(%key, why, "a toolset opened for the principal failed to open")
            }
            Some(r) => {
                tracing::debug!(%key, why, "open failed");
                self.answer(r.session, r.request, failure.body(r.via));
            }
        }
    }

    /// The instance answered an open or a join (`link` is how to reach it): announce it,
    /// or take it back.
    pub fn handle_entered(
        &mut self,
        key: InstanceKey,
        base: HintDraft,
        reply: Option<ReplyTo>,
        link: InstanceLink<A>,
        res: Result<Entered, EnterFailure>,
        now: SystemTime,
    ) {
        let entered = match res {
            Ok(e) => e,
            Err(failure) => return self.handle_open_failed(key, reply, failure),
        };
        self.links.insert(key.clone(), link);
        let mut draft = base;
        if let Some(title) = &entered.title
            && let Ok(d) = self.state.retitle(&key, title)
        {
            draft.append(d);
        }
        let mut applied = match entered.batch {
            Some(batch) => self.apply(batch, false, now),
            None => Applied::empty(),
        };
        draft.append(std::mem::take(&mut applied.draft));
        draft.compact();
        if let Some(r) = reply {
            let title = self
                .state
                .instance(&key)
                .and_then(|i| i.title().map(str::to_owned))
                .or(entered.title);
            let body = OpenReply::Opened {
                key: key.clone(),
                title,
                content: entered.content,
            }
            .body(r.via);
            let answer = Answer {
                request: r.request,
                body,
                deferred: false,
            };
            applied.answers.insert(0, (r.session, answer));
        }
        applied.draft = draft;
        applied.hidden = self.state.is_implicit(&key);
        self.tell(Some(key), applied);
    }

    /// `toolsets/close` (or `toolset_close`, or a handler's close).
    pub fn handle_close(
        &mut self,
        reply: ReplyTo,
        toolset: String,
        instance: Option<String>,
        retried: bool,
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
                // Profile §3.4 (issue #40, vector S12): a modern host's close of what this
                // principal closed, its tombstone still held, is a retry after a lost
                // response: it succeeds again, changing nothing.
                let body = if retried && self.state.stamps().has_tombstone(&named) {
                    close_body(reply.via, &named, Ok(Vec::new()))
                } else {
                    close_body(reply.via, &named, Err(e))
                };
                return self.answer(reply.session, reply.request, body);
            }
        };
        // A game in progress may be resigned: the logic says what closing did.
        let link = self.links.remove(&key);
        self.out.push_back(Output::Close { key, reply, link });
    }

    /// The instance said what closing did (`None`: there was no instance to ask): end this
    /// principal's record (unless the logic ended the whole instance) and answer with the
    /// close's changes (§4.2).
    pub fn handle_closed(
        &mut self,
        key: InstanceKey,
        reply: ReplyTo,
        closed: Option<Closed>,
        now: SystemTime,
    ) {
        let (content, batch) = closed.map_or((Vec::new(), None), |c| (c.content, c.batch));
        let mut applied = Applied::empty();
        // §4.3 (revision 4): the principal asked for this end, whatever the logic's batch
        // says of it, so it leaves no ended record.
        self.closing = Some(key.clone());
        if let Some(batch) = batch {
            applied = self.apply(batch, false, now);
        }
        self.closing = None;
        if self.state.instance(&key).is_some()
            && let Ok(ended) = self.state.end_asked(&key, REASON_CLOSED)
        {
            applied.draft.append(ended.draft);
        }
        applied.draft.compact();
        let body = close_body(reply.via, &key, Ok(content));
        let answer = Answer {
            request: reply.request,
            body,
            deferred: false,
        };
        applied.answers.insert(0, (reply.session, answer));
        self.tell(Some(key), applied);
        self.reopen_for_plain_hosts(now);
    }

    /// `tools/call`: a plain host may be opening or closing through the compat tools (§8);
    /// otherwise the state resolves the call — refused with a reason, to a tool's own
    /// handler (`has_handler`, run by the session), or into the instance's logic.
    pub fn handle_call(
        &mut self,
        m: CallRequest,
        has_handler: impl Fn(&str) -> bool,
        now: SystemTime,
    ) {
        let CallRequest {
            session,
            call:
                HostCall {
                    request,
                    tool,
                    arguments,
                    instance,
                    plain,
                    meta,
                },
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
                }) => return self.handle_open(compat(request), toolset, instance, options, now),
                Ok(PlainCall::Close { toolset, instance }) => {
                    return self.handle_close(compat(request), toolset, instance, false);
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
        // §4.5, vectors 6, 11: the only instance, or the named one; refusals say why.
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
        if has_handler(&tool) {
            // No key: a loose tool, visible to this principal now (`server-core/src/session.rs`:
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
        match target
            .key
            .and_then(|k| self.links.get(&k).cloned().map(|l| (k, l)))
        {
            Some((key, link)) => self.out.push_back(Output::Call {
                link,
                key,
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

    /// §4.2, vector 17: what is open is adopted — described, unchanged, and told when the
    /// requested options were not applied.
    fn adopted(
        &self,
        key: InstanceKey,
        requested: Option<&Value>,
        options_differ: bool,
    ) -> OpenReply {
        let inst = self.state.instance(&key);
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
        OpenReply::Adopted { key, title, text }
    }

    fn refuse_open(&mut self, reply: ReplyTo, e: OpenError) {
        let body = OpenReply::Invalid(e).body(reply.via);
        self.answer(reply.session, reply.request, body);
    }

    /// §8 (`server-core/src/principal/implicit.rs`): a hinted open of what was open for plain hosts
    /// only. The instance runs on; the hinted hosts are told it whole, and the asker is
    /// answered as for a new instance — which, for it, it is.
    fn revealed(&mut self, o: Opened, reply: ReplyTo) {
        let title = self
            .state
            .instance(&o.key)
            .and_then(|i| i.title().map(str::to_owned));
        let body = OpenReply::Opened {
            key: o.key.clone(),
            title,
            content: Vec::new(),
        }
        .body(reply.via);
        let answer = Answer {
            request: reply.request,
            body,
            deferred: false,
        };
        let applied = Applied {
            draft: o.draft,
            answers: vec![(reply.session, answer)],
            ..Applied::empty()
        };
        self.tell(Some(o.key), applied);
    }
}

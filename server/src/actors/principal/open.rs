//! `toolsets/open` (§4.2): adopt what is open, start a new instance, or join one this
//! principal was invited to. The principal awaits the instance's open (or join), so no
//! request sees an instance whose opening is not settled.

use super::fanout::Applied;
use super::open_reply::OpenReply;
use super::{InstanceLink, OpenToolset, PrincipalActor, ReplyTo};
use crate::actors::instance::{EnterFailure, Entered, InstanceActor, Join, Link, Start};
use crate::actors::principal::Answer;
use crate::author::{Opening, ParticipantId};
use crate::core::{HintDraft, InstanceKey, OpenError, OpenOutcome};
use actix::prelude::*;
use serde_json::Value;

impl Handler<OpenToolset> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: OpenToolset, ctx: &mut Context<Self>) {
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
        let now = self.shared.now();
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
                        principal: ctx.address().recipient(),
                        key: opened.key.clone(),
                    };
                    let join = Join {
                        who: pending.who,
                        principal: self.principal.clone(),
                        link,
                    };
                    let (addr, id, who) = (pending.instance.clone(), pending.id, pending.who);
                    let fut = addr.send(join).into_actor(self).map(move |res, act, ctx| {
                        let res = res.unwrap_or(Err(EnterFailure::Internal));
                        act.entered(
                            opened.key,
                            opened.draft,
                            Some(reply),
                            InstanceLink { addr, id, who },
                            res,
                            ctx,
                        );
                    });
                    ctx.wait(fut);
                }
                Err(e) => {
                    self.invitations.insert(invited, pending);
                    self.refuse_open(reply, e);
                }
            };
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
                self.start_instance(o.key, o.draft, options, Some(reply), ctx)
            }
            Ok(OpenOutcome::Revealed(o)) => self.revealed(o, reply, ctx),
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
        let id = self.shared.next_instance_id();
        let addr = InstanceActor::new(
            self.shared.clone(),
            self.registrar.route.clone(),
            id,
            key.toolset.clone(),
        )
        .start();
        let who = ParticipantId(0);
        let start = Start {
            logic: self.shared.logic_of(&key.toolset),
            opening: Opening {
                toolset: key.toolset.clone(),
                instance: key.instance.clone(),
                options: options.unwrap_or_else(|| Value::Object(Default::default())),
                opener: who,
                principal: self.principal.clone(),
            },
            link: Link {
                principal: ctx.address().recipient(),
                key: key.clone(),
            },
        };
        let fut = addr.send(start).into_actor(self).map(move |res, act, ctx| {
            let res = res.unwrap_or(Err(EnterFailure::Internal));
            act.entered(key, base, reply, InstanceLink { addr, id, who }, res, ctx);
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
        ctx: &mut Context<Self>,
    ) {
        let entered = match res {
            Ok(e) => e,
            Err(failure) => {
                // Its open entry was never sent: no ended record, no hints.
                self.state.cancel_open(&key);
                let failure = match failure {
                    EnterFailure::Refused(r) => OpenReply::Refused(r),
                    EnterFailure::Internal => OpenReply::Failed,
                };
                let why = match &failure {
                    OpenReply::Refused(r) => r.message(),
                    _ => "the toolset's logic failed",
                };
                match reply {
                    // A default or implicit open: nobody asked, so only the log tells.
                    None => {
                        tracing::warn!(principal = %self.principal.name(), %key, why, "a toolset opened for the principal failed to open")
                    }
                    Some(r) => {
                        tracing::debug!(principal = %self.principal.name(), %key, why, "open failed");
                        self.answer(r.session, r.request, failure.body(r.via));
                    }
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
        let (mut answers, mut events, mut holds) = (Vec::new(), Vec::new(), Vec::new());
        let mut after = crate::store::Ticket::NONE;
        if let Some(batch) = entered.batch {
            let applied = self.apply(batch, false);
            draft.append(applied.draft);
            answers = applied.answers;
            events = applied.events;
            holds = applied.holds;
            after = applied.after;
        }
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
            answers.insert(
                0,
                (
                    r.session,
                    Answer {
                        request: r.request,
                        body,
                        deferred: false,
                    },
                ),
            );
        }
        let applied = Applied {
            draft,
            events,
            answers,
            holds,
            hidden: self.state.is_implicit(&key),
            after,
        };
        self.fan_out(Some(key), applied, ctx);
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

    /// §8 (`core/principal/implicit.rs`): a hinted open of what was open for plain hosts
    /// only. The instance runs on; the hinted hosts are told it whole, and the asker is
    /// answered as for a new instance — which, for it, it is.
    fn revealed(&mut self, o: crate::core::Opened, reply: ReplyTo, ctx: &mut Context<Self>) {
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
        self.fan_out(Some(o.key), applied, ctx);
    }

    /// §8: opens, for the principal's plain connections only, the toolsets a host without
    /// `toolHints` uses without opening; what is open already stays as it is.
    pub(super) fn implicit_opens(&mut self, ctx: &mut Context<Self>) {
        let catalog = self.state.catalog().clone();
        for ts in catalog.implicitly_open() {
            if let Some(key) = self.state.open_implicitly(ts, self.shared.now()) {
                self.start_instance(key, HintDraft::new(), None, None, ctx);
            }
        }
    }

    /// After an end: a plain connection of the principal still uses the toolsets it never
    /// opened, so those that ended are opened implicitly again (§8).
    pub(super) fn reopen_for_plain_hosts(&mut self, ctx: &mut Context<Self>) {
        if self.sessions.values().any(|s| s.plain) {
            self.implicit_opens(ctx);
        }
    }
}

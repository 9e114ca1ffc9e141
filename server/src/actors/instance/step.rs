//! One step of an instance's logic: run it with a fresh context (catching a panic), then
//! carry out what it recorded, one [`Batch`] per participant principal.

use super::{
    Batch, CallAnswer, Change, ForPrincipal, INTERNAL_ERROR, InstanceActor, Invitation,
    ToPrincipal, Waiter,
};
use crate::author::{Audience, CallId, Effect, InstanceContext, Job, ParticipantId};
use crate::tool::error::{ToolError, ToolResult};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::ErrorObject;
use mcpl_protocol::mcp::CallToolResult;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};

type Batches = BTreeMap<ParticipantId, Batch>;

impl InstanceActor {
    /// Runs `f` against a fresh context; the effects it recorded, or the panic's message.
    pub(super) fn run<R>(
        &mut self,
        f: impl FnOnce(&mut InstanceContext) -> R,
    ) -> Result<(R, Vec<Effect>), String> {
        let mut cx = InstanceContext::new(
            self.toolset.clone(),
            self.shared.now(),
            std::mem::take(&mut self.participants),
            self.shared.catalog(),
            self.waiting.keys().copied().collect(),
        )
        .with_outside(self.waker(), self.names.clone());
        let out = panic::catch_unwind(AssertUnwindSafe(|| f(&mut cx)));
        self.participants = std::mem::take(&mut cx.participants);
        match out {
            Ok(r) => Ok((r, std::mem::take(&mut cx.effects))),
            Err(payload) => Err(panic_message(payload)),
        }
    }

    /// Carries out a step's effects, in order. `caller` is the call the step runs for, and
    /// `own` that call with its result when the step answered it; every other call answered
    /// is answered as deferred. `requester` is the participant whose principal awaits this
    /// step: its batch is returned instead of sent.
    pub(super) fn dispatch(
        &mut self,
        effects: Vec<Effect>,
        own: Option<(Waiter, ToolResult)>,
        caller: Option<CallId>,
        requester: Option<ParticipantId>,
        ctx: &mut Context<Self>,
    ) -> Option<Batch> {
        // §5.3: a hold covers every change of the step that asked for it, even those
        // recorded before it.
        for effect in &effects {
            if let Effect::Hold { call } = effect
                && let Some(w) = self.waiting.get_mut(call)
            {
                w.hold = true;
            }
        }
        let mut batches = self.empty_batches();
        if let Some((w, result)) = own {
            push_answer(
                &mut batches,
                w,
                result.or_else(ToolError::into_outcome),
                false,
            );
        }
        for effect in effects {
            match effect {
                Effect::Visible { to, tool, visible } => {
                    for b in audience(&mut batches, to) {
                        b.changes.push(Change::Visible {
                            tool: tool.clone(),
                            visible,
                        });
                    }
                }
                Effect::Definition {
                    to,
                    tool,
                    definition,
                } => {
                    for b in audience(&mut batches, to) {
                        b.changes.push(Change::Definition {
                            tool: tool.clone(),
                            definition: definition.clone().map(Box::new),
                        });
                    }
                }
                Effect::Title { to, title } => {
                    for b in audience(&mut batches, to) {
                        b.changes.push(Change::Title(title.clone()));
                    }
                }
                Effect::Event { to, event } => {
                    for b in audience(&mut batches, to) {
                        b.events.push(event.clone());
                    }
                }
                Effect::Answer { call, result } => match self.waiting.remove(&call) {
                    Some(w) => {
                        let outcome = result.or_else(ToolError::into_outcome);
                        push_answer(&mut batches, w, outcome, Some(call) != caller);
                    }
                    None => {
                        tracing::error!(instance = %self.id, ?call, "answer to a call that is not waiting")
                    }
                },
                Effect::Invite {
                    who,
                    reason,
                    options,
                } => self.invite(who, reason, options, ctx),
                Effect::Wake { after, tag } => {
                    ctx.run_later(after, move |act, ctx| act.wake(tag, ctx));
                }
                Effect::Spawn(Job(job)) => {
                    // Off the arbiter: it wakes the instance when done (`author/work.rs`).
                    drop(tokio::task::spawn_blocking(job));
                }
                Effect::Hold { .. } => {}
                Effect::End { reason, view } => {
                    self.finish(&reason, &mut batches, caller, |r| {
                        Ok(CallToolResult::error(format!(
                            "It ended before answering: {r}"
                        )))
                    });
                    for b in batches.values_mut() {
                        b.last_view.clone_from(&view);
                    }
                }
            }
        }
        self.mark_holds(&mut batches);
        self.keep(&mut batches, ctx);
        self.send(batches, requester)
    }

    /// Issue #15: what the step did is kept before anyone is told of it — its record is
    /// handed to the store and each batch carries its ticket, which the principals wait
    /// for (issue #42 item 1), as its invitations do here. Issue #37 item 2: a step that
    /// could not be kept is told to no one — its changes, events and end are dropped, its
    /// invitations not sent — and the calls it answered fail.
    fn keep(&mut self, batches: &mut Batches, ctx: &mut Context<Self>) {
        match self.persist() {
            Ok(ticket) => {
                for b in batches.values_mut() {
                    b.kept = ticket;
                }
                self.flush_outbox_once(ticket, ctx);
            }
            Err(not_kept) => {
                tracing::debug!(instance = %self.id, "a step that could not be kept is refused");
                self.outbox.clear();
                for b in batches.values_mut() {
                    b.refuse(&not_kept);
                }
            }
        }
    }

    /// Tells each principal which of its sessions' calls hold their caller's changes: the
    /// oldest held call per session (`InstanceContext::hold_for`).
    fn mark_holds(&self, batches: &mut Batches) {
        for w in self.waiting.values().filter(|w| w.hold) {
            if let Some(b) = batches.get_mut(&w.who)
                && !b.holds.iter().any(|(s, _)| *s == w.session)
            {
                b.holds.push((w.session, w.request.clone()));
            }
        }
    }

    /// The logic panicked: the instance ends with [`INTERNAL_ERROR`] for everyone, and the
    /// calls it owed (`own` among them) fail with -32603.
    pub(super) fn fail(
        &mut self,
        panic: &str,
        own: Option<Waiter>,
        requester: Option<ParticipantId>,
        ctx: &mut Context<Self>,
    ) -> Option<Batch> {
        tracing::error!(instance = %self.id, toolset = %self.toolset, %panic, "the toolset's logic panicked; the instance ends");
        let failed = || Err(ErrorObject::internal("the toolset's logic failed"));
        let mut batches = self.empty_batches();
        if let Some(w) = own {
            push_answer(&mut batches, w, failed(), false);
        }
        self.finish(INTERNAL_ERROR, &mut batches, None, |_| failed());
        self.keep(&mut batches, ctx);
        self.send(batches, requester)
    }

    /// Ends the instance: every present principal's record ends with `reason`, every call
    /// still waiting is answered with `answer(reason)` (deferred, but for `caller`, the
    /// call whose step ended it), invitations are withdrawn.
    fn finish(
        &mut self,
        reason: &str,
        batches: &mut Batches,
        caller: Option<CallId>,
        answer: impl Fn(&str) -> Result<CallToolResult, ErrorObject>,
    ) {
        tracing::debug!(instance = %self.id, toolset = %self.toolset, reason, "instance ended");
        self.ended = Some(reason.to_owned());
        self.logic = None;
        for b in batches.values_mut() {
            b.ended = Some(reason.to_owned());
        }
        for (call, w) in std::mem::take(&mut self.waiting) {
            push_answer(batches, w, answer(reason), Some(call) != caller);
        }
        self.withdraw_invitations();
    }

    fn empty_batches(&self) -> Batches {
        self.links
            .iter()
            .map(|(who, link)| (*who, Batch::new(self.id, link.key.clone())))
            .collect()
    }

    /// Sends each non-empty batch to its principal, except the requester's, returned.
    fn send(&self, mut batches: Batches, requester: Option<ParticipantId>) -> Option<Batch> {
        let mine = requester.and_then(|r| batches.remove(&r));
        for (who, batch) in batches {
            if !batch.is_empty()
                && let Some(link) = self.links.get(&who)
            {
                link.principal.do_send(batch);
            }
        }
        mine.filter(|b| !b.is_empty())
    }

    fn invite(
        &mut self,
        who: ParticipantId,
        reason: String,
        options: Option<serde_json::Value>,
        ctx: &mut Context<Self>,
    ) {
        let Some(principal) = self
            .participants
            .get(who.0 as usize)
            .and_then(|p| p.principal())
            .cloned()
        else {
            return;
        };
        let options = options.or_else(|| {
            Some(self.options.clone()).filter(|o| o.as_object().is_none_or(|m| !m.is_empty()))
        });
        let invitee = super::Invitee {
            principal,
            reason,
            options,
        };
        if let Some(m) = self.invitation(who, &invitee, ctx) {
            self.outbox.push(m);
        }
        self.invited.insert(who, invitee);
    }

    /// Sends the invitation to `who` again, after a restart (`durable.rs`).
    pub(super) fn send_invitation(
        &self,
        who: ParticipantId,
        invitee: &super::Invitee,
        ctx: &mut Context<Self>,
    ) {
        if let Some(m) = self.invitation(who, invitee, ctx) {
            self.router.do_send(m);
        }
    }

    /// The invitation of `who`, to its principal.
    fn invitation(
        &self,
        who: ParticipantId,
        invitee: &super::Invitee,
        ctx: &mut Context<Self>,
    ) -> Option<ToPrincipal> {
        // The opener is participant 0, always a principal.
        let from = self
            .participants
            .first()
            .and_then(|p| p.principal())
            .cloned()?;
        Some(ToPrincipal {
            principal: invitee.principal.clone(),
            message: ForPrincipal::Invitation(Invitation {
                instance: ctx.address(),
                id: self.id,
                who,
                toolset: self.toolset.clone(),
                name: self.name.clone(),
                options: invitee.options.clone(),
                reason: invitee.reason.clone(),
                from,
            }),
        })
    }
}

/// The batches of the present participants in `to`.
fn audience(batches: &mut Batches, to: Audience) -> impl Iterator<Item = &mut Batch> {
    batches
        .iter_mut()
        .filter(move |(who, _)| to.includes(**who))
        .map(|(_, b)| b)
}

fn push_answer(
    batches: &mut Batches,
    w: Waiter,
    outcome: Result<CallToolResult, ErrorObject>,
    deferred: bool,
) {
    match batches.get_mut(&w.who) {
        Some(b) => b.answers.push(CallAnswer {
            session: w.session,
            request: w.request,
            outcome,
            deferred,
        }),
        None => tracing::debug!(who = %w.who, "answer for a participant no longer linked; dropped"),
    }
}

/// The text of a panic payload (`panic!` gives a `&str` or a `String`).
pub(crate) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map_or_else(|| "a non-string panic".to_owned(), |s| (*s).to_owned()),
    }
}

//! One step of an instance's logic: run it with a fresh context (catching a panic), hand
//! what it recorded to the core (`server-core/src/instance_core.rs`: one [`Batch`] per participant
//! principal), keep the record, and carry out the rest: timers, blocking work, messages.

use super::{Batch, Batched, InstanceActor, Waiter};
use crate::author::{CallId, Effect, InstanceContext, Job, ParticipantId};
use crate::core::instance_core::Step;
use crate::panics::panic_message;
use crate::tool::error::ToolResult;
use actix::prelude::*;
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
            self.core.toolset().to_owned(),
            self.shared.now(),
            self.core.take_participants(),
            self.shared.catalog(),
            self.core.waiting().collect(),
        )
        .with_outside(self.waker(), self.core.names().clone());
        let out = panic::catch_unwind(AssertUnwindSafe(|| f(&mut cx)));
        self.core
            .put_participants(std::mem::take(&mut cx.participants));
        match out {
            Ok(r) => Ok((r, std::mem::take(&mut cx.effects))),
            Err(payload) => Err(panic_message(payload)),
        }
    }

    /// Carries out a step's effects as the core reads them. `caller` is the call the step
    /// runs for, and `own` that call with its result when the step answered it.
    /// `requester` is the participant whose principal awaits this step: its batch is
    /// returned instead of sent.
    pub(super) fn dispatch(
        &mut self,
        effects: Vec<Effect>,
        own: Option<(Waiter, ToolResult)>,
        caller: Option<CallId>,
        requester: Option<ParticipantId>,
        ctx: &mut Context<Self>,
    ) -> Option<Batch> {
        let step = self.core.step(effects, own, caller);
        self.carry_out(step, requester, ctx)
    }

    /// The logic panicked: the core ends the instance (`InstanceCore::fail`).
    pub(super) fn fail(
        &mut self,
        panic: &str,
        own: Option<Waiter>,
        requester: Option<ParticipantId>,
        ctx: &mut Context<Self>,
    ) -> Option<Batch> {
        let step = self.core.fail(panic, own);
        self.carry_out(step, requester, ctx)
    }

    fn carry_out(
        &mut self,
        step: Step,
        requester: Option<ParticipantId>,
        ctx: &mut Context<Self>,
    ) -> Option<Batch> {
        let Step {
            mut batches,
            outgoing,
            timers,
            jobs,
        } = step;
        // Not committed before the principals' steps that follow it are promised (issue
        // #42 item 1).
        let _hold = self.shared.hold();
        if self.core.ended().is_some() {
            // Ended: the logic goes, and the instance only answers until unlinked.
            self.logic = None;
        }
        self.post(outgoing, ctx);
        for (after, tag) in timers {
            ctx.run_later(after, move |act, ctx| act.wake(tag, ctx));
        }
        for Job(job) in jobs {
            // Off the arbiter: it wakes the instance when done (`author/work.rs`).
            drop(tokio::task::spawn_blocking(job));
        }
        // Batches for principals elsewhere go from the outbox, kept with the record.
        self.stage(&mut batches, requester, ctx);
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
                self.handed(ticket);
                self.flush_outbox_once(ticket, ctx);
            }
            Err(not_kept) => {
                tracing::debug!(instance = %self.core.id(), "a step that could not be kept is refused");
                self.outbox.clear();
                self.not_handed(&not_kept);
                for b in batches.values_mut() {
                    b.refuse(&not_kept);
                }
            }
        }
    }

    /// Sends each non-empty batch to its principal, except the requester's, returned;
    /// each with the principal's step promised to follow this one (issue #42 item 1).
    fn send(&self, mut batches: Batches, requester: Option<ParticipantId>) -> Option<Batch> {
        let mine = requester.and_then(|r| batches.remove(&r));
        for (who, batch) in batches {
            if !batch.is_empty()
                && let Some(link) = self.core.link(who)
            {
                link.principal.do_send(Batched(batch, self.shared.follow()));
            }
        }
        mine.filter(|b| !b.is_empty())
    }
}

//! Telling the sessions what the core decided, once it is kept: the principal's record is
//! handed to the store before anyone is told (issue #15), what it explains waits in order
//! for its ticket (issue #42 item 1), and each session gets its part as the core splits it
//! (`server-core/src/principal_core/apply.rs`: §4.6, §5.3, §8).

use super::telling::{Telling, Told};
use super::{Deliver, PrincipalActor, ToSession};
use crate::actors::instance::Batched;
use crate::actors::principal::Answer;
use crate::core::InstanceKey;
use crate::core::principal::Versioned;
use crate::core::principal_core::Applied;
use crate::ids::SessionId;
use crate::store::Ticket;
use crate::store::records::NotKept;
use actix::prelude::*;
use std::collections::VecDeque;
use std::sync::Arc;

impl Handler<Batched> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, Batched(batch, follow): Batched, ctx: &mut Context<Self>) {
        let ended = self.core.handle_batch(batch, self.shared.now());
        self.flush(ctx);
        if ended {
            self.maybe_retire(ctx);
        }
        // This principal's step is handed over, or there was none: the instance's may be
        // committed (issue #42 item 1).
        drop(follow);
    }
}

impl PrincipalActor {
    /// Keeps the state, then sends the draft, with what explains it, to every session
    /// (`deliver`) once it is kept — and once the instance's step it comes from is
    /// (`applied.after`).
    ///
    /// Issue #15: the state is kept before anyone is told of it. Issue #42 item 1: the
    /// record is handed to the commit queue and what it explains waits, in order, for its
    /// ticket (`drain`). Issue #37 item 2: what could not be kept is told to no one, the
    /// state goes back to what was kept, and the answers fail.
    pub(super) fn fan_out(
        &mut self,
        about: Option<InstanceKey>,
        applied: Applied,
        ctx: &mut Context<Self>,
    ) {
        let before = self.written_at;
        let after = self.persist().map(|own| own.max(applied.after));
        // Nothing to tell and nothing of its own handed over: nothing to wait for.
        if applied.is_silent() && after.as_ref().is_ok_and(|_| self.written_at == before) {
            return;
        }
        // The state as handed over now: given to the sessions once kept.
        let versioned = self.core.versioned_now();
        if after.is_ok() {
            self.handed = Some(versioned.clone());
        }
        self.push_told(Told::Applied { about, applied }, after, versioned);
        self.drain(ctx);
    }

    /// Runs `read` now when nothing waits to be told, else in its turn after what waits.
    /// **\[project\]** A read never shows a change not kept yet (issue #42 item 1).
    pub(super) fn in_turn(&mut self, read: impl FnOnce(&mut PrincipalActor) + 'static) {
        if self.told.is_empty() {
            self.give_versioned();
            return read(self);
        }
        let versioned = self.handed();
        self.push_told(Told::Read(Box::new(read)), Ok(self.written_at), versioned);
    }

    /// The state as last handed over to the store (what a read waiting behind it may be
    /// given once that is kept), or as last given.
    fn handed(&mut self) -> Arc<Versioned> {
        match &self.handed {
            Some(v) => v.clone(),
            None => self.core.given(),
        }
    }

    fn push_told(
        &mut self,
        told: Told<Self>,
        after: Result<Ticket, NotKept>,
        versioned: Arc<Versioned>,
    ) {
        self.told_seq += 1;
        self.told.push_back(Telling {
            told,
            after,
            seq: self.told_seq,
            versioned,
        });
    }

    /// Sends `deliver` to `session` in its turn ([`PrincipalActor::in_turn`]).
    pub(super) fn deliver_in_turn(&mut self, session: SessionId, deliver: Deliver) {
        self.in_turn(move |act| {
            if let Some(s) = act.sessions.get(&session) {
                s.deliver(ToSession(deliver));
            }
        });
    }

    /// Keeps the state, telling nothing; a record that could not be kept is rolled back
    /// (`drain`).
    pub(super) fn keep_quietly(&mut self, ctx: &mut Context<Self>) {
        self.fan_out(None, Applied::empty(), ctx);
        // A roll-back's unlinks (`durable.rs`).
        self.flush(ctx);
    }

    /// Tells, in order, what waits whose tickets are decided; waits for the first that is
    /// not, the actor going on meanwhile: what it does then waits behind (`in_turn`), and
    /// builds on changes not kept yet, which are all given up together if one is not (the
    /// store gives up every later step with it).
    fn drain(&mut self, ctx: &mut Context<Self>) {
        if self.draining {
            // Its wait is under way, and drains again when it ends.
            return;
        }
        while let Some(first) = self.told.front() {
            let outcome = match &first.after {
                Ok(ticket) => self.shared.outcome(*ticket),
                Err(not_kept) => Some(Err(not_kept.clone())),
            };
            let Some(outcome) = outcome else {
                let ticket = first.after.as_ref().map_or(Ticket::NONE, |t| *t);
                self.draining = true;
                let kept = self
                    .shared
                    .kept(ticket)
                    .into_actor(self)
                    .map(|_, act, ctx| {
                        act.draining = false;
                        act.drain(ctx);
                        // A roll-back's unlinks (`durable.rs`).
                        act.flush(ctx);
                    });
                ctx.spawn(kept);
                return;
            };
            let Some(Telling {
                told,
                after,
                seq,
                versioned,
            }) = self.told.pop_front()
            else {
                return;
            };
            match &outcome {
                Ok(()) => {
                    if let Ok(ticket) = after {
                        self.kept_up_to(ticket);
                    }
                    // Kept: the sessions may now answer modern hosts from it, before it
                    // is told (issue #40); a later step's state waits for its own ticket.
                    self.give(&versioned);
                }
                Err(_) => {
                    // What the state is now is what was kept.
                    self.roll_back();
                    self.handed = None;
                    self.give_current();
                }
            }
            match told {
                Told::Applied { about, mut applied } => {
                    if let Err(not_kept) = &outcome {
                        applied.refuse(not_kept);
                    }
                    self.deliver(about, applied, seq);
                }
                Told::Read(read) => read(self),
            }
        }
        // All told: an idle principal keeps no room for what waits (issue #42); the next
        // change takes it again.
        self.told = VecDeque::new();
        self.give_versioned();
    }

    /// Sends what was kept to every session, each its part (`PrincipalCore::split`).
    fn deliver(&mut self, about: Option<InstanceKey>, applied: Applied, seq: u64) {
        for (id, deliver) in self.core.split(about, applied, seq) {
            if let Some(s) = self.sessions.get(&id) {
                s.deliver(ToSession(deliver));
            }
        }
    }

    /// Answers one request of one session, changing nothing — after what waits to be
    /// told before it, in order.
    pub(super) fn answer(&mut self, session: SessionId, answer: Answer) {
        if !self.told.is_empty() {
            let applied = Applied {
                answers: vec![(session, answer)],
                ..Applied::empty()
            };
            let after = Ok(self.written_at);
            let versioned = self.handed();
            self.push_told(
                Told::Applied {
                    about: None,
                    applied,
                },
                after,
                versioned,
            );
            // Its wait is under way (`drain`).
            return;
        }
        self.give_versioned();
        if let Some(s) = self.sessions.get(&session) {
            s.deliver(ToSession(Deliver {
                about: None,
                draft: crate::core::HintDraft::new(),
                answers: vec![answer],
                events: Vec::new(),
                hold: None,
            }));
        }
    }
}

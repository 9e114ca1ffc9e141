//! An instance kept across restarts (issue #15 **\[project\]**): its record handed to the
//! store after every step, the step's batches carrying its ticket so that nothing of them
//! is told before it is kept (`step.rs`, issue #42 item 1), and an actor made again from
//! it when the server starts (`actors/restore.rs`).

use super::{InstanceActor, Invitee, Link};
use crate::actors::instance::ToPrincipal;
use crate::author::{Logic, ParticipantId, ParticipantKind};
use crate::ids::InstanceId;
use crate::shared::Shared;
use crate::store::Ticket;
use crate::store::records::{
    InstanceRecord, InviteRecord, LogicRecord, NotKept, ParticipantRecord,
};
use actix::prelude::*;
use mcpl_transport::Principal;
use std::collections::BTreeMap;
use std::sync::Arc;

/// How many call ids an instance's record keeps ahead of the next one.
const CALL_ID_BLOCK: u64 = 1024;

impl InstanceActor {
    /// Hands the instance's record to the store, when the server keeps durable state and
    /// it changed; the ticket of the last record handed over, which what this step tells
    /// waits for (issue #42 item 1). Fails when the store was given up (issue #37 item 2):
    /// the record last written stays what this instance was, and the step that changed it
    /// is not acknowledged.
    pub(super) fn persist(&mut self) -> Result<Ticket, NotKept> {
        if self.shared.store.is_none() {
            return Ok(Ticket::NONE);
        }
        let record = self.record();
        match serde_json::to_vec(&record) {
            Ok(bytes) if self.saved.as_deref() != Some(&bytes) => {
                self.written_at = self.shared.write_instance(self.id.0, Some(&bytes))?;
                self.saved = Some(bytes);
            }
            Ok(_) => {}
            Err(e) => {
                tracing::error!(instance = %self.id, error = %e, "an instance's record does not encode");
            }
        }
        Ok(self.written_at)
    }

    fn record(&self) -> InstanceRecord {
        let logic = match (&self.ended, &self.logic) {
            (Some(_), _) | (None, None) => LogicRecord::Gone,
            (None, Some(logic)) => match logic.save() {
                Some(Ok((format, state))) => LogicRecord::Kept { format, state },
                Some(Err(e)) => LogicRecord::Unwritable(e),
                None => LogicRecord::NotKept,
            },
        };
        InstanceRecord {
            toolset: self.toolset.clone(),
            name: self.name.clone(),
            options: self.options.clone(),
            participants: self
                .participants
                .iter()
                .map(ParticipantRecord::of)
                .collect(),
            names: self.names.iter().map(|(w, n)| (w.0, n.clone())).collect(),
            links: self
                .links
                .iter()
                .map(|(w, l)| (w.0, l.key.clone()))
                .collect(),
            invited: self
                .invited
                .iter()
                .filter_map(|(w, i)| {
                    let Principal::Named(principal) = &i.principal else {
                        return None;
                    };
                    Some((
                        w.0,
                        InviteRecord {
                            principal: principal.clone(),
                            reason: i.reason.clone(),
                            options: i.options.clone(),
                        },
                    ))
                })
                .collect(),
            // Ids are kept a block ahead (never one handed out again after a restart), so
            // a call that changes nothing else needs no write: a read is answered even
            // when the store can no longer be written (issue #37 item 2).
            next_call: self.next_call.div_ceil(CALL_ID_BLOCK) * CALL_ID_BLOCK,
            ended: self.ended.clone(),
            logic,
        }
    }

    /// The actor of an instance read back after a restart, with its logic and the links of
    /// the principals that still have it (the others left it). Start it and it resumes.
    pub(crate) fn restored(
        shared: Arc<Shared>,
        router: Recipient<ToPrincipal>,
        id: InstanceId,
        record: InstanceRecord,
        logic: Box<dyn Logic>,
        links: BTreeMap<ParticipantId, Link>,
    ) -> Self {
        let mut actor = InstanceActor::new(shared, router, id, record.toolset);
        actor.name = record.name;
        actor.options = record.options;
        actor.participants = record
            .participants
            .into_iter()
            .enumerate()
            .map(|(i, p)| p.participant(i))
            .collect();
        for p in &mut actor.participants {
            // A principal whose record no longer links here is gone from it.
            if let ParticipantKind::Principal(principal) = &p.kind
                && !links.contains_key(&p.id)
            {
                p.kind = ParticipantKind::Left(principal.clone());
            }
        }
        actor.names = record
            .names
            .into_iter()
            .map(|(w, n)| (ParticipantId(w), n))
            .collect();
        actor.invited = record
            .invited
            .into_iter()
            .filter(|(w, _)| {
                actor
                    .participants
                    .get(*w as usize)
                    .is_some_and(|p| matches!(p.kind, ParticipantKind::Invited(_)))
            })
            .map(|(w, i)| {
                let invitee = Invitee {
                    principal: Principal::Named(i.principal),
                    reason: i.reason,
                    options: i.options,
                };
                (ParticipantId(w), invitee)
            })
            .collect();
        actor.links = links;
        actor.next_call = record.next_call;
        actor.logic = Some(logic);
        actor.resuming = true;
        actor
    }

    /// The first step after a restart: the logic's resume (timers set again), and the
    /// invitations not taken up sent again (pending invitations lived in the principals'
    /// actors).
    pub(super) fn resume(&mut self, ctx: &mut Context<Self>) {
        tracing::info!(instance = %self.id, toolset = %self.toolset, "instance resumed after a restart");
        let invited: Vec<(ParticipantId, Invitee)> =
            self.invited.iter().map(|(w, i)| (*w, i.clone())).collect();
        for (who, invitee) in &invited {
            self.send_invitation(*who, invitee, ctx);
        }
        let Some(mut logic) = self.logic.take() else {
            return;
        };
        match self.run(|cx| logic.resume(cx)) {
            Ok(((), effects)) => {
                self.logic = Some(logic);
                self.dispatch(effects, None, None, None, ctx);
            }
            Err(panic) => {
                self.fail(&panic, None, None, ctx);
            }
        }
    }
}

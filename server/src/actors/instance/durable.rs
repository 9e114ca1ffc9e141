//! An instance kept across restarts (issue #15 **\[project\]**): its record handed to the
//! store after every step, the step's batches carrying its ticket so that nothing of them
//! is told before it is kept (`step.rs`, issue #42 item 1), and an actor made again from
//! it when the server starts (`actors/restore.rs`).

use super::{InstanceActor, Link};
use crate::actors::instance::ToPrincipal;
use crate::author::{Logic, ParticipantId};
use crate::core::instance_core::InstanceCore;
use crate::ids::InstanceId;
use crate::shared::Shared;
use crate::store::Ticket;
use crate::store::records::{InstanceRecord, LogicRecord, NotKept};
use actix::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

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
                self.written_at = self.shared.write_instance(self.core.id().0, Some(&bytes))?;
                self.saved = Some(bytes);
            }
            Ok(_) => {}
            Err(e) => {
                tracing::error!(instance = %self.core.id(), error = %e, "an instance's record does not encode");
            }
        }
        Ok(self.written_at)
    }

    fn record(&self) -> InstanceRecord {
        let logic = match (self.core.ended(), &self.logic) {
            (Some(_), _) | (None, None) => LogicRecord::Gone,
            (None, Some(logic)) => match logic.save() {
                Some(Ok((format, state))) => LogicRecord::Kept { format, state },
                Some(Err(e)) => LogicRecord::Unwritable(e),
                None => LogicRecord::NotKept,
            },
        };
        let mut record = self.core.record(logic);
        record.outbox = self.outbox_records();
        record
    }

    /// The actor of an instance read back after a restart, with its logic and the links of
    /// the principals that still have it (the others left it). Start it and it resumes.
    pub(crate) fn restored(
        shared: Arc<Shared>,
        router: Recipient<ToPrincipal>,
        id: InstanceId,
        mut record: InstanceRecord,
        logic: Box<dyn Logic>,
        links: BTreeMap<ParticipantId, Link>,
    ) -> Self {
        let mut actor = InstanceActor::new(shared, router, id, record.toolset.clone());
        actor.outboxes_read = std::mem::take(&mut record.outbox);
        actor.core = InstanceCore::restored(id, record, links);
        actor.logic = Some(logic);
        actor.resuming = true;
        actor
    }

    /// The first step after a restart: the logic's resume (timers set again), and the
    /// invitations not taken up sent again (pending invitations lived in the principals'
    /// actors).
    pub(super) fn resume(&mut self, ctx: &mut Context<Self>) {
        tracing::info!(instance = %self.core.id(), toolset = %self.core.toolset(), "instance resumed after a restart");
        for o in self.core.invitations() {
            let m = self.to_principal(o, ctx);
            self.router.do_send(m);
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

//! The outbox (issue #41, `docs/ownership.md` §3; its queue and task are
//! `actors/outbox.rs`): a step's batches for participants whose
//! principals run on another server. Each participant's go on one stream, numbered from
//! 1, and are **part of what the step keeps**: put in the outbox before the instance's
//! record is handed to the store, written with it (`InstanceRecord::outbox`), and sent
//! only once it is kept. A task per participant sends them in order, each until it is
//! acknowledged — not acknowledged within the time-out, or nobody serving the principal
//! just now, it is sent again after `remote::RESEND_FIRST` doubling up to `RESEND_MOST` — so
//! a later batch never overtakes an earlier one. An acknowledged batch leaves the outbox,
//! and the record at its next write.
//!
//! **The stream and its numbers belong to the instance's record** **\[project\]**: an
//! instance adopted elsewhere (`Server::adopt_instance`) goes on with the same stream and
//! numbers and sends what its record held again; the principal, which keeps the last
//! number it applied of the stream in its own record (`LinkRecord::heard`), drops what it
//! applied. Nothing lost, nothing told twice.
//!
//! **Bounded** (`peers::PeerBounds`): past the count or bytes held for one participant, the
//! instance ends for that participant **\[project\]** — what was held is dropped, the end
//! (with the reason `peers::OUTBOX_FULL`) is what it is sent next, with the calls whose answers
//! were dropped answered -32603 `{retryable: false, ran: true}`, and the logic hears it
//! leave.

use super::{Batch, CallAnswer, InstanceActor, Leave, PrincipalRef};
use super::{ForPrincipal, ToPrincipal};
use crate::actors::outbox::{Drained, NobodyServes, Outbox};
use crate::author::ParticipantId;
use crate::peers::OUTBOX_FULL;
use crate::store::Follow;
use crate::store::Ticket;
use crate::store::records::{NotKept, OutboxRecord};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject};
use mcpl_transport::Principal;
use std::collections::BTreeMap;

impl Handler<Drained> for InstanceActor {
    type Result = ();

    fn handle(&mut self, _: Drained, ctx: &mut Context<Self>) {
        if self.core.is_unlinked() && !self.is_shell() {
            self.stop_if_unlinked(ctx);
        }
    }
}

impl InstanceActor {
    /// The outboxes read with the instance's record, their tasks started (adopted or read
    /// back: what they hold is sent again).
    pub(super) fn start_outboxes(
        &mut self,
        outbox: BTreeMap<u32, OutboxRecord>,
        ctx: &mut Context<Self>,
    ) {
        if self.shared.peers.is_none() {
            return;
        }
        let id = self.core.id();
        for (who, record) in outbox {
            let me = ctx.address().downgrade().recipient();
            let nobody = self.nobody_serves(&record.principal);
            let outbox = Outbox::start(&self.shared, id, record, me, nobody);
            self.outboxes.insert(ParticipantId(who), outbox);
        }
    }

    /// What an outbox for `name` does when nobody serves it: the registry starts it here.
    fn nobody_serves(&self, name: &str) -> NobodyServes {
        let (router, name) = (self.router.clone(), name.to_owned());
        Box::new(move || {
            router.do_send(ToPrincipal {
                principal: Principal::Named(name.clone()),
                message: ForPrincipal::FirstUse,
            });
        })
    }

    /// The outboxes as kept in the record.
    pub(super) fn outbox_records(&self) -> BTreeMap<u32, OutboxRecord> {
        self.outboxes
            .iter()
            .map(|(who, o)| (who.0, o.record()))
            .collect()
    }

    /// Whether every outbox has sent all it held.
    pub(super) fn outboxes_idle(&self) -> bool {
        self.outboxes.values().all(|o| o.is_idle())
    }

    /// Stops every outbox's task (released: whoever adopts the instance sends them).
    pub(super) fn close_outboxes(&mut self) {
        self.outboxes.clear();
    }

    /// Puts the step's batches for participants whose principals run elsewhere (or
    /// whose outbox still holds batches: in order after them) in their outboxes, before
    /// the record is handed over; they are taken out of `batches`.
    pub(super) fn stage(
        &mut self,
        batches: &mut BTreeMap<ParticipantId, Batch>,
        requester: Option<ParticipantId>,
        ctx: &mut Context<Self>,
    ) {
        if self.shared.peers.is_none() {
            return;
        }
        let ours: Vec<ParticipantId> = batches
            .iter()
            .filter(|(who, b)| Some(**who) != requester && !b.is_empty())
            .filter(|(who, _)| {
                let remote = self
                    .core
                    .link(**who)
                    .is_some_and(|l| matches!(l.principal, PrincipalRef::Remote(_)));
                remote || self.outboxes.get(who).is_some_and(|o| !o.is_idle())
            })
            .map(|(who, _)| *who)
            .collect();
        for who in ours {
            let Some(batch) = batches.remove(&who) else {
                continue;
            };
            self.stage_one(who, batch, ctx);
        }
    }

    fn stage_one(&mut self, who: ParticipantId, batch: Batch, ctx: &mut Context<Self>) {
        let Some(link) = self.core.link(who).cloned() else {
            return;
        };
        let name = match &link.principal {
            PrincipalRef::Remote(r) => r.name().to_owned(),
            PrincipalRef::Local(_) => match self.outboxes.get(&who) {
                Some(o) => o.principal().to_owned(),
                None => return,
            },
        };
        let id = self.core.id();
        if !self.outboxes.contains_key(&who) {
            let me = ctx.address().downgrade().recipient();
            let nobody = self.nobody_serves(&name);
            let record = OutboxRecord {
                principal: name,
                stream: crate::actors::remote::new_stream(),
                sent: 0,
                held: Vec::new(),
            };
            let outbox = Outbox::start(&self.shared, id, record, me, nobody);
            self.outboxes.insert(who, outbox);
        }
        let Some(outbox) = self.outboxes.get_mut(&who) else {
            return;
        };
        if outbox.is_cut() {
            return;
        }
        let value = match serde_json::to_value(&batch) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!(instance = %id, error = %e, "a batch does not encode");
                return;
            }
        };
        if let Err(value) = outbox.stage_within(value, self.shared.peer_bounds) {
            // Too far behind (`peers::PeerBounds`): the instance ends for it.
            tracing::warn!(instance = %id, principal = %outbox.principal(), "an outbox went past its bound: the instance ends for that participant");
            outbox.cut(|mut dropped| {
                dropped.push(value);
                let mut end = Batch::new(id, link.key.clone());
                end.ended = Some(OUTBOX_FULL.to_owned());
                // The calls whose answers it held are answered: they ran, and the
                // instance ended for their caller.
                let error = ErrorObject::new(ErrorCode::INTERNAL_ERROR, OUTBOX_FULL)
                    .with_data(serde_json::json!({"retryable": false, "ran": true}));
                for b in dropped {
                    let Ok(b) = serde_json::from_value::<Batch>(b) else {
                        continue;
                    };
                    for a in b.answers {
                        end.answers.push(CallAnswer {
                            outcome: Err(error.clone()),
                            ..a
                        });
                    }
                }
                serde_json::to_value(&end).ok()
            });
            ctx.notify(Leave {
                who,
                follow: Follow::NONE,
            });
        }
    }

    /// The step's record was handed over under `ticket`: what it staged goes.
    pub(super) fn handed(&mut self, ticket: Ticket) {
        for o in self.outboxes.values_mut() {
            o.handed(ticket);
        }
    }

    /// The step's record could not be handed over: what it staged goes refused (its
    /// calls fail), now.
    pub(super) fn not_handed(&mut self, not_kept: &NotKept) {
        for o in self.outboxes.values_mut() {
            o.refuse_staged(not_kept);
            o.handed(Ticket::NONE);
        }
    }
}

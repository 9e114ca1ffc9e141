//! What principals on other servers say to this instance (issue #41, `docs/ownership.md`
//! §2): while it runs here, it serves its address on the server's peers, and each message
//! arriving is handled as the same message from a principal here would be — a call, a
//! leave, an unlink, an invitation named (numbered: one seen already is acknowledged and
//! dropped), a join, a close, a decline (answered with their reply once the step they ran
//! is kept). A participant reached that way is linked by its name
//! ([`PrincipalRef::Remote`]).

use super::{
    CallIn, CloseInstance, Decline, InstanceActor, InvitationNamed, Join, Leave, Link,
    ParticipantMoved, PrincipalRef, Unlink,
};
use crate::actors::remote::{self, RemotePrincipal};
use crate::author::ParticipantId;
use crate::core::InstanceKey;
use crate::core::batch::Batch;
use crate::core::wire::{Reply, ToInstance};
use crate::peers::{Arrival, PeerAddress};
use crate::store::{Follow, Ticket};
use actix::prelude::*;
use mcpl_transport::Principal;

impl InstanceActor {
    /// Serves this instance's address on the server's peers, when it has some.
    pub(super) fn serve_peers(&mut self, ctx: &mut Context<Self>) {
        let Some(peers) = self.shared.peers.clone() else {
            return;
        };
        let served = |act: &mut Self, ctx: &mut Context<Self>, inbox: crate::peers::Inbox| {
            let (arrivals, closer) = inbox.split();
            if act.released {
                // Released meanwhile: served nowhere here.
                actix::spawn(closer.close());
            } else {
                act.inbox = Some((ctx.add_stream(arrivals), closer));
            }
        };
        // Adopted: its address was claimed before it was made (`registry/owning.rs`).
        if let Some(inbox) = self.claimed.take() {
            return served(self, ctx, inbox);
        }
        let to = PeerAddress::Instance(self.core.id().0);
        remote::serve(self, ctx, peers, to, served);
    }

    /// Serves its address from `inbox`, claimed for it before it was made (issue #41: an
    /// adoption claims the address first, so two servers never both run it).
    pub(crate) fn claimed(mut self, inbox: Option<crate::peers::Inbox>) -> Self {
        self.claimed = inbox;
        self
    }

    /// Stops serving its address (released: it runs elsewhere next); the future resolves
    /// once nothing sent to it reaches this actor any more.
    pub(super) fn unserve_peers(
        &mut self,
        ctx: &mut Context<Self>,
    ) -> impl std::future::Future<Output = ()> + use<> {
        let closer = self.inbox.take().map(|(stream, closer)| {
            ctx.cancel_future(stream);
            closer
        });
        async move {
            if let Some(closer) = closer {
                closer.close().await;
            }
        }
    }

    /// Participant `who`'s link when it is `principal`'s with `key`; otherwise a link to
    /// that principal on its server, for this message's answer.
    fn remote_link(&self, who: ParticipantId, principal: &str, key: InstanceKey) -> Option<Link> {
        if let Some(link) = self.core.link(who).filter(|l| l.key == key) {
            return Some(link.clone());
        }
        let remote = RemotePrincipal::new(&self.shared, principal.to_owned())?;
        Some(Link {
            principal: PrincipalRef::Remote(remote),
            key,
        })
    }

    /// A request (a join, a close, a decline): handled, and answered once what its step
    /// wrote is kept.
    fn requested(&mut self, message: ToInstance, arrival: Arrival, ctx: &mut Context<Self>) {
        let max = remote::max_message(&self.shared);
        let (reply, kept) = match message {
            ToInstance::Join {
                who,
                principal,
                key,
            } => {
                let Some(link) = self.remote_link(who, &principal, key) else {
                    return;
                };
                let join = Join {
                    who,
                    principal: Principal::Named(principal),
                    link,
                };
                let entered =
                    <Self as Handler<Join>>::handle(self, join, ctx).map(|(e, follow)| {
                        drop(follow); // another server's commit follows nothing here (§3)
                        e
                    });
                let kept = entered
                    .as_ref()
                    .ok()
                    .and_then(|e| e.batch.as_ref())
                    .map_or(Ticket::NONE, |b| b.kept);
                (Reply::Entered(entered), kept)
            }
            ToInstance::Close { who } => {
                let MessageResult((closed, follow)) =
                    <Self as Handler<CloseInstance>>::handle(self, CloseInstance { who }, ctx);
                drop(follow);
                let kept = closed.batch.as_ref().map_or(Ticket::NONE, |b| b.kept);
                (Reply::Closed(closed), kept)
            }
            ToInstance::Decline { who, principal } => {
                let principal = Principal::Named(principal);
                <Self as Handler<Decline>>::handle(self, Decline { who, principal }, ctx);
                (Reply::Declined, self.written_at)
            }
            other => {
                tracing::warn!(instance = %self.core.id(), message = ?other, "a one-way message sent as a request is dropped");
                return;
            }
        };
        let kept = self.shared.kept(kept);
        actix::spawn(async move {
            let mut reply = reply;
            let outcome = kept.await;
            let batch: Option<&mut Batch> = match &mut reply {
                Reply::Entered(Ok(e)) => e.batch.as_mut(),
                Reply::Closed(c) => c.batch.as_mut(),
                _ => None,
            };
            if let Some(b) = batch {
                if let Err(not_kept) = &outcome {
                    b.refuse(not_kept);
                }
                b.kept = Ticket::NONE;
            }
            if let Some(bytes) = remote::reply(&reply, max) {
                arrival.respond(bytes);
            }
        });
    }
}

impl Handler<ParticipantMoved> for InstanceActor {
    type Result = bool;

    /// Its principal was released here (`Server::release_principal`): reached by name
    /// from now on. What this instance sent it before is in its mailbox ahead of the
    /// release's end (the principal relinks, then stops); what comes next goes from the
    /// outbox, kept with the record and sent until acknowledged wherever it runs next.
    fn handle(&mut self, m: ParticipantMoved, _: &mut Context<Self>) -> bool {
        let Some(remote) = RemotePrincipal::new(&self.shared, m.name) else {
            return false;
        };
        let moved = self
            .core
            .relink_participant(m.who, PrincipalRef::Remote(remote));
        if moved {
            tracing::debug!(instance = %self.core.id(), who = m.who.0, "a participant's principal was released here: reached by name");
        }
        moved
    }
}

impl StreamHandler<Arrival> for InstanceActor {
    fn handle(&mut self, arrival: Arrival, ctx: &mut Context<Self>) {
        let Some(m) = remote::arrived::<ToInstance>(&arrival, &self.shared, &self.core.id()) else {
            return;
        };
        if m.number == 0 {
            return self.requested(m.message, arrival, ctx);
        }
        let who = match &m.message {
            ToInstance::Call { who, .. }
            | ToInstance::Leave { who }
            | ToInstance::Unlink { who }
            | ToInstance::InvitationNamed { who, .. } => *who,
            other => {
                tracing::warn!(instance = %self.core.id(), message = ?other, "a request sent one-way is dropped");
                return;
            }
        };
        if self.seen.fresh(who, m.stream, m.number) {
            match m.message {
                ToInstance::Call {
                    who,
                    principal,
                    key,
                    session,
                    request,
                    tool,
                    arguments,
                } => {
                    if let Some(link) = self.remote_link(who, &principal, key) {
                        let call = CallIn {
                            who,
                            link,
                            session,
                            request,
                            tool,
                            arguments,
                        };
                        <Self as Handler<CallIn>>::handle(self, call, ctx);
                    }
                }
                ToInstance::Leave { who } => {
                    let follow = Follow::NONE;
                    <Self as Handler<Leave>>::handle(self, Leave { who, follow }, ctx);
                }
                ToInstance::Unlink { who } => {
                    let follow = Follow::NONE;
                    <Self as Handler<Unlink>>::handle(self, Unlink { who, follow }, ctx);
                    self.seen.forget(&who);
                }
                ToInstance::InvitationNamed { who, name } => {
                    let named = InvitationNamed { who, name };
                    <Self as Handler<InvitationNamed>>::handle(self, named, ctx);
                }
                _ => {}
            }
        }
        arrival.respond(remote::ack(m.number));
    }

    /// The inbox ended (the peers went away): the instance goes on for its principals here.
    fn finished(&mut self, _: &mut Context<Self>) {
        self.inbox = None;
    }
}

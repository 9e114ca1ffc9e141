//! Invitations into shared instances (§4.6, §7): the core names them and tells the
//! sessions (`server-core/src/principal_core/invite.rs`); the actor carries the messages, lists them
//! for a tool handler and tells the instance of a decline.

use super::{DeclineInvitation, InstanceRef, ListInvitations, PrincipalActor};
use crate::actors::instance::{Decline, Invitation, InvitationWithdrawn};
use crate::core::InstanceKey;
use crate::core::wire::ToInstance;
use actix::prelude::*;

impl Handler<Invitation> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, inv: Invitation, ctx: &mut Context<Self>) {
        self.core
            .handle_invitation(InstanceRef::Local(inv.instance), inv.id, inv.invite);
        self.flush(ctx);
    }
}

impl Handler<InvitationWithdrawn> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: InvitationWithdrawn, ctx: &mut Context<Self>) {
        self.core.handle_withdrawn(m.id, m.who);
        self.maybe_retire(ctx);
    }
}

impl Handler<ListInvitations> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: ListInvitations, _: &mut Context<Self>) {
        // The handler may have stopped waiting; nothing to do then.
        let _ = m.reply.send(self.core.invitations());
    }
}

impl Handler<DeclineInvitation> for PrincipalActor {
    type Result = ();

    /// The invitation goes at once; the handler is answered once the instance's logic has
    /// heard of it (an instance never awaits a principal, so this cannot deadlock).
    fn handle(&mut self, m: DeclineInvitation, ctx: &mut Context<Self>) {
        let key = InstanceKey {
            toolset: m.toolset,
            instance: m.instance,
        };
        let pending = match self.core.handle_decline(key.clone()) {
            Ok(pending) => pending,
            Err(e) => {
                let _ = m.reply.send(Err(e));
                return;
            }
        };
        let shown = pending.shown(&key);
        let reply = m.reply;
        let heard: std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> = match pending.instance
        {
            InstanceRef::Local(addr) => {
                let decline = Decline {
                    who: pending.who,
                    principal: self.principal.clone(),
                };
                let sent = addr.send(decline);
                Box::pin(async move {
                    let _ = sent.await;
                })
            }
            InstanceRef::Remote(r) => {
                let decline = ToInstance::Decline {
                    who: pending.who,
                    principal: self.principal.name(),
                };
                let asked = r.ask(decline);
                Box::pin(async move {
                    let _ = asked.await;
                })
            }
        };
        ctx.spawn(heard.into_actor(self).map(move |(), act, ctx| {
            // Gone or not, the instance has nothing more to say about it.
            let _ = reply.send(Ok(shown));
            act.maybe_retire(ctx);
        }));
    }
}

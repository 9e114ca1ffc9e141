//! What instances on other servers say to this principal (issue #41,
//! `docs/ownership.md` §2): a named principal serves its address on the server's peers
//! while its actor runs here, and each message arriving is handled as the same message
//! from an instance here would be — a batch (numbered per instance: one seen already is
//! acknowledged and dropped), an invitation, a withdrawal. An instance reached that way is
//! linked by its id ([`InstanceRef::Remote`]).
//!
//! `docs/ownership.md` §3: the last batch applied of each instance's stream is kept in
//! the principal's record (`LinkRecord::heard`, read back in `durable.rs`), and each
//! message is acknowledged only once the record written after it is kept — so a
//! principal read again, here or elsewhere, drops a batch it applied, and one it had not
//! kept comes again.

use super::{InstanceRef, PrincipalActor};
use crate::actors::instance::Batched;
use crate::actors::remote::{self, RemoteInstance};
use crate::core::wire::ToPrincipal;
use crate::ids::InstanceId;
use crate::peers::{Arrival, PeerAddress};
use crate::store::Follow;
use actix::prelude::*;
use mcpl_transport::Principal;

impl PrincipalActor {
    /// Serves this principal's address on the server's peers, when it has some and the
    /// principal is named (an anonymous one never crosses servers, `docs/ownership.md` §1).
    pub(super) fn serve_peers(&mut self, ctx: &mut Context<Self>) {
        let (Some(peers), Principal::Named(name)) = (self.shared.peers.clone(), &self.principal)
        else {
            return;
        };
        let to = PeerAddress::Principal(name.clone());
        remote::serve(self, ctx, peers, to, |act, ctx, inbox| {
            // Served until the actor stops (its arrivals dropped with it), or is released.
            let (arrivals, closer) = inbox.split();
            if act.releasing {
                actix::spawn(closer.close());
            } else {
                act.inbox = Some((ctx.add_stream(arrivals), closer));
            }
        });
    }

    /// Instance `id` on another server, as this principal reaches it: a call that does not
    /// get through is answered here, as the instance would answer it.
    pub(super) fn remote_instance(
        &self,
        id: InstanceId,
        ctx: &mut Context<Self>,
    ) -> Option<RemoteInstance> {
        let me = ctx.address();
        RemoteInstance::new(&self.shared, id, move |batch| {
            me.do_send(Batched(batch, Follow::NONE));
        })
    }
}

/// What a principal's stream from an instance is about, beside the instance: its batches
/// (whose last number applied its record keeps, `LinkRecord::heard`).
pub(super) const BATCHES: u8 = 0;
/// Its invitations and withdrawals (the registry's stream, `registry/elsewhere.rs`).
const INVITATIONS: u8 = 1;

impl StreamHandler<Arrival> for PrincipalActor {
    fn handle(&mut self, arrival: Arrival, ctx: &mut Context<Self>) {
        let Some(m) =
            remote::arrived::<ToPrincipal>(&arrival, &self.shared, &self.principal.name())
        else {
            return;
        };
        let about = match &m.message {
            ToPrincipal::Batched(b) => (b.instance.0, BATCHES),
            ToPrincipal::Invitation { id, .. } | ToPrincipal::InvitationWithdrawn { id, .. } => {
                (id.0, INVITATIONS)
            }
        };
        // Number 0: answers alone, in no stream (`RemotePrincipal::send`); an answer told
        // again finds its call answered.
        if m.number == 0 || self.seen.fresh(about, m.stream, m.number) {
            match m.message {
                ToPrincipal::Batched(batch) => {
                    let batched = Batched(batch, Follow::NONE);
                    <Self as Handler<Batched>>::handle(self, batched, ctx);
                }
                ToPrincipal::Invitation { id, invite } => {
                    if let Some(r) = self.remote_instance(id, ctx) {
                        self.core
                            .handle_invitation(InstanceRef::Remote(r), id, invite.into());
                        self.flush(ctx);
                    }
                }
                ToPrincipal::InvitationWithdrawn { id, who } => {
                    self.core.handle_withdrawn(id, who);
                    self.maybe_retire(ctx);
                }
            }
        }
        // Acknowledged once its record — with the number applied — is kept
        // (`docs/ownership.md` §3): not kept, it is not acknowledged, and comes again.
        let kept = self.shared.kept(self.written_at);
        let number = m.number;
        actix::spawn(async move {
            if kept.await.is_ok() {
                arrival.respond(remote::ack(number));
            }
        });
    }

    /// The inbox ended (the peers went away): the principal goes on for its sessions here.
    fn finished(&mut self, _: &mut Context<Self>) {}
}

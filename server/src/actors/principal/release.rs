//! A principal released (issue #41, `docs/ownership.md` §1, §4; `Server::release_principal`):
//! its actor stops without ending anything, so that its next first use — on another
//! server over the same store, or on this one — reads it from its record and takes it
//! over. Its sessions close (their hosts reconnect, and land where it runs next); its
//! core is not told they went (a last connection's end would end its toolsets).
//!
//! **Its instances here reach it by name from then on** (`ParticipantMoved`): each is
//! relinked, and what it sent before is in this actor's mailbox ahead of the release's
//! second turn ([`Relinked`], sent to itself once every instance answered), so it is
//! applied and kept with the record; what an instance sends after goes from its outbox
//! (kept with its record, sent until acknowledged wherever she runs next: §3). A step a
//! session asked for before it closed runs as any step; an instance it opened meanwhile is
//! relinked in a further turn. Then it stops serving its address, stops taking messages
//! (the actor stops), and the release is answered once every record it handed over is
//! decided: from then on nothing of it is written here, and its record is as last kept.
//!
//! An instance of a toolset it starts anew (a lobby) is left instead (`local_links`).
//!
//! **Without peers** **\[project\]**: a principal linked to an instance running here is
//! not released ([`OwnershipError::PrincipalLinked`]): the instance could reach it nowhere
//! else, and what it told her meanwhile would be lost.

use super::{InstanceRef, PrincipalActor};
use crate::actors::instance::{InstanceActor, Leave, ParticipantMoved};
use crate::author::ParticipantId;
use crate::ids::InstanceId;
use crate::ownership::OwnershipError;
use crate::store::Follow;
use actix::prelude::*;
use std::collections::HashSet;
use tokio::sync::oneshot;

/// Stop this principal's actor without ending anything (see the module docs); answered
/// once nothing more of it is written.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Release {
    pub(crate) reply: oneshot::Sender<Result<(), OwnershipError>>,
}

/// The release's next turn: every instance here relinked `moved` has answered, so what it
/// sent before is handled.
#[derive(Message)]
#[rtype(result = "()")]
struct Relinked {
    reply: oneshot::Sender<Result<(), OwnershipError>>,
    moved: HashSet<InstanceId>,
}

impl PrincipalActor {
    /// Its links to instances running here not in `moved`, with who it is in each — but
    /// those of toolsets it starts anew (a lobby, `Shared::started_anew`), which it
    /// leaves **\[project\]**: they hold nothing of their own, and its next first use,
    /// wherever it is, drops the link and starts one again (`restore::drop_anew`); run on,
    /// they would reach it by name for nothing.
    fn local_links(
        &self,
        moved: &mut HashSet<InstanceId>,
    ) -> Vec<(InstanceId, Addr<InstanceActor>, ParticipantId)> {
        let mut local = Vec::new();
        for (key, l) in self.core.links() {
            let InstanceRef::Local(addr) = &l.addr else {
                continue;
            };
            if moved.contains(&l.id) || !addr.connected() {
                continue;
            }
            if self.shared.started_anew(&key.toolset) {
                moved.insert(l.id);
                addr.do_send(Leave {
                    who: l.who,
                    follow: Follow::NONE,
                });
            } else {
                local.push((l.id, addr.clone(), l.who));
            }
        }
        local
    }

    /// Each instance of `local` reaches this principal by name from now on; once each
    /// answered, the release's next turn (behind what they sent before).
    fn move_links(
        &mut self,
        local: Vec<(InstanceId, Addr<InstanceActor>, ParticipantId)>,
        mut moved: HashSet<InstanceId>,
        reply: oneshot::Sender<Result<(), OwnershipError>>,
        ctx: &mut Context<Self>,
    ) {
        let name = self.principal.name();
        let asked: Vec<_> = local
            .into_iter()
            .map(|(id, addr, who)| {
                moved.insert(id);
                addr.send(ParticipantMoved {
                    who,
                    name: name.clone(),
                })
            })
            .collect();
        let me = ctx.address();
        actix::spawn(async move {
            // An instance gone meanwhile sends nothing more.
            let _ = futures_util::future::join_all(asked).await;
            me.do_send(Relinked { reply, moved });
        });
    }
}

impl Handler<Release> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: Release, ctx: &mut Context<Self>) {
        let linked = self.core.links().iter().find_map(|(key, l)| match &l.addr {
            InstanceRef::Local(addr)
                if addr.connected() && !self.shared.started_anew(&key.toolset) =>
            {
                Some(l.id)
            }
            _ => None,
        });
        if let Some(id) = linked.filter(|_| self.shared.peers.is_none()) {
            let _ = m.reply.send(Err(OwnershipError::PrincipalLinked {
                principal: self.principal.name(),
                instance: id.0,
            }));
            return;
        }
        self.releasing = true;
        let mut moved = HashSet::new();
        let local = self.local_links(&mut moved);
        if let Some(t) = self.retire_timer.take() {
            ctx.cancel_future(t);
        }
        tracing::info!(principal = %self.principal.name(), sessions = self.sessions.len(), "principal released: its sessions close");
        for s in std::mem::take(&mut self.sessions).into_values() {
            s.close();
        }
        self.move_links(local, moved, m.reply, ctx);
    }
}

impl Handler<Relinked> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: Relinked, ctx: &mut Context<Self>) {
        // An instance a step opened here meanwhile: relinked too, then looked at again.
        let mut moved = m.moved;
        let local = self.local_links(&mut moved);
        if !local.is_empty() {
            return self.move_links(local, moved, m.reply, ctx);
        }
        let unserved = self.inbox.take().map(|(stream, closer)| {
            ctx.cancel_future(stream);
            closer
        });
        // Nothing more is handled: the actor stops after this message.
        ctx.stop();
        let kept = self.shared.kept(self.written_at);
        let name = self.principal.name();
        let reply = m.reply;
        actix::spawn(async move {
            if let Some(closer) = unserved {
                closer.close().await;
            }
            let answer = kept.await.map_err(|e| OwnershipError::PrincipalNotKept {
                principal: name.clone(),
                reason: e.0,
            });
            tracing::info!(principal = %name, "principal released");
            let _ = reply.send(answer);
        });
    }
}

//! `toolsets/close` (§4.2): the core resolves it and decides the end
//! (`server-core/src/principal_core/requests.rs`); the actor asks the instance what closing did,
//! awaiting it, and feeds the answer back.

use super::{CloseToolset, InstanceLink, InstanceRef, PrincipalActor, ReplyTo};
use crate::actors::instance::CloseInstance;
use crate::core::InstanceKey;
use crate::core::wire::{Reply, ToInstance};
use actix::prelude::*;

impl Handler<CloseToolset> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: CloseToolset, ctx: &mut Context<Self>) {
        self.core
            .handle_close(m.reply, m.toolset, m.instance, m.retried);
        self.flush(ctx);
    }
}

impl PrincipalActor {
    /// Asks the instance (if linked) what closing did, and feeds it to the core.
    pub(super) fn close_instance(
        &mut self,
        key: InstanceKey,
        reply: ReplyTo,
        link: Option<InstanceLink>,
        ctx: &mut Context<Self>,
    ) {
        match link {
            Some(InstanceLink {
                addr: InstanceRef::Remote(r),
                who,
                ..
            }) => {
                let fut = r.ask(ToInstance::Close { who }).into_actor(self).map(
                    move |res, act, ctx| {
                        let closed = match res {
                            Ok(Reply::Closed(closed)) => Some(closed),
                            Ok(_) => None,
                            Err(e) => {
                                tracing::warn!(%key, error = %e, "a remote instance's close was not answered");
                                None
                            }
                        };
                        act.closed(key, reply, closed, ctx);
                    },
                );
                ctx.wait(fut);
            }
            Some(InstanceLink {
                addr: InstanceRef::Local(addr),
                who,
                ..
            }) => {
                let fut =
                    addr.send(CloseInstance { who })
                        .into_actor(self)
                        .map(move |res, act, ctx| {
                            let (closed, follow) = match res {
                                Ok((closed, follow)) => (Some(closed), follow),
                                Err(_) => (None, crate::store::Follow::NONE),
                            };
                            act.closed(key, reply, closed, ctx);
                            // Handed over (issue #42 item 1).
                            drop(follow);
                        });
                ctx.wait(fut);
            }
            None => self.closed(key, reply, None, ctx),
        }
    }

    fn closed(
        &mut self,
        key: InstanceKey,
        reply: ReplyTo,
        closed: Option<crate::core::batch::Closed>,
        ctx: &mut Context<Self>,
    ) {
        self.core
            .handle_closed(key, reply, closed, self.shared.now());
        self.flush(ctx);
        self.maybe_retire(ctx);
    }
}

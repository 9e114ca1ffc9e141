//! `toolsets/open` (§4.2): the core decides — adopt, start, join, reveal
//! (`server-core/src/principal_core/requests.rs`); the actor starts or joins the instance, awaiting its
//! open, so no request sees an instance whose opening is not settled, and feeds the answer
//! back.

use super::{InstanceLink, InstanceRef, OpenToolset, PrincipalActor, ReplyTo};
use crate::actors::instance::{InstanceActor, Join, Link, PrincipalRef, Start};
use crate::author::{Opening, ParticipantId};
use crate::core::batch::{EnterFailure, Entered};
use crate::core::wire::{Reply, ToInstance};
use crate::core::{HintDraft, InstanceKey};
use crate::ids::InstanceId;
use crate::store::Follow;
use actix::prelude::*;
use serde_json::Value;

impl Handler<OpenToolset> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: OpenToolset, ctx: &mut Context<Self>) {
        self.core
            .handle_open(m.reply, m.toolset, m.instance, m.options, self.shared.now());
        self.flush(ctx);
    }
}

/// An instance's answer to an open or a join, and the step this principal promised to
/// hand over after it: dropped once [`PrincipalActor::entered`] handed it over (issue #42
/// item 1).
fn split(
    res: Result<Result<(Entered, Follow), EnterFailure>, MailboxError>,
) -> (Result<Entered, EnterFailure>, Follow) {
    match res {
        Ok(Ok((entered, follow))) => (Ok(entered), follow),
        Ok(Err(e)) => (Err(e), Follow::NONE),
        Err(_) => (Err(EnterFailure::Internal), Follow::NONE),
    }
}

impl PrincipalActor {
    /// Starts the actor of a new instance (opened in the state already, with `base` saying
    /// so) and awaits its open. `reply` is `None` for an open nobody asked for (default
    /// open, implicit open, §4.1, §8).
    ///
    /// Its id is the next of those at hand; when the block reserved from the store is used
    /// up (issue #41), the next block is reserved off this actor's thread, the actor
    /// waiting, and a reservation that fails starts nothing: the open is taken back and
    /// answered "retry" (`EnterFailure::Unavailable`).
    pub(super) fn start_instance(
        &mut self,
        key: InstanceKey,
        base: HintDraft,
        options: Option<Value>,
        reply: Option<ReplyTo>,
        ctx: &mut Context<Self>,
    ) {
        if let Some(id) = self.shared.next_instance_id() {
            return self.run_instance(id, key, base, options, reply, ctx);
        }
        let shared = self.shared.clone();
        let reserve = tokio::task::spawn_blocking(move || shared.reserve_instance_id());
        let fut = reserve.into_actor(self).map(move |res, act, ctx| {
            let why = match res {
                Ok(Ok(id)) => return act.run_instance(id, key, base, options, reply, ctx),
                Ok(Err(e)) => e.to_string(),
                Err(e) => format!("the reservation stopped: {e}"),
            };
            act.open_refused(key, reply, why, "no instance id could be reserved", ctx);
        });
        ctx.wait(fut);
    }

    /// Starts instance `id`'s actor once the server's start hook lets it (issue #41,
    /// `ServerBuilder::on_instance_start`: a cluster takes its lease there, before its
    /// first write): the actor waits for the hook, as for a block of ids; refused, nothing
    /// starts and the open is answered "retry" (`EnterFailure::Unavailable`).
    fn run_instance(
        &mut self,
        id: InstanceId,
        key: InstanceKey,
        base: HintDraft,
        options: Option<Value>,
        reply: Option<ReplyTo>,
        ctx: &mut Context<Self>,
    ) {
        let Some(hook) = self.shared.start_hook.clone() else {
            return self.start_actor(id, key, base, options, reply, ctx);
        };
        let asked = hook(id.0, crate::InstanceStart::Opened);
        let fut = asked.into_actor(self).map(move |res, act, ctx| match res {
            Ok(()) => act.start_actor(id, key, base, options, reply, ctx),
            Err(refused) => {
                let why = format!(
                    "instance {} may not start on this server now: {refused}",
                    id.0
                );
                act.open_refused(key, reply, why, "the start hook refused an open", ctx);
            }
        });
        ctx.wait(fut);
    }

    /// An open that starts nothing (`what` happened, `why`): taken back and answered
    /// "retry" (`EnterFailure::Unavailable`), logged.
    fn open_refused(
        &mut self,
        key: InstanceKey,
        reply: Option<ReplyTo>,
        why: String,
        what: &str,
        ctx: &mut Context<Self>,
    ) {
        tracing::warn!(%key, why, "{what}: the open is answered retry");
        self.core
            .handle_open_failed(key, reply, EnterFailure::Unavailable(why));
        self.flush(ctx);
    }

    /// Starts instance `id`'s actor (see [`PrincipalActor::start_instance`]).
    fn start_actor(
        &mut self,
        id: InstanceId,
        key: InstanceKey,
        base: HintDraft,
        options: Option<Value>,
        reply: Option<ReplyTo>,
        ctx: &mut Context<Self>,
    ) {
        let addr = InstanceActor::new(
            self.shared.clone(),
            self.registrar.route.clone(),
            id,
            key.toolset.clone(),
        )
        .start();
        self.registrar.running.do_send(super::InstanceStarted {
            id: id.0,
            addr: addr.clone(),
        });
        let who = ParticipantId(0);
        let start = Start {
            logic: self.shared.logic_of(&key.toolset),
            opening: Opening {
                toolset: key.toolset.clone(),
                instance: key.instance.clone(),
                options: options.unwrap_or_else(|| Value::Object(Default::default())),
                opener: who,
                principal: self.principal.clone(),
            },
            link: Link {
                principal: PrincipalRef::Local(ctx.address().recipient()),
                key: key.clone(),
            },
        };
        let instance = InstanceRef::Local(addr.clone());
        let fut = addr.send(start).into_actor(self).map(move |res, act, ctx| {
            let (res, follow) = split(res);
            let link = InstanceLink {
                addr: instance,
                id,
                who,
            };
            act.entered(key, base, reply, link, res, ctx);
            drop(follow);
        });
        ctx.wait(fut);
    }

    /// Joins the instance this principal was invited to, and awaits it.
    pub(super) fn join(
        &mut self,
        key: InstanceKey,
        base: HintDraft,
        reply: ReplyTo,
        link: InstanceLink,
        ctx: &mut Context<Self>,
    ) {
        let addr = match &link.addr {
            InstanceRef::Local(addr) => addr.clone(),
            InstanceRef::Remote(r) => {
                let join = ToInstance::Join {
                    who: link.who,
                    principal: self.principal.name(),
                    key: key.clone(),
                };
                let fut = r.ask(join).into_actor(self).map(move |res, act, ctx| {
                    let res = match res {
                        Ok(Reply::Entered(entered)) => entered,
                        Ok(_) => Err(EnterFailure::Internal),
                        // Nobody owns it now, or it did not answer: worth retrying.
                        Err(e) => Err(EnterFailure::Unavailable(e.to_string())),
                    };
                    act.entered(key, base, Some(reply), link, res, ctx);
                });
                ctx.wait(fut);
                return;
            }
        };
        let join = Join {
            who: link.who,
            principal: self.principal.clone(),
            link: Link {
                principal: PrincipalRef::Local(ctx.address().recipient()),
                key: key.clone(),
            },
        };
        let fut = addr.send(join).into_actor(self).map(move |res, act, ctx| {
            let (res, follow) = split(res);
            act.entered(key, base, Some(reply), link, res, ctx);
            drop(follow);
        });
        ctx.wait(fut);
    }

    /// The instance answered an open or a join.
    fn entered(
        &mut self,
        key: InstanceKey,
        base: HintDraft,
        reply: Option<ReplyTo>,
        link: InstanceLink,
        res: Result<Entered, EnterFailure>,
        ctx: &mut Context<Self>,
    ) {
        self.core
            .handle_entered(key, base, reply, link, res, self.shared.now());
        self.flush(ctx);
    }
}

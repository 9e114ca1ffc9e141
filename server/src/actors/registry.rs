//! The Registry actor: one per server, the only owner of who is connected — each
//! principal's actor (§4.6: started on first use, by a session attaching or an invitation
//! arriving) and the count of live sessions. Sessions, instances and the [`Server`]
//! handle reach it by message; nothing calls back into a lock.
//!
//! **Retiring without a race.** A principal with nothing left tells the registry
//! ([`Idle`]); the registry asks it to [`Retire`] *after* everything it routed to it
//! before, and holds what arrives for that principal until the answer. The principal
//! stops only if it is still idle having seen all of it, so a session attaching or an
//! invitation arriving while it retires either keeps it alive or reaches a fresh actor —
//! by mailbox order, with no counters.
//!
//! What it publishes for readers on any thread (the live session count, the principal
//! count, who is online) it writes alone, into [`Published`].
//!
//! [`Server`]: crate::Server

use crate::actors::instance::{ForPrincipal, Invitation, InvitationWithdrawn, ToPrincipal};
use crate::actors::principal::{
    Attach, Detach, Idle, PrincipalActor, Registrar, Retire, SwapCatalog,
};
use crate::shared::Shared;
use actix::prelude::*;
use mcpl_transport::Principal;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::oneshot;

mod messages;

pub(crate) use messages::{AttachSession, DetachSession, Published};

/// A message held for a retiring principal, in the order it came.
enum Held {
    /// With the arbiter to start the principal's actor on if it had retired meanwhile.
    Attach(Attach, oneshot::Sender<Addr<PrincipalActor>>, ArbiterHandle),
    Detach(Detach),
    Invitation(Invitation),
    Withdrawn(InvitationWithdrawn),
    Swap(SwapCatalog),
}

impl Held {
    /// Whether the message needs the principal's actor even if it had retired.
    fn revives(&self) -> bool {
        matches!(self, Held::Attach(..) | Held::Invitation(_))
    }

    /// Where a principal's actor is started for this message: an attaching session's
    /// arbiter, else the registry's.
    fn arbiter(&self) -> ArbiterHandle {
        match self {
            Held::Attach(_, _, arbiter) => arbiter.clone(),
            _ => Arbiter::current(),
        }
    }
}

struct Entry {
    addr: Addr<PrincipalActor>,
    generation: u64,
    /// Asked to retire: what arrives for it meanwhile waits for the answer.
    retiring: Option<Vec<Held>>,
}

impl Entry {
    /// Hands `m` to the actor, or holds it while the actor is asked to retire.
    fn send(&mut self, m: Held) {
        match &mut self.retiring {
            Some(held) => held.push(m),
            None => deliver(&self.addr, m),
        }
    }
}

/// See the module docs.
pub(crate) struct Registry {
    shared: Arc<Shared>,
    published: Arc<Published>,
    principals: HashMap<Principal, Entry>,
    /// Live sessions per principal, for who is online.
    sessions: HashMap<Principal, usize>,
    live: usize,
    next_generation: u64,
    me: Option<Addr<Registry>>,
}

impl Registry {
    pub(crate) fn new(shared: Arc<Shared>, published: Arc<Published>) -> Self {
        Registry {
            shared,
            published,
            principals: HashMap::new(),
            sessions: HashMap::new(),
            live: 0,
            next_generation: 0,
            me: None,
        }
    }

    /// The principal's entry, its actor started on `arbiter` if it has none.
    fn entry(&mut self, principal: &Principal, arbiter: &ArbiterHandle) -> &mut Entry {
        if !self.principals.contains_key(principal) {
            let entry = self.start(principal, arbiter);
            self.principals.insert(principal.clone(), entry);
            self.published
                .principals
                .store(self.principals.len(), Ordering::Relaxed);
        }
        self.principals
            .get_mut(principal)
            .expect("inserted just above")
    }

    fn start(&mut self, principal: &Principal, arbiter: &ArbiterHandle) -> Entry {
        self.next_generation += 1;
        let generation = self.next_generation;
        let me = self.me.clone().expect("set when the registry started");
        let registrar = Registrar {
            idle: me.clone().recipient(),
            route: me.recipient(),
        };
        let (shared, p) = (self.shared.clone(), principal.clone());
        let addr = PrincipalActor::start_in_arbiter(arbiter, move |_| {
            PrincipalActor::new(shared, registrar, generation, p)
        });
        Entry {
            addr,
            generation,
            retiring: None,
        }
    }

    /// Routes `m` to the principal's actor (starting one if `revives`), or holds it while
    /// the actor is asked to retire.
    fn route(&mut self, principal: &Principal, m: Held) {
        if !m.revives() && !self.principals.contains_key(principal) {
            return; // a detach or withdrawal for an actor that is gone: nothing to tell
        }
        let arbiter = m.arbiter();
        self.entry(principal, &arbiter).send(m);
    }

    /// The principal's answer to [`Retire`] (`Err`: its actor is gone anyway).
    fn retired(&mut self, principal: Principal, generation: u64, stopped: bool) {
        let Some(entry) = self.principals.get_mut(&principal) else {
            return;
        };
        if entry.generation != generation {
            return;
        }
        let held = entry.retiring.take().unwrap_or_default();
        if !stopped {
            for m in held {
                deliver(&entry.addr, m);
            }
            return;
        }
        self.principals.remove(&principal);
        self.published
            .principals
            .store(self.principals.len(), Ordering::Relaxed);
        if held.iter().any(Held::revives) {
            // A fresh actor reads the current catalog: a held swap is already in it.
            for m in held.into_iter().filter(|m| !matches!(m, Held::Swap(_))) {
                self.route(&principal, m);
            }
        }
    }

    /// Issue #15: the principals (and their instances) the store kept come back before any
    /// session attaches (`actors/restore.rs`).
    fn restore(&mut self, ctx: &mut Context<Self>) {
        let loaded = self
            .shared
            .loaded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let Some(loaded) = loaded else { return };
        let me = ctx.address();
        let registrar = || Registrar {
            idle: me.clone().recipient(),
            route: me.clone().recipient(),
        };
        let mut generation = self.next_generation;
        let restored = crate::actors::restore::restore(
            &self.shared,
            loaded,
            registrar,
            me.clone().recipient(),
            || {
                generation += 1;
                generation
            },
        );
        self.next_generation = generation;
        *self
            .published
            .restored
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(restored.counts.clone());
        for r in restored.principals {
            let entry = Entry {
                addr: r.addr,
                generation: r.generation,
                retiring: None,
            };
            self.principals.insert(r.principal, entry);
        }
        self.published
            .principals
            .store(self.principals.len(), Ordering::Relaxed);
    }

    fn publish_sessions(&self) {
        self.published.sessions.send_replace(self.live);
        let mut online: Vec<Principal> = self
            .sessions
            .keys()
            .filter(|p| matches!(p, Principal::Named(_)))
            .cloned()
            .collect();
        online.sort();
        self.published.online.send_if_modified(|o| {
            let changed = *o != online;
            if changed {
                *o = online;
            }
            changed
        });
    }
}

/// Hands a routed message to the principal's actor.
fn deliver(addr: &Addr<PrincipalActor>, m: Held) {
    match m {
        Held::Attach(a, reply, _) => {
            addr.do_send(a);
            let _ = reply.send(addr.clone());
        }
        Held::Detach(d) => addr.do_send(d),
        Held::Invitation(i) => addr.do_send(i),
        Held::Withdrawn(w) => addr.do_send(w),
        Held::Swap(s) => addr.do_send(s),
    }
}

impl Actor for Registry {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.me = Some(ctx.address());
        self.restore(ctx);
    }
}

impl Handler<AttachSession> for Registry {
    type Result = ResponseFuture<Option<Addr<PrincipalActor>>>;

    fn handle(&mut self, m: AttachSession, _: &mut Context<Self>) -> Self::Result {
        self.live += 1;
        *self.sessions.entry(m.principal.clone()).or_default() += 1;
        self.publish_sessions();
        let (tx, rx) = oneshot::channel();
        let attach = Attach { id: m.id, to: m.to };
        self.route(&m.principal, Held::Attach(attach, tx, m.arbiter));
        Box::pin(async move { rx.await.ok() })
    }
}

impl Handler<DetachSession> for Registry {
    type Result = ();

    fn handle(&mut self, m: DetachSession, _: &mut Context<Self>) {
        self.live = self.live.saturating_sub(1);
        if let Some(n) = self.sessions.get_mut(&m.principal) {
            *n -= 1;
            if *n == 0 {
                self.sessions.remove(&m.principal);
            }
        }
        // A table that grew for a burst of sessions gives the memory back once most have
        // gone (issue #13: an expired session's memory is returned).
        if self.sessions.capacity() > 64 && self.sessions.len() * 4 < self.sessions.capacity() {
            self.sessions.shrink_to(self.sessions.len() * 2);
        }
        self.publish_sessions();
        self.route(&m.principal, Held::Detach(Detach { id: m.id }));
    }
}

impl Handler<ToPrincipal> for Registry {
    type Result = ();

    fn handle(&mut self, m: ToPrincipal, _: &mut Context<Self>) {
        let held = match m.message {
            ForPrincipal::Invitation(i) => Held::Invitation(i),
            ForPrincipal::Withdrawn(w) => Held::Withdrawn(w),
        };
        self.route(&m.principal, held);
    }
}

impl Handler<Idle> for Registry {
    type Result = ();

    fn handle(&mut self, m: Idle, ctx: &mut Context<Self>) {
        let Some(entry) = self.principals.get_mut(&m.principal) else {
            return;
        };
        if entry.generation != m.generation || entry.retiring.is_some() {
            return;
        }
        entry.retiring = Some(Vec::new());
        let (principal, generation) = (m.principal, m.generation);
        ctx.spawn(
            entry
                .addr
                .send(Retire)
                .into_actor(self)
                .map(move |answer, act, _| {
                    act.retired(principal, generation, answer.unwrap_or(true))
                }),
        );
    }
}

impl Handler<SwapCatalog> for Registry {
    type Result = ();

    /// The manifest was replaced: every principal follows the new catalog.
    fn handle(&mut self, SwapCatalog(catalog): SwapCatalog, _: &mut Context<Self>) {
        for entry in self.principals.values_mut() {
            entry.send(Held::Swap(SwapCatalog(catalog.clone())));
        }
    }
}

#[cfg(test)]
mod tests;

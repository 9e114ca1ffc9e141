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
//! **Read on first use** (issue #41). On a server with a store, a named principal without
//! an actor is read from the store first (`restore::fetch`, off the actors' threads):
//! what arrives for it meanwhile waits in `loading`, in order, so first uses at once read
//! it once (at most [`WAITING_INVITATIONS`](crate::WAITING_INVITATIONS) invitations, past which one is declined on
//! its behalf). A read that fails refuses the sessions waiting (their hosts may try again)
//! and keeps invitations for the next read — after 1 s, doubling after each failure in a
//! row up to 30 s ([`READ_AGAIN_MAX`]), or at once when a session attaches; no actor ever starts from nothing over a
//! record it could not read. **Bounded** **\[project\]**: a principal read stays while it
//! has sessions, instances, invitations or ended records not expired (the retirement rule
//! above, `PrincipalConfig::ended_ttl`, an hour by default), as every principal restored
//! at a start did before — so the principals resident are those in use or used within
//! that time, not every principal the store holds.
//!
//! **A principal's takeover** (issue #41, `docs/ownership.md` §4). On a server with peers,
//! a principal read links to its live instances not running here by reference, never
//! ending them (`restore::revive`); once it runs, each of those nobody serves is adopted
//! here, off this mailbox (`owning.rs`, `Registry::adopt_unserved`): nothing waits for
//! the probes, neither the principal's requests nor other principals' reads.
//!
//! **A principal released** (issue #41, `releasing.rs`): its actor stops without ending
//! anything, what arrives for it meanwhile waiting as for a principal retiring.
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

mod elsewhere;
mod messages;
mod owning;
mod placing;
mod releasing;

pub(crate) use elsewhere::Elsewhere;
pub(crate) use placing::Placing;

use messages::FetchedFor;
pub(crate) use messages::{AttachError, AttachSession, DetachSession, Published};
pub(crate) use owning::{AdoptInstance, ReleaseInstance, RunningInstances};
pub(crate) use releasing::ReleasePrincipal;

/// How long a principal whose record could not be read waits before it is read again,
/// while invitations wait for it, after its first failed read **\[project\]** (a session
/// attaching is told at once, and its host tries again). Each failed read in a row doubles
/// it, up to [`READ_AGAIN_MAX`] ([`read_again_after`]).
const READ_AGAIN: std::time::Duration = std::time::Duration::from_secs(1);

/// The longest wait between reads of a principal whose record cannot be read while
/// invitations wait for it **\[project\]**: a store that stays down is asked at most
/// this often per principal, and an invitation is never dropped — it reaches its
/// principal at most this long after the store can be read again (a session attaching
/// meanwhile has the principal read at once).
const READ_AGAIN_MAX: std::time::Duration = std::time::Duration::from_secs(30);

/// The wait before reading again a principal whose last `failed` reads in a row failed:
/// 1 s, 2 s, 4 s, … up to [`READ_AGAIN_MAX`].
fn read_again_after(failed: u32) -> std::time::Duration {
    let doublings = failed.saturating_sub(1).min(16);
    READ_AGAIN
        .saturating_mul(1u32 << doublings)
        .min(READ_AGAIN_MAX)
}

/// A message held for a retiring principal, in the order it came.
enum Held {
    /// With the arbiter to start the principal's actor on if it had retired meanwhile.
    Attach(
        Attach,
        oneshot::Sender<Result<Addr<PrincipalActor>, AttachError>>,
        ArbiterHandle,
    ),
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
    /// Principals whose record is being read for their first use (issue #41), with what
    /// arrived for them meanwhile, in order: one read each, however many wait.
    loading: HashMap<Principal, Vec<Held>>,
    /// Principals of `loading` whose reads failed, with how many in a row.
    failed_reads: HashMap<Principal, u32>,
    /// Principals of `loading` waiting to be read again (no read under way), each with the
    /// token of the read scheduled: a read made sooner (a session attaching) voids it.
    backing_off: HashMap<Principal, u64>,
    /// The next token of a scheduled read.
    next_read: u64,
    /// The instances running, by id: those the start resumed, those principals started
    /// and those adopted (issue #41, `owning.rs`). A principal read later links to those
    /// still running (`restore::revive`).
    running: HashMap<u64, Addr<crate::actors::instance::InstanceActor>>,
    /// Principals run on another server with invitations or withdrawals in flight to
    /// them (issue #41, `elsewhere.rs`): what comes for them meanwhile goes after.
    elsewhere: HashMap<Principal, Elsewhere>,
    /// Principals brought here by an invitation or an outbox, asked about of the
    /// server's placement (issue #41, `placing.rs`), with what waits for them.
    placing: HashMap<Principal, Placing>,
    /// How many placements in a row said each principal runs elsewhere (or nobody
    /// could say), for the pause before the next try.
    placed_away: HashMap<Principal, u32>,
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
            loading: HashMap::new(),
            failed_reads: HashMap::new(),
            backing_off: HashMap::new(),
            next_read: 0,
            running: HashMap::new(),
            elsewhere: HashMap::new(),
            placing: HashMap::new(),
            placed_away: HashMap::new(),
            sessions: HashMap::new(),
            live: 0,
            next_generation: 0,
            me: None,
        }
    }

    /// The principal's entry, its actor started on `arbiter` if it has none.
    fn entry(&mut self, principal: &Principal, arbiter: &ArbiterHandle) -> &mut Entry {
        if !self.principals.contains_key(principal) {
            let entry = self.start(principal, arbiter, None);
            self.principals.insert(principal.clone(), entry);
            self.published
                .principals
                .store(self.principals.len(), Ordering::Relaxed);
        }
        self.principals
            .get_mut(principal)
            .expect("inserted just above")
    }

    /// Starts the principal's actor on `arbiter`: as read back (`revived`), or new.
    fn start(
        &mut self,
        principal: &Principal,
        arbiter: &ArbiterHandle,
        revived: Option<crate::actors::restore::Revived>,
    ) -> Entry {
        self.next_generation += 1;
        let generation = self.next_generation;
        let me = self.me.clone().expect("set when the registry started");
        let registrar = Registrar {
            idle: me.clone().recipient(),
            route: me.clone().recipient(),
            running: me.recipient(),
        };
        let (shared, p) = (self.shared.clone(), principal.clone());
        let elsewhere = revived.as_ref().map(|r| r.elsewhere.clone());
        let addr = PrincipalActor::start_in_arbiter(arbiter, move |ctx| match revived {
            Some(r) => {
                let links = crate::actors::restore::links_of(&shared, r.links, ctx);
                PrincipalActor::restored(shared, registrar, generation, p, r.state, links, r.kept)
            }
            None => PrincipalActor::new(shared, registrar, generation, p),
        });
        // Linked by reference to instances not running here (issue #41): those nobody
        // serves are adopted here (`owning.rs`).
        if let Some(ids) = elsewhere.filter(|ids| !ids.is_empty()) {
            self.adopt_unserved(ids);
        }
        Entry {
            addr,
            generation,
            retiring: None,
        }
    }

    /// Routes `m` to the principal's actor (starting one if `revives`), or holds it while
    /// the actor is asked to retire — or, an invitation or a withdrawal for a principal
    /// this server does not run, to the server that runs it (`elsewhere.rs`).
    fn route(&mut self, principal: &Principal, m: Held) {
        if self.goes_elsewhere(principal, &m) {
            return self.send_elsewhere(principal, m);
        }
        self.route_here(principal, m);
    }

    /// Routes `m` to the principal's actor here (see [`Registry::route`]).
    fn route_here(&mut self, principal: &Principal, m: Held) {
        if self.placing.contains_key(principal) {
            return self.while_placing(principal, m);
        }
        if let Some(held) = self.loading.get_mut(principal) {
            let attaching = matches!(m, Held::Attach(..));
            // Its record is being read: after it, in order, within the bound of what
            // waits for a principal (`placing.rs`).
            Self::waits(held, principal, m);
            // Waiting to read it again after a failure: a session attaching has it read
            // now, rather than after the backoff (its host waits for the answer).
            if attaching && self.backing_off.remove(principal).is_some() {
                self.fetch(principal.clone());
            }
            return;
        }
        if !m.revives() && !self.principals.contains_key(principal) {
            return; // a detach or withdrawal for an actor that is gone: nothing to tell
        }
        if !self.principals.contains_key(principal) && self.reads(principal) {
            // Brought here by an invitation: placed first, when a cluster places them.
            if !matches!(m, Held::Attach(..)) && self.shared.placement.is_some() {
                return self.place(principal.clone(), Some(m));
            }
            self.loading.insert(principal.clone(), vec![m]);
            self.fetch(principal.clone());
            return;
        }
        let arbiter = m.arbiter();
        self.entry(principal, &arbiter).send(m);
    }

    /// Whether a principal without an actor is read from the store first (issue #41
    /// **\[project\]**): a named one, on a server that keeps durable state. The start read
    /// only the principals its instances need (`restore::read_start`); any other may have
    /// a record (ended records, tombstones, its version), read on its first use — a
    /// session attaching or an invitation naming it — before anything reaches it.
    fn reads(&self, principal: &Principal) -> bool {
        self.shared.store.is_some() && matches!(principal, Principal::Named(_))
    }

    /// Reads `principal`'s record off the actors' threads, once every step handed to the
    /// store before is decided (an earlier actor of it may have just forgotten its
    /// record); the answer comes back as [`FetchedFor`].
    fn fetch(&mut self, principal: Principal) {
        let (Principal::Named(name), Some(store), Some(me)) =
            (&principal, self.shared.store.clone(), self.me.clone())
        else {
            return;
        };
        self.running.retain(|_, addr| addr.connected());
        let running: std::collections::HashSet<u64> = self.running.keys().copied().collect();
        let settled = self.shared.settled();
        let name = name.clone();
        actix::spawn(async move {
            settled.await;
            let location = store.location();
            let read = tokio::task::spawn_blocking(move || {
                crate::actors::restore::fetch(&*store, &name, &running)
            })
            .await
            .unwrap_or_else(|e| {
                Err(crate::store::StoreError::Io {
                    path: location.into(),
                    detail: format!("reading a principal's record failed: {e}"),
                })
            });
            me.do_send(FetchedFor { principal, read });
        });
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
            running: me.clone().recipient(),
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
        self.running = restored.instances;
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

    /// Publishes the session count, and `principal` online or not as it now has sessions
    /// or none (named principals only: anonymous ones share a name).
    fn publish_sessions(&self, principal: &Principal) {
        self.published.sessions.send_replace(self.live);
        if !matches!(principal, Principal::Named(_)) {
            return;
        }
        let mut online = self
            .published
            .online
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.sessions.contains_key(principal) {
            if !online.contains(principal) {
                online.insert(principal.clone());
            }
        } else {
            online.remove(principal);
        }
    }
}

/// Hands a routed message to the principal's actor.
fn deliver(addr: &Addr<PrincipalActor>, m: Held) {
    match m {
        Held::Attach(a, reply, _) => {
            addr.do_send(a);
            let _ = reply.send(Ok(addr.clone()));
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

impl Handler<FetchedFor> for Registry {
    type Result = ();

    /// A principal's record was read (issue #41): its actor starts from it, and what
    /// waited for it goes to it in order. A read that failed tells each session waiting to
    /// attach why (its host may try again) and loses nothing: no actor starts from
    /// nothing over the record, and invitations wait for the next read.
    fn handle(&mut self, m: FetchedFor, ctx: &mut Context<Self>) {
        let Some(held) = self.loading.remove(&m.principal) else {
            return;
        };
        let principal = m.principal;
        self.backing_off.remove(&principal);
        match m.read {
            Ok(fetched) => {
                self.failed_reads.remove(&principal);
                let name = principal.name();
                let revived =
                    crate::actors::restore::revive(&self.shared, &name, fetched, &self.running);
                let arbiter = held
                    .iter()
                    .find(|h| h.revives())
                    .map_or_else(Arbiter::current, Held::arbiter);
                let mut entry = self.start(&principal, &arbiter, revived);
                for h in held {
                    entry.send(h);
                }
                self.principals.insert(principal, entry);
                self.published
                    .principals
                    .store(self.principals.len(), Ordering::Relaxed);
            }
            Err(e) => {
                let location = self.shared.store_location();
                tracing::warn!(
                    store = %location, principal = %principal.name(), error = %e,
                    "a principal's record cannot be read; its sessions are refused, and \
                     invitations for it wait"
                );
                let waiting: Vec<Held> = held
                    .into_iter()
                    .filter_map(|h| match h {
                        Held::Attach(_, reply, _) => {
                            let _ = reply.send(Err(AttachError::Unreadable(e.to_string())));
                            None
                        }
                        Held::Invitation(_) | Held::Withdrawn(_) => Some(h),
                        Held::Detach(_) | Held::Swap(_) => None,
                    })
                    .collect();
                if waiting.iter().any(Held::revives) {
                    let failed = self.failed_reads.entry(principal.clone()).or_default();
                    *failed += 1;
                    let after = read_again_after(*failed);
                    self.loading.insert(principal.clone(), waiting);
                    self.next_read += 1;
                    let token = self.next_read;
                    self.backing_off.insert(principal.clone(), token);
                    ctx.run_later(after, move |act, _| {
                        // Unless it was read sooner (a session attaching).
                        if act.backing_off.get(&principal) == Some(&token) {
                            act.backing_off.remove(&principal);
                            act.fetch(principal);
                        }
                    });
                } else {
                    self.failed_reads.remove(&principal);
                }
            }
        }
    }
}

impl Handler<AttachSession> for Registry {
    type Result = ResponseFuture<Result<Addr<PrincipalActor>, AttachError>>;

    fn handle(&mut self, m: AttachSession, _: &mut Context<Self>) -> Self::Result {
        self.live += 1;
        *self.sessions.entry(m.principal.clone()).or_default() += 1;
        self.publish_sessions(&m.principal);
        let (tx, rx) = oneshot::channel();
        let attach = Attach { id: m.id, to: m.to };
        self.route(&m.principal, Held::Attach(attach, tx, m.arbiter));
        Box::pin(async move { rx.await.unwrap_or(Err(AttachError::Gone)) })
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
        self.publish_sessions(&m.principal);
        self.route(&m.principal, Held::Detach(Detach { id: m.id }));
    }
}

impl Handler<ToPrincipal> for Registry {
    type Result = ();

    fn handle(&mut self, m: ToPrincipal, _: &mut Context<Self>) {
        let held = match m.message {
            ForPrincipal::Invitation(i) => Held::Invitation(i),
            ForPrincipal::Withdrawn(w) => Held::Withdrawn(w),
            ForPrincipal::FirstUse => return self.first_use(&m.principal),
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

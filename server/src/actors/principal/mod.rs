//! The Principal actor: one per principal, driving its [`PrincipalCore`] — which holds the
//! principal's `PrincipalState` and decides every rule of the RFC about it
//! (`server-core/src/principal_core.rs`) — and carrying out what the core asks: messages to its
//! sessions and instances, instances started, joined and closed (awaited), its record in
//! the store.
//!
//! | file | what |
//! |---|---|
//! | `messages.rs` | what sessions and the principal say to each other |
//! | `sessions.rs` | sessions attaching, detaching, initialized, ready, fed to the core |
//! | `open.rs` | `toolsets/open` fed to the core; starting or joining an instance, awaited |
//! | `close.rs` | `toolsets/close` fed to the core; asking the instance what closing did, awaited |
//! | `call.rs` | `tools/call` fed to the core; forwarding a call to its instance |
//! | `fanout.rs` | an instance's batch fed to the core; what it tells, sent to the sessions once kept |
//! | `telling.rs` | what waits to be told, in order, until its records are kept |
//! | `invite.rs` | invitations fed to the core; listing and declining them for a tool handler |
//! | `durable.rs` | its record in the store, written before what changed it is delivered; read back at a restart (issue #15) |
//! | `remote.rs` | what instances on other servers say to it, through the server's peers (issue #41) |
//! | `release.rs` | stopped without ending anything, to run elsewhere next (issue #41, `Server::release_principal`) |
//!
//! **Toolsets belong to the principal** (§4.6): the state lives here, not in a session, and
//! every draft the core returns goes to every session, each numbering it on its own
//! counter. A principal without sessions keeps its instances (unless the server was built
//! not to keep them, or it is anonymous and can never come back) and its ended records
//! until they expire; then it retires from the server's registry (`actors/registry.rs`),
//! which asks it last, so nothing routed to it meanwhile is lost.

mod call;
mod close;
mod durable;
mod fanout;
mod invite;
pub(crate) mod messages;
mod open;
mod release;
mod remote;
mod sessions;
mod telling;

pub(crate) use messages::*;
pub(crate) use release::Release;

use crate::actors::instance::{Leave, Unlink};
use crate::core::PrincipalState;
use crate::core::principal_core::{Output, PrincipalCore, Retirement};
use crate::core::wire::ToInstance;
use crate::ids::SessionId;
use crate::shared::Shared;
use crate::store::Ticket;
use crate::store::parts::{Delta, Ledger, Stored};
use actix::prelude::*;
use mcpl_transport::Principal;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

pub use crate::core::principal_core::{REASON_CLOSED, REASON_DISCONNECTED};

/// This principal's record of an instance, as the instance knows it.
pub(crate) type InstanceLink = crate::core::principal_core::InstanceLink<InstanceRef>;

/// One principal. See the module docs.
pub(crate) struct PrincipalActor {
    shared: Arc<Shared>,
    registrar: Registrar,
    /// Tells this actor from an earlier one of the same principal, for the registry.
    generation: u64,
    principal: Principal,
    /// The principal's rules: what it decides, the actor carries out (`server-core/src/principal_core.rs`).
    core: PrincipalCore<InstanceRef>,
    /// How each session is reached. Boxed: a map's node holds room for eleven, and a
    /// session's addresses are 80 bytes (issue #42: ~0.7 KiB of an idle principal).
    sessions: BTreeMap<SessionId, SessionAddr>,
    retire_timer: Option<SpawnHandle>,
    /// The record last kept in the store (issue #15), core and parts, what a change that
    /// could not be kept goes back to; `None` until one was.
    saved: Option<Stored>,
    /// `saved` is the record as read back after a restart, not written since: a change
    /// not kept leaves the state as it is (`durable.rs`).
    saved_as_read: bool,
    /// What was last handed to the store of the record, part by part, so that a step
    /// writes only the parts that changed (issue #42 item 1), and the ticket of the last
    /// step that wrote any in the commit queue.
    written: Ledger,
    written_at: Ticket,
    /// The changes handed over and not known to be kept yet, with their tickets: `saved`
    /// moves on by each as it is.
    unkept: VecDeque<(Ticket, Delta)>,
    /// A change the store refused before taking it (given up): rolled back with the rest
    /// (`durable.rs`).
    refused: bool,
    /// The stamped state as last handed over to the store (`fanout.rs`).
    handed: Option<std::sync::Arc<crate::core::principal::Versioned>>,
    /// What waits to be told until the records it depends on are kept, in order
    /// (`fanout.rs`).
    told: VecDeque<telling::Telling<PrincipalActor>>,
    /// Waiting for the first of `told` to be decided.
    draining: bool,
    /// How many were ever put in `told`: the number of the last.
    told_seq: u64,
    /// The last message applied of each instance's stream from another server (issue
    /// #41, `remote.rs`), by instance and kind (0: batches, 1: invitations).
    seen: crate::actors::remote::Seen<(u64, u8)>,
    /// Its address served on the server's peers (issue #41, `remote.rs`): the stream of
    /// arrivals and what stops serving it, for a release (`release.rs`).
    inbox: Option<(SpawnHandle, crate::peers::Closer)>,
    /// Being released (issue #41, `release.rs`): it takes no new session, and stops once
    /// its instances here reach it by name.
    releasing: bool,
}

impl PrincipalActor {
    /// What a principal has before anything happened to it.
    fn fresh_state(shared: &Shared) -> PrincipalState {
        PrincipalState::new(
            shared.catalog(),
            shared.principal_config.clone(),
            shared.ended_ids.clone(),
            shared.now(),
        )
    }

    pub(crate) fn new(
        shared: Arc<Shared>,
        registrar: Registrar,
        generation: u64,
        principal: Principal,
    ) -> Self {
        let state = Self::fresh_state(&shared);
        let anonymous = matches!(principal, Principal::Anonymous(_));
        let core = PrincipalCore::new(state, anonymous, shared.keep_toolsets, BTreeMap::new())
            .with_idle_end(shared.idle_end);
        PrincipalActor {
            shared,
            registrar,
            generation,
            principal,
            core,
            sessions: BTreeMap::new(),
            retire_timer: None,
            saved: None,
            saved_as_read: false,
            written: Ledger::default(),
            written_at: Ticket::NONE,
            unkept: VecDeque::new(),
            refused: false,
            handed: None,
            told: VecDeque::new(),
            draining: false,
            told_seq: 0,
            seen: Default::default(),
            inbox: None,
            releasing: false,
        }
    }

    /// Does what the core asked for, in order (`server-core/src/principal_core.rs`, `Output`).
    fn flush(&mut self, ctx: &mut Context<Self>) {
        // What this hands over is not committed before the instances' steps that follow
        // it (an unlink's, a leave's) are promised (issue #42 item 1).
        let _hold = self.shared.hold();
        while let Some(output) = self.core.poll() {
            match output {
                Output::Tell { about, applied } => self.fan_out(about, applied, ctx),
                Output::Answer { session, answer } => self.answer(session, answer),
                Output::Deliver { session, deliver } => self.deliver_in_turn(session, deliver),
                Output::Swapped { catalog, draft } => self.in_turn(move |act| {
                    for s in act.sessions.values() {
                        s.swapped(CatalogSwapped {
                            catalog: catalog.clone(),
                            draft: draft.clone(),
                        });
                    }
                }),
                Output::Start {
                    key,
                    base,
                    options,
                    reply,
                } => self.start_instance(key, base, options, reply, ctx),
                Output::Join {
                    key,
                    base,
                    reply,
                    link,
                } => self.join(key, base, reply, link, ctx),
                Output::Close { key, reply, link } => self.close_instance(key, reply, link, ctx),
                // The instance writes next: its step follows this one's (issue #42).
                Output::Leave(link) => match link.addr {
                    InstanceRef::Local(addr) => addr.do_send(Leave {
                        who: link.who,
                        follow: self.shared.follow(),
                    }),
                    InstanceRef::Remote(r) => r.tell(ToInstance::Leave { who: link.who }),
                },
                Output::Unlink(link) => match link.addr {
                    InstanceRef::Local(addr) => addr.do_send(Unlink {
                        who: link.who,
                        follow: self.shared.follow(),
                    }),
                    InstanceRef::Remote(r) => r.tell(ToInstance::Unlink { who: link.who }),
                },
                Output::Call {
                    link,
                    key,
                    session,
                    request,
                    tool,
                    arguments,
                } => self.call_instance(link, key, session, request, tool, arguments, ctx),
                Output::Named { addr, who, name } => match addr {
                    InstanceRef::Local(addr) => {
                        addr.do_send(crate::actors::instance::InvitationNamed { who, name });
                    }
                    InstanceRef::Remote(r) => r.tell(ToInstance::InvitationNamed { who, name }),
                },
            }
        }
        // What waits for the store is given when kept (`drain`), never before.
        self.give_versioned();
    }

    /// Whether what the core holds is kept the moment it changes: the server keeps no
    /// store, or this principal's record is never kept (anonymous).
    pub(super) fn kept_at_once(&self) -> bool {
        self.shared.store.is_none() || !matches!(self.principal, Principal::Named(_))
    }

    /// Every change the principal made takes its next version; the sessions answer modern
    /// hosts from the stamped state (issue #40), so each is given it when it changed —
    /// before anything it answers is sent to it. With a store, a state is given only once
    /// kept (`drain`, with the state taken when its step was handed over: [`Self::give`]):
    /// never one the store may yet refuse (issue #41, found by `sim --nodes 3` with a
    /// PostgreSQL restart: a close told on a hints stream, then rolled back).
    pub(super) fn give_versioned(&mut self) {
        if self.kept_at_once() {
            self.give_current();
        }
    }

    /// Gives every session the state as the core holds it now, when it changed: only when
    /// it is kept (`kept_at_once`, or just rolled back to what was).
    pub(super) fn give_current(&mut self) {
        if let Some(v) = self.core.versioned_if_changed() {
            for s in self.sessions.values() {
                s.versioned(VersionedFor(v.clone()));
            }
        }
    }

    /// Gives every session `v`, a state taken when its step was handed to the store, now
    /// kept — when it is newer than what they were last given.
    pub(super) fn give(&mut self, v: &std::sync::Arc<crate::core::principal::Versioned>) {
        if self.core.give(v) {
            for s in self.sessions.values() {
                s.versioned(VersionedFor(v.clone()));
            }
        }
    }

    /// Tells the registry when nothing is left of this principal (it then asks the actor
    /// to [`Retire`]). Otherwise, without sessions, looks again when the next record
    /// expires.
    fn maybe_retire(&mut self, ctx: &mut Context<Self>) {
        // Nobody is told anything here; what could not be kept is rolled back.
        self.keep_quietly(ctx);
        if !self.core.is_detached() {
            return;
        }
        if let Some(t) = self.retire_timer.take() {
            ctx.cancel_future(t);
        }
        let now = self.shared.now();
        match self.core.retirement(now) {
            Retirement::Stay => {}
            Retirement::Idle => self.registrar.idle.do_send(Idle {
                principal: self.principal.clone(),
                generation: self.generation,
            }),
            Retirement::At(at) => {
                let wait = at.duration_since(now).unwrap_or_default();
                self.retire_timer = Some(ctx.run_later(wait, |act, ctx| {
                    // An idle principal's toolsets may be due to end (profile §3.6, S13).
                    act.core.handle_timeout(act.shared.now());
                    act.flush(ctx);
                    act.maybe_retire(ctx);
                }));
            }
        }
    }
}

impl Actor for PrincipalActor {
    type Context = Context<Self>;

    /// A principal read back after a restart links to its instances already; the others
    /// read back start here.
    fn started(&mut self, ctx: &mut Context<Self>) {
        tracing::debug!(principal = %self.principal.name(), "principal started");
        self.serve_peers(ctx);
        for key in self.core.unlinked_instances() {
            self.start_instance(key, Default::default(), None, None, ctx);
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        tracing::debug!(principal = %self.principal.name(), "principal stopped");
    }
}

impl Handler<Retire> for PrincipalActor {
    type Result = bool;

    /// Everything the registry routed here before this has been handled: if nothing came
    /// back to life, the actor stops and the registry forgets it.
    fn handle(&mut self, _: Retire, ctx: &mut Context<Self>) -> bool {
        let idle = self.core.retirement(self.shared.now()) == Retirement::Idle;
        if idle {
            tracing::debug!(principal = %self.principal.name(), "principal retired");
            self.forget();
            ctx.stop();
        }
        idle
    }
}

impl Handler<Relink> for PrincipalActor {
    type Result = Option<(crate::core::InstanceKey, crate::author::ParticipantId)>;

    /// Issue #41: an instance it links to was adopted, and runs behind another address.
    fn handle(&mut self, m: Relink, ctx: &mut Context<Self>) -> Self::Result {
        let to = match m.addr {
            Some(addr) => InstanceRef::Local(addr),
            None => InstanceRef::Remote(self.remote_instance(m.id, ctx)?),
        };
        self.core.relink(m.id, to)
    }
}

impl Handler<ListTools> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: ListTools, _: &mut Context<Self>) {
        // After the changes waiting to be told, of the state they leave (issue #42).
        self.in_turn(move |act| {
            if let Some(s) = act.sessions.get(&m.session) {
                let (catalog, visible) = act.core.tools_view();
                s.tools(ToolsView {
                    request: m.request,
                    cursor: m.cursor,
                    catalog,
                    visible,
                });
            }
        });
    }
}

impl Handler<ListToolsets> for PrincipalActor {
    type Result = ();

    /// §4.3: the full statement, ended records included until they expire.
    fn handle(&mut self, m: ListToolsets, _: &mut Context<Self>) {
        self.in_turn(move |act| {
            let statement = act.core.statement(act.shared.now());
            if let Some(s) = act.sessions.get(&m.session) {
                s.statement(StatementFor {
                    request: m.request,
                    statement,
                });
            }
        });
    }
}

impl Handler<SwapCatalog> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, SwapCatalog(catalog): SwapCatalog, ctx: &mut Context<Self>) {
        self.core.handle_swap_catalog(catalog, self.shared.now());
        self.flush(ctx);
        self.maybe_retire(ctx);
    }
}

//! The Principal actor: one per principal, owning its [`PrincipalState`] and fanning every
//! change out to each of the principal's sessions (§4.6).
//!
//! | file | what |
//! |---|---|
//! | `messages.rs` | what sessions and the principal say to each other |
//! | `open_reply.rs` | what an open came to, as a host's result, a handler's `Opened` or a plain host's text |
//! | `sessions.rs` | sessions attaching, detaching, initialized, ready |
//! | `open.rs` | `toolsets/open`: adopt, start an instance, join one it was invited to |
//! | `close.rs` | `toolsets/close`, and ends the principal decides (last connection, manifest) |
//! | `call.rs` | `tools/call`: where a call goes (§4.5, §8) |
//! | `fanout.rs` | applying an instance's batch to the state; sending drafts to sessions |
//! | `invite.rs` | invitations into shared instances |
//! | `durable.rs` | its record in the store, written before what changed it is delivered; read back at a restart (issue #15) |
//!
//! **Toolsets belong to the principal** (§4.6): the state lives here, not in a session, and
//! every draft the state returns goes to every session, each numbering it on its own
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
mod open_reply;
mod sessions;

pub(crate) use messages::*;

use crate::actors::instance::InstanceActor;
use crate::author::ParticipantId;
use crate::core::{InstanceKey, OpenOutcome, PrincipalState};
use crate::ids::InstanceId;
use crate::ids::SessionId;
use crate::shared::Shared;
use crate::store::Ticket;
use actix::prelude::*;
use invite::Pending;
use mcpl_transport::Principal;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// The reason of an end when the principal's last connection closed on a server that does
/// not keep toolsets (§4.6).
pub const REASON_DISCONNECTED: &str = "every connection of the principal closed";
/// The reason of an end the host asked for (`toolsets/close`).
pub const REASON_CLOSED: &str = "closed";

struct SessionLink {
    to: SessionAddr,
    /// Its host finished the handshake: invitations may go to it.
    ready: bool,
    /// Its host did not advertise `toolHints` (§8): it uses the implicit opens.
    plain: bool,
    /// The number of what was waiting to be told when it attached (`told_seq`): that was
    /// before its time, and is not told to it (issue #42 item 1).
    since: u64,
}

/// This principal's record of an instance, as the instance knows it.
pub(crate) struct InstanceLink {
    pub(crate) addr: Addr<InstanceActor>,
    pub(crate) id: InstanceId,
    pub(crate) who: ParticipantId,
}

/// One principal. See the module docs.
pub(crate) struct PrincipalActor {
    shared: Arc<Shared>,
    registrar: Registrar,
    /// Tells this actor from an earlier one of the same principal, for the registry.
    generation: u64,
    principal: Principal,
    state: PrincipalState,
    sessions: BTreeMap<SessionId, SessionLink>,
    links: BTreeMap<InstanceKey, InstanceLink>,
    invitations: BTreeMap<InstanceKey, Pending>,
    retire_timer: Option<SpawnHandle>,
    /// The instance this principal is closing on its own request, while the logic's
    /// answer is applied: its end leaves no ended record (§4.3, `close.rs`).
    closing: Option<InstanceKey>,
    /// The record last kept in the store (issue #15), what a change that could not be
    /// kept goes back to; `None` until one was.
    saved: Option<Vec<u8>>,
    /// The record last handed to the store, so an unchanged one is not written again, and
    /// its ticket in the commit queue (issue #42 item 1).
    written: Option<Vec<u8>>,
    written_at: Ticket,
    /// The records handed over and not known to be kept yet, with their tickets: `saved`
    /// moves on to each as it is.
    unkept: VecDeque<(Ticket, Vec<u8>)>,
    /// What waits to be told until the records it depends on are kept, in order
    /// (`fanout.rs`).
    told: VecDeque<fanout::Telling>,
    /// Waiting for the first of `told` to be decided.
    draining: bool,
    /// How many were ever put in `told`: the number of the last.
    told_seq: u64,
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
        PrincipalActor {
            shared,
            registrar,
            generation,
            principal,
            state,
            sessions: BTreeMap::new(),
            links: BTreeMap::new(),
            invitations: BTreeMap::new(),
            retire_timer: None,
            closing: None,
            saved: None,
            written: None,
            written_at: Ticket::NONE,
            unkept: VecDeque::new(),
            told: VecDeque::new(),
            draining: false,
            told_seq: 0,
        }
    }

    /// True when nothing is left of this principal: no session, nothing open, no
    /// invitation, no ended record to report (an anonymous principal's records can never
    /// be read again).
    fn idle(&mut self) -> bool {
        if !self.sessions.is_empty() {
            return false;
        }
        self.state.expire(self.shared.now());
        self.state.instances().next().is_none()
            && self.invitations.is_empty()
            && (matches!(self.principal, Principal::Anonymous(_))
                || self.state.ended_records().next().is_none())
    }

    /// Tells the registry when nothing is left of this principal (it then asks the actor
    /// to [`Retire`]). Otherwise, without sessions, looks again when the next record
    /// expires.
    fn maybe_retire(&mut self, ctx: &mut Context<Self>) {
        // Nobody is told anything here; what could not be kept is rolled back.
        self.keep_quietly(ctx);
        if !self.sessions.is_empty() {
            return;
        }
        if let Some(t) = self.retire_timer.take() {
            ctx.cancel_future(t);
        }
        if self.idle() {
            self.registrar.idle.do_send(Idle {
                principal: self.principal.clone(),
                generation: self.generation,
            });
            return;
        }
        if self.state.instances().next().is_some() || !self.invitations.is_empty() {
            return;
        }
        let now = self.shared.now();
        if let Some(at) = self.state.next_expiry() {
            let wait = at.duration_since(now).unwrap_or_default();
            self.retire_timer = Some(ctx.run_later(wait, |act, ctx| act.maybe_retire(ctx)));
        }
    }
}

impl PrincipalActor {
    /// §4.1: `default: "open"` toolsets are open from the start of every session — again
    /// after the principal's last connection ended them, or after the host closed one (and
    /// one a plain host kept open implicitly is everyone's again, §8).
    fn open_defaults(&mut self, ctx: &mut Context<Self>) {
        let catalog = self.state.catalog().clone();
        for ts in catalog.default_open() {
            match self.state.open(ts, None, None, self.shared.now()) {
                Ok(OpenOutcome::Opened(o)) => self.start_instance(o.key, o.draft, None, None, ctx),
                Ok(OpenOutcome::Revealed(o)) => {
                    let applied = fanout::Applied {
                        draft: o.draft,
                        ..fanout::Applied::empty()
                    };
                    self.fan_out(Some(o.key), applied, ctx);
                }
                Ok(OpenOutcome::Adopted { .. }) | Err(_) => {}
            }
        }
    }
}

impl Actor for PrincipalActor {
    type Context = Context<Self>;

    /// §4.1, vector 25: the default-open toolsets are open from the start; their logic
    /// runs before anything else is served.
    fn started(&mut self, ctx: &mut Context<Self>) {
        tracing::debug!(principal = %self.principal.name(), "principal started");
        // A principal read back after a restart links to its instances already.
        let keys: Vec<InstanceKey> = self
            .state
            .instances()
            .map(|i| i.key().clone())
            .filter(|k| !self.links.contains_key(k))
            .collect();
        for key in keys {
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
        let idle = self.idle();
        if idle {
            tracing::debug!(principal = %self.principal.name(), "principal retired");
            self.forget();
            ctx.stop();
        }
        idle
    }
}

impl Handler<ListTools> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: ListTools, _: &mut Context<Self>) {
        // After the changes waiting to be told, of the state they leave (issue #42).
        self.in_turn(move |act| {
            if let Some(s) = act.sessions.get(&m.session) {
                s.to.tools.do_send(ToolsView {
                    request: m.request,
                    cursor: m.cursor,
                    catalog: act.state.catalog().clone(),
                    visible: act.state.coarse_visibility(),
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
            let now = act.shared.now();
            act.state.expire(now);
            if let Some(s) = act.sessions.get(&m.session) {
                s.to.statement.do_send(StatementFor {
                    request: m.request,
                    statement: act.state.statement(now),
                });
            }
        });
    }
}

impl Handler<SwapCatalog> for PrincipalActor {
    type Result = ();

    /// §4.1: a removed toolset's instances end (vector 33); a new default-open one opens.
    fn handle(&mut self, SwapCatalog(catalog): SwapCatalog, ctx: &mut Context<Self>) {
        let swap = self
            .state
            .replace_catalog(catalog.clone(), self.shared.now());
        for e in &swap.ended {
            self.leave(e.instance.key());
        }
        let (swapped, draft) = (catalog.clone(), swap.draft.clone());
        self.in_turn(move |act| {
            for s in act.sessions.values() {
                s.to.swapped.do_send(CatalogSwapped {
                    catalog: swapped.clone(),
                    draft: draft.clone(),
                });
            }
        });
        for o in swap.opened {
            // Their open entries went with the swap's draft; the logic's changes follow.
            self.start_instance(o.key, Default::default(), None, None, ctx);
        }
        if !catalog.tool_hints() && !self.sessions.is_empty() {
            // A catalog without toolHints: every host is a plain one now (§8).
            for s in self.sessions.values_mut() {
                s.plain = true;
            }
            self.implicit_opens(ctx);
        } else {
            self.reopen_for_plain_hosts(ctx);
        }
        self.maybe_retire(ctx);
    }
}

//! The Instance actor: one per open instance, running the toolset's logic (a game) for its
//! participants, and driving its [`InstanceCore`](crate::core::instance_core), which
//! decides every rule of the RFC about it.
//!
//! Each handler runs one **step** of the logic — an open, a join, a call, a close, a
//! timer or a wake, an invitation delivered or declined — with a fresh [`InstanceContext`],
//! then hands the effects it recorded to the core, which turns them into one [`Batch`] per
//! participant principal (its record's changes, its events, answers to its calls, the end)
//! and the invitations to send. The actor keeps the record, sets the timers, runs the
//! blocking work, and sends: the principal that awaits the step (an open, a join, a close)
//! gets its batch in the reply; the others get theirs as messages. Bots and invited
//! principals get nothing.
//!
//! A panic in the logic is caught here: the instance ends with the reason
//! [`INTERNAL_ERROR`] for every participant, the calls it owed are answered with -32603, and
//! the rest of the server goes on.
//!
//! **Lifetime.** The actor lives while some principal links to it: a principal unlinks by
//! closing, leaving, or applying the instance's end. So a call forwarded just before the end
//! still finds the actor and is answered ("it has ended").
//!
//! | file | what |
//! |---|---|
//! | `messages.rs` | what a principal and an instance say to each other |
//! | `step.rs` | running one step of the logic and carrying out what the core made of it |
//! | `entering.rs` | the opener's start and an invited principal's join |
//! | `ending.rs` | a close, a leave, an unlink, a timer's wake |
//! | `invitations.rs` | an invitation named or declined by its principal |
//! | `durable.rs` | its record in the store; read back at a restart (issue #15) |
//! | `outbox.rs` | its batches for principals on other servers, kept with its record and sent until acknowledged (issue #41) |
//! | `release.rs` | released to run elsewhere, without ending (issue #41): a shell meanwhile |
//! | `remote.rs` | what principals on other servers say to it, through the server's peers (issue #41) |

mod durable;
mod ending;
mod entering;
use ending::answer_alone;
mod invitations;
mod messages;
mod outbox;
mod release;
mod remote;
mod step;

pub(crate) use messages::Call as CallIn;
pub(crate) use messages::{
    Batch, Batched, CallAnswer, CloseInstance, Closed, Decline, EnterFailure, Entered,
    ForPrincipal, Invitation, InvitationNamed, InvitationWithdrawn, Join, Leave, Link,
    ParticipantMoved, PrincipalRef, Start, ToPrincipal, Unlink,
};

pub(crate) use release::Release;

pub use crate::core::instance_core::INTERNAL_ERROR;

use crate::author::{CallId, InstanceWaker, Logic, Reply, ToolCall};
use crate::core::instance_core::{InstanceCore, Outgoing, Waiter};
use crate::ids::InstanceId;
use crate::shared::Shared;
use crate::store::Ticket;
use actix::WeakAddr;
use actix::prelude::*;
use mcpl_protocol::mcp::CallToolResult;
use std::collections::VecDeque;
use std::sync::Arc;

#[cfg(doc)]
use crate::author::InstanceContext;

/// One open instance. See the module docs.
pub(crate) struct InstanceActor {
    shared: Arc<Shared>,
    /// Where invitations go: the registry, which reaches principals without an actor.
    router: Recipient<ToPrincipal>,
    /// The instance's rules (`server-core/src/instance_core.rs`).
    core: InstanceCore<PrincipalRef>,
    /// The toolset's logic; gone once the instance ended.
    logic: Option<Box<dyn Logic>>,
    /// This actor, for the wakers its logic hands out.
    me: Option<WeakAddr<InstanceActor>>,
    /// The record last handed to the store (issue #15), so an unchanged one is not
    /// written again.
    saved: Option<Vec<u8>>,
    /// Its ticket in the commit queue (issue #42 item 1): every batch carries it, so a
    /// principal tells nothing of this instance before its state is kept.
    written_at: Ticket,
    /// Read back after a restart: the logic's resume step runs first (`durable.rs`).
    resuming: bool,
    /// Invitations sent and withdrawn by the step running, sent once it is kept (issue
    /// #37 item 2: a step that could not be kept invites no one; issue #42 item 1: once
    /// its ticket is).
    outbox: Vec<ToPrincipal>,
    /// Steps' invitations and withdrawals waiting for their ticket, in order.
    sending: VecDeque<(Ticket, Vec<ToPrincipal>)>,
    /// Waiting for the first of `sending` to be decided.
    sending_waits: bool,
    /// Released (issue #41, `release.rs`): it takes no step, and answers calls "retry".
    released: bool,
    /// What principals on other servers send it, while it serves its address there
    /// (issue #41, `remote.rs`).
    inbox: Option<(SpawnHandle, crate::peers::Closer)>,
    /// Its address, claimed on the server's peers before it was made (issue #41: an
    /// adoption claims it first, `registry/owning.rs`): served from this inbox.
    claimed: Option<crate::peers::Inbox>,
    /// The last message applied of each participant's stream from another server.
    seen: crate::actors::remote::Seen<crate::author::ParticipantId>,
    /// Per participant whose principal runs elsewhere: the batches not acknowledged
    /// (issue #41, `outbox.rs`).
    outboxes:
        std::collections::BTreeMap<crate::author::ParticipantId, crate::actors::outbox::Outbox>,
    /// The outboxes its record held, started with the actor (adopted or read back).
    outboxes_read: std::collections::BTreeMap<u32, crate::store::records::OutboxRecord>,
}

impl InstanceActor {
    pub(crate) fn new(
        shared: Arc<Shared>,
        router: Recipient<ToPrincipal>,
        id: InstanceId,
        toolset: String,
    ) -> Self {
        InstanceActor {
            shared,
            router,
            core: InstanceCore::new(id, toolset),
            logic: None,
            me: None,
            saved: None,
            written_at: Ticket::NONE,
            resuming: false,
            outbox: Vec::new(),
            sending: VecDeque::new(),
            sending_waits: false,
            released: false,
            inbox: None,
            claimed: None,
            seen: Default::default(),
            outboxes: Default::default(),
            outboxes_read: Default::default(),
        }
    }

    /// A waker for this instance.
    fn waker(&self) -> InstanceWaker {
        InstanceWaker {
            to: self.me.clone().map(WeakAddr::recipient),
        }
    }

    /// Stops once no principal links here any more.
    fn stop_if_unlinked(&mut self, ctx: &mut Context<Self>) {
        // What its outboxes hold is still owed (issue #41): it stops once they drained
        // (`outbox::Drained`), as it lives while a principal links to it.
        if self.core.is_unlinked() && self.outboxes_idle() {
            let withdrawn = self.core.withdraw_all();
            self.post(withdrawn, ctx);
            // The withdrawals go whatever becomes of the forgetting (a record left behind
            // has no link, and is forgotten after a restart), after what waited.
            self.send_all();
            self.flush_outbox();
            let _ = self.shared.write_instance(self.core.id().0, None);
            ctx.stop();
        } else {
            // Nobody is told of a participant leaving; what could not be kept here is
            // refused with the next step (`step.rs`).
            let _ = self.persist();
        }
    }

    /// Puts the core's messages for other principals in the outbox.
    fn post(&mut self, outgoing: Vec<Outgoing>, ctx: &mut Context<Self>) {
        for o in outgoing {
            let m = self.to_principal(o, ctx);
            self.outbox.push(m);
        }
    }

    /// A message of the core as the registry routes it.
    fn to_principal(&self, o: Outgoing, ctx: &mut Context<Self>) -> ToPrincipal {
        let id = self.core.id();
        match o {
            Outgoing::Invite { to, invite } => ToPrincipal {
                principal: to,
                message: ForPrincipal::Invitation(Invitation {
                    instance: ctx.address(),
                    id,
                    invite,
                }),
            },
            Outgoing::Withdraw { to, who } => ToPrincipal {
                principal: to,
                message: ForPrincipal::Withdrawn(InvitationWithdrawn { id, who }),
            },
        }
    }

    /// Sends the invitations and withdrawals of a step that was kept.
    fn flush_outbox(&mut self) {
        for m in self.outbox.drain(..) {
            self.router.do_send(m);
        }
    }

    /// Sends the step's invitations and withdrawals once `ticket` is kept (at once when it
    /// is already), or never when it is not (issue #37 item 2); in the order of the steps.
    /// The actor goes on meanwhile (issue #42 item 1).
    fn flush_outbox_once(&mut self, ticket: Ticket, ctx: &mut Context<Self>) {
        if self.outbox.is_empty() {
            return;
        }
        let step = std::mem::take(&mut self.outbox);
        self.sending.push_back((ticket, step));
        self.send_kept(ctx);
    }

    /// Sends what `sending` holds whose step is kept, in order, dropping what was not;
    /// waits (without blocking the actor) for the first not yet decided.
    fn send_kept(&mut self, ctx: &mut Context<Self>) {
        if self.sending_waits {
            return;
        }
        while let Some((ticket, _)) = self.sending.front() {
            let Some(outcome) = self.shared.outcome(*ticket) else {
                let kept = self.shared.kept(*ticket);
                self.sending_waits = true;
                ctx.spawn(kept.into_actor(self).map(|_, act, ctx| {
                    act.sending_waits = false;
                    act.send_kept(ctx);
                }));
                return;
            };
            if let Some((_, messages)) = self.sending.pop_front()
                && outcome.is_ok()
            {
                for m in messages {
                    self.router.do_send(m);
                }
            }
        }
    }

    /// The actor stops: what waits in `sending` goes now, but for what is known not kept
    /// (an invitation whose step is not decided yet is withdrawn right after it).
    fn send_all(&mut self) {
        for (ticket, messages) in std::mem::take(&mut self.sending) {
            if !matches!(self.shared.outcome(ticket), Some(Err(_))) {
                for m in messages {
                    self.router.do_send(m);
                }
            }
        }
    }

    /// A participant leaves: the core answers the calls it still waits on into `batch`;
    /// the logic goes if nobody is left to play for.
    fn remove(&mut self, who: crate::author::ParticipantId, batch: &mut Batch) {
        if self.core.remove(who, batch) {
            self.logic = None;
        }
    }
}

impl Actor for InstanceActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.me = Some(ctx.address().downgrade());
        tracing::debug!(instance = %self.core.id(), toolset = %self.core.toolset(), "instance started");
        self.serve_peers(ctx);
        let read = std::mem::take(&mut self.outboxes_read);
        self.start_outboxes(read, ctx);
        if std::mem::take(&mut self.resuming) {
            self.resume(ctx);
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        tracing::debug!(instance = %self.core.id(), toolset = %self.core.toolset(), "instance stopped");
    }
}

impl Handler<CallIn> for InstanceActor {
    type Result = ();

    fn handle(&mut self, m: CallIn, ctx: &mut Context<Self>) {
        let waiter = Waiter::new(m.who, m.session, m.request);
        if self.is_shell() {
            return self.refuse_in_shell(&m.link, waiter);
        }
        let logic = match self.core.admit_call(m.who) {
            Err(text) => Err(text),
            Ok(()) => self
                .logic
                .take()
                .ok_or_else(|| format!("{} has ended", self.core.toolset())),
        };
        let mut logic = match logic {
            Ok(logic) => logic,
            Err(text) => {
                return answer_alone(&m.link, self.core.id(), waiter, CallToolResult::error(text));
            }
        };
        let id: CallId = self.core.begin_call(waiter.clone());
        let call = ToolCall {
            id,
            tool: m.tool,
            arguments: m.arguments,
            caller: m.who,
        };
        let routes = self.shared.routes_of(self.core.toolset());
        match self.run(|cx| routes.dispatch(&mut *logic, call, cx)) {
            Ok((reply, effects)) => {
                self.logic = Some(logic);
                let own = match reply {
                    Reply::Now(result) => self.core.end_call(id).map(|w| (w, result)),
                    Reply::Later => None,
                };
                self.dispatch(effects, own, Some(id), None, ctx);
            }
            Err(panic) => {
                self.core.end_call(id);
                self.fail(&panic, Some(waiter), None, ctx);
            }
        }
    }
}

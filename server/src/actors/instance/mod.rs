//! The Instance actor: one per open instance, running the toolset's logic (a game) for its
//! participants.
//!
//! Each handler runs one **step** of the logic — an open, a join, a call, a close, a
//! timer or a wake, an invitation delivered or declined — with a fresh [`InstanceContext`], then turns the effects it recorded into one
//! [`Batch`] per participant principal (its record's changes, its events, answers to its
//! calls, the end). The principal that awaits the step (an open, a join, a close) gets its
//! batch in the reply; the others get theirs as messages. Bots and invited principals get
//! nothing.
//!
//! A panic in the logic is caught here: the instance ends with the reason
//! [`INTERNAL_ERROR`] for every participant, the calls it owed are answered with -32603, and
//! the rest of the server goes on.
//!
//! **Lifetime.** The actor lives while some principal links to it: a principal unlinks by
//! closing, leaving, or applying the instance's end. So a call forwarded just before the end
//! still finds the actor and is answered ("it has ended").

mod durable;
mod ending;
mod entering;
use ending::answer_alone;
mod invitations;
mod messages;
mod step;

pub(crate) use messages::Call as CallIn;
pub(crate) use messages::{
    Batch, CallAnswer, Change, CloseInstance, Closed, Decline, EnterFailure, Entered, ForPrincipal,
    Invitation, InvitationNamed, InvitationWithdrawn, Join, Leave, Link, Start, ToPrincipal,
    Unlink, Woken,
};
pub(crate) use step::panic_message;

use crate::author::{
    CallId, InstanceWaker, Logic, Participant, ParticipantId, ParticipantKind, Reply, ToolCall,
};
use crate::ids::InstanceId;
use crate::ids::SessionId;
use crate::shared::Shared;
use crate::store::Ticket;
use actix::WeakAddr;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::Id;
use mcpl_protocol::mcp::CallToolResult;
use mcpl_transport::Principal;
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// The reason an instance ends with when its logic panicked.
pub const INTERNAL_ERROR: &str = "internal error";

/// A call answered later.
#[derive(Debug, Clone)]
struct Waiter {
    who: ParticipantId,
    session: SessionId,
    request: Id,
    /// Its caller's changes wait for its answer ([`InstanceContext::hold_for`]).
    hold: bool,
}

/// One open instance. See the module docs.
pub(crate) struct InstanceActor {
    shared: Arc<Shared>,
    /// Where invitations go: the registry, which reaches principals without an actor.
    router: Recipient<ToPrincipal>,
    id: InstanceId,
    toolset: String,
    /// The opener's name for the instance, suggested to those it invites.
    name: Option<String>,
    options: Value,
    logic: Option<Box<dyn Logic>>,
    participants: Vec<Participant>,
    /// Participant principals that have the instance open, and their records.
    links: BTreeMap<ParticipantId, Link>,
    /// Invited principals that have not joined, to withdraw the invitation from.
    invited: BTreeMap<ParticipantId, Invitee>,
    waiting: BTreeMap<CallId, Waiter>,
    next_call: u64,
    /// Set once the instance ended; it then only answers until every link is gone.
    ended: Option<String>,
    /// This actor, for the wakers its logic hands out.
    me: Option<WeakAddr<InstanceActor>>,
    /// The instance's name as each participant principal knows it (§7).
    names: BTreeMap<ParticipantId, String>,
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
}

/// An invited principal that has not joined, with what it was invited with (to invite it
/// again after a restart).
#[derive(Debug, Clone)]
struct Invitee {
    principal: Principal,
    reason: String,
    options: Option<Value>,
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
            id,
            toolset,
            name: None,
            options: Value::Object(Default::default()),
            logic: None,
            participants: Vec::new(),
            links: BTreeMap::new(),
            invited: BTreeMap::new(),
            waiting: BTreeMap::new(),
            next_call: 0,
            ended: None,
            me: None,
            names: BTreeMap::new(),
            saved: None,
            written_at: Ticket::NONE,
            resuming: false,
            outbox: Vec::new(),
            sending: VecDeque::new(),
            sending_waits: false,
        }
    }

    /// A waker for this instance.
    fn waker(&self) -> InstanceWaker {
        InstanceWaker {
            addr: self.me.clone(),
        }
    }

    /// Stops once no principal links here any more.
    fn stop_if_unlinked(&mut self, ctx: &mut Context<Self>) {
        if self.links.is_empty() {
            self.withdraw_invitations();
            // The withdrawals go whatever becomes of the forgetting (a record left behind
            // has no link, and is forgotten after a restart), after what waited.
            self.send_all();
            self.flush_outbox();
            let _ = self.shared.write_instance(self.id.0, None);
            ctx.stop();
        } else {
            // Nobody is told of a participant leaving; what could not be kept here is
            // refused with the next step (`step.rs`).
            let _ = self.persist();
        }
    }

    fn withdraw_invitations(&mut self) {
        for (who, Invitee { principal, .. }) in std::mem::take(&mut self.invited) {
            self.outbox.push(ToPrincipal {
                principal,
                message: ForPrincipal::Withdrawn(InvitationWithdrawn { id: self.id, who }),
            });
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

    /// A participant leaves: it is no longer reached, and calls it still waits on are
    /// answered (into `batch`, which goes to its principal).
    fn remove(&mut self, who: ParticipantId, batch: &mut Batch) {
        if let Some(p) = self.participants.get_mut(who.0 as usize)
            && let ParticipantKind::Principal(principal) = &p.kind
        {
            p.kind = ParticipantKind::Left(principal.clone());
        }
        self.links.remove(&who);
        let theirs: Vec<CallId> = self
            .waiting
            .iter()
            .filter(|(_, w)| w.who == who)
            .map(|(c, _)| *c)
            .collect();
        for c in theirs {
            if let Some(w) = self.waiting.remove(&c) {
                batch.answers.push(CallAnswer {
                    session: w.session,
                    request: w.request,
                    outcome: Ok(CallToolResult::error(
                        "You closed this instance; the call was not answered.",
                    )),
                    deferred: true,
                });
            }
        }
        // Nobody left to play for: it ends without anyone to tell.
        if self.ended.is_none() && !self.participants.iter().any(Participant::is_present) {
            self.ended = Some("closed".to_owned());
            self.logic = None;
        }
    }
}

impl Actor for InstanceActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.me = Some(ctx.address().downgrade());
        tracing::debug!(instance = %self.id, toolset = %self.toolset, "instance started");
        if std::mem::take(&mut self.resuming) {
            self.resume(ctx);
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        tracing::debug!(instance = %self.id, toolset = %self.toolset, "instance stopped");
    }
}

impl Handler<CallIn> for InstanceActor {
    type Result = ();

    fn handle(&mut self, m: CallIn, ctx: &mut Context<Self>) {
        let waiter = Waiter {
            who: m.who,
            session: m.session,
            request: m.request,
            hold: false,
        };
        let refusal = match (&self.ended, self.links.contains_key(&m.who)) {
            (Some(reason), _) => Some(format!("{} has ended: {reason}", self.toolset)),
            (None, false) => Some(format!(
                "You are no longer in this {} instance.",
                self.toolset
            )),
            (None, true) => None,
        };
        let logic = match refusal {
            Some(text) => None.ok_or(text),
            None => self
                .logic
                .take()
                .ok_or_else(|| format!("{} has ended", self.toolset)),
        };
        let mut logic = match logic {
            Ok(logic) => logic,
            Err(text) => {
                return answer_alone(&m.link, self.id, waiter, CallToolResult::error(text));
            }
        };
        let id = CallId(self.next_call);
        self.next_call += 1;
        // Waiting from the start, so the logic may answer it through the context too.
        self.waiting.insert(id, waiter.clone());
        let call = ToolCall {
            id,
            tool: m.tool,
            arguments: m.arguments,
            caller: m.who,
        };
        match self.run(|cx| logic.call(call, cx)) {
            Ok((reply, effects)) => {
                self.logic = Some(logic);
                let own = match reply {
                    Reply::Now(result) => self.waiting.remove(&id).map(|w| (w, result)),
                    Reply::Later => None,
                };
                self.dispatch(effects, own, Some(id), None, ctx);
            }
            Err(panic) => {
                self.waiting.remove(&id);
                self.fail(&panic, Some(waiter), None, ctx);
            }
        }
    }
}

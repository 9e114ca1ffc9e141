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

mod invitations;
mod messages;
mod step;

pub(crate) use messages::Call as CallIn;
pub(crate) use messages::{
    Batch, CallAnswer, Change, Close, Closed, Decline, EnterFailure, Entered, Invitation,
    InvitationNamed, InvitationWithdrawn, Join, Leave, Link, Start, Unlink, Woken,
};
pub(crate) use step::panic_message;

use crate::actors::InstanceId;
use crate::author::{
    CallId, InstanceLogic, InstanceWaker, Participant, ParticipantId, ParticipantKind, Reply,
    ToolCall,
};
use crate::server::Server;
use crate::session::SessionId;
use actix::WeakAddr;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::Id;
use mcpl_protocol::mcp::CallToolResult;
use mcpl_transport::Principal;
use serde_json::Value;
use std::collections::BTreeMap;

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
    server: Server,
    id: InstanceId,
    toolset: String,
    /// The opener's name for the instance, suggested to those it invites.
    name: Option<String>,
    options: Value,
    logic: Option<Box<dyn InstanceLogic>>,
    participants: Vec<Participant>,
    /// Participant principals that have the instance open, and their records.
    links: BTreeMap<ParticipantId, Link>,
    /// Invited principals that have not joined, to withdraw the invitation from.
    invited: BTreeMap<ParticipantId, Principal>,
    waiting: BTreeMap<CallId, Waiter>,
    next_call: u64,
    /// Set once the instance ended; it then only answers until every link is gone.
    ended: Option<String>,
    /// This actor, for the wakers its logic hands out.
    me: Option<WeakAddr<InstanceActor>>,
    /// The instance's name as each participant principal knows it (§7).
    names: BTreeMap<ParticipantId, String>,
}

impl InstanceActor {
    pub(crate) fn new(server: Server, id: InstanceId, toolset: String) -> Self {
        InstanceActor {
            server,
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
            ctx.stop();
        }
    }

    fn withdraw_invitations(&mut self) {
        for (who, principal) in std::mem::take(&mut self.invited) {
            self.server
                .withdraw_invitation(&principal, InvitationWithdrawn { id: self.id, who });
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
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        tracing::debug!(instance = %self.id, toolset = %self.toolset, "instance stopped");
    }
}

impl Handler<Start> for InstanceActor {
    type Result = Result<Entered, EnterFailure>;

    fn handle(&mut self, m: Start, ctx: &mut Context<Self>) -> Self::Result {
        let opener = m.opening.opener;
        self.participants = vec![Participant {
            id: opener,
            kind: ParticipantKind::Principal(m.opening.principal.clone()),
        }];
        if let Some(name) = &m.link.key.instance {
            self.names.insert(opener, name.clone());
        }
        self.links.insert(opener, m.link);
        self.name = m.opening.instance.clone();
        self.options = m.opening.options.clone();
        let logic = m.logic;
        match self.run(|cx| logic.open(m.opening, cx)) {
            Ok((Ok(started), effects)) => {
                self.logic = Some(started.logic);
                let batch = self.dispatch(effects, None, None, Some(opener), ctx);
                Ok(Entered {
                    title: started.title,
                    content: started.content,
                    batch,
                })
            }
            Ok((Err(refusal), _)) => {
                self.links.clear();
                ctx.stop();
                Err(EnterFailure::Refused(refusal))
            }
            Err(panic) => {
                tracing::error!(instance = %self.id, toolset = %self.toolset, %panic, "the toolset's open panicked");
                self.links.clear();
                ctx.stop();
                Err(EnterFailure::Internal)
            }
        }
    }
}

impl Handler<Join> for InstanceActor {
    type Result = Result<Entered, EnterFailure>;

    fn handle(&mut self, m: Join, ctx: &mut Context<Self>) -> Self::Result {
        let invited = self
            .participants
            .get(m.who.0 as usize)
            .is_some_and(|p| p.kind == ParticipantKind::Invited(m.principal.clone()));
        if let Some(reason) = &self.ended {
            return Err(EnterFailure::Refused(crate::author::Refusal::new(format!(
                "it has ended: {reason}"
            ))));
        }
        let Some(mut logic) = self.logic.take().filter(|_| invited) else {
            return Err(EnterFailure::Refused(crate::author::Refusal::new(
                "the invitation is no longer open",
            )));
        };
        let who = m.who;
        self.participants[who.0 as usize].kind = ParticipantKind::Principal(m.principal.clone());
        self.invited.remove(&who);
        if let Some(name) = &m.link.key.instance {
            self.names.insert(who, name.clone());
        }
        self.links.insert(who, m.link);
        match self.run(|cx| logic.join(who, cx)) {
            Ok((Ok(joined), effects)) => {
                self.logic = Some(logic);
                let batch = self.dispatch(effects, None, None, Some(who), ctx);
                Ok(Entered {
                    title: joined.title,
                    content: joined.content,
                    batch,
                })
            }
            Ok((Err(refusal), effects)) => {
                self.logic = Some(logic);
                self.participants[who.0 as usize].kind = ParticipantKind::Left(m.principal);
                self.links.remove(&who);
                self.dispatch(effects, None, None, None, ctx);
                self.stop_if_unlinked(ctx);
                Err(EnterFailure::Refused(refusal))
            }
            Err(panic) => {
                // The joiner's record was never announced: it hears nothing of the end.
                self.participants[who.0 as usize].kind = ParticipantKind::Left(m.principal);
                self.links.remove(&who);
                self.fail(&panic, None, None, ctx);
                self.stop_if_unlinked(ctx);
                Err(EnterFailure::Internal)
            }
        }
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

impl Handler<Close> for InstanceActor {
    type Result = MessageResult<Close>;

    fn handle(&mut self, Close { who }: Close, ctx: &mut Context<Self>) -> Self::Result {
        let Some(key) = self.links.get(&who).map(|l| l.key.clone()) else {
            return MessageResult(Closed {
                content: Vec::new(),
                batch: None,
            });
        };
        let (content, batch) = self.close_step(who, ctx);
        let mut batch = batch.unwrap_or_else(|| Batch::new(self.id, key));
        self.remove(who, &mut batch);
        self.stop_if_unlinked(ctx);
        MessageResult(Closed {
            content,
            batch: (!batch.is_empty()).then_some(batch),
        })
    }
}

impl Handler<Leave> for InstanceActor {
    type Result = ();

    fn handle(&mut self, Leave { who }: Leave, ctx: &mut Context<Self>) {
        let Some(link) = self.links.get(&who).cloned() else {
            return;
        };
        let (_, batch) = self.close_step(who, ctx);
        let mut batch = batch.unwrap_or_else(|| Batch::new(self.id, link.key.clone()));
        // Its record already ended on its side: only answers still matter to it.
        batch.changes.clear();
        batch.events.clear();
        batch.ended = None;
        self.remove(who, &mut batch);
        if !batch.is_empty() {
            link.principal.do_send(batch);
        }
        self.stop_if_unlinked(ctx);
    }
}

impl Handler<Woken> for InstanceActor {
    type Result = ();

    fn handle(&mut self, Woken { tag }: Woken, ctx: &mut Context<Self>) {
        self.wake(tag, ctx);
    }
}

impl Handler<Unlink> for InstanceActor {
    type Result = ();

    fn handle(&mut self, Unlink { who }: Unlink, ctx: &mut Context<Self>) {
        self.links.remove(&who);
        self.stop_if_unlinked(ctx);
    }
}

impl InstanceActor {
    /// The logic's close for `who`, unless the instance already ended; returns what to tell
    /// it and its batch.
    fn close_step(
        &mut self,
        who: ParticipantId,
        ctx: &mut Context<Self>,
    ) -> (Vec<mcpl_protocol::mcp::ContentBlock>, Option<Batch>) {
        let Some(mut logic) = self.logic.take() else {
            return (Vec::new(), None);
        };
        match self.run(|cx| logic.close(who, cx)) {
            Ok((content, effects)) => {
                self.logic = Some(logic);
                let batch = self.dispatch(effects, None, None, Some(who), ctx);
                (content, batch)
            }
            Err(panic) => (Vec::new(), self.fail(&panic, None, Some(who), ctx)),
        }
    }

    /// A timer the logic set fired, or something woke the instance (a waker, finished
    /// blocking work). Nothing happens once the logic is gone (the instance ended).
    fn wake(&mut self, tag: u64, ctx: &mut Context<Self>) {
        let Some(mut logic) = self.logic.take() else {
            return;
        };
        match self.run(|cx| logic.wake(tag, cx)) {
            Ok(((), effects)) => {
                self.logic = Some(logic);
                self.dispatch(effects, None, None, None, ctx);
            }
            Err(panic) => {
                self.fail(&panic, None, None, ctx);
            }
        }
    }
}

/// Answers a call outside any step (the instance ended, the caller left), straight to the
/// caller's principal.
fn answer_alone(link: &Link, id: InstanceId, w: Waiter, result: CallToolResult) {
    let mut batch = Batch::new(id, link.key.clone());
    batch.answers.push(CallAnswer {
        session: w.session,
        request: w.request,
        outcome: Ok(result),
        deferred: false,
    });
    link.principal.do_send(batch);
}

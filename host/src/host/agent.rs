//! The agent's side: the messages the Host answers for whoever plays the agent (a model
//! driver, the console, a person at `play`, a test).
//!
//! A call is planned by the meta-tools ([`MetaTools::plan`](crate::state::MetaTools::plan)).
//! A plan that sends is matched by exactly one [`Presenter::finish`]: `sending` first, the
//! request on the link, and its outcome comes back as a message to this actor's mailbox,
//! behind the tapped result whose hints the presenter attaches to it.
//!
//! [`Presenter::finish`]: crate::state::Presenter::finish

use super::actor::{Host, now};
use super::messages::{
    Boundary, Call, Compact, Definition, GetTools, StartTurn, Stop, Subscribe, TakeTranscript,
    Visible, Waiting,
};
use super::shown::Shown;
use crate::link::{CallTool, LinkError, SendRequest, ServerLink};
use crate::state::{CallFailure, Outcome, Outgoing, SendPlan, Step};
use actix::prelude::*;
use mcpl_protocol::CallToolResult;
use mcpl_protocol::method::{ToolsetsClose, ToolsetsOpen};
use tokio::sync::oneshot;

/// A sent plan's outcome, back in the mailbox.
#[derive(Message)]
#[rtype(result = "()")]
struct Finished {
    plan: SendPlan,
    outcome: Outcome,
    reply: oneshot::Sender<CallToolResult>,
}

/// The most calls that wait for statements at once; more are planned at once.
const MAX_WAITING: usize = 64;

impl Handler<Call> for Host {
    type Result = ResponseFuture<CallToolResult>;

    /// §4.3, §4.4: until a server's connect-time statement is read, the host does not know
    /// what is open there — the state it had is gone with the old connection — and only an
    /// undeclared group is the host's to gate. So a meta-tool call made then waits for the
    /// statement (at most [`super::HostConfig::statement_wait`]), instead of being refused
    /// as "not usable" while the server has it usable (after a reconnect, say). The same
    /// holds while a recovery's statement is read (§5.2 **\[project\]**): after a lost
    /// answer the server may have opened or ended what the host still believes otherwise,
    /// and a look made then would report the old state as the server's.
    fn handle(&mut self, msg: Call, ctx: &mut Context<Self>) -> Self::Result {
        let meta = msg.name.starts_with("toolsets--");
        if meta && self.core.settling() && self.waiting.len() < MAX_WAITING {
            let (reply, answer) = oneshot::channel();
            self.waits += 1;
            let id = self.waits;
            ctx.run_later(self.statement_wait, move |act, ctx| {
                act.release_wait(id, ctx)
            });
            self.waiting.push(Waiting {
                id,
                call: msg,
                reply,
            });
            self.publish();
            return Box::pin(async move {
                answer
                    .await
                    .unwrap_or_else(|_| CallToolResult::error("the host stopped"))
            });
        }
        self.dispatch(msg, ctx)
    }
}

impl Host {
    /// Plans the calls that waited for statements: the statements came.
    pub(super) fn release_waiting(&mut self, ctx: &mut Context<Self>) {
        for waiting in std::mem::take(&mut self.waiting) {
            self.answer_waiting(waiting, ctx);
        }
    }

    /// Plans one waiting call whose wait is over, if it still waits.
    fn release_wait(&mut self, id: u64, ctx: &mut Context<Self>) {
        if let Some(at) = self.waiting.iter().position(|w| w.id == id) {
            let waiting = self.waiting.remove(at);
            self.answer_waiting(waiting, ctx);
            self.drive(ctx);
        }
    }

    /// Plans a call that waited and sends its answer to whoever waits for it.
    fn answer_waiting(&mut self, Waiting { call, reply, .. }: Waiting, ctx: &mut Context<Self>) {
        let answer = self.dispatch(call, ctx);
        actix::spawn(async move {
            let _ = reply.send(answer.await);
        });
    }

    /// Plans and carries out one call: sent plans come back through [`Finished`].
    fn dispatch(&mut self, msg: Call, ctx: &mut Context<Self>) -> ResponseFuture<CallToolResult> {
        let plan = match self.core.plan_call(&msg.name, &msg.args) {
            Step::Send(plan) => plan,
            Step::Done(result) => {
                self.drive(ctx);
                return Box::pin(std::future::ready(result));
            }
        };
        let Some(link) = self.links.get(&plan.server) else {
            return Box::pin(std::future::ready(CallToolResult::error("no such server")));
        };
        let (link, me) = (link.addr.clone(), ctx.address());
        let (reply, answer) = oneshot::channel();
        actix::spawn(async move {
            let outcome = request(&link, &plan.request).await;
            me.do_send(Finished {
                plan,
                outcome,
                reply,
            });
        });
        Box::pin(async move {
            answer.await.unwrap_or_else(|_| {
                CallToolResult::error("the host stopped before the call finished")
            })
        })
    }
}

/// Sends one request on a link and sorts its failure by what the agent should hear.
async fn request(link: &Addr<ServerLink>, out: &Outgoing) -> Outcome {
    match out {
        Outgoing::Call(p) => {
            let call = CallTool {
                name: p.name.clone(),
                arguments: p.arguments.clone(),
                meta: p.meta.clone(),
                timeout: None,
            };
            Outcome::Call(flatten(link.send(call).await))
        }
        Outgoing::Open(p) => {
            let req = SendRequest::<ToolsetsOpen>::new(p.clone());
            Outcome::Open(flatten(link.send(req).await))
        }
        Outgoing::Close(p) => {
            let req = SendRequest::<ToolsetsClose>::new(p.clone());
            Outcome::Close(flatten(link.send(req).await))
        }
    }
}

fn flatten<T>(r: Result<Result<T, LinkError>, MailboxError>) -> Result<T, CallFailure> {
    r.map_err(crate::link::stopped)
        .and_then(|r| r)
        .map_err(|e| match e {
            LinkError::Server { error, .. } => CallFailure::Refused(error),
            LinkError::Timeout { .. } => CallFailure::TimedOut,
            other => CallFailure::Unavailable(other.to_string()),
        })
}

impl Handler<Finished> for Host {
    type Result = ();

    fn handle(&mut self, msg: Finished, ctx: &mut Context<Self>) {
        let Finished {
            plan,
            outcome,
            reply,
        } = msg;
        let result = self.core.finish_call(&plan, outcome, now());
        self.drive(ctx);
        // The caller may have gone; the result is recorded all the same.
        let _ = reply.send(result);
    }
}

impl Handler<GetTools> for Host {
    type Result = MessageResult<GetTools>;

    fn handle(&mut self, _: GetTools, _ctx: &mut Context<Self>) -> Self::Result {
        MessageResult(self.core.tool_list())
    }
}

impl Handler<TakeTranscript> for Host {
    type Result = MessageResult<TakeTranscript>;

    fn handle(&mut self, _: TakeTranscript, _ctx: &mut Context<Self>) -> Self::Result {
        let from = self.transcript_from;
        let shown: Vec<Shown> = self
            .core
            .conversation()
            .messages()
            .filter(|m| m.seq >= from)
            .map(|m| Shown::new(m.seq, &m.message))
            .collect();
        if let Some(last) = self.core.conversation().last() {
            self.transcript_from = last.seq + 1;
        }
        MessageResult(shown)
    }
}

impl Handler<StartTurn> for Host {
    type Result = MessageResult<StartTurn>;

    fn handle(&mut self, _: StartTurn, ctx: &mut Context<Self>) -> Self::Result {
        let shown = self.core.start_turn().map(|(seq, m)| Shown::new(seq, &m));
        self.drive(ctx);
        MessageResult(shown)
    }
}

impl Handler<Boundary> for Host {
    type Result = bool;

    fn handle(&mut self, _: Boundary, ctx: &mut Context<Self>) -> bool {
        let changed = self.core.boundary();
        self.drive(ctx);
        changed
    }
}

impl Handler<Compact> for Host {
    type Result = bool;

    fn handle(&mut self, _: Compact, ctx: &mut Context<Self>) -> bool {
        let changed = self.core.compact();
        self.drive(ctx);
        changed
    }
}

impl Handler<Subscribe> for Host {
    type Result = ();

    fn handle(&mut self, msg: Subscribe, _ctx: &mut Context<Self>) {
        self.subscribe(msg.0);
    }
}

impl Handler<Definition> for Host {
    type Result = MessageResult<Definition>;

    fn handle(&mut self, msg: Definition, _ctx: &mut Context<Self>) -> Self::Result {
        MessageResult(self.core.definition(
            msg.server.as_deref(),
            &msg.tool,
            msg.instance.as_deref(),
        ))
    }
}

impl Handler<Visible> for Host {
    type Result = MessageResult<Visible>;

    fn handle(&mut self, msg: Visible, _ctx: &mut Context<Self>) -> Self::Result {
        MessageResult(
            self.core
                .is_visible(&msg.server, &msg.tool, msg.instance.as_deref()),
        )
    }
}

impl Handler<Stop> for Host {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) -> Self::Result {
        let links: Vec<Addr<ServerLink>> = self.links.values().map(|l| l.addr.clone()).collect();
        ctx.stop();
        Box::pin(async move {
            for link in links {
                // A link that has stopped already is what was asked for.
                let _ = link.send(crate::link::Shutdown).await;
            }
        })
    }
}

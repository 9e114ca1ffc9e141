//! The agent's side: the messages the Host answers for whoever plays the agent (a model
//! driver, the console, a person at `play`, a test).
//!
//! A call is planned by the meta-tools ([`MetaTools::plan`](crate::state::MetaTools::plan)).
//! A plan that sends is matched by exactly one [`Presenter::finish`]: `sending` first, the
//! request on the link, and its outcome comes back as a message to this actor's mailbox,
//! behind the tapped result whose hints the presenter attaches to it.
//!
//! [`Presenter::finish`]: crate::state::Presenter::finish

use super::actor::Host;
use super::server::Slot;
use super::shown::Shown;
use crate::link::{CallTool, LinkError, SendRequest, ServerLink};
use crate::state::meta_tools::apply_group;
use crate::state::{
    AgentMessage, CallFailure, Marker, MessageKind, Outcome, Outgoing, Plan, SendPlan, ServerView,
    World,
};
use actix::prelude::*;
use mcpl_protocol::method::{ToolsetsClose, ToolsetsOpen};
use mcpl_protocol::{CallToolResult, ErrorCode, Tool};
use serde_json::Value;
use std::collections::BTreeSet;
use tokio::sync::{mpsc, oneshot};

/// The agent calls a tool: one of the four meta-tools, or a static `server--tool` from its
/// tool list. Always answered with a result; what went wrong is a tool error (§6).
#[derive(Debug, Clone, Message)]
#[rtype(result = "CallToolResult")]
pub struct Call {
    /// The tool's name as the model has it.
    pub name: String,
    /// Its arguments (an object, or null for none).
    pub args: Value,
}

/// The model's tool list, as it is sent (§6 "RFC §8.1": unchanged between boundaries).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "Vec<Tool>")]
pub struct GetTools;

/// The messages shown to the agent since the last `TakeTranscript` (the first returns
/// everything shown so far).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "Vec<Shown>")]
pub struct TakeTranscript;

/// The agent's turn starts: a reminder of open toolsets whose announcements left its
/// context (§6 "RFC §8.3 Reminders"), if one is due; it is shown (and returned).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "Option<Shown>")]
pub struct StartTurn;

/// A tool-list boundary (a new conversation, say): presence moves apply and are told, and
/// the model's list is rebuilt (§3, vectors 15, 24). True when the list changed.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "bool")]
pub struct Boundary;

/// A compaction: everything shown so far leaves the agent's context, and the list is
/// rebuilt as at any boundary. True when the list changed.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "bool")]
pub struct Compact;

/// Subscribes to what is shown outside tool results (notices, pushes, reminders), from
/// now on.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Subscribe(pub mpsc::UnboundedSender<Shown>);

/// The current definition of a dynamic tool offered through `act`, on the named server or
/// the first that offers it, in the instance if named (for a front end filling arguments).
#[derive(Debug, Clone, Message)]
#[rtype(result = "Option<Tool>")]
pub struct Definition {
    /// The server, if named.
    pub server: Option<String>,
    /// The tool.
    pub tool: String,
    /// The instance, if named.
    pub instance: Option<String>,
}

/// Stops the host, then every link; answered once every link has stopped.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct Stop;

/// A sent plan's outcome, back in the mailbox.
#[derive(Message)]
#[rtype(result = "()")]
struct Finished {
    plan: SendPlan,
    outcome: Outcome,
    reply: oneshot::Sender<CallToolResult>,
}

/// A meta-tool call waiting for a connect-time statement, and who waits for its answer.
pub(super) struct Waiting {
    /// Which wait this is, so its own timer releases it and no other.
    id: u64,
    call: Call,
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
    /// as "not usable" while the server has it usable (after a reconnect, say).
    fn handle(&mut self, msg: Call, ctx: &mut Context<Self>) -> Self::Result {
        let meta = msg.name.starts_with("toolsets--");
        if meta && self.settling() && self.waiting.len() < MAX_WAITING {
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
    /// True while some server's connection waits for its connect-time statement.
    pub(super) fn settling(&self) -> bool {
        self.servers
            .values()
            .any(|s| s.hints.as_ref().is_some_and(|h| h.is_connecting()))
    }

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
            self.flush();
        }
    }

    /// Plans a call that waited and sends its answer to whoever waits for it.
    fn answer_waiting(&mut self, Waiting { call, reply, .. }: Waiting, ctx: &mut Context<Self>) {
        let answer = self.dispatch(call, ctx);
        actix::spawn(async move {
            let _ = reply.send(answer.await);
        });
    }

    /// Plans and carries out one call.
    fn dispatch(&mut self, msg: Call, ctx: &mut Context<Self>) -> ResponseFuture<CallToolResult> {
        let views: Vec<ServerView<'_>> = self.servers.values().map(Slot::view).collect();
        let world = World {
            servers: &views,
            presenter: &self.presenter,
        };
        let plan = self.meta.plan(&msg.name, &msg.args, &world);
        let (result, announces) = match plan {
            Plan::Send(p) => return self.send(p, ctx),
            Plan::Group(g) => {
                let Some(slot) = self.servers.get_mut(&g.server) else {
                    return Box::pin(std::future::ready(CallToolResult::error("no such server")));
                };
                // §4.4: the host opens and closes an undeclared group alone; nothing is sent.
                apply_group(&g, &mut slot.catalog);
                let view = slot.view();
                let a = self.presenter.group_changed(&view, &g);
                (a.result, a.announces)
            }
            Plan::Answer(a) => {
                self.presenter.shown(&a.announces);
                (a.result, a.announces)
            }
            Plan::Refused(e) => (e.to_result(), BTreeSet::new()),
        };
        self.record(&result, announces);
        self.flush();
        Box::pin(std::future::ready(result))
    }

    /// Sends a planned request; the result comes back through [`Finished`].
    fn send(&mut self, plan: SendPlan, ctx: &mut Context<Self>) -> ResponseFuture<CallToolResult> {
        let Some(slot) = self.servers.get(&plan.server) else {
            return Box::pin(std::future::ready(CallToolResult::error("no such server")));
        };
        self.presenter.sending(&plan.server);
        let (link, me) = (slot.link.clone(), ctx.address());
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

    /// Records a tool result in the conversation, with the markers it announces.
    fn record(&mut self, result: &CallToolResult, announces: BTreeSet<Marker>) {
        self.conversation.push(AgentMessage {
            kind: MessageKind::ToolResult,
            server: None,
            text: result.joined_text(),
            announces,
        });
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
    r.map_err(LinkError::from)
        .and_then(|r| r)
        .map_err(|e| match e {
            LinkError::Server { error, .. } => CallFailure::Refused(error),
            LinkError::Timeout { .. } => CallFailure::TimedOut,
            other => CallFailure::Unavailable(other.to_string()),
        })
}

/// True when the request may have been carried out but its answer was not read: it timed
/// out, or the transport made up a `CONNECTION_CLOSED` answer for it (a Streamable HTTP POST
/// that failed). A server's own -32000 counts too: at worst one needless recovery.
fn answer_lost(outcome: &Outcome) -> bool {
    let failure = match outcome {
        Outcome::Call(Err(f)) | Outcome::Open(Err(f)) | Outcome::Close(Err(f)) => f,
        _ => return false,
    };
    match failure {
        CallFailure::TimedOut => true,
        CallFailure::Refused(e) => e.code == ErrorCode::CONNECTION_CLOSED,
        CallFailure::Unavailable(_) => false,
    }
}

impl Handler<Finished> for Host {
    type Result = ();

    fn handle(&mut self, msg: Finished, ctx: &mut Context<Self>) {
        let Finished {
            plan,
            outcome,
            reply,
        } = msg;
        let Some(slot) = self.servers.get(&plan.server) else {
            return;
        };
        if !slot.ordered && answer_lost(&outcome) {
            // §5.2 [project]: what the lost answer carried is unknown; read the state.
            self.feed(&plan.server, ctx, |h, _| h.handle_lost_message());
        }
        let Some(slot) = self.servers.get(&plan.server) else {
            return;
        };
        let view = slot.view();
        let f = self.presenter.finish(&view, &plan, outcome);
        self.show(f.notices);
        self.record(&f.result, f.announces);
        self.flush();
        // The caller may have gone; the result is recorded all the same.
        let _ = reply.send(f.result);
    }
}

impl Handler<GetTools> for Host {
    type Result = MessageResult<GetTools>;

    fn handle(&mut self, _: GetTools, _ctx: &mut Context<Self>) -> Self::Result {
        MessageResult(self.conversation.tool_list().tools().to_vec())
    }
}

impl Handler<TakeTranscript> for Host {
    type Result = MessageResult<TakeTranscript>;

    fn handle(&mut self, _: TakeTranscript, _ctx: &mut Context<Self>) -> Self::Result {
        let from = self.transcript_from;
        let shown: Vec<Shown> = self
            .conversation
            .messages()
            .filter(|m| m.seq >= from)
            .map(|m| Shown::new(m.seq, &m.message))
            .collect();
        if let Some(last) = self.conversation.last() {
            self.transcript_from = last.seq + 1;
        }
        MessageResult(shown)
    }
}

impl Handler<StartTurn> for Host {
    type Result = MessageResult<StartTurn>;

    fn handle(&mut self, _: StartTurn, _ctx: &mut Context<Self>) -> Self::Result {
        let views: Vec<ServerView<'_>> = self.servers.values().map(Slot::view).collect();
        let reminder = self.presenter.reminder(&self.conversation, &views);
        let shown = reminder.map(|m| {
            self.show(vec![m]);
            let last = self.conversation.last().expect("just shown");
            Shown::new(last.seq, &last.message)
        });
        self.flush();
        MessageResult(shown)
    }
}

impl Handler<Boundary> for Host {
    type Result = bool;

    fn handle(&mut self, _: Boundary, _ctx: &mut Context<Self>) -> bool {
        let changed = self.boundary();
        self.flush();
        changed
    }
}

impl Handler<Compact> for Host {
    type Result = bool;

    fn handle(&mut self, _: Compact, _ctx: &mut Context<Self>) -> bool {
        self.conversation.compact();
        let changed = self.boundary();
        self.flush();
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
        let found = self
            .servers
            .values()
            .filter(|s| msg.server.as_deref().is_none_or(|n| n == s.name))
            .map(Slot::view)
            .filter(|v| v.presented_dynamic(&msg.tool) && v.policy.allows(&msg.tool))
            .find_map(|v| v.definition(&msg.tool, msg.instance.as_deref()));
        MessageResult(found)
    }
}

impl Handler<Stop> for Host {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) -> Self::Result {
        let links: Vec<Addr<ServerLink>> = self.servers.values().map(|s| s.link.clone()).collect();
        ctx.stop();
        Box::pin(async move {
            for link in links {
                // A link that has stopped already is what was asked for.
                let _ = link.send(crate::link::Shutdown).await;
            }
        })
    }
}

//! The agent's side: a call is planned by the meta-tools
//! ([`MetaTools::plan`](crate::state::MetaTools::plan)). A plan that sends is matched by
//! exactly one [`HostCore::finish_call`]: the presenter hears `sending` first, the driver
//! sends the request, and the outcome comes back after the tapped result whose hints the
//! presenter attaches to it (§6).

use super::{HostCore, ServerSlot, index};
use crate::state::meta_tools::apply_group;
use crate::state::{
    AgentMessage, CallFailure, Marker, MessageKind, Outcome, Plan, SendPlan, ServerView, World,
};
use mcpl_protocol::{CallToolResult, ErrorCode, Tool};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Instant;

/// What a planned call needs next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Send this request on the server's link; hand the outcome to
    /// [`HostCore::finish_call`].
    Send(SendPlan),
    /// Answered already (nothing is sent): the agent's result, recorded.
    Done(CallToolResult),
}

impl HostCore {
    /// The agent calls a tool: one of the four meta-tools, or a static `server--tool`
    /// from its tool list. What went wrong is a tool error (§6).
    pub fn plan_call(&mut self, name: &str, args: &Value) -> Step {
        let plan = self.plan(name, args);
        self.carry_out(plan)
    }

    /// What calling `name` with `args` would do, as the meta-tools plan it: nothing is
    /// sent, shown or recorded.
    pub fn plan(&mut self, name: &str, args: &Value) -> Plan {
        let views: Vec<ServerView<'_>> = self.servers.iter().map(ServerSlot::view).collect();
        let world = World {
            servers: &views,
            presenter: &self.presenter,
        };
        self.meta.plan(name, args, &world)
    }

    /// Carries out a plan made by [`Self::plan`]: a group opened or closed, an answer
    /// given, a refusal — each recorded — or the request to send.
    pub fn carry_out(&mut self, plan: Plan) -> Step {
        // The agent acts: what its last turn left out is told first (issue #37 item 5).
        self.renew_turn();
        let (result, announces) = match plan {
            Plan::Send(p) => {
                if index(&self.servers, &p.server)
                    .map(|i| &self.servers[i])
                    .is_none()
                {
                    return Step::Done(CallToolResult::error("no such server"));
                }
                self.presenter.sending(&p.server);
                return Step::Send(p);
            }
            Plan::Group(g) => {
                let Some(slot) = index(&self.servers, &g.server).map(|i| &mut self.servers[i])
                else {
                    return Step::Done(CallToolResult::error("no such server"));
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
        Step::Done(result)
    }

    /// A sent plan's outcome: the agent's result (recorded), with what the presenter
    /// attaches. On an unordered link an answer that was lost may have carried changes:
    /// the state is read again (§5.2 \[project\]).
    pub fn finish_call(
        &mut self,
        plan: &SendPlan,
        outcome: Outcome,
        now: Instant,
    ) -> CallToolResult {
        let Some(slot) = index(&self.servers, &plan.server).map(|i| &self.servers[i]) else {
            return CallToolResult::error("no such server");
        };
        if !slot.ordered && answer_lost(&outcome) {
            self.feed(&plan.server, now, |h, _| h.handle_lost_message());
        }
        let Some(slot) = index(&self.servers, &plan.server).map(|i| &self.servers[i]) else {
            return CallToolResult::error("no such server");
        };
        let view = slot.view();
        let f = self.presenter.finish(&view, plan, outcome);
        self.show(f.notices);
        self.record(&f.result, f.announces);
        f.result
    }

    /// Records a tool result in the conversation, with the markers it announces.
    fn record(&mut self, result: &CallToolResult, announces: BTreeSet<Marker>) {
        self.conversation.push(AgentMessage {
            kind: MessageKind::ToolResult,
            server: None,
            text: result.joined_text(),
            announces,
            restates: false,
        });
    }

    /// The agent's turn starts: a notice of what the last turn left out, if anything
    /// (issue #37 item 5), then a reminder of open toolsets whose announcements left its
    /// context (§6 "RFC §8.3 Reminders"), if one is due; the reminder is shown (and
    /// returned, with its sequence number), cut to what a turn shows.
    pub fn start_turn(&mut self) -> Option<(u64, AgentMessage)> {
        self.renew_turn();
        let views: Vec<ServerView<'_>> = self.servers.iter().map(ServerSlot::view).collect();
        let reminder = self.presenter.reminder(&self.conversation, &views)?;
        self.show(vec![reminder])
            .into_iter()
            .find(|(_, m)| m.kind == MessageKind::Reminder)
    }

    /// The model's tool list, as it is sent (unchanged between boundaries, §6).
    pub fn tool_list(&self) -> Vec<Tool> {
        self.conversation.tool_list().to_vec()
    }

    /// The current definition of a dynamic tool offered through `act`, on the named
    /// server or the first that offers it, in the instance if named.
    pub fn definition(
        &self,
        server: Option<&str>,
        tool: &str,
        instance: Option<&str>,
    ) -> Option<Tool> {
        self.servers
            .iter()
            .filter(|s| server.is_none_or(|n| n == s.name))
            .map(ServerSlot::view)
            .filter(|v| v.presented_dynamic(tool) && v.policy.allows(tool))
            .find_map(|v| v.definition(tool, instance))
    }

    /// Whether the hint state of `server`'s current connection holds `tool` visible in
    /// `instance` (or outside instances, with `None`); `None` when there is no such server
    /// or hints do not count on it (§2). What the server last told, as applied (§5.2): a
    /// stale or superseded change leaves it as it was.
    pub fn is_visible(&self, server: &str, tool: &str, instance: Option<&str>) -> Option<bool> {
        self.servers
            .iter()
            .find(|s| s.name == server)
            .and_then(|s| s.view().hints)
            .map(|h| h.is_visible(tool, instance))
    }
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

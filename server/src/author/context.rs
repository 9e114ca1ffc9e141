//! [`InstanceContext`]: what an instance's logic may do, recorded as effects the instance
//! actor carries out when the logic returns.
//!
//! Everything is said per participant ([`Audience`]); the SDK maps each participant to its
//! principal's record of the instance, the principal's state turns each effect into hint
//! changes stated as values (§5.1), and the sessions choose the carrier (§5.2, §5.3). A
//! change that cannot apply — a tool of another toolset, anything after
//! [`InstanceContext::end`] — is the logic's bug: it is logged and left out.
//!
//! Beside the changes, the context reaches outside the step: [`InstanceContext::waker`]
//! and [`InstanceContext::spawn_blocking`] (in `work.rs`) wake the instance when outside
//! work is done, and [`InstanceContext::hold_for`] keeps a deferred call's changes for its
//! answer (§5.3).

use super::event::{CallId, Event};
use super::participant::{Audience, Participant, ParticipantId, ParticipantKind};
use super::work::{Blocking, InstanceWaker};
use crate::core::Catalog;
use crate::panics::panic_message;
use crate::tool::error::ToolResult;
use mcpl_protocol::hints::ToolDefinition;
use mcpl_server_core::author::{Effect, Job};
use mcpl_transport::Principal;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::oneshot;

/// What an instance's logic works through. See the module docs.
#[derive(Debug)]
pub struct InstanceContext {
    pub(crate) toolset: String,
    pub(crate) now: SystemTime,
    pub(crate) participants: Vec<Participant>,
    pub(crate) effects: Vec<Effect>,
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) ended: bool,
    /// Calls answered later and not answered yet.
    pub(crate) waiting: BTreeSet<CallId>,
    /// Wakes this instance from outside.
    pub(crate) waker: InstanceWaker,
    /// The instance's name as each participant principal knows it (§7: each its own).
    pub(crate) names: BTreeMap<ParticipantId, String>,
}

impl InstanceContext {
    pub(crate) fn new(
        toolset: String,
        now: SystemTime,
        participants: Vec<Participant>,
        catalog: Arc<Catalog>,
        waiting: BTreeSet<CallId>,
    ) -> Self {
        InstanceContext {
            toolset,
            now,
            participants,
            effects: Vec::new(),
            catalog,
            ended: false,
            waiting,
            waker: InstanceWaker::default(),
            names: BTreeMap::new(),
        }
    }

    /// The same context, waking `waker`'s instance and knowing each participant's name.
    pub(crate) fn with_outside(
        mut self,
        waker: InstanceWaker,
        names: BTreeMap<ParticipantId, String>,
    ) -> Self {
        self.waker = waker;
        self.names = names;
        self
    }

    /// The toolset this instance belongs to.
    pub fn toolset(&self) -> &str {
        &self.toolset
    }

    /// The server's time now.
    pub fn now(&self) -> SystemTime {
        self.now
    }

    /// Every participant, in the order they came in.
    pub fn participants(&self) -> impl Iterator<Item = &Participant> {
        self.participants.iter()
    }

    /// One participant.
    pub fn participant(&self, id: ParticipantId) -> Option<&Participant> {
        self.participants.get(id.0 as usize)
    }

    /// The participant's name ("alice", "bot"), for texts; empty for an unknown id.
    pub fn name(&self, id: ParticipantId) -> String {
        self.participant(id)
            .map(Participant::name)
            .unwrap_or_default()
    }

    /// The name under which `who`'s principal knows this instance (§7: each principal
    /// names a shared instance its own way): the opener's own name, or the name a joined
    /// participant opened it as, or — for an invited one — the name its principal shows
    /// the invitation under, which may carry a `-N` suffix when that principal already
    /// used the opener's name. `None` for a toolset without instances, for a bot, and for
    /// an invited principal whose invitation has not reached it yet
    /// ([`InstanceLogic::invited`](crate::InstanceLogic::invited) says when it has).
    ///
    /// ```
    /// # use mcpl_server::{InstanceContext, ParticipantId};
    /// fn challenge_text(cx: &InstanceContext, them: ParticipantId) -> String {
    ///     match cx.name_for(them) {
    ///         Some(name) => format!("{} may join by opening {}:{name}", cx.name(them), cx.toolset()),
    ///         None => format!("{} has been invited", cx.name(them)),
    ///     }
    /// }
    /// ```
    pub fn name_for(&self, who: ParticipantId) -> Option<&str> {
        self.names.get(&who).map(String::as_str)
    }

    /// Adds a bot: a participant the logic moves itself, with no connections.
    pub fn add_bot(&mut self, name: impl Into<String>) -> ParticipantId {
        self.add(ParticipantKind::Bot(name.into()))
    }

    /// Invites another principal into this instance, with the instance's options: its
    /// connections get a push whose hints `suggest` opening it under the opener's instance
    /// name (or a free one like it), and opening it calls
    /// [`InstanceLogic::join`](crate::InstanceLogic::join) with the returned id. Until then it is
    /// [`ParticipantKind::Invited`] and changes for it are dropped.
    pub fn invite(&mut self, principal: Principal, reason: impl Into<String>) -> ParticipantId {
        self.invite_with(principal, reason, None)
    }

    /// [`InstanceContext::invite`] suggesting other options than the instance's.
    pub fn invite_with(
        &mut self,
        principal: Principal,
        reason: impl Into<String>,
        options: Option<Value>,
    ) -> ParticipantId {
        let who = self.add(ParticipantKind::Invited(principal));
        self.push(Effect::Invite {
            who,
            reason: reason.into(),
            options,
        });
        who
    }

    fn add(&mut self, kind: ParticipantKind) -> ParticipantId {
        let id = ParticipantId(self.participants.len() as u32);
        self.participants.push(Participant { id, kind });
        id
    }

    /// Makes one of the toolset's tools visible to `to` in this instance.
    pub fn show(&mut self, to: impl Into<Audience>, tool: &str) {
        self.set_visible(to, tool, true);
    }

    /// Makes one of the toolset's tools invisible to `to` in this instance.
    pub fn hide(&mut self, to: impl Into<Audience>, tool: &str) {
        self.set_visible(to, tool, false);
    }

    /// Sets a tool's visibility for `to` in this instance (`play` only on your turn).
    pub fn set_visible(&mut self, to: impl Into<Audience>, tool: &str, visible: bool) {
        if self.own_tool(tool) {
            self.push(Effect::Visible {
                to: to.into(),
                tool: tool.to_owned(),
                visible,
            });
        }
    }

    /// Gives a tool this instance's own definition for `to` (§5.1): only `description`,
    /// `inputSchema` and `annotations` count, and members left out keep the current ones.
    pub fn set_definition(
        &mut self,
        to: impl Into<Audience>,
        tool: &str,
        definition: ToolDefinition,
    ) {
        if self.own_tool(tool) {
            self.push(Effect::Definition {
                to: to.into(),
                tool: tool.to_owned(),
                definition: Some(definition),
            });
        }
    }

    /// Gives a tool this instance's own input schema for `to` (a legal-moves enum).
    pub fn set_schema(&mut self, to: impl Into<Audience>, tool: &str, input_schema: Value) {
        let definition = ToolDefinition {
            input_schema: Some(input_schema),
            ..Default::default()
        };
        self.set_definition(to, tool, definition);
    }

    /// Puts a tool's definition back to the shared one, as it is now (an instance's own
    /// definition is then restated as that value: nothing on the wire says "forget it").
    pub fn reset_definition(&mut self, to: impl Into<Audience>, tool: &str) {
        if self.own_tool(tool) {
            self.push(Effect::Definition {
                to: to.into(),
                tool: tool.to_owned(),
                definition: None,
            });
        }
    }

    /// Retitles the instance for `to` ("Go 9x9 vs bot — your move").
    pub fn retitle(&mut self, to: impl Into<Audience>, title: impl Into<String>) {
        let title = title.into();
        self.push(Effect::Title {
            to: to.into(),
            title,
        });
    }

    /// Tells `to` something happened ("Black played D4"). The push carries, as its hints,
    /// the changes of this same step for each participant it reaches (§5.3) — so make the
    /// changes the event explains in the same step.
    pub fn event(&mut self, to: impl Into<Audience>, event: Event) {
        self.push(Effect::Event {
            to: to.into(),
            event,
        });
    }

    /// Answers a call the logic deferred with [`Reply::Later`](crate::Reply::Later). The
    /// caller's connection gets the caller's changes of this step in the result, after
    /// those [`InstanceContext::hold_for`] kept for it.
    pub fn answer(&mut self, call: CallId, result: ToolResult) {
        if self.waiting.remove(&call) {
            self.push(Effect::Answer { call, result });
        } else {
            tracing::error!(toolset = %self.toolset, ?call, "answer for a call that is not waiting; left out");
        }
    }

    /// True while `call` waits for an answer.
    pub fn is_waiting(&self, call: CallId) -> bool {
        self.waiting.contains(&call)
    }

    /// Keeps the changes made for `call`'s caller, from this step until the call is
    /// answered, for that answer's result on the caller's connection (§5.3: a call reports
    /// its own consequences, in its result) instead of sending them at once. For a call
    /// deferred with [`Reply::Later`](crate::Reply::Later); the caller's other connections
    /// get the changes at once as before, and events still reach the caller's connection
    /// (without the held changes).
    ///
    /// Held changes never overtake others (§5.2): if anything else carrying hint changes
    /// is to be written to that connection first — a push, `tools/hints`, a
    /// `toolsets/list` result — the held changes go just before it, as `tools/hints`, and
    /// the answer carries only what came after. A cancelled call's held changes go as
    /// `tools/hints` at once (vector 29). With several held calls of one caller on one
    /// connection, the oldest holds.
    ///
    /// ```
    /// use mcpl_server::{Call, InstanceContext, InstanceLogic, NoArguments, Reply};
    ///
    /// struct Slow;
    /// impl InstanceLogic for Slow {}
    ///
    /// impl Slow {
    ///     // The handler of the route `go` (`Toolset::route("go", "Goes", Slow::go)`).
    ///     fn go(&mut self, _: NoArguments, call: Call, cx: &mut InstanceContext) -> Reply {
    ///         // `go` disappears now, but the host hears it in the answer, with the result.
    ///         cx.hide(call.caller(), "go");
    ///         cx.hold_for(call.id());
    ///         cx.wake_after(std::time::Duration::from_secs(1), 1);
    ///         Reply::Later
    ///     }
    /// }
    /// ```
    pub fn hold_for(&mut self, call: CallId) {
        if self.waiting.contains(&call) {
            self.push(Effect::Hold { call });
        } else {
            tracing::error!(toolset = %self.toolset, ?call, "hold for a call that is not waiting; left out");
        }
    }

    /// Calls [`InstanceLogic::wake`](crate::InstanceLogic::wake) with `tag` after `after`.
    pub fn wake_after(&mut self, after: Duration, tag: u64) {
        self.push(Effect::Wake { after, tag });
    }

    /// Ends the instance for every participant with a reason ("White wins by 3.5"): each
    /// principal gets an ended record (§4.3), told to its connections now or, for one not
    /// connected, in its next `toolsets/list`. Calls still waiting are answered with a tool
    /// error giving the reason.
    pub fn end(&mut self, reason: impl Into<String>) {
        self.push(Effect::End {
            reason: reason.into(),
            view: None,
        });
        self.ended = true;
    }

    /// [`InstanceContext::end`], leaving `view` — what the instance last showed: a game's
    /// final position and result — with each ended record. The toolset's read-only tools
    /// (`annotations.readOnlyHint`) called for the ended instance are answered with it, as
    /// a result, for as long as the record is kept (§4.3 **\[project\]**), instead of "not
    /// open": the logic is gone, its last view stays readable.
    pub fn end_showing(&mut self, reason: impl Into<String>, view: impl Into<String>) {
        self.push(Effect::End {
            reason: reason.into(),
            view: Some(Arc::from(view.into())),
        });
        self.ended = true;
    }

    /// True once [`InstanceContext::end`] was called.
    pub fn has_ended(&self) -> bool {
        self.ended
    }

    pub(super) fn push(&mut self, effect: Effect) {
        if self.ended {
            tracing::error!(toolset = %self.toolset, ?effect, "change after the instance ended; left out");
            return;
        }
        self.effects.push(effect);
    }

    fn own_tool(&self, tool: &str) -> bool {
        let ok = self
            .catalog
            .tools_of(&self.toolset)
            .iter()
            .any(|t| t == tool);
        if !ok {
            tracing::error!(toolset = %self.toolset, tool, "not a tool of this toolset; change left out");
        }
        ok
    }
}

impl InstanceContext {
    /// A waker for this instance, for anything outside it (another thread, a task) that
    /// should make the logic act: see [`InstanceWaker`].
    pub fn waker(&self) -> InstanceWaker {
        self.waker.clone()
    }

    /// Runs `work` on tokio's blocking pool, off the instance's actor, and wakes the
    /// instance with `tag` when it has finished (or panicked): in that
    /// [`InstanceLogic::wake`](crate::InstanceLogic::wake), the returned handle's
    /// [`Blocking::try_take`] has the result. The work starts when the step returns; a step
    /// that panics, or work started after [`InstanceContext::end`], starts nothing (the
    /// handle then reports [`BlockingError::NotRun`](crate::BlockingError::NotRun)).
    ///
    /// ```
    /// use mcpl_protocol::mcp::CallToolResult;
    /// use mcpl_server::{Blocking, Call, CallId, InstanceContext, InstanceLogic, NoArguments, Reply};
    ///
    /// const SEARCH: u64 = 1;
    ///
    /// struct Bot {
    ///     search: Option<(Blocking<u32>, CallId)>,
    /// }
    ///
    /// impl Bot {
    ///     // The handler of the route `play` (`Toolset::route("play", "Plays", Bot::play)`).
    ///     fn play(&mut self, _: NoArguments, call: Call, cx: &mut InstanceContext) -> Reply {
    ///         let work = cx.spawn_blocking(|| (1..=1000u32).sum::<u32>() % 19, SEARCH);
    ///         self.search = Some((work, call.id()));
    ///         Reply::Later
    ///     }
    /// }
    ///
    /// impl InstanceLogic for Bot {
    ///     fn wake(&mut self, tag: u64, cx: &mut InstanceContext) {
    ///         if tag != SEARCH {
    ///             return;
    ///         }
    ///         if let Some((mut work, call)) = self.search.take() {
    ///             match work.try_take() {
    ///                 Some(Ok(point)) => {
    ///                     cx.answer(call, Ok(CallToolResult::text(format!("The bot plays {point}."))))
    ///                 }
    ///                 Some(Err(e)) => cx.answer(call, Ok(CallToolResult::error(e.to_string()))),
    ///                 None => self.search = Some((work, call)),
    ///             }
    ///         }
    ///     }
    /// }
    /// ```
    pub fn spawn_blocking<T, F>(&mut self, work: F, tag: u64) -> Blocking<T>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let waker = self.waker.clone();
        self.push(Effect::Spawn(Job(Box::new(move || {
            let result = panic::catch_unwind(AssertUnwindSafe(work)).map_err(panic_message);
            // The result is in place before the wake that reads it. The handle is gone when
            // the logic dropped it; the wake then tells it nothing new.
            let _ = tx.send(result);
            waker.wake(tag);
        }))));
        Blocking::new(rx, tag)
    }
}

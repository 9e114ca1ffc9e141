//! [`InstanceCore`]: one toolset instance's rules as a state machine, beside
//! [`PrincipalCore`](super::principal_core). The actor around it (`actors/instance/`) runs
//! the toolset's logic — one step at a time, catching a panic — and feeds the core what it
//! is asked (an open, a join, a call, a close, a leave) and what the step recorded (its
//! effects); the core answers with a [`Step`]: one [`Batch`] per participant principal,
//! the invitations to send or withdraw, the timers to set and the work to run. The actor
//! keeps the record, sends the batches and messages, and owns the timers and the logic.
//!
//! `R` is how the actor reaches a principal (its recipient); the core only carries it.
//!
//! Rules that live here, with their section of `shared/spec/RFC-014.md`:
//!
//! | rule | spec | where |
//! |---|---|---|
//! | a step's changes and events go to the present participants it names, each to its own record | §4.6, §7 | [`InstanceCore::step`] |
//! | a call's own answer carries its step's changes; any other answer is deferred | §5.3 | [`InstanceCore::step`] |
//! | a hold covers every change of the step that asked for it; the oldest held call per session | §5.3 | [`InstanceCore::step`] |
//! | an end ends every present principal's record, answers every waiting call, withdraws invitations | §4.3, §4.6 | `finish` |
//! | a panic in the logic ends it with [`INTERNAL_ERROR`], the calls it owed fail with -32603 | §4.3 | [`InstanceCore::fail`] |
//! | a call is refused once the instance ended or its caller left | §4.5 | [`InstanceCore::admit_call`] |
//! | a participant leaving: its waiting calls answered; nobody present, the instance ends | §4.2, §4.6 | [`InstanceCore::remove`] |
//! | a principal whose record already ended hears only answers | §4.6 | `InstanceCore::left` |
//! | only an invited principal joins, and not once it ended | §4.6, §7 | [`InstanceCore::admit_join`] |
//! | an invitation carries the instance's options unless the logic names others | §4.6 | [`InstanceCore::step`] |

#[cfg(test)]
mod tests;

use super::batch::{Batch, CallAnswer, Change};
use super::principal::InstanceKey;
use crate::Principal;
use crate::author::{
    Audience, CallId, Effect, Job, Participant, ParticipantId, ParticipantKind, Refusal,
};
use crate::ids::{InstanceId, SessionId};
use crate::store::records::{InstanceRecord, InviteRecord, LogicRecord, ParticipantRecord};
use crate::tool::error::{ToolError, ToolResult};
use mcpl_protocol::jsonrpc::{ErrorObject, Id};
use mcpl_protocol::mcp::CallToolResult;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// The reason an instance ends with when its logic panicked.
pub const INTERNAL_ERROR: &str = "internal error";

/// How many call ids an instance's record keeps ahead of the next one.
const CALL_ID_BLOCK: u64 = 1024;

/// A principal's record of an instance: where its changes go, and under which name (§7:
/// each principal names a shared instance its own way).
#[derive(Clone)]
pub struct Link<R> {
    /// How the instance reaches the principal.
    pub principal: R,
    /// The principal's key for the instance.
    pub key: InstanceKey,
}

/// A call answered later.
#[derive(Debug, Clone)]
pub struct Waiter {
    /// Who called.
    pub who: ParticipantId,
    /// The session the call came on.
    pub session: SessionId,
    /// The call's request id.
    pub request: Id,
    /// Its caller's changes wait for its answer (`InstanceContext::hold_for`).
    hold: bool,
}

impl Waiter {
    /// A call of `who`'s session, not held.
    pub fn new(who: ParticipantId, session: SessionId, request: Id) -> Self {
        Waiter {
            who,
            session,
            request,
            hold: false,
        }
    }
}

/// An invited principal that has not joined, with what it was invited with (to invite it
/// again after a restart).
#[derive(Debug, Clone)]
pub struct Invitee {
    /// The invited principal.
    pub principal: Principal,
    /// Why, as the invitee is told.
    pub reason: String,
    /// The options its open carries.
    pub options: Option<Value>,
}

/// An invitation into this instance (§4.6), as the invited principal receives it.
#[derive(Debug, Clone)]
pub struct Invite {
    /// Who the invitee is in the instance.
    pub who: ParticipantId,
    /// The toolset.
    pub toolset: String,
    /// The opener's name for the instance (§7), suggested as the invitee's.
    pub name: Option<String>,
    /// The options its open carries.
    pub options: Option<Value>,
    /// Why, as the invitee is told.
    pub reason: String,
    /// The principal that opened the instance.
    pub from: Principal,
}

/// A message for a principal that may have no actor (the registry routes it).
#[derive(Debug)]
pub enum Outgoing {
    /// Invite the principal `to` (§4.6), suggesting the opener's name for the instance.
    Invite {
        /// The invited principal.
        to: Principal,
        /// The invitation.
        invite: Invite,
    },
    /// The instance ended or closed before `who` joined.
    Withdraw {
        /// The invited principal.
        to: Principal,
        /// Who it was in the instance.
        who: ParticipantId,
    },
}

/// What one step comes to: a batch per participant principal (empty ones included), the
/// messages for other principals, and what the actor is to run.
#[derive(Debug, Default)]
pub struct Step {
    /// A batch for each participant principal.
    pub batches: BTreeMap<ParticipantId, Batch>,
    /// Messages for other principals.
    pub outgoing: Vec<Outgoing>,
    /// Wake the instance with `tag` after the duration.
    pub timers: Vec<(Duration, u64)>,
    /// Work for the blocking pool; it wakes the instance when done.
    pub jobs: Vec<Job>,
}

/// See the module docs.
pub struct InstanceCore<R> {
    id: InstanceId,
    toolset: String,
    /// The opener's name for the instance, suggested to those it invites.
    name: Option<String>,
    options: Value,
    participants: Vec<Participant>,
    /// Participant principals that have the instance open, and their records.
    links: BTreeMap<ParticipantId, Link<R>>,
    /// Invited principals that have not joined, to withdraw the invitation from.
    invited: BTreeMap<ParticipantId, Invitee>,
    waiting: BTreeMap<CallId, Waiter>,
    next_call: u64,
    /// Set once the instance ended; it then only answers until every link is gone.
    ended: Option<String>,
    /// The instance's name as each participant principal knows it (§7).
    names: BTreeMap<ParticipantId, String>,
}

impl<R: Clone> InstanceCore<R> {
    /// An instance of `toolset` not opened yet.
    pub fn new(id: InstanceId, toolset: String) -> Self {
        InstanceCore {
            id,
            toolset,
            name: None,
            options: Value::Object(Default::default()),
            participants: Vec::new(),
            links: BTreeMap::new(),
            invited: BTreeMap::new(),
            waiting: BTreeMap::new(),
            next_call: 0,
            ended: None,
            names: BTreeMap::new(),
        }
    }

    /// An instance read back after a restart, with the links of the principals that still
    /// have it (the others left it).
    pub fn restored(
        id: InstanceId,
        record: InstanceRecord,
        links: BTreeMap<ParticipantId, Link<R>>,
    ) -> Self {
        let mut core = InstanceCore::new(id, record.toolset);
        core.name = record.name;
        core.options = record.options;
        core.participants = record
            .participants
            .into_iter()
            .enumerate()
            .map(|(i, p)| p.participant(i))
            .collect();
        for p in &mut core.participants {
            // A principal whose record no longer links here is gone from it.
            if let ParticipantKind::Principal(principal) = &p.kind
                && !links.contains_key(&p.id)
            {
                p.kind = ParticipantKind::Left(principal.clone());
            }
        }
        core.names = record
            .names
            .into_iter()
            .map(|(w, n)| (ParticipantId(w), n))
            .collect();
        let participants = &core.participants;
        core.invited = record
            .invited
            .into_iter()
            .filter(|(w, _)| {
                participants
                    .get(*w as usize)
                    .is_some_and(|p| matches!(p.kind, ParticipantKind::Invited(_)))
            })
            .map(|(w, i)| {
                let invitee = Invitee {
                    principal: Principal::Named(i.principal),
                    reason: i.reason,
                    options: i.options,
                };
                (ParticipantId(w), invitee)
            })
            .collect();
        core.links = links;
        core.next_call = record.next_call;
        core
    }

    // ---- getters ----

    /// The instance's id.
    pub fn id(&self) -> InstanceId {
        self.id
    }

    /// The toolset.
    pub fn toolset(&self) -> &str {
        &self.toolset
    }

    /// Why it ended, once it did.
    pub fn ended(&self) -> Option<&str> {
        self.ended.as_deref()
    }

    /// The link of `who`, if its principal has the instance open.
    pub fn link(&self, who: ParticipantId) -> Option<&Link<R>> {
        self.links.get(&who)
    }

    /// Participant `who`'s principal is reached through `principal` from now on (issue
    /// #41: it was released here and runs elsewhere next); its key stays. False when it
    /// does not link here.
    pub fn relink_participant(&mut self, who: ParticipantId, principal: R) -> bool {
        match self.links.get_mut(&who) {
            Some(link) => {
                link.principal = principal;
                true
            }
            None => false,
        }
    }

    /// True when no principal links here any more.
    pub fn is_unlinked(&self) -> bool {
        self.links.is_empty()
    }

    /// The calls waiting for an answer.
    pub fn waiting(&self) -> impl Iterator<Item = CallId> + '_ {
        self.waiting.keys().copied()
    }

    /// The instance's name as each participant principal knows it (§7).
    pub fn names(&self) -> &BTreeMap<ParticipantId, String> {
        &self.names
    }

    /// The participants, lent to a step's context; [`InstanceCore::put_participants`]
    /// gives them back.
    pub fn take_participants(&mut self) -> Vec<Participant> {
        std::mem::take(&mut self.participants)
    }

    /// The participants as the step left them.
    pub fn put_participants(&mut self, participants: Vec<Participant>) {
        self.participants = participants;
    }

    /// The instance's record (issue #15), with what its logic keeps.
    pub fn record(&self, logic: LogicRecord) -> InstanceRecord {
        InstanceRecord {
            toolset: self.toolset.clone(),
            name: self.name.clone(),
            options: self.options.clone(),
            participants: self
                .participants
                .iter()
                .map(ParticipantRecord::of)
                .collect(),
            names: self.names.iter().map(|(w, n)| (w.0, n.clone())).collect(),
            links: self
                .links
                .iter()
                .map(|(w, l)| (w.0, l.key.clone()))
                .collect(),
            invited: self
                .invited
                .iter()
                .filter_map(|(w, i)| {
                    let Principal::Named(principal) = &i.principal else {
                        return None;
                    };
                    Some((
                        w.0,
                        InviteRecord {
                            principal: principal.clone(),
                            reason: i.reason.clone(),
                            options: i.options.clone(),
                        },
                    ))
                })
                .collect(),
            // Ids are kept a block ahead (never one handed out again after a restart), so
            // a call that changes nothing else needs no write: a read is answered even
            // when the store can no longer be written (issue #37 item 2).
            next_call: self.next_call.div_ceil(CALL_ID_BLOCK) * CALL_ID_BLOCK,
            ended: self.ended.clone(),
            logic,
            // The actor's (what it sends principals on other servers, issue #41).
            outbox: BTreeMap::new(),
        }
    }

    // ---- inputs: who enters and leaves ----

    /// The opener (participant 0, `principal`) opens the instance under `link`; the
    /// logic's open runs next.
    pub fn handle_start(
        &mut self,
        opener: ParticipantId,
        principal: Principal,
        link: Link<R>,
        name: Option<String>,
        options: Value,
    ) {
        self.participants = vec![Participant {
            id: opener,
            kind: ParticipantKind::Principal(principal),
        }];
        if let Some(name) = &link.key.instance {
            self.names.insert(opener, name.clone());
        }
        self.links.insert(opener, link);
        self.name = name;
        self.options = options;
    }

    /// The logic refused the open (or failed): nobody links here.
    pub fn handle_start_failed(&mut self) {
        self.links.clear();
    }

    /// §4.6, §7: an invited principal may join, unless the instance ended or the
    /// invitation is no longer open.
    pub fn admit_join(&self, who: ParticipantId, principal: &Principal) -> Result<(), Refusal> {
        let invited = self
            .participants
            .get(who.0 as usize)
            .is_some_and(|p| p.kind == ParticipantKind::Invited(principal.clone()));
        if let Some(reason) = &self.ended {
            return Err(Refusal::new(format!("it has ended: {reason}")));
        }
        if !invited {
            return Err(Refusal::new("the invitation is no longer open"));
        }
        Ok(())
    }

    /// An admitted principal joins as `who` under `link`; the logic's join runs next.
    pub fn handle_join(&mut self, who: ParticipantId, principal: Principal, link: Link<R>) {
        self.participants[who.0 as usize].kind = ParticipantKind::Principal(principal);
        self.invited.remove(&who);
        if let Some(name) = &link.key.instance {
            self.names.insert(who, name.clone());
        }
        self.links.insert(who, link);
    }

    /// The join was refused or failed: the joiner's record was never announced, and it
    /// hears nothing more.
    pub fn handle_join_failed(&mut self, who: ParticipantId, principal: Principal) {
        self.participants[who.0 as usize].kind = ParticipantKind::Left(principal);
        self.links.remove(&who);
    }

    /// A participant leaves (a close, a leave): it is no longer reached, and calls it
    /// still waits on are answered (into `batch`, which goes to its principal). Nobody
    /// present any more: the instance ends without anyone to tell. True when it ended so.
    pub fn remove(&mut self, who: ParticipantId, batch: &mut Batch) -> bool {
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
        if self.ended.is_none() && !self.participants.iter().any(Participant::is_present) {
            self.ended = Some("closed".to_owned());
            return true;
        }
        false
    }

    /// A principal dropped its link after applying the instance's end.
    pub fn handle_unlink(&mut self, who: ParticipantId) {
        self.links.remove(&who);
    }

    /// §4.6, §7: the invited principal shows its invitation under `name`; false when it is
    /// no longer invited (nothing for the logic to hear).
    pub fn handle_named(&mut self, who: ParticipantId, name: Option<&str>) -> bool {
        let still_invited = self
            .participants
            .get(who.0 as usize)
            .is_some_and(|p| matches!(p.kind, ParticipantKind::Invited(_)));
        if still_invited && let Some(name) = name {
            self.names.insert(who, name.to_owned());
        }
        still_invited
    }

    /// The invited principal declines; false when the invitation was withdrawn meanwhile
    /// (the instance ended): nothing is left to decline.
    pub fn handle_decline(&mut self, who: ParticipantId, principal: Principal) -> bool {
        let Some(p) = self.participants.get_mut(who.0 as usize) else {
            return false;
        };
        if p.kind != ParticipantKind::Invited(principal.clone()) {
            return false;
        }
        p.kind = ParticipantKind::Declined(principal);
        self.invited.remove(&who);
        true
    }

    /// Every pending invitation withdrawn (the instance stops).
    pub fn withdraw_all(&mut self) -> Vec<Outgoing> {
        std::mem::take(&mut self.invited)
            .into_iter()
            .map(|(who, i)| Outgoing::Withdraw {
                to: i.principal,
                who,
            })
            .collect()
    }

    /// The invitations not taken up, sent again after a restart.
    pub fn invitations(&self) -> Vec<Outgoing> {
        self.invited
            .iter()
            .filter_map(|(who, i)| self.invitation(*who, i))
            .collect()
    }

    // ---- inputs: calls and steps ----

    /// §4.5: a call reaches the logic only while the instance runs and its caller is in
    /// it; otherwise the text it is refused with.
    pub fn admit_call(&self, who: ParticipantId) -> Result<(), String> {
        match (&self.ended, self.links.contains_key(&who)) {
            (Some(reason), _) => Err(format!("{} has ended: {reason}", self.toolset)),
            (None, false) => Err(format!(
                "You are no longer in this {} instance.",
                self.toolset
            )),
            (None, true) => Ok(()),
        }
    }

    /// An admitted call waits from the start, so the logic may answer it through the
    /// context too; its id.
    pub fn begin_call(&mut self, waiter: Waiter) -> CallId {
        let id = CallId(self.next_call);
        self.next_call += 1;
        self.waiting.insert(id, waiter);
        id
    }

    /// The call `id` is no longer waited for (answered now, or its step failed).
    pub fn end_call(&mut self, id: CallId) -> Option<Waiter> {
        self.waiting.remove(&id)
    }

    /// Carries out a step's effects, in order. `caller` is the call the step runs for, and
    /// `own` that call with its result when the step answered it; every other call answered
    /// is answered as deferred (§5.3).
    pub fn step(
        &mut self,
        effects: Vec<Effect>,
        own: Option<(Waiter, ToolResult)>,
        caller: Option<CallId>,
    ) -> Step {
        // §5.3: a hold covers every change of the step that asked for it, even those
        // recorded before it.
        for effect in &effects {
            if let Effect::Hold { call } = effect
                && let Some(w) = self.waiting.get_mut(call)
            {
                w.hold = true;
            }
        }
        let mut step = Step {
            batches: self.empty_batches(),
            ..Step::default()
        };
        if let Some((w, result)) = own {
            push_answer(
                &mut step.batches,
                w,
                result.or_else(ToolError::into_outcome),
                false,
            );
        }
        for effect in effects {
            let batches = &mut step.batches;
            match effect {
                Effect::Visible { to, tool, visible } => {
                    for b in audience(batches, to) {
                        b.changes.push(Change::Visible {
                            tool: tool.clone(),
                            visible,
                        });
                    }
                }
                Effect::Definition {
                    to,
                    tool,
                    definition,
                } => {
                    for b in audience(batches, to) {
                        b.changes.push(Change::Definition {
                            tool: tool.clone(),
                            definition: definition.clone().map(Box::new),
                        });
                    }
                }
                Effect::Title { to, title } => {
                    for b in audience(batches, to) {
                        b.changes.push(Change::Title(title.clone()));
                    }
                }
                Effect::Event { to, event } => {
                    for b in audience(batches, to) {
                        b.events.push(event.clone());
                    }
                }
                Effect::Answer { call, result } => match self.waiting.remove(&call) {
                    Some(w) => {
                        let outcome = result.or_else(ToolError::into_outcome);
                        push_answer(batches, w, outcome, Some(call) != caller);
                    }
                    None => {
                        tracing::error!(instance = %self.id, ?call, "answer to a call that is not waiting")
                    }
                },
                Effect::Invite {
                    who,
                    reason,
                    options,
                } => self.invite(who, reason, options, &mut step.outgoing),
                Effect::Wake { after, tag } => step.timers.push((after, tag)),
                Effect::Spawn(job) => step.jobs.push(job),
                Effect::Hold { .. } => {}
                Effect::End { reason, view } => {
                    self.finish(&reason, &mut step, caller, |r| {
                        Ok(CallToolResult::error(format!(
                            "It ended before answering: {r}"
                        )))
                    });
                    for b in step.batches.values_mut() {
                        b.last_view.clone_from(&view);
                    }
                }
            }
        }
        self.mark_holds(&mut step.batches);
        step
    }

    /// The logic panicked: the instance ends with [`INTERNAL_ERROR`] for everyone, and the
    /// calls it owed (`own` among them) fail with -32603.
    pub fn fail(&mut self, panic: &str, own: Option<Waiter>) -> Step {
        tracing::error!(instance = %self.id, toolset = %self.toolset, %panic, "the toolset's logic panicked; the instance ends");
        let failed = || Err(ErrorObject::internal("the toolset's logic failed"));
        let mut step = Step {
            batches: self.empty_batches(),
            ..Step::default()
        };
        if let Some(w) = own {
            push_answer(&mut step.batches, w, failed(), false);
        }
        self.finish(INTERNAL_ERROR, &mut step, None, |_| failed());
        step
    }

    /// Ends the instance: every present principal's record ends with `reason`, every call
    /// still waiting is answered with `answer(reason)` (deferred, but for `caller`, the
    /// call whose step ended it), invitations are withdrawn.
    fn finish(
        &mut self,
        reason: &str,
        step: &mut Step,
        caller: Option<CallId>,
        answer: impl Fn(&str) -> Result<CallToolResult, ErrorObject>,
    ) {
        tracing::debug!(instance = %self.id, toolset = %self.toolset, reason, "instance ended");
        self.ended = Some(reason.to_owned());
        for b in step.batches.values_mut() {
            b.ended = Some(reason.to_owned());
        }
        for (call, w) in std::mem::take(&mut self.waiting) {
            push_answer(&mut step.batches, w, answer(reason), Some(call) != caller);
        }
        step.outgoing.extend(self.withdraw_all());
    }

    /// Tells each principal which of its sessions' calls hold their caller's changes: the
    /// oldest held call per session (`InstanceContext::hold_for`).
    fn mark_holds(&self, batches: &mut BTreeMap<ParticipantId, Batch>) {
        for w in self.waiting.values().filter(|w| w.hold) {
            if let Some(b) = batches.get_mut(&w.who)
                && !b.holds.iter().any(|(s, _)| *s == w.session)
            {
                b.holds.push((w.session, w.request.clone()));
            }
        }
    }

    fn empty_batches(&self) -> BTreeMap<ParticipantId, Batch> {
        self.links
            .iter()
            .map(|(who, link)| (*who, Batch::new(self.id, link.key.clone())))
            .collect()
    }

    fn invite(
        &mut self,
        who: ParticipantId,
        reason: String,
        options: Option<Value>,
        outgoing: &mut Vec<Outgoing>,
    ) {
        let Some(principal) = self
            .participants
            .get(who.0 as usize)
            .and_then(|p| p.principal())
            .cloned()
        else {
            return;
        };
        // The instance's own options, unless the logic names others (or it has none).
        let options = options.or_else(|| {
            Some(self.options.clone()).filter(|o| o.as_object().is_none_or(|m| !m.is_empty()))
        });
        let invitee = Invitee {
            principal,
            reason,
            options,
        };
        outgoing.extend(self.invitation(who, &invitee));
        self.invited.insert(who, invitee);
    }

    /// The invitation of `who`, to its principal, from the opener's (participant 0,
    /// always a principal).
    fn invitation(&self, who: ParticipantId, invitee: &Invitee) -> Option<Outgoing> {
        let from = self
            .participants
            .first()
            .and_then(|p| p.principal())
            .cloned()?;
        Some(Outgoing::Invite {
            to: invitee.principal.clone(),
            invite: Invite {
                who,
                toolset: self.toolset.clone(),
                name: self.name.clone(),
                options: invitee.options.clone(),
                reason: invitee.reason.clone(),
                from,
            },
        })
    }
}

/// §4.6: a principal whose record already ended on its side (its last connection closed,
/// a manifest change) hears only answers of the step its leaving ran.
pub fn left(batch: &mut Batch) {
    batch.changes.clear();
    batch.events.clear();
    batch.ended = None;
}

/// The batches of the present participants in `to`.
fn audience(
    batches: &mut BTreeMap<ParticipantId, Batch>,
    to: Audience,
) -> impl Iterator<Item = &mut Batch> {
    batches
        .iter_mut()
        .filter(move |(who, _)| to.includes(**who))
        .map(|(_, b)| b)
}

fn push_answer(
    batches: &mut BTreeMap<ParticipantId, Batch>,
    w: Waiter,
    outcome: Result<CallToolResult, ErrorObject>,
    deferred: bool,
) {
    match batches.get_mut(&w.who) {
        Some(b) => b.answers.push(CallAnswer {
            session: w.session,
            request: w.request,
            outcome,
            deferred,
        }),
        None => tracing::debug!(who = %w.who, "answer for a participant no longer linked; dropped"),
    }
}

//! Applying what an instance did to the principal's state, and sending the result to every
//! session (§4.6: each numbers it on its own counter; §5.3: each chooses the carrier).

use super::{Deliver, PrincipalActor};
use crate::actors::instance::{Batch, Change, Unlink};
use crate::actors::principal::{Answer, AnswerBody};
use crate::author::Event;
use crate::core::{HintDraft, InstanceKey};
use crate::ids::SessionId;
use crate::store::Ticket;
use crate::store::records::NotKept;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::Id;

/// A batch applied: the changes as hints, what explains them, the answers it carried, and
/// the calls whose result is to carry the changes on their session (§5.3).
pub(super) struct Applied {
    pub(super) draft: HintDraft,
    pub(super) events: Vec<Event>,
    pub(super) answers: Vec<(SessionId, Answer)>,
    pub(super) holds: Vec<(SessionId, Id)>,
    /// About an instance open only for plain hosts (§8): its events go to no hinted host.
    pub(super) hidden: bool,
    /// The instance's ticket in the commit queue: nothing of this is told before it is
    /// kept (issue #42 item 1).
    pub(super) after: Ticket,
}

impl Applied {
    /// Nothing yet.
    pub(super) fn empty() -> Self {
        Applied {
            draft: HintDraft::new(),
            events: Vec::new(),
            answers: Vec::new(),
            holds: Vec::new(),
            hidden: false,
            after: Ticket::NONE,
        }
    }

    /// True when it tells no one anything.
    fn is_silent(&self) -> bool {
        self.draft.is_empty() && self.answers.is_empty() && self.events.is_empty()
    }

    /// It could not be kept (issue #37 item 2): nothing of it is told, and its answers
    /// fail.
    fn refuse(&mut self, not_kept: &NotKept) {
        self.draft = HintDraft::new();
        self.events.clear();
        self.holds.clear();
        for (_, a) in &mut self.answers {
            a.body.refuse(not_kept);
        }
    }
}

/// What the principal is to tell once the records it depends on are kept (issue #42 item
/// 1): the instance's and the principal's own, the later of the two tickets — or refused
/// at once, the store being given up.
pub(super) struct Telling {
    told: Told,
    after: Result<Ticket, NotKept>,
    /// Its number (`told_seq`): sessions attached after it was made do not get it.
    seq: u64,
}

/// What waits its turn to be told.
enum Told {
    /// A batch applied (or an open, a close): its draft, events and answers, refused if
    /// not kept.
    Applied {
        about: Option<InstanceKey>,
        applied: Applied,
    },
    /// Something that tells what the state is (a `tools/list`, a `toolsets/list`, an
    /// invitation's push), made when its turn comes: after the changes before it, and of
    /// the state kept when they were rolled back.
    Read(Box<dyn FnOnce(&mut PrincipalActor)>),
}

impl Handler<Batch> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, batch: Batch, ctx: &mut Context<Self>) {
        let key = batch.key.clone();
        let ended = batch.ended.is_some();
        let mut applied = self.apply(batch, true);
        applied.draft.compact();
        self.fan_out(Some(key), applied, ctx);
        if ended {
            self.reopen_for_plain_hosts(ctx);
            self.maybe_retire(ctx);
        }
    }
}

impl PrincipalActor {
    /// Applies an instance's batch to the state, in order; its end last. With
    /// `check_link`, a batch from an instance this principal no longer links to under that
    /// name (closed, or closed and re-opened as another) changes nothing: only its answers
    /// are delivered.
    pub(super) fn apply(&mut self, batch: Batch, check_link: bool) -> Applied {
        let answers = batch
            .answers
            .into_iter()
            .map(|a| {
                let answer = Answer {
                    request: a.request,
                    body: AnswerBody::Call(a.outcome),
                    deferred: a.deferred,
                };
                (a.session, answer)
            })
            .collect();
        let mut applied = Applied {
            answers,
            hidden: self.state.is_implicit(&batch.key),
            after: batch.kept,
            ..Applied::empty()
        };
        let fresh = !check_link
            || self
                .links
                .get(&batch.key)
                .is_some_and(|l| l.id == batch.instance);
        if !fresh {
            return applied;
        }
        applied.events = batch.events;
        applied.holds = batch.holds;
        let key = &batch.key;
        let instance = key.instance.as_deref();
        for change in batch.changes {
            let done = match change {
                Change::Visible { tool, visible } => {
                    self.state.set_visible(&tool, instance, visible)
                }
                Change::Definition { tool, definition } => {
                    self.state
                        .set_definition(&tool, instance, definition.map(|d| *d))
                }
                Change::Title(title) => self.state.retitle(key, &title),
            };
            match done {
                Ok(d) => applied.draft.append(d),
                Err(e) => {
                    tracing::error!(principal = %self.principal.name(), %key, error = %e, "a change from the toolset's logic cannot apply")
                }
            }
        }
        if let Some(reason) = batch.ended {
            // §4.3: every end the principal did not ask for gets a record, told to every
            // connection now; the one it is closing (`close.rs`) gets none.
            let ended = if self.closing.as_ref() == Some(key) {
                self.state.end_asked(key, &reason)
            } else {
                let now = self.shared.now();
                self.state
                    .end_showing(key, &reason, batch.last_view.clone(), now)
            };
            if let Ok(ended) = ended {
                applied.draft.append(ended.draft);
            }
            if let Some(link) = self.links.remove(key) {
                link.addr.do_send(Unlink { who: link.who });
            }
        }
        applied
    }

    /// Keeps the state, then sends the draft, with what explains it, to every session
    /// (`deliver`) once it is kept — and once the instance's step it comes from is
    /// (`applied.after`).
    ///
    /// Issue #15: the state is kept before anyone is told of it. Issue #42 item 1: the
    /// record is handed to the commit queue and what it explains waits, in order, for its
    /// ticket (`drain`). Issue #37 item 2: what could not be kept is told to no one, the
    /// state goes back to what was kept, and the answers fail.
    pub(super) fn fan_out(
        &mut self,
        about: Option<InstanceKey>,
        applied: Applied,
        ctx: &mut Context<Self>,
    ) {
        let before = self.written_at;
        let after = self.persist().map(|own| own.max(applied.after));
        // Nothing to tell and nothing of its own handed over: nothing to wait for.
        if applied.is_silent() && after.as_ref().is_ok_and(|_| self.written_at == before) {
            return;
        }
        self.push_told(Told::Applied { about, applied }, after);
        self.drain(ctx);
    }

    /// Runs `read` now when nothing waits to be told, else in its turn after what waits.
    /// **\[project\]** A read never shows a change not kept yet (issue #42 item 1).
    pub(super) fn in_turn(&mut self, read: impl FnOnce(&mut PrincipalActor) + 'static) {
        if self.told.is_empty() {
            return read(self);
        }
        self.push_told(Told::Read(Box::new(read)), Ok(self.written_at));
    }

    fn push_told(&mut self, told: Told, after: Result<Ticket, NotKept>) {
        self.told_seq += 1;
        self.told.push_back(Telling {
            told,
            after,
            seq: self.told_seq,
        });
    }

    /// Sends `deliver` to `session` in its turn ([`PrincipalActor::in_turn`]).
    pub(super) fn deliver_in_turn(&mut self, session: SessionId, deliver: Deliver) {
        self.in_turn(move |act| {
            if let Some(s) = act.sessions.get(&session) {
                s.to.deliver.do_send(deliver);
            }
        });
    }

    /// Keeps the state, telling nothing; a record that could not be kept is rolled back
    /// (`drain`).
    pub(super) fn keep_quietly(&mut self, ctx: &mut Context<Self>) {
        self.fan_out(None, Applied::empty(), ctx);
    }

    /// Tells, in order, what waits whose tickets are decided; waits for the first that is
    /// not, the actor going on meanwhile: what it does then waits behind (`in_turn`), and
    /// builds on changes not kept yet, which are all given up together if one is not (the
    /// store gives up every later step with it).
    fn drain(&mut self, ctx: &mut Context<Self>) {
        if self.draining {
            // Its wait is under way, and drains again when it ends.
            return;
        }
        while let Some(first) = self.told.front() {
            let outcome = match &first.after {
                Ok(ticket) => self.shared.outcome(*ticket),
                Err(not_kept) => Some(Err(not_kept.clone())),
            };
            let Some(outcome) = outcome else {
                let ticket = first.after.as_ref().map_or(Ticket::NONE, |t| *t);
                self.draining = true;
                let kept = self
                    .shared
                    .kept(ticket)
                    .into_actor(self)
                    .map(|_, act, ctx| {
                        act.draining = false;
                        act.drain(ctx);
                    });
                ctx.spawn(kept);
                return;
            };
            let Some(Telling { told, after, seq }) = self.told.pop_front() else {
                return;
            };
            match &outcome {
                Ok(()) => {
                    if let Ok(ticket) = after {
                        self.kept_up_to(ticket);
                    }
                }
                Err(_) => self.roll_back(),
            }
            match told {
                Told::Applied { about, mut applied } => {
                    if let Err(not_kept) = &outcome {
                        applied.refuse(not_kept);
                    }
                    self.deliver(about, applied, seq);
                }
                Told::Read(read) => read(self),
            }
        }
    }

    /// Sends what was kept to every session: each gets its own answers (which carry the
    /// draft for it), the events, and the call holding the draft for its result, if one
    /// of its calls does (§5.3).
    fn deliver(&mut self, about: Option<InstanceKey>, applied: Applied, seq: u64) {
        if applied.is_silent() {
            return;
        }
        let Applied {
            draft,
            events,
            mut answers,
            holds,
            hidden,
            ..
        } = applied;
        for (id, s) in self.sessions.iter().filter(|(_, s)| s.since < seq) {
            let mine: Vec<Answer> = extract(&mut answers, *id);
            let events = if hidden && !s.plain {
                &Vec::new()
            } else {
                &events
            };
            if draft.is_empty() && mine.is_empty() && events.is_empty() {
                continue;
            }
            let hold = holds
                .iter()
                .find(|(session, _)| session == id)
                .map(|(_, request)| request.clone());
            s.to.deliver.do_send(Deliver {
                about: about.clone(),
                draft: draft.clone(),
                answers: mine,
                events: events.clone(),
                hold,
            });
        }
        for (id, a) in answers {
            tracing::debug!(session = %id, request = %a.request, "answer for a session that is gone; dropped");
        }
    }

    /// Answers one request of one session, changing nothing — after what waits to be
    /// told before it, in order.
    pub(super) fn answer(&mut self, session: SessionId, request: Id, body: AnswerBody) {
        let answer = Answer {
            request,
            body,
            deferred: false,
        };
        if !self.told.is_empty() {
            let applied = Applied {
                answers: vec![(session, answer)],
                ..Applied::empty()
            };
            let after = Ok(self.written_at);
            self.push_told(
                Told::Applied {
                    about: None,
                    applied,
                },
                after,
            );
            // Its wait is under way (`drain`).
            return;
        }
        if let Some(s) = self.sessions.get(&session) {
            s.to.deliver.do_send(Deliver {
                about: None,
                draft: HintDraft::new(),
                answers: vec![answer],
                events: Vec::new(),
                hold: None,
            });
        }
    }
}

fn extract(answers: &mut Vec<(SessionId, Answer)>, id: SessionId) -> Vec<Answer> {
    let mut mine = Vec::new();
    let mut i = 0;
    while i < answers.len() {
        if answers[i].0 == id {
            mine.push(answers.remove(i).1);
        } else {
            i += 1;
        }
    }
    mine
}

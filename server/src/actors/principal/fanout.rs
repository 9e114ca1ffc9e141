//! Applying what an instance did to the principal's state, and sending the result to every
//! session (§4.6: each numbers it on its own counter; §5.3: each chooses the carrier).

use super::{Deliver, PrincipalActor};
use crate::actors::instance::{Batch, Change, Unlink};
use crate::actors::principal::{Answer, AnswerBody};
use crate::author::Event;
use crate::core::{HintDraft, InstanceKey};
use crate::ids::SessionId;
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
        }
    }
}

impl Handler<Batch> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, batch: Batch, ctx: &mut Context<Self>) {
        let key = batch.key.clone();
        let ended = batch.ended.is_some();
        let mut applied = self.apply(batch, true);
        applied.draft.compact();
        self.fan_out(Some(key), applied);
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

    /// Sends the draft, with what explains it, to every session: each gets its own answers
    /// (which carry the draft for it), the events, and the call holding the draft for its
    /// result, if one of its calls does (§5.3).
    pub(super) fn fan_out(&mut self, about: Option<InstanceKey>, applied: Applied) {
        let Applied {
            mut draft,
            mut events,
            mut answers,
            mut holds,
            hidden,
        } = applied;
        // Issue #15: the state is kept before anyone is told of it. Issue #37 item 2:
        // what could not be kept is told to no one, the state goes back to what was
        // kept, and the answers fail.
        if let Err(not_kept) = self.persist() {
            self.roll_back();
            draft = HintDraft::new();
            events.clear();
            holds.clear();
            for (_, a) in &mut answers {
                a.body.refuse(&not_kept);
            }
        }
        if draft.is_empty() && answers.is_empty() && events.is_empty() {
            return;
        }
        for (id, s) in &self.sessions {
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

    /// Answers one request of one session, changing nothing.
    pub(super) fn answer(&mut self, session: SessionId, request: Id, body: AnswerBody) {
        if let Some(s) = self.sessions.get(&session) {
            s.to.deliver.do_send(Deliver {
                about: None,
                draft: HintDraft::new(),
                answers: vec![Answer {
                    request,
                    body,
                    deferred: false,
                }],
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

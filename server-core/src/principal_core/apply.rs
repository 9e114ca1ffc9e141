//! Applying what an instance did to the principal's state (§5.1), the end it may carry —
//! asked or shown (§4.3) — and what each session is told of it (§4.6: each numbers the same
//! draft on its own counter; §5.3: each chooses the carrier; §8: an implicit instance's
//! events reach plain hosts only).

use super::{Answer, AnswerBody, Deliver, Output, PrincipalCore};
use crate::author::Event;
use crate::batch::{Batch, Change};
use crate::ids::SessionId;
use crate::store::Ticket;
use crate::store::records::NotKept;
use crate::{HintDraft, InstanceKey};
use mcpl_protocol::jsonrpc::Id;
use std::time::SystemTime;

/// A batch applied: the changes as hints, what explains them, the answers it carried, and
/// the calls whose result is to carry the changes on their session (§5.3).
#[derive(Debug)]
pub struct Applied {
    /// The changes, as hints.
    pub draft: HintDraft,
    /// Events explaining them.
    pub events: Vec<Event>,
    /// Answers for sessions, each with its session.
    pub answers: Vec<(SessionId, Answer)>,
    /// Calls whose result is to carry the changes on their session (§5.3).
    pub holds: Vec<(SessionId, Id)>,
    /// About an instance open only for plain hosts (§8): its events go to no hinted host.
    pub hidden: bool,
    /// The instance's ticket in the commit queue: nothing of this is told before it is
    /// kept (issue #42 item 1).
    pub after: Ticket,
}

impl Applied {
    /// Nothing yet.
    pub fn empty() -> Self {
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
    pub fn is_silent(&self) -> bool {
        self.draft.is_empty() && self.answers.is_empty() && self.events.is_empty()
    }

    /// It could not be kept (issue #37 item 2): nothing of it is told, and its answers
    /// fail.
    pub fn refuse(&mut self, not_kept: &NotKept) {
        self.draft = HintDraft::new();
        self.events.clear();
        self.holds.clear();
        for (_, a) in &mut self.answers {
            a.body.refuse(not_kept);
        }
    }
}

impl<A: Clone> PrincipalCore<A> {
    /// An instance's batch, sent to this principal (not awaited by it): applied and told;
    /// after an end, a plain connection's toolsets open implicitly again (§8). True when
    /// it ended the instance.
    pub fn handle_batch(&mut self, batch: Batch, now: SystemTime) -> bool {
        let key = batch.key.clone();
        let ended = batch.ended.is_some();
        let mut applied = self.apply(batch, true, now);
        applied.draft.compact();
        self.tell(Some(key), applied);
        if ended {
            self.reopen_for_plain_hosts(now);
        }
        ended
    }

    /// Applies an instance's batch to the state, in order; its end last. With
    /// `check_link`, a batch from an instance this principal no longer links to under that
    /// name (closed, or closed and re-opened as another) changes nothing: only its answers
    /// are delivered.
    pub(super) fn apply(&mut self, batch: Batch, check_link: bool, now: SystemTime) -> Applied {
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
            // §5.1: hint entries state values, and only what changed.
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
                    tracing::error!(%key, error = %e, "a change from the toolset's logic cannot apply")
                }
            }
        }
        if let Some(reason) = batch.ended {
            // §4.3: every end the principal did not ask for gets a record, told to every
            // connection now; the one it is closing (`requests.rs`) gets none.
            let ended = if self.closing.as_ref() == Some(key) {
                self.state.end_asked(key, &reason)
            } else {
                self.state
                    .end_showing(key, &reason, batch.last_view.clone(), now)
            };
            if let Ok(ended) = ended {
                applied.draft.append(ended.draft);
            }
            if let Some(link) = self.links.remove(key) {
                self.out.push_back(Output::Unlink(link));
            }
        }
        applied
    }

    /// What each session is told of what was kept (numbered `seq` when it was made;
    /// sessions attached after are not told it): its own answers (which carry the draft
    /// for it), the events — none of an implicit instance's to a hinted host (§8) — and the
    /// call holding the draft for its result, if one of its calls does (§5.3). The same
    /// draft for each (§4.6). Answers for sessions that are gone are dropped.
    pub fn split(
        &self,
        about: Option<InstanceKey>,
        applied: Applied,
        seq: u64,
    ) -> Vec<(SessionId, Deliver)> {
        let mut out = Vec::new();
        if applied.is_silent() {
            return out;
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
            let deliver = Deliver {
                about: about.clone(),
                draft: draft.clone(),
                answers: mine,
                events: events.clone(),
                hold,
            };
            out.push((*id, deliver));
        }
        for (id, a) in answers {
            tracing::debug!(session = %id, request = %a.request, "answer for a session that is gone; dropped");
        }
        out
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

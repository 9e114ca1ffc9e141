//! [`SessionCore`]: one connection's requests in flight ([`Requests`]) and the changes held
//! for a call's result ([`Carriers`]), composed with the rules that join them — the part of
//! §5.2/§5.3 an implementer gets wrong when the two tables live apart:
//!
//! - **a delivery** (changes from the principal with the answers and events that explain
//!   them) is settled against the requests in flight: an answer's fate is whether its
//!   request is still awaited, cancelled or unknown (and settling it frees its id); a hold
//!   is kept only for a call still awaited and not cancelled; then the carrier choice
//!   ([`Carriers::deliver`]) says where each part goes;
//! - **a cancellation** of a request in flight sends what that call held at once, as
//!   `tools/hints` (vector 29), and stops a running handler or marks a forwarded request;
//!   a cancellation of anything else does nothing (MCP);
//! - **a handler call's end** writes its response with what it held, unless it was
//!   cancelled, in which case nothing is written (what it held went at the cancel).
//!
//! The lifecycle (`lifecycle.rs`) stays its own core: these rules need of it only whether
//! the host is shown hints, which the session passes in.

use super::carrier::{AnswerFacts, AnswerKind, Carriers, Carry, Conditions, Delivery, Fate};
use super::draft::HintDraft;
use super::requests::{Cancelled, ProgressRefused, Requests, Settled};
use mcpl_protocol::jsonrpc::Id;

/// One answer of a delivery, before the session's requests settle it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Incoming {
    /// The request answered.
    pub(crate) request: Id,
    /// What the answer is. A [`AnswerKind::Handler`] answers a tool handler's own
    /// request, which the session's handler table settles, not this core.
    pub(crate) kind: AnswerKind,
    /// A deferred call answered by a step something else caused (§5.3).
    pub(crate) deferred: bool,
}

/// What a delivery came to.
#[derive(Debug, PartialEq)]
pub(crate) struct Delivered {
    /// Each answer's fate, in order (to log an answer nobody waits for).
    pub(crate) fates: Vec<Fate>,
    /// The steps to take, in order.
    pub(crate) steps: Vec<Carry>,
}

/// What a handler call's end comes to.
#[derive(Debug, PartialEq)]
pub(crate) enum CallEnd {
    /// Write its response, carrying these changes when it is a result (an error does
    /// not: they go after it as `tools/hints`).
    Respond(Option<HintDraft>),
    /// It was cancelled: write nothing.
    Cancelled,
}

/// See the module docs. `H` stops a running handler call (the session's task handles).
pub(crate) struct SessionCore<H> {
    requests: Requests<H>,
    carriers: Carriers,
}

impl<H> Default for SessionCore<H> {
    fn default() -> Self {
        SessionCore {
            requests: Requests::default(),
            carriers: Carriers::default(),
        }
    }
}

impl<H> SessionCore<H> {
    /// A delivery from the principal; `c.hinted` and `c.may_push` as the lifecycle has them.
    pub(crate) fn deliver(
        &mut self,
        draft: HintDraft,
        answers: Vec<Incoming>,
        events: usize,
        hold: Option<Id>,
        c: Conditions,
    ) -> Delivered {
        let mut fates = Vec::with_capacity(answers.len());
        let answers = answers
            .into_iter()
            .map(|a| {
                let fate = match a.kind {
                    AnswerKind::Handler { .. } => Fate::Awaited,
                    _ => match self.requests.settle(&a.request) {
                        Settled::Answer => Fate::Awaited,
                        Settled::Cancelled => Fate::Cancelled,
                        Settled::Unknown => Fate::NobodyWaits,
                    },
                };
                fates.push(fate);
                AnswerFacts {
                    request: a.request,
                    kind: a.kind,
                    deferred: a.deferred,
                    fate,
                }
            })
            .collect();
        // A hold for a call no longer awaited (answered in this very delivery, cancelled,
        // unknown) would never be released by its result.
        let hold = hold.filter(|call| self.requests.awaits_answer(call));
        let delivery = Delivery {
            draft,
            answers,
            events,
            hold,
        };
        let steps = self.carriers.deliver(delivery, c);
        Delivered { fates, steps }
    }

    /// `notifications/cancelled` for the host's request `id`: `None` when nothing is in
    /// flight under it; else what to stop (a running handler's `H`, or `None` for a
    /// forwarded request now marked) and the steps sending what it held (vector 29).
    pub(crate) fn cancel(&mut self, id: &Id, hinted: bool) -> Option<(Option<H>, Vec<Carry>)> {
        let stop = match self.requests.cancel(id) {
            Cancelled::Nothing => return None,
            Cancelled::Forwarded => None,
            Cancelled::Running(h) => Some(h),
        };
        let held = self.carriers.take_for(id, hinted);
        Some((stop, self.carriers.standalone(held)))
    }

    /// A handler call's task ended.
    pub(crate) fn call_ended(&mut self, id: &Id, key: u64, hinted: bool) -> CallEnd {
        if self.requests.finish(id, key) {
            CallEnd::Respond(self.carriers.take_for(id, hinted))
        } else {
            CallEnd::Cancelled
        }
    }

    // ---- one table alone ----

    /// True when a request with this id is in flight: another may not take it.
    pub(crate) fn in_use(&self, id: &Id) -> bool {
        self.requests.in_use(id)
    }

    /// Records a request forwarded to the principal.
    pub(crate) fn forward(&mut self, id: Id) {
        self.requests.forward(id);
    }

    /// The principal's answer to a forwarded request that is not part of a delivery
    /// (`tools/list`, `toolsets/list`) came back.
    pub(crate) fn settle(&mut self, id: &Id) -> Settled {
        self.requests.settle(id)
    }

    /// A key for a handler call about to start.
    pub(crate) fn new_key(&mut self) -> u64 {
        self.requests.new_key()
    }

    /// Records a started handler call.
    pub(crate) fn start(&mut self, id: Id, key: u64, handle: H) {
        self.requests.start(id, key, handle);
    }

    /// True while the handler call with this id and key runs.
    pub(crate) fn is_running(&self, id: &Id, key: u64) -> bool {
        self.requests.is_running(id, key)
    }

    /// Records a running call's progress before it is sent (it only increases).
    pub(crate) fn progress(&mut self, id: &Id, key: u64, p: f64) -> Result<(), ProgressRefused> {
        self.requests.progress(id, key, p)
    }

    /// How many handler calls run.
    pub(crate) fn running(&self) -> usize {
        self.requests.running()
    }

    /// The session is stopping: every running call's `H`.
    pub(crate) fn stop_all(&mut self) -> Vec<H> {
        self.requests.cancel_all()
    }

    /// What is held, as the step that writes it before another hint-carrying message.
    pub(crate) fn flush(&mut self) -> Option<Carry> {
        self.carriers.flush()
    }

    /// Drops what is held (the host is no longer shown hints).
    pub(crate) fn clear_held(&mut self) {
        self.carriers.clear();
    }

    /// Changes that no answer or event explains: `tools/hints`, after what is held.
    pub(crate) fn standalone(&mut self, draft: Option<HintDraft>) -> Vec<Carry> {
        self.carriers.standalone(draft)
    }
}

#[cfg(test)]
mod tests;

//! [`Carriers`]: how one connection's changes travel (§5.2, §5.3) — the carrier choice, and
//! the changes held for a call's result — as a state machine with no I/O. The session
//! tells it what a delivery from the principal holds and what it knows of each request
//! answered; [`Carriers::deliver`] returns the [`Carry`] steps to take, in order, and the
//! session takes them (writes, a handler run) without deciding anything more.
//!
//! # The carrier of a delivery's changes
//!
//! 1. **In a result**, when the delivery answers one of this session's requests: the call
//!    reports its own consequences, and no push follows for them (vector 2). Events of the
//!    same delivery are not pushed: the result is this connection's account of them. If
//!    that request was cancelled, no result is written (vector 29):
//!    - the call's own consequences — the step that ran for it — go as `tools/hints`
//!      (§5.2 "Cancelled calls"), and what it held went at the cancel;
//!    - a **deferred** call answered by a step something else caused (another's move, a
//!      timer) accounts for nothing any more: the delivery is that something's
//!      consequences, so it goes as it would have without the call — its events pushed
//!      with the changes as hints (§5.3), or `tools/hints` where pushing is not allowed.
//!      **\[project\]** reading of §5.2/§5.3: the agent that gave up waiting still hears
//!      what happened ("bob took 1…").
//!
//!    An error answer carries no `_meta`: its changes go as `tools/hints` after it.
//! 2. **On a push**, when it has events and the session may push: the first event carries
//!    the changes as its `hints` (vector 3). Such a push is never retried and never has
//!    `coalesce` (§5.2).
//! 3. **Standalone** `tools/hints` otherwise: nothing explains them, or pushing is not
//!    allowed — no `pushEvents` grant, or the handshake not complete (vector 31).
//!
//! A host not shown hints never gets changes (vector 8): results go without
//! `_meta["mcpl/hints"]`, pushes without `hints`, and no `tools/hints` is written.
//!
//! # Held for a result (§5.3), without breaking the order of revs (§5.2)
//!
//! Two things hold changes for a call not yet answered: a tool handler that opened or
//! closed a toolset for its caller, and a deferred instance call whose logic asked for it
//! (`hold`). Their changes are stated by the principal *now*, in the principal's order,
//! but written *later*, with the result. Revs are taken as messages are written, so held
//! changes take theirs only when written — and must not be written after changes the
//! principal stated later. So at most one call's changes are held at a time, and they are
//! always the latest the session was given:
//!
//! - changes for the call already holding are appended to what it holds;
//! - changes for another call make the held ones go first, as `tools/hints`;
//! - before any other hint-carrying write (a result, a push, `tools/hints`, a
//!   `toolsets/list` statement), the held changes go first, as `tools/hints`
//!   ([`Carriers::flush`]);
//! - the call's result carries what is still held for it; a call cancelled (vector 29),
//!   or answered with a JSON-RPC error, sends what it held as `tools/hints`;
//! - a close and a re-open of the same instance never share a message.
//!
//! Writes without hint changes (a push without hints, a `tools/list` result, which takes
//! no rev) do not disturb what is held.

use super::HintDraft;
use mcpl_protocol::jsonrpc::Id;

/// What the session knows of the request an answer is for, once it has settled it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// The host still waits for it.
    Awaited,
    /// The host cancelled it (MCP `notifications/cancelled`).
    Cancelled,
    /// No request of this session waits for it.
    NobodyWaits,
}

/// What an answer of a delivery is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerKind {
    /// A result to write (`tools/call`, `toolsets/open`, `toolsets/close`).
    Result,
    /// A JSON-RPC error to write.
    Error,
    /// The call goes to a tool's own handler, which the session runs: not an answer yet.
    RunHandler,
    /// The answer to a tool handler's open or close for its caller `call` (none: the
    /// session knows no such handler request); `running`: that call's handler still runs,
    /// so the changes are held for its result.
    Handler {
        /// The call the handler serves.
        call: Option<Id>,
        /// Its handler still runs.
        running: bool,
    },
}

/// One answer of a delivery, as the session settled it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerFacts {
    /// The request answered.
    pub request: Id,
    /// What the answer is.
    pub kind: AnswerKind,
    /// A deferred call answered by a step something else caused (§5.3).
    pub deferred: bool,
    /// What the session knows of the request (for [`AnswerKind::Handler`], unused).
    pub fate: Fate,
}

/// A delivery from the principal, as the carrier choice sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// The changes.
    pub draft: HintDraft,
    /// The answers, in order.
    pub answers: Vec<AnswerFacts>,
    /// How many events explain the changes.
    pub events: usize,
    /// A call of this session, still awaited and not cancelled, whose result is to carry
    /// the changes (`InstanceContext::hold_for`).
    pub hold: Option<Id>,
}

/// What the session may do on this connection now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conditions {
    /// The host is shown hints: initialized, both sides advertised `toolHints` (§2).
    pub hinted: bool,
    /// The session may push: `pushEvents` granted, the handshake complete.
    pub may_push: bool,
}

/// One step for the session to take, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Carry {
    /// Write `tools/hints` with these changes (never empty).
    Hints(HintDraft),
    /// Write the delivery's answer `n`; a result carries `hints` in its `_meta` (an error
    /// never does: its changes follow as `tools/hints`).
    Answer {
        /// The answer's index in the delivery.
        n: usize,
        /// The changes the result carries (never empty).
        hints: Option<HintDraft>,
    },
    /// Run the handler answer `n` asks for (it answers later).
    Run {
        /// The answer's index in the delivery.
        n: usize,
    },
    /// Push the delivery's event `n`, with these changes as its `hints` (never empty).
    Push {
        /// The event's index in the delivery.
        n: usize,
        /// The changes it carries.
        hints: Option<HintDraft>,
    },
}

/// One connection's carrier state: what is held for a call's result. See the module doc.
#[derive(Debug, Default)]
pub struct Carriers {
    held: Option<(Id, HintDraft)>,
}

impl Carriers {
    /// Where each part of a delivery goes, in order.
    pub fn deliver(&mut self, d: Delivery, c: Conditions) -> Vec<Carry> {
        let mut out = Vec::new();
        let mut draft = Some(d.draft).filter(|_| c.hinted);
        // True once an answer stands for the delivery on this connection: its events are
        // then not pushed here.
        let mut answered = false;
        for (n, a) in d.answers.into_iter().enumerate() {
            answered |= self.answer(n, a, &mut draft, c.hinted, &mut out);
        }
        if let Some(call) = d.hold
            && let Some(changes) = draft.take().filter(|d| !d.is_empty())
        {
            out.extend(self.hold(call, changes));
        }
        if !answered && c.may_push {
            for n in 0..d.events {
                let hints = nonempty(draft.take());
                self.flush_before(&hints, &mut out);
                out.push(Carry::Push { n, hints });
            }
        }
        out.extend(self.standalone(draft));
        out
    }

    /// Writes an answer, carrying `draft` if still unsent; true when the answer stands
    /// for the delivery's events on this connection: it was written, or it was a cancelled
    /// call's own step, or nobody waits for it. Not so for a handler to run (not an answer
    /// yet), a handler's open or close whose changes were not held, or a cancelled
    /// deferred call (see the module doc).
    fn answer(
        &mut self,
        n: usize,
        a: AnswerFacts,
        draft: &mut Option<HintDraft>,
        hinted: bool,
        out: &mut Vec<Carry>,
    ) -> bool {
        if let AnswerKind::Handler { call, running } = a.kind {
            let Some(call) = call else {
                return false;
            };
            if running && let Some(changes) = draft.take().filter(|d| !d.is_empty()) {
                out.extend(self.hold(call, changes));
            }
            return running;
        }
        match a.fate {
            Fate::Awaited => {}
            Fate::NobodyWaits => return true,
            // §5.2 "Cancelled calls" and §5.3, a [project] reading: a cancelled call's own
            // changes go as `tools/hints` and nothing is pushed for them; but when the
            // call was deferred and something else answered it, the delivery is that
            // something's consequences — pushed with the explaining event.
            Fate::Cancelled => return !a.deferred,
        }
        // What the call held first (it was stated earlier), then the draft.
        let held = self.take_for(&a.request, hinted);
        let changes = match (held, draft.take()) {
            // A close and a re-open never share a message: the held close goes first.
            (Some(held), Some(now)) if held.reopens(&now) => {
                out.extend(nonempty(Some(held)).map(Carry::Hints));
                Some(now)
            }
            (Some(held), Some(now)) => Some(held.and(now)),
            (held, now) => held.or(now),
        };
        match a.kind {
            AnswerKind::Result => {
                let hints = nonempty(changes);
                self.flush_before(&hints, out);
                out.push(Carry::Answer { n, hints });
                true
            }
            AnswerKind::Error => {
                *draft = changes;
                out.push(Carry::Answer { n, hints: None });
                true
            }
            AnswerKind::RunHandler => {
                *draft = changes;
                out.push(Carry::Run { n });
                false
            }
            AnswerKind::Handler { .. } => unreachable!("answered above"),
        }
    }

    /// Holds `draft` for `call`'s result, after what that call holds already. Returns what
    /// must be written first: what another call held, or what this call held when `draft`
    /// re-opens an instance it closed.
    #[must_use]
    pub fn hold(&mut self, call: Id, draft: HintDraft) -> Option<Carry> {
        let earlier = match &mut self.held {
            Some((holder, held)) if *holder == call && !held.reopens(&draft) => {
                held.append(draft);
                None
            }
            _ => self.held.replace((call, draft)).map(|(_, d)| d),
        };
        nonempty(earlier).map(Carry::Hints)
    }

    /// What `call` holds, for its result; none for a host no longer shown hints.
    pub fn take_for(&mut self, call: &Id, hinted: bool) -> Option<HintDraft> {
        match &self.held {
            Some((holder, _)) if holder == call => {
                self.held.take().map(|(_, d)| d).filter(|_| hinted)
            }
            _ => None,
        }
    }

    /// Whatever is held, as `tools/hints` to write before another hint-carrying message.
    #[must_use]
    pub fn flush(&mut self) -> Option<Carry> {
        nonempty(self.held.take().map(|(_, d)| d)).map(Carry::Hints)
    }

    /// Drops what is held: the host is no longer shown hints (vector 34).
    pub fn clear(&mut self) {
        self.held = None;
    }

    /// `draft` as standalone `tools/hints`, after what is held (none when empty).
    #[must_use]
    pub fn standalone(&mut self, draft: Option<HintDraft>) -> Vec<Carry> {
        let Some(draft) = nonempty(draft) else {
            return Vec::new();
        };
        let mut out: Vec<Carry> = self.flush().into_iter().collect();
        out.push(Carry::Hints(draft));
        out
    }

    fn flush_before(&mut self, hints: &Option<HintDraft>, out: &mut Vec<Carry>) {
        if hints.is_some() {
            out.extend(self.flush());
        }
    }
}

fn nonempty(d: Option<HintDraft>) -> Option<HintDraft> {
    d.filter(|d| !d.is_empty())
}

#[cfg(test)]
pub(crate) mod tests;

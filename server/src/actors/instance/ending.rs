//! How an instance's participants leave it and how it wakes: a close, a leave, an unlink,
//! a timer's wake — each a step of the logic, or the actor's end once nobody links to it.

use super::*;
use crate::author::{ParticipantId, Woken};
use crate::store::Follow;

impl Handler<CloseInstance> for InstanceActor {
    type Result = MessageResult<CloseInstance>;

    fn handle(
        &mut self,
        CloseInstance { who }: CloseInstance,
        ctx: &mut Context<Self>,
    ) -> Self::Result {
        // Not committed before the closer's step that follows it is promised (issue #42).
        let _hold = self.shared.hold();
        let link = self.core.link(who).filter(|_| !self.is_shell());
        let Some(key) = link.map(|l| l.key.clone()) else {
            // Not linked, or released: the close is its principal's alone (`release.rs`).
            let closed = Closed {
                content: Vec::new(),
                batch: None,
            };
            return MessageResult((closed, Follow::NONE));
        };
        let (content, batch) = self.close_step(who, ctx);
        let mut batch = batch.unwrap_or_else(|| Batch::new(self.core.id(), key));
        self.remove(who, &mut batch);
        self.stop_if_unlinked(ctx);
        batch.kept = batch.kept.max(self.written_at);
        let closed = Closed {
            content,
            batch: (!batch.is_empty()).then_some(batch),
        };
        // The closer's principal writes its record next (issue #42 item 1).
        MessageResult((closed, self.shared.follow()))
    }
}

impl Handler<Leave> for InstanceActor {
    type Result = ();

    fn handle(&mut self, Leave { who, follow }: Leave, ctx: &mut Context<Self>) {
        let _hold = self.shared.hold();
        let link = self.core.link(who).filter(|_| !self.is_shell());
        let Some(link) = link.cloned() else {
            return;
        };
        let (_, batch) = self.close_step(who, ctx);
        let mut batch = batch.unwrap_or_else(|| Batch::new(self.core.id(), link.key.clone()));
        // Its record already ended on its side: only answers still matter to it.
        crate::core::instance_core::left(&mut batch);
        self.remove(who, &mut batch);
        self.stop_if_unlinked(ctx);
        batch.kept = batch.kept.max(self.written_at);
        if !batch.is_empty() {
            link.principal.do_send(Batched(batch, self.shared.follow()));
        }
        // Handed over (issue #42 item 1).
        drop(follow);
    }
}

impl Handler<Woken> for InstanceActor {
    type Result = ();

    fn handle(&mut self, Woken { tag }: Woken, ctx: &mut Context<Self>) {
        self.wake(tag, ctx);
    }
}

impl Handler<Unlink> for InstanceActor {
    type Result = ();

    fn handle(&mut self, Unlink { who, follow }: Unlink, ctx: &mut Context<Self>) {
        if self.is_shell() {
            return; // released: it writes nothing (`release.rs`)
        }
        self.core.handle_unlink(who);
        self.stop_if_unlinked(ctx);
        // Handed over (issue #42 item 1).
        drop(follow);
    }
}

impl InstanceActor {
    /// The logic's close for `who`, unless the instance already ended; returns what to tell
    /// it and its batch.
    fn close_step(
        &mut self,
        who: ParticipantId,
        ctx: &mut Context<Self>,
    ) -> (Vec<mcpl_protocol::mcp::ContentBlock>, Option<Batch>) {
        let Some(mut logic) = self.logic.take() else {
            return (Vec::new(), None);
        };
        match self.run(|cx| logic.close(who, cx)) {
            Ok((content, effects)) => {
                self.logic = Some(logic);
                let batch = self.dispatch(effects, None, None, Some(who), ctx);
                (content, batch)
            }
            Err(panic) => (Vec::new(), self.fail(&panic, None, Some(who), ctx)),
        }
    }

    /// A timer the logic set fired, or something woke the instance (a waker, finished
    /// blocking work). Nothing happens once the logic is gone (the instance ended).
    pub(super) fn wake(&mut self, tag: u64, ctx: &mut Context<Self>) {
        let Some(mut logic) = self.logic.take() else {
            return;
        };
        match self.run(|cx| logic.wake(tag, cx)) {
            Ok(((), effects)) => {
                self.logic = Some(logic);
                self.dispatch(effects, None, None, None, ctx);
            }
            Err(panic) => {
                self.fail(&panic, None, None, ctx);
            }
        }
    }
}

/// Answers a call outside any step (the instance ended, the caller left), straight to the
/// caller's principal.
pub(super) fn answer_alone(link: &Link, id: InstanceId, w: Waiter, result: CallToolResult) {
    answer_outcome(link, id, w, Ok(result));
}

/// Answers a call outside any step with a JSON-RPC error (a released instance, issue #41).
pub(super) fn answer_error(
    link: &Link,
    id: InstanceId,
    w: Waiter,
    error: mcpl_protocol::jsonrpc::ErrorObject,
) {
    answer_outcome(link, id, w, Err(error));
}

fn answer_outcome(
    link: &Link,
    id: InstanceId,
    w: Waiter,
    outcome: Result<CallToolResult, mcpl_protocol::jsonrpc::ErrorObject>,
) {
    let mut batch = Batch::new(id, link.key.clone());
    batch.answers.push(CallAnswer {
        session: w.session,
        request: w.request,
        outcome,
        deferred: false,
    });
    // Nothing written: nothing to follow.
    link.principal.do_send(Batched(batch, Follow::NONE));
}

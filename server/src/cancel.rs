//! Cancellation of one tool call, as a handler sees it.
//!
//! A cancelled call's future is also dropped (its task is aborted), so most handlers need
//! nothing from here. The token is for work a handler hands off to something that outlives
//! its future — a spawned task, another actor — which can watch it and stop.
//!
//! The session's side is the token's `CancelTrigger` and a running call's `Stopper` (the
//! trigger and the call's task), which the session's core holds while the call runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

/// What a trigger and its tokens share: the flag, and the waiters to wake when it is set.
/// One small allocation a call (issue #18: a `watch` channel cost every call eight
/// `Notify`s to allocate and to wake when its sender went), and none for a call after one
/// that ended at once ([`CancelTrigger::recycle`], issue #42).
#[derive(Debug, Default)]
struct State {
    cancelled: AtomicBool,
    waiters: Notify,
}

/// Says whether the call it belongs to was cancelled (MCP `notifications/cancelled`, or
/// the session closing). Cheap to clone; `Send` and `Sync`.
#[derive(Debug, Clone)]
pub struct CancelToken {
    state: Arc<State>,
}

impl CancelToken {
    /// True once the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.state.cancelled.load(Ordering::Acquire)
    }

    /// Completes when the call is cancelled; never completes for a call that ends without
    /// being cancelled.
    pub async fn cancelled(&self) {
        loop {
            // Registered before the flag is read, so a cancel between the two still wakes
            // this waiter (`Notify::notify_waiters` wakes only those registered).
            let notified = self.state.waiters.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// The session's side of a [`CancelToken`].
#[derive(Debug)]
pub(crate) struct CancelTrigger {
    state: Arc<State>,
}

impl CancelTrigger {
    /// A trigger and the token it controls.
    pub(crate) fn new() -> (CancelTrigger, CancelToken) {
        let state = Arc::new(State::default());
        (
            CancelTrigger {
                state: state.clone(),
            },
            CancelToken { state },
        )
    }

    /// A trigger and its token for a call, made of `spare` when there is one (a trigger
    /// [`CancelTrigger::recycle`] kept), else new.
    pub(crate) fn renew(spare: Option<CancelTrigger>) -> (CancelTrigger, CancelToken) {
        match spare {
            Some(trigger) => {
                let token = CancelToken {
                    state: trigger.state.clone(),
                };
                (trigger, token)
            }
            None => Self::new(),
        }
    }

    /// This trigger, to serve the next call ([`CancelTrigger::renew`]), when its call ended
    /// never cancelled and no token of it is left: a token a handler kept — for work that
    /// outlives its call — must never see another call's cancel, so such a state is
    /// dropped, not used again (issue #42: an allocation a call saved).
    pub(crate) fn recycle(self) -> Option<CancelTrigger> {
        // No `Weak` is ever made of the state: a count of one is this trigger alone, and
        // no one can clone it meanwhile.
        let alone = Arc::strong_count(&self.state) == 1;
        (alone && !self.state.cancelled.load(Ordering::Acquire)).then_some(self)
    }

    /// Marks the call cancelled and wakes every waiter.
    pub(crate) fn cancel(&self) {
        self.state.cancelled.store(true, Ordering::Release);
        self.state.waiters.notify_waiters();
    }
}

/// What stops a running handler call: its cancel token's trigger, then its task (none
/// for a call that ended in its first poll). The session's core holds one per running
/// call (`session/calls.rs`).
#[derive(Debug)]
pub(crate) struct Stopper {
    cancel: CancelTrigger,
    abort: Option<AbortHandle>,
}

impl Stopper {
    /// What stops a call: `cancel` marks its token, `abort` ends its task.
    pub(crate) fn new(cancel: CancelTrigger, abort: Option<AbortHandle>) -> Self {
        Stopper { cancel, abort }
    }

    /// Cancels the call's token, then aborts its task.
    pub(crate) fn stop(self) {
        self.cancel.cancel();
        if let Some(abort) = self.abort {
            abort.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future as _;

    /// A trigger serves the next call only when its call's tokens are all gone and it was
    /// never cancelled; the next call's token then sees that call's cancel, and only it.
    #[test]
    fn a_trigger_is_used_again_only_when_nothing_else_holds_its_state() {
        let (trigger, token) = CancelTrigger::new();
        let kept = token.clone();
        drop(token);
        // A handler kept a token: its state is never shared with the next call.
        assert!(trigger.recycle().is_none());
        assert!(!kept.is_cancelled());

        let (trigger, token) = CancelTrigger::new();
        trigger.cancel();
        drop(token);
        assert!(
            trigger.recycle().is_none(),
            "a cancelled state is not used again"
        );

        let (trigger, token) = CancelTrigger::new();
        drop(token);
        let spare = trigger.recycle().expect("nothing else holds it");
        let state = Arc::as_ptr(&spare.state);
        let (trigger, token) = CancelTrigger::renew(Some(spare));
        assert_eq!(
            Arc::as_ptr(&token.state),
            state,
            "the same state, not a new one"
        );
        assert!(!token.is_cancelled());
        trigger.cancel();
        assert!(token.is_cancelled());
        let (_, fresh) = CancelTrigger::renew(None);
        assert!(!fresh.is_cancelled());
    }

    #[tokio::test]
    async fn a_cancel_before_or_after_waiting_is_seen() {
        let (trigger, token) = CancelTrigger::new();
        assert!(!token.is_cancelled());
        let waiter = tokio::spawn({
            let token = token.clone();
            async move { token.cancelled().await }
        });
        trigger.cancel();
        waiter.await.unwrap();
        assert!(token.is_cancelled());
        drop(trigger);
        // Still cancelled after the trigger is gone: waiting returns at once.
        token.cancelled().await;
    }

    /// Every waiter is woken by one cancel: those on other threads, and those that began
    /// waiting before it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_cancel_wakes_every_waiter() {
        let (trigger, token) = CancelTrigger::new();
        let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(16);
        let waiters: Vec<_> = (0..16)
            .map(|_| {
                let token = token.clone();
                let ready = ready_tx.clone();
                tokio::spawn(async move {
                    let waiting = token.cancelled();
                    tokio::pin!(waiting);
                    // Polled once (registered), then said to be waiting.
                    let first = std::future::poll_fn(|cx| {
                        std::task::Poll::Ready(waiting.as_mut().poll(cx))
                    })
                    .await;
                    assert!(first.is_pending());
                    ready.send(()).await.unwrap();
                    waiting.await;
                })
            })
            .collect();
        for _ in 0..16 {
            ready_rx.recv().await.unwrap();
        }
        trigger.cancel();
        for w in waiters {
            w.await.unwrap();
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_that_ends_uncancelled_never_reports_cancelled() {
        let (trigger, token) = CancelTrigger::new();
        drop(trigger);
        let waited =
            tokio::time::timeout(std::time::Duration::from_secs(60), token.cancelled()).await;
        assert!(waited.is_err());
        assert!(!token.is_cancelled());
    }
}

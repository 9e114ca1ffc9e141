//! Cancellation of one tool call, as a handler sees it.
//!
//! A cancelled call's future is also dropped (its task is aborted), so most handlers need
//! nothing from here. The token is for work a handler hands off to something that outlives
//! its future — a spawned task, another actor — which can watch it and stop.

use tokio::sync::watch;

/// Says whether the call it belongs to was cancelled (MCP `notifications/cancelled`, or
/// the session closing). Cheap to clone; `Send` and `Sync`.
#[derive(Debug, Clone)]
pub struct CancelToken {
    rx: watch::Receiver<bool>,
}

impl CancelToken {
    /// True once the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        *self.rx.borrow()
    }

    /// Completes when the call is cancelled; never completes for a call that ends without
    /// being cancelled.
    pub async fn cancelled(&self) {
        let mut rx = self.rx.clone();
        // `wait_for` looks at the current value first, so a cancel that happened before
        // this call is seen; an error means the trigger went away without cancelling.
        if rx.wait_for(|c| *c).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The session's side of a [`CancelToken`].
#[derive(Debug)]
pub(crate) struct CancelTrigger {
    tx: watch::Sender<bool>,
}

impl CancelTrigger {
    /// A trigger and the token it controls.
    pub(crate) fn new() -> (CancelTrigger, CancelToken) {
        let (tx, rx) = watch::channel(false);
        (CancelTrigger { tx }, CancelToken { rx })
    }

    /// Marks the call cancelled and wakes every waiter.
    pub(crate) fn cancel(&self) {
        self.tx.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

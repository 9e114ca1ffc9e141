//! Waking an instance from outside its actor: an [`InstanceWaker`] anything may hold, and
//! [`Blocking`] work run off the actor whose result is handed back to the logic.
//!
//! An instance's logic runs only inside its actor's steps (a call, a join, a timer). Work
//! that takes long — a bot's search — must not run there: it would stall every other
//! message of the instance and of the arbiter. It runs on tokio's blocking pool instead,
//! and when it is done the instance is **woken**: [`InstanceLogic::wake`] runs with the tag
//! the work was started with, as a step of its own, and takes the result from its
//! [`Blocking`] handle — no timer, no polling. The same wake is open to any other outside
//! source through [`InstanceContext::waker`] (a clock, a message from another service).
//!
//! A wake is a step nobody awaits, like a timer's: what it changes reaches participants as
//! pushes explaining it, or answers to calls that wait (§5.3). A wake of an instance that
//! ended (or whose actor is gone) does nothing.
//!
//! This file holds the types that the two [`InstanceContext`] methods reaching outside a
//! step hand out ([`InstanceContext::waker`] and [`InstanceContext::spawn_blocking`], in
//! `context.rs`).
//!
//! [`InstanceLogic::wake`]: crate::InstanceLogic::wake

use actix::{Message, WeakRecipient};
use std::fmt;
use tokio::sync::oneshot;

/// Wakes one instance: [`InstanceLogic::wake`](crate::InstanceLogic::wake) runs with the
/// tag given, in the instance's actor. Cheap to clone, `Send` and `Sync`, usable from any
/// thread. Once the instance ended, waking it does nothing. It does not keep the instance
/// alive; `InstanceWaker::default()` wakes nothing at all.
///
/// ```
/// use mcpl_server::{InstanceContext, InstanceLogic, Reply, ToolCall};
///
/// struct Clocked;
///
/// impl InstanceLogic for Clocked {
///     fn call(&mut self, _: ToolCall, cx: &mut InstanceContext) -> Reply {
///         let waker = cx.waker();
///         // Something outside the instance decides when it is woken.
///         std::thread::spawn(move || waker.wake(7));
///         Reply::text("Started.")
///     }
///
///     fn wake(&mut self, tag: u64, cx: &mut InstanceContext) {
///         assert_eq!(tag, 7);
///         let _ = cx;
///     }
/// }
/// ```
#[derive(Clone, Default)]
pub struct InstanceWaker {
    /// `None` for a context made outside an actor, whose waker wakes nothing. The
    /// instance's actor, weakly: a waker does not keep it alive.
    pub(crate) to: Option<WeakRecipient<Woken>>,
}

/// Something outside the instance woke it: what an [`InstanceWaker`] sends the instance's
/// actor, which runs [`InstanceLogic::wake`](crate::InstanceLogic::wake) with the tag.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Woken {
    pub(crate) tag: u64,
}

impl InstanceWaker {
    /// Asks the instance to run [`InstanceLogic::wake`](crate::InstanceLogic::wake) with
    /// `tag`, as soon as it has finished the step it may be in. Wakes are not merged: each
    /// one runs a step. Nothing happens when the instance ended.
    pub fn wake(&self, tag: u64) {
        if let Some(to) = self.to.as_ref().and_then(WeakRecipient::upgrade) {
            to.do_send(Woken { tag });
        }
    }
}

impl fmt::Debug for InstanceWaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InstanceWaker")
            .field(
                "live",
                &self.to.as_ref().is_some_and(|a| a.upgrade().is_some()),
            )
            .finish()
    }
}

/// Why [`Blocking`] work gave no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BlockingError {
    /// The work panicked; the panic's message.
    #[error("the work panicked: {0}")]
    Panicked(String),
    /// The work never ran: the step that started it panicked or came after the end, or
    /// the runtime shut down.
    #[error("the work never ran")]
    NotRun,
}

/// Work started with [`InstanceContext::spawn_blocking`](crate::InstanceContext::spawn_blocking),
/// running on tokio's blocking pool. When it finishes (or panics) the instance is woken
/// with the handle's [`Blocking::tag`]; [`Blocking::try_take`] then has the result.
#[derive(Debug)]
pub struct Blocking<T> {
    rx: Option<oneshot::Receiver<Result<T, String>>>,
    tag: u64,
}

impl<T> Blocking<T> {
    pub(crate) fn new(rx: oneshot::Receiver<Result<T, String>>, tag: u64) -> Self {
        Blocking { rx: Some(rx), tag }
    }

    /// The tag the instance is woken with when the work is done.
    pub fn tag(&self) -> u64 {
        self.tag
    }

    /// The result, once: `None` while the work runs, and after the result was taken.
    /// Within the wake the work caused, it is always there.
    pub fn try_take(&mut self) -> Option<Result<T, BlockingError>> {
        let rx = self.rx.as_mut()?;
        let got = match rx.try_recv() {
            Err(oneshot::error::TryRecvError::Empty) => return None,
            Ok(Ok(value)) => Ok(value),
            Ok(Err(panic)) => Err(BlockingError::Panicked(panic)),
            Err(oneshot::error::TryRecvError::Closed) => Err(BlockingError::NotRun),
        };
        self.rx = None;
        Some(got)
    }

    /// True once the result was taken.
    pub fn is_taken(&self) -> bool {
        self.rx.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_is_taken_once() {
        let (tx, rx) = oneshot::channel();
        let mut b = Blocking::<u32>::new(rx, 3);
        assert_eq!((b.tag(), b.try_take()), (3, None));
        tx.send(Ok(5)).unwrap();
        assert_eq!(b.try_take(), Some(Ok(5)));
        assert!(b.is_taken());
        assert_eq!(b.try_take(), None);
    }

    #[test]
    fn a_panic_or_work_that_never_ran_is_an_error() {
        let (tx, rx) = oneshot::channel();
        let mut b = Blocking::<u32>::new(rx, 1);
        tx.send(Err("boom".into())).unwrap();
        assert_eq!(
            b.try_take(),
            Some(Err(BlockingError::Panicked("boom".into())))
        );
        let (tx, rx) = oneshot::channel::<Result<u32, String>>();
        drop(tx);
        assert_eq!(
            Blocking::new(rx, 1).try_take(),
            Some(Err(BlockingError::NotRun))
        );
    }
}

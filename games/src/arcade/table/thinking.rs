//! The bot's search, off the actix arbiter.
//!
//! A search runs as the instance's blocking work
//! ([`InstanceContext::spawn_blocking`](mcpl_server::InstanceContext::spawn_blocking)):
//! on tokio's blocking pool, and when it is done the SDK wakes the table with
//! [`WAKE_BOT`], whose step takes the move from the [`Blocking`] handle. Nothing polls;
//! a time budget is the search's own deadline.

use mcpl_server::{Blocking, BlockingError, CallId, InstanceContext};

/// The tag the table is woken with when the bot's search is done.
pub const WAKE_BOT: u64 = 1;

/// Who is waiting for the bot's move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Respond {
    /// The step's own call: the text becomes its reply.
    Reply,
    /// A call deferred until the bot moved: answered with the text.
    Answer(CallId),
    /// Nobody asked (the bot moves first): the human's connections get an event.
    Push,
}

/// A search under way.
#[derive(Debug)]
pub struct Thinking<M> {
    work: Blocking<M>,
    /// How the move is delivered.
    pub respond: Respond,
    /// What the human's text starts with ("You played D4. ").
    pub prefix: String,
}

impl<M: Send + 'static> Thinking<M> {
    /// Starts `search` as the instance's blocking work; it wakes the table with
    /// [`WAKE_BOT`] when done.
    pub fn start(
        search: Box<dyn FnOnce() -> M + Send>,
        respond: Respond,
        prefix: String,
        cx: &mut InstanceContext,
    ) -> Self {
        Thinking {
            work: cx.spawn_blocking(search, WAKE_BOT),
            respond,
            prefix,
        }
    }

    /// The search's result, once it is done: its move, or why it gave none (it panicked).
    /// `None` while it runs — a wake that was not this search's.
    pub fn take(&mut self) -> Option<Result<M, BlockingError>> {
        self.work.try_take()
    }
}

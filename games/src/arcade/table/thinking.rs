//! The bot's search, off the actix arbiter.
//!
//! A search runs on tokio's blocking pool (`spawn_blocking`) and sends its move down a
//! oneshot channel. The SDK gives an instance's logic no way to be woken by outside work,
//! only timers ([`InstanceContext::wake_after`](mcpl_server::InstanceContext::wake_after)),
//! so the table polls the channel from a timer: first after the time the search was given
//! (or at once for a playout budget), then at short, growing intervals. A finished search
//! is picked up within [`MAX_POLL`].

use mcpl_server::CallId;
use std::time::Duration;
use tokio::sync::oneshot;

/// The longest wait between two looks at a running search.
pub const MAX_POLL: Duration = Duration::from_millis(16);

/// The tag of the timer that looks at the search.
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
    rx: oneshot::Receiver<M>,
    /// How the move is delivered.
    pub respond: Respond,
    /// What the human's text starts with ("You played D4. ").
    pub prefix: String,
    polls: u32,
}

/// What a look at the search found.
#[derive(Debug)]
pub enum Looked<M> {
    /// The move.
    Done(M),
    /// Still searching; look again after this long.
    Running(Duration),
    /// The search died (it panicked) without a move.
    Failed,
}

impl<M: Send + 'static> Thinking<M> {
    /// Starts `search` on a blocking thread. Must run inside a tokio runtime (an actix
    /// arbiter is one).
    pub fn start(search: Box<dyn FnOnce() -> M + Send>, respond: Respond, prefix: String) -> Self {
        let (tx, rx) = oneshot::channel();
        tokio::task::spawn_blocking(move || {
            // The receiver is gone when the game ended meanwhile: nothing to deliver.
            let _ = tx.send(search());
        });
        Thinking {
            rx,
            respond,
            prefix,
            polls: 0,
        }
    }

    /// Looks whether the move is there.
    pub fn look(&mut self) -> Looked<M> {
        match self.rx.try_recv() {
            Ok(mv) => Looked::Done(mv),
            Err(oneshot::error::TryRecvError::Empty) => {
                self.polls = self.polls.saturating_add(1);
                Looked::Running(poll_after(self.polls))
            }
            Err(oneshot::error::TryRecvError::Closed) => Looked::Failed,
        }
    }
}

/// The wait before the `n`th look after the first: 1, 2, 4, 8, 16, 16, … ms.
pub fn poll_after(n: u32) -> Duration {
    Duration::from_millis(1u64 << n.min(4)).min(MAX_POLL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_grow_to_a_ceiling() {
        let waits: Vec<u64> = (0..7).map(|n| poll_after(n).as_millis() as u64).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 16, 16]);
    }

    fn thinking(rx: oneshot::Receiver<u32>) -> Thinking<u32> {
        Thinking {
            rx,
            respond: Respond::Push,
            prefix: String::new(),
            polls: 0,
        }
    }

    #[test]
    fn a_look_finds_the_move_a_running_search_or_a_dead_one() {
        let (tx, rx) = oneshot::channel();
        let mut t = thinking(rx);
        assert!(matches!(t.look(), Looked::Running(d) if d == poll_after(1)));
        tx.send(7).unwrap();
        assert!(matches!(t.look(), Looked::Done(7)));
        let (tx, rx) = oneshot::channel::<u32>();
        drop(tx);
        assert!(matches!(thinking(rx).look(), Looked::Failed));
    }

    #[tokio::test]
    async fn the_search_runs_on_a_blocking_thread_and_sends_its_move() {
        let caller = std::thread::current().id();
        let t = Thinking::start(
            Box::new(move || u32::from(std::thread::current().id() != caller)),
            Respond::Push,
            String::new(),
        );
        assert_eq!(t.rx.await, Ok(1));
        let t: Thinking<u32> =
            Thinking::start(Box::new(|| panic!("boom")), Respond::Push, String::new());
        assert!(t.rx.await.is_err(), "a panicked search sends nothing");
    }
}

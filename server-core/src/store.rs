//! What the cores name of a server's store: the records written as JSON ([`records`]), a
//! principal's record in parts, only what changed written ([`parts`]),
//! why a step was not kept ([`not_kept`]), and a step's place in the commit queue
//! ([`Ticket`]). The store itself and its queue do I/O and live in `mcpl_server::store`.

pub mod not_kept;
pub mod parts;
pub mod records;

pub use not_kept::NotKept;

/// A place in the commit queue: the step handed over with it is durable once the queue
/// kept this ticket. [`Ticket::NONE`] waits for nothing (nothing was handed over). An
/// opaque id to the cores, which only carry it; the queue (`mcpl_server::store`) hands
/// tickets out in order and compares them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ticket(u64);

impl Ticket {
    /// Nothing to wait for.
    pub const NONE: Ticket = Ticket(0);

    /// The `n`th ticket the queue handed out (the first is 1).
    pub fn new(n: u64) -> Self {
        Ticket(n)
    }

    /// Its place in the queue.
    pub fn get(self) -> u64 {
        self.0
    }
}

//! Where a link is, as one word for status and errors: the link's own states (connecting,
//! backing off, stopped) and, while connected, the connection's [`super::session::Stage`].
//!
//! It is the one phase enum of a connection on the host (issue #38): the link core's
//! `Stage` is this word with the session it carries, and the agent side's
//! [`ServerSlot`](crate::state::ServerSlot) holds this word too, as the link last told it
//! (`Connecting` before the first connection, `AwaitingGrantReceipt` from the tap's
//! `Connected` to the handshake's end, `Ready`, `Backoff` once an attempt failed or the
//! connection ended: [`ServerSlot::phase`](crate::state::ServerSlot::phase)).

/// Where a link is, for status and errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkPhase {
    /// Waiting for a connection attempt.
    Connecting,
    /// Connected; waiting for the `server/discover` probe's answer (MCP 2026-07-28).
    AwaitingDiscoverResult,
    /// Connected; waiting for the `initialize` result.
    AwaitingInitializeResult,
    /// `featureSets/update` sent; waiting for its receipt.
    AwaitingGrantReceipt,
    /// Handshake done; requests go through.
    Ready,
    /// Waiting before the next attempt.
    Backoff,
    /// Shut down.
    Stopped,
}

//! [`Link`]: what carries a [`Peer`](crate::Peer)'s JSON messages, one whole JSON-RPC
//! message at a time. [`ws::WsLink`](crate::ws::WsLink) is a WebSocket; a suite that
//! talks through another transport (a stdio child, Streamable HTTP, an in-memory pair)
//! implements this for its connection type with a few lines of its own.

use serde_json::Value;
use std::future::Future;

/// What ended a connection, as this end saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closed {
    /// A WebSocket close frame with this code and reason.
    Frame(u16, String),
    /// The connection ended without a close frame (or the link has no such thing).
    Dropped,
}

/// What a link read next.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// One JSON message, exactly as the other side wrote it.
    Message(Value),
    /// Something that is not a JSON message, or over a size limit: why.
    Unreadable(String),
    /// The connection ended.
    Closed(Closed),
}

/// Carries JSON messages both ways. Implementations neither sleep nor time out: the
/// [`Peer`](crate::Peer) bounds every wait.
pub trait Link {
    /// Writes one message; `Err` says why the link took none (it is gone).
    fn send(&mut self, message: Value) -> impl Future<Output = Result<(), String>>;
    /// The next thing read.
    fn next(&mut self) -> impl Future<Output = Received>;
}

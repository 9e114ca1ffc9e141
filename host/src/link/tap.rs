//! The read tap (§5.2): a host applies a message's hint changes *when it reads the
//! message*, whatever it then decides about the message. So every inbound message is
//! offered here first, in read order, before the link answers it, routes it to a caller or
//! drops it; and the connection's start and end are offered too, so per-connection state
//! (the hint state's `last` rev) resets at the right point in the same sequence.

use super::core::error::DisconnectReason;
pub use super::core::pending::{Answered, AwaitStatus};
use mcpl_protocol::Message;
use mcpl_protocol::mcp::InitializeResult;
use mcpl_transport::{ConnectionInfo, StreamId};
use std::fmt;
use std::sync::Arc;

/// One message, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadEvent {
    /// The connection it arrived on.
    pub epoch: u64,
    /// The stream of that connection.
    pub stream: StreamId,
    /// Whether the connection delivers in the order the server wrote (only an unordered
    /// link holds early revs, §5.2).
    pub ordered: bool,
    /// The message.
    pub message: Message,
    /// For a response to one of this link's requests: which, and whether still awaited.
    /// `None` for requests, notifications and responses to ids the link never sent.
    pub answers: Option<Answered>,
}

/// What the tap is shown.
#[derive(Debug, Clone, PartialEq)]
pub enum TapEvent {
    /// A connection's `initialize` result was accepted: tapped right after that result's
    /// own [`TapEvent::Read`] and before anything read after it. Per-connection state
    /// starts here (a new connection starts its revs from 1, §4.6).
    Connected {
        /// The connection (1, 2, … per successful transport connect).
        epoch: u64,
        /// What the transport is.
        info: ConnectionInfo,
        /// The server's `initialize` result (capabilities, manifest).
        init: Arc<InitializeResult>,
    },
    /// A message was read.
    Read(ReadEvent),
    /// Something the server wrote could not be read: refused as larger than the limit, or
    /// not valid JSON-RPC. Whatever hint changes it carried are lost (§5.2).
    Unreadable {
        /// The connection.
        epoch: u64,
        /// Why.
        why: String,
    },
    /// A connection ended; nothing more is read from it.
    Disconnected {
        /// The connection.
        epoch: u64,
        /// Why.
        reason: DisconnectReason,
    },
}

/// Where tapped events go: a closure called synchronously, in read order, before the link
/// acts on what it read.
pub struct Tap(Box<dyn FnMut(&TapEvent) + Send>);

impl Tap {
    /// A tap calling `f`.
    pub fn from_fn(f: impl FnMut(&TapEvent) + Send + 'static) -> Self {
        Tap(Box::new(f))
    }

    /// A tap sending a copy of each event to an actor. Messages to one recipient arrive in
    /// the order sent, so the actor still sees read order; it sees them *before* any
    /// [`super::LinkEvent`] sent to the same actor about the same message.
    pub fn to_recipient(recipient: actix::Recipient<Tapped>) -> Self {
        Tap::from_fn(move |event| recipient.do_send(Tapped(event.clone())))
    }

    pub(super) fn offer(&mut self, event: &TapEvent) {
        (self.0)(event)
    }
}

impl fmt::Debug for Tap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Tap(..)")
    }
}

/// A tapped event, as an actix message (see [`Tap::to_recipient`]).
#[derive(Debug, Clone, PartialEq, actix::Message)]
#[rtype(result = "()")]
pub struct Tapped(pub TapEvent);

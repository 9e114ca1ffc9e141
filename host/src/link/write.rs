//! The write side: messages queued on the current connection and written in order by a
//! task that waits for the transport's room; a server that does not read what this host
//! writes (the queue full, or one message waiting past the write timeout) is dropped
//! (issue #13 item 7: never buffered without bound).

use super::actor::ServerLink;
use super::core::error::DisconnectReason;
use super::io::NotReading;
use actix::prelude::*;
use mcpl_protocol::Message;
use tokio::sync::mpsc;
use tracing::debug;

impl ServerLink {
    /// Queues a message on the current connection, behind what its core has queued, and
    /// writes them.
    pub(super) fn send_message(&mut self, message: Message) {
        if let Some(live) = self.lifecycle.live_mut() {
            live.core.send(message);
        }
        self.flush();
    }

    /// Hands what the core has to transmit to the writer task. A message that cannot be
    /// queued is dropped: the writer has gone because the transport closed, and the reader
    /// will say so. A full queue means the server has stopped reading: the connection is
    /// dropped (its requests were answered into a queue it never drains; holding more would
    /// grow without bound).
    pub(super) fn flush(&mut self) {
        let Some(live) = self.lifecycle.live_mut() else {
            return;
        };
        while let Some(message) = live.core.poll_transmit() {
            match live.writer.try_send(message) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    debug!(link = %self.config.name, "message not written: the connection is closing");
                }
                Err(mpsc::error::TrySendError::Full(_)) => {
                    let queued = live.writer.max_capacity();
                    if let Some(addr) = self.address.clone() {
                        // Not at once: the caller may be in the middle of reading a message.
                        addr.do_send(NotReading {
                            epoch: live.epoch(),
                            queued,
                        });
                    }
                    return;
                }
            }
        }
    }
}

impl Handler<NotReading> for ServerLink {
    type Result = ();

    fn handle(&mut self, msg: NotReading, ctx: &mut Context<Self>) {
        if self
            .lifecycle
            .live()
            .is_some_and(|l| l.epoch() == msg.epoch)
        {
            mcpl_transport::warn_limited!(self.peer_warnings, link = %self.config.name,
                queued = msg.queued, "the server does not read what this host writes; dropping the connection");
            self.disconnect(DisconnectReason::NotReading { queued: msg.queued }, ctx);
        }
    }
}

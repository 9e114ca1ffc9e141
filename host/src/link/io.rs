//! The connection's two ends as the actor runs them: the read stream (each item read,
//! then the end, tagged with the connection) and the writer task (messages written in
//! order, waiting for the transport's room). Neither knows the actor: the reader is a
//! stream the actor adds, the writer tells a recipient when the server stops reading.

use super::gate::ReadGate;
use actix::prelude::*;
use futures_util::Stream;
use mcpl_protocol::Message;
use mcpl_transport::{Inbound, Outbound};
use tokio::sync::mpsc;

/// What the read stream yields: each item read, then the end, tagged with the connection.
pub(super) enum LinkInput {
    /// A message, or what could not be read as one.
    Read { epoch: u64, inbound: Inbound },
    /// The end; `why` is the transport's word on it where it has one
    /// ([`mcpl_transport::Incoming::why_ended`]).
    Closed { epoch: u64, why: Option<String> },
}

/// The connection's reading end as a stream for the actor, ending with `Closed`. With
/// a gate, nothing more is read while the consumer is `limit` messages behind.
pub(super) fn read_stream(
    inbound: mcpl_transport::Incoming,
    epoch: u64,
    gate: Option<ReadGate>,
) -> impl Stream<Item = LinkInput> + 'static {
    futures_util::stream::unfold(Some(inbound), move |inbound| {
        let gate = gate.clone();
        async move {
            let mut inbound = inbound?;
            if let Some(gate) = &gate {
                gate.room().await;
            }
            match inbound.recv().await {
                Some(item) => Some((
                    LinkInput::Read {
                        epoch,
                        inbound: item,
                    },
                    Some(inbound),
                )),
                None => Some((
                    LinkInput::Closed {
                        epoch,
                        why: inbound.why_ended(),
                    },
                    None,
                )),
            }
        }
    })
}

/// The server has stopped reading what connection `epoch` writes.
#[derive(actix::Message)]
#[rtype(result = "()")]
pub(super) struct NotReading {
    pub(super) epoch: u64,
    pub(super) queued: usize,
}

/// Writes queued messages in order, waiting for the transport's room without blocking the
/// actor. Ends when the link drops the queue (after writing what is in it) or the
/// transport closes; or when one message waits longer than `timeout` for room, which tells
/// the link that the server does not read.
pub(super) async fn write_in_order(
    mut queue: mpsc::Receiver<Message>,
    outbound: Outbound,
    timeout: std::time::Duration,
    link: Recipient<NotReading>,
    epoch: u64,
) {
    while let Some(message) = queue.recv().await {
        match tokio::time::timeout(timeout, outbound.send(message)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => break,
            Err(_) => {
                let queued = queue.len() + 1;
                link.do_send(NotReading { epoch, queued });
                break;
            }
        }
    }
}

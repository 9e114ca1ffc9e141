//! [`NatsPeers`]: the SDK's [`Peers`] over NATS core (issue #41, `docs/ownership.md` §2) —
//! how a principal's actor on one node and an instance's on another talk.
//!
//! **Subjects named by the actor, not the node** (**\[project\]**): `PREFIX.i.<id>` for
//! instance `id`, `PREFIX.a.<TOKEN>` for a principal (`TOKEN` its name
//! [escaped](crate::bus::subject_token)), subscribed by whichever node runs the actor
//! now. A takeover needs nobody told, and NATS's "no responders" means "nobody owns it
//! now" ([`PeerError::NoResponders`]: retryable, nothing ran).
//!
//! Every message is a NATS request, answered by the actor (an acknowledgement or a
//! reply); an empty one is a probe ([`Peers::served`]), answered empty by the node
//! serving the subject without troubling the actor. Bounded as the bus is:
//! [`BusConfig::max_message`](crate::bus::BusConfig::max_message) per message either way
//! (larger ones refused when sent, dropped when received), [`BusConfig::queue`](crate::bus::BusConfig::queue) waiting
//! per actor (past it a message is dropped unanswered: its sender times out).

use crate::bus::{NatsBus, subject_token};
use bytes::Bytes;
use futures_util::StreamExt as _;
use mcpl_server::peers::{Arrival, Inbox, PeerAddress, PeerError, PeerFuture, Peers};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

/// How long a probe ([`Peers::served`]) waits for its answer (**\[project\]**: 2 s; the
/// node serving answers it at once, without its actor).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The SDK's peers over a node's [`NatsBus`] connection. See the module docs.
#[derive(Clone)]
pub struct NatsPeers {
    bus: Arc<NatsBus>,
}

impl std::fmt::Debug for NatsPeers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsPeers")
            .field("node", &self.bus.node())
            .finish_non_exhaustive()
    }
}

impl NatsPeers {
    /// Peers over `bus`'s connection.
    pub fn new(bus: Arc<NatsBus>) -> NatsPeers {
        NatsPeers { bus }
    }

    /// The subject of `to`.
    pub fn subject(&self, to: &PeerAddress) -> String {
        let prefix = &self.bus.config().prefix;
        match to {
            PeerAddress::Instance(id) => format!("{prefix}.i.{id}"),
            PeerAddress::Principal(name) => format!("{prefix}.a.{}", subject_token(name)),
        }
    }

    /// Refused: a principal's name over the bus's bound.
    fn check(&self, to: &PeerAddress) -> Result<(), PeerError> {
        let max = self.bus.config().max_name;
        match to {
            PeerAddress::Principal(name) if name.len() > max => Err(PeerError::Down(format!(
                "the principal's name has {} bytes, over the bus's limit of {max}",
                name.len()
            ))),
            _ => Ok(()),
        }
    }
}

/// A NATS request's failure as the peers say it.
fn failed(to: PeerAddress, e: &async_nats::RequestError) -> PeerError {
    match e.kind() {
        async_nats::RequestErrorKind::NoResponders => PeerError::NoResponders(to),
        async_nats::RequestErrorKind::TimedOut => PeerError::TimedOut(to),
        async_nats::RequestErrorKind::Other => PeerError::Down(e.to_string()),
    }
}

impl Peers for NatsPeers {
    fn serve(&self, to: PeerAddress) -> PeerFuture<Inbox> {
        let bus = self.bus.clone();
        let subject = self.subject(&to);
        let checked = self.check(&to);
        Box::pin(async move {
            checked?;
            let client = bus.client().clone();
            let (max, queue) = (bus.config().max_message, bus.config().queue);
            let mut subscriber = client
                .subscribe(subject)
                .await
                .map_err(|e| PeerError::Down(e.to_string()))?;
            // Served once NATS has processed the subscription: a request sent from now on,
            // by any node, reaches it.
            bus.flush()
                .await
                .map_err(|e| PeerError::Down(e.to_string()))?;
            let (tx, inbox) = Inbox::channel(queue);
            // Closed: unsubscribed, then a flush; answered once NATS has processed both.
            let (stop, mut stopped) = tokio::sync::mpsc::channel::<oneshot::Sender<()>>(1);
            let flusher = bus.clone();
            tokio::spawn(async move {
                let (mut done, mut closable) = (None, true);
                loop {
                    let message = tokio::select! {
                        // The actor stopped serving: unsubscribed at once, so a request
                        // meets "no responders" rather than silence.
                        () = tx.closed() => break,
                        asked = stopped.recv(), if closable => match asked {
                            Some(asked) => {
                                done = Some(asked);
                                break;
                            }
                            // Its closer dropped unused: served until the arrivals go.
                            None => {
                                closable = false;
                                continue;
                            }
                        },
                        m = subscriber.next() => match m {
                            Some(m) => m,
                            None => break,
                        },
                    };
                    let Some(reply) = message.reply else {
                        continue; // a plain publish: nobody waits for an answer
                    };
                    if message.payload.is_empty() {
                        let _ = client.publish(reply, Bytes::new()).await; // a probe
                        continue;
                    }
                    if message.payload.len() > max {
                        tracing::warn!(
                            size = message.payload.len(),
                            "a message for an actor over the bus's limit was dropped"
                        );
                        continue;
                    }
                    let answering = client.clone();
                    let arrival = Arrival::new(message.payload.to_vec(), move |answer| {
                        if answer.len() > max {
                            tracing::warn!(
                                size = answer.len(),
                                "an answer over the bus's limit was not sent"
                            );
                            return;
                        }
                        tokio::spawn(async move {
                            let _ = answering.publish(reply, answer.into()).await;
                        });
                    });
                    if let Err(e) = tx.try_send(arrival) {
                        match e {
                            tokio::sync::mpsc::error::TrySendError::Full(_) => {
                                tracing::warn!("an actor's queue is full: a message was dropped");
                            }
                            tokio::sync::mpsc::error::TrySendError::Closed(_) => break,
                        }
                    }
                }
                // Unsubscribed and flushed whichever way the loop ended: its arrivals
                // dropped first (the actor cancelled them before closing) must not let a
                // close be answered before NATS processed the unsubscription, or a
                // request meanwhile would reach a subscription nobody answers (silence
                // instead of "no responders").
                let _ = subscriber.unsubscribe().await;
                let _ = flusher.flush().await;
                // A close asked meanwhile is answered now; one asked later finds the
                // channel closed and returns at once, after this flush.
                stopped.close();
                while let Ok(asked) = stopped.try_recv() {
                    let _ = asked.send(());
                }
                if let Some(done) = done {
                    let _ = done.send(());
                }
            });
            Ok(inbox.on_close(move || {
                Box::pin(async move {
                    let (done, closed) = oneshot::channel();
                    if stop.send(done).await.is_ok() {
                        let _ = closed.await;
                    }
                })
            }))
        })
    }

    fn request(&self, to: PeerAddress, body: Vec<u8>, timeout: Duration) -> PeerFuture<Vec<u8>> {
        let client = self.bus.client().clone();
        let subject = self.subject(&to);
        let max = self.bus.config().max_message;
        let checked = self.check(&to);
        Box::pin(async move {
            checked?;
            if body.len() > max {
                let size = body.len();
                return Err(PeerError::TooLarge { size, max });
            }
            let request = async_nats::Request::new()
                .payload(body.into())
                .timeout(Some(timeout));
            let answer = client
                .send_request(subject, request)
                .await
                .map_err(|e| failed(to, &e))?;
            if answer.payload.len() > max {
                let size = answer.payload.len();
                return Err(PeerError::TooLarge { size, max });
            }
            Ok(answer.payload.to_vec())
        })
    }

    fn served(&self, to: PeerAddress) -> PeerFuture<bool> {
        let client = self.bus.client().clone();
        let subject = self.subject(&to);
        let checked = self.check(&to);
        Box::pin(async move {
            checked?;
            let probe = async_nats::Request::new()
                .payload(Bytes::new())
                .timeout(Some(PROBE_TIMEOUT));
            match client.send_request(subject, probe).await {
                Ok(_) => Ok(true),
                Err(e) => match failed(to, &e) {
                    PeerError::NoResponders(_) => Ok(false),
                    other => Err(other),
                },
            }
        })
    }

    fn max_message(&self) -> usize {
        self.bus.config().max_message
    }
}

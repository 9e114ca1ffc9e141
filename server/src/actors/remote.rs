//! References between a principal's actor and an instance's that may run on two servers
//! (issue #41, `docs/ownership.md` §2): each side's link is **local** (the actix address,
//! as ever) or **remote** (the instance's id, the principal's name), reached through the
//! server's [`Peers`](crate::peers::Peers) with `mcpl_server_core::wire`'s messages. The
//! cores decide every rule as before; this module only carries messages.
//!
//! - [`RemoteInstance`] (a principal's `InstanceRef`, `principal/messages.rs`): a
//!   principal's link to an instance on another server. One-way messages (a call,
//!   a leave, an unlink, an invitation named) go in order on one numbered stream per link;
//!   requests (a join, a close, a decline) are asked and awaited. A call that reaches
//!   nobody (nobody owns the instance now) is answered **\[project\]** -32603 with
//!   `data: {retryable: true, ran: false}`, one not answered in time `ran: null`.
//! - [`RemotePrincipal`] (an instance's `PrincipalRef`, `instance/messages.rs`): an
//!   instance's link to a participant's principal on another server. Its batches go in order on one numbered stream, each **only once its step is kept**
//!   (§3: nothing is told before it is kept; a step the store refused goes refused, as
//!   it would locally). What is not acknowledged is logged and not sent again yet: the
//!   outbox of `docs/ownership.md` §3, a later slice, sends it again.
//! - [`Seen`]: a receiver's last number per stream, so a message sent twice is applied once.

use crate::core::batch::{Batch, CallAnswer};
use crate::core::wire::{self, Ack, Numbered, Reply, ToInstance, ToPrincipal};
use crate::ids::InstanceId;
use crate::peers::{PeerAddress, PeerError, Peers};
use crate::shared::Shared;
use crate::store::Ticket;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// An instance on another server, as one principal reaches it.
#[derive(Clone)]
pub(crate) struct RemoteInstance {
    id: InstanceId,
    /// The one-way stream, sent in order by its task.
    stream: mpsc::UnboundedSender<ToInstance>,
    peers: Arc<dyn Peers>,
    timeout: Duration,
}

impl RemoteInstance {
    /// Instance `id` as one principal reaches it; `None` when the server has no peers. A
    /// call that does not get through is answered through `answer` (to the principal's
    /// actor), as the instance would answer it.
    pub(crate) fn new(
        shared: &Shared,
        id: InstanceId,
        answer: impl Fn(Batch) + 'static,
    ) -> Option<Self> {
        let peers = shared.peers.clone()?;
        let timeout = shared.peer_timeout;
        let (tx, mut rx) = mpsc::unbounded_channel::<ToInstance>();
        let sender = peers.clone();
        actix::spawn(async move {
            let stream = new_stream();
            let mut number = 0;
            while let Some(message) = rx.recv().await {
                number += 1;
                let numbered = Numbered {
                    stream,
                    number,
                    message: &message,
                };
                let sent = send(&*sender, PeerAddress::Instance(id.0), &numbered, timeout).await;
                if let Err(e) = sent {
                    tracing::warn!(instance = %id, error = %e, "a message to a remote instance was not acknowledged");
                    if let ToInstance::Call {
                        key,
                        session,
                        request,
                        ..
                    } = message
                    {
                        let mut batch = Batch::new(id, key);
                        batch.answers.push(CallAnswer {
                            session,
                            request,
                            outcome: Err(not_reached(&e)),
                            deferred: false,
                        });
                        answer(batch);
                    }
                }
            }
        });
        Some(RemoteInstance {
            id,
            stream: tx,
            peers,
            timeout,
        })
    }

    /// Sends a one-way message, after those sent before on this link.
    pub(crate) fn tell(&self, message: ToInstance) {
        let _ = self.stream.send(message);
    }

    /// Asks a request and awaits its reply.
    pub(crate) fn ask(
        &self,
        message: ToInstance,
    ) -> impl std::future::Future<Output = Result<Reply, PeerError>> + 'static {
        let peers = self.peers.clone();
        let (to, timeout) = (PeerAddress::Instance(self.id.0), self.timeout);
        async move {
            let request = Numbered {
                stream: 0,
                number: 0,
                message,
            };
            let body = encode(&request, peers.max_message())?;
            let answer = peers.request(to, body, timeout).await?;
            wire::decode(&answer, peers.max_message())
                .map_err(|e| PeerError::Down(format!("an unreadable reply: {e}")))
        }
    }
}

/// What a call that did not reach its remote instance is answered: nothing ran, or (a
/// time-out) it may have.
fn not_reached(e: &PeerError) -> ErrorObject {
    let ran = if e.may_have_run() {
        serde_json::Value::Null
    } else {
        serde_json::Value::Bool(false)
    };
    ErrorObject::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "the instance runs on another server and the call did not get through ({e}): try again"
        ),
    )
    .with_data(serde_json::json!({"retryable": true, "ran": ran}))
}

/// A random stream id, never 0 (a request's).
pub(crate) fn new_stream() -> u64 {
    rand::random::<u64>() | 1
}

fn encode<T: serde::Serialize>(message: &T, max: usize) -> Result<Vec<u8>, PeerError> {
    wire::encode(message, max).map_err(|e| match e {
        wire::WireError::TooLarge { size, max } => PeerError::TooLarge { size, max },
        other => PeerError::Down(other.to_string()),
    })
}

/// Sends one numbered message and checks its acknowledgement.
pub(crate) async fn send<T: serde::Serialize>(
    peers: &dyn Peers,
    to: PeerAddress,
    numbered: &Numbered<T>,
    timeout: Duration,
) -> Result<(), PeerError> {
    let body = encode(numbered, peers.max_message())?;
    let answer = peers.request(to, body, timeout).await?;
    match wire::decode::<Ack>(&answer, peers.max_message()) {
        Ok(Ack { number }) if number == numbered.number => Ok(()),
        Ok(Ack { number }) => Err(PeerError::Down(format!(
            "acknowledged {number} for {}",
            numbered.number
        ))),
        Err(e) => Err(PeerError::Down(format!(
            "an unreadable acknowledgement: {e}"
        ))),
    }
}

/// A principal on another server, as one instance reaches it.
#[derive(Clone)]
pub(crate) struct RemotePrincipal {
    stream: mpsc::UnboundedSender<Batch>,
}

impl RemotePrincipal {
    /// Sends `batch` once its step is kept, after those sent before.
    pub(crate) fn send(&self, batch: Batch) {
        let _ = self.stream.send(batch);
    }
}

impl RemotePrincipal {
    /// Principal `name` as an instance reaches it; `None` when the server has no peers.
    pub(crate) fn new(shared: &Arc<Shared>, name: String) -> Option<Self> {
        let peers = shared.peers.clone()?;
        let shared = shared.clone();
        let (tx, mut rx) = mpsc::unbounded_channel::<Batch>();
        actix::spawn(async move {
            let stream = new_stream();
            let mut number = 0;
            while let Some(mut batch) = rx.recv().await {
                // Told only once kept (`docs/ownership.md` §3), as a principal here waits.
                if let Err(not_kept) = shared.kept(batch.kept).await {
                    batch.refuse(&not_kept);
                }
                batch.kept = Ticket::NONE;
                number += 1;
                let instance = batch.instance;
                let numbered = Numbered {
                    stream,
                    number,
                    message: ToPrincipal::Batched(batch),
                };
                let to = PeerAddress::Principal(name.clone());
                if let Err(e) = send(&*peers, to, &numbered, shared.peer_timeout).await {
                    tracing::warn!(principal = %name, %instance, error = %e, "a batch for a remote principal was not acknowledged");
                }
            }
        });
        Some(RemotePrincipal { stream: tx })
    }
}

/// The last number applied of each stream a receiver hears, by what the stream is about.
pub(crate) struct Seen<K: Ord>(BTreeMap<K, (u64, u64)>);

impl<K: Ord> Default for Seen<K> {
    fn default() -> Self {
        Seen(BTreeMap::new())
    }
}

impl<K: Ord> Seen<K> {
    /// Whether message `number` of `stream` about `key` is new: not a number already
    /// seen of that stream (a stream new for `key` starts the count again).
    pub(crate) fn fresh(&mut self, key: K, stream: u64, number: u64) -> bool {
        let last = self.0.entry(key).or_insert((stream, 0));
        if last.0 != stream {
            *last = (stream, number);
            return true;
        }
        if number <= last.1 {
            return false;
        }
        last.1 = number;
        true
    }

    /// Forgets `key`'s stream.
    pub(crate) fn forget(&mut self, key: &K) {
        self.0.remove(key);
    }
}

/// Serves the address `to` on `peers` for actor `A`: once served, `served` is given the
/// inbox (its arrivals to add as a stream); when it cannot be served, a warning — the
/// actor goes on, unreachable from other servers.
pub(crate) fn serve<A>(
    act: &A,
    ctx: &mut actix::Context<A>,
    peers: Arc<dyn Peers>,
    to: PeerAddress,
    served: impl FnOnce(&mut A, &mut actix::Context<A>, crate::peers::Inbox) + 'static,
) where
    A: actix::Actor<Context = actix::Context<A>>,
{
    use actix::{AsyncContext as _, WrapFuture as _, fut::ActorFutureExt as _};
    let what = to.to_string();
    ctx.spawn(
        peers
            .serve(to)
            .into_actor(act)
            .map(move |result, act, ctx| match result {
                Ok(inbox) => served(act, ctx, inbox),
                Err(e) => {
                    tracing::warn!(actor = %what, error = %e, "not reachable from other servers");
                }
            }),
    );
}

/// The largest message the server's peers take (the in-process bound without peers).
pub(crate) fn max_message(shared: &Shared) -> usize {
    shared
        .peers
        .as_ref()
        .map_or(crate::peers::MAX_MESSAGE, |p| p.max_message())
}

/// A message from another server for the actor `to`, decoded; an unreadable one is
/// dropped unanswered (its sender hears nobody took it) and logged.
pub(crate) fn arrived<T: serde::de::DeserializeOwned>(
    arrival: &crate::peers::Arrival,
    shared: &Shared,
    to: &dyn std::fmt::Display,
) -> Option<Numbered<T>> {
    match wire::decode(&arrival.body, max_message(shared)) {
        Ok(m) => Some(m),
        Err(e) => {
            tracing::warn!(%to, error = %e, "an unreadable message from another server is dropped");
            None
        }
    }
}

/// The acknowledgement of message `number`, encoded.
pub(crate) fn ack(number: u64) -> Vec<u8> {
    serde_json::to_vec(&Ack { number }).expect("an Ack encodes")
}

/// A reply, encoded within `max` bytes; over it, what fits: nothing is answered (its
/// asker is told nobody took it) and the reason logged.
pub(crate) fn reply(reply: &Reply, max: usize) -> Option<Vec<u8>> {
    match wire::encode(reply, max) {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            tracing::warn!(error = %e, "a reply to another server could not be sent");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Seen;

    #[test]
    fn a_number_seen_is_dropped_and_a_new_stream_counts_again() {
        let mut seen = Seen::default();
        assert!(seen.fresh(1, 9, 1));
        assert!(seen.fresh(1, 9, 2));
        assert!(!seen.fresh(1, 9, 2), "sent twice");
        assert!(!seen.fresh(1, 9, 1), "an old one late");
        assert!(
            seen.fresh(1, 9, 4),
            "a gap: what was lost is the outbox's to send again"
        );
        assert!(seen.fresh(2, 9, 1), "another participant's stream");
        assert!(seen.fresh(1, 11, 1), "the sender started again elsewhere");
        assert!(!seen.fresh(1, 11, 1));
        seen.forget(&1);
        assert!(seen.fresh(1, 11, 1));
    }
}

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
//!   `data: {retryable: true, ran: false}`, one not answered in time `ran: null`; the
//!   other one-way messages are logged when not acknowledged. Bounded
//!   ([`PeerBounds`]): a call past what the link may hold is refused at once, retryable.
//! - [`RemotePrincipal`] (an instance's `PrincipalRef`, `instance/messages.rs`): an
//!   instance's link to a participant's principal on another server, by name. A step's
//!   batches for it go from the instance's **outbox** (`actors/outbox.rs`: numbered,
//!   kept with the instance's record, each sent only once its step is kept — §3: nothing
//!   is told before it is kept — and again until acknowledged); answers told outside a
//!   step go with [`RemotePrincipal::send`], in no stream.
//! - [`Seen`]: a receiver's last number per stream, so a message sent twice is applied once.

use crate::core::batch::{Batch, CallAnswer};
use crate::core::wire::{self, Ack, Numbered, Reply, ToInstance, ToPrincipal};
use crate::ids::InstanceId;
use crate::peers::PeerBounds;
use crate::peers::{PeerAddress, PeerError, Peers};
use crate::shared::Shared;
use crate::store::Ticket;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;

/// An instance on another server, as one principal reaches it.
#[derive(Clone)]
pub(crate) struct RemoteInstance {
    id: InstanceId,
    /// The one-way stream, sent in order by its task: each message encoded, with its size.
    stream: mpsc::UnboundedSender<(ToInstance, Box<RawValue>)>,
    /// What the stream holds (messages, bytes), within the server's [`PeerBounds`].
    held: Arc<Held>,
    bounds: PeerBounds,
    /// How a call refused here is answered (to the principal's actor).
    answer: Arc<dyn Fn(Batch) + Send + Sync>,
    peers: Arc<dyn Peers>,
    timeout: Duration,
}

/// What a stream holds: messages and their bytes.
#[derive(Default)]
pub(crate) struct Held {
    count: AtomicUsize,
    bytes: AtomicUsize,
}

impl Held {
    fn add(&self, bytes: usize) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    fn take(&self, bytes: usize) {
        self.count.fetch_sub(1, Ordering::Relaxed);
        self.bytes.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Whether `more` bytes would go past `bounds`.
    fn full(&self, bounds: PeerBounds, more: usize) -> bool {
        self.count.load(Ordering::Relaxed) >= bounds.count
            || self.bytes.load(Ordering::Relaxed).saturating_add(more) > bounds.bytes
    }
}

impl RemoteInstance {
    /// Instance `id` as one principal reaches it; `None` when the server has no peers. A
    /// call that does not get through is answered through `answer` (to the principal's
    /// actor), as the instance would answer it.
    pub(crate) fn new(
        shared: &Shared,
        id: InstanceId,
        answer: impl Fn(Batch) + Send + Sync + 'static,
    ) -> Option<Self> {
        let peers = shared.peers.clone()?;
        let timeout = shared.peer_timeout;
        let (tx, mut rx) = mpsc::unbounded_channel::<(ToInstance, Box<RawValue>)>();
        let sender = peers.clone();
        let answer: Arc<dyn Fn(Batch) + Send + Sync> = Arc::new(answer);
        let held = Arc::new(Held::default());
        let (answer_here, held_here) = (answer.clone(), held.clone());
        actix::spawn(async move {
            let stream = new_stream();
            let mut number = 0;
            while let Some((message, raw)) = rx.recv().await {
                number += 1;
                let numbered = Numbered {
                    stream,
                    number,
                    message: &*raw,
                };
                let sent = send(&*sender, PeerAddress::Instance(id.0), &numbered, timeout).await;
                held_here.take(raw.get().len());
                if let Err(e) = sent {
                    tracing::warn!(instance = %id, error = %e, "a message to a remote instance was not acknowledged");
                    refuse_call(id, message, &not_reached(&e), &*answer_here);
                }
            }
        });
        Some(RemoteInstance {
            id,
            stream: tx,
            held,
            bounds: shared.peer_bounds,
            answer,
            peers,
            timeout,
        })
    }

    /// Sends a one-way message, after those sent before on this link. A call past the
    /// server's [`PeerBounds`] for the link is refused at once (`-32603`, `retryable`,
    /// `ran: false`, **\[project\]**); a leave, an unlink or an invitation named (one per
    /// link and step) always goes.
    pub(crate) fn tell(&self, message: ToInstance) {
        let raw = match serde_json::value::to_raw_value(&message) {
            Ok(raw) => raw,
            Err(e) => {
                tracing::error!(instance = %self.id, error = %e, "a message to a remote instance does not encode");
                return;
            }
        };
        let size = raw.get().len();
        if matches!(message, ToInstance::Call { .. }) && self.held.full(self.bounds, size) {
            let error = ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "the instance runs on another server, and too much is waiting to reach it \
                     (at most {} messages, {} bytes): try again",
                    self.bounds.count, self.bounds.bytes
                ),
            )
            .with_data(serde_json::json!({"retryable": true, "ran": false}));
            refuse_call(self.id, message, &error, &*self.answer);
            return;
        }
        self.held.add(size);
        if let Err(unsent) = self.stream.send((message, raw)) {
            let (message, raw) = unsent.0;
            self.held.take(raw.get().len());
            let e = PeerError::Down("the link's task is gone".into());
            refuse_call(self.id, message, &not_reached(&e), &*self.answer);
        }
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

/// A call that did not go is answered with `error` through `answer`; anything else that
/// did not go is only logged (by the caller).
fn refuse_call(id: InstanceId, message: ToInstance, error: &ErrorObject, answer: &dyn Fn(Batch)) {
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
            outcome: Err(error.clone()),
            deferred: false,
        });
        answer(batch);
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

/// A principal on another server, as one instance reaches it: by its name. A step's
/// batches for it go from the instance's outbox (`actors/instance/outbox.rs`, numbered,
/// kept with the instance's record, sent again until acknowledged); what is told outside
/// a step — answers alone: a call refused by a released instance, the answers of a
/// participant that left — goes with [`RemotePrincipal::send`].
#[derive(Clone)]
pub(crate) struct RemotePrincipal {
    name: String,
    shared: Arc<Shared>,
}

impl RemotePrincipal {
    /// Principal `name` as an instance reaches it; `None` when the server has no peers.
    pub(crate) fn new(shared: &Arc<Shared>, name: String) -> Option<Self> {
        shared.peers.as_ref()?;
        Some(RemotePrincipal {
            name,
            shared: shared.clone(),
        })
    }

    /// The principal's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Sends `batch`, answers alone, once its step is kept, in no stream (number 0
    /// **\[project\]**): the principal applies it without a number — an answer told again
    /// finds its call answered and is dropped. Sent again a few times while nothing ran
    /// ([`RESEND_FIRST`] doubling), then logged as lost: its host's call is answered by
    /// its own time-out, and it may call again.
    pub(crate) fn send(&self, mut batch: Batch) {
        let Some(peers) = self.shared.peers.clone() else {
            return;
        };
        let (shared, name) = (self.shared.clone(), self.name.clone());
        actix::spawn(async move {
            if let Err(not_kept) = shared.kept(batch.kept).await {
                batch.refuse(&not_kept);
            }
            batch.kept = Ticket::NONE;
            let instance = batch.instance;
            let numbered = Numbered {
                stream: 0,
                number: 0,
                message: ToPrincipal::Batched(batch),
            };
            let mut delay = RESEND_FIRST;
            for attempt in 1..=ANSWER_TRIES {
                let to = PeerAddress::Principal(name.clone());
                match send(&*peers, to, &numbered, shared.peer_timeout).await {
                    Ok(()) => return,
                    Err(e)
                        if attempt == ANSWER_TRIES || matches!(e, PeerError::TooLarge { .. }) =>
                    {
                        tracing::warn!(principal = %name, %instance, error = %e, "answers for a remote principal were not acknowledged");
                        return;
                    }
                    Err(_) => {
                        tokio::time::sleep(delay).await;
                        delay = (delay * 2).min(RESEND_MOST);
                    }
                }
            }
        });
    }
}

/// How long a message not acknowledged waits before it is sent again, the first time
/// (**\[project\]** 100 ms, doubling each time up to [`RESEND_MOST`]).
pub(crate) const RESEND_FIRST: Duration = Duration::from_millis(100);

/// The longest wait between two sends of a message not acknowledged (**\[project\]**).
pub(crate) const RESEND_MOST: Duration = Duration::from_secs(5);

/// How many times answers alone are sent before they are given up (**\[project\]**).
const ANSWER_TRIES: u32 = 5;

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

    /// The stream and last number applied of `key`'s stream, when one was heard.
    pub(crate) fn get(&self, key: &K) -> Option<(u64, u64)> {
        self.0.get(key).copied()
    }

    /// `key`'s stream is `stream`, applied up to `number` (read back from a record).
    pub(crate) fn set(&mut self, key: K, stream: u64, number: u64) {
        self.0.insert(key, (stream, number));
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

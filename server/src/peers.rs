//! How servers reach each other's actors (issue #41, `docs/ownership.md` §2): a principal's
//! actor on one server and an instance's on another say what they say through [`Peers`],
//! addressed by the actor ([`PeerAddress`]), never by the server — whoever holds an actor
//! serves its address, so a takeover needs nobody told, and "nobody serves it" means
//! "nobody owns it now" (retryable). The messages are `mcpl_server_core::wire`'s, encoded
//! within [`Peers::max_message`].
//!
//! Two implementations: [`InProcessPeers`] (servers in one process, the embedded default)
//! and `mcpl_cluster`'s over NATS (subjects `mcpl.i.<id>`, `mcpl.a.<principal>`). A server
//! is given one with [`ServerBuilder::peers`](crate::ServerBuilder::peers); without one
//! nothing crosses servers, as before.
//!
//! Every message is a request: one-way messages are answered with their `wire::Ack`
//! (numbered per instance, participant and direction; the receiver drops a number it
//! saw), the others (a join, a close, a decline) with their `wire::Reply`. An instance's
//! batches for a principal elsewhere are sent again until acknowledged, from an outbox
//! kept with its record (`docs/ownership.md` §3, `actors/outbox.rs`); **\[project\]** a
//! principal's messages to an instance elsewhere are not: a lost one is logged, and a call
//! lost so is answered "retry". What is held for other servers is bounded
//! ([`PeerBounds`]).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Where a message goes: an actor, wherever it runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PeerAddress {
    /// Instance `id`'s actor (NATS: `mcpl.i.<id>`).
    Instance(u64),
    /// A named principal's actor (NATS: `mcpl.a.<principal>`).
    Principal(String),
}

impl std::fmt::Display for PeerAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerAddress::Instance(id) => write!(f, "instance {id}"),
            PeerAddress::Principal(name) => write!(f, "principal {name:?}"),
        }
    }
}

/// Why a message did not reach its actor, or got no answer. Each is worth retrying.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PeerError {
    /// Nobody serves the address now (NATS's "no responders"): nobody owns the actor, or
    /// it is moving. Nothing ran.
    #[error("nobody serves {0} now")]
    NoResponders(PeerAddress),
    /// Sent, not answered in time: it may have run.
    #[error("{0} did not answer in time")]
    TimedOut(PeerAddress),
    /// The actor's queue is full: not taken, nothing ran.
    #[error("{0} is busy: its queue is full")]
    Full(PeerAddress),
    /// Larger than the peers take: not sent.
    #[error("the message is {size} bytes, over the bound of {max}")]
    TooLarge {
        /// Its size.
        size: usize,
        /// The bound.
        max: usize,
    },
    /// Someone else serves this address already.
    #[error("{0} is served already")]
    Taken(PeerAddress),
    /// The bus itself failed (a lost connection); nothing known to have run.
    #[error("the peers' bus failed: {0}")]
    Down(String),
}

impl PeerError {
    /// Whether the message may have reached its actor (a time-out) — otherwise nothing
    /// ran.
    pub fn may_have_run(&self) -> bool {
        matches!(self, PeerError::TimedOut(_))
    }
}

/// What the peers' futures return.
pub type PeerFuture<T> = Pin<Box<dyn Future<Output = Result<T, PeerError>> + Send>>;

/// How a server reaches actors on other servers. See the module docs.
pub trait Peers: Send + Sync + 'static {
    /// From now on (once the future resolves), what is sent to `to` arrives in the
    /// returned [`Inbox`], until it is dropped.
    fn serve(&self, to: PeerAddress) -> PeerFuture<Inbox>;

    /// Sends `body` to whoever serves `to` and waits at most `timeout` for its answer.
    fn request(&self, to: PeerAddress, body: Vec<u8>, timeout: Duration) -> PeerFuture<Vec<u8>>;

    /// Whether somebody serves `to` now.
    fn served(&self, to: PeerAddress) -> PeerFuture<bool>;

    /// The largest message, in bytes, either way.
    fn max_message(&self) -> usize;
}

/// A message that arrived for an actor this server serves, with the way to answer it.
pub struct Arrival {
    /// The message as sent.
    pub body: Vec<u8>,
    reply: Option<Box<dyn FnOnce(Vec<u8>) + Send>>,
}

impl Arrival {
    /// A message `body`, answered through `reply`.
    pub fn new(body: Vec<u8>, reply: impl FnOnce(Vec<u8>) + Send + 'static) -> Self {
        Arrival {
            body,
            reply: Some(Box::new(reply)),
        }
    }

    /// Answers it (once; dropped unanswered, its sender is told nobody took it).
    pub fn respond(mut self, answer: Vec<u8>) {
        if let Some(reply) = self.reply.take() {
            reply(answer);
        }
    }
}

impl std::fmt::Debug for Arrival {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Arrival({} bytes)", self.body.len())
    }
}

/// How an inbox stops being served: see [`Inbox::on_close`].
type CloseFn = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// What arrives for one address, in order, bounded: a stream of [`Arrival`]s once
/// [split](Inbox::split).
pub struct Inbox {
    rx: mpsc::Receiver<Arrival>,
    close: Option<CloseFn>,
}

impl Inbox {
    /// An inbox of at most `capacity` waiting messages, and where they are put.
    pub fn channel(capacity: usize) -> (mpsc::Sender<Arrival>, Inbox) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (tx, Inbox { rx, close: None })
    }

    /// What [`Closer::close`] does: stop serving the address, resolving once nobody
    /// reaches this inbox through it any more (NATS: unsubscribed, and the server has
    /// processed it).
    pub fn on_close(
        mut self,
        close: impl FnOnce() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + 'static,
    ) -> Self {
        self.close = Some(Box::new(close));
        self
    }

    /// The stream of arrivals, and what stops serving the address.
    pub fn split(self) -> (Arrivals, Closer) {
        (Arrivals { rx: self.rx }, Closer(self.close))
    }
}

/// The messages arriving for an address served, in order (from [`Inbox::split`]).
pub struct Arrivals {
    rx: mpsc::Receiver<Arrival>,
}

impl futures_util::Stream for Arrivals {
    type Item = Arrival;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Arrival>> {
        self.rx.poll_recv(cx)
    }
}

/// Stops serving an address (from [`Inbox::split`]). Dropped unused, the address stops
/// being served once its [`Arrivals`] are dropped too, some time later.
pub struct Closer(Option<CloseFn>);

impl Closer {
    /// Stops serving the address; resolves once nothing sent to it reaches this inbox.
    pub async fn close(self) {
        if let Some(close) = self.0 {
            close().await;
        }
    }
}

/// How many messages an actor's inbox holds before a sender is told it is full
/// (**\[project\]**: 256, the bus's `BusConfig::queue` default).
pub const INBOX: usize = 256;

/// How long a message to another server's actor waits for its answer by default
/// (**\[project\]**: 5 s, the nodes' forward time-out).
pub const PEER_TIMEOUT: Duration = Duration::from_secs(5);

/// How much a server holds for actors on other servers, per stream (issue #41,
/// `docs/ownership.md` §3): what waits to be sent or acknowledged on one link, counted
/// and in bytes (as JSON). Given with
/// [`ServerBuilder::peer_bounds`](crate::ServerBuilder::peer_bounds).
///
/// - an instance's **outbox** for one participant's principal elsewhere (the batches
///   not acknowledged): past either bound, **\[project\]** the instance ends for that
///   participant — what it held is dropped, the principal is sent the end with the
///   reason [`OUTBOX_FULL`], and the logic hears the participant leave;
/// - a principal's messages to one instance elsewhere (calls, leaves, unlinks): past
///   either bound, a call is refused at once with -32603 `{retryable: true, ran: false}`
///   **\[project\]**, and the others wait for room (they are one per link and step);
/// - the invitations and withdrawals to one principal elsewhere: past the count, they
///   are routed here (the principal started here on its first use), as when nobody
///   serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerBounds {
    /// At most this many messages held per stream.
    pub count: usize,
    /// At most this many bytes held per stream.
    pub bytes: usize,
}

impl Default for PeerBounds {
    /// **\[project\]** 1,024 messages and 8 MiB a stream: a game's player away for
    /// minutes of another's moves stays within it; a principal unreachable for long does
    /// not hold an instance's memory without bound.
    fn default() -> Self {
        PeerBounds {
            count: 1024,
            bytes: 8 << 20,
        }
    }
}

/// The reason an instance ends with for a participant whose principal fell too far
/// behind: its outbox went past [`PeerBounds`] (issue #41).
pub const OUTBOX_FULL: &str = "the instance runs on another server, and too much of it was \
     not acknowledged by this principal's server: it ended for this principal";

/// The largest message [`InProcessPeers`] takes by default: 1 MiB (**\[project\]**, as a
/// node's forwarded request).
pub const MAX_MESSAGE: usize = 1 << 20;

/// Servers in one process reaching each other's actors (the embedded default): a map from
/// each address served to its inbox. Clones share it; give each server a clone.
#[derive(Clone)]
pub struct InProcessPeers {
    served: Arc<Mutex<HashMap<PeerAddress, mpsc::Sender<Arrival>>>>,
    max_message: usize,
}

impl Default for InProcessPeers {
    fn default() -> Self {
        Self::new()
    }
}

impl InProcessPeers {
    /// Peers with nothing served, taking messages of up to [`MAX_MESSAGE`] bytes.
    pub fn new() -> Self {
        InProcessPeers {
            served: Arc::default(),
            max_message: MAX_MESSAGE,
        }
    }

    /// The inbox serving `to`, when one does.
    fn inbox(&self, to: &PeerAddress) -> Option<mpsc::Sender<Arrival>> {
        let mut served = self
            .served
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match served.get(to) {
            Some(tx) if !tx.is_closed() => Some(tx.clone()),
            Some(_) => {
                served.remove(to);
                None
            }
            None => None,
        }
    }
}

impl Peers for InProcessPeers {
    fn serve(&self, to: PeerAddress) -> PeerFuture<Inbox> {
        let taken = self.inbox(&to).is_some();
        let answer = if taken {
            Err(PeerError::Taken(to))
        } else {
            let (tx, inbox) = Inbox::channel(INBOX);
            let (served, mine) = (self.served.clone(), tx.clone());
            self.served
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(to.clone(), tx);
            Ok(inbox.on_close(move || {
                let mut served = served
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if served.get(&to).is_some_and(|tx| tx.same_channel(&mine)) {
                    served.remove(&to);
                }
                Box::pin(std::future::ready(()))
            }))
        };
        Box::pin(std::future::ready(answer))
    }

    fn request(&self, to: PeerAddress, body: Vec<u8>, timeout: Duration) -> PeerFuture<Vec<u8>> {
        if body.len() > self.max_message {
            let (size, max) = (body.len(), self.max_message);
            return Box::pin(std::future::ready(Err(PeerError::TooLarge { size, max })));
        }
        let Some(inbox) = self.inbox(&to) else {
            return Box::pin(std::future::ready(Err(PeerError::NoResponders(to))));
        };
        let (tx, rx) = oneshot::channel();
        let arrival = Arrival::new(body, move |answer| {
            let _ = tx.send(answer);
        });
        if let Err(e) = inbox.try_send(arrival) {
            let refused = match e {
                mpsc::error::TrySendError::Full(_) => PeerError::Full(to),
                mpsc::error::TrySendError::Closed(_) => PeerError::NoResponders(to),
            };
            return Box::pin(std::future::ready(Err(refused)));
        }
        Box::pin(async move {
            match tokio::time::timeout(timeout, rx).await {
                Ok(Ok(answer)) => Ok(answer),
                // Dropped unanswered: its actor went before taking it.
                Ok(Err(_)) => Err(PeerError::NoResponders(to)),
                Err(_) => Err(PeerError::TimedOut(to)),
            }
        })
    }

    fn served(&self, to: PeerAddress) -> PeerFuture<bool> {
        let served = self.inbox(&to).is_some();
        Box::pin(std::future::ready(Ok(served)))
    }

    fn max_message(&self) -> usize {
        self.max_message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    #[tokio::test]
    async fn a_request_reaches_whoever_serves_the_address_and_nobody_once_it_is_dropped() {
        let peers = InProcessPeers::new();
        let at = PeerAddress::Instance(7);
        let short = Duration::from_secs(5);
        assert!(matches!(
            peers.request(at.clone(), b"hi".to_vec(), short).await,
            Err(PeerError::NoResponders(_))
        ));
        let (mut inbox, closer) = peers.serve(at.clone()).await.unwrap().split();
        assert!(matches!(
            peers.serve(at.clone()).await,
            Err(PeerError::Taken(_))
        ));
        assert!(peers.served(at.clone()).await.unwrap());
        let asked = tokio::spawn(peers.request(at.clone(), b"hi".to_vec(), short));
        let arrival = inbox.next().await.unwrap();
        assert_eq!(arrival.body, b"hi");
        arrival.respond(b"ho".to_vec());
        assert_eq!(asked.await.unwrap().unwrap(), b"ho");
        let too_big = vec![0; MAX_MESSAGE + 1];
        assert!(matches!(
            peers.request(at.clone(), too_big, short).await,
            Err(PeerError::TooLarge { .. })
        ));
        closer.close().await;
        assert!(!peers.served(at.clone()).await.unwrap(), "closed");
        drop(inbox);
        assert!(matches!(
            peers.request(at.clone(), b"hi".to_vec(), short).await,
            Err(PeerError::NoResponders(_))
        ));
        // Served again, by another; dropped, it is no longer served.
        let again = peers.serve(at.clone()).await.unwrap();
        assert!(peers.served(at.clone()).await.unwrap());
        drop(again);
        assert!(!peers.served(at).await.unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_not_answered_in_time_or_past_a_full_inbox_says_so() {
        let peers = InProcessPeers::new();
        let at = PeerAddress::Principal("alice".into());
        let _inbox = peers.serve(at.clone()).await.unwrap();
        let e = peers
            .request(at.clone(), vec![], Duration::from_secs(1))
            .await
            .unwrap_err();
        assert!(
            matches!(e, PeerError::TimedOut(_)) && e.may_have_run(),
            "{e}"
        );
        for _ in 1..INBOX {
            drop(peers.request(at.clone(), vec![], Duration::from_secs(1)));
        }
        let e = peers
            .request(at, vec![], Duration::from_secs(1))
            .await
            .unwrap_err();
        assert!(matches!(e, PeerError::Full(_)) && !e.may_have_run(), "{e}");
    }
}

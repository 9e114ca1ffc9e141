//! [`NatsBus`]: what must reach other nodes at once, over NATS core (issue #41 item 2).
//!
//! Two things travel on it:
//!
//! - **Change notices** `{principal, version}`: a node that committed a principal's next
//!   version [announces](NatsBus::announce) it; every node that [watches](NatsBus::watch)
//!   that principal (it holds the principal's connections or listen streams) is told.
//! - **Forwarded requests**: [`NatsBus::forward`] sends bytes to the node named and waits
//!   for its answer, within a timeout; a node [serves](NatsBus::serve) what is sent to it.
//!
//! **A lost message costs latency, never correctness.** NATS core delivers at most once:
//! a server restart, a cut connection or a full queue drops notices. A [`Watch`] knows the
//! last version it was told and tells its owner what to do with each notice:
//! [`Change::Next`] (the next version, in order), [`Change::Gap`] (versions were missed:
//! read the principal's record from the store), or [`Change::Resync`] (the connection was
//! lost and made again, or a queue overflowed, or a notice could not be read: anything may
//! have been missed, read the record). A notice of a version already told is dropped:
//! nothing is told twice. The store (PostgreSQL) stays the truth; the bus only says when
//! to look.
//!
//! **Subjects.** `PREFIX.p.TOKEN` carries a principal's notices and `PREFIX.n.TOKEN` the
//! requests forwarded to a node, `TOKEN` the name [escaped](subject_token): principal and
//! node names are arbitrary strings, and a `.` would split a token, `*` and `>` are
//! wildcards, whitespace ends a subject. ASCII letters, digits, `-` and `_` stand for
//! themselves; every other byte of the name's UTF-8 is `%` and two upper-case hex digits;
//! the empty name is `%` alone. The escape is one-to-one (`%` itself is escaped), so no
//! two names share a subject and no name reaches another's.
//!
//! **Bounded.** Every subscription's queue holds [`BusConfig::queue`] messages (NATS
//! drops the rest: a gap, then a [`Change::Resync`]); a message's payload is at most
//! [`BusConfig::max_message`] bytes (larger ones are refused when sent, with
//! [`BusError::TooLarge`], and dropped when received); a node watches at most
//! [`BusConfig::max_watched`] principals at once ([`BusError::TooManyWatched`]); a name
//! is at most [`BusConfig::max_name`] bytes ([`BusError::NameTooLong`]).

use async_nats::{Client, ConnectOptions, Event, Subscriber};
use bytes::Bytes;
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::watch;

/// What a [`NatsBus`] allows. [`BusConfig::new`] gives the defaults.
#[derive(Debug, Clone)]
pub struct BusConfig {
    /// This node's name: requests [forwarded](NatsBus::forward) to it reach it.
    pub node: String,
    /// The first token of every subject (several arcades may share one NATS).
    pub prefix: String,
    /// The most bytes a message's payload may have.
    pub max_message: usize,
    /// The most messages each subscription holds before NATS drops the next.
    pub queue: usize,
    /// The most principals this node watches at once.
    pub max_watched: usize,
    /// The most bytes of a principal's or a node's name.
    pub max_name: usize,
    /// The longest wait between two attempts to reconnect (the first is at once).
    pub reconnect_max: Duration,
}

impl BusConfig {
    /// The defaults for node `node`: prefix `mcpl`, messages of 64 KiB, 256 per
    /// queue, 10 000 principals watched, names of 256 bytes, reconnection at most every
    /// 2 s.
    pub fn new(node: impl Into<String>) -> BusConfig {
        BusConfig {
            node: node.into(),
            prefix: "mcpl".to_owned(),
            max_message: 64 * 1024,
            queue: 256,
            max_watched: 10_000,
            max_name: 256,
            reconnect_max: Duration::from_secs(2),
        }
    }
}

/// What went wrong on the bus.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    /// NATS could not be reached or refused the connection.
    #[error("cannot connect to NATS at {url}: {detail}")]
    Connect {
        /// The URL given.
        url: String,
        /// What the client said.
        detail: String,
    },
    /// A message over [`BusConfig::max_message`].
    #[error("{what} has {size} bytes, over the bus's limit of {limit}")]
    TooLarge {
        /// Which message (`the request to node "b"`, `the answer from node "b"`).
        what: String,
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// A name over [`BusConfig::max_name`].
    #[error("the {what} name has {len} bytes, over the bus's limit of {limit}")]
    NameTooLong {
        /// `principal` or `node`.
        what: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// [`BusConfig::max_watched`] principals are already watched.
    #[error("this node already watches {limit} principals, the bus's limit")]
    TooManyWatched {
        /// The limit.
        limit: usize,
    },
    /// No node serves the name a request was forwarded to.
    #[error("no node named {node:?} answers on the bus")]
    NoNode {
        /// The node's name.
        node: String,
    },
    /// The node did not answer in time.
    #[error("node {node:?} did not answer within {after:?}")]
    TimedOut {
        /// The node's name.
        node: String,
        /// The timeout.
        after: Duration,
    },
    /// The NATS client failed otherwise (its connection is closed, say).
    #[error("NATS: {0}")]
    Nats(String),
}

/// A principal's change notice, as carried (JSON). Unknown members are ignored.
#[derive(Debug, Serialize, Deserialize)]
struct Notice {
    principal: String,
    version: u64,
}

/// The subject token of a name (see the module docs): one-to-one, never a wildcard,
/// never a `.` or whitespace.
pub fn subject_token(name: &str) -> String {
    if name.is_empty() {
        return "%".to_owned();
    }
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The name a [`subject_token`] stands for; `None` for a string no name escapes to.
pub fn name_of_token(token: &str) -> Option<String> {
    if token == "%" {
        return Some(String::new());
    }
    let mut bytes = Vec::with_capacity(token.len());
    let mut rest = token.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'%' {
            let hex = tail.get(..2)?;
            let hex = std::str::from_utf8(hex).ok()?;
            if hex.bytes().any(|b| b.is_ascii_lowercase()) {
                return None;
            }
            let byte = u8::from_str_radix(hex, 16).ok()?;
            if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
                return None;
            }
            bytes.push(byte);
            rest = &tail[2..];
        } else if first.is_ascii_alphanumeric() || first == b'-' || first == b'_' {
            bytes.push(first);
            rest = tail;
        } else {
            return None;
        }
    }
    String::from_utf8(bytes).ok().filter(|s| !s.is_empty())
}

/// What a [`Watch`] tells its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The principal's next version: nothing was missed.
    Next {
        /// The version.
        version: u64,
    },
    /// Versions after `last` were missed (a notice was lost): read the principal's
    /// record from the store. `version` is the one this notice announced.
    Gap {
        /// The last version told before.
        last: u64,
        /// The version announced.
        version: u64,
    },
    /// Anything may have been missed (the connection to NATS was lost and made again, a
    /// queue overflowed, a notice could not be read): read the principal's record.
    Resync,
}

/// A count of watches, given back when one is dropped.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One principal's notices, as this node watches them. See the module docs.
pub struct Watch {
    principal: String,
    last: u64,
    subscriber: Subscriber,
    resync: watch::Receiver<u64>,
    max_message: usize,
    _slot: Slot,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("principal", &self.principal)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl Watch {
    /// The principal watched.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// The last version told (or given to [`NatsBus::watch`] or [`Watch::caught_up`]).
    pub fn last(&self) -> u64 {
        self.last
    }

    /// The owner read the principal's record at `version` from the store: later notices
    /// are counted from it (an older `version` than the last told changes nothing).
    pub fn caught_up(&mut self, version: u64) {
        self.last = self.last.max(version);
    }

    /// The next thing to do: a notice of the next version, a gap, or a resync; notices
    /// of versions already told are skipped. `None` once the bus is closed.
    pub async fn next(&mut self) -> Option<Change> {
        loop {
            let message = tokio::select! {
                biased;
                changed = self.resync.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                    return Some(Change::Resync);
                }
                message = self.subscriber.next() => message?,
            };
            if message.payload.len() > self.max_message {
                tracing::warn!(
                    principal = %self.principal,
                    size = message.payload.len(),
                    "a change notice over the bus's limit was dropped"
                );
                return Some(Change::Resync);
            }
            let notice = match serde_json::from_slice::<Notice>(&message.payload) {
                Ok(n) if n.principal == self.principal => n,
                Ok(n) => {
                    tracing::warn!(
                        principal = %self.principal,
                        other = %n.principal,
                        "a change notice of another principal on this principal's subject"
                    );
                    return Some(Change::Resync);
                }
                Err(e) => {
                    tracing::warn!(principal = %self.principal, error = %e, "an unreadable change notice");
                    return Some(Change::Resync);
                }
            };
            let last = self.last;
            if notice.version <= last {
                continue;
            }
            self.last = notice.version;
            return Some(if notice.version == last + 1 {
                Change::Next {
                    version: notice.version,
                }
            } else {
                Change::Gap {
                    last,
                    version: notice.version,
                }
            });
        }
    }
}

/// A request forwarded to this node. Answer it with [`Request::respond`]; one dropped
/// unanswered leaves its sender to time out.
pub struct Request {
    payload: Bytes,
    reply: Option<async_nats::Subject>,
    client: Client,
    max_message: usize,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("size", &self.payload.len())
            .finish_non_exhaustive()
    }
}

impl Request {
    /// What was sent.
    pub fn payload(&self) -> &Bytes {
        &self.payload
    }

    /// Sends `answer` to the node that forwarded the request. An answer over
    /// [`BusConfig::max_message`] is refused ([`BusError::TooLarge`]), not sent.
    pub async fn respond(self, answer: Bytes) -> Result<(), BusError> {
        if answer.len() > self.max_message {
            return Err(BusError::TooLarge {
                what: "an answer".to_owned(),
                size: answer.len(),
                limit: self.max_message,
            });
        }
        let Some(reply) = self.reply else {
            // Sent with a plain publish: nobody waits for an answer.
            return Ok(());
        };
        self.client
            .publish(reply, answer)
            .await
            .map_err(|e| BusError::Nats(e.to_string()))
    }
}

/// The requests forwarded to this node, in order of arrival.
pub struct Requests {
    subscriber: Subscriber,
    client: Client,
    max_message: usize,
}

impl std::fmt::Debug for Requests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Requests").finish_non_exhaustive()
    }
}

impl Requests {
    /// The next request; one over [`BusConfig::max_message`] is dropped (its sender
    /// times out; it also refuses to send one). `None` once the bus is closed.
    pub async fn next(&mut self) -> Option<Request> {
        loop {
            let message = self.subscriber.next().await?;
            if message.payload.len() > self.max_message {
                tracing::warn!(
                    size = message.payload.len(),
                    "a forwarded request over the bus's limit was dropped"
                );
                continue;
            }
            return Some(Request {
                payload: message.payload,
                reply: message.reply,
                client: self.client.clone(),
                max_message: self.max_message,
            });
        }
    }
}

/// One node's connection to the bus. See the module docs.
pub struct NatsBus {
    client: Client,
    config: Arc<BusConfig>,
    watched: Arc<AtomicUsize>,
    resync: watch::Receiver<u64>,
    connected: watch::Receiver<bool>,
}

impl std::fmt::Debug for NatsBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsBus")
            .field("node", &self.config.node)
            .finish_non_exhaustive()
    }
}

impl NatsBus {
    /// Connects to NATS at `url` (`nats://HOST:PORT`) as the node `config.node`. The
    /// client reconnects by itself whenever the connection is lost (at once, then backing
    /// off to [`BusConfig::reconnect_max`]), subscriptions and all.
    pub async fn connect(url: &str, config: BusConfig) -> Result<NatsBus, BusError> {
        check_name("node", &config.node, config.max_name)?;
        let (resync_tx, resync) = watch::channel(0u64);
        // Up once `connect` returns; the events say when that changes.
        let (connected_tx, connected) = watch::channel(true);
        let reconnect_max = config.reconnect_max;
        let events = Arc::new((resync_tx, connected_tx));
        let ever = Arc::new(AtomicBool::new(false));
        let options = ConnectOptions::new()
            .name(format!("mcpl node {}", config.node))
            .subscription_capacity(config.queue.max(1))
            .max_reconnects(None)
            .reconnect_delay_callback(move |attempts| {
                // The first attempt at once, then 50 ms doubling up to the maximum.
                if attempts <= 1 {
                    return Duration::ZERO;
                }
                let doublings = u32::try_from(attempts - 2).unwrap_or(u32::MAX).min(16);
                Duration::from_millis(50)
                    .saturating_mul(1 << doublings)
                    .min(reconnect_max)
            })
            .event_callback(move |event| {
                let events = events.clone();
                let ever = ever.clone();
                async move {
                    let (resync, connected) = &*events;
                    match event {
                        Event::Connected => {
                            // Reconnected: whatever was sent while the connection was
                            // down is lost, every watch rereads (before `connected` says
                            // so). The first connection is before any watch.
                            if ever.swap(true, Ordering::AcqRel) {
                                resync.send_modify(|n| *n += 1);
                            }
                            connected.send_replace(true);
                        }
                        Event::Disconnected | Event::Closed => {
                            connected.send_replace(false);
                        }
                        Event::SlowConsumer(sid) => {
                            tracing::warn!(sid, "a bus subscription's queue overflowed");
                            resync.send_modify(|n| *n += 1);
                        }
                        other => tracing::debug!(event = %other, "NATS"),
                    }
                }
            });
        let client = options.connect(url).await.map_err(|e| BusError::Connect {
            url: url.to_owned(),
            detail: e.to_string(),
        })?;
        Ok(NatsBus {
            client,
            config: Arc::new(config),
            watched: Arc::default(),
            resync,
            connected,
        })
    }

    /// This node's name.
    pub fn node(&self) -> &str {
        &self.config.node
    }

    /// The NATS client (for the tunnels, `crate::tunnel`).
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// What this bus allows.
    pub fn config(&self) -> &BusConfig {
        &self.config
    }

    /// The subject of a principal's notices.
    fn principal_subject(&self, principal: &str) -> Result<String, BusError> {
        check_name("principal", principal, self.config.max_name)?;
        Ok(format!(
            "{}.p.{}",
            self.config.prefix,
            subject_token(principal)
        ))
    }

    /// The subject of the requests forwarded to a node.
    fn node_subject(&self, node: &str) -> Result<String, BusError> {
        check_name("node", node, self.config.max_name)?;
        Ok(format!("{}.n.{}", self.config.prefix, subject_token(node)))
    }

    /// Tells every node watching `principal` that it is now at `version`. At most once:
    /// a notice lost is found by the watchers as a gap or a resync.
    pub async fn announce(&self, principal: &str, version: u64) -> Result<(), BusError> {
        let subject = self.principal_subject(principal)?;
        let payload = serde_json::to_vec(&Notice {
            principal: principal.to_owned(),
            version,
        })
        .map_err(|e| BusError::Nats(e.to_string()))?;
        if payload.len() > self.config.max_message {
            return Err(BusError::TooLarge {
                what: format!("the change notice of principal {principal:?}"),
                size: payload.len(),
                limit: self.config.max_message,
            });
        }
        self.client
            .publish(subject, payload.into())
            .await
            .map_err(|e| BusError::Nats(e.to_string()))
    }

    /// Watches `principal`'s notices, `known` the version this node has already read.
    /// Fails once [`BusConfig::max_watched`] watches are alive (dropping one frees its
    /// place).
    pub async fn watch(&self, principal: &str, known: u64) -> Result<Watch, BusError> {
        let subject = self.principal_subject(principal)?;
        let limit = self.config.max_watched;
        self.watched
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .map_err(|_| BusError::TooManyWatched { limit })?;
        let slot = Slot(self.watched.clone());
        let subscriber = self
            .client
            .subscribe(subject)
            .await
            .map_err(|e| BusError::Nats(e.to_string()))?;
        let mut resync = self.resync.clone();
        resync.mark_unchanged();
        Ok(Watch {
            principal: principal.to_owned(),
            last: known,
            subscriber,
            resync,
            max_message: self.config.max_message,
            _slot: slot,
        })
    }

    /// Sends `payload` to the node named and waits for its answer, at most `timeout`.
    /// [`BusError::NoNode`] at once when no node of that name serves,
    /// [`BusError::TimedOut`] when it did not answer in time, [`BusError::TooLarge`] for
    /// a request or an answer over [`BusConfig::max_message`].
    pub async fn forward(
        &self,
        node: &str,
        payload: Bytes,
        timeout: Duration,
    ) -> Result<Bytes, BusError> {
        let subject = self.node_subject(node)?;
        let limit = self.config.max_message;
        if payload.len() > limit {
            return Err(BusError::TooLarge {
                what: format!("the request to node {node:?}"),
                size: payload.len(),
                limit,
            });
        }
        let request = async_nats::Request::new()
            .payload(payload)
            .timeout(Some(timeout));
        let answer = self
            .client
            .send_request(subject, request)
            .await
            .map_err(|e| match e.kind() {
                async_nats::RequestErrorKind::NoResponders => BusError::NoNode {
                    node: node.to_owned(),
                },
                async_nats::RequestErrorKind::TimedOut => BusError::TimedOut {
                    node: node.to_owned(),
                    after: timeout,
                },
                async_nats::RequestErrorKind::Other => BusError::Nats(e.to_string()),
            })?;
        if answer.payload.len() > limit {
            return Err(BusError::TooLarge {
                what: format!("the answer from node {node:?}"),
                size: answer.payload.len(),
                limit,
            });
        }
        Ok(answer.payload)
    }

    /// The requests forwarded to this node from now on.
    pub async fn serve(&self) -> Result<Requests, BusError> {
        let subject = self.node_subject(&self.config.node)?;
        let subscriber = self
            .client
            .subscribe(subject)
            .await
            .map_err(|e| BusError::Nats(e.to_string()))?;
        Ok(Requests {
            subscriber,
            client: self.client.clone(),
            max_message: self.config.max_message,
        })
    }

    /// Returns once NATS has processed everything this node sent before (its
    /// subscriptions included): a message to itself, on a subject of its own, comes back
    /// only after the server went through what came before it on the connection (a
    /// client's `flush` only writes its buffer out).
    pub async fn flush(&self) -> Result<(), BusError> {
        let nats = |e: &dyn std::fmt::Display| BusError::Nats(e.to_string());
        let inbox = self.client.new_inbox();
        let mut echo = self
            .client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| nats(&e))?;
        self.client
            .publish(inbox, Bytes::new())
            .await
            .map_err(|e| nats(&e))?;
        self.client.flush().await.map_err(|e| nats(&e))?;
        echo.next()
            .await
            .ok_or_else(|| BusError::Nats("the connection closed during a flush".to_owned()))?;
        let _ = echo.unsubscribe().await;
        Ok(())
    }

    /// Whether the connection to NATS is up, as it changes: a node (or a test) awaits
    /// its reconnection with `wait_for`.
    pub fn connected(&self) -> watch::Receiver<bool> {
        self.connected.clone()
    }
}

/// A name within the bus's limit.
fn check_name(what: &'static str, name: &str, limit: usize) -> Result<(), BusError> {
    if name.len() > limit {
        return Err(BusError::NameTooLong {
            what,
            len: name.len(),
            limit,
        });
    }
    Ok(())
}

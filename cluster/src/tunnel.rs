//! Tunnels: one long-lived byte stream (a client's WebSocket connection, a Streamable HTTP
//! event stream) carried between two nodes over NATS core (issue #41 item 4,
//! `docs/cluster.md` §3).
//!
//! A node that a client reached but that does not run what the client wants (a standby)
//! [opens](Tunnels::open) a tunnel to the node that does (the owner) with one NATS request
//! on `PREFIX.o.NODE`: the tunnel's id, what it carries (`kind`: the owner picks its
//! listener by it), each side's receive window, and the first bytes (the client's request
//! head). The owner [accepts](Open::accept) it (it connects to its own listener and writes
//! those bytes) or refuses it. From then on [`Tunnel::run`] carries the bytes both ways
//! between a local stream (the client's connection on one side, the owner's own listener
//! on the other) and the peer, as NATS messages on two subjects of the tunnel's own:
//! `PREFIX.t.ID.up` (towards the node that accepted) and `PREFIX.t.ID.down` (towards the
//! one that opened), each side subscribed to its own before the other may send.
//!
//! **Frames** ([`Frame`], [`encode`], [`decode`]): data, acknowledgements, the end of one
//! direction (`Eof`, a half-close) and an abrupt end (`Close`, with why) are numbered,
//! each direction from 0. NATS core delivers at most once, in order: **a number skipped is
//! a gap, and a gap ends the tunnel** (bytes cannot be resent: a stream with a hole in it
//! is worse than a closed one; the client connects again and recovers as any client whose
//! connection dropped does). Keepalives (`Ping`, answered `Pong`) are not numbered; a ping
//! says how many numbered frames its sender had sent, so a frame lost just before a quiet
//! spell is found at the next ping, not never.
//!
//! **Ends.** A tunnel ends ([`Ended`]) when both directions have ended (each side's local
//! stream said end of file: [`Ended::Done`]); or abruptly, closing the local stream (a
//! FIN, not a hang) and telling the peer with a `Close` when the peer is not the reason:
//! the peer closed it; a gap; the peer's subject has no subscriber (NATS's "no
//! responders" to a ping: the peer died, or never knew this tunnel, or forgot it); a ping
//! not answered within [`TunnelConfig::answer_within`]; no data either way for
//! [`TunnelConfig::idle`]; a frame that breaks the rules; the caller's `stop` (the owner
//! lost its lease).
//!
//! **Bounded.** A node holds at most [`TunnelConfig::max_tunnels`] tunnels, opened and
//! accepted together ([`TunnelError::TooMany`] past it, and an owner past it refuses the
//! open: [`TunnelError::Refused`] with `busy`). Each direction has a window: at most
//! [`TunnelConfig::window`] bytes and [`TunnelConfig::window_frames`] frames sent and not
//! yet acknowledged (an acknowledgement is sent once the bytes were written to the local
//! stream), so **a slow reader holds its sender back** — the sending side stops reading
//! its local stream — rather than anything buffering without limit; a receiver checks its
//! own window and ends the tunnel when a peer sends past it. Frames are at most
//! [`BusConfig::max_message`](crate::bus::BusConfig::max_message) bytes, and the frames
//! a tunnel may have in flight fit a subscription's queue
//! ([`BusConfig::queue`](crate::bus::BusConfig::queue)): NATS would drop the rest, and a
//! drop is a gap.

use crate::bus::{BusError, NatsBus, subject_token};
use async_nats::{Client, RequestErrorKind, Subscriber};
use bytes::{BufMut as _, Bytes, BytesMut};
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::{mpsc, watch};

/// The most bytes of a frame's own head (a tag and three numbers).
pub const FRAME_HEAD: usize = 1 + 3 * 8;

/// The most bytes of a `Close` frame's reason (longer ones are cut).
const MAX_REASON: usize = 512;

/// The most bytes of an open request's head (its JSON line).
const MAX_OPEN_HEAD: usize = 1024;

/// The most bytes of a tunnel's id (ASCII letters and digits: one literal subject token).
const MAX_ID: usize = 64;

/// The most bytes of a tunnel's kind.
const MAX_KIND: usize = 32;

/// Messages of a subscription's queue kept for pings and their answers, beyond the
/// frames of the two windows.
const QUEUE_SPARE: usize = 8;

/// What tunnels allow. [`TunnelConfig::default`] gives the defaults.
#[derive(Debug, Clone)]
pub struct TunnelConfig {
    /// The most tunnels a node holds at once (opened and accepted together).
    pub max_tunnels: usize,
    /// The most bytes a side may have sent and not yet had acknowledged, per direction.
    pub window: usize,
    /// The most frames of data a side may have sent and not yet had acknowledged (cut
    /// so that both windows' frames fit a subscription's queue).
    pub window_frames: usize,
    /// The most bytes of data in one frame (cut to the bus's message limit).
    pub chunk: usize,
    /// How often each side pings the other.
    pub keepalive: Duration,
    /// How long a ping's answer, or an open's, may take.
    pub answer_within: Duration,
    /// A tunnel with no data either way for this long ends.
    pub idle: Duration,
}

impl Default for TunnelConfig {
    /// 1024 tunnels, windows of 64 KiB and 32 frames, frames of 16 KiB of data, a ping
    /// every 2 s answered within 10 s, an hour idle at most (HAProxy's `timeout tunnel`
    /// in `docs/cluster-haproxy.cfg`).
    fn default() -> TunnelConfig {
        TunnelConfig {
            max_tunnels: 1024,
            window: 64 * 1024,
            window_frames: 32,
            chunk: 16 * 1024,
            keepalive: Duration::from_secs(2),
            answer_within: Duration::from_secs(10),
            idle: Duration::from_secs(3600),
        }
    }
}

/// One message of a tunnel. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// Bytes of the stream.
    Data {
        /// The frame's number.
        seq: u64,
        /// The bytes.
        bytes: Bytes,
    },
    /// The data frames and bytes written to the local stream so far (cumulative).
    Ack {
        /// The frame's number.
        seq: u64,
        /// Data frames written.
        frames: u64,
        /// Bytes written.
        bytes: u64,
    },
    /// No more data this way (the sender's local stream ended): a half-close.
    Eof {
        /// The frame's number.
        seq: u64,
    },
    /// The sender ended the tunnel, for this reason.
    Close {
        /// The frame's number.
        seq: u64,
        /// Why, for the logs.
        reason: String,
    },
    /// Are you there? `sent`: the numbered frames sent before this one.
    Ping {
        /// How many numbered frames the sender had sent.
        sent: u64,
    },
    /// Yes (the answer to a ping).
    Pong,
}

impl Frame {
    /// The frame's number; `None` for the keepalives, which are not numbered.
    pub fn seq(&self) -> Option<u64> {
        match self {
            Frame::Data { seq, .. }
            | Frame::Ack { seq, .. }
            | Frame::Eof { seq }
            | Frame::Close { seq, .. } => Some(*seq),
            Frame::Ping { .. } | Frame::Pong => None,
        }
    }
}

/// A frame as carried: a tag byte (`D`, `A`, `E`, `C`, `P`, `Q`), its numbers as 8
/// bytes big-endian each, then its bytes (data, or a close's reason in UTF-8, cut to
/// 512 bytes).
pub fn encode(frame: &Frame) -> Bytes {
    let mut out = BytesMut::with_capacity(FRAME_HEAD);
    match frame {
        Frame::Data { seq, bytes } => {
            out.reserve(bytes.len());
            out.put_u8(b'D');
            out.put_u64(*seq);
            out.extend_from_slice(bytes);
        }
        Frame::Ack { seq, frames, bytes } => {
            out.put_u8(b'A');
            out.put_u64(*seq);
            out.put_u64(*frames);
            out.put_u64(*bytes);
        }
        Frame::Eof { seq } => {
            out.put_u8(b'E');
            out.put_u64(*seq);
        }
        Frame::Close { seq, reason } => {
            out.put_u8(b'C');
            out.put_u64(*seq);
            let mut end = reason.len().min(MAX_REASON);
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            out.extend_from_slice(&reason.as_bytes()[..end]);
        }
        Frame::Ping { sent } => {
            out.put_u8(b'P');
            out.put_u64(*sent);
        }
        Frame::Pong => out.put_u8(b'Q'),
    }
    out.freeze()
}

/// A message that is no [`Frame`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a tunnel message of {size} bytes is no frame: {why}")]
pub struct FrameError {
    /// The message's size.
    pub size: usize,
    /// What is wrong with it.
    pub why: &'static str,
}

/// The frame `message` carries ([`encode`]'s format).
pub fn decode(message: &Bytes) -> Result<Frame, FrameError> {
    let bad = |why| FrameError {
        size: message.len(),
        why,
    };
    let (&tag, rest) = message.split_first().ok_or_else(|| bad("it is empty"))?;
    let number = |at: usize| -> Result<u64, FrameError> {
        let b = rest.get(at..at + 8).ok_or_else(|| bad("it is cut short"))?;
        Ok(u64::from_be_bytes(b.try_into().unwrap_or([0; 8])))
    };
    let exact = |len: usize| {
        if rest.len() == len {
            Ok(())
        } else {
            Err(bad("its length is not its kind's"))
        }
    };
    Ok(match tag {
        b'D' => Frame::Data {
            seq: number(0)?,
            bytes: message.slice(9..),
        },
        b'A' => {
            exact(24)?;
            Frame::Ack {
                seq: number(0)?,
                frames: number(8)?,
                bytes: number(16)?,
            }
        }
        b'E' => {
            exact(8)?;
            Frame::Eof { seq: number(0)? }
        }
        b'C' => {
            let seq = number(0)?;
            if rest.len() > 8 + MAX_REASON {
                return Err(bad("its reason is over 512 bytes"));
            }
            Frame::Close {
                seq,
                reason: String::from_utf8_lossy(&rest[8..]).into_owned(),
            }
        }
        b'P' => {
            exact(8)?;
            Frame::Ping { sent: number(0)? }
        }
        b'Q' => {
            exact(0)?;
            Frame::Pong
        }
        _ => return Err(bad("its tag is unknown")),
    })
}

/// Why a tunnel could not be opened or accepted.
#[derive(Debug, thiserror::Error)]
pub enum TunnelError {
    /// This node holds [`TunnelConfig::max_tunnels`] tunnels already.
    #[error("this node holds {limit} tunnels already, its limit")]
    TooMany {
        /// The limit.
        limit: usize,
    },
    /// The node asked refused the tunnel.
    #[error("node {node:?} refused the tunnel: {reason}")]
    Refused {
        /// The node asked.
        node: String,
        /// What it said.
        reason: String,
        /// Whether it refused because it holds as many tunnels as it may.
        busy: bool,
    },
    /// The bus failed: no node of that name ([`BusError::NoNode`]), no answer in time
    /// ([`BusError::TimedOut`]), NATS itself.
    #[error(transparent)]
    Bus(#[from] BusError),
}

/// How a tunnel ended. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Ended {
    /// Both directions ended (each local stream said end of file).
    #[error("both ends finished")]
    Done,
    /// The peer closed the tunnel.
    #[error("the peer closed the tunnel: {reason}")]
    PeerClosed {
        /// What it said.
        reason: String,
    },
    /// A numbered frame was missed (NATS dropped it).
    #[error("frame {expected} was missed (frame {got} came)")]
    Gap {
        /// The number expected.
        expected: u64,
        /// The number that came (for a ping: how many the peer had sent).
        got: u64,
    },
    /// Nobody listens on the peer's subject: it died, or does not know this tunnel.
    #[error("the peer is gone (nobody listens on the tunnel's subject)")]
    PeerGone,
    /// The peer did not answer a ping in time.
    #[error("the peer did not answer a keepalive within {after:?}")]
    KeepaliveMissed {
        /// How long it had.
        after: Duration,
    },
    /// No data either way for the idle bound.
    #[error("no data either way for {after:?}")]
    Idle {
        /// The bound.
        after: Duration,
    },
    /// The peer broke the rules (past its window, a frame that is no frame).
    #[error("the peer broke the tunnel's rules: {0}")]
    Protocol(String),
    /// The caller's `stop` came.
    #[error("stopped by this node")]
    Stopped,
    /// The local stream failed.
    #[error("the local stream failed: {0}")]
    Local(String),
    /// The bus failed.
    #[error("the bus failed: {0}")]
    Bus(String),
}

/// A tunnel's traffic so far, as it changes ([`Tunnel::flow`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flow {
    /// Bytes of data sent to the peer.
    pub sent: u64,
    /// Of those, bytes the peer acknowledged.
    pub acked: u64,
    /// Bytes of data received from the peer.
    pub received: u64,
    /// Whether sending waits for the peer's acknowledgements (its window is full).
    pub held_back: bool,
}

/// The open request's head, as carried (JSON, one line).
#[derive(Debug, Serialize, Deserialize)]
struct OpenHead {
    id: String,
    kind: String,
    window: u64,
    frames: u64,
}

/// The answer to an open, as carried (JSON).
#[derive(Debug, Default, Serialize, Deserialize)]
struct OpenAnswer {
    ok: bool,
    #[serde(default)]
    window: u64,
    #[serde(default)]
    frames: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default)]
    busy: bool,
}

/// What every tunnel of a node shares.
struct Shared {
    client: Client,
    prefix: String,
    node: String,
    max_message: usize,
    config: TunnelConfig,
    live: Arc<AtomicUsize>,
    next: AtomicU64,
    /// Tunnels opened and accepted since the node started.
    opened: AtomicU64,
    accepted: AtomicU64,
}

impl Shared {
    /// A place among the node's tunnels, given back when dropped.
    fn place(&self) -> Result<Place, TunnelError> {
        let limit = self.config.max_tunnels;
        self.live
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .map_err(|_| TunnelError::TooMany { limit })?;
        Ok(Place(self.live.clone()))
    }

    /// A fresh tunnel id: 32 hex digits, unpredictable and unique.
    fn new_id(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut id = String::with_capacity(32);
        for part in 0..2u8 {
            // A fresh `RandomState` has keys of its own, seeded randomly per process.
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write(self.node.as_bytes());
            h.write_u64(n);
            h.write_u8(part);
            id.push_str(&format!("{:016x}", h.finish()));
        }
        id
    }

    /// The subject a tunnel's frames reach one of its sides on.
    fn subject(&self, id: &str, up: bool) -> String {
        let way = if up { "up" } else { "down" };
        format!("{}.t.{id}.{way}", self.prefix)
    }

    /// The subject a node takes tunnel opens on.
    fn open_subject(&self, node: &str) -> String {
        format!("{}.o.{}", self.prefix, subject_token(node))
    }
}

/// A node's place among its tunnels, given back when dropped.
struct Place(Arc<AtomicUsize>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How many tunnels a node opened and accepted since it started ([`Tunnels::counts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TunnelCounts {
    /// Tunnels it opened that the other node accepted.
    pub opened: u64,
    /// Tunnels other nodes opened to it that it accepted.
    pub accepted: u64,
}

/// A node's tunnels: it opens them to other nodes and accepts theirs. See the module docs.
#[derive(Clone)]
pub struct Tunnels {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Tunnels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tunnels")
            .field("node", &self.shared.node)
            .field("live", &self.live())
            .finish_non_exhaustive()
    }
}

impl Tunnels {
    /// The tunnels of the node `bus` connects, within `config` (the chunk cut to the
    /// bus's message limit, the windows' frames to its queue).
    pub fn new(bus: &NatsBus, mut config: TunnelConfig) -> Tunnels {
        let bus_config = bus.config();
        config.chunk = config
            .chunk
            .clamp(1, bus_config.max_message.saturating_sub(FRAME_HEAD).max(1));
        config.window = config.window.max(1);
        config.window_frames = config
            .window_frames
            .clamp(1, (bus_config.queue.saturating_sub(QUEUE_SPARE) / 2).max(1));
        Tunnels {
            shared: Arc::new(Shared {
                client: bus.client().clone(),
                prefix: bus_config.prefix.clone(),
                node: bus_config.node.clone(),
                max_message: bus_config.max_message,
                config,
                live: Arc::default(),
                next: AtomicU64::new(0),
                opened: AtomicU64::new(0),
                accepted: AtomicU64::new(0),
            }),
        }
    }

    /// The tunnels this node holds now (opened and accepted).
    pub fn live(&self) -> usize {
        self.shared.live.load(Ordering::Acquire)
    }

    /// How many tunnels this node opened (the owner accepted them) and accepted since it
    /// started: what a load balancer's health check, or a test, reads to see that
    /// connections were carried between nodes.
    pub fn counts(&self) -> TunnelCounts {
        TunnelCounts {
            opened: self.shared.opened.load(Ordering::Relaxed),
            accepted: self.shared.accepted.load(Ordering::Relaxed),
        }
    }

    /// What the tunnels allow (as cut by [`Tunnels::new`]).
    pub fn config(&self) -> &TunnelConfig {
        &self.shared.config
    }

    /// Opens a tunnel to `node`, carrying `kind`, its first bytes `first` (the node
    /// writes them to its local stream before anything else). Fails at once past this
    /// node's bound, with [`BusError::NoNode`] when nobody takes opens for `node`, with
    /// [`BusError::TimedOut`] past [`TunnelConfig::answer_within`].
    pub async fn open(&self, node: &str, kind: &str, first: Bytes) -> Result<Tunnel, TunnelError> {
        let s = &self.shared;
        let place = s.place()?;
        let id = s.new_id();
        let inbound = s
            .client
            .subscribe(s.subject(&id, false))
            .await
            .map_err(|e| BusError::Nats(e.to_string()))?;
        let head = OpenHead {
            id: id.clone(),
            kind: kind.to_owned(),
            window: s.config.window as u64,
            frames: s.config.window_frames as u64,
        };
        let mut payload = BytesMut::new();
        payload.extend_from_slice(&serde_json::to_vec(&head).unwrap_or_default());
        payload.put_u8(b'\n');
        payload.extend_from_slice(&first);
        if payload.len() > s.max_message {
            return Err(BusError::TooLarge {
                what: format!("the tunnel open to node {node:?}"),
                size: payload.len(),
                limit: s.max_message,
            }
            .into());
        }
        let after = s.config.answer_within;
        let request = async_nats::Request::new()
            .payload(payload.freeze())
            .timeout(Some(after));
        let answer = s
            .client
            .send_request(s.open_subject(node), request)
            .await
            .map_err(|e| match e.kind() {
                RequestErrorKind::NoResponders => BusError::NoNode {
                    node: node.to_owned(),
                },
                RequestErrorKind::TimedOut => BusError::TimedOut {
                    node: node.to_owned(),
                    after,
                },
                RequestErrorKind::Other => BusError::Nats(e.to_string()),
            })?;
        let answer: OpenAnswer =
            serde_json::from_slice(&answer.payload).map_err(|e| TunnelError::Refused {
                node: node.to_owned(),
                reason: format!("its answer could not be read: {e}"),
                busy: false,
            })?;
        if !answer.ok {
            return Err(TunnelError::Refused {
                node: node.to_owned(),
                reason: answer.error.unwrap_or_default(),
                busy: answer.busy,
            });
        }
        s.opened.fetch_add(1, Ordering::Relaxed);
        Ok(Tunnel::new(
            id,
            s.clone(),
            inbound,
            true,
            (answer.window, answer.frames),
            place,
        ))
    }

    /// The tunnels other nodes open to this one from now on.
    pub async fn opens(&self) -> Result<Opens, TunnelError> {
        let s = &self.shared;
        let subscriber = s
            .client
            .subscribe(s.open_subject(&s.node))
            .await
            .map_err(|e| BusError::Nats(e.to_string()))?;
        Ok(Opens {
            subscriber,
            shared: s.clone(),
        })
    }
}

/// The tunnel opens sent to this node, in order of arrival.
pub struct Opens {
    subscriber: Subscriber,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Opens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opens").finish_non_exhaustive()
    }
}

impl Opens {
    /// The next open; one that cannot be read is refused and skipped. `None` once the
    /// bus is closed.
    pub async fn next(&mut self) -> Option<Open> {
        loop {
            let message = self.subscriber.next().await?;
            let reply = message.reply.clone();
            match self.read(&message.payload) {
                Ok((head, first)) => {
                    return Some(Open {
                        head,
                        first,
                        reply,
                        shared: self.shared.clone(),
                    });
                }
                Err(why) => {
                    tracing::warn!(why, "a tunnel open that could not be read was refused");
                    answer(&self.shared.client, reply, &refusal(why, false)).await;
                }
            }
        }
    }

    /// An open request's head and first bytes.
    fn read(&self, payload: &Bytes) -> Result<(OpenHead, Bytes), &'static str> {
        if payload.len() > self.shared.max_message {
            return Err("it is over the bus's limit");
        }
        let at = payload
            .iter()
            .take(MAX_OPEN_HEAD)
            .position(|&b| b == b'\n')
            .ok_or("its head has no end")?;
        let head: OpenHead =
            serde_json::from_slice(&payload[..at]).map_err(|_| "its head is not JSON")?;
        if head.id.is_empty()
            || head.id.len() > MAX_ID
            || !head.id.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            return Err("its id is not a tunnel's");
        }
        if head.kind.len() > MAX_KIND {
            return Err("its kind is too long");
        }
        Ok((head, payload.slice(at + 1..)))
    }
}

/// An open's refusal.
fn refusal(why: &str, busy: bool) -> OpenAnswer {
    OpenAnswer {
        ok: false,
        error: Some(why.to_owned()),
        busy,
        ..OpenAnswer::default()
    }
}

/// Sends `answer` to an open's reply subject (none: nobody waits).
async fn answer(client: &Client, reply: Option<async_nats::Subject>, answer: &OpenAnswer) {
    let Some(reply) = reply else { return };
    let body = serde_json::to_vec(answer).unwrap_or_default();
    if let Err(e) = client.publish(reply, body.into()).await {
        tracing::warn!(error = %e, "a tunnel open's answer was not sent");
    }
}

/// A tunnel another node asks this one to accept.
pub struct Open {
    head: OpenHead,
    first: Bytes,
    reply: Option<async_nats::Subject>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Open {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Open")
            .field("id", &self.head.id)
            .field("kind", &self.head.kind)
            .finish_non_exhaustive()
    }
}

impl Open {
    /// What the tunnel carries (the opener's word: the accepting node picks its local
    /// stream by it).
    pub fn kind(&self) -> &str {
        &self.head.kind
    }

    /// The first bytes, to write to the local stream before anything else.
    pub fn first(&self) -> &Bytes {
        &self.first
    }

    /// The tunnel's id.
    pub fn id(&self) -> &str {
        &self.head.id
    }

    /// Accepts the tunnel: subscribes to its subject, then answers (so the opener's
    /// first frames find it). Past this node's bound it is refused instead, `busy`.
    pub async fn accept(self) -> Result<Tunnel, TunnelError> {
        let s = &self.shared;
        let place = match s.place() {
            Ok(p) => p,
            Err(e) => {
                answer(&s.client, self.reply, &refusal(&e.to_string(), true)).await;
                return Err(e);
            }
        };
        let inbound = match s.client.subscribe(s.subject(&self.head.id, true)).await {
            Ok(i) => i,
            Err(e) => {
                let why = format!("it could not subscribe: {e}");
                answer(&s.client, self.reply, &refusal(&why, false)).await;
                return Err(BusError::Nats(e.to_string()).into());
            }
        };
        let ok = OpenAnswer {
            ok: true,
            window: s.config.window as u64,
            frames: s.config.window_frames as u64,
            ..OpenAnswer::default()
        };
        answer(&s.client, self.reply, &ok).await;
        s.accepted.fetch_add(1, Ordering::Relaxed);
        Ok(Tunnel::new(
            self.head.id,
            s.clone(),
            inbound,
            false,
            (self.head.window, self.head.frames),
            place,
        ))
    }

    /// Refuses the tunnel, saying why.
    pub async fn refuse(self, why: &str) {
        answer(&self.shared.client, self.reply, &refusal(why, false)).await;
    }
}

/// One tunnel, opened or accepted: [`Tunnel::run`] carries it.
pub struct Tunnel {
    id: String,
    shared: Arc<Shared>,
    inbound: Subscriber,
    outbound: String,
    peer_window: u64,
    peer_frames: u64,
    flow: watch::Sender<Flow>,
    _place: Place,
}

impl std::fmt::Debug for Tunnel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tunnel")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// The numbered frames one side sends, in order.
struct Out {
    client: Client,
    subject: String,
    sent: tokio::sync::Mutex<u64>,
}

impl Out {
    /// Sends the frame `make` builds with the next number.
    async fn send(&self, make: impl FnOnce(u64) -> Frame) -> Result<(), Ended> {
        let mut sent = self.sent.lock().await;
        let frame = make(*sent);
        self.client
            .publish(self.subject.clone(), encode(&frame))
            .await
            .map_err(|e| Ended::Bus(e.to_string()))?;
        *sent += 1;
        Ok(())
    }

    /// How many numbered frames were sent (each handed to the client before this).
    async fn sent(&self) -> u64 {
        *self.sent.lock().await
    }
}

impl Tunnel {
    fn new(
        id: String,
        shared: Arc<Shared>,
        inbound: Subscriber,
        opened: bool,
        (window, frames): (u64, u64),
        place: Place,
    ) -> Tunnel {
        // The opener sends up, the acceptor down.
        let outbound = shared.subject(&id, opened);
        Tunnel {
            id,
            shared,
            inbound,
            outbound,
            peer_window: window.max(1),
            peer_frames: frames.max(1),
            flow: watch::channel(Flow::default()).0,
            _place: place,
        }
    }

    /// The tunnel's id (its subjects are `PREFIX.t.ID.up` and `PREFIX.t.ID.down`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tunnel's traffic as it changes.
    pub fn flow(&self) -> watch::Receiver<Flow> {
        self.flow.subscribe()
    }

    /// Carries bytes both ways between `local` and the peer until the tunnel ends (see
    /// the module docs), or `stop` comes; says how it ended. The local stream is shut
    /// down (a FIN) and dropped when it ends abruptly; the peer is sent a `Close` unless
    /// the peer is why.
    pub async fn run<S>(self, local: S, stop: impl Future<Output = ()>) -> Ended
    where
        S: AsyncRead + AsyncWrite,
    {
        let Tunnel {
            id,
            shared,
            mut inbound,
            outbound,
            peer_window,
            peer_frames,
            flow,
            _place,
        } = self;
        let config = &shared.config;
        let (mut reader, mut writer) = tokio::io::split(local);
        let out = Out {
            client: shared.client.clone(),
            subject: outbound.clone(),
            sent: tokio::sync::Mutex::new(0),
        };
        // What the peer acknowledged: (frames, bytes).
        let (acked_tx, acked_rx) = watch::channel((0u64, 0u64));
        // What this side wrote to its local stream: (frames, bytes).
        let written = (AtomicU64::new(0), AtomicU64::new(0));
        let last_data = std::sync::Mutex::new(Instant::now());
        let touch = || {
            if let Ok(mut t) = last_data.lock() {
                *t = Instant::now();
            }
        };
        // Data to write locally, in order; `None`: the peer's end of file. Bounded by
        // this side's window, which the receiver enforces.
        let (to_local, mut from_peer) = mpsc::unbounded_channel::<Option<Bytes>>();

        let uplink = async {
            let mut buf = vec![0u8; config.chunk];
            let (mut frames, mut bytes) = (0u64, 0u64);
            let mut acked = acked_rx.clone();
            loop {
                let fits = |a: &(u64, u64)| {
                    frames - a.0 < peer_frames && bytes.saturating_sub(a.1) < peer_window
                };
                if !fits(&acked.borrow()) {
                    flow.send_modify(|f| f.held_back = true);
                    if acked.wait_for(fits).await.is_err() {
                        return Err(Ended::Bus("the acknowledgements stopped".to_owned()));
                    }
                    flow.send_modify(|f| f.held_back = false);
                }
                let in_flight = bytes.saturating_sub(acked.borrow().1);
                let room = usize::try_from(peer_window - in_flight)
                    .unwrap_or(usize::MAX)
                    .min(config.chunk);
                let n = reader
                    .read(&mut buf[..room])
                    .await
                    .map_err(|e| Ended::Local(e.to_string()))?;
                if n == 0 {
                    out.send(|seq| Frame::Eof { seq }).await?;
                    return Ok::<(), Ended>(());
                }
                frames += 1;
                bytes += n as u64;
                let data = Bytes::copy_from_slice(&buf[..n]);
                out.send(|seq| Frame::Data { seq, bytes: data }).await?;
                touch();
                flow.send_modify(|f| f.sent = bytes);
            }
        };

        let downlink = async {
            while let Some(item) = from_peer.recv().await {
                let Some(data) = item else {
                    let _ = writer.shutdown().await;
                    return Ok::<(), Ended>(());
                };
                writer
                    .write_all(&data)
                    .await
                    .map_err(|e| Ended::Local(e.to_string()))?;
                writer
                    .flush()
                    .await
                    .map_err(|e| Ended::Local(e.to_string()))?;
                let frames = written.0.fetch_add(1, Ordering::AcqRel) + 1;
                let bytes =
                    written.1.fetch_add(data.len() as u64, Ordering::AcqRel) + data.len() as u64;
                out.send(|seq| Frame::Ack { seq, frames, bytes }).await?;
            }
            Ok(())
        };

        let receiver = async {
            let mut expected = 0u64;
            let (mut frames, mut bytes) = (0u64, 0u64);
            let window = config.window as u64;
            let window_frames = config.window_frames as u64;
            loop {
                let Some(message) = inbound.next().await else {
                    return Ended::Bus("the tunnel's subscription ended".to_owned());
                };
                if message.payload.len() > shared.max_message {
                    return Ended::Protocol("a frame over the bus's limit".to_owned());
                }
                let frame = match decode(&message.payload) {
                    Ok(f) => f,
                    Err(e) => return Ended::Protocol(e.to_string()),
                };
                if let Some(seq) = frame.seq() {
                    if seq != expected {
                        return Ended::Gap { expected, got: seq };
                    }
                    expected += 1;
                }
                match frame {
                    Frame::Data { bytes: data, .. } => {
                        frames += 1;
                        bytes += data.len() as u64;
                        let frames_out = frames - written.0.load(Ordering::Acquire);
                        let bytes_out = bytes.saturating_sub(written.1.load(Ordering::Acquire));
                        if frames_out > window_frames || bytes_out > window {
                            return Ended::Protocol(format!(
                                "the peer sent past this side's window ({bytes_out} bytes in {frames_out} frames unacknowledged; the window is {window} bytes, {window_frames} frames)"
                            ));
                        }
                        touch();
                        flow.send_modify(|f| f.received = bytes);
                        let _ = to_local.send(Some(data));
                    }
                    Frame::Ack {
                        frames: f,
                        bytes: b,
                        ..
                    } => {
                        acked_tx.send_modify(|a| *a = (a.0.max(f), a.1.max(b)));
                        flow.send_modify(|fl| fl.acked = fl.acked.max(b));
                    }
                    Frame::Eof { .. } => {
                        let _ = to_local.send(None);
                    }
                    Frame::Close { reason, .. } => return Ended::PeerClosed { reason },
                    Frame::Ping { sent } => {
                        if sent > expected {
                            return Ended::Gap {
                                expected,
                                got: sent,
                            };
                        }
                        if let Some(reply) = message.reply
                            && let Err(e) = shared.client.publish(reply, encode(&Frame::Pong)).await
                        {
                            return Ended::Bus(e.to_string());
                        }
                    }
                    Frame::Pong => {}
                }
            }
        };

        let pinger = async {
            let mut tick = tokio::time::interval(config.keepalive);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                let quiet = last_data.lock().map(|t| t.elapsed()).unwrap_or_default();
                if quiet >= config.idle {
                    return Ended::Idle { after: config.idle };
                }
                let sent = out.sent().await;
                let request = async_nats::Request::new()
                    .payload(encode(&Frame::Ping { sent }))
                    .timeout(Some(config.answer_within));
                match shared.client.send_request(outbound.clone(), request).await {
                    Ok(_) => {}
                    Err(e) => {
                        return match e.kind() {
                            RequestErrorKind::NoResponders => Ended::PeerGone,
                            RequestErrorKind::TimedOut => Ended::KeepaliveMissed {
                                after: config.answer_within,
                            },
                            RequestErrorKind::Other => Ended::Bus(e.to_string()),
                        };
                    }
                }
            }
        };

        let ended = tokio::select! {
            both = async { tokio::try_join!(uplink, downlink) } => match both {
                Ok(_) => Ended::Done,
                Err(e) => e,
            },
            e = receiver => e,
            e = pinger => e,
            () = stop => Ended::Stopped,
        };
        if !matches!(
            ended,
            Ended::Done | Ended::PeerClosed { .. } | Ended::PeerGone
        ) {
            let reason = ended.to_string();
            let _ = out.send(|seq| Frame::Close { seq, reason }).await;
        }
        if ended != Ended::Done {
            // A FIN to the local stream, not a hang; a reader that does not take it in
            // time is dropped all the same.
            let _ = tokio::time::timeout(config.answer_within, writer.shutdown()).await;
        }
        tracing::debug!(tunnel = %id, %ended, "a tunnel ended");
        ended
    }
}

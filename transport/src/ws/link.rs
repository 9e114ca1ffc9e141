//! One WebSocket link, either end: a reading end polled by its consumer, and a write side
//! shared by a writer task and every [`Outbound`] of the link.
//!
//! **Writing.** A message is written to the socket by whoever sends it, in its own turn,
//! when nothing waits before it: encoded, fed to the sink and flushed, all without waiting
//! (the socket almost always has room). Only what could not be written at once — the
//! socket full, the sink busy with the reader on another thread — waits in the link's
//! queue ([`DEPTH`] frames or [`depth_bytes`] bytes, whichever comes first, then
//! `Backpressure`), and the writer task, woken, finishes it
//! in order; anything sent meanwhile queues behind it. So a call's answer costs no channel,
//! no task of ours woken and no second turn (issue #18: one hop fewer on the one-call
//! path). The writer task also sends the pings and the close.
//!
//! **Reading.** The link's [`Incoming`] reads the socket in its consumer's turn: a frame is
//! taken and decoded when the consumer asks for the next message, so a message read costs
//! no channel and no task of ours woken (issue #18, the other hop). A consumer that reads
//! slowly holds the peer back through TCP, with nothing queued between. One that drops its
//! `Incoming` hands the socket to a task that reads on, discarding messages, to hear the
//! pongs and the close.
//!
//! Reader and writer share:
//! - `heard`: set by the reader on every frame (an automatic pong included), cleared by the
//!   writer at each ping; still clear at the next ping means the peer stopped answering —
//!   but only if the consumer was waiting on the socket and the socket has not woken it
//!   since (`waiting`, `signalled`). A consumer busy elsewhere, or woken and not yet back,
//!   has not read what the peer sent: the fault is ours then, and the check is suspended.
//!   The reader polls the socket with a waker of its own, which notes the wake-up
//!   (`signalled`) and passes it on to the consumer.
//! - `asked_close`: the reader asks the writer to close with a code (1009 past the hard
//!   ceiling).
//! - `reader_done`: the writer exits when the reader has; the reader's end closes the write
//!   side to senders itself, so `Outbound::send` fails at once; after sending a close frame
//!   the writer gives the peer
//!   [`CLOSE_TIMEOUT`] to answer, then tells the reader to stop (`stop`, and a wake-up of
//!   its consumer), which ends its messages; the reader's end, however it comes, sets
//!   `reader_done`.
//!
//! The writer task polls the sink through a [`Gate`]: tokio-tungstenite wakes whatever last
//! wrote on *every* readiness of the socket, reads included (its waker proxy wakes both
//! the read and the write slot, so that a read may flush a pending pong), which polled the
//! writer once more, for nothing, for every frame read. The gate passes a wake on only
//! while a write is waiting (issue #18). A write made in a sender's turn is polled with a
//! no-op waker: it either completes, or hands its frame to the writer task, whose own poll
//! then registers the waker that matters.

use crate::{
    Connection, ConnectionInfo, GiveUp, Inbound, Incoming, Outbound, Reader, Refused, Router,
    StreamId,
};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::task::AtomicWaker;
use futures_util::{Sink, StreamExt};
use mcpl_protocol::Message;
use mcpl_protocol::jsonrpc::DecodeError;
use std::collections::VecDeque;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Notify, mpsc};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::Frame as RawFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data as OpData, OpCode};
use tokio_tungstenite::tungstenite::{Error as WsError, Message as Frame};
use tokio_util::sync::CancellationToken;

/// The depth of the queue of frames waiting for the writer task.
pub const DEPTH: usize = 1024;

/// The most bytes of encoded frames a link's queue holds for a peer that is not reading,
/// for a link whose message limit is `limit`: twice the limit, and at least 1 MiB. A frame
/// is always taken into an empty queue, so one message of any size can be written. Counting
/// frames alone let a peer that never reads make the server hold 1,024 answers echoing
/// 1 MiB ids each (issue #37, item 1).
pub fn depth_bytes(limit: usize) -> usize {
    limit.saturating_mul(2).max(1 << 20)
}

/// How long the writer waits for the peer to answer a close frame before dropping the link.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The ceiling tungstenite enforces, as a multiple of our limit. Tungstenite fails the whole
/// connection on a message over its own limit, so ours is checked here, on a complete message,
/// where a refusal leaves the link usable; tungstenite's is only the memory guard behind it.
pub const HARD_CEILING_FACTOR: usize = 4;

/// Shared between the reader and the writer (module docs).
struct Shared {
    /// A frame was read since the writer's last ping.
    heard: AtomicBool,
    /// The reader's last poll of the socket found nothing: its consumer waits on it.
    waiting: AtomicBool,
    /// The socket woke the reader since its last poll.
    signalled: AtomicBool,
    /// The writer asks the reader to end.
    stop: AtomicBool,
    /// The reader's consumer, woken through [`Shared`]'s own waker.
    consumer: AtomicWaker,
    reader_done: CancellationToken,
    /// What the connection holds of its source address's quota, released with it.
    _slot: Option<crate::sources::SourceSlot>,
}

impl Shared {
    /// The writer asks the reader to end, at its consumer's next poll.
    fn stop_reader(&self) {
        self.stop.store(true, Ordering::Release);
        self.consumer.wake();
    }

    /// The ping check: something was read since the last one, or the reader's consumer
    /// has not come back for what the socket has (module docs).
    fn answered(&self) -> bool {
        self.heard.swap(false, Ordering::Relaxed)
            || !self.waiting.load(Ordering::Relaxed)
            || self.signalled.load(Ordering::Relaxed)
    }
}

impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.signalled.store(true, Ordering::Relaxed);
        self.consumer.wake();
    }
}

/// Starts the writer task for an open WebSocket and returns its [`Connection`]. `ping` is
/// the keepalive interval (servers); `None` sends no pings. `local`: the task goes on the
/// current `LocalSet` ([`crate::ServerOptions::local_tasks`]).
pub(crate) fn run<S>(
    ws: WebSocketStream<S>,
    info: ConnectionInfo,
    limit: usize,
    ping: Option<Duration>,
    slot: Option<crate::sources::SourceSlot>,
    local: bool,
) -> Connection
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // The channel carries nothing: it tells the writer when every `Outbound` is gone, and
    // them when the writer is (`Outbound::is_closed`).
    let (out_tx, out_rx) = mpsc::channel(1);
    let shared = Arc::new(Shared {
        heard: AtomicBool::new(true),
        waiting: AtomicBool::new(false),
        signalled: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        consumer: AtomicWaker::new(),
        reader_done: CancellationToken::new(),
        _slot: slot,
    });
    let (sink, stream) = ws.split();
    let out = Arc::new(WriteSide {
        state: Mutex::new(Out {
            sink: Some(sink),
            queue: VecDeque::new(),
            sent: 0,
            unflushed: false,
            closed: false,
            refused: false,
            failed: None,
            queued_bytes: 0,
            max_bytes: depth_bytes(limit),
            giving_up: None,
            asked_close: None,
        }),
        wanted: Notify::new(),
        room: Notify::new(),
    });
    let reader = WsReader {
        stream: Some(stream),
        out: out.clone(),
        waker: Waker::from(shared.clone()),
        shared: shared.clone(),
        limit,
        draining: false,
    };
    crate::spawn_task(
        local,
        write(out.clone(), out_rx, shared, ping, info.peer.clone()),
    );
    Connection {
        info,
        outbound: Outbound::with_router(out_tx, out),
        inbound: Incoming::direct(Box::new(reader)),
    }
}

/// The write side of a link, shared by its writer task and its senders (module docs).
struct WriteSide<S> {
    state: Mutex<Out<S>>,
    /// Wakes the writer task: a frame waits for it.
    wanted: Notify,
    /// Wakes senders waiting for room (`Outbound::send`), and on close.
    room: Notify,
}

/// What the write side's lock guards.
struct Out<S> {
    /// Taken when the writer task ends, so the socket closes with it even while senders
    /// still hold the write side.
    sink: Option<SplitSink<WebSocketStream<S>, Frame>>,
    /// Frames not yet given to the sink, oldest first.
    queue: VecDeque<Frame>,
    /// The bytes of the first frame's text already given to the sink as fragments.
    sent: usize,
    /// A frame was given to the sink and not yet flushed.
    unflushed: bool,
    /// The writer has stopped taking messages.
    closed: bool,
    /// A sender was refused for a full queue since the writer last made room.
    refused: bool,
    /// A write made in a sender's turn failed: the writer task's next write returns it and
    /// closes the link, as it would had it made the write itself.
    failed: Option<WsError>,
    /// The bytes of the frames in `queue`.
    queued_bytes: usize,
    /// At most this many bytes wait in `queue` ([`depth_bytes`]).
    max_bytes: usize,
    /// A sender gave the link up ([`Outbound::give_up`]): the close the writer sends.
    giving_up: Option<CloseFrame>,
    /// The reader asks the writer to close with this (1009 past the hard ceiling, 1007
    /// for text that is not UTF-8). A field rather than a channel: a channel's block is
    /// ~0.5 KiB a link (issue #42).
    asked_close: Option<CloseFrame>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Out<S> {
    /// Gives the queued frames to the sink in order and flushes them.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), WsError>> {
        if let Some(e) = self.failed.take() {
            return Poll::Ready(Err(e));
        }
        let Some(sink) = self.sink.as_mut() else {
            return Poll::Ready(Err(WsError::AlreadyClosed));
        };
        while let Some(front) = self.queue.front() {
            ready!(Pin::new(&mut *sink).poll_ready(cx))?;
            // A long message goes out a fragment at a time, its entry kept until the last.
            let frame = match fragment(front, self.sent) {
                Some((piece, sent)) if sent < front.len() => {
                    self.sent = sent;
                    piece
                }
                Some((piece, _)) => {
                    self.sent = 0;
                    take_front(&mut self.queue, &mut self.queued_bytes);
                    piece
                }
                None => match take_front(&mut self.queue, &mut self.queued_bytes) {
                    Some(frame) => frame,
                    None => break,
                },
            };
            Pin::new(&mut *sink).start_send(frame)?;
            self.unflushed = true;
        }
        if self.unflushed {
            ready!(Pin::new(sink).poll_flush(cx))?;
            self.unflushed = false;
        }
        Poll::Ready(Ok(()))
    }

    /// Nothing is queued or half-written: a new frame may go straight to the socket.
    fn idle(&self) -> bool {
        self.queue.is_empty() && !self.unflushed
    }
}

impl<S> WriteSide<S> {
    fn lock(&self) -> MutexGuard<'_, Out<S>> {
        // A panic while the lock was held left the sink as tungstenite left it; writing on
        // fails cleanly if that state is broken.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<S> Router for WriteSide<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    fn route(&self, message: Message) -> Result<(), Refused> {
        let mut out = self.lock();
        if out.closed || out.failed.is_some() {
            return Err(Refused::Closed);
        }
        if out.queue.len() >= DEPTH {
            out.refused = true;
            return Err(Refused::Full(message));
        }
        let frame = Frame::text(message.encode());
        if !out.queue.is_empty() && out.queued_bytes + frame.len() > out.max_bytes {
            out.refused = true;
            return Err(Refused::Full(message));
        }
        let idle = out.idle();
        out.queued_bytes += frame.len();
        out.queue.push_back(frame);
        if idle {
            // Written in this turn if the socket takes it (module docs); a failure is the
            // writer task's to handle, as it would have been had it written the frame.
            match out.poll_write(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(Ok(())) => return Ok(()),
                Poll::Ready(Err(e)) => out.failed = Some(e),
                Poll::Pending => {}
            }
        }
        drop(out);
        self.wanted.notify_one();
        Ok(())
    }

    fn room(&self) -> Option<&Notify> {
        Some(&self.room)
    }

    fn give_up(&self, why: GiveUp) {
        let mut out = self.lock();
        if out.closed {
            return;
        }
        // The peer will never read what waits: the memory goes now, and the close says why
        // (RFC 6455 §7.4.1: 1008, the peer broke this endpoint's policy).
        out.closed = true;
        out.queue.clear();
        out.sent = 0;
        out.queued_bytes = 0;
        out.giving_up = Some(match why {
            GiveUp::Unread => close_frame(
                CloseCode::Policy,
                "too many messages left unread: the client must read its answers",
            ),
        });
        drop(out);
        self.room.notify_waiters();
        self.wanted.notify_one();
    }
}

/// The tungstenite configuration of both ends of a link whose message limit is `limit`
/// (also what `sim-perf`'s bare echo uses, so that its floor reads as ours do).
pub fn config(limit: usize) -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    let ceiling = Some(limit.saturating_mul(HARD_CEILING_FACTOR));
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(ceiling)
        .max_frame_size(ceiling)
        // tungstenite's default (128 KiB) is zero-filled before each read and stays
        // allocated for the connection's life: most of an idle session's memory.
        .read_buffer_size(READ_BUFFER)
        // Frames are written out once this much waits, so that, with messages sent in
        // fragments of at most `FRAGMENT` bytes, the write buffer — which keeps the room
        // of the most it ever held — stays near that (issue #42).
        .write_buffer_size(FRAGMENT)
}

/// The longest text a frame of ours carries: a longer message goes in fragments (RFC 6455
/// §5.4), so that tungstenite's write buffer, which never gives back the room its largest
/// write took, keeps about this much rather than the largest message's (~5.4 KiB for a
/// `tools/list` answer). **\[project\]** 1 KiB: an idle session holds ~4 KiB less. On the
/// server's links the fragments still reach the socket in one write, gathered until the
/// flush (`gather.rs`); a client's long message costs a write per KiB.
pub const FRAGMENT: usize = 1024;

/// The next fragment of `frame` from byte `sent` of its text, and where the following one
/// starts; `None` when the frame goes whole (not text, or no longer than [`FRAGMENT`]).
/// Fragments end on character boundaries, so that each is UTF-8 on its own.
fn fragment(frame: &Frame, sent: usize) -> Option<(Frame, usize)> {
    let Frame::Text(text) = frame else {
        return None;
    };
    let len = text.len();
    if len <= FRAGMENT {
        return None;
    }
    let mut end = (sent + FRAGMENT).min(len);
    while !text.as_str().is_char_boundary(end) {
        end -= 1;
    }
    let opcode = if sent == 0 {
        OpCode::Data(OpData::Text)
    } else {
        OpCode::Data(OpData::Continue)
    };
    let data = bytes::Bytes::from(text.clone()).slice(sent..end);
    Some((
        Frame::Frame(RawFrame::message(data, opcode, end == len)),
        end,
    ))
}

/// The read buffer of one WebSocket connection; larger frames grow it as they come.
/// **[project]** 2 KiB: a dozen calls of a pipelining client in one read, and an idle
/// session holds 6 KiB less than with 8 KiB (issue #42).
const READ_BUFFER: usize = 2 * 1024;

/// Takes the first frame off `queue`, whose bytes `queued` counts.
fn take_front(queue: &mut VecDeque<Frame>, queued: &mut usize) -> Option<Frame> {
    let frame = queue.pop_front()?;
    *queued = queued.saturating_sub(frame.len());
    Some(frame)
}

fn close_frame(code: CloseCode, reason: &str) -> CloseFrame {
    CloseFrame {
        code,
        reason: reason.into(),
    }
}

/// The reading end, polled in its consumer's turn (module docs).
struct WsReader<S: AsyncRead + AsyncWrite + Unpin + Send + 'static> {
    /// `None` once the link has ended.
    stream: Option<SplitStream<WebSocketStream<S>>>,
    /// The link's write side, closed to senders when reading ends.
    out: Arc<WriteSide<S>>,
    /// [`Shared`]'s waker, given to the socket.
    waker: Waker,
    shared: Arc<Shared>,
    limit: usize,
    /// This is the task reading on for a consumer that dropped its end: it does not hand
    /// itself on again.
    draining: bool,
}

impl<S> WsReader<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    /// The link has ended: the socket's read half goes, and the writer learns it.
    fn end(&mut self) -> Poll<Option<Inbound>> {
        self.stream = None;
        self.finish();
        Poll::Ready(None)
    }

    /// Asks the writer to close the link with `frame` (module docs: `asked_close`), before the
    /// reader ends.
    fn ask_close(&self, frame: CloseFrame) {
        self.out.lock().asked_close.get_or_insert(frame);
        self.out.wanted.notify_one();
    }

    /// Reading is over: senders are refused at once, before the writer task, which ends
    /// with it (`reader_done`), has run — as it would have refused them (module docs).
    fn finish(&self) {
        self.out.lock().closed = true;
        self.out.room.notify_waiters();
        self.shared.reader_done.cancel();
    }
}

impl<S> Reader for WsReader<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Option<Inbound>> {
        let shared = &self.shared;
        let Some(stream) = self.stream.as_mut() else {
            return Poll::Ready(None);
        };
        shared.consumer.register(cx.waker());
        if shared.stop.load(Ordering::Acquire) {
            return self.end();
        }
        shared.signalled.store(false, Ordering::Relaxed);
        let id = StreamId(0);
        let limit = self.limit;
        loop {
            let frame = match stream.poll_next_unpin(&mut Context::from_waker(&self.waker)) {
                Poll::Pending => {
                    shared.waiting.store(true, Ordering::Relaxed);
                    return Poll::Pending;
                }
                Poll::Ready(frame) => frame,
            };
            shared.waiting.store(false, Ordering::Relaxed);
            let item = match frame {
                None => return self.end(),
                Some(Ok(frame)) => {
                    shared.heard.store(true, Ordering::Relaxed);
                    match frame {
                        Frame::Text(text) if text.len() > limit => Inbound::TooLarge {
                            stream: id,
                            size: text.len(),
                            limit,
                        },
                        Frame::Text(text) => match Message::decode_str(text.as_str()) {
                            Ok(message) => Inbound::Message {
                                stream: id,
                                message,
                            },
                            Err(error) => Inbound::Malformed { stream: id, error },
                        },
                        // MCP messages are UTF-8 JSON text; a binary frame is refused like
                        // any other unreadable message and the link goes on (module docs).
                        Frame::Binary(bytes) => Inbound::Malformed {
                            stream: id,
                            error: DecodeError::Parse(format!(
                                "a binary frame ({} bytes); JSON-RPC messages travel in text frames",
                                bytes.len()
                            )),
                        },
                        // Pongs are sent by tungstenite; a close is answered by it too, and
                        // the stream then ends.
                        Frame::Ping(_) | Frame::Pong(_) | Frame::Close(_) | Frame::Frame(_) => {
                            continue;
                        }
                    }
                }
                Some(Err(WsError::Capacity(e))) => {
                    tracing::debug!(error = %e, "websocket message beyond the hard ceiling; closing");
                    self.ask_close(close_frame(CloseCode::Size, "message too big"));
                    return self.end();
                }
                // RFC 6455 §8.1: a text frame that is not UTF-8 fails the connection with
                // 1007, said to the peer rather than dropping TCP under it.
                Some(Err(WsError::Utf8)) => {
                    tracing::debug!("websocket text frame not UTF-8; closing with 1007");
                    self.ask_close(close_frame(
                        CloseCode::Invalid,
                        "a text frame must be UTF-8",
                    ));
                    return self.end();
                }
                Some(Err(e)) => {
                    tracing::debug!(error = %e, "websocket read failed; closing inbound");
                    return self.end();
                }
            };
            return Poll::Ready(Some(item));
        }
    }
}

impl<S> Drop for WsReader<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    /// A consumer that drops its end still gets the rest of the link: a task reads on,
    /// discarding messages, to hear the pongs and the close (module docs). Outside a
    /// runtime, or for that task itself, the link's reading ends here.
    fn drop(&mut self) {
        let Some(stream) = self.stream.take() else {
            return;
        };
        let runtime = tokio::runtime::Handle::try_current();
        let (Ok(runtime), false) = (runtime, self.draining) else {
            self.finish();
            return;
        };
        let mut rest = WsReader {
            stream: Some(stream),
            out: self.out.clone(),
            waker: self.waker.clone(),
            shared: self.shared.clone(),
            limit: self.limit,
            draining: true,
        };
        drop(runtime.spawn(async move {
            while std::future::poll_fn(|cx| rest.poll_read(cx))
                .await
                .is_some()
            {}
        }));
    }
}

async fn write<S>(
    out: Arc<WriteSide<S>>,
    mut senders: mpsc::Receiver<crate::Nothing>,
    shared: Arc<Shared>,
    ping: Option<Duration>,
    peer: String,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut ticker =
        ping.map(|every| tokio::time::interval_at(tokio::time::Instant::now() + every, every));
    let gate = Gate::new();
    // Made once: the token is waited on across every turn of the loop.
    let reader_done = shared.reader_done.clone();
    let reader_gone = reader_done.cancelled();
    tokio::pin!(reader_gone);
    // A peer that stops reading stalls a write; with pings on, a write stuck for two
    // intervals is the same silence the ping check catches.
    let stuck = ping.map(|every| every * 2);
    let closing = loop {
        let asked = {
            let mut state = out.lock();
            state.giving_up.take().or_else(|| state.asked_close.take())
        };
        if let Some(frame) = asked {
            break Some(frame);
        }
        let tick = async {
            match ticker.as_mut() {
                Some(t) => {
                    t.tick().await;
                }
                None => std::future::pending().await,
            }
        };
        // Biased: the reader's ending is seen first (with the close it asked for, if any:
        // `asked_close`), and a rare tick is never starved by a busy write side.
        let sent = tokio::select! {
            biased;
            () = &mut reader_gone => break out.lock().asked_close.take(),
            () = tick => {
                if !shared.answered() {
                    tracing::info!(%peer, "websocket peer stopped answering pings; closing");
                    let bye = Frame::Close(Some(close_frame(CloseCode::Policy, "ping timeout")));
                    let _ = flush(&out, &gate, Some(bye), Some(CLOSE_TIMEOUT)).await;
                    shared.stop_reader();
                    break None;
                }
                flush(&out, &gate, Some(Frame::Ping(Default::default())), stuck).await
            }
            () = out.wanted.notified() => flush(&out, &gate, None, stuck).await,
            // Nothing travels on this channel (see `run`): it ends when every sender is gone.
            _ = senders.recv() => break Some(close_frame(CloseCode::Normal, "")),
        };
        if let Err(e) = sent {
            tracing::debug!(%peer, error = %e, "websocket write failed; closing");
            shared.stop_reader();
            break None;
        }
    };
    // Senders see the link closed at once; what they queued before is still written below.
    drop(senders);
    out.lock().closed = true;
    out.room.notify_waiters();
    if let Some(frame) = closing {
        let answered = async {
            let _ = flush(&out, &gate, Some(Frame::Close(Some(frame))), None).await;
            shared.reader_done.cancelled().await;
        };
        if tokio::time::timeout(CLOSE_TIMEOUT, answered).await.is_err() {
            tracing::debug!(%peer, "websocket peer did not answer the close; dropping the link");
        }
    }
    out.lock().sink = None;
    shared.stop_reader();
}

/// The writer task's write: queues `extra` (a ping, a close) behind what senders queued and
/// writes it all, giving up after `limit` if the write does not complete. The timer is
/// armed only for a write that did not complete at once (most do: the socket has room).
async fn flush<S>(
    out: &WriteSide<S>,
    gate: &Arc<Gate>,
    extra: Option<Frame>,
    limit: Option<Duration>,
) -> Result<(), WsError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    if let Some(frame) = extra {
        let mut state = out.lock();
        state.queued_bytes += frame.len();
        state.queue.push_back(frame);
    }
    let mut write = gate.guard(std::future::poll_fn(|cx| {
        let mut state = out.lock();
        let written = state.poll_write(cx);
        // Senders refused for a full queue are told as soon as it has room.
        let room =
            state.refused && state.queue.len() < DEPTH && state.queued_bytes < state.max_bytes;
        if room {
            state.refused = false;
        }
        drop(state);
        if room {
            out.room.notify_waiters();
        }
        written
    }));
    let first = std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut write).poll(cx))).await;
    match (first, limit) {
        (Poll::Ready(result), _) => result,
        (Poll::Pending, Some(limit)) => match tokio::time::timeout(limit, write).await {
            Ok(result) => result,
            Err(_) => Err(WsError::Io(std::io::ErrorKind::TimedOut.into())),
        },
        (Poll::Pending, None) => write.await,
    }
}

/// A waker that passes a wake on to the writer's task only while it is armed: armed before
/// each poll of a write, disarmed when the write completes (module docs). A wake between
/// arming and the poll's end is passed on, so none a pending write needs is lost; one that
/// comes after a completed write is dropped, as nothing waits for it.
struct Gate {
    armed: AtomicBool,
    task: futures_util::task::AtomicWaker,
}

impl Gate {
    fn new() -> Arc<Gate> {
        Arc::new(Gate {
            armed: AtomicBool::new(false),
            task: futures_util::task::AtomicWaker::new(),
        })
    }

    /// `write`, polled through this gate.
    fn guard<F: std::future::Future + Unpin>(self: &Arc<Self>, write: F) -> Gated<F> {
        Gated {
            waker: Waker::from(self.clone()),
            gate: self.clone(),
            write,
        }
    }
}

impl Wake for Gate {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.armed.swap(false, Ordering::AcqRel) {
            self.task.wake();
        }
    }
}

/// A write polled with its [`Gate`]'s waker.
struct Gated<F> {
    gate: Arc<Gate>,
    waker: Waker,
    write: F,
}

impl<F: std::future::Future + Unpin> std::future::Future for Gated<F> {
    type Output = F::Output;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        this.gate.task.register(cx.waker());
        this.gate.armed.store(true, Ordering::Release);
        let polled =
            std::pin::Pin::new(&mut this.write).poll(&mut Context::from_waker(&this.waker));
        if polled.is_ready() {
            this.gate.armed.store(false, Ordering::Release);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TransportError, TransportKind};
    use std::sync::atomic::AtomicUsize;
    use tokio_tungstenite::tungstenite::protocol::Role;

    /// A socket that never has anything to read and fails every write.
    struct WriteFails;

    impl AsyncRead for WriteFails {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &mut tokio::io::ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            Poll::Pending
        }
    }

    impl AsyncWrite for WriteFails {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// A write that fails in the sender's turn closes the link, as one the writer task made
    /// would: the reader, which hears nothing, does not keep it open.
    #[tokio::test]
    async fn a_write_failing_in_the_senders_turn_closes_the_link() {
        let ws = WebSocketStream::from_raw_socket(WriteFails, Role::Server, None).await;
        let info = ConnectionInfo {
            kind: TransportKind::WebSocket,
            ordered: true,
            principal: None,
            peer: "a socket whose writes fail".into(),
        };
        let conn = run(ws, info, 1024, None, None, false);
        let note = || {
            Message::Notification(mcpl_protocol::jsonrpc::Notification {
                method: "n".into(),
                params: None,
            })
        };
        assert!(conn.outbound.try_send(note()).is_ok(), "taken, then failed");
        assert!(
            matches!(conn.outbound.try_send(note()), Err(TransportError::Closed)),
            "nothing more is taken after a failed write"
        );
        // The writer task ends: the link is closed, not only refusing.
        let ended = async {
            while !conn.outbound.is_closed() {
                tokio::task::yield_now().await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), ended)
            .await
            .expect("the writer ends after a failed write");
    }

    fn info(peer: &str) -> ConnectionInfo {
        ConnectionInfo {
            kind: TransportKind::WebSocket,
            ordered: true,
            principal: None,
            peer: peer.into(),
        }
    }

    /// A notification whose text is about `bytes` long, with characters of two and three
    /// bytes throughout, so that a fragment's end often falls inside one.
    fn long_note(bytes: usize) -> Message {
        let text: String = "aé€".repeat(bytes / 6);
        Message::Notification(mcpl_protocol::jsonrpc::Notification {
            method: "n".into(),
            params: Some(
                serde_json::value::to_raw_value(&serde_json::json!({ "text": text }))
                    .expect("JSON"),
            ),
        })
    }

    /// Reads one frame a server wrote (unmasked): its FIN bit, opcode and payload.
    async fn raw_frame(peer: &mut tokio::io::DuplexStream) -> (bool, u8, Vec<u8>) {
        use tokio::io::AsyncReadExt as _;
        let mut head = [0u8; 2];
        peer.read_exact(&mut head).await.expect("a frame's header");
        assert_eq!(head[1] & 0x80, 0, "a server's frames are not masked");
        let len = match head[1] & 0x7f {
            126 => u64::from(peer.read_u16().await.expect("the length")),
            127 => peer.read_u64().await.expect("the length"),
            n => u64::from(n),
        };
        let mut payload = vec![0u8; usize::try_from(len).expect("a length that fits")];
        peer.read_exact(&mut payload).await.expect("the payload");
        (head[0] & 0x80 != 0, head[0] & 0x0f, payload)
    }

    /// A message longer than [`FRAGMENT`] goes out in fragments of at most that much, each
    /// UTF-8 on its own, which tungstenite's write buffer — it keeps the room of the most
    /// it ever held — is then never asked to hold more than (issue #42); a short message
    /// after it goes whole.
    #[tokio::test]
    async fn a_long_message_goes_in_fragments_no_longer_than_fragment() {
        let (ours, mut peer) = tokio::io::duplex(1 << 20);
        let ws = WebSocketStream::from_raw_socket(ours, Role::Server, Some(config(1 << 20))).await;
        let conn = run(ws, info("a raw peer"), 1 << 20, None, None, false);
        let long = long_note(5 * FRAGMENT + 300);
        let note = Message::Notification(mcpl_protocol::jsonrpc::Notification {
            method: "after".into(),
            params: None,
        });
        conn.outbound.try_send(long.clone()).expect("taken");
        conn.outbound.try_send(note.clone()).expect("taken");
        let read = async {
            let mut whole = Vec::new();
            let mut fragments = 0;
            loop {
                let (fin, opcode, payload) = raw_frame(&mut peer).await;
                assert_eq!(
                    opcode,
                    if fragments == 0 { 1 } else { 0 },
                    "text, then continuations"
                );
                assert!(
                    payload.len() <= FRAGMENT,
                    "a fragment of {} bytes",
                    payload.len()
                );
                assert!(
                    std::str::from_utf8(&payload).is_ok(),
                    "each fragment is UTF-8"
                );
                whole.extend_from_slice(&payload);
                fragments += 1;
                if fin {
                    break;
                }
            }
            assert!(fragments > 5, "{fragments} fragments");
            assert_eq!(String::from_utf8(whole).expect("UTF-8"), long.encode());
            let (fin, opcode, payload) = raw_frame(&mut peer).await;
            assert!(fin && opcode == 1, "the next message goes whole");
            assert_eq!(payload, note.encode().into_bytes());
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("the frames come");
    }

    /// A long message sent in fragments arrives whole at a link's other end.
    #[tokio::test]
    async fn a_long_message_arrives_whole() {
        let (a, b) = tokio::io::duplex(1 << 16);
        let server = WebSocketStream::from_raw_socket(a, Role::Server, Some(config(1 << 20))).await;
        let client = WebSocketStream::from_raw_socket(b, Role::Client, Some(config(1 << 20))).await;
        let server = run(server, info("client"), 1 << 20, None, None, false);
        let mut client = run(client, info("server"), 1 << 20, None, None, false);
        let long = long_note(40 * FRAGMENT + 7);
        server.outbound.send(long.clone()).await.expect("sent");
        let got = tokio::time::timeout(Duration::from_secs(10), client.inbound.recv())
            .await
            .expect("the message comes");
        match got {
            Some(Inbound::Message { message, .. }) => assert_eq!(message, long),
            other => panic!("not the message: {other:?}"),
        }
    }

    /// Counts the wakes it is given.
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A write that is pending until `ready` is set, keeping the waker it was polled with.
    struct Pending {
        ready: Arc<AtomicBool>,
        seen: Arc<std::sync::Mutex<Option<Waker>>>,
    }

    impl std::future::Future for Pending {
        type Output = ();
        fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            *self.seen.lock().unwrap() = Some(cx.waker().clone());
            if self.ready.load(Ordering::Relaxed) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }
    }

    /// A wake through the sink's waker reaches the task while its write waits, and not
    /// after the write completed (a read readiness then wakes no writer).
    #[test]
    fn the_gate_passes_wakes_only_while_a_write_waits() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let task = Waker::from(count.clone());
        let mut cx = Context::from_waker(&task);
        let gate = Gate::new();
        let ready = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(std::sync::Mutex::new(None));
        let mut write = gate.guard(Pending {
            ready: ready.clone(),
            seen: seen.clone(),
        });
        let mut write = std::pin::Pin::new(&mut write);
        assert!(write.as_mut().poll(&mut cx).is_pending());
        let sink_waker = seen.lock().unwrap().clone().expect("polled");
        sink_waker.wake_by_ref();
        assert_eq!(
            count.0.load(Ordering::Relaxed),
            1,
            "a waiting write is woken"
        );
        sink_waker.wake_by_ref();
        assert_eq!(count.0.load(Ordering::Relaxed), 1, "once per poll");
        ready.store(true, Ordering::Relaxed);
        assert!(write.as_mut().poll(&mut cx).is_ready());
        sink_waker.wake_by_ref();
        assert_eq!(
            count.0.load(Ordering::Relaxed),
            1,
            "a finished write is not woken"
        );
    }
}

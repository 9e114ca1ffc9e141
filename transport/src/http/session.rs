//! A server-side Streamable HTTP session: where its inbound messages go, and where each
//! message the session writes goes (the routing rules are in the module docs of `http`).
//!
//! State lives behind a `std` mutex never held across an await: every route is a
//! `try_send` into a bounded channel read by an HTTP response body.

use crate::sources::SourceSlot;
use crate::{Inbound, LogLimiter, Principal, StreamId};
use mcpl_protocol::{Id, Message};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A table looked up on every request: ahash, keyed at random per process, so a peer,
/// which chooses request ids and session ids to present, cannot make keys collide; on
/// short keys it costs a fraction of std's SipHash (issue #42).
type Table<K, V> = HashMap<K, V, ahash::RandomState>;

/// The live sessions of one listener, by id, and the warnings they share.
pub(super) struct Registry {
    sessions: Mutex<Table<String, Arc<Session>>>,
    /// Warnings about sessions' queues, at most a few per interval for all of them.
    pub(super) warnings: Mutex<LogLimiter>,
}

impl Registry {
    pub(super) fn new() -> Self {
        Registry {
            sessions: Mutex::default(),
            warnings: Mutex::new(LogLimiter::per_peer()),
        }
    }

    pub(super) fn insert(&self, session: Arc<Session>) {
        lock(&self.sessions).insert(session.id.clone(), session);
    }

    pub(super) fn get(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.sessions).get(id).cloned()
    }

    /// How many sessions are live.
    pub(super) fn len(&self) -> usize {
        lock(&self.sessions).len()
    }

    /// The live sessions of `principal`.
    pub(super) fn of(&self, principal: &Principal) -> Vec<Arc<Session>> {
        lock(&self.sessions)
            .values()
            .filter(|s| s.principal == *principal)
            .cloned()
            .collect()
    }

    /// The anonymous sessions opened from `source`'s network as it is counted (its /64
    /// for IPv6, `crate::sources::network`).
    pub(super) fn anonymous_from(&self, source: IpAddr) -> Vec<Arc<Session>> {
        let network = crate::sources::network(source);
        lock(&self.sessions)
            .values()
            .filter(|s| s.source.map(crate::sources::network) == Some(network))
            .cloned()
            .collect()
    }

    /// The least recently active anonymous session, if any.
    pub(super) fn oldest_anonymous(&self) -> Option<Arc<Session>> {
        lock(&self.sessions)
            .values()
            .filter(|s| s.source.is_some())
            .min_by_key(|s| s.last_active())
            .cloned()
    }

    /// Removes and ends the session; later requests with its id get 404.
    pub(super) fn end(&self, id: &str) {
        let removed = {
            let mut sessions = lock(&self.sessions);
            let removed = sessions.remove(id);
            // A table that grew for a burst of sessions gives the memory back once most
            // have gone (issue #13: an expired session's memory is returned).
            if sessions.capacity() > 64 && sessions.len() * 4 < sessions.capacity() {
                let keep = sessions.len() * 2;
                sessions.shrink_to(keep);
            }
            removed
        };
        if let Some(session) = removed {
            session.end();
        }
    }

    /// Ends every session idle for `idle` at `now` (no request, no stream open); returns
    /// how many.
    pub(super) fn reap(&self, now: Instant, idle: Duration) -> usize {
        let idle: Vec<String> = lock(&self.sessions)
            .values()
            .filter(|s| s.is_idle(now, idle))
            .map(|s| s.id.clone())
            .collect();
        for id in &idle {
            self.end(id);
        }
        idle.len()
    }
}

/// Ends the sessions of `registry` that stay idle for `idle`, looking every quarter of
/// that (between 50 ms and a minute), until the registry is gone.
pub(super) async fn reap(registry: Weak<Registry>, idle: Duration) {
    let every = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(60));
    loop {
        tokio::time::sleep(every).await;
        let Some(registry) = registry.upgrade() else {
            return;
        };
        let ended = registry.reap(Instant::now(), idle);
        if ended > 0 {
            tracing::debug!(ended, "Streamable HTTP sessions idle too long ended");
        }
    }
}

/// A fresh session id: 128 bits from the thread's CSPRNG, as 32 lowercase hex digits
/// (visible ASCII, as MCP requires), written into one string of that size — a `format!`
/// and a string for each byte were ~10,000 instructions, and every modern request opens a
/// connection with an id of its own (issue #42).
pub(super) fn new_session_id() -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes: [u8; 16] = rand::random();
    let mut id = String::with_capacity(2 * bytes.len());
    for b in bytes {
        id.push(char::from(HEX[usize::from(b >> 4)]));
        id.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    id
}

/// One MCP session.
pub(super) struct Session {
    /// The `Mcp-Session-Id`.
    pub(super) id: String,
    /// The id as a header value, made once: every response carries it (issue #18). `None`
    /// only for an id that is no header value, which [`new_session_id`] never makes.
    pub(super) id_header: Option<axum::http::HeaderValue>,
    /// Who opened it; every later request must come from the same principal.
    pub(super) principal: Principal,
    /// Taken (dropped) when the session ends, which ends the connection's inbound once the
    /// deliveries in flight are done.
    inbound: Mutex<Option<mpsc::Sender<Inbound>>>,
    next_stream: AtomicU64,
    routes: Mutex<Routes>,
    /// Cancelled when the session ends.
    pub(super) ended: CancellationToken,
    queue_limit: usize,
    /// How many messages already handed to a GET stream are kept for `Last-Event-ID`.
    replay_limit: usize,
    /// When a request of the session was last seen, or its last stream or request ended.
    last_active: Mutex<Instant>,
    /// For an anonymous session, the address that opened it: the session id alone is not
    /// its credential, so requests must come from that address.
    pub(super) source: Option<IpAddr>,
    /// What the session holds of its address's anonymous quota, released when it ends.
    slot: Mutex<Option<SourceSlot>>,
    /// The listener's shared limiter for queue warnings.
    warnings: Weak<Registry>,
    /// A modern request's own connection ([`Opening::oneshot`]).
    oneshot: bool,
}

#[derive(Default)]
struct Routes {
    /// POSTed requests waiting for their response, by JSON-RPC id.
    pending: Table<Id, Pending>,
    /// The GET stream, if one is open: each message with its event id.
    get: Option<mpsc::Sender<(u64, Arc<str>)>>,
    /// The latest messages meant for the GET stream, with consecutive event ids (1, 2, …):
    /// the last few handed to a GET stream (at most the replay limit), which a client that
    /// lost them can have again by reopening with `Last-Event-ID`, and after them those
    /// that found no stream open (at most the queue limit).
    backlog: VecDeque<(u64, Arc<str>)>,
    /// The last event id handed to a GET stream; what follows it in `backlog` waits.
    handed: u64,
    /// The last event id given.
    last_event: u64,
    /// Requests the server is about to write, by id, and the client's request each serves
    /// (`Outbound::relate`); taken when the request is routed.
    related: Table<Id, Id>,
    next_seq: u64,
}

struct Pending {
    /// Where its answer goes.
    tx: AnswerTx,
    /// An SSE answer, which may carry server messages before the response.
    sse: bool,
    /// The request's `_meta.progressToken`: its progress notifications ride its answer.
    progress: Option<Value>,
    /// Registration order, to pick the newest.
    seq: u64,
}

/// The sending end of a POSTed request's answer.
enum AnswerTx {
    /// A JSON answer not yet begun (issue #42, item 3): a one-shot slot, the cheapest
    /// channel there is, for what most requests get — their response and nothing else. A
    /// related message that comes first turns it into [`AnswerTx::Stream`], the slot then
    /// carrying that message and the channel for the rest.
    Once(Option<oneshot::Sender<First>>),
    /// An SSE answer: a channel of the session's queue limit.
    Stream(mpsc::Sender<Box<Message>>),
}

/// What a JSON answer's one-shot slot carries.
pub(super) enum First {
    /// The response: the answer is one JSON body. Not boxed: the slot holds it, and
    /// nothing else does on the way (issue #42: a box a call, only to be opened).
    Response(Message),
    /// Something related to the request came first: the answer becomes an SSE stream
    /// that carries it, then what the channel brings (the response last).
    Stream(Box<Message>, mpsc::Receiver<Box<Message>>),
}

impl Pending {
    /// True while the answer has room for a message and, after it, the response: the last
    /// slot is kept for the response, which has no other way to the client, so a client
    /// slow to read progress (or anything else riding its answer) never loses the response
    /// to a full channel. What finds no room goes where unrelated messages go. A JSON
    /// answer not yet begun has the room of the channel it would become
    /// (`queue_limit`, as a channel made at once would have).
    fn has_room_besides_response(&self, queue_limit: usize) -> bool {
        match &self.tx {
            AnswerTx::Once(Some(_)) => queue_limit > 1,
            AnswerTx::Once(None) => false,
            AnswerTx::Stream(tx) => tx.capacity() > 1,
        }
    }

    /// Sends the request's response on its answer (the entry is already taken from the
    /// pending ones); false when the answer is gone.
    fn respond(self, message: Message) -> bool {
        match self.tx {
            AnswerTx::Once(Some(tx)) => tx.send(First::Response(message)).is_ok(),
            AnswerTx::Once(None) => false,
            AnswerTx::Stream(tx) => tx.try_send(Box::new(message)).is_ok(),
        }
    }

    /// Sends a message other than the response on the answer — for a JSON answer not yet
    /// begun, with the channel that carries what follows (of one slot fewer than the
    /// queue limit, the first having been taken) — or gives it back when the answer is
    /// gone or full.
    fn offer(&mut self, message: Box<Message>, queue_limit: usize) -> Result<(), Box<Message>> {
        match &mut self.tx {
            AnswerTx::Once(slot) => {
                let Some(tx) = slot.take() else {
                    return Err(message);
                };
                let (rest_tx, rest_rx) = mpsc::channel(queue_limit.saturating_sub(1).max(1));
                match tx.send(First::Stream(message, rest_rx)) {
                    Ok(()) => {
                        self.tx = AnswerTx::Stream(rest_tx);
                        Ok(())
                    }
                    Err(First::Stream(m, _)) => Err(m),
                    Err(First::Response(m)) => Err(Box::new(m)),
                }
            }
            AnswerTx::Stream(tx) => tx.try_send(message).map_err(|e| match e {
                TrySendError::Full(m) | TrySendError::Closed(m) => m,
            }),
        }
    }
}

/// The receiving end of a POSTed request's answer: what the session routes to the request,
/// in order, the response last; `None` once nothing more will come (the session ended, or
/// the client cancelled the request).
pub(super) enum AnswerRx {
    /// A JSON answer not yet begun ([`AnswerTx::Once`]).
    Once(oneshot::Receiver<First>),
    /// An SSE answer, or a JSON answer that became one.
    Stream(mpsc::Receiver<Box<Message>>),
    /// Its response was read, or nothing more will come.
    Done,
}

impl AnswerRx {
    /// The next message for the request, in the order routed.
    pub(super) async fn recv(&mut self) -> Option<Message> {
        match self {
            AnswerRx::Once(rx) => {
                let first = rx.await;
                self.after(first.ok())
            }
            AnswerRx::Stream(rx) => rx.recv().await.map(|m| *m),
            AnswerRx::Done => None,
        }
    }

    /// What the one-shot slot brought, and the state after it.
    fn after(&mut self, first: Option<First>) -> Option<Message> {
        match first {
            Some(First::Response(m)) => {
                *self = AnswerRx::Done;
                Some(m)
            }
            Some(First::Stream(m, rest)) => {
                *self = AnswerRx::Stream(rest);
                Some(*m)
            }
            None => {
                *self = AnswerRx::Done;
                None
            }
        }
    }

    /// The next message if one is there already (for the unit tests).
    #[cfg(test)]
    fn try_recv(&mut self) -> Option<Message> {
        match self {
            AnswerRx::Once(rx) => match rx.try_recv() {
                Ok(first) => self.after(Some(first)),
                Err(oneshot::error::TryRecvError::Empty) => None,
                Err(oneshot::error::TryRecvError::Closed) => self.after(None),
            },
            AnswerRx::Stream(rx) => rx.try_recv().ok().map(|m| *m),
            AnswerRx::Done => None,
        }
    }
}

/// Unregisters a pending request when its HTTP request goes away (answered, or the client
/// hung up), unless the entry was already taken by its response.
pub(super) struct PendingGuard {
    session: Arc<Session>,
    id: Id,
    seq: u64,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        self.session.touch();
        let mut routes = lock(&self.session.routes);
        if routes
            .pending
            .get(&self.id)
            .is_some_and(|p| p.seq == self.seq)
        {
            routes.pending.remove(&self.id);
        }
    }
}

/// Ends a modern request's own connection when its answer goes away — answered, or the
/// client closed it, which cancels the request (MCP 2026-07-28 Streamable HTTP,
/// "Cancellation"): the connection's inbound ends, and the server stops serving it.
pub(super) struct EndOnDrop {
    session: Arc<Session>,
    _pending: PendingGuard,
}

impl EndOnDrop {
    pub(super) fn new(session: Arc<Session>, pending: PendingGuard) -> Self {
        EndOnDrop {
            session,
            _pending: pending,
        }
    }
}

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        self.session.end();
    }
}

/// A second request with the id of one still pending (MCP forbids reusing ids).
pub(super) struct DuplicateId;

/// Touches its session when dropped: a GET stream that ended counts as activity, so the
/// session's idle time starts then.
pub(super) struct TouchOnDrop(pub(super) Arc<Session>);

impl Drop for TouchOnDrop {
    fn drop(&mut self) {
        self.0.touch();
    }
}

/// Who a session is for and where its limits come from.
pub(super) struct Opening {
    pub(super) principal: Principal,
    /// For an anonymous session: its address, and the slot it holds there.
    pub(super) anonymous: Option<(IpAddr, SourceSlot)>,
    pub(super) queue_limit: usize,
    pub(super) replay_limit: usize,
    /// A modern request's own connection (MCP 2026-07-28): no id, one request, and
    /// everything written goes on that request's answer.
    pub(super) oneshot: bool,
}

impl Session {
    pub(super) fn new(
        id: String,
        opening: Opening,
        inbound: mpsc::Sender<Inbound>,
        registry: &Arc<Registry>,
    ) -> Self {
        let (source, slot) = match opening.anonymous {
            Some((ip, slot)) => (Some(ip), Some(slot)),
            None => (None, None),
        };
        Session {
            id_header: axum::http::HeaderValue::from_str(&id).ok(),
            id,
            principal: opening.principal,
            inbound: Mutex::new(Some(inbound)),
            next_stream: AtomicU64::new(1),
            routes: Mutex::new(Routes::default()),
            ended: CancellationToken::new(),
            queue_limit: opening.queue_limit.max(1),
            replay_limit: opening.replay_limit,
            last_active: Mutex::new(Instant::now()),
            source,
            slot: Mutex::new(slot),
            warnings: Arc::downgrade(registry),
            oneshot: opening.oneshot,
        }
    }

    /// Notes activity now.
    pub(super) fn touch(&self) {
        *lock(&self.last_active) = Instant::now();
    }

    /// When it was last active.
    pub(super) fn last_active(&self) -> Instant {
        *lock(&self.last_active)
    }

    /// True when nothing of it has been active for `idle` at `now`: no request pending, no
    /// GET stream open, none seen for that long.
    fn is_idle(&self, now: Instant, idle: Duration) -> bool {
        if now.saturating_duration_since(self.last_active()) < idle {
            return false;
        }
        let routes = lock(&self.routes);
        routes.pending.is_empty() && routes.get.as_ref().is_none_or(|g| g.is_closed())
    }

    /// A fresh stream id for one POST's inbound messages.
    pub(super) fn next_stream(&self) -> StreamId {
        StreamId(self.next_stream.fetch_add(1, Ordering::Relaxed))
    }

    /// Hands something read to the session; false when the session is gone.
    pub(super) async fn deliver(&self, item: Inbound) -> bool {
        // Handed over at once when the queue has room (nearly always): no sender is cloned
        // to wait with (issue #42).
        let item = {
            let inbound = lock(&self.inbound);
            let Some(tx) = inbound.as_ref() else {
                return false;
            };
            match tx.try_send(item) {
                Ok(()) => return true,
                Err(TrySendError::Closed(_)) => return false,
                Err(TrySendError::Full(item)) => item,
            }
        };
        let Some(tx) = lock(&self.inbound).clone() else {
            return false;
        };
        tx.send(item).await.is_ok()
    }

    /// Registers a POSTed request before it is delivered, so its response finds its way back,
    /// and so do its progress notifications when it carries a `progress` token.
    pub(super) fn register(
        self: &Arc<Self>,
        id: Id,
        sse: bool,
        progress: Option<Value>,
    ) -> Result<(AnswerRx, PendingGuard), DuplicateId> {
        let mut guard = lock(&self.routes);
        let routes = &mut *guard;
        // The id hashed once, for the check and the insert (issue #42).
        let std::collections::hash_map::Entry::Vacant(slot) = routes.pending.entry(id.clone())
        else {
            return Err(DuplicateId);
        };
        // A JSON answer waits in a one-shot slot until it knows what it carries; an SSE
        // answer may carry many messages from the start.
        let (tx, rx) = if sse {
            let (tx, rx) = mpsc::channel(self.queue_limit);
            (AnswerTx::Stream(tx), AnswerRx::Stream(rx))
        } else {
            let (tx, rx) = oneshot::channel();
            (AnswerTx::Once(Some(tx)), AnswerRx::Once(rx))
        };
        let seq = routes.next_seq;
        routes.next_seq += 1;
        if !self.ended.is_cancelled() {
            slot.insert(Pending {
                tx,
                sse,
                progress,
                seq,
            });
        }
        Ok((
            rx,
            PendingGuard {
                session: self.clone(),
                id,
                seq,
            },
        ))
    }

    /// Ends the answer of a pending request the client cancelled: MCP has the server write
    /// no response to it, so without this its POST would stay open until the client gave
    /// up or the session ended (issue #36, item 12). What the answer already holds is still
    /// written; a response the server writes after all finds no pending request and is
    /// dropped. False when no request with that id is pending.
    pub(super) fn end_cancelled(&self, id: &Id) -> bool {
        lock(&self.routes).pending.remove(id).is_some()
    }

    /// Opens a GET stream, replacing any other, and sends it what the client has not read:
    /// with `last_event` (the client's `Last-Event-ID`), every message of the backlog after
    /// it, so one lost with a broken stream comes again (MCP: a server MAY replay, on the
    /// stream that was broken); without one, or one the backlog does not reach back to,
    /// what no stream took yet.
    pub(super) fn open_get(&self, last_event: Option<&str>) -> mpsc::Receiver<(u64, Arc<str>)> {
        // Room for all the backlog can hold.
        let (tx, rx) = mpsc::channel(self.queue_limit + self.replay_limit);
        let mut routes = lock(&self.routes);
        if self.ended.is_cancelled() {
            return rx;
        }
        let seen = last_event
            .and_then(|id| id.trim().parse::<u64>().ok())
            .filter(|&id| id <= routes.handed)
            .unwrap_or(routes.handed);
        if seen < routes.handed {
            tracing::debug!(session = %self.short_id(), from = seen, to = routes.handed, "GET stream resumed: sending again what the client lost");
        }
        // The backlog never holds more than the channel's capacity.
        for (id, message) in routes.backlog.iter().filter(|(id, _)| *id > seen) {
            let _ = tx.try_send((*id, Arc::clone(message)));
        }
        routes.handed = routes.last_event;
        self.trim(&mut routes);
        routes.get = Some(tx);
        rx
    }

    /// Sends one message the session wrote to where it belongs.
    pub(super) fn route(&self, message: Message) {
        let limit = self.queue_limit;
        let mut guard = lock(&self.routes);
        let routes = &mut *guard;
        if let Message::Response(response) = &message {
            let pending = response
                .id
                .as_ref()
                .and_then(|id| routes.pending.remove(id));
            match pending {
                Some(p) => {
                    if !p.respond(message) {
                        tracing::debug!(session = %self.short_id(), "the HTTP request of this response is gone; dropped");
                    }
                }
                // The answer to a message that could not be read: the POST that carried it
                // was answered with it already (a 400), so it has nothing left to say.
                None if response.id.is_none() => tracing::debug!(
                    session = %self.short_id(),
                    "an error for an unreadable message, already answered on its POST; dropped"
                ),
                // MCP: a response never goes on the GET stream; with no POST to carry it,
                // it has nowhere to go. A peer can cause this at will: rate-limited.
                None => self.warn("a response to no pending request; dropped"),
            }
            return;
        }
        let mut message = message;
        if self.oneshot {
            // MCP 2026-07-28: a modern request's connection writes only what relates to
            // it (its progress, its log messages), and there is no GET stream.
            match routes
                .pending
                .values_mut()
                .find(|p| p.has_room_besides_response(limit))
            {
                Some(p) => {
                    if p.offer(Box::new(message), limit).is_err() {
                        tracing::debug!(
                            "a modern request's answer is gone; a message for it dropped"
                        );
                    }
                }
                None => {
                    self.warn("a modern request's answer has no room; a message for it dropped")
                }
            }
            return;
        }
        // MCP: messages related to a request SHOULD go on that request's stream. A progress
        // notification names its request by the token the request carried; a request of
        // the server's was related to the client's request it serves (`Outbound::relate`).
        // It rides that request's answer (which becomes an SSE stream if it was to be
        // JSON), so it is read before the result on the same stream.
        let related = match &message {
            Message::Request(request) => routes
                .related
                .remove(&request.id)
                .and_then(|to| routes.pending.get_mut(&to)),
            _ => progress_token_of(&message).and_then(|token| {
                routes
                    .pending
                    .values_mut()
                    .find(|p| p.progress.as_ref() == Some(&token))
            }),
        };
        if let Some(p) = related.filter(|p| p.has_room_besides_response(limit)) {
            match p.offer(Box::new(message), limit) {
                Ok(()) => return,
                Err(m) => message = *m,
            }
        }
        if let Some(get) = &routes.get {
            // Meant for the GET stream: the next event id, and a place in the backlog once
            // a stream has it, for a client that loses it to have it again.
            let id = routes.last_event + 1;
            // Encoded once, for the stream and the backlog alike (and smaller kept so).
            let shared: Arc<str> = message.encode().into();
            // The channel has room for a replay on top of the queue; more than the queue's
            // worth in flight is a client not keeping up.
            let in_flight = get.max_capacity() - get.capacity();
            let sent = if in_flight >= self.queue_limit {
                Err(true)
            } else {
                get.try_send((id, shared.clone()))
                    .map_err(|e| matches!(e, TrySendError::Full(_)))
            };
            match sent {
                Ok(()) => {
                    routes.last_event = id;
                    routes.handed = id;
                    self.keep(routes, id, shared);
                    return;
                }
                // A client not reading its GET stream fast enough: that stream ends once it
                // has written what it holds, and this message waits with the rest for the
                // next one, which the client opens when it sees the end. A slow reader then
                // loses nothing until the queue's bound, rather than this message at once.
                Err(true) => {
                    self.warn("the GET stream is not keeping up; ending it, later messages wait for the next");
                    routes.get = None;
                }
                Err(false) => routes.get = None,
            }
        }
        let mut sse: Vec<&mut Pending> = routes
            .pending
            .values_mut()
            .filter(|p| p.sse && p.has_room_besides_response(limit))
            .collect();
        sse.sort_by_key(|p| std::cmp::Reverse(p.seq));
        for p in sse {
            match p.offer(Box::new(message), limit) {
                Ok(()) => return,
                Err(m) => message = *m,
            }
        }
        // It waits in the backlog for the next GET stream.
        routes.last_event += 1;
        let id = routes.last_event;
        self.keep(routes, id, message.encode().into());
    }

    /// Adds a message meant for the GET stream to the backlog, and trims it.
    fn keep(&self, routes: &mut Routes, id: u64, message: Arc<str>) {
        routes.backlog.push_back((id, message));
        self.trim(routes);
    }

    /// Keeps the backlog to the replay limit's worth of messages already handed to a stream
    /// and the queue limit's worth of waiting ones. Past the second, the oldest go first:
    /// those handed out, then the oldest waiting one, with a warning (a client with no
    /// stream open for that long has lost messages, as a lost stream would have).
    fn trim(&self, routes: &mut Routes) {
        // The ids are consecutive: those up to `handed` were handed out.
        let handed_out = |r: &Routes| {
            r.backlog.front().map_or(0, |&(first, _)| {
                usize::try_from((r.handed + 1).saturating_sub(first)).unwrap_or(usize::MAX)
            })
        };
        while handed_out(routes) > self.replay_limit {
            routes.backlog.pop_front();
        }
        while routes.backlog.len() - handed_out(routes) > self.queue_limit {
            if let Some((dropped, _)) = routes.backlog.pop_front()
                && dropped > routes.handed
            {
                self.warn(&format!("no stream open to the client and its queue is full ({} messages); the oldest message was dropped", self.queue_limit));
            }
        }
    }

    /// A warning about this session, through the listener's limiter: a flood of them (many
    /// sessions' queues full at once) costs a few lines and a count.
    fn warn(&self, what: &str) {
        let Some(registry) = self.warnings.upgrade() else {
            return;
        };
        let mut limiter = lock(&registry.warnings);
        crate::warn_limited!(limiter, session = %self.short_id(), "{what}");
    }

    /// Ends the session: its inbound closes, its streams end, pending requests fail, what
    /// it held is freed.
    pub(super) fn end(&self) {
        self.ended.cancel();
        lock(&self.inbound).take();
        lock(&self.slot).take();
        let mut routes = lock(&self.routes);
        routes.pending.clear();
        routes.get = None;
        routes.backlog = VecDeque::new();
        routes.related = Table::default();
    }

    /// Enough of the id for logs, not enough to hijack the session.
    pub(super) fn short_id(&self) -> &str {
        &self.id[..8.min(self.id.len())]
    }
}

impl crate::Router for Session {
    fn relate(&self, request: Id, to: Id) {
        let mut routes = lock(&self.routes);
        if !self.ended.is_cancelled() {
            routes.related.insert(request, to);
        }
    }

    fn route(&self, message: Message) -> Result<(), crate::Refused> {
        Session::route(self, message);
        Ok(())
    }
}

/// Waits until the server drops its `Outbound` or the session ends; then the session is
/// removed. What the session writes is routed as it is written (`Router::route`), so the
/// channel carries nothing ([`crate::Nothing`]): it only ends when every handle is gone.
pub(super) async fn pump(
    session: Arc<Session>,
    mut handles: mpsc::Receiver<crate::Nothing>,
    registry: Arc<Registry>,
) {
    tokio::select! {
        () = session.ended.cancelled() => {}
        _ = handles.recv() => {}
    }
    registry.end(&session.id);
    session.end();
}

/// Locks, ignoring poisoning: no code here panics while holding a lock, and a poisoned
/// map is still consistent (every mutation is a single call).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The `progressToken` of a `notifications/progress`.
fn progress_token_of(message: &Message) -> Option<Value> {
    match message {
        Message::Notification(n) if n.method == "notifications/progress" => {
            super::notified_progress_token(n.params.as_deref())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::{Notification, Response};
    use serde_json::json;

    fn named(queue_limit: usize, replay_limit: usize) -> Opening {
        Opening {
            principal: Principal::Named("p".into()),
            anonymous: None,
            queue_limit,
            replay_limit,
            oneshot: false,
        }
    }

    fn session(limit: usize) -> (Arc<Session>, mpsc::Receiver<Inbound>) {
        let (tx, rx) = mpsc::channel(8);
        (
            Arc::new(Session::new(
                new_session_id(),
                named(limit, limit),
                tx,
                &Arc::new(Registry::new()),
            )),
            rx,
        )
    }

    /// A burst of sessions that all ended leaves no table sized for the burst behind.
    #[test]
    fn the_registry_gives_back_its_table_once_most_sessions_ended() {
        let registry = Registry::new();
        let mut receivers = Vec::new();
        let mut ids = Vec::new();
        for _ in 0..2000 {
            let (s, rx) = session(4);
            ids.push(s.id.clone());
            registry.insert(s);
            receivers.push(rx);
        }
        let grown = lock(&registry.sessions).capacity();
        assert!(grown >= 2000);
        for id in &ids[10..] {
            registry.end(id);
        }
        assert_eq!(registry.len(), 10);
        let left = lock(&registry.sessions).capacity();
        assert!(
            left <= 64,
            "capacity {left} after {grown} for 2000 sessions, 10 left"
        );
        for id in &ids[..10] {
            assert!(registry.get(id).is_some(), "the live ones stay");
        }
    }

    /// The next message a GET stream has, without its event id.
    fn msg(get: &mut mpsc::Receiver<(u64, Arc<str>)>) -> Option<Message> {
        get.try_recv()
            .ok()
            .map(|(_, m)| Message::decode(m.as_bytes()).unwrap())
    }

    /// Everything a GET stream has now, with event ids.
    fn drain(get: &mut mpsc::Receiver<(u64, Arc<str>)>) -> Vec<(u64, Message)> {
        std::iter::from_fn(|| {
            let (id, m) = get.try_recv().ok()?;
            Some((id, Message::decode(m.as_bytes()).unwrap()))
        })
        .collect()
    }

    fn note(n: i64) -> Message {
        Notification {
            method: "n".into(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(&json!({ "n": n }))),
        }
        .into()
    }

    /// MCP resumability on the GET stream: a client that lost messages with a broken stream
    /// reopens it with the last event id it read and has them again, no more and no less.
    #[test]
    fn a_get_stream_reopened_with_last_event_id_gets_again_what_followed_it() {
        let (s, _in) = session(4);
        let mut lost = s.open_get(None);
        for n in 1..=3 {
            s.route(note(n));
        }
        assert_eq!(
            drain(&mut lost),
            vec![(1, note(1)), (2, note(2)), (3, note(3))]
        );
        // The client read up to 1; 2 and 3 were lost with the connection.
        let mut again = s.open_get(Some("1"));
        s.route(note(4));
        assert_eq!(
            drain(&mut again),
            vec![(2, note(2)), (3, note(3)), (4, note(4))]
        );
        // Without an id, or with one it never sent, only what no stream took: nothing here.
        for id in [None, Some("99"), Some("not a number")] {
            let mut fresh = s.open_get(id);
            assert_eq!(drain(&mut fresh), vec![], "{id:?}");
        }
        // 5 and 6 find no stream (the last one was dropped) and wait beside the 4 sent ones
        // the replay limit keeps, so the oldest id resumes with everything after it.
        for n in 5..=6 {
            s.route(note(n));
        }
        let mut old = s.open_get(Some("1"));
        assert_eq!(
            drain(&mut old)
                .iter()
                .map(|(id, _)| *id)
                .collect::<Vec<_>>(),
            vec![2, 3, 4, 5, 6]
        );
    }

    /// The backlog's two bounds: the replay limit for messages already sent on a GET stream,
    /// the queue limit for those waiting; past the second the oldest go, sent ones first.
    #[test]
    fn the_backlog_keeps_a_replay_window_of_sent_messages_and_a_queue_of_waiting_ones() {
        let (tx, _in) = mpsc::channel(8);
        let s = Arc::new(Session::new(
            new_session_id(),
            named(2, 1),
            tx,
            &Arc::new(Registry::new()),
        ));
        let mut get = s.open_get(None);
        s.route(note(1));
        s.route(note(2));
        assert_eq!(drain(&mut get), vec![(1, note(1)), (2, note(2))]);
        drop(get); // the stream is gone; what follows waits
        for n in 3..=5 {
            s.route(note(n));
        }
        let ids = |s: &Session| -> Vec<u64> {
            lock(&s.routes).backlog.iter().map(|(id, _)| *id).collect()
        };
        assert_eq!(
            ids(&s),
            vec![4, 5],
            "sent 2 went first, then the oldest waiting, 3"
        );
        let mut again = s.open_get(Some("2"));
        assert_eq!(drain(&mut again), vec![(4, note(4)), (5, note(5))]);
        assert_eq!(ids(&s), vec![5], "once sent, only the replay window stays");
    }

    /// A message that waited for no stream and then went to an SSE answer is not sent again
    /// on the next GET stream.
    #[test]
    fn what_an_sse_answer_carried_is_not_replayed_on_the_get_stream() {
        let (s, _in) = session(4);
        let (mut answer, _guard) = s.register(Id::Number(1), true, None).ok().unwrap();
        s.route(note(1));
        assert_eq!(answer.try_recv(), Some(note(1)));
        s.route(Response::ok(Id::Number(1), json!({})).into());
        s.route(note(2));
        let mut get = s.open_get(Some("0"));
        assert_eq!(drain(&mut get), vec![(1, note(2))]);
    }

    #[test]
    fn session_ids_are_visible_ascii_and_distinct() {
        let a = new_session_id();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| (0x21..=0x7e).contains(&b)));
        assert!(
            a.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "lowercase hex: {a}"
        );
        assert_ne!(a, new_session_id());
        // Every digit turns up, in either half of a byte, over enough ids.
        let seen: std::collections::BTreeSet<char> = (0..64)
            .flat_map(|_| new_session_id().chars().collect::<Vec<_>>())
            .collect();
        assert_eq!(seen.len(), 16, "{seen:?}");
    }

    #[test]
    fn responses_go_to_their_request_and_nowhere_else() {
        let (s, _in) = session(4);
        let mut get = s.open_get(None);
        let (mut rx, _guard) = s.register(Id::Number(1), false, None).ok().unwrap();
        s.route(Response::ok(Id::Number(1), json!({})).into());
        s.route(Response::ok(Id::Number(2), json!({})).into());
        assert!(matches!(rx.try_recv(), Some(Message::Response(_))));
        assert!(
            get.try_recv().is_err(),
            "a response never goes on the GET stream"
        );
    }

    #[test]
    fn without_a_stream_messages_queue_up_to_the_limit_then_flush_in_order() {
        let (s, _in) = session(2);
        for n in 0..3 {
            s.route(note(n));
        }
        let mut get = s.open_get(None);
        assert_eq!(msg(&mut get), Some(note(1)), "the oldest was dropped");
        assert_eq!(msg(&mut get), Some(note(2)));
    }

    #[test]
    fn a_request_related_to_a_pending_one_rides_its_answer_even_with_a_get_stream() {
        use crate::Router;
        let (s, _in) = session(4);
        let mut get = s.open_get(None);
        let (mut call, _guard) = s.register(Id::Number(1), false, None).ok().unwrap();
        let ask = |id: i64| -> Message {
            mcpl_protocol::Request {
                id: Id::Number(id),
                method: "sampling/createMessage".into(),
                params: Some(mcpl_protocol::jsonrpc::to_raw(
                    &json!({"messages": [], "maxTokens": 1}),
                )),
            }
            .into()
        };
        s.relate(Id::Number(100), Id::Number(1));
        s.route(ask(100));
        assert_eq!(call.try_recv(), Some(ask(100)));
        assert!(get.try_recv().is_err(), "not on the GET stream");
        // Unrelated, or related to a request no longer pending: where server messages go.
        s.route(ask(101));
        s.relate(Id::Number(102), Id::Number(9));
        s.route(ask(102));
        assert_eq!(msg(&mut get), Some(ask(101)));
        assert_eq!(msg(&mut get), Some(ask(102)));
        assert!(call.try_recv().is_none());
        assert!(
            lock(&s.routes).related.is_empty(),
            "relations are taken when routed"
        );
    }

    /// A tool reporting progress faster than its client reads the answer: what does not fit
    /// goes to the GET stream, and the last slot waits for the response.
    #[test]
    fn a_full_answer_keeps_its_last_slot_for_the_response() {
        let (s, _in) = session(3);
        let mut get = s.open_get(None);
        let token = json!("tok");
        let (mut answer, _guard) = s
            .register(Id::Number(1), false, Some(token.clone()))
            .ok()
            .unwrap();
        let progress = |n: i64| -> Message {
            Notification {
                method: "notifications/progress".into(),
                params: Some(mcpl_protocol::jsonrpc::to_raw(
                    &json!({"progressToken": token, "progress": n}),
                )),
            }
            .into()
        };
        for n in 0..5 {
            s.route(progress(n));
        }
        s.route(Response::ok(Id::Number(1), json!({})).into());
        let on_answer: Vec<Message> = std::iter::from_fn(|| answer.try_recv()).collect();
        let on_get: Vec<Message> = std::iter::from_fn(|| msg(&mut get)).collect();
        assert_eq!(
            on_answer,
            vec![
                progress(0),
                progress(1),
                Response::ok(Id::Number(1), json!({})).into()
            ]
        );
        assert_eq!(on_get, vec![progress(2), progress(3), progress(4)]);
    }

    #[test]
    fn sse_answers_carry_server_messages_when_no_get_stream_is_open() {
        let (s, _in) = session(4);
        let (mut old, _g1) = s.register(Id::Number(1), true, None).ok().unwrap();
        let (mut new, _g2) = s.register(Id::Number(2), true, None).ok().unwrap();
        s.route(note(7));
        assert_eq!(
            new.try_recv(),
            Some(note(7)),
            "the newest pending answer takes it"
        );
        assert!(old.try_recv().is_none());
    }

    /// A POST whose answer stream is gone (its client stopped reading, its guard not yet
    /// dropped) refuses what is routed to it; the message goes on to the next place a
    /// server message may go — an older SSE answer, the GET stream, the backlog — and is
    /// never lost.
    #[test]
    fn a_message_refused_by_a_closed_answer_stream_goes_where_the_others_go() {
        let (s, _in) = session(4);
        let token = json!("tok");
        let progress = || -> Message {
            Notification {
                method: "notifications/progress".into(),
                params: Some(mcpl_protocol::jsonrpc::to_raw(
                    &json!({"progressToken": token, "progress": 1}),
                )),
            }
            .into()
        };
        let (mut older, _g1) = s.register(Id::Number(1), true, None).ok().unwrap();
        let (gone, _g2) = s
            .register(Id::Number(2), true, Some(token.clone()))
            .ok()
            .unwrap();
        drop(gone);
        // Related to the gone answer, then the newest SSE answer (the same one): both refuse.
        s.route(progress());
        assert_eq!(older.try_recv(), Some(progress()));
        // Every answer gone: the backlog keeps it for the next GET stream.
        drop(older);
        s.route(note(3));
        let mut get = s.open_get(None);
        assert_eq!(drain(&mut get), vec![(1, note(3))]);
        // With a GET stream open, what the gone answer refuses goes there.
        s.route(progress());
        assert_eq!(msg(&mut get), Some(progress()));
    }

    #[test]
    fn a_new_get_stream_replaces_the_old_and_a_dropped_guard_unregisters() {
        let (s, _in) = session(4);
        let mut first = s.open_get(None);
        let mut second = s.open_get(None);
        s.route(note(1));
        assert_eq!(msg(&mut second), Some(note(1)));
        assert!(matches!(
            first.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
        let (_rx, guard) = s.register(Id::Number(5), false, None).ok().unwrap();
        assert!(
            s.register(Id::Number(5), false, None).is_err(),
            "a duplicate pending id is refused"
        );
        drop(guard);
        assert!(s.register(Id::Number(5), false, None).is_ok());
    }

    #[tokio::test]
    async fn ending_closes_inbound_and_streams() {
        let (s, mut inbound) = session(4);
        let mut get = s.open_get(None);
        assert!(
            s.deliver(Inbound::Message {
                stream: s.next_stream(),
                message: note(1)
            })
            .await
        );
        s.end();
        assert!(inbound.recv().await.is_some());
        assert!(inbound.recv().await.is_none());
        assert!(get.recv().await.is_none());
        assert!(
            !s.deliver(Inbound::Message {
                stream: StreamId(9),
                message: note(2)
            })
            .await
        );
    }

    /// The issue on hardening, item 2: only a session with no request pending, no GET
    /// stream open and no activity for the idle time is reaped; reaping frees its backlog.
    #[test]
    fn hardening_02_only_a_session_idle_with_nothing_open_is_reaped() {
        let registry = Arc::new(Registry::new());
        let (tx, _in) = mpsc::channel(8);
        let s = Arc::new(Session::new(new_session_id(), named(4, 4), tx, &registry));
        registry.insert(s.clone());
        let idle = Duration::from_secs(60);
        let later = Instant::now() + 2 * idle;
        let get = s.open_get(None);
        assert_eq!(registry.reap(later, idle), 0, "a GET stream is open");
        drop(get);
        let (_rx, pending) = s.register(Id::Number(1), false, None).ok().unwrap();
        assert_eq!(registry.reap(later, idle), 0, "a request is pending");
        drop(pending); // touches: the idle time starts again
        assert_eq!(
            registry.reap(Instant::now() + idle / 2, idle),
            0,
            "active a moment ago"
        );
        s.route(note(1));
        assert_eq!(lock(&s.routes).backlog.len(), 1);
        assert_eq!(registry.reap(Instant::now() + 2 * idle, idle), 1);
        assert!(registry.get(&s.id).is_none() && s.ended.is_cancelled());
        assert_eq!(
            lock(&s.routes).backlog.capacity(),
            0,
            "its memory is returned"
        );
    }
}

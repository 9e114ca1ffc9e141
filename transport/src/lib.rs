//! Transports for MCP/MCPL: stdio, WebSocket and Streamable HTTP, client and server ends,
//! behind one interface, plus an in-memory pair for tests and the simulator.
//!
//! This crate moves JSON-RPC messages and nothing else: it knows no method but the few a
//! Streamable HTTP end must read to do its job (the `initialize` exchange that assigns a
//! session; a 2026-07-28 request's `_meta` and the headers that mirror its body). A [`Connection`] is a writing end, a reading end and a description:
//!
//! - [`Connection::outbound`] accepts messages to write, in order;
//! - [`Connection::inbound`] yields each message read, tagged with the [`StreamId`] it
//!   arrived on, or a decode failure, and ends when the link is gone ([`Incoming`]: a
//!   WebSocket is read in the consumer's own turn, the others through a bounded channel);
//! - [`ConnectionInfo::ordered`] says whether everything read arrives in the order the peer
//!   wrote it. stdio and WebSocket are ordered; Streamable HTTP is not (responses on separate
//!   POST streams and the GET stream have no order between them), which is why a host holds
//!   early revs only on an unordered link (RFC-014 §5.2).
//!
//! Layout, one transport per module:
//!
//! | module | what |
//! |---|---|
//! | [`config`] | limits, tokens and principals, origins, per-transport knobs |
//! | [`memory`] | in-process pairs, for tests and the simulator |
//! | [`stdio`] | newline-delimited JSON: a spawned child (client) or this process (server) |
//! | [`ws`] | one message per WebSocket text frame; server pings |
//! | [`http`] | MCP Streamable HTTP: sessions, POST/GET/DELETE, JSON or SSE answers; 2026-07-28's stateless POSTs |
//! | [`delivery`] | the HTTP client's per-message hook, the seam for chaos tests |
//! | [`jwt`] | bearer JWTs from an authorization server: a JWKS, issuer, audience, expiry, the claim naming the principal |
//! | [`tls`] | rustls (ring) for both ends: a client's roots plus an optional CA file, a listener's certificate and key |
//! | [`listen_addr`] | a listener's address as a command line gives it; a bare port is loopback |
//! | [`log_limit`] | rate-limited warnings for what a peer can trigger at will |
//! | `accept` | what a listener does when `accept` fails: one connection's error costs nothing, running out of descriptors backs off and is logged once per interval |
//! | `sources` | what each source address holds, bounded (anonymous principals per address) |
//! | `testkit` | with the `testkit` feature: a connection's end as a link of the tests' one raw peer (`mcpl-testkit`) |
//!
//! [`connect`] picks a client transport from a URL; `wss://` and `https://` verify the server
//! against the webpki roots plus [`ClientOptions::tls`]'s CA file, if any. A listener given
//! [`ServerOptions::tls`] serves TLS itself (`wss://`, `https://`); a TLS-terminating proxy
//! in front of a plain one works as well. Listeners bind where they are told; a command line's [`ListenAddr`] binds `127.0.0.1` unless given an address
//! (MCP's transport security advice). Configure tokens before serving other machines.
//!
//! Every reader refuses a message over its `max_message_size` with [`Inbound::TooLarge`] and
//! goes on; bytes that are not a JSON-RPC message become [`Inbound::Malformed`] (the HTTP
//! server answers those itself with 400). A peer cannot make a session panic.

pub mod accept;
pub mod config;
pub mod delivery;
pub mod http;
pub mod jwt;
pub mod listen_addr;
pub mod log_limit;
pub mod memory;
mod sources;
pub mod stdio;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod tls;
pub mod ws;

pub use config::{
    ChildStderr, ClientOptions, HttpResponseMode, Principal, ProtectedResource, ServerOptions,
    ToolHeaderMarks,
};
pub use listen_addr::{ListenAddr, ListenAddrError};
pub use log_limit::LogLimiter;
pub use tls::{ClientTls, ServerTls, TlsError};

use mcpl_protocol::jsonrpc::{DecodeError, Id, Message};
use std::sync::Arc;
use tokio::sync::mpsc;

/// The default maximum size of one message: 4 MiB.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 4 * 1024 * 1024;

/// Which stream of a link a message arrived on. Ordered links have one stream, `StreamId(0)`;
/// a Streamable HTTP link numbers each POST response and each GET stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u64);

/// Something read from a link.
#[derive(Debug)]
pub enum Inbound {
    /// A message.
    Message {
        /// The stream it arrived on.
        stream: StreamId,
        /// The message.
        message: Message,
    },
    /// Bytes that are not a valid message. The link goes on; the reader answers with
    /// [`DecodeError::to_response`] where the transport has not already done so.
    Malformed {
        /// The stream it arrived on.
        stream: StreamId,
        /// What was wrong.
        error: DecodeError,
    },
    /// A message larger than the configured maximum was refused (and not decoded).
    TooLarge {
        /// The stream it arrived on.
        stream: StreamId,
        /// Its size, or a lower bound of it, in bytes.
        size: usize,
        /// The limit.
        limit: usize,
    },
}

/// Which kind of transport a link uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransportKind {
    /// Newline-delimited JSON over a child's or the process's stdin/stdout.
    Stdio,
    /// One message per WebSocket text frame.
    WebSocket,
    /// MCP Streamable HTTP (2025-11-25).
    StreamableHttp,
    /// In-process channels.
    Memory,
}

/// A description of a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionInfo {
    /// The transport.
    pub kind: TransportKind,
    /// True when messages arrive in the order the peer wrote them.
    pub ordered: bool,
    /// On a server end: who the peer authenticated as. On a client end: `None`.
    pub principal: Option<Principal>,
    /// For logs: the peer's address, the child's command, the session id.
    pub peer: String,
}

/// Writes messages to a link. Cloning gives another handle to the same link.
#[derive(Clone)]
pub struct Outbound {
    tx: Tx,
    /// The transport end that routes what is written itself (Streamable HTTP's session),
    /// and where [`Outbound::relate`] records a relation.
    router: Option<Arc<dyn Router>>,
}

/// The channel of an [`Outbound`]: the messages, or, for an end that routes them itself,
/// a channel that carries nothing and only tells when every handle is gone (its slots then
/// take no memory: a message's would be ~3 KiB a link, issue #42).
#[derive(Clone, Debug)]
enum Tx {
    Messages(mpsc::Sender<Message>),
    Routed(mpsc::Sender<Nothing>),
}

/// What travels on a routed end's channel: nothing (see [`Tx`]).
#[derive(Debug)]
pub(crate) enum Nothing {}

impl Tx {
    fn is_closed(&self) -> bool {
        match self {
            Tx::Messages(tx) => tx.is_closed(),
            Tx::Routed(tx) => tx.is_closed(),
        }
    }
}

/// A transport end that takes what is written itself, at once, from the writer's own
/// task: Streamable HTTP routes it to the POST it answers or the GET stream (and relates a
/// request to the peer's request it serves); a WebSocket link writes it to the socket when
/// nothing is waiting before it, else queues it for its writer task (`ws/link.rs`).
pub(crate) trait Router: Send + Sync {
    /// Records that `request`, about to be written, serves the peer's request `to`.
    fn relate(&self, _request: Id, _to: Id) {}
    /// Writes `message` where it belongs, without waiting. `Full` gives the message back
    /// when the end's bounded queue has no room (an end whose queues say themselves what
    /// happens when full never refuses).
    fn route(&self, message: Message) -> Result<(), Refused>;
    /// Told when a queue that refused a message as full has room again, and when the end
    /// closes; `None` for an end that never refuses as full.
    fn room(&self) -> Option<&tokio::sync::Notify> {
        None
    }
    /// The sender gives the link up ([`Outbound::give_up`]); an end that can tell its peer
    /// why does.
    fn give_up(&self, _why: GiveUp) {}
}

/// Why an end gives its link up, for a transport that can tell the peer (a WebSocket close
/// frame's code and reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GiveUp {
    /// The peer left the link's queue full: it stopped reading what it was sent. A
    /// WebSocket closes with 1008 and a reason saying so.
    Unread,
}

/// Why a [`Router`] did not take a message.
#[derive(Debug)]
pub(crate) enum Refused {
    /// Its queue is full; the message is given back.
    Full(Message),
    /// The link is closed.
    Closed,
}

impl std::fmt::Debug for Outbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbound")
            .field("tx", &self.tx)
            .field("routed_by_transport", &self.router.is_some())
            .finish()
    }
}

impl Outbound {
    /// Wraps a channel sender (used by transport implementations).
    pub fn new(tx: mpsc::Sender<Message>) -> Self {
        Outbound {
            tx: Tx::Messages(tx),
            router: None,
        }
    }

    /// A sender whose transport end routes what is written itself (Streamable HTTP).
    pub(crate) fn with_router(tx: mpsc::Sender<Nothing>, router: Arc<dyn Router>) -> Self {
        Outbound {
            tx: Tx::Routed(tx),
            router: Some(router),
        }
    }

    /// Says that the request with id `request`, written next, serves the peer's request
    /// `to` — a `sampling/createMessage` asked while answering a `tools/call`, say. MCP
    /// 2025-11-25: messages related to a request SHOULD go on that request's stream, so
    /// Streamable HTTP writes it on `to`'s answer while that is pending (else where any
    /// server message goes); ordered transports have one stream and ignore this.
    pub fn relate(&self, request: Id, to: Id) {
        if let Some(router) = &self.router {
            router.relate(request, to);
        }
    }

    /// Queues a message to be written, waiting for room. Fails when the link is gone.
    pub async fn send(&self, message: Message) -> Result<(), TransportError> {
        if let Some(direct) = self.direct()? {
            let mut message = message;
            loop {
                // Armed before the try, so room made between the two is not missed.
                let room = direct.room().map(tokio::sync::Notify::notified);
                tokio::pin!(room);
                if let Some(room) = room.as_mut().as_pin_mut() {
                    room.enable();
                }
                match direct.route(message) {
                    Ok(()) => return Ok(()),
                    Err(Refused::Closed) => return Err(TransportError::Closed),
                    Err(Refused::Full(back)) => message = back,
                }
                match room.as_pin_mut() {
                    Some(room) => room.await,
                    // An end without a room signal never refuses as full.
                    None => return Err(TransportError::Backpressure),
                }
            }
        }
        match &self.tx {
            Tx::Messages(tx) => tx.send(message).await.map_err(|_| TransportError::Closed),
            // A routed end always has its router (`direct`).
            Tx::Routed(_) => Err(TransportError::Closed),
        }
    }

    /// Closes the link for `why`, telling the peer where the transport can (a WebSocket's
    /// close frame); what waits unwritten is dropped. Other handles of the link are refused
    /// from now on. A transport that cannot say why closes when its last handle goes.
    pub fn give_up(&self, why: GiveUp) {
        if let Some(router) = &self.router {
            router.give_up(why);
        }
    }

    /// Queues a message without waiting. Fails when the link is gone or its queue is full.
    pub fn try_send(&self, message: Message) -> Result<(), TransportError> {
        if let Some(direct) = self.direct()? {
            return direct.route(message).map_err(|refused| match refused {
                Refused::Full(_) => TransportError::Backpressure,
                Refused::Closed => TransportError::Closed,
            });
        }
        match &self.tx {
            Tx::Messages(tx) => tx.try_send(message).map_err(|e| match e {
                mpsc::error::TrySendError::Full(_) => TransportError::Backpressure,
                mpsc::error::TrySendError::Closed(_) => TransportError::Closed,
            }),
            // A routed end always has its router (`direct`).
            Tx::Routed(_) => Err(TransportError::Closed),
        }
    }

    /// True when the link's writer has gone.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// The transport end that routes what is written itself, if this link has one (the
    /// channel then only tells when every handle is gone): one hop and one task's turn fewer
    /// for every message (issue #18).
    fn direct(&self) -> Result<Option<&Arc<dyn Router>>, TransportError> {
        match &self.router {
            Some(_) if self.tx.is_closed() => Err(TransportError::Closed),
            direct => Ok(direct.as_ref()),
        }
    }
}

/// Reads from a link: each message read, in the order it was read, then `None` once the
/// link is gone.
///
/// Most transports read in a task of their own and hand each message over a bounded
/// channel ([`Incoming::from`] a receiver). A WebSocket link is read by whoever polls this
/// end, in its own turn: the frame is taken from the socket and decoded right there, so a
/// message costs no channel and no second task's turn (issue #18), and a consumer that
/// reads slowly holds the peer back through TCP itself rather than through a queue.
/// Dropping an `Incoming` that reads its socket itself hands the socket to a task that
/// goes on reading, and discarding, to the link's end (pongs and the close are still
/// heard).
///
/// `recv` is cancel-safe, as `tokio::sync::mpsc::Receiver::recv` is: a message read is
/// never lost to a `select!` that took another branch.
pub struct Incoming {
    source: Source,
    /// Why the link ended, where the transport knows more than "closed": a stdio server
    /// that exited by itself (issue #43). Set before the end is read.
    why_ended: Option<WhyEnded>,
}

/// Where a transport leaves why its link ended, for [`Incoming::why_ended`].
pub(crate) type WhyEnded = std::sync::Arc<std::sync::OnceLock<String>>;

enum Source {
    Channel(mpsc::Receiver<Inbound>),
    Direct(Box<dyn Reader>),
}

/// A transport end read in its consumer's turn (`ws/link.rs`).
pub(crate) trait Reader: Send + Sync {
    /// The next thing read, `None` once the link is gone; registers `cx`'s waker when
    /// nothing is ready.
    fn poll_read(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<Inbound>>;
}

impl Incoming {
    /// An end that reads its socket in the consumer's turn.
    pub(crate) fn direct(reader: Box<dyn Reader>) -> Self {
        Incoming {
            source: Source::Direct(reader),
            why_ended: None,
        }
    }

    /// This end, with `why` said by [`Incoming::why_ended`] once the transport sets it.
    pub(crate) fn with_why_ended(mut self, why: WhyEnded) -> Self {
        self.why_ended = Some(why);
        self
    }

    /// Why the link ended, once it has, where the transport can tell more than that it
    /// closed: for a spawned stdio server that exited by itself, its exit status and its
    /// last stderr lines (issue #43: "the connection closed" alone hid "the store is in use
    /// by another process"). `None` otherwise.
    pub fn why_ended(&self) -> Option<String> {
        self.why_ended.as_ref()?.get().cloned()
    }

    /// The next thing read; `None` once the link is gone.
    pub async fn recv(&mut self) -> Option<Inbound> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the next thing read; `Ready(None)` once the link is gone.
    pub fn poll_recv(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Inbound>> {
        match &mut self.source {
            Source::Channel(rx) => rx.poll_recv(cx),
            Source::Direct(reader) => reader.poll_read(cx),
        }
    }
}

impl From<mpsc::Receiver<Inbound>> for Incoming {
    /// What a transport's reading task sends on the channel (used by transport
    /// implementations and tests).
    fn from(rx: mpsc::Receiver<Inbound>) -> Self {
        Incoming {
            source: Source::Channel(rx),
            why_ended: None,
        }
    }
}

impl futures_util::Stream for Incoming {
    type Item = Inbound;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Inbound>> {
        self.get_mut().poll_recv(cx)
    }
}

impl std::fmt::Debug for Incoming {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match &self.source {
            Source::Channel(_) => "channel",
            Source::Direct(_) => "read in the consumer's turn",
        };
        f.debug_struct("Incoming").field("source", &how).finish()
    }
}

/// One end of a link.
#[derive(Debug)]
pub struct Connection {
    /// What the link is.
    pub info: ConnectionInfo,
    /// Writes to the peer. Dropping every clone closes the link's write side.
    pub outbound: Outbound,
    /// Reads from the peer; `None` once the link is gone.
    pub inbound: Incoming,
}

/// Transport failures, by who is at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The link is closed.
    #[error("the connection is closed")]
    Closed,
    /// The outbound queue is full.
    #[error("the connection's outbound queue is full")]
    Backpressure,
    /// The URL could not be understood.
    #[error("bad server URL {url:?}: {reason}")]
    BadUrl {
        /// The URL.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The server refused our credentials (HTTP 401).
    #[error("the server refused the credentials (401)")]
    Unauthorized,
    /// The server refused the connection with another HTTP status (403 for an `Origin` it
    /// does not accept, for instance).
    #[error("the server refused the connection with HTTP status {status}")]
    Rejected {
        /// The HTTP status.
        status: u16,
    },
    /// The peer broke the transport's rules.
    #[error("the peer broke the transport protocol: {0}")]
    PeerMisbehaved(String),
    /// A stdio server's program could not be started: not found on the `PATH` it was
    /// looked up in, not executable, … (issue #43: the error names the program, and where
    /// it was looked for, so that a person knows what to fix).
    #[error("cannot start the stdio server {program:?}: {reason}")]
    Spawn {
        /// The program, as configured.
        program: String,
        /// Why, with a hint (the `PATH` searched when it was not found).
        reason: String,
    },
    /// An I/O failure.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// TLS with the server failed: its certificate is not signed by a trusted CA, is for
    /// another name, has expired, or the handshake went wrong.
    #[error("TLS with {host} failed: {error}")]
    Tls {
        /// The host named in the URL.
        host: String,
        /// What rustls said (`InvalidCertificate(UnknownIssuer)`, `NotValidForName`, …).
        error: rustls::Error,
    },
    /// An HTTP or WebSocket failure.
    #[error("{0}")]
    Protocol(String),
}

/// `url` as it may be logged or shown: a password in it (`user:PASSWORD@`) is replaced by
/// `***` and a query (which may carry a key) by `?…`; scheme, user, host, port and path
/// stay, so the operator still sees which server is meant (issue #37, item 10). A `stdio:`
/// command is left as it is: it is the operator's own, as typed.
pub fn redact_url(url: &str) -> String {
    if url.starts_with("stdio:") {
        return url.to_owned();
    }
    match url::Url::parse(url) {
        // Nothing to hide: shown as written (a URL's own normal form would add a `/`).
        Ok(parsed)
            if parsed.password().is_none()
                && parsed.query().is_none()
                && parsed.fragment().is_none() =>
        {
            url.to_owned()
        }
        Ok(mut parsed) => {
            let query = parsed.query().is_some();
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            parsed.set_query(None);
            parsed.set_fragment(None);
            let mut shown = parsed.to_string();
            if query {
                shown.push_str("?…");
            }
            shown
        }
        // Not a URL: whatever precedes an `@` might be a credential.
        Err(_) => match url.rsplit_once('@') {
            Some((_, rest)) => format!("…@{rest}"),
            None => url.to_owned(),
        },
    }
}

/// What a server URL may be, as said when one is not (issue #43).
pub const EXPECTED_URL: &str =
    "expected stdio:COMMAND, ws://HOST:PORT/PATH, wss://…, http://HOST:PORT/PATH or https://…";

/// Checks, without connecting, that [`connect`] can make sense of `url`: a `stdio:` command
/// that splits into a program, or a `ws`/`wss`/`http`/`https` URL with a host. A front end
/// calls it at start-up, so that a URL without a scheme (`127.0.0.1:8765`) is refused at
/// once, naming the URL, rather than retried as "bad server URL" forever (issue #43).
pub fn check_url(url: &str) -> Result<(), TransportError> {
    let bad = |reason: String| TransportError::BadUrl {
        url: redact_url(url),
        reason,
    };
    if let Some(command) = url.strip_prefix("stdio:") {
        let words = shell_words::split(command)
            .map_err(|e| bad(format!("cannot split the command: {e}")))?;
        if words.is_empty() {
            return Err(bad("no program after \"stdio:\"".to_owned()));
        }
        return Ok(());
    }
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("ws" | "wss" | "http" | "https")) {
        // A bare HOST:PORT is the likeliest slip: say what it would be.
        let hint = if scheme.is_none() && !url.contains('/') && url.contains(':') {
            format!(" (for a WebSocket server, ws://{url}; for Streamable HTTP, http://{url}/mcp)")
        } else {
            String::new()
        };
        return Err(bad(format!("{EXPECTED_URL}{hint}")));
    }
    let parsed = url::Url::parse(url).map_err(|e| bad(e.to_string()))?;
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(bad("the URL has no host".to_owned()));
    }
    Ok(())
}

/// Connects a client to the server a URL names:
///
/// - `stdio:PROGRAM ARG…` spawns `PROGRAM` (the rest split as a POSIX shell would, quotes
///   and all) and speaks over its stdin/stdout ([`stdio::spawn`]);
/// - `ws://HOST:PORT/PATH` or `wss://…` opens a WebSocket ([`ws::connect`]);
/// - `http://HOST:PORT/PATH` or `https://…` speaks Streamable HTTP to that MCP endpoint
///   ([`http::connect`]).
///
/// Over TLS the server's certificate is verified with [`ClientOptions::tls`]; a server that
/// fails verification is [`TransportError::Tls`].
pub async fn connect(url: &str, opts: &ClientOptions) -> Result<Connection, TransportError> {
    let bad = |reason: &str| TransportError::BadUrl {
        url: redact_url(url),
        reason: reason.to_owned(),
    };
    if let Some(command) = url.strip_prefix("stdio:") {
        let words = shell_words::split(command)
            .map_err(|e| bad(&format!("cannot split the command: {e}")))?;
        let Some((program, args)) = words.split_first() else {
            return Err(bad("no program after \"stdio:\""));
        };
        return stdio::spawn(program, args, stdio::NO_ENV, opts);
    }
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("ws" | "wss") => ws::connect(url, opts).await,
        Some("http" | "https") => http::connect(url, opts).await,
        _ => Err(bad(EXPECTED_URL)),
    }
}

/// Warns once, at bind, that a listener lets anonymous connections in from beyond this
/// machine: anyone who can reach the port may then play, each as a principal of its own.
/// Spawns a listener's task: on the current `LocalSet` with `local`
/// ([`ServerOptions::local_tasks`]), else on the runtime's scheduler.
pub(crate) fn spawn_task<F>(local: bool, task: F) -> tokio::task::JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    if local {
        tokio::task::spawn_local(task)
    } else {
        tokio::spawn(task)
    }
}

pub(crate) fn warn_if_anonymous_beyond_loopback(
    opts: &ServerOptions,
    local: std::net::SocketAddr,
    what: &str,
) {
    if opts.allow_anonymous && !local.ip().is_loopback() {
        tracing::warn!(
            %local,
            "the {what} listener lets anonymous connections in and is bound beyond loopback: anyone who reaches it is let in (at most {} anonymous principals per address)",
            opts.anonymous_per_source
        );
    }
}

#[cfg(test)]
mod redact_tests {
    use super::redact_url;

    /// Issue #37 item 10: a password or a query never reaches a log line or an error.
    #[test]
    fn a_url_is_shown_without_its_password_or_query() {
        assert_eq!(
            redact_url("http://user:PASSWORD@127.0.0.1:8765/mcp?key=SECRET#x"),
            "http://user:***@127.0.0.1:8765/mcp?…"
        );
        assert_eq!(
            redact_url("wss://arcade.example/mcp"),
            "wss://arcade.example/mcp"
        );
        assert_eq!(redact_url("not a url user:PASSWORD@host"), "…@host");
        assert_eq!(
            redact_url("stdio:mcpl-arcade serve"),
            "stdio:mcpl-arcade serve"
        );
    }
}

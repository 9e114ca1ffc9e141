//! The Streamable HTTP server: one path, with a handler per method (and, with protected
//! resource metadata, its well-known paths). The checks each request passes, in order, are
//! listed in the `http` module docs.
//!
//! Requests are routed here by comparing the path, not by axum's `Router`: with so few
//! routes its matching, extractors and boxed futures were a tenth of a light call's server
//! work (issue #18). axum still makes the responses (SSE, JSON, status answers).
//!
//! Connections are served here rather than by `axum::serve`, which gives hyper no timer and
//! so no way to stop a client that never finishes its request head: each is an HTTP/1
//! connection with hyper's header-read timeout set to [`ServerOptions::http_read_timeout`].
//! The POST handler bounds reading the body by the same duration (408 and close past it),
//! and with [`ServerOptions::tls`] the TLS handshake, which runs in the connection's task,
//! is bounded by it too.

use super::modern;
use super::resource::{self, WELL_KNOWN};
use super::session::{self, Registry, Session};
use super::{
    EVENT_STREAM, JSON, LAST_EVENT_ID, SESSION_HEADER, VERSION_HEADER, accepts, content_type_is,
};
use crate::config::Caller;
use crate::sources::{Source, SourceSlot};
use crate::{
    Connection, ConnectionInfo, HttpResponseMode, Inbound, Outbound, Principal, ServerOptions,
    ServerTls, TransportKind,
};
use axum::body::Body;
use axum::http::header::{ALLOW, CONNECTION, CONTENT_TYPE, HOST, ORIGIN, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, Method, Request as HttpRequest, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use mcpl_protocol::mcp::{SERVER_DISCOVER, is_supported_version};
use mcpl_protocol::method::{Cancelled, Method as _, NotificationMethod};
use mcpl_protocol::modern::RequestMeta;
use mcpl_protocol::{ErrorCode, ErrorObject, Id, Message, Request, Response};
use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

/// The queue depth of what a session reads.
const DEPTH: usize = 1024;

/// Sessions opened but not yet taken by [`HttpListener::accept`].
const ACCEPT_QUEUE: usize = 64;

/// A body past this multiple of the limit is not read to its end: the connection is closed
/// after the 413 instead (reading a little past the limit lets the client see the 413 rather
/// than a reset).
const DRAIN_FACTOR: usize = 4;

/// A listening Streamable HTTP server. Dropping it stops serving new HTTP connections and
/// shuts the open ones down gracefully: a request in flight is still answered (an SSE answer
/// or GET stream runs to its end), then the connection closes. Sessions already accepted
/// live on while their HTTP connections do.
#[derive(Debug)]
pub struct HttpListener {
    local_addr: SocketAddr,
    accepted: mpsc::Receiver<Connection>,
    task: JoinHandle<()>,
}

impl HttpListener {
    /// The address bound (useful after binding port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The next session, opened by an `initialize` request that is waiting in its inbound;
    /// `None` if the server failed.
    pub async fn accept(&mut self) -> Option<Connection> {
        self.accepted.recv().await
    }
}

impl Drop for HttpListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Server {
    opts: Arc<ServerOptions>,
    sessions: Arc<Registry>,
    accepted: mpsc::Sender<Connection>,
    /// The address bound: `Host` is checked when it is loopback.
    local: SocketAddr,
    /// Anonymous sessions by source address.
    sources: crate::sources::Sources,
    /// The MCP endpoint's path.
    path: String,
    /// Where the protected resource metadata is served (none without it).
    metadata_paths: Vec<String>,
    /// `https` when the listener serves TLS, else `http`: the resource URL's scheme.
    scheme: &'static str,
}

/// Binds a Streamable HTTP server to `addr` with its MCP endpoint at `path` (conventionally
/// `/mcp`). Bind `127.0.0.1` unless other machines must reach it (MCP's security advice).
pub async fn bind(
    addr: SocketAddr,
    path: &str,
    opts: Arc<ServerOptions>,
) -> io::Result<HttpListener> {
    if !path.starts_with('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the MCP endpoint path must start with '/'",
        ));
    }
    let listener = crate::accept::bind(addr)?;
    let local_addr = listener.local_addr()?;
    crate::warn_if_anonymous_beyond_loopback(&opts, local_addr, "Streamable HTTP");
    let (tx, accepted) = mpsc::channel(ACCEPT_QUEUE);
    let read_timeout = opts.http_read_timeout;
    let tls = opts.tls.clone();
    let sessions = Arc::new(Registry::new());
    let local = opts.local_tasks;
    // Outlives the listener while sessions do: they may still go idle and end.
    crate::spawn_task(
        local,
        session::reap(Arc::downgrade(&sessions), opts.http_session_idle),
    );
    let mut metadata_paths = Vec::new();
    if opts.protected_resource.is_some() {
        // RFC 9728 §3.1: the well-known path inserted before the resource's; MCP clients
        // also try the root.
        metadata_paths.push(WELL_KNOWN.to_owned());
        let inserted = format!("{WELL_KNOWN}{}", path.trim_end_matches('/'));
        if inserted != WELL_KNOWN {
            metadata_paths.push(inserted);
        }
    }
    let server = Arc::new(Server {
        scheme: if tls.is_some() { "https" } else { "http" },
        opts,
        sessions,
        accepted: tx,
        local: local_addr,
        sources: crate::sources::Sources::default(),
        path: path.to_owned(),
        metadata_paths,
    });
    let task = crate::spawn_task(local, serve(listener, server, read_timeout, tls, local));
    Ok(HttpListener {
        local_addr,
        accepted,
        task,
    })
}

/// Accepts HTTP connections until aborted (the [`HttpListener`] dropped), each served by its
/// own task: with `tls`, after a TLS handshake in that task, bounded by `read_timeout`, so a
/// client that stalls the handshake holds up only itself. `local`: the connections' tasks go
/// on the current `LocalSet` ([`ServerOptions::local_tasks`]).
async fn serve(
    listener: TcpListener,
    server: Arc<Server>,
    read_timeout: Duration,
    tls: Option<ServerTls>,
    local: bool,
) {
    // Each connection watches this channel; the sender dropping with this task tells them
    // all to shut down.
    let (_shutdown, shutdown_rx) = watch::channel(());
    let mut errors = crate::accept::AcceptErrors::new("Streamable HTTP");
    loop {
        match listener.accept().await {
            Ok((tcp, remote)) => {
                // Answers and SSE events are written whole: do not wait for more.
                let _ = tcp.set_nodelay(true);
                let shutdown = shutdown_rx.clone();
                let server = server.clone();
                let Some(tls) = tls.clone() else {
                    let conn = serve_connection(tcp, remote, server, read_timeout, shutdown);
                    crate::spawn_task(local, conn);
                    continue;
                };
                crate::spawn_task(local, async move {
                    match tokio::time::timeout(read_timeout, tls.accept(tcp)).await {
                        Ok(Ok(stream)) => {
                            serve_connection(stream, remote, server, read_timeout, shutdown).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%remote, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%remote, "TLS handshake timed out"),
                    }
                });
            }
            // Out of file descriptors and the like: pause, never spin (`accept.rs`).
            Err(e) => errors.failed(&e).await,
        }
    }
}

/// Serves one HTTP/1 connection, whose request heads must each arrive within
/// `read_timeout`, until it closes; once `shutdown`'s sender is gone, gracefully.
async fn serve_connection<S>(
    stream: S,
    remote: SocketAddr,
    server: Arc<Server>,
    read_timeout: Duration,
    shutdown: watch::Receiver<()>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let result = serve_http1(stream, read_timeout, shutdown, move |request| {
        let server = server.clone();
        async move { route(&server, remote, request).await }
    })
    .await;
    match result {
        Ok(()) => {}
        Err(e) if e.is_timeout() => {
            tracing::debug!(%remote, "closed an HTTP connection: no complete request head in time");
        }
        Err(e) => tracing::debug!(%remote, error = %e, "HTTP connection failed"),
    }
}

/// Serves one HTTP/1 connection with `handler`, on the rules of this crate's listeners:
/// each request head must arrive within `read_timeout` (a client that stalls holds up only
/// itself), and once `shutdown`'s sender is dropped the connection shuts down gracefully
/// (a request in flight is still answered, then it closes). For other listeners of a
/// server that keep the same rules (the arcade's spectator page).
pub async fn serve_http1<S, F, Fut>(
    stream: S,
    read_timeout: Duration,
    mut shutdown: watch::Receiver<()>,
    handler: F,
) -> Result<(), hyper::Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    F: Fn(HttpRequest<Incoming>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = HttpResponse> + Send + 'static,
{
    let service = service_fn(move |request: HttpRequest<Incoming>| {
        let answer = handler(request);
        async move { Ok::<_, Infallible>(answer.await) }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(read_timeout);
    let mut conn = pin!(builder.serve_connection(TokioIo::new(stream), service));
    let mut shutting_down = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => return result,
            // Nothing is ever sent: `changed` fails only once the sender is dropped.
            _ = shutdown.changed(), if !shutting_down => {
                shutting_down = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// The endpoint takes POST, GET and DELETE; the metadata paths GET (and HEAD, which hyper
/// answers without the body); any other path is 404 and another method 405.
async fn route(
    server: &Server,
    remote: SocketAddr,
    request: HttpRequest<Incoming>,
) -> HttpResponse {
    const ENDPOINT_METHODS: HeaderValue = HeaderValue::from_static("GET, POST, DELETE");
    const METADATA_METHODS: HeaderValue = HeaderValue::from_static("GET, HEAD");
    let path = request.uri().path();
    if path == server.path {
        return match *request.method() {
            Method::POST => on_post(server, remote, request).await,
            // A HEAD is not a GET here: a GET opens (and replaces) the session's stream.
            // MCP 2026-07-28: GET and DELETE are a legacy session's (with its
            // `Mcp-Session-Id`); without one they are 405, as a modern endpoint answers,
            // unless the request names a legacy version (then the session id is missing).
            Method::GET | Method::DELETE
                if server.opts.http_modern && is_modern_without_session(request.headers()) =>
            {
                not_allowed(HeaderValue::from_static("POST"))
            }
            Method::GET => on_get(server, remote, request.headers()),
            Method::DELETE => on_delete(server, remote, request.headers()),
            _ => not_allowed(ENDPOINT_METHODS),
        };
    }
    if server.metadata_paths.iter().any(|p| p == path) {
        return match *request.method() {
            Method::GET | Method::HEAD => on_metadata(server, request.headers()),
            _ => not_allowed(METADATA_METHODS),
        };
    }
    StatusCode::NOT_FOUND.into_response()
}

/// `response`, saying that the connection closes after it: a request whose body is not
/// read to its end cannot be followed by another on the same connection, and RFC 9112
/// §9.6 asks a server that closes to say so — else a client that reuses the connection
/// (as MCP's clients do right after a 404 for an ended session, to initialize again) meets
/// a broken pipe (issue #37, item 7).
fn closing(mut response: HttpResponse) -> HttpResponse {
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// 405, with the methods the path takes (RFC 9110 §15.5.6).
fn not_allowed(methods: HeaderValue) -> HttpResponse {
    let mut response = StatusCode::METHOD_NOT_ALLOWED.into_response();
    response.headers_mut().insert(ALLOW, methods);
    response
}

async fn on_post(
    server: &Server,
    remote: SocketAddr,
    request: HttpRequest<Incoming>,
) -> HttpResponse {
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    // Refused before its body is read: the connection cannot carry another request.
    let caller = match admit(server, &headers) {
        Ok(c) => c,
        Err(refusal) => return closing(refusal.into_response()),
    };
    if !accepts(&headers, &[JSON, EVENT_STREAM]) {
        return closing(rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            None,
            "Accept must list application/json and text/event-stream",
        ));
    }
    if !content_type_is(&headers, JSON) {
        return closing(rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            "Content-Type must be application/json",
        ));
    }
    let session = match session_of(server, &headers, &caller, remote) {
        Ok(s) => s,
        Err(refusal) => return closing(refusal.into_response()),
    };
    let limit = server.opts.max_message_size;
    let message = match read_body(body, limit, server.opts.http_read_timeout).await {
        // Text checked as UTF-8 once, not string by string (issue #42); bytes that are not
        // UTF-8 get the decoder's own words for what is wrong with them.
        Ok(bytes) => match std::str::from_utf8(&bytes) {
            Ok(text) => Message::decode_str(text),
            Err(_) => Message::decode(&bytes),
        },
        Err(BodyError::TooLarge(size)) => {
            if let Some(s) = &session {
                s.deliver(Inbound::TooLarge {
                    stream: s.next_stream(),
                    size,
                    limit,
                })
                .await;
            }
            let mut error = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("message too large (limit {limit} bytes)"),
            );
            error.data = Some(serde_json::json!({ "size": size, "limit": limit }));
            let answer = json(
                StatusCode::PAYLOAD_TOO_LARGE,
                &Response::err(None, error).into(),
            );
            // Past the drain, the rest of the body is left unread (`collect_body`).
            return if size > limit.saturating_mul(DRAIN_FACTOR) {
                closing(answer)
            } else {
                answer
            };
        }
        Err(BodyError::Broken) => {
            return rpc_error(StatusCode::BAD_REQUEST, None, "the request body broke off");
        }
        Err(BodyError::TooSlow) => {
            tracing::debug!(%remote, "closed an HTTP connection: no complete request body in time");
            let r = rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                None,
                "the request body did not arrive in time",
            );
            // The rest of the body is never read.
            return closing(r);
        }
    };
    let message = match message {
        Ok(m) => m,
        Err(error) => {
            let answer = error.to_response();
            if let Some(s) = &session {
                s.deliver(Inbound::Malformed {
                    stream: s.next_stream(),
                    error,
                })
                .await;
            }
            return json(StatusCode::BAD_REQUEST, &answer.into());
        }
    };
    let session = match session {
        Some(s) => s,
        // An `initialize` carrying only modern `_meta` is a modern request (-32601, 404).
        None if matches!(&message, Message::Request(r) if r.method == "initialize"
            && !mcpl_protocol::modern::is_modern_initialize(r.params.as_deref())) =>
        {
            match open_session(server, caller.into_principal(), remote).await {
                Ok(s) => s,
                Err(refusal) => return refusal.into_response(),
            }
        }
        // MCP 2026-07-28: a request without a session is modern, served on its own
        // connection (`modern_post`); a notification or a response belongs to a session.
        None => match message {
            Message::Request(request) if server.opts.http_modern => {
                let principal = caller.into_principal();
                return modern_post(server, principal, remote, &headers, request).await;
            }
            // A server that does not serve 2026-07-28 (`ServerOptions::http_modern`): a
            // newer client's probe gets -32601, its signal to fall back to `initialize`.
            Message::Request(r) if r.method == SERVER_DISCOVER => {
                return json(
                    StatusCode::OK,
                    &Response::err(Some(r.id), ErrorObject::method_not_found(&r.method)).into(),
                );
            }
            _ => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    "Mcp-Session-Id is required after initialize",
                );
            }
        },
    };
    let stream = session.next_stream();
    let response = match message {
        Message::Request(request) => answer(server, &session, stream, request).await,
        other => {
            let cancelled = cancelled_request(&other);
            if session
                .deliver(Inbound::Message {
                    stream,
                    message: other,
                })
                .await
            {
                if let Some(id) = cancelled
                    && session.end_cancelled(&id)
                {
                    tracing::debug!(session = %session.short_id(), ?id, "request cancelled by the client; its answer ends");
                }
                StatusCode::ACCEPTED.into_response()
            } else {
                gone()
            }
        }
    };
    with_session_id(response, &session)
}

/// Delivers a request and holds the HTTP request until the session answers it.
///
/// Every request goes through the session, however light: none is answered here, on a
/// path around it (issue #42 weighed one for light calls). A `tools/call`'s answer
/// depends on the session's state in the order its reader takes things in — the
/// lifecycle's phase, the ids in flight (a reused one is refused), the principal's leave
/// to run a loose tool at once (taken back by a delivery read in order after it), and
/// the changes held for the call, which its result carries under the connection's next
/// rev (RFC-014 §5.2, §5.3). None of that is the transport's to know, so a reply made
/// here could contradict what the session would say. What is cut is the cost around the
/// hand-over: a body taken without a timer or a copy, a caller compared without a copy
/// of its name, a hand-over without a cloned sender.
async fn answer(
    server: &Server,
    session: &Arc<Session>,
    stream: crate::StreamId,
    request: Request,
) -> HttpResponse {
    let sse = server.opts.http_response_mode == HttpResponseMode::Sse;
    let id = request.id.clone();
    let progress = super::request_progress_token(request.params.as_deref());
    let Ok((mut rx, guard)) = session.register(id.clone(), sse, progress) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            Some(id),
            "a request with this id is already pending",
        );
    };
    if !session
        .deliver(Inbound::Message {
            stream,
            message: request.into(),
        })
        .await
    {
        return gone();
    }
    if sse {
        return sse_response(None, rx, guard);
    }
    // A JSON answer unless something related comes first (a progress notification of this
    // request): then an SSE stream that carries it, and ends after the response. The
    // channel closes if the session ends.
    match rx.recv().await {
        Some(message) if matches!(message, Message::Response(_)) => {
            drop(guard);
            json(StatusCode::OK, &message)
        }
        Some(first) => sse_response(Some(first), rx, guard),
        None if session.ended.is_cancelled() => gone(),
        // Cancelled by the client (`Session::end_cancelled`): no response will come. MCP
        // has a request's POST answered by an SSE stream or JSON; an SSE stream that ends
        // at once carries the nothing there is to say.
        None => sse_response(None, rx, guard),
    }
}

/// A GET or DELETE that names no session and no legacy protocol version.
fn is_modern_without_session(headers: &HeaderMap) -> bool {
    if headers.contains_key(SESSION_HEADER) {
        return false;
    }
    headers
        .get(VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|v| !is_supported_version(v))
}

/// A request without a session (MCP 2026-07-28, modern): its `_meta` read (-32602), its
/// headers checked against its body (-32020), its version served (-32022), each with 400;
/// then served on a connection of its own, under the principal the request authenticated
/// as — a fresh anonymous one without a token, so nothing it opens outlives it — and that
/// connection ends with its answer. A client that closes the answer first cancels the
/// request: its connection ends, and with it the handler serving it.
async fn modern_post(
    server: &Server,
    principal: Principal,
    remote: SocketAddr,
    headers: &HeaderMap,
    request: Request,
) -> HttpResponse {
    let id = request.id.clone();
    let refuse = |e: ErrorObject| {
        json(
            StatusCode::BAD_REQUEST,
            &Response::err(Some(id.clone()), e).into(),
        )
    };
    let meta = match RequestMeta::read(request.params.as_deref()) {
        Ok(Some(meta)) => meta,
        Ok(None) => {
            let modern_header = headers
                .get(VERSION_HEADER)
                .and_then(|v| v.to_str().ok())
                .is_some_and(mcpl_protocol::modern::is_modern_version);
            if !modern_header {
                // Neither era's: a legacy request that lost its session id, most likely.
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    "Mcp-Session-Id is required after initialize",
                );
            }
            return refuse(ErrorObject::invalid_params(format!(
                "_meta[\"{}\"] is required",
                mcpl_protocol::modern::PROTOCOL_VERSION_KEY
            )));
        }
        Err(e) => return refuse(e),
    };
    if let Err(e) = modern::check_headers(headers, &request, &meta) {
        return refuse(e);
    }
    if let Err(e) = modern::check_param_headers(headers, &request, &server.opts.tool_headers) {
        return refuse(e);
    }
    if let Err(e) = meta.check_version() {
        return refuse(e);
    }
    let session = match open_oneshot(server, principal, remote).await {
        Ok(s) => s,
        // The request was read: its refusal names it (a modern error response has an id).
        Err(refusal) => return rpc_error(refusal.status, Some(id), &refusal.reason),
    };
    let Ok((mut rx, guard)) = session.register(id.clone(), false, None) else {
        // A fresh connection has nothing pending.
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            "a new connection had a request",
        );
    };
    let guard = session::EndOnDrop::new(session.clone(), guard);
    let stream = session.next_stream();
    if !session
        .deliver(Inbound::Message {
            stream,
            message: request.into(),
        })
        .await
    {
        return stopped_before_answering(id);
    }
    // One JSON body with the status the answer calls for, unless something related comes
    // first: then an SSE stream, which carries it and ends after the response.
    match rx.recv().await {
        Some(message) => match &message {
            Message::Response(r) => {
                let status = modern::status_of(r.outcome.as_ref().err());
                drop(guard);
                json(status, &message)
            }
            _ => sse_response(Some(message), rx, guard),
        },
        None => stopped_before_answering(id),
    }
}

/// A modern request's own connection, handed to `accept()`: not in the registry, no id a
/// client could name. An anonymous one holds a slot of its address's anonymous quota while
/// it lasts ([`ServerOptions::anonymous_per_source`], [`ServerOptions::anonymous_max`]):
/// 429, or 503 for the listener's, past it.
async fn open_oneshot(
    server: &Server,
    principal: Principal,
    remote: SocketAddr,
) -> Result<Arc<Session>, Refusal> {
    let opts = &server.opts;
    let anonymous = match principal {
        Principal::Anonymous(_) => {
            let ip = remote.ip();
            let mut slot = take_anonymous(server, ip);
            if matches!(slot, Err(Source::Address(_))) {
                // The address's slots held by legacy sessions it left open (most clients
                // never DELETE) make way, as for a new session (`open_session`): only
                // requests in flight are refused.
                if let Some(oldest) = end_oldest_anonymous(server, ip) {
                    tracing::info!(%ip, session = %oldest, limit = opts.anonymous_per_source, "an address's modern request found its anonymous slots held by sessions; its least recently active one ends");
                }
                slot = take_anonymous(server, ip);
            }
            match slot {
                Ok(slot) => Some((ip, slot)),
                Err(Source::Anonymous) => {
                    let reason = "the server holds as many anonymous requests as it may";
                    return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, reason));
                }
                Err(_) => {
                    let reason = "too many anonymous requests from this address at once";
                    return Err(Refusal::new(StatusCode::TOO_MANY_REQUESTS, reason));
                }
            }
        }
        Principal::Named(_) => None,
    };
    let opening = session::Opening {
        principal,
        anonymous,
        queue_limit: opts.http_queue_limit,
        replay_limit: 0,
        oneshot: true,
    };
    let (session, conn) = start_session(server, opening, format_args!("{remote} modern request"));
    if server.accepted.send(conn).await.is_err() {
        session.end();
        let reason = "the server is not accepting connections";
        return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, reason));
    }
    Ok(session)
}

/// The id a `notifications/cancelled` names (MCP "Cancellation"); none for any other
/// message, or params that do not read.
fn cancelled_request(message: &Message) -> Option<Id> {
    match message {
        Message::Notification(n) if n.method == Cancelled::NAME => n
            .params_as::<<Cancelled as NotificationMethod>::Params>()
            .ok()
            .map(|p| p.request_id),
        _ => None,
    }
}

fn on_get(server: &Server, remote: SocketAddr, headers: &HeaderMap) -> HttpResponse {
    let caller = match admit(server, headers) {
        Ok(c) => c,
        Err(refusal) => return refusal.into_response(),
    };
    if !accepts(headers, &[EVENT_STREAM]) {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            None,
            "Accept must list text/event-stream",
        );
    }
    let session = match session_of(server, headers, &caller, remote) {
        Ok(Some(s)) => s,
        Ok(None) => return rpc_error(StatusCode::BAD_REQUEST, None, "Mcp-Session-Id is required"),
        Err(refusal) => return refusal.into_response(),
    };
    // MCP: a client that lost its stream reopens it with the last event id it read.
    let last_event = headers.get(LAST_EVENT_ID).and_then(|v| v.to_str().ok());
    let rx = session.open_get(last_event);
    // The session's idle time starts again when the stream ends.
    let touch = session::TouchOnDrop(session.clone());
    with_session_id(sse_response(None, rx, touch), &session)
}

fn on_delete(server: &Server, remote: SocketAddr, headers: &HeaderMap) -> HttpResponse {
    let caller = match admit(server, headers) {
        Ok(c) => c,
        Err(refusal) => return refusal.into_response(),
    };
    match session_of(server, headers, &caller, remote) {
        Ok(Some(s)) => {
            tracing::debug!(session = %s.short_id(), "session deleted by the client");
            server.sessions.end(&s.id);
            StatusCode::OK.into_response()
        }
        Ok(None) => rpc_error(StatusCode::BAD_REQUEST, None, "Mcp-Session-Id is required"),
        Err(refusal) => refusal.into_response(),
    }
}

/// A request refused before it reached a session.
struct Refusal {
    status: StatusCode,
    reason: String,
    /// A 401's `WWW-Authenticate` when it says more than `Bearer` (the metadata's URL).
    challenge: Option<HeaderValue>,
}

impl Refusal {
    fn new(status: StatusCode, reason: impl Into<String>) -> Self {
        Refusal {
            status,
            reason: reason.into(),
            challenge: None,
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> HttpResponse {
        let mut r = rpc_error(self.status, None, &self.reason);
        if self.status == StatusCode::UNAUTHORIZED {
            let challenge = self.challenge.unwrap_or(HeaderValue::from_static("Bearer"));
            r.headers_mut().insert(WWW_AUTHENTICATE, challenge);
        }
        r
    }
}

/// The resource a request reached, when the server has protected resource metadata.
fn resource_of(server: &Server, headers: &HeaderMap) -> Option<url::Url> {
    let config = server.opts.protected_resource.as_ref()?;
    let host = headers.get(HOST).and_then(|v| v.to_str().ok());
    resource::resource(config, server.scheme, host, &server.path)
}

/// The protected resource metadata (RFC 9728 §3.2), to anyone: it is public, and a browser
/// client (the MCP Inspector) reads it from another origin. `Host` is still checked on
/// loopback, as for every request, since the document repeats it.
fn on_metadata(server: &Server, headers: &HeaderMap) -> HttpResponse {
    let host = headers.get(HOST).map(|v| v.to_str().unwrap_or("\u{0}"));
    if !server.opts.host_allowed(host, server.local) {
        return Refusal::new(StatusCode::FORBIDDEN, "host not allowed").into_response();
    }
    let (Some(config), Some(resource)) = (
        server.opts.protected_resource.as_ref(),
        resource_of(server, headers),
    ) else {
        return rpc_error(StatusCode::BAD_REQUEST, None, "no usable Host header");
    };
    let body = resource::document(config, &resource).to_string();
    let cors = axum::http::header::ACCESS_CONTROL_ALLOW_ORIGIN;
    (StatusCode::OK, [(CONTENT_TYPE, JSON), (cors, "*")], body).into_response()
}

/// What every request passes first: `Origin` and `Host` (403), then the bearer token (401).
/// The caller is made a principal only where one is needed (a new session or a modern
/// request): a request of a session is only compared with it ([`session_of`]).
fn admit<'s>(server: &'s Server, headers: &HeaderMap) -> Result<Caller<'s>, Refusal> {
    let opts = &server.opts;
    let origin = headers.get(ORIGIN).map(|v| v.to_str().unwrap_or("\u{0}"));
    if !opts.origin_allowed(origin) {
        return Err(Refusal::new(StatusCode::FORBIDDEN, "origin not allowed"));
    }
    let host = headers.get(HOST).map(|v| v.to_str().unwrap_or("\u{0}"));
    if !opts.host_allowed(host, server.local) {
        return Err(Refusal::new(StatusCode::FORBIDDEN, "host not allowed"));
    }
    // A header that is not visible ASCII cannot be a configured token.
    let authorization = headers
        .get(axum::http::header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or(""));
    opts.caller(authorization).map_err(|e| {
        let mut refusal = Refusal::new(StatusCode::UNAUTHORIZED, e.to_string());
        if let Some(resource) = resource_of(server, headers) {
            let invalid = matches!(e, crate::config::AuthError::Invalid);
            refusal.challenge = resource::challenge(&resource::metadata_url(&resource), invalid);
        }
        refusal
    })
}

/// The session a request names (`None` if it names none), checked: known and the
/// requester's (404 either way, so a principal cannot learn whether another's session id
/// exists), a supported protocol version (400). The requester's: the same named principal,
/// or, for an anonymous session, a request without a token from the address that opened it
/// (the id alone is not the credential).
fn session_of(
    server: &Server,
    headers: &HeaderMap,
    caller: &Caller<'_>,
    remote: SocketAddr,
) -> Result<Option<Arc<Session>>, Refusal> {
    let Some(id) = headers.get(SESSION_HEADER) else {
        return Ok(None);
    };
    let session = id.to_str().ok().and_then(|id| server.sessions.get(id));
    let Some(session) = session.filter(|s| match (&s.principal, caller) {
        (Principal::Named(a), Caller::Named(b)) => a == b,
        (Principal::Anonymous(_), Caller::Anonymous) => s.source == Some(remote.ip()),
        _ => false,
    }) else {
        return Err(Refusal::new(StatusCode::NOT_FOUND, "no such session"));
    };
    session.touch();
    if let Some(version) = headers.get(VERSION_HEADER) {
        let version = version.to_str().unwrap_or("");
        if !is_supported_version(version) {
            let reason = format!("unsupported MCP-Protocol-Version {version:?}");
            return Err(Refusal::new(StatusCode::BAD_REQUEST, reason));
        }
    }
    Ok(Some(session))
}

/// Creates a session and hands its connection to `accept()`. Its limits first: the
/// listener's (503 at [`ServerOptions::http_max_sessions`]); an anonymous session's
/// address, where at [`ServerOptions::anonymous_per_source`] its least recently active
/// anonymous session ends (429 only when the address's slots are all WebSocket
/// connections); a named principal's, where at
/// [`ServerOptions::http_sessions_per_principal`] its least recently active session ends.
async fn open_session(
    server: &Server,
    principal: Principal,
    remote: SocketAddr,
) -> Result<Arc<Session>, Refusal> {
    let opts = &server.opts;
    if server.sessions.len() >= opts.http_max_sessions {
        // Named principals keep their room whatever anonymous clients do (issue #37, item
        // 3): at the cap, the least recently active anonymous session makes way for one.
        let oldest = match principal {
            Principal::Named(_) => server.sessions.oldest_anonymous(),
            Principal::Anonymous(_) => None,
        };
        let Some(oldest) = oldest else {
            let reason = "the server holds as many sessions as it may";
            return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, reason));
        };
        tracing::info!(session = %oldest.short_id(), limit = opts.http_max_sessions, "the listener is full; an anonymous session ends to let a named principal in");
        server.sessions.end(&oldest.id);
    }
    let anonymous = match principal {
        Principal::Anonymous(_) => {
            let ip = remote.ip();
            let mut slot = take_anonymous(server, ip);
            if let Err(Source::Anonymous) = slot {
                let reason = "the server holds as many anonymous sessions as it may";
                return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, reason));
            }
            if slot.is_err() {
                // A client that opens sessions and never ends them (most do not DELETE) is
                // not refused: its own least recently active session ends, as a named
                // principal's does. The address never holds more than the cap.
                if let Some(oldest) = end_oldest_anonymous(server, ip) {
                    tracing::info!(%ip, session = %oldest, limit = opts.anonymous_per_source, "an address opened one anonymous session too many; its least recently active one ends");
                }
                slot = take_anonymous(server, ip);
            }
            let Ok(slot) = slot else {
                let reason = "too many anonymous connections from this address";
                return Err(Refusal::new(StatusCode::TOO_MANY_REQUESTS, reason));
            };
            Some((ip, slot))
        }
        Principal::Named(_) => {
            let mine = server.sessions.of(&principal);
            if mine.len() >= opts.http_sessions_per_principal
                && let Some(oldest) = mine.iter().min_by_key(|s| s.last_active())
            {
                tracing::info!(principal = %principal.name(), session = %oldest.short_id(), limit = opts.http_sessions_per_principal, "the principal opened one session too many; its least recently active one ends");
                server.sessions.end(&oldest.id);
            }
            None
        }
    };
    let opening = session::Opening {
        principal: principal.clone(),
        anonymous,
        queue_limit: opts.http_queue_limit,
        replay_limit: opts.http_replay_limit,
        oneshot: false,
    };
    let (session, conn) = start_session(server, opening, format_args!("{remote} session"));
    if server.accepted.send(conn).await.is_err() {
        server.sessions.end(&session.id);
        let reason = "the server is not accepting sessions";
        return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, reason));
    }
    tracing::debug!(session = %session.short_id(), %remote, "session opened");
    Ok(session)
}

/// An anonymous slot for `ip`, within its address's cap and the listener's
/// ([`ServerOptions::anonymous_per_source`], [`ServerOptions::anonymous_max`]); the
/// source whose cap is reached if none.
fn take_anonymous(server: &Server, ip: IpAddr) -> Result<SourceSlot, Source> {
    server.sources.take(&[
        (Source::of(ip), server.opts.anonymous_per_source),
        (Source::Anonymous, server.opts.anonymous_max),
    ])
}

/// Ends the least recently active anonymous session from `ip`'s network, if there is
/// one (its slot is freed); returns its short id.
fn end_oldest_anonymous(server: &Server, ip: IpAddr) -> Option<String> {
    let theirs = server.sessions.anonymous_from(ip);
    let oldest = theirs.iter().min_by_key(|s| s.last_active())?;
    server.sessions.end(&oldest.id);
    Some(oldest.short_id().to_owned())
}

/// A new session, and the connection the server is handed for it (`peer`: who it is
/// with, the session's short id added). A session with an id (not `oneshot`) is kept in
/// the table, where requests find it by that id. Its pump ends the connection when the
/// server drops its `Outbound` first.
fn start_session(
    server: &Server,
    opening: session::Opening,
    // Written once, with the session's id (a string of its own first was one more
    // allocation a modern request, issue #42 item 3).
    peer: std::fmt::Arguments<'_>,
) -> (Arc<Session>, Connection) {
    // The session routes what is written at once (`Router::route`): this channel only tells
    // the pump when every `Outbound` is gone.
    let (out_tx, out_rx) = mpsc::channel(1);
    let (in_tx, in_rx) = mpsc::channel(DEPTH);
    let principal = opening.principal.clone();
    let kept = !opening.oneshot;
    let session = Arc::new(Session::new(
        session::new_session_id(),
        opening,
        in_tx,
        &server.sessions,
    ));
    let info = ConnectionInfo {
        kind: TransportKind::StreamableHttp,
        ordered: false,
        principal: Some(principal),
        peer: format!("{peer} {}…", session.short_id()),
    };
    if kept {
        server.sessions.insert(session.clone());
    }
    crate::spawn_task(
        server.opts.local_tasks,
        session::pump(session.clone(), out_rx, server.sessions.clone()),
    );
    let conn = Connection {
        info,
        outbound: Outbound::with_router(out_tx, session.clone()),
        inbound: in_rx.into(),
    };
    (session, conn)
}

enum BodyError {
    /// Over the limit; the size read, a lower bound of the whole.
    TooLarge(usize),
    Broken,
    /// Not all there within the read timeout.
    TooSlow,
}

/// Reads a body of at most `limit` bytes, the whole of it within `timeout`: a client that
/// trickles a body in, or stops part way, would otherwise hold this task for ever.
///
/// A body that came with its head (a light request's nearly always does) is taken in the
/// first poll, and no timer is set for it (issue #42: the timer was a tenth of the body's
/// cost); one still arriving gets the whole `timeout` from then.
async fn read_body(body: Incoming, limit: usize, timeout: Duration) -> Result<Bytes, BodyError> {
    let mut collect = pin!(collect_body(body, limit));
    let first = std::future::poll_fn(|cx| match collect.as_mut().poll(cx) {
        std::task::Poll::Ready(read) => std::task::Poll::Ready(Some(read)),
        std::task::Poll::Pending => std::task::Poll::Ready(None),
    })
    .await;
    match first {
        Some(read) => read,
        None => tokio::time::timeout(timeout, collect)
            .await
            .unwrap_or(Err(BodyError::TooSlow)),
    }
}

async fn collect_body(mut body: Incoming, limit: usize) -> Result<Bytes, BodyError> {
    // A body of one chunk (most are) is that chunk, not a copy of it; a second chunk
    // starts a buffer.
    let mut whole: Option<Bytes> = None;
    let mut buf = BytesMut::new();
    let mut size = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(chunk) = frame.map_err(|_| BodyError::Broken)?.into_data() else {
            continue; // trailers carry nothing for us
        };
        size = size.saturating_add(chunk.len());
        if size <= limit {
            if whole.is_none() && buf.is_empty() {
                whole = Some(chunk);
            } else {
                if let Some(first) = whole.take() {
                    buf.extend_from_slice(&first);
                }
                buf.extend_from_slice(&chunk);
            }
        } else if size > limit.saturating_mul(DRAIN_FACTOR) {
            break;
        }
    }
    if size > limit {
        Err(BodyError::TooLarge(size))
    } else if buf.is_empty() {
        Ok(whole.unwrap_or_default())
    } else {
        Ok(buf.freeze())
    }
}

/// An SSE response from a channel; `guard` lives as long as the stream does.
/// An SSE answer: `first` (if any), then what `rx` brings, until it closes (after the
/// response). `guard` lives as long as the stream.
/// What an SSE stream carries: a message, with its event id on the GET stream.
trait SseItem: Send + 'static {
    fn into_event(self) -> Event;
}

impl SseItem for Message {
    fn into_event(self) -> Event {
        Event::default().event("message").data(self.encode())
    }
}

/// A GET stream's message, encoded when it was routed (the backlog keeps it so).
impl SseItem for (u64, Arc<str>) {
    fn into_event(self) -> Event {
        let (id, message) = self;
        Event::default()
            .id(id.to_string())
            .event("message")
            .data(&*message)
    }
}

/// What an SSE response reads its events from, in order, until `None`.
trait Receive<T>: Send + 'static {
    fn recv(&mut self) -> impl std::future::Future<Output = Option<T>> + Send;
}

impl<T: Send + 'static> Receive<T> for mpsc::Receiver<T> {
    fn recv(&mut self) -> impl std::future::Future<Output = Option<T>> + Send {
        mpsc::Receiver::recv(self)
    }
}

impl Receive<Message> for session::AnswerRx {
    fn recv(&mut self) -> impl std::future::Future<Output = Option<Message>> + Send {
        session::AnswerRx::recv(self)
    }
}

fn sse_response<T: SseItem, R: Receive<T>, G: Send + 'static>(
    first: Option<T>,
    rx: R,
    guard: G,
) -> HttpResponse {
    let events =
        futures_util::stream::unfold((first, rx, guard), |(first, mut rx, guard)| async move {
            let item = match first {
                Some(item) => item,
                None => rx.recv().await?,
            };
            Some((Ok::<_, Infallible>(item.into_event()), (None, rx, guard)))
        });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn json(status: StatusCode, message: &Message) -> HttpResponse {
    // Made directly: a `String` body would be given a text/plain type first, then replaced.
    let mut response = HttpResponse::new(Body::from(answer_body(message)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(JSON));
    response
}

/// `message`'s JSON text, as [`Message::encode`] writes it. A success response — every
/// light call's answer — is written straight into one buffer of its exact size: its result
/// is JSON text already (`Response::ok_typed` serialized it once), so it is copied, not
/// passed through a serializer again, and nothing grows (issue #42).
fn answer_body(message: &Message) -> Vec<u8> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    const RESULT: &[u8] = br#","result":"#;
    let Message::Response(Response {
        id,
        outcome: Ok(result),
    }) = message
    else {
        return message.encode().into_bytes();
    };
    let result = result.get().as_bytes();
    let id_len = match id {
        Some(Id::Number(_)) => 20,
        Some(Id::String(s)) => s.len() + 2,
        Some(Id::OtherNumber(n)) => n.len(),
        None => 4,
    };
    let mut out = Vec::with_capacity(HEAD.len() + id_len + RESULT.len() + result.len() + 1);
    out.extend_from_slice(HEAD);
    // The id escaped, or its number written, as the serializer writes it; writing to a
    // `Vec` does not fail.
    match id {
        Some(id) => {
            if serde_json::to_writer(&mut out, id).is_err() {
                return message.encode().into_bytes();
            }
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(RESULT);
    out.extend_from_slice(result);
    out.push(b'}');
    out
}

/// An HTTP error with a JSON-RPC error body (MCP allows one, with no id, on 4xx answers).
fn rpc_error(status: StatusCode, id: Option<Id>, message: &str) -> HttpResponse {
    json(
        status,
        &Response::err(id, ErrorObject::new(ErrorCode::INVALID_REQUEST, message)).into(),
    )
}

/// A modern request whose connection ended before it was answered (the server stopping or
/// restarting under it): 503 with -32603, saying that it may have run. **\[project\]** Not
/// 404 "the session ended", as for a legacy session: MCP 2026-07-28 gives 404 to an unknown
/// method and a modern request has no session; a client must treat the outcome as unknown
/// (read the state again, or retry what is safe to retry).
fn stopped_before_answering(id: Id) -> HttpResponse {
    let e = ErrorObject::internal(
        "the server stopped before answering this request: it may have run (read the state again before retrying)",
    );
    json(
        StatusCode::SERVICE_UNAVAILABLE,
        &Response::err(Some(id), e).into(),
    )
}

fn gone() -> HttpResponse {
    rpc_error(StatusCode::NOT_FOUND, None, "the session ended")
}

fn with_session_id(mut response: HttpResponse, session: &Session) -> HttpResponse {
    if let Some(v) = &session.id_header {
        response.headers_mut().insert(SESSION_HEADER, v.clone());
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::to_raw;

    /// The body written straight into its buffer is byte for byte what the serializer
    /// writes, for every kind of id and for what is not a success response.
    #[test]
    fn an_answer_body_is_the_messages_encoding() {
        let result =
            to_raw(&serde_json::json!({"content": [{"type": "text", "text": "ok \"q\" \u{e9}"}]}));
        let ids = [
            Some(Id::Number(7)),
            Some(Id::Number(-9_223_372_036_854_775_808)),
            Some(Id::String("a \"quoted\" \\ id\n\u{1}é".into())),
            Some(Id::String(String::new())),
            Some(Id::OtherNumber("18446744073709551615".into())),
            Some(Id::OtherNumber("1.5".into())),
            None,
        ];
        for id in ids {
            let ok = Message::Response(Response {
                id: id.clone(),
                outcome: Ok(result.clone()),
            });
            let err = Message::Response(Response::err(id, ErrorObject::internal("no")));
            for message in [ok, err] {
                let body = answer_body(&message);
                assert_eq!(String::from_utf8(body).unwrap(), message.encode());
            }
        }
        let note = Message::Notification(mcpl_protocol::Notification {
            method: "notifications/x".into(),
            params: None,
        });
        assert_eq!(answer_body(&note), note.encode().into_bytes());
    }
}

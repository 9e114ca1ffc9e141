//! The Streamable HTTP client end; its behaviour is documented on [`connect`].
//!
//! A driver task reads the outbound channel and makes the POSTs, concurrently, within itself;
//! the GET stream has a task of its own; both stop on `shutdown`.
//!
//! HTTP is HTTP/1.1 over `hyper::client::conn::http1`, through hyper-rustls's connector with
//! our rustls configuration, on connections kept idle between requests by [`pool`]: the
//! client has one endpoint, so it needs no pool keyed by origin (hyper-util's
//! `client::legacy`, used before, cost a fifth of a light call's client work: issue #18).
//!
//! [`pool`]: super::pool

use super::client_modern::{ModernPost, ToolHeaders};
use super::pool::{Pool, PooledBody, RequestBody};
use super::{EVENT_STREAM, JSON, LAST_EVENT_ID, SESSION_HEADER, VERSION_HEADER, content_type_is};
use crate::delivery::{Delivery, DeliveryHook, StreamOrigin};
use crate::{
    ClientOptions, Connection, ConnectionInfo, Inbound, Outbound, StreamId, TransportError,
    TransportKind,
};
use bytes::{Bytes, BytesMut};
use eventsource_stream::Eventsource;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use http_body_util::{BodyDataStream, BodyExt, Full};
use hyper::body::Body;
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use mcpl_protocol::jsonrpc::{DecodeError, RawValue, member};
use mcpl_protocol::{ErrorCode, ErrorObject, Id, Message, Response};
use serde_json::Value;
use std::io::ErrorKind;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The queue depth of each direction.
const DEPTH: usize = 1024;

/// How long closing waits for POSTs of notifications and responses, and for the DELETE.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// How long, after sending `notifications/initialized`, the client holds its next messages
/// until the GET stream's first answer (opened, refused or failed) comes: a server that
/// never answers a GET's head delays a connection by this much, once.
const GET_OPEN_WAIT: Duration = Duration::from_secs(2);

const GET_RETRY_MIN: Duration = Duration::from_millis(100);
const GET_RETRY_MAX: Duration = Duration::from_secs(10);
/// How long to wait before resuming a request's SSE stream the server closed before its
/// response, when the server set no `retry` (the official Python SDK's default).
const RESUME_DELAY: Duration = Duration::from_secs(1);
/// The bounds put on a server's `retry` for resuming: a server cannot make the client spin,
/// nor park a call for longer than its timeout would allow anyway.
const RESUME_DELAY_MIN: Duration = Duration::from_millis(10);
const RESUME_DELAY_MAX: Duration = Duration::from_secs(30);
/// Resumptions in a row that may fail (refused, or no connection) before the call is
/// failed as unanswered; a resumed stream that opens starts the count again.
const RESUME_ATTEMPTS: u32 = 3;

/// How much of an error answer's body is read to explain it.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// An SSE event's pending bytes past this multiple of the limit end the stream: the parser
/// buffers an event whole, so this bounds its memory.
const SSE_CEILING_FACTOR: usize = 4;

const POST_ACCEPT: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const POST_CONTENT_TYPE: HeaderValue = HeaderValue::from_static(JSON);

/// An answer as hyper hands it over: the body arrives frame by frame.
type HttpResponse = hyper::Response<PooledBody>;

/// Connects to the MCP endpoint at `url` (`http://…` or `https://…`). For `http://` no I/O
/// happens until the first message is sent (which should be `initialize`); for `https://` a
/// TLS handshake is made and hung up first, so that a server failing verification with
/// [`ClientOptions::tls`] is [`TransportError::Tls`] here rather than an error answer to
/// every request (each POST verifies the server again).
///
/// [`ClientOptions::tls`]: crate::ClientOptions::tls
///
/// A driver task reads the outbound channel and POSTs each message, concurrently within
/// itself, so POSTs overlap and their answers arrive in any order (the link is unordered).
/// Each POST sends `Accept: application/json, text/event-stream`,
/// `Content-Type: application/json`, the bearer token, `Mcp-Session-Id` once the
/// `initialize` answer assigned one, and `MCP-Protocol-Version` once the `initialize`
/// result named one.
///
/// - A JSON answer is delivered on a fresh [`StreamId`]; an SSE answer event by event on
///   that POST's stream (events other than `message`, and empty ones, are skipped); 202 is
///   nothing.
/// - A POSTed *request* whose POST fails at the HTTP level (refused connection, a non-2xx
///   status, a body that is not JSON-RPC, an SSE stream that ends without the response, an
///   answer over the size limit) gets a made-up error [`Response`] with its id, code
///   [`ErrorCode::CONNECTION_CLOSED`] and, when there was a status, `data.httpStatus` (when
///   there was none, the kind of the I/O error under it, if any, in `data.ioError`:
///   `ConnectionRefused` when nothing listens), so no requester waits forever. A 404 to a request carrying a session id means the session is
///   gone: after that response the connection ends (inbound closes) and the host reconnects.
/// - A request's SSE answer that ends before its response, after an event id, is resumed
///   (MCP 2025-11-25's SSE polling): a GET with `Last-Event-ID` after the server's `retry`
///   (1 s without one, kept within 10 ms..30 s), again while resumed streams end the same
///   way; three failed resumptions in a row fail the request as above.
/// - Once `notifications/initialized` has been POSTed (whether or not its answer came
///   back: the server may have it all the same), the GET stream is opened (405: the
///   server offers none, fine) and reopened whenever it drops while the session lives:
///   at once after a stream that delivered something, else after a backoff of 100 ms
///   doubling to 10 s, or after the `retry` a server sent. `Last-Event-ID` is sent when
///   the server gave event ids.
/// - When every `Outbound` clone is dropped: POSTs of requests are abandoned, POSTs of
///   notifications and responses get [`CLOSE_GRACE`] to finish, the session is DELETEd, and
///   the connection ends.
///
/// - A request whose `_meta` names a protocol version (`io.modelcontextprotocol/
///   protocolVersion`) is MCP 2026-07-28's: its POST carries that version as
///   `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` for `tools/call`, `resources/read`
///   and `prompts/get` (Base64 in the sentinel when not plain header text), and no
///   session id; a non-2xx answer whose body is a JSON-RPC error is that request's answer
///   as the server wrote it (the era's errors come with 400 or 404), and an SSE answer
///   that ends early is not resumed (the era has no resumption).
///
/// Every delivery of a message awaits [`ClientOptions::delivery_hook`] first.
///
/// [`ClientOptions::delivery_hook`]: crate::ClientOptions::delivery_hook
pub async fn connect(url: &str, opts: &ClientOptions) -> Result<Connection, TransportError> {
    let bad = |reason: &str| TransportError::BadUrl {
        url: crate::redact_url(url),
        reason: reason.to_owned(),
    };
    let mut parsed = url::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
    // A fragment is the client's own; path and query go to the server as given.
    parsed.set_fragment(None);
    let uri = Uri::try_from(parsed.as_str()).map_err(|e| bad(&e.to_string()))?;
    let host = host_header(&uri).ok_or_else(|| bad("the URL has no host"))?;
    match parsed.scheme() {
        "http" => {}
        "https" => crate::tls::probe(&opts.tls, &parsed).await?,
        _ => {
            return Err(bad(
                "a Streamable HTTP endpoint is an http:// or https:// URL",
            ));
        }
    }
    let token = match &opts.token {
        Some(t) => Some(HeaderValue::from_str(&format!("Bearer {t}")).map_err(|_| {
            TransportError::Protocol("the token is not a valid header value".to_owned())
        })?),
        None => None,
    };
    let mut tcp = HttpConnector::new();
    // The TLS connector hands `https://` URIs to this one; small messages go out at once.
    tcp.enforce_http(false);
    tcp.set_nodelay(true);
    // HTTP/1 only: the configuration (which has no ALPN) is used as it is, not copied.
    let connector = HttpsConnector::from((tcp, opts.tls.config()));
    let path = origin_form(&uri);
    let http = Pool::new(connector, uri);
    let (out_tx, out_rx) = mpsc::channel(DEPTH);
    let (in_tx, in_rx) = mpsc::channel(DEPTH);
    let client = Arc::new(Client {
        http,
        path,
        host,
        token,
        limit: opts.max_message_size,
        hook: opts.delivery_hook.clone(),
        inbound: in_tx,
        session: Mutex::new(None),
        version: Mutex::new(None),
        next_stream: AtomicU64::new(1),
        get_started: AtomicBool::new(false),
        get_settled: tokio::sync::watch::channel(false).0,
        gone: CancellationToken::new(),
        shutdown: CancellationToken::new(),
        warnings: Mutex::new(crate::LogLimiter::per_peer()),
        tool_headers: Mutex::new(ToolHeaders::default()),
    });
    tokio::spawn(drive(client, out_rx));
    let info = ConnectionInfo {
        kind: TransportKind::StreamableHttp,
        ordered: false,
        principal: None,
        peer: crate::redact_url(url),
    };
    Ok(Connection {
        info,
        outbound: Outbound::new(out_tx),
        inbound: in_rx.into(),
    })
}

struct Client {
    /// The connections to the endpoint's scheme and authority.
    http: Pool,
    /// The endpoint's path and query: the request line's target (origin form).
    path: Uri,
    /// `Host`: the endpoint's authority, made once.
    host: HeaderValue,
    token: Option<HeaderValue>,
    limit: usize,
    hook: Option<DeliveryHook>,
    inbound: mpsc::Sender<Inbound>,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<HeaderValue>>,
    next_stream: AtomicU64,
    get_started: AtomicBool,
    /// The GET stream's first request was answered (any status) or failed.
    get_settled: tokio::sync::watch::Sender<bool>,
    /// The server said the session is gone (404): end without a DELETE.
    gone: CancellationToken,
    /// Every task of this client stops.
    shutdown: CancellationToken,
    /// Warnings about POSTs the server failed, at most a few per interval.
    warnings: Mutex<crate::LogLimiter>,
    /// The listed tools' `x-mcp-header` marks (`client_modern.rs`).
    tool_headers: Mutex<ToolHeaders>,
}

impl Client {
    fn next_stream(&self) -> StreamId {
        StreamId(self.next_stream.fetch_add(1, Ordering::Relaxed))
    }

    /// A request with the headers every request carries; also says whether a session id
    /// went with it (a 404 means "session gone" only then).
    fn request(&self, method: Method, body: Bytes) -> (Request<RequestBody>, bool) {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = self.path.clone();
        let headers = request.headers_mut();
        headers.insert(HOST, self.host.clone());
        if let Some(token) = &self.token {
            headers.insert(AUTHORIZATION, token.clone());
        }
        let session = lock(&self.session).clone();
        let has_session = session.is_some();
        if let Some(id) = session {
            headers.insert(SESSION_HEADER, id);
        }
        if let Some(version) = lock(&self.version).clone() {
            headers.insert(VERSION_HEADER, version);
        }
        (request, has_session)
    }

    async fn deliver(&self, stream: StreamId, origin: StreamOrigin, message: Message) {
        if let Some(hook) = &self.hook {
            hook.before(&Delivery {
                stream,
                origin,
                message: &message,
            })
            .await;
        }
        // A consumer that dropped its inbound receiver simply gets nothing more.
        let _ = self
            .inbound
            .send(Inbound::Message { stream, message })
            .await;
    }

    async fn deliver_raw(&self, item: Inbound) {
        let _ = self.inbound.send(item).await;
    }

    fn start_get(self: &Arc<Self>) {
        if !self.get_started.swap(true, Ordering::Relaxed) {
            let client = self.clone();
            tokio::spawn(async move {
                tokio::select! {
                    () = client.shutdown.cancelled() => {}
                    () = get_loop(client.clone()) => {}
                }
            });
        }
    }

    async fn delete(&self) {
        let (request, has_session) = self.request(Method::DELETE, Bytes::new());
        if !has_session {
            return;
        }
        match tokio::time::timeout(CLOSE_GRACE, self.http.request(request)).await {
            Ok(Ok(r))
                if r.status().is_success() || r.status() == StatusCode::METHOD_NOT_ALLOWED => {}
            Ok(Ok(r)) => tracing::debug!(status = %r.status(), "DELETE of the session refused"),
            Ok(Err(e)) => {
                tracing::debug!(error = %Chain(&e), "DELETE of the session failed")
            }
            Err(_) => tracing::debug!("DELETE of the session timed out"),
        }
    }
}

/// Reads the outbound channel until it ends or the session is gone, then closes.
///
/// The POSTs run concurrently inside this task rather than as a task each: a light call's
/// POST was as dear to spawn as to make (issue #18), and hyper's connections are tasks of
/// their own anyway, so what runs here is only each answer's reading and delivery.
async fn drive(client: Arc<Client>, mut outbound: mpsc::Receiver<Message>) {
    let abandon_requests = CancellationToken::new();
    let mut posts = FuturesUnordered::new();
    // After `notifications/initialized`, what the link sends next waits for the GET stream
    // to open: a server that answers a call on a stream the client opens (SSE polling) or
    // tells a change right after the handshake reaches a client already listening, rather
    // than one whose GET races its first calls (the official suite's sse-retry found it).
    let mut get_gate: Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>> =
        None;
    let orderly = loop {
        tokio::select! {
            () = client.gone.cancelled() => break false,
            Some(ended) = posts.next(), if !posts.is_empty() => {
                // As a task each, a POST that panicked ended alone; so it does here.
                let ended: std::thread::Result<()> = ended;
                if ended.is_err() {
                    tracing::error!("a Streamable HTTP POST panicked; the connection goes on");
                }
            }
            () = async { get_gate.as_mut().expect("guarded").await }, if get_gate.is_some() => {
                get_gate = None;
            }
            message = outbound.recv(), if get_gate.is_none() => match message {
                Some(message) => {
                    if matches!(&message, Message::Notification(n) if n.method == "notifications/initialized") {
                        let mut settled = client.get_settled.subscribe();
                        get_gate = Some(Box::pin(async move {
                            let opened = settled.wait_for(|settled| *settled);
                            if tokio::time::timeout(GET_OPEN_WAIT, opened).await.is_err() {
                                tracing::debug!("the GET stream did not open in time; going on");
                            }
                        }));
                    }
                    let is_request = matches!(message, Message::Request(_));
                    let (client, abandon) = (client.clone(), abandon_requests.clone());
                    posts.push(AssertUnwindSafe(async move {
                        tokio::select! {
                            () = client.shutdown.cancelled() => {}
                            () = abandon.cancelled(), if is_request => {}
                            () = post(client.clone(), message) => {}
                        }
                    }).catch_unwind());
                }
                None => break true,
            },
        }
    };
    drop(outbound);
    if orderly {
        abandon_requests.cancel();
        let _ = tokio::time::timeout(CLOSE_GRACE, async { while posts.next().await.is_some() {} })
            .await;
    }
    // Stops the GET stream (and any POST still running) before the DELETE ends the session.
    client.shutdown.cancel();
    if orderly {
        client.delete().await;
    }
}

/// One POST and what comes back.
async fn post(client: Arc<Client>, message: Message) {
    let (request_id, is_initialize) = match &message {
        Message::Request(r) => (Some(r.id.clone()), r.method == "initialize"),
        _ => (None, false),
    };
    let is_initialized =
        matches!(&message, Message::Notification(n) if n.method == "notifications/initialized");
    let modern = match &message {
        Message::Request(r) => ModernPost::of(r),
        _ => None,
    };
    // SEP-2243: a modern `tools/call` mirrors its marked arguments into headers, and a
    // modern `tools/list`'s answer teaches which they are.
    let (param_headers, lists_tools) = match (&message, &modern) {
        (Message::Request(r), Some(_)) => (
            lock(&client.tool_headers).headers(r),
            r.method == "tools/list",
        ),
        _ => (Vec::new(), false),
    };
    let (mut request, has_session) = client.request(Method::POST, Bytes::from(message.encode()));
    let headers = request.headers_mut();
    headers.insert(ACCEPT, POST_ACCEPT);
    headers.insert(CONTENT_TYPE, POST_CONTENT_TYPE);
    // MCP 2026-07-28: a modern request names its own version and has no session.
    if let Some(modern) = &modern {
        headers.remove(SESSION_HEADER);
        modern.apply(headers, &VERSION_HEADER);
        for (name, value) in param_headers {
            headers.insert(name, value);
        }
    }
    let has_session = has_session && modern.is_none();
    let exchange = Exchange {
        stream: client.next_stream(),
        client: client.clone(),
        request_id,
        is_initialize,
        modern: modern.is_some(),
        lists_tools,
        answered: AtomicBool::new(false),
    };
    let response = match client.http.request(request).await {
        Ok(r) => r,
        Err(e) => {
            let io = io_kind(&e);
            let detail = match (crate::tls::rustls_cause(&e), io) {
                (Some(tls), _) => format!("the POST failed: TLS: {tls}"),
                (None, Some(ErrorKind::ConnectionRefused)) => {
                    "the POST failed: connection refused".to_owned()
                }
                (None, _) => format!("the POST failed: {}", Chain(&e)),
            };
            // The notification may have reached the server all the same (the connection
            // cut on the way back): the server then counts the session as ready and
            // sends on its GET stream, so the client opens it (issue #36 item 16).
            if is_initialized {
                client.start_get();
            }
            return exchange.fail_io(&detail, io).await;
        }
    };
    let status = response.status();
    if is_initialize && let Some(id) = response.headers().get(SESSION_HEADER) {
        *lock(&client.session) = Some(id.clone());
    }
    if !status.is_success() {
        let (detail, said) = error_body(response).await;
        // MCP 2026-07-28: a modern server answers its own errors with 4xx and the JSON-RPC
        // error in the body (-32022, -32021, -32020 with 400, -32601 with 404): that error
        // is the answer, and a client telling the server's era reads it ("Backward
        // Compatibility"). A legacy request keeps the made-up error below.
        if exchange.modern
            && let Some(error) = said
        {
            return exchange.answer_error(error).await;
        }
        exchange.fail(Some(status), &detail).await;
        if status == StatusCode::NOT_FOUND && has_session {
            tracing::info!("the server says the session is gone; closing the connection");
            client.gone.cancel();
        } else if is_initialized {
            // A refused notification leaves the session as it was; the GET stream is the
            // server's to refuse too (the loop stops on a 4xx), not ours to forgo.
            client.start_get();
        }
        return;
    }
    if is_initialized {
        client.start_get();
    }
    let headers = response.headers();
    if status == StatusCode::ACCEPTED {
        // Nothing more; a request answered so is failed below.
    } else if content_type_is(headers, JSON) {
        exchange.read_json(response).await;
    } else if content_type_is(headers, EVENT_STREAM) {
        exchange.read_sse(response).await;
    }
    // A notification's or response's POST is answered by 202 alone: nothing to fail.
    if exchange.request_id.is_some() && !exchange.answered.load(Ordering::Relaxed) {
        exchange
            .fail(
                Some(status),
                "the server's answer held no response to the request",
            )
            .await;
    }
}

/// The state of one POST's answer.
struct Exchange {
    client: Arc<Client>,
    stream: StreamId,
    /// The id of the request POSTed, if it was one.
    request_id: Option<Id>,
    is_initialize: bool,
    /// The request is a modern one (MCP 2026-07-28): its stream is not resumed.
    modern: bool,
    /// The request is a modern `tools/list`: its answer teaches the tools' header marks.
    lists_tools: bool,
    /// The response to the request has been delivered.
    answered: AtomicBool,
}

/// An `initialize` result's `protocolVersion`, read without decoding the rest of the result
/// (a version that is not a string, or a result that is not an object, reads as none).
fn negotiated_version(result: &RawValue) -> Option<String> {
    let version = member(result, "protocolVersion")?;
    serde_json::from_str(version.get()).ok()
}

impl Exchange {
    /// Tells the client something on this exchange's stream could not be read as a message.
    async fn malformed(&self, error: DecodeError) {
        self.client
            .deliver_raw(Inbound::Malformed {
                stream: self.stream,
                error,
            })
            .await
    }

    /// Delivers a message, noting whether it answers our request, and on `initialize`
    /// taking the negotiated version from it before anyone can send with it.
    async fn deliver(&self, mut message: Message) {
        if let (Some(ours), Message::Response(r)) = (&self.request_id, &mut message)
            && r.id.as_ref() == Some(ours)
        {
            self.answered.store(true, Ordering::Relaxed);
            if self.lists_tools
                && let Ok(result) = &mut r.outcome
                && let Some(kept) = lock(&self.client.tool_headers).learn(result)
            {
                *result = kept;
            }
            if self.is_initialize
                && let Ok(result) = &r.outcome
                && let Some(v) = negotiated_version(result)
                && let Ok(v) = HeaderValue::from_str(&v)
            {
                *lock(&self.client.version) = Some(v);
            }
        }
        self.client
            .deliver(self.stream, StreamOrigin::PostResponse, message)
            .await;
    }

    /// Answers our request with the server's own error, read from a refused POST's body.
    async fn answer_error(&self, error: ErrorObject) {
        let Some(id) = self.request_id.clone() else {
            return;
        };
        self.deliver(Response::err(Some(id), error).into()).await;
    }

    /// [`Exchange::fail`] for a POST that got no answer at all: the I/O error's kind, if one
    /// was under it, goes in `data.ioError` (`ConnectionRefused`, …).
    async fn fail_io(&self, detail: &str, io: Option<ErrorKind>) {
        let data = io.map(|k| serde_json::json!({ "ioError": format!("{k:?}") }));
        self.fail_with(None, detail, data).await;
    }

    /// Answers our request, if it was one and is still unanswered, with a made-up error.
    async fn fail(&self, status: Option<StatusCode>, detail: &str) {
        let data = status.map(|s| serde_json::json!({ "httpStatus": s.as_u16() }));
        self.fail_with(status, detail, data).await;
    }

    async fn fail_with(&self, status: Option<StatusCode>, detail: &str, data: Option<Value>) {
        let Some(id) = self
            .request_id
            .clone()
            .filter(|_| !self.answered.load(Ordering::Relaxed))
        else {
            let mut warnings = lock(&self.client.warnings);
            crate::warn_limited!(warnings, ?status, "Streamable HTTP POST: {detail}");
            return;
        };
        tracing::debug!(?status, %id, "Streamable HTTP POST: {detail}");
        let mut error = ErrorObject::new(
            ErrorCode::CONNECTION_CLOSED,
            format!("Streamable HTTP: {detail}"),
        );
        error.data = data;
        self.deliver(Response::err(Some(id), error).into()).await;
    }

    async fn read_json(&self, response: HttpResponse) {
        let limit = self.client.limit;
        let body = match read_limited(response, limit).await {
            Ok(body) => body,
            Err(BodyError::TooLarge(size)) => {
                self.client
                    .deliver_raw(Inbound::TooLarge {
                        stream: self.stream,
                        size,
                        limit,
                    })
                    .await;
                return;
            }
            Err(BodyError::Broken(e)) => {
                return tracing::debug!(error = %e, "the answer's body broke off");
            }
        };
        // MCP 2025-11-25 answers with one object, read straight from the bytes (no tree of
        // the whole message first: issue #18); an array (older servers) item by item.
        let first = body.iter().find(|b| !b.is_ascii_whitespace());
        if first != Some(&b'[') {
            return match Message::decode(&body) {
                Ok(message) => self.deliver(message).await,
                Err(DecodeError::Parse(e)) => {
                    tracing::debug!(error = %e, "the answer's body is not JSON")
                }
                Err(error) => self.malformed(error).await,
            };
        }
        let items = match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Array(items)) => items,
            Ok(single) => vec![single],
            Err(e) => return tracing::debug!(error = %e, "the answer's body is not JSON"),
        };
        for item in items {
            match Message::from_value(item) {
                Ok(message) => self.deliver(message).await,
                Err(error) => self.malformed(error).await,
            }
        }
    }

    async fn read_sse(&self, response: HttpResponse) {
        let mut end = self.read_answer_events(response).await;
        // MCP 2025-11-25 (SSE polling, SEP-1699): a server may close a request's stream
        // after an event id, before the response, and keep what follows for the client to
        // fetch with a GET naming that id, after the `retry` it set. Without this, a call
        // the server ran was failed here as unanswered (issue #39 item 9).
        let mut failures = 0;
        // MCP 2026-07-28: "Resumable SSE streams via `Last-Event-ID` are not supported".
        while !self.modern && self.request_id.is_some() && !self.answered.load(Ordering::Relaxed) {
            let Some(last) = end.last_event_id.take() else {
                return;
            };
            let wait = end
                .retry
                .unwrap_or(RESUME_DELAY)
                .clamp(RESUME_DELAY_MIN, RESUME_DELAY_MAX);
            tokio::time::sleep(wait).await;
            let (mut request, has_session) = self.client.request(Method::GET, Bytes::new());
            let headers = request.headers_mut();
            headers.insert(ACCEPT, HeaderValue::from_static(EVENT_STREAM));
            // An id that is no header value cannot be named: the stream cannot resume.
            let Ok(id) = HeaderValue::from_str(&last) else {
                return;
            };
            headers.insert(LAST_EVENT_ID, id);
            match self.client.http.request(request).await {
                Ok(r) if r.status().is_success() && content_type_is(r.headers(), EVENT_STREAM) => {
                    failures = 0;
                    let next = self.read_answer_events(r).await;
                    end = SseEnd {
                        delivered: next.delivered,
                        retry: next.retry.or(end.retry),
                        last_event_id: next.last_event_id.or(Some(last)),
                    };
                }
                Ok(r) if r.status() == StatusCode::NOT_FOUND && has_session => {
                    tracing::info!("the server says the session is gone; closing the connection");
                    self.client.gone.cancel();
                    return;
                }
                outcome => {
                    match outcome {
                        Ok(r) => {
                            tracing::debug!(status = %r.status(), "resuming a POST's stream: refused")
                        }
                        Err(e) => {
                            tracing::debug!(error = %Chain(&e), "resuming a POST's stream: failed")
                        }
                    }
                    failures += 1;
                    if failures >= RESUME_ATTEMPTS {
                        return;
                    }
                    end.last_event_id = Some(last);
                }
            }
        }
    }

    /// Reads an SSE answer (the POST's or a resumed one) until the response to our request.
    async fn read_answer_events(&self, response: HttpResponse) -> SseEnd {
        read_events(&self.client, response, self.stream, |message| async move {
            self.deliver(message).await;
            self.answered.load(Ordering::Relaxed)
        })
        .await
    }
}

/// How an SSE stream ended.
#[derive(Default)]
struct SseEnd {
    delivered: usize,
    retry: Option<Duration>,
    last_event_id: Option<String>,
}

/// Reads an SSE response, handing each message to `deliver` until it returns `true` (the
/// awaited answer came), the stream ends or breaks. Over-limit events are refused with
/// `TooLarge` and unreadable ones delivered as `Malformed`; the stream goes on.
async fn read_events<F, Fut>(
    client: &Client,
    response: HttpResponse,
    stream: StreamId,
    mut deliver: F,
) -> SseEnd
where
    F: FnMut(Message) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let limit = client.limit;
    let pending = Arc::new(AtomicUsize::new(0));
    let counted = {
        let pending = pending.clone();
        let ceiling = limit.saturating_mul(SSE_CEILING_FACTOR);
        BodyDataStream::new(response.into_body()).map(move |chunk| {
            let chunk = chunk.map_err(SseError::Http)?;
            if pending.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len() > ceiling {
                return Err(SseError::TooLong);
            }
            Ok::<Bytes, SseError>(chunk)
        })
    };
    let mut events = counted.eventsource();
    let mut end = SseEnd::default();
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                tracing::debug!(error = %e, "SSE stream broke off");
                break;
            }
        };
        pending.store(0, Ordering::Relaxed);
        if event.retry.is_some() {
            end.retry = event.retry;
        }
        if !event.id.is_empty() {
            end.last_event_id = Some(event.id.clone());
        }
        // Priming events (an id and empty data) and other event types carry no message.
        if event.event != "message" || event.data.is_empty() {
            continue;
        }
        if event.data.len() > limit {
            client
                .deliver_raw(Inbound::TooLarge {
                    stream,
                    size: event.data.len(),
                    limit,
                })
                .await;
            continue;
        }
        match Message::decode_str(&event.data) {
            Ok(message) => {
                end.delivered += 1;
                if deliver(message).await {
                    break;
                }
            }
            Err(error) => {
                client
                    .deliver_raw(Inbound::Malformed { stream, error })
                    .await
            }
        }
    }
    end
}

#[derive(Debug, thiserror::Error)]
enum SseError {
    #[error("{0}")]
    Http(hyper::Error),
    #[error("an SSE event longer than the hard ceiling")]
    TooLong,
}

/// Keeps the GET stream open while the session lives.
async fn get_loop(client: Arc<Client>) {
    let mut backoff = GET_RETRY_MIN;
    let mut last_event_id: Option<String> = None;
    let mut quiet_streams = 0u32;
    loop {
        let (mut request, has_session) = client.request(Method::GET, Bytes::new());
        let headers = request.headers_mut();
        headers.insert(ACCEPT, HeaderValue::from_static(EVENT_STREAM));
        // An id that is no header value (the server sent it, so it is text) is not sent.
        if let Some(id) = last_event_id
            .as_deref()
            .and_then(|id| HeaderValue::from_str(id).ok())
        {
            headers.insert(LAST_EVENT_ID, id);
        }
        let answered = client.http.request(request).await;
        client.get_settled.send_replace(true);
        let wait = match answered {
            Err(e) => {
                tracing::debug!(error = %Chain(&e), "GET stream request failed");
                backoff
            }
            Ok(r) if r.status() == StatusCode::METHOD_NOT_ALLOWED => {
                tracing::debug!("the server offers no GET stream");
                return;
            }
            Ok(r) if r.status() == StatusCode::NOT_FOUND && has_session => {
                tracing::info!("the server says the session is gone; closing the connection");
                client.gone.cancel();
                return;
            }
            Ok(r) if r.status().is_success() && content_type_is(r.headers(), EVENT_STREAM) => {
                let stream = client.next_stream();
                let end = read_events(&client, r, stream, |message| {
                    let client = client.clone();
                    async move {
                        client
                            .deliver(stream, StreamOrigin::GetStream, message)
                            .await;
                        false
                    }
                })
                .await;
                last_event_id = end.last_event_id.or(last_event_id);
                if end.delivered > 0 {
                    quiet_streams = 0;
                    backoff = GET_RETRY_MIN;
                } else {
                    quiet_streams += 1;
                }
                // Reopen at once after a useful stream (or a first quiet one); a server
                // that keeps closing quiet streams gets the backoff.
                end.retry.unwrap_or(if quiet_streams <= 1 {
                    Duration::ZERO
                } else {
                    backoff
                })
            }
            Ok(r)
                if r.status().is_client_error()
                    && r.status() != StatusCode::CONFLICT
                    && r.status() != StatusCode::TOO_MANY_REQUESTS =>
            {
                tracing::warn!(status = %r.status(), "the server refused the GET stream; not retrying");
                return;
            }
            Ok(r) => {
                tracing::debug!(status = %r.status(), "GET stream not opened; retrying");
                backoff
            }
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
            backoff = (backoff * 2).min(GET_RETRY_MAX);
        }
    }
}

enum BodyError {
    TooLarge(usize),
    Broken(hyper::Error),
}

/// A body whole, refused once it passes `limit` (at once when its `Content-Length` does).
async fn read_limited(response: HttpResponse, limit: usize) -> Result<Bytes, BodyError> {
    let mut body = response.into_body();
    if let Some(len) = body.size_hint().exact()
        && len > limit as u64
    {
        return Err(BodyError::TooLarge(
            usize::try_from(len).unwrap_or(usize::MAX),
        ));
    }
    // One frame (the usual JSON answer) is kept as it came, without a copy.
    let mut first: Option<Bytes> = None;
    let mut buf = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let Ok(chunk) = frame.map_err(BodyError::Broken)?.into_data() else {
            continue; // trailers carry nothing for us
        };
        let held = first.as_ref().map_or(0, Bytes::len) + buf.len();
        if held + chunk.len() > limit {
            return Err(BodyError::TooLarge(held + chunk.len()));
        }
        match first.take() {
            None if buf.is_empty() => first = Some(chunk),
            None => buf.extend_from_slice(&chunk),
            Some(earlier) => {
                buf.extend_from_slice(&earlier);
                buf.extend_from_slice(&chunk);
            }
        }
    }
    Ok(first.unwrap_or_else(|| buf.freeze()))
}

/// Why a POST was refused, for the made-up error: the server's JSON-RPC error message if
/// its body held one, else the status; and that error, if there was one.
async fn error_body(response: HttpResponse) -> (String, Option<ErrorObject>) {
    let status = response.status();
    let said = match read_limited(response, ERROR_BODY_LIMIT).await {
        Ok(body) => match Message::decode(&body) {
            Ok(Message::Response(Response {
                outcome: Err(e), ..
            })) => Some(e),
            _ => None,
        },
        Err(_) => None,
    };
    match said {
        Some(error) => (format!("HTTP {status}: {}", error.message), Some(error)),
        None => (format!("HTTP {status}"), None),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The request target for `uri`: its path and query (`/` when it has no path).
fn origin_form(uri: &Uri) -> Uri {
    match uri.path_and_query() {
        Some(pq) if !pq.as_str().is_empty() => Uri::from(pq.clone()),
        _ => Uri::from_static("/"),
    }
}

/// `Host` for requests to `uri`, as hyper-util writes it: the host, and the port unless it
/// is the scheme's default.
fn host_header(uri: &Uri) -> Option<HeaderValue> {
    let host = uri.host()?;
    let default = if uri.scheme_str() == Some("https") {
        443
    } else {
        80
    };
    let value = match uri.port_u16() {
        Some(port) if port != default => format!("{host}:{port}"),
        _ => host.to_owned(),
    };
    HeaderValue::from_str(&value).ok()
}

/// An error and its causes, `: `-separated: the pool's own words ("connecting failed") say
/// little without what is under them.
struct Chain<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

/// The kind of the I/O error somewhere under `e`, if any (a refused connection is one).
fn io_kind(e: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        cause = c.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only an object's string `protocolVersion` is the negotiated version.
    #[test]
    fn the_negotiated_version_is_an_objects_string_member() {
        let version = |text: &str| negotiated_version(&RawValue::from_string(text.into()).unwrap());
        assert_eq!(
            version(r#"{"capabilities":{},"protocolVersion":"2025-06-18"}"#),
            Some("2025-06-18".to_owned())
        );
        assert_eq!(version(r#"{"protocolVersion":20250618}"#), None);
        assert_eq!(version(r#"["2025-06-18"]"#), None, "an array is no object");
        assert_eq!(version("{}"), None);
    }

    #[test]
    fn the_request_target_is_the_endpoints_path_and_query() {
        let target = |url: &str| origin_form(&Uri::try_from(url).unwrap()).to_string();
        assert_eq!(target("http://example.test/mcp"), "/mcp");
        assert_eq!(target("http://example.test:8080/mcp?a=1&b"), "/mcp?a=1&b");
        assert_eq!(target("http://example.test"), "/");
        assert_eq!(target("https://example.test/"), "/");
    }

    #[test]
    fn the_host_header_names_the_port_unless_it_is_the_schemes_default() {
        let host = |url: &str| host_header(&Uri::try_from(url).unwrap()).unwrap();
        assert_eq!(host("http://example.test/mcp"), "example.test");
        assert_eq!(host("http://example.test:80/mcp"), "example.test");
        assert_eq!(host("http://example.test:443/mcp"), "example.test:443");
        assert_eq!(host("https://example.test:443/mcp"), "example.test");
        assert_eq!(
            host("https://example.test:8443/mcp?a=1"),
            "example.test:8443"
        );
        assert_eq!(host("http://[::1]:8080/mcp"), "[::1]:8080");
    }
}

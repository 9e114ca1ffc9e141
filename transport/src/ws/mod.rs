//! The WebSocket transport: one JSON-RPC message per text frame, both ways, ordered.
//!
//! - [`bind`] / [`WsListener::accept`]: the server end. The upgrade request is checked
//!   before a connection exists: an `Origin` that [`ServerOptions::origin_allowed`] refuses
//!   gets 403, and a missing or unknown `Authorization: Bearer` token gets 401 with
//!   `WWW-Authenticate: Bearer` (unless [`ServerOptions::allow_anonymous`] lets a request
//!   without one in). The server pings every [`ServerOptions::ws_ping_interval`] and closes a
//!   peer still silent at the next ping (1008); pongs are answered automatically on both ends.
//!   A client offering the `mcp` subprotocol gets it.
//! - [`connect`]: the client end, presenting [`ClientOptions::token`]; a 401 at the upgrade is
//!   [`TransportError::Unauthorized`], another refusal [`TransportError::Rejected`], a server
//!   that fails TLS verification [`TransportError::Tls`].
//!
//! With [`ServerOptions::tls`] the listener serves `wss://`: each connection's TLS handshake
//! runs in its own task before the upgrade, both within the handshake timeout.
//!
//! What is read: a text frame over `max_message_size` is refused with [`Inbound::TooLarge`]
//! and the link goes on. Tungstenite's own limit is set to [`link::HARD_CEILING_FACTOR`]
//! times ours, since it fails the connection: a message past that closes the link with 1009.
//! A binary frame is [`Inbound::Malformed`] (a parse error) and the link goes on, as for any
//! unreadable message, rather than closing with 1003. Close codes sent: 1000 when the
//! outbound side is dropped, 1008 for a ping timeout, 1009 past the ceiling.
//!
//! [`Inbound::TooLarge`]: crate::Inbound::TooLarge
//! [`Inbound::Malformed`]: crate::Inbound::Malformed

mod gather;
mod link;

pub use link::{CLOSE_TIMEOUT, DEPTH, FRAGMENT, HARD_CEILING_FACTOR, config, depth_bytes};

use crate::sources::Source;
use crate::{
    ClientOptions, Connection, ConnectionInfo, ServerOptions, TransportError, TransportKind,
};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode, header};

/// How long a TCP peer may take to complete the upgrade (and the TLS handshake before it).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections accepted but not yet taken by [`WsListener::accept`].
const ACCEPT_QUEUE: usize = 64;

/// The subprotocol name a client may offer.
const SUBPROTOCOL: &str = "mcp";

/// A listening WebSocket server. Dropping it stops accepting; links already made go on.
#[derive(Debug)]
pub struct WsListener {
    local_addr: SocketAddr,
    accepted: mpsc::Receiver<Connection>,
    task: JoinHandle<()>,
}

impl WsListener {
    /// The address bound (useful after binding port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The next authenticated connection; `None` if the listener failed.
    pub async fn accept(&mut self) -> Option<Connection> {
        self.accepted.recv().await
    }
}

impl Drop for WsListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Binds a WebSocket server to `addr` (bind `127.0.0.1` unless other machines must reach it).
pub async fn bind(addr: SocketAddr, opts: Arc<ServerOptions>) -> io::Result<WsListener> {
    let listener = crate::accept::bind(addr)?;
    let local_addr = listener.local_addr()?;
    crate::warn_if_anonymous_beyond_loopback(&opts, local_addr, "WebSocket");
    let (tx, accepted) = mpsc::channel(ACCEPT_QUEUE);
    let local = opts.local_tasks;
    let task = crate::spawn_task(local, accept_loop(listener, local_addr, opts, tx));
    Ok(WsListener {
        local_addr,
        accepted,
        task,
    })
}

async fn accept_loop(
    listener: TcpListener,
    local: SocketAddr,
    opts: Arc<ServerOptions>,
    tx: mpsc::Sender<Connection>,
) {
    let mut errors = crate::accept::AcceptErrors::new("WebSocket");
    let sources = crate::sources::Sources::default();
    loop {
        // Out of file descriptors and the like: pause, never spin (`accept.rs`).
        let (tcp, remote) = errors.accept(&listener).await;
        if tx.is_closed() {
            return;
        }
        // One JSON-RPC message per frame, written at once: do not wait for more.
        let _ = tcp.set_nodelay(true);
        let (opts, tx, sources) = (opts.clone(), tx.clone(), sources.clone());
        crate::spawn_task(opts.local_tasks, async move {
            // The TLS handshake, like the upgrade, runs here and under the same bound: a
            // peer that stalls either holds up only this task.
            let upgrading = async {
                match opts.tls.clone() {
                    None => upgrade(tcp, remote, local, opts, sources).await,
                    Some(tls) => match tls.accept(tcp).await {
                        Ok(stream) => upgrade(stream, remote, local, opts, sources).await,
                        Err(e) => {
                            tracing::debug!(%remote, error = %e, "TLS handshake failed");
                            None
                        }
                    },
                }
            };
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, upgrading).await {
                Ok(Some(conn)) => {
                    let _ = tx.send(conn).await;
                }
                Ok(None) => {}
                Err(_) => tracing::debug!(%remote, "websocket handshake timed out"),
            }
        });
    }
}

/// Checks the upgrade request and completes it; `None` if it was refused or failed.
#[allow(
    clippy::result_large_err,
    reason = "the shape of tungstenite's handshake callback"
)]
async fn upgrade<S>(
    stream: S,
    remote: SocketAddr,
    local: SocketAddr,
    opts: Arc<ServerOptions>,
    sources: crate::sources::Sources,
) -> Option<Connection>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut principal = None;
    let mut slot = None;
    let check = |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
        let headers = req.headers();
        let origin = headers
            .get(header::ORIGIN)
            .map(|v| v.to_str().unwrap_or("\u{0}"));
        if !opts.origin_allowed(origin) {
            return Err(refusal(StatusCode::FORBIDDEN, "origin not allowed"));
        }
        let host = headers
            .get(header::HOST)
            .map(|v| v.to_str().unwrap_or("\u{0}"));
        if !opts.host_allowed(host, local) {
            return Err(refusal(StatusCode::FORBIDDEN, "host not allowed"));
        }
        // A header that is not visible ASCII cannot be a configured token.
        let authorization = headers
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap_or(""));
        match opts.authenticate(authorization) {
            Ok(p @ crate::Principal::Anonymous(_)) => {
                // Each anonymous connection is a principal of its own: bound per address
                // and in all.
                let limits = [
                    (Source::of(remote.ip()), opts.anonymous_per_source),
                    (Source::Anonymous, opts.anonymous_max),
                ];
                match sources.take(&limits) {
                    Ok(s) => slot = Some(s),
                    Err(Source::Anonymous) => {
                        let reason = "the server holds as many anonymous connections as it may";
                        return Err(refusal(StatusCode::SERVICE_UNAVAILABLE, reason));
                    }
                    Err(_) => {
                        let reason = "too many anonymous connections from this address";
                        return Err(refusal(StatusCode::TOO_MANY_REQUESTS, reason));
                    }
                }
                principal = Some(p);
            }
            Ok(p) => {
                // A named principal's connections are bounded too: each may hold answers
                // its client does not read (`link::depth_bytes`).
                let limits = [(
                    Source::Principal(p.name().into()),
                    opts.ws_connections_per_principal,
                )];
                match sources.take(&limits) {
                    Ok(s) => slot = Some(s),
                    Err(_) => {
                        let reason = "too many WebSocket connections for this principal";
                        return Err(refusal(StatusCode::TOO_MANY_REQUESTS, reason));
                    }
                }
                principal = Some(p);
            }
            Err(e) => {
                let mut r = refusal(StatusCode::UNAUTHORIZED, &e.to_string());
                r.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return Err(r);
            }
        }
        let offered = headers
            .get_all(header::SEC_WEBSOCKET_PROTOCOL)
            .iter()
            .filter_map(|v| v.to_str().ok());
        if offered
            .flat_map(|v| v.split(','))
            .any(|p| p.trim() == SUBPROTOCOL)
        {
            resp.headers_mut().insert(
                header::SEC_WEBSOCKET_PROTOCOL,
                HeaderValue::from_static(SUBPROTOCOL),
            );
        }
        Ok(resp)
    };
    let config = link::config(opts.max_message_size);
    let ws =
        // Gathered writes: a long message's fragments reach the socket in one write.
        match tokio_tungstenite::accept_hdr_async_with_config(
            gather::Gather::new(stream),
            check,
            Some(config),
        )
        .await
        {
            Ok(ws) => ws,
            Err(e) => {
                tracing::debug!(%remote, error = %e, "websocket upgrade refused or failed");
                return None;
            }
        };
    let info = ConnectionInfo {
        kind: TransportKind::WebSocket,
        ordered: true,
        principal,
        peer: remote.to_string(),
    };
    Some(link::run(
        ws,
        info,
        opts.max_message_size,
        opts.ws_ping_interval,
        slot,
        opts.local_tasks,
    ))
}

fn refusal(status: StatusCode, reason: &str) -> ErrorResponse {
    let mut r = ErrorResponse::new(Some(format!("{reason}\n")));
    *r.status_mut() = status;
    r
}

/// Opens a WebSocket to `url` (`ws://…`, or `wss://…` verified with
/// [`ClientOptions::tls`]), presenting `opts.token` as a bearer token.
pub async fn connect(url: &str, opts: &ClientOptions) -> Result<Connection, TransportError> {
    let bad = |reason: String| TransportError::BadUrl {
        url: crate::redact_url(url),
        reason,
    };
    let mut request = url.into_client_request().map_err(|e| bad(e.to_string()))?;
    if let Some(token) = &opts.token {
        let value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            TransportError::Protocol("the token is not a valid header value".to_owned())
        })?;
        request.headers_mut().insert(header::AUTHORIZATION, value);
    }
    let host = request.uri().host().unwrap_or_default().to_owned();
    // tungstenite uses the connector for `wss://` only.
    let connector = tokio_tungstenite::Connector::Rustls(opts.tls.config());
    let config = link::config(opts.max_message_size);
    let (ws, _) = tokio_tungstenite::connect_async_tls_with_config(
        request,
        Some(config),
        true,
        Some(connector),
    )
    .await
    .map_err(|e| {
        if let Some(tls) = crate::tls::failure(&e, &host) {
            return tls;
        }
        match e {
            WsError::Http(resp) if resp.status() == StatusCode::UNAUTHORIZED => {
                TransportError::Unauthorized
            }
            WsError::Http(resp) => TransportError::Rejected {
                status: resp.status().as_u16(),
            },
            WsError::Io(e) => TransportError::Io(e),
            WsError::Url(e) => bad(e.to_string()),
            WsError::Tls(e) => bad(e.to_string()),
            other => TransportError::Protocol(other.to_string()),
        }
    })?;
    let info = ConnectionInfo {
        kind: TransportKind::WebSocket,
        ordered: true,
        principal: None,
        peer: crate::redact_url(url),
    };
    Ok(link::run(
        ws,
        info,
        opts.max_message_size,
        None,
        None,
        false,
    ))
}

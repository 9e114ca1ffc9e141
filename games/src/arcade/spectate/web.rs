//! The spectator page's HTTP listener (`mcpl-arcade serve --web ADDR`, `sim demo --web
//! ADDR`): the page, and its stream of the games as they change.
//!
//! | path | what |
//! |---|---|
//! | `/` | the page (HTML); `/app.js` and `/app.css` beside it |
//! | `/events` | the games as server-sent events: `snapshot` (every game, `{"games": […]}`), then `game` (one [`GameView`](super::GameView) new or changed) and `gone` (`{"id": N}`) |
//! | `/games` | every game now, as JSON (`{"games": […]}`) |
//!
//! **Who may watch** ([`Access`], **\[project\]**). Games are private to their players
//! unless the operator says otherwise: a listener is made either with a watch token, which
//! every request must carry, or explicitly public. The token comes as `?token=` on any
//! path (on `/` it is then kept in a cookie, `HttpOnly`, `SameSite=Strict`, and the page
//! reloads without it so it leaves the address bar), as that cookie, or as `Authorization:
//! Bearer`. A request without it is refused with 401 and a page saying what to do. The
//! token shows every game: it is the operator's, not a player's.
//!
//! **Bounds.** At most [`WebOptions::max_connections`] connections at once, the page's
//! stream among them; one more is answered `503 Service Unavailable` with `Retry-After`
//! and closed (a browser's `EventSource` retries by itself). A request head must arrive
//! within [`WebOptions::read_timeout`] (so must a TLS handshake), or the connection is
//! closed. What a slow watcher misses is bounded by the gallery's ring (module docs of
//! [`super`]): it is sent a fresh snapshot instead. A `Host` that is not a loopback name
//! (or one of [`WebOptions::allowed_hosts`]) is refused with 403 on a loopback listener,
//! as on the arcade's other listeners (DNS rebinding).

use super::{Gallery, SeenShown, Shown};
use axum::body::Body;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_TYPE, COOKIE, HOST, LOCATION, SET_COOKIE, WWW_AUTHENTICATE,
};
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use hyper::body::Incoming;
use mcpl_transport::accept::AcceptErrors;
use mcpl_transport::{ServerOptions, ServerTls};
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;

/// The page.
const PAGE: &str = include_str!("page/index.html");
/// Its script.
const SCRIPT: &str = include_str!("page/app.js");
/// Its style.
const STYLE: &str = include_str!("page/app.css");

/// What a refused connection is told, whole.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 62\r\nConnection: close\r\n\r\nToo many spectators are connected; try again in a few seconds.";

/// The default bound on connections at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;

/// Who may watch. See the module docs.
#[derive(Clone, PartialEq, Eq)]
pub enum Access {
    /// Requests must carry this token.
    Token(String),
    /// Anyone who reaches the listener may watch every game.
    Public,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Access::Token(_) => f.write_str("Token(…)"),
            Access::Public => f.write_str("Public"),
        }
    }
}

/// How the page is served.
#[derive(Debug, Clone)]
pub struct WebOptions {
    /// Who may watch.
    pub access: Access,
    /// The most connections at once (default [`DEFAULT_MAX_CONNECTIONS`]); one more is
    /// answered 503 and closed.
    pub max_connections: usize,
    /// How long a client may take to send a request head (and a TLS handshake); default
    /// 10 s. It also closes a kept-alive connection idle that long between requests.
    pub read_timeout: Duration,
    /// How often an idle event stream sends a comment, so that proxies keep it open and a
    /// dead client is found (default 15 s).
    pub keep_alive: Duration,
    /// `Host` names accepted besides loopback ones on a loopback listener.
    pub allowed_hosts: Vec<String>,
    /// Serve HTTPS with this certificate (the arcade's `--tls-cert`).
    pub tls: Option<ServerTls>,
}

impl WebOptions {
    /// The defaults, with `access`.
    pub fn new(access: Access) -> Self {
        WebOptions {
            access,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            read_timeout: Duration::from_secs(10),
            keep_alive: Duration::from_secs(15),
            allowed_hosts: Vec::new(),
            tls: None,
        }
    }
}

/// The page's listener. Dropping it stops accepting and ends every connection it serves.
#[derive(Debug)]
pub struct WebListener {
    local_addr: SocketAddr,
    url: String,
    task: JoinHandle<()>,
}

impl WebListener {
    /// The address bound (useful after binding port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The page: `http://ADDR/` (`https://` with TLS).
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for WebListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What every connection shares.
struct Site {
    gallery: Arc<Gallery>,
    opts: WebOptions,
    /// For its `Host` check only.
    hosts: ServerOptions,
    local: SocketAddr,
    cookie: String,
}

/// Serves the page for `gallery` on `addr`. Must run inside a tokio runtime.
pub async fn serve(
    gallery: Arc<Gallery>,
    addr: SocketAddr,
    opts: WebOptions,
) -> io::Result<WebListener> {
    let listener = TcpListener::bind(addr).await?;
    let local_addr = listener.local_addr()?;
    let scheme = if opts.tls.is_some() { "https" } else { "http" };
    let site = Arc::new(Site {
        gallery,
        hosts: ServerOptions {
            allowed_hosts: opts.allowed_hosts.clone(),
            ..Default::default()
        },
        local: local_addr,
        // One per port: cookies do not tell ports apart, two arcades on one host must not
        // overwrite each other's.
        cookie: format!("mcpl_watch_{}", local_addr.port()),
        opts,
    });
    let task = tokio::spawn(accept_loop(listener, site));
    Ok(WebListener {
        local_addr,
        url: format!("{scheme}://{local_addr}/"),
        task,
    })
}

/// Accepts until aborted. Each connection takes a permit for its life; without one it is
/// told 503 by a task of its own (at most as many of those at once as permits, past that
/// it is just closed).
async fn accept_loop(listener: TcpListener, site: Arc<Site>) {
    // Connections watch this; it is dropped with this task, which ends them.
    let (_shutdown, shutdown_rx) = watch::channel(());
    let permits = Arc::new(Semaphore::new(site.opts.max_connections));
    let refusals = Arc::new(Semaphore::new(site.opts.max_connections.max(1)));
    let mut errors = AcceptErrors::new("spectator page");
    loop {
        // A connection's own error costs nothing; out of file descriptors and the like:
        // pause rather than spin.
        let (tcp, remote) = errors.accept(&listener).await;
        let _ = tcp.set_nodelay(true);
        match permits.clone().try_acquire_owned() {
            Ok(permit) => {
                let (site, shutdown) = (site.clone(), shutdown_rx.clone());
                tokio::spawn(async move {
                    connection(tcp, remote, site, shutdown).await;
                    drop(permit);
                });
            }
            Err(_) => {
                tracing::debug!(%remote, "spectator page: at its connection bound; 503");
                if let Ok(permit) = refusals.clone().try_acquire_owned() {
                    let (timeout, tls) = (site.opts.read_timeout, site.opts.tls.is_some());
                    tokio::spawn(async move {
                        refuse(tcp, timeout, tls).await;
                        drop(permit);
                    });
                }
            }
        }
    }
}

/// Tells a connection over the bound 503 and closes it: after its request head (a client
/// given an answer before it asked takes it for garbage), read for at most `timeout` and
/// 16 KiB; then what else it sent is read for a moment, so that it reads the answer
/// rather than a reset. With TLS the answer would not be understood: it is just closed.
async fn refuse(mut tcp: TcpStream, timeout: Duration, tls: bool) {
    const MOST: usize = 16 * 1024;
    let answer = async {
        let mut head = Vec::with_capacity(1024);
        let mut buf = [0u8; 1024];
        while !tls && head.len() < MOST && !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = tcp.read(&mut buf).await?;
            if n == 0 {
                return Ok(());
            }
            head.extend_from_slice(&buf[..n]);
        }
        if !tls {
            tcp.write_all(BUSY).await?;
        }
        tcp.shutdown().await?;
        let mut left = MOST;
        while left > 0 {
            let n = tcp.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            left = left.saturating_sub(n);
        }
        io::Result::Ok(())
    };
    let _ = tokio::time::timeout(timeout.min(Duration::from_secs(2)), answer).await;
}

/// Serves one connection (after its TLS handshake, with TLS) until it closes or the
/// listener goes.
async fn connection(
    tcp: TcpStream,
    remote: SocketAddr,
    site: Arc<Site>,
    shutdown: watch::Receiver<()>,
) {
    match site.opts.tls.clone() {
        None => http(tcp, remote, site, shutdown).await,
        Some(tls) => match tokio::time::timeout(site.opts.read_timeout, tls.accept(tcp)).await {
            Ok(Ok(stream)) => http(stream, remote, site, shutdown).await,
            Ok(Err(e)) => {
                tracing::debug!(%remote, error = %e, "spectator page: TLS handshake failed")
            }
            Err(_) => tracing::debug!(%remote, "spectator page: TLS handshake timed out"),
        },
    }
}

async fn http<S>(stream: S, remote: SocketAddr, site: Arc<Site>, shutdown: watch::Receiver<()>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let read_timeout = site.opts.read_timeout;
    let streams_end = shutdown.clone();
    let result =
        mcpl_transport::http::serve_http1(stream, read_timeout, shutdown, move |request| {
            let answer = route(&site, &request, streams_end.clone());
            async move { answer }
        })
        .await;
    if let Err(e) = result {
        tracing::debug!(%remote, error = %e, "spectator page: connection ended");
    }
}

/// Answers one request: the `Host` check, the method, the token, then the path.
fn route(site: &Site, request: &Request<Incoming>, shutdown: watch::Receiver<()>) -> Response {
    let headers = request.headers();
    let host = headers.get(HOST).and_then(|h| h.to_str().ok());
    if !site.hosts.host_allowed(host, site.local) {
        return plain(
            StatusCode::FORBIDDEN,
            "This Host is not one this page answers to.",
        );
    }
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "Only GET is answered here.");
        r.headers_mut().insert(
            axum::http::header::ALLOW,
            HeaderValue::from_static("GET, HEAD"),
        );
        return r;
    }
    let path = request.uri().path();
    let query_token = request.uri().query().and_then(token_in_query);
    let allowed = match &site.opts.access {
        Access::Public => true,
        Access::Token(token) => [
            query_token.as_deref(),
            cookie(headers, &site.cookie).as_deref(),
            bearer(headers),
        ]
        .into_iter()
        .flatten()
        .any(|given| same(given, token)),
    };
    if !allowed {
        return refused(query_token.is_some());
    }
    // A token in the page's address is kept in a cookie, and the address loses it.
    if let (Access::Token(token), Some(_), "/") = (&site.opts.access, &query_token, path) {
        let secure = if site.opts.tls.is_some() {
            "; Secure"
        } else {
            ""
        };
        let set = format!(
            "{}={token}; HttpOnly; SameSite=Strict; Path=/{secure}",
            site.cookie
        );
        let mut r = StatusCode::SEE_OTHER.into_response();
        r.headers_mut()
            .insert(LOCATION, HeaderValue::from_static("/"));
        if let Ok(set) = HeaderValue::from_str(&set) {
            r.headers_mut().insert(SET_COOKIE, set);
        }
        return private(r);
    }
    match path {
        "/" => asset(PAGE, "text/html; charset=utf-8"),
        "/app.js" => asset(SCRIPT, "text/javascript; charset=utf-8"),
        "/app.css" => asset(STYLE, "text/css; charset=utf-8"),
        "/games" => {
            let games = Gallery::ordered(&super::lock(&site.gallery.inner));
            let mut r = snapshot_json(&games).into_response();
            r.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            private(r)
        }
        "/events" => private(events(site, shutdown)),
        _ => plain(StatusCode::NOT_FOUND, "Nothing here: the page is at /."),
    }
}

/// The page's stream: the watcher's reads as events until the listener goes; a comment
/// when idle ([`WebOptions::keep_alive`]).
fn events(site: &Site, shutdown: watch::Receiver<()>) -> Response {
    let watcher = site.gallery.watch();
    let stream = futures_util::stream::unfold(
        (watcher, shutdown),
        |(mut watcher, mut shutdown)| async move {
            let seen = tokio::select! {
                seen = watcher.next_shown() => seen,
                _ = shutdown.changed() => return None,
            };
            let event = match seen {
                SeenShown::Snapshot(games) => Event::default()
                    .event("snapshot")
                    .data(snapshot_json(&games)),
                SeenShown::Game(g) => Event::default().event("game").data(&*g.json),
                SeenShown::Gone(id) => Event::default()
                    .event("gone")
                    .data(format!("{{\"id\":{id}}}")),
            };
            Some((Ok::<_, Infallible>(event), (watcher, shutdown)))
        },
    );
    let mut r = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(site.opts.keep_alive))
        .into_response();
    // A proxy that buffers answers would hold the stream back.
    r.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// `{"games": […]}`, from each game's JSON as published.
fn snapshot_json(games: &[Shown]) -> String {
    let mut s = String::from("{\"games\":[");
    for (i, g) in games.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&g.json);
    }
    s.push_str("]}");
    s
}

/// A file of the page; the script and style are its own (a policy that allows no other).
fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut r = Response::new(Body::from(body));
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
    );
    private(r)
}

/// Not cached, not sniffed, no referrer (the page's address may carry the token).
fn private(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    r
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut r = (status, text).into_response();
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    private(r)
}

/// 401, saying what to do.
fn refused(wrong_token: bool) -> Response {
    let why = if wrong_token {
        "This token is not the one this arcade gives spectators."
    } else {
        "The games here are private to their players."
    };
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>Private games</title>\n<p>{why} Open the page \
         with the address the arcade's operator gives spectators: it ends in <code>?token=…</code> \
         (<code>mcpl-arcade serve --web ADDR --web-token TOKEN</code>).</p>\n"
    );
    let mut r = (StatusCode::UNAUTHORIZED, body).into_response();
    let h = r.headers_mut();
    h.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"mcpl-arcade spectators\""),
    );
    private(r)
}

/// `token=…` in a query (percent-decoded).
fn token_in_query(query: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| percent_decode(v))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of cookie `name`, if sent.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let h = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    h.strip_prefix("Bearer ")
        .or_else(|| h.strip_prefix("bearer "))
        .map(str::trim)
}

/// Equal, in a time that does not depend on where they differ.
fn same(given: &str, token: &str) -> bool {
    let (a, b) = (given.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_read_from_the_query_and_cookies() {
        assert_eq!(
            token_in_query("a=1&token=s%3Dx+y").as_deref(),
            Some("s=x y")
        );
        assert_eq!(token_in_query("tokens=1"), None);
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        let mut h = HeaderMap::new();
        h.insert(COOKIE, HeaderValue::from_static("a=b; mcpl_watch_80=t0k"));
        assert_eq!(cookie(&h, "mcpl_watch_80").as_deref(), Some("t0k"));
        assert_eq!(cookie(&h, "mcpl_watch_81"), None);
        assert!(same("t0k", "t0k"));
        assert!(!same("t0k", "t0kk"));
        assert!(!same("t0j", "t0k"));
    }
}

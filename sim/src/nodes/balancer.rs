//! The load balancer in front of the nodes, in process, doing what
//! `docs/cluster-haproxy.cfg` has HAProxy do:
//!
//! - **Streamable HTTP**, one request at a time: a `GET` (a legacy session's event stream)
//!   and a `subscriptions/listen` POST (long-lived) go to the node that owns the arcade;
//!   every other request goes round robin to the nodes, and to the next one when a node
//!   refuses the connection (HAProxy's `retry-on conn-failure`). With no owner known a
//!   stream is answered `503` with `Retry-After: 1`, as HAProxy does with no server up.
//! - **WebSocket**, one TCP connection at a time: spliced to the owner's WebSocket front.
//!
//! The owner is the node whose `GET /mcpl/owner` answers `200`
//! ([`mcpl_games::arcade::node::OWNER_PATH`]), asked of every node every
//! [`CHECK_EVERY`] (HAProxy's `check inter`), and again at once when a connection to the
//! owner named fails.
//!
//! It counts, per principal (the bearer token names it in the sim), the sessionless MCP
//! 2026-07-28 requests it forwarded and got an answer for: the modern agents' check
//! ([`crate::invariants::check_modern`]) that they spoke the modern era.
//!
//! **\[project\]** Each request is sent on a connection of its own: a node's front
//! decides at each connection what it is (spliced to the arcade on the owner, forwarded
//! on a standby), so a connection kept across a takeover would still be handled as before
//! it.
//!
//! Bounded: a request body is read whole (to send it again to the next node) up to
//! [`MAX_BODY`]; a larger one is answered `413`.

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcpl_games::arcade::node::OWNER_PATH;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// How often every node is asked whether it owns the arcade.
pub const CHECK_EVERY: Duration = Duration::from_millis(200);

/// How long a node has to answer the owner check.
const CHECK_LIMIT: Duration = Duration::from_secs(1);

/// The largest request body forwarded.
pub const MAX_BODY: usize = 4 * 1024 * 1024;

/// One node as the balancer sees it: its fronts' addresses (the same across its restarts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upstream {
    /// The node's Streamable HTTP front.
    pub http: SocketAddr,
    /// The node's WebSocket front.
    pub ws: SocketAddr,
}

type Body = BoxBody<Bytes, hyper::Error>;

/// What the balancer shares between its connections.
struct Shared {
    nodes: Vec<Upstream>,
    client: Client<HttpConnector, Full<Bytes>>,
    next: AtomicUsize,
    /// The index of the node owning the arcade, as last checked.
    owner: watch::Sender<Option<usize>>,
    /// Sessionless modern requests answered, per principal.
    modern: Mutex<HashMap<String, u64>>,
}

/// The balancer; dropping it stops it. See the module docs.
pub struct Balancer {
    http: SocketAddr,
    ws: SocketAddr,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
}

impl Balancer {
    /// Starts it in front of `nodes` on 127.0.0.1 port 0, on the current tokio runtime.
    pub async fn start(nodes: Vec<Upstream>) -> std::io::Result<Balancer> {
        let http_listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let ws_listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(CHECK_LIMIT));
        let shared = Arc::new(Shared {
            nodes,
            // No connection kept between requests: a node's front decides at each
            // connection whether it splices to its arcade (owner) or forwards (standby),
            // so a connection kept from before a takeover would go on being handled as
            // it was.
            client: Client::builder(TokioExecutor::new())
                .pool_max_idle_per_host(0)
                .build(connector),
            next: AtomicUsize::new(0),
            owner: watch::channel(None).0,
            modern: Mutex::default(),
        });
        let (stop, stopped) = watch::channel(false);
        let b = Balancer {
            http: http_listener.local_addr()?,
            ws: ws_listener.local_addr()?,
            shared: shared.clone(),
            stop,
        };
        tokio::spawn(until(stopped.clone(), check_owner(shared.clone())));
        tokio::spawn(until(
            stopped.clone(),
            accept_http(http_listener, shared.clone(), stopped.clone()),
        ));
        tokio::spawn(until(
            stopped.clone(),
            accept_ws(ws_listener, shared, stopped),
        ));
        Ok(b)
    }

    /// The Streamable HTTP front's address.
    pub fn http_addr(&self) -> SocketAddr {
        self.http
    }

    /// The WebSocket front's address.
    pub fn ws_addr(&self) -> SocketAddr {
        self.ws
    }

    /// The owner as last checked: its index among the nodes.
    pub fn owner(&self) -> watch::Receiver<Option<usize>> {
        self.shared.owner.subscribe()
    }

    /// Sessionless MCP 2026-07-28 requests forwarded for `principal` and answered.
    pub fn modern_requests(&self, principal: &str) -> u64 {
        self.shared
            .modern
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(principal)
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// Runs `f` until `stop` says so.
async fn until(mut stop: watch::Receiver<bool>, f: impl Future<Output = ()>) {
    tokio::select! {
        _ = stop.wait_for(|s| *s) => {}
        () = f => {}
    }
}

/// Asks every node whether it owns the arcade, every [`CHECK_EVERY`].
async fn check_owner(shared: Arc<Shared>) {
    loop {
        let owner = find_owner(&shared).await;
        shared.owner.send_if_modified(|o| {
            let changed = *o != owner;
            *o = owner;
            changed
        });
        tokio::time::sleep(CHECK_EVERY).await;
    }
}

/// The node whose `GET /mcpl/owner` answers 200 now, if any.
async fn find_owner(shared: &Shared) -> Option<usize> {
    let asks = shared.nodes.iter().map(|n| {
        let uri: Option<Uri> = format!("http://{}{OWNER_PATH}", n.http).parse().ok();
        let client = shared.client.clone();
        async move {
            let uri = uri?;
            let req = Request::get(uri).body(Full::new(Bytes::new())).ok()?;
            let resp = tokio::time::timeout(CHECK_LIMIT, client.request(req))
                .await
                .ok()?
                .ok()?;
            Some(resp.status() == StatusCode::OK)
        }
    });
    futures_util::future::join_all(asks)
        .await
        .into_iter()
        .position(|owns| owns == Some(true))
}

async fn accept_http(listener: TcpListener, shared: Arc<Shared>, stopped: watch::Receiver<bool>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let service = hyper::service::service_fn(move |req| {
            let shared = shared.clone();
            async move { Ok::<_, Infallible>(route(&shared, req).await) }
        });
        tokio::spawn(until(stopped.clone(), async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }));
    }
}

/// A plain answer of the balancer's own.
fn answer(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(
        Full::new(Bytes::from(text.to_owned()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *r.status_mut() = status;
    if status == StatusCode::SERVICE_UNAVAILABLE {
        r.headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    }
    r
}

/// One request: to the owner (streams) or round robin (the rest). See the module docs.
async fn route(shared: &Shared, req: Request<Incoming>) -> Response<Body> {
    let to_owner = req.method() == Method::GET
        || req
            .headers()
            .get("mcp-method")
            .is_some_and(|v| v.as_bytes() == b"subscriptions/listen");
    let modern_principal = (req.method() == Method::POST
        && req.headers().get("mcp-session-id").is_none()
        && req
            .headers()
            .get("mcp-protocol-version")
            .is_some_and(|v| v.as_bytes() == b"2026-07-28"))
    .then(|| {
        req.headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned)
    })
    .flatten();
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return answer(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request's body is too large, or it did not arrive",
            );
        }
    };
    let n = shared.nodes.len();
    let order: Vec<usize> = if to_owner {
        let owner = *shared.owner.borrow();
        match owner {
            Some(o) => vec![o],
            None => {
                return answer(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "no node owns the arcade now",
                );
            }
        }
    } else {
        let first = shared.next.fetch_add(1, Ordering::Relaxed);
        (0..n).map(|k| (first + k) % n).collect()
    };
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    for i in order {
        let Ok(uri) = format!("http://{}{path}", shared.nodes[i].http).parse::<Uri>() else {
            return answer(StatusCode::BAD_REQUEST, "a path that cannot be forwarded");
        };
        let mut out = Request::new(Full::new(body.clone()));
        *out.method_mut() = parts.method.clone();
        *out.uri_mut() = uri;
        *out.headers_mut() = parts.headers.clone();
        out.headers_mut().remove(hyper::header::HOST);
        match shared.client.request(out).await {
            Ok(resp) => {
                if let Some(p) = &modern_principal {
                    *shared
                        .modern
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .entry(p.clone())
                        .or_default() += 1;
                }
                return resp.map(BodyExt::boxed);
            }
            // The node is gone: the next one (HAProxy's `retry-on conn-failure`); the
            // request never reached it.
            Err(e) if e.is_connect() => {
                if to_owner {
                    recheck(shared).await;
                }
                continue;
            }
            // It may have run: not sent again.
            Err(_) => {
                return answer(
                    StatusCode::BAD_GATEWAY,
                    "the node ended the connection before answering",
                );
            }
        }
    }
    answer(StatusCode::SERVICE_UNAVAILABLE, "no node could be reached")
}

/// Checks the owner again at once (a connection to it failed).
async fn recheck(shared: &Shared) {
    let owner = find_owner(shared).await;
    shared.owner.send_replace(owner);
}

async fn accept_ws(listener: TcpListener, shared: Arc<Shared>, stopped: watch::Receiver<bool>) {
    loop {
        let Ok((mut client, _)) = listener.accept().await else {
            continue;
        };
        let _ = client.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(until(stopped.clone(), async move {
            let owner = *shared.owner.borrow();
            let Some(o) = owner else {
                // No owner now: the connection is closed, and the client connects again.
                return;
            };
            let to = shared.nodes[o].ws;
            let mut server = match TcpStream::connect(to).await {
                Ok(s) => s,
                Err(_) => {
                    recheck(&shared).await;
                    return;
                }
            };
            let _ = server.set_nodelay(true);
            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's front standing in: answers every request with its index and the method,
    /// and `GET /mcpl/owner` with 200 when it is `owner`, else 503.
    async fn front(index: usize, owner: bool) -> SocketAddr {
        let l = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let at = l.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((s, _)) = l.accept().await {
                let service =
                    hyper::service::service_fn(move |req: Request<Incoming>| async move {
                        let status = if req.uri().path() == OWNER_PATH && !owner {
                            StatusCode::SERVICE_UNAVAILABLE
                        } else {
                            StatusCode::OK
                        };
                        let mut r = Response::new(Full::new(Bytes::from(format!(
                            "{index} {}",
                            req.method()
                        ))));
                        *r.status_mut() = status;
                        Ok::<_, Infallible>(r)
                    });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(s), service),
                );
            }
        });
        at
    }

    /// The text of a request through the balancer.
    async fn send(b: &Balancer, method: Method, headers: &[(&str, &str)]) -> String {
        let client: Client<HttpConnector, Full<Bytes>> =
            Client::builder(TokioExecutor::new()).build(HttpConnector::new());
        let mut req = Request::new(Full::new(Bytes::from_static(b"{}")));
        *req.method_mut() = method;
        *req.uri_mut() = format!("http://{}/mcp", b.http_addr()).parse().unwrap();
        for (k, v) in headers {
            req.headers_mut().insert(
                hyper::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        let resp = client.request(req).await.unwrap();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8_lossy(&body).into_owned()
    }

    #[tokio::test]
    async fn requests_go_round_robin_streams_to_the_owner_and_a_dead_node_is_skipped() {
        let a = front(0, false).await;
        let b = front(1, true).await;
        // A node that is gone: its port refuses connections.
        let gone = {
            let l = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
            l.local_addr().unwrap()
        };
        let up = |http| Upstream { http, ws: http };
        let bal = Balancer::start(vec![up(a), up(b), up(gone)]).await.unwrap();
        bal.owner().wait_for(|o| *o == Some(1)).await.unwrap();

        // Round robin, the gone node's turn passed on to the next: 0, 1, (2→0), 1, …
        let mut seen = Vec::new();
        for _ in 0..4 {
            seen.push(send(&bal, Method::POST, &[]).await);
        }
        assert_eq!(seen, ["0 POST", "1 POST", "0 POST", "0 POST"]);
        // A GET stream and a listen go to the owner whatever the turn.
        for _ in 0..3 {
            assert_eq!(send(&bal, Method::GET, &[]).await, "1 GET");
            let listen = [("mcp-method", "subscriptions/listen")];
            assert_eq!(send(&bal, Method::POST, &listen).await, "1 POST");
        }
        // Sessionless modern requests are counted per principal, others are not.
        let modern = [
            ("mcp-protocol-version", "2026-07-28"),
            ("authorization", "Bearer alice"),
        ];
        send(&bal, Method::POST, &modern).await;
        let session = [
            ("mcp-protocol-version", "2026-07-28"),
            ("authorization", "Bearer alice"),
            ("mcp-session-id", "s1"),
        ];
        send(&bal, Method::POST, &session).await;
        assert_eq!(bal.modern_requests("alice"), 1);
        assert_eq!(bal.modern_requests("bob"), 0);
    }
}

//! The load balancer in front of the nodes, in process, doing what
//! `docs/cluster-haproxy.cfg` has HAProxy do. How it sends long-lived connections is its
//! [`Balance`]:
//!
//! - [`Balance::RoundRobin`] (the default; what the HAProxy example does, and what issue
//!   #41 item 4 asks a plain load balancer to do): **every** Streamable HTTP request — a
//!   `GET` event stream and a `subscriptions/listen` POST too — and every WebSocket
//!   connection goes to the next node in turn, and to the one after when a node refuses
//!   the connection (HAProxy's `retry-on conn-failure`). A standby carries a WebSocket
//!   connection or a stream to the owner through a tunnel over NATS
//!   (`mcpl_cluster::tunnel`).
//! - [`Balance::Owner`]: requests round robin the same, but a `GET`, a
//!   `subscriptions/listen` POST and a WebSocket connection go to the node that owns the
//!   arcade (what a backend checking `GET /mcpl/owner` could do). With no owner known a
//!   stream is answered `503` with `Retry-After: 1`, as HAProxy does with no server up,
//!   and a WebSocket connection is closed.
//!
//! WebSocket is spliced one TCP connection at a time; Streamable HTTP is one request at a
//! time.
//!
//! Every node is asked `GET /mcpl/owner` ([`mcpl_games::arcade::node::OWNER_PATH`]) every
//! [`CHECK_EVERY`] (HAProxy's `check inter`), and again at once when a connection to the
//! owner named fails: the owner is the node answering `200`. Its answer also says how many
//! tunnels the node opened and accepted since it started; the balancer adds them up over
//! the nodes and their lives ([`Balancer::tunnels`]; a node started again counts from 0,
//! and what it counted after its last check is missed, so the sums are a floor).
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
use mcpl_cluster::tunnel::TunnelCounts;
use mcpl_games::arcade::node::{OWNER_PATH, TUNNELS_ACCEPTED, TUNNELS_OPENED};
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

/// Where the balancer sends WebSocket connections and long-lived streams (module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Balance {
    /// Every connection and request to the next live node; a standby tunnels what is the
    /// owner's.
    #[default]
    RoundRobin,
    /// WebSocket connections and streams to the owner; requests round robin.
    Owner,
}

impl Balance {
    /// `round-robin` or `owner`.
    pub fn name(self) -> &'static str {
        match self {
            Balance::RoundRobin => "round-robin",
            Balance::Owner => "owner",
        }
    }
}

impl std::str::FromStr for Balance {
    type Err = String;

    fn from_str(s: &str) -> Result<Balance, String> {
        match s {
            "round-robin" => Ok(Balance::RoundRobin),
            "owner" => Ok(Balance::Owner),
            other => Err(format!("{other:?} is not a balance: round-robin or owner")),
        }
    }
}

/// A node's tunnel counts as the balancer adds them up over its lives.
#[derive(Debug, Clone, Copy, Default)]
struct Counted {
    /// What its last check said.
    last: TunnelCounts,
    /// The sums over its lives.
    sum: TunnelCounts,
}

impl Counted {
    /// Takes a check's counts: a count lower than the last is a node started again (its
    /// counts begin at 0).
    fn saw(&mut self, now: TunnelCounts) {
        let add = |last: u64, now: u64| if now >= last { now - last } else { now };
        self.sum.opened += add(self.last.opened, now.opened);
        self.sum.accepted += add(self.last.accepted, now.accepted);
        self.last = now;
    }
}

type Body = BoxBody<Bytes, hyper::Error>;

/// What the balancer shares between its connections.
struct Shared {
    nodes: Vec<Upstream>,
    balance: Balance,
    client: Client<HttpConnector, Full<Bytes>>,
    next: AtomicUsize,
    /// The index of the node owning the arcade, as last checked.
    owner: watch::Sender<Option<usize>>,
    /// Sessionless modern requests answered, per principal.
    modern: Mutex<HashMap<String, u64>>,
    /// Each node's tunnel counts.
    tunnels: Mutex<Vec<Counted>>,
    /// Held through a check, so that checks never overlap (a late answer would count as
    /// a node started again).
    checking: tokio::sync::Mutex<()>,
}

/// The balancer; dropping it stops it. See the module docs.
pub struct Balancer {
    http: SocketAddr,
    ws: SocketAddr,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
}

impl Balancer {
    /// Starts it in front of `nodes` on 127.0.0.1 port 0, on the current tokio runtime,
    /// sending long-lived connections as `balance` says.
    pub async fn start(nodes: Vec<Upstream>, balance: Balance) -> std::io::Result<Balancer> {
        let http_listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let ws_listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(CHECK_LIMIT));
        let shared = Arc::new(Shared {
            tunnels: Mutex::new(vec![Counted::default(); nodes.len()]),
            checking: tokio::sync::Mutex::new(()),
            nodes,
            balance,
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

    /// How it sends long-lived connections.
    pub fn balance(&self) -> Balance {
        self.shared.balance
    }

    /// The tunnels the nodes said they opened and accepted, added up over the nodes and
    /// their lives as last checked (a floor: module docs).
    pub fn tunnels(&self) -> TunnelCounts {
        let counted = self
            .shared
            .tunnels
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        counted.iter().fold(TunnelCounts::default(), |mut t, c| {
            t.opened += c.sum.opened;
            t.accepted += c.sum.accepted;
            t
        })
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

/// The node whose `GET /mcpl/owner` answers 200 now, if any; the tunnel counts the
/// answers give are taken.
async fn find_owner(shared: &Shared) -> Option<usize> {
    let _alone = shared.checking.lock().await;
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
            let count = |name: &str| {
                resp.headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok())
            };
            let counts = count(TUNNELS_OPENED)
                .zip(count(TUNNELS_ACCEPTED))
                .map(|(opened, accepted)| TunnelCounts { opened, accepted });
            Some((resp.status() == StatusCode::OK, counts))
        }
    });
    let answers = futures_util::future::join_all(asks).await;
    {
        let mut counted = shared
            .tunnels
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (c, answer) in counted.iter_mut().zip(&answers) {
            if let Some((_, Some(now))) = answer {
                c.saw(*now);
            }
        }
    }
    answers
        .iter()
        .position(|a| a.as_ref().is_some_and(|(owns, _)| *owns))
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

/// One request: round robin, or (streams, with [`Balance::Owner`]) to the owner. See the
/// module docs.
async fn route(shared: &Shared, req: Request<Incoming>) -> Response<Body> {
    let to_owner = shared.balance == Balance::Owner
        && (req.method() == Method::GET
            || req
                .headers()
                .get("mcp-method")
                .is_some_and(|v| v.as_bytes() == b"subscriptions/listen"));
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
        round_robin(shared)
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

/// The nodes in the order to try them: the next in turn first, then the others after it.
fn round_robin(shared: &Shared) -> Vec<usize> {
    let n = shared.nodes.len();
    let first = shared.next.fetch_add(1, Ordering::Relaxed);
    (0..n).map(|k| (first + k) % n).collect()
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
            if let Some(mut server) = connect_ws(&shared).await {
                let _ = server.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            }
            // Else the connection is closed, and the client connects again.
        }));
    }
}

/// A connection to the WebSocket front of the node a new client connection goes to
/// ([`Balance`]): the next in turn, or the one after when it refuses; or the owner.
/// `None`: no node could be reached (or no owner is known).
async fn connect_ws(shared: &Shared) -> Option<TcpStream> {
    match shared.balance {
        Balance::RoundRobin => {
            for i in round_robin(shared) {
                if let Ok(s) = TcpStream::connect(shared.nodes[i].ws).await {
                    return Some(s);
                }
            }
            None
        }
        Balance::Owner => {
            let owner = (*shared.owner.borrow())?;
            match TcpStream::connect(shared.nodes[owner].ws).await {
                Ok(s) => Some(s),
                Err(_) => {
                    recheck(shared).await;
                    None
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// A node's front standing in: answers every request with its index and the method,
    /// and `GET /mcpl/owner` with 200 when it is `owner`, else 503, with the tunnel
    /// counts `tunnels` holds now (opened, accepted).
    async fn front(index: usize, owner: bool, tunnels: Arc<[AtomicU64; 2]>) -> SocketAddr {
        let l = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let at = l.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((s, _)) = l.accept().await {
                let tunnels = tunnels.clone();
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let tunnels = tunnels.clone();
                    async move {
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
                        let h = r.headers_mut();
                        h.insert(TUNNELS_OPENED, tunnels[0].load(Ordering::SeqCst).into());
                        h.insert(TUNNELS_ACCEPTED, tunnels[1].load(Ordering::SeqCst).into());
                        Ok::<_, Infallible>(r)
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(s), service),
                );
            }
        });
        at
    }

    /// Three upstreams: node 0 a standby, node 1 the owner, node 2 gone (its port
    /// refuses connections); each node's WebSocket front is its HTTP one. And the tunnel
    /// counts of nodes 0 and 1.
    async fn three() -> (Vec<Upstream>, [Arc<[AtomicU64; 2]>; 2]) {
        let counts: [Arc<[AtomicU64; 2]>; 2] = Default::default();
        let a = front(0, false, counts[0].clone()).await;
        let b = front(1, true, counts[1].clone()).await;
        let gone = {
            let l = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
            l.local_addr().unwrap()
        };
        let up = |http| Upstream { http, ws: http };
        (vec![up(a), up(b), up(gone)], counts)
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

    /// Which node a connection to the WebSocket front reached: a request written on it
    /// raw, the answer's body.
    async fn ws_reaches(b: &Balancer) -> String {
        let mut s = TcpStream::connect(b.ws_addr()).await.unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).await.unwrap();
        answer.rsplit("\r\n\r\n").next().unwrap().to_owned()
    }

    const LISTEN: [(&str, &str); 1] = [("mcp-method", "subscriptions/listen")];

    #[tokio::test]
    async fn owner_balance_sends_streams_and_websocket_to_the_owner_requests_round_robin() {
        let (nodes, _) = three().await;
        let bal = Balancer::start(nodes, Balance::Owner).await.unwrap();
        assert_eq!(bal.balance(), Balance::Owner);
        bal.owner().wait_for(|o| *o == Some(1)).await.unwrap();

        // Round robin, the gone node's turn passed on to the next: 0, 1, (2→0), 1, …
        let mut seen = Vec::new();
        for _ in 0..4 {
            seen.push(send(&bal, Method::POST, &[]).await);
        }
        assert_eq!(seen, ["0 POST", "1 POST", "0 POST", "0 POST"]);
        // A GET stream, a listen and a WebSocket connection go to the owner whatever the
        // turn.
        for _ in 0..3 {
            assert_eq!(send(&bal, Method::GET, &[]).await, "1 GET");
            assert_eq!(send(&bal, Method::POST, &LISTEN).await, "1 POST");
            assert_eq!(ws_reaches(&bal).await, "1 GET");
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

    #[tokio::test]
    async fn round_robin_sends_everything_in_turn_and_adds_up_the_nodes_tunnels() {
        let (nodes, counts) = three().await;
        let bal = Balancer::start(nodes, Balance::RoundRobin).await.unwrap();
        assert_eq!(bal.balance(), Balance::RoundRobin);
        bal.owner().wait_for(|o| *o == Some(1)).await.unwrap();

        // Streams, listens and WebSocket connections take their turns like any request,
        // the gone node's turn passed on to the next: 0, 1, (2→0), 0, 1, (2→0), …
        let mut seen = Vec::new();
        for _ in 0..2 {
            seen.push(send(&bal, Method::GET, &[]).await);
            seen.push(send(&bal, Method::POST, &LISTEN).await);
            seen.push(ws_reaches(&bal).await);
        }
        assert_eq!(
            seen,
            ["0 GET", "1 POST", "0 GET", "0 GET", "1 POST", "0 GET"]
        );

        // The tunnels the nodes say they opened and accepted, added up: a count that goes
        // down is a node started again, counting from 0.
        // (Checks never overlap: the one made here reads what was just stored.)
        let check = async |opened: u64, accepted: u64| {
            recheck(&bal.shared).await;
            assert_eq!(bal.tunnels(), TunnelCounts { opened, accepted });
        };
        counts[0][0].store(5, Ordering::SeqCst);
        counts[1][1].store(4, Ordering::SeqCst);
        check(5, 4).await;
        counts[0][0].store(7, Ordering::SeqCst);
        check(7, 4).await;
        // Node 0 started again: it counts 2 in its new life.
        counts[0][0].store(2, Ordering::SeqCst);
        check(9, 4).await;
        counts[0][0].store(3, Ordering::SeqCst);
        check(10, 4).await;
    }

    #[test]
    fn a_balance_is_read_from_its_name() {
        for b in [Balance::RoundRobin, Balance::Owner] {
            assert_eq!(b.name().parse::<Balance>(), Ok(b));
        }
        assert_eq!(Balance::default(), Balance::RoundRobin);
        assert!(
            "sticky"
                .parse::<Balance>()
                .unwrap_err()
                .contains("round-robin or owner")
        );
    }
}

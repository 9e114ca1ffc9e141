//! One node of several arcades on one PostgreSQL and one NATS (issue #41): what
//! `mcpl-arcade serve --postgres URL --nats URL --node NAME` runs.
//!
//! **Ownership, coarse for now (\[project\], the first step of `docs/cluster.md` §2).** One
//! lease of kind [`ARCADE`] and key [`LEASE_KEY`] names the node that runs the arcade: its
//! SDK server, on a [`PgStore`](mcpl_cluster::PgStore) fenced by that lease, so a commit
//! made after the lease was lost is refused whatever it writes. The holder renews it at a
//! third of its time to live ([`Node::hold`]) and stops serving at once when a renewal
//! fails. Every other node is a **standby**: it tries to acquire the lease each time the
//! holder's would expire ([`Node::wait_for_lease`]), and meanwhile forwards what its
//! listeners get to the holder (a lease under its own name is an earlier life's, taken
//! back at once: a node never forwards to itself). When the holder dies its lease expires, one standby
//! acquires it (with a larger fencing token), loads every record — the restart path of
//! issue #15: each game at its position, its bot and timers running again — and serves;
//! the others forward to it. The per-principal and per-instance leases of `docs/cluster.md`
//! §2 will split this one lease: the fence already checks both kinds.
//!
//! **Ownership per principal** (`--ownership principal`, `docs/ownership.md` §1): every
//! node serves, each principal on the node holding its lease — its own module:
//!
//! | module | what |
//! |---|---|
//! | `principals` | the fronts routing by principal, the leases per principal and per instance, their renewal ([`Principals`]) |
//! | `online` | the lobby's players online across nodes, through the lease table ([`share_online`]) |
//! | `lookups` | a principal's lease looked up, one look-up per principal and at most [`LOOKUPS`] at once on connections of their own; a dead holder's expiry awaited |
//!
//! **The listeners in front.** A node binds the addresses it was given (`--http`, `--ws`)
//! itself, whatever its role, so a load balancer in front can send anything anywhere:
//!
//! | role | Streamable HTTP (`--http`) | WebSocket (`--ws`) |
//! |---|---|---|
//! | owner | each connection spliced to the arcade's own listener, on a port of its own on the same address | the same |
//! | standby | each request forwarded to the owner over NATS ([`NatsBus::forward`]), its answer given back as the owner gave it; a long-lived stream (a `GET` for `text/event-stream`, a `subscriptions/listen` POST) carried to the owner through a tunnel ([`Tunnels`]) | each connection carried to the owner through a tunnel |
//!
//! **\[project\] Request/response exchanges are forwarded, long-lived connections
//! tunneled.** Every POST (MCP 2026-07-28's requests, which carry no session, and a legacy
//! session's too: the session lives on the owner) and the other `GET`s and `DELETE`s go to
//! the owner as one NATS request each. A long-lived connection stays on the node the client
//! reached, which carries it to the owner's own listener through a tunnel of its own
//! (`mcpl_cluster::tunnel`): a WebSocket connection whole, from its request head on (the
//! owner connects to its arcade's WebSocket listener on loopback and writes the head
//! there); a `GET` event stream or a `subscriptions/listen` POST as one HTTP/1.1 exchange
//! whose answer streams back as it comes. A client's legacy WebSocket session, its pushes
//! and hints, so live on the owner and reach the client through the node it connected to.
//! **A tunnel that ends closes the client's connection** (a FIN; a stream's answer ends):
//! the owner died (no subscriber on the tunnel's subject at the next keepalive, at a third
//! of the lease's time to live, or no answer within the forward's timeout), another node
//! took the lease, a frame was lost (a gap), the tunnel stayed idle an hour. The client
//! connects again, as any legacy client whose connection dropped does, and the load
//! balancer sends it anywhere. A tunnel that cannot be opened (no owner now, NATS down,
//! the owner not on the bus, this node's or the owner's tunnels at their bound) is
//! refused at once: a WebSocket connection with `503`, `Retry-After: 1` and a text naming
//! why, a stream with the JSON-RPC error below (`ran: false`).
//!
//! **Errors are retryable, never a hang.** A forward that cannot be made (no owner now: its
//! lease expired and nobody took it yet; the owner named is not on the bus: it died or is
//! still loading; this node's connection to NATS is down) is answered at once with `503`, `Retry-After: 1` and a JSON-RPC error
//! (`-32603`, `data.retryable: true`, `data.ran: false`: the request did not run). One the
//! owner took but did not answer within the forward's timeout is answered the same with
//! `data.ran: null`: it may have run, read the state again before retrying.
//!
//! **Bounded.** Each front serves at most [`FRONT_CONNECTIONS`] connections at once; a
//! standby's client has 30 s for a request's head and as long for its body, which is at
//! most the bus's message limit less 16 KiB (`413` past it); a WebSocket request head read
//! before tunneling it is at most 16 KiB; the owner replays at most 256 forwarded requests
//! at once and gives back answers within the same limit. A node holds at most 1024 tunnels
//! (opened and accepted; [`TunnelConfig::default`]), each with windows of 64 KiB per
//! direction: a slow client holds the owner's side back rather than anything buffering.
//!
//! **\[project\]** The arcade behind the owner's front sees every connection come from the
//! owner's own address (spliced, or replayed for a standby): the per-address bounds on
//! anonymous connections count the node, not the client. Run cluster nodes with tokens.

mod lookups;
mod online;
mod principals;

pub use lookups::{EXPIRIES_KEPT, EXPIRY_MARGIN, LOOKUPS};
pub use online::{ONLINE_SHARED, share_online};
pub use principals::{
    HandedOn, LANDED_ON, LeasePlacement, NOT_OWNER, Principals, SCAN_ADOPTS, SCAN_READS, SERVED_BY,
};

use bytes::{Bytes, BytesMut};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use mcpl_cluster::bus::{BusError, Requests};
use mcpl_cluster::leases::{ARCADE, Lease, LeaseError};
use mcpl_cluster::tunnel::{Opens, Tunnel, TunnelConfig, TunnelError, Tunnels};
use mcpl_cluster::{NatsBus, PgLeases};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

/// How long a standby waits before forwarding again a request that found no responder on
/// the bus (an owner still starting after its takeover).
const NO_RESPONDER_PAUSE: Duration = Duration::from_millis(25);

/// The key of the arcade's lease (kind [`ARCADE`]): one arcade per database.
pub const LEASE_KEY: &str = "arcade";

/// The path every node's Streamable HTTP front answers itself, for a load balancer's
/// health check: `200` and `owner NAME` on the owner, `503` and `standby NAME` elsewhere,
/// with the node's tunnel counts in the headers [`TUNNELS_OPENED`] and
/// [`TUNNELS_ACCEPTED`]. (On the owner the check reaches the front before any splice.)
pub const OWNER_PATH: &str = "/mcpl/owner";

/// The header of [`OWNER_PATH`]'s answer giving how many tunnels the node opened since it
/// started ([`Tunnels::counts`]): a balancer or a test sees connections were carried.
pub const TUNNELS_OPENED: &str = "mcpl-tunnels-opened";

/// The header of [`OWNER_PATH`]'s answer giving how many tunnels the node accepted since
/// it started.
pub const TUNNELS_ACCEPTED: &str = "mcpl-tunnels-accepted";

/// The most requests a node replays for the others at once; more wait for a place.
const REPLAYING: usize = 256;

/// The most bytes of a WebSocket request head a standby reads before refusing it.
const MAX_HEAD: usize = 16 * 1024;

/// Bytes kept, out of the bus's message limit, for a forwarded message's head.
const HEAD_ROOM: usize = 16 * 1024;

/// The most connections each front serves at once; one more is closed at once.
pub const FRONT_CONNECTIONS: usize = 10_000;

/// How long a client of a standby has to send a request's head, and then its body.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The kind of a tunnel carrying a WebSocket connection (to the arcade's WebSocket
/// listener).
const KIND_WS: &str = "ws";

/// The kind of a tunnel carrying one Streamable HTTP exchange whose answer is a stream
/// (to the arcade's Streamable HTTP listener).
const KIND_HTTP: &str = "http";

/// The bytes of the pipe between a standby's HTTP client and a tunnel it opened.
const TUNNEL_PIPE: usize = 64 * 1024;

/// The body of a standby's answers: whole (an answer forwarded, an error) or streamed
/// (from a tunnel).
type NodeBody = UnsyncBoxBody<Bytes, hyper::Error>;

/// Whether `req` opens a long-lived stream (a `GET` for `text/event-stream`, a
/// `subscriptions/listen` POST): carried through a tunnel rather than forwarded whole.
fn long_lived(req: &Request<Incoming>) -> bool {
    let streams = req.method() == Method::GET
        && req
            .headers()
            .get(hyper::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"));
    streams
        || req
            .headers()
            .get("mcp-method")
            .is_some_and(|v| v.as_bytes() == b"subscriptions/listen")
}

/// Refuses a WebSocket connection not carried anywhere: `503`, `Retry-After: 1` and
/// `why`, then closed.
async fn refuse_ws(stream: &mut TcpStream, why: &str) {
    let body = format!("{why}\n");
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// A whole answer as a [`NodeBody`] answer.
fn whole(r: Response<Full<Bytes>>) -> Response<NodeBody> {
    r.map(|b| b.map_err(|never| match never {}).boxed_unsync())
}

/// What a node is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// It stands by, forwarding to `owner` (`None`: nobody holds the arcade's lease now).
    Standby {
        /// The node holding the lease, as last read.
        owner: Option<String>,
    },
    /// It runs the arcade, whose own listeners are on these addresses.
    Owner {
        /// The arcade's Streamable HTTP listener.
        http: Option<SocketAddr>,
        /// The arcade's WebSocket listener.
        ws: Option<SocketAddr>,
    },
}

/// A node's settings.
#[derive(Debug, Clone)]
pub struct NodeSettings {
    /// The node's name (unique among the nodes).
    pub name: String,
    /// The lease's time to live: a dead owner's work is taken over about this long after
    /// its last renewal.
    pub ttl: Duration,
    /// How long a standby waits for the owner's answer to a forwarded request.
    pub forward_timeout: Duration,
    /// The most bytes of a forwarded request or answer (the bus's limit; NATS's own is
    /// 1 MiB by default).
    pub max_message: usize,
}

/// One node. See the module docs.
pub struct Node {
    settings: NodeSettings,
    bus: Arc<NatsBus>,
    tunnels: Tunnels,
    role: watch::Sender<Role>,
    /// Forwarded requests that found no responder on the bus and were sent again (an
    /// owner still starting after its takeover).
    waits: watch::Sender<u64>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("name", &self.settings.name)
            .field("role", &*self.role.borrow())
            .finish_non_exhaustive()
    }
}

/// A forwarded request's or answer's head, carried as one JSON line before the body.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Head {
    /// A request's method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    method: Option<String>,
    /// A request's path and query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// An answer's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    /// The end-to-end headers (values that are not UTF-8 are dropped).
    headers: Vec<(String, String)>,
}

/// A head and a body as one message: the head's JSON (which never holds a raw newline),
/// `\n`, the body.
fn encode(head: &Head, body: &[u8]) -> Bytes {
    let mut out = BytesMut::new();
    out.extend_from_slice(&serde_json::to_vec(head).unwrap_or_else(|_| b"{}".to_vec()));
    out.extend_from_slice(b"\n");
    out.extend_from_slice(body);
    out.freeze()
}

/// A message's head and body; `None` for one that is not [`encode`]'s.
fn decode(message: &Bytes) -> Option<(Head, Bytes)> {
    let at = message.iter().position(|&b| b == b'\n')?;
    let head = serde_json::from_slice(&message[..at]).ok()?;
    Some((head, message.slice(at + 1..)))
}

/// A request as it is forwarded over the bus: its head (method, path, end-to-end
/// headers) and its body.
fn forwarded(parts: &hyper::http::request::Parts, body: &[u8]) -> Bytes {
    let head = Head {
        method: Some(parts.method.as_str().to_owned()),
        path: Some(
            parts
                .uri
                .path_and_query()
                .map_or("/", |p| p.as_str())
                .to_owned(),
        ),
        status: None,
        headers: headers_of(&parts.headers),
    };
    encode(&head, body)
}

/// Headers of one connection only (RFC 9110 §7.6.1), never forwarded; and the length,
/// which the body forwarded sets again.
fn hop_by_hop(name: &str) -> bool {
    matches!(
        name,
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "content-length"
    )
}

/// The end-to-end headers of `map`, as carried.
fn headers_of(map: &hyper::HeaderMap) -> Vec<(String, String)> {
    map.iter()
        .filter(|(n, _)| !hop_by_hop(n.as_str()))
        .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect()
}

/// Puts carried headers on `map` (bad names or values, which a peer may send, skipped).
fn put_headers(map: &mut hyper::HeaderMap, headers: &[(String, String)]) {
    for (n, v) in headers {
        if hop_by_hop(n) {
            continue;
        }
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(n.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            map.append(n, v);
        }
    }
}

/// A JSON-RPC error answer with an HTTP status.
fn rpc_error(status: StatusCode, id: Value, message: &str, data: Value) -> Response<Full<Bytes>> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32603, "message": message, "data": data},
    });
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if status == StatusCode::SERVICE_UNAVAILABLE {
        r.headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    }
    r
}

/// Runs a blocking lease call off the async threads.
async fn blocking<R: Send + 'static>(
    f: impl FnOnce() -> Result<R, LeaseError> + Send + 'static,
) -> Result<R, LeaseError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(LeaseError::Database {
            location: "the leases".to_owned(),
            detail: format!("the call's thread failed: {e}"),
        })
    })
}

impl Node {
    /// A node on `bus`, standing by with no owner known yet.
    ///
    /// Its tunnels ([`Tunnels`]): at most [`TunnelConfig::default`]'s number, a
    /// keepalive at a third of the lease's time to live (a dead owner's tunnels close
    /// about as soon as its lease is known to be renewed no more), answered within the
    /// forward's timeout.
    pub fn new(settings: NodeSettings, bus: Arc<NatsBus>) -> Arc<Node> {
        let (role, _) = watch::channel(Role::Standby { owner: None });
        let tunnels = Tunnels::new(
            &bus,
            TunnelConfig {
                keepalive: (settings.ttl / 3).max(Duration::from_millis(10)),
                answer_within: settings.forward_timeout,
                ..TunnelConfig::default()
            },
        );
        Arc::new(Node {
            settings,
            bus,
            tunnels,
            role,
            waits: watch::channel(0).0,
        })
    }

    /// The node's tunnels: a standby's clients' long-lived connections, carried to the
    /// owner (see the module docs).
    pub fn tunnels(&self) -> &Tunnels {
        &self.tunnels
    }

    /// Resolves once `owner` is no longer the owner this standby forwards to (it took the
    /// lease itself, another node did, or nobody holds it): its tunnels to `owner` end.
    fn owner_changes(
        &self,
        owner: String,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut role = self.role.subscribe();
        async move {
            let _ = role
                .wait_for(|r| !matches!(r, Role::Standby { owner: Some(o) } if *o == owner))
                .await;
        }
    }

    /// How many times a forwarded request found no responder on the bus and was sent
    /// again, as it changes: an owner that took the lease answers on the bus only once it
    /// has read the arcade back.
    pub fn owner_waits(&self) -> watch::Receiver<u64> {
        self.waits.subscribe()
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.settings.name
    }

    /// The node's bus.
    pub fn bus(&self) -> &Arc<NatsBus> {
        &self.bus
    }

    /// The node's role as it changes (a new value only when it changed).
    pub fn role(&self) -> watch::Receiver<Role> {
        self.role.subscribe()
    }

    fn set_role(&self, role: Role) {
        self.role.send_if_modified(|now| {
            let changed = *now != role;
            *now = role;
            changed
        });
    }

    /// The node runs the arcade from now on, its own listeners on these addresses: its
    /// fronts splice new connections to them.
    pub fn become_owner(&self, http: Option<SocketAddr>, ws: Option<SocketAddr>) {
        self.set_role(Role::Owner { http, ws });
    }

    /// Acquires the arcade's lease, standing by until it can: while another node holds
    /// it, this one forwards to it and tries again when it would expire (the database's
    /// clock says when). A lease held under this node's own name — an earlier life of
    /// it, before it was started again — is taken back at once
    /// ([`PgLeases::acquire_or_reclaim`]): a node never forwards to itself. A database
    /// that fails is retried at a third of the lease's time to live, with a warning.
    pub async fn wait_for_lease(&self, leases: &Arc<PgLeases>) -> Lease {
        let ttl = self.settings.ttl;
        loop {
            let l = leases.clone();
            // The arcade's lease under this node's own name is an earlier life's (this
            // process died or stopped and was started again): taken back at once, never
            // stood by for, forwarding to itself (issue #41).
            match blocking(move || l.acquire_or_reclaim(ARCADE, LEASE_KEY, ttl)).await {
                Ok(lease) => return lease,
                Err(LeaseError::Held { holder, .. }) => {
                    self.set_role(Role::Standby {
                        owner: Some(holder.node.clone()),
                    });
                    // Until the holder's lease would expire, and a millisecond past it.
                    tokio::time::sleep(holder.expires_in + Duration::from_millis(1)).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the arcade's lease cannot be read; trying again");
                    self.set_role(Role::Standby { owner: None });
                    tokio::time::sleep(ttl / 3).await;
                }
            }
        }
    }

    /// Renews `lease` at a third of its time to live while it is this node's; returns why
    /// it no longer is (lost, or the database failing: either way its writes may be
    /// refused from now on, and the node must stop serving at once). A renewal that hangs
    /// fails within half the time to live ([`PgLeases::renewal_bound`]): told by five
    /// sixths of it, before the lease expires and another node takes over.
    pub async fn hold(&self, leases: &Arc<PgLeases>, lease: &Lease) -> LeaseError {
        let ttl = self.settings.ttl;
        let mut tick = tokio::time::interval(ttl / 3);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            let (l, held) = (leases.clone(), lease.clone());
            if let Err(e) = blocking(move || l.renew(&held, ttl)).await {
                return e;
            }
        }
    }

    /// Serves the Streamable HTTP front on `listener` until the process ends (see the
    /// module docs): spliced to the arcade on the owner, forwarded from a standby.
    pub async fn front_http(self: Arc<Node>, listener: TcpListener) {
        self.front(listener, |node, stream| async move {
            let owner_http = match &*node.role.borrow() {
                Role::Owner { http, .. } => *http,
                Role::Standby { .. } => None,
            };
            match owner_http {
                Some(to) => node.splice_or_check(stream, to).await,
                None => node.standby_http(stream).await,
            }
        })
        .await
    }

    /// Accepts connections on `listener` until the process ends, at most
    /// [`FRONT_CONNECTIONS`] at once (one more is closed at once), each served by `serve`
    /// on a task of its own: the role read when the connection comes decides for it.
    async fn front<F, Fut>(self: Arc<Node>, listener: TcpListener, serve: F)
    where
        F: Fn(Arc<Node>, TcpStream) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let places = Arc::new(Semaphore::new(FRONT_CONNECTIONS));
        loop {
            let Some(stream) = accept(&listener).await else {
                continue;
            };
            let Ok(place) = places.clone().try_acquire_owned() else {
                tracing::warn!("a connection over the front's limit was closed");
                continue;
            };
            let _ = stream.set_nodelay(true);
            let served = serve(self.clone(), stream);
            tokio::spawn(async move {
                let _place = place;
                served.await
            });
        }
    }

    /// On the owner: a health check of [`OWNER_PATH`] is answered here; anything else is
    /// spliced to the arcade's listener at `to`.
    async fn splice_or_check(&self, mut stream: TcpStream, to: SocketAddr) {
        let mut first = [0u8; OWNER_PATH.len() + 5];
        // A peek (bounded by the bytes the check's request line starts with) tells a
        // health check from anything else without taking its bytes.
        let checked = matches!(
            tokio::time::timeout(self.settings.forward_timeout, stream.peek(&mut first)).await,
            Ok(Ok(n)) if n == first.len() && first.starts_with(b"GET ")
                && &first[4..] == format!("{OWNER_PATH} ").as_bytes()
        );
        if checked {
            let body = format!("owner {}\n", self.settings.name);
            let counts = self.tunnels.counts();
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n{TUNNELS_OPENED}: {}\r\n{TUNNELS_ACCEPTED}: {}\r\nconnection: close\r\n\r\n{body}",
                body.len(),
                counts.opened,
                counts.accepted
            );
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
            return;
        }
        splice(stream, to).await;
    }

    /// A standby's Streamable HTTP connection: each request forwarded (see the module
    /// docs).
    async fn standby_http(self: Arc<Node>, stream: TcpStream) {
        let node = self.clone();
        let service = hyper::service::service_fn(move |req| {
            let node = node.clone();
            async move { Ok::<_, Infallible>(node.forward_http(req).await) }
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(READ_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service)
            .await;
    }

    /// The owner a standby forwards to now, if any (itself, once it owns the arcade).
    fn owner(&self) -> Option<String> {
        match &*self.role.borrow() {
            Role::Owner { .. } => Some(self.settings.name.clone()),
            Role::Standby { owner } => owner.clone(),
        }
    }

    /// One request of a standby's client: forwarded to the owner (a stream through a
    /// tunnel), or refused.
    async fn forward_http(&self, req: Request<Incoming>) -> Response<NodeBody> {
        let long_lived = long_lived(&req);
        match self.exchange(req).await {
            Ok((owner, parts, body, id)) if long_lived => {
                let stop = self.owner_changes(owner.clone());
                self.tunnel_http(owner, parts, body, id, stop).await
            }
            Ok((owner, parts, body, id)) => {
                whole(self.forward_exchange(owner, parts, body, id).await)
            }
            Err(refused) => whole(refused),
        }
    }

    /// A request's head and whole body, and the owner to carry it to; or the answer
    /// refusing it (the health check's answer too).
    async fn exchange(
        &self,
        req: Request<Incoming>,
    ) -> Result<(String, hyper::http::request::Parts, Bytes, Value), Response<Full<Bytes>>> {
        let name = self.settings.name.clone();
        let owner = self.owner();
        if req.method() == Method::GET && req.uri().path() == OWNER_PATH {
            let (status, body) = match &*self.role.borrow() {
                Role::Owner { .. } => (StatusCode::OK, format!("owner {name}\n")),
                Role::Standby { .. } => {
                    (StatusCode::SERVICE_UNAVAILABLE, format!("standby {name}\n"))
                }
            };
            return Err(self.health(status, body));
        }
        let (parts, body, id) = self.read_body(req).await?;
        let Some(owner) = owner else {
            return Err(rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                id,
                &format!(
                    "no node owns the arcade right now (its owner's lease expired; another node takes it over within {:?}): the request did not run; retry it",
                    self.settings.ttl
                ),
                json!({"retryable": true, "ran": false, "node": name, "owner": null}),
            ));
        };
        if !*self.bus.connected().borrow() {
            return Err(rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                id,
                &format!(
                    "node {name:?} has lost its connection to NATS, which carries requests to the arcade's owner (node {owner:?}); it reconnects by itself: the request did not run; retry it"
                ),
                json!({"retryable": true, "ran": false, "node": name, "owner": owner}),
            ));
        }
        Ok((owner, parts, body, id))
    }

    /// The answer to a health check of [`OWNER_PATH`]: `status`, `body`, and the node's
    /// tunnel counts in the headers [`TUNNELS_OPENED`] and [`TUNNELS_ACCEPTED`].
    fn health(&self, status: StatusCode, body: String) -> Response<Full<Bytes>> {
        let mut r = Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = status;
        let counts = self.tunnels.counts();
        for (name, n) in [
            (TUNNELS_OPENED, counts.opened),
            (TUNNELS_ACCEPTED, counts.accepted),
        ] {
            r.headers_mut()
                .insert(HeaderName::from_static(name), HeaderValue::from(n));
        }
        r
    }

    /// A request's head and whole body (bounded, within [`READ_TIMEOUT`]) and its
    /// JSON-RPC id (`null` when it has none); or the answer refusing it.
    async fn read_body(
        &self,
        req: Request<Incoming>,
    ) -> Result<(hyper::http::request::Parts, Bytes, Value), Response<Full<Bytes>>> {
        let name = self.settings.name.clone();
        let (parts, body) = req.into_parts();
        let limit = self.settings.max_message.saturating_sub(HEAD_ROOM);
        let body = match tokio::time::timeout(READ_TIMEOUT, Limited::new(body, limit).collect())
            .await
        {
            Ok(Ok(b)) => b.to_bytes(),
            Err(_) => {
                return Err(rpc_error(
                    StatusCode::REQUEST_TIMEOUT,
                    Value::Null,
                    &format!("the request's body did not arrive within {READ_TIMEOUT:?}"),
                    json!({"node": name}),
                ));
            }
            Ok(Err(_)) => {
                return Err(rpc_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    Value::Null,
                    &format!(
                        "the request's body is over {limit} bytes, the most node {name:?} forwards"
                    ),
                    json!({"node": name}),
                ));
            }
        };
        let id = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v.get("id").cloned())
            .unwrap_or(Value::Null);
        Ok((parts, body, id))
    }

    /// A Streamable HTTP exchange whose answer is a stream (a `GET` for
    /// `text/event-stream`, a `subscriptions/listen` POST), carried to `owner` through a
    /// tunnel: this node's HTTP client sends the request into it, the owner writes it to
    /// its arcade's listener, and the answer streams back as it comes. A tunnel that
    /// cannot be opened is refused at once, retryable (the request did not run); one that
    /// ends (the owner died, lost its lease, a gap) ends the answer, and the client opens
    /// its stream again; so does `stop` resolving.
    async fn tunnel_http(
        &self,
        owner: String,
        parts: hyper::http::request::Parts,
        body: Bytes,
        id: Value,
        stop: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Response<NodeBody> {
        let name = self.settings.name.clone();
        let tunnel = match self.open_tunnel(&owner, KIND_HTTP, Bytes::new()).await {
            Ok(t) => t,
            Err(e) => {
                let (status, message) = self.tunnel_refused(&owner, &e);
                return whole(rpc_error(
                    status,
                    id,
                    &message,
                    json!({"retryable": true, "ran": false, "node": name, "owner": owner}),
                ));
            }
        };
        let (near, far) = tokio::io::duplex(TUNNEL_PIPE);
        let carried = tunnel.id().to_owned();
        tokio::spawn(async move {
            let ended = tunnel.run(far, stop).await;
            tracing::debug!(tunnel = %carried, %ended, "a stream's tunnel ended");
        });
        let failed = |e: &dyn std::fmt::Display| {
            whole(rpc_error(
                StatusCode::BAD_GATEWAY,
                id.clone(),
                &format!("the stream through node {owner:?} failed: {e}; open it again"),
                json!({"retryable": true, "ran": null, "node": name, "owner": owner}),
            ))
        };
        let (mut sender, connection) =
            match hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(near)).await
            {
                Ok(c) => c,
                Err(e) => return failed(&e),
            };
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        let Ok(mut req) = Request::builder()
            .method(parts.method.clone())
            .uri(path)
            .body(Full::new(body))
        else {
            return failed(&"a request that cannot be made again");
        };
        put_headers(req.headers_mut(), &headers_of(&parts.headers));
        match sender.send_request(req).await {
            Ok(answer) => answer.map(|b| b.boxed_unsync()),
            Err(e) => failed(&e),
        }
    }

    /// The status and message a client is given when a tunnel to `owner` could not be
    /// opened: always `503` (and retryable): nothing reached the arcade.
    fn tunnel_refused(&self, owner: &str, e: &TunnelError) -> (StatusCode, String) {
        let name = &self.settings.name;
        let why = match e {
            TunnelError::TooMany { limit } => {
                format!("node {name:?} carries {limit} long-lived connections already, its limit")
            }
            TunnelError::Refused { busy: true, .. } => format!(
                "node {owner:?}, which owns the arcade, carries as many long-lived connections as it may"
            ),
            other => format!(
                "the connection could not be carried to node {owner:?}, which owns the arcade ({other}; it may have died, and another node takes over within {:?})",
                self.settings.ttl
            ),
        };
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{why}: connect again"),
        )
    }

    /// A tunnel to `owner` opened for a standby's client, tried again while nobody takes
    /// opens for `owner` and this node still forwards to it, for at most the lease's time
    /// to live: an owner that has just taken the lease is visible in the lease table
    /// before it takes opens on the bus, as for [`Node::forward_exchange`]'s requests
    /// (**\[project\]**: a takeover costs latency, not a refusal).
    async fn open_tunnel(
        &self,
        owner: &str,
        kind: &str,
        first: Bytes,
    ) -> Result<Tunnel, TunnelError> {
        let give_up = tokio::time::Instant::now() + self.settings.ttl;
        let mut role = self.role.subscribe();
        loop {
            let opened = self.tunnels.open(owner, kind, first.clone()).await;
            let still = matches!(&*role.borrow_and_update(), Role::Standby { owner: Some(o) } if o == owner);
            match opened {
                Err(TunnelError::Bus(BusError::NoNode { .. }))
                    if still && tokio::time::Instant::now() < give_up =>
                {
                    self.waits.send_modify(|n| *n += 1);
                    tokio::time::sleep(NO_RESPONDER_PAUSE).await;
                }
                other => return other,
            }
        }
    }

    /// A request/response exchange carried to `owner` as one NATS request.
    async fn forward_exchange(
        &self,
        owner: String,
        parts: hyper::http::request::Parts,
        body: Bytes,
        id: Value,
    ) -> Response<Full<Bytes>> {
        let payload = forwarded(&parts, &body);
        // An owner that has just taken the lease is visible in the lease table before it
        // answers on the bus (it reads the arcade back first): a request that finds no
        // responder is tried again while this node still forwards to that owner, for at
        // most the lease's time to live — the time in which a dead owner's lease expires
        // and the role changes (**\[project\]**: a takeover costs latency, not a refusal).
        let give_up = tokio::time::Instant::now() + self.settings.ttl;
        let mut role = self.role.subscribe();
        let answer = loop {
            let answer = self
                .bus
                .forward(&owner, payload.clone(), self.settings.forward_timeout)
                .await;
            let still = matches!(&*role.borrow_and_update(), Role::Standby { owner: Some(o) } if *o == owner);
            match answer {
                Err(BusError::NoNode { .. }) if still && tokio::time::Instant::now() < give_up => {
                    self.waits.send_modify(|n| *n += 1);
                    tokio::time::sleep(NO_RESPONDER_PAUSE).await;
                }
                other => break other,
            }
        };
        self.answer_of(&owner, answer, id)
    }

    /// The answer a client is given for a request forwarded to `owner`: the owner's, as
    /// it gave it, or the error saying why there is none.
    fn answer_of(
        &self,
        owner: &str,
        answer: Result<Bytes, BusError>,
        id: Value,
    ) -> Response<Full<Bytes>> {
        let name = self.settings.name.clone();
        match answer.as_ref().map(decode) {
            Ok(Some((head, body))) => {
                let mut r = Response::new(Full::new(body));
                *r.status_mut() = head
                    .status
                    .and_then(|s| StatusCode::from_u16(s).ok())
                    .unwrap_or(StatusCode::BAD_GATEWAY);
                put_headers(r.headers_mut(), &head.headers);
                r
            }
            Ok(None) => rpc_error(
                StatusCode::BAD_GATEWAY,
                id,
                &format!("node {owner:?}'s answer could not be read"),
                json!({"retryable": false, "ran": null, "node": name, "owner": owner}),
            ),
            Err(e @ (BusError::TimedOut { .. } | BusError::Nats(_))) => rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                id,
                &format!(
                    "the arcade's owner did not answer ({e}): the request may have run; read the state again before retrying"
                ),
                json!({"retryable": true, "ran": null, "node": name, "owner": owner}),
            ),
            Err(e @ BusError::TooLarge { .. }) => rpc_error(
                StatusCode::BAD_GATEWAY,
                id,
                &format!("{e}"),
                json!({"retryable": false, "ran": null, "node": name, "owner": owner}),
            ),
            Err(e) => rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                id,
                &format!(
                    "the arcade's owner cannot be reached ({e}; it may have died, and another node takes over within {:?}): the request did not run; retry it",
                    self.settings.ttl
                ),
                json!({"retryable": true, "ran": false, "node": name, "owner": owner}),
            ),
        }
    }

    /// Serves the WebSocket front on `listener` until the process ends: spliced to the
    /// arcade on the owner, carried to it through a tunnel on a standby.
    pub async fn front_ws(self: Arc<Node>, listener: TcpListener) {
        self.front(listener, |node, stream| async move {
            let owner_ws = match &*node.role.borrow() {
                Role::Owner { ws, .. } => *ws,
                Role::Standby { .. } => None,
            };
            match owner_ws {
                Some(to) => splice(stream, to).await,
                None => node.tunnel_ws(stream).await,
            }
        })
        .await
    }

    /// A WebSocket connection's request head: the bytes read up to its blank line (and
    /// any after it in the same reads), at most [`MAX_HEAD`] and within the forward's
    /// timeout; `None` when the client closed or took too long.
    async fn read_head(&self, stream: &mut TcpStream) -> Option<Vec<u8>> {
        let mut head = Vec::with_capacity(1024);
        let read = async {
            let mut buf = [0u8; 1024];
            while head.len() < MAX_HEAD && !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return false,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            true
        };
        matches!(
            tokio::time::timeout(self.settings.forward_timeout, read).await,
            Ok(true)
        )
        .then_some(head)
    }

    /// A standby's WebSocket connection: its request head read (bounded), then the
    /// connection carried to the owner through a tunnel (the head its first bytes) until
    /// either end closes, or the tunnel ends (the client's connection is then closed; it
    /// connects again). When no tunnel can be opened: `503` and `Retry-After: 1`, naming
    /// the owner.
    async fn tunnel_ws(&self, mut stream: TcpStream) {
        let Some(head) = self.read_head(&mut stream).await else {
            return;
        };
        let name = &self.settings.name;
        let why = match self.owner() {
            None => format!(
                "no node owns the arcade right now (its owner's lease expired; another node takes it over within {:?})",
                self.settings.ttl
            ),
            Some(owner) if !*self.bus.connected().borrow() => format!(
                "node {name:?} has lost its connection to NATS, which carries connections to the arcade's owner (node {owner:?})"
            ),
            Some(owner) => match self.open_tunnel(&owner, KIND_WS, Bytes::from(head)).await {
                Ok(tunnel) => {
                    let carried = tunnel.id().to_owned();
                    let ended = tunnel.run(stream, self.owner_changes(owner)).await;
                    tracing::debug!(tunnel = %carried, %ended, "a WebSocket connection's tunnel ended");
                    return;
                }
                Err(e) => self.tunnel_refused(&owner, &e).1,
            },
        };
        refuse_ws(&mut stream, &why).await;
    }

    /// On the owner: accepts the tunnels standbys open to it, each connected to the
    /// arcade's own listener of its kind (`ws`: WebSocket, `http`: Streamable HTTP) on
    /// loopback, its first bytes written there, then carried both ways until it ends. A
    /// kind it does not serve, or a listener that refuses, is refused. Returns once the
    /// bus is closed.
    pub async fn serve_tunnels(
        self: Arc<Node>,
        mut opens: Opens,
        http: Option<SocketAddr>,
        ws: Option<SocketAddr>,
    ) {
        while let Some(open) = opens.next().await {
            let to = match open.kind() {
                KIND_WS => ws,
                KIND_HTTP => http,
                _ => None,
            };
            let node = self.clone();
            tokio::spawn(async move {
                let name = &node.settings.name;
                let Some(to) = to else {
                    let why = format!("node {name:?} serves no {:?} listener", open.kind());
                    open.refuse(&why).await;
                    return;
                };
                let connected =
                    tokio::time::timeout(node.settings.forward_timeout, TcpStream::connect(to))
                        .await;
                let mut stream = match connected {
                    Ok(Ok(s)) => s,
                    Ok(Err(e)) => {
                        open.refuse(&format!("the arcade's listener refused: {e}"))
                            .await;
                        return;
                    }
                    Err(_) => {
                        open.refuse("the arcade's listener did not answer").await;
                        return;
                    }
                };
                let _ = stream.set_nodelay(true);
                let first = open.first().clone();
                let tunnel = match open.accept().await {
                    Ok(t) => t,
                    Err(e) => {
                        tracing::warn!(error = %e, "a tunnel was not accepted");
                        return;
                    }
                };
                if stream.write_all(&first).await.is_err() {
                    // Dropped: the standby finds the tunnel gone at its next keepalive.
                    return;
                }
                let carried = tunnel.id().to_owned();
                let ended = tunnel.run(stream, std::future::pending()).await;
                tracing::debug!(tunnel = %carried, %ended, "a tunnel ended");
            });
        }
    }

    /// On the owner: answers the requests other nodes forward to it, each replayed on the
    /// arcade's Streamable HTTP listener at `to` (`None`: it serves no Streamable HTTP,
    /// and says so), at most a few hundred at once. Returns once the bus is closed.
    pub async fn serve_forwarded(self: Arc<Node>, requests: Requests, to: Option<SocketAddr>) {
        self.serve_forwarded_unless(requests, to, |_| None).await
    }

    /// [`Node::serve_forwarded`], each request first given to `refuse`: what it answers
    /// (an encoded answer) is sent instead of replaying the request.
    async fn serve_forwarded_unless(
        self: Arc<Node>,
        mut requests: Requests,
        to: Option<SocketAddr>,
        refuse: impl Fn(&Bytes) -> Option<Bytes> + Send + Sync + 'static,
    ) {
        let refuse = Arc::new(refuse);
        let client: HttpClient<HttpConnector, Full<Bytes>> =
            HttpClient::builder(TokioExecutor::new()).build_http();
        let places = Arc::new(Semaphore::new(REPLAYING));
        while let Some(request) = requests.next().await {
            let Ok(place) = places.clone().acquire_owned().await else {
                return;
            };
            let (node, client, refuse) = (self.clone(), client.clone(), refuse.clone());
            tokio::spawn(async move {
                let answer = match refuse(request.payload()) {
                    Some(answer) => answer,
                    None => node.replay(&client, request.payload(), to).await,
                };
                if let Err(e) = request.respond(answer).await {
                    tracing::warn!(error = %e, "a forwarded request's answer was not sent");
                }
                drop(place);
            });
        }
    }

    /// One forwarded request, replayed on the arcade's listener: its answer, encoded.
    async fn replay(
        &self,
        client: &HttpClient<HttpConnector, Full<Bytes>>,
        message: &Bytes,
        to: Option<SocketAddr>,
    ) -> Bytes {
        let name = &self.settings.name;
        let fail = |status: StatusCode, message: String| {
            let body = json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32603, "message": message, "data": {"node": name}},
            });
            encode(
                &Head {
                    status: Some(status.as_u16()),
                    headers: vec![("content-type".to_owned(), "application/json".to_owned())],
                    ..Head::default()
                },
                body.to_string().as_bytes(),
            )
        };
        let Some(to) = to else {
            return fail(
                StatusCode::NOT_FOUND,
                format!("node {name:?} serves no Streamable HTTP"),
            );
        };
        let Some((head, body)) = decode(message) else {
            return fail(
                StatusCode::BAD_REQUEST,
                "a forwarded request that could not be read".to_owned(),
            );
        };
        let method = head
            .method
            .as_deref()
            .and_then(|m| Method::from_bytes(m.as_bytes()).ok())
            .unwrap_or(Method::POST);
        let path = head.path.unwrap_or_else(|| "/".to_owned());
        let Ok(mut req) = Request::builder()
            .method(method)
            .uri(format!("http://{to}{path}"))
            .body(Full::new(body))
        else {
            return fail(
                StatusCode::BAD_REQUEST,
                format!("a forwarded request to a path that cannot be: {path:?}"),
            );
        };
        put_headers(req.headers_mut(), &head.headers);
        let limit = self.settings.max_message.saturating_sub(HEAD_ROOM);
        let exchange = async {
            let resp = client.request(req).await.map_err(|e| e.to_string())?;
            let (parts, body) = resp.into_parts();
            let body = Limited::new(body, limit)
                .collect()
                .await
                .map_err(|e| format!("its answer: {e}"))?
                .to_bytes();
            Ok::<_, String>((parts, body))
        };
        match tokio::time::timeout(self.settings.forward_timeout, exchange).await {
            Ok(Ok((parts, body))) => {
                let mut headers = headers_of(&parts.headers);
                headers.push((SERVED_BY.to_owned(), name.clone()));
                encode(
                    &Head {
                        status: Some(parts.status.as_u16()),
                        headers,
                        ..Head::default()
                    },
                    &body,
                )
            }
            Ok(Err(e)) => fail(
                StatusCode::BAD_GATEWAY,
                format!("node {name:?} could not serve the forwarded request: {e}"),
            ),
            Err(_) => fail(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "node {name:?} did not answer the forwarded request within {:?}: it may have run",
                    self.settings.forward_timeout
                ),
            ),
        }
    }
}

/// The next connection of `listener`; `None` after an error (a moment later when it is
/// one that repeats at once, as running out of file descriptors does).
async fn accept(listener: &TcpListener) -> Option<TcpStream> {
    match listener.accept().await {
        Ok((stream, _)) => Some(stream),
        Err(e) => {
            tracing::warn!(error = %e, "accepting a connection failed");
            tokio::time::sleep(Duration::from_millis(50)).await;
            None
        }
    }
}

/// Bytes both ways between a client's connection and the arcade's listener at `to`,
/// until either side closes.
async fn splice(mut stream: TcpStream, to: SocketAddr) {
    match TcpStream::connect(to).await {
        Ok(mut upstream) => {
            let _ = upstream.set_nodelay(true);
            let _ = tokio::io::copy_bidirectional(&mut stream, &mut upstream).await;
        }
        Err(e) => tracing::warn!(error = %e, %to, "the arcade's own listener refused a connection"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_and_a_body_come_back_as_sent() {
        let head = Head {
            method: Some("POST".to_owned()),
            path: Some("/mcp?x=1".to_owned()),
            status: None,
            headers: vec![("mcp-method".to_owned(), "tools/call".to_owned())],
        };
        let body = b"{\"a\":\n1}";
        let (back, rest) = decode(&encode(&head, body)).expect("decoded");
        assert_eq!(back.path.as_deref(), Some("/mcp?x=1"));
        assert_eq!(back.headers, head.headers);
        assert_eq!(&rest[..], body);
        assert!(decode(&Bytes::from_static(b"no newline")).is_none());
        assert!(decode(&Bytes::from_static(b"not json\nbody")).is_none());
    }

    /// A standby forwarding to an owner that holds the lease but does not answer on the
    /// bus yet (still reading the arcade back after its takeover) sends the request again
    /// until it does, rather than refusing it (the race issue #41's PostgreSQL-restart
    /// test met: "no node named n2 answers on the bus").
    #[tokio::test]
    async fn a_request_waits_for_a_new_owner_to_answer_on_the_bus() {
        let nats = mcpl_testkit::nats::Nats::start().expect("nats-server starts");
        let bus = NatsBus::connect(&nats.url(), mcpl_cluster::bus::BusConfig::new("n1"))
            .await
            .expect("n1 on the bus");
        let node = Node::new(
            NodeSettings {
                name: "n1".to_owned(),
                ttl: Duration::from_secs(60),
                forward_timeout: Duration::from_secs(10),
                max_message: 1 << 20,
            },
            Arc::new(bus),
        );
        node.set_role(Role::Standby {
            owner: Some("n2".to_owned()),
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a front");
        let front = listener.local_addr().expect("its address");
        tokio::spawn(node.clone().front_http(listener));
        let mut waits = node.owner_waits();
        let call = tokio::spawn(async move {
            let answer = reqwest::Client::new()
                .post(format!("http://{front}/mcp"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-method", "tools/list")
                .body(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#)
                .send()
                .await
                .expect("answered");
            let status = answer.status().as_u16();
            (status, answer.text().await.expect("a body"))
        });
        // n2 does not answer on the bus yet: the request is sent again, not refused.
        mcpl_testkit::within_named("a wait for n2", waits.wait_for(|n| *n >= 1))
            .await
            .expect("the count");
        assert!(!call.is_finished(), "no answer before the owner answers");
        let n2 = NatsBus::connect(&nats.url(), mcpl_cluster::bus::BusConfig::new("n2"))
            .await
            .expect("n2 on the bus");
        let mut requests = n2.serve().await.expect("n2 serves");
        let request = mcpl_testkit::within_named("the request on n2", requests.next())
            .await
            .expect("the request reaches n2 once it answers");
        let (head, body) = decode(request.payload()).expect("a forwarded request");
        assert_eq!(head.method.as_deref(), Some("POST"));
        assert!(std::str::from_utf8(&body).unwrap().contains(r#""id":7"#));
        let answer = Head {
            method: None,
            path: None,
            status: Some(200),
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
        };
        request
            .respond(encode(
                &answer,
                br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#,
            ))
            .await
            .expect("answered on the bus");
        let (status, text) = mcpl_testkit::within_named("the answer", call)
            .await
            .expect("the call ends");
        assert_eq!(status, 200, "{text}");
        assert!(text.contains(r#""tools":[]"#), "{text}");
    }

    #[test]
    fn hop_by_hop_headers_are_not_carried() {
        let mut map = hyper::HeaderMap::new();
        map.insert("connection", HeaderValue::from_static("keep-alive"));
        map.insert("content-length", HeaderValue::from_static("3"));
        map.insert("authorization", HeaderValue::from_static("Bearer x"));
        assert_eq!(
            headers_of(&map),
            vec![("authorization".to_owned(), "Bearer x".to_owned())]
        );
    }
}

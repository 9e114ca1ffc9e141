//! Ownership per principal (issue #41, `docs/ownership.md` §1; `mcpl-arcade serve
//! --ownership principal`): every node runs an arcade, and each named principal is served
//! on the node holding its lease `(principal, NAME)`.
//!
//! **The front routes by principal.** A node's fronts authenticate each request (its
//! `Authorization` header, the arcade's own tokens) and look up the principal's holder:
//! this node → its own arcade; another node → forwarded there as the coarse standby
//! forwards to the one owner (a POST over the bus, a stream or a WebSocket connection
//! through a tunnel), the holder cached until a forward to it fails; nobody → this node
//! acquires the lease ([`PgLeases::acquire_or_reclaim`]: one under this node's own name is
//! an earlier life's, taken back) into its store's [`Fence`] and serves. A request with
//! no token (anonymous, where let in) or a token the arcade refuses is served where it
//! landed **\[project\]**: an anonymous principal has no record and is never invited.
//!
//! **A node that receives a forwarded request checks it holds the principal**: one it no
//! longer holds (lost, or released) is answered `503` with the header [`NOT_OWNER`], and
//! the sender looks the holder up again — a forward never runs on a node that gave the
//! principal up. A node that is not on the bus (it died: "no responders") is looked up
//! again too, until its lease expires and this node takes it (for at most the lease's
//! time to live and a second; then the request is refused retryable, `ran: false`).
//!
//! **Instances run on their opener's node** (the opener's principal is served there), and
//! each is leased `(instance, ID)` by that node **as it starts** — the arcade's start hook
//! ([`Principals::starting`], `ServerBuilder::on_instance_start`), before its first write
//! — whether opened here or adopted; their other players' principals, on other nodes,
//! reach them through the SDK's peers (`mcpl.i.ID`, `mcpl.a.NAME`; `NatsPeers`). An
//! adoption another node won (it holds the lease) is refused, and its principals here
//! reach it where it runs.
//!
//! **No game left behind** (`docs/ownership.md` §4). Every node scans, at a third of the
//! lease's time to live (beside the renewal, which a scan never holds up), the instance
//! leases that expired ([`PgLeases::expired`], the longest expired first, at most
//! [`SCAN_READS`]): a node that died held them. For each whose record is live, the node
//! decides where it should run **\[project\]**: beside its players — here when this
//! node serves one of them; left to her node when another node serves one and this one
//! none; and when nobody serves any (a game against the bot, its player's node dead with
//! it), here, the players' leases taken first, so that the principals the adoption reads
//! run under their leases and the player, when she comes back, is served beside her game.
//! Then the lease decides: the node takes the instance's lease (another node won it:
//! nothing more) and adopts it (`Server::adopt_instance`: its bot moves, its timers run,
//! with nobody connected). At most [`SCAN_ADOPTS`] adoptions a scan. A record that ended,
//! is gone or cannot run again has its lease taken and released (no scan finds it again);
//! one that cannot be adopted now (a principal of it being read, the peers not answering)
//! has its lease let expire at once for a later scan.
//!
//! **Renewal.** Every lease the node holds is renewed at a third of its time to live in
//! one statement ([`PgLeases::renew_all`]). One lost (another node took it after it
//! expired) is forgotten at once — dropped from the fence and from what this node serves:
//! the principal's next request is forwarded to its new holder — and what ran under it
//! stops at once: a principal's actor released (`Server::release_principal`: her
//! sessions here close, her hosts reconnect and land on her new node, a lease taken back
//! later reads her from her record), an instance released (`Server::release_instance`).
//! The lease of an instance no longer running here is released (one just taken for an
//! instance starting is kept a time to live first; one taken for an instance that never
//! ran here — its adoption refused after the lease was taken — is let expire, its row
//! kept, so that a scan finds it **\[project\]**). A renewal the database fails forgets
//! every lease and ends [`Principals::hold`]: `mcpl-arcade` then stops at once, as the
//! coarse owner does **\[project\]** — its server takes no change once a commit failed
//! (the SDK gives its store up); the others take its players when their leases expire,
//! and started again it serves afresh — and from that moment it takes no lease
//! ([`Principals::stop`]). SIGTERM hands them all on (below).
//!
//! **Stopping** (SIGTERM; `stopping.rs`, [`Principals::hand_on`]): the node takes no new
//! request, answers those in flight, releases its principals and instances with their
//! records as last kept, deletes its principals' lease rows and lets its instances' leases
//! expire, so that another node's next scan adopts its games at once.

use super::lookups::Lookups;
use super::{
    Head, KIND_WS, NO_RESPONDER_PAUSE, Node, NodeBody, OWNER_PATH, blocking, decode, encode,
    forwarded, headers_of, put_headers, rpc_error, whole,
};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use mcpl_cluster::bus::{BusError, Requests};
use mcpl_cluster::leases::{Expired, INSTANCE, Lease, LeaseError, PRINCIPAL};
use mcpl_cluster::{Fence, PgLeases};
use mcpl_server::store::instance_needs;
use mcpl_server::{InstanceStart, OwnershipError, Server, StartRefused, Store};
use mcpl_transport::{Principal, ServerOptions};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;
use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpListener, TcpStream};

mod stopping;

pub use stopping::HandedOn;

/// The header of a node's answer to a forwarded request for a principal it does not hold
/// (any value: the node's name): the sender looks the holder up again.
pub const NOT_OWNER: &str = "mcpl-not-owner";

/// The most instances one scan adopts on a node (**\[project\]**, `docs/ownership.md`
/// §4): each adoption reads its record and its players' records and runs its resume (a
/// bot's move), so a node that finds a dead node's many games takes them a bounded bite
/// per scan — 16 every third of the lease's time (48 a second at the tests' 1.5 s lease,
/// about 5 a second at the default 10 s), the other nodes scanning too — rather than
/// stalling on all of them at once.
pub const SCAN_ADOPTS: usize = 16;

/// The most expired instance leases one scan reads: [`SCAN_ADOPTS`] and as many again
/// three times over, for those another node wins or that should run beside a player
/// another node serves.
pub const SCAN_READS: usize = 4 * SCAN_ADOPTS;

/// The header naming the node whose arcade served a request: on every answer of a node's
/// Streamable HTTP front in this mode, and on every forwarded request's answer (set by
/// the node that replayed it), so a test, a balancer's log or an operator sees where a
/// principal runs.
pub const SERVED_BY: &str = "mcpl-served-by";

/// The header naming the node whose Streamable HTTP front a request landed on, on every
/// answer of that front in this mode (set there, whether served there or forwarded):
/// beside [`SERVED_BY`] it says which requests were forwarded (`sim-perf --only
/// cluster` counts them).
pub const LANDED_ON: &str = "mcpl-landed-on";

/// Where a principal's requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    /// This node's own arcade.
    Here,
    /// The node holding the principal's lease.
    There(String),
    /// Nowhere now: the leases cannot be read (why, said to the client).
    Refused(String),
}

/// The leases a node holds and where the principals it does not hold are served. See the
/// module docs.
pub struct Principals {
    node: Arc<Node>,
    leases: Arc<PgLeases>,
    fence: Fence,
    opts: Arc<ServerOptions>,
    /// The leases held: principals' and instances'.
    held: Mutex<HashMap<(String, String), Lease>>,
    /// Principals served on other nodes, as last looked up.
    elsewhere: Mutex<HashMap<String, String>>,
    /// The principals' look-ups: one at a time per principal (two requests for one
    /// nobody holds take her lease once), several principals' at once
    /// ([`super::lookups`]).
    looking: Lookups,
    /// How many requests of the Streamable HTTP front are being answered.
    serving: tokio::sync::watch::Sender<usize>,
    /// One instance lease taken at a time on this node (the start hook, the scan, the
    /// renewal's catching up): each checks what it holds and takes the lease under it,
    /// so none takes back, with a new token, a lease another just took (its token would
    /// be stale in the fence, and the commits it covers refused).
    leasing: tokio::sync::Mutex<()>,
    /// The instance leases taken for an instance starting here, not yet seen running
    /// (when taken): kept through one renewal at least, so that the renewal does not
    /// release the lease of an instance whose actor is about to run.
    starting: Mutex<HashMap<String, tokio::time::Instant>>,
    /// The store the arcade keeps its records in, read by the scan.
    store: Arc<dyn Store>,
    /// The arcade's own listeners (set once they listen).
    listeners: OnceLock<(Option<SocketAddr>, Option<SocketAddr>)>,
    /// Set once the node stops (`stopping.rs`): it takes nothing more on.
    stopping: AtomicBool,
    /// Held by each renewal, and by a node stopping from its last look at its leases
    /// on: no renewal overtakes the leases let go of (`stopping.rs`).
    renewing: tokio::sync::Mutex<()>,
    client: HttpClient<HttpConnector, Full<Bytes>>,
}

impl std::fmt::Debug for Principals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Principals")
            .field("node", &self.node.name())
            .field("held", &lock(&self.held).len())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Principals {
    /// The fine-grained front of `node`, leasing on `leases` into `fence` (the fence of
    /// `store`, where the arcade keeps its records), authenticating with `opts`. Made
    /// before the arcade, whose start hook is [`Principals::starting`]; it serves once
    /// [`Principals::listening`] named the arcade's own listeners.
    pub fn new(
        node: Arc<Node>,
        leases: Arc<PgLeases>,
        fence: Fence,
        store: Arc<dyn Store>,
        opts: Arc<ServerOptions>,
    ) -> Arc<Principals> {
        Arc::new(Principals {
            looking: Lookups::new(&node.settings.name),
            node,
            leases,
            fence,
            opts,
            held: Mutex::default(),
            elsewhere: Mutex::default(),
            serving: tokio::sync::watch::Sender::new(0),
            leasing: tokio::sync::Mutex::new(()),
            starting: Mutex::default(),
            store,
            listeners: OnceLock::new(),
            stopping: AtomicBool::new(false),
            renewing: tokio::sync::Mutex::new(()),
            client: HttpClient::builder(TokioExecutor::new()).build_http(),
        })
    }

    /// The arcade's own listeners, Streamable HTTP and WebSocket, where this node's
    /// requests for the principals it holds are replayed (once; a second call changes
    /// nothing).
    pub fn listening(&self, http: Option<SocketAddr>, ws: Option<SocketAddr>) {
        let _ = self.listeners.set((http, ws));
    }

    fn http(&self) -> Option<SocketAddr> {
        self.listeners.get().and_then(|(http, _)| *http)
    }

    fn ws(&self) -> Option<SocketAddr> {
        self.listeners.get().and_then(|(_, ws)| *ws)
    }

    /// Takes instance `id`'s lease for this node (one under this node's own name, an
    /// earlier life's, taken back), unless it holds it already (`Ok(None)`), and marks it
    /// starting here; one at a time ([`Principals::leasing`]).
    async fn lease_instance(&self, id: &str) -> Result<Option<Lease>, LeaseError> {
        let _one = self.leasing.lock().await;
        if self.holds(INSTANCE, id) {
            return Ok(None);
        }
        let (leases, key, ttl) = (self.leases.clone(), id.to_owned(), self.node.settings.ttl);
        let lease = blocking(move || leases.acquire_or_reclaim(INSTANCE, &key, ttl)).await?;
        if !self.take(lease.clone()) {
            // Stopping: not held (the row expires); what would start under it does not.
            return Err(LeaseError::Lost {
                kind: lease.kind,
                key: lease.key,
                node: lease.node,
                token: lease.token,
            });
        }
        lock(&self.starting).insert(id.to_owned(), tokio::time::Instant::now());
        Ok(Some(lease))
    }

    /// The arcade's start hook (`ServerBuilder::on_instance_start`, `docs/ownership.md`
    /// §1, §4): an instance opened or adopted here runs only once this node holds its
    /// lease `(instance, ID)`, taken now (one under this node's own name, an earlier
    /// life's, taken back) — so none of its writes happens under no lease, and an
    /// adoption another node won (it holds the lease) is refused
    /// ([`StartRefused::Elsewhere`]). A lease this node holds already (a scan took it
    /// first) lets it start at once; the leases that cannot be read refuse it, retryable.
    pub fn starting(
        self: &Arc<Self>,
        id: u64,
        how: InstanceStart,
    ) -> impl Future<Output = Result<(), StartRefused>> + Send + 'static {
        let me = self.clone();
        async move {
            if me.is_stopping() {
                return Err(StartRefused::Unavailable(format!(
                    "node {:?} is stopping",
                    me.node.settings.name
                )));
            }
            match me.lease_instance(&id.to_string()).await {
                Ok(None) => Ok(()),
                Ok(Some(_)) => {
                    let how = match how {
                        InstanceStart::Opened => "opened",
                        _ => "adopted",
                    };
                    eprintln!(
                        "mcpl-arcade: node {:?} runs instance {id} under its lease ({how} here)",
                        me.node.settings.name
                    );
                    Ok(())
                }
                Err(LeaseError::Held { holder, .. }) => {
                    tracing::info!(instance = id, holder = %holder.node, "an instance another node holds is not started here");
                    Err(StartRefused::Elsewhere)
                }
                Err(e) => Err(StartRefused::Unavailable(format!(
                    "its lease cannot be taken: {e}"
                ))),
            }
        }
    }

    /// The principals whose leases this node holds now, sorted.
    pub fn held_principals(&self) -> Vec<String> {
        let mut names: Vec<String> = lock(&self.held)
            .keys()
            .filter(|(kind, _)| kind == PRINCIPAL)
            .map(|(_, key)| key.clone())
            .collect();
        names.sort();
        names
    }

    /// The named principal an `Authorization` header value authenticates as; `None`
    /// (served where it landed) for none, an anonymous caller, or a token refused (the
    /// arcade refuses it itself).
    fn principal_of(&self, authorization: Option<&str>) -> Option<String> {
        match self.opts.authenticate(Some(authorization?)) {
            Ok(Principal::Named(name)) => Some(name),
            _ => None,
        }
    }

    fn holds(&self, kind: &str, key: &str) -> bool {
        lock(&self.held).contains_key(&(kind.to_owned(), key.to_owned()))
    }

    /// Holds `lease` from now on; false (not held) once the node is stopping.
    fn take(&self, lease: Lease) -> bool {
        let mut held = lock(&self.held);
        if self.is_stopping() {
            return false;
        }
        self.fence.hold(&lease);
        held.insert((lease.kind.clone(), lease.key.clone()), lease);
        true
    }

    /// The node stops serving at once (its leases cannot be renewed, or its store was
    /// given up; `mcpl-arcade` exits once the requests in flight are answered): from now
    /// on it takes no lease — a request for a principal it does not hold is refused
    /// retryable (`ran: false`) where it would have taken her lease, no instance starts
    /// here, no scan adopts — and every lease it holds is forgotten (left to expire; the
    /// fence refuses the writes they covered), so a forwarded request is sent back
    /// [`NOT_OWNER`] **\[project\]**. Without it the node went on taking players' leases
    /// and adopting games in its last second, each then waiting out a lease of a dead node.
    pub fn stop(&self) {
        let all: Vec<Lease> = {
            let held = lock(&self.held);
            self.stopping.store(true, Ordering::Release);
            held.values().cloned().collect()
        };
        for lease in &all {
            self.drop_lease(lease);
        }
    }

    fn drop_lease(&self, lease: &Lease) {
        let mut held = lock(&self.held);
        let key = (lease.kind.clone(), lease.key.clone());
        if held.get(&key).is_some_and(|l| l.token == lease.token) {
            held.remove(&key);
            self.fence.forget(&lease.kind, &lease.key);
        }
    }

    /// Runs the principals' look-ups on [`super::LOOKUPS`] connections of their own to
    /// the database `url`, made now (a blocking call), apart from the renewals' (once; a
    /// second call changes nothing). Without it they share the node's lease connection.
    pub fn look_up_on(&self, url: &str) -> Result<(), LeaseError> {
        self.looking.connect_on(url)
    }

    /// Forgets where `name` was served (a forward there failed).
    fn forget(&self, name: &str) {
        lock(&self.elsewhere).remove(name);
    }

    /// Where `name`'s requests go now (see the module docs).
    async fn route(&self, name: &str) -> Route {
        if self.holds(PRINCIPAL, name) {
            return Route::Here;
        }
        if self.is_stopping() {
            return Route::Refused(format!("node {:?} is stopping", self.node.settings.name));
        }
        if let Some(node) = lock(&self.elsewhere).get(name) {
            return Route::There(node.clone());
        }
        let _one = self.looking.one(name).await;
        if self.holds(PRINCIPAL, name) {
            return Route::Here;
        }
        let ttl = self.node.settings.ttl;
        match self.looking.take(&self.leases, name, ttl).await {
            Ok(lease) => {
                let token = lease.token;
                if !self.take(lease) {
                    return Route::Refused(format!(
                        "node {:?} is stopping",
                        self.node.settings.name
                    ));
                }
                tracing::info!(principal = name, token, "a principal's lease taken");
                Route::Here
            }
            Err(LeaseError::Held { holder, .. }) => {
                lock(&self.elsewhere).insert(name.to_owned(), holder.node.clone());
                Route::There(holder.node)
            }
            Err(e) => Route::Refused(format!("the principals' leases cannot be read: {e}")),
        }
    }

    /// Serves the Streamable HTTP front on `listener` until the process ends: each
    /// request routed by its principal.
    pub async fn front_http(self: Arc<Principals>, listener: TcpListener) {
        let me = self.clone();
        self.node
            .clone()
            .front(listener, move |_, stream| {
                let me = me.clone();
                async move {
                    let service = hyper::service::service_fn(move |req| {
                        let me = me.clone();
                        async move { Ok::<_, Infallible>(me.http_request(req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(super::READ_TIMEOUT)
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                }
            })
            .await
    }

    /// Waits until no request of the Streamable HTTP front is being answered, at most
    /// `bound`: what a node stopping at once gives those in flight (each gets its answer,
    /// a refusal worth retrying, rather than a connection closed).
    pub async fn answered(&self, bound: Duration) {
        let mut serving = self.serving.subscribe();
        let _ = tokio::time::timeout(bound, serving.wait_for(|n| *n == 0)).await;
    }

    /// One request of the Streamable HTTP front: served here or on its principal's node.
    async fn http_request(&self, req: Request<Incoming>) -> Response<NodeBody> {
        self.serving.send_modify(|n| *n += 1);
        let mut answer = self.route_request(req).await;
        self.serving.send_modify(|n| *n -= 1);
        self.mark_landed(&mut answer);
        answer
    }

    /// Marks `answer` [`LANDED_ON`] this node.
    fn mark_landed(&self, answer: &mut Response<NodeBody>) {
        if let Ok(v) = HeaderValue::from_str(&self.node.settings.name) {
            answer.headers_mut().insert(LANDED_ON, v);
        }
    }

    /// [`Principals::http_request`]'s work.
    async fn route_request(&self, req: Request<Incoming>) -> Response<NodeBody> {
        let name = self.node.settings.name.clone();
        if req.method() == Method::GET && req.uri().path() == OWNER_PATH {
            return whole(self.node.health(StatusCode::OK, format!("serves {name}\n")));
        }
        let long_lived = super::long_lived(&req);
        let who = self.principal_of(
            req.headers()
                .get(AUTHORIZATION)
                .and_then(|v| v.to_str().ok()),
        );
        let (parts, body, id) = match self.node.read_body(req).await {
            Ok(read) => read,
            Err(refused) => return whole(refused),
        };
        let Some(who) = who else {
            return self.here(parts, body, id).await;
        };
        let ttl = self.node.settings.ttl;
        let give_up = tokio::time::Instant::now() + ttl + Duration::from_secs(1);
        loop {
            let to = match self.route(&who).await {
                Route::Here => return self.here(parts, body, id).await,
                Route::Refused(why) => {
                    return whole(rpc_error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        id,
                        &format!("{why}: the request did not run; retry it"),
                        json!({"retryable": true, "ran": false, "node": name}),
                    ));
                }
                Route::There(to) => to,
            };
            let late = tokio::time::Instant::now() >= give_up;
            if long_lived {
                let answer = self
                    .node
                    .tunnel_http(to, parts, body, id, std::future::pending())
                    .await;
                if answer.status() == StatusCode::SERVICE_UNAVAILABLE {
                    // Not carried: the holder may have died; looked up again next time.
                    self.forget(&who);
                }
                return answer;
            }
            let answer = self
                .node
                .bus
                .forward(
                    &to,
                    forwarded(&parts, &body),
                    self.node.settings.forward_timeout,
                )
                .await;
            match answer {
                Err(BusError::NoNode { .. }) if !late => {
                    // The holder is not on the bus (it died, or is starting): looked up
                    // again, until its lease expires and this node takes it.
                    self.forget(&who);
                    self.node.waits.send_modify(|n| *n += 1);
                    let wait = self.looking.after_no_responder(
                        &who,
                        &to,
                        (NO_RESPONDER_PAUSE, ttl),
                        give_up,
                    );
                    tokio::time::sleep(wait).await;
                }
                Ok(ref message)
                    if !late
                        && decode(message).is_some_and(|(head, _)| {
                            head.headers.iter().any(|(n, _)| n == NOT_OWNER)
                        }) =>
                {
                    self.forget(&who);
                }
                other => {
                    if other.is_err() {
                        self.forget(&who);
                    }
                    return whole(self.node.answer_of(&to, other, id));
                }
            }
        }
    }

    /// A request served by this node's own arcade: replayed on its Streamable HTTP
    /// listener, its answer (a stream too) given back as it comes, marked [`SERVED_BY`].
    async fn here(
        &self,
        parts: hyper::http::request::Parts,
        body: Bytes,
        id: Value,
    ) -> Response<NodeBody> {
        let name = self.node.settings.name.clone();
        let Some(to) = self.http() else {
            return whole(rpc_error(
                StatusCode::NOT_FOUND,
                id,
                &format!("node {name:?} serves no Streamable HTTP"),
                json!({"node": name}),
            ));
        };
        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        let Ok(mut req) = Request::builder()
            .method(parts.method.clone())
            .uri(format!("http://{to}{path}"))
            .body(Full::new(body))
        else {
            return whole(rpc_error(
                StatusCode::BAD_REQUEST,
                id,
                &format!("a request to a path that cannot be: {path:?}"),
                json!({"node": name}),
            ));
        };
        put_headers(req.headers_mut(), &headers_of(&parts.headers));
        match self.client.request(req).await {
            Ok(answer) => {
                let mut answer = answer.map(|b| b.boxed_unsync());
                if let Ok(v) = HeaderValue::from_str(&name) {
                    answer.headers_mut().insert(SERVED_BY, v);
                }
                answer
            }
            Err(e) => whole(rpc_error(
                StatusCode::BAD_GATEWAY,
                id,
                &format!("node {name:?}'s arcade did not serve the request: {e}"),
                json!({"retryable": true, "ran": null, "node": name}),
            )),
        }
    }

    /// Serves the WebSocket front on `listener` until the process ends: each connection
    /// routed by the principal its request head's `Authorization` names.
    pub async fn front_ws(self: Arc<Principals>, listener: TcpListener) {
        let me = self.clone();
        self.node
            .clone()
            .front(listener, move |_, stream| me.clone().ws_connection(stream))
            .await
    }

    /// One WebSocket connection: spliced to this node's arcade, or carried to its
    /// principal's node through a tunnel.
    async fn ws_connection(self: Arc<Principals>, mut stream: TcpStream) {
        let Some(head) = self.node.read_head(&mut stream).await else {
            return;
        };
        let who = authorization_of(&head).and_then(|a| self.principal_of(Some(&a)));
        let give_up = tokio::time::Instant::now() + self.node.settings.ttl + Duration::from_secs(1);
        let why = loop {
            let route = match &who {
                Some(who) => self.route(who).await,
                None => Route::Here,
            };
            match route {
                Route::Here => {
                    let Some(to) = self.ws() else {
                        break "this node serves no WebSocket".to_owned();
                    };
                    match TcpStream::connect(to).await {
                        Ok(mut upstream) => {
                            let _ = upstream.set_nodelay(true);
                            if upstream.write_all(&head).await.is_ok() {
                                let _ =
                                    tokio::io::copy_bidirectional(&mut stream, &mut upstream).await;
                            }
                            return;
                        }
                        Err(e) => break format!("the arcade's own listener refused: {e}"),
                    }
                }
                Route::Refused(why) => break why,
                Route::There(to) => {
                    match self
                        .node
                        .tunnels
                        .open(&to, KIND_WS, Bytes::from(head.clone()))
                        .await
                    {
                        Ok(tunnel) => {
                            let _ = tunnel.run(stream, std::future::pending()).await;
                            return;
                        }
                        Err(e) => {
                            if let Some(who) = &who {
                                self.forget(who);
                            }
                            if tokio::time::Instant::now() >= give_up {
                                break self.node.tunnel_refused(&to, &e).1;
                            }
                            tokio::time::sleep(NO_RESPONDER_PAUSE).await;
                        }
                    }
                }
            }
        };
        super::refuse_ws(&mut stream, &why).await;
    }

    /// Answers the requests other nodes forward to this one: replayed on the arcade's
    /// listener when this node holds their principal's lease, else answered `503` with
    /// [`NOT_OWNER`]. Returns once the bus is closed.
    pub async fn serve_forwarded(self: Arc<Principals>, requests: Requests) {
        let me = self.clone();
        let to = self.http();
        self.node
            .clone()
            .serve_forwarded_unless(requests, to, move |message| me.not_owner(message))
            .await
    }

    /// The answer to a forwarded request for a principal this node does not hold; `None`
    /// for one it serves.
    fn not_owner(&self, message: &Bytes) -> Option<Bytes> {
        let (head, body) = decode(message)?;
        let authorization = head
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("authorization"))
            .map(|(_, v)| v.as_str());
        let who = self.principal_of(authorization)?;
        if self.holds(PRINCIPAL, &who) && !self.is_stopping() {
            return None;
        }
        let name = &self.node.settings.name;
        let id = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v.get("id").cloned())
            .unwrap_or(Value::Null);
        let answer = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32603,
                "message": format!("node {name:?} does not serve {who:?} now: the request did not run; retry it"),
                "data": {"retryable": true, "ran": false, "node": name}},
        });
        Some(encode(
            &Head {
                status: Some(StatusCode::SERVICE_UNAVAILABLE.as_u16()),
                headers: vec![
                    ("content-type".to_owned(), "application/json".to_owned()),
                    ("retry-after".to_owned(), "1".to_owned()),
                    (NOT_OWNER.to_owned(), name.clone()),
                ],
                ..Head::default()
            },
            answer.to_string().as_bytes(),
        ))
    }

    /// Keeps this node's leases (see the module docs): at a third of their time to live,
    /// each instance `server` runs leased (one it no longer runs released), then every
    /// lease renewed in one statement and those lost forgotten. Returns when the database
    /// fails a renewal, every lease forgotten:
    /// the node is to stop at once (module docs, "Renewal").
    pub async fn hold(self: Arc<Principals>, server: Server) -> LeaseError {
        let ttl = self.node.settings.ttl;
        let mut tick = tokio::time::interval(ttl / 3);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            self.lease_instances(&server).await;
            let renewing = self.renewing.lock().await;
            let all: Vec<Lease> = lock(&self.held).values().cloned().collect();
            let leases = self.leases.clone();
            let renewed = blocking(move || leases.renew_all(&all, ttl)).await;
            drop(renewing);
            match renewed {
                Ok(lost) => {
                    for lease in lost {
                        eprintln!(
                            "mcpl-arcade: node {:?} lost the {} lease {:?}: it serves it no more",
                            self.node.settings.name, lease.kind, lease.key
                        );
                        self.drop_lease(&lease);
                        self.stop_lost(&server, lease);
                    }
                }
                Err(e) => {
                    let all: Vec<Lease> = lock(&self.held).values().cloned().collect();
                    for lease in &all {
                        self.drop_lease(lease);
                    }
                    return e;
                }
            }
        }
    }

    /// What ran here under `lease`, now lost, stops at once (`docs/ownership.md` §1; its
    /// writes would be fenced anyway): a principal's actor released
    /// ([`Server::release_principal`]: her sessions close, and her hosts reconnect where
    /// her lease now is), an instance released ([`Server::release_instance`]). A principal
    /// being read or retiring just now is asked again every 100 ms for up to the lease's
    /// time to live.
    fn stop_lost(&self, server: &Server, lease: Lease) {
        let (server, node) = (server.clone(), self.node.settings.name.clone());
        let ttl = self.node.settings.ttl;
        tokio::spawn(async move {
            let (kind, key) = (lease.kind.as_str(), lease.key.as_str());
            let outcome = if kind == PRINCIPAL {
                stopping::release_principal(&server, key, ttl).await
            } else if let (INSTANCE, Ok(id)) = (kind, key.parse::<u64>()) {
                server.release_instance(id).await
            } else {
                return;
            };
            match outcome {
                Ok(()) => eprintln!(
                    "mcpl-arcade: node {node:?} stopped the {kind} {key:?}: its lease was lost"
                ),
                Err(
                    OwnershipError::PrincipalNotRunning { .. } | OwnershipError::NotRunning { .. },
                ) => {}
                Err(e) => eprintln!(
                    "mcpl-arcade: node {node:?} lost the {kind} lease {key:?} and could not stop it cleanly: {e}"
                ),
            }
        });
    }

    /// Releases the lease of each instance `server` no longer runs (one taken for an
    /// instance starting here is kept a time to live first: its actor may not run yet);
    /// leases each instance it runs that this node holds no lease of — none, since every
    /// instance is leased as it starts ([`Principals::starting`]), unless that lease was
    /// lost or could not be renewed since.
    async fn lease_instances(&self, server: &Server) {
        if self.is_stopping() {
            // Its instances are being released: their leases are let expire, not dropped.
            return;
        }
        let running: HashSet<String> = server
            .running_instances()
            .await
            .into_iter()
            .map(|id| id.to_string())
            .collect();
        let ttl = self.node.settings.ttl;
        // Taken for an instance starting here that was never seen running: its start
        // may have been refused after its lease was taken (an adoption another server's
        // actor still held, its address served), so its record may be live with nobody
        // running it.
        let mut never_ran = HashSet::new();
        let released: Vec<Lease> = {
            let mut starting = lock(&self.starting);
            starting.retain(|id, at| {
                let keep = !running.contains(id) && at.elapsed() < ttl;
                if !keep && !running.contains(id) {
                    never_ran.insert(id.clone());
                }
                keep
            });
            lock(&self.held)
                .values()
                .filter(|l| {
                    l.kind == INSTANCE
                        && !running.contains(&l.key)
                        && !starting.contains_key(&l.key)
                })
                .cloned()
                .collect()
        };
        for lease in released {
            self.drop_lease(&lease);
            let leases = self.leases.clone();
            if never_ran.contains(&lease.key) {
                // Let expire, its row kept, rather than released **[project]**: a
                // released lease has no row, and no scan would find a live record nobody
                // runs — its players' calls "try again" for good. A scan reads the record
                // and adopts it beside its players, or forgets an ended one.
                let _ = blocking(move || leases.expire(&lease)).await;
            } else {
                let _ = blocking(move || leases.release(&lease)).await;
            }
        }
        for id in running {
            if self.holds(INSTANCE, &id) {
                continue;
            }
            match self.lease_instance(&id).await {
                Ok(None) => {}
                Ok(Some(_)) => {
                    eprintln!(
                        "mcpl-arcade: node {:?} runs instance {id} under its lease (taken again)",
                        self.node.settings.name
                    );
                }
                Err(e) => {
                    tracing::warn!(instance = %id, error = %e, "an instance running here could not be leased")
                }
            }
        }
    }

    /// Scans for the instances a dead node ran, at a third of the lease's time to live
    /// until the process ends (`docs/ownership.md` §4; see the module docs): each scan
    /// adopts at most [`SCAN_ADOPTS`] of them here. One scan at a time, apart from the
    /// renewals (a scan's adoptions never hold a renewal up).
    pub async fn scan(self: Arc<Principals>, server: Server) {
        let mut tick = tokio::time::interval(self.node.settings.ttl / 3);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            self.scan_once(&server).await;
        }
    }

    /// One scan: the expired instance leases read (at most [`SCAN_READS`], the longest
    /// expired first), each tried in turn until [`SCAN_ADOPTS`] are adopted here.
    async fn scan_once(&self, server: &Server) -> usize {
        if self.is_stopping() {
            return 0;
        }
        let leases = self.leases.clone();
        let expired = match blocking(move || leases.expired(INSTANCE, SCAN_READS)).await {
            Ok(expired) => expired,
            Err(e) => {
                tracing::warn!(error = %e, "the expired instance leases cannot be read: no scan now");
                return 0;
            }
        };
        let mut adopted = 0;
        for lease in expired {
            if adopted == SCAN_ADOPTS || self.is_stopping() {
                break;
            }
            // One this node believes it holds: its renewal says it lost it.
            if self.holds(INSTANCE, &lease.key) {
                continue;
            }
            let Ok(id) = lease.key.parse::<u64>() else {
                continue;
            };
            if self.adopt_expired(server, id, &lease).await {
                adopted += 1;
            }
        }
        adopted
    }

    /// Adopts instance `id`, whose lease `expired`, here when this node is where it should
    /// run (see the module docs) and wins its lease; true when it did.
    async fn adopt_expired(&self, server: &Server, id: u64, expired: &Expired) -> bool {
        let me = self.node.settings.name.clone();
        let ttl = self.node.settings.ttl;
        let store = self.store.clone();
        let record = match tokio::task::spawn_blocking(move || store.load_instance(id)).await {
            Ok(Ok(record)) => record,
            Ok(Err(e)) => {
                tracing::warn!(instance = id, error = %e, "an instance whose lease expired cannot be read: not adopted now");
                return false;
            }
            Err(_) => return false,
        };
        let needs = record.as_deref().and_then(instance_needs);
        if needs.as_ref().is_none_or(|n| n.ended) {
            // Ended, gone, or unreadable: nothing to run. Its lease is taken and released,
            // so that no scan finds it again.
            self.forget_instance_lease(id).await;
            return false;
        }
        let players = needs.map(|n| n.principals).unwrap_or_default();
        // Where it should run: beside a player this node serves; or, when no node
        // serves any of them, here — with the players' leases taken first, so that their
        // actors, read by the adoption, run under them. A player served elsewhere: her
        // node adopts it.
        let (mut mine, mut others) = (false, false);
        let mut free = Vec::new();
        for name in &players {
            let (leases, key) = (self.leases.clone(), name.clone());
            match blocking(move || leases.holder(PRINCIPAL, &key)).await {
                Ok(Some(h)) if h.node == me => mine = true,
                Ok(Some(_)) => others = true,
                Ok(None) => free.push(name.clone()),
                Err(_) => return false,
            }
        }
        if others && !mine {
            return false;
        }
        for name in free {
            // As a first request takes a principal's lease: one look-up of her at a time.
            let _one = self.looking.one(&name).await;
            if self.holds(PRINCIPAL, &name) {
                continue;
            }
            match self.looking.take(&self.leases, &name, ttl).await {
                Ok(lease) => {
                    if !self.take(lease) {
                        return false;
                    }
                    tracing::info!(principal = %name, instance = id, "a principal's lease taken for a scan's adoption");
                }
                // Taken meanwhile: her node adopts it.
                Err(_) => return false,
            }
        }
        let lease = match self.lease_instance(&id.to_string()).await {
            Ok(Some(lease)) => lease,
            // Taken here meanwhile (a principal's first use adopting it), or another
            // node won it: whoever holds it adopts it.
            Ok(None) | Err(_) => return false,
        };
        let adopted = match server.adopt_instance(id).await {
            // Adopted here meanwhile by a principal's first use (one of its players,
            // read by another adoption of this scan): it runs here, under this lease.
            Err(_) if server.running_instances().await.contains(&id) => Ok(()),
            other => other,
        };
        match adopted {
            Ok(()) => {
                eprintln!(
                    "mcpl-arcade: node {me:?} runs instance {id} under its lease, adopted by a scan (its lease expired on node {:?} {:?} ago)",
                    expired.node, expired.ago
                );
                true
            }
            Err(
                e @ (OwnershipError::Ended { .. }
                | OwnershipError::Unknown { .. }
                | OwnershipError::Unreadable { .. }),
            ) => {
                tracing::info!(instance = id, error = %e, "an instance whose lease expired will not run again: its lease is released");
                self.drop_lease(&lease);
                let leases = self.leases.clone();
                let _ = blocking(move || leases.release(&lease)).await;
                false
            }
            Err(e) => {
                // Not now (a principal of it being read, the peers not answering, a node
                // still serving it): let go of at once, expired, for a later scan.
                tracing::info!(instance = id, error = %e, "an instance whose lease expired is not adopted now: tried again at a later scan");
                self.drop_lease(&lease);
                let leases = self.leases.clone();
                let _ = blocking(move || leases.expire(&lease)).await;
                false
            }
        }
    }

    /// Takes instance `id`'s expired lease and releases it at once (its record ended, is
    /// gone or cannot be read: nobody will run it).
    async fn forget_instance_lease(&self, id: u64) {
        let (leases, key, ttl) = (self.leases.clone(), id.to_string(), self.node.settings.ttl);
        if let Ok(lease) = blocking(move || leases.acquire_or_reclaim(INSTANCE, &key, ttl)).await {
            let leases = self.leases.clone();
            let _ = blocking(move || leases.release(&lease)).await;
        }
    }
}

/// Where a player an invitation (or an outbox's batches) brings to this node's arcade may
/// start (`docs/ownership.md` §1; [`mcpl_server::Placement`]): here when this node holds
/// her lease, or takes it now because nobody does ([`Principals`]'s own look-up, as for
/// her first request); elsewhere when another node holds it — the SDK then sends the
/// invitation to her address again after a pause, where that node serves her once she
/// uses it. Nobody can say (the leases unreadable, or the fronts not made yet): asked
/// again later.
#[derive(Default)]
pub struct LeasePlacement {
    owners: std::sync::OnceLock<Arc<Principals>>,
}

impl std::fmt::Debug for LeasePlacement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeasePlacement")
            .field("serving", &self.owners.get().is_some())
            .finish()
    }
}

impl LeasePlacement {
    /// Places players by `owners`' leases from now on (made after the arcade).
    pub fn serve(&self, owners: &Arc<Principals>) {
        let _ = self.owners.set(owners.clone());
    }
}

impl mcpl_server::Placement for LeasePlacement {
    fn place(
        &self,
        name: &str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = mcpl_server::Placed> + Send>> {
        use mcpl_server::Placed;
        let (owners, name) = (self.owners.get().cloned(), name.to_owned());
        Box::pin(async move {
            let Some(owners) = owners.filter(|o| !o.is_stopping()) else {
                // Not made yet, or stopping: she starts wherever she is used next.
                return Placed::Unknown;
            };
            match owners.route(&name).await {
                Route::Here => {
                    eprintln!(
                        "mcpl-arcade: node {:?} starts {name:?}, brought by an invitation, under the lease it holds",
                        owners.node.settings.name
                    );
                    Placed::Here
                }
                Route::There(_) => {
                    // Looked up again next time: that holder's lease may expire.
                    owners.forget(&name);
                    Placed::Elsewhere
                }
                Route::Refused(_) => Placed::Unknown,
            }
        })
    }
}

/// The `Authorization` header's value in a WebSocket request head, if any (the first).
fn authorization_of(head: &[u8]) -> Option<String> {
    let end = head.windows(4).position(|w| w == b"\r\n\r\n")?;
    std::str::from_utf8(&head[..end])
        .ok()?
        .split("\r\n")
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case("authorization"))
        .map(|(_, v)| v.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_websocket_heads_authorization_is_found() {
        let head = b"GET / HTTP/1.1\r\nHost: x\r\nauthorization: Bearer alice \r\n\r\n";
        assert_eq!(authorization_of(head).as_deref(), Some("Bearer alice"));
        assert_eq!(authorization_of(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), None);
        assert_eq!(
            authorization_of(b"GET / HTTP/1.1\r\nAuthorization: x"),
            None
        );
    }
}

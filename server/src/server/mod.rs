//! [`Server`]: what every session of a server shares — who it is, its manifest, its tools
//! and toolsets, its principals — and [`ServerBuilder`] (`builder.rs`), where a server
//! author fills them in.
//!
//! The principals are owned by the registry actor (`actors/registry.rs`, keyed by
//! [`Principal`], §4.6): a session attaches to its principal's actor (started on first
//! use), invitations reach a principal that may have no connection, and an idle principal
//! retires from it. A `Server` only reads what the registry publishes (counts, who is
//! online) and sends it manifest replacements.

mod builder;

pub use builder::{BuildError, ServerBuilder};

use crate::actors::principal::SwapCatalog;
use crate::actors::registry::{Published, Registry};
use crate::ids::SessionId;
use crate::manifest::{self, ManifestError};
use crate::session::{SessionActor, SessionHandle};
use crate::shared::{Shared, build_catalog};
use crate::tool::Handlers;
use actix::prelude::*;
use mcpl_protocol::mcp::Implementation;
use mcpl_protocol::mcpl::McplManifest;
use mcpl_transport::{Connection, Principal};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};
use tokio::sync::watch;

/// The name of the feature set every manifest starts with; its `uses` are `tools` and
/// `pushEvents`.
pub const DEFAULT_FEATURE_SET: &str = "default";
/// The default number of tools on a `tools/list` page.
pub const DEFAULT_PAGE_SIZE: usize = 100;
/// The default time a push waits for the host's answer.
pub const DEFAULT_PUSH_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time a tool handler's request to the client (`sampling/createMessage`,
/// `elicitation/create`) waits for its answer: long, since a person may be answering.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// One page of who is online ([`Server::online_page`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnlinePage {
    /// The named principals online on this page, sorted by name.
    pub principals: Vec<Principal>,
    /// How many named principals are online in all.
    pub total: usize,
}

/// A server: cheap to clone (it is shared), `Send` and `Sync`. Serve each connection with
/// [`Server::serve`].
#[derive(Clone)]
pub struct Server {
    pub(crate) shared: Arc<Shared>,
    handlers: Arc<Handlers>,
    published: Arc<Published>,
    /// The registry actor, started with the first session on that session's arbiter.
    registry: Arc<OnceLock<Addr<Registry>>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.shared.profile.info)
            .field("tools", &self.shared.tools.len())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A builder for a server with this implementation name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name, version)
    }

    /// Starts a session for `conn` on the current actix arbiter and returns its handle.
    ///
    /// # Panics
    ///
    /// Outside an actix `System` (e.g. a plain `#[tokio::main]`): actors need one. Use
    /// `#[actix::main]`, `#[actix::test]`, `actix::System::new().block_on(..)`, or
    /// [`Server::serve_in`] from another thread.
    pub fn serve(&self, conn: Connection) -> SessionHandle {
        let (id, principal) = self.identify(&conn);
        let registry = self.registry(&Arbiter::current());
        let addr = SessionActor::new(self.parts(registry), conn, id, principal.clone()).start();
        SessionHandle::new(addr, id, principal)
    }

    /// Starts a session for `conn` on the given arbiter (from any thread) and returns its
    /// handle.
    pub fn serve_in(&self, arbiter: &ArbiterHandle, conn: Connection) -> SessionHandle {
        let (id, principal) = self.identify(&conn);
        let parts = self.parts(self.registry(arbiter));
        let p = principal.clone();
        let addr =
            SessionActor::start_in_arbiter(arbiter, move |_| SessionActor::new(parts, conn, id, p));
        SessionHandle::new(addr, id, principal)
    }

    /// Starts the server's principals and instances on `arbiter` now — with a store, its
    /// durable state read back (issue #15) — rather than with the first session. A server
    /// whose instances act on their own (a bot to move, timers) or are watched by someone
    /// other than their players (the arcade's spectators) resumes them at once after a
    /// restart, not when a player comes back. Later calls, and sessions, use what the first
    /// started.
    pub fn start_on(&self, arbiter: &ArbiterHandle) {
        self.registry(arbiter);
    }

    pub(crate) fn new(shared: Shared, handlers: Handlers) -> Server {
        Server {
            shared: Arc::new(shared),
            handlers: Arc::new(handlers),
            published: Arc::new(Published::new()),
            registry: Arc::new(OnceLock::new()),
        }
    }

    /// The registry, started on `arbiter` by the first session.
    fn registry(&self, arbiter: &ArbiterHandle) -> Addr<Registry> {
        self.registry
            .get_or_init(|| {
                let (shared, published) = (self.shared.clone(), self.published.clone());
                Registry::start_in_arbiter(arbiter, move |_| Registry::new(shared, published))
            })
            .clone()
    }

    /// What a session is made of besides its connection.
    fn parts(&self, registry: Addr<Registry>) -> crate::session::Parts {
        crate::session::Parts {
            shared: self.shared.clone(),
            handlers: self.handlers.clone(),
            registry,
        }
    }

    /// A fresh session id, and the connection's principal. A server end always knows its
    /// peer's principal; one built without is an anonymous principal that shares nothing
    /// (RFC-014 §4.6).
    fn identify(&self, conn: &Connection) -> (SessionId, Principal) {
        let id = self.shared.next_session_id();
        (
            id,
            conn.info
                .principal
                .clone()
                .unwrap_or_else(Principal::anonymous),
        )
    }

    /// Who the server says it is in `initialize`.
    pub fn info(&self) -> &Implementation {
        &self.shared.profile.info
    }

    /// The instructions sent in `initialize`, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.shared.profile.instructions.as_deref()
    }

    /// The current manifest, as the server holds it (each host is shown its own view).
    pub fn manifest(&self) -> Arc<McplManifest> {
        self.shared.manifest()
    }

    /// Replaces the manifest (RFC-014 §4.1). Its `toolHints`, `toolsets` and `surface` are
    /// the new declarations of the server's tools: every principal follows them — a removed
    /// toolset's instances end with ended records (vector 33), a withdrawn `toolHints` makes
    /// the server hint-less for every connection (vector 34) — and every live session that
    /// has shown its host a manifest sends `mcpl/manifestChanged {revision, domains}` for
    /// what changed in *its* view (a host without `toolHints` hears nothing of a change only
    /// to RFC-014's members). A toolset declared anew without logic opens plain instances.
    pub fn replace_manifest(&self, new: McplManifest) -> Result<(), ManifestError> {
        manifest::check(&new)?;
        let catalog = build_catalog(self.shared.tools.clone(), &new, self.shared.plain_hosts)?;
        self.shared.replace(new, catalog, |catalog| {
            // No registry yet: no principal to tell.
            if let Some(registry) = self.registry.get() {
                registry.do_send(SwapCatalog(catalog));
            }
        });
        Ok(())
    }

    /// Tells the sessions watching the resource at `uri` that it changed (MCP
    /// `notifications/resources/updated`; see [`ServerBuilder::resource_subscriptions`]): a
    /// legacy session subscribed to it (`resources/subscribe`) writes
    /// `notifications/resources/updated {uri}`, and each modern `subscriptions/listen`
    /// stream that names it writes the same with its subscription id in `_meta`. No other
    /// session hears of it. Returns how many sessions were told (0 when nobody watches
    /// `uri`, or resources may not be watched); each writes as it gets to it, in order with
    /// what it writes besides.
    ///
    /// ```no_run
    /// # fn moved(server: &mcpl_server::Server) {
    /// server.resource_updated("game://go-1/board");
    /// # }
    /// ```
    pub fn resource_updated(&self, uri: &str) -> usize {
        self.shared.watchers.tell(uri)
    }

    /// How many sessions are live.
    pub fn session_count(&self) -> usize {
        *self.published.sessions.borrow()
    }

    /// How many principals the server holds state for: connected ones, and those whose
    /// kept toolsets or ended records outlive their connections (§4.3, §4.6).
    pub fn principal_count(&self) -> usize {
        self.published.principals.load(Ordering::Relaxed)
    }

    /// The named principals with at least one live session, sorted: who is online (for a
    /// lobby's "players online"). Anonymous principals are never listed — they share
    /// nothing and nobody can invite them (§4.6) — and a principal whose toolsets outlive
    /// its connections is not online.
    ///
    /// ```no_run
    /// # fn lobby(server: &mcpl_server::Server) {
    /// let names: Vec<String> = server.online_principals().iter().map(|p| p.name()).collect();
    /// println!("online: {}", names.join(", "));
    /// # }
    /// ```
    pub fn online_principals(&self) -> Vec<Principal> {
        let online = self
            .published
            .online
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        online.iter().cloned().collect()
    }

    /// One page of [`Server::online_principals`] without building the whole list: at most
    /// `limit` named principals online whose names sort after `after` (all of them from
    /// the first when `None`; `after` need not be anyone's name), in order, and how many
    /// are online in all. For a lobby whose "players online" must stay short with
    /// thousands connected.
    ///
    /// ```no_run
    /// # fn lobby(server: &mcpl_server::Server) {
    /// let page = server.online_page(Some("bob"), 50);
    /// println!("{} of {} online after bob", page.principals.len(), page.total);
    /// # }
    /// ```
    pub fn online_page(&self, after: Option<&str>, limit: usize) -> OnlinePage {
        use std::ops::Bound;
        let online = self
            .published
            .online
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let from = match after {
            Some(name) => Bound::Excluded(Principal::Named(name.to_owned())),
            None => Bound::Unbounded,
        };
        OnlinePage {
            principals: online
                .range((from, Bound::Unbounded))
                .take(limit)
                .cloned()
                .collect(),
            total: online.len(),
        }
    }

    /// Whether `principal` is online: named, with at least one live session (as
    /// [`Server::online_principals`] would list it, without building the list).
    pub fn is_online(&self, principal: &Principal) -> bool {
        self.published
            .online
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(principal)
    }

    /// Watches the number of live sessions (for tests and operators: await a principal's
    /// last connection going away without polling).
    pub fn watch_sessions(&self) -> watch::Receiver<usize> {
        self.published.sessions.subscribe()
    }

    /// What the server read back from its store when it started (issue #15): `None`
    /// without a store, or before it started (its first session starts it).
    pub fn restored(&self) -> Option<crate::store::Restored> {
        self.published
            .restored
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// What its store did so far (issue #42 item 1): steps handed over and the commits
    /// that kept them (concurrent steps share one). `None` without a store.
    pub fn store_stats(&self) -> Option<crate::store::StoreStats> {
        self.shared
            .commits
            .as_ref()
            .map(crate::store::CommitQueue::stats)
    }

    /// Resolves once the server's store was given up, with why: a commit failed, and from
    /// then on the server takes no change it cannot keep (each is refused "Not
    /// acknowledged", issue #37 item 2) until it is started again. Never without a store,
    /// nor while every step is kept. What a cluster node awaits to stop, as when its
    /// leases cannot be renewed, rather than serve on refusing every change (issue #41).
    pub fn store_given_up(
        &self,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = String> + Send + 'static>> {
        match &self.shared.commits {
            Some(commits) => Box::pin(commits.given_up()),
            None => Box::pin(std::future::pending()),
        }
    }

    /// The server's time now (its [`Clock`](crate::Clock)).
    pub fn now(&self) -> SystemTime {
        self.shared.now()
    }

    /// The ids of the instances this server runs, sorted (issue #41: what a node holds
    /// leases for). An instance released, or stopped once nobody linked to it, is not
    /// among them.
    pub async fn running_instances(&self) -> Vec<u64> {
        let Some(registry) = self.registry.get() else {
            return Vec::new();
        };
        registry
            .send(crate::actors::registry::RunningInstances)
            .await
            .unwrap_or_default()
    }

    /// Stops running instance `id` without ending it (issue #41 item 3,
    /// `docs/ownership.md` §4), so that another server on the same store — or this one —
    /// adopts it ([`Server::adopt_instance`]). From now on it takes no step: a call to it
    /// is answered at once with a JSON-RPC error (-32603, `data: {retryable: true, ran:
    /// false}`), its timers and its bot wait for its adoption. Answered once every step it
    /// handed to the store is decided, its record — live, what its players were told —
    /// the one an adoption reads.
    ///
    /// Refused: an instance that does not run here ([`OwnershipError::NotRunning`],
    /// releasing twice among them), that ended ([`OwnershipError::Ended`]: its players
    /// are told of it here), that has invitations not taken up
    /// ([`OwnershipError::InvitationsPending`] **\[project\]**), whose logic is not
    /// kept ([`OwnershipError::NotDurable`]: it could not run again), or that is being
    /// released. A step that could not be kept gives [`OwnershipError::NotKept`], the
    /// instance released all the same.
    ///
    /// [`OwnershipError::NotRunning`]: crate::OwnershipError::NotRunning
    /// [`OwnershipError::Ended`]: crate::OwnershipError::Ended
    /// [`OwnershipError::InvitationsPending`]: crate::OwnershipError::InvitationsPending
    /// [`OwnershipError::NotKept`]: crate::OwnershipError::NotKept
    /// [`OwnershipError::NotDurable`]: crate::OwnershipError::NotDurable
    pub async fn release_instance(&self, id: u64) -> Result<(), crate::OwnershipError> {
        let Some(registry) = self.registry.get() else {
            return Err(crate::OwnershipError::NotRunning { id });
        };
        registry
            .send(crate::actors::registry::ReleaseInstance { id })
            .await
            .unwrap_or(Err(crate::OwnershipError::Gone))
    }

    /// Stops principal `name`'s actor here without ending anything (issue #41,
    /// `docs/ownership.md` §1, §4: a node that lost her lease, or gives her away), so that
    /// her next first use — on another server over the same store, or on this one —
    /// reads her from her record and takes her over. Her sessions here close (their hosts
    /// reconnect, and land where she runs next); her memory here is freed; her instances
    /// running here go on, reaching her by name wherever she runs next (their batches from
    /// their outboxes, kept and sent until acknowledged); her links in the store are kept,
    /// so her next first use elsewhere links to them (§4). Answered once every step she
    /// handed to the store is decided: nothing of her is written here after, and her
    /// record stays as last kept. A step a session of hers asked for before it closed
    /// runs, and is kept, before the answer; a request that reaches her after is a new
    /// first use.
    ///
    /// Refused, nothing changed: a principal with no actor here, or anonymous
    /// ([`OwnershipError::PrincipalNotRunning`]), one being read, retired or released
    /// ([`OwnershipError::PrincipalBusy`]: try again), one linked to an instance running
    /// here on a server without peers ([`OwnershipError::PrincipalLinked`]). A step that
    /// could not be kept gives [`OwnershipError::PrincipalNotKept`], the actor stopped
    /// all the same.
    ///
    /// [`OwnershipError::PrincipalNotRunning`]: crate::OwnershipError::PrincipalNotRunning
    /// [`OwnershipError::PrincipalBusy`]: crate::OwnershipError::PrincipalBusy
    /// [`OwnershipError::PrincipalLinked`]: crate::OwnershipError::PrincipalLinked
    /// [`OwnershipError::PrincipalNotKept`]: crate::OwnershipError::PrincipalNotKept
    pub async fn release_principal(&self, name: &str) -> Result<(), crate::OwnershipError> {
        let Some(registry) = self.registry.get() else {
            return Err(crate::OwnershipError::PrincipalNotRunning {
                principal: name.to_owned(),
            });
        };
        registry
            .send(crate::actors::registry::ReleasePrincipal {
                name: name.to_owned(),
            })
            .await
            .unwrap_or(Err(crate::OwnershipError::Gone))
    }

    /// Runs instance `id` again from its record in the store, while the server runs (issue
    /// #41 item 3: the takeover of one instance; a restart resumes every one): its logic
    /// read back and resumed (its timers set again, a bot's move made), each of its
    /// principals linked to it — those running here at once, the others read from the
    /// store as on their first use — so that their calls reach it, and a host adopts it
    /// with no re-open. Whoever runs instances by lease (a cluster) holds the instance's
    /// lease first: the SDK checks only that it does not run here.
    ///
    /// Refused, nothing changed: a server without a store
    /// ([`OwnershipError::NoStore`]), an instance running here
    /// ([`OwnershipError::Running`]), one the store holds no record of
    /// ([`OwnershipError::Unknown`]), one that ended ([`OwnershipError::Ended`]), one
    /// whose record cannot run again ([`OwnershipError::Unreadable`]), a principal of it
    /// being read for its first use ([`OwnershipError::Busy`]: try again), a read that
    /// failed ([`OwnershipError::Store`]); and, with a start hook
    /// ([`ServerBuilder::on_instance_start`], asked first, before anything is read), one it
    /// refuses ([`OwnershipError::Elsewhere`], [`OwnershipError::StartRefused`]).
    ///
    /// # Panics
    ///
    /// Outside an actix `System`, when the server has not started yet (as
    /// [`Server::serve`]).
    ///
    /// [`OwnershipError::NoStore`]: crate::OwnershipError::NoStore
    /// [`OwnershipError::Running`]: crate::OwnershipError::Running
    /// [`OwnershipError::Unknown`]: crate::OwnershipError::Unknown
    /// [`OwnershipError::Ended`]: crate::OwnershipError::Ended
    /// [`OwnershipError::Unreadable`]: crate::OwnershipError::Unreadable
    /// [`OwnershipError::Busy`]: crate::OwnershipError::Busy
    /// [`OwnershipError::Store`]: crate::OwnershipError::Store
    /// [`OwnershipError::Elsewhere`]: crate::OwnershipError::Elsewhere
    /// [`OwnershipError::StartRefused`]: crate::OwnershipError::StartRefused
    pub async fn adopt_instance(&self, id: u64) -> Result<(), crate::OwnershipError> {
        let registry = self.registry(&Arbiter::current());
        registry
            .send(crate::actors::registry::AdoptInstance { id })
            .await
            .unwrap_or(Err(crate::OwnershipError::Gone))
    }
}

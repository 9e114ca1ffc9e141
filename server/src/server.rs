//! [`Server`]: what every session of a server shares — who it is, its manifest, its tools
//! and toolsets, its principals — and [`ServerBuilder`], where a server author fills them in.

use crate::actors::principal::{Attach, Detach, PrincipalActor, SwapCatalog};
use crate::actors::instance::{Invitation, InvitationWithdrawn};
use crate::actors::InstanceId;
use crate::author::{Toolset, ToolsetLogic};
use crate::clock::{Clock, SystemClock};
use crate::core::{Catalog, CatalogError, PrincipalConfig, ToolDecl};
use crate::manifest::{self, ManifestError};
use crate::session::{Session, SessionHandle, SessionId};
use crate::tool::{ErasedHandler, ToolContext, ToolResult, Typed};
use actix::prelude::*;
use mcpl_protocol::mcp::{Implementation, Tool};
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, CAP_TOOLS, FeatureSetDecl, MCPL_VERSION, McplManifest};
use mcpl_protocol::toolsets::Surface;
use mcpl_transport::{Connection, Principal};
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime};
use tokio::sync::watch;

/// The name of the feature set every manifest starts with; its `uses` are `tools` and
/// `pushEvents`.
pub const DEFAULT_FEATURE_SET: &str = "default";
/// The default number of tools on a `tools/list` page.
pub const DEFAULT_PAGE_SIZE: usize = 100;
/// The default time a push waits for the host's answer.
pub const DEFAULT_PUSH_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a server could not be built. Each is the author's mistake and names what is wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools have the same name.
    #[error("two tools are named {0:?}")]
    DuplicateTool(String),
    /// Two toolsets have the same name.
    #[error("two toolsets are named {0:?}")]
    DuplicateToolset(String),
    /// The page size is 0.
    #[error("the tools/list page size must be at least 1")]
    ZeroPageSize,
    /// The manifest is invalid (a toolset declared with `instances` and `default: "open"`,
    /// a bad name, …, RFC-014 §4.1).
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The tools and toolset declarations do not fit together (an options schema that does
    /// not compile, a tool name, …, §4.1, §8).
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A tool has no handler and no toolset logic answers it.
    #[error("tool {0:?} has no handler and belongs to no toolset with logic")]
    Unanswered(String),
    /// Logic was given for a toolset the manifest does not declare.
    #[error("logic was given for toolset {0:?}, which is not declared")]
    UndeclaredToolset(String),
}

/// A server: cheap to clone (it is shared), `Send` and `Sync`. Serve each connection with
/// [`Server::serve`].
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

/// A principal's actor in the registry.
struct PrincipalEntry {
    addr: Addr<PrincipalActor>,
    /// Its live sessions, counted here so that a principal never retires while a session
    /// is about to attach.
    sessions: usize,
    /// Invitations sent to it and not yet received, for the same reason.
    invitations: usize,
}

struct Inner {
    info: Implementation,
    instructions: Option<String>,
    manifest: RwLock<Arc<McplManifest>>,
    catalog: RwLock<Arc<Catalog>>,
    /// The tools as declared, to rebuild the catalog on a manifest change.
    tools: Vec<ToolDecl>,
    handlers: HashMap<String, Arc<dyn ErasedHandler>>,
    logic: HashMap<String, Arc<dyn ToolsetLogic>>,
    page_size: usize,
    push_timeout: Duration,
    keep_toolsets: bool,
    principal_config: PrincipalConfig,
    clock: Arc<dyn Clock>,
    sessions: Mutex<HashMap<SessionId, Addr<Session>>>,
    live_sessions: watch::Sender<usize>,
    principals: Mutex<HashMap<Principal, PrincipalEntry>>,
    next_session: AtomicU64,
    next_event: AtomicU64,
    next_instance: AtomicU64,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("tools", &self.inner.tools.len())
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
        let addr = Session::new(self.clone(), conn, id, principal.clone()).start();
        SessionHandle::new(addr, id, principal)
    }

    /// Starts a session for `conn` on the given arbiter (from any thread) and returns its
    /// handle.
    pub fn serve_in(&self, arbiter: &ArbiterHandle, conn: Connection) -> SessionHandle {
        let (id, principal) = self.identify(&conn);
        let (server, p) = (self.clone(), principal.clone());
        let addr = Session::start_in_arbiter(arbiter, move |_| Session::new(server, conn, id, p));
        SessionHandle::new(addr, id, principal)
    }

    /// A fresh session id, and the connection's principal. A server end always knows its
    /// peer's principal; one built without is an anonymous principal that shares nothing
    /// (RFC-014 §4.6).
    fn identify(&self, conn: &Connection) -> (SessionId, Principal) {
        let id = SessionId(self.inner.next_session.fetch_add(1, Ordering::Relaxed));
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
        &self.inner.info
    }

    /// The instructions sent in `initialize`, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// The current manifest, as the server holds it (each host is shown its own view).
    pub fn manifest(&self) -> Arc<McplManifest> {
        self.inner
            .manifest
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The current catalog: the tools with their hints and the toolset declarations.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.inner
            .catalog
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
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
        let catalog = Arc::new(build_catalog(self.inner.tools.clone(), &new)?);
        {
            // Both under the manifest's lock, so two replacements cannot cross.
            let mut m = self.inner.manifest.write().unwrap_or_else(PoisonError::into_inner);
            *m = Arc::new(new);
            *self.inner.catalog.write().unwrap_or_else(PoisonError::into_inner) = catalog.clone();
            let principals = self.inner.principals.lock().unwrap_or_else(PoisonError::into_inner);
            for entry in principals.values() {
                entry.addr.do_send(SwapCatalog(catalog.clone()));
            }
        }
        Ok(())
    }

    /// How many sessions are live.
    pub fn session_count(&self) -> usize {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Watches the number of live sessions (for tests and operators: await a principal's
    /// last connection going away without polling).
    pub fn watch_sessions(&self) -> watch::Receiver<usize> {
        self.inner.live_sessions.subscribe()
    }

    /// The server's time now (its [`Clock`]).
    pub fn now(&self) -> SystemTime {
        self.inner.clock.now()
    }

    pub(crate) fn tool_handler(&self, name: &str) -> Option<Arc<dyn ErasedHandler>> {
        self.inner.handlers.get(name).cloned()
    }

    pub(crate) fn has_handler(&self, name: &str) -> bool {
        self.inner.handlers.contains_key(name)
    }

    /// The logic of a toolset; a toolset declared without logic opens plain instances.
    pub(crate) fn logic_of(&self, toolset: &str) -> Arc<dyn ToolsetLogic> {
        self.inner
            .logic
            .get(toolset)
            .cloned()
            .unwrap_or_else(|| Arc::new(crate::author::PlainToolset))
    }

    pub(crate) fn page_size(&self) -> usize {
        self.inner.page_size
    }

    pub(crate) fn push_timeout(&self) -> Duration {
        self.inner.push_timeout
    }

    pub(crate) fn keeps_toolsets(&self) -> bool {
        self.inner.keep_toolsets
    }

    pub(crate) fn principal_config(&self) -> PrincipalConfig {
        self.inner.principal_config.clone()
    }

    /// A fresh event id, unique within this server.
    pub(crate) fn next_event_id(&self) -> String {
        format!(
            "ev-{}",
            self.inner.next_event.fetch_add(1, Ordering::Relaxed)
        )
    }

    pub(crate) fn next_instance_id(&self) -> InstanceId {
        InstanceId(self.inner.next_instance.fetch_add(1, Ordering::Relaxed))
    }

    pub(crate) fn register_session(&self, id: SessionId, addr: Addr<Session>) {
        let mut sessions = self.inner.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.insert(id, addr);
        self.inner.live_sessions.send_replace(sessions.len());
    }

    pub(crate) fn unregister_session(&self, id: SessionId) {
        let mut sessions = self.inner.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.remove(&id);
        self.inner.live_sessions.send_replace(sessions.len());
    }

    /// The principal's actor, started on the current arbiter when it has none.
    fn principal_entry<'a>(
        &self,
        principals: &'a mut HashMap<Principal, PrincipalEntry>,
        principal: &Principal,
    ) -> &'a mut PrincipalEntry {
        principals.entry(principal.clone()).or_insert_with(|| PrincipalEntry {
            addr: PrincipalActor::new(self.clone(), principal.clone()).start(),
            sessions: 0,
            invitations: 0,
        })
    }

    /// Attaches a session to its principal (§4.6), starting the principal's actor if
    /// needed.
    pub(crate) fn attach(
        &self,
        principal: &Principal,
        id: SessionId,
        addr: Addr<Session>,
    ) -> Addr<PrincipalActor> {
        let mut principals = self.inner.principals.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = self.principal_entry(&mut principals, principal);
        entry.sessions += 1;
        entry.addr.do_send(Attach { id, addr });
        entry.addr.clone()
    }

    /// Detaches a stopped session from its principal.
    pub(crate) fn detach(&self, principal: &Principal, id: SessionId) {
        let mut principals = self.inner.principals.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = principals.get_mut(principal) {
            entry.sessions = entry.sessions.saturating_sub(1);
            entry.addr.do_send(Detach { id });
        }
    }

    /// Delivers an invitation to a principal, starting its actor if it has none.
    pub(crate) fn invite(&self, principal: &Principal, invitation: Invitation) {
        let mut principals = self.inner.principals.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = self.principal_entry(&mut principals, principal);
        entry.invitations += 1;
        entry.addr.do_send(invitation);
    }

    /// The principal's actor received an invitation sent with [`Server::invite`].
    pub(crate) fn invitation_received(&self, principal: &Principal) {
        let mut principals = self.inner.principals.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = principals.get_mut(principal) {
            entry.invitations = entry.invitations.saturating_sub(1);
        }
    }

    /// Withdraws an invitation (the principal holds it, so its actor is there).
    pub(crate) fn withdraw_invitation(&self, principal: &Principal, m: InvitationWithdrawn) {
        let principals = self.inner.principals.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = principals.get(principal) {
            entry.addr.do_send(m);
        }
    }

    /// Removes an idle principal's actor from the registry, unless a session or an
    /// invitation is on its way to it. True when removed: the actor then stops.
    pub(crate) fn retire_principal(&self, principal: &Principal, addr: &Addr<PrincipalActor>) -> bool {
        let mut principals = self.inner.principals.lock().unwrap_or_else(PoisonError::into_inner);
        match principals.get(principal) {
            Some(e) if &e.addr == addr && e.sessions == 0 && e.invitations == 0 => {
                principals.remove(principal);
                true
            }
            _ => false,
        }
    }
}

/// The catalog a manifest declares for `tools`.
fn build_catalog(tools: Vec<ToolDecl>, manifest: &McplManifest) -> Result<Catalog, CatalogError> {
    let catalog = Catalog::new(tools, manifest.toolsets.clone(), manifest.surface.clone())?;
    Ok(if manifest.has_tool_hints() {
        catalog
    } else {
        catalog.without_tool_hints()
    })
}

/// Builds a [`Server`].
///
/// The manifest starts as MCPL 0.5 with `pushEvents: true` and one feature set,
/// [`DEFAULT_FEATURE_SET`], using `tools` and `pushEvents`; [`ServerBuilder::feature_set`]
/// adds more, [`ServerBuilder::manifest`] replaces the whole of it. Declaring a toolset
/// advertises `toolHints` (RFC-014 §2) unless [`ServerBuilder::tool_hints`] says otherwise.
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    manifest: McplManifest,
    tool_hints: Option<bool>,
    surface: Option<Surface>,
    tools: Vec<ToolDecl>,
    handlers: HashMap<String, Arc<dyn ErasedHandler>>,
    toolsets: BTreeMap<String, Toolset>,
    duplicate: Option<BuildError>,
    page_size: usize,
    push_timeout: Duration,
    keep_toolsets: bool,
    principal_config: PrincipalConfig,
    clock: Arc<dyn Clock>,
}

impl ServerBuilder {
    fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let mut manifest = McplManifest {
            version: MCPL_VERSION.to_owned(),
            push_events: Some(true),
            ..Default::default()
        };
        manifest.feature_sets.insert(
            DEFAULT_FEATURE_SET.to_owned(),
            FeatureSetDecl {
                uses: vec![CAP_TOOLS.to_owned(), CAP_PUSH_EVENTS.to_owned()],
                ..Default::default()
            },
        );
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            manifest,
            tool_hints: None,
            surface: None,
            tools: Vec::new(),
            handlers: HashMap::new(),
            toolsets: BTreeMap::new(),
            duplicate: None,
            page_size: DEFAULT_PAGE_SIZE,
            push_timeout: DEFAULT_PUSH_TIMEOUT,
            keep_toolsets: true,
            principal_config: PrincipalConfig::default(),
            clock: Arc::new(SystemClock),
        }
    }

    /// Instructions for the model, sent in `initialize`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Replaces the whole manifest. Toolsets given with [`ServerBuilder::toolset`] are
    /// added to its declarations.
    pub fn manifest(mut self, manifest: McplManifest) -> Self {
        self.manifest = manifest;
        self
    }

    /// Declares (or replaces) a feature set.
    pub fn feature_set(mut self, name: impl Into<String>, decl: FeatureSetDecl) -> Self {
        self.manifest.feature_sets.insert(name.into(), decl);
        self
    }

    /// Advertises RFC-014's `toolHints` in the manifest, or not (§2). Without it every host
    /// is shown plain tools (§8).
    pub fn tool_hints(mut self, on: bool) -> Self {
        self.tool_hints = Some(on);
        self
    }

    /// The server-level `surface` (§10): the server as a whole, for a host's catalog.
    pub fn surface(mut self, title: impl Into<String>, summary: impl Into<String>) -> Self {
        self.surface = Some(Surface {
            title: Some(title.into()),
            summary: Some(summary.into()),
        });
        self
    }

    /// Declares a toolset with its tools and logic (§4.1).
    pub fn toolset(mut self, toolset: Toolset) -> Self {
        for t in &toolset.tools {
            self.add_tool(t.clone());
        }
        if self.toolsets.contains_key(&toolset.name) {
            self.duplicate
                .get_or_insert(BuildError::DuplicateToolset(toolset.name.clone()));
        }
        self.toolsets.insert(toolset.name.clone(), toolset);
        self
    }

    /// The number of tools on a `tools/list` page (default [`DEFAULT_PAGE_SIZE`]).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n;
        self
    }

    /// How long a push waits for the host's answer (default [`DEFAULT_PUSH_TIMEOUT`]).
    pub fn push_timeout(mut self, timeout: Duration) -> Self {
        self.push_timeout = timeout;
        self
    }

    /// Whether a principal's toolsets stay open when its last connection closes (default:
    /// they do). When not, they end then, each with an ended record (§4.6).
    pub fn keep_toolsets(mut self, keep: bool) -> Self {
        self.keep_toolsets = keep;
        self
    }

    /// How long an ended record is reported (§4.3; default one hour).
    pub fn ended_ttl(mut self, ttl: Duration) -> Self {
        self.principal_config.ended_ttl = ttl;
        self
    }

    /// Per-principal limits and lifetimes (ended-record TTL and bound, open instances).
    pub fn principal_config(mut self, config: PrincipalConfig) -> Self {
        self.principal_config = config;
        self
    }

    /// The clock (default: the system's); see [`crate::clock`].
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Registers a tool and its handler. `A` is what the arguments decode into — a
    /// `Deserialize` struct, or `serde_json::Value` for the raw object; arguments that do
    /// not decode make the call a tool error (`isError: true`) naming the problem, and the
    /// handler is not called. The handler's future must be `Send`: it runs as a tokio task.
    ///
    /// The tool's `_meta` may carry RFC-014 hints (`mcpl/presence`, `mcpl/visible`,
    /// `mcpl/toolset`, §3); a tool with a handler is answered by it even inside a toolset.
    pub fn tool<A, F, Fut>(mut self, tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        let handler = Arc::new(Typed::<A, F>::new(tool.name.clone(), handler));
        if self.handlers.insert(tool.name.clone(), handler).is_some() {
            self.duplicate
                .get_or_insert(BuildError::DuplicateTool(tool.name.clone()));
        }
        self.add_tool(ToolDecl::new(tool));
        self
    }

    fn add_tool(&mut self, tool: ToolDecl) {
        if self.tools.iter().any(|t| t.name() == tool.name()) {
            self.duplicate
                .get_or_insert(BuildError::DuplicateTool(tool.name().to_owned()));
            return;
        }
        self.tools.push(tool);
    }

    /// Checks everything and builds the server. Refuses duplicate names, a zero page size,
    /// an invalid manifest or toolset declaration (e.g. an instanced toolset declared
    /// default-open, an options schema that does not compile, RFC-014 §4.1), and a tool
    /// nothing answers; the error names what is wrong.
    pub fn build(mut self) -> Result<Server, BuildError> {
        if let Some(e) = self.duplicate {
            return Err(e);
        }
        if self.page_size == 0 {
            return Err(BuildError::ZeroPageSize);
        }
        let mut logic = HashMap::new();
        for (name, toolset) in std::mem::take(&mut self.toolsets) {
            self.manifest.toolsets.insert(name.clone(), toolset.decl);
            if let Some(l) = toolset.logic {
                logic.insert(name, l);
            }
        }
        match self.tool_hints {
            Some(on) => self.manifest.tool_hints = on.then_some(true),
            None if !self.manifest.toolsets.is_empty() && self.manifest.tool_hints.is_none() => {
                self.manifest.tool_hints = Some(true)
            }
            None => {}
        }
        if self.surface.is_some() {
            self.manifest.surface = self.surface;
        }
        manifest::check(&self.manifest)?;
        let catalog = build_catalog(self.tools.clone(), &self.manifest)?;
        for name in logic.keys() {
            if catalog.toolset(name).is_none() {
                return Err(BuildError::UndeclaredToolset(name.clone()));
            }
        }
        for t in catalog.tools() {
            let by_logic = catalog
                .declared_toolset_of(t.name())
                .is_some_and(|ts| logic.contains_key(ts));
            if !by_logic && !self.handlers.contains_key(t.name()) {
                return Err(BuildError::Unanswered(t.name().to_owned()));
            }
        }
        let (live_sessions, _) = watch::channel(0);
        Ok(Server {
            inner: Arc::new(Inner {
                info: self.info,
                instructions: self.instructions,
                manifest: RwLock::new(Arc::new(self.manifest)),
                catalog: RwLock::new(Arc::new(catalog)),
                tools: self.tools,
                handlers: self.handlers,
                logic,
                page_size: self.page_size,
                push_timeout: self.push_timeout,
                keep_toolsets: self.keep_toolsets,
                principal_config: self.principal_config,
                clock: self.clock,
                sessions: Mutex::new(HashMap::new()),
                live_sessions,
                principals: Mutex::new(HashMap::new()),
                next_session: AtomicU64::new(1),
                next_event: AtomicU64::new(1),
                next_instance: AtomicU64::new(1),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::mcp::CallToolResult;
    use serde_json::{Value, json};

    fn tool(name: &str) -> Tool {
        Tool::new(name, "t", json!({"type": "object"}))
    }

    #[test]
    fn the_default_manifest_has_one_feature_set_for_tools_and_push() {
        let s = Server::builder("s", "1").build().unwrap();
        let m = s.manifest();
        assert_eq!(m.version, "0.5");
        assert_eq!(m.push_events, Some(true));
        assert_eq!(
            m.feature_sets[DEFAULT_FEATURE_SET].uses,
            ["tools", "pushEvents"]
        );
        assert_eq!(m.tool_hints, None);
    }

    #[test]
    fn bad_configurations_are_refused() {
        let dup = Server::builder("s", "1")
            .tool(tool("a"), |_, _: Value| async {
                Ok(CallToolResult::text("1"))
            })
            .tool(tool("a"), |_, _: Value| async {
                Ok(CallToolResult::text("2"))
            })
            .build();
        assert!(matches!(dup, Err(BuildError::DuplicateTool(n)) if n == "a"));
        assert!(matches!(
            Server::builder("s", "1").page_size(0).build(),
            Err(BuildError::ZeroPageSize)
        ));
        let bad = McplManifest {
            version: "9".into(),
            ..Default::default()
        };
        assert!(matches!(
            Server::builder("s", "1").manifest(bad).build(),
            Err(BuildError::Manifest(ManifestError::UnsupportedVersion(_)))
        ));
    }

    fn game() -> Toolset {
        Toolset::new("game")
            .instances()
            .tool(tool("play"))
            .on_open(|_, _| Err(crate::author::Refusal::new("no")))
    }

    #[test]
    fn invalid_toolset_declarations_stop_start_up_naming_them() {
        // §4.1: instances with default open.
        let e = Server::builder("s", "1").toolset(game().open_by_default()).build();
        assert!(matches!(
            e,
            Err(BuildError::Manifest(ManifestError::Toolset(
                mcpl_protocol::toolsets::DeclError::OpenWithInstances(ref n)
            ))) if n == "game"
        ));
        // A bad name.
        let e = Server::builder("s", "1").toolset(Toolset::new("a.b")).build();
        assert!(matches!(e, Err(BuildError::Manifest(ManifestError::Toolset(_)))));
        // An options schema that does not compile.
        let e = Server::builder("s", "1")
            .toolset(game().options(json!({"type": "object", "properties": {"size": {"type": 7}}})))
            .build();
        assert!(matches!(e, Err(BuildError::Catalog(CatalogError::OptionsSchema { ref toolset, .. })) if toolset == "game"));
        // A tool nothing answers.
        let e = Server::builder("s", "1")
            .toolset(Toolset::new("solo").tool(tool("hint")))
            .build();
        assert!(matches!(e, Err(BuildError::Unanswered(ref t)) if t == "hint"));
        // Two toolsets of one name.
        let e = Server::builder("s", "1").toolset(game()).toolset(game()).build();
        assert!(matches!(e, Err(BuildError::DuplicateTool(_) | BuildError::DuplicateToolset(_))));
    }

    #[test]
    fn declaring_a_toolset_advertises_tool_hints() {
        let s = Server::builder("s", "1").toolset(game()).build().unwrap();
        assert_eq!(s.manifest().tool_hints, Some(true));
        assert!(s.catalog().tool_hints());
        assert_eq!(s.catalog().tools_of("game"), ["play"]);
        let s = Server::builder("s", "1")
            .toolset(game())
            .tool_hints(false)
            .build()
            .unwrap();
        assert!(!s.catalog().tool_hints());
    }
}

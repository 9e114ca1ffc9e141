//! [`Server`]: what every session of a server shares — who it is, its manifest, its tools
//! and toolsets, its principals — and [`ServerBuilder`] (`builder.rs`), where a server
//! author fills them in.
//!
//! The principals live here, in a registry keyed by [`Principal`] (§4.6): a session
//! attaches to its principal's actor (started on first use), invitations reach a principal
//! that may have no connection, and an idle principal retires from it.

mod builder;

pub use builder::{BuildError, ServerBuilder};

use crate::actors::InstanceId;
use crate::actors::instance::{Invitation, InvitationWithdrawn};
use crate::actors::principal::{Attach, Detach, PrincipalActor, SwapCatalog};
use crate::author::ToolsetLogic;
use crate::clock::Clock;
use crate::core::{Catalog, CatalogError, EndedIds, PlainHosts, PrincipalConfig, ToolDecl};
use crate::manifest::{self, ManifestError};
use crate::session::{Session, SessionHandle, SessionId};
use crate::tool::ErasedHandler;
use actix::prelude::*;
use mcpl_protocol::mcp::{Implementation, LoggingLevel};
use mcpl_protocol::mcpl::McplManifest;
use mcpl_transport::{Connection, Principal};
use std::collections::HashMap;
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
/// The default time a tool handler's request to the client (`sampling/createMessage`,
/// `elicitation/create`) waits for its answer: long, since a person may be answering.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// A server: cheap to clone (it is shared), `Send` and `Sync`. Serve each connection with
/// [`Server::serve`].
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<Inner>,
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

pub(crate) struct Inner {
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
    ask_timeout: Duration,
    keep_toolsets: bool,
    principal_config: PrincipalConfig,
    clock: Arc<dyn Clock>,
    /// Where every principal's ended records take their ids (§4.3: never reused, even by
    /// a principal forgotten and created again).
    ended_ids: EndedIds,
    /// MCP logging, when offered: the level each session starts at.
    logging: Option<LoggingLevel>,
    /// What hosts without `toolHints` are offered (§8).
    plain_hosts: PlainHosts,
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
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
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
        let catalog = Arc::new(build_catalog(
            self.inner.tools.clone(),
            &new,
            self.inner.plain_hosts,
        )?);
        {
            // Both under the manifest's lock, so two replacements cannot cross.
            let mut m = self
                .inner
                .manifest
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            *m = Arc::new(new);
            *self
                .inner
                .catalog
                .write()
                .unwrap_or_else(PoisonError::into_inner) = catalog.clone();
            let principals = self
                .inner
                .principals
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
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

    /// How many principals the server holds state for: connected ones, and those whose
    /// kept toolsets or ended records outlive their connections (§4.3, §4.6).
    pub fn principal_count(&self) -> usize {
        self.inner
            .principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
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
        let principals = self
            .inner
            .principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut online: Vec<Principal> = principals
            .iter()
            .filter(|(p, e)| e.sessions > 0 && matches!(p, Principal::Named(_)))
            .map(|(p, _)| p.clone())
            .collect();
        online.sort();
        online
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

    pub(crate) fn ask_timeout(&self) -> Duration {
        self.inner.ask_timeout
    }

    /// The level a session's log messages start at, when MCP logging is offered
    /// ([`ServerBuilder::logging`]); `None` when it is not.
    pub(crate) fn logging(&self) -> Option<LoggingLevel> {
        self.inner.logging
    }

    pub(crate) fn keeps_toolsets(&self) -> bool {
        self.inner.keep_toolsets
    }

    pub(crate) fn principal_config(&self) -> PrincipalConfig {
        self.inner.principal_config.clone()
    }

    pub(crate) fn ended_ids(&self) -> EndedIds {
        self.inner.ended_ids.clone()
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
        let mut sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        sessions.insert(id, addr);
        self.inner.live_sessions.send_replace(sessions.len());
    }

    pub(crate) fn unregister_session(&self, id: SessionId) {
        let mut sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        sessions.remove(&id);
        // A table that grew for a burst of sessions gives the memory back once most have
        // gone (issue #13: an expired session's memory is returned).
        if sessions.capacity() > 64 && sessions.len() * 4 < sessions.capacity() {
            let keep = sessions.len() * 2;
            sessions.shrink_to(keep);
        }
        self.inner.live_sessions.send_replace(sessions.len());
    }

    /// The principal's actor, started on the current arbiter when it has none.
    fn principal_entry<'a>(
        &self,
        principals: &'a mut HashMap<Principal, PrincipalEntry>,
        principal: &Principal,
    ) -> &'a mut PrincipalEntry {
        principals
            .entry(principal.clone())
            .or_insert_with(|| PrincipalEntry {
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
        let mut principals = self
            .inner
            .principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let entry = self.principal_entry(&mut principals, principal);
        entry.sessions += 1;
        entry.addr.do_send(Attach { id, addr });
        entry.addr.clone()
    }

    /// Detaches a stopped session from its principal.
    pub(crate) fn detach(&self, principal: &Principal, id: SessionId) {
        let mut principals = self
            .inner
            .principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = principals.get_mut(principal) {
            entry.sessions = entry.sessions.saturating_sub(1);
            entry.addr.do_send(Detach { id });
        }
    }

    /// Delivers an invitation to a principal, starting its actor if it has none.
    pub(crate) fn invite(&self, principal: &Principal, invitation: Invitation) {
        let mut principals = self
            .inner
            .principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let entry = self.principal_entry(&mut principals, principal);
        entry.invitations += 1;
        entry.addr.do_send(invitation);
    }

    /// The principal's actor received an invitation sent with [`Server::invite`].
    pub(crate) fn invitation_received(&self, principal: &Principal) {
        let mut principals = self
            .inner
            .principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = principals.get_mut(principal) {
            entry.invitations = entry.invitations.saturating_sub(1);
        }
    }

    /// Withdraws an invitation (the principal holds it, so its actor is there).
    pub(crate) fn withdraw_invitation(&self, principal: &Principal, m: InvitationWithdrawn) {
        let principals = self
            .inner
            .principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = principals.get(principal) {
            entry.addr.do_send(m);
        }
    }

    /// Removes an idle principal's actor from the registry, unless a session or an
    /// invitation is on its way to it. True when removed: the actor then stops.
    pub(crate) fn retire_principal(
        &self,
        principal: &Principal,
        addr: &Addr<PrincipalActor>,
    ) -> bool {
        let mut principals = self
            .inner
            .principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
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
pub(crate) fn build_catalog(
    tools: Vec<ToolDecl>,
    manifest: &McplManifest,
    plain_hosts: PlainHosts,
) -> Result<Catalog, CatalogError> {
    let catalog = Catalog::new(tools, manifest.toolsets.clone(), manifest.surface.clone())?
        .with_plain_hosts(plain_hosts);
    Ok(if manifest.has_tool_hints() {
        catalog
    } else {
        catalog.without_tool_hints()
    })
}

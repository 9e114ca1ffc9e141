//! [`Shared`]: what every actor of one server reads and nobody owns — who the server is,
//! its manifest and catalog, its toolsets' logic, its limits, its clock and its id
//! counters. Fixed at build time but for the manifest and catalog, which only
//! [`Server::replace_manifest`](crate::Server::replace_manifest) replaces (one writer, read
//! as snapshots).
//!
//! Nothing here knows a session, a principal's actor or the registry: the actors are given
//! an `Arc<Shared>` and talk to each other only by message (`actors/registry` owns who is
//! connected), so the server's modules form no import cycle.

use crate::author::{PlainInstance, PlainToolset, RestoreFn, Routes, ToolsetLogic, restore_fn};
use crate::clock::Clock;
use crate::core::session::Profile;
use crate::core::{Catalog, CatalogError, EndedIds, PlainHosts, PrincipalConfig, ToolDecl};
use crate::ids::InstanceId;
use crate::store::{CommitQueue, Loaded, Store};
use mcpl_protocol::mcpl::McplManifest;
use mcpl_server_core::manifest::ManifestViews;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

/// See the module docs.
pub(crate) struct Shared {
    /// Who the server is, as sessions answer `initialize`, and their page size.
    pub(crate) profile: Arc<Profile>,
    pub(crate) current: Current,
    /// Resources, prompts and completion, with their handlers (`features.rs`).
    pub(crate) features: Arc<crate::features::Features>,
    /// The tools as declared, to rebuild the catalog on a manifest change.
    pub(crate) tools: Vec<ToolDecl>,
    /// The tools answered by a plain handler (the handlers themselves live with the
    /// sessions that run them).
    pub(crate) handled: HashSet<String>,
    pub(crate) logic: HashMap<String, Arc<dyn ToolsetLogic>>,
    /// Each toolset's typed routes (`author/route.rs`), for those that have any.
    pub(crate) routes: HashMap<String, Arc<Routes>>,
    pub(crate) push_timeout: Duration,
    pub(crate) ask_timeout: Duration,
    /// How many `subscriptions/listen` streams each principal has open.
    pub(crate) listen_slots: ListenSlots,
    /// Which sessions watch which resource (`watchers.rs`).
    pub(crate) watchers: crate::watchers::Watchers,
    /// What a modern call's `requestState` is signed with (`mrtr.rs`).
    pub(crate) state_key: crate::mrtr::StateKey,
    pub(crate) keep_toolsets: bool,
    /// When toolsets are not kept: how long an idle principal keeps them after its last
    /// modern request or stream (profile §3.6, S13).
    pub(crate) idle_end: std::time::Duration,
    pub(crate) principal_config: PrincipalConfig,
    pub(crate) clock: Arc<dyn Clock>,
    /// Where every principal's ended records take their ids (§4.3: never reused, even by
    /// a principal forgotten and created again).
    pub(crate) ended_ids: EndedIds,
    /// What hosts without `toolHints` are offered (§8).
    pub(crate) plain_hosts: PlainHosts,
    pub(crate) counters: Counters,
    /// Where durable state goes (issue #15); none: nothing is written.
    pub(crate) store: Option<Arc<dyn Store>>,
    /// How each durable toolset's logic is read back (`Toolset::durable`).
    pub(crate) restore: HashMap<String, RestoreFn>,
    /// What the store held when the server was built, taken by the registry as it starts.
    pub(crate) loaded: Mutex<Option<Loaded>>,
    /// The store's commit queue (issue #42 item 1), with the store: every write goes
    /// through it. Once a write failed (issue #37 item 2) it writes nothing more, and no
    /// step that needed a write is acknowledged (`store/records.rs`, `store/queue.rs`).
    pub(crate) commits: Option<CommitQueue>,
    /// How actors here reach actors on other servers (issue #41, `peers.rs`); none:
    /// nothing crosses servers.
    pub(crate) peers: Option<Arc<dyn crate::peers::Peers>>,
    /// Whether a principal brought here by an invitation or an outbox may start here
    /// (issue #41, `placement.rs`); none: she starts here.
    pub(crate) placement: Option<Arc<dyn crate::placement::Placement>>,
    /// How long a message to another server's actor waits for its answer.
    pub(crate) peer_timeout: std::time::Duration,
    /// How much is held per stream for actors elsewhere (issue #41, `peers.rs`).
    pub(crate) peer_bounds: crate::peers::PeerBounds,
    /// Asked before an instance starts here (issue #41, `ownership.rs`); none: nothing
    /// asked.
    pub(crate) start_hook: Option<crate::ownership::StartHook>,
}

/// The manifest (with the views hosts are shown of it, each made once: issue #42) and the
/// catalog it declares, replaced together, and how many times they were (so a session
/// checks for a new manifest with one atomic load, not a lock and a reference count every
/// message).
pub(crate) struct Current(RwLock<(Arc<ManifestViews>, Arc<Catalog>)>, AtomicU64);

impl Current {
    pub(crate) fn new(manifest: McplManifest, catalog: Catalog) -> Self {
        Current(
            RwLock::new((views(manifest), Arc::new(catalog))),
            AtomicU64::new(0),
        )
    }
}

fn views(manifest: McplManifest) -> Arc<ManifestViews> {
    Arc::new(ManifestViews::new(Arc::new(manifest)))
}

/// Where the server's session, event and instance ids come from.
pub(crate) struct Counters {
    session: AtomicU64,
    /// Push event ids are `ev-EPOCH-N`: N counts from 1 in every process, so the epoch,
    /// drawn at random when the server is built, keeps them unique across restarts (SPEC
    /// §9.2: an `eventId` is unique; a host remembering `ev-1` from before a restart would
    /// take the next process's `ev-1` for a retry, issue #36 item 2). Random rather than a
    /// clock: two processes started in the same instant, or a clock set back, still differ.
    event_epoch: u64,
    event: AtomicU64,
    /// Without a store: the next instance id (the process is alone with its ids).
    instance: AtomicU64,
    /// With a store: what is left of the block of ids reserved from it (issue #41,
    /// [`Store::reserve_instance_ids`]), handed out one by one.
    instance_block: Mutex<std::ops::Range<u64>>,
    /// Held while a block is reserved, so openers finding the block empty at once wait
    /// for one reservation rather than each make one.
    reserving: Mutex<()>,
}

/// How many instance ids a server reserves from its store at a time (issue #41)
/// **\[project\]**: one store write per 64 opens, and at most 63 ids skipped per server
/// start — small ids stay small where they show (logs, errors), and u64 never runs out.
pub(crate) const INSTANCE_ID_BLOCK: u64 = 64;

impl Default for Counters {
    fn default() -> Self {
        Counters {
            session: AtomicU64::new(1),
            event_epoch: rand::random(),
            event: AtomicU64::new(1),
            instance: AtomicU64::new(1),
            instance_block: Mutex::new(0..0),
            reserving: Mutex::new(()),
        }
    }
}

impl Shared {
    /// Where the store keeps its records, for logs and errors (empty without a store).
    pub(crate) fn store_location(&self) -> String {
        self.store
            .as_ref()
            .map(|s| s.location())
            .unwrap_or_default()
    }

    /// The current manifest, as the server holds it (each host is shown its own view).
    pub(crate) fn manifest(&self) -> Arc<McplManifest> {
        self.manifest_views().server().clone()
    }

    /// The current manifest with the views hosts are shown of it.
    pub(crate) fn manifest_views(&self) -> Arc<ManifestViews> {
        self.current
            .0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .clone()
    }

    /// How many times the manifest was replaced: read it before [`Shared::manifest`] and pass
    /// it to [`Shared::manifest_since`] later.
    pub(crate) fn manifest_generation(&self) -> u64 {
        self.current.1.load(Ordering::Acquire)
    }

    /// The manifest and its generation, if it was replaced since generation `seen`.
    pub(crate) fn manifest_since(&self, seen: u64) -> Option<(u64, Arc<ManifestViews>)> {
        let generation = self.manifest_generation();
        (generation != seen).then(|| (generation, self.manifest_views()))
    }

    /// The current catalog: the tools with their hints and the toolset declarations.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.current
            .0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .1
            .clone()
    }

    /// Replaces the manifest and its catalog together, then calls `tell` with the new
    /// catalog before another replacement can start, so the principals hear replacements
    /// in the order they were made.
    pub(crate) fn replace(
        &self,
        manifest: McplManifest,
        catalog: Catalog,
        tell: impl FnOnce(Arc<Catalog>),
    ) {
        let mut current = self
            .current
            .0
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let catalog = Arc::new(catalog);
        *current = (views(manifest), catalog.clone());
        self.current.1.fetch_add(1, Ordering::Release);
        tell(catalog);
    }

    /// The server's time now (its [`Clock`]).
    pub(crate) fn now(&self) -> SystemTime {
        self.clock.now()
    }

    /// Whether a plain handler answers `tool`.
    pub(crate) fn has_handler(&self, tool: &str) -> bool {
        self.handled.contains(tool)
    }

    /// The logic of a toolset; a toolset declared without logic opens plain instances.
    pub(crate) fn logic_of(&self, toolset: &str) -> Arc<dyn ToolsetLogic> {
        self.logic
            .get(toolset)
            .cloned()
            .unwrap_or_else(|| Arc::new(PlainToolset))
    }

    /// A toolset's typed routes (none for a toolset without).
    pub(crate) fn routes_of(&self, toolset: &str) -> Arc<Routes> {
        self.routes.get(toolset).cloned().unwrap_or_default()
    }

    /// How a toolset's kept logic is read back: its registered restore, or a plain
    /// instance's for a toolset declared without logic; `None` when it is not kept.
    pub(crate) fn restore_of(&self, toolset: &str) -> Option<RestoreFn> {
        if self.logic.contains_key(toolset) {
            self.restore.get(toolset).cloned()
        } else {
            Some(restore_fn::<PlainInstance>())
        }
    }

    /// Whether an instance of `toolset` is started anew by its principal's actor after a
    /// restart rather than read back (issue #41, `actors/restore.rs`): a default-open
    /// toolset of one instance per principal whose instances are plain (no logic of their
    /// own, no options, nothing kept but what the principal's record holds), as a lobby
    /// answered by handlers.
    pub(crate) fn started_anew(&self, toolset: &str) -> bool {
        started_anew(&self.logic, &self.catalog(), toolset)
    }

    /// A fresh session id, unique within this server.
    pub(crate) fn next_session_id(&self) -> crate::ids::SessionId {
        crate::ids::SessionId(self.counters.session.fetch_add(1, Ordering::Relaxed))
    }

    /// A fresh event id, unique within this server and across its restarts (see
    /// [`Counters`]).
    pub(crate) fn next_event_id(&self) -> String {
        let n = self.counters.event.fetch_add(1, Ordering::Relaxed);
        format!("ev-{:016x}-{n}", self.counters.event_epoch)
    }

    /// A fresh instance id when one is at hand: without a store, the next of this
    /// process's; with one, the next of the block reserved from it (issue #41). `None`:
    /// the block is used up, and [`Shared::reserve_instance_id`] takes the next, off the
    /// actor's thread.
    pub(crate) fn next_instance_id(&self) -> Option<InstanceId> {
        if self.store.is_none() {
            return Some(InstanceId(
                self.counters.instance.fetch_add(1, Ordering::Relaxed),
            ));
        }
        let mut block = self
            .counters
            .instance_block
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        block.next().map(InstanceId)
    }

    /// A fresh instance id, reserving a block of [`INSTANCE_ID_BLOCK`] from the store
    /// when the one at hand is used up: unique among every server sharing the store, and
    /// never one a server had before a restart. Blocks the calling thread for the store's
    /// write: call it where blocking is allowed (`spawn_blocking`).
    pub(crate) fn reserve_instance_id(&self) -> Result<InstanceId, crate::store::StoreError> {
        let Some(store) = &self.store else {
            return Ok(InstanceId(
                self.counters.instance.fetch_add(1, Ordering::Relaxed),
            ));
        };
        let _one = self
            .counters
            .reserving
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Another opener may have reserved while this one waited.
        if let Some(id) = self.next_instance_id() {
            return Ok(id);
        }
        let mut fresh = store.reserve_instance_ids(INSTANCE_ID_BLOCK)?;
        let id = fresh.next().map(InstanceId);
        let mut block = self
            .counters
            .instance_block
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *block = fresh;
        match id {
            Some(id) => Ok(id),
            // A store that reserved nothing breaks its contract; say so rather than loop.
            None => Err(crate::store::StoreError::Io {
                path: store.location().into(),
                detail: "it reserved no instance ids when asked for some".to_owned(),
            }),
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

/// How many `subscriptions/listen` streams each principal has open, over all its
/// connections (`server-core/src/session/listen.rs`, `session/dispatch.rs`).
#[derive(Default)]
pub(crate) struct ListenSlots(Arc<Mutex<HashMap<String, usize>>>);

/// One open stream's place in [`ListenSlots`], given back when dropped.
#[derive(Debug)]
pub(crate) struct ListenSlot {
    table: Arc<Mutex<HashMap<String, usize>>>,
    principal: String,
}

impl ListenSlots {
    /// A place for one more stream of `principal`'s, unless it has `max` open.
    pub(crate) fn take(&self, principal: &str, max: usize) -> Option<ListenSlot> {
        let mut table = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let open = table.entry(principal.to_owned()).or_default();
        if *open >= max {
            return None;
        }
        *open += 1;
        Some(ListenSlot {
            table: self.0.clone(),
            principal: principal.to_owned(),
        })
    }
}

impl Drop for ListenSlot {
    fn drop(&mut self) {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(open) = table.get_mut(&self.principal) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                table.remove(&self.principal);
            }
        }
    }
}

/// See [`Shared::started_anew`]; also what a server being built asks (`read_start`).
pub(crate) fn started_anew(
    logic: &HashMap<String, Arc<dyn ToolsetLogic>>,
    catalog: &Catalog,
    toolset: &str,
) -> bool {
    !logic.contains_key(toolset)
        && !catalog.is_instanced(toolset)
        && catalog.default_open().any(|t| t == toolset)
}

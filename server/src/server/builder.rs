//! [`ServerBuilder`]: where a server author declares tools, toolsets and knobs, checked
//! when the server is built.

use super::Server;
use crate::author::Toolset;
use crate::clock::{Clock, SystemClock};
use crate::core::session::{KnownResources, Profile};
use crate::core::{CatalogError, EndedIds, PlainHosts, PrincipalConfig, ToolDecl};
use crate::manifest::{self, ManifestError};
use crate::mrtr::StateKey;
use crate::shared::{Counters, Current, Shared, build_catalog};
use crate::store::{CommitQueue, FOLLOW_WAIT, Store, StoreError};
use crate::tool::{AddTyped, ErasedHandler, ToolContext, ToolResult, Typed};
use mcpl_protocol::mcp::{Implementation, LoggingLevel, Tool};
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, CAP_TOOLS, FeatureSetDecl, MCPL_VERSION, McplManifest};
use mcpl_protocol::toolsets::Surface;
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use super::{DEFAULT_ASK_TIMEOUT, DEFAULT_FEATURE_SET, DEFAULT_PAGE_SIZE, DEFAULT_PUSH_TIMEOUT};
use crate::features::{FeatureError, Features, RequestContext, UriTemplate};
use mcpl_protocol::server_features::{
    CompleteParams, GetPromptResult, Prompt, Resource, ResourceContents, ResourceTemplate,
};

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
    /// The store could not be read (issue #15): the error names the file and what is wrong.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A tool has no handler and no toolset logic answers it.
    #[error("tool {0:?} has no handler and belongs to no toolset with logic")]
    Unanswered(String),
    /// Logic was given for a toolset the manifest does not declare.
    #[error("logic was given for toolset {0:?}, which is not declared")]
    UndeclaredToolset(String),
    /// A toolset has typed routes ([`Toolset::route`](crate::Toolset::route)) but no logic
    /// for them to run on.
    #[error("toolset {0:?} has routes but no logic (give it an open)")]
    RoutesWithoutLogic(String),
    /// A toolset's typed routes are written for logic of more than one type: its
    /// instances run one.
    #[error("the routes of toolset {0:?} take logic of more than one type")]
    RoutesOnManyLogics(String),
    /// A typed tool's arguments type does not give an object schema (MCP asks for one):
    /// derive the schema for a struct.
    #[error("the arguments of tool {0:?} are not an object (derive JsonSchema for a struct)")]
    ArgumentsNotAnObject(String),
    /// Two resources have the same URI, two templates the same template, or two prompts
    /// the same name (issue #39 item 7).
    #[error("two {kind} are named {name:?}")]
    DuplicateFeature {
        /// `resources`, `resource templates` or `prompts`.
        kind: &'static str,
        /// The URI, template or name.
        name: String,
    },
    /// A tool's `x-mcp-header` marks are invalid (MCP 2026-07-28, SEP-2243: a client on
    /// Streamable HTTP would leave the tool out).
    #[error("tool {tool:?}: {reason}")]
    HeaderMarks {
        /// The tool.
        tool: String,
        /// What is wrong with its marks.
        reason: String,
    },
    /// A resource template this server cannot match (`features` module docs).
    #[error("resource template {0}")]
    UriTemplate(String),
    /// [`ServerBuilder::resource_subscriptions`] on a server with no resource to watch.
    #[error("resource subscriptions were asked for, but the server offers no resource or template")]
    NothingToWatch,
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
    handlers: crate::tool::Handlers,
    toolsets: BTreeMap<String, Toolset>,
    duplicate: Option<BuildError>,
    page_size: usize,
    push_timeout: Duration,
    ask_timeout: Duration,
    state_key: Option<[u8; 32]>,
    keep_toolsets: bool,
    idle_end: Duration,
    principal_config: PrincipalConfig,
    clock: Arc<dyn Clock>,
    logging: Option<LoggingLevel>,
    plain_hosts: PlainHosts,
    store: Option<Arc<dyn Store>>,
    follow_wait: Duration,
    resume_instances: bool,
    features: Features,
    peers: Option<Arc<dyn crate::peers::Peers>>,
    placement: Option<Arc<dyn crate::placement::Placement>>,
    peer_timeout: Duration,
    peer_bounds: crate::peers::PeerBounds,
    start_hook: Option<crate::ownership::StartHook>,
}

impl ServerBuilder {
    pub(super) fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let mut manifest = McplManifest {
            version: MCPL_VERSION.to_owned(),
            push_events: Some(true),
            ..Default::default()
        };
        // SPEC §6.2, B.2: a description and `uses` are both required.
        manifest.feature_sets.insert(
            DEFAULT_FEATURE_SET.to_owned(),
            FeatureSetDecl::new(
                "The server's tools, and the events it pushes about them",
                &[CAP_TOOLS, CAP_PUSH_EVENTS],
            ),
        );
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            manifest,
            tool_hints: None,
            surface: None,
            tools: Vec::new(),
            handlers: Default::default(),
            toolsets: BTreeMap::new(),
            duplicate: None,
            page_size: DEFAULT_PAGE_SIZE,
            push_timeout: DEFAULT_PUSH_TIMEOUT,
            ask_timeout: DEFAULT_ASK_TIMEOUT,
            state_key: None,
            keep_toolsets: true,
            idle_end: crate::core::principal_core::DEFAULT_IDLE_END,
            features: Features::default(),
            principal_config: PrincipalConfig::default(),
            clock: Arc::new(SystemClock),
            logging: None,
            plain_hosts: PlainHosts::default(),
            store: None,
            follow_wait: FOLLOW_WAIT,
            resume_instances: true,
            peers: None,
            placement: None,
            peer_timeout: crate::peers::PEER_TIMEOUT,
            peer_bounds: crate::peers::PeerBounds::default(),
            start_hook: None,
        }
    }

    /// Asks `hook` before each instance starts on this server (issue #41,
    /// `docs/ownership.md` §1, §4): with its id, and whether it is opened here or adopted
    /// from its record ([`InstanceStart`](crate::InstanceStart)). The instance runs — its
    /// first step taken, its first record written — only once the future resolves `Ok`,
    /// so a cluster takes the instance's lease there and no write of it happens under no
    /// lease. Refused ([`StartRefused`](crate::StartRefused)), nothing of it runs: an open
    /// is answered "retry" (`-32603`, `data: {retryable: true, ran: false}`), an adoption
    /// refused ([`OwnershipError::Elsewhere`](crate::OwnershipError::Elsewhere) or
    /// [`OwnershipError::StartRefused`](crate::OwnershipError::StartRefused)). The opener
    /// waits for it, as for a block of instance ids (its other requests wait too): keep it
    /// short (one round trip to the leases).
    ///
    /// **\[project\]** Instances resumed when the server starts
    /// ([`resume_instances`](ServerBuilder::resume_instances), the default) are not asked:
    /// a server whose instances run by lease resumes none at start and adopts each.
    ///
    /// ```no_run
    /// # fn build(builder: mcpl_server::ServerBuilder) -> mcpl_server::ServerBuilder {
    /// builder.on_instance_start(|id, how| async move {
    ///     println!("instance {id} starts here ({how:?})");
    ///     Ok(())
    /// })
    /// # }
    /// ```
    pub fn on_instance_start<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(u64, crate::InstanceStart) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), crate::StartRefused>> + Send + 'static,
    {
        self.start_hook = Some(Arc::new(move |id, how| {
            Box::pin(hook(id, how)) as crate::StartFuture
        }));
        self
    }

    /// Reaches actors on other servers through `peers` (issue #41, `docs/ownership.md`
    /// §2): a principal here whose instance runs on another server (adopted there) talks
    /// to it through them, and an instance here to its principals elsewhere. Each actor of
    /// this server serves its address on them while it runs here. Without peers nothing
    /// crosses servers (the default).
    pub fn peers(mut self, peers: Arc<dyn crate::peers::Peers>) -> Self {
        self.peers = Some(peers);
        self
    }

    /// Asks `placement` before starting a principal that something other than a session
    /// brings here — an invitation nobody serves on the peers, an outbox's batches for her
    /// (issue #41, `docs/ownership.md` §1: a cluster runs each principal on the node
    /// holding her lease; [`Placement`](crate::Placement)). Without it (the default), she
    /// is started here.
    pub fn placement(mut self, placement: Arc<dyn crate::placement::Placement>) -> Self {
        self.placement = Some(placement);
        self
    }

    /// How long a message to an actor on another server waits for its answer
    /// ([`PEER_TIMEOUT`](crate::peers::PEER_TIMEOUT) by default); past it, a call is
    /// answered "retry, it may have run" and a join "retry".
    pub fn peer_timeout(mut self, timeout: Duration) -> Self {
        self.peer_timeout = timeout;
        self
    }

    /// How much this server holds per stream for actors on other servers (issue #41:
    /// an instance's outbox for one principal elsewhere, a principal's messages to one
    /// instance elsewhere, invitations to one principal elsewhere); see
    /// [`PeerBounds`](crate::peers::PeerBounds) for what happens at the bound.
    pub fn peer_bounds(mut self, bounds: crate::peers::PeerBounds) -> Self {
        self.peer_bounds = bounds;
        self
    }

    /// Keeps durable state in `store` (issue #15 **\[project\]**): each principal's kept
    /// instances and ended records, and each instance's state when its toolset is
    /// [`Toolset::durable`], written before the answers that report them and read back when
    /// the server is built again on the same store. Without a store nothing is written and
    /// a restart forgets everything. See the README, "Durable state".
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// How long at most the store's writer holds a commit open for a step promised to
    /// follow those waiting (issue #42 item 1 **\[project\]**: a move's instance record
    /// and each principal's record of it share one commit, one fsync; see
    /// [`FOLLOW_WAIT`], the default). A bound, not a linger: a promised step comes as soon
    /// as its actor handles the message carrying the promise, and nothing unpromised is
    /// ever held. `Duration::ZERO` commits at once, each step as it comes.
    pub fn follow_wait(mut self, max: Duration) -> Self {
        self.follow_wait = max;
        self
    }

    /// Whether the server resumes, when it starts, every instance its store keeps (and
    /// reads the principals they name): the default, `true`, for a server that owns its
    /// store alone (issue #15). `false` for a node of a cluster sharing one store with
    /// others (issue #41 item 3, `docs/ownership.md` **\[project\]**): it starts running
    /// no instance and adopts each one whose lease it takes
    /// ([`Server::adopt_instance`](crate::Server::adopt_instance)); its new instances'
    /// ids still go past every one the store keeps.
    pub fn resume_instances(mut self, resume: bool) -> Self {
        self.resume_instances = resume;
        self
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
    pub fn toolset(mut self, mut toolset: Toolset) -> Self {
        if let Some(tool) = &toolset.not_an_object {
            self.duplicate
                .get_or_insert(BuildError::ArgumentsNotAnObject(tool.clone()));
        }
        for t in &toolset.tools {
            self.add_tool(t.clone());
        }
        // Its tools with handlers of their own (`Toolset::typed_tool`) are answered as the
        // server's plain tools are; a name twice is refused by `add_tool` above.
        for (name, handler) in std::mem::take(&mut toolset.handlers) {
            self.handlers.insert(name, handler);
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

    /// How long a tool handler's request to the client waits for its answer
    /// ([`ToolContext::create_message`](crate::ToolContext::create_message),
    /// [`ToolContext::elicit`](crate::ToolContext::elicit); default
    /// [`DEFAULT_ASK_TIMEOUT`]).
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.ask_timeout = timeout;
        self
    }

    /// The key a modern call's `requestState` is signed with (MCP 2026-07-28 MRTR; see
    /// [`ToolContext::elicit`](crate::ToolContext::elicit)). Default: drawn at random when
    /// the server is built, so a state outlives neither the process nor reaches another.
    /// Servers behind one load balancer are given the same key, from a secret store, so
    /// that a client's retry may reach any of them.
    pub fn request_state_key(mut self, key: [u8; 32]) -> Self {
        self.state_key = Some(key);
        self
    }

    /// Whether a principal's toolsets stay open when its last connection closes (default:
    /// they do). When not, they end then, each with an ended record (§4.6).
    pub fn keep_toolsets(mut self, keep: bool) -> Self {
        self.keep_toolsets = keep;
        self
    }

    /// When toolsets are not kept ([`Self::keep_toolsets`]`(false)`): how long a principal
    /// served on the modern era (MCP 2026-07-28: no connection to close) keeps them after
    /// its last request or listen stream ended, before they end, each with an ended record
    /// (`docs/rfc014-stateless.md` §3.6, vector S13; default ten minutes). Stated to hinted
    /// modern hosts as `idleEndMs` in `server/discover`'s `mcpl/core`.
    pub fn idle_end(mut self, idle_end: Duration) -> Self {
        self.idle_end = idle_end;
        self
    }

    /// What a host without `toolHints` is offered of the toolsets it cannot open itself
    /// (§8; default [`PlainHosts::CompatTools`]).
    pub fn plain_hosts(mut self, plain_hosts: PlainHosts) -> Self {
        self.plain_hosts = plain_hosts;
        self
    }

    /// Whether a closed entry names its ended record's id (default yes; see
    /// [`crate::PrincipalConfig::ended_ids_on_closes`]).
    pub fn ended_ids_on_closes(mut self, on: bool) -> Self {
        self.principal_config.ended_ids_on_closes = on;
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

    /// Offers MCP logging (MCP 2025-11-25, "Utilities / Logging"): `initialize` declares
    /// the `logging` capability, `logging/setLevel` is served, and
    /// [`ToolContext::log`](crate::ToolContext::log) sends `notifications/message`. Each
    /// session sends messages at `initial` or above until its client sets a level (MCP
    /// leaves the choice before `logging/setLevel` to the server; `LoggingLevel::Debug`
    /// sends everything, as the official SDKs do).
    ///
    /// Off by default: a server that has not called this declares no `logging`
    /// capability, answers `logging/setLevel` with -32601 and drops what its tools log.
    pub fn logging(mut self, initial: LoggingLevel) -> Self {
        self.logging = Some(initial);
        self
    }

    /// Registers a tool and its handler. `A` is what the arguments decode into — a
    /// `Deserialize` struct, or `serde_json::Value` for the raw object; arguments that do
    /// not decode make the call a tool error (`isError: true`) naming the problem, and the
    /// handler is not called. The handler's future must be `Send`: it runs as a tokio task.
    ///
    /// The tool's `_meta` may carry RFC-014 hints (`mcpl/presence`, `mcpl/visible`,
    /// `mcpl/toolset`, §3); a tool with a handler is answered by it even inside a toolset.
    pub fn tool<A, F, Fut>(self, tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        let handler = Arc::new(Typed::<A, F>::new(tool.name.clone(), handler));
        self.add_handled(tool, handler)
    }

    /// Keeps `tool` answered by `handler` (a second of one name fails the build).
    fn add_handled(mut self, tool: Tool, handler: Arc<dyn ErasedHandler>) -> Self {
        if self.handlers.insert(tool.name.clone(), handler).is_some() {
            self.duplicate
                .get_or_insert(BuildError::DuplicateTool(tool.name.clone()));
        }
        self.add_tool(ToolDecl::new(tool));
        self
    }

    /// Offers a resource at a fixed URI (MCP "Resources"): listed by `resources/list`, and
    /// read by `handler` (its contents; none, or [`FeatureError::ResourceNotFound`], is
    /// "not found"). See [`crate::features`].
    pub fn resource<F, Fut>(mut self, resource: Resource, handler: F) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, FeatureError>> + Send + 'static,
    {
        if self.features.has_resource(&resource.uri) {
            self.duplicate.get_or_insert(BuildError::DuplicateFeature {
                kind: "resources",
                name: resource.uri.clone(),
            });
        }
        self.features.add_resource(resource, handler);
        self
    }

    /// Offers a family of resources named by an RFC 6570 level-1 URI template
    /// (`game://{instance}/board`): listed by `resources/templates/list`; a read of a URI
    /// it matches (and no fixed resource has) goes to `handler` with the URI and the
    /// template's variables. See [`crate::features`].
    pub fn resource_template<F, Fut>(mut self, template: ResourceTemplate, handler: F) -> Self
    where
        F: Fn(RequestContext, String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, FeatureError>> + Send + 'static,
    {
        if self.features.has_template(&template.uri_template) {
            self.duplicate.get_or_insert(BuildError::DuplicateFeature {
                kind: "resource templates",
                name: template.uri_template.clone(),
            });
        }
        match UriTemplate::parse(&template.uri_template) {
            Ok(parsed) => self.features.add_template(template, parsed, handler),
            Err(e) => {
                self.duplicate.get_or_insert(BuildError::UriTemplate(e));
            }
        }
        self
    }

    /// Adds resources that vary by principal or over time to every `resources/list`: what
    /// `handler` lists for the request's principal. They are read through a template that
    /// matches their URIs ([`ServerBuilder::resource_template`]).
    pub fn resource_list<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<Resource>> + Send + 'static,
    {
        self.features.add_lister(handler);
        self
    }

    /// Offers a prompt (MCP "Prompts"): listed by `prompts/list`; `prompts/get` calls
    /// `handler` with the arguments given, once every argument the prompt marks required
    /// is there (-32602 naming a missing one).
    pub fn prompt<F, Fut>(mut self, prompt: Prompt, handler: F) -> Self
    where
        F: Fn(RequestContext, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, FeatureError>> + Send + 'static,
    {
        if self.features.has_prompt(&prompt.name) {
            self.duplicate.get_or_insert(BuildError::DuplicateFeature {
                kind: "prompts",
                name: prompt.name.clone(),
            });
        }
        self.features.add_prompt(prompt, handler);
        self
    }

    /// Lets clients watch this server's resources (MCP "Resources", both eras): it declares
    /// `resources.subscribe: true`, serves a legacy client's `resources/subscribe` and
    /// `resources/unsubscribe`, and honours `resourceSubscriptions` in a modern client's
    /// `subscriptions/listen`. The author tells a change with
    /// [`Server::resource_updated`]; the sessions watching that URI write
    /// `notifications/resources/updated`. A URI may be watched when it names a resource
    /// this server serves (a fixed one, or one a template matches); a session watches at
    /// most 128 URIs of at most 32 KiB together. The server must offer a resource or a
    /// template ([`BuildError::NothingToWatch`]).
    pub fn resource_subscriptions(mut self) -> Self {
        self.features.allow_subscriptions();
        self
    }

    /// Serves `completion/complete` (MCP "Completion") with `handler`: the values for a
    /// prompt's argument or a template's variable, as typed so far. The answer carries at
    /// most 100 of them, with `total` and `hasMore`.
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(RequestContext, CompleteParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, FeatureError>> + Send + 'static,
    {
        self.features.set_completion(handler);
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
        let mut restore = HashMap::new();
        let mut routes = HashMap::new();
        for (name, toolset) in std::mem::take(&mut self.toolsets) {
            self.manifest.toolsets.insert(name.clone(), toolset.decl);
            if let Some(r) = toolset.restore {
                restore.insert(name.clone(), r);
            }
            if !toolset.routes.is_empty() {
                if toolset.logic.is_none() {
                    return Err(BuildError::RoutesWithoutLogic(name));
                }
                if !toolset.routes.one_logic() {
                    return Err(BuildError::RoutesOnManyLogics(name));
                }
                routes.insert(name.clone(), Arc::new(toolset.routes));
            }
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
        for t in &self.tools {
            if let Err(e) = mcpl_protocol::header_params::header_params(&t.tool().input_schema) {
                return Err(BuildError::HeaderMarks {
                    tool: t.name().to_owned(),
                    reason: e.to_string(),
                });
            }
        }
        let catalog = build_catalog(self.tools.clone(), &self.manifest, self.plain_hosts)?;
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
        let loaded = match &self.store {
            // Issue #41: the instances and the principals they need, not everything.
            Some(store) if self.resume_instances => {
                let anew = |t: &str| crate::shared::started_anew(&logic, &catalog, t);
                Some(crate::actors::restore::read_start(&**store, &anew)?)
            }
            // Issue #41: nothing resumed (new instance ids come from the store's counter,
            // past every id kept: `Store::reserve_instance_ids`).
            Some(_) => Some(crate::store::Loaded::default()),
            None => None,
        };
        let commits = match &self.store {
            Some(store) => Some(CommitQueue::start(store.clone(), self.follow_wait).map_err(
                |e| {
                    BuildError::Store(StoreError::Io {
                        path: store.location().into(),
                        detail: format!("cannot start its writer thread: {e}"),
                    })
                },
            )?),
            None => None,
        };
        let offers = self.features.offers();
        if offers.subscribe && !offers.resources {
            return Err(BuildError::NothingToWatch);
        }
        let features = Arc::new(self.features);
        let watchable = offers
            .watches()
            .then(|| features.clone() as Arc<dyn KnownResources>);
        let ended_ids = EndedIds::new(ended_epoch(self.clock.now()));
        let shared = Shared {
            profile: Arc::new(Profile {
                info: self.info,
                instructions: self.instructions,
                logging: self.logging,
                page_size: self.page_size,
                offers,
                watchable,
                idle_end: (!self.keep_toolsets).then_some(self.idle_end),
            }),
            features,
            watchers: Default::default(),
            current: Current::new(self.manifest, catalog),
            tools: self.tools,
            handled: self.handlers.keys().cloned().collect(),
            logic,
            routes,
            push_timeout: self.push_timeout,
            ask_timeout: self.ask_timeout,
            listen_slots: Default::default(),
            state_key: self
                .state_key
                .map_or_else(|| StateKey::new(rand::random()), StateKey::new),
            keep_toolsets: self.keep_toolsets,
            idle_end: self.idle_end,
            principal_config: self.principal_config,
            clock: self.clock,
            ended_ids,
            plain_hosts: self.plain_hosts,
            counters: Counters::default(),
            commits,
            store: self.store,
            restore,
            loaded: Mutex::new(loaded),
            peers: self.peers,
            placement: self.placement,
            peer_timeout: self.peer_timeout,
            peer_bounds: self.peer_bounds,
            start_hook: self.start_hook,
        };
        Ok(Server::new(shared, self.handlers))
    }
}

/// The last ended-id epoch a server of this process took.
static LAST_ENDED_EPOCH: AtomicU64 = AtomicU64::new(0);

/// The epoch of a server built at `now` (§4.3: ended ids are never reused): its build time
/// in nanoseconds, moved past every epoch a server of this process took before — so a
/// server built again in the same process (a restart, or a clock that stands still) issues
/// none of the earlier one's ids. A server of another process relies on the clock having
/// moved on; see `core::principal::ended`.
fn ended_epoch(now: SystemTime) -> u64 {
    let at = EndedIds::epoch_at(now);
    let bump = |last: u64| Some(at.max(last.saturating_add(1)));
    match LAST_ENDED_EPOCH.fetch_update(Ordering::Relaxed, Ordering::Relaxed, bump) {
        Ok(last) | Err(last) => at.max(last.saturating_add(1)),
    }
}

/// A plain tool of [`TypedTools::typed_tool`](crate::TypedTools::typed_tool): one whose
/// `inputSchema` is not an object fails [`ServerBuilder::build`] with
/// [`BuildError::ArgumentsNotAnObject`].
impl AddTyped for ServerBuilder {
    fn add_typed(mut self, tool: Tool, object: bool, handler: Arc<dyn ErasedHandler>) -> Self {
        if !object {
            self.duplicate
                .get_or_insert(BuildError::ArgumentsNotAnObject(tool.name.clone()));
        }
        self.add_handled(tool, handler)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TypedTools;
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
        assert!(m.feature_sets[DEFAULT_FEATURE_SET].description.is_some());
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
        let e = Server::builder("s", "1")
            .toolset(game().open_by_default())
            .build();
        assert!(matches!(
            e,
            Err(BuildError::Manifest(ManifestError::Toolset(
                mcpl_protocol::toolsets::DeclError::OpenWithInstances(ref n)
            ))) if n == "game"
        ));
        // A bad name.
        let e = Server::builder("s", "1")
            .toolset(Toolset::new("a.b"))
            .build();
        assert!(matches!(
            e,
            Err(BuildError::Manifest(ManifestError::Toolset(_)))
        ));
        // An options schema that does not compile.
        let e = Server::builder("s", "1")
            .toolset(game().options(json!({"type": "object", "properties": {"size": {"type": 7}}})))
            .build();
        assert!(
            matches!(e, Err(BuildError::Catalog(CatalogError::OptionsSchema { ref toolset, .. })) if toolset == "game")
        );
        // A tool nothing answers.
        let e = Server::builder("s", "1")
            .toolset(Toolset::new("solo").tool(tool("hint")))
            .build();
        assert!(matches!(e, Err(BuildError::Unanswered(ref t)) if t == "hint"));
        // Two toolsets of one name.
        let e = Server::builder("s", "1")
            .toolset(game())
            .toolset(game())
            .build();
        assert!(matches!(
            e,
            Err(BuildError::DuplicateTool(_) | BuildError::DuplicateToolset(_))
        ));
    }

    #[test]
    fn declaring_a_toolset_advertises_tool_hints() {
        let s = Server::builder("s", "1").toolset(game()).build().unwrap();
        assert_eq!(s.manifest().tool_hints, Some(true));
        assert!(s.shared.catalog().tool_hints());
        assert_eq!(s.shared.catalog().tools_of("game"), ["play"]);
        let s = Server::builder("s", "1")
            .toolset(game())
            .tool_hints(false)
            .build()
            .unwrap();
        assert!(!s.shared.catalog().tool_hints());
    }

    #[test]
    fn a_typed_tool_takes_its_schema_from_its_arguments_and_must_be_an_object() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)] // read only through its schema
        struct Move {
            point: String,
        }
        let s = Server::builder("s", "1")
            .typed_tool("play", "Plays", |_, _: Move| async {
                Ok(mcpl_protocol::mcp::CallToolResult::text("ok"))
            })
            .build()
            .unwrap();
        let catalog = s.shared.catalog();
        let play = catalog.tools().find(|t| t.name() == "play").unwrap();
        assert_eq!(
            play.tool().input_schema["required"],
            serde_json::json!(["point"])
        );
        let not_an_object = Server::builder("s", "1")
            .typed_tool("say", "Says", |_, _: String| async {
                Ok(mcpl_protocol::mcp::CallToolResult::text("ok"))
            })
            .build();
        assert!(matches!(
            not_an_object,
            Err(BuildError::ArgumentsNotAnObject(name)) if name == "say"
        ));
    }

    #[test]
    fn servers_built_at_one_time_take_distinct_epochs_from_it() {
        use crate::clock::ManualClock;
        use std::time::UNIX_EPOCH;
        let at = UNIX_EPOCH + Duration::from_secs(1_796_040_000);
        let clock = Arc::new(ManualClock::new(at));
        let build = || {
            Server::builder("s", "1")
                .clock(clock.clone())
                .build()
                .unwrap()
                .shared
                .ended_ids
                .epoch()
        };
        let (first, second) = (build(), build());
        assert!(first >= EndedIds::epoch_at(at), "from the clock");
        assert!(second > first, "a restart never reuses an epoch");
    }
}

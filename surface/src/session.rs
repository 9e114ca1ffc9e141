//! One client of the surface host: an MCP server session over one transport connection,
//! in front of the client's own [`HostHandle`] (its agent: conversation, toolsets, told
//! records).
//!
//! What the client sees (§6 "RFC §8.1, §8.2, §8.6"):
//!
//! - `tools/list`: the four meta-tools and the backing servers' static tools, namespaced
//!   as the host does, taken once — after the servers settled (or
//!   [`SessionOptions::first_contact`] passed) — and served unchanged for the session, so
//!   a client's prompt cache holds: dynamic changes never change it (vector 12). The
//!   capability says `listChanged: false`.
//! - `tools/call`: the host's answer, plus a block with what was shown since the previous
//!   call (pushes, notices, reminders: [`crate::news`]). Before each call the agent's turn
//!   starts (`StartTurn`), so a reminder of what is open comes once its announcement left
//!   the host's context window (§8.3).
//! - `notifications/message`: each push, notice and reminder as it is shown (at or above
//!   the client's `logging/setLevel`); those shown before the client sent
//!   `notifications/initialized` are held until it does ([`Held`]): the lobby's opening
//!   often comes during the handshake.
//! - A backing server's connection lost, and back (with what the host adopted there): told
//!   once each, in both ways ([`crate::links`]).
//! - To a client that speaks MCPL: a manifest, and once its `featureSets/update` grants
//!   `pushEvents`, all of the above as `push/event` instead ([`crate::mcpl`]).
//!
//! - A modern (MCP 2026-07-28) request before any `initialize` — a stdio client that
//!   probed with `server/discover` and found this server modern — is served as
//!   [`crate::modern`] says, by the agent of this connection's host (on stdio the
//!   operator's principal): results stamped modern, the news in the next result, nothing
//!   logged. Once `initialize` came, every request is the legacy era's.
//!
//! Requests are routed by the protocol crate's method markers (`mcpl_protocol::method`):
//! the wire name picks the route, the marker's params type reads it (-32602 saying what is
//! wrong), its result type answers it; an unknown method gets -32601, a known one other
//! than `initialize` and `ping` -32600 before `initialize`, as the server SDK answers. A
//! `featureSets/update` is received by the rule the server SDK follows
//! (`mcpl_protocol::grant`, [`crate::mcpl::update`]).
//!
//! Requests are answered concurrently (a Go move can take a while; a `ping` need not wait),
//! at most [`MAX_IN_FLIGHT`] at once, each under an id no other one in flight has (a reused
//! id is refused, as the server SDK refuses it). A request `notifications/cancelled` names gets no
//! answer (the call itself runs on in the host: the server may have acted already).

use crate::agent::Agent;
use crate::links::Links;
pub use crate::listing::{INSTRUCTIONS, SERVER_NAME, surface_tools};
use crate::modern::{self, Era, Route};
use crate::news::{self, Held, News};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use mcpl_host::host::{HostError, HostHandle};
use mcpl_host::state::meta_tools::LOOK;
use mcpl_protocol::grant::Policy;
use mcpl_protocol::jsonrpc::{
    ErrorCode, ErrorObject, Id, Message, Notification, Request, Response,
};
use mcpl_protocol::mcp::{
    self, CallToolParams, CallToolResult, ContentBlock, Empty, InitializeParams, InitializeResult,
    LOGGING_CAPABILITY, ListToolsParams, ListToolsResult, LoggingLevel, ServerCapabilities,
    ServerExperimental, SetLevelParams, Tool, ToolsCapability,
};
use mcpl_protocol::mcpl::{FeatureSetsUpdateParams, FeatureSetsUpdateResult};
use mcpl_protocol::method::{
    CallTool, Cancelled, FeatureSetsUpdate, Initialize, Initialized, ListTools, LoggingMessage,
    Method, NotificationMethod, Ping, RequestMethod, SetLevel,
};
use mcpl_transport::{Connection, Inbound};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// The most requests a client has answered at once; more are refused until one ends.
pub const MAX_IN_FLIGHT: usize = 16;

/// How a session behaves.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// How long `tools/list` waits for every backing server to settle or turn out
    /// unreachable before it lists what is known.
    pub first_contact: Duration,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            first_contact: Duration::from_secs(15),
        }
    }
}

/// An answer being worked out.
enum Work {
    /// A call's result, and whether the call was a look at everything (its answer states
    /// what is open and usable, so news that only restates it is left out).
    Call(Box<Result<CallToolResult, HostError>>, bool),
    Tools(Result<Vec<Tool>, HostError>),
    /// A modern request's answer, complete.
    Answered(Response),
}

/// Serves one client on `conn` until it goes away, then stops its host. Modern requests
/// before any `initialize` are served by the agent of `host`, whose news is kept from now
/// on (what the host shows while its servers connect is told in the first result).
pub async fn run(conn: Connection, host: HostHandle, options: SessionOptions) {
    let agent = Agent::start(host.clone(), options.first_contact);
    run_from(conn, None, host, options, Some(agent)).await;
}

/// [`run`], `first` being what was read from `conn` already (to tell its era), and `agent`
/// the one that serves its modern requests (`None`: made on the first one, for a
/// connection that is not expected to have any).
pub(crate) async fn run_from(
    conn: Connection,
    first: Option<Inbound>,
    host: HostHandle,
    options: SessionOptions,
    agent: Option<Arc<Agent>>,
) {
    let Connection {
        info,
        outbound,
        mut inbound,
    } = conn;
    tracing::debug!(peer = %info.peer, "surface session starts");
    let mut s = Session {
        host: host.clone(),
        options,
        events: host.subscribe(),
        news: News::new(),
        held: Held::default(),
        initialized: false,
        ready: false,
        level: LoggingLevel::Debug,
        tools: None,
        manifest: None,
        policy: None,
        pushes: false,
        pushed: 0,
        event_ids: crate::mcpl::EventIds::new(),
        in_flight: HashSet::new(),
        cancelled: HashSet::new(),
        agent,
        out: outbound,
    };
    let mut work: FuturesUnordered<BoxFuture<'static, (Id, Work)>> = FuturesUnordered::new();
    let mut status = host.status_watch();
    let mut links = Links::new();
    if let Some(read) = first
        && let Some(f) = s.inbound(read).await
    {
        work.push(f);
    }
    loop {
        tokio::select! {
            biased;
            Some(shown) = s.events.recv() => s.shown(&shown),
            Ok(()) = status.changed() => {
                let now = status.borrow_and_update().clone();
                for shown in links.update(&now) {
                    s.shown(&shown);
                }
            }
            Some((id, done)) = work.next(), if !work.is_empty() => {
                // What was shown before the answer goes with it, not after.
                while let Ok(shown) = s.events.try_recv() {
                    s.shown(&shown);
                }
                s.finish(id, done).await;
            }
            read = inbound.recv() => match read {
                None => break,
                Some(read) => {
                    if let Some(f) = s.inbound(read).await {
                        work.push(f);
                    }
                }
            },
        }
    }
    tracing::debug!(peer = %info.peer, "surface session ends");
    host.stop().await;
}

struct Session {
    host: HostHandle,
    options: SessionOptions,
    events: tokio::sync::mpsc::UnboundedReceiver<mcpl_host::host::Shown>,
    news: News,
    /// Log messages shown before the client was ready, to send once it is.
    held: Held,
    /// `initialize` was answered.
    initialized: bool,
    /// `notifications/initialized` came: notifications may be sent.
    ready: bool,
    level: LoggingLevel,
    /// The tool list, once taken.
    tools: Option<Vec<Tool>>,
    /// The manifest offered, to a client that speaks MCPL.
    manifest: Option<mcpl_protocol::mcpl::McplManifest>,
    /// The policy in force: the client's last `featureSets/update` request accepted, less
    /// what refused ones revoked and notifications disabled since.
    policy: Option<Policy>,
    /// The policy in force lets [`crate::mcpl::FEATURE_SET`] push ([`crate::mcpl::pushes`]).
    pushes: bool,
    /// Pushes sent (their JSON-RPC request ids).
    pushed: u64,
    /// The ids of this session's pushes (unique across sessions, SPEC §9.2).
    event_ids: crate::mcpl::EventIds,
    in_flight: HashSet<Id>,
    cancelled: HashSet<Id>,
    /// The agent of this connection's host, which serves its modern requests: from the
    /// start when the connection may have some (stdio), else made on the first.
    agent: Option<Arc<Agent>>,
    out: mcpl_transport::Outbound,
}

impl Session {
    async fn send(&self, m: Message) {
        // A client that went away ends the session through its inbound.
        let _ = self.out.send(m).await;
    }

    async fn error(&self, id: Id, e: ErrorObject) {
        self.send(Response::err(Some(id), e).into()).await;
    }

    /// A message shown outside results: kept for the next result, and logged to the client.
    fn shown(&mut self, shown: &mcpl_host::host::Shown) {
        if self.pushes {
            if let Some(params) = crate::mcpl::push(shown, &mut self.event_ids) {
                self.pushed += 1;
                let id = Id::String(format!("surface-push-{}", self.pushed));
                let r = Request::new::<mcpl_protocol::method::PushEvent>(id, &params);
                // A client that does not take its pushes loses them, as a lost stream would.
                if self.out.try_send(r.into()).is_err() {
                    tracing::debug!("a push/event was not queued: the client reads slowly");
                }
            }
            return;
        }
        self.news.push(shown);
        let Some(params) = news::log_message(shown) else {
            return;
        };
        if self.ready {
            self.log(params);
        } else {
            self.held.push(params);
        }
    }

    /// Sends one `notifications/message`, if at or above the client's level.
    fn log(&self, params: mcp::LoggingMessageParams) {
        if params.level < self.level {
            return;
        }
        let n = Notification::new::<LoggingMessage>(&params);
        // Best effort: a client that does not read its notifications still gets the news
        // in its next result.
        if self.out.try_send(n.into()).is_err() {
            tracing::debug!("a notifications/message was not queued: the client reads slowly");
        }
    }

    /// Handles what the transport read; a request that takes time comes back as work.
    async fn inbound(&mut self, read: Inbound) -> Option<BoxFuture<'static, (Id, Work)>> {
        match read {
            Inbound::Message { message, .. } => self.message(message).await,
            Inbound::Malformed { error, .. } => {
                self.send(error.to_response().into()).await;
                None
            }
            Inbound::TooLarge { size, limit, .. } => {
                let e = ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("message of {size} bytes refused: the limit is {limit}"),
                );
                self.send(Response::err(None, e).into()).await;
                None
            }
        }
    }

    /// Handles one message; a request that takes time comes back as work.
    async fn message(&mut self, m: Message) -> Option<BoxFuture<'static, (Id, Work)>> {
        match m {
            Message::Request(r) => self.request(r).await,
            Message::Notification(n) => {
                self.notification(n);
                None
            }
            // The surface host sends no requests: a response is a stray.
            Message::Response(r) => {
                tracing::debug!(id = ?r.id, "a response to no request of ours, ignored");
                None
            }
        }
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            Initialized::NAME if !self.ready => {
                self.ready = true;
                let held: Vec<_> = self.held.release().collect();
                for params in held {
                    self.log(params);
                }
            }
            Cancelled::NAME => {
                if let Ok(p) = n.params_as::<<Cancelled as NotificationMethod>::Params>()
                    && self.in_flight.contains(&p.request_id)
                {
                    self.cancelled.insert(p.request_id);
                }
            }
            // SPEC §6.7, as the server SDK reads it: a notification only narrows (its
            // `disabled` is added to the policy in force); it never grants.
            FeatureSetsUpdate::NAME => {
                if let (Some(policy), Ok(params)) = (
                    self.policy.as_mut(),
                    n.params_as::<<FeatureSetsUpdate as RequestMethod>::Params>(),
                ) && policy.narrow_by_notification(&params)
                {
                    self.pushes_follow_policy();
                }
            }
            // MCP: notifications the receiver does not know are ignored.
            _ => {}
        }
    }

    async fn request(&mut self, r: Request) -> Option<BoxFuture<'static, (Id, Work)>> {
        if !self.initialized {
            match modern::era(&r) {
                Ok(Era::Legacy) => {}
                Ok(Era::Modern(meta)) => {
                    return match modern::route(&r, &meta) {
                        Ok(route) => self.modern(r.id, route).await,
                        Err(e) => {
                            self.error(r.id, e).await;
                            None
                        }
                    };
                }
                Err(e) => {
                    self.error(r.id, e).await;
                    return None;
                }
            }
        }
        // **[project]** `featureSets/update` grants what a manifest declares (SPEC §5.3):
        // once `initialize` said this client speaks no MCPL, it was shown none, and the
        // method is unknown to it.
        let route = Legacy::of(&r.method).filter(|k| {
            *k != Legacy::FeatureSetsUpdate || !self.initialized || self.manifest.is_some()
        });
        let Some(route) = route else {
            self.error(r.id, ErrorObject::method_not_found(&r.method))
                .await;
            return None;
        };
        if !self.initialized && !route.before_initialize() {
            let e = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("{}: send initialize first", r.method),
            );
            self.error(r.id, e).await;
            return None;
        }
        match route {
            Legacy::Initialize => self.answer::<Initialize>(r, Self::initialize).await,
            Legacy::Ping => self.answer::<Ping>(r, |_, _| Ok(Empty::default())).await,
            Legacy::SetLevel => self.answer::<SetLevel>(r, Self::set_level).await,
            Legacy::FeatureSetsUpdate => {
                self.answer::<FeatureSetsUpdate>(r, Self::feature_sets_update)
                    .await
            }
            Legacy::ListTools => return self.work::<ListTools>(r, Self::list).await,
            Legacy::CallTool => return self.work::<CallTool>(r, Self::call).await,
        }
        None
    }

    /// Reads a request's params as `M`'s, answers it with `f`'s result (or its error).
    async fn answer<M: RequestMethod>(
        &mut self,
        r: Request,
        f: impl FnOnce(&mut Self, M::Params) -> Result<M::Result, ErrorObject>,
    ) {
        let response = match r.params_as::<M::Params>().and_then(|p| f(self, p)) {
            Ok(result) => Response::ok_typed(r.id, &result),
            Err(e) => Response::err(Some(r.id), e),
        };
        self.send(response.into()).await;
    }

    /// Reads a request's params as `M`'s and starts the work `f` makes of them, the request
    /// in flight until it is answered; or refuses it (past [`MAX_IN_FLIGHT`], bad params).
    async fn work<M: RequestMethod>(
        &mut self,
        r: Request,
        f: impl FnOnce(&Self, M::Params) -> Result<BoxFuture<'static, Work>, ErrorObject>,
    ) -> Option<BoxFuture<'static, (Id, Work)>> {
        let Request { id, .. } = &r;
        let id = id.clone();
        if let Some(e) = self.refusal(&id) {
            self.error(id, e).await;
            return None;
        }
        match r.params_as::<M::Params>().and_then(|p| f(self, p)) {
            Ok(f) => {
                self.in_flight.insert(id.clone());
                Some(Box::pin(async move { (id, f.await) }))
            }
            Err(e) => {
                self.error(id, e).await;
                None
            }
        }
    }

    /// Why a request with `id` may not start now, if it may not: past [`MAX_IN_FLIGHT`], or
    /// its id is one still in flight (JSON-RPC ids are unique among a sender's pending
    /// requests; a second answer with the id would be read as the first's). Refused with
    /// -32600 and the words the server SDK uses (`server-core/src/session/inbound.rs`).
    fn refusal(&self, id: &Id) -> Option<ErrorObject> {
        if self.in_flight.contains(id) {
            return Some(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("request id {id} is in use by a request still running"),
            ));
        }
        (self.in_flight.len() >= MAX_IN_FLIGHT).then(too_many)
    }

    /// `initialize`: the surface host's capabilities (a tool list that never changes,
    /// logging, and to a client that speaks MCPL its manifest), name and instructions.
    fn initialize(&mut self, p: InitializeParams) -> Result<InitializeResult, ErrorObject> {
        if self.initialized {
            return Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "already initialized",
            ));
        }
        self.initialized = true;
        self.manifest = p.capabilities.mcpl().map(|_| crate::mcpl::manifest());
        let mut other = serde_json::Map::new();
        other.insert(
            LOGGING_CAPABILITY.to_owned(),
            Value::Object(serde_json::Map::new()),
        );
        Ok(InitializeResult {
            protocol_version: mcp::negotiate_version(&p.protocol_version).to_owned(),
            capabilities: ServerCapabilities {
                tools: Some(ToolsCapability {
                    list_changed: Some(false),
                }),
                experimental: self.manifest.clone().map(|m| ServerExperimental {
                    mcpl: Some(m),
                    other: serde_json::Map::new(),
                }),
                other,
            },
            server_info: modern::server_info(),
            instructions: Some(INSTRUCTIONS.to_owned()),
            meta: None,
        })
    }

    /// `logging/setLevel`: from now on only messages at `level` or above are logged.
    fn set_level(&mut self, p: SetLevelParams) -> Result<Empty, ErrorObject> {
        self.level = p.level;
        Ok(Empty::default())
    }

    /// `featureSets/update` as a request (SPEC §5.3, §6.7), received as the server SDK
    /// receives one ([`crate::mcpl::update`]); pushes follow the policy in force, a
    /// refused update's revocations included.
    fn feature_sets_update(
        &mut self,
        p: FeatureSetsUpdateParams,
    ) -> Result<FeatureSetsUpdateResult, ErrorObject> {
        let Some(manifest) = self.manifest.as_ref() else {
            return Err(ErrorObject::method_not_found(FeatureSetsUpdate::NAME));
        };
        let answer = crate::mcpl::update(manifest, &mut self.policy, &p);
        self.pushes_follow_policy();
        answer
    }

    /// Pushes on or off as the policy in force says.
    fn pushes_follow_policy(&mut self) {
        self.pushes = self
            .manifest
            .as_ref()
            .is_some_and(|m| crate::mcpl::pushes(m, self.policy.as_ref()));
    }

    /// A modern request, routed: answered by this connection's agent.
    async fn modern(&mut self, id: Id, route: Route) -> Option<BoxFuture<'static, (Id, Work)>> {
        if route == Route::Discover {
            self.send(modern::discover(id).into()).await;
            return None;
        }
        if let Some(e) = self.refusal(&id) {
            self.error(id, e).await;
            return None;
        }
        let agent = self
            .agent
            .get_or_insert_with(|| Agent::start(self.host.clone(), self.options.first_contact))
            .clone();
        self.in_flight.insert(id.clone());
        Some(Box::pin(async move {
            let answer = modern::serve(&agent, id.clone(), route).await;
            (id, Work::Answered(answer))
        }))
    }

    fn list(&self, p: ListToolsParams) -> Result<BoxFuture<'static, Work>, ErrorObject> {
        if p.cursor.is_some() {
            return Err(ErrorObject::invalid_params(
                "no such cursor: the tool list is one page",
            ));
        }
        if let Some(tools) = &self.tools {
            let tools = tools.clone();
            return Ok(Box::pin(std::future::ready(Work::Tools(Ok(tools)))));
        }
        let (host, wait) = (self.host.clone(), self.options.first_contact);
        Ok(Box::pin(async move {
            if tokio::time::timeout(wait, host.first_contact())
                .await
                .is_err()
            {
                tracing::warn!(
                    "not every backing server settled in {wait:?}; listing what is known"
                );
            }
            Work::Tools(host.tools().await)
        }))
    }

    fn call(&self, p: CallToolParams) -> Result<BoxFuture<'static, Work>, ErrorObject> {
        let looks_at_all = p.name == LOOK && p.arguments.as_ref().is_none_or(|a| a.is_empty());
        let args = p.arguments.map(Value::Object).unwrap_or(Value::Null);
        let host = self.host.clone();
        Ok(Box::pin(async move {
            // Each call is a turn of the agent's: a reminder that is due is shown first (§8.3).
            if let Err(e) = host.start_turn().await {
                return Work::Call(Box::new(Err(e)), looks_at_all);
            }
            Work::Call(Box::new(host.call(&p.name, args).await), looks_at_all)
        }))
    }

    async fn finish(&mut self, id: Id, done: Work) {
        self.in_flight.remove(&id);
        if self.cancelled.remove(&id) {
            return;
        }
        let stopped = |e: HostError| ErrorObject::internal(format!("the surface host: {e}"));
        let response = match done {
            Work::Tools(Ok(listed)) => {
                let tools = self.tools.get_or_insert_with(|| surface_tools(listed));
                let result: <ListTools as RequestMethod>::Result = ListToolsResult {
                    tools: tools.clone(),
                    next_cursor: None,
                    meta: None,
                };
                Response::ok_typed(id, &result)
            }
            Work::Call(done, looks_at_all) => match *done {
                Ok(mut result) => {
                    // The host's own keys are for hosts; a plain client is told in words.
                    result.meta = None;
                    if let Some(block) = self.news.take(looks_at_all) {
                        result.content.push(ContentBlock::text(block));
                    }
                    let result: <CallTool as RequestMethod>::Result = result;
                    Response::ok_typed(id, &result)
                }
                Err(e) => Response::err(Some(id), stopped(e)),
            },
            Work::Tools(Err(e)) => Response::err(Some(id), stopped(e)),
            Work::Answered(response) => response,
        };
        self.send(response.into()).await;
    }
}

/// The legacy-era requests the surface host serves, each by its method marker
/// (`mcpl_protocol::method`): its wire name routes it, its params type reads it, its result
/// type answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Legacy {
    Initialize,
    Ping,
    ListTools,
    CallTool,
    FeatureSetsUpdate,
    SetLevel,
}

impl Legacy {
    /// The request `method` names, or `None` for one the surface host does not serve
    /// (-32601; `server/discover` among them once a connection is legacy).
    fn of(method: &str) -> Option<Legacy> {
        Some(match method {
            Initialize::NAME => Legacy::Initialize,
            Ping::NAME => Legacy::Ping,
            ListTools::NAME => Legacy::ListTools,
            CallTool::NAME => Legacy::CallTool,
            FeatureSetsUpdate::NAME => Legacy::FeatureSetsUpdate,
            SetLevel::NAME => Legacy::SetLevel,
            _ => return None,
        })
    }

    /// Served before `initialize` too (MCP "Lifecycle"); any other is refused with -32600
    /// until then, as the server SDK refuses it.
    fn before_initialize(self) -> bool {
        matches!(self, Legacy::Initialize | Legacy::Ping)
    }
}

/// The refusal of a request past [`MAX_IN_FLIGHT`].
fn too_many() -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_REQUEST,
        format!("{MAX_IN_FLIGHT} requests are being answered already; wait for one"),
    )
}

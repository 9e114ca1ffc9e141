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
//! A message is received by the server SDK's own receipt (`mcpl_server_core`, issue #38
//! item 5), so the surface host answers every edge case as a server SDK session does:
//! `dispatch` tells a request's era, routes it by the table built from the protocol
//! crate's method markers (an unknown method gets -32601; a known one other than
//! `initialize` and `ping` -32600 before `initialize`), and reads the notifications; the
//! route's marker reads the params (-32602 saying what is wrong) and types the result;
//! `Lifecycle` holds the phases, answers a second `initialize` and receives a
//! `featureSets/update` (`Lifecycle::receive_grant`: `mcpl_protocol::grant`'s rule and
//! receipt); `Requests` is the table of requests in flight. This file matches no method
//! name: it says which routes it serves and serves them.
//!
//! Requests are answered concurrently (a Go move can take a while; a `ping` need not wait),
//! at most [`MAX_IN_FLIGHT`] at once, each under an id no other one in flight has (a reused
//! id is refused in the server SDK's words, `Requests::admit`). A request
//! `notifications/cancelled` names gets no answer (the call itself runs on in the host: the
//! server may have acted already); its id stays in use until the call ends.

use crate::agent::Agent;
use crate::links::Links;
pub use crate::listing::{INSTRUCTIONS, SERVER_NAME, surface_tools};
use crate::modern::{self, Route};
use crate::news::{self, Held, News};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use mcpl_host::host::{HostError, HostHandle};
use mcpl_host::state::meta_tools::LOOK;
use mcpl_protocol::jsonrpc::{ErrorObject, Id, Message, Notification, Request, Response};
use mcpl_protocol::mcp::{
    self, CallToolParams, CallToolResult, ContentBlock, Empty, InitializeParams, InitializeResult,
    LOGGING_CAPABILITY, ListToolsParams, ListToolsResult, LoggingLevel, ServerCapabilities,
    ServerExperimental, SetLevelParams, Tool, ToolsCapability,
};
use mcpl_protocol::mcpl::{FeatureSetsUpdateParams, FeatureSetsUpdateResult};
use mcpl_protocol::method::{
    CallTool, FeatureSetsUpdate, Initialize, ListTools, LoggingMessage, Ping, RequestMethod,
    SetLevel,
};
use mcpl_server_core::dispatch::{self, ClientNotification, Received, Route as Served};
use mcpl_server_core::lifecycle::{Lifecycle, LifecycleError, Phase};
use mcpl_server_core::requests::{Requests, Settled};
use mcpl_transport::{Connection, Inbound};
use serde_json::Value;
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
        lifecycle: Lifecycle::default(),
        level: LoggingLevel::Debug,
        tools: None,
        manifest: None,
        pushes: false,
        pushed: 0,
        event_ids: crate::mcpl::EventIds::new(),
        requests: Requests::default(),
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
    /// The phases (`initialize`, `notifications/initialized`, `featureSets/update`) and the
    /// policy in force: the client's last `featureSets/update` request accepted, less what
    /// refused ones revoked and notifications disabled since.
    lifecycle: Lifecycle,
    level: LoggingLevel,
    /// The tool list, once taken.
    tools: Option<Vec<Tool>>,
    /// The manifest offered, to a client that speaks MCPL.
    manifest: Option<mcpl_protocol::mcpl::McplManifest>,
    /// The policy in force lets [`crate::mcpl::FEATURE_SET`] push ([`crate::mcpl::pushes`]).
    pushes: bool,
    /// Pushes sent (their JSON-RPC request ids).
    pushed: u64,
    /// The ids of this session's pushes (unique across sessions, SPEC §9.2).
    event_ids: crate::mcpl::EventIds,
    /// The requests being answered: their ids in use until then, cancelled ones marked.
    requests: Requests<()>,
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
        if self.ready() {
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
                let e = dispatch::too_large(size, limit);
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

    /// `notifications/initialized` came: notifications may be sent.
    fn ready(&self) -> bool {
        matches!(self.lifecycle.phase(), Phase::AwaitingGrant | Phase::Ready)
    }

    fn notification(&mut self, n: Notification) {
        match ClientNotification::read(&n) {
            Ok(Some(ClientNotification::Initialized)) => {
                if self.lifecycle.on_initialized() {
                    let held: Vec<_> = self.held.release().collect();
                    for params in held {
                        self.log(params);
                    }
                }
            }
            // Marked: its answer, when it comes, is not sent.
            Ok(Some(ClientNotification::Cancelled(p))) => {
                self.requests.cancel(&p.request_id);
            }
            // SPEC §6.7, as the server SDK reads it: a notification only narrows (its
            // `disabled` is added to the policy in force); it never grants.
            Ok(Some(ClientNotification::FeatureSetsUpdate(params))) => {
                if self.lifecycle.on_grant_notification(&params) {
                    self.pushes_follow_policy();
                }
            }
            // MCP: notifications the receiver does not know are ignored.
            Ok(None) => {}
            Err(error) => tracing::debug!(method = n.method, %error, "bad notification; ignored"),
        }
    }

    async fn request(&mut self, r: Request) -> Option<BoxFuture<'static, (Id, Work)>> {
        // **[project]** `featureSets/update` grants what a manifest declares (SPEC §5.3):
        // once `initialize` said this client speaks no MCPL, it was shown none, and the
        // method is unknown to it.
        let grants = self.lifecycle.negotiated().is_none() || self.manifest.is_some();
        let serves = |route: Served| match route {
            Served::Initialize
            | Served::Ping
            | Served::ListTools
            | Served::CallTool
            | Served::SetLevel => true,
            Served::FeatureSetsUpdate => grants,
            _ => false,
        };
        let route = match dispatch::receive(&r, &self.lifecycle, serves) {
            Ok(Received::Legacy(route)) => route,
            Ok(Received::Modern(meta)) => {
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
        };
        match route {
            Served::Initialize => self.answer::<Initialize>(r, Self::initialize).await,
            Served::Ping => self.answer::<Ping>(r, |_, _| Ok(Empty::default())).await,
            Served::SetLevel => self.answer::<SetLevel>(r, Self::set_level).await,
            Served::FeatureSetsUpdate => {
                self.answer::<FeatureSetsUpdate>(r, Self::feature_sets_update)
                    .await
            }
            Served::ListTools => return self.work::<ListTools>(r, Self::list).await,
            Served::CallTool => return self.work::<CallTool>(r, Self::call).await,
            // Not served: `dispatch::receive` refused it already.
            _ => {
                let e = ErrorObject::method_not_found(&r.method);
                self.error(r.id, e).await;
            }
        }
        None
    }

    /// Reads a request's params as `M`'s, answers it with `f`'s result (or its error).
    async fn answer<M: RequestMethod>(
        &mut self,
        r: Request,
        f: impl FnOnce(&mut Self, M::Params) -> Result<M::Result, ErrorObject>,
    ) {
        let response = dispatch::answer::<M, _>(r, self, f);
        self.send(response.into()).await;
    }

    /// Reads a request's params as `M`'s and starts the work `f` makes of them, the request
    /// in flight until it is answered; or refuses it (its id in use, past [`MAX_IN_FLIGHT`],
    /// bad params).
    async fn work<M: RequestMethod>(
        &mut self,
        r: Request,
        f: impl FnOnce(&Self, M::Params) -> Result<BoxFuture<'static, Work>, ErrorObject>,
    ) -> Option<BoxFuture<'static, (Id, Work)>> {
        let id = r.id.clone();
        if let Err(e) = self.requests.admit(&id, MAX_IN_FLIGHT) {
            self.error(id, e).await;
            return None;
        }
        match r.params_as::<M::Params>().and_then(|p| f(self, p)) {
            Ok(f) => {
                self.requests.forward(id.clone());
                Some(Box::pin(async move { (id, f.await) }))
            }
            Err(e) => {
                self.error(id, e).await;
                None
            }
        }
    }

    /// `initialize`: the surface host's capabilities (a tool list that never changes,
    /// logging, and to a client that speaks MCPL its manifest), name and instructions.
    fn initialize(&mut self, p: InitializeParams) -> Result<InitializeResult, ErrorObject> {
        let negotiated = self
            .lifecycle
            .on_initialize(&p)
            .map_err(LifecycleError::to_error)?;
        let protocol_version = negotiated.protocol_version.to_owned();
        self.manifest = negotiated.host.mcpl.then(crate::mcpl::manifest);
        let mut other = serde_json::Map::new();
        other.insert(
            LOGGING_CAPABILITY.to_owned(),
            Value::Object(serde_json::Map::new()),
        );
        Ok(InitializeResult {
            protocol_version,
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
    /// receives one (`Lifecycle::receive_grant`); pushes follow the policy in force, a
    /// refused update's revocations included.
    fn feature_sets_update(
        &mut self,
        p: FeatureSetsUpdateParams,
    ) -> Result<FeatureSetsUpdateResult, ErrorObject> {
        let Some(manifest) = self.manifest.as_ref() else {
            return Err(ErrorObject::method_not_found(
                Served::FeatureSetsUpdate.name(),
            ));
        };
        let answer = self.lifecycle.receive_grant(p, manifest);
        self.pushes_follow_policy();
        answer.map_err(|e| e.to_error())
    }

    /// Pushes on or off as the policy in force says.
    fn pushes_follow_policy(&mut self) {
        self.pushes = self
            .manifest
            .as_ref()
            .is_some_and(|m| crate::mcpl::pushes(m, self.lifecycle.policy()));
    }

    /// A modern request, routed: answered by this connection's agent.
    async fn modern(&mut self, id: Id, route: Route) -> Option<BoxFuture<'static, (Id, Work)>> {
        if route == Route::Discover {
            self.send(modern::discover(id).into()).await;
            return None;
        }
        if let Err(e) = self.requests.admit(&id, MAX_IN_FLIGHT) {
            self.error(id, e).await;
            return None;
        }
        let agent = self
            .agent
            .get_or_insert_with(|| Agent::start(self.host.clone(), self.options.first_contact))
            .clone();
        self.requests.forward(id.clone());
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
        match self.requests.settle(&id) {
            Settled::Answer => {}
            // Cancelled: MCP "Cancellation", no answer.
            Settled::Cancelled | Settled::Unknown => return,
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

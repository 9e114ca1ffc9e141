//! Reading: what the core does with each message from the host.
//!
//! A request carrying MCP 2026-07-28's per-request `_meta` on a connection not opened with
//! `initialize` is modern and served as `modern.rs` says. Otherwise requests are routed by
//! method. The era, the route, the before-`initialize` rule and the words of a reused id
//! are `crate::dispatch`'s and `crate::requests`'s, shared with the surface host (issue #38
//! item 5); what is served, and how, is this file's. Unknown methods — `server/discover` among them once a connection is legacy —
//! get -32601 in every phase;
//! known ones other than `initialize` and `ping` get -32600 before `initialize`
//! ([`LifecycleError::NotInitialized`]); params that do not decode get -32602; a request
//! whose answer comes from the principal may not reuse the id of one still in flight
//! (-32600). `logging/setLevel` is served only by a server that offers MCP logging;
//! elsewhere it is an unknown method too; so are `resources/subscribe` and
//! `resources/unsubscribe` on a server whose resources may not be watched (`watch.rs`). `toolsets/*` are for hosts shown hints (§2): any
//! other gets -32601, the way a server without the RFC would answer (it opens and closes
//! through the compat tools, §8). Malformed input gets its decode error's response, an
//! oversized message an invalid-request error with id `null`; the session goes on after
//! each.
//!
//! The lifecycle requests (`initialize`, `featureSets/update`, `mcpl/manifest`, SPEC §3,
//! §6, §17) are answered here, through [`Lifecycle`](crate::lifecycle::Lifecycle).

use super::FeatureRequest;
use super::SessionCore;
use super::output::{Event, Forward, Io, Transmit};
use crate::dispatch::{self, ClientNotification, Received, Route, feature_routes};
use crate::lifecycle::{LifecycleError, Phase};
use crate::manifest;
use crate::principal_core::HostCall;
use mcpl_protocol::jsonrpc::{
    DecodeError, ErrorCode, ErrorObject, Message, Notification, Request, Response,
};
use mcpl_protocol::mcp::{
    CallToolParams, CancelledParams, Empty, InitializeParams, InitializeResult, LOGGING_CAPABILITY,
    ServerCapabilities, ServerExperimental, SetLevelParams, ToolsCapability,
};
use mcpl_protocol::mcpl::{
    FeatureSetsUpdateParams, FeatureSetsUpdateResult, ManifestChangedParams, McplManifest,
};
use mcpl_protocol::meta;
use mcpl_protocol::method::{
    self, FeatureSetsUpdate, GetManifest, Initialize, ListTools, Ping, RequestMethod, SetLevel,
    ToolsetsClose, ToolsetsList, ToolsetsOpen,
};

/// Whether a legacy request routed to `route` (`crate::dispatch`, the table shared with the
/// surface host) is answered by the principal: its id is in flight until then.
fn forwarded(route: Route) -> bool {
    matches!(route, Route::ListTools | Route::CallTool) || route.is_toolsets() || route.is_feature()
}

impl<T: Io> SessionCore<T> {
    /// A message from the host.
    pub fn handle_message(&mut self, message: Message) {
        match message {
            Message::Request(r) => self.on_request(r),
            Message::Notification(n) => self.on_notification(n),
            Message::Response(r) => self.emit(Event::Response(r)),
        }
    }

    /// Bytes from the host that are not a JSON-RPC message: its decode error's response.
    pub fn handle_malformed(&mut self, error: &DecodeError) {
        tracing::debug!(%error, "malformed message");
        self.send(error.to_response().into());
    }

    /// A message over the transport's size limit: an invalid-request error with id `null`.
    pub fn handle_too_large(&mut self, size: usize, limit: usize) {
        tracing::debug!(size, limit, "message too large");
        self.send(Response::err(None, dispatch::too_large(size, limit)).into());
    }

    fn on_request(&mut self, req: Request) {
        // The era, the route and the before-`initialize` rule (`crate::dispatch`): MCP
        // 2026-07-28's requests on a connection not opened with `initialize` are served as
        // `modern.rs` says; an `initialize` that carries modern `_meta` and no
        // `protocolVersion` is a modern request for a removed method (-32601).
        let (logging, offers) = (self.offers_logging(), self.profile.offers);
        // MCP "Utilities / Logging": only a server declaring `logging` serves setLevel.
        let serves = |r: Route| match r {
            Route::SetLevel => logging,
            Route::Subscribe | Route::Unsubscribe => offers.watches(),
            r if r.is_feature() => offers.serves(r),
            _ => true,
        };
        let route = match dispatch::receive(&req, &self.lifecycle, serves) {
            Ok(Received::Legacy(route)) => route,
            Ok(Received::Modern(_)) if self.detach_modern => return self.detach(req),
            Ok(Received::Modern(meta)) => return self.on_modern_request(req, *meta),
            Err(e) => return self.send(Response::err(Some(req.id), e).into()),
        };
        if route.is_toolsets() && !self.hinted() {
            let e = ErrorObject::method_not_found(&req.method);
            return self.send(Response::err(Some(req.id), e).into());
        }
        if forwarded(route)
            && let Err(e) = self.requests.refuse_reused(&req.id)
        {
            return self.send(Response::err(Some(req.id), e).into());
        }
        match route {
            Route::Initialize => {
                let first = self.lifecycle.phase() == Phase::AwaitingInitialize;
                self.answer::<Initialize>(req, Self::initialize);
                if let Some(n) = self.lifecycle.negotiated().filter(|_| first) {
                    let tool_hints = n.host.tool_hints;
                    self.forward(Forward::Initialized {
                        tool_hints,
                        modern: false,
                    });
                }
            }
            Route::Ping => self.answer::<Ping>(req, |_, _| Ok(Empty::default())),
            Route::FeatureSetsUpdate => {
                let before = self.lifecycle.phase();
                self.answer::<FeatureSetsUpdate>(req, Self::feature_sets_update);
                self.on_phase(before);
            }
            Route::GetManifest => self.answer::<GetManifest>(req, Self::get_manifest),
            Route::SetLevel => self.answer::<SetLevel>(req, Self::set_level),
            Route::ListTools => {
                self.forward_with::<ListTools>(req, |request, p| Forward::ListTools {
                    request,
                    cursor: p.cursor,
                })
            }
            Route::CallTool => match req.params_as::<CallToolParams>() {
                Ok(p) => self.call_tool(req.id, p),
                Err(e) => self.send(Response::err(Some(req.id), e).into()),
            },
            Route::ToolsetsOpen => {
                self.forward_with::<ToolsetsOpen>(req, |request, p| Forward::Open {
                    request,
                    toolset: p.toolset,
                    instance: p.instance,
                    options: p.options,
                })
            }
            Route::ToolsetsClose => {
                self.forward_with::<ToolsetsClose>(req, |request, p| Forward::Close {
                    request,
                    toolset: p.toolset,
                    instance: p.instance,
                    retried: false,
                })
            }
            Route::ToolsetsList => self
                .forward_with::<ToolsetsList>(req, |request, _| Forward::ListToolsets { request }),
            feature_routes!() => match FeatureRequest::read(route, &req) {
                Ok(feature) => self.serve_feature(req.id, feature),
                Err(e) => self.send(Response::err(Some(req.id), e).into()),
            },
            Route::Subscribe => self.subscribe(req),
            Route::Unsubscribe => self.unsubscribe(req),
            // Modern only: `dispatch::receive` routes neither to a legacy request.
            Route::Discover | Route::Listen => {
                let e = ErrorObject::method_not_found(&req.method);
                self.send(Response::err(Some(req.id), e).into())
            }
        }
    }

    /// `tools/call`, its params read: to the principal, or run here at once when it is a
    /// loose tool this session may run (module docs of `session.rs`: direct calls).
    pub(super) fn call_tool(&mut self, id: mcpl_protocol::jsonrpc::Id, p: CallToolParams) {
        let hinted = self.hinted();
        self.call_tool_as(id, p, hinted);
    }

    /// [`SessionCore::call_tool`] for a host shown hints or not (a modern request says
    /// which for itself, `modern.rs`).
    pub(super) fn call_tool_as(
        &mut self,
        id: mcpl_protocol::jsonrpc::Id,
        p: CallToolParams,
        hinted: bool,
    ) {
        // §4.5: the instance a host with hints names; a host without names it as
        // an argument instead (§8), which the principal reads.
        // §4.5 **[project]**: an `mcpl/instance` that is not a string names no
        // instance, and is not taken for an absent one either (that would run the
        // call in the only open instance, which the host may not have meant).
        if let Some(bad) = p.meta.as_ref().and_then(|m| m.other.get(meta::INSTANCE))
            && hinted
        {
            let e = ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "_meta[\"{}\"] must be a string naming an instance, not {}",
                    meta::INSTANCE,
                    json_kind(bad)
                ),
            );
            return self.send(Response::err(Some(id), e).into());
        }
        let instance = p
            .meta
            .as_ref()
            .and_then(|m| m.instance.clone())
            .filter(|_| hinted);
        // A loose tool the principal let this session run (module docs of
        // `session.rs`: direct calls); naming an instance is the principal's to
        // refuse.
        if instance.is_none() && self.runs_direct(&p.name) {
            return self.emit(Event::RunDirect {
                request: id,
                tool: p.name,
                arguments: p.arguments,
                meta: p.meta,
            });
        }
        self.requests.forward(id.clone());
        self.forward(Forward::Call(HostCall {
            request: id,
            tool: p.name,
            arguments: p.arguments,
            instance,
            plain: !hinted,
            meta: p.meta,
        }));
    }

    /// Tells the principal when the handshake completed (SPEC §5.3: pushing may start).
    fn on_phase(&mut self, before: Phase) {
        if before != Phase::Ready && self.lifecycle.phase() == Phase::Ready {
            self.forward(Forward::Ready);
        }
    }

    /// Decodes a request's params as `M`'s, serves it with `f`, queues the response.
    fn answer<M: RequestMethod>(
        &mut self,
        req: Request,
        f: impl FnOnce(&mut Self, M::Params) -> Result<M::Result, ErrorObject>,
    ) {
        let response = dispatch::answer::<M, _>(req, self, f);
        self.send(response.into());
    }

    /// Decodes a request's params as `M`'s and forwards it to the principal as `f` makes
    /// it, the request now in flight; or answers -32602.
    fn forward_with<M: RequestMethod>(
        &mut self,
        req: Request,
        f: impl FnOnce(mcpl_protocol::jsonrpc::Id, M::Params) -> Forward,
    ) {
        match req.params_as::<M::Params>() {
            Ok(p) => {
                self.requests.forward(req.id.clone());
                self.forward(f(req.id, p));
            }
            Err(e) => self.send(Response::err(Some(req.id), e).into()),
        }
    }

    fn on_notification(&mut self, n: Notification) {
        match ClientNotification::read(&n) {
            Ok(Some(ClientNotification::Initialized)) => {
                let before = self.lifecycle.phase();
                if self.lifecycle.on_initialized() {
                    self.on_phase(before);
                    tracing::debug!(phase = ?self.lifecycle.phase(), "host initialized");
                } else {
                    tracing::debug!(phase = ?self.lifecycle.phase(), "unexpected initialized; ignored");
                }
            }
            // SPEC §6.7: a notification carrying grant fields only narrows; it never
            // establishes a ready state.
            Ok(Some(ClientNotification::FeatureSetsUpdate(params))) => {
                let narrowed = self.lifecycle.on_grant_notification(&params);
                tracing::info!(narrowed, disabled = ?params.disabled,
                        "featureSets/update as a notification: only its disabled list applies");
            }
            Ok(Some(ClientNotification::Cancelled(CancelledParams {
                request_id, reason, ..
            }))) => self.cancel(&request_id, reason.as_deref()),
            // MCP: notifications the receiver does not know are ignored.
            Ok(None) => tracing::debug!(method = n.method, "notification ignored"),
            Err(error) => tracing::debug!(method = n.method, %error, "bad notification; ignored"),
        }
    }

    fn initialize(&mut self, params: InitializeParams) -> Result<InitializeResult, ErrorObject> {
        let negotiated = self
            .lifecycle
            .on_initialize(&params)
            .map_err(LifecycleError::to_error)?;
        let version = negotiated.protocol_version;
        tracing::info!(client = %negotiated.client_info.name, version, host = ?negotiated.host, "initialized");
        let shown = McplManifest::clone(self.manifest_shown());
        self.note_shown();
        let mut other = serde_json::Map::new();
        if self.offers_logging() {
            // MCP "Utilities / Logging": a server that sends log messages declares `logging`.
            other.insert(LOGGING_CAPABILITY.to_owned(), serde_json::json!({}));
        }
        self.profile.offers.declare(&mut other);
        Ok(InitializeResult {
            protocol_version: version.to_owned(),
            capabilities: ServerCapabilities {
                // Sent when a manifest change changes the tools a host is shown (§4.1).
                tools: Some(ToolsCapability {
                    list_changed: Some(true),
                }),
                experimental: Some(ServerExperimental {
                    mcpl: Some(shown),
                    other: Default::default(),
                }),
                other,
            },
            server_info: self.profile.info.clone(),
            instructions: self.profile.instructions.clone(),
            meta: None,
        })
    }

    /// `featureSets/update` as a request (SPEC §5.3, §6.7): the policy, answered with the
    /// receipt it leads to; a malformed one is refused (§5.4).
    fn feature_sets_update(
        &mut self,
        grant: FeatureSetsUpdateParams,
    ) -> Result<FeatureSetsUpdateResult, ErrorObject> {
        let granted = grant.effective_capabilities.clone();
        let shown = self.manifest_shown().clone();
        let result = self.lifecycle.receive_grant(grant, &shown).map_err(|e| {
            tracing::info!(error = %e, "policy refused");
            e.to_error()
        })?;
        tracing::info!(?granted, mode = ?result.mode, "policy received");
        Ok(result)
    }

    /// `mcpl/manifest` (SPEC §17.4): the manifest object itself, as `initialize` shows it.
    fn get_manifest(&mut self, _: Empty) -> Result<McplManifest, ErrorObject> {
        self.note_shown();
        Ok(McplManifest::clone(self.manifest_shown()))
    }

    /// `logging/setLevel`: from now on only messages at `level` or above are sent.
    fn set_level(&mut self, params: SetLevelParams) -> Result<Empty, ErrorObject> {
        tracing::debug!(level = ?params.level, "log level set");
        self.log_level = Some(params.level);
        Ok(Empty::default())
    }

    /// The server's manifest was replaced: tell this host which domains changed for it
    /// (SPEC §17.3, §4.1: the `toolsets` domain), if it speaks MCPL and has seen a
    /// manifest.
    pub(super) fn on_manifest_replaced(&mut self) {
        let Some(negotiated) = self.lifecycle.negotiated() else {
            return; // `initialize` will show the new one.
        };
        if !negotiated.host.mcpl {
            return;
        }
        let Some(old) = self.shown.take() else {
            return;
        };
        self.note_shown();
        let new = self.manifest_shown().clone();
        let domains = manifest::changed_domains(old.view(), &new);
        if domains.is_empty() {
            return;
        }
        let revision = new.revision.clone().unwrap_or_default();
        let params = ManifestChangedParams {
            revision,
            domains,
            meta: None,
        };
        self.send(Notification::new::<method::ManifestChanged>(&params).into());
    }

    /// Queues a message with no hint changes.
    pub(super) fn send(&mut self, message: Message) {
        self.transmit(Transmit::Message(message));
    }

    pub(super) fn forward(&mut self, f: Forward) {
        self.emit(Event::Forward(f));
    }
}

/// What kind of JSON value `v` is, for an error that should not echo the value itself (it
/// may be large).
fn json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

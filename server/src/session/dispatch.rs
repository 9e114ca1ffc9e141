//! Reading: what the session does with each inbound item.
//!
//! Requests are routed by method. Unknown methods — `server/discover` among them, so that a
//! newer client probing with it falls back to `initialize` — get -32601 in every phase;
//! known ones other than `initialize` and `ping` get -32600 before `initialize`
//! ([`LifecycleError::NotInitialized`](super::LifecycleError)); params that do not decode
//! get -32602. `logging/setLevel` is served only by a server that offers MCP logging
//! (`notices.rs`); elsewhere it is an unknown method too. Malformed input gets its decode
//! error's response, an oversized message an invalid-request error with id `null`; the
//! session goes on after each.

use super::SessionActor;
use crate::actors::principal::{HostInitialized, SessionReady};
use crate::core::lifecycle::Phase;
use crate::manifest;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{
    ECHO_LIMIT, ErrorCode, ErrorObject, Message, Notification, Request, Response, clip,
};
use mcpl_protocol::mcp::{CancelledParams, Empty};
use mcpl_protocol::mcpl::{FeatureSetsUpdateParams, ManifestChangedParams};
use mcpl_protocol::method::{
    self, CallTool, FeatureSetsUpdate, GetManifest, Initialize, ListTools, Method,
    NotificationMethod, Ping, RequestMethod, SetLevel, ToolsetsClose, ToolsetsList, ToolsetsOpen,
};
use mcpl_transport::Inbound;

/// The requests this server serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Initialize,
    Ping,
    ListTools,
    CallTool,
    FeatureSetsUpdate,
    GetManifest,
    ToolsetsOpen,
    ToolsetsClose,
    ToolsetsList,
    SetLevel,
}

impl Route {
    fn of(method: &str) -> Option<Route> {
        Some(match method {
            Initialize::NAME => Route::Initialize,
            Ping::NAME => Route::Ping,
            ListTools::NAME => Route::ListTools,
            CallTool::NAME => Route::CallTool,
            FeatureSetsUpdate::NAME => Route::FeatureSetsUpdate,
            GetManifest::NAME => Route::GetManifest,
            ToolsetsOpen::NAME => Route::ToolsetsOpen,
            ToolsetsClose::NAME => Route::ToolsetsClose,
            ToolsetsList::NAME => Route::ToolsetsList,
            SetLevel::NAME => Route::SetLevel,
            // `server/discover` included: -32601 is what tells a client to fall back.
            _ => return None,
        })
    }

    /// Served before `initialize` too.
    fn before_initialize(self) -> bool {
        matches!(self, Route::Initialize | Route::Ping)
    }
}

impl SessionActor {
    pub(super) fn on_inbound(&mut self, item: Inbound, ctx: &mut Context<Self>) {
        match item {
            Inbound::Message {
                message: Message::Request(r),
                ..
            } => self.on_request(r),
            Inbound::Message {
                message: Message::Notification(n),
                ..
            } => self.on_notification(n, ctx),
            Inbound::Message {
                message: Message::Response(r),
                ..
            } => self.on_response(r, ctx),
            Inbound::Malformed { error, .. } => {
                tracing::debug!(session = %self.id, %error, "malformed message");
                self.write(error.to_response().into());
            }
            Inbound::TooLarge { size, limit, .. } => {
                tracing::debug!(session = %self.id, size, limit, "message too large");
                let e = ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("message too large: {size} bytes, the limit is {limit}"),
                );
                self.write(Response::err(None, e).into());
            }
        }
    }

    fn on_request(&mut self, req: Request) {
        // MCP "Utilities / Logging": only a server declaring `logging` serves setLevel.
        let route =
            Route::of(&req.method).filter(|r| *r != Route::SetLevel || self.offers_logging());
        let Some(route) = route else {
            let e = ErrorObject::method_not_found(&req.method);
            return self.write(Response::err(Some(req.id), e).into());
        };
        if !route.before_initialize()
            && let Err(e) = self.lifecycle.admit()
        {
            return self.write(Response::err(Some(req.id), e.to_error()).into());
        }
        // A request whose answer comes from the principal: its id must not be in use.
        let forwarded = matches!(
            route,
            Route::ListTools
                | Route::CallTool
                | Route::ToolsetsOpen
                | Route::ToolsetsClose
                | Route::ToolsetsList
        );
        if forwarded && self.id_in_use(&req.id) {
            let e = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("request id {} is in use by a request still running", req.id),
            );
            return self.write(Response::err(Some(req.id), e).into());
        }
        match route {
            Route::Initialize => {
                let first = self.lifecycle.phase() == Phase::AwaitingInitialize;
                self.answer::<Initialize>(req, Self::initialize);
                if let Some(n) = self.lifecycle.negotiated().filter(|_| first) {
                    let tool_hints = n.host.tool_hints;
                    self.tell_principal(HostInitialized {
                        id: self.id,
                        tool_hints,
                    });
                }
            }
            Route::Ping => self.answer::<Ping>(req, |_, _| Ok(Empty::default())),
            Route::ListTools => self.list_tools(req),
            Route::CallTool => self.call_tool(req),
            Route::FeatureSetsUpdate => {
                let before = self.lifecycle.phase();
                self.answer::<FeatureSetsUpdate>(req, Self::feature_sets_update);
                self.on_phase(before);
            }
            Route::GetManifest => self.answer::<GetManifest>(req, Self::get_manifest),
            Route::ToolsetsOpen => self.toolsets_open(req),
            Route::ToolsetsClose => self.toolsets_close(req),
            Route::ToolsetsList => self.toolsets_list(req),
            Route::SetLevel => self.answer::<SetLevel>(req, Self::set_level),
        }
    }

    /// Tells the principal when the handshake completed (SPEC §5.3: pushing may start).
    fn on_phase(&mut self, before: Phase) {
        if before != Phase::Ready && self.lifecycle.phase() == Phase::Ready {
            self.tell_principal(SessionReady { id: self.id });
        }
    }

    /// Decodes a request's params as `M`'s, serves it with `f`, writes the response.
    fn answer<M: RequestMethod>(
        &mut self,
        req: Request,
        f: impl FnOnce(&mut Self, M::Params) -> Result<M::Result, ErrorObject>,
    ) {
        let response = match req.params_as::<M::Params>().and_then(|p| f(self, p)) {
            Ok(result) => Response::ok_typed(req.id, &result),
            Err(e) => Response::err(Some(req.id), e),
        };
        self.write(response.into());
    }

    fn on_notification(&mut self, n: Notification, ctx: &mut Context<Self>) {
        match n.method.as_str() {
            method::Initialized::NAME => {
                let before = self.lifecycle.phase();
                if self.lifecycle.on_initialized() {
                    self.on_phase(before);
                    tracing::debug!(session = %self.id, phase = ?self.lifecycle.phase(), "host initialized");
                } else {
                    tracing::debug!(session = %self.id, phase = ?self.lifecycle.phase(), "unexpected initialized; ignored");
                }
            }
            // SPEC §6.7: a notification carrying grant fields only narrows; it never
            // establishes a ready state.
            method::FeatureSetsUpdate::NAME => match n.params_as::<FeatureSetsUpdateParams>() {
                Ok(params) => {
                    let narrowed = self.lifecycle.on_grant_notification(&params);
                    tracing::info!(session = %self.id, narrowed, disabled = ?params.disabled,
                            "featureSets/update as a notification: only its disabled list applies");
                }
                Err(error) => {
                    tracing::debug!(session = %self.id, %error, "bad featureSets/update notification; ignored")
                }
            },
            method::Cancelled::NAME => {
                match n.params_as::<<method::Cancelled as NotificationMethod>::Params>() {
                    Ok(CancelledParams {
                        request_id, reason, ..
                    }) => self.cancel_call(&request_id, reason.as_deref(), ctx),
                    Err(error) => {
                        tracing::debug!(session = %self.id, %error, "bad cancellation; ignored")
                    }
                }
            }
            // MCP: notifications the receiver does not know are ignored.
            other => tracing::debug!(session = %self.id, method = other, "notification ignored"),
        }
    }

    fn on_response(&mut self, r: Response, ctx: &mut Context<Self>) {
        let Some(id) = r.id else {
            let outcome = clip(&format!("{:?}", r.outcome), ECHO_LIMIT).into_owned();
            mcpl_transport::warn_limited!(self.peer_warnings, session = %self.id, %outcome, "host sent an error about an unreadable message");
            return;
        };
        match self.outgoing.resolve(&id, r.outcome) {
            Some((method, timer)) => {
                tracing::debug!(session = %self.id, %id, method, "response matched");
                if let Some(timer) = timer {
                    ctx.cancel_future(timer);
                }
            }
            None => {
                let id = clip(&id.to_string(), ECHO_LIMIT).into_owned();
                mcpl_transport::warn_limited!(self.peer_warnings, session = %self.id, %id, "response to no pending request; ignored")
            }
        }
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
        let new = self.current_view();
        let Some(old) = self.shown.replace(new.clone()) else {
            return;
        };
        let domains = manifest::changed_domains(&old, &new);
        if domains.is_empty() {
            return;
        }
        let revision = new.revision.unwrap_or_default();
        let params = ManifestChangedParams {
            revision,
            domains,
            meta: None,
        };
        self.write(Notification::new::<method::ManifestChanged>(&params).into());
    }
}

//! Modern requests (MCP 2026-07-28): the era chosen per request, and what each modern
//! request is owed.
//!
//! **The era** (MCP `basic/versioning.md`, "Backward Compatibility"). A connection opened
//! with `initialize` is legacy and keeps every rule it has: whatever its requests carry in
//! `_meta`, they are served as 2025-11-25 says. On a connection not (yet) opened so, a
//! request whose `_meta` holds the per-request keys is modern
//! ([`RequestMeta::read`]): it is served on its own, from what it carries, and changes
//! nothing of the connection (an `initialize` may still come and open it as legacy). A
//! request with neither is refused as before (-32600, not initialized).
//!
//! **What a modern request is owed**, in order: its `_meta` read (-32602 when a required
//! key is missing), its version served (-32022 with `supported` and `requested`), its
//! method one of the era's this server serves (`server/discover`, `tools/list`,
//! `tools/call`, `subscriptions/listen` (`listen.rs`), and `toolsets/list|open|close` to a
//! hinted request; anything else -32601), and a result with `resultType` and
//! `_meta["io.modelcontextprotocol/serverInfo"]` ([`ModernReply`]); `server/discover` and
//! `tools/list` with caching hints. Its `notifications/message` go out only when it
//! carried `logLevel`, at that level or above; a handler that asks the client for a
//! capability the request did not declare ends the call with -32021, and one that asks for
//! a declared one ends it with an `InputRequiredResult` unless the call carried the answer
//! (MRTR: `session/asks.rs`, `mrtr.rs`).
//!
//! **Whose request.** A modern request is served under the principal its transport
//! authenticated: a bearer token's (named, or a JWT's claim), or stdio's configured one.
//! **\[project\]** One that no credential authenticated has a principal of its own, made
//! for it and ended with its answer (`docs/rfc014-stateless.md` §3.6: "a request without
//! an authenticated principal has no state that outlives it"): Streamable HTTP serves each
//! such POST on a connection of its own, and an anonymous WebSocket connection has this
//! core hand each modern request to one ([`Event::Detach`], the actor's `detached.rs`),
//! so nothing it opens survives it, whichever connection it came on.
//!
//! **Hints** (`docs/rfc014-stateless.md`, issue #40 **\[project\]**). A modern request of
//! a **named** principal whose client capabilities declare `extensions["mcpl/core"]` (its
//! `toolHints` not `false`), to a server whose manifest has `toolHints`, is a hinted
//! modern request: `tools/list` lists hints (§3) with `_meta["mcpl/version"]`,
//! `toolsets/list|open|close` are served, a call names its instance in
//! `_meta["mcpl/instance"]`, and every complete result carries `_meta["mcpl/hints"]`: the
//! entries stamped after the request's `_meta["mcpl/since"]`, or a full statement (always
//! for `toolsets/list`), from the principal's stamped state as it last gave it to this
//! session ([`Versioned`]), and `_meta["mcpl/revision"]` when the request's names a
//! manifest revision other than the one a hinted host is shown. Any other modern request is served as to a host without hints
//! (RFC-014 §8): `toolsets/*` are -32601 to it, `tools/list` is the plain list, and a call
//! names its instance as an argument. An anonymous request has no state that outlives it
//! (profile §3.6), so it is never hinted.

use super::kinds::ModernCall;
use super::output::{Event, Forward, Io, Transmit};
use super::{FeatureRequest, Profile, SessionCore};
use crate::Versioned;
use crate::catalog::HostView;
use crate::dispatch::{self, Route, feature_routes, legacy_only_routes};
use crate::mrtr::Carried;
use crate::requests;
use mcpl_protocol::jsonrpc::{ErrorObject, Id, Message, RawValue, Request, Response};
use mcpl_protocol::mcp::{
    ClientCapabilities, LOGGING_CAPABILITY, ListToolsParams, LoggingLevel, ServerCapabilities,
    ToolsCapability,
};
use mcpl_protocol::modern::{
    self, CacheHints, CacheScope, DiscoverResult, MCPL_EXTENSION, RequestMeta,
};
use mcpl_protocol::stateless::{self, VersionedHints};
use serde_json::{Map, Value};
use std::sync::Arc;

/// How long a modern client may keep a `tools/list` or `server/discover` result fresh.
/// **\[project\]** 0: a client that does not listen (`subscriptions/listen`, `listen.rs`)
/// hears of no change, so only a fresh read shows one; `docs/rfc014-stateless.md` §3.4
/// says the same of `tools/list`.
pub const MODERN_TTL_MS: u64 = 0;

/// What makes a result modern: see [`modern::complete`].
#[derive(Debug, Clone)]
pub struct ModernReply {
    /// Whose `serverInfo` the result carries: the session's profile, shared (a copy of
    /// its strings was two allocations a modern request, issue #42 item 3).
    profile: Arc<Profile>,
    cache: Option<CacheHints>,
    /// A hinted request's `_meta["mcpl/hints"]` (module docs).
    hints: Option<VersionedHints>,
    /// A hinted `tools/list`'s `_meta["mcpl/version"]`.
    version: Option<u64>,
    /// `_meta["mcpl/revision"]`: the manifest's, newer than the one the request read.
    revision: Option<String>,
}

impl ModernReply {
    /// True when the request it answers was hinted (module docs).
    pub fn hinted(&self) -> bool {
        self.hints.is_some()
    }

    /// `message`, a response to the modern request, made modern; an error is left as it is.
    pub fn apply(self, message: Message) -> Message {
        match message {
            Message::Response(Response {
                id,
                outcome: Ok(result),
            }) => {
                let result = modern::complete(&result, &self.profile.info, self.cache);
                let result = match self.hints {
                    Some(hints) => with_hints(&result, hints, self.version, self.revision),
                    None => result,
                };
                Message::Response(Response {
                    id,
                    outcome: Ok(result),
                })
            }
            other => other,
        }
    }
}

/// `result` with `_meta["mcpl/hints"]` (and `mcpl/version`), and without a legacy
/// `mcpl/rev`: a modern host is never numbered per connection (profile §2).
fn with_hints(
    result: &RawValue,
    hints: VersionedHints,
    version: Option<u64>,
    revision: Option<String>,
) -> Box<RawValue> {
    let Ok(mut object) = serde_json::from_str::<Map<String, Value>>(result.get()) else {
        return result.to_owned();
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.remove(mcpl_protocol::meta::REV);
        meta.insert(
            mcpl_protocol::meta::HINTS.to_owned(),
            serde_json::to_value(hints).unwrap_or(Value::Null),
        );
        if let Some(v) = version {
            meta.insert(stateless::VERSION.to_owned(), Value::from(v));
        }
        if let Some(r) = revision {
            meta.insert(stateless::REVISION.to_owned(), Value::String(r));
        }
    }
    mcpl_protocol::jsonrpc::to_raw(&object)
}

/// Whether a request's client capabilities ask for hints: `extensions["mcpl/core"]` an
/// object whose `toolHints` is not `false` (**\[project\]**: the profile's settings say
/// `toolHints: true`; a host that declares the extension and leaves it out is read as
/// asking, as the extension's whole point is hints).
pub fn declares_mcpl(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .other
        .get("extensions")
        .and_then(|e| e.get(MCPL_EXTENSION))
        .and_then(Value::as_object)
        .is_some_and(|s| s.get("toolHints") != Some(&Value::Bool(false)))
}

/// A request's `_meta`, when it is an object.
fn meta_of(req: &Request) -> Option<Map<String, Value>> {
    req.params
        .as_deref()
        .and_then(|p| serde_json::from_str::<Map<String, Value>>(p.get()).ok())
        .and_then(|mut p| match p.remove("_meta") {
            Some(Value::Object(m)) => Some(m),
            _ => None,
        })
}

/// The caching hints of a list tailored to the principal (MCP caching: "private" for
/// filtered list results that vary per user; `docs/rfc014-stateless.md` §3.4).
const PRIVATE: CacheHints = CacheHints {
    ttl_ms: MODERN_TTL_MS,
    scope: CacheScope::Private,
};

impl<T: Io> SessionCore<T> {
    /// Whether the session's principal is a named one (module docs: only its modern
    /// requests may be hinted).
    pub fn set_principal_named(&mut self, named: bool) {
        self.named = named;
    }

    /// The principal's stamped state changed: kept when newer than what is held, and told
    /// to every `mcpl/hints` stream (`listen.rs`).
    pub fn versioned_changed(&mut self, versioned: Arc<Versioned>) {
        if self
            .versioned
            .as_ref()
            .is_some_and(|v| v.version() >= versioned.version())
        {
            return;
        }
        self.versioned = Some(versioned);
        self.tell_listens_hints();
    }

    /// The revision of the manifest as shown to a hinted host (made once per manifest).
    fn hinted_revision(&self) -> Option<&str> {
        self.manifest.shown_to(true).revision.as_deref()
    }

    /// Whether a modern request with `meta` is shown hints (module docs).
    pub(super) fn hinted_modern(&self, meta: &RequestMeta) -> bool {
        self.named
            && declares_mcpl(&meta.client_capabilities)
            && self.catalog.view_for(true) == HostView::Hinted
    }

    /// What a hinted request whose `since` is `since` is told now. Before the principal
    /// first gave its stamped state (a request the session answers itself, read before
    /// the principal saw the session attach): `{version: 0}`, which tells a host nothing
    /// and moves no mark.
    pub(super) fn versioned_since(&self, since: u64) -> VersionedHints {
        self.versioned
            .as_ref()
            .map(|v| v.since(since))
            .unwrap_or_default()
    }

    /// The modern era's fields of `req`, when it is a modern request on a connection not
    /// opened with `initialize` (module docs); `Err` is the response refusing it.
    pub(super) fn modern_meta(&self, req: &Request) -> Result<Option<RequestMeta>, ErrorObject> {
        dispatch::modern_meta(req, &self.lifecycle)
    }

    /// From now on every modern request of this connection is served on a connection of
    /// its own (module docs: an anonymous connection's requests).
    pub fn detach_modern_requests(&mut self) {
        self.detach_modern = true;
    }

    /// A modern request to serve on a connection of its own ([`Event::Detach`]); its id
    /// is in use until that connection answers it.
    pub(super) fn detach(&mut self, req: Request) {
        if self.detached.contains(&req.id) || self.requests.in_use(&req.id) {
            let e = requests::id_in_use(&req.id);
            return self.send(Response::err(Some(req.id), e).into());
        }
        if Route::of(&req.method) == Some(Route::Listen) {
            // A detached listen never answers on its own: the anonymous connection's
            // streams are bounded here, as a principal's are (`listen.rs`).
            if self.detached_listens.len() >= super::listen::MAX_LISTENS {
                let e = super::listen::too_many_listens(super::listen::MAX_LISTENS);
                return self.send(Response::err(Some(req.id), e).into());
            }
            self.detached_listens.insert(req.id.clone());
        }
        self.detached.insert(req.id.clone());
        self.emit(Event::Detach(req));
    }

    /// The connection a detached request was served on answered it, or ended.
    pub fn detached_ended(&mut self, request: &Id) {
        self.detached.remove(request);
        self.detached_listens.remove(request);
    }

    /// Serves a modern request (module docs).
    pub(super) fn on_modern_request(&mut self, req: Request, meta: RequestMeta) {
        let offers = self.profile.offers;
        let serves = |r: Route| !r.is_feature() || offers.serves(r);
        let route = match dispatch::route_modern(&req, &meta, serves) {
            Ok(route) => route,
            Err(e) => return self.send(Response::err(Some(req.id), e).into()),
        };
        if route != Route::Discover && (self.requests.in_use(&req.id) || self.is_listening(&req.id))
        {
            let e = requests::id_in_use(&req.id);
            return self.send(Response::err(Some(req.id), e).into());
        }
        let hinted = self.hinted_modern(&meta);
        if !hinted && route.is_toolsets() {
            // Vector S2: a host without hints is not served toolsets (§8).
            let e = ErrorObject::method_not_found(&req.method);
            return self.send(Response::err(Some(req.id), e).into());
        }
        if !self.modern_seen {
            // The principal shows a host without hints the toolsets it uses without
            // opening (§8); it is told once, as `initialize` would tell it, by the first
            // modern request. **[project]** A connection's later requests that differ
            // are served as each declares, from the same principal.
            self.modern_seen = true;
            self.forward(Forward::Initialized {
                tool_hints: hinted,
                modern: true,
            });
        }
        let keys = hinted.then(|| meta_of(&req)).flatten();
        let revision = keys.as_ref().and_then(|k| {
            // Profile §3.3: a request that names a revision other than the manifest's is
            // told the manifest's; one that names none is not (it did not read one).
            let read = k.get(stateless::REVISION)?.as_str()?;
            let current = self.hinted_revision()?;
            (read != current).then(|| current.to_owned())
        });
        let call = ModernCall {
            log_level: meta.log_level,
            capabilities: meta.client_capabilities,
            cache: None,
            input: None,
            since: hinted.then(|| stateless::since(keys.as_ref())),
            revision,
            statement: false,
        };
        match route {
            Route::Listen => {
                let since = call.since;
                self.open_listen(req, since)
            }
            Route::Discover => {
                // Vector S1: the manifest as to a hinted host when the request declares
                // `mcpl/core`, its revision included.
                let declared = declares_mcpl(&call.capabilities);
                let result = self.discover(declared);
                let response = Response::ok_typed(req.id, &result);
                let reply = ModernReply {
                    profile: self.profile.clone(),
                    cache: Some(PRIVATE),
                    hints: call.since.map(|s| self.versioned_since(s)),
                    version: None,
                    revision: call.revision.clone(),
                };
                self.send(reply.apply(response.into()));
            }
            Route::ToolsetsList => {
                self.modern.insert(
                    req.id.clone(),
                    ModernCall {
                        statement: true,
                        ..call
                    },
                );
                self.requests.forward(req.id.clone());
                self.forward(Forward::ListToolsets { request: req.id });
            }
            Route::ToolsetsOpen => {
                match req.params_as::<mcpl_protocol::toolsets::ToolsetsOpenParams>() {
                    Ok(p) => {
                        self.modern.insert(req.id.clone(), call);
                        self.requests.forward(req.id.clone());
                        self.forward(Forward::Open {
                            request: req.id,
                            toolset: p.toolset,
                            instance: p.instance,
                            options: p.options,
                        });
                    }
                    Err(e) => self.send(Response::err(Some(req.id), e).into()),
                }
            }
            Route::ToolsetsClose => {
                match req.params_as::<mcpl_protocol::toolsets::ToolsetsCloseParams>() {
                    Ok(p) => {
                        self.modern.insert(req.id.clone(), call);
                        self.requests.forward(req.id.clone());
                        // Vector S12: a retried close succeeds again.
                        self.forward(Forward::Close {
                            request: req.id,
                            toolset: p.toolset,
                            instance: p.instance,
                            retried: true,
                        });
                    }
                    Err(e) => self.send(Response::err(Some(req.id), e).into()),
                }
            }
            Route::ListTools => match req.params_as::<ListToolsParams>() {
                Ok(p) => {
                    let cache = Some(PRIVATE);
                    self.modern
                        .insert(req.id.clone(), ModernCall { cache, ..call });
                    self.requests.forward(req.id.clone());
                    self.forward(Forward::ListTools {
                        request: req.id,
                        cursor: p.cursor,
                    });
                }
                Err(e) => self.send(Response::err(Some(req.id), e).into()),
            },
            Route::CallTool => match req.params_as::<mcpl_protocol::CallToolParams>() {
                Ok(p) => {
                    let input = self.next_input.take();
                    self.modern
                        .insert(req.id.clone(), ModernCall { input, ..call });
                    self.call_tool_as(req.id, p, hinted);
                }
                Err(e) => self.send(Response::err(Some(req.id), e).into()),
            },
            feature_routes!() => match FeatureRequest::read(route, &req) {
                Ok(feature) => {
                    let cache = feature.cache(&self.profile.offers);
                    // `prompts/get` and `resources/read` may ask (MRTR, `mrtr.rs`).
                    let input = self.next_input.take();
                    self.modern.insert(
                        req.id.clone(),
                        ModernCall {
                            cache,
                            input,
                            ..call
                        },
                    );
                    self.serve_feature(req.id, feature);
                }
                Err(e) => self.send(Response::err(Some(req.id), e).into()),
            },
            // Legacy only: `dispatch::route_modern` routes none of them to a modern request.
            legacy_only_routes!() => {
                let e = ErrorObject::method_not_found(&req.method);
                self.send(Response::err(Some(req.id), e).into())
            }
        }
    }

    /// `server/discover` (MCP `server/discover.md`): both eras' versions, the capabilities
    /// a modern request is served with, and MCPL's manifest under
    /// `capabilities.extensions["mcpl/core"]` (**\[project\]**,
    /// `docs/rfc014-stateless.md` §3.1): the whole manifest when the request declared
    /// `mcpl/core` (`hinted`, vector S1), else as shown to a host without hints.
    fn discover(&self, hinted: bool) -> DiscoverResult {
        let mut other = serde_json::Map::new();
        if self.offers_logging() {
            other.insert(LOGGING_CAPABILITY.to_owned(), serde_json::json!({}));
        }
        self.profile.offers.declare(&mut other);
        let manifest = self.manifest.shown_to(hinted);
        let mut manifest = serde_json::to_value(&**manifest).unwrap_or_default();
        // Profile §3.6 (S13): a server that does not keep toolsets states how long an
        // idle principal keeps them. **[project]**: a member of `mcpl/core`'s settings
        // beside the manifest's, outside its `revision` (which names the manifest), and
        // only to a hinted host — a plain one is shown no toolsets to keep.
        if let (true, Some(idle), Some(settings)) =
            (hinted, self.profile.idle_end, manifest.as_object_mut())
        {
            let ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
            settings.insert(stateless::IDLE_END_MS.to_owned(), serde_json::json!(ms));
        }
        other.insert(
            "extensions".to_owned(),
            serde_json::json!({ MCPL_EXTENSION: manifest }),
        );
        DiscoverResult {
            supported_versions: modern::supported_versions(),
            capabilities: ServerCapabilities {
                // A modern client hears of changes on `subscriptions/listen`
                // (`listen.rs`).
                tools: Some(ToolsCapability {
                    list_changed: Some(true),
                }),
                experimental: None,
                other,
            },
            instructions: self.profile.instructions.clone(),
            ttl_ms: MODERN_TTL_MS,
            cache_scope: CacheScope::Private,
        }
    }

    /// When `t` answers a modern request: what makes its result modern. The request is
    /// answered then, so it is no longer in flight as modern.
    pub fn modern_reply(&mut self, t: &Transmit<T>) -> Option<ModernReply> {
        if self.modern.is_empty() {
            return None;
        }
        let id = match t {
            Transmit::Answer { request, .. } | Transmit::CallResult { request, .. } => request,
            Transmit::ToolsList(page) => &page.request,
            Transmit::Statement { request, .. } => request,
            Transmit::Message(Message::Response(r)) => r.id.as_ref()?,
            _ => return None,
        };
        let call = self.modern.remove(id)?;
        let is_list = matches!(t, Transmit::ToolsList(_));
        let hints = call.since.map(|since| match &self.versioned {
            Some(v) if call.statement => v.statement(),
            _ => self.versioned_since(since),
        });
        Some(ModernReply {
            profile: self.profile.clone(),
            cache: call.cache,
            version: hints.as_ref().filter(|_| is_list).map(|h| h.version),
            hints,
            revision: call.revision,
        })
    }

    /// True while `request` is a hinted modern request in flight (module docs).
    pub fn hinted_modern_request(&self, request: &Id) -> bool {
        self.modern.get(request).is_some_and(|c| c.since.is_some())
    }

    /// A modern request's declared capabilities, while `call` is one in flight.
    pub fn modern_capabilities(&self, call: &Id) -> Option<&ClientCapabilities> {
        self.modern.get(call).map(|c| &c.capabilities)
    }

    /// Whether a handler's log message for `call` goes out: `Some` for a modern request (its
    /// own `logLevel`, none without one), `None` for any other (the connection's level).
    pub(super) fn modern_log_level(&self, call: Option<&Id>) -> Option<Option<LoggingLevel>> {
        call.and_then(|c| self.modern.get(c)).map(|c| c.log_level)
    }

    /// A modern call needs `capability`, which it did not declare: it is answered with
    /// -32021 now, and its handler stopped (MCP `basic/index.md`: a server MUST NOT rely on
    /// capabilities the client has not declared).
    pub fn modern_missing_capability(&mut self, call: &Id, capability: &str) {
        let e = modern::missing_capability(capability);
        self.cancel(
            call,
            Some("needs a client capability the request did not declare"),
        );
        self.modern.remove(call);
        self.send(Response::err(Some(call.clone()), e).into());
    }

    /// Whether `req` is a modern request this session serves itself (not detached, its
    /// `_meta` and version in order): for a `tools/call`, one whose MRTR input the actor
    /// reads first ([`SessionCore::handle_modern_call`]); for a `subscriptions/listen`, one
    /// the actor counts against its principal's bound.
    pub fn serves_modern(&self, req: &Request) -> bool {
        self.modern_served(req).is_some()
    }

    /// [`SessionCore::serves_modern`], with the request's `_meta` as read: handed back to
    /// [`SessionCore::handle_modern_call`], so that a modern call's `_meta` is read once
    /// (issue #42: it was read twice more, each a pass over the params and a tree of its
    /// capabilities).
    pub fn modern_served(&self, req: &Request) -> Option<RequestMeta> {
        if self.detach_modern {
            return None;
        }
        self.modern_meta(req)
            .ok()
            .flatten()
            .filter(|m| m.check_version().is_ok())
    }

    /// [`SessionCore::handle_message`] for a `tools/call`, `prompts/get` or
    /// `resources/read` [`SessionCore::modern_served`] said yes to, with the `_meta` it
    /// read and what the params carry for the handler's questions: served as
    /// `handle_message` serves a modern request (the `_meta` read again would be this one,
    /// and the session does not detach it), without reading the `_meta` again.
    pub fn handle_modern_call(&mut self, req: Request, meta: RequestMeta, input: Carried) {
        self.next_input = Some(input);
        self.on_modern_request(req, meta);
        self.next_input = None;
    }

    /// Refuses a request with `e`, before it was read.
    pub fn refuse(&mut self, id: Id, e: ErrorObject) {
        self.send(Response::err(Some(id), e).into());
    }

    /// A modern call's answers to its handler's questions, while it runs.
    pub fn modern_input(&mut self, call: &Id) -> Option<&mut Carried> {
        self.modern.get_mut(call).and_then(|c| c.input.as_mut())
    }

    /// A modern call's handler asked a question the call carried no answer to: the call is
    /// answered with `result`, an `InputRequiredResult`, and its handler stopped (MRTR,
    /// `mrtr.rs`: the retry runs it again).
    pub fn modern_input_required(&mut self, call: &Id, result: Box<RawValue>) {
        // Not complete: no hints (profile §3.3: every complete result carries them).
        let reply = ModernReply {
            profile: self.profile.clone(),
            cache: None,
            hints: None,
            version: None,
            revision: None,
        };
        self.cancel(
            call,
            Some("its question went to the client in an InputRequiredResult"),
        );
        self.modern.remove(call);
        let response = Response {
            id: Some(call.clone()),
            outcome: Ok(result),
        };
        self.send(reply.apply(response.into()));
    }

    /// Forgets a modern request that will not be answered (cancelled).
    pub(super) fn modern_forget(&mut self, call: &Id) {
        self.modern.remove(call);
    }

    /// How many modern requests are in flight (each is forgotten when answered or
    /// cancelled).
    #[cfg(test)]
    pub fn modern_in_flight(&self) -> usize {
        self.modern.len()
    }
}

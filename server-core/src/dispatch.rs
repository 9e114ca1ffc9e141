//! Receiving a client's message, before it is served: the one piece both the server SDK's
//! session core (`session/inbound.rs`, `session/modern.rs`) and the surface host
//! (`mcpl-surface`'s `session.rs`) receive by, so the two answer an edge case alike
//! (issue #38 item 5). Sans I/O: each function takes what was read and says what it is,
//! or the error that answers it.
//!
//! - **Which method** ([`Route`]): the one table of the requests a client may send either
//!   era, built by `routes!` from the protocol crate's method markers
//!   (`mcpl_protocol::method`); a request's method name is matched there and nowhere else.
//!   Each side says which routes it serves; the rest are unknown to it.
//! - **Which era** ([`receive`], [`modern_meta`]; MCP `basic/versioning.md`, "Backward
//!   Compatibility"): on a connection not opened with `initialize`, a request whose
//!   `_meta` holds the per-request keys is modern (-32602 when one names itself modern but
//!   lacks a required key); an `initialize` with no `protocolVersion` of its own but a
//!   modern `_meta` is a modern request for a method the era removed. Anything else is the
//!   legacy era's.
//! - **A legacy request** ([`receive`]): -32601 for a method the session does not serve
//!   (in every phase: `server/discover` among them once a connection is legacy), -32600
//!   ([`LifecycleError::NotInitialized`]) for a served one other than `initialize` and
//!   `ping` before `initialize` (MCP "Lifecycle").
//! - **A modern request** ([`route_modern`]): -32022 for a version not served, -32601 for a
//!   method the era removed or the session does not serve to it.
//! - **Params**: read by the route's marker type (`Request::params_as`, -32602 saying what
//!   is wrong), by whoever serves it, once it is admitted; a request answered at once is
//!   read, served and answered by its marker's types with [`answer`].
//! - **Notifications** ([`ClientNotification::read`]): the three a session acts on, their
//!   params read by their markers; any other is ignored (MCP).
//! - **Too large** ([`too_large`]): the refusal of a message over the transport's limit.
//!
//! The rules of the requests in flight (a reused id refused, a bound, a cancelled request
//! not answered) are the `requests` module's ([`crate::requests::Requests`]).

use crate::lifecycle::{Lifecycle, LifecycleError};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Notification, Request, Response};
use mcpl_protocol::mcp::CancelledParams;
use mcpl_protocol::mcpl::FeatureSetsUpdateParams;
use mcpl_protocol::method::{self, Method as _, NotificationMethod, RequestMethod};
use mcpl_protocol::modern::{self, RequestMeta};

/// The legacy request that starts watching a resource (MCP "Resources").
pub const SUBSCRIBE: &str = "resources/subscribe";
/// The legacy request that stops watching one.
pub const UNSUBSCRIBE: &str = "resources/unsubscribe";

/// Declares [`Route`] from `Variant => wire name` rows (a marker's `NAME`, or a constant
/// for a method with no marker), so the table, the enum and the names cannot part.
macro_rules! routes {
    ($($(#[$doc:meta])* $variant:ident => $name:path,)*) => {
        /// A request a client may send, in either era: the one table its method name is
        /// matched against (module docs).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Route {
            $($(#[$doc])* $variant,)*
        }

        impl Route {
            /// Every route, in the table's order.
            pub const ALL: &'static [Route] = &[$(Route::$variant),*];

            /// The route `method` names, or `None` for a method no session serves.
            pub fn of(method: &str) -> Option<Route> {
                match method {
                    $($name => Some(Route::$variant),)*
                    _ => None,
                }
            }

            /// Its wire name.
            pub fn name(self) -> &'static str {
                match self {
                    $(Route::$variant => $name,)*
                }
            }
        }
    };
}

routes! {
    /// `initialize` (legacy only).
    Initialize => method::Initialize::NAME,
    /// `ping` (legacy only: MCP 2026-07-28 removed it).
    Ping => method::Ping::NAME,
    /// `tools/list`.
    ListTools => method::ListTools::NAME,
    /// `tools/call`.
    CallTool => method::CallTool::NAME,
    /// `featureSets/update` as a request (SPEC §5.3; legacy only).
    FeatureSetsUpdate => method::FeatureSetsUpdate::NAME,
    /// `mcpl/manifest` (SPEC §17.4; legacy only).
    GetManifest => method::GetManifest::NAME,
    /// `toolsets/open` (§4.2).
    ToolsetsOpen => method::ToolsetsOpen::NAME,
    /// `toolsets/close` (§4.2).
    ToolsetsClose => method::ToolsetsClose::NAME,
    /// `toolsets/list` (§4.3).
    ToolsetsList => method::ToolsetsList::NAME,
    /// `logging/setLevel` (legacy only).
    SetLevel => method::SetLevel::NAME,
    /// `resources/list`.
    ListResources => method::ListResources::NAME,
    /// `resources/templates/list`.
    ListResourceTemplates => method::ListResourceTemplates::NAME,
    /// `resources/read`.
    ReadResource => method::ReadResource::NAME,
    /// `prompts/list`.
    ListPrompts => method::ListPrompts::NAME,
    /// `prompts/get`.
    GetPrompt => method::GetPrompt::NAME,
    /// `completion/complete`.
    Complete => method::Complete::NAME,
    /// `resources/subscribe` (legacy only).
    Subscribe => SUBSCRIBE,
    /// `resources/unsubscribe` (legacy only).
    Unsubscribe => UNSUBSCRIBE,
    /// `server/discover` (modern only).
    Discover => modern::SERVER_DISCOVER,
    /// `subscriptions/listen` (modern only).
    Listen => modern::SUBSCRIPTIONS_LISTEN,
}

/// The pattern of the [`Route`]s only the legacy era (2025-11-25) serves: the requests the
/// modern era (2026-07-28) removed. Written once, for [`Route::modern`] and the modern
/// receipt's `match`, which stays exhaustive.
macro_rules! legacy_only_routes {
    () => {
        $crate::dispatch::Route::Initialize
            | $crate::dispatch::Route::Ping
            | $crate::dispatch::Route::SetLevel
            | $crate::dispatch::Route::Subscribe
            | $crate::dispatch::Route::Unsubscribe
            | $crate::dispatch::Route::FeatureSetsUpdate
            | $crate::dispatch::Route::GetManifest
    };
}
pub(crate) use legacy_only_routes;

/// The pattern of the [`Route`]s of MCP's server features (resources, prompts,
/// completion), which both eras' receipts hand to `FeatureRequest::read`. Written once, for
/// [`Route::is_feature`] and those `match`es, which stay exhaustive.
macro_rules! feature_routes {
    () => {
        $crate::dispatch::Route::ListResources
            | $crate::dispatch::Route::ListResourceTemplates
            | $crate::dispatch::Route::ReadResource
            | $crate::dispatch::Route::ListPrompts
            | $crate::dispatch::Route::GetPrompt
            | $crate::dispatch::Route::Complete
    };
}
pub(crate) use feature_routes;

impl Route {
    /// A request of the legacy era (2025-11-25).
    pub fn legacy(self) -> bool {
        !matches!(self, Route::Discover | Route::Listen)
    }

    /// A request of the modern era (2026-07-28), which removed `initialize`, `ping`,
    /// `logging/setLevel`, the resource subscriptions and MCPL's lifecycle requests.
    pub fn modern(self) -> bool {
        !matches!(self, legacy_only_routes!())
    }

    /// Served before `initialize` too (MCP "Lifecycle").
    pub fn before_initialize(self) -> bool {
        matches!(self, Route::Initialize | Route::Ping)
    }

    /// A resource, prompt or completion request (MCP "Server Features").
    pub fn is_feature(self) -> bool {
        matches!(self, feature_routes!())
    }

    /// `toolsets/open`, `toolsets/close` or `toolsets/list`: for a host shown hints (§2).
    pub fn is_toolsets(self) -> bool {
        matches!(
            self,
            Route::ToolsetsOpen | Route::ToolsetsClose | Route::ToolsetsList
        )
    }
}

/// A request received: the era that serves it, and a legacy one's route.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// A legacy request the session serves, admitted in its phase.
    Legacy(Route),
    /// A modern request, with what its `_meta` says; [`route_modern`] routes it.
    Modern(Box<RequestMeta>),
}

/// The modern era's fields of `req`, when it is a modern request on a connection not opened
/// with `initialize` (module docs); `Err` is the -32602 refusing one that names itself
/// modern but lacks a required key.
pub fn modern_meta(
    req: &Request,
    lifecycle: &Lifecycle,
) -> Result<Option<RequestMeta>, ErrorObject> {
    if lifecycle.negotiated().is_some() {
        return Ok(None);
    }
    let params = req.params.as_deref();
    if Route::of(&req.method) == Some(Route::Initialize) && !modern::is_modern_initialize(params) {
        return Ok(None);
    }
    RequestMeta::read(params)
}

/// Receives `req` on a session in `lifecycle`'s phase, `serves` saying which legacy routes
/// this session serves (module docs): its era, and a legacy request's route once admitted;
/// or the error that answers it (-32602 malformed modern `_meta`, -32601 not served, -32600
/// before `initialize`).
pub fn receive(
    req: &Request,
    lifecycle: &Lifecycle,
    serves: impl FnOnce(Route) -> bool,
) -> Result<Received, ErrorObject> {
    if let Some(meta) = modern_meta(req, lifecycle)? {
        return Ok(Received::Modern(Box::new(meta)));
    }
    let Some(route) = Route::of(&req.method).filter(|r| r.legacy() && serves(*r)) else {
        return Err(ErrorObject::method_not_found(&req.method));
    };
    if !route.before_initialize() {
        lifecycle.admit().map_err(LifecycleError::to_error)?;
    }
    Ok(Received::Legacy(route))
}

/// Routes a modern request whose `_meta` is `meta`, `serves` saying which modern routes this
/// session serves: -32022 for a version not served, -32601 for a method the era removed or
/// the session does not serve.
pub fn route_modern(
    req: &Request,
    meta: &RequestMeta,
    serves: impl FnOnce(Route) -> bool,
) -> Result<Route, ErrorObject> {
    meta.check_version()?;
    Route::of(&req.method)
        .filter(|r| r.modern() && serves(*r))
        .ok_or_else(|| ErrorObject::method_not_found(&req.method))
}

/// The response to `req`, a request for `M`: its params read as `M`'s (-32602 saying what
/// is wrong), served with `f` on `state`, its result typed as `M`'s (or `f`'s error).
pub fn answer<M: RequestMethod, S>(
    req: Request,
    state: &mut S,
    f: impl FnOnce(&mut S, M::Params) -> Result<M::Result, ErrorObject>,
) -> Response {
    match req.params_as::<M::Params>().and_then(|p| f(state, p)) {
        Ok(result) => Response::ok_typed(req.id, &result),
        Err(e) => Response::err(Some(req.id), e),
    }
}

/// A notification a session acts on, its params read by its marker.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientNotification {
    /// `notifications/initialized`.
    Initialized,
    /// `notifications/cancelled`.
    Cancelled(CancelledParams),
    /// `featureSets/update` as a notification (SPEC §6.7: it only narrows).
    FeatureSetsUpdate(FeatureSetsUpdateParams),
}

impl ClientNotification {
    /// What `n` is: `Ok(None)` for a notification no session acts on (MCP: ignored), `Err`
    /// for one whose params do not read (ignored too; the caller logs it).
    pub fn read(n: &Notification) -> Result<Option<ClientNotification>, ErrorObject> {
        Ok(Some(match n.method.as_str() {
            method::Initialized::NAME => ClientNotification::Initialized,
            method::Cancelled::NAME => ClientNotification::Cancelled(
                n.params_as::<<method::Cancelled as NotificationMethod>::Params>()?,
            ),
            method::FeatureSetsUpdate::NAME => {
                ClientNotification::FeatureSetsUpdate(n.params_as::<FeatureSetsUpdateParams>()?)
            }
            _ => return Ok(None),
        }))
    }
}

/// The refusal of a message of `size` bytes over the transport's `limit`: -32600, sent with
/// id `null` (the message was not read, so its id is not known).
pub fn too_large(size: usize, limit: usize) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_REQUEST,
        format!("message too large: {size} bytes, the limit is {limit}"),
    )
}

#[cfg(test)]
mod tests;

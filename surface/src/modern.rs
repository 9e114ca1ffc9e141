//! MCP 2026-07-28 ("modern") clients of the surface host: the era of each request, and
//! the answer a modern request is owed.
//!
//! **The era** (MCP `basic/versioning.md`, "Backward Compatibility"), read by the server
//! SDK's receipt (`mcpl_server_core::dispatch`): on a connection not opened with `initialize`, a request whose `_meta` holds
//! the per-request keys is modern ([`RequestMeta::read`]; -32602 when one names itself
//! modern but lacks a required key); an `initialize` whose params carry no
//! `protocolVersion` of their own but a modern `_meta` is a modern request for a method
//! the era removed ([`modern::is_modern_initialize`]). Anything else is the legacy era's,
//! served as before ([`crate::session`]).
//!
//! **What a modern request is owed**, in order: its version served (-32022 with
//! `supported` and `requested`, [`RequestMeta::check_version`]); its method one of the
//! three the surface host serves (routed by the server SDK's table, `dispatch::Route`) — `server/discover`, `tools/list`, `tools/call` — and
//! -32601 for any other (`ping`, `logging/setLevel`, `subscriptions/listen`, …); a result
//! with `resultType` and `_meta["io.modelcontextprotocol/serverInfo"]`
//! ([`modern::complete`]), `tools/list` and `server/discover` with their caching hints.
//! The surface host never asks its client anything (no elicitation, sampling or roots), so
//! no request of its needs a client capability and -32021 never arises; MCPL (a manifest,
//! `push/event`) is not offered to a modern client (its profile is issue #40's).
//!
//! **Whose state** (§8.6: the surface host is the client's agent). A modern request is
//! served by its principal's [`Agent`]: on Streamable HTTP one per bearer token, shared by
//! all of that principal's requests ([`crate::principals`]); on stdio the operator's, the
//! one the connection's host already is.
//!
//! **\[project\]** What happened between two requests reaches a modern client only in the
//! next result, the block "Since your previous call:" ([`crate::news`]), kept per
//! principal by its agent; never as `notifications/message`: MCP 2026-07-28 sends those
//! only on the stream of a request that asked for them with `logLevel`, and what another
//! player did meanwhile is no log of that request's.

use crate::agent::Agent;
use crate::listing::{INSTRUCTIONS, SERVER_NAME};
use mcpl_host::host::HostError;
use mcpl_host::state::meta_tools::LOOK;
use mcpl_protocol::jsonrpc::{ErrorObject, Id, Request, Response};
use mcpl_protocol::mcp::{
    CallToolParams, ContentBlock, Implementation, ListToolsResult, ServerCapabilities,
    ToolsCapability,
};
use mcpl_protocol::method::{CallTool, ListTools, RequestMethod};
use mcpl_protocol::modern::{self, CacheHints, CacheScope, DiscoverResult, RequestMeta};
use mcpl_server_core::dispatch;
use mcpl_server_core::lifecycle::Lifecycle;
use serde_json::Value;

/// How long a modern client may keep a `tools/list` or `server/discover` result fresh.
/// **\[project\]** 0, as the server SDK says of its own lists: the surface host's list is
/// taken once per principal's host and never changes while that host lives, but a host
/// closed for idleness ([`crate::principals`]) is started again, and may then list a
/// backing server's static tools that were not listed before.
pub const MODERN_TTL_MS: u64 = 0;

/// The caching hints of the tool list: tailored to the principal (its servers, its
/// credentials), so `private` (MCP `server/utilities/caching.md`).
const PRIVATE: CacheHints = CacheHints {
    ttl_ms: MODERN_TTL_MS,
    scope: CacheScope::Private,
};

/// Which era serves a request.
#[derive(Debug)]
pub enum Era {
    /// The legacy era's: `initialize` and what follows it, or a request without the
    /// modern keys.
    Legacy,
    /// A modern request, with what its `_meta` says.
    Modern(Box<RequestMeta>),
}

/// The era of `request` on a connection not opened with `initialize` (module docs), read as
/// the server SDK reads it ([`dispatch::modern_meta`]); `Err` is the -32602 refusing a
/// request that names itself modern but is malformed.
pub fn era(request: &Request) -> Result<Era, ErrorObject> {
    Ok(
        match dispatch::modern_meta(request, &Lifecycle::default())? {
            Some(meta) => Era::Modern(Box::new(meta)),
            None => Era::Legacy,
        },
    )
}

/// What a modern request asks of the surface host.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// `server/discover`: answered without a host ([`discover`]).
    Discover,
    /// `tools/list`.
    ListTools,
    /// `tools/call`, its params read.
    CallTool(Box<CallToolParams>),
}

/// Where a modern request goes: -32022 for a version not served, -32601 for a method the
/// surface host does not serve to a modern client (both [`dispatch::route_modern`]'s, as
/// the server SDK routes), -32602 for params that do not read as the route's marker's.
pub fn route(request: &Request, meta: &RequestMeta) -> Result<Route, ErrorObject> {
    let served = |r: dispatch::Route| {
        matches!(
            r,
            dispatch::Route::Discover | dispatch::Route::ListTools | dispatch::Route::CallTool
        )
    };
    match dispatch::route_modern(request, meta, served)? {
        dispatch::Route::Discover => Ok(Route::Discover),
        dispatch::Route::ListTools => {
            let p: <ListTools as RequestMethod>::Params = request.params_as()?;
            if p.cursor.is_some() {
                return Err(ErrorObject::invalid_params(
                    "no such cursor: the tool list is one page",
                ));
            }
            Ok(Route::ListTools)
        }
        dispatch::Route::CallTool => {
            let p: <CallTool as RequestMethod>::Params = request.params_as()?;
            Ok(Route::CallTool(Box::new(p)))
        }
        // Not served: `route_modern` refused it already.
        _ => Err(ErrorObject::method_not_found(&request.method)),
    }
}

/// The surface host's name and version, on every modern result.
pub fn server_info() -> Implementation {
    Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
}

/// `server/discover`'s answer (MCP `server/discover.md`): both eras' versions, a tool
/// list that never changes (`listChanged: false`), the instructions, and the surface
/// host's MCPL manifest under `capabilities.extensions["mcpl/core"]`, where the server SDK
/// puts a server's (**\[project\]**, `docs/rfc014-stateless.md` §3.1): an MCPL host in
/// `auto` mode then sees that the surface host speaks MCPL, which it speaks in the legacy
/// era, and goes on to `initialize` for its pushes. The same for every principal, so
/// `public`.
pub fn discover(id: Id) -> Response {
    let manifest = serde_json::to_value(crate::mcpl::manifest()).unwrap_or_default();
    let mut other = serde_json::Map::new();
    other.insert(
        "extensions".to_owned(),
        serde_json::json!({ modern::MCPL_EXTENSION: manifest }),
    );
    let result = DiscoverResult {
        supported_versions: modern::supported_versions(),
        capabilities: ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(false),
            }),
            experimental: None,
            other,
        },
        instructions: Some(INSTRUCTIONS.to_owned()),
        ttl_ms: MODERN_TTL_MS,
        cache_scope: CacheScope::Public,
    };
    completed(Response::ok_typed(id, &result), None)
}

/// Answers a `tools/list` or `tools/call` through the principal's `agent`; a
/// [`Route::Discover`] needs none and is answered here too.
pub async fn serve(agent: &Agent, id: Id, route: Route) -> Response {
    let stopped = |e: HostError| ErrorObject::internal(format!("the surface host: {e}"));
    match route {
        Route::Discover => discover(id),
        Route::ListTools => match agent.tools().await {
            Ok(tools) => {
                let result: <ListTools as RequestMethod>::Result = ListToolsResult {
                    tools: tools.to_vec(),
                    next_cursor: None,
                    meta: None,
                };
                completed(Response::ok_typed(id, &result), Some(PRIVATE))
            }
            Err(e) => Response::err(Some(id), stopped(e)),
        },
        Route::CallTool(p) => {
            let looked = p.name == LOOK && p.arguments.as_ref().is_none_or(|a| a.is_empty());
            let args = p.arguments.map(Value::Object).unwrap_or(Value::Null);
            let host = agent.host();
            // **[project]** A principal's host may have just started for this request (its
            // first, or its first after the host closed for idleness): the call waits for the
            // backing servers to settle as a legacy client's first `tools/list` does, bounded
            // the same way, rather than fail with a server "not connected right now".
            // Each call is then a turn of the agent's: a reminder that is due is shown first
            // (§8.3).
            let result = match agent.tools().await {
                Ok(_) => match host.start_turn().await {
                    Ok(_) => host.call(&p.name, args).await,
                    Err(e) => Err(e),
                },
                Err(e) => Err(e),
            };
            match result {
                Ok(mut result) => {
                    // The host's own keys are for hosts; a plain client is told in words.
                    result.meta = None;
                    if let Some(block) = agent.take_news(looked).await {
                        result.content.push(ContentBlock::text(block));
                    }
                    let result: <CallTool as RequestMethod>::Result = result;
                    completed(Response::ok_typed(id, &result), None)
                }
                Err(e) => Response::err(Some(id), stopped(e)),
            }
        }
    }
}

/// `response` made modern when it is a result (an error is left as it is).
fn completed(response: Response, cache: Option<CacheHints>) -> Response {
    match response.outcome {
        Ok(result) => Response {
            id: response.id,
            outcome: Ok(modern::complete(&result, &server_info(), cache)),
        },
        Err(_) => response,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::ErrorCode;
    use mcpl_protocol::method::{Initialize, Method, Ping, SetLevel};
    use mcpl_protocol::modern::SERVER_DISCOVER;
    use serde_json::json;

    fn request(method: &str, params: Value) -> Request {
        Request {
            id: Id::Number(1),
            method: method.into(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(&params)),
        }
    }

    fn meta(version: &str) -> Value {
        json!({"io.modelcontextprotocol/protocolVersion": version,
               "io.modelcontextprotocol/clientCapabilities": {}})
    }

    #[test]
    fn the_era_is_read_from_each_request() {
        let legacy_init = request(
            Initialize::NAME,
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "0"}, "_meta": meta("2026-07-28")}),
        );
        assert!(matches!(era(&legacy_init), Ok(Era::Legacy)));
        let modern_init = request(Initialize::NAME, json!({"_meta": meta("2026-07-28")}));
        assert!(matches!(era(&modern_init), Ok(Era::Modern(_))));
        assert!(matches!(
            era(&request(ListTools::NAME, json!({}))),
            Ok(Era::Legacy)
        ));
        let half = request(
            ListTools::NAME,
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        );
        assert_eq!(era(&half).unwrap_err().code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn a_modern_request_is_routed_by_version_then_method() {
        let routed = |method: &str, version: &str| {
            let r = request(method, json!({"_meta": meta(version)}));
            let Ok(Era::Modern(m)) = era(&r) else {
                panic!("{method} is modern")
            };
            route(&r, &m)
        };
        assert_eq!(routed(SERVER_DISCOVER, "2026-07-28"), Ok(Route::Discover));
        assert_eq!(routed(ListTools::NAME, "2026-07-28"), Ok(Route::ListTools));
        let e = routed(ListTools::NAME, "2025-11-25").unwrap_err();
        assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        for removed in [
            Ping::NAME,
            SetLevel::NAME,
            Initialize::NAME,
            mcpl_protocol::modern::SUBSCRIPTIONS_LISTEN,
        ] {
            let e = routed(removed, "2026-07-28").unwrap_err();
            assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND, "{removed}");
        }
        let bad = request(CallTool::NAME, json!({"_meta": meta("2026-07-28")}));
        let Ok(Era::Modern(m)) = era(&bad) else {
            panic!()
        };
        assert_eq!(
            route(&bad, &m).unwrap_err().code,
            ErrorCode::INVALID_PARAMS,
            "a call without a name"
        );
    }

    #[test]
    fn discover_names_both_eras_and_a_list_that_never_changes() {
        let r = discover(Id::Number(7));
        let v: Value =
            serde_json::from_str(&Into::<mcpl_protocol::Message>::into(r).encode()).unwrap();
        let result = &v["result"];
        assert_eq!(result["resultType"], "complete");
        assert_eq!(result["supportedVersions"][0], "2026-07-28");
        assert_eq!(result["capabilities"]["tools"]["listChanged"], false);
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            SERVER_NAME
        );
        assert_eq!(result["cacheScope"], "public");
        assert_eq!(result["ttlMs"], 0);
        // The MCPL manifest, as the server SDK states a server's: an MCPL host in `auto`
        // mode goes on to `initialize` for its pushes (surface/tests/mcpl_client.rs).
        let mcpl = &result["capabilities"]["extensions"]["mcpl/core"];
        assert_eq!(mcpl["version"], "0.5", "{result}");
        assert!(mcpl["featureSets"].get("events").is_some(), "{result}");
    }
}

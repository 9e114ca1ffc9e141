//! MCP 2026-07-28, the "modern" era (MCP `basic/versioning.md`): no `initialize`, every
//! request carrying its protocol version and client capabilities in `_meta`, results
//! carrying `resultType` and the server's identity, `server/discover`, caching hints, and
//! the era's three error codes (-32020, -32021, -32022).
//!
//! A request is modern when its `_meta` holds any of the per-request keys
//! (`io.modelcontextprotocol/protocolVersion`, `…/clientCapabilities`, `…/clientInfo`,
//! `…/logLevel`): [`RequestMeta::read`] tells, and refuses one that names itself modern
//! but lacks a required key (-32602, MCP `basic/index.md` "Per-request protocol fields").
//! Which era a request is served in is the server's to decide (a connection opened with
//! `initialize` stays legacy whatever its requests carry); this module only reads and writes.

use crate::jsonrpc::{ECHO_LIMIT, ErrorCode, ErrorObject, RawValue, clip, member};
use crate::mcp::{ClientCapabilities, Implementation, LoggingLevel, SUPPORTED_PROTOCOL_VERSIONS};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The modern protocol version this project speaks.
pub const MODERN_PROTOCOL_VERSION: &str = "2026-07-28";

/// Every modern protocol version this project speaks, newest first.
pub const MODERN_PROTOCOL_VERSIONS: [&str; 1] = [MODERN_PROTOCOL_VERSION];

pub use crate::mcp::SERVER_DISCOVER;

/// `_meta` key: the request's protocol version (required).
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's name and version (optional).
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the client's capabilities for this request (required).
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the least severe log level the request wants `notifications/message` for
/// (optional; absent, none is sent).
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key on a result: the server's name and version.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The extension identifier under which a server states MCPL's manifest in
/// `capabilities.extensions` for a modern client, and a client declares MCPL in its
/// per-request capabilities. **\[project\]** (`docs/rfc014-stateless.md` §3.1): an extension
/// identifier needs a prefix (MCP versioning, "Extension Negotiation"), and `mcpl/` is the
/// prefix MCPL's `_meta` keys already use.
pub const MCPL_EXTENSION: &str = "mcpl/core";

/// The `resultType` of a result that is the request's final answer.
pub const RESULT_COMPLETE: &str = "complete";

/// The `resultType` of a result asking the client for input before the request can be
/// completed (MCP `basic/patterns/mrtr.md`, `InputRequiredResult`).
pub const RESULT_INPUT_REQUIRED: &str = "input_required";

/// The request params member carrying the client's answers to an `InputRequiredResult`'s
/// `inputRequests` (MCP `InputResponseRequestParams`).
pub const INPUT_RESPONSES: &str = "inputResponses";

/// The request params member echoing an `InputRequiredResult`'s `requestState`.
pub const REQUEST_STATE: &str = "requestState";

/// Whether `method` may be answered with an `InputRequiredResult` (MCP mrtr.md,
/// "Supported Requests"): `tools/call`, `prompts/get` and `resources/read`, and no other.
pub fn supports_input_required(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get" | "resources/read")
}

/// One of an `InputRequiredResult`'s `inputRequests`: a request the client is to fulfil
/// (`elicitation/create`, `sampling/createMessage` or `roots/list`) and retry with its
/// result under the same key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// The request's method.
    pub method: String,
    /// The request's params; `roots/list` may have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A result asking for input before the request can complete (MCP `InputRequiredResult`).
/// Serialized with `resultType: "input_required"`; at least one of the two members is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Always [`RESULT_INPUT_REQUIRED`].
    pub result_type: String,
    /// What the client is to fulfil, by server-assigned keys unique within the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<std::collections::BTreeMap<String, InputRequest>>,
    /// Opaque to the client, echoed exactly on its retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl InputRequiredResult {
    /// A result asking `requests`, with `state` to be echoed.
    pub fn new(
        requests: std::collections::BTreeMap<String, InputRequest>,
        state: Option<String>,
    ) -> Self {
        InputRequiredResult {
            result_type: RESULT_INPUT_REQUIRED.to_owned(),
            input_requests: Some(requests),
            request_state: state,
        }
    }
}

/// The request that opens a stream of notifications (MCP `basic/patterns/subscriptions.md`).
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

/// The notification that acknowledges a `subscriptions/listen`, first on its stream.
pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// `_meta` key on every message of a `subscriptions/listen` stream: the id of the request
/// that opened it.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// Which notifications a `subscriptions/listen` stream carries (MCP `SubscriptionFilter`):
/// each is opt-in, absent meaning not wanted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Extensions' members (`mcpl/hints`, `mcpl/events`: `docs/rfc014-stateless.md`
    /// §3.5), kept as sent; a server honours those it knows.
    #[serde(flatten)]
    pub extensions: serde_json::Map<String, Value>,
}

/// `subscriptions/listen`'s params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListenParams {
    /// What the client opts in to. **\[project\]** Read liberally: absent, nothing.
    #[serde(default)]
    pub notifications: SubscriptionFilter,
}

/// `notifications/subscriptions/acknowledged`'s params: the stream's id, and the subset of
/// the filter the server honours.
pub fn acknowledged(subscription: &crate::jsonrpc::Id, honoured: &SubscriptionFilter) -> Value {
    serde_json::json!({
        "_meta": { SUBSCRIPTION_ID_KEY: subscription },
        "notifications": honoured,
    })
}

/// The `Mcp-Name` header's source for a method: `params.name` or `params.uri` (MCP
/// Streamable HTTP, "Standard Request Headers"); `None` for a method without one.
pub fn name_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// Every protocol version this project serves, both eras, newest first: what
/// `server/discover` lists and -32022 names as `supported`.
pub fn supported_versions() -> Vec<String> {
    MODERN_PROTOCOL_VERSIONS
        .iter()
        .chain(SUPPORTED_PROTOCOL_VERSIONS.iter())
        .map(|v| (*v).to_owned())
        .collect()
}

/// True when `version` is a modern version this project speaks.
pub fn is_modern_version(version: &str) -> bool {
    MODERN_PROTOCOL_VERSIONS.contains(&version)
}

/// True when an `initialize` request is a modern one: its `_meta` names a protocol version
/// and its params carry no `protocolVersion` of their own, so it is no legacy handshake
/// but a modern request for a method 2026-07-28 removed. **\[project\]** reading of
/// `basic/versioning.md` ("A request carrying modern per-request `_meta` is served
/// statelessly"; "An `initialize` request selects legacy semantics"): the request's own
/// params decide which sentence applies, and a modern one gets -32601 (on HTTP with 404,
/// `transports/streamable-http.md`), as the official conformance suite checks
/// (`sep-2575-http-server-method-not-found-404-initialize`).
pub fn is_modern_initialize(params: Option<&RawValue>) -> bool {
    let Some(params) = params else {
        return false;
    };
    if member(params, "protocolVersion").is_some() {
        return false;
    }
    member(params, "_meta")
        .and_then(|meta| member(&meta, PROTOCOL_VERSION_KEY))
        .is_some()
}

/// What a modern request says of itself in `_meta` (MCP `basic/index.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`, as sent (it may be one not served here:
    /// see [`RequestMeta::check_version`]).
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientInfo`, when sent and readable (it is for display
    /// only, so an unreadable one is left out rather than refused).
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub client_capabilities: ClientCapabilities,
    /// `io.modelcontextprotocol/logLevel`: `None`, no `notifications/message` for it.
    pub log_level: Option<LoggingLevel>,
}

/// The per-request keys, as sent (their text, borrowed: each is decoded from it once, as
/// its type, with no tree of it made first — issue #42 item 3); everything else in
/// `_meta` is skipped unread.
#[derive(Deserialize)]
struct Keys<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default, borrow)]
    protocol_version: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default, borrow)]
    client_info: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default, borrow)]
    client_capabilities: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", default, borrow)]
    log_level: Option<&'a RawValue>,
}

impl RequestMeta {
    /// Reads a request's params: `Ok(None)` when its `_meta` holds none of the per-request
    /// keys (not a modern request), the fields when it is one, -32602 when it names itself
    /// modern but a required key is missing or a key is not of its type. A key whose
    /// value is `null` is absent.
    pub fn read(params: Option<&RawValue>) -> Result<Option<RequestMeta>, ErrorObject> {
        let Some(meta) = params.and_then(|p| member(p, "_meta")) else {
            return Ok(None);
        };
        // A `_meta` that is not an object holds no per-request key: not modern.
        let Ok(keys) = serde_json::from_str::<Keys>(meta.get()) else {
            return Ok(None);
        };
        if keys.protocol_version.is_none()
            && keys.client_capabilities.is_none()
            && keys.client_info.is_none()
            && keys.log_level.is_none()
        {
            return Ok(None);
        }
        let protocol_version = match keys.protocol_version {
            Some(v) => serde_json::from_str::<String>(v.get())
                .map_err(|_| malformed(PROTOCOL_VERSION_KEY, "must be a string"))?,
            None => return Err(malformed(PROTOCOL_VERSION_KEY, "is required")),
        };
        let client_capabilities = match keys.client_capabilities {
            Some(v) if v.get().trim_start().starts_with('{') => serde_json::from_str(v.get())
                .map_err(|_| malformed(CLIENT_CAPABILITIES_KEY, "must be capabilities"))?,
            Some(_) => return Err(malformed(CLIENT_CAPABILITIES_KEY, "must be an object")),
            None => return Err(malformed(CLIENT_CAPABILITIES_KEY, "is required")),
        };
        let log_level = match keys.log_level {
            None => None,
            Some(v) => Some(
                serde_json::from_str(v.get())
                    .map_err(|_| malformed(LOG_LEVEL_KEY, "must be a logging level"))?,
            ),
        };
        let client_info = keys
            .client_info
            .and_then(|v| serde_json::from_str(v.get()).ok());
        Ok(Some(RequestMeta {
            protocol_version,
            client_info,
            client_capabilities,
            log_level,
        }))
    }

    /// -32022 with `data.supported` and `data.requested` when the request's version is not
    /// a modern one served here (MCP versioning, "Protocol Version Negotiation"). A legacy
    /// version named in `_meta` is refused too: the legacy era starts with `initialize`.
    pub fn check_version(&self) -> Result<(), ErrorObject> {
        if is_modern_version(&self.protocol_version) {
            return Ok(());
        }
        Err(unsupported_version(&self.protocol_version))
    }
}

/// -32602 for a per-request key that is missing or not of its type.
fn malformed(key: &str, what: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("_meta[\"{key}\"] {what}"))
}

/// -32022 for `requested`, listing what is served (MCP `UnsupportedProtocolVersionError`).
pub fn unsupported_version(requested: &str) -> ErrorObject {
    let requested = clip(requested, ECHO_LIMIT);
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    )
    .with_data(serde_json::json!({
        "supported": supported_versions(),
        "requested": requested,
    }))
}

/// -32021 naming the capabilities the request would have needed, as a
/// `ClientCapabilities` object (MCP `MissingRequiredClientCapabilityError`).
pub fn missing_capability(capability: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("this request needs the client capability {capability:?}"),
    )
    .with_data(serde_json::json!({ "requiredCapabilities": { capability: {} } }))
}

/// -32020 saying what did not match (MCP Streamable HTTP, "Server Validation").
pub fn header_mismatch(detail: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::HEADER_MISMATCH,
        format!("Header mismatch: {detail}"),
    )
}

/// Who may cache a result (MCP `server/utilities/caching.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// The same for every caller.
    Public,
    /// Tailored to the caller's authorization context.
    Private,
}

/// A result's caching hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHints {
    /// `ttlMs`: how long the result may be considered fresh.
    pub ttl_ms: u64,
    /// `cacheScope`.
    pub scope: CacheScope,
}

/// `server/discover`'s result, before [`complete`] adds `resultType` and `serverInfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Every version served, both eras.
    pub supported_versions: Vec<String>,
    /// The server's capabilities; `extensions` among `other`.
    pub capabilities: crate::mcp::ServerCapabilities,
    /// Guidance for a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Caching: `ttlMs`.
    pub ttl_ms: u64,
    /// Caching: `cacheScope`.
    pub cache_scope: CacheScope,
}

/// A result made modern: `resultType: "complete"` (unless it says another),
/// `_meta["io.modelcontextprotocol/serverInfo"]`, and the caching hints when given (MCP
/// `basic/index.md`, "Result Responses" and "Per-response protocol fields"). A result that
/// is not an object is left as it is (every MCP result is one).
pub fn complete(
    result: &RawValue,
    server_info: &Implementation,
    cache: Option<CacheHints>,
) -> Box<RawValue> {
    completed_in_place(result, server_info, cache)
        .unwrap_or_else(|| completed_by_tree(result, server_info, cache))
}

/// [`complete`] by a tree of the result: read, completed, written again — for any result
/// [`completed_in_place`] leaves (one already holding a member it writes, or not an
/// object), and the reference the in-place way is tested against.
fn completed_by_tree(
    result: &RawValue,
    server_info: &Implementation,
    cache: Option<CacheHints>,
) -> Box<RawValue> {
    let Ok(mut object) = serde_json::from_str::<Map<String, Value>>(result.get()) else {
        return result.to_owned();
    };
    object
        .entry("resultType")
        .or_insert_with(|| Value::String(RESULT_COMPLETE.to_owned()));
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        let info = serde_json::to_value(server_info).unwrap_or(Value::Null);
        meta.insert(SERVER_INFO_KEY.to_owned(), info);
    }
    if let Some(cache) = cache {
        object.insert("ttlMs".to_owned(), Value::from(cache.ttl_ms));
        let scope = serde_json::to_value(cache.scope).unwrap_or(Value::Null);
        object.insert("cacheScope".to_owned(), scope);
    }
    crate::jsonrpc::to_raw(&object)
}

/// The members [`complete`] writes at a result's top level.
const COMPLETED_MEMBERS: [&str; 4] = ["resultType", "_meta", "ttlMs", "cacheScope"];

/// [`complete`] for the common result, an object with none of [`COMPLETED_MEMBERS`]: its
/// text kept and the members written after it — no tree of the result made, read and
/// written again (issue #42 item 3: ~12,000 instructions of a light modern call). `None`
/// when the result is anything else, for the tree's way. The members come last rather
/// than sorted as the tree writes them: a JSON object's members have no order.
fn completed_in_place(
    result: &RawValue,
    server_info: &Implementation,
    cache: Option<CacheHints>,
) -> Option<Box<RawValue>> {
    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
    use std::fmt;

    /// Whether a key is one of [`COMPLETED_MEMBERS`], read without copying it.
    struct Completed;
    impl Visitor<'_> for Completed {
        type Value = bool;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a member's name")
        }
        fn visit_str<E>(self, key: &str) -> Result<bool, E> {
            Ok(COMPLETED_MEMBERS.contains(&key))
        }
    }
    impl<'de> DeserializeSeed<'de> for Completed {
        type Value = bool;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
            d.deserialize_str(self)
        }
    }
    /// Whether an object has none of them (its values skipped, never built).
    struct Plain;
    impl<'de> Visitor<'de> for Plain {
        type Value = bool;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<bool, M::Error> {
            while let Some(completed) = map.next_key_seed(Completed)? {
                map.next_value::<IgnoredAny>()?;
                if completed {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }

    let text = result.get().trim();
    let mut de = serde_json::Deserializer::from_str(text);
    if !de.deserialize_map(Plain).ok()? {
        return None;
    }
    let inner = text.strip_prefix('{')?.strip_suffix('}')?.trim();
    let mut out = Vec::with_capacity(text.len() + 160);
    out.extend_from_slice(b"{");
    if !inner.is_empty() {
        out.extend_from_slice(inner.as_bytes());
        out.push(b',');
    }
    out.extend_from_slice(b"\"resultType\":");
    serde_json::to_writer(&mut out, RESULT_COMPLETE).ok()?;
    out.extend_from_slice(b",\"_meta\":{");
    serde_json::to_writer(&mut out, SERVER_INFO_KEY).ok()?;
    out.push(b':');
    serde_json::to_writer(&mut out, server_info).ok()?;
    out.push(b'}');
    if let Some(cache) = cache {
        out.extend_from_slice(b",\"ttlMs\":");
        serde_json::to_writer(&mut out, &cache.ttl_ms).ok()?;
        out.extend_from_slice(b",\"cacheScope\":");
        serde_json::to_writer(&mut out, &cache.scope).ok()?;
    }
    out.push(b'}');
    RawValue::from_string(String::from_utf8(out).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(v: Value) -> Box<RawValue> {
        crate::jsonrpc::to_raw(&v)
    }

    fn read(v: Value) -> Result<Option<RequestMeta>, ErrorObject> {
        RequestMeta::read(Some(&raw(v)))
    }

    #[test]
    fn a_request_without_the_keys_is_not_modern() {
        assert_eq!(RequestMeta::read(None), Ok(None));
        assert_eq!(read(json!({"name": "x"})), Ok(None));
        assert_eq!(read(json!({"_meta": {"progressToken": 1}})), Ok(None));
        assert_eq!(read(json!({"_meta": 5})), Ok(None));
    }

    #[test]
    fn a_modern_request_needs_its_version_and_capabilities() {
        let only_version = json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}});
        assert_eq!(
            read(only_version).unwrap_err().code,
            ErrorCode::INVALID_PARAMS
        );
        let only_caps = json!({"_meta": {CLIENT_CAPABILITIES_KEY: {}}});
        assert_eq!(read(only_caps).unwrap_err().code, ErrorCode::INVALID_PARAMS);
        let bad_level = json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28",
            CLIENT_CAPABILITIES_KEY: {}, LOG_LEVEL_KEY: "loud"}});
        assert_eq!(read(bad_level).unwrap_err().code, ErrorCode::INVALID_PARAMS);
        let ok = read(json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28",
            CLIENT_CAPABILITIES_KEY: {"elicitation": {}}, LOG_LEVEL_KEY: "info",
            CLIENT_INFO_KEY: 7}}))
        .unwrap()
        .unwrap();
        assert_eq!(ok.log_level, Some(LoggingLevel::Info));
        assert!(ok.client_capabilities.supports_elicitation());
        assert_eq!(ok.client_info, None);
        assert!(ok.check_version().is_ok());
    }

    /// Each key is decoded from its own text as its type: a key of the wrong type is
    /// -32602, a `null` one is absent, and what a well-formed one says is read whole.
    #[test]
    fn each_per_request_key_is_read_as_its_type() {
        let with = |version: Value, caps: Value, level: Value| {
            read(json!({"_meta": {PROTOCOL_VERSION_KEY: version,
                CLIENT_CAPABILITIES_KEY: caps, LOG_LEVEL_KEY: level,
                CLIENT_INFO_KEY: {"name": "c", "version": "2"}}}))
        };
        let caps = json!({"elicitation": {}, "extensions": {"mcpl/core": {}}});
        let bad = [
            with(json!(7), caps.clone(), Value::Null),
            with(json!(null), caps.clone(), Value::Null),
            with(json!("2026-07-28"), json!([]), Value::Null),
            with(json!("2026-07-28"), json!("caps"), Value::Null),
            with(json!("2026-07-28"), json!(null), Value::Null),
            with(json!("2026-07-28"), caps.clone(), json!(3)),
        ];
        for outcome in bad {
            assert_eq!(outcome.unwrap_err().code, ErrorCode::INVALID_PARAMS);
        }
        let ok = with(json!("2026-07-28"), caps, Value::Null)
            .unwrap()
            .unwrap();
        assert_eq!(ok.protocol_version, "2026-07-28");
        assert_eq!(ok.log_level, None);
        assert!(ok.client_capabilities.supports_elicitation());
        assert!(ok.client_capabilities.other.contains_key("extensions"));
        assert_eq!(ok.client_info, Some(Implementation::new("c", "2")));
    }

    #[test]
    fn an_unsupported_version_lists_both_eras() {
        let m = read(json!({"_meta": {PROTOCOL_VERSION_KEY: "1900-01-01",
            CLIENT_CAPABILITIES_KEY: {}}}))
        .unwrap()
        .unwrap();
        let e = m.check_version().unwrap_err();
        assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        let data = e.data.unwrap();
        assert_eq!(data["requested"], "1900-01-01");
        assert_eq!(data["supported"][0], MODERN_PROTOCOL_VERSION);
        assert!(
            data["supported"]
                .as_array()
                .unwrap()
                .contains(&json!("2025-11-25"))
        );
    }

    #[test]
    fn complete_adds_the_result_type_server_info_and_cache_hints() {
        let info = Implementation::new("s", "1");
        let done = complete(
            &raw(json!({"tools": [], "_meta": {"x/y": 1}})),
            &info,
            Some(CacheHints {
                ttl_ms: 0,
                scope: CacheScope::Private,
            }),
        );
        let v: Value = serde_json::from_str(done.get()).unwrap();
        assert_eq!(v["resultType"], "complete");
        assert_eq!(v["_meta"]["x/y"], 1);
        assert_eq!(v["_meta"][SERVER_INFO_KEY]["name"], "s");
        assert_eq!(v["ttlMs"], 0);
        assert_eq!(v["cacheScope"], "private");
        let kept = complete(&raw(json!({"resultType": "input_required"})), &info, None);
        let v: Value = serde_json::from_str(kept.get()).unwrap();
        assert_eq!(v["resultType"], "input_required");
        assert!(v.get("ttlMs").is_none());
    }

    /// The result kept as text and the members written after it (`completed_in_place`)
    /// says what the tree's way says, for every shape of result: empty, spaced, with
    /// members of every kind, with each completed member already there (spelled plainly
    /// or escaped), and not an object at all.
    #[test]
    fn a_result_completed_in_place_says_what_the_tree_says() {
        let info = Implementation::new("s \"quoted\"", "1");
        let hints = [
            None,
            Some(CacheHints {
                ttl_ms: 5,
                scope: CacheScope::Private,
            }),
        ];
        let results = [
            "{}",
            " { } ",
            "{\"content\":[{\"type\":\"text\",\"text\":\"}\"}],\"isError\":false}",
            "{ \"a\" : {\"_meta\": 1}, \"b\": \"resultType\" }\n",
            "{\"_meta\":{\"x/y\":1}}",
            "{\"resultType\":\"input_required\"}",
            "{\"ttlMs\":9,\"x\":1}",
            "{\"cacheScope\":\"public\"}",
            "{\"_me\\u0074a\":{\"x/y\":1}}",
            "[1,2]",
            "\"text\"",
        ];
        for text in results {
            let result = RawValue::from_string(text.to_owned()).unwrap();
            for cache in hints {
                let done = complete(&result, &info, cache);
                let done: Value = serde_json::from_str(done.get()).unwrap();
                let tree = completed_by_tree(&result, &info, cache);
                let tree: Value = serde_json::from_str(tree.get()).unwrap();
                assert_eq!(done, tree, "{text} with {cache:?}");
            }
        }
        let plain = RawValue::from_string("{\"content\":[]}".to_owned()).unwrap();
        assert!(
            completed_in_place(&plain, &info, None).is_some(),
            "a plain result is completed in place"
        );
        let kept = complete(&raw(json!({"resultType": "input_required"})), &info, None);
        let v: Value = serde_json::from_str(kept.get()).unwrap();
        assert_eq!(v["resultType"], "input_required");
        assert!(v.get("ttlMs").is_none());
    }
}

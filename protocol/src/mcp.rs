//! MCP base types (MCP 2025-11-25, with the two earlier handshake-era versions).
//!
//! Only what this project speaks: the lifecycle (`initialize`, `notifications/initialized`,
//! `ping`), tools (`tools/list` with cursor paging, `tools/call`,
//! `notifications/tools/list_changed`), `notifications/cancelled`, progress
//! (`notifications/progress`) and logging (`logging/setLevel`, `notifications/message`).
//! Members this crate does not type are kept in `other` maps where a peer may send them, so
//! nothing is lost.

use crate::jsonrpc::Id;
use crate::mcpl::{HostMcplCapabilities, McplManifest, lenient};
use crate::meta::{Meta, is_none_or_empty};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The newest protocol version this project speaks.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Every handshake-era protocol version this project speaks, newest first. `2024-11-05` is
/// the first: MCPL servers built on older SDKs still answer with it, and nothing this
/// project needs differs in it (tools, `_meta`, notifications).
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// `server/discover` (MCP 2026-07-28 `server/discover.md`): what a modern client may ask
/// before any other request, and a dual-era client probes with before falling back to
/// `initialize` (see [`crate::modern`]).
pub const SERVER_DISCOVER: &str = "server/discover";

/// Server side of version negotiation (MCP lifecycle): answer with the requested version
/// if supported, otherwise with the latest one we support (the client then decides).
pub fn negotiate_version(requested: &str) -> &'static str {
    SUPPORTED_PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LATEST_PROTOCOL_VERSION)
}

/// True when this project speaks `version`.
pub fn is_supported_version(version: &str) -> bool {
    SUPPORTED_PROTOCOL_VERSIONS.contains(&version)
}

/// A name and version of an implementation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Other members (`title`, `icons`, …).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Implementation {
    /// A name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            other: Map::new(),
        }
    }
}

/// `initialize` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The version the client wants.
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// `_meta` (MCP reserves it here), kept as sent: a progress token, vendor keys, ….
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// The client's (host's) capabilities. A member this project reads (`experimental`, its
/// `mcpl`) that does not decode reads as absent: a host whose `experimental.mcpl` is not an
/// object is served as a plain MCP host, never refused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCapabilities {
    /// `experimental`, where MCPL lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "lenient")]
    pub experimental: Option<ClientExperimental>,
    /// Other capabilities (`roots`, `sampling`, `elicitation`, …).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl ClientCapabilities {
    /// The host's MCPL capabilities, if it speaks MCPL.
    pub fn mcpl(&self) -> Option<&HostMcplCapabilities> {
        self.experimental.as_ref()?.mcpl.as_ref()
    }
}

/// The `experimental` capabilities of either side: MCPL's member `M` (the host's
/// [`HostMcplCapabilities`], the server's [`McplManifest`]) and the others, kept as sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Experimental<M> {
    /// MCPL (SPEC §5.1, §5.2, §17): the host's capabilities or the server's manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "lenient")]
    #[serde(bound(deserialize = "M: serde::de::DeserializeOwned"))]
    pub mcpl: Option<M>,
    /// Other experimental members.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

// By hand: no MCPL member and no other, whatever `M` is (a derive would ask `M: Default`).
impl<M> Default for Experimental<M> {
    fn default() -> Self {
        Experimental {
            mcpl: None,
            other: Map::new(),
        }
    }
}

/// The client's `experimental` capabilities.
pub type ClientExperimental = Experimental<HostMcplCapabilities>;

/// `initialize` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The negotiated version.
    pub protocol_version: String,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// Instructions for the model, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `_meta` (MCP reserves it on every result), kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// The server's capabilities. Like the client's, read liberally: a server whose
/// `experimental.mcpl` is not an object is a plain MCP server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// Tools, if offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "lenient")]
    pub tools: Option<ToolsCapability>,
    /// `experimental`, where MCPL's manifest lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "lenient")]
    pub experimental: Option<ServerExperimental>,
    /// Other capabilities (`logging`, `resources`, …).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl ServerCapabilities {
    /// The server's MCPL manifest, if it speaks MCPL.
    pub fn mcpl(&self) -> Option<&McplManifest> {
        self.experimental.as_ref()?.mcpl.as_ref()
    }
}

/// The tools capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server sends `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The server's `experimental` capabilities.
pub type ServerExperimental = Experimental<McplManifest>;

/// `tools/list` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListToolsParams {
    /// The cursor of the page wanted (from the previous page's `nextCursor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// `_meta` (MCP reserves it here), kept as sent: a progress token, vendor keys, ….
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// `tools/list` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// This page's tools.
    pub tools: Vec<Tool>,
    /// The cursor of the next page, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// `_meta`: RFC-014's `mcpl/rev` (§3).
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// A tool, as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Its name, unique on the server.
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of its arguments.
    pub input_schema: Value,
    /// JSON Schema of its `structuredContent`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons a client may display (MCP 2025-11-25 `Icon[]`), kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Value>>,
    /// Execution properties (MCP 2025-11-25 `ToolExecution`, e.g. `taskSupport`), kept as
    /// given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Value>,
    /// `_meta`: RFC-014's per-tool hints (§3).
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// A tool with a name, a description and an input schema.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
        }
    }

    /// The tool's `_meta`, or an empty one.
    pub fn meta_or_default(&self) -> Meta {
        self.meta.clone().unwrap_or_default()
    }
}

/// MCP tool annotations; other members are kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// May destroy something.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling twice with the same arguments does nothing more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// Talks to an open world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Other members.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `tools/call` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolParams {
    /// The tool.
    pub name: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// `_meta`: RFC-014's `mcpl/instance` (§4.5), a progress token, ….
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// `tools/call` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// What the tool says.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Structured output, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// True for a tool error (shown to the model), as opposed to a protocol error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// `_meta`: RFC-014's `mcpl/hints` (§5.2).
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

impl CallToolResult {
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            ..Default::default()
        }
    }
    /// A tool error with one text block saying why.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            is_error: true,
            ..Default::default()
        }
    }
    /// The text of every text block, joined by newlines.
    pub fn joined_text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                ContentBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
    /// The hint changes this result carries, if any.
    pub fn hints(&self) -> Option<&crate::hints::HintChanges> {
        self.meta.as_ref()?.hints.as_ref()
    }
}

/// The members of an image or audio [`ContentBlock`]: base64 `data` with its `mimeType`
/// (MCP), or a `uri` (MCPL SPEC §10.3, B.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Media {
    /// Base64 data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// Its MIME type.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Where it is (MCPL's `uri` form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// `_meta`, kept as given.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Media {
    /// Given inline: base64 `data` and its MIME type.
    pub fn inline(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Media {
            data: Some(data.into()),
            mime_type: Some(mime_type.into()),
            uri: None,
            annotations: None,
            meta: None,
        }
    }
}

/// A content block (MCP). `annotations` and `_meta` are kept as JSON; a `resource_link`
/// keeps every member but `uri` and `name` in `other`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
        /// `_meta`, kept as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// An image: base64 `data` with its `mimeType` (MCP), or a `uri` (MCPL SPEC §10.3, B.1).
    Image(Media),
    /// Audio: base64 `data` with its `mimeType` (MCP), or a `uri` (MCPL SPEC §10.3, B.1).
    Audio(Media),
    /// A link to a resource.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// The rest (`title`, `description`, `mimeType`, `size`, …).
        #[serde(flatten)]
        other: Map<String, Value>,
    },
    /// A resource: embedded as `resource` (MCP), or named by `uri` (MCPL SPEC §10.3, B.1).
    Resource {
        /// The resource contents.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resource: Option<Value>,
        /// The resource's URI (MCPL's form).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
        /// Annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
        /// `_meta`, kept as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// A block of a type this project does not know, or of a known type in a shape it does
    /// not (an image with neither data nor uri): kept as received, never a reason to refuse
    /// the message that carries it.
    #[serde(untagged)]
    Other(Map<String, Value>),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
    /// An image given inline: base64 `data` and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(Media::inline(data, mime_type))
    }
    /// Audio given inline: base64 `data` and its MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(Media::inline(data, mime_type))
    }
    /// An embedded resource (MCP's form: its contents in `resource`).
    pub fn embedded(resource: Value) -> Self {
        ContentBlock::Resource {
            resource: Some(resource),
            uri: None,
            annotations: None,
            meta: None,
        }
    }
    /// The text, for a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// `notifications/cancelled` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledParams {
    /// The request being cancelled.
    pub request_id: Id,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `_meta` (MCP reserves it on notification params), kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// Params (and result) that are an empty object: `ping`, `notifications/initialized`, ….
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Empty {
    /// `_meta`, if a peer sends one.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The `_meta` key of a request's progress token (MCP 2025-11-25, "Utilities / Progress").
pub const PROGRESS_TOKEN: &str = "progressToken";

/// The server capability naming MCP logging (MCP 2025-11-25, "Utilities / Logging"): a
/// server that sends `notifications/message` declares `"logging": {}`.
pub const LOGGING_CAPABILITY: &str = "logging";

/// A progress token (MCP: `string | number`), chosen by the requester and echoed back
/// verbatim in each `notifications/progress` for its request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// A string token.
    String(String),
    /// A number token, kept as sent.
    Number(serde_json::Number),
}

impl ProgressToken {
    /// The token a request's `_meta` carries (`progressToken`), if it is a string or a
    /// number; anything else is no token.
    pub fn from_meta(meta: &Meta) -> Option<ProgressToken> {
        match meta.other.get(PROGRESS_TOKEN)? {
            Value::String(s) => Some(ProgressToken::String(s.clone())),
            Value::Number(n) => Some(ProgressToken::Number(n.clone())),
            _ => None,
        }
    }
}

/// `notifications/progress` params (MCP 2025-11-25, "Utilities / Progress").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// The token of the request this progress is for.
    pub progress_token: ProgressToken,
    /// How far along; MCP: it MUST increase with each notification.
    pub progress: f64,
    /// The total, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable description of the progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `_meta` (MCP reserves it on notification params), kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// A log message's severity (MCP 2025-11-25, "Utilities / Logging": the RFC 5424
/// levels), ordered from the least severe (`Debug`) to the most (`Emergency`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// General informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// `logging/setLevel` params: the least severe level the client wants to receive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLevelParams {
    /// From now on, only messages at this level or above are sent.
    pub level: LoggingLevel,
    /// `_meta` (MCP reserves it here), kept as sent: a progress token, vendor keys, ….
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// `notifications/message` params: one log message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageParams {
    /// Its severity.
    pub level: LoggingLevel,
    /// The name of the logger that issued it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// What is logged: any JSON value.
    pub data: Value,
    /// `_meta` (MCP reserves it on notification params), kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// SPEC §10.3, B.1: media and resources by `uri`, and a block of an unknown type, all
    /// decode and are written back as received.
    #[test]
    fn content_blocks_take_mcpl_uri_forms_and_unknown_types() {
        for v in [
            json!({"type": "image", "uri": "https://example.com/board.png"}),
            json!({"type": "image", "data": "iVBOR", "mimeType": "image/png"}),
            json!({"type": "audio", "uri": "file:///a.ogg", "mimeType": "audio/ogg"}),
            json!({"type": "resource", "uri": "memory://facts/12345"}),
            json!({"type": "resource", "resource": {"uri": "x://y", "text": "t"}}),
            json!({"type": "hologram", "frames": 3}),
        ] {
            let b: ContentBlock = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&b).unwrap(), v);
        }
        let b: ContentBlock = serde_json::from_value(json!({"type": "hologram"})).unwrap();
        assert!(matches!(b, ContentBlock::Other(_)));
    }

    #[test]
    fn version_negotiation() {
        assert_eq!(negotiate_version("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate_version("2025-03-26"), "2025-03-26");
        assert_eq!(negotiate_version("2024-11-05"), "2024-11-05");
        assert_eq!(negotiate_version("2024-10-07"), LATEST_PROTOCOL_VERSION);
        assert_eq!(negotiate_version("2099-01-01"), LATEST_PROTOCOL_VERSION);
    }

    #[test]
    fn initialize_round_trips_with_mcpl() {
        let v = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {"listChanged": true},
                             "experimental": {"mcpl": {"version": "0.5", "pushEvents": true, "toolHints": true}}},
            "clientInfo": {"name": "mcpl-host", "version": "0.1.0"}
        });
        let p: InitializeParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.capabilities.mcpl().unwrap().tool_hints, Some(true));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);

        let r = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": true}, "logging": {},
                             "experimental": {"mcpl": {"version": "0.5", "toolHints": true,
                                "toolsets": {"lobby": {"title": "Lobby", "default": "open"}}}}},
            "serverInfo": {"name": "arcade", "version": "1", "title": "Arcade"},
            "instructions": "Play."
        });
        let res: InitializeResult = serde_json::from_value(r.clone()).unwrap();
        assert!(
            res.capabilities
                .mcpl()
                .unwrap()
                .toolsets
                .contains_key("lobby")
        );
        assert_eq!(serde_json::to_value(&res).unwrap(), r);
    }

    #[test]
    fn tools_list_and_call_round_trip() {
        let v = json!({
            "tools": [{"name": "play", "description": "Play a move",
                       "inputSchema": {"type": "object"},
                       "annotations": {"readOnlyHint": false, "x-vendor": 1},
                       "_meta": {"mcpl/toolset": "go", "mcpl/visible": false}}],
            "nextCursor": "p2",
            "_meta": {"mcpl/rev": 4}
        });
        let l: ListToolsResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(l.meta.as_ref().unwrap().rev, Some(4));
        assert_eq!(serde_json::to_value(&l).unwrap(), v);

        let c = json!({"name": "play", "arguments": {"move": "D4"}, "_meta": {"mcpl/instance": "g1", "progressToken": 3}});
        let p: CallToolParams = serde_json::from_value(c.clone()).unwrap();
        assert_eq!(p.meta.as_ref().unwrap().instance.as_deref(), Some("g1"));
        assert_eq!(serde_json::to_value(&p).unwrap(), c);

        let r = json!({
            "content": [{"type": "text", "text": "ok"},
                        {"type": "image", "data": "AA==", "mimeType": "image/png"},
                        {"type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": "text/plain"}],
            "structuredContent": {"board": "..."},
            "isError": true,
            "_meta": {"mcpl/hints": {"rev": 2, "tools": [{"name": "play", "instance": "g1", "visible": false}]}}
        });
        let res: CallToolResult = serde_json::from_value(r.clone()).unwrap();
        assert_eq!(res.hints().unwrap().rev, 2);
        assert_eq!(serde_json::to_value(&res).unwrap(), r);
    }

    #[test]
    fn progress_and_logging_types_have_the_mcp_wire_form() {
        let meta: Meta = serde_json::from_value(json!({"progressToken": "p-1"})).unwrap();
        let token = ProgressToken::from_meta(&meta).unwrap();
        assert_eq!(token, ProgressToken::String("p-1".into()));
        let meta: Meta = serde_json::from_value(json!({"progressToken": 7})).unwrap();
        let number = ProgressToken::from_meta(&meta).unwrap();
        assert_eq!(serde_json::to_value(&number).unwrap(), json!(7));
        let meta: Meta = serde_json::from_value(json!({"progressToken": [1]})).unwrap();
        assert_eq!(ProgressToken::from_meta(&meta), None);
        assert_eq!(ProgressToken::from_meta(&Meta::default()), None);

        let p = ProgressParams {
            progress_token: token,
            progress: 50.0,
            total: Some(100.0),
            message: None,
            meta: None,
        };
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(
            v,
            json!({"progressToken": "p-1", "progress": 50.0, "total": 100.0})
        );
        assert_eq!(serde_json::from_value::<ProgressParams>(v).unwrap(), p);

        let levels = [
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency",
        ];
        let parsed: Vec<LoggingLevel> = levels
            .iter()
            .map(|l| serde_json::from_value(json!(l)).unwrap())
            .collect();
        assert!(parsed.windows(2).all(|w| w[0] < w[1]), "RFC 5424 order");
        assert_eq!(serde_json::to_value(parsed[3]).unwrap(), json!("warning"));
        assert!(serde_json::from_value::<SetLevelParams>(json!({"level": "verbose"})).is_err());

        let m = LoggingMessageParams {
            level: LoggingLevel::Info,
            logger: None,
            data: json!("started"),
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"level": "info", "data": "started"})
        );
    }

    #[test]
    fn a_plain_result_omits_is_error_and_meta() {
        assert_eq!(
            serde_json::to_value(CallToolResult::text("hi")).unwrap(),
            json!({"content": [{"type": "text", "text": "hi"}]})
        );
    }

    #[test]
    fn cancelled_round_trips_with_either_id() {
        for v in [
            json!({"requestId": 3, "reason": "user"}),
            json!({"requestId": "r-1"}),
        ] {
            let p: CancelledParams = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&p).unwrap(), v);
        }
    }
}

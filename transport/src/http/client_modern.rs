//! The client end's share of MCP 2026-07-28 Streamable HTTP
//! (`basic/transports/streamable-http.md`): a request whose `_meta` names a protocol version
//! is modern, and its POST mirrors the body in headers — `MCP-Protocol-Version` (the
//! body's version, not a negotiated one), `Mcp-Method`, and for `tools/call`,
//! `resources/read` and `prompts/get` `Mcp-Name` ("Standard Request Headers"), Base64 in
//! the `=?base64?…?=` sentinel when the value is no plain header text ("Value Encoding").
//! It carries no session id: the era has none. Pure: a request in, headers out.
//!
//! **Tool parameters in headers** (SEP-2243, "Custom Headers from Tool Parameters"): a
//! client on Streamable HTTP MUST mirror each argument a tool's `inputSchema` marks with
//! `x-mcp-header` into `Mcp-Param-{name}`, and MUST leave out of its list a tool whose marks
//! are invalid. [`ToolHeaders`] learns the marks from the server's modern `tools/list`
//! answers as they pass (removing the invalid tools, with a warning), and adds the headers
//! to each modern `tools/call` of a tool it learned; the rules are
//! `mcpl_protocol::header_params`.

use super::modern::{MCP_METHOD, MCP_NAME};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use mcpl_protocol::Request;
use mcpl_protocol::header_params::{HeaderParam, encode_text, encode_value, header_params};
use mcpl_protocol::jsonrpc::member;
use mcpl_protocol::jsonrpc::{RawValue, to_raw};
use mcpl_protocol::modern::{PROTOCOL_VERSION_KEY, name_member};
use serde_json::Value;
use std::collections::HashMap;

const METHOD_HEADER: HeaderName = HeaderName::from_static(MCP_METHOD);
const NAME_HEADER: HeaderName = HeaderName::from_static(MCP_NAME);

/// The headers of a modern request's POST.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ModernPost {
    version: HeaderValue,
    method: Option<HeaderValue>,
    name: Option<HeaderValue>,
}

impl ModernPost {
    /// The headers for `request`, or `None` when it is no modern request (its `_meta`
    /// names no protocol version as a string that is header text).
    pub(super) fn of(request: &Request) -> Option<ModernPost> {
        let params = request.params.as_deref()?;
        let meta = member(params, "_meta")?;
        let version = member(&meta, PROTOCOL_VERSION_KEY)?;
        let version: String = serde_json::from_str(version.get()).ok()?;
        let version = HeaderValue::from_str(&version).ok()?;
        // A method is ASCII in every MCP revision; one that is not header text goes
        // without the header, and the server says what it thinks of that (-32020).
        let method = HeaderValue::from_str(&request.method).ok();
        let name = name_member(&request.method)
            .and_then(|m| member(params, m))
            .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
            .and_then(|v| HeaderValue::from_str(&encode_text(&v)).ok());
        Some(ModernPost {
            version,
            method,
            name,
        })
    }

    /// Sets the headers on a POST.
    pub(super) fn apply(&self, headers: &mut HeaderMap, version_header: &HeaderName) {
        headers.insert(version_header.clone(), self.version.clone());
        if let Some(method) = &self.method {
            headers.insert(METHOD_HEADER, method.clone());
        }
        if let Some(name) = &self.name {
            headers.insert(NAME_HEADER, name.clone());
        }
    }
}

/// The most tools whose header parameters are remembered; past it a newly listed tool's
/// are not (its calls go without `Mcp-Param-*`, and the server says so, -32020).
pub(super) const MAX_TOOLS_REMEMBERED: usize = 10_000;

/// The most bytes of names and paths the remembered marks hold; past it a newly listed
/// tool's are not remembered, as past [`MAX_TOOLS_REMEMBERED`]. A server writes the marks,
/// so they are bounded in bytes as well as in tools.
pub(super) const MAX_BYTES_REMEMBERED: usize = 1024 * 1024;

/// What the server's listed tools mark for headers (module docs).
#[derive(Debug, Default)]
pub(super) struct ToolHeaders {
    marks: HashMap<String, Vec<HeaderParam>>,
    /// The bytes `marks` holds ([`size`]).
    bytes: usize,
}

/// The bytes a tool's remembered marks take: its name, and each mark's name and path.
fn size(tool: &str, params: &[HeaderParam]) -> usize {
    tool.len()
        + params
            .iter()
            .map(|p| p.name.len() + p.path.iter().map(String::len).sum::<usize>())
            .sum::<usize>()
}

impl ToolHeaders {
    /// Reads a `tools/list` result: remembers each tool's header parameters, and returns
    /// the result without the tools whose marks are invalid (`None` when there is none to
    /// leave out, or the result is not a list of tools).
    pub(super) fn learn(&mut self, result: &RawValue) -> Option<Box<RawValue>> {
        let mut value: Value = serde_json::from_str(result.get()).ok()?;
        let tools = value.get_mut("tools")?.as_array_mut()?;
        let before = tools.len();
        tools.retain(|tool| {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                return true;
            };
            let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
            match header_params(schema) {
                Ok(params) if params.is_empty() => {
                    self.forget(name);
                    true
                }
                Ok(params) => {
                    self.remember(name, params);
                    true
                }
                Err(e) => {
                    tracing::warn!(tool = %name, reason = %e, "a listed tool's x-mcp-header marks are invalid: the tool is left out (MCP Streamable HTTP, SEP-2243)");
                    self.forget(name);
                    false
                }
            }
        });
        (tools.len() != before).then(|| to_raw(&value))
    }

    /// Remembers `tool`'s marks, within the bounds (module docs); a tool past them goes
    /// without headers, and the server says so (-32020).
    fn remember(&mut self, tool: &str, params: Vec<HeaderParam>) {
        self.forget(tool);
        let bytes = size(tool, &params);
        if self.marks.len() >= MAX_TOOLS_REMEMBERED || self.bytes + bytes > MAX_BYTES_REMEMBERED {
            tracing::warn!(%tool, "too many tools' x-mcp-header marks to remember: this one's calls go without Mcp-Param-* headers");
            return;
        }
        self.bytes += bytes;
        self.marks.insert(tool.to_owned(), params);
    }

    fn forget(&mut self, tool: &str) {
        if let Some(params) = self.marks.remove(tool) {
            self.bytes -= size(tool, &params);
        }
    }

    /// The `Mcp-Param-*` headers of a modern `tools/call` of a tool whose marks were
    /// learned: each marked argument present and not null, encoded ("Value Encoding").
    pub(super) fn headers(&self, request: &Request) -> Vec<(HeaderName, HeaderValue)> {
        // Most servers mark nothing: a call's params are then not read at all.
        if request.method != "tools/call" || self.marks.is_empty() {
            return Vec::new();
        }
        let Some(params) = request.params.as_deref() else {
            return Vec::new();
        };
        let Ok(call) = serde_json::from_str::<Value>(params.get()) else {
            return Vec::new();
        };
        let Some(marks) = call
            .get("name")
            .and_then(Value::as_str)
            .and_then(|name| self.marks.get(name))
        else {
            return Vec::new();
        };
        let arguments = call.get("arguments").unwrap_or(&Value::Null);
        marks
            .iter()
            .filter_map(|mark| {
                let value = encode_value(mark.value_in(arguments)?).ok()??;
                let name = HeaderName::from_bytes(mark.header().as_bytes()).ok()?;
                Some((name, HeaderValue::from_str(&value).ok()?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::Id;
    use mcpl_protocol::jsonrpc::to_raw;
    use serde_json::{Value, json};

    fn request(method: &str, params: Value) -> Request {
        Request {
            id: Id::Number(1),
            method: method.to_owned(),
            params: Some(to_raw(&params)),
        }
    }

    #[test]
    fn the_spec_examples_encode_as_the_table_says() {
        assert_eq!(encode_text("us-west1"), "us-west1");
        assert_eq!(
            encode_text("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_text(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_text("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode_text("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn a_modern_call_mirrors_its_version_method_and_name() {
        let meta = json!({PROTOCOL_VERSION_KEY: "2026-07-28", "x": 1});
        let post = ModernPost::of(&request(
            "tools/call",
            json!({"name": "get weather", "_meta": meta}),
        ))
        .unwrap();
        let mut headers = HeaderMap::new();
        post.apply(
            &mut headers,
            &HeaderName::from_static("mcp-protocol-version"),
        );
        assert_eq!(headers["mcp-protocol-version"], "2026-07-28");
        assert_eq!(headers["mcp-method"], "tools/call");
        assert_eq!(headers["mcp-name"], "get weather");
        let list = ModernPost::of(&request("tools/list", json!({"_meta": meta}))).unwrap();
        assert_eq!(list.name, None, "tools/list has no Mcp-Name");
    }

    #[test]
    fn a_request_without_a_version_in_meta_is_not_modern() {
        for params in [
            json!({}),
            json!({"_meta": {}}),
            json!({"_meta": {PROTOCOL_VERSION_KEY: 7}}),
            json!({"_meta": "x"}),
        ] {
            assert_eq!(ModernPost::of(&request("tools/list", params)), None);
        }
        let bare = Request {
            id: Id::Number(1),
            method: "ping".into(),
            params: None,
        };
        assert_eq!(ModernPost::of(&bare), None);
    }

    /// SEP-2243 on the client: the marks learned from `tools/list` (an invalid tool left
    /// out), then each marked argument of a call as its header, encoded, a null one left out.
    #[test]
    fn issue39_sep2243_listed_marks_become_a_calls_headers() {
        let listed = to_raw(&serde_json::json!({"tools": [
            {"name": "sql", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "limit": {"type": "integer", "x-mcp-header": "Limit"},
                "query": {"type": "string"}}}},
            {"name": "bad", "inputSchema": {"type": "object", "properties": {
                "x": {"type": "number", "x-mcp-header": "X"}}}},
            {"name": "plain", "inputSchema": {"type": "object"}}]}));
        let mut known = ToolHeaders::default();
        let kept = known.learn(&listed).expect("the invalid tool is left out");
        let kept: Value = serde_json::from_str(kept.get()).unwrap();
        let names: Vec<&str> = kept["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["sql", "plain"]);
        let call = |args: Value| {
            let params = to_raw(&serde_json::json!({"name": "sql", "arguments": args}));
            Request {
                id: Id::Number(1),
                method: "tools/call".into(),
                params: Some(params),
            }
        };
        let headers = known.headers(&call(
            serde_json::json!({"region": "Hello, 世界", "limit": 42, "query": "q"}),
        ));
        let shown: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap().to_owned()))
            .collect();
        assert_eq!(
            shown,
            [
                ("mcp-param-limit".to_owned(), "42".to_owned()),
                (
                    "mcp-param-region".to_owned(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".to_owned()
                ),
            ]
        );
        let headers = known.headers(&call(serde_json::json!({"region": null})));
        assert!(
            headers.is_empty(),
            "a null argument has no header: {headers:?}"
        );
        // Listed again without marks: forgotten.
        let again = to_raw(
            &serde_json::json!({"tools": [{"name": "sql", "inputSchema": {"type": "object"}}]}),
        );
        assert!(known.learn(&again).is_none());
        assert!(
            known
                .headers(&call(serde_json::json!({"region": "x"})))
                .is_empty()
        );
    }

    /// The remembered marks are bounded in bytes: a tool past the budget goes without
    /// headers, and room made by a tool listed again without marks is used again.
    #[test]
    fn issue39_sep2243_the_remembered_marks_are_bounded_in_bytes() {
        let big = "A".repeat(MAX_BYTES_REMEMBERED * 6 / 10);
        let list = |names: &[&str], marked: bool| {
            let tools: Vec<Value> = names
                .iter()
                .map(|n| {
                    let prop = if marked {
                        serde_json::json!({"type": "string", "x-mcp-header": big})
                    } else {
                        serde_json::json!({"type": "string"})
                    };
                    serde_json::json!({"name": n, "inputSchema": {"type": "object",
                        "properties": {"v": prop}}})
                })
                .collect();
            to_raw(&serde_json::json!({ "tools": tools }))
        };
        let mut known = ToolHeaders::default();
        known.learn(&list(&["a", "b"], true));
        assert!(known.marks.contains_key("a"));
        assert!(!known.marks.contains_key("b"), "past the byte budget");
        assert!(known.bytes <= MAX_BYTES_REMEMBERED);
        known.learn(&list(&["a"], false));
        known.learn(&list(&["b"], true));
        assert!(known.marks.contains_key("b"), "a's room is b's now");
        assert_eq!(known.bytes, size("b", &known.marks["b"]));
    }
}

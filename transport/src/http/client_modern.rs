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
use base64::Engine;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use mcpl_protocol::Request;
use mcpl_protocol::header_params::{HeaderParam, encode_value, header_params};
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
            .and_then(|v| HeaderValue::from_str(&encode(&v)).ok());
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

/// `value` as a header value: as it is when it is visible ASCII and spaces with none at
/// either end, else Base64 of its UTF-8 in the sentinel; a plain value that looks like the
/// sentinel is encoded too, so it cannot be read as one.
fn encode(value: &str) -> String {
    let visible = value.bytes().all(|b| b == b' ' || b.is_ascii_graphic());
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    if visible && !padded && !sentinel {
        return value.to_owned();
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
    format!("=?base64?{encoded}?=")
}

/// The most tools whose header parameters are remembered; past it a newly listed tool's
/// are not (its calls go without `Mcp-Param-*`, and the server says so, -32020).
pub(super) const MAX_TOOLS_REMEMBERED: usize = 10_000;

/// What the server's listed tools mark for headers (module docs).
#[derive(Debug, Default)]
pub(super) struct ToolHeaders(HashMap<String, Vec<HeaderParam>>);

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
                    self.0.remove(name);
                    true
                }
                Ok(params) => {
                    if self.0.len() < MAX_TOOLS_REMEMBERED || self.0.contains_key(name) {
                        self.0.insert(name.to_owned(), params);
                    }
                    true
                }
                Err(e) => {
                    tracing::warn!(tool = %name, reason = %e, "a listed tool's x-mcp-header marks are invalid: the tool is left out (MCP Streamable HTTP, SEP-2243)");
                    self.0.remove(name);
                    false
                }
            }
        });
        (tools.len() != before).then(|| to_raw(&value))
    }

    /// The `Mcp-Param-*` headers of a modern `tools/call` of a tool whose marks were
    /// learned: each marked argument present and not null, encoded ("Value Encoding").
    pub(super) fn headers(&self, request: &Request) -> Vec<(HeaderName, HeaderValue)> {
        if request.method != "tools/call" {
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
            .and_then(|name| self.0.get(name))
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
        assert_eq!(encode("us-west1"), "us-west1");
        assert_eq!(encode("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode("=?base64?literal?="),
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
}

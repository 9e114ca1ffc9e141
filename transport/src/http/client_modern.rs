//! The client end's share of MCP 2026-07-28 Streamable HTTP
//! (`basic/transports/streamable-http.md`): a request whose `_meta` names a protocol version
//! is modern, and its POST mirrors the body in headers — `MCP-Protocol-Version` (the
//! body's version, not a negotiated one), `Mcp-Method`, and for `tools/call`,
//! `resources/read` and `prompts/get` `Mcp-Name` ("Standard Request Headers"), Base64 in
//! the `=?base64?…?=` sentinel when the value is no plain header text ("Value Encoding").
//! It carries no session id: the era has none. Pure: a request in, headers out.

use super::modern::{MCP_METHOD, MCP_NAME};
use base64::Engine;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use mcpl_protocol::Request;
use mcpl_protocol::jsonrpc::member;
use mcpl_protocol::modern::{PROTOCOL_VERSION_KEY, name_member};

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
}

//! Messages as plain JSON, written the way the specs' texts write them: JSON-RPC 2.0, the
//! MCP and MCPL requests the suites send, RFC-014's toolset requests, and reading what
//! comes back. Only shapes, never the project's types.
//!
//! A crate of its own, depending on `serde_json` alone, so that the pure cores'
//! (`mcpl-server-core`, `mcpl-host-core`) tests build them without a runtime: the testkit's
//! peer is async (tokio), and `scripts/purity.py` fails on tokio under a core crate, dev
//! edges included (issue #38). Every other suite reaches them as `mcpl_testkit::msg`.

use serde_json::{Value, json};
use std::borrow::Borrow;

/// A request.
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A notification.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A success response to `id`.
pub fn result(id: impl Borrow<Value>, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.borrow(), "result": result})
}

/// An error response to `id`.
pub fn error(id: impl Borrow<Value>, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id.borrow(), "error": {"code": code, "message": message}})
}

/// True when `v` is a request (or notification) of `method`.
pub fn is_method(v: &Value, method: &str) -> bool {
    v["method"] == method
}

/// True when `v` is a response (it has an id and a result or an error).
pub fn is_response(v: &Value) -> bool {
    v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
}

/// The error code of an error response.
pub fn error_code(v: &Value) -> Option<i64> {
    v["error"]["code"].as_i64()
}

/// The text of every text block of a result's `content`, joined by newlines.
pub fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The id a response answers, or a request carries.
pub fn id_of(v: &Value) -> &Value {
    &v["id"]
}

// ---- MCP and MCPL ----------------------------------------------------------------------

/// The protocol version the suites' hosts ask for.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// `initialize` params: `capabilities` and a `clientInfo` naming `client`.
pub fn initialize_params(capabilities: Value, client: &str) -> Value {
    json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": capabilities,
           "clientInfo": {"name": client, "version": "1"}})
}

/// The protocol version of a modern (MCP 2026-07-28) request: no handshake, no session.
pub const MODERN_VERSION: &str = "2026-07-28";

/// The `_meta` every modern request carries: [`MODERN_VERSION`] and the client's
/// `capabilities`.
pub fn modern_meta(capabilities: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
           "io.modelcontextprotocol/clientCapabilities": capabilities})
}

/// A host's capabilities as an MCPL 0.5 host with `pushEvents`, advertising RFC-014's
/// `toolHints` when `tool_hints`.
pub fn mcpl_capabilities(tool_hints: bool) -> Value {
    let mut mcpl = json!({"version": "0.5", "pushEvents": true});
    if tool_hints {
        mcpl["toolHints"] = json!(true);
    }
    json!({"experimental": {"mcpl": mcpl}})
}

/// `notifications/initialized`.
pub fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// `notifications/cancelled` for request `id`.
pub fn cancelled(id: impl Into<Value>, reason: &str) -> Value {
    notification(
        "notifications/cancelled",
        json!({"requestId": id.into(), "reason": reason}),
    )
}

/// `tools/call` params, naming the instance in `_meta["mcpl/instance"]` when given
/// (RFC-014 §4.5).
pub fn call_params(tool: &str, args: Value, instance: Option<&str>) -> Value {
    let mut params = json!({"name": tool, "arguments": args});
    if let Some(i) = instance {
        params["_meta"] = json!({"mcpl/instance": i});
    }
    params
}

/// `tools/call` of `tool` with `args`.
pub fn call(id: impl Into<Value>, tool: &str, args: Value) -> Value {
    request(id, "tools/call", call_params(tool, args, None))
}

/// `tools/call` naming the instance.
pub fn call_in(id: impl Into<Value>, tool: &str, args: Value, instance: &str) -> Value {
    request(id, "tools/call", call_params(tool, args, Some(instance)))
}

/// `toolsets/open` params (RFC-014 §4.2).
pub fn open_params(toolset: &str, instance: Option<&str>, options: Option<Value>) -> Value {
    let mut params = json!({"toolset": toolset});
    if let Some(i) = instance {
        params["instance"] = json!(i);
    }
    if let Some(o) = options {
        params["options"] = o;
    }
    params
}

/// `toolsets/open`.
pub fn open(
    id: impl Into<Value>,
    toolset: &str,
    instance: Option<&str>,
    options: Option<Value>,
) -> Value {
    request(id, "toolsets/open", open_params(toolset, instance, options))
}

/// `toolsets/close`.
pub fn close(id: impl Into<Value>, toolset: &str, instance: Option<&str>) -> Value {
    request(id, "toolsets/close", open_params(toolset, instance, None))
}

/// `toolsets/list`.
pub fn list(id: impl Into<Value>) -> Value {
    request(id, "toolsets/list", json!({}))
}

/// A `tools/hints` notification carrying `changes` (RFC-014 §5.2).
pub fn hints(changes: Value) -> Value {
    notification("tools/hints", changes)
}

/// A text content block.
pub fn text(s: &str) -> Value {
    json!({"type": "text", "text": s})
}

/// A tool result of one text block.
pub fn says_result(s: &str) -> Value {
    json!({"content": [text(s)]})
}

/// A tool error result (`isError: true`) of one text block.
pub fn tool_error(s: &str) -> Value {
    json!({"content": [text(s)], "isError": true})
}

/// True when a tool result is a tool error.
pub fn is_tool_error(result: &Value) -> bool {
    result["isError"] == true
}

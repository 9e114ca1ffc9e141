//! JSON-RPC 2.0 messages as plain JSON, written the way the spec's text writes them.

use serde_json::{Value, json};

/// A request.
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A notification.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A success response to `id`.
pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response to `id`.
pub fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
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

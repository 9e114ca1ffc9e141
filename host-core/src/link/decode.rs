//! Decoding what the link reads of the server's lists: a manifest in this project's earlier
//! wrapped form.
//!
//! A result arrives as JSON text and is decoded once, straight into its method's type
//! ([`decode`]): a `tools/list` page's schemas are built as they are read,
//! never rebuilt from a `Value` tree (issue #13 item 9, which this module once worked around).

use super::error::LinkError;
use mcpl_protocol::jsonrpc::{RawValue, decode_result, member};
use mcpl_protocol::mcp::{ListToolsResult, Tool};
use mcpl_protocol::meta::Meta;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;

/// Decodes a result by its method's type, straight from its text; a mismatch is the
/// server's fault.
pub fn decode<T: DeserializeOwned>(
    method: &'static str,
    result: &RawValue,
) -> Result<T, LinkError> {
    decode_result(result).map_err(|e| LinkError::MalformedResult {
        method,
        detail: e.0,
    })
}

/// A `tools/list` page as read: its tools, and the names of those left out.
pub struct ToolsPage {
    /// The page as a whole, with only the tools that decoded.
    pub page: ListToolsResult,
    /// The tools that nest too deep or do not decode: each by its name, or by its place
    /// on the page (`#3`) when even that cannot be read.
    pub unreadable: Vec<String>,
}

/// A page with its tools still text: each element of `tools` is skipped over, not read
/// (serde_json skips without a nesting limit), so one tool nested past the limit does not
/// fail its page.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPage {
    tools: Vec<Box<RawValue>>,
    #[serde(default)]
    next_cursor: Option<String>,
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
}

/// Decodes a `tools/list` page one tool at a time (issue #37 item 12, RFC §3 **\[project\]**:
/// MCP does not say what a client does with a tool it cannot read): a tool whose schema
/// nests past serde_json's limit, or that does not decode, costs only itself. Everything
/// else on the page is read whole, so a nesting bomb beside the tools still fails it.
pub fn tools_page(method: &'static str, result: &RawValue) -> Result<ToolsPage, LinkError> {
    let raw: RawPage = decode_result(result).map_err(|e| LinkError::MalformedResult {
        method,
        detail: e.0,
    })?;
    let mut tools = Vec::with_capacity(raw.tools.len());
    let mut unreadable = Vec::new();
    for (i, text) in raw.tools.iter().enumerate() {
        match decode_result::<Tool>(text) {
            Ok(tool) => tools.push(tool),
            Err(_) => unreadable.push(name_of(text).unwrap_or_else(|| format!("#{}", i + 1))),
        }
    }
    Ok(ToolsPage {
        page: ListToolsResult {
            tools,
            next_cursor: raw.next_cursor,
            meta: raw.meta,
        },
        unreadable,
    })
}

/// A tool's `name`, read with its other members skipped over, not read (however deep).
fn name_of(tool: &RawValue) -> Option<String> {
    let members: BTreeMap<String, Box<RawValue>> = decode_result(tool).ok()?;
    decode_result(members.get("name")?).ok()
}

/// SPEC §17.4 makes the result the manifest object itself. This project's earlier versions
/// wrapped it as `{"manifest": {...}}`; such a result (no `version`, an object `manifest`
/// that has one) is read as what it wraps.
pub fn unwrap_legacy(result: Box<RawValue>) -> Box<RawValue> {
    if member(&result, "version").is_none()
        && let Some(wrapped) = member(&result, "manifest")
        && member(&wrapped, "version").is_some()
    {
        return wrapped;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::to_raw;
    use mcpl_protocol::mcp::ListToolsResult;
    use serde_json::json;

    #[test]
    fn a_tools_page_keeps_each_schema_and_refuses_what_serde_refuses() {
        let text = to_raw(&json!({"tools": [
            {"name": "a", "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            {"name": "b", "description": "B", "inputSchema": {"type": "object"}, "_meta": {"mcpl/toolset": "s"}}
        ], "nextCursor": "c2", "_meta": {"mcpl/rev": 4}}));
        let page: ListToolsResult = decode("tools/list", &text).unwrap();
        assert_eq!(page.tools.len(), 2);
        assert_eq!(
            page.tools[0].input_schema,
            json!({"type": "object", "properties": {"x": {"type": "integer"}}})
        );
        assert_eq!(page.tools[1].input_schema, json!({"type": "object"}));
        assert_eq!(page.tools[1].description.as_deref(), Some("B"));
        assert_eq!(page.next_cursor.as_deref(), Some("c2"));
        assert_eq!(page.meta.and_then(|m| m.rev), Some(4));
        // A tool without a schema, or nested past serde_json's limit, costs only itself;
        // tools that are not a list are malformed as before.
        let mut deep = json!({});
        for _ in 0..200 {
            deep = json!({ "items": deep });
        }
        let page = tools_page(
            "tools/list",
            &to_raw(&json!({"tools": [{"name": "a"}, {"inputSchema": deep}, {"name": "b", "inputSchema": {}}]})),
        )
        .unwrap();
        assert_eq!(page.unreadable, ["a", "#2"]);
        assert_eq!(page.page.tools.len(), 1);
        for bad in [
            json!({"tools": {"name": "a"}}),
            json!({"tools": [], "_meta": {"x": deep}}),
        ] {
            assert!(
                matches!(
                    tools_page("tools/list", &to_raw(&bad)).map(|p| p.page),
                    Err(LinkError::MalformedResult { .. })
                ),
                "refused"
            );
        }
    }

    /// Only a wrapped manifest is unwrapped: a manifest that has a `version` of its own, or
    /// a `manifest` member without one, is read as it is.
    #[test]
    fn a_legacy_wrapped_manifest_is_unwrapped() {
        let unwrap = |v: serde_json::Value| {
            serde_json::from_str::<serde_json::Value>(unwrap_legacy(to_raw(&v)).get()).unwrap()
        };
        let inner = json!({"version": "0.5", "featureSets": {}});
        assert_eq!(unwrap(json!({"manifest": inner})), inner);
        for kept in [
            json!({"version": "0.5", "manifest": {"version": "0.4"}}),
            json!({"manifest": {"featureSets": {}}}),
            json!({"manifest": "0.5"}),
            json!([{"manifest": {"version": "0.5"}}]),
            inner.clone(),
        ] {
            assert_eq!(unwrap(kept.clone()), kept);
        }
    }
}

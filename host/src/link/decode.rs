//! Decoding what the link reads of the server's lists: a manifest in this project's earlier
//! wrapped form.
//!
//! A result arrives as JSON text and is decoded once, straight into its method's type
//! ([`super::requests::decode`]): a `tools/list` page's schemas are built as they are read,
//! never rebuilt from a `Value` tree (issue #13 item 9, which this module once worked around).

use mcpl_protocol::jsonrpc::{RawValue, member};

/// SPEC §17.4 makes the result the manifest object itself. This project's earlier versions
/// wrapped it as `{"manifest": {...}}`; such a result (no `version`, an object `manifest`
/// that has one) is read as what it wraps.
pub(super) fn unwrap_legacy(result: Box<RawValue>) -> Box<RawValue> {
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
    use super::super::error::LinkError;
    use super::super::requests::decode;
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
        // A tool without a schema, and tools that are not a list, are malformed as before.
        for bad in [
            json!({"tools": [{"name": "a"}]}),
            json!({"tools": {"name": "a"}}),
        ] {
            assert!(
                matches!(
                    decode::<ListToolsResult>("tools/list", &to_raw(&bad)),
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

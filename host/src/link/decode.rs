//! Decoding what the link reads of the server's lists: a `tools/list` page without
//! rebuilding its schemas, and a manifest in this project's earlier wrapped form.

use super::error::LinkError;
use super::requests::decode;
use mcpl_protocol::mcp::ListToolsResult;
use mcpl_protocol::method::{ListTools, Method};
use serde_json::Value;

/// SPEC §17.4 makes the result the manifest object itself. This project's earlier versions
/// wrapped it as `{"manifest": {...}}`; such a result (no `version`, an object `manifest`
/// that has one) is read as what it wraps.
pub(super) fn unwrap_legacy(v: Value) -> Value {
    let wrapped = v.get("version").is_none()
        && v.get("manifest")
            .is_some_and(|m| m.get("version").is_some());
    match v {
        Value::Object(mut map) if wrapped => map.remove("manifest").unwrap_or_default(),
        other => other,
    }
}

/// A `tools/list` page decoded with each tool's `inputSchema` moved in as it was read:
/// serde's `from_value` would rebuild every schema's maps, most of a large page's cost
/// (issue #13 item 9). Each schema is taken out before the typed decode (a `null` in its
/// place) and put back after; the decode is otherwise serde's, so a malformed page is
/// refused exactly as before, and `Vec<Tool>` keeps the tools in the page's order.
pub(super) fn decode_tools_page(mut page: Value) -> Result<ListToolsResult, LinkError> {
    let mut schemas = Vec::new();
    if let Some(Value::Array(tools)) = page.get_mut("tools") {
        schemas = tools
            .iter_mut()
            .map(|t| {
                t.as_object_mut()
                    .and_then(|o| o.get_mut("inputSchema"))
                    .map(Value::take)
            })
            .collect();
    }
    let mut page: ListToolsResult = decode(ListTools::NAME, page)?;
    debug_assert_eq!(page.tools.len(), schemas.len());
    for (tool, schema) in page.tools.iter_mut().zip(schemas) {
        if let Some(schema) = schema {
            tool.input_schema = schema;
        }
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tools_page_keeps_each_schema_and_refuses_what_serde_refuses() {
        let page = decode_tools_page(json!({"tools": [
            {"name": "a", "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            {"name": "b", "description": "B", "inputSchema": {"type": "object"}, "_meta": {"mcpl/toolset": "s"}}
        ], "nextCursor": "c2", "_meta": {"mcpl/rev": 4}}))
        .unwrap();
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
                    decode_tools_page(bad),
                    Err(LinkError::MalformedResult { .. })
                ),
                "refused"
            );
        }
    }
}

//! A tool's `inputSchema` derived from the type its handler decodes, so the schema the
//! host validates against and the struct the handler reads cannot drift apart.

use mcpl_protocol::mcp::Tool;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The JSON Schema of `A` as a tool's `inputSchema`: JSON Schema 2020-12 (MCP's default
/// dialect, so no `$schema` member), as `A` deserialises (`#[serde(default)]` members are
/// optional, `deny_unknown_fields` gives `additionalProperties: false`), doc comments as
/// descriptions, and no `title` (the Rust type's name tells a model nothing).
///
/// MCP asks for an object schema: derive it for a struct. [`ServerBuilder::typed_tool`]
/// refuses anything else.
///
/// ```
/// use mcpl_server::input_schema;
/// use mcpl_server::schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// #[schemars(crate = "mcpl_server::schemars")]
/// #[serde(deny_unknown_fields)]
/// struct Note {
///     /// What to remember.
///     #[schemars(length(min = 1, max = 200))]
///     text: String,
/// }
///
/// let schema = input_schema::<Note>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], serde_json::json!(["text"]));
/// assert_eq!(schema["properties"]["text"]["maxLength"], 200);
/// assert_eq!(schema["additionalProperties"], false);
/// ```
///
/// [`ServerBuilder::typed_tool`]: crate::ServerBuilder::typed_tool
pub fn input_schema<A: JsonSchema>() -> Value {
    let mut schema = SchemaSettings::draft2020_12()
        .for_deserialize()
        .with(|s| s.meta_schema = None)
        .into_generator()
        .into_root_schema_for::<A>()
        .to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
    }
    schema
}

/// The arguments of a tool that takes none: `input_schema::<NoArguments>()` is an object
/// schema with no properties, and a handler may decode its (ignored) arguments as this.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, JsonSchema)]
pub struct NoArguments {}

/// A tool declared with its `inputSchema` derived from `A` ([`input_schema`]), and whether
/// that schema describes objects, as MCP asks (a builder refuses to build otherwise).
pub(crate) fn typed_declaration<A: JsonSchema>(
    name: impl Into<String>,
    description: impl Into<String>,
) -> (Tool, bool) {
    let schema = input_schema::<A>();
    let object = is_object_schema(&schema);
    (Tool::new(name.into(), description.into(), schema), object)
}

/// True when `schema` describes JSON objects, as MCP asks of an `inputSchema`.
pub(crate) fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)] // read only through its schema
    struct Move {
        /// The point, e.g. D4.
        point: String,
        #[serde(default)]
        pass: Option<bool>,
    }

    #[test]
    fn a_struct_gives_an_object_schema_with_its_required_members_and_descriptions() {
        let s = input_schema::<Move>();
        assert!(is_object_schema(&s));
        assert_eq!(s["required"], json!(["point"]));
        assert_eq!(
            s["properties"]["point"]["description"],
            "The point, e.g. D4."
        );
        assert!(s.get("title").is_none() && s.get("$schema").is_none());
    }

    #[test]
    fn no_arguments_is_an_empty_object_schema() {
        let s = input_schema::<NoArguments>();
        assert!(is_object_schema(&s), "{s}");
        assert!(s.get("required").is_none(), "{s}");
    }

    #[test]
    fn a_value_or_a_string_is_not_an_object_schema() {
        assert!(!is_object_schema(&input_schema::<String>()));
        assert!(!is_object_schema(&input_schema::<serde_json::Value>()));
    }
}

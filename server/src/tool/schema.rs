//! A tool's `inputSchema` derived from the type its handler decodes, so the schema the
//! host validates against and the struct the handler reads cannot drift apart.

use super::{ErasedHandler, ToolContext, ToolResult, Typed};
use mcpl_protocol::mcp::Tool;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

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
/// [`ServerBuilder::typed_tool`]: crate::TypedTools::typed_tool
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

/// The builders that declare a tool with a typed handler: the server's
/// ([`ServerBuilder`](crate::ServerBuilder), a plain tool) and a toolset's
/// ([`Toolset`](crate::Toolset), a tool of that toolset run outside any instance: a lobby's).
/// Bring it into scope (`use mcpl_server::TypedTools;`) to call
/// [`typed_tool`](TypedTools::typed_tool).
pub trait TypedTools: sealed::AddTyped {
    /// Declares a tool and its handler at once: `name`, `description`, and an `inputSchema`
    /// derived from `A` ([`input_schema`]), so the two cannot drift apart. MCP asks for an
    /// object schema: derive it for a struct, or take [`NoArguments`](crate::NoArguments);
    /// anything else fails the build with
    /// [`BuildError::ArgumentsNotAnObject`](crate::BuildError::ArgumentsNotAnObject). A
    /// call whose arguments do not decode as `A` is the tool error
    /// [`ToolCall::args`](crate::ToolCall::args) gives, and the handler does not run; one
    /// that does runs `handler` with the caller's [`ToolContext`] (it may act on the
    /// caller's toolsets through it). A second tool of one name fails the build.
    ///
    /// ```
    /// use mcpl_server::schemars::JsonSchema;
    /// use mcpl_server::{CallToolResult, Server, ToolContext, ToolResult, TypedTools};
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// #[schemars(crate = "mcpl_server::schemars")]
    /// struct Echo {
    ///     /// What to say back.
    ///     text: String,
    /// }
    ///
    /// let server = Server::builder("echo", "0.1.0")
    ///     .typed_tool("echo", "Says it back", |_: ToolContext, a: Echo| async move {
    ///         ToolResult::Ok(CallToolResult::text(a.text))
    ///     })
    ///     .build()
    ///     .expect("a valid server");
    /// assert_eq!(server.info().name, "echo");
    /// ```
    fn typed_tool<A, F, Fut>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        let (tool, object) = typed_declaration::<A>(name, description);
        let handler = Arc::new(Typed::<A, F>::new(tool.name.clone(), handler));
        self.add_typed(tool, object, handler)
    }
}

impl<B: sealed::AddTyped> TypedTools for B {}

pub(crate) mod sealed {
    use super::ErasedHandler;
    use mcpl_protocol::mcp::Tool;
    use std::sync::Arc;

    /// How a builder keeps a typed tool: its declaration, whether its schema is an object
    /// (the build refuses one that is not), and its handler. Sealed: only this crate's
    /// builders take typed tools.
    pub trait AddTyped: Sized {
        /// Keeps `tool`, answered by `handler`.
        fn add_typed(self, tool: Tool, object: bool, handler: Arc<dyn ErasedHandler>) -> Self;
    }
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

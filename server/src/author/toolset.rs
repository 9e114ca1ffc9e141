//! [`Toolset`]: a toolset as a server author declares it — its manifest declaration
//! (§4.1), its tools, and the logic of its instances.

use super::context::InstanceContext;
use super::durable::{Durable, RestoreFn, restore_fn, restore_with};
use super::logic::{InstanceLogic, Opening, Refusal, Reply};
use super::route::{Call, Route, Routes};
use super::started::{OpenFn, Started, ToolsetLogic};
use crate::core::ToolDecl;
use crate::tool::{AddTyped, ErasedHandler, input_schema, is_object_schema, typed_declaration};
use mcpl_protocol::mcp::{Tool, ToolAnnotations};
use mcpl_protocol::toolsets::{ToolsetDecl, ToolsetDefault};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

/// A toolset: declaration, tools and logic. Hand it to
/// [`ServerBuilder::toolset`](crate::ServerBuilder::toolset); the server checks it when it
/// is built (§4.1: names, `instances` with `default: "open"`, an options schema that
/// compiles) and refuses to start naming what is wrong.
///
/// A toolset's tools are dynamic (§3) and answered by its logic, one instance at a time.
/// A toolset declared without logic opens plain instances whose tools must have handlers
/// of their own: declared here with [`TypedTools::typed_tool`](crate::TypedTools::typed_tool) (or
/// [`ServerBuilder::tool`](crate::ServerBuilder::tool) with `mcpl/toolset`).
///
/// Its tools are best declared as typed routes ([`Toolset::route`]): each once, with its
/// name, description, argument type (the `inputSchema` derived from it) and handler, and
/// its options the same way ([`Toolset::on_open_with`]):
///
/// ```
/// use mcpl_server::schemars::JsonSchema;
/// use mcpl_server::{InstanceLogic, Reply, Started, Toolset};
/// use serde::Deserialize;
///
/// struct Counter(u64);
/// impl InstanceLogic for Counter {}
///
/// #[derive(Deserialize, JsonSchema)]
/// #[schemars(crate = "mcpl_server::schemars")]
/// struct By {
///     /// How much to add.
///     by: u64,
/// }
///
/// #[derive(Deserialize, JsonSchema)]
/// #[schemars(crate = "mcpl_server::schemars")]
/// struct Start {
///     /// Where to start (default 0).
///     from: Option<u64>,
/// }
///
/// let counter = Toolset::new("counter")
///     .instances()
///     .route("count", "Adds `by`", |c: &mut Counter, args: By, _, _| {
///         c.0 += args.by;
///         Reply::text(format!("Count: {}", c.0))
///     })
///     .on_open_with(|start: Start, _, _| Ok(Started::new(Counter(start.from.unwrap_or(0)))));
/// assert_eq!(counter.declaration().options.as_ref().unwrap()["type"], "object");
/// ```
#[derive(Clone)]
pub struct Toolset {
    pub(crate) name: String,
    pub(crate) decl: ToolsetDecl,
    pub(crate) tools: Vec<ToolDecl>,
    pub(crate) logic: Option<Arc<dyn ToolsetLogic>>,
    /// How its instances' logic is read back after a restart (`Toolset::durable`).
    pub(crate) restore: Option<RestoreFn>,
    /// Its tools' typed handlers (`route.rs`).
    pub(crate) routes: Routes,
    /// Its tools answered by handlers of their own, outside any instance
    /// ([`TypedTools::typed_tool`](crate::TypedTools::typed_tool)); the builder moves them among the server's handlers.
    pub(crate) handlers: Vec<(String, Arc<dyn ErasedHandler>)>,
    /// The first route or options type whose schema is not an object schema: the build
    /// refuses it.
    pub(crate) not_an_object: Option<String>,
}

impl Toolset {
    /// A toolset named `name` (§4.1 grammar: `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`), closed
    /// by default, without instances, options or tools.
    pub fn new(name: impl Into<String>) -> Self {
        Toolset {
            name: name.into(),
            decl: ToolsetDecl::default(),
            tools: Vec::new(),
            logic: None,
            restore: None,
            routes: Routes::default(),
            handlers: Vec::new(),
            not_an_object: None,
        }
    }

    /// Its title, for the host's catalog and reminders.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.decl.title = Some(title.into());
        self
    }

    /// Its summary, for the host's catalog and reminders.
    pub fn summary(mut self, summary: impl Into<String>) -> Self {
        self.decl.summary = Some(summary.into());
        self
    }

    /// `default: "open"`: open from the start of every session (§4.1, vector 25). Invalid
    /// together with [`Toolset::instances`].
    pub fn open_by_default(mut self) -> Self {
        self.decl.default = ToolsetDefault::Open;
        self
    }

    /// `instances: true`: opened any number of times, each a named instance (a game).
    pub fn instances(mut self) -> Self {
        self.decl.instances = true;
        self
    }

    /// The JSON Schema `toolsets/open` options are checked against (§4.2).
    pub fn options(mut self, schema: Value) -> Self {
        self.decl.options = Some(schema);
        self
    }

    /// Adds a tool, visible in each new instance unless its `_meta` (or the [`crate::ToolDecl`])
    /// says `mcpl/visible: false`.
    pub fn tool(mut self, tool: impl Into<ToolDecl>) -> Self {
        self.tools.push(tool.into().in_toolset(self.name.clone()));
        self
    }

    /// Adds a tool that starts invisible in each new instance (the logic shows it).
    pub fn hidden_tool(self, tool: impl Into<ToolDecl>) -> Self {
        let tool = tool.into().initially_visible(false);
        self.tool(tool)
    }

    /// Declares a tool and its handler at once: `name`, `description`, and an
    /// `inputSchema` derived from `A` ([`input_schema`]; MCP asks for an object schema,
    /// so derive it for a struct, or take [`NoArguments`](crate::NoArguments)). A call
    /// decodes its arguments as `A` — a mismatch is the tool error
    /// [`ToolCall::args`](crate::ToolCall::args) gives, and the handler does not run — and
    /// runs `handler` on the instance's logic `L` (the type its open returns in
    /// [`Started`]), with the [`Call`] (id and caller) and the context.
    ///
    /// The tool is visible in each new instance; [`Toolset::hidden`] after it makes it start
    /// invisible. A routed
    /// tool never reaches [`InstanceLogic::call`].
    pub fn route<L, A, F>(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        L: InstanceLogic,
        A: DeserializeOwned + JsonSchema + 'static,
        F: Fn(&mut L, A, Call, &mut InstanceContext) -> Reply + Send + Sync + 'static,
    {
        let (tool, object) = typed_declaration::<A>(name, description);
        if !object {
            self.not_an_object.get_or_insert_with(|| tool.name.clone());
        }
        // A second route of one name is a second tool of that name: the build refuses it.
        self.routes.insert(tool.name.clone(), Route::new(handler));
        self.tool(tool)
    }

    /// Makes the tool declared last start invisible in each new instance (the logic shows
    /// it: a move on a player's turn), as [`Toolset::hidden_tool`] declares one.
    pub fn hidden(mut self) -> Self {
        if let Some(last) = self.tools.pop() {
            self.tools.push(last.initially_visible(false));
        }
        self
    }

    /// Sets the annotations (`readOnlyHint`, …) of the tool declared last.
    pub fn annotated(mut self, annotations: ToolAnnotations) -> Self {
        if let Some(last) = self.tools.pop() {
            self.tools.push(last.annotated(annotations));
        }
        self
    }

    /// The logic of its instances.
    pub fn logic(mut self, logic: impl ToolsetLogic) -> Self {
        self.logic = Some(Arc::new(logic));
        self
    }

    /// The logic of its instances, as the closure that opens one.
    pub fn on_open<F>(self, open: F) -> Self
    where
        F: Fn(Opening, &mut InstanceContext) -> Result<Started, Refusal> + Send + Sync + 'static,
    {
        self.logic(OpenFn(open))
    }

    /// The logic of its instances, as the closure that opens one from typed options: the
    /// options schema (§4.2) is derived from `O` as [`input_schema`] derives a tool's (an
    /// object schema; a host without `toolHints` opens with none, §8, so give `O` no
    /// required member to let it), and the validated options are decoded as `O` (a
    /// mismatch refuses the open naming it, as [`Opening::options_as`] does).
    pub fn on_open_with<O, F>(mut self, open: F) -> Self
    where
        O: DeserializeOwned + JsonSchema + 'static,
        F: Fn(O, Opening, &mut InstanceContext) -> Result<Started, Refusal> + Send + Sync + 'static,
    {
        let schema = input_schema::<O>();
        if !is_object_schema(&schema) {
            self.not_an_object.get_or_insert_with(|| self.name.clone());
        }
        self.options(schema).on_open(move |opening, cx| {
            let options = opening.options_as::<O>()?;
            open(options, opening, cx)
        })
    }

    /// Its instances' logic is a [`Durable`] `T` (opened with
    /// [`Started::durable`]): after a restart of a server with a
    /// [`Store`](crate::Store), each is read back as a `T` and goes on where it was (issue
    /// #15). Without it, its instances end at a restart, each with an ended record.
    pub fn durable<T: Durable + DeserializeOwned>(mut self) -> Self {
        self.restore = Some(restore_fn::<T>());
        self
    }

    /// As [`Toolset::durable`], each instance's logic read back by `read` from its format
    /// and serde value: for logic that holds something not serialized (what its toolset
    /// shares: `read` captures it), or to read older formats. An `Err` ends the instance
    /// with an ended record giving the reason.
    pub fn durable_with<T, F>(mut self, read: F) -> Self
    where
        T: Durable,
        F: Fn(u32, Value) -> Result<T, String> + Send + Sync + 'static,
    {
        self.restore = Some(restore_with(read));
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its declaration, as the manifest will carry it.
    pub fn declaration(&self) -> &ToolsetDecl {
        &self.decl
    }
}

impl std::fmt::Debug for Toolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolset")
            .field("name", &self.name)
            .field("decl", &self.decl)
            .field(
                "tools",
                &self.tools.iter().map(ToolDecl::name).collect::<Vec<_>>(),
            )
            .field("logic", &self.logic.is_some())
            .field("routes", &self.routes)
            .finish()
    }
}

/// A tool of this toolset answered by a handler of its own
/// ([`TypedTools::typed_tool`](crate::TypedTools::typed_tool)), run outside any instance:
/// for the tools of a toolset without logic (a lobby); a toolset with logic takes
/// [`Toolset::route`] for tools that run on its instances.
impl AddTyped for Toolset {
    fn add_typed(mut self, tool: Tool, object: bool, handler: Arc<dyn ErasedHandler>) -> Self {
        if !object {
            self.not_an_object.get_or_insert_with(|| tool.name.clone());
        }
        // A second handler of one name is a second tool of that name: the build refuses it.
        self.handlers.push((tool.name.clone(), handler));
        self.tool(tool)
    }
}

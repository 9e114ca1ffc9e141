//! [`Toolset`]: a toolset as a server author declares it — its manifest declaration
//! (§4.1), its tools, and the logic of its instances.

use super::context::InstanceContext;
use super::durable::{Durable, RestoreFn, restore_fn, restore_with};
use super::logic::{Opening, Refusal};
use super::started::{OpenFn, Started, ToolsetLogic};
use crate::core::ToolDecl;
use mcpl_protocol::toolsets::{ToolsetDecl, ToolsetDefault};
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
/// of their own ([`ServerBuilder::tool`](crate::ServerBuilder::tool) with `mcpl/toolset`).
#[derive(Clone)]
pub struct Toolset {
    pub(crate) name: String,
    pub(crate) decl: ToolsetDecl,
    pub(crate) tools: Vec<ToolDecl>,
    pub(crate) logic: Option<Arc<dyn ToolsetLogic>>,
    /// How its instances' logic is read back after a restart (`Toolset::durable`).
    pub(crate) restore: Option<RestoreFn>,
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
            .finish()
    }
}

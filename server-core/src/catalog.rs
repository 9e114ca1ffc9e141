//! The server's tools with their declared hints, and its toolset declarations (§3, §4.1).
//!
//! A [`Catalog`] is built once at start-up (and again on a manifest change) and shared,
//! read-only, by every principal (`Arc<Catalog>`). It is checked as it is built; a server
//! refuses to start with a catalog that [`Catalog::new`] refuses, and the error names the
//! offending toolset or tool:
//!
//! | rule | spec | error |
//! |---|---|---|
//! | toolset names fit the grammar `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$` | §4.1 | [`CatalogError::Toolset`] |
//! | `instances: true` with `default: "open"` is invalid | §4.1 **\[project\]** | [`CatalogError::Toolset`] |
//! | an options schema uses only identifier member names (no `$ref`, …) | §4.1 | [`CatalogError::Toolset`] |
//! | an options schema compiles | §4.2 | [`CatalogError::OptionsSchema`] |
//! | tool names are unique, and fit MCP's tool-name rule | MCP | [`CatalogError::DuplicateTool`], [`CatalogError::BadToolName`] |
//! | a tool's `mcpl/toolset` fits the grammar (declared or not: hosts put it in markers) | §4.1, §4.4 | [`CatalogError::BadToolsetName`] |
//! | a tool of a toolset with `instances` declares no `instance` argument | §8 | [`CatalogError::InstanceArgument`] |
//! | no tool takes the name of a compat tool (`toolset_open`, `toolset_close`) | §8 | [`CatalogError::ReservedToolName`] |
//! | every input schema is a JSON object | MCP | [`CatalogError::InputSchemaNotObject`] |
//!
//! Per tool, the declared hints are read from the tool's `_meta` as a server author writes
//! it (or set with [`ToolDecl`]'s builder) and stripped from the stored definition, so what
//! each host is shown is computed, never copied: `mcpl/toolset` **implies dynamic** even
//! when `mcpl/presence: "static"` is declared (§3, vector 16), and a declared
//! `mcpl/visible` is the tool's visibility when it starts (in each new instance of its
//! toolset, or for the principal when it belongs to no declared toolset).
//!
//! What a host is shown lives in `tailor` (§3, §8), manifest members and diffs in
//! `diff` (§4.1).

mod diff;
mod tailor;
#[cfg(test)]
pub(crate) mod tests;

pub use diff::ManifestDiff;
pub use tailor::{HostView, INSTANCE_ARG, PlainCall, TOOLSET_CLOSE, TOOLSET_OPEN};

use jsonschema::Validator;
use mcpl_protocol::hints::{Presence, ToolDefinition};
use mcpl_protocol::mcp::Tool;
use mcpl_protocol::meta::Meta;
use mcpl_protocol::names::{NameError, check_name};
use mcpl_protocol::toolsets::{DeclError, Surface, ToolsetDecl};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The longest tool name MCP allows (MCP 2025-11-25, tool names).
const MAX_TOOL_NAME_LEN: usize = 128;

/// A tool as the server declares it, with its RFC-014 hints (§3).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDecl {
    /// The declared definition; its `_meta` keeps only non-hint keys (`mcpl/class`, …).
    tool: Tool,
    /// `mcpl/presence` as declared; the effective presence is [`ToolDecl::presence`].
    declared_presence: Option<Presence>,
    /// `mcpl/visible` as declared (default true): the starting visibility.
    visible: bool,
    /// `mcpl/toolset`.
    toolset: Option<String>,
}

impl ToolDecl {
    /// Takes a tool as a server author writes it: hints in its `_meta` (`mcpl/presence`,
    /// `mcpl/visible`, `mcpl/toolset`, §3) are read and removed from the stored definition;
    /// other `_meta` keys are kept.
    pub fn new(mut tool: Tool) -> Self {
        let meta = tool.meta.take().unwrap_or_default();
        let (declared_presence, visible, toolset) =
            (meta.presence, meta.visible.unwrap_or(true), meta.toolset);
        // Keys that only make sense elsewhere (rev, hints, instance) are dropped with the hints.
        if !meta.other.is_empty() {
            tool.meta = Some(Meta {
                other: meta.other,
                ..Default::default()
            });
        }
        ToolDecl {
            tool,
            declared_presence,
            visible,
            toolset,
        }
    }

    /// Declares the tool dynamic (`mcpl/presence: "dynamic"`).
    pub fn dynamic(mut self) -> Self {
        self.declared_presence = Some(Presence::Dynamic);
        self
    }

    /// Puts the tool in a toolset (`mcpl/toolset`); this makes it dynamic (§3).
    pub fn in_toolset(mut self, toolset: impl Into<String>) -> Self {
        self.toolset = Some(toolset.into());
        self
    }

    /// Sets the starting visibility (`mcpl/visible`; default true).
    pub fn initially_visible(mut self, visible: bool) -> Self {
        self.visible = visible;
        self
    }

    /// Sets the tool's annotations (`readOnlyHint`, …).
    pub fn annotated(mut self, annotations: mcpl_protocol::mcp::ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.tool.name
    }

    /// The declared definition, without hint `_meta`.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// The effective presence: dynamic when the tool names a toolset, whatever it declared
    /// (§3, vector 16); otherwise as declared, static by default.
    pub fn presence(&self) -> Presence {
        if self.toolset.is_some() {
            Presence::Dynamic
        } else {
            self.declared_presence.unwrap_or(Presence::Static)
        }
    }

    /// True when the tool is dynamic.
    pub fn is_dynamic(&self) -> bool {
        self.presence() == Presence::Dynamic
    }

    /// The toolset it names, declared or not (§4.4: an undeclared one is a host-gated group).
    pub fn toolset(&self) -> Option<&str> {
        self.toolset.as_deref()
    }

    /// The starting visibility.
    pub fn is_initially_visible(&self) -> bool {
        self.visible
    }

    /// The declared definition as a hint `definition` value (§5.1): only `description`,
    /// `inputSchema` and `annotations` change a tool; `name` is repeated for readers.
    pub fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: Some(self.tool.name.clone()),
            description: self.tool.description.clone(),
            input_schema: Some(self.tool.input_schema.clone()),
            annotations: self.tool.annotations.clone(),
            meta: None,
        }
    }
}

impl From<Tool> for ToolDecl {
    fn from(tool: Tool) -> Self {
        ToolDecl::new(tool)
    }
}

/// Why a catalog is refused at start-up. Every variant is the server's own mistake (local
/// misuse) and names the toolset or tool at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// A toolset declaration is invalid (§4.1): its name, `instances` with
    /// `default: "open"`, or its options schema's member names.
    #[error(transparent)]
    Toolset(#[from] DeclError),
    /// A toolset's options schema does not compile (§4.2).
    #[error("toolset {toolset:?}: options schema does not compile: {problem}")]
    OptionsSchema {
        /// The toolset.
        toolset: String,
        /// What the schema compiler said.
        problem: String,
    },
    /// A tool name does not fit MCP's rule (1 to 128 of `A-Z a-z 0-9 _ - .`).
    #[error("tool {0:?}: a tool name is 1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.'")]
    BadToolName(String),
    /// Two tools share a name.
    #[error("tool {0:?} is declared twice")]
    DuplicateTool(String),
    /// A tool takes the name of a compat tool shown to hosts without `toolHints` (§8).
    #[error("tool {0:?}: the name is reserved for the compat tools of hosts without toolHints")]
    ReservedToolName(String),
    /// A tool's input schema is not a JSON object (or its `properties` is not one).
    #[error("tool {0:?}: inputSchema (and its properties) must be JSON objects")]
    InputSchemaNotObject(String),
    /// A tool's `mcpl/toolset` does not fit the name grammar (§4.1).
    #[error("tool {tool:?}: toolset name {toolset:?}: {error}")]
    BadToolsetName {
        /// The tool.
        tool: String,
        /// The name it gave.
        toolset: String,
        /// What is wrong with it.
        error: NameError,
    },
    /// A tool of a toolset with `instances` declares an `instance` argument, which hosts
    /// without `toolHints` use to choose an instance (§8).
    #[error(
        "tool {tool:?} of toolset {toolset:?}: an instanced toolset's tool cannot declare an `instance` argument"
    )]
    InstanceArgument {
        /// The tool.
        tool: String,
        /// Its toolset.
        toolset: String,
    },
}

/// A declared toolset, with what the catalog derives from it.
#[derive(Debug)]
struct ToolsetEntry {
    decl: ToolsetDecl,
    /// The compiled options schema (§4.2), when one is declared.
    validator: Option<Arc<Validator>>,
    /// Its tools, in declaration order.
    tools: Vec<String>,
}

/// The server's tools and toolset declarations, checked (module docs list the rules).
#[derive(Debug)]
pub struct Catalog {
    tool_hints: bool,
    tools: Vec<ToolDecl>,
    by_name: HashMap<String, usize>,
    toolsets: BTreeMap<String, ToolsetEntry>,
    surface: Option<Surface>,
    plain_hosts: PlainHosts,
}

/// What a host without `toolHints` is offered of the toolsets it cannot open itself (§8:
/// the RFC lets a server choose).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PlainHosts {
    /// **\[project\]** `toolset_open`/`toolset_close` and an `instance` argument on each
    /// instance-bound tool, so such a host can play (vectors 26, 36). The default.
    #[default]
    CompatTools,
    /// Leave those toolsets out: such a host is shown only the tools outside them and those
    /// of the toolsets implicitly open for it.
    LeaveOut,
}

impl Catalog {
    /// Checks and builds a catalog of a server that advertises `toolHints` (§2).
    pub fn new(
        tools: Vec<ToolDecl>,
        toolsets: BTreeMap<String, ToolsetDecl>,
        surface: Option<Surface>,
    ) -> Result<Self, CatalogError> {
        let mut entries = BTreeMap::new();
        for (name, decl) in toolsets {
            decl.check(&name)?; // §4.1: grammar, instances + default open, schema member names
            let validator = match &decl.options {
                Some(schema) => Some(Arc::new(jsonschema::validator_for(schema).map_err(
                    |e| CatalogError::OptionsSchema {
                        toolset: name.clone(),
                        problem: e.to_string(),
                    },
                )?)),
                None => None,
            };
            entries.insert(
                name,
                ToolsetEntry {
                    decl,
                    validator,
                    tools: Vec::new(),
                },
            );
        }

        let mut by_name = HashMap::new();
        for (i, t) in tools.iter().enumerate() {
            let name = t.name();
            if !is_valid_tool_name(name) {
                return Err(CatalogError::BadToolName(name.to_owned()));
            }
            if name == TOOLSET_OPEN || name == TOOLSET_CLOSE {
                return Err(CatalogError::ReservedToolName(name.to_owned()));
            }
            if by_name.insert(name.to_owned(), i).is_some() {
                return Err(CatalogError::DuplicateTool(name.to_owned()));
            }
            let not_object = || CatalogError::InputSchemaNotObject(name.to_owned());
            let properties = match t
                .tool
                .input_schema
                .as_object()
                .ok_or_else(not_object)?
                .get("properties")
            {
                None => None,
                Some(Value::Object(p)) => Some(p),
                Some(_) => return Err(not_object()),
            };
            if let Some(ts) = t.toolset() {
                check_name(ts).map_err(|error| CatalogError::BadToolsetName {
                    tool: name.to_owned(),
                    toolset: ts.to_owned(),
                    error,
                })?;
                if let Some(entry) = entries.get_mut(ts) {
                    // §8: hosts without toolHints choose an instance through this argument.
                    if entry.decl.instances
                        && properties.is_some_and(|p| p.contains_key(INSTANCE_ARG))
                    {
                        return Err(CatalogError::InstanceArgument {
                            tool: name.to_owned(),
                            toolset: ts.to_owned(),
                        });
                    }
                    entry.tools.push(name.to_owned());
                }
            }
        }
        Ok(Catalog {
            tool_hints: true,
            tools,
            by_name,
            toolsets: entries,
            surface,
            plain_hosts: PlainHosts::default(),
        })
    }

    /// The same catalog offering hosts without `toolHints` `plain_hosts` (§8).
    pub fn with_plain_hosts(mut self, plain_hosts: PlainHosts) -> Self {
        self.plain_hosts = plain_hosts;
        self
    }

    /// The same catalog with `toolHints` withdrawn (§4.1, vector 34): every host is then
    /// shown plain tools, and the manifest carries no RFC-014 member.
    pub fn without_tool_hints(mut self) -> Self {
        self.tool_hints = false;
        self
    }

    /// True when the server advertises `toolHints` (§2).
    pub fn tool_hints(&self) -> bool {
        self.tool_hints
    }

    /// The server-level surface (§10).
    #[cfg(test)]
    pub fn surface(&self) -> Option<&Surface> {
        self.surface.as_ref()
    }

    /// Every tool, in declaration order.
    pub fn tools(&self) -> impl Iterator<Item = &ToolDecl> {
        self.tools.iter()
    }

    /// The tool of this name.
    pub fn tool(&self, name: &str) -> Option<&ToolDecl> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The declared toolsets, by name.
    pub fn toolsets(&self) -> impl Iterator<Item = (&str, &ToolsetDecl)> {
        self.toolsets.iter().map(|(n, e)| (n.as_str(), &e.decl))
    }

    /// The declaration of this toolset.
    pub fn toolset(&self, name: &str) -> Option<&ToolsetDecl> {
        self.toolsets.get(name).map(|e| &e.decl)
    }

    /// The declared toolset this tool belongs to; `None` for a tool outside declared
    /// toolsets (no `mcpl/toolset`, or an undeclared one: §4.4, the host gates those).
    pub fn declared_toolset_of(&self, tool: &str) -> Option<&str> {
        let ts = self.tool(tool)?.toolset()?;
        self.toolsets.contains_key(ts).then_some(ts)
    }

    /// The tools of a declared toolset, in declaration order (empty for an unknown one).
    pub fn tools_of(&self, toolset: &str) -> &[String] {
        self.toolsets
            .get(toolset)
            .map_or(&[], |e| e.tools.as_slice())
    }

    /// True when the toolset is declared with `instances` (§4.1).
    pub fn is_instanced(&self, toolset: &str) -> bool {
        self.toolset(toolset).is_some_and(|d| d.instances)
    }

    /// Toolsets open from the start of every session (§4.1, vector 25), in name order.
    pub fn default_open(&self) -> impl Iterator<Item = &str> {
        self.toolsets
            .iter()
            .filter(|(_, e)| e.decl.is_default_open())
            .map(|(n, _)| n.as_str())
    }

    /// Toolsets implicitly open for a host without `toolHints` (§8 **\[project\]**): no
    /// instances, and options with no required member. This core also asks that `{}` pass
    /// the options schema, so that the implicit open (without options) cannot fail.
    /// The actor opens these for the principal when such a host connects; opening what is
    /// open adopts, so doing it per connection is harmless.
    pub fn implicitly_open(&self) -> impl Iterator<Item = &str> {
        self.toolsets
            .keys()
            .map(String::as_str)
            .filter(|n| self.is_implicitly_open(n))
    }

    fn is_implicitly_open(&self, toolset: &str) -> bool {
        self.toolsets.get(toolset).is_some_and(|e| {
            !e.decl.instances
                && !e.decl.requires_options()
                && self.validate_options(toolset, None).is_ok()
        })
    }

    /// Checks `toolsets/open` options against the toolset's declared schema (§4.2).
    /// Absent options are checked as `{}`; options are always an object. Without a
    /// declared schema any object passes. On failure, the problems (at most
    /// [`MAX_OPTION_PROBLEMS`]), each with where it is, for a -32602 that names them.
    pub fn validate_options(
        &self,
        toolset: &str,
        options: Option<&Value>,
    ) -> Result<(), Vec<OptionsProblem>> {
        let empty = Value::Object(Map::new());
        let options = options.unwrap_or(&empty);
        if !options.is_object() {
            return Err(vec![OptionsProblem {
                at: String::new(),
                problem: "options must be a JSON object".into(),
            }]);
        }
        let Some(validator) = self
            .toolsets
            .get(toolset)
            .and_then(|e| e.validator.as_ref())
        else {
            return Ok(());
        };
        let problems: Vec<OptionsProblem> = validator
            .iter_errors(options)
            .take(MAX_OPTION_PROBLEMS)
            .map(|e| OptionsProblem {
                at: e.instance_path.to_string(),
                problem: e.to_string(),
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

/// The most option problems one refusal names; the first few are enough to fix a request.
pub const MAX_OPTION_PROBLEMS: usize = 3;

/// One way `toolsets/open` options fail their schema (§4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionsProblem {
    /// Where, as a JSON pointer into the options (empty: the options as a whole).
    pub at: String,
    /// What is wrong, in the schema validator's words.
    pub problem: String,
}

impl std::fmt::Display for OptionsProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.at.is_empty() {
            f.write_str(&self.problem)
        } else {
            write!(f, "at {}: {}", self.at, self.problem)
        }
    }
}

/// MCP 2025-11-25: a tool name is 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

//! What a host is shown (§3, §8), and how a plain host's calls are read back (§8).
//!
//! - **A host with `toolHints`** (both sides advertised it, §2) gets every tool, visible or
//!   not (vector 1), with hint `_meta`: `mcpl/presence` (effective: `mcpl/toolset` implies
//!   dynamic, vector 16), `mcpl/visible` (for a toolset's tool: visible in at least one
//!   open instance of the principal, §3) and `mcpl/toolset`, over the **declared**
//!   definitions; the result names the connection's last rev as `_meta["mcpl/rev"]`.
//! - **A host without `toolHints`** (§8, vectors 26, 36) gets plain MCP tools with no hint
//!   `_meta` and no `mcpl/rev`. Toolsets without instances whose options can be left out
//!   are implicitly open ([`Catalog::implicitly_open`]); for the others the list gains two
//!   static tools, [`TOOLSET_OPEN`] `{toolset, instance?, options?}` and [`TOOLSET_CLOSE`]
//!   `{toolset, instance?}`, and every instance-bound tool gains an optional
//!   [`INSTANCE_ARG`] string argument. [`Catalog::plain_call`] turns such a host's
//!   `tools/call` back into an open, a close, or a tool call with its instance.

use super::{Catalog, PlainHosts};
use mcpl_protocol::mcp::{CallToolResult, ListToolsResult, Tool};
use mcpl_protocol::meta::Meta;
use mcpl_protocol::names::MAX_NAME_LEN;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The compat tool that opens a toolset for a host without `toolHints` (§8).
pub const TOOLSET_OPEN: &str = "toolset_open";
/// The compat tool that closes a toolset for a host without `toolHints` (§8).
pub const TOOLSET_CLOSE: &str = "toolset_close";
/// The argument an instance-bound tool gains for a host without `toolHints` (§8).
pub const INSTANCE_ARG: &str = "instance";

/// Which list a connection is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostView {
    /// Server and host both advertised `toolHints` (§2): hints and toolsets.
    Hinted,
    /// Either did not: plain tools, implicit opens, compat tools (§8).
    Plain,
}

/// A plain host's `tools/call`, read back (§8).
#[derive(Debug, Clone, PartialEq)]
pub enum PlainCall {
    /// [`TOOLSET_OPEN`]: open as `toolsets/open` would.
    Open {
        /// The toolset.
        toolset: String,
        /// A proposed instance name (§4.2: used as given or refused).
        instance: Option<String>,
        /// Options, to check against the declared schema.
        options: Option<Value>,
    },
    /// [`TOOLSET_CLOSE`]: close as `toolsets/close` would.
    Close {
        /// The toolset.
        toolset: String,
        /// The instance (required when several are open, §4.2).
        instance: Option<String>,
    },
    /// Any other tool, with the [`INSTANCE_ARG`] taken out of the arguments of an
    /// instance-bound tool; resolve it with `PrincipalState::resolve_call` (§4.5).
    Tool {
        /// The tool.
        name: String,
        /// The instance the host chose, if any.
        instance: Option<String>,
        /// The tool's own arguments.
        arguments: Option<Map<String, Value>>,
    },
}

/// Why a plain host's call of a compat tool (or its `instance` argument) is refused. The
/// host's model sent it, so it becomes a tool error it can read and correct (MCP
/// 2025-11-25: argument errors are tool execution errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlainCallError {
    /// A required argument is missing.
    #[error("{tool}: the argument `{argument}` is required")]
    Missing {
        /// The tool called.
        tool: String,
        /// The argument.
        argument: &'static str,
    },
    /// An argument has the wrong JSON type.
    #[error("{tool}: the argument `{argument}` must be {expected}")]
    WrongType {
        /// The tool called.
        tool: String,
        /// The argument.
        argument: String,
        /// What it must be ("a string", "an object").
        expected: &'static str,
    },
    /// A compat tool got an argument it does not take.
    #[error("{tool}: unknown argument `{argument}`")]
    Unexpected {
        /// The tool called.
        tool: String,
        /// The argument.
        argument: String,
    },
}

impl PlainCallError {
    /// The tool result this refusal is answered with (`isError: true`, saying why).
    pub fn to_tool_result(&self) -> CallToolResult {
        CallToolResult::error(self.to_string())
    }
}

impl Catalog {
    /// The view a connection gets: hinted only when both sides advertised `toolHints` (§2).
    pub fn view_for(&self, host_tool_hints: bool) -> HostView {
        if self.tool_hints && host_tool_hints {
            HostView::Hinted
        } else {
            HostView::Plain
        }
    }

    /// The `tools/list` result for a connection: `visible` is the principal's
    /// `coarse_visibility()` (only the hinted view reads it), `last_rev` the connection's
    /// `Sequencer::last()` (§3: the list takes no rev and names the last one taken).
    pub fn list_tools(
        &self,
        view: HostView,
        visible: &BTreeSet<String>,
        last_rev: u64,
    ) -> ListToolsResult {
        match view {
            HostView::Hinted => ListToolsResult {
                tools: self.hinted_tools(visible),
                next_cursor: None,
                meta: Some(Meta {
                    rev: Some(last_rev),
                    ..Default::default()
                }),
            },
            HostView::Plain => ListToolsResult {
                tools: self.plain_tools(),
                next_cursor: None,
                meta: None,
            },
        }
    }

    /// Every tool, visible or not (vector 1), with its hint `_meta` over the declared
    /// definition (§3). A tool is visible when `visible` names it.
    pub fn hinted_tools(&self, visible: &BTreeSet<String>) -> Vec<Tool> {
        self.tools
            .iter()
            .map(|d| {
                let mut tool = d.tool().clone();
                let mut meta = tool.meta.take().unwrap_or_default();
                meta.presence = Some(d.presence());
                meta.visible = Some(visible.contains(d.name()));
                meta.toolset = d.toolset().map(str::to_owned);
                tool.meta = Some(meta);
                tool
            })
            .collect()
    }

    /// Plain MCP tools (§8): no hint `_meta`, an optional [`INSTANCE_ARG`] on instance-bound
    /// tools, and the compat tools when some toolset is not implicitly open — or, with
    /// [`PlainHosts::LeaveOut`], without the tools of those toolsets at all.
    pub fn plain_tools(&self) -> Vec<Tool> {
        let explicit = self.explicit_toolsets();
        let leave_out = self.plain_hosts == PlainHosts::LeaveOut;
        let mut tools: Vec<Tool> = self
            .tools
            .iter()
            .filter(|d| {
                !leave_out
                    || self
                        .declared_toolset_of(d.name())
                        .is_none_or(|ts| !explicit.contains(&ts))
            })
            .map(|d| {
                let mut tool = d.tool().clone();
                if let Some(ts) = self
                    .declared_toolset_of(d.name())
                    .filter(|ts| self.is_instanced(ts))
                {
                    add_instance_argument(&mut tool, ts);
                }
                tool
            })
            .collect();
        if !explicit.is_empty() && !leave_out {
            tools.push(self.open_tool(&explicit));
            tools.push(self.close_tool(&explicit));
        }
        tools
    }

    /// Declared toolsets a plain host opens through [`TOOLSET_OPEN`] (§8).
    fn explicit_toolsets(&self) -> Vec<&str> {
        self.toolsets
            .keys()
            .map(String::as_str)
            .filter(|ts| !self.is_implicitly_open(ts))
            .collect()
    }

    fn open_tool(&self, explicit: &[&str]) -> Tool {
        let mut description = String::from(
            "Open a toolset so that its tools can be used. Opening one that is already open \
             reuses it. Toolsets:\n",
        );
        for ts in explicit {
            let decl = self.toolset(ts).expect("explicit toolsets are declared");
            let _ = write!(description, "- {ts}");
            for part in [&decl.title, &decl.summary].into_iter().flatten() {
                let _ = write!(description, ": {part}");
            }
            if decl.instances {
                description.push_str(" (several may be open at once, each a named instance)");
            }
            if let Some(schema) = &decl.options {
                let _ = write!(description, "; options: {schema}");
            }
            description.push('\n');
        }
        let schema = compat_schema(
            explicit,
            "open",
            json!({
                "instance": {
                    "type": "string",
                    "pattern": name_pattern(),
                    "description": "For a toolset with instances: a name for the new instance (opening \
                                    a name that is open reuses it). Left out, the server picks one."
                },
                "options": {"type": "object", "description": "The toolset's options (see above)."}
            }),
        );
        Tool::new(TOOLSET_OPEN, description.trim_end(), schema)
    }

    fn close_tool(&self, explicit: &[&str]) -> Tool {
        let schema = compat_schema(
            explicit,
            "close",
            json!({
                "instance": {
                    "type": "string",
                    "description": "For a toolset with instances: which one; may be left out when only one is open."
                }
            }),
        );
        Tool::new(
            TOOLSET_CLOSE,
            "Close an open toolset (a game in progress is resigned). Its tools stop working.",
            schema,
        )
    }

    /// Reads a plain host's `tools/call` (§8): the compat tools become opens and closes; an
    /// instance-bound tool's [`INSTANCE_ARG`] is taken out of its arguments. Unknown tool
    /// names pass through as [`PlainCall::Tool`] (resolving them refuses them).
    pub fn plain_call(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<PlainCall, PlainCallError> {
        let offers_compat =
            self.plain_hosts == PlainHosts::CompatTools && !self.explicit_toolsets().is_empty();
        match name {
            TOOLSET_OPEN if offers_compat => {
                let mut args =
                    CompatArgs::new(name, arguments, &["toolset", "instance", "options"])?;
                Ok(PlainCall::Open {
                    toolset: args.required_string("toolset")?,
                    instance: args.string("instance")?,
                    options: args.object("options")?,
                })
            }
            TOOLSET_CLOSE if offers_compat => {
                let mut args = CompatArgs::new(name, arguments, &["toolset", "instance"])?;
                Ok(PlainCall::Close {
                    toolset: args.required_string("toolset")?,
                    instance: args.string("instance")?,
                })
            }
            _ => {
                let bound = self
                    .declared_toolset_of(name)
                    .is_some_and(|ts| self.is_instanced(ts));
                let mut arguments = arguments;
                // Only an instance-bound tool gained the argument; another tool's `instance`
                // (if it declares one) is its own and stays.
                let instance = match arguments
                    .as_mut()
                    .filter(|_| bound)
                    .and_then(|a| a.remove(INSTANCE_ARG))
                {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s),
                    Some(_) => {
                        return Err(PlainCallError::WrongType {
                            tool: name.to_owned(),
                            argument: INSTANCE_ARG.to_owned(),
                            expected: "a string",
                        });
                    }
                };
                Ok(PlainCall::Tool {
                    name: name.to_owned(),
                    instance,
                    arguments,
                })
            }
        }
    }
}

/// The input schema of §8's `toolset_open` or `toolset_close` (`verb`): `toolset`, one of
/// the `explicit` toolsets and required, then the `more` properties; nothing else.
fn compat_schema(explicit: &[&str], verb: &str, more: Value) -> Value {
    let mut properties = json!({
        "toolset": {"type": "string", "enum": explicit, "description": format!("The toolset to {verb}.")}
    });
    if let (Some(all), Value::Object(more)) = (properties.as_object_mut(), more) {
        all.extend(more);
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": ["toolset"],
        "additionalProperties": false
    })
}

/// The name grammar of §4.1 as a JSON Schema `pattern` (for the host's model; the server
/// checks names itself).
fn name_pattern() -> String {
    format!("^[A-Za-z0-9][A-Za-z0-9_-]{{0,{}}}$", MAX_NAME_LEN - 1)
}

fn add_instance_argument(tool: &mut Tool, toolset: &str) {
    // Catalog::new checked that the schema and its properties are objects without `instance`.
    let Some(schema) = tool.input_schema.as_object_mut() else {
        return;
    };
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(p) = properties.as_object_mut() {
        p.insert(
            INSTANCE_ARG.to_owned(),
            json!({
                "type": "string",
                "description": format!(
                    "Which open {toolset} instance this call is for; may be left out when only one is open."
                )
            }),
        );
    }
}

/// A compat tool's arguments, checked member by member.
struct CompatArgs {
    tool: &'static str,
    args: Map<String, Value>,
}

impl CompatArgs {
    fn new(
        tool: &str,
        arguments: Option<Map<String, Value>>,
        allowed: &[&str],
    ) -> Result<Self, PlainCallError> {
        let tool = if tool == TOOLSET_OPEN {
            TOOLSET_OPEN
        } else {
            TOOLSET_CLOSE
        };
        let args = arguments.unwrap_or_default();
        if let Some(extra) = args.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(PlainCallError::Unexpected {
                tool: tool.to_owned(),
                argument: extra.clone(),
            });
        }
        Ok(CompatArgs { tool, args })
    }

    fn string(&mut self, argument: &'static str) -> Result<Option<String>, PlainCallError> {
        match self.args.remove(argument) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.wrong(argument, "a string")),
        }
    }

    fn required_string(&mut self, argument: &'static str) -> Result<String, PlainCallError> {
        self.string(argument)?.ok_or(PlainCallError::Missing {
            tool: self.tool.to_owned(),
            argument,
        })
    }

    fn object(&mut self, argument: &'static str) -> Result<Option<Value>, PlainCallError> {
        match self.args.remove(argument) {
            None | Some(Value::Null) => Ok(None),
            Some(v @ Value::Object(_)) => Ok(Some(v)),
            Some(_) => Err(self.wrong(argument, "an object")),
        }
    }

    fn wrong(&self, argument: &str, expected: &'static str) -> PlainCallError {
        PlainCallError::WrongType {
            tool: self.tool.to_owned(),
            argument: argument.to_owned(),
            expected,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::arcade;
    use super::*;
    use mcpl_protocol::hints::Presence;

    fn named<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
        tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} is listed"))
    }

    #[test]
    fn a_hinted_host_sees_every_tool_with_hints_and_the_last_rev() {
        let c = arcade();
        let visible: BTreeSet<String> = ["status", "resign", "lobby_list"].map(String::from).into();
        let list = c.list_tools(HostView::Hinted, &visible, 7);
        assert_eq!(
            list.meta.as_ref().and_then(|m| m.rev),
            Some(7),
            "§3: the last rev taken"
        );
        // Vector 1: every tool, visible or not; no compat tools.
        let names: Vec<&str> = list.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "status",
                "news",
                "lobby_list",
                "challenge",
                "play",
                "resign",
                "hint",
                "climb",
                "doodle"
            ]
        );
        let meta = |n: &str| named(&list.tools, n).meta.clone().unwrap();
        assert_eq!(meta("status").presence, Some(Presence::Static));
        assert_eq!(meta("status").visible, Some(true));
        assert_eq!(meta("news").presence, Some(Presence::Dynamic));
        assert_eq!(meta("news").visible, Some(false));
        assert_eq!(meta("play").toolset.as_deref(), Some("go"));
        assert_eq!(meta("play").presence, Some(Presence::Dynamic));
        assert_eq!(meta("play").visible, Some(false));
        assert_eq!(meta("resign").visible, Some(true));
        assert_eq!(
            meta("doodle").toolset.as_deref(),
            Some("extras"),
            "undeclared groups are still named"
        );
        // Declared definitions: no instance argument for a hinted host.
        assert!(
            named(&list.tools, "play").input_schema["properties"]
                .get(INSTANCE_ARG)
                .is_none()
        );
    }

    #[test]
    fn the_list_tools_take_no_rev_before_any() {
        let list = arcade().list_tools(HostView::Hinted, &BTreeSet::new(), 0);
        assert_eq!(list.meta.and_then(|m| m.rev), Some(0));
    }

    #[test]
    fn a_plain_host_sees_plain_tools_compat_tools_and_instance_arguments() {
        // §8, vectors 26, 36
        let c = arcade();
        let list = c.list_tools(HostView::Plain, &BTreeSet::new(), 7);
        assert!(list.meta.is_none(), "no mcpl/rev for a plain host");
        assert!(list.tools.iter().all(|t| {
            t.meta
                .as_ref()
                .is_none_or(|m| m.presence.is_none() && m.visible.is_none() && m.toolset.is_none())
        }));
        let play = named(&list.tools, "play");
        assert_eq!(
            play.input_schema["properties"][INSTANCE_ARG]["type"],
            "string"
        );
        assert_eq!(
            play.input_schema["required"],
            serde_json::json!(["move"]),
            "instance stays optional"
        );
        // Only instance-bound tools gain it.
        assert!(
            named(&list.tools, "hint").input_schema["properties"]
                .get(INSTANCE_ARG)
                .is_none()
        );
        assert!(
            named(&list.tools, "lobby_list").input_schema["properties"]
                .get(INSTANCE_ARG)
                .is_none()
        );
        let open = named(&list.tools, TOOLSET_OPEN);
        // lobby and solo are implicitly open: only go and ranked are offered.
        assert_eq!(
            open.input_schema["properties"]["toolset"]["enum"],
            serde_json::json!(["go", "ranked"])
        );
        assert_eq!(
            open.input_schema["required"],
            serde_json::json!(["toolset"])
        );
        let pattern = open.input_schema["properties"]["instance"]["pattern"]
            .as_str()
            .unwrap();
        assert_eq!(pattern, "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$");
        let close = named(&list.tools, TOOLSET_CLOSE);
        assert_eq!(
            close.input_schema["properties"]["toolset"]["enum"],
            serde_json::json!(["go", "ranked"])
        );
    }

    #[test]
    fn without_explicit_toolsets_no_compat_tools_are_listed() {
        let c = Catalog::new(
            vec![super::super::ToolDecl::new(super::super::tests::tool("a")).in_toolset("t")],
            [("t".to_owned(), Default::default())].into(),
            None,
        )
        .unwrap();
        let tools = c.plain_tools();
        assert_eq!(
            tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["a"]
        );
        // And the names are then ordinary (unknown) tools.
        assert_eq!(
            c.plain_call(TOOLSET_OPEN, None),
            Ok(PlainCall::Tool {
                name: TOOLSET_OPEN.into(),
                instance: None,
                arguments: None
            })
        );
    }

    #[test]
    fn the_view_needs_both_sides() {
        assert_eq!(arcade().view_for(true), HostView::Hinted);
        assert_eq!(arcade().view_for(false), HostView::Plain);
        assert_eq!(
            arcade().without_tool_hints().view_for(true),
            HostView::Plain
        );
    }

    fn args(v: serde_json::Value) -> Option<Map<String, Value>> {
        Some(v.as_object().unwrap().clone())
    }

    #[test]
    fn plain_calls_are_read_back() {
        let c = arcade();
        assert_eq!(
            c.plain_call(
                TOOLSET_OPEN,
                args(
                    serde_json::json!({"toolset": "go", "instance": "g1", "options": {"size": 9}})
                )
            ),
            Ok(PlainCall::Open {
                toolset: "go".into(),
                instance: Some("g1".into()),
                options: Some(serde_json::json!({"size": 9}))
            })
        );
        assert_eq!(
            c.plain_call(TOOLSET_CLOSE, args(serde_json::json!({"toolset": "go"}))),
            Ok(PlainCall::Close {
                toolset: "go".into(),
                instance: None
            })
        );
        assert_eq!(
            c.plain_call(
                "play",
                args(serde_json::json!({"move": "D4", "instance": "g2"}))
            ),
            Ok(PlainCall::Tool {
                name: "play".into(),
                instance: Some("g2".into()),
                arguments: args(serde_json::json!({"move": "D4"}))
            })
        );
        assert_eq!(
            c.plain_call("play", args(serde_json::json!({"move": "D4"}))),
            Ok(PlainCall::Tool {
                name: "play".into(),
                instance: None,
                arguments: args(serde_json::json!({"move": "D4"}))
            })
        );
        // A tool that is not instance-bound keeps an `instance` argument as its own.
        assert_eq!(
            c.plain_call("status", args(serde_json::json!({"instance": 3}))),
            Ok(PlainCall::Tool {
                name: "status".into(),
                instance: None,
                arguments: args(serde_json::json!({"instance": 3}))
            })
        );
    }

    #[test]
    fn bad_compat_arguments_are_tool_errors() {
        let c = arcade();
        let e = c.plain_call(TOOLSET_OPEN, None).unwrap_err();
        assert_eq!(
            e,
            PlainCallError::Missing {
                tool: TOOLSET_OPEN.into(),
                argument: "toolset"
            }
        );
        assert!(e.to_tool_result().is_error);
        assert!(matches!(
            c.plain_call(TOOLSET_OPEN, args(serde_json::json!({"toolset": 1}))),
            Err(PlainCallError::WrongType { argument, .. }) if argument == "toolset"
        ));
        assert!(matches!(
            c.plain_call(TOOLSET_OPEN, args(serde_json::json!({"toolset": "go", "options": [9]}))),
            Err(PlainCallError::WrongType { argument, .. }) if argument == "options"
        ));
        assert!(matches!(
            c.plain_call(TOOLSET_CLOSE, args(serde_json::json!({"toolset": "go", "options": {}}))),
            Err(PlainCallError::Unexpected { argument, .. }) if argument == "options"
        ));
        assert!(matches!(
            c.plain_call("play", args(serde_json::json!({"instance": 2}))),
            Err(PlainCallError::WrongType { argument, .. }) if argument == INSTANCE_ARG
        ));
    }
}

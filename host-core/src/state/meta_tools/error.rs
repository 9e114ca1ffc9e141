//! Why a meta-tool call was refused without sending. Each becomes a tool error for the
//! agent (`isError: true`) that says why and what to do instead; tests match the variants.

use crate::state::args_check::Problem;
use crate::state::view::Marker;
use mcpl_protocol::CallToolResult;
use mcpl_protocol::names::NameError;

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

fn unknown_tool(tool: &str, meta_tools: bool) -> String {
    if meta_tools {
        format!(
            "no tool named {tool:?} is offered through toolsets--act; toolsets--look lists the usable ones"
        )
    } else {
        format!("no tool named {tool:?} is offered; your tool list has every tool you can call")
    }
}

fn not_connected(server: &str, cause: Option<&str>) -> String {
    match cause {
        Some(c) => {
            format!("{server} is not connected right now: {c}. The host keeps trying to connect.")
        }
        None => format!("{server} is not connected right now; try again shortly"),
    }
}

/// A call of a tool that would change a finished instance ([`MetaError::Ended`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedCall {
    /// The instance.
    pub marker: Marker,
    /// The tool called.
    pub tool: String,
    /// Why it ended, when the host was told.
    pub reason: Option<String>,
    /// The toolset's read-only tools, which still answer for it.
    pub read_only: Vec<String>,
}

impl std::fmt::Display for EndedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} has ended{}; {} cannot be used in it any more. {}",
            self.marker,
            ended_reason(&self.reason),
            self.tool,
            readable(&self.marker, &self.read_only)
        )
    }
}

fn ended_reason(reason: &Option<String>) -> String {
    reason
        .as_ref()
        .map(|r| format!(" ({r:?})"))
        .unwrap_or_default()
}

/// What a finished instance still answers.
fn readable(marker: &Marker, read_only: &[String]) -> String {
    match read_only.first() {
        None => "Nothing more can be done in it.".to_owned(),
        Some(first) => format!(
            "Its last state stays readable through its read-only tools ({}) while the server keeps its record: toolsets--act {{\"tool\": {first:?}, \"instance\": {:?}}}.",
            read_only.join(", "),
            marker.instance.as_deref().unwrap_or_default()
        ),
    }
}

fn list_problems(p: &[Problem]) -> String {
    p.iter()
        .map(|p| {
            let at = if p.path.is_empty() { "/" } else { &p.path };
            format!("{at}: {}", p.message)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Why a call was refused. Sorted by who is at fault: the agent's call first, then the
/// state it met, then the host's reach.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MetaError {
    // ---- the agent's call ----
    /// The meta-tool's own arguments do not fit its schema.
    #[error("{tool}: {detail}")]
    BadArguments {
        /// The meta-tool.
        tool: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// No server of that name.
    #[error("there is no server named {server:?}; servers: {}", list(.known))]
    UnknownServer {
        /// The name given.
        server: String,
        /// The servers there are.
        known: Vec<String>,
    },
    /// No toolset of that name (on that server).
    #[error("no toolset named {toolset:?} is offered; toolsets: {}", list(.known))]
    UnknownToolset {
        /// The name given.
        toolset: String,
        /// The toolsets there are, as markers.
        known: Vec<String>,
    },
    /// No tool of that name is offered through `act` (or at all).
    #[error("{}", unknown_tool(.tool, *.meta_tools))]
    UnknownTool {
        /// The name given.
        tool: String,
        /// The agent's list has the meta-tools (some server's hints count): the error may
        /// point to them. Without them it names only the agent's own list.
        meta_tools: bool,
    },
    /// The name is offered by several servers; `server` must say which (§6).
    #[error("{name:?} is offered by several servers ({}): say which with \"server\"", list(.candidates))]
    Ambiguous {
        /// The name given.
        name: String,
        /// The servers offering it.
        candidates: Vec<String>,
    },
    /// An instance was named for a toolset without instances (§4.2).
    #[error("{marker} has no instances: leave out \"instance\"")]
    NoInstances {
        /// The toolset.
        marker: Marker,
    },
    /// The instance name does not fit the grammar (§4.1).
    #[error("{name:?} is not a valid instance name: {error}")]
    BadInstanceName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        error: NameError,
    },
    /// The arguments do not fit the tool's current definition (§6).
    #[error("the arguments do not fit {tool}'s current definition: {}", list_problems(.problems))]
    InvalidArgs {
        /// The tool.
        tool: String,
        /// Where and why.
        problems: Vec<Problem>,
    },
    /// The options do not fit the toolset's declared schema.
    #[error("the options do not fit {marker}'s declared options: {}", list_problems(.problems))]
    InvalidOptions {
        /// The toolset.
        marker: Marker,
        /// Where and why.
        problems: Vec<Problem>,
    },
    /// A dynamic tool called by its namespaced name (§6 "RFC §8.1").
    #[error(
        "{server}--{tool} is not in your tool list: call it through toolsets--act {{\"server\":{server:?},\"tool\":{tool:?}, …}}"
    )]
    DynamicByName {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// A static tool named through `act`.
    #[error("{name} is in your tool list: call it directly, not through toolsets--act")]
    StaticThroughAct {
        /// Its namespaced name.
        name: String,
    },
    /// The host's tool policy excludes the tool (§6).
    #[error("the host's policy does not allow {tool} on {server}")]
    Denied {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },

    // ---- the state the call met ----
    /// Several instances are open and none was named (§4.2, §4.5, vector 6).
    #[error("several instances of {marker} are open ({}): say which with \"instance\"", list(.open))]
    InstanceRequired {
        /// The toolset.
        marker: Marker,
        /// The open instances.
        open: Vec<String>,
    },
    /// The named instance is not open (§4.5).
    #[error("{instance:?} is not an open instance of {marker}; open: {}", list(.open))]
    UnknownInstance {
        /// The toolset.
        marker: Marker,
        /// The name given.
        instance: String,
        /// The open instances.
        open: Vec<String>,
    },
    /// The toolset is not open (§3, vector 11).
    #[error("{marker} is not open: open it with toolsets--open first")]
    NotOpen {
        /// The toolset.
        marker: Marker,
    },
    /// The instance ended (the server keeps its record, §4.3), and the tool would change
    /// it. Its read-only tools still answer with its last view; opening it again would
    /// start a new one under the finished one's name, so that is not suggested.
    #[error("{0}")]
    Ended(Box<EndedCall>),
    /// The tool's undeclared group is closed: the host gates it (§4.4, vector 10).
    #[error("{tool} belongs to {marker}, which is closed: open it with toolsets--open first")]
    ClosedGroup {
        /// The tool.
        tool: String,
        /// The group.
        marker: Marker,
    },
    /// The tool is not usable there now (§3, vector 11).
    #[error("{tool} is not usable in {marker} right now; usable in: {}", list(.usable_in))]
    NotVisible {
        /// The tool.
        tool: String,
        /// Where it was asked for.
        marker: Marker,
        /// Where it is usable (markers).
        usable_in: Vec<String>,
    },

    // ---- the host's reach ----
    /// The server is not connected, so its state is not known (nor, if it never was, what
    /// it offers).
    #[error("{}", not_connected(.server, .cause.as_deref()))]
    NotConnected {
        /// The server.
        server: String,
        /// Why, plainly, when known (`mcpl_host::link::cause`).
        cause: Option<String>,
    },
    /// The server is connected, but its connect-time statement is not read yet: what is
    /// open there is not known, so an instance is neither open nor not (§4.3: nothing is
    /// settled before the connection's first `toolsets/list`). Issue #42: under overload
    /// the statement can take longer than the host's wait for it, and "not an open
    /// instance, open: none" made agents give up on games that were open **\[project\]**
    /// (README "An instance is not said closed before the statement is read").
    #[error("{server} is connected, but what is open there is still being read; try again shortly")]
    NotSettled {
        /// The server.
        server: String,
    },
}

impl MetaError {
    /// The tool error the agent is answered with.
    pub fn to_result(&self) -> CallToolResult {
        CallToolResult::error(self.to_string())
    }
}

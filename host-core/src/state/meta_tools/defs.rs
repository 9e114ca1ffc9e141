//! The four meta-tools as the model sees them: constant names, descriptions and input
//! schemas (§6 "RFC §8.2"). They never change, so they head the model's tool list.

use mcpl_protocol::Tool;
use serde_json::json;

/// `toolsets--open`.
pub const OPEN: &str = "toolsets--open";
/// `toolsets--act`.
pub const ACT: &str = "toolsets--act";
/// `toolsets--look`.
pub const LOOK: &str = "toolsets--look";
/// `toolsets--close`.
pub const CLOSE: &str = "toolsets--close";

/// True for one of the four names.
pub fn is_meta_tool(name: &str) -> bool {
    matches!(name, OPEN | ACT | LOOK | CLOSE)
}

const SERVER: &str = "The server, by its name in this host. Leave it out when the name you give is offered by one server only.";
const NAME: &str =
    "Letters, digits, '_' and '-', up to 64 characters, starting with a letter or digit.";

/// The four meta-tools, in the order they are listed.
pub fn definitions() -> Vec<Tool> {
    vec![
        Tool::new(
            OPEN,
            "Open a toolset a server offers, or an instance of one (a game, say), so that its tools become usable through toolsets--act. Opening can have effects on the server (a game starts). Opening what is already open adopts it and changes nothing. Use toolsets--look to see what can be opened.",
            json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": SERVER},
                    "toolset": {"type": "string", "description": "The toolset to open."},
                    "instance": {"type": "string", "description": format!("For a toolset with instances: the name of the instance to open or rejoin. Leave it out to let the host choose a fresh name. Not allowed for a toolset without instances. {NAME}")},
                    "options": {"type": "object", "description": "Options the toolset declares (toolsets--look shows them)."}
                },
                "required": ["toolset"],
                "additionalProperties": false
            }),
        ),
        Tool::new(
            ACT,
            "Call a tool of an open toolset (or another tool offered outside your tool list) with its arguments. The host names the tools usable now, where, and their arguments, when they become usable; toolsets--look lists them again.",
            json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": SERVER},
                    "tool": {"type": "string", "description": "The tool's name, as the host announced it."},
                    "instance": {"type": "string", "description": "The instance to act in. Needed only when several instances of the tool's toolset are open."},
                    "args": {"type": "object", "description": "The tool's arguments."}
                },
                "required": ["tool"],
                "additionalProperties": false
            }),
        ),
        Tool::new(
            LOOK,
            "See what is open, which tools are usable in each open toolset and instance with their arguments, what can be opened, what ended, and what servers suggested. Every argument narrows the answer.",
            json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "Only this server."},
                    "toolset": {"type": "string", "description": "Only this toolset."},
                    "instance": {"type": "string", "description": "Only this instance."},
                    "tool": {"type": "string", "description": "Only this tool, described in full."}
                },
                "additionalProperties": false
            }),
        ),
        Tool::new(
            CLOSE,
            "Close an open toolset or instance. Closing can have effects on the server (a game in progress is resigned). For a toolset with instances, name the instance when several are open.",
            json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": SERVER},
                    "toolset": {"type": "string", "description": "The toolset to close."},
                    "instance": {"type": "string", "description": "The instance to close. Needed only when several are open; not allowed for a toolset without instances."}
                },
                "required": ["toolset"],
                "additionalProperties": false
            }),
        ),
    ]
}

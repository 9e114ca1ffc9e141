//! The four meta-tools as the model sees them: constant names, descriptions and input
//! schemas (§6 "RFC §8.2"). They never change, so they head the model's tool list.

use mcpl_protocol::Tool;
use serde_json::{Map, Value, json};

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

/// An argument of a meta-tool: its name, JSON type and description.
type Arg<'a> = (&'a str, &'a str, &'a str);

/// An input schema: an object of `args`, `required` among them, and nothing else.
fn input_schema(args: &[Arg<'_>], required: &[&str]) -> Value {
    let properties: Map<String, Value> = args
        .iter()
        .map(|(name, ty, description)| {
            let property = json!({"type": ty, "description": description});
            ((*name).to_owned(), property)
        })
        .collect();
    let mut schema =
        json!({"type": "object", "properties": properties, "additionalProperties": false});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// The four meta-tools, in the order they are listed: each its name, description,
/// arguments and the required ones.
pub fn definitions() -> Vec<Tool> {
    let open_instance = format!(
        "For a toolset with instances: the name of the instance to open or rejoin. Leave it out to let the host choose a fresh name. Not allowed for a toolset without instances. {NAME}"
    );
    let tools: [(&str, &str, &[Arg<'_>], &[&str]); 4] = [
        (
            OPEN,
            "Open a toolset a server offers, or an instance of one (a game, say), so that its tools become usable through toolsets--act. Opening can have effects on the server (a game starts). Opening what is already open adopts it and changes nothing. Use toolsets--look to see what can be opened.",
            &[
                ("server", "string", SERVER),
                ("toolset", "string", "The toolset to open."),
                ("instance", "string", &open_instance),
                (
                    "options",
                    "object",
                    "Options the toolset declares (toolsets--look shows them).",
                ),
            ],
            &["toolset"],
        ),
        (
            ACT,
            "Call a tool of an open toolset (or another tool offered outside your tool list) with its arguments. The host names the tools usable now, where, and their arguments, when they become usable; toolsets--look lists them again.",
            &[
                ("server", "string", SERVER),
                (
                    "tool",
                    "string",
                    "The tool's name, as the host announced it.",
                ),
                (
                    "instance",
                    "string",
                    "The instance to act in. Needed only when several instances of the tool's toolset are open.",
                ),
                ("args", "object", "The tool's arguments."),
            ],
            &["tool"],
        ),
        (
            LOOK,
            "See what is open, which tools are usable in each open toolset and instance with their arguments, what can be opened, what ended, and what servers suggested. Every argument narrows the answer.",
            &[
                ("server", "string", "Only this server."),
                ("toolset", "string", "Only this toolset."),
                ("instance", "string", "Only this instance."),
                ("tool", "string", "Only this tool, described in full."),
            ],
            &[],
        ),
        (
            CLOSE,
            "Close an open toolset or instance. Closing can have effects on the server (a game in progress is resigned). For a toolset with instances, name the instance when several are open.",
            &[
                ("server", "string", SERVER),
                ("toolset", "string", "The toolset to close."),
                (
                    "instance",
                    "string",
                    "The instance to close. Needed only when several are open; not allowed for a toolset without instances.",
                ),
            ],
            &["toolset"],
        ),
    ];
    tools
        .into_iter()
        .map(|(name, description, args, required)| {
            Tool::new(name, description, input_schema(args, required))
        })
        .collect()
}

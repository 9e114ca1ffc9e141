//! A server with one toolset (`notes`) and one instanced toolset (`counter`, one counter
//! per instance), over stdio: `cargo run -p mcpl-server --example toolsets`. A host with
//! `toolHints` opens them with `toolsets/open`; any other MCP client gets `toolset_open`
//! and `toolset_close` tools and an `instance` argument on `count` (RFC-014 §8).
//! `tests/tests/interop_python_example.rs` runs it against the official Python SDK client.

use mcpl_server::schemars::JsonSchema;
use mcpl_server::{InstanceContext, InstanceLogic, NoArguments, Reply, Server, ServerOptions};
use mcpl_server::{Started, Tool, ToolCall, Toolset, input_schema};
use serde::Deserialize;

/// The open `notes` toolset of one principal.
struct Notes(Vec<String>);

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
struct Note {
    /// What to remember.
    text: String,
}

impl InstanceLogic for Notes {
    fn call(&mut self, call: ToolCall, _: &mut InstanceContext) -> Reply {
        if call.tool() == "note_add" {
            match call.args::<Note>() {
                Ok(note) => self.0.push(note.text),
                Err(e) => return Reply::Now(Err(e)),
            }
        }
        Reply::text(format!("Notes: {}", self.0.join("; ")))
    }
}

/// One instance of `counter`.
struct Counter(u64);

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
struct By {
    /// How much to add (default 1).
    #[schemars(range(min = 1))]
    by: Option<u64>,
}

impl InstanceLogic for Counter {
    fn call(&mut self, call: ToolCall, _: &mut InstanceContext) -> Reply {
        match call.args::<By>() {
            Ok(By { by }) => self.0 += by.unwrap_or(1),
            Err(e) => return Reply::Now(Err(e)),
        }
        Reply::text(format!("Count: {}", self.0))
    }
}

fn server() -> Server {
    // Each schema is derived from the type its tool's arguments are decoded as.
    let (no_args, by) = (input_schema::<NoArguments>(), input_schema::<By>());
    let notes = Toolset::new("notes")
        .title("Notes")
        .tool(Tool::new("note_add", "Adds a note", input_schema::<Note>()))
        .tool(Tool::new("note_list", "Lists them", no_args))
        .on_open(|_, _| Ok(Started::new(Notes(Vec::new())).text("No notes yet.")));
    let counter = Toolset::new("counter")
        .title("Counter")
        .instances()
        .tool(Tool::new("count", "Adds `by` (default 1)", by))
        .on_open(|_, _| Ok(Started::new(Counter(0)).text("Count: 0")));
    Server::builder("example-toolsets", "0.1.0")
        .toolset(notes)
        .toolset(counter)
        .build()
        .expect("a valid catalog")
}

#[actix::main]
async fn main() {
    // Resolves once stdin closed and the last answers are written.
    server().serve_stdio(&ServerOptions::default()).await;
}

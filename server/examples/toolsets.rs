//! A server with one toolset (`notes`) and one instanced toolset (`counter`, one counter
//! per instance), over stdio: `cargo run -p mcpl-server --example toolsets`. A host with
//! `toolHints` opens them with `toolsets/open`; any other MCP client gets `toolset_open`
//! and `toolset_close` tools and an `instance` argument on `count` (RFC-014 §8).
//! `tests/tests/interop_python_example.rs` runs it against the official Python SDK client.

use mcpl_protocol::mcp::Tool;
use mcpl_server::{InstanceContext, InstanceLogic, Reply, Server, Started, ToolCall, Toolset};
use mcpl_transport::ServerOptions;
use serde::Deserialize;
use serde_json::json;

/// The open `notes` toolset of one principal.
struct Notes(Vec<String>);

#[derive(Deserialize)]
struct Note {
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

impl InstanceLogic for Counter {
    fn call(&mut self, call: ToolCall, _: &mut InstanceContext) -> Reply {
        let by = call.arguments().get("by").and_then(|b| b.as_u64());
        self.0 += by.unwrap_or(1);
        Reply::text(format!("Count: {}", self.0))
    }
}

fn server() -> Server {
    let text = json!({"type": "object", "properties": {"text": {"type": "string"}},
        "required": ["text"]});
    let notes = Toolset::new("notes")
        .title("Notes")
        .tool(Tool::new("note_add", "Adds a note", text))
        .tool(Tool::new(
            "note_list",
            "Lists them",
            json!({"type": "object"}),
        ))
        .on_open(|_, _| Ok(Started::new(Notes(Vec::new())).text("No notes yet.")));
    let by = json!({"type": "object", "properties": {"by": {"type": "integer", "minimum": 1}}});
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

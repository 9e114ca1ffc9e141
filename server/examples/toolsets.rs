//! A server with one toolset (`notes`) and one instanced toolset (`counter`, one counter
//! per instance), over stdio: `cargo run -p mcpl-server --example toolsets`. A host with
//! `toolHints` opens them with `toolsets/open`; any other MCP client gets `toolset_open`
//! and `toolset_close` tools and an `instance` argument on `count` (RFC-014 §8).
//! `tests/tests/interop_python_example.rs` runs it against the official Python SDK client.

use mcpl_server::schemars::JsonSchema;
use mcpl_server::{Call, InstanceContext as Cx, InstanceLogic, NoArguments, Reply, Started};
use mcpl_server::{Server, ServerOptions, Toolset};
use serde::Deserialize;

// Each tool is declared once: its name, description, handler, and a schema derived from
// the type its arguments decode as (a wrong argument is a tool error naming it).
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
struct Note {
    /// What to remember.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcpl_server::schemars")]
struct By {
    /// How much to add (default 1).
    #[schemars(range(min = 1))]
    by: Option<u64>,
}

/// The open `notes` toolset of one principal.
struct Notes(Vec<String>);
impl InstanceLogic for Notes {}
impl Notes {
    fn add(&mut self, note: Note, call: Call, cx: &mut Cx) -> Reply {
        self.0.push(note.text);
        self.list(NoArguments {}, call, cx)
    }

    fn list(&mut self, _: NoArguments, _: Call, _: &mut Cx) -> Reply {
        Reply::text(format!("Notes: {}", self.0.join("; ")))
    }
}

/// One instance of `counter`.
struct Counter(u64);
impl InstanceLogic for Counter {}
impl Counter {
    fn count(&mut self, By { by }: By, _: Call, _: &mut Cx) -> Reply {
        self.0 += by.unwrap_or(1);
        Reply::text(format!("Count: {}", self.0))
    }
}

#[actix::main]
async fn main() {
    let notes = Toolset::new("notes")
        .title("Notes")
        .route("note_add", "Adds a note", Notes::add)
        .route("note_list", "Lists them", Notes::list)
        .on_open(|_, _| Ok(Started::new(Notes(Vec::new())).text("No notes yet.")));
    let counter = Toolset::new("counter")
        .title("Counter")
        .instances()
        .route("count", "Adds `by` (default 1)", Counter::count)
        .on_open(|_, _| Ok(Started::new(Counter(0)).text("Count: 0")));
    let server = Server::builder("example-toolsets", "0.1.0")
        .toolset(notes)
        .toolset(counter)
        .build()
        .expect("a valid catalog");
    // Resolves once stdin closed and the last answers are written.
    server.serve_stdio(&ServerOptions::default()).await;
}

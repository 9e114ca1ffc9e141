//! The example server (`server/examples/toolsets.rs`: one toolset, one instanced toolset)
//! against the official MCP Python SDK's client over stdio. The client has no `toolHints`,
//! so it plays through the compat tools (RFC-014 §8): it opens `notes` and adds a note,
//! opens two counters and counts in each by name, and a call naming none is refused with
//! the open instances listed. `cargo test` builds the example with the tests (this crate
//! builds its source as a binary).

use mcpl_tests::interop::{python, report, script};
use serde_json::json;
use std::process::Command;

/// The example, built from its source as a binary of this crate (see its `Cargo.toml`).
const EXAMPLE: &str = env!("CARGO_BIN_EXE_mcpl-example-toolsets");

#[test]
fn the_python_sdk_client_plays_the_example_server_through_compat_tools() {
    let out = Command::new(python())
        .arg(script("py_example.py"))
        .arg(EXAMPLE)
        .output()
        .expect("python runs");
    let report = report(&out);
    assert_eq!(
        report["tools"],
        json!([
            "count",
            "note_add",
            "note_list",
            "toolset_close",
            "toolset_open"
        ]),
        "{report}"
    );
    let said = &report["said"];
    let step = |name: &str, error: bool, text: &str| {
        assert_eq!(said[name]["isError"], error, "{name}: {report}");
        let got = said[name]["text"].as_str().unwrap_or_default();
        assert!(got.contains(text), "{name}: {got:?} lacks {text:?}");
    };
    step("open_notes", false, "Opened notes");
    step("add", false, "Notes: buy milk");
    step("list", false, "Notes: buy milk");
    step("open_a", false, "Opened counter:counter-1");
    step("open_b", false, "Opened counter:counter-2");
    step("count_b", false, "Count: 5");
    step("count_a", false, "Count: 1");
    step(
        "count_unnamed",
        true,
        "several counter instances are open (counter-1, counter-2)",
    );
}

/// The example is what a newcomer reads first: it stays short (issue #14: under 80 lines;
/// issue #38 item 4: typed routes made it 72).
#[test]
fn the_example_server_stays_short() {
    let path = mcpl_tests::interop::workspace_root().join("server/examples/toolsets.rs");
    let source = std::fs::read_to_string(&path).expect("the example's source");
    let lines = source.lines().count();
    assert!(lines <= 72, "{}: {lines} lines", path.display());
}

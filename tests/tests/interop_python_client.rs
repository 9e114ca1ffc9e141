//! Interop: the official MCP Python SDK's client (`mcp.Client`) against a server built on
//! `mcpl-server`, over stdio and Streamable HTTP. In its default connect mode the client
//! probes `server/discover` first; our server answers it (issue #39), so the client goes
//! modern (MCP 2026-07-28), lists tools and calls one. In legacy mode it sends
//! `initialize`, declaring sampling and elicitation, so a tool can ask its model and its
//! user through it with requests of the server's. In the modern era the same tools ask
//! through an `InputRequiredResult` (MRTR): `issue39_python_mrtr.rs`.

use mcpl_tests::interop::{python, script, started_listening};
use serde_json::Value;
use std::process::Command;

const SERVER: &str = env!("CARGO_BIN_EXE_mcpl-interop-server");

/// Runs the Python client script with `args` in its default connect mode, returning its
/// one JSON line of output.
fn run_client(args: &[&str]) -> Value {
    run_client_in("auto", args)
}

/// Runs the Python client script with `args` in connect `mode` (`auto`, `legacy`).
fn run_client_in(mode: &str, args: &[&str]) -> Value {
    let out = Command::new(python())
        .arg(script("py_client.py"))
        .args(args)
        .env("MCP_CONNECT_MODE", mode)
        .output()
        .expect("python runs");
    mcpl_tests::interop::report(&out)
}

/// The client chose modern (its default mode, after the discover probe).
fn assert_called_our_server(report: &Value, expected_text: &str) {
    assert_eq!(report["handshake"], "discover", "{report}");
    assert_eq!(report["protocolVersion"], "2026-07-28", "{report}");
    assert_eq!(report["result"]["resultType"], "complete", "{report}");
    assert_answered(report, expected_text);
}

/// The client initialized (legacy mode).
fn assert_called_our_legacy_server(report: &Value, expected_text: &str) {
    assert_eq!(report["handshake"], "initialize", "{report}");
    assert_eq!(report["protocolVersion"], "2025-11-25", "{report}");
    assert_answered(report, expected_text);
}

fn assert_answered(report: &Value, expected_text: &str) {
    assert_eq!(report["server"], "mcpl-interop-server", "{report}");
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        tools.contains(&"echo") && tools.contains(&"add"),
        "{report}"
    );
    assert_eq!(report["result"]["isError"], false, "{report}");
    assert_eq!(
        report["result"]["content"][0]["text"], expected_text,
        "{report}"
    );
}

#[test]
fn python_client_calls_our_server_over_stdio() {
    let report = run_client(&[
        "stdio",
        "echo",
        r#"{"text":"hello from python"}"#,
        SERVER,
        "stdio",
    ]);
    assert_called_our_server(&report, "hello from python");
    let report = run_client_in(
        "legacy",
        &[
            "stdio",
            "echo",
            r#"{"text":"hello from python"}"#,
            SERVER,
            "stdio",
        ],
    );
    assert_called_our_legacy_server(&report, "hello from python");
}

/// Our tool asks the Python client's sampling callback, over stdio.
#[test]
fn our_server_samples_the_python_clients_model_over_stdio() {
    let report = run_client_in(
        "legacy",
        &[
            "stdio",
            "ask_model",
            r#"{"prompt":"hello"}"#,
            SERVER,
            "stdio",
        ],
    );
    assert_called_our_legacy_server(&report, "LLM response: sampled: hello");
}

#[test]
fn python_client_calls_our_server_over_streamable_http() {
    let mut server = Command::new(SERVER);
    server.args(["http", "127.0.0.1:0"]);
    let (_guard, addr) = started_listening(server);
    let url = format!("http://{addr}/mcp");
    let report = run_client(&[&url, "add", r#"{"a":20,"b":22}"#]);
    assert_called_our_server(&report, "42");
    assert_eq!(report["result"]["structuredContent"]["sum"], 42);
    // Legacy too: an initialized session on the same endpoint.
    let report = run_client_in("legacy", &[&url, "add", r#"{"a":20,"b":22}"#]);
    assert_called_our_legacy_server(&report, "42");
    // Our tools ask the Python client's model, user and roots; the requests ride the calls' answers.
    let report = run_client_in("legacy", &[&url, "ask_model", r#"{"prompt":"over http"}"#]);
    assert_called_our_legacy_server(&report, "LLM response: sampled: over http");
    let report = run_client_in(
        "legacy",
        &[&url, "ask_user", r#"{"message":"Your email?"}"#],
    );
    assert_called_our_legacy_server(
        &report,
        r#"User response: action=accept, content={"email":"py@example.org"}"#,
    );
}

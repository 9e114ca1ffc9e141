//! Issue #39 item 6 with a client we did not write: the official MCP Python SDK's client
//! (`mcp.Client`, pinned in `tests/interop/requirements.txt`), pinned to 2026-07-28 and in
//! its default (`auto`) mode, where it chooses modern against our server, calls the tools of
//! a server built on `mcpl-server` that ask it something — its model (`ask_model`), its user
//! (`ask_user`), its roots (`roots`) — over stdio and Streamable HTTP. Each question reaches
//! the SDK's callbacks in an `InputRequiredResult`; the SDK retries the call with the
//! answers, and the tool's result says what the callbacks answered. Before MRTR was built
//! every one of these calls failed ("not yet served here").
//!
//! Item 4 with the same client: its `Client.listen(tools_list_changed=True)` opens a
//! `subscriptions/listen` stream, is acknowledged for tools, and hears of the change the
//! server's `change_tools` makes to its tool list.

use mcpl_tests::interop::{python, script, started_listening};
use serde_json::Value;
use std::process::Command;

const SERVER: &str = env!("CARGO_BIN_EXE_mcpl-interop-server");

/// The asking tools, their arguments, and what each answers with `py_client.py`'s
/// callbacks (its model says "sampled: " and the prompt, its user gives an email, its one
/// root is file:///py/project).
const ASKS: [(&str, &str, &str); 3] = [
    (
        "ask_model",
        r#"{"prompt":"hello"}"#,
        "LLM response: sampled: hello",
    ),
    (
        "ask_user",
        r#"{"message":"Your email?"}"#,
        r#"User response: action=accept, content={"email":"py@example.org"}"#,
    ),
    ("roots", "{}", "file:///py/project"),
];

/// Runs `py_client.py` in connect `mode` with `target` (a URL, or `stdio` and the server's
/// command), calling `tool` with `args`; its report.
fn call(mode: &str, target: &[&str], tool: &str, args: &str) -> Value {
    let mut argv: Vec<&str> = vec![target[0], tool, args];
    argv.extend(&target[1..]);
    let out = Command::new(python())
        .arg(script("py_client.py"))
        .args(&argv)
        .env("MCP_CONNECT_MODE", mode)
        .output()
        .expect("python runs");
    mcpl_tests::interop::report(&out)
}

/// Every asking tool, called modern in `mode`, answered with what the callbacks said.
fn every_question_answered(mode: &str, target: &[&str]) {
    for (tool, args, expected) in ASKS {
        let report = call(mode, target, tool, args);
        assert_eq!(report["handshake"], "discover", "{mode} {tool}: {report}");
        assert_eq!(
            report["protocolVersion"], "2026-07-28",
            "{mode} {tool}: {report}"
        );
        let result = &report["result"];
        let stamped = &result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"];
        assert_eq!(stamped, "mcpl-interop-server", "{report}");
        assert_eq!(result["resultType"], "complete", "{mode} {tool}: {report}");
        assert_eq!(result["isError"], false, "{mode} {tool}: {report}");
        assert_eq!(
            result["content"][0]["text"], expected,
            "{mode} {tool}: {report}"
        );
    }
}

#[test]
fn issue39_06_python_client_answers_our_tools_questions_over_stdio() {
    for mode in ["2026-07-28", "auto"] {
        every_question_answered(mode, &["stdio", SERVER, "stdio"]);
    }
}

#[test]
fn issue39_06_python_client_answers_our_tools_questions_over_streamable_http() {
    let mut server = Command::new(SERVER);
    server.args(["http", "127.0.0.1:0"]);
    let (_guard, addr) = started_listening(server);
    let url = format!("http://{addr}/mcp");
    for mode in ["2026-07-28", "auto"] {
        every_question_answered(mode, &[&url]);
    }
}

/// Runs `py_listen.py` in connect `mode` against `target`; its report.
fn listen(mode: &str, target: &[&str]) -> Value {
    let out = Command::new(python())
        .arg(script("py_listen.py"))
        .args(target)
        .env("MCP_CONNECT_MODE", mode)
        .output()
        .expect("python runs");
    mcpl_tests::interop::report(&out)
}

/// The SDK's stream was acknowledged for tools, and told of the change `change_tools` made.
fn heard_the_change(mode: &str, report: &Value) {
    assert_eq!(report["protocolVersion"], "2026-07-28", "{mode}: {report}");
    assert_eq!(
        report["honored"],
        serde_json::json!({"toolsListChanged": true}),
        "{mode}: {report}"
    );
    assert_eq!(report["event"], "ToolsListChanged", "{mode}: {report}");
    assert_ne!(report["before"], report["after"], "{mode}: {report}");
}

#[test]
fn issue39_04_python_client_listens_for_tool_changes_over_stdio() {
    for mode in ["2026-07-28", "auto"] {
        let report = listen(mode, &["stdio", SERVER, "stdio"]);
        heard_the_change(mode, &report);
    }
}

#[test]
fn issue39_04_python_client_listens_for_tool_changes_over_streamable_http() {
    let mut server = Command::new(SERVER);
    server.args(["http", "127.0.0.1:0"]);
    let (_guard, addr) = started_listening(server);
    let url = format!("http://{addr}/mcp");
    for mode in ["2026-07-28", "auto"] {
        let report = listen(mode, &[&url]);
        heard_the_change(mode, &report);
    }
}

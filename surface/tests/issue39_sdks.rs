//! Issue #39 item 10, driven by the official SDKs' clients in the modern era: the Python
//! SDK (`mcp`, pinned in `tests/interop/requirements.txt`; `tests/interop/py_surface.py`)
//! and the TypeScript SDK 2.x (`@modelcontextprotocol/client`, pinned in
//! `tests/inspector/package-lock.json`; `tests/inspector/ts2_surface.mjs`), each pinned to
//! 2026-07-28 and in auto mode (where it must choose modern), play tic-tac-toe against the
//! arcade's bot through the surface host, over stdio (the client launches
//! `mcpl-surface serve`) and over Streamable HTTP (one principal's requests, each a POST of
//! its own, served by that principal's host).

use crate::support;

use mcpl_testkit::python::python;
use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::Path;
use support::{
    SURFACE, root, run_peer, stdio_arcade, stdio_arcade_config, surface_http, write_config,
};

const PY: &str = "tests/interop/py_surface.py";
const TS: &str = "tests/inspector/ts2_surface.mjs";

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// `SURFACE serve --config CONFIG`: a surface host in front of a stdio arcade that knows
/// the client as `principal`, as the client launches it.
fn stdio_surface(dir: &Path, principal: &str) -> Vec<OsString> {
    let config = stdio_arcade_config(dir, principal);
    let mut args = os(&[SURFACE, "serve", "--config"]);
    args.push(config.into());
    args
}

/// A surface host on Streamable HTTP whose one client, `principal`, presents the token
/// `PRINCIPAL-surface-secret` and reaches a stdio arcade of its host's own; the child and
/// `[URL, TOKEN]`.
async fn http_surface(dir: &Path, principal: &str) -> (tokio::process::Child, Vec<OsString>) {
    let token = format!("{principal}-surface-secret");
    let config = write_config(
        dir,
        "surface.json",
        &json!({"mcpServers": {"arcade": stdio_arcade(principal)},
                "surface": {"clients": {principal: {"token": token}}}}),
    );
    let (child, url) = surface_http(&config).await;
    (child, os(&[&url, &token]))
}

/// What every modern game report shows: MCP 2026-07-28 chosen, results stamped by the
/// surface host, the four meta-tools and a list that did not change, the lobby's opening
/// told in the first result (nothing logged: a modern request asked for no log), and a
/// game the perfect bot did not lose.
fn check_modern_game(report: &Value) {
    assert_eq!(report["protocolVersion"], "2026-07-28", "{report:#}");
    assert_eq!(report["stamped"], "mcpl-surface", "{report:#}");
    assert_eq!(
        report["tools"],
        json!([
            "toolsets--open",
            "toolsets--act",
            "toolsets--look",
            "toolsets--close"
        ]),
        "{report:#}"
    );
    assert_eq!(report["errors"], json!([]), "{report:#}");
    assert_eq!(report["tools_stable"], true, "{report:#}");
    assert_eq!(report["logs"], json!([]), "{report:#}");
    let first = report["news"][0].as_str().unwrap_or_default();
    assert!(first.contains("[arcade/lobby]"), "{report:#}");
    let opened = report["opened"].as_str().unwrap();
    assert!(opened.contains("Opened [arcade/tictactoe:"), "{report:#}");
    let last = report["final"].as_str().expect("the game ended");
    assert!(
        last.contains("O (bot) wins") || last.contains("Draw"),
        "{last}"
    );
    let moves = report["moves"].as_array().unwrap().len();
    assert!((3..=5).contains(&moves), "{report:#}");
}

/// The Python client in `mode` over stdio; its report.
async fn python_stdio(mode: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![root().join(PY).into()];
    args.extend(os(&["--mode", mode, "tictactoe"]));
    args.extend(stdio_surface(dir.path(), "py"));
    run_peer(python(), &args, dir.path()).await
}

/// The Python client in `mode` over Streamable HTTP; its report.
async fn python_http(mode: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let (_surface, at) = http_surface(dir.path(), "py").await;
    let mut args = vec![root().join(PY).into()];
    args.extend(os(&["--mode", mode, "tictactoe", "--http"]));
    args.extend(at);
    run_peer(python(), &args, dir.path()).await
}

/// The TypeScript 2.x client in `mode` over stdio; its report.
async fn typescript_stdio(mode: &str) -> Value {
    mcpl_testkit::node::inspector_dir();
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![root().join(TS).into()];
    args.extend(os(&[mode, "stdio"]));
    args.extend(stdio_surface(dir.path(), "ts"));
    run_peer("node", &args, dir.path()).await
}

/// The TypeScript 2.x client in `mode` over Streamable HTTP; its report.
async fn typescript_http(mode: &str) -> Value {
    mcpl_testkit::node::inspector_dir();
    let dir = tempfile::tempdir().unwrap();
    let (_surface, at) = http_surface(dir.path(), "ts").await;
    let mut args = vec![root().join(TS).into()];
    args.extend(os(&[mode, "http"]));
    args.extend(at);
    run_peer("node", &args, dir.path()).await
}

/// The Python client found the era by `server/discover`, or used it as pinned: never
/// `initialize`.
fn check_python(report: &Value) {
    check_modern_game(report);
    assert_ne!(report["handshake"], "initialize", "{report:#}");
}

/// The TypeScript client says it ended up modern; over HTTP every POST was answered 200
/// without a session, the first being the `server/discover` probe.
fn check_typescript(report: &Value) {
    check_modern_game(report);
    assert_eq!(report["era"], "modern", "{report:#}");
    let wire = report["wire"].as_array().unwrap();
    for post in wire {
        assert_eq!(post["http"], "POST", "{report:#}");
        assert_eq!(post["status"], 200, "{report:#}");
        assert_eq!(post["session"], Value::Null, "{report:#}");
    }
    if let Some(first) = wire.first() {
        assert_eq!(first["method"], "server/discover", "{report:#}");
    }
}

#[tokio::test]
async fn issue39_10_the_python_sdk_pinned_to_2026_07_28_plays_through_the_surface_host_on_stdio() {
    check_python(&python_stdio("2026-07-28").await);
}

#[tokio::test]
async fn issue39_10_the_python_sdk_in_auto_mode_chooses_modern_at_the_surface_host_on_stdio() {
    check_python(&python_stdio("auto").await);
}

#[tokio::test]
async fn issue39_10_the_python_sdk_pinned_to_2026_07_28_plays_through_the_surface_host_over_http() {
    check_python(&python_http("2026-07-28").await);
}

#[tokio::test]
async fn issue39_10_the_python_sdk_in_auto_mode_chooses_modern_at_the_surface_host_over_http() {
    check_python(&python_http("auto").await);
}

#[tokio::test]
async fn issue39_10_the_typescript_sdk_2_pinned_to_2026_07_28_plays_through_the_surface_host_on_stdio()
 {
    check_typescript(&typescript_stdio("2026-07-28").await);
}

#[tokio::test]
async fn issue39_10_the_typescript_sdk_2_in_auto_mode_chooses_modern_at_the_surface_host_on_stdio()
{
    check_typescript(&typescript_stdio("auto").await);
}

#[tokio::test]
async fn issue39_10_the_typescript_sdk_2_pinned_to_2026_07_28_plays_through_the_surface_host_over_http()
 {
    check_typescript(&typescript_http("2026-07-28").await);
}

#[tokio::test]
async fn issue39_10_the_typescript_sdk_2_in_auto_mode_chooses_modern_at_the_surface_host_over_http()
{
    let report = typescript_http("auto").await;
    check_typescript(&report);
    assert!(
        !report["wire"].as_array().unwrap().is_empty(),
        "over HTTP: {report:#}"
    );
}

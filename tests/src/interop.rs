//! The official MCP Python SDK (`mcp` on PyPI, pinned in `tests/interop/requirements.txt`)
//! as an interop peer. [`python`] makes sure the venv exists (creating it under
//! `target/interop-venv` on first use, by `tests/interop/setup-venv.sh`) and returns its
//! interpreter, so `cargo test` needs no step of its own on a fresh machine; it is
//! `mcpl_testkit`'s, which the surface host's tests use too.

pub use mcpl_testkit::process::report;
pub use mcpl_testkit::python::{python, workspace_root};

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A script of the interop peer, by file name (`py_server.py`, `py_client.py`).
pub fn script(name: &str) -> PathBuf {
    workspace_root().join("tests/interop").join(name)
}

/// A child process killed (and reaped) when this is dropped, however the test ends.
#[derive(Debug)]
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` with its stdout piped and returns it (killed on drop) with the first
/// line it prints: the servers here print where they listen once their socket does.
pub fn started_with_first_line(mut command: Command) -> (Killed, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?} does not start: {e}"));
    let stdout = child.stdout.take().expect("piped");
    let guard = Killed(child);
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the first line");
    (guard, line.trim().to_owned())
}

/// Starts `command`, one of this workspace's servers (`mcpl-interop-server http
/// 127.0.0.1:0`, …), and returns it (killed on drop) with the address its first line,
/// `listening on ADDR`, names.
pub fn started_listening(command: Command) -> (Killed, String) {
    let (guard, line) = started_with_first_line(command);
    let addr = line
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("expected `listening on ADDR`, got {line:?}"))
        .to_owned();
    (guard, addr)
}

/// A Streamable HTTP server of the interop peer (`py_server.py http`,
/// `py_polling_server.py`), started on a free port: it and its endpoint's URL.
pub fn python_http_server(script_name: &str, args: &[&str]) -> (Killed, String) {
    let mut command = Command::new(python());
    command.arg(script(script_name)).args(args);
    let (guard, port) = started_with_first_line(command);
    (guard, format!("http://127.0.0.1:{port}/mcp"))
}

/// The `mcpl-arcade` binary of this workspace (built first when this package's tests
/// did not build it: [`mcpl_testkit::process::workspace_bin`]), looked up once.
pub fn arcade_bin() -> &'static std::path::Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| mcpl_testkit::process::workspace_bin("mcpl-games", "mcpl-arcade"))
}

/// The official MCP TypeScript SDK 2.x client (`@modelcontextprotocol/client`, pinned in
/// `tests/inspector/package-lock.json` with the 1.x SDK and the Inspector, one pin for every
/// test that drives it): installs them once per test process
/// ([`mcpl_testkit::node::inspector_dir`]) and returns the path of the script `name` in
/// `tests/inspector/`, to run with `node`.
pub fn ts2_script(name: &str) -> PathBuf {
    mcpl_testkit::node::inspector_dir().join(name)
}

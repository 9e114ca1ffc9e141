//! The official MCP Python SDK (`mcp` on PyPI, pinned in `tests/interop/requirements.txt`)
//! as an interop peer. [`python`] makes sure the venv exists (creating it under
//! `target/interop-venv` on first use, by `tests/interop/setup-venv.sh`) and returns its
//! interpreter, so `cargo test` needs no step of its own on a fresh machine; it is
//! `mcpl_testkit`'s, which the surface host's tests use too.

pub use mcpl_testkit::python::{python, workspace_root};

use std::path::PathBuf;

/// A script of the interop peer, by file name (`py_server.py`, `py_client.py`).
pub fn script(name: &str) -> PathBuf {
    workspace_root().join("tests/interop").join(name)
}

/// The one JSON line a peer script prints last (its report), after checking that it
/// exited successfully; panics with its stdout and stderr otherwise.
pub fn report(out: &std::process::Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the Python peer failed:\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().expect("one line of output");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

//! The official MCP Python SDK (`mcp` on PyPI, pinned in `tests/interop/requirements.txt`)
//! as an interop peer. [`python`] makes sure the venv exists (creating it under
//! `target/interop-venv` on first use, by `tests/interop/setup-venv.sh`) and returns its
//! interpreter, so `cargo test` needs no step of its own on a fresh machine; it is
//! `mcpl_testkit`'s, which the surface host's tests use too.

pub use mcpl_testkit::process::report;
pub use mcpl_testkit::python::{python, workspace_root};

use std::path::PathBuf;

/// A script of the interop peer, by file name (`py_server.py`, `py_client.py`).
pub fn script(name: &str) -> PathBuf {
    workspace_root().join("tests/interop").join(name)
}

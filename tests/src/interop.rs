//! The official MCP Python SDK (`mcp` on PyPI, pinned in `tests/interop/requirements.txt`)
//! as an interop peer. [`python`] makes sure the venv exists (creating it under
//! `target/interop-venv` on first use, by `tests/interop/setup-venv.sh`) and returns its
//! interpreter, so `cargo test` needs no step of its own on a fresh machine.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// A script of the interop peer, by file name (`py_server.py`, `py_client.py`).
pub fn script(name: &str) -> PathBuf {
    workspace_root().join("tests/interop").join(name)
}

/// The venv's Python interpreter, creating the venv on first use. Panics with the setup
/// script's output when the venv cannot be made (no Python, no registry): the interop
/// tests cannot run then, and saying so is better than skipping silently.
pub fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let root = workspace_root();
            let venv = std::env::var_os("MCPL_INTEROP_VENV")
                .map(PathBuf::from)
                .unwrap_or_else(|| root.join("target/interop-venv"));
            let out = Command::new("bash")
                .arg(root.join("tests/interop/setup-venv.sh"))
                .env("MCPL_INTEROP_VENV", &venv)
                .output()
                .expect("bash runs");
            assert!(
                out.status.success(),
                "could not set up the interop venv:\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            venv.join("bin/python")
        })
        .clone()
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

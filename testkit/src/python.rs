//! The official MCP Python SDK (`mcp` on PyPI, pinned in `tests/interop/requirements.txt`)
//! for the suites that run it as a peer: [`python`] makes sure its venv exists (creating it
//! under `target/interop-venv` on first use, by `tests/interop/setup-venv.sh`) and returns
//! its interpreter, so `cargo test` needs no step of its own on a fresh machine.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testkit/ has a parent")
        .to_path_buf()
}

/// The venv's Python interpreter, creating the venv on first use (at `MCPL_INTEROP_VENV`
/// when set, else `target/interop-venv` in the workspace). Panics with the setup script's
/// output when the venv cannot be made (no Python, no registry): the interop tests cannot
/// run then, and saying so is better than skipping silently.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_root_holds_the_setup_script() {
        assert!(
            workspace_root()
                .join("tests/interop/setup-venv.sh")
                .is_file()
        );
    }
}

//! The official MCP TypeScript SDKs (1.x and 2.x) and the MCP Inspector, pinned in
//! `tests/inspector/package-lock.json` (one pin for every test that drives them), for the
//! suites that run their clients as peers with `node`: [`inspector_dir`] installs them once
//! per test process.

use crate::python::workspace_root;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Once;

/// `tests/inspector/`, where the peer scripts are, with the pinned npm packages installed
/// (by `tests/inspector/setup.sh` on the first call of the test process, a no-op when the
/// lock has not changed). Panics with the script's output when they cannot be installed
/// (no node, no registry): the tests that need them cannot run then.
pub fn inspector_dir() -> PathBuf {
    static SETUP: Once = Once::new();
    let dir = workspace_root().join("tests/inspector");
    SETUP.call_once(|| {
        let out = Command::new("bash")
            .arg(dir.join("setup.sh"))
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "could not install the TypeScript SDKs:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    });
    dir
}

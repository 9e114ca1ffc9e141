//! Child processes of the tests: where a binary of the project listens, read from the
//! `listening on ADDR` lines it prints first (`mcpl-arcade serve`, `mcpl-surface serve
//! --http`), so a test connects as soon as it is up and never sleeps; and the report a peer
//! script (an official SDK's client or server) prints last; and a binary of another of
//! the workspace's packages, built when the test's own package did not build it
//! ([`workspace_bin`]).

use crate::within;
use std::path::{Path, PathBuf};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

/// Reads the first `n` lines of `child`'s stdout (which must be piped), each `listening on
/// ADDR`, and returns the `ADDR`s in order. Each line must come within [`LIMIT`](crate::LIMIT).
/// The rest of stdout is not read: the pipe is closed.
///
/// Panics on any other line, or when stdout ends first: the binary did not start.
pub async fn listening(child: &mut Child, n: usize) -> Vec<String> {
    let stdout = child.stdout.take().expect("the child's stdout is piped");
    let mut lines = BufReader::new(stdout).lines();
    let mut addrs = Vec::with_capacity(n);
    for _ in 0..n {
        let line = within(lines.next_line())
            .await
            .expect("reading the child's stdout")
            .expect("a listening line");
        let addr = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected line {line:?}"));
        addrs.push(addr.to_owned());
    }
    addrs
}

/// The one JSON line a peer script prints last (its report), after checking that it
/// exited successfully; panics with its stdout and stderr otherwise.
pub fn report(out: &std::process::Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the peer failed:\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().expect("one line of output");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// The binary `bin` of the workspace's package `package`, beside the test's own target
/// directory's binaries (`cargo test --workspace` builds it). `cargo test -p OTHER` builds
/// only that package's binaries: then it is built with cargo first; a stale one is used as
/// it is (build `package` again after changing it).
///
/// Panics when cargo cannot build it.
pub fn workspace_bin(package: &str, bin: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    // target/<profile>/deps/<test> → target/<profile>/<bin>
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the profile directory");
    let path = dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    if path.exists() {
        return path;
    }
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", package, "--bin", bin])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo could not build {bin}");
    assert!(path.exists(), "no {} after building it", path.display());
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;
    use tokio::process::Command;

    fn sh(script: &str) -> Child {
        Command::new("sh")
            .args(["-c", script])
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("sh runs")
    }

    async fn output(script: &str) -> std::process::Output {
        sh(script).wait_with_output().await.expect("sh runs")
    }

    #[tokio::test]
    async fn a_report_is_the_last_line() {
        let out = output(r#"echo 'working'; echo '{"ok": true}'"#).await;
        assert_eq!(report(&out), serde_json::json!({"ok": true}));
    }

    #[tokio::test]
    #[should_panic(expected = "the peer failed")]
    async fn a_peer_that_failed_has_no_report() {
        report(&output(r#"echo '{"ok": true}'; exit 3"#).await);
    }

    #[tokio::test]
    async fn reads_the_addresses_of_the_first_lines() {
        let mut child = sh(
            "echo 'listening on ws://127.0.0.1:1'; echo 'listening on http://[::1]:2/mcp'; echo more",
        );
        assert_eq!(
            listening(&mut child, 2).await,
            ["ws://127.0.0.1:1", "http://[::1]:2/mcp"]
        );
    }

    #[tokio::test]
    #[should_panic(expected = "unexpected line \"error: address in use\"")]
    async fn another_line_fails_the_test() {
        let mut child = sh("echo 'error: address in use'");
        listening(&mut child, 1).await;
    }

    #[tokio::test]
    #[should_panic(expected = "a listening line")]
    async fn an_end_of_output_fails_the_test() {
        let mut child = sh("echo 'listening on ws://127.0.0.1:1'");
        listening(&mut child, 2).await;
    }
}

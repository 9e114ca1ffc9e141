//! Support for the conformance kit's tests (`conformance_*.rs`): the real
//! `mcpl-fixture-server` on a network listener (its URL read from its first line of
//! stdout), and the real `mcpl-conformance` run against it, its report parsed into lines.

#![allow(dead_code)] // each test file uses a different part of this module

pub use mcpl_tests::conformance::VectorId;
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};

/// The fixture server binary.
pub const FIXTURE: &str = env!("CARGO_BIN_EXE_mcpl-fixture-server");
/// The runner binary.
pub const RUNNER: &str = env!("CARGO_BIN_EXE_mcpl-conformance");

/// A fixture server listening on 127.0.0.1, killed when dropped.
pub struct Fixture {
    child: Child,
    /// Kept open so the server never writes into a closed pipe.
    _stdout: BufReader<ChildStdout>,
    /// The URL it printed.
    pub url: String,
}

impl Fixture {
    /// Spawns `mcpl-fixture-server --ws|--http 127.0.0.1:0 EXTRA…` and reads the URL it
    /// bound (its first line of stdout, written once the socket is bound).
    pub fn spawn(transport: &str, extra: &[&str]) -> Fixture {
        let mut child = Command::new(FIXTURE)
            .arg(transport)
            .arg("127.0.0.1:0")
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the fixture server starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("the fixture server prints its URL");
        let url = line.trim().to_owned();
        assert!(
            ["ws://", "http://", "wss://", "https://"]
                .iter()
                .any(|scheme| url.starts_with(scheme)),
            "not a URL: {line:?}"
        );
        Fixture {
            child,
            _stdout: stdout,
            url,
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `--cmd` that spawns the fixture server on stdio, with `extra` flags.
pub fn stdio_cmd(extra: &[&str]) -> String {
    let mut cmd = format!("'{FIXTURE}' --stdio");
    for e in extra {
        cmd.push(' ');
        cmd.push_str(e);
    }
    cmd
}

/// A finished run of `mcpl-conformance`.
pub struct Run {
    /// How it exited.
    pub status: ExitStatus,
    /// Its stdout, line by line.
    pub lines: Vec<String>,
    /// Its stderr, for failure messages.
    pub stderr: String,
}

impl Run {
    /// The report line of vector `n` of RFC-014 §9 (0: the contract check).
    pub fn line(&self, n: u8) -> &str {
        self.line_of(VectorId::Rfc(n))
    }

    /// The report line of the stateless profile's vector S`n`.
    pub fn line_s(&self, n: u8) -> &str {
        self.line_of(VectorId::Stateless(n))
    }

    /// The report line of vector `id`.
    pub fn line_of(&self, id: VectorId) -> &str {
        let prefix = if id == VectorId::Rfc(0) {
            "contract ".to_owned()
        } else {
            format!("vector {id} ")
        };
        self.lines
            .iter()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no line for vector {id}:\n{}", self.lines.join("\n")))
    }

    /// The closing tally line.
    pub fn summary(&self) -> &str {
        self.lines.last().map(String::as_str).unwrap_or_default()
    }

    /// Everything it printed, for assertion messages.
    pub fn dump(&self) -> String {
        format!("{}\n--- stderr ---\n{}", self.lines.join("\n"), self.stderr)
    }
}

/// Vectors of RFC-014 §9 by number.
pub fn rfc(numbers: &[u8]) -> Vec<VectorId> {
    numbers.iter().map(|n| VectorId::Rfc(*n)).collect()
}

/// The stateless profile's vectors by number.
pub fn stateless(numbers: &[u8]) -> Vec<VectorId> {
    numbers.iter().map(|n| VectorId::Stateless(*n)).collect()
}

/// Runs `mcpl-conformance server ARGS…` to the end.
pub fn conformance(args: &[&str]) -> Run {
    let out = Command::new(RUNNER)
        .arg("server")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the runner runs");
    Run {
        status: out.status,
        lines: String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Asserts every check of the runner passed, except `skipped` (each with a reason), with no
/// departure from the fixture contract, and the run exited successfully with the matching
/// tally.
pub fn assert_all_pass(run: &Run, skipped: &[VectorId]) {
    assert_rfc_passes(run, skipped, &[]);
    assert!(run.status.success(), "{}", run.dump());
}

/// Asserts every RFC check passed, except `skipped`, and that exactly the vectors in
/// `departing` noted departures from the fixture contract.
///
/// The fixture contract keeps toolsets, so S13 (an idle principal's toolsets ending) is
/// skipped in every full run against the fixture: it runs against the fixture started
/// with `--idle-end-ms` (`conformance_fixture.rs`, `server_vectors.rs`).
pub fn assert_rfc_passes(run: &Run, skipped: &[VectorId], departing: &[VectorId]) {
    let mut skipped = skipped.to_vec();
    if !skipped.contains(&VectorId::Stateless(13)) {
        skipped.push(VectorId::Stateless(13));
    }
    let skipped = skipped.as_slice();
    let all = mcpl_tests::conformance::vectors();
    for v in all {
        let line = run.line_of(v.id);
        let tag = if v.id == VectorId::Rfc(0) {
            "[fixture]"
        } else {
            "[RFC]"
        };
        if skipped.contains(&v.id) {
            assert!(
                line.contains(&format!(": skip {tag}: ")),
                "vector {} should be skipped, with a reason: {line}\n{}",
                v.id,
                run.dump()
            );
        } else {
            assert!(
                line.contains(&format!(": pass {tag}")),
                "vector {} did not pass: {line}\n{}",
                v.id,
                run.dump()
            );
            assert_eq!(
                line.contains("departs [fixture]"),
                departing.contains(&v.id),
                "vector {}: {line}\n{}",
                v.id,
                run.dump()
            );
        }
    }
    let rfc = all.len() - 1;
    assert_eq!(
        run.summary(),
        format!(
            "{} passed, 0 failed ({} skipped) [RFC]; fixture contract: {} departed",
            rfc - skipped.len(),
            skipped.len(),
            departing.len()
        ),
        "{}",
        run.dump()
    );
}

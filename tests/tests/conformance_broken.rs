//! The conformance runner fails servers that break RFC-014: the fixture server with a
//! rule broken on purpose (`--misbehave`), spoken to by the real runner binary. This shows
//! the runner's passes mean something.

use crate::conformance_support;

use conformance_support::*;

#[test]
fn a_gap_in_the_revs_fails_the_order_vectors_over_websocket() {
    let server = Fixture::spawn("--ws", &["--misbehave", "skip-rev"]);
    let run = conformance(&["--url", &server.url, "--timeout-ms", "3000"]);
    assert_eq!(run.status.code(), Some(1), "{}", run.dump());
    for n in [2, 4, 27] {
        let line = run.line(n);
        assert!(line.contains(": fail [RFC]: "), "{line}\n{}", run.dump());
    }
    assert!(
        run.line(4).contains("not consecutively from 1"),
        "{}",
        run.dump()
    );
    assert!(run.line(27).contains("not the next one"), "{}", run.dump());
    // Hosts without toolHints are never sent a rev, so nothing there can break.
    for n in [8, 26, 36] {
        assert!(run.line(n).ends_with(": pass [RFC]"), "{}", run.dump());
    }
    let summary = run.summary();
    assert!(
        summary.contains(" passed, ") && !summary.contains(" 0 failed"),
        "{}",
        run.dump()
    );
}

#[test]
fn a_gap_in_the_revs_fails_over_stdio_too() {
    let cmd = stdio_cmd(&["--misbehave", "skip-rev"]);
    let run = conformance(&["--cmd", &cmd, "--only", "4", "--timeout-ms", "3000"]);
    assert_eq!(run.status.code(), Some(1), "{}", run.dump());
    assert_eq!(run.lines.len(), 2, "{}", run.dump());
    assert!(run.line(4).contains(": fail [RFC]: "), "{}", run.dump());
    assert_eq!(
        run.summary(),
        "0 passed, 1 failed (0 skipped) [RFC]; fixture contract: 0 departed"
    );
}

#[test]
fn a_tools_list_changed_after_a_definition_change_fails_vector_7() {
    let cmd = stdio_cmd(&["--misbehave", "list-changed"]);
    let run = conformance(&["--cmd", &cmd, "--only", "0,7,27"]);
    assert_eq!(run.status.code(), Some(1), "{}", run.dump());
    assert!(run.line(0).ends_with(": pass [fixture]"), "{}", run.dump());
    assert!(
        run.line(7).contains(": fail [RFC]: ") && run.line(7).contains("tools/list_changed"),
        "{}",
        run.dump()
    );
    // The revs are right; only vector 7's rule is broken.
    assert!(run.line(27).ends_with(": pass [RFC]"), "{}", run.dump());
    assert_eq!(
        run.summary(),
        "1 passed, 1 failed (0 skipped) [RFC]; fixture contract: 0 departed"
    );
}

#[test]
fn the_runner_cannot_pass_a_server_it_cannot_start() {
    let run = conformance(&["--cmd", "/nonexistent/mcpl-server --stdio", "--only", "1,5"]);
    assert_eq!(run.status.code(), Some(1), "{}", run.dump());
    assert!(
        run.line(1).contains(": fail [RFC]: transport: "),
        "{}",
        run.dump()
    );
    assert!(
        run.line(5).contains(": fail [RFC]: transport: "),
        "{}",
        run.dump()
    );
    assert_eq!(
        run.summary(),
        "0 passed, 2 failed (0 skipped) [RFC]; fixture contract: 0 departed"
    );
}

// The stateless profile (`docs/rfc014-stateless.md` §5): the fixture with one of its rules
// broken on purpose, spoken to over stdio with modern requests; the runner names the
// vector whose rule it is, and the vectors whose rules still hold pass.

#[test]
fn conformance_s4_delta_since_fails_a_delta_repeating_stale_entries() {
    let cmd = stdio_cmd(&["--misbehave", "stale-delta"]);
    let run = conformance(&["--cmd", &cmd, "--only", "S4,S14", "--timeout-ms", "3000"]);
    assert_eq!(run.status.code(), Some(1), "{}", run.dump());
    let line = run.line_s(4);
    assert!(
        line.contains(": fail [RFC]: ") && line.contains("at or below its since"),
        "{}",
        run.dump()
    );
    // A tools/list with since 0 is a statement, which the break leaves alone.
    assert!(run.line_s(14).ends_with(": pass [RFC]"), "{}", run.dump());
    assert_eq!(
        run.summary(),
        "1 passed, 1 failed (0 skipped) [RFC]; fixture contract: 0 departed"
    );
}

#[test]
fn conformance_s3_since_zero_fails_without_a_statement() {
    let cmd = stdio_cmd(&["--misbehave", "no-statement"]);
    let run = conformance(&["--cmd", &cmd, "--only", "S2,S3", "--timeout-ms", "3000"]);
    assert_eq!(run.status.code(), Some(1), "{}", run.dump());
    let line = run.line_s(3);
    assert!(
        line.contains(": fail [RFC]: ") && line.contains("is not a full statement"),
        "{}",
        run.dump()
    );
    // A request without mcpl/core is shown no hints at all: nothing there to break.
    assert!(run.line_s(2).ends_with(": pass [RFC]"), "{}", run.dump());
    assert_eq!(
        run.summary(),
        "1 passed, 1 failed (0 skipped) [RFC]; fixture contract: 0 departed"
    );
}

#[test]
fn conformance_s4_delta_since_fails_a_change_repeating_a_version() {
    let cmd = stdio_cmd(&["--misbehave", "repeat-version"]);
    let run = conformance(&["--cmd", &cmd, "--only", "S4,S14", "--timeout-ms", "3000"]);
    assert_eq!(run.status.code(), Some(1), "{}", run.dump());
    let line = run.line_s(4);
    assert!(
        line.contains(": fail [RFC]: ") && line.contains("every change takes a new version"),
        "{}",
        run.dump()
    );
    assert!(run.line_s(14).ends_with(": pass [RFC]"), "{}", run.dump());
    assert_eq!(
        run.summary(),
        "1 passed, 1 failed (0 skipped) [RFC]; fixture contract: 0 departed"
    );
}

#[test]
fn conformance_s9_hints_only_on_streams_that_asked_for_them() {
    let cmd = stdio_cmd(&["--misbehave", "hints-to-all-streams"]);
    let run = conformance(&["--cmd", &cmd, "--only", "S9,S10", "--timeout-ms", "3000"]);
    assert_eq!(run.status.code(), Some(1), "{}", run.dump());
    let line = run.line_s(9);
    assert!(
        line.contains(": fail [RFC]: ")
            && line.contains("a stream that was not granted mcpl/hints was sent"),
        "{}",
        run.dump()
    );
    // One stream, which asked: the break has nowhere else to send.
    assert!(run.line_s(10).ends_with(": pass [RFC]"), "{}", run.dump());
    assert_eq!(
        run.summary(),
        "1 passed, 1 failed (0 skipped) [RFC]; fixture contract: 0 departed"
    );
}

#[test]
fn conformance_s17_s19_events_only_on_streams_that_asked_for_them_under_the_grant() {
    let cmd = stdio_cmd(&["--misbehave", "events-to-all-streams"]);
    let run = conformance(&[
        "--cmd",
        &cmd,
        "--only",
        "S9,S17,S19",
        "--timeout-ms",
        "3000",
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", run.dump());
    for n in [17, 19] {
        let line = run.line_s(n);
        assert!(
            line.contains(": fail [RFC]: ") && line.contains("was sent notifications/mcpl/event"),
            "{}",
            run.dump()
        );
    }
    // Hints go only where they were asked for: the break copies events alone.
    assert!(run.line_s(9).ends_with(": pass [RFC]"), "{}", run.dump());
    assert_eq!(
        run.summary(),
        "1 passed, 2 failed (0 skipped) [RFC]; fixture contract: 0 departed"
    );
}

/// The profile's vectors a stdio server can run (S11 and S15 need a second connection of
/// the principal).
const STDIO_PROFILE: [u8; 9] = [1, 2, 3, 4, 8, 9, 10, 12, 14];

/// `--only` for the contract check, vector 2 and [`STDIO_PROFILE`].
fn stdio_only() -> String {
    let mut only = "0,2".to_owned();
    for n in STDIO_PROFILE {
        only.push_str(&format!(",S{n}"));
    }
    only
}

/// Against a server the profile does not apply to, each profile vector run is reported
/// skipped, saying why, and the run passes on what it could check.
fn assert_profile_skipped(run: &Run, why: &str) {
    assert_eq!(run.status.code(), Some(0), "{}", run.dump());
    assert!(run.line(0).ends_with(": pass [fixture]"), "{}", run.dump());
    assert!(run.line(2).ends_with(": pass [RFC]"), "{}", run.dump());
    for n in STDIO_PROFILE {
        let line = run.line_s(n);
        assert!(
            line.contains(": skip [RFC]: the server does not serve the stateless profile: ")
                && line.contains(why),
            "{line}\n{}",
            run.dump()
        );
    }
    assert_eq!(
        run.summary(),
        format!(
            "1 passed, 0 failed ({} skipped) [RFC]; fixture contract: 0 departed",
            STDIO_PROFILE.len()
        )
    );
}

#[test]
fn conformance_profile_is_skipped_against_a_legacy_only_server() {
    let cmd = stdio_cmd(&["--without", "modern"]);
    let run = conformance(&[
        "--cmd",
        &cmd,
        "--only",
        &stdio_only(),
        "--timeout-ms",
        "3000",
    ]);
    assert_profile_skipped(&run, "a legacy-only server");
}

#[test]
fn conformance_profile_is_skipped_against_a_server_without_mcpl_core() {
    let cmd = stdio_cmd(&["--without", "profile"]);
    let run = conformance(&[
        "--cmd",
        &cmd,
        "--only",
        &stdio_only(),
        "--timeout-ms",
        "3000",
    ]);
    assert_profile_skipped(&run, "declares no capabilities.extensions[\"mcpl/core\"]");
    // Over a network every legacy vector still runs and passes; only the profile is
    // skipped, S11 and S15 included.
    let server = Fixture::spawn("--ws", &["--without", "profile"]);
    let run = conformance(&["--url", &server.url, "--timeout-ms", "3000"]);
    assert_eq!(run.status.code(), Some(0), "{}", run.dump());
    let all = mcpl_tests::conformance::vectors();
    let profile = all.iter().filter(|v| v.id.is_stateless()).count();
    for v in all.iter().filter(|v| v.id.is_stateless()) {
        let line = run.line_of(v.id);
        assert!(
            line.contains(": skip [RFC]: the server does not serve the stateless profile: "),
            "{line}\n{}",
            run.dump()
        );
    }
    assert_eq!(
        run.summary(),
        format!(
            "{} passed, 0 failed ({profile} skipped) [RFC]; fixture contract: 0 departed",
            all.len() - 1 - profile
        ),
        "{}",
        run.dump()
    );
}

//! The conformance runner fails servers that break RFC-014: the fixture server with a
//! rule broken on purpose (`--misbehave`), spoken to by the real runner binary. This shows
//! the runner's passes mean something.

mod conformance_support;

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

//! The conformance runner against our fixture server, both real binaries, over each
//! transport: every server-side vector of spec §9 passes. Over stdio the vectors that need
//! several connections of one principal are skipped (a stdio server serves one connection
//! per process), as `tests/CONFORMANCE.md` documents; over WebSocket and Streamable HTTP
//! nothing is skipped.

use crate::conformance_support;

use conformance_support::*;

/// The vectors that need two connections of one principal to one server: RFC-014's and
/// the stateless profile's.
fn needs_shared_principal() -> Vec<VectorId> {
    let mut all = rfc(&[9, 13, 14, 32]);
    all.extend(stateless(&[11, 15]));
    all
}

#[test]
fn every_vector_passes_over_stdio_but_those_needing_a_second_connection() {
    let cmd = stdio_cmd(&[]);
    let run = conformance(&["--cmd", &cmd]);
    assert_all_pass(&run, &needs_shared_principal());
}

#[test]
fn every_vector_passes_over_websocket() {
    let server = Fixture::spawn("--ws", &[]);
    let run = conformance(&["--url", &server.url]);
    assert_all_pass(&run, &[]);
}

#[test]
fn every_vector_passes_over_streamable_http() {
    let server = Fixture::spawn("--http", &[]);
    let run = conformance(&["--url", &server.url]);
    assert_all_pass(&run, &[]);
}

#[test]
fn s13_is_skipped_saying_why_against_a_server_that_keeps_toolsets() {
    // The fixture contract's server keeps toolsets, so it states no idle time and S13
    // does not apply (it passes in-process against the fixture keeping none, on a clock
    // the run moves: `server_vectors.rs`; here it would wait on the wall clock).
    let kept = Fixture::spawn("--http", &[]);
    let run = conformance(&["--url", &kept.url, "--only", "S13"]);
    assert!(
        run.line_s(13).contains(": skip [RFC]: ") && run.line_s(13).contains("idleEndMs"),
        "{}",
        run.dump()
    );
    assert!(run.status.success(), "{}", run.dump());
}

#[test]
fn a_second_run_against_the_same_server_passes_too() {
    // A long-lived server keeps what the named principal left: the runner's names are
    // unique per run and it closes what it opens, so runs do not disturb each other.
    let server = Fixture::spawn("--ws", &[]);
    for _ in 0..2 {
        let run = conformance(&["--url", &server.url]);
        assert_all_pass(&run, &[]);
    }
}

/// A server making the other legal choices where RFC-014 leaves one (no compat tools for
/// hosts without `toolHints`, no ended ids on closed entries) passes every RFC check; the
/// runner names where it departs from the fixture contract, and fails it only with
/// `--strict`.
#[test]
fn boundary_10_a_server_making_the_other_legal_choices_passes_every_rfc_check() {
    let server = Fixture::spawn("--ws", &["--other-choices"]);
    let run = conformance(&["--url", &server.url]);
    let mut departing = rfc(&[8, 13, 26, 33, 36]);
    departing.push(VectorId::Stateless(11));
    assert_rfc_passes(&run, &[], &departing);
    assert!(run.status.success(), "{}", run.dump());
    assert!(
        run.line(26).contains("not offered toolset_open"),
        "{}",
        run.dump()
    );
    assert!(
        run.line(13).contains("carries no ended record id"),
        "{}",
        run.dump()
    );
    assert!(
        run.line_s(11).contains("carries no ended record id"),
        "{}",
        run.dump()
    );
    let strict = conformance(&["--url", &server.url, "--strict"]);
    assert_eq!(strict.status.code(), Some(1), "{}", strict.dump());
}

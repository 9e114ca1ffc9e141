//! The conformance runner against our fixture server, both real binaries, over each
//! transport: every server-side vector of spec §9 passes. Over stdio the vectors that need
//! several connections of one principal are skipped (a stdio server serves one connection
//! per process), as `tests/CONFORMANCE.md` documents, and so is S20 (a listen stream's
//! bound, checked on Streamable HTTP alone), also over WebSocket; over Streamable HTTP
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

/// What a run skips over stdio or WebSocket besides: S20, a listen stream's bound, is
/// checked on Streamable HTTP alone.
fn not_over_http() -> Vec<VectorId> {
    stateless(&[20])
}

#[test]
fn every_vector_passes_over_stdio_but_those_needing_a_second_connection() {
    let cmd = stdio_cmd(&[]);
    let run = conformance(&["--cmd", &cmd]);
    let mut skipped = needs_shared_principal();
    skipped.extend(not_over_http());
    assert_all_pass(&run, &skipped);
}

#[test]
fn every_vector_passes_over_websocket() {
    let server = Fixture::spawn("--ws", &[]);
    let run = conformance(&["--url", &server.url]);
    assert_all_pass(&run, &not_over_http());
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
        assert_all_pass(&run, &not_over_http());
    }
}

// Events on listen streams (profile §3.5): S17 and S19 over every transport the kit
// speaks modern requests on, S20 (a stream's bound) over Streamable HTTP, where the
// fixture's listen answer holds 1024 messages and the kit asks `game_burst` for more.

/// Runs `only` over stdio, WebSocket and Streamable HTTP against the fixture; each must
/// pass there, or be skipped where `skipped_over` names the transport (`stdio`, `ws`).
fn passes_over_every_transport(only: &str, skipped_over: &[&str]) {
    let ws = Fixture::spawn("--ws", &[]);
    let http = Fixture::spawn("--http", &[]);
    let cmd = stdio_cmd(&[]);
    for (transport, target) in [
        ("stdio", ["--cmd", &cmd]),
        ("ws", ["--url", &ws.url]),
        ("http", ["--url", &http.url]),
    ] {
        let run = conformance(&[target[0], target[1], "--only", only]);
        let outcome = if skipped_over.contains(&transport) {
            ": skip [RFC]: "
        } else {
            ": pass [RFC]"
        };
        for line in &run.lines[..run.lines.len() - 1] {
            assert!(
                line.contains(outcome),
                "over {transport}: {line}\n{}",
                run.dump()
            );
        }
        assert!(run.status.success(), "over {transport}: {}", run.dump());
    }
}

#[test]
fn conformance_s17_an_events_stream_under_a_push_grant_passes_over_every_transport() {
    passes_over_every_transport("S17", &[]);
}

#[test]
fn conformance_s19_an_undelivered_event_passes_over_every_transport() {
    passes_over_every_transport("S19", &[]);
}

#[test]
fn conformance_s20_a_streams_bound_passes_over_streamable_http_and_is_skipped_elsewhere() {
    passes_over_every_transport("S20", &["stdio", "ws"]);
    let http = Fixture::spawn("--http", &[]);
    let run = conformance(&["--url", &http.url, "--only", "S20"]);
    assert!(run.line_s(20).ends_with(": pass [RFC]"), "{}", run.dump());
    let ws = Fixture::spawn("--ws", &[]);
    let run = conformance(&["--url", &ws.url, "--only", "S20"]);
    assert!(
        run.line_s(20).contains("on Streamable HTTP alone"),
        "{}",
        run.dump()
    );
}

#[test]
fn s20_is_skipped_saying_why_against_a_server_without_game_burst() {
    // game_burst is the contract's optional tool: a server that lists none cannot be
    // made to raise many events at once, so S20 does not run against it.
    let without = Fixture::spawn("--http", &["--without", "burst"]);
    let run = conformance(&["--url", &without.url, "--only", "S20"]);
    assert!(
        run.line_s(20).contains(": skip [RFC]: ") && run.line_s(20).contains("lists no game_burst"),
        "{}",
        run.dump()
    );
    assert!(run.status.success(), "{}", run.dump());
    // A burst the stream's queue holds whole is no check of its bound: the kit says so.
    let server = Fixture::spawn("--http", &[]);
    let run = conformance(&[
        "--url",
        &server.url,
        "--only",
        "S20",
        "--event-burst",
        "100",
    ]);
    assert!(
        run.line_s(20).contains(": fail [RFC]: ")
            && run
                .line_s(20)
                .contains("all 100 events of one step arrived"),
        "{}",
        run.dump()
    );
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
    assert_rfc_passes(&run, &not_over_http(), &departing);
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

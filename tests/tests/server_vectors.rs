//! The server-side vectors of spec §9, each a test named after it: the conformance
//! runner's own vector function (`mcpl_tests::conformance`, the one definition of each
//! vector) run against the fixture server in this process, on a loopback WebSocket. The
//! same functions run against the fixture binary over stdio, WebSocket and Streamable HTTP
//! in `conformance_fixture.rs`, and against any other server through `mcpl-conformance`.
//!
//! A test passes when its vector passes every RFC check and the fixture departs from none
//! of the fixture contract's choices (`tests/CONFORMANCE.md`). What the SDK does beyond
//! the vectors, with the test arcade of `server_support`, is proved in `server_*.rs`.

use mcpl_server::{Clock, ManualClock};
use mcpl_tests::conformance::PassTime;
use mcpl_tests::conformance::{Outcome, RunOptions, Target, VectorId, run, vectors};
use mcpl_tests::fixture::{self, Choices, build_idle, serve_ws};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The in-process fixture's Streamable HTTP queue for S20 (`ServerOptions::http_queue_limit`).
const S20_QUEUE: usize = 16;
/// The events S20 asks for at once there: well past [`S20_QUEUE`].
const S20_BURST: u64 = 40;

/// Runs vector `number` against an in-process fixture server and asserts it passed with
/// no departure from the fixture contract.
async fn passes(number: u8) {
    passes_id(VectorId::Rfc(number)).await
}

/// Runs the stateless profile's vector S`number` likewise (modern requests of the named
/// principal on the loopback WebSocket).
async fn passes_s(number: u8) {
    passes_id(VectorId::Stateless(number)).await
}

async fn passes_id(id: VectorId) {
    // S13 applies only to a server that does not keep toolsets; the fixture contract's
    // keeps them (a full run against it reports S13 skipped), so S13 runs against the
    // fixture built with an idle time, on a clock the run moves once the principal's
    // session has ended: no wait on the wall clock.
    let s13 = id == VectorId::Stateless(13);
    let clock = Arc::new(ManualClock::new(SystemTime::now()));
    let server = build_idle(
        Choices::Fixture,
        s13.then_some(Duration::from_secs(5)),
        s13.then(|| clock.clone() as Arc<dyn Clock>),
    )
    .expect("the fixture server is valid");
    // S20 checks a stream's bound on Streamable HTTP alone (skipped on WebSocket): the
    // fixture there with a small queue, and a burst past it, so the run stays quick.
    let listener = if id == VectorId::Stateless(20) {
        let mut options = fixture::options();
        options.http_queue_limit = S20_QUEUE;
        server
            .serve_http(([127, 0, 0, 1], 0).into(), Arc::new(options))
            .await
            .expect("binding a loopback port")
    } else {
        serve_ws(&server).await
    };
    let mut opts = RunOptions::new(Target::Url(listener.url().to_owned()));
    opts.event_burst = S20_BURST;
    if s13 {
        opts.pass_time = Some(PassTime::new(move |d| {
            let (mut sessions, clock) = (server.watch_sessions(), clock.clone());
            Box::pin(async move {
                sessions
                    .wait_for(|n| *n == 0)
                    .await
                    .expect("the session count");
                clock.advance(d);
            })
        }));
    }
    let report = run(&opts, Some(&[id]), |_| {}).await;
    let [line] = report.lines.as_slice() else {
        panic!("the runner has no vector {id}: {:?}", report.lines);
    };
    assert_eq!(line.outcome, Outcome::Pass, "{line}");
    assert!(line.departures.is_empty(), "{line}");
}

#[actix::test]
async fn the_fixture_meets_the_fixture_contract() {
    passes(0).await;
}

#[actix::test]
async fn vector_01_tools_list_lists_every_tool_visible_or_not() {
    passes(1).await;
}

#[actix::test]
async fn vector_02_a_call_reports_its_own_changes_in_its_result_and_no_push_follows() {
    passes(2).await;
}

#[actix::test]
async fn vector_03_anothers_change_is_pushed_with_its_event_and_not_restated_if_refused() {
    passes(3).await;
}

#[actix::test]
async fn vector_04_revs_are_consecutive_across_results_pushes_and_standalone_hints() {
    passes(4).await;
}

#[actix::test]
async fn vector_05_open_returns_instance_name_and_calls_carry_it() {
    passes(5).await;
}

#[actix::test]
async fn vector_06_several_instances_and_none_named_fails_naming_them() {
    passes(6).await;
}

#[actix::test]
async fn vector_07_a_definition_change_arrives_without_tools_list_changed() {
    passes(7).await;
}

#[actix::test]
async fn vector_08_a_host_without_tool_hints_gets_no_hints_of_any_kind() {
    passes(8).await;
}

#[actix::test]
async fn vector_09_after_a_reconnect_the_kept_instance_is_listed_and_reopening_adopts() {
    passes(9).await;
}

#[actix::test]
async fn vector_10_an_undeclared_group_is_listed_and_stated_never_tracked_or_gated() {
    passes(10).await;
}

#[actix::test]
async fn vector_11_calls_of_invisible_tools_or_closed_toolsets_say_why() {
    passes(11).await;
}

#[actix::test]
async fn vector_13_ended_records_persist_across_connections_under_one_id() {
    passes(13).await;
}

#[actix::test]
async fn vector_14_an_open_on_one_connection_reaches_another_on_its_own_revs() {
    passes(14).await;
}

#[actix::test]
async fn vector_16_a_toolsets_tool_is_dynamic_though_declared_static() {
    passes(16).await;
}

#[actix::test]
async fn vector_17_opening_an_open_instance_adopts_it_and_reports_other_options() {
    passes(17).await;
}

#[actix::test]
async fn vector_18_a_proposed_name_is_used_as_given_or_refused() {
    passes(18).await;
}

#[actix::test]
async fn vector_21_statement_and_tools_list_answered_consistently_mid_stream() {
    passes(21).await;
}

#[actix::test]
async fn vector_23_the_statement_is_full_and_what_it_leaves_out_is_invisible() {
    passes(23).await;
}

#[actix::test]
async fn vector_25_a_default_open_toolset_is_listed_without_an_open() {
    passes(25).await;
}

#[actix::test]
async fn vector_26_a_plain_host_plays_through_compat_tools_and_implicit_opens() {
    passes(26).await;
}

#[actix::test]
async fn vector_27_results_with_hints_take_the_next_rev_and_tools_list_names_the_last() {
    passes(27).await;
}

#[actix::test]
async fn vector_29_a_cancelled_call_sends_its_changes_as_tools_hints() {
    passes(29).await;
}

#[actix::test]
async fn vector_31_without_push_events_anothers_changes_come_as_tools_hints() {
    passes(31).await;
}

#[actix::test]
async fn vector_32_a_close_and_a_visibility_change_reach_the_principals_others() {
    passes(32).await;
}

#[actix::test]
async fn vector_33_a_manifest_change_removing_a_toolset_ends_its_instances() {
    passes(33).await;
}

#[actix::test]
async fn vector_35_a_push_with_hints_is_never_retried() {
    passes(35).await;
}

#[actix::test]
async fn vector_36_hinted_tools_are_plain_static_tools_and_calls_reach_the_only_instance() {
    passes(36).await;
}

#[actix::test]
async fn vector_38_an_empty_statement_still_takes_a_rev() {
    passes(38).await;
}

#[actix::test]
async fn conformance_s01_discover_declaring_mcpl_core_states_the_manifest() {
    passes_s(1).await;
}

#[actix::test]
async fn conformance_s02_a_modern_request_without_mcpl_core_is_shown_no_hints() {
    passes_s(2).await;
}

#[actix::test]
async fn conformance_s03_since_zero_is_answered_a_full_statement() {
    passes_s(3).await;
}

#[actix::test]
async fn conformance_s04_a_delta_carries_exactly_what_was_stamped_after_since() {
    passes_s(4).await;
}

#[actix::test]
async fn conformance_s08_since_behind_a_forgotten_tombstone_gets_a_statement() {
    passes_s(8).await;
}

#[actix::test]
async fn conformance_s09_a_hints_stream_is_told_every_change_stamped() {
    passes_s(9).await;
}

#[actix::test]
async fn conformance_s10_a_stream_opened_behind_is_sent_the_delta_first() {
    passes_s(10).await;
}

#[actix::test]
async fn conformance_s11_an_end_from_outside_reaches_the_next_result_once() {
    passes_s(11).await;
}

#[actix::test]
async fn conformance_s12_a_retried_open_adopts_and_a_retried_close_succeeds() {
    passes_s(12).await;
}

#[actix::test]
async fn conformance_s13_an_idle_principals_toolsets_end_after_idle_end_ms_with_records() {
    passes_s(13).await;
}

#[actix::test]
async fn conformance_s14_a_hinted_tools_list_is_ordered_private_and_versioned() {
    passes_s(14).await;
}

#[actix::test]
async fn conformance_s15_a_legacy_connection_and_modern_requests_agree() {
    passes_s(15).await;
}

#[actix::test]
async fn conformance_s17_an_events_stream_under_a_push_grant_is_sent_each_event() {
    passes_s(17).await;
}

#[actix::test]
async fn conformance_s19_an_event_with_no_events_stream_is_not_delivered_its_changes_are() {
    passes_s(19).await;
}

#[actix::test]
async fn conformance_s20_events_past_a_streams_bound_are_dropped_and_the_delta_has_them() {
    passes_s(20).await;
}

/// Every vector of the runner has its test here, and each test runs its own vector: a
/// vector added to the runner fails this until it is given a test named after it.
#[test]
fn every_vector_of_the_runner_has_a_test_named_after_it() {
    let source = include_str!("server_vectors.rs");
    let mut tested = Vec::new();
    for (i, _) in source.match_indices("\nasync fn vector_") {
        let name = &source[i + "\nasync fn ".len()..];
        let number: u8 = name["vector_".len().."vector_".len() + 2]
            .parse()
            .expect("vector_NN_");
        let body = &name[..name.find("\n}").expect("a body")];
        assert!(
            body.contains(&format!("passes({number}).await")),
            "{} does not run vector {number}",
            &name[..name.find('(').unwrap_or(name.len())]
        );
        tested.push(VectorId::Rfc(number));
    }
    for (i, _) in source.match_indices("\nasync fn conformance_s") {
        let name = &source[i + "\nasync fn ".len()..];
        let digits = &name["conformance_s".len().."conformance_s".len() + 2];
        let number: u8 = digits.parse().expect("conformance_sNN_");
        let body = &name[..name.find("\n}").expect("a body")];
        assert!(
            body.contains(&format!("passes_s({number}).await")),
            "{} does not run vector S{number}",
            &name[..name.find('(').unwrap_or(name.len())]
        );
        tested.push(VectorId::Stateless(number));
    }
    let all: Vec<VectorId> = vectors()
        .iter()
        .map(|v| v.id)
        .filter(|id| *id != VectorId::Rfc(0))
        .collect();
    assert_eq!(tested, all);
}

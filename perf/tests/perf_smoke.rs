//! `sim-perf` in miniature: each measurement on a few connections, calls, sessions and
//! hosts, checking that the harness works and counts rightly — every call answered once
//! with the light tool's text, every session held, every host back and resynchronised.
//! No speed is asserted: the figures depend on the machine.

use sim_perf::{Measure, PerfConfig, PerfReport, run, run_isolated};
use std::path::PathBuf;
use std::time::Duration;

/// A tiny configuration running only `only`.
fn tiny(only: &[Measure]) -> PerfConfig {
    PerfConfig {
        only: only.to_vec(),
        connections: 5,
        ws_in_flight: 8,
        http_in_flight: 2,
        calls: Some(200),
        // Two windows of each figure, alternating with its floor's: each sends the budget.
        rounds: 2,
        latency_warmup: 10,
        latency_calls: 100,
        idle_sessions: 50,
        client_exe: None,
        drop_hosts: 10,
        host_threads: 1,
        drop_limit: Duration::from_secs(5),
        ..Default::default()
    }
}

fn measured(config: &PerfConfig) -> PerfReport {
    run(config).unwrap_or_else(|e| panic!("the measurement could not be made: {e}"))
}

#[test]
fn every_pipelined_call_is_answered_once_over_websocket_and_http() {
    let report = measured(&tiny(&[Measure::Ws, Measure::Http]));
    for (name, t) in [
        ("ws", &report.ws),
        ("http", &report.http),
        ("ws floor", &report.floors.ws),
        ("http floor", &report.floors.http),
    ] {
        let t = t
            .as_ref()
            .unwrap_or_else(|| panic!("{name} was not measured"));
        assert_eq!(t.tally.sent, 2 * 200, "{name}: {t:?}");
        assert_eq!(t.tally.answered, 2 * 200, "{name}: {t:?}");
        assert_eq!(
            (t.tally.wrong, t.tally.unexpected, t.tally.lost),
            (0, 0, 0),
            "{name}: {t:?}"
        );
        assert_eq!(t.measured_calls, 2 * 200, "{name}: {t:?}");
        assert_eq!(
            t.window_rates.len(),
            2,
            "{name}: one rate per window: {t:?}"
        );
        assert!(t.complete() && t.calls_per_sec > 0.0, "{name}: {t:?}");
    }
    assert_eq!(report.ws.as_ref().map(|t| t.in_flight), Some(5 * 8));
    assert_eq!(report.http.as_ref().map(|t| t.in_flight), Some(5 * 2));
    assert!(report.latency.is_none() && report.idle.is_none());
    let names: Vec<&str> = report.rows().iter().map(|r| r.name).collect();
    assert_eq!(names, ["ws", "http"]);
    let table = report.table();
    assert!(
        table.contains("100,000") && table.contains("25,000") && table.contains("floor"),
        "{table}"
    );
    // Each figure judged against its floor, all four numbers in the JSON.
    let json = serde_json::to_value(&report).expect("the report as JSON");
    let judged: Vec<_> = json["ratios"]
        .as_array()
        .expect("ratios")
        .iter()
        .map(|r| r["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(judged, ["ws", "http"], "{json}");
    for r in json["ratios"].as_array().into_iter().flatten() {
        assert!(
            r["figure"].as_f64() > Some(0.0) && r["floor"].as_f64() > Some(0.0),
            "{r}"
        );
        assert!(
            r["ratio"].is_f64() && r["goal"].is_string() && r["met"].is_boolean(),
            "{r}"
        );
    }
}

/// The bare echo's latency was measured beside ours, every call answered.
fn echo_timed_every_call(report: &PerfReport) {
    let echo = report
        .floors
        .latency
        .as_ref()
        .expect("the echo's latency was measured");
    assert_eq!((echo.calls, echo.answered), (100, 100), "{echo:?}");
}

#[test]
fn latency_times_every_call() {
    let report = measured(&tiny(&[Measure::Latency]));
    echo_timed_every_call(&report);
    let judged: Vec<&str> = report.ratios.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(judged, ["latency p50", "latency p99"]);
    let l = report.latency.expect("latency was measured");
    assert_eq!((l.calls, l.answered), (100, 100), "{l:?}");
    assert!(
        l.p50_us > 0.0 && l.p50_us <= l.p99_us && l.p99_us <= l.max_us,
        "{l:?}"
    );
}

#[test]
fn rmcp_serves_the_same_tool_to_the_same_client() {
    let mut config = tiny(&[Measure::Rmcp]);
    config.connections = 3;
    config.calls = Some(60);
    let report = measured(&config);
    let c = report.rmcp.expect("the comparison was made");
    for (side, t) in [
        ("ours", &c.ours),
        ("rmcp", &c.rmcp),
        ("rmcp stateless", &c.rmcp_stateless),
    ] {
        assert_eq!(
            (t.tally.sent, t.tally.answered),
            (2 * 60, 2 * 60),
            "{side}: {t:?}"
        );
        assert!(t.complete(), "{side}: {t:?}");
    }
    assert!(c.ratio > 0.0, "{c:?}");
    // Ours is measured for the comparison, its windows in turn with rmcp's; the `http` row
    // (beside its floor) is a measurement of its own.
    assert_eq!(report.http, None);
}

#[test]
fn idle_sessions_are_all_held_with_clients_in_a_child_process() {
    let mut config = tiny(&[Measure::Idle]);
    config.client_exe = Some(PathBuf::from(env!("CARGO_BIN_EXE_sim-perf")));
    let idle = measured(&config).idle.expect("idle was measured");
    assert_eq!((idle.sessions, idle.held), (50, 50), "{idle:?}");
    assert!(idle.clients_in_child, "{idle:?}");
    assert!(idle.rss_before > 0 && idle.rss_after > 0, "{idle:?}");
}

#[test]
fn idle_sessions_are_all_held_with_clients_in_process() {
    let mut config = tiny(&[Measure::Idle]);
    config.idle_sessions = 20;
    let idle = measured(&config).idle.expect("idle was measured");
    assert_eq!((idle.sessions, idle.held), (20, 20), "{idle:?}");
    assert!(!idle.clients_in_child, "{idle:?}");
}

#[test]
fn every_host_resynchronises_after_a_mass_drop() {
    let report = measured(&tiny(&[Measure::Drop]));
    let d = report.mass_drop.expect("the drop was measured");
    assert_eq!((d.hosts, d.opened, d.resynced), (10, 10, 10), "{d:?}");
    assert!(d.cut >= 10, "every host's connection was cut: {d:?}");
    assert!(
        d.p50_ms > 0.0 && d.p50_ms <= d.p99_ms && d.p99_ms <= d.max_ms,
        "{d:?}"
    );
}

#[test]
fn hosts_in_child_processes_each_cut_when_told_and_all_resynchronise() {
    let mut config = tiny(&[Measure::Drop]);
    config.drop_hosts = 9;
    config.drop_hosts_per_process = Some(4);
    config.client_exe = Some(PathBuf::from(env!("CARGO_BIN_EXE_sim-perf")));
    let report = measured(&config);
    let d = report.mass_drop.expect("the drop was measured");
    // 4 + 4 + 1: three children, each with its proxy, every host back.
    assert_eq!(d.host_processes, 3, "{d:?}");
    assert_eq!((d.hosts, d.opened, d.resynced), (9, 9, 9), "{d:?}");
    assert!(d.cut >= 9, "every host's connection was cut: {d:?}");
    assert!(d.p50_ms > 0.0 && d.p99_ms <= d.max_ms, "{d:?}");
}

#[test]
fn a_host_settles_on_every_dynamic_tool_and_looks_at_them_all() {
    let mut config = tiny(&[Measure::Tools]);
    config.tools = (200, 400);
    let report = measured(&config);
    let m = report.many_tools.clone().expect("tools was measured");
    for (n, r) in [(200, &m.small), (400, &m.large)] {
        assert_eq!((r.tools, r.listed, r.usable_in_look), (n, n, n), "{r:?}");
        assert!(
            r.settle_secs > 0.0 && r.look_secs > 0.0 && r.look_bytes > 0,
            "{r:?}"
        );
    }
    assert!(m.settle_ratio > 0.0 && m.look_ratio > 0.0, "{m:?}");
    let rows = report.rows();
    let names: Vec<&str> = rows.iter().map(|r| r.name).collect();
    assert_eq!(names, ["tools"]);
    assert!(
        rows[0].figure.contains("200") && rows[0].figure.contains("400"),
        "{}",
        report.table()
    );
}

#[test]
fn each_measurement_runs_in_a_process_of_its_own_and_the_reports_merge() {
    let config = tiny(&[Measure::Ws, Measure::Latency]);
    let report = run_isolated(&config, &PathBuf::from(env!("CARGO_BIN_EXE_sim-perf")))
        .unwrap_or_else(|e| panic!("the measurements could not be made: {e}"));
    assert!(report.setup.isolated);
    assert_eq!(report.setup.measures, ["ws", "latency"]);
    let ws = report.ws.clone().expect("ws was measured");
    assert_eq!(
        (ws.tally.sent, ws.tally.answered),
        (2 * 200, 2 * 200),
        "{ws:?}"
    );
    assert!(ws.complete(), "{ws:?}");
    echo_timed_every_call(&report);
    let judged: Vec<&str> = report.ratios.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        judged,
        ["ws", "latency p50", "latency p99"],
        "the floors merge from each measurement's process"
    );
    let l = report.latency.expect("latency was measured");
    assert_eq!((l.calls, l.answered), (100, 100), "{l:?}");
    assert!(report.http.is_none() && report.idle.is_none() && report.mass_drop.is_none());
}

#[test]
fn measurements_are_named_on_the_command_line() {
    for m in Measure::ALL {
        assert_eq!(Measure::from_name(m.name()), Some(m));
    }
    assert_eq!(Measure::from_name("nope"), None);
}

#[test]
fn abandoned_sessions_all_expire_and_the_memory_is_read_before_and_after() {
    let mut config = tiny(&[Measure::Expiry]);
    config.expiry = sim_perf::expiry::ExpiryConfig {
        sessions: 40,
        cycles: 2,
        // Long enough that a loaded machine's pause between a session's initialize and
        // its next request is not taken for idleness (400 ms was, beside a build).
        idle: Duration::from_secs(2),
    };
    let report = measured(&config);
    let e = report.expiry.clone().expect("expiry was measured");
    assert_eq!(
        (e.sessions, e.principals, e.cycles, e.left),
        (40, 2, 4, 0),
        "{e:?}"
    );
    assert!(
        e.rss_before > 0 && e.rss_held > 0 && e.rss_after > 0,
        "{e:?}"
    );
    assert!(report.table().contains("expiry"), "{}", report.table());
}

#[test]
fn durable_state_is_measured_kept_and_not_with_its_writes_and_go_moves() {
    let config = PerfConfig {
        durable: sim_perf::durable::DurableConfig {
            players: 2,
            window: Duration::from_millis(300),
            rounds: 1,
            go_moves: 2,
            bot_time: Duration::from_millis(50),
        },
        ..tiny(&[Measure::Durable])
    };
    let report = measured(&config);
    let d = report.durable.clone().expect("durable was measured");
    assert_eq!(d.failed, 0, "{d:?}");
    assert!(d.moves_on > 0 && d.moves_per_sec_off > 0.0, "{d:?}");
    assert!(d.steps_per_move >= 1.0, "every kept move writes: {d:?}");
    assert!(
        d.writes_per_move > 0.0 && d.writes_per_move <= d.steps_per_move,
        "commits keep the steps, sharing them or not: {d:?}"
    );
    assert_eq!(d.go_moves, 2, "{d:?}");
    assert!(report.table().contains("durable"), "{}", report.table());
}

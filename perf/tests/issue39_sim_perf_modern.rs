//! Issue #39: `sim-perf` has a `modern` row — light `tools/call`s as MCP 2026-07-28 makes
//! them over Streamable HTTP (no handshake, no session, `_meta` on every POST), on our
//! server and on rmcp's stateless mode in the same run, windows in turn, judged by their
//! ratio. In miniature: every call answered once with the light tool's text on both sides.
//! No speed is asserted: the figures depend on the machine.
//!
//! Our server refuses a request that carries neither a session nor a modern `_meta`
//! ("Mcp-Session-Id is required after initialize", 400), so calls answered there with no
//! handshake made were served as modern ones.

use sim_perf::{Measure, PerfConfig, run};

#[test]
fn issue39_sim_perf_modern_row_calls_ours_and_rmcp_stateless_in_turn() {
    let config = PerfConfig {
        only: vec![Measure::Modern],
        connections: 4,
        http_in_flight: 2,
        calls: Some(120),
        rounds: 2,
        ..Default::default()
    };
    let report = run(&config).unwrap_or_else(|e| panic!("the measurement could not be made: {e}"));
    let m = report.modern.as_ref().expect("the modern row was measured");
    for (name, t) in [("ours", &m.ours), ("rmcp stateless", &m.rmcp_stateless)] {
        assert_eq!(
            (t.tally.sent, t.tally.answered),
            (2 * 120, 2 * 120),
            "{name}: {t:?}"
        );
        assert_eq!(
            (t.tally.wrong, t.tally.unexpected, t.tally.lost),
            (0, 0, 0),
            "{name}: {t:?}"
        );
        assert_eq!(
            t.window_rates.len(),
            2,
            "{name}: one rate per window: {t:?}"
        );
        assert!(t.complete() && t.calls_per_sec > 0.0, "{name}: {t:?}");
    }
    assert!(m.ratio > 0.0, "{m:?}");
    // Only this row, and its ratio judged in the JSON.
    let names: Vec<&str> = report.rows().iter().map(|r| r.name).collect();
    assert_eq!(names, ["modern"]);
    assert!(report.rmcp.is_none() && report.http.is_none());
    let json = serde_json::to_value(&report).expect("the report as JSON");
    let judged = &json["ratios"][0];
    assert_eq!(judged["name"], "modern", "{json}");
    assert!(judged["floor"].as_f64() > Some(0.0), "{json}");
    let table = report.table();
    assert!(table.contains("rmcp stateless"), "{table}");
}

//! A quiet load run: no chaos, so no reconnects, no recoveries and every call answered.
//!
//! In its own test binary: the run counts panics anywhere in its process, and a failing
//! assertion of a test running beside it would count as one.

use sim::load::{self, LoadConfig, Play, TransportMix};
use std::time::Duration;

#[actix::test]
async fn a_quiet_run_has_no_faults_and_no_violations() {
    let c = LoadConfig {
        play: Play {
            agents: 8,
            duration: Duration::from_secs(3),
            seed: 5,
            transport: TransportMix::Mixed,
            chaos: 0,
            plan: None,
            think: Duration::ZERO,
            drain: Duration::from_secs(20),
        },
        bot_playouts: 8,
        host_threads: 1,
        surface_agents: 0,
        modern: 0,
        modern_hints: 0,
        nodes: 0,
        arcade_bin: None,
        balance: Default::default(),
        ownership: Default::default(),
    };
    let report = load::run(c, None).await.expect("the run is made");
    assert!(report.ok(), "{}", report.table());
    assert_eq!(report.reconnects, 0, "{}", report.table());
    // Streamable HTTP reorders even on a quiet run (a POST's response and the GET stream
    // race), so early revs may be held; every one must resolve in its window.
    assert_eq!(
        (report.hints.recoveries, report.hints.expired),
        (0, 0),
        "{}",
        report.table()
    );
    assert_eq!(report.counts.hung + report.counts.lost, 0);
}

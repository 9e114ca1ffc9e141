//! Issue #41: `sim-perf --only cluster` reports moves per second and light calls per
//! second on three arcade nodes on PostgreSQL and NATS, in both ownership modes (arcade,
//! principal), against one embedded node measured in the same run, PostgreSQL's commits
//! per move, and in principal mode how many requests were forwarded — here in a short mode (one player,
//! one window of each kind on each side). The test starts PostgreSQL, NATS and the nodes
//! itself (the sim's cluster; `.ci/run` installs the binaries). No speed is asserted:
//! the figures depend on the machine; the counts are.

use sim_perf::cluster::ClusterConfig;
use sim_perf::{Measure, PerfConfig, run};
use std::path::PathBuf;
use std::time::Duration;

fn short(arcade_bin: PathBuf) -> PerfConfig {
    PerfConfig {
        only: vec![Measure::Cluster],
        cluster: ClusterConfig {
            nodes: 3,
            // One player: one move in flight, so every move is a commit of its own.
            players: 1,
            window: Duration::from_millis(700),
            rounds: 1,
            bot_playouts: 8,
            arcade_bin: Some(arcade_bin),
        },
        ..Default::default()
    }
}

#[test]
fn issue41_sim_perf_cluster_reports_moves_light_calls_and_commits_per_move_against_one_embedded_node()
 {
    let arcade = mcpl_testkit::process::workspace_bin("mcpl-games", "mcpl-arcade");
    let report = run(&short(arcade)).unwrap_or_else(|e| panic!("not measured: {e}"));
    // The figures, for reading (with --nocapture).
    eprintln!("{}", report.table());
    let c = report.cluster.clone().expect("cluster was measured");
    assert_eq!(c.skipped, None, "PostgreSQL and NATS are here: {c:?}");
    assert_eq!((c.nodes, c.players, c.failed), (3, 1, 0), "{c:?}");
    assert!(c.floor_moves > 0 && c.floor_light_calls > 0, "{c:?}");
    assert!(c.floor.contains("redb"), "how the floor is built: {c:?}");
    for (mode, name) in [(&c.arcade, "arcade"), (&c.principal, "principal")] {
        assert_eq!(mode.ownership, name);
        assert!(mode.moves > 0 && mode.light_calls > 0, "{name}: {c:?}");
        // Each move was committed to PostgreSQL before it was answered: at least one
        // transaction id drawn per move, and the figure net of the leases near that.
        assert!(mode.xids_in_moves >= mode.moves, "{name}: {c:?}");
        assert!(mode.commits_per_move >= 1.0, "{name}: {c:?}");
    }
    // Principal ownership: the one player is served on one node, the node her first
    // request landed on; round robin brings two requests in three elsewhere, each
    // forwarded to her node. Every answer names both nodes.
    let p = &c.principal;
    let answered = p.moves + p.light_calls;
    assert_eq!(p.unmarked, 0, "{c:?}");
    assert!(p.served_where_landed + p.forwarded >= answered, "{c:?}");
    assert!(p.forwarded > 0 && p.served_where_landed > 0, "{c:?}");
    // Every ratio judged, as every row with a floor.
    let judged: Vec<&str> = report.ratios.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        judged,
        [
            "cluster moves",
            "cluster light",
            "cluster principal moves",
            "cluster principal light"
        ],
        "{report:?}"
    );
    for r in &report.ratios {
        assert!(r.figure > 0.0 && r.floor > 0.0 && r.ratio > 0.0, "{r:?}");
    }
    let rows = report.rows();
    let names: Vec<&str> = rows.iter().map(|r| r.name).collect();
    assert_eq!(names, ["cluster", "cluster principal"], "{rows:?}");
    assert!(rows.iter().all(|r| !r.skipped), "{rows:?}");
    for words in ["moves/s", "light calls/s", "commits a move", "embedded"] {
        assert!(rows[0].figure.contains(words), "{words:?} in {rows:?}");
    }
    for words in ["--ownership principal", "requests forwarded"] {
        assert!(rows[1].figure.contains(words), "{words:?} in {rows:?}");
    }
    for words in [
        "transaction id counter",
        "the floor: one embedded node",
        "redb",
    ] {
        assert!(rows[0].note.contains(words), "{words:?} in {rows:?}");
    }
    let table = report.table();
    assert!(table.contains("cluster:"), "{table}");
}

#[test]
fn issue41_sim_perf_cluster_is_skipped_saying_why_without_the_arcade_binary() {
    let missing = PathBuf::from("/nonexistent/mcpl-arcade");
    let report = run(&short(missing)).unwrap_or_else(|e| panic!("not measured: {e}"));
    let c = report.cluster.clone().expect("the cluster row is there");
    let why = c.skipped.clone().expect("skipped");
    assert!(
        why.contains("/nonexistent/mcpl-arcade") && why.contains("cargo build"),
        "{why}"
    );
    assert!(report.ratios.is_empty(), "nothing judged: {report:?}");
    let row = &report.rows()[0];
    assert!(row.skipped && !row.met, "{row:?}");
    assert!(report.all_met(), "a skipped row misses nothing");
    let table = report.table();
    assert!(table.contains("– cluster"), "{table}");
}

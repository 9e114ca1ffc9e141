//! The demo, small: tiny engine budgets, a limit, the boards saved in a temporary
//! directory. It must finish with both games ended (the Go game through the lobby between
//! two agents on different transports, tic-tac-toe against the bot), nothing violated, and
//! a picture of each final board.

use mcpl_games::arcade::BotBudget;
use sim::agent::Silent;
use sim::demo::{self, DemoConfig, DemoGame, DemoReport};
use std::sync::Arc;
use std::time::Duration;

/// Runs the small demo, carol `through_surface` a surface host or not, saving the boards in
/// the returned directory; its report, after checking that every game ended and nothing was
/// violated.
async fn small_demo(through_surface: bool) -> (tempfile::TempDir, DemoReport) {
    let dir = tempfile::tempdir().unwrap();
    let config = DemoConfig {
        seed: 7,
        bot: BotBudget::Playouts(8),
        playouts: (16, 8),
        out_dir: Some(dir.path().to_owned()),
        limit: Duration::from_secs(40),
        model: None,
        surface: through_surface,
        gallery: None,
    };
    let report = tokio::time::timeout(
        Duration::from_secs(120),
        demo::run(config, Arc::new(Silent)),
    )
    .await
    .expect("the demo finishes")
    .expect("the demo runs");
    assert!(report.all_ended(), "{}", report.summary());
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    (dir, report)
}

/// The report's game of `toolset`.
fn game<'r>(report: &'r DemoReport, toolset: &str) -> &'r DemoGame {
    report
        .games
        .iter()
        .find(|g| g.toolset == toolset)
        .unwrap_or_else(|| panic!("no {toolset} game: {}", report.summary()))
}

#[actix::test]
async fn the_demo_ends_every_game_and_saves_the_boards() {
    let (_dir, report) = small_demo(false).await;
    let go = game(&report, "go");
    assert_eq!(
        go.players,
        ["alice", "bob"],
        "one shared game, seen by both"
    );
    assert!(go.moves > 0);
    let ttt = game(&report, "tictactoe");
    assert_eq!(ttt.players, ["carol"]);
    // carol plays perfectly, and so does the bot: a draw.
    assert_eq!(ttt.result.as_deref(), Some("Draw"));
    for g in &report.games {
        let svg = g.svg.as_ref().expect("a saved board");
        assert!(std::fs::read_to_string(svg).unwrap().starts_with("<svg"));
    }
    assert_eq!(report.games.len(), 2, "{}", report.summary());
}

#[actix::test]
async fn the_demo_with_carol_through_a_surface_host_ends_every_game() {
    let (_dir, report) = small_demo(true).await;
    let ttt = game(&report, "tictactoe");
    assert_eq!(ttt.players, ["carol"]);
    assert_eq!(ttt.through.as_deref(), Some("a surface host"));
    assert_eq!(
        ttt.title.as_deref(),
        Some("Tic-tac-toe vs bot"),
        "{}",
        report.summary()
    );
    // The perfect bot never loses to cells tried in a fixed order.
    let result = ttt.result.as_deref().unwrap();
    assert!(result == "O (bot) wins" || result == "Draw", "{result}");
    assert!(
        report.summary().contains("(carol, through a surface host)"),
        "{}",
        report.summary()
    );
    let go = game(&report, "go");
    assert_eq!(go.through, None);
    assert_eq!(report.games.len(), 2, "{}", report.summary());
}

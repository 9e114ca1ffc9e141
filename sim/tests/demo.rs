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
        pace: Duration::ZERO,
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

/// Every move call an agent makes, with when it was made.
#[derive(Default)]
struct MoveTimes(std::sync::Mutex<Vec<(String, std::time::Instant)>>);

impl sim::agent::Observer for MoveTimes {
    fn calling(&self, agent: &str, tool: &str, args: &serde_json::Value) {
        let inner = args.get("tool").and_then(serde_json::Value::as_str);
        if tool == "toolsets--act"
            && inner.is_some_and(|t| t.ends_with("_play") || t.ends_with("_pass"))
        {
            self.0
                .lock()
                .unwrap()
                .push((agent.to_owned(), std::time::Instant::now()));
        }
    }
    fn shown(&self, _: &str, _: &mcpl_host::host::Shown) {}
}

/// Issue #43 item 3: paced, each agent waits the pace before each move, so its moves are
/// at least the pace apart however fast the machine (a lower bound, which a sleep
/// guarantees); at full speed they come as fast as the games go.
#[actix::test]
async fn issue43_03_a_paced_demo_spaces_each_agents_moves_by_the_pace() {
    let pace = Duration::from_millis(40);
    let dir = tempfile::tempdir().unwrap();
    let config = DemoConfig {
        seed: 7,
        bot: BotBudget::Playouts(8),
        playouts: (16, 8),
        out_dir: Some(dir.path().to_owned()),
        limit: Duration::from_secs(100),
        pace,
        model: None,
        surface: false,
        gallery: None,
    };
    let seen = Arc::new(MoveTimes::default());
    let report = tokio::time::timeout(Duration::from_secs(180), demo::run(config, seen.clone()))
        .await
        .expect("the demo finishes")
        .expect("the demo runs");
    assert!(report.all_ended(), "{}", report.summary());
    let moves = seen.0.lock().unwrap().clone();
    for agent in ["alice", "bob", "carol"] {
        let times: Vec<_> = moves
            .iter()
            .filter(|(a, _)| a == agent)
            .map(|(_, t)| *t)
            .collect();
        assert!(times.len() >= 2, "{agent} made {} moves", times.len());
        for pair in times.windows(2) {
            let gap = pair[1] - pair[0];
            assert!(
                gap >= pace,
                "{agent}: two moves {gap:?} apart, under the pace {pace:?}"
            );
        }
    }
}

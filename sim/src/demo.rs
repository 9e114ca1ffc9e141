//! The demo: an in-process arcade on loopback and three scripted agents, each with its own
//! host. alice (WebSocket) challenges bob (Streamable HTTP) to Go 9×9 through the lobby;
//! bob accepts the invitation the host shows him; both play with the arcade's engine.
//! carol (Streamable HTTP) plays tic-tac-toe against the arcade's bot — played by a model
//! when [`DemoConfig::model`] is set (`SIM_MODEL_*`, see [`crate::agent::model`]). An [`Observer`]
//! sees everything each agent is shown as it happens ([`crate::print::Printer`] prints
//! it); the final boards are saved as SVG. With [`DemoConfig::surface`], carol reaches the
//! arcade through a surface host instead, as a plain MCP client ([`crate::surface`]), and
//! the summary says so.

use crate::agent::{
    AgentIo, AgentReport, GameKind, ModelAgent, ModelConfig, Mover, Observer, Phase, Policy,
    ScriptedAgent,
};
use crate::arcade::{ArcadeError, ArcadeService};
use crate::hosts::start_host;
use crate::metrics::Metrics;
use crate::svg::{go_svg, tictactoe_svg};
use mcpl_games::arcade::spectate::Gallery;
use mcpl_games::arcade::{ArcadeConfig, BotBudget, BotSettings};
use mcpl_host::host::HostError;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// What the demo is run with.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    /// Seeds every agent's choices and the arcade's bot.
    pub seed: u64,
    /// The arcade's bot budget (its tic-tac-toe is perfect whatever the budget).
    pub bot: BotBudget,
    /// alice's and bob's engine playouts per Go move.
    pub playouts: (u32, u32),
    /// Where the final boards are saved as SVG (none: not saved).
    pub out_dir: Option<PathBuf>,
    /// After this, agents resign what is still open.
    pub limit: Duration,
    /// Each scripted agent's pause before every action, so that a person can follow the
    /// games (issue #43 item 3: `sim demo` is paced by default, `--fast` is none).
    pub pace: Duration,
    /// A model to play carol's part instead of the scripted agent.
    pub model: Option<ModelConfig>,
    /// carol reaches the arcade through a surface host (RFC §8.6) as a plain MCP client,
    /// instead of through a host of her own ([`crate::surface`]).
    pub surface: bool,
    /// Where the arcade shows its games to spectators (`sim demo --web`, issue #43).
    pub gallery: Option<Arc<Gallery>>,
}

impl Default for DemoConfig {
    fn default() -> Self {
        DemoConfig {
            seed: 2026,
            bot: BotBudget::Playouts(200),
            playouts: (300, 120),
            out_dir: Some(PathBuf::from("target/demo")),
            limit: Duration::from_secs(50),
            pace: Duration::ZERO,
            model: None,
            surface: false,
            gallery: None,
        }
    }
}

/// One game, as its players were told.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoGame {
    /// Who saw it (both players of a shared game are listed: `alice, bob`).
    pub players: Vec<String>,
    /// `go` or `tictactoe`.
    pub toolset: String,
    /// The title (`Go 9x9 vs bob`).
    pub title: Option<String>,
    /// How it ended, in the arcade's words.
    pub result: Option<String>,
    /// Moves played (both sides, passes included).
    pub moves: usize,
    /// The final board's picture, when saved.
    pub svg: Option<PathBuf>,
    /// How its players reached the arcade, when not through a host of their own (`a
    /// surface host`).
    pub through: Option<String>,
}

/// What the demo did.
#[derive(Debug, Clone)]
pub struct DemoReport {
    /// The games.
    pub games: Vec<DemoGame>,
    /// What each agent saw of its games.
    pub agents: Vec<AgentReport>,
    /// Tool calls made.
    pub calls: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// What went wrong (a wrong call accepted, a call never answered).
    pub violations: Vec<String>,
}

impl DemoReport {
    /// True when there was at least one game and every game ended.
    pub fn all_ended(&self) -> bool {
        !self.games.is_empty() && self.games.iter().all(|g| g.result.is_some())
    }

    /// The summary printed at the end.
    pub fn summary(&self) -> String {
        let mut s = String::from("Summary\n");
        for g in &self.games {
            s.push_str(&format!(
                "- {} ({}{}): {} — {} moves{}\n",
                g.title.as_deref().unwrap_or(&g.toolset),
                g.players.join(" and "),
                g.through
                    .as_deref()
                    .map(|t| format!(", through {t}"))
                    .unwrap_or_default(),
                g.result.as_deref().unwrap_or("did not end"),
                g.moves,
                g.svg
                    .as_ref()
                    .map(|p| format!(", board saved as {}", p.display()))
                    .unwrap_or_default()
            ));
        }
        s.push_str(&format!(
            "{} tool calls in {:.1} s; {}",
            self.calls,
            self.elapsed.as_secs_f64(),
            if self.violations.is_empty() {
                "no violations".to_owned()
            } else {
                format!("violations: {}", self.violations.join("; "))
            }
        ));
        s
    }
}

/// Why the demo could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DemoError {
    /// The arcade could not start.
    #[error(transparent)]
    Arcade(#[from] ArcadeError),
    /// A host could not start or stopped.
    #[error(transparent)]
    Host(#[from] HostError),
    /// An agent's task failed.
    #[error("an agent's task failed: {0}")]
    Agent(String),
    /// The agent through the surface host could not play.
    #[error(transparent)]
    Surface(#[from] crate::surface::SurfaceError),
    /// A board could not be saved.
    #[error("a board could not be saved: {0}")]
    Save(#[from] std::io::Error),
}

/// Runs the demo (inside an actix system) and reports it; `observer` sees every call and
/// everything shown, as it happens.
pub async fn run(config: DemoConfig, observer: Arc<dyn Observer>) -> Result<DemoReport, DemoError> {
    let start = Instant::now();
    let names: Vec<String> = ["alice", "bob", "carol"].map(String::from).to_vec();
    let arcade = ArcadeConfig {
        bot: BotSettings {
            budget: config.bot,
            seed: Some(config.seed),
        },
        gallery: config.gallery.clone(),
        ..Default::default()
    };
    let service = ArcadeService::start(arcade, &names, None).await?;
    let (ws, http) = (service.ws_url(), service.http_url());
    let metrics = Arc::new(Metrics::default());
    let metrics_for_surface = metrics.clone();
    let alice = start_host("alice", &ws, None, config.seed)?;
    let bob = start_host("bob", &http, None, config.seed + 1)?;
    let carol = start_host("carol", &http, None, config.seed + 2)?;
    for h in [&alice, &bob, &carol] {
        h.first_contact().await?;
    }
    // carol through a surface host: her own host above stays idle.
    let through_surface = config.surface.then(|| {
        let (observer, metrics, http) =
            (observer.clone(), metrics_for_surface.clone(), http.clone());
        tokio::task::spawn_local(async move {
            crate::surface::play("carol", &http, observer, metrics).await
        })
    });

    let (phase_tx, phase) = watch::channel(Phase::Play);
    let (pa, pb) = config.playouts;
    let policies = [
        Policy::social(GameKind::Go9, Some("bob".into()), 1.0)
            .mover(Mover::Engine { playouts: pa })
            .games(1),
        Policy::host(1.0)
            .mover(Mover::Engine { playouts: pb })
            .games(1),
        Policy::engine(GameKind::TicTacToe, 0).games(1),
    ];
    let policies = policies.map(|p| Policy {
        think: config.pace,
        ..p
    });
    let mut tasks = Vec::new();
    let scripted = if config.surface { 2 } else { 3 };
    for (i, (host, policy)) in [&alice, &bob, &carol]
        .into_iter()
        .zip(policies)
        .enumerate()
        .take(scripted)
    {
        let io = AgentIo::new(
            names[i].clone(),
            host.clone(),
            observer.clone(),
            metrics.clone(),
        );
        let seed = config.seed.wrapping_add(i as u64 * 7919);
        let task = match (&config.model, i) {
            (Some(model), 2) => {
                let agent =
                    ModelAgent::new(model.clone()).map_err(|e| DemoError::Agent(e.to_string()))?;
                let phase = phase.clone();
                tokio::task::spawn_local(async move {
                    agent.run(io, phase).await.map_err(|e| e.to_string())
                })
            }
            _ => {
                let agent = ScriptedAgent::new(policy, seed);
                let phase = phase.clone();
                tokio::task::spawn_local(async move { Ok(agent.run(io, phase).await) })
            }
        };
        tasks.push(task);
    }
    let all = futures_util::future::join_all(tasks);
    tokio::pin!(all);
    let results = tokio::select! {
        r = &mut all => r,
        _ = tokio::time::sleep(config.limit) => {
            let _ = phase_tx.send(Phase::Drain);
            tokio::select! {
                r = &mut all => r,
                _ = tokio::time::sleep(Duration::from_secs(10)) => {
                    let _ = phase_tx.send(Phase::Stop);
                    all.await
                }
            }
        }
    };
    let mut agents = Vec::new();
    for r in results {
        let report = r
            .map_err(|e| DemoError::Agent(e.to_string()))?
            .map_err(DemoError::Agent)?;
        agents.push(report);
    }
    let mut through = Vec::new();
    if let Some(task) = through_surface {
        let report = task.await.map_err(|e| DemoError::Agent(e.to_string()))??;
        through.push(report.name.clone());
        agents.push(report);
    }
    for h in [&alice, &bob, &carol] {
        h.stop().await;
    }
    drop(service);

    let mut games = collect_games(&agents, config.out_dir.as_ref())?;
    for g in &mut games {
        if g.players.iter().any(|p| through.contains(p)) {
            g.through = Some("a surface host".to_owned());
        }
    }
    Ok(DemoReport {
        games,
        agents,
        calls: metrics.counts().calls,
        elapsed: start.elapsed(),
        violations: metrics.violations(),
    })
}

/// Each game once (a shared game is seen by both players: same result, same moves), with
/// its board saved.
fn collect_games(
    agents: &[AgentReport],
    out: Option<&PathBuf>,
) -> Result<Vec<DemoGame>, std::io::Error> {
    let mut games: Vec<(DemoGame, Option<String>)> = Vec::new();
    for a in agents {
        for g in &a.games {
            let same = games.iter_mut().find(|(d, moves)| {
                d.toolset == g.toolset
                    && d.result == g.result
                    && *moves == g.moves
                    && g.result.is_some()
            });
            if let Some((d, _)) = same {
                d.players.push(a.name.clone());
                continue;
            }
            let moves = g
                .moves
                .as_deref()
                .map(|m| m.trim_start_matches("Moves:").split_whitespace().count())
                .unwrap_or(0);
            let mut svg = None;
            if let (Some(dir), Some(line), Some(_)) = (out, &g.moves, &g.result) {
                let picture = match g.toolset.as_str() {
                    "go" => go_svg(line),
                    _ => tictactoe_svg(line),
                };
                if let Some(picture) = picture {
                    std::fs::create_dir_all(dir)?;
                    let path = dir.join(format!("{}-{}.svg", a.name, g.instance));
                    std::fs::write(&path, picture)?;
                    svg = Some(path);
                }
            }
            let game = DemoGame {
                players: vec![a.name.clone()],
                toolset: g.toolset.clone(),
                title: g.title.clone(),
                result: g.result.clone(),
                moves,
                svg,
                through: None,
            };
            games.push((game, g.moves.clone()));
        }
    }
    Ok(games.into_iter().map(|(g, _)| g).collect())
}

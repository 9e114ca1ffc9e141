//! The deterministic mode (`sim --deterministic`): the load run's scripted agents, each
//! with its own host, on an in-process arcade — but on **one thread and virtual time**, so
//! that a seed replays exactly. It ends with a digest of the whole event trace, the same
//! for every run of a seed, and the load run's invariants.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`DetConfig`], [`run`], [`run_blocking`]: start, play with chaos on a timeline and quiet points, drain, check, report |
//! | `link` | in-memory links through a seeded filter: out-of-order delivery, duplicates, drops, mass drops |
//! | `clock` | the server's clock on virtual time |
//! | `trace` | the event trace, normalised and hashed |
//! | `population` | the mix of agents, without Go searches on the blocking pool |
//!
//! # Why it replays
//!
//! - One actix `System` on a current-thread tokio runtime started **paused**: the arcade's
//!   sessions, the hosts, their links and the agents all run as tasks of that one thread,
//!   no Arbiter or thread of their own, and time moves only when every task waits — to the
//!   next timer. Every sleep, timeout, hold window and backoff is on that clock.
//! - No sockets: hosts reach the arcade through `memory::pair` ([`connector`]); the chaos is
//!   drawn from seeded generators, per agent and per connection.
//! - No blocking pool: no Go search runs ([`det_policy_for`]); the tic-tac-toe bot moves inline.
//! - The server's clock is virtual ([`VirtualClock`]): ended ids and timestamps repeat. The trace
//!   normalises them anyway ([`normalise`]).
//! - Every `select!` on the way is either `biased` or between branches whose outcome is
//!   the same whichever wins.
//! - No `watch` channel with several waiters wakes them where order matters: tokio spreads
//!   a watch's waiters over several lists at random, so each agent gets its own phase
//!   channel and each connection its own mass-drop signal, told in a fixed order.
//!
//! # Checks
//!
//! Those of the load run, at its end, the same way ([`invariants::check_all`]), and those
//! it checks while it runs; and at **quiet points** in the middle of play
//! ([`DetConfig::checkpoints`]) every agent pauses and each host's view is compared with
//! the server's truth while games are still open — where a stale tool state shows, before
//! the drain closes every game and washes it out.
//!
//! A seed's digest is the same within one process and across processes
//! (`tests/deterministic.rs` runs a seed twice in one process; the binary across them).

mod clock;
mod link;
mod population;
mod trace;

pub use clock::VirtualClock;
pub use link::{LinkChaos, LinkShared, connector};
pub use population::det_policy_for;
pub use trace::{Trace, normalise};

use crate::agent::{AgentIo, AgentReport, Phase, ScriptedAgent};
use crate::hosts::{HostTweak, LinkKnobs, start_host_with};
use crate::invariants;
use crate::load::{Play, count_panics, panics};
use crate::metrics::Metrics;
use crate::report::{ChaosTotals, LoadReport};
use indicatif::ProgressBar;
use mcpl_games::arcade::{Arcade, ArcadeConfig, BotBudget, BotSettings};
use mcpl_host::host::HostError;
use mcpl_server::BuildError;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::{oneshot, watch};

/// What a deterministic run is made with. Every field is part of what a replay needs.
#[derive(Debug, Clone)]
pub struct DetConfig {
    /// The agents, the seed, the transports (ordered links or not), the pace and the drain,
    /// in virtual time; the chaos level's drops, delays, duplicates and mass drops, with no
    /// restarts (there is no listener to restart).
    pub play: Play,
    /// Quiet points, as fractions of the play: every agent pauses, the links drain, and
    /// each host's view is checked against the server's truth with games still open
    /// ([`invariants::check_views`]); then play resumes.
    pub checkpoints: Vec<f64>,
    /// A change to every host's configuration (a deliberately broken host in tests).
    pub host_tweak: Option<HostTweak>,
    /// Keep the normalised trace in the report (to compare two runs event by event).
    pub keep_trace: bool,
}

impl Default for DetConfig {
    fn default() -> Self {
        DetConfig {
            play: Play {
                agents: 20,
                duration: Duration::from_secs(30),
                ..Play::default()
            },
            checkpoints: vec![0.5],
            host_tweak: None,
            keep_trace: false,
        }
    }
}

impl DetConfig {
    /// The command that replays this run (a custom plan or host tweak has no flag: the
    /// command then replays the level's chaos on a correct host).
    pub fn replay_command(&self) -> String {
        format!(
            "cargo run -p sim -- --deterministic --seed {} --agents {} --duration {} --transport {} --chaos {} --think-ms {}",
            self.play.seed,
            self.play.agents,
            self.play.duration.as_secs(),
            self.play.transport.name(),
            self.play.chaos,
            self.play.think.as_millis()
        )
    }
}

/// What a deterministic run found.
#[derive(Debug, Clone)]
pub struct DetReport {
    /// The load run's report: counts, hint totals, chaos, violations. Its times are
    /// virtual.
    pub report: LoadReport,
    /// How long the run took in real time, in seconds.
    pub real_s: f64,
    /// The SHA-256 of the event trace, in hex.
    pub digest: String,
    /// Events in the trace.
    pub events: u64,
    /// The normalised trace, when [`DetConfig::keep_trace`].
    pub trace: Option<Vec<String>>,
    /// The command that replays the run.
    pub replay: String,
}

impl DetReport {
    /// True when nothing was violated.
    pub fn ok(&self) -> bool {
        self.report.ok()
    }
}

/// Why a run could not be made (a violation is not an error: it is in the report).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DetError {
    /// The arcade's declarations were refused (a bug in the arcade).
    #[error("the arcade could not be built: {0}")]
    Arcade(#[from] BuildError),
    /// A host could not start.
    #[error(transparent)]
    Host(#[from] HostError),
    /// The runtime could not be built.
    #[error("the runtime could not be built: {0}")]
    Runtime(#[from] std::io::Error),
}

/// Pauses every agent and returns once none is acting: each finishes the step it is in
/// (a think pause, then its calls, each answered within the links' longest delay), then
/// waits for the phase to change.
async fn quiet_point(phases: &[watch::Sender<Phase>], metrics: &Metrics, think: Duration) {
    for p in phases {
        let _ = p.send(Phase::Pause);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    // No call in flight for longer than a think pause: no step is left half done.
    let poll = Duration::from_millis(10);
    let mut quiet = Duration::ZERO;
    while quiet <= think + poll {
        tokio::time::sleep(poll).await;
        let c = metrics.counts();
        if c.calls == c.answered + c.lost + c.hung {
            quiet += poll;
        } else {
            quiet = Duration::ZERO;
        }
    }
}

/// Runs `config` on a fresh actix System over a current-thread tokio runtime with a paused
/// clock, on this thread, and returns its report. See the module docs.
pub fn run_blocking(
    config: DetConfig,
    progress: Option<ProgressBar>,
) -> Result<DetReport, DetError> {
    // Built first so a failure is an error rather than a panic inside actix.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()?;
    let mut rt = Some(rt);
    let system = actix::System::with_tokio_rt(move || {
        rt.take()
            .unwrap_or_else(|| unreachable!("actix builds the runtime once"))
    });
    system.block_on(run(config, progress))
}

/// Runs `config` inside a running actix System, which must be on a current-thread runtime
/// with a paused clock for the run to replay ([`run_blocking`] makes one).
pub async fn run(config: DetConfig, progress: Option<ProgressBar>) -> Result<DetReport, DetError> {
    count_panics();
    let panics_before = panics();
    let real_start = std::time::Instant::now();
    let virtual_start = tokio::time::Instant::now();
    let n = config.play.agents.max(2);
    let names: Vec<String> = (0..n).map(|i| format!("p{i:04}")).collect();
    let plan = config.play.chaos_plan();
    let arcade = Arcade::new(ArcadeConfig {
        bot: BotSettings {
            budget: BotBudget::Playouts(8),
            seed: Some(config.play.seed),
        },
        players: names.clone(),
        clock: Some(Arc::new(VirtualClock::starting_now())),
        ..Default::default()
    })?;
    let shared = Arc::new(LinkShared::default());
    let ordered_chaos = LinkChaos {
        mean_life: plan.proxy.and_then(|(ws, _)| ws.mean_life),
        delays: None,
        duplicate: plan.proxy.map_or(0.0, |(ws, _)| ws.duplicate),
    };
    // Unordered even without delays: the host must still treat it as Streamable HTTP.
    let unordered_chaos = LinkChaos {
        mean_life: plan.proxy.and_then(|(_, http)| http.mean_life),
        delays: Some(plan.delays.unwrap_or(crate::chaos::Delays {
            get: (0.0, Duration::ZERO),
            post: (0.0, Duration::ZERO),
            late: 0.0,
        })),
        duplicate: 0.0,
    };
    let mut hosts = Vec::with_capacity(n);
    for (i, name) in names.iter().enumerate() {
        let chaos = if config.play.transport.http(i) {
            unordered_chaos
        } else {
            ordered_chaos
        };
        let link_seed = config.play.seed.wrapping_mul(31).wrapping_add(i as u64);
        let c = connector(arcade.clone(), name, chaos, link_seed, shared.clone());
        hosts.push(start_host_with(
            c,
            &LinkKnobs::default(),
            config.play.seed.wrapping_add(i as u64),
            config.host_tweak.as_ref(),
        )?);
    }
    let metrics = Arc::new(Metrics::default());
    crate::load::follow::first_contact(&hosts, &names, &metrics).await;

    let (stop_tx, stop_rx) = watch::channel(false);
    let drop_clock = Arc::new(crate::load::follow::DropClock::default());
    let followers =
        crate::load::follow::spawn_followers(&hosts, &names, &metrics, &stop_rx, &drop_clock);
    let trace = Arc::new(Trace::new(config.keep_trace));
    // A phase channel per agent, told in agent order: a `watch` wakes its many waiters in
    // an order of tokio's own choosing (it spreads them over several lists at random).
    let mut phases = Vec::with_capacity(n);
    let agents: Vec<oneshot::Receiver<AgentReport>> = hosts
        .iter()
        .zip(&names)
        .enumerate()
        .map(|(i, (h, name))| {
            let io = AgentIo::new(name.clone(), h.clone(), trace.clone(), metrics.clone());
            let policy = det_policy_for(i, n, &names, config.play.think);
            let agent = ScriptedAgent::new(policy, crate::load::agent_seed(config.play.seed, i));
            let (phase_tx, phase_rx) = watch::channel(Phase::Play);
            phases.push(phase_tx);
            let run = agent.run(io, phase_rx);
            let (tx, rx) = oneshot::channel();
            drop(tokio::task::spawn_local(async move {
                let _ = tx.send(run.await);
            }));
            rx
        })
        .collect();

    // The timeline, on virtual time: progress, mass drops and quiet points at their
    // moments (time paused at a quiet point is not play).
    let play_start = tokio::time::Instant::now();
    let mut paused = Duration::ZERO;
    let mut drops_done = 0;
    let mut checks_done = 0;
    let at = |f: f64| config.play.duration.mul_f64(f);
    if let Some(p) = &progress {
        p.set_length(config.play.duration.as_secs().max(1));
    }
    while play_start.elapsed() - paused < config.play.duration {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let t = play_start.elapsed() - paused;
        if drops_done < plan.mass_drops.len() && t >= at(plan.mass_drops[drops_done]) {
            drop_clock.dropping();
            shared.mass_drop();
            drops_done += 1;
        }
        if checks_done < config.checkpoints.len() && t >= at(config.checkpoints[checks_done]) {
            let pause_start = tokio::time::Instant::now();
            if let Some(p) = &progress {
                p.set_message("a quiet point: checking every view");
            }
            quiet_point(&phases, &metrics, config.play.think).await;
            let when = format!("at the quiet point after {:.2} s of play", t.as_secs_f64());
            invariants::check_views(&(&arcade).into(), &hosts, &names, &metrics, &when).await;
            for p in &phases {
                let _ = p.send(Phase::Play);
            }
            checks_done += 1;
            paused += pause_start.elapsed();
        }
        if let Some(p) = &progress {
            let c = metrics.counts();
            p.set_position(t.as_secs());
            p.set_message(format!(
                "virtual: {} calls, {} games ended, {} violations",
                c.calls,
                c.games_ended,
                metrics.violations().len()
            ));
        }
    }
    let played = play_start.elapsed() - paused;
    let counts_at_end_of_play = metrics.counts();

    // Drain, quietly: faults off, agents resign what is open.
    shared.calm.set();
    for p in &phases {
        let _ = p.send(Phase::Drain);
    }
    if let Some(p) = &progress {
        p.set_message("draining: agents resign what is still open");
    }
    let all = futures_util::future::join_all(agents);
    tokio::pin!(all);
    let drain_start = tokio::time::Instant::now();
    let results = tokio::select! {
        biased;
        r = &mut all => r,
        () = tokio::time::sleep(config.play.drain) => {
            metrics.violation(format!(
                "the drain did not finish within {:?}: agents were stopped with games open",
                config.play.drain
            ));
            for p in &phases {
                let _ = p.send(Phase::Stop);
            }
            all.await
        }
    };
    let drained = drain_start.elapsed();
    let reports: Vec<AgentReport> = results.into_iter().filter_map(Result::ok).collect();
    if reports.len() != n {
        metrics.violation(format!("{} agent tasks failed", n - reports.len()));
    }

    // Quiet: every host settled, then the invariants, exactly as in the load run.
    if let Some(p) = &progress {
        p.set_message("checking the invariants");
    }
    invariants::check_all(&(&arcade).into(), &hosts, &names, &reports, &metrics).await;
    let _ = stop_tx.send(true);
    let (hints, reconnects) = crate::load::follow::followed(followers).await;
    for h in &hosts {
        h.stop().await;
    }
    let panics = panics() - panics_before;
    if panics > 0 {
        metrics.violation(format!("{panics} panics"));
    }
    if let Some(p) = &progress {
        p.finish_and_clear();
    }
    let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let chaos = ChaosTotals {
        level: plan.level,
        proxied: get(&shared.connections),
        dropped: get(&shared.dropped),
        mass_dropped: get(&shared.mass_dropped),
        mass_drops: drops_done as u32,
        restarts: 0,
        games_at_restarts: (0, 0, 0),
        duplicated_frames: get(&shared.duplicated),
        accept_failures: 0,
        delayed: (
            get(&shared.delays.get),
            get(&shared.delays.post),
            get(&shared.delays.late),
        ),
        nodes: None,
    };
    let report = LoadReport {
        hints,
        reconnects,
        chaos,
        panics,
        ..LoadReport::head(
            &config.play,
            n,
            virtual_start.elapsed(),
            played,
            drained,
            counts_at_end_of_play.answered,
            &metrics,
        )
    };
    Ok(DetReport {
        report,
        real_s: real_start.elapsed().as_secs_f64(),
        digest: trace.digest(),
        events: trace.events(),
        trace: trace.kept(),
        replay: config.replay_command(),
    })
}

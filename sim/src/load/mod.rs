//! The load and chaos run: many scripted agents, each with its own host, on one in-process
//! arcade — in pairs (one challenges through the lobby, the other accepts or declines),
//! against the arcade's bot, and some clumsy — over WebSocket, Streamable HTTP or both,
//! with the chaos of [`ChaosPlan`] — and a share of them on MCP 2026-07-28, served as
//! plain MCP hosts ([`LoadConfig::modern`], [`crate::agent::modern`]) or under RFC-014's
//! stateless profile ([`LoadConfig::modern_hints`], [`hinted`]). Then a drain (agents resign what is open), quiet, and
//! the invariants (`invariants.rs`) per agent. The server's sessions and listeners run on
//! an arbiter of their own, the proxies on another, hosts and their agents on
//! `host_threads` more; the caller's thread keeps the timeline.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`Play`] (what both runs play), [`LoadConfig`], [`run`]: start, play with chaos on a timeline, drain, check, report |
//! | `backend` | what the agents play on: the arcade in process, or `--nodes N` processes behind the balancer ([`crate::nodes`]) |
//! | `population` | [`policy_for`]: the mix of agents |
//! | `follow` | each host's status followed: hint counters, reconnects, revs never going back |
//! | `hinted` | the agents on MCP 2026-07-28 with hints: their policies, what the profile sent them, their check |
//!
//! Checked while it runs: no call goes unanswered ([`crate::agent::io::HUNG_AFTER`]), a
//! clumsy call always fails, the applied rev of a connection never goes back, no panic.

use crate::agent::{AgentIo, AgentReport, ModernAgent, ModernCounts, Phase, ScriptedAgent, Silent};
use crate::arcade::{ArcadeError, ArcadeService};
use crate::chaos::{Calm, ChaosPlan, DelayStats, answer_loss, delivery_hook};
use crate::hosts::{LinkKnobs, start_host};
use crate::invariants;
use crate::metrics::Metrics;
use crate::nodes::{Balance, Balancer, Cluster, ClusterConfig, Ownership};
use crate::report::{
    ChaosTotals, HintedTotals, LoadReport, ModernTotals, NodeTotals, SurfaceTotals,
};
use backend::Backend;
use indicatif::ProgressBar;
use mcpl_games::arcade::{ArcadeConfig, BotBudget, BotSettings};
use mcpl_host::host::HostError;
use mcpl_host::link::EraPolicy;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once};
use std::time::Duration;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

mod backend;
pub(crate) mod follow;
pub mod hinted;
mod population;

pub use population::policy_for;

/// Which transports the agents use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportMix {
    /// WebSocket only.
    Ws,
    /// Streamable HTTP only.
    Http,
    /// Every other agent on each.
    Mixed,
}

impl TransportMix {
    /// True when agent `i` uses Streamable HTTP.
    pub(crate) fn http(self, i: usize) -> bool {
        match self {
            TransportMix::Ws => false,
            TransportMix::Http => true,
            TransportMix::Mixed => i % 2 == 1,
        }
    }

    /// `ws`, `http` or `mixed`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            TransportMix::Ws => "ws",
            TransportMix::Http => "http",
            TransportMix::Mixed => "mixed",
        }
    }
}

/// What every run plays, the load run and the deterministic one ([`crate::det::DetConfig`])
/// alike: how many agents, for how long, from which seed, on which transports, under which
/// chaos, at which pace, and how long the drain may take.
#[derive(Debug, Clone)]
pub struct Play {
    /// Agents.
    pub agents: usize,
    /// How long they play (virtual time in a deterministic run).
    pub duration: Duration,
    /// Seeds every choice: agents, the bot, backoff jitter, the chaos.
    pub seed: u64,
    /// Which agents' links are ordered (WebSocket, or WebSocket-like) or not (Streamable
    /// HTTP, or HTTP-like).
    pub transport: TransportMix,
    /// The chaos level (`chaos.rs`).
    pub chaos: u8,
    /// A chaos plan of one's own instead of the level's.
    pub plan: Option<ChaosPlan>,
    /// Each agent's pause before an action.
    pub think: Duration,
    /// How long the drain may go without progress before it gives up (a load run's
    /// [`DrainClock`]: at most [`DRAIN_BOUND_FACTOR`] times this in all; a deterministic
    /// run's whole drain, in virtual time).
    pub drain: Duration,
}

impl Default for Play {
    /// 300 agents for a minute, seed 1, both transports, chaos level 2, 30 ms of thought,
    /// 20 s of drain.
    fn default() -> Self {
        Play {
            agents: 300,
            duration: Duration::from_secs(60),
            seed: 1,
            transport: TransportMix::Mixed,
            chaos: 2,
            plan: None,
            think: Duration::from_millis(30),
            drain: Duration::from_secs(20),
        }
    }
}

impl Play {
    /// The plan of one's own, or else the level's.
    pub fn chaos_plan(&self) -> ChaosPlan {
        self.plan
            .clone()
            .unwrap_or_else(|| ChaosPlan::level(self.chaos))
    }
}

/// What a load run is made with.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// The agents, the seed, the transports, the chaos, the pace and the drain.
    pub play: Play,
    /// The arcade bot's Go playouts per move.
    pub bot_playouts: u32,
    /// Threads of their own for hosts and agents, besides the caller's (the server's
    /// sessions have one more).
    pub host_threads: usize,
    /// Agents, besides `agents`, that reach the arcade through one surface host (RFC §8.6)
    /// as plain MCP clients and each play one tic-tac-toe game against the bot
    /// ([`crate::surface::play_many`]); the report has a row for them. They reach the
    /// arcade's own listener, not the chaos proxies.
    pub surface_agents: usize,
    /// Of `agents`, how many play on MCP 2026-07-28 (issue #39): named `m0000`, … (the
    /// others `p0000`, …), each with a host that speaks only the modern era over
    /// Streamable HTTP — no session, every request a POST with its `_meta` — through the
    /// same chaos proxy as the legacy HTTP agents; served as plain MCP hosts, they play
    /// tic-tac-toe against the bot ([`crate::agent::modern`]). At least two agents stay
    /// legacy.
    pub modern: usize,
    /// Of `agents`, how many play on MCP 2026-07-28 **with hints** (issue #40): named
    /// `h0000`, …, each a scripted agent whose host speaks only the modern era over
    /// Streamable HTTP and advertises `toolHints`, so the arcade serves it RFC-014's
    /// stateless profile; they play the bot ([`hinted::policy`]) through a proxy of their
    /// own that also loses answers, re-issue calls whose answer was lost, and are checked
    /// by the legacy invariants and [`hinted::check_profile`]. With `modern`, at least two
    /// agents stay legacy.
    pub modern_hints: usize,
    /// With more than 0: the arcade runs as this many `mcpl-arcade` node processes on a
    /// PostgreSQL and a NATS of the run's own, behind a load balancer ([`crate::nodes`]);
    /// the chaos's restarts kill nodes (and, from level 2, NATS is restarted once and
    /// PostgreSQL stopped at once and started again).
    pub nodes: usize,
    /// The `mcpl-arcade` binary the nodes run (default: beside this executable,
    /// [`crate::nodes::default_binary`]).
    pub arcade_bin: Option<std::path::PathBuf>,
    /// With `nodes`: how the balancer in front sends WebSocket connections and streams
    /// (round robin by default, as `docs/cluster-haproxy.cfg`; a standby tunnels them to
    /// the owner).
    pub balance: Balance,
    /// With `nodes`: what one node owns (`mcpl-arcade serve --ownership`): the whole
    /// arcade (the default), or the players whose leases it holds.
    pub ownership: Ownership,
}

impl Default for LoadConfig {
    fn default() -> Self {
        LoadConfig {
            play: Play::default(),
            bot_playouts: 32,
            host_threads: 2,
            surface_agents: 0,
            modern: 0,
            modern_hints: 0,
            nodes: 0,
            arcade_bin: None,
            balance: Balance::default(),
            ownership: Ownership::default(),
        }
    }
}

/// Why a run could not be made (a violation is not an error: it is in the report).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The arcade could not start or restart.
    #[error(transparent)]
    Arcade(#[from] ArcadeError),
    /// A proxy could not bind.
    #[error("a proxy could not bind: {0}")]
    Proxy(#[from] std::io::Error),
    /// A host could not start.
    #[error(transparent)]
    Host(#[from] HostError),
    /// The configuration cannot be run.
    #[error("bad configuration: {0}")]
    Config(&'static str),
    /// The nodes, PostgreSQL or NATS could not start or restart.
    #[error(transparent)]
    Cluster(#[from] crate::nodes::ClusterError),
}

/// How often the drain looks whether the agents still make progress.
const DRAIN_TICK: Duration = Duration::from_millis(250);

/// How much longer than its quiet limit a drain may last in all ([`DrainClock`]).
pub const DRAIN_BOUND_FACTOR: u32 = 4;

/// When the drain gives up (issue #42): it waits for the agents to finish what is open as
/// long as they make progress — calls answered without a tool error — and gives up once
/// `quiet` ([`Play::drain`]) passes with none, or [`DRAIN_BOUND_FACTOR`] times `quiet` in
/// all. A fixed limit stopped thousands of agents in the middle of resigning, backed off
/// behind a server that was still working through what was queued **\[project\]**
/// (README "The drain waits while the agents make progress").
#[derive(Debug)]
pub struct DrainClock {
    started: Instant,
    quiet: Duration,
    last_progress: Instant,
    mark: Option<u64>,
    gave_up: Option<String>,
}

impl DrainClock {
    /// A drain started at `started`, giving up after `quiet` without progress.
    pub fn new(started: Instant, quiet: Duration) -> Self {
        DrainClock {
            started,
            quiet,
            last_progress: started,
            mark: None,
            gave_up: None,
        }
    }

    /// At `now`, with `done` calls answered without a tool error so far: true when the
    /// drain is to give up.
    pub fn over(&mut self, now: Instant, done: u64) -> bool {
        if self.mark.is_some_and(|m| m != done) {
            self.last_progress = now;
        }
        self.mark = Some(done);
        let bound = self.quiet.saturating_mul(DRAIN_BOUND_FACTOR);
        if now.duration_since(self.started) >= bound {
            self.gave_up = Some(format!("it reached its bound of {bound:?}"));
        } else if now.duration_since(self.last_progress) >= self.quiet {
            self.gave_up = Some(format!("no call succeeded for {:?}", self.quiet));
        }
        self.gave_up.is_some()
    }

    /// Why it gave up, if it did.
    pub fn gave_up(&self) -> Option<&str> {
        self.gave_up.as_deref()
    }
}

static PANICS: AtomicU64 = AtomicU64::new(0);
static HOOK: Once = Once::new();

/// Counts panics (anywhere in the process) from now on.
pub(crate) fn count_panics() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::Relaxed);
            previous(info);
        }));
    });
}

/// Panics counted since [`count_panics`] was first called.
pub(crate) fn panics() -> u64 {
    PANICS.load(Ordering::Relaxed)
}

/// Agent `i`'s seed, drawn from the run's `seed`: each agent plays its own choices, the
/// same for the same seed (the load's and the deterministic run's alike).
pub(crate) fn agent_seed(seed: u64, i: usize) -> u64 {
    seed.wrapping_mul(1_000_003).wrapping_add(i as u64)
}

/// Runs an agent's `run` on `worker` (on this thread when there is none); what it
/// reports comes on the receiver.
fn spawn_run<T: Send + 'static>(
    worker: Option<actix::ArbiterHandle>,
    run: impl Future<Output = T> + Send + 'static,
) -> oneshot::Receiver<T> {
    let (tx, rx) = oneshot::channel();
    let task = async move {
        let _ = tx.send(run.await);
    };
    match worker {
        None => drop(tokio::task::spawn_local(task)),
        Some(worker) => {
            worker.spawn(task);
        }
    }
    rx
}

/// Runs the load (inside an actix system) and reports it; `progress` shows it going.
pub async fn run(
    config: LoadConfig,
    progress: Option<ProgressBar>,
) -> Result<LoadReport, LoadError> {
    count_panics();
    let panics_before = PANICS.load(Ordering::Relaxed);
    let started = Instant::now();
    let total = config.play.agents.max(2);
    if config.modern + config.modern_hints > total - 2 {
        return Err(LoadError::Config(
            "at least two agents stay legacy: --modern is at most --agents minus 2",
        ));
    }
    if config.ownership == Ownership::Principal && config.balance == Balance::Owner {
        return Err(LoadError::Config(
            "--balance owner sends streams to the node owning the arcade, and with --ownership principal no node owns it: use --balance round-robin",
        ));
    }
    // The legacy agents, then the modern ones, then the modern ones with hints.
    let n = total - config.modern - config.modern_hints;
    let names: Vec<String> = (0..n).map(|i| format!("p{i:04}")).collect();
    let modern_names: Vec<String> = (0..config.modern).map(|i| format!("m{i:04}")).collect();
    let hinted_names: Vec<String> = (0..config.modern_hints)
        .map(|i| format!("h{i:04}"))
        .collect();
    let plan = config.play.chaos_plan();
    let arbiter = actix::Arbiter::new();
    let arcade_config = ArcadeConfig {
        bot: BotSettings {
            budget: BotBudget::Playouts(config.bot_playouts),
            seed: Some(config.play.seed),
        },
        ..Default::default()
    };
    let surface_names: Vec<String> = (0..config.surface_agents)
        .map(|i| format!("s{i:03}"))
        .collect();
    let players: Vec<String> = names
        .iter()
        .chain(&modern_names)
        .chain(&hinted_names)
        .chain(&surface_names)
        .cloned()
        .collect();
    // The proxies (and the nodes' balancer) pump every byte: they get a thread of their
    // own.
    let proxy_thread = actix::Arbiter::new();
    let mut service = if config.nodes > 0 {
        let cluster = Cluster::start(ClusterConfig {
            binary: config
                .arcade_bin
                .clone()
                .unwrap_or_else(crate::nodes::default_binary),
            nodes: config.nodes,
            players: players.clone(),
            bot_playouts: config.bot_playouts,
            seed: config.play.seed,
            ownership: config.ownership,
        })
        .await?;
        let upstreams = cluster.upstreams();
        let (tx, rx) = oneshot::channel();
        let balance = config.balance;
        proxy_thread.spawn(async move {
            let _ = tx.send(Balancer::start(upstreams, balance).await);
        });
        let balancer = rx
            .await
            .map_err(|_| std::io::Error::other("the proxies' thread stopped"))??;
        Backend::Nodes { cluster, balancer }
    } else {
        Backend::Local(ArcadeService::start(arcade_config, &players, Some(arbiter.handle())).await?)
    };
    let proxies = match plan.proxy {
        Some((ws_faults, http_faults)) => {
            let (ws_up, http_up) = (service.ws_addr(), service.http_addr());
            let seed = config.play.seed;
            let lose = answer_loss(plan.level);
            let (tx, rx) = oneshot::channel();
            proxy_thread.spawn(async move {
                let all = async {
                    Ok::<_, std::io::Error>((
                        crate::proxy::start(ws_up, ws_faults, seed ^ 0xA11CE).await?,
                        crate::proxy::start(http_up, http_faults, seed ^ 0xB0B).await?,
                        // The hinted agents' own (module docs of `hinted`).
                        crate::proxy::start_losing(http_up, http_faults, lose, seed ^ 0xC0DE)
                            .await?,
                    ))
                };
                let _ = tx.send(all.await);
            });
            let started = rx
                .await
                .map_err(|_| std::io::Error::other("the proxies' thread stopped"))??;
            Some(started)
        }
        None => None,
    };
    let path = mcpl_games::arcade::listen::HTTP_PATH;
    let (ws_url, http_url, hinted_url) = match &proxies {
        Some((w, h, x)) => (
            format!("ws://{}", w.addr()),
            format!("http://{}{path}", h.addr()),
            format!("http://{}{path}", x.addr()),
        ),
        None => (service.ws_url(), service.http_url(), service.http_url()),
    };
    let calm = Arc::new(Calm::default());
    let delay_stats = Arc::new(DelayStats::default());

    // Host i (and its agent) runs on a worker (the caller's thread keeps the timeline and
    // the proxies), or on the caller's thread when there are none.
    let workers: Vec<actix::Arbiter> = (0..config.host_threads)
        .map(|_| actix::Arbiter::new())
        .collect();
    let place = |i: usize| (!workers.is_empty()).then(|| workers[i % workers.len()].handle());
    let mut hosts = Vec::with_capacity(n);
    for (i, name) in names.iter().enumerate() {
        let http = config.play.transport.http(i);
        let knobs = LinkKnobs {
            hook: match (http, plan.delays) {
                (true, Some(d)) => Some(delivery_hook(
                    d,
                    config.play.seed.wrapping_mul(31).wrapping_add(i as u64),
                    calm.clone(),
                    delay_stats.clone(),
                )),
                _ => None,
            },
            ..Default::default()
        };
        let url = if http { &http_url } else { &ws_url };
        hosts.push(start_host(
            name,
            url,
            Some(&knobs),
            config.play.seed.wrapping_add(i as u64),
        )?);
    }
    // The modern agents' hosts: Streamable HTTP through the same proxy, MCP 2026-07-28
    // only. The delivery hook delays a legacy session's deliveries; a modern request's
    // answer is its POST's own, with no stream to delay.
    let modern_knobs = LinkKnobs {
        era: EraPolicy::Modern,
        ..Default::default()
    };
    let mut modern_hosts = Vec::with_capacity(modern_names.len());
    for (k, name) in modern_names.iter().enumerate() {
        let seed = config.play.seed.wrapping_add((n + k) as u64);
        modern_hosts.push(start_host(name, &http_url, Some(&modern_knobs), seed)?);
    }
    // The hinted agents' hosts: Streamable HTTP through their own proxy, MCP 2026-07-28
    // only, `toolHints` advertised; their deliveries counted and delayed.
    let mut hinted_hosts = Vec::with_capacity(hinted_names.len());
    let mut hinted_counts = Vec::with_capacity(hinted_names.len());
    for (k, name) in hinted_names.iter().enumerate() {
        let i = n + modern_names.len() + k;
        let counts = Arc::new(hinted::ProfileCounts::default());
        let knobs = LinkKnobs {
            era: EraPolicy::Modern,
            profile: true,
            hook: Some(hinted::hook(
                counts.clone(),
                plan.delays,
                config.play.seed.wrapping_mul(31).wrapping_add(i as u64),
                calm.clone(),
                delay_stats.clone(),
            )),
            ..Default::default()
        };
        let seed = config.play.seed.wrapping_add(i as u64);
        hinted_hosts.push(start_host(name, &hinted_url, Some(&knobs), seed)?);
        hinted_counts.push(counts);
    }
    let metrics = Arc::new(Metrics::default());
    follow::first_contact(&hosts, &names, &metrics).await;
    follow::first_contact(&modern_hosts, &modern_names, &metrics).await;
    follow::first_contact(&hinted_hosts, &hinted_names, &metrics).await;

    let (stop_tx, stop_rx) = watch::channel(false);
    let drop_clock = Arc::new(follow::DropClock::default());
    let followers = follow::spawn_followers(&hosts, &names, &metrics, &stop_rx, &drop_clock);
    let hinted_followers = follow::spawn_followers(
        &hinted_hosts,
        &hinted_names,
        &metrics,
        &stop_rx,
        &drop_clock,
    );
    let (phase_tx, phase_rx) = watch::channel(Phase::Play);
    // SIM_DUMP=PATH keeps every agent's log and writes those of agents at fault there.
    let recorder =
        std::env::var_os("SIM_DUMP").map(|p| (p, Arc::new(crate::print::Recorder::new())));
    let observer: Arc<dyn crate::agent::Observer> = match (std::env::var("SIM_TRACE"), &recorder) {
        // SIM_TRACE=p0003,p0017 prints what those agents do and are shown; `*`: all.
        (Ok(list), _) if list == "*" => Arc::new(crate::print::Printer::new(true)),
        (Ok(list), _) => Arc::new(crate::print::Printer::only(
            list.split(',').map(str::to_owned).collect(),
        )),
        (Err(_), Some((_, r))) => r.clone(),
        (Err(_), None) => Arc::new(Silent),
    };
    let agents: Vec<_> = hosts
        .iter()
        .zip(&names)
        .enumerate()
        .map(|(i, (h, name))| {
            let io = AgentIo::new(name.clone(), h.clone(), observer.clone(), metrics.clone());
            let policy = policy_for(i, n, &names, config.play.think);
            let agent = ScriptedAgent::new(policy, agent_seed(config.play.seed, i));
            let run = agent.run(io, phase_rx.clone());
            spawn_run(place(i), run)
        })
        .collect();

    let modern_agents: Vec<_> = modern_hosts
        .iter()
        .zip(&modern_names)
        .enumerate()
        .map(|(k, (h, name))| {
            let io = AgentIo::new(name.clone(), h.clone(), observer.clone(), metrics.clone());
            let run = ModernAgent::new(agent_seed(config.play.seed, n + k), config.play.think)
                .run(io, phase_rx.clone());
            spawn_run(place(n + k), run)
        })
        .collect();

    let hinted_agents: Vec<_> = hinted_hosts
        .iter()
        .zip(&hinted_names)
        .zip(&hinted_counts)
        .enumerate()
        .map(|(k, ((h, name), counts))| {
            let i = n + modern_names.len() + k;
            let io = AgentIo::new(name.clone(), h.clone(), observer.clone(), metrics.clone())
                .reissuing(counts.reissued.clone());
            let agent = ScriptedAgent::new(
                hinted::policy(k, config.play.think),
                agent_seed(config.play.seed, i),
            );
            let run = agent.run(io, phase_rx.clone());
            spawn_run(place(i), run)
        })
        .collect();

    let through_surface = (!surface_names.is_empty()).then(|| {
        let (names, url) = (surface_names.clone(), service.http_url());
        let (observer, metrics) = (observer.clone(), metrics.clone());
        tokio::task::spawn_local(async move {
            crate::surface::play_many(&names, &url, observer, metrics).await
        })
    });

    // The timeline: progress, mass drops and restarts at their moments.
    let play_start = Instant::now();
    let mut drops_done = 0;
    let mut restarts_done = 0;
    let mut nats_restarts_done = 0;
    let mut pg_restarts_done = 0;
    // With nodes, the restarts are node deaths, one more early in the run from level 2,
    // and NATS is restarted once between them (module docs of `crate::nodes`).
    let (restarts, nats_restarts) = if config.nodes > 0 && plan.level >= 2 {
        let mut r = vec![0.25];
        r.extend(&plan.restarts);
        (r, vec![0.5])
    } else {
        (plan.restarts.clone(), Vec::new())
    };
    // PostgreSQL stopped at once and started again (issue #41), with nodes from level 2:
    // after the first takeover, before NATS's restart [project].
    let pg_restarts = if config.nodes > 0 && plan.level >= 2 {
        vec![0.4]
    } else {
        Vec::new()
    };
    let at = |f: f64| config.play.duration.mul_f64(f);
    if let Some(p) = &progress {
        p.set_length(config.play.duration.as_secs().max(1));
    }
    while play_start.elapsed() < config.play.duration {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let t = play_start.elapsed();
        if let Some((w, h, x)) = &proxies {
            if drops_done < plan.mass_drops.len() && t >= at(plan.mass_drops[drops_done]) {
                drop_clock.dropping();
                w.cut_all();
                h.cut_all();
                x.cut_all();
                drops_done += 1;
            }
            if restarts_done < restarts.len() && t >= at(restarts[restarts_done]) {
                drop_clock.other_fault();
                let pick = config
                    .play
                    .seed
                    .wrapping_mul(0x9E37)
                    .wrapping_add(restarts_done as u64);
                service
                    .restart(pick, |ws, http| {
                        w.set_upstream(ws);
                        h.set_upstream(http);
                        x.set_upstream(http);
                    })
                    .await?;
                restarts_done += 1;
            }
        }
        if let Backend::Nodes { cluster, .. } = &mut service {
            if nats_restarts_done < nats_restarts.len()
                && t >= at(nats_restarts[nats_restarts_done])
            {
                drop_clock.other_fault();
                cluster.restart_nats().await?;
                nats_restarts_done += 1;
            }
            if pg_restarts_done < pg_restarts.len() && t >= at(pg_restarts[pg_restarts_done]) {
                drop_clock.other_fault();
                cluster.restart_postgres().await?;
                pg_restarts_done += 1;
            }
            // A node that ended by itself (it lost the lease) is started again.
            cluster.revive().await?;
        }
        if let Some(p) = &progress {
            let c = metrics.counts();
            p.set_position(t.as_secs());
            p.set_message(format!(
                "{} calls ({:.0}/s), {} games ended, {} violations",
                c.calls,
                c.answered as f64 / t.as_secs_f64().max(0.001),
                c.games_ended,
                metrics.violations().len()
            ));
        }
    }
    let played = play_start.elapsed();
    let counts_at_end_of_play = metrics.counts();

    // Drain, quietly: faults off, agents resign what is open.
    calm.set();
    if let Some((w, h, x)) = &proxies {
        w.calm();
        h.calm();
        x.calm();
    }
    let _ = phase_tx.send(Phase::Drain);
    if let Some(p) = &progress {
        p.set_message("draining: agents resign what is still open");
    }
    let all = futures_util::future::join3(
        futures_util::future::join_all(agents),
        futures_util::future::join_all(modern_agents),
        futures_util::future::join_all(hinted_agents),
    );
    tokio::pin!(all);
    let drain_start = Instant::now();
    let mut clock = DrainClock::new(drain_start, config.play.drain);
    let (results, modern_results, hinted_results) = loop {
        tokio::select! {
            r = &mut all => break r,
            _ = tokio::time::sleep(DRAIN_TICK) => {
                if let Backend::Nodes { cluster, .. } = &mut service {
                    // In the drain too: a node that ended by itself is started again (one
                    // whose store a late commit gave up stops in the drain as well).
                    cluster.revive().await?;
                }
                let c = metrics.counts();
                if clock.over(Instant::now(), c.answered - c.tool_errors) {
                    let _ = phase_tx.send(Phase::Stop);
                    break all.await;
                }
            }
        }
    };
    let drained = drain_start.elapsed();
    if let Some(why) = clock.gave_up() {
        metrics.violation(format!(
            "the drain did not finish: {why}; agents were stopped with games open"
        ));
    }
    let reports: Vec<AgentReport> = results.into_iter().filter_map(Result::ok).collect();
    if reports.len() != n {
        metrics.violation(format!("{} agent tasks failed", n - reports.len()));
    }
    let modern_reports: Vec<(AgentReport, ModernCounts)> =
        modern_results.into_iter().filter_map(Result::ok).collect();
    if modern_reports.len() != modern_names.len() {
        metrics.violation(format!(
            "{} modern agent tasks failed",
            modern_names.len() - modern_reports.len()
        ));
    }

    let hinted_reports: Vec<AgentReport> =
        hinted_results.into_iter().filter_map(Result::ok).collect();
    if hinted_reports.len() != hinted_names.len() {
        metrics.violation(format!(
            "{} hinted modern agent tasks failed",
            hinted_names.len() - hinted_reports.len()
        ));
    }

    // Quiet: every host settled, then the invariants.
    if let Some(p) = &progress {
        p.set_message("checking the invariants");
    }
    if let Backend::Nodes { cluster, .. } = &mut service {
        cluster.revive().await?;
    }
    let truth = service.truth();
    invariants::check_all(&truth, &hosts, &names, &reports, &metrics).await;
    // The hinted agents: the same invariants as the legacy ones (their view is the truth,
    // each end told once, nothing left open), and that they were served the profile.
    invariants::check_all(
        &truth,
        &hinted_hosts,
        &hinted_names,
        &hinted_reports,
        &metrics,
    )
    .await;
    for (name, counts) in hinted_names.iter().zip(&hinted_counts) {
        if let Some(v) = hinted::check_profile(name, counts) {
            metrics.violation(v);
        }
    }
    let mut modern = ModernTotals {
        agents: modern_names.len(),
        ..Default::default()
    };
    let checks = modern_reports.iter().map(|(report, counts)| {
        let connections = service.modern_requests(&report.name);
        modern.answered += counts.answered;
        modern.connections += connections;
        modern.declined += counts.declined;
        modern.ended += report.games.iter().filter(|g| g.result.is_some()).count();
        invariants::check_modern(&truth, report, counts.answered, connections)
    });
    for v in futures_util::future::join_all(checks)
        .await
        .into_iter()
        .flatten()
    {
        metrics.violation(v);
    }
    if let Backend::Nodes { cluster, .. } = &mut service {
        // The deaths whose players were still waited for (`--ownership principal`).
        cluster.settle().await;
    }
    let resumed = service.resumed().await;
    invariants::check_resumed(&resumed, &metrics);
    match &service {
        Backend::Local(s) => {
            let dead = s.sessions_of_dead_lives(Duration::from_secs(5)).await;
            if dead > 0 {
                metrics.violation(format!(
                    "{dead} sessions are still served by an arcade that was restarted"
                ));
            }
        }
        Backend::Nodes { cluster, .. } => {
            for d in cluster.deaths() {
                if d.served_again.is_none() {
                    metrics.violation(format!(
                        "node {} was killed ({}) and the arcade was not served again within {:?}",
                        d.node,
                        match (config.ownership, d.owner) {
                            (Ownership::Arcade, true) => "the owner".to_owned(),
                            (Ownership::Arcade, false) => "a standby".to_owned(),
                            (Ownership::Principal, _) =>
                                format!("serving {} players: not all served again, or the node not started again", d.players),
                        },
                        crate::nodes::START_LIMIT
                    ));
                }
            }
        }
    }
    let _ = stop_tx.send(true);
    let (hints, reconnects) = follow::followed(followers).await;
    let mut hinted = HintedTotals {
        agents: hinted_names.len(),
        answers_lost: proxies
            .as_ref()
            .map_or(0, |(_, _, x)| x.stats().answer_cuts),
        ended: hinted_reports
            .iter()
            .map(|r| r.ends_told.values().map(|n| u64::from(*n)).sum::<u64>())
            .sum(),
        ..Default::default()
    };
    (hinted.hints, hinted.reconnects) = follow::followed(hinted_followers).await;
    for (name, c) in hinted_names.iter().zip(&hinted_counts) {
        let [statements, deltas, stream, listens, unanswered, reissued] = c.snapshot();
        hinted.statements += statements;
        hinted.deltas += deltas;
        hinted.stream_changes += stream;
        hinted.listens += listens;
        hinted.unanswered += unanswered;
        hinted.reissued += reissued;
        hinted.connections += service.modern_requests(name);
    }
    for h in hosts.iter().chain(&modern_hosts).chain(&hinted_hosts) {
        h.stop().await;
    }
    let panics = PANICS.load(Ordering::Relaxed) - panics_before;
    if panics > 0 {
        metrics.violation(format!("{panics} panics"));
    }
    let chaos = ChaosTotals {
        level: plan.level,
        proxied: proxies.as_ref().map_or(0, |(w, h, x)| {
            w.stats().accepted + h.stats().accepted + x.stats().accepted
        }),
        dropped: proxies.as_ref().map_or(0, |(w, h, x)| {
            w.stats().lifetime_cuts + h.stats().lifetime_cuts + x.stats().lifetime_cuts
        }),
        mass_dropped: proxies.as_ref().map_or(0, |(w, h, x)| {
            w.stats().mass_cuts + h.stats().mass_cuts + x.stats().mass_cuts
        }),
        mass_drops: drops_done as u32,
        restarts: service.restarts(),
        nodes: match &service {
            Backend::Local(_) => None,
            Backend::Nodes { cluster, balancer } => {
                let tunnels = balancer.tunnels();
                Some(NodeTotals {
                    balance: balancer.balance().name().to_owned(),
                    tunnels_opened: tunnels.opened,
                    tunnels_accepted: tunnels.accepted,
                    ..cluster.totals()
                })
            }
        },
        games_at_restarts: (resumed.running, resumed.resumed, resumed.lost),
        duplicated_frames: proxies.as_ref().map_or(0, |(w, _, _)| w.stats().duplicated),
        accept_failures: proxies.as_ref().map_or(0, |(w, h, x)| {
            w.stats().accept_failures + h.stats().accept_failures + x.stats().accept_failures
        }),
        delayed: (
            delay_stats.get.load(Ordering::Relaxed),
            delay_stats.post.load(Ordering::Relaxed),
            delay_stats.late.load(Ordering::Relaxed),
        ),
    };
    drop(proxies);
    drop(service);
    arbiter.stop();
    proxy_thread.stop();
    for w in workers {
        w.stop();
    }
    if let Some(p) = &progress {
        p.finish_and_clear();
    }
    let violations = metrics.violations();
    if let Some((path, rec)) = &recorder {
        let mut out = String::new();
        for name in names.iter().chain(&modern_names).chain(&hinted_names) {
            if violations
                .iter()
                .any(|v| v.starts_with(&format!("{name}:")))
            {
                out.push_str(&format!("===== {name}\n{}\n", rec.log(name).join("\n")));
            }
        }
        if let Err(e) = std::fs::write(path, out) {
            tracing::warn!(error = %e, "could not write the agents' logs");
        }
    }
    let mut surface = SurfaceTotals {
        agents: surface_names.len(),
        ..Default::default()
    };
    if let Some(task) = through_surface {
        let outcomes = match task.await {
            Ok(Ok(all)) => all
                .into_iter()
                .map(|r| r.map_err(|e| e.to_string()))
                .collect(),
            Ok(Err(e)) => vec![Err(e.to_string())],
            Err(e) => vec![Err(format!("the surface agents' task failed: {e}"))],
        };
        for outcome in outcomes {
            match outcome {
                Ok(report) => {
                    surface.ended += report.games.iter().filter(|g| g.result.is_some()).count();
                }
                Err(e) => surface.failed.push(e),
            }
        }
    }
    Ok(LoadReport {
        hints,
        reconnects,
        chaos,
        panics,
        violations,
        surface,
        modern,
        hinted,
        ..LoadReport::head(
            &config.play,
            total,
            started.elapsed(),
            played,
            drained,
            counts_at_end_of_play.answered,
            &metrics,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drain_goes_on_while_calls_succeed_up_to_its_bound() {
        let quiet = Duration::from_secs(20);
        let t0 = Instant::now();
        let s = Duration::from_secs;
        // Progress every 10 s: past the quiet limit, up to the bound.
        let mut busy = DrainClock::new(t0, quiet);
        for k in 0..8u64 {
            assert!(!busy.over(t0 + s(10 * k), k), "at {} s", 10 * k);
        }
        assert!(busy.over(t0 + s(80), 8));
        assert!(busy.gave_up().unwrap().contains("bound"), "{busy:?}");
        // Progress once, then none: it gives up `quiet` after the last.
        let mut stuck = DrainClock::new(t0, quiet);
        assert!(!stuck.over(t0 + s(1), 0));
        assert!(!stuck.over(t0 + s(5), 3));
        assert!(!stuck.over(t0 + s(24), 3));
        assert!(stuck.over(t0 + s(25), 3));
        assert!(
            stuck.gave_up().unwrap().contains("no call succeeded"),
            "{stuck:?}"
        );
    }
}

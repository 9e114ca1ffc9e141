//! `sim-perf`: the performance targets of the simulator's issue, measured on this machine
//! and printed next to each target — and as JSON. A crate of its own beside the simulator
//! (`sim`), whose arcade, hosts and fault proxy it drives, so that what only the
//! measurements need (rmcp, hdrhistogram, httparse, nix) is not the simulator's:
//!
//! ```text
//! cargo run --release -p sim-perf -- [--json PATH] [--only NAME,…] [--window S] [--connections N] …
//! ```
//!
//! | name | what | target |
//! |---|---|---|
//! | `idle` | idle WebSocket sessions held by the arcade, resident bytes per session | 10,000 at ≤ 32 KiB each (issue #42) |
//! | `ws` | light `tools/call` per second over WebSocket across 100 connections, pipelined; and a bare WebSocket echo's with the same clients | ≥ 40 % of the echo's (for reading: ≥ 100,000/s) |
//! | `http` | the same over Streamable HTTP; and a bare HTTP JSON endpoint's | ≥ 40 % of the endpoint's (for reading: ≥ 25,000/s) |
//! | `latency` | one WebSocket client, one call at a time: p50, p99; and the bare echo's | ≤ ×1.15 and ≤ ×1.3 the echo's (issue #42; for reading: ≤ 60 µs, ≤ 200 µs) |
//! | `rmcp` | the light tool on rmcp's Streamable HTTP server (with sessions, and stateless), same client (`http_load.rs`) as `http`; ours / rmcp's better | ≥ ×2 |
//! | `modern` | the light tool called as MCP 2026-07-28 calls it over Streamable HTTP (no handshake, no session, `_meta` on every POST), on ours and on rmcp's stateless mode, in turn; ours / rmcp's | `report::GOALS.modern_ratio` |
//!
//! Where a floor is measured (`floor.rs`), the ratio decides ✓/✗; see `report.rs`. A
//! figure and its floor are taken in the same minutes: throughput in alternating windows
//! over connections kept open (`rounds` of each: server, floor, server, floor…; for
//! `rmcp`, ours and rmcp's two modes in turn; `throughput.rs`), latency in alternating
//! blocks of
//! calls on two open connections (`latency.rs`), so what else the machine does falls on
//! both alike. `latency`, measured alone in its process, keeps every thread on one CPU
//! (`proc.rs`: where the scheduler puts the threads changed the median fivefold).
//! | `drop` | hosts with a game open, every connection cut at once: back and resynchronised | 99 % of 1,000 within 5 s |
//! | `tools` | one host reading a `tools/list` of 10,000 dynamic tools, then of 20,000, until settled (their statement read before); one `toolsets--look` over them | linear (the settles' CPU time, 20k / 10k ≤ 2.5) and 20k < 0.3 s |
//! | `expiry` | the arcade's heap in use (and resident set) after 2,000 Streamable HTTP sessions were opened, abandoned (their queues filled by game changes) and expired | within 10 % of the baseline |
//! | `cluster` | tic-tac-toe moves against the bot and light calls (`tictactoe_board`) per second, legacy Streamable HTTP sessions through a load balancer, on three arcade nodes on PostgreSQL + NATS (the sim's `sim::nodes`) and on one embedded node (redb) in alternating windows; PostgreSQL's commits per move (its transaction id counter, less the leases' background) | each ≥ `report::GOALS.cluster_moves_ratio` / `cluster_light_ratio` of the embedded node's; skipped, saying why, without PostgreSQL's or NATS's binaries |
//! | `durable` | tic-tac-toe moves per second against the bot with the arcade's games kept on a `redb` store and in memory, alternating windows (the ratio), the store's commits (fsyncs), steps and commit time per move; Go moves against the bot at its time budget, kept (issue #15) | the ratio ≥ ×0.5 and ≤ 1.2 commits a move (issue #42); each Go move within 1.5× the bot's budget |
//!
//! What is served: for `ws`, `http`, `latency`, `rmcp` and `modern`, a server on the SDK with one
//! static tool that answers at once (`light.rs`: the arcade's session layer is this SDK;
//! the same tool is what rmcp serves); for `idle` and `drop`, the arcade itself; for
//! `tools`, a raw server on mcpl-transport's WebSocket server end answering from JSON built
//! beforehand (`many_tools.rs`), so that the time is the host's.
//! The calls are made by raw clients, not the Host, whose per-call work is not the session
//! layer's: over WebSocket, mcpl-transport's client end (`client.rs`); over Streamable
//! HTTP, keep-alive HTTP/1.1 lanes whose answers are read with `httparse`
//! (`http_load.rs`), as a load tool drives an HTTP server — a client shared by both sides of a ratio pulls it towards
//! 1 when the CPUs are taken, so the HTTP rows' client costs as little as it can. `drop`
//! and `tools` use real Hosts.
//!
//! Each measurement runs in a fresh process of its own ([`run_isolated`]: what one leaves
//! behind, such as a heap that held 10,000 sessions, slows the next), server and clients
//! together over loopback — but `idle`'s clients, in a child process so that the server's
//! resident set is measured alone. [`run`] does them all in this process.
//!
//! Threads: the server's sessions and transport tasks on `server_threads` actix arbiters
//! (one, as the sim serves the arcade), rmcp on as many tokio threads, the clients on a
//! tokio runtime of `client_threads` threads. On a 2-core machine the clients and the server share the cores; the report
//! gives each side's CPU seconds, and calls per server CPU second.
//!
//! | file | what |
//! |---|---|
//! | `lib.rs` | [`PerfConfig`], [`Measure`], [`run`], [`run_isolated`], [`child_main`], [`PerfError`] |
//! | `client.rs` | raw clients: connect, handshake, light calls and their answers |
//! | `http_load.rs` | the Streamable HTTP load generator: a session's lanes, one call at a time on each |
//! | `light.rs` | the SDK server with the light tool, on arbiters |
//! | `rmcp_server.rs` | the light tool on rmcp |
//! | `floor.rs` | the floors: a bare WebSocket echo and a bare HTTP JSON endpoint, each with the server's runtime shape ([`floor::FloorShape`]) |
//! | `server_thread.rs` | a compared server (rmcp's, a floor) on a thread and runtime of its own |
//! | `throughput.rs` | pipelined calls across connections: counts and rate |
//! | `latency.rs` | one call at a time: an HDR histogram |
//! | `idle.rs` | idle sessions and the resident set; the child's side |
//! | `mass_drop.rs` | hosts, a mass drop, time to resynchronise |
//! | `many_tools.rs` | a host settling on many dynamic tools, and a look over them |
//! | `expiry.rs` | abandoned Streamable HTTP sessions, their expiry, the heap in use and the resident set |
//! | `cluster.rs` | three nodes on PostgreSQL and NATS against one embedded node: moves and light calls per second, commits per move |
//! | `durable.rs` | the cost of durable state: moves per second kept and not, commits and steps per move, Go against the bot |
//! | `child.rs` | a measurement's child process: piped, read a line at a time, told to go |
//! | `proc.rs` | CPU time per thread group and the resident set, from `/proc` |
//! | `report.rs` | [`PerfReport`]: the figures, the table, the JSON |

mod child;
mod client;
pub mod cluster;
pub mod durable;
pub mod expiry;
pub mod floor;
pub mod http_load;
pub mod idle;
pub mod latency;
pub mod light;
pub mod many_tools;
pub mod mass_drop;
pub mod proc;
pub mod report;
pub mod rmcp_server;
pub mod server_thread;
pub mod throughput;

pub use client::{Answer, LIGHT_TEXT, LIGHT_TOOL};
pub use report::{Comparison, ModernComparison, PerfReport};

use actix::Arbiter;
use light::LightService;
use mcpl_host::host::HostError;
use rmcp_server::{RmcpMode, RmcpService};
use serde::{Deserialize, Serialize};
use sim::arcade::ArcadeError;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use throughput::{LoadShape, Target, Throughput};

/// One measurement, by its name on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Measure {
    /// Idle sessions and memory.
    Idle,
    /// Calls per second over WebSocket.
    Ws,
    /// Calls per second over Streamable HTTP.
    Http,
    /// Single-client WebSocket latency.
    Latency,
    /// Ours against rmcp over Streamable HTTP.
    Rmcp,
    /// Resynchronisation after a mass drop.
    Drop,
    /// A host settling on many dynamic tools.
    Tools,
    /// Memory after abandoned Streamable HTTP sessions expired.
    Expiry,
    /// The cost of keeping games across restarts.
    Durable,
    /// Ours against rmcp's stateless mode, both served MCP 2026-07-28 requests.
    Modern,
    /// Three nodes on PostgreSQL and NATS against one embedded node (issue #41).
    Cluster,
}

impl Measure {
    /// Every measurement, in the order they run (`idle` first, in a fresh process, so
    /// that memory freed by the others cannot be reused by its sessions and hide them).
    pub const ALL: [Measure; 11] = [
        Measure::Idle,
        Measure::Ws,
        Measure::Http,
        Measure::Latency,
        Measure::Rmcp,
        Measure::Modern,
        Measure::Drop,
        Measure::Tools,
        Measure::Expiry,
        Measure::Durable,
        Measure::Cluster,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Idle => "idle",
            Measure::Ws => "ws",
            Measure::Http => "http",
            Measure::Latency => "latency",
            Measure::Rmcp => "rmcp",
            Measure::Drop => "drop",
            Measure::Tools => "tools",
            Measure::Expiry => "expiry",
            Measure::Durable => "durable",
            Measure::Modern => "modern",
            Measure::Cluster => "cluster",
        }
    }

    /// The measurement of that name.
    pub fn from_name(name: &str) -> Option<Measure> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// What `sim-perf` measures with.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PerfConfig {
    /// Only these (empty: all).
    pub only: Vec<Measure>,
    /// Connections for `ws`, `http` and `rmcp`.
    pub connections: usize,
    /// Calls outstanding per WebSocket connection.
    pub ws_in_flight: usize,
    /// Calls outstanding per Streamable HTTP session: each is a POST, so a keep-alive TCP
    /// connection, a lane, of its own (`http_load.rs`).
    pub http_in_flight: usize,
    /// Unmeasured load before a figure's first window (its later windows have 0.1 s).
    pub warmup: Duration,
    /// Each throughput window.
    pub window: Duration,
    /// `latency`, measured alone in its process: every thread on one CPU
    /// ([`proc::pin_to_one_cpu`]).
    pub pin_latency: bool,
    /// Windows per throughput figure, alternating with its floor's (server, floor, server,
    /// floor…): each figure is over all its windows, so the machine's other work falls on
    /// both alike.
    pub rounds: usize,
    /// Instead of windows: this many calls in each window (tests).
    pub calls: Option<u64>,
    /// Untimed calls before the latency samples.
    pub latency_warmup: u64,
    /// Latency samples.
    pub latency_calls: u64,
    /// Idle sessions.
    pub idle_sessions: usize,
    /// The executable to run `idle`'s clients (`sim-perf clients`); `None`: in process.
    pub client_exe: Option<PathBuf>,
    /// Hosts for `drop`.
    pub drop_hosts: usize,
    /// Threads for `drop`'s hosts.
    pub host_threads: usize,
    /// `drop`'s limit.
    pub drop_limit: Duration,
    /// `drop`: run the hosts in child processes (`client_exe`'s `drop-hosts`) of at most
    /// this many each. `None`: in the measuring process where it may hold every host's
    /// sockets, else in children of 4,000.
    #[serde(default)]
    pub drop_hosts_per_process: Option<usize>,
    /// `tools`: the smaller number of dynamic tools, then the larger.
    pub tools: (usize, usize),
    /// Arbiters for our server's sessions (and threads for rmcp's).
    pub server_threads: usize,
    /// Threads for the clients.
    pub client_threads: usize,
    /// `expiry`'s sessions, game cycles and idle time.
    pub expiry: expiry::ExpiryConfig,
    /// `durable`'s players, windows and Go moves.
    #[serde(default)]
    pub durable: durable::DurableConfig,
    /// `cluster`'s nodes, players, windows and binary.
    #[serde(default)]
    pub cluster: cluster::ClusterConfig,
}

impl Default for PerfConfig {
    /// The issue's figures.
    fn default() -> Self {
        PerfConfig {
            only: Vec::new(),
            connections: 100,
            ws_in_flight: 32,
            http_in_flight: 4,
            warmup: Duration::from_secs(1),
            // Short windows, many: a build beside comes and goes in seconds, and falls on
            // every figure alike only when their windows alternate faster than that.
            window: Duration::from_millis(500),
            rounds: 12,
            pin_latency: true,
            calls: None,
            latency_warmup: 2_000,
            latency_calls: 20_000,
            idle_sessions: 10_000,
            client_exe: None,
            drop_hosts: 1_000,
            host_threads: 2,
            drop_limit: Duration::from_secs(5),
            drop_hosts_per_process: None,
            tools: (10_000, 20_000),
            server_threads: 1,
            client_threads: 1,
            expiry: expiry::ExpiryConfig::default(),
            durable: durable::DurableConfig::default(),
            cluster: cluster::ClusterConfig::default(),
        }
    }
}

impl PerfConfig {
    fn wants(&self, m: Measure) -> bool {
        self.only.is_empty() || self.only.contains(&m)
    }

    /// The measurements asked for, in the order they run.
    pub fn measures(&self) -> Vec<Measure> {
        Measure::ALL
            .into_iter()
            .filter(|m| self.wants(*m))
            .collect()
    }

    fn shape(&self, in_flight: usize) -> LoadShape {
        LoadShape {
            connections: self.connections,
            in_flight,
            warmup: self.warmup,
            window: self.window,
            calls: self.calls,
        }
    }
}

/// Why a measurement could not be made. A figure that misses its target is not an
/// error: it is in the report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PerfError {
    // The server, as a peer.
    /// The server refused a handshake request.
    #[error("the server refused {method}: {reason}")]
    Refused {
        /// The method.
        method: String,
        /// Its error.
        reason: String,
    },
    /// A connection closed under a client.
    #[error("a connection closed {0}")]
    Closed(&'static str),
    /// Something expected did not come in time.
    #[error("stalled: {0}")]
    Stalled(&'static str),
    /// The client process said something else than it should.
    #[error("the client process said {0:?} instead of `ready N`")]
    ChildSaid(String),
    /// A measurement's own process failed or answered with no report.
    #[error("the process measuring {measure} failed: {reason}")]
    MeasureFailed {
        /// The measurement.
        measure: &'static str,
        /// Its exit status, or what was wrong with its answer.
        reason: String,
    },

    // Local misuse.
    /// The configuration cannot be run.
    #[error("bad configuration: {0}")]
    Config(&'static str),

    // Transport and the system.
    /// A client could not connect.
    #[error("could not connect to {url}: {reason}")]
    Connect {
        /// Where.
        url: String,
        /// Why.
        reason: String,
    },
    /// A listener, a runtime or a proxy could not be made.
    #[error("I/O")]
    Io(#[from] std::io::Error),
    /// The client process could not be run.
    #[error("the client process: {0}")]
    Child(std::io::Error),

    // The parts under test failed to start.
    /// The arcade could not start.
    #[error(transparent)]
    Arcade(#[from] ArcadeError),
    /// The light server was refused by the SDK.
    #[error("the light server could not be built: {0}")]
    Build(#[from] mcpl_server::BuildError),
    /// A host could not start.
    #[error(transparent)]
    Host(#[from] HostError),

    // Ours.
    /// A bug in the harness.
    #[error("internal: {0}")]
    Internal(&'static str),
}

/// Runs each measurement `config` asks for in a fresh process of its own, one after the
/// other, and merges their reports — so that what one leaves behind (a heap that held
/// 10,000 sessions, a thousand hosts' threads) cannot slow the next: measured in one
/// process, the WebSocket figure after `idle` is a third lower than alone.
///
/// Each process is `exe one` (`sim-perf`'s hidden subcommand, [`child_main`]): it reads
/// its configuration as JSON on standard input and writes its report as JSON on standard
/// output. `http` comes from its own process; `rmcp`'s process measures ours again, its
/// windows alternating with rmcp's, for its ratio.
pub fn run_isolated(config: &PerfConfig, exe: &Path) -> Result<PerfReport, PerfError> {
    let mut report = PerfReport::new(config);
    report.setup.isolated = true;
    for m in config.measures() {
        let one = PerfConfig {
            only: vec![m],
            ..config.clone()
        };
        report.merge(run_child(exe, &one, m)?);
    }
    Ok(report)
}

/// Runs one configuration in `exe one` and reads its report.
fn run_child(exe: &Path, config: &PerfConfig, m: Measure) -> Result<PerfReport, PerfError> {
    let failed = |reason: String| PerfError::MeasureFailed {
        measure: m.name(),
        reason,
    };
    let mut child = Command::new(exe)
        .arg("one")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(PerfError::Child)?;
    let json = serde_json::to_vec(config).map_err(|e| failed(e.to_string()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(&json).map_err(PerfError::Child)?;
    }
    let out = child.wait_with_output().map_err(PerfError::Child)?;
    if !out.status.success() {
        return Err(failed(out.status.to_string()));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| failed(format!("its report: {e}")))
}

/// `sim-perf one`: reads a [`PerfConfig`] as JSON on standard input, runs it in this
/// process, and writes the [`PerfReport`] as JSON on standard output.
pub fn child_main() -> Result<(), PerfError> {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input)?;
    let config: PerfConfig = serde_json::from_slice(&input)
        .map_err(|_| PerfError::Config("sim-perf one reads a configuration as JSON"))?;
    let report = run(&config)?;
    let json = serde_json::to_string(&report).map_err(|_| PerfError::Internal("the report"))?;
    println!("{json}");
    Ok(())
}

/// Runs the measurements `config` asks for in this process and reports them. Makes its
/// own runtimes: an actix system on this thread and the clients' runtime; call from plain
/// code, not from inside a runtime.
pub fn run(config: &PerfConfig) -> Result<PerfReport, PerfError> {
    // Before any thread starts, so that every one inherits the CPU.
    let pinned = if config.pin_latency && config.measures() == [Measure::Latency] {
        Some(proc::pin_to_one_cpu()?)
    } else {
        None
    };
    let clients = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.client_threads.max(1))
        .thread_name(proc::CLIENT_THREADS)
        .enable_all()
        .build()?;
    let handle = clients.handle().clone();
    let mut report = actix::System::new().block_on(run_in_system(config, handle));
    clients.shutdown_timeout(Duration::from_secs(2));
    if let Ok(report) = &mut report {
        if let Some(l) = &mut report.latency {
            l.pinned_cpu = pinned;
        }
        if let Some(shape) = &mut report.floors.latency_shape {
            shape.pinned_cpu = pinned;
        }
    }
    report
}

async fn run_in_system(
    config: &PerfConfig,
    clients: tokio::runtime::Handle,
) -> Result<PerfReport, PerfError> {
    let mut report = PerfReport::new(config);
    if config.wants(Measure::Idle) {
        let arbiter = Arbiter::new();
        let idle = idle::run(
            config.idle_sessions,
            config.client_exe.as_deref(),
            arbiter.handle(),
            &clients,
        )
        .await;
        // Gone before the next measurement reads its threads' CPU time.
        arbiter.stop();
        let _ = arbiter.join();
        report.idle = Some(idle?);
    }
    let tokens = light::tokens("c", config.connections + 1);
    let light_wanted = [
        Measure::Ws,
        Measure::Http,
        Measure::Latency,
        Measure::Rmcp,
        Measure::Modern,
    ];
    if light_wanted.iter().any(|m| config.wants(*m)) {
        let light = LightService::start(config.server_threads, &tokens).await?;
        // Every floor with the light server's runtime shape (`floor.rs`); the pinning,
        // which the latency measurement alone takes, is filled in by `run`.
        let floor_shape = floor::FloorShape::like_server(config.server_threads, None);
        let (ws, http) = (light.ws_url(), light.http_url());
        // Each figure beside its floor (`floor.rs`), with the same clients, their windows
        // alternating.
        let rounds = config.rounds.max(1);
        if config.wants(Measure::Ws) {
            let echo = floor::WsEcho::start(floor_shape.clone())?;
            let shape = config.shape(config.ws_in_flight);
            let (ours, floor) =
                paired(&clients, [&ws, &echo.url()], &tokens, &shape, rounds).await?;
            report.ws = Some(ours);
            report.floors.ws = Some(floor);
            report.floors.ws_shape = Some(echo.shape().clone());
        }
        if config.wants(Measure::Http) {
            let echo = floor::HttpEcho::start(floor_shape.clone())?;
            let shape = config.shape(config.http_in_flight);
            let (ours, floor) =
                paired(&clients, [&http, &echo.url()], &tokens, &shape, rounds).await?;
            report.http = Some(ours);
            report.floors.http = Some(floor);
            report.floors.http_shape = Some(echo.shape().clone());
        }
        if config.wants(Measure::Latency) {
            let echo = floor::WsEcho::start(floor_shape.clone())?;
            report.floors.latency_shape = Some(echo.shape().clone());
            let token = tokens[config.connections].clone();
            let (warmup, calls) = (config.latency_warmup, config.latency_calls);
            let echo_url = echo.url();
            let (ours, floor) = clients
                .spawn(async move { latency::paired(&ws, &echo_url, &token, warmup, calls).await })
                .await
                .map_err(|_| PerfError::Internal("the latency task panicked"))??;
            report.latency = Some(ours);
            report.floors.latency = Some(floor);
        }
        if config.wants(Measure::Rmcp) {
            // Ours and rmcp's two modes in turn, window by window (ours, sessions,
            // stateless, ours…), as each figure is taken beside its floor: measured one
            // after the other, the machine's drift between them moved the ratio by a
            // third from run to run (issue #18).
            let sessions = RmcpService::start(config.server_threads, RmcpMode::Sessions)?;
            let stateless = RmcpService::start(config.server_threads, RmcpMode::StatelessJson)?;
            let target = |url: String, server_threads| Target {
                url,
                server_threads,
                modern: false,
            };
            let targets = vec![
                target(http.clone(), proc::ARBITER_THREADS),
                target(sessions.url(), proc::RMCP_THREADS),
                target(stateless.url(), proc::RMCP_THREADS),
            ];
            let shape = config.shape(config.http_in_flight);
            let figures = in_turn(&clients, targets, &tokens, &shape, rounds).await?;
            let [ours, sessions, stateless]: [Throughput; 3] = figures
                .try_into()
                .map_err(|_| PerfError::Internal("a figure per target"))?;
            report.rmcp = Some(Comparison::new(ours, sessions, stateless));
        }
        if config.wants(Measure::Modern) {
            // MCP 2026-07-28 on both: no handshake, no session, each POST with its `_meta`
            // (`http_load.rs`), ours and rmcp's stateless mode (which serves that version
            // statelessly whatever its session setting) in turn, window by window.
            let stateless = RmcpService::start(config.server_threads, RmcpMode::StatelessJson)?;
            let target = |url: String, server_threads| Target {
                url,
                server_threads,
                modern: true,
            };
            let targets = vec![
                target(http.clone(), proc::ARBITER_THREADS),
                target(stateless.url(), proc::RMCP_THREADS),
            ];
            let shape = config.shape(config.http_in_flight);
            let figures = in_turn(&clients, targets, &tokens, &shape, rounds).await?;
            let [ours, rmcp]: [Throughput; 2] = figures
                .try_into()
                .map_err(|_| PerfError::Internal("a figure per target"))?;
            report.modern = Some(ModernComparison::new(ours, rmcp));
        }
    }
    if config.wants(Measure::Drop) {
        let arbiter = Arbiter::new();
        let dropped = mass_drop::run(
            config.drop_hosts,
            config.host_threads,
            config.drop_limit,
            arbiter.handle(),
            config.client_exe.as_deref(),
            config.drop_hosts_per_process,
        )
        .await;
        arbiter.stop();
        report.mass_drop = Some(dropped?);
    }
    if config.wants(Measure::Tools) {
        let (small, large) = config.tools;
        report.many_tools = Some(many_tools::run(small, large, &clients).await?);
    }
    if config.wants(Measure::Expiry) {
        let arbiter = Arbiter::new();
        let expired = expiry::run(&config.expiry, arbiter.handle()).await;
        arbiter.stop();
        report.expiry = Some(expired?);
    }
    if config.wants(Measure::Durable) {
        report.durable = Some(durable::run(&config.durable, &clients).await?);
    }
    if config.wants(Measure::Cluster) {
        // On the clients' runtime: the cluster's start, its balancers and its players.
        let cluster = config.cluster.clone();
        let figures = clients
            .spawn(async move { cluster::run(&cluster).await })
            .await
            .map_err(|_| PerfError::Internal("the cluster's task panicked"))??;
        report.cluster = Some(figures);
    }
    report.judge();
    Ok(report)
}

/// `rounds` windows of `shape` against each of `targets` in turn, on the client runtime
/// ([`throughput::alternate`]); each target's figure over its windows.
async fn in_turn(
    clients: &tokio::runtime::Handle,
    targets: Vec<Target>,
    tokens: &[String],
    shape: &LoadShape,
    rounds: usize,
) -> Result<Vec<Throughput>, PerfError> {
    let (tokens, shape) = (tokens.to_vec(), shape.clone());
    clients
        .spawn(async move { throughput::alternate(&targets, &tokens, &shape, rounds).await })
        .await
        .map_err(|_| PerfError::Internal("a load task panicked"))?
}

/// The server at `urls[0]` and its floor at `urls[1]`, in turn ([`in_turn`]).
async fn paired(
    clients: &tokio::runtime::Handle,
    urls: [&str; 2],
    tokens: &[String],
    shape: &LoadShape,
    rounds: usize,
) -> Result<(Throughput, Throughput), PerfError> {
    let targets = vec![
        Target {
            url: urls[0].to_owned(),
            server_threads: proc::ARBITER_THREADS,
            modern: false,
        },
        Target {
            url: urls[1].to_owned(),
            server_threads: floor::FLOOR_THREADS,
            modern: false,
        },
    ];
    let mut figures = in_turn(clients, targets, tokens, shape, rounds).await?;
    let floor = figures.pop().unwrap_or_default();
    let ours = figures.pop().unwrap_or_default();
    Ok((ours, floor))
}

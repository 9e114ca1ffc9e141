//! `sim-perf`: the performance targets measured, each in a process of its own, and printed
//! with ✓/✗ (see the library's documentation for the rows and how each is judged).
//!
//! ```text
//! sim-perf [--json PATH] [--only NAME,…] [--window S] [--connections N] …
//! ```
//!
//! Exits 1 when a target is missed, 2 when a measurement could not be made.

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    sim::cli::init_logging();
    let cli = Cli::parse();
    let outcome = match cli.command {
        None => run_perf(cli.perf),
        Some(Command::Clients(args)) => run_clients(args),
        Some(Command::One) => sim_perf::child_main().map(|()| true).map_err(Into::into),
        Some(Command::DropHosts(args)) => run_drop_hosts(args),
    };
    sim::cli::exit_code("sim-perf", outcome)
}

/// `sim-perf`: what to measure and how.
#[derive(Parser)]
#[command(
    name = "sim-perf",
    about = "Measures the performance targets and prints them with ✓/✗ (exits 1 when one is missed)."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    perf: PerfArgs,
}

#[derive(Subcommand)]
enum Command {
    /// The idle clients, run as a child process.
    #[command(hide = true)]
    Clients(ClientsArgs),
    /// One measurement in a process of its own: configuration in, report out (JSON).
    #[command(hide = true)]
    One,
    /// A group of the mass drop's hosts, run as a child process.
    #[command(hide = true)]
    DropHosts(DropHostsArgs),
}

/// The measurements' knobs.
#[derive(Args)]
struct PerfArgs {
    /// Write the figures as JSON here too.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Only these: idle, ws, http, latency, rmcp, modern, drop, tools, expiry, durable,
    /// cluster (comma-separated or repeated).
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    only: Vec<String>,
    /// Seconds of each throughput window (the first of a figure after a second of warm-up,
    /// the others after 0.1 s).
    #[arg(long, default_value_t = 0.5)]
    window: f64,
    /// Windows per throughput figure, alternating with its floor's (server, floor, …) over
    /// connections kept open.
    #[arg(long, default_value_t = 12)]
    rounds: usize,
    /// Instead of timed windows, each throughput window sends this many calls (shared out
    /// over the connections) and lasts until they are answered: a fixed amount of work, for
    /// counting instructions per call (`valgrind --tool=callgrind`), where a timed window
    /// would measure the instrumentation.
    #[arg(long, value_name = "N")]
    calls: Option<u64>,
    /// Let the scheduler place the latency measurement's threads (by default all are kept
    /// on one CPU, so that the server and its floor pay the same hand-offs).
    #[arg(long)]
    no_pin: bool,
    /// Connections for ws, http and rmcp.
    #[arg(long, default_value_t = 100)]
    connections: usize,
    /// Calls outstanding per WebSocket connection.
    #[arg(long, default_value_t = 32)]
    ws_in_flight: usize,
    /// Calls outstanding per Streamable HTTP connection.
    #[arg(long, default_value_t = 4)]
    http_in_flight: usize,
    /// Latency samples (one call at a time).
    #[arg(long, default_value_t = 20_000)]
    latency_calls: u64,
    /// Idle sessions.
    #[arg(long, default_value_t = 10_000)]
    idle_sessions: usize,
    /// Run the idle clients in this process (the figure then counts both ends).
    #[arg(long)]
    in_process_clients: bool,
    /// Run every measurement in this process (by default each has a process of its own,
    /// so that none slows the next).
    #[arg(long)]
    one_process: bool,
    /// Hosts for the mass drop.
    #[arg(long, default_value_t = 1_000)]
    drop_hosts: usize,
    /// Run the mass drop's hosts in child processes of at most this many each (by default
    /// they run beside the arcade where this process may hold all their sockets, else in
    /// children of 4,000).
    #[arg(long)]
    drop_hosts_per_process: Option<usize>,
    /// Threads for the mass drop's hosts.
    #[arg(long, default_value_t = 2)]
    host_threads: usize,
    /// `tools`: the smaller number of dynamic tools (the larger is twice as many).
    #[arg(long, default_value_t = 10_000)]
    tools: usize,
    /// Arbiters for our server's sessions (threads for rmcp's).
    #[arg(long, default_value_t = 1)]
    server_threads: usize,
    /// Threads for the clients.
    #[arg(long, default_value_t = 1)]
    client_threads: usize,
    /// Streamable HTTP sessions abandoned for `expiry`.
    #[arg(long, default_value_t = 2_000)]
    abandoned_sessions: usize,
    /// `cluster`: players on each side (three nodes, one embedded node).
    #[arg(long, default_value_t = 8)]
    cluster_players: usize,
    /// `cluster`: the mcpl-arcade binary the nodes run (default: beside this one, as
    /// `cargo build [--release] -p mcpl-games --bin mcpl-arcade` puts it).
    #[arg(long, value_name = "PATH")]
    arcade_bin: Option<PathBuf>,
}

fn run_perf(args: PerfArgs) -> anyhow::Result<bool> {
    use sim_perf::{Measure, PerfConfig};
    let only = args
        .only
        .iter()
        .map(|n| Measure::from_name(n).with_context(|| format!("no measurement named {n:?}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let exe = std::env::current_exe().context("this program's path, to run measurements")?;
    let client_exe = (!args.in_process_clients).then(|| exe.clone());
    let config = PerfConfig {
        only,
        connections: args.connections,
        ws_in_flight: args.ws_in_flight,
        http_in_flight: args.http_in_flight,
        window: Duration::from_secs_f64(args.window.max(0.1)),
        rounds: args.rounds.max(1),
        calls: args.calls.filter(|&n| n > 0),
        pin_latency: !args.no_pin,
        latency_calls: args.latency_calls,
        idle_sessions: args.idle_sessions,
        client_exe,
        drop_hosts: args.drop_hosts,
        drop_hosts_per_process: args.drop_hosts_per_process,
        host_threads: args.host_threads,
        tools: (args.tools, args.tools.saturating_mul(2)),
        server_threads: args.server_threads,
        client_threads: args.client_threads,
        expiry: sim_perf::expiry::ExpiryConfig {
            sessions: args.abandoned_sessions,
            ..Default::default()
        },
        cluster: sim_perf::cluster::ClusterConfig {
            players: args.cluster_players.max(1),
            arcade_bin: args.arcade_bin,
            ..Default::default()
        },
        ..Default::default()
    };
    let report = if args.one_process {
        sim_perf::run(&config)
    } else {
        sim_perf::run_isolated(&config, &exe)
    }
    .context("a measurement could not be made")?;
    println!("{}", report.table());
    if let Some(path) = args.json {
        let json = serde_json::to_string_pretty(&report).context("the figures as JSON")?;
        std::fs::write(&path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(report.all_met())
}

/// `sim-perf clients` (hidden): the idle clients in a process of their own.
#[derive(Args)]
struct ClientsArgs {
    /// The arcade's WebSocket URL.
    #[arg(long)]
    url: String,
    /// How many clients.
    #[arg(long)]
    count: usize,
}

fn run_clients(args: ClientsArgs) -> anyhow::Result<bool> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("a runtime")?;
    runtime.block_on(sim_perf::idle::client_main(&args.url, args.count))?;
    Ok(true)
}

/// `sim-perf drop-hosts` (hidden): a group of the mass drop's hosts in a process of its
/// own (see `sim_perf::mass_drop::child_main`).
#[derive(Args)]
struct DropHostsArgs {
    /// The arcade's WebSocket URL (`ws://IP:PORT`).
    #[arg(long)]
    url: String,
    /// Hosts in the whole drop.
    #[arg(long)]
    total: usize,
    /// This group's first host.
    #[arg(long)]
    first: usize,
    /// Hosts in this group.
    #[arg(long)]
    count: usize,
    /// Threads for this group's hosts.
    #[arg(long, default_value_t = 2)]
    threads: usize,
}

fn run_drop_hosts(args: DropHostsArgs) -> anyhow::Result<bool> {
    let system = actix::System::new();
    system.block_on(sim_perf::mass_drop::child_main(
        &args.url,
        args.total,
        args.first,
        args.count,
        args.threads,
    ))?;
    Ok(true)
}

//! `sim`: the simulator's command line.
//!
//! ```text
//! sim [--agents N] [--duration S] [--seed X] [--transport ws|http|mixed] [--chaos LEVEL]
//!     [--json PATH] [--bot-playouts N] [--think-ms MS] [--host-threads N] [--quiet] [--explain]
//!     [--surface-agents N] [--modern N|P%] [--modern-hints N|P%] [--nodes N [--arcade-bin PATH] [--balance round-robin|owner] [--ownership arcade|principal]]
//! sim --deterministic [--seed X] [--agents N] [--duration S] [--transport …] [--chaos LEVEL]
//!     [--think-ms MS] [--trace-out PATH] [--explain]
//! sim demo [--full] [--fast] [--pace-ms MS] [--seed N] [--out DIR] [--limit SECONDS] [--surface] [--web ADDR]
//! ```
//!
//! The performance measurements are a binary of their own: `sim-perf` (the `sim-perf` crate).
//!
//! `sim demo --web ADDR` serves the spectator page for the demo's games (issue #43): it
//! prints `spectator page on URL` before the agents start, and after the summary keeps
//! serving the finished games until interrupted. The page is public (**\[project\]**): the
//! demo's games are the simulator's own scripted agents', nobody's private games.
//!
//! Without a subcommand: the load and chaos run; it prints a table (with `--explain`, what
//! each row means under it; and writes JSON when asked) and exits non-zero, naming the seed, when an invariant was violated.

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use mcpl_games::arcade::spectate::{self, Gallery, web::Access, web::WebOptions};
use sim::demo::{self, DemoConfig};
use sim::load::{self, LoadConfig, TransportMix};
use sim::print::Printer;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "sim",
    version,
    about = "Agents on the MCPL host: the demo, and load and chaos runs"
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    load: LoadArgs,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Transport {
    Ws,
    Http,
    Mixed,
}

impl From<Transport> for TransportMix {
    fn from(t: Transport) -> Self {
        match t {
            Transport::Ws => TransportMix::Ws,
            Transport::Http => TransportMix::Http,
            Transport::Mixed => TransportMix::Mixed,
        }
    }
}

/// The load and chaos run.
#[derive(Args)]
struct LoadArgs {
    /// Agents, each with its own host.
    #[arg(long, default_value_t = 300)]
    agents: usize,
    /// Seconds of play (a drain and the checks follow).
    #[arg(long, default_value_t = 60)]
    duration: u64,
    /// Seeds every choice; a failing run prints it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The agents' transports.
    #[arg(long, value_enum, default_value = "mixed")]
    transport: Transport,
    /// 0: none; 1: drops and out-of-order HTTP; 2: also duplicates, a mass drop, a restart; 3: more of all.
    #[arg(long, default_value_t = 2)]
    chaos: u8,
    /// Write the report as JSON here too.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// The arcade bot's Go playouts per move.
    #[arg(long, default_value_t = 32)]
    bot_playouts: u32,
    /// Each agent's pause before an action, in milliseconds.
    #[arg(long, default_value_t = 30)]
    think_ms: u64,
    /// Threads for the hosts and agents (the server has one more).
    #[arg(long, default_value_t = 2)]
    host_threads: usize,
    /// Hide the progress bar.
    #[arg(long)]
    quiet: bool,
    /// Agents, besides --agents, that reach the arcade as plain MCP clients of one surface
    /// host (mcpl-surface) and each play one tic-tac-toe game against the bot; a row of the
    /// report counts them. Not with --deterministic.
    #[arg(long, default_value_t = 0, conflicts_with = "deterministic")]
    surface_agents: usize,
    /// Of --agents, how many play on MCP 2026-07-28 (no session, every request with its
    /// _meta, over Streamable HTTP): a number, or a share such as `20%`; at least two stay
    /// legacy. A row of the report counts them. Not with --deterministic.
    #[arg(long, default_value = "0", value_name = "N|P%", value_parser = parse_modern, conflicts_with = "deterministic")]
    modern: Modern,
    /// Of --agents, how many play on MCP 2026-07-28 with hints: their hosts advertise
    /// toolHints, and the arcade serves them RFC-014's stateless profile
    /// (docs/rfc014-stateless.md). They play the bot through a proxy of their own that
    /// also loses answers at chaos 2 and 3, re-issue a call whose answer was lost, and are
    /// checked like legacy agents. With --modern, at least two stay legacy. A row of the
    /// report counts them. Not with --deterministic.
    #[arg(long, default_value = "0", value_name = "N|P%", value_parser = parse_modern, conflicts_with = "deterministic")]
    modern_hints: Modern,
    /// Run the arcade as N `mcpl-arcade serve --postgres --nats --node` processes on a
    /// PostgreSQL and a nats-server the run starts on loopback (Debian's `postgresql` and
    /// `nats-server`), behind a load balancer in this process; at chaos 2 and 3 nodes are
    /// killed (SIGKILL, the owner first) and started again, NATS is restarted, and
    /// PostgreSQL is stopped at once and started again. The report's "node deaths
    /// survived" row counts them. Not with --deterministic.
    #[arg(long, default_value_t = 0, value_name = "N")]
    #[arg(conflicts_with = "deterministic")]
    nodes: usize,
    /// With --nodes: the mcpl-arcade binary the nodes run (default: beside this one, as
    /// `cargo build -p mcpl-games --bin mcpl-arcade` puts it).
    #[arg(long, value_name = "PATH", requires = "nodes")]
    arcade_bin: Option<PathBuf>,
    /// With --nodes: how the load balancer sends WebSocket connections and streams
    /// (`GET` event streams, `subscriptions/listen`): `round-robin` (the default, as
    /// docs/cluster-haproxy.cfg: every connection and request to the next live node, a
    /// standby tunneling what is the owner's to it over NATS) or `owner` (those to the
    /// node owning the arcade; requests still round robin).
    #[arg(long, value_name = "round-robin|owner", default_value = "round-robin")]
    #[arg(requires = "nodes")]
    balance: sim::nodes::Balance,
    /// With --nodes: what one node owns, the flag passed to every node (`mcpl-arcade
    /// serve --ownership`): `arcade` (the default: one node runs the arcade under one
    /// lease, the others stand by and take over when it dies) or `principal` (every node
    /// serves the players whose leases it holds, each taken where her first request lands;
    /// a dead node's players are taken by the nodes their next requests reach, and its
    /// games adopted there). With `principal`, the node killed first is the one running
    /// the most games. Not with --balance owner.
    #[arg(long, value_name = "arcade|principal", default_value = "arcade")]
    #[arg(requires = "nodes")]
    ownership: sim::nodes::Ownership,
    /// In memory on one thread and virtual time, so that a seed replays exactly; ends
    /// with the trace's digest (see `sim::det`). Defaults to 20 agents for 30 s.
    #[arg(long)]
    deterministic: bool,
    /// Print under the report what each of its rows means (the README's sim section has
    /// the same glossary).
    #[arg(long)]
    explain: bool,
    /// With --deterministic: write the normalised event trace here.
    #[arg(long, value_name = "PATH", requires = "deterministic")]
    trace_out: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Two agents play Go through the lobby, one plays tic-tac-toe against the bot.
    Demo(DemoArgs),
}

#[derive(Args)]
struct DemoArgs {
    /// Print every board (by default each game's first and last are printed in full).
    #[arg(long)]
    full: bool,
    /// Seeds the agents' choices and the arcade's bot.
    #[arg(long, default_value_t = 2026)]
    seed: u64,
    /// Where the final boards are saved as SVG.
    #[arg(long, default_value = "target/demo")]
    out: PathBuf,
    /// Seconds before the agents resign what is still open (default: 600 paced, 50 with
    /// --fast).
    #[arg(long)]
    limit: Option<u64>,
    /// Play at full speed (the whole demo in a second or so) instead of at a pace a
    /// person can follow.
    #[arg(long)]
    fast: bool,
    /// The pause before each agent's every action, in milliseconds, when not --fast.
    #[arg(long, default_value_t = 400, value_name = "MS")]
    pace_ms: u64,
    /// carol plays through a surface host (mcpl-surface), as a plain MCP client would.
    #[arg(long)]
    surface: bool,
    /// Serve the spectator page on ADDR (a bare PORT binds loopback) to watch the games;
    /// it stays up after the summary until Ctrl-C.
    #[arg(long, value_name = "ADDR")]
    web: Option<mcpl_transport::ListenAddr>,
}

fn main() -> ExitCode {
    sim::cli::init_logging();
    let cli = Cli::parse();
    let outcome = match cli.command {
        Some(Command::Demo(args)) => run_demo(args),
        None => run_load(cli.load),
    };
    sim::cli::exit_code("sim", outcome)
}

fn run_demo(args: DemoArgs) -> anyhow::Result<bool> {
    let model = sim::agent::ModelConfig::from_env().context("the model's configuration")?;
    if model.is_some() && args.surface {
        anyhow::bail!(
            "--surface: carol is played by the model (SIM_MODEL_*); give one or the other"
        );
    }
    if let Some(m) = &model {
        println!("carol is played by {} at {}", m.model, m.url);
    }
    let gallery = args
        .web
        .is_some()
        .then(|| Gallery::new(spectate::DEFAULT_QUEUE, spectate::DEFAULT_FINISHED_KEPT));
    let config = DemoConfig {
        model,
        seed: args.seed,
        out_dir: Some(args.out),
        limit: Duration::from_secs(args.limit.unwrap_or(if args.fast { 50 } else { 600 })),
        pace: if args.fast {
            Duration::ZERO
        } else {
            Duration::from_millis(args.pace_ms)
        },
        surface: args.surface,
        gallery: gallery.clone(),
        ..Default::default()
    };
    let printer = Arc::new(Printer::new(args.full));
    actix::System::new().block_on(async move {
        let web = match (args.web, gallery) {
            (Some(addr), Some(gallery)) => {
                let opts = WebOptions::new(Access::Public);
                let l = spectate::web::serve(gallery, addr.addr(), opts)
                    .await
                    .with_context(|| format!("serving the spectator page on {addr}"))?;
                println!("spectator page on {}", l.url());
                Some(l)
            }
            _ => None,
        };
        let report = demo::run(config, printer)
            .await
            .context("the demo failed")?;
        println!("\n{}", report.summary());
        if let Some(l) = web {
            println!(
                "The games stay on the spectator page, {}, until Ctrl-C.",
                l.url()
            );
            std::io::Write::flush(&mut std::io::stdout())?;
            tokio::signal::ctrl_c().await?;
        }
        Ok(report.all_ended() && report.violations.is_empty())
    })
}

fn run_load(args: LoadArgs) -> anyhow::Result<bool> {
    if args.deterministic {
        return run_deterministic(args);
    }
    let config = LoadConfig {
        play: play(&args, args.agents, Duration::from_secs(args.duration)),
        bot_playouts: args.bot_playouts,
        host_threads: args.host_threads,
        surface_agents: args.surface_agents,
        modern: args.modern.of(args.agents),
        modern_hints: args.modern_hints.of(args.agents),
        nodes: args.nodes,
        arcade_bin: args.arcade_bin,
        balance: args.balance,
        ownership: args.ownership,
    };
    let progress = (!args.quiet).then(|| {
        let bar = indicatif::ProgressBar::new(args.duration);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} s  {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar
    });
    let report = actix::System::new()
        .block_on(load::run(config, progress))
        .context("the load run could not be made")?;
    println!("{}", report.table());
    explain(args.explain);
    if let Some(path) = args.json {
        let json = serde_json::to_string_pretty(&report).context("the report as JSON")?;
        std::fs::write(&path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    if !report.ok() {
        eprintln!(
            "sim: {} invariant violations; repeat with --seed {}",
            report.violations.len(),
            report.seed
        );
    }
    Ok(report.ok())
}

/// `--modern`, `--modern-hints`: how many of the agents play on MCP 2026-07-28.
#[derive(Debug, Clone, Copy)]
enum Modern {
    /// This many.
    Count(usize),
    /// This percentage of `--agents` (rounded down).
    Percent(u8),
}

impl Modern {
    /// How many of `agents`.
    fn of(self, agents: usize) -> usize {
        match self {
            Modern::Count(n) => n,
            Modern::Percent(p) => agents * usize::from(p) / 100,
        }
    }
}

fn parse_modern(s: &str) -> Result<Modern, String> {
    match s.strip_suffix('%') {
        Some(p) => match p.trim().parse::<u8>() {
            Ok(p) if p <= 100 => Ok(Modern::Percent(p)),
            _ => Err(format!("{s:?}: a share is 0% to 100%")),
        },
        None => s
            .trim()
            .parse()
            .map(Modern::Count)
            .map_err(|_| format!("{s:?}: a number of agents, or a share such as 20%")),
    }
}

/// The glossary under the report with `--explain`, else where to find it (issue #43).
fn explain(explain: bool) {
    if explain {
        println!("{}", sim::report::glossary());
    } else {
        println!("(what each row means: sim --explain, or the README's sim section)");
    }
}

/// What the flags ask both runs to play; `agents` and `duration` as the run takes them.
fn play(args: &LoadArgs, agents: usize, duration: Duration) -> load::Play {
    load::Play {
        agents,
        duration,
        seed: args.seed,
        transport: args.transport.into(),
        chaos: args.chaos,
        think: Duration::from_millis(args.think_ms),
        ..load::Play::default()
    }
}

/// `sim --deterministic` (see `sim::det`). The load run's defaults of 300 agents for 60 s
/// become 20 for 30 s of virtual time: everything is on one thread.
fn run_deterministic(args: LoadArgs) -> anyhow::Result<bool> {
    use clap::parser::ValueSource;
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
    let defaults = sim::det::DetConfig::default();
    let agents = if given("agents") {
        args.agents
    } else {
        defaults.play.agents
    };
    let duration = if given("duration") {
        Duration::from_secs(args.duration)
    } else {
        defaults.play.duration
    };
    let config = sim::det::DetConfig {
        play: play(&args, agents, duration),
        keep_trace: args.trace_out.is_some(),
        ..defaults
    };
    let progress = (!args.quiet).then(|| {
        let bar = indicatif::ProgressBar::new(config.play.duration.as_secs());
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed:>4} [{bar:30}] {pos}/{len} virtual s  {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar
    });
    let det = sim::det::run_blocking(config, progress).context("the run could not be made")?;
    println!("{}", det.report.table());
    explain(args.explain);
    if let Some(path) = args.json {
        let json = serde_json::to_string_pretty(&det.report).context("the report as JSON")?;
        std::fs::write(&path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    if let (Some(path), Some(trace)) = (args.trace_out, &det.trace) {
        std::fs::write(&path, trace.join("\n"))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "(times above are virtual; the run took {:.1} s of real time)",
        det.real_s
    );
    println!("trace events: {}", det.events);
    println!("trace digest: {}", det.digest);
    if !det.ok() {
        eprintln!(
            "sim: {} invariant violations with seed {}; replay with:\n  {}",
            det.report.violations.len(),
            det.report.seed,
            det.replay
        );
    }
    Ok(det.ok())
}

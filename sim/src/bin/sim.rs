//! `sim`: the simulator's command line.
//!
//! ```text
//! sim [--agents N] [--duration S] [--seed X] [--transport ws|http|mixed] [--chaos LEVEL]
//!     [--json PATH] [--bot-playouts N] [--think-ms MS] [--host-threads N] [--quiet]
//! sim demo [--full] [--seed N] [--out DIR] [--limit SECONDS]
//! ```
//!
//! Without a subcommand: the load and chaos run; it prints a table (and writes JSON when
//! asked) and exits non-zero, naming the seed, when an invariant was violated.

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
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
    /// Seconds before the agents resign what is still open.
    #[arg(long, default_value_t = 50)]
    limit: u64,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "error".into()),
        )
        .init();
    let cli = Cli::parse();
    let outcome = match cli.command {
        Some(Command::Demo(args)) => run_demo(args),
        None => run_load(cli.load),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("sim: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run_demo(args: DemoArgs) -> anyhow::Result<bool> {
    let model = sim::agent::ModelConfig::from_env().context("the model's configuration")?;
    if let Some(m) = &model {
        println!("carol is played by {} at {}", m.model, m.url);
    }
    let config = DemoConfig {
        model,
        seed: args.seed,
        out_dir: Some(args.out),
        limit: Duration::from_secs(args.limit),
        ..Default::default()
    };
    let printer = Arc::new(Printer::new(args.full));
    let report = actix::System::new()
        .block_on(demo::run(config, printer))
        .context("the demo failed")?;
    println!("\n{}", report.summary());
    Ok(report.all_ended() && report.violations.is_empty())
}

fn run_load(args: LoadArgs) -> anyhow::Result<bool> {
    let config = LoadConfig {
        agents: args.agents,
        duration: Duration::from_secs(args.duration),
        seed: args.seed,
        transport: match args.transport {
            Transport::Ws => TransportMix::Ws,
            Transport::Http => TransportMix::Http,
            Transport::Mixed => TransportMix::Mixed,
        },
        chaos: args.chaos,
        bot_playouts: args.bot_playouts,
        think: Duration::from_millis(args.think_ms),
        host_threads: args.host_threads,
        ..Default::default()
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

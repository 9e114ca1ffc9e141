//! `mcpl-conformance`: runs the server-side vectors of RFC-014 §9, and those of the
//! stateless profile (`docs/rfc014-stateless.md` §5, over MCP 2026-07-28), against an MCPL
//! server that meets the fixture contract (`tests/CONFORMANCE.md`).
//!
//! ```text
//! mcpl-conformance server (--cmd "PROGRAM ARGS" | --url ws[s]://…|http[s]://…)
//!                  [--ca-file PATH] [--token TOKEN] [--timeout-ms MS] [--only N,SN,…]
//!                  [--event-burst N] [--server-stderr] [--strict]
//! ```
//!
//! Prints one line per vector — `vector 05 …: pass [RFC]`, `fail [RFC]: why`, `skip [RFC]:
//! why`, then `; departs [fixture]: why` for each of the fixture contract's choices the
//! server does not make — and a closing `N passed, N failed (N skipped) [RFC]; fixture
//! contract: N departed` line. Exits 1 when an RFC check failed (with `--strict`, also when
//! the server departs from the fixture contract), 2 on bad usage. With `--cmd` the program
//! is spawned afresh for every connection and spoken to over its stdin/stdout; vectors
//! that need two connections of one principal are skipped then. The profile's vectors
//! (`vector S4 …`) are skipped against a server that refuses a modern `server/discover`
//! or declares no `mcpl/core` on it. S20 (events past a listen stream's bound) runs over
//! Streamable HTTP alone, against a server listing the contract's optional `game_burst`,
//! which it asks for `--event-burst` events at once (default: past the fixture's bound).

use clap::{ArgGroup, Args, Parser, Subcommand};
use mcpl_tests::conformance::{PassTime, RunOptions, Target, VectorId, run};
use mcpl_transport::ClientTls;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "mcpl-conformance",
    version,
    about = "RFC-014 conformance vectors for MCPL servers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server-side vectors against a server.
    Server(ServerArgs),
}

#[derive(Args)]
#[command(group(ArgGroup::new("target").required(true).args(["cmd", "url"])))]
struct ServerArgs {
    /// The server's command line, spawned per connection, speaking stdio.
    #[arg(long, value_name = "PROGRAM ARGS")]
    cmd: Option<String>,
    /// The server's WebSocket (ws://…, wss://…) or Streamable HTTP (http://…, https://…)
    /// endpoint.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// A PEM file of CA certificates a TLS server's certificate may chain to, besides the
    /// public roots.
    #[arg(long, value_name = "PATH")]
    ca_file: Option<PathBuf>,
    /// The bearer token of the principal whose connections share toolsets.
    #[arg(long, default_value = mcpl_tests::conformance::contract::DEFAULT_TOKEN)]
    token: String,
    /// How long any one wait for the server lasts, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    timeout_ms: u64,
    /// Run only these vectors: numbers of RFC-014 §9 (0 is the contract check) and the
    /// stateless profile's S-numbers (S4).
    #[arg(long, value_name = "N,SN,…", value_delimiter = ',')]
    only: Vec<VectorId>,
    /// How many events S20 asks game_burst for at once: more than a Streamable HTTP listen
    /// stream of the server holds (the fixture's holds 1024).
    #[arg(long, value_name = "N", default_value_t = mcpl_tests::conformance::contract::EVENT_BURST,
          value_parser = clap::value_parser!(u64).range(1..=mcpl_tests::conformance::contract::MAX_BURST))]
    event_burst: u64,
    /// Let a spawned server's stderr through.
    #[arg(long)]
    server_stderr: bool,
    /// Fail on departures from the fixture contract's choices too (not only on RFC-014's
    /// MUSTs).
    #[arg(long)]
    strict: bool,
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // The HTTP client warns of every 202 to a notification or response it POSTs,
                // which the runner sends by the dozen; its errors still show.
                .unwrap_or_else(|_| {
                    tracing_subscriber::EnvFilter::new("warn,mcpl_transport::http::client=error")
                }),
        )
        .init();
    let Command::Server(args) = Cli::parse().command;
    let target = match (args.cmd, args.url) {
        (Some(cmd), _) => Target::Command(cmd),
        (None, Some(url)) => Target::Url(url),
        (None, None) => {
            eprintln!("mcpl-conformance: give --cmd or --url");
            return ExitCode::from(2);
        }
    };
    let tls = match &args.ca_file {
        Some(path) => match ClientTls::with_ca_file(path) {
            Ok(tls) => tls,
            Err(e) => {
                eprintln!("mcpl-conformance: --ca-file: {e}");
                return ExitCode::from(2);
            }
        },
        None => ClientTls::default(),
    };
    let opts = RunOptions {
        token: args.token,
        tls,
        limit: Duration::from_millis(args.timeout_ms),
        server_stderr: args.server_stderr,
        // S13 against a server whose clock nobody here holds: its idle time passes on the
        // wall clock, with two seconds more for a loaded server to see the connection end.
        pass_time: Some(PassTime::new(|d| {
            Box::pin(tokio::time::sleep(d + Duration::from_secs(2)))
        })),
        event_burst: args.event_burst,
        ..RunOptions::new(target)
    };
    let only = (!args.only.is_empty()).then_some(args.only.as_slice());
    let strict = args.strict;
    let report = run(&opts, only, |line| {
        let mut out = std::io::stdout().lock();
        // A closed stdout leaves nobody to tell; the exit code still says how it went.
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    })
    .await;
    println!("{}", report.summary());
    // A failed contract check skipped the vectors: nothing was shown to hold.
    if report.failed() > 0 || report.contract_failed() || (strict && report.departed() > 0) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

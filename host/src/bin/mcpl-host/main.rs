//! `mcpl-host`: an MCPL host with RFC-014 toolsets, for playing the agent's part.
//!
//! - `mcpl-host console --server NAME=URL …`: JSON lines on stdin and stdout, for scripts
//!   and tests (the protocol is `mcpl_host::cli::console`'s).
//! - `mcpl-host play --server NAME=URL …`: short commands for a person at a terminal (see
//!   `mcpl_host::cli::play`).
//!
//! Logs go to stderr (`RUST_LOG`, default `warn`); stdout is the front end's alone. `play`
//! leaves out the links' warnings of failed attempts and ended connections by default: its
//! prompt and connection lines say the same, with the cause.

mod console;
mod play;

use anyhow::{Context as _, bail};
use clap::{Args, Parser, Subcommand};
use mcpl_host::host::{Host, HostConfig, HostHandle, ServerConfig, default_state_dir};
use mcpl_host::link::EraPolicy;
use mcpl_transport::{ClientOptions, ClientTls};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tracing_subscriber::EnvFilter;

#[derive(Debug, Parser)]
#[command(
    name = "mcpl-host",
    version,
    about = "An MCPL host with RFC-014 toolsets: play the agent's part from a script or a terminal"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// JSON lines: one request per line on stdin, one answer or event per line on stdout.
    Console(Servers),
    /// A terminal: type `help` for the commands.
    Play(Servers),
}

#[derive(Debug, Args)]
struct Servers {
    /// A server, NAME=URL: stdio:COMMAND…, ws://HOST:PORT/PATH, http://HOST:PORT/PATH, or
    /// over TLS wss://… or https://…. Repeat for more servers.
    #[arg(long = "server", value_name = "NAME=URL", required = true, value_parser = pair)]
    servers: Vec<(String, String)>,
    /// A bearer token for a server, NAME=SECRET.
    #[arg(long = "token", value_name = "NAME=SECRET", value_parser = pair)]
    tokens: Vec<(String, String)>,
    /// A PEM file of CA certificates a server's TLS certificate may chain to, besides the
    /// public roots: NAME=PATH, for a server with a private CA.
    #[arg(long = "ca-file", value_name = "NAME=PATH", value_parser = pair)]
    ca_files: Vec<(String, String)>,
    /// Which era of MCP to speak, for every server (ERA) or one (NAME=ERA): `auto` (the
    /// default: probe with MCP 2026-07-28's `server/discover`, fall back to `initialize`),
    /// `legacy` (`initialize` only, MCP 2025-11-25) or `modern` (2026-07-28 only; with
    /// toolsets where the server serves RFC-014's stateless profile to this host).
    #[arg(long = "era", value_name = "[NAME=]ERA")]
    eras: Vec<String>,
    /// Where the ended toolsets already told are kept across restarts (default: the OS
    /// data directory's `mcpl-host/`, `~/.local/share/mcpl-host` on Linux).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// How long an early hint rev is held on Streamable HTTP, in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 250)]
    hold_ms: u64,
}

fn pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() && !v.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("expected NAME=VALUE, got {s:?}")),
    }
}

impl Servers {
    fn config(self) -> anyhow::Result<HostConfig> {
        let mut tokens: BTreeMap<String, String> = BTreeMap::new();
        for (name, token) in self.tokens {
            if !self.servers.iter().any(|(n, _)| *n == name) {
                bail!("--token names {name:?}, which no --server names");
            }
            tokens.insert(name, token);
        }
        let mut tls: BTreeMap<String, ClientTls> = BTreeMap::new();
        for (name, path) in self.ca_files {
            if !self.servers.iter().any(|(n, _)| *n == name) {
                bail!("--ca-file names {name:?}, which no --server names");
            }
            let ca = ClientTls::with_ca_file(&path).with_context(|| format!("--ca-file {name}"))?;
            tls.insert(name, ca);
        }
        let mut eras: BTreeMap<String, EraPolicy> = BTreeMap::new();
        let mut every_era = EraPolicy::default();
        for given in self.eras {
            let Some((name, era)) = given.split_once('=') else {
                every_era = given.parse().context("--era")?;
                continue;
            };
            if !self.servers.iter().any(|(n, _)| n == name) {
                bail!("--era names {name:?}, which no --server names");
            }
            let era = era
                .parse::<EraPolicy>()
                .with_context(|| format!("--era {name}"))?;
            eras.insert(name.to_owned(), era);
        }
        // Issue #43: a URL the transport cannot use (`127.0.0.1:8765`, no scheme) is refused
        // now, naming it, instead of being retried as "bad server URL" forever.
        for (name, url) in &self.servers {
            mcpl_transport::check_url(url).with_context(|| format!("--server {name}"))?;
        }
        let servers = self
            .servers
            .into_iter()
            .map(|(name, url)| {
                let options = ClientOptions {
                    token: tokens.remove(&name),
                    tls: tls.remove(&name).unwrap_or_default(),
                    ..ClientOptions::default()
                };
                // **[project]** `initialize` unless told otherwise, as the library's links
                // (`EraPolicy`): README, "Readings".
                let era = eras.remove(&name).unwrap_or(every_era);
                let mut server = ServerConfig::url_with(name, url, options);
                server.link.era = era;
                server
            })
            .collect();
        let mut config =
            HostConfig::new(servers).with_hold_window(Duration::from_millis(self.hold_ms));
        // §4.3, vector 13: a default, so that a restart never tells an end twice.
        config.state_dir = self.state_dir.or_else(|| default_state_dir("mcpl-host"));
        match &config.state_dir {
            Some(dir) => eprintln!(
                "mcpl-host: ended toolsets already told are kept in {} (--state-dir DIR to change)",
                dir.display()
            ),
            None => eprintln!(
                "mcpl-host: no OS data directory is known here: ended toolsets told are kept in memory only (give --state-dir DIR)"
            ),
        }
        Ok(config)
    }
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // The error and its causes on one line, as the arcade says them (a backtrace, with
        // RUST_BACKTRACE set, is for bugs, not for a URL to fix).
        Err(e) => {
            eprintln!("mcpl-host: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let default_filter = match cli.command {
        Command::Play(_) => "warn,mcpl_host::link::actor=error",
        Command::Console(_) => "warn",
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Issue #43: colour codes only for a terminal, not a file (Claude Desktop's log).
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter)),
        )
        .init();
    let system = actix::System::new();
    system.block_on(async move {
        match cli.command {
            Command::Console(servers) => console::run(start(servers)?).await,
            Command::Play(servers) => play::run(start(servers)?).await,
        }
    })
}

fn start(servers: Servers) -> anyhow::Result<HostHandle> {
    Host::start(servers.config()?).context("the host could not start")
}

/// How long a front end waits for its servers before reading its input anyway (a server
/// that connects but keeps failing its first reads is neither settled nor unreachable).
const FIRST_CONTACT: Duration = Duration::from_secs(15);

/// Waits until every server is settled or unreachable, or [`FIRST_CONTACT`] has passed.
async fn first_contact(host: &HostHandle) -> anyhow::Result<()> {
    match tokio::time::timeout(FIRST_CONTACT, host.first_contact()).await {
        Ok(r) => r.map(drop).context("the host stopped"),
        Err(_) => {
            tracing::warn!("not every server has settled yet; going on");
            Ok(())
        }
    }
}

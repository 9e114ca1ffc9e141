//! `mcpl-surface`: the surface host (RFC-014 §8.6).
//!
//! ```text
//! mcpl-surface serve --config PATH [--stdio] [--principal NAME] [--http ADDR]
//! ```
//!
//! Serves stdio (one client, the form MCP clients launch) unless `--http` is given without
//! `--stdio`. The stdio client is the principal `--principal` names (default `local`: the
//! servers' default credentials). `--http` serves Streamable HTTP at `http://ADDR/mcp`
//! (a bare port binds loopback) to the clients the configuration's `surface.clients` give
//! tokens to, and prints `listening on URL` (on stderr when stdio is served too). Logs go
//! to stderr (`RUST_LOG`, default `warn`); no credential is ever logged. Both eras of MCP
//! are served: a client that opens with `initialize`, and an MCP 2026-07-28 client (on
//! stdio by the process's host, over HTTP by one host per principal, bounded by
//! `surface.modernHosts` and `surface.modernIdleMs`). Told ended records
//! are kept under `surface.stateDir`, by default the OS data directory's `mcpl-surface/`,
//! said on stderr at start-up.

use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};
use mcpl_surface::config::DEFAULT_PRINCIPAL;
use mcpl_surface::{HttpSurface, SurfaceConfig};
use mcpl_transport::{ListenAddr, ServerOptions};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(
    name = "mcpl-surface",
    version,
    about = "The MCPL surface host: toolsets for any MCP client"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the host's view as an MCP server.
    Serve(ServeArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// The configuration: `mcpServers` JSON plus the `surface` options.
    #[arg(long, value_name = "PATH")]
    config: PathBuf,
    /// Serve one client on stdin/stdout (the default without --http).
    #[arg(long)]
    stdio: bool,
    /// The principal the stdio client is (one of `surface.clients`; default `local`).
    #[arg(long, value_name = "NAME")]
    principal: Option<String>,
    /// Serve Streamable HTTP on ADDR (a bare PORT binds 127.0.0.1), endpoint /mcp.
    #[arg(long, value_name = "ADDR")]
    http: Option<ListenAddr>,
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // The error and its causes on one line (issue #43: a configuration to fix, not a
        // backtrace, even with RUST_BACKTRACE set).
        Err(e) => {
            eprintln!("mcpl-surface: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Issue #43: colour codes only for a terminal, not a file (Claude Desktop's log).
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .init();
    let Command::Serve(args) = cli.command;
    let mut config = SurfaceConfig::load(&args.config)
        .with_context(|| format!("--config {}", args.config.display()))?;
    // §4.3, vector 13: told records have a home by default, so that a restart never tells
    // an end twice.
    if config.state_dir.is_none() {
        config.state_dir = mcpl_host::host::default_state_dir("mcpl-surface");
    }
    match &config.state_dir {
        Some(dir) => eprintln!(
            "mcpl-surface: ended toolsets already told are kept in {} (\"stateDir\" to change)",
            dir.display()
        ),
        None => eprintln!(
            "mcpl-surface: no OS data directory is known here: ended toolsets told are kept in memory only (set \"stateDir\")"
        ),
    }
    let stdio = args.stdio || args.http.is_none();
    let principal = args
        .principal
        .clone()
        .unwrap_or_else(|| DEFAULT_PRINCIPAL.to_owned());
    if stdio {
        // Refused now rather than when the client connects.
        config.host_config(&principal)?;
    } else if args.principal.is_some() {
        bail!("--principal names the stdio client: give --stdio too");
    }
    if args.http.is_some() && config.client_tokens().is_empty() {
        bail!("--http needs clients with a \"token\" in \"surface.clients\"");
    }
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    tracing::info!(servers = ?names, "serving");
    let config = Arc::new(config);
    let system = actix::System::new();
    system.block_on(async move {
        if let Some(addr) = &args.http {
            let surface = HttpSurface::bind(config.clone(), addr.addr())
                .await
                .with_context(|| format!("--http {addr}"))?;
            let line = format!("listening on {}", surface.url());
            if stdio {
                eprintln!("{line}");
            } else {
                let mut out = std::io::stdout();
                writeln!(out, "{line}")?;
                out.flush()?;
            }
            let served = actix::spawn(surface.run());
            if !stdio {
                served.await.context("the listener")?;
                return Ok(());
            }
        }
        let opts = ServerOptions {
            stdio_principal: principal.clone(),
            ..ServerOptions::default()
        };
        let (conn, drained) = mcpl_transport::stdio::serve_stdio_drained(&opts);
        mcpl_surface::serve_connection(&config, &principal, conn).await?;
        drained.await;
        // stdin is read on a blocking thread, which would keep the runtime from ending.
        std::process::exit(0)
    })
}

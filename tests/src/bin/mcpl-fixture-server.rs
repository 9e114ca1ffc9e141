//! `mcpl-fixture-server`: the server that meets the fixture contract of
//! `tests/CONFORMANCE.md`, built on `mcpl-server`, for the conformance runner.
//!
//! ```text
//! mcpl-fixture-server (--stdio | --ws ADDR | --http ADDR) [--token NAME=SECRET]…
//!                     [--tls-cert PATH --tls-key PATH]
//!                     [--misbehave skip-rev|list-changed|stale-delta|no-statement|repeat-version|hints-to-all-streams|events-to-all-streams]
//!                     [--without modern|profile|burst] [--other-choices] [--idle-end-ms MS]
//! ```
//!
//! A network listener prints the URL it serves (`ws://ADDR`, `http://ADDR/mcp`, or with
//! `--tls-cert` and `--tls-key` `wss://ADDR`, `https://ADDR/mcp`) as the first
//! line of stdout once bound, so a test binding port 0 can read it, then serves until
//! killed. `--stdio` serves one connection on stdin/stdout and exits when stdin closes.
//! Connections without a token are let in, each its own anonymous principal; the token
//! `conformance` (and any `--token`) authenticates a named principal whose connections
//! share toolsets. `--misbehave` breaks a rule on purpose, to show the runner fails;
//! `--without` makes it a server the stateless profile does not apply to (`modern`: the
//! legacy era only; `profile`: MCP 2026-07-28 without `mcpl/core`), or one without the
//! contract's optional `game_burst` (`burst`: vector S20), which the runner skips;
//! `--other-choices` makes the other legal choices where RFC-014 leaves one (toolsets left
//! out for hosts without `toolHints`, no ended id on closed entries), to show the runner
//! tells the RFC's MUSTs from the fixture contract's choices.

use anyhow::{Context, bail};
use clap::{ArgGroup, Parser};
use mcpl_tests::fixture::{self, Misbehave};
use mcpl_transport::{ListenAddr, ServerOptions, ServerTls, http, stdio, ws};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "mcpl-fixture-server",
    version,
    about = "The RFC-014 conformance fixture server (tests/CONFORMANCE.md)"
)]
#[command(group(ArgGroup::new("transport").required(true).args(["stdio", "ws", "http"])))]
struct Cli {
    /// Serve one connection on stdin/stdout.
    #[arg(long)]
    stdio: bool,
    /// Listen for WebSocket connections on ADDR (a bare PORT binds 127.0.0.1; port 0 picks one).
    #[arg(long, value_name = "ADDR")]
    ws: Option<ListenAddr>,
    /// Listen for Streamable HTTP on ADDR (as --ws), endpoint /mcp.
    #[arg(long, value_name = "ADDR")]
    http: Option<ListenAddr>,
    /// Serve TLS on the listener (wss://, https://) with this PEM certificate chain; needs
    /// --tls-key.
    #[arg(long, value_name = "PATH")]
    #[arg(requires = "tls_key", conflicts_with = "stdio")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "PATH", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Another named principal and the bearer token that authenticates it (repeatable), in
    /// the order every other binary of the project takes.
    #[arg(long = "token", value_name = "NAME=SECRET")]
    tokens: Vec<String>,
    /// Break a rule on purpose: skip-rev (a gap after rev 1), list-changed
    /// (notifications/tools/list_changed after every result with hints), stale-delta (a
    /// modern delta repeats what was stamped at its since), no-statement (no result says
    /// statement: true), repeat-version (a result's one change carries the version before
    /// it), hints-to-all-streams (notifications/mcpl/hints on every listen stream),
    /// events-to-all-streams (notifications/mcpl/event on every listen stream).
    #[arg(long, value_name = "KIND")]
    misbehave: Option<Misbehave>,
    /// Serve without part of what the kit checks: modern (the legacy era only), profile
    /// (no mcpl/core, so no stateless profile) or burst (no game_burst listed, so no S20).
    #[arg(long, value_name = "PART", conflicts_with = "misbehave", value_parser = Misbehave::without)]
    without: Option<Misbehave>,
    /// Make the other legal choices where RFC-014 leaves one (see the docs above).
    #[arg(long)]
    other_choices: bool,
    /// Keep no toolsets: a principal's end with its last legacy connection, and after
    /// this many milliseconds idle on the modern era (profile §3.6, vector S13; the
    /// fixture contract keeps them, so other vectors need the default).
    #[arg(long, value_name = "MS")]
    idle_end_ms: Option<u64>,
}

fn options(cli: &Cli) -> anyhow::Result<ServerOptions> {
    let mut opts = fixture::options();
    for t in &cli.tokens {
        let Some((name, secret)) = t.split_once('=') else {
            bail!("--token {t:?}: expected NAME=SECRET");
        };
        if secret.is_empty() || name.is_empty() {
            bail!("--token {t:?}: the name and the secret must not be empty");
        }
        opts.tokens.insert(secret.to_owned(), name.to_owned());
    }
    if let (Some(cert), Some(key)) = (&cli.tls_cert, &cli.tls_key) {
        opts.tls = Some(ServerTls::from_pem_files(cert, key)?);
    }
    Ok(opts)
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    let opts = Arc::new(options(&cli)?);
    let how = cli.misbehave.or(cli.without);
    actix::System::new().block_on(async move {
        let choices = if cli.other_choices {
            fixture::Choices::Other
        } else {
            fixture::Choices::Fixture
        };
        let idle_end = cli.idle_end_ms.map(std::time::Duration::from_millis);
        let server =
            fixture::build_idle(choices, idle_end, None).context("building the fixture server")?;
        if cli.stdio {
            let (conn, drained) = stdio::serve_stdio_drained(&opts);
            let mut sessions = server.watch_sessions();
            fixture::serve(&server, conn, how);
            // The session ends when stdin does; then let the last writes reach stdout.
            fixture::stdio_session_done(&mut sessions)
                .await
                .context("watching sessions")?;
            drained.await;
            // Tokio reads stdin on a blocking thread that would keep the runtime alive.
            std::process::exit(0);
        }
        let announce = |url: String| -> anyhow::Result<()> {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{url}")?;
            out.flush()?;
            Ok(())
        };
        if let Some(addr) = cli.ws {
            let mut listener = ws::bind(addr.addr(), opts.clone())
                .await
                .with_context(|| format!("listening for WebSocket on {addr}"))?;
            let scheme = if opts.tls.is_some() { "wss" } else { "ws" };
            announce(format!("{scheme}://{}", listener.local_addr()))?;
            while let Some(conn) = listener.accept().await {
                fixture::serve(&server, conn, how);
            }
        } else if let Some(addr) = cli.http {
            // SEP-2243: the listener checks modern calls' Mcp-Param-* headers against the
            // marks of the fixture's tools.
            let mut with_marks = (*opts).clone();
            with_marks.tool_headers = server.tool_header_marks();
            let opts = Arc::new(with_marks);
            let mut listener = http::bind(addr.addr(), "/mcp", opts.clone())
                .await
                .with_context(|| format!("listening for Streamable HTTP on {addr}"))?;
            let scheme = if opts.tls.is_some() { "https" } else { "http" };
            announce(format!("{scheme}://{}/mcp", listener.local_addr()))?;
            while let Some(conn) = listener.accept().await {
                fixture::serve(&server, conn, how);
            }
        }
        Ok(())
    })
}

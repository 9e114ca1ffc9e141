//! `mcpl-arcade`: the arcade server, and pictures of Go positions.
//!
//! ```text
//! mcpl-arcade serve [--stdio [--principal NAME]] [--ws ADDR] [--http ADDR]
//!                   [--token NAME=SECRET]… [--tokens-file PATH] [--allow-anonymous]
//!                   [--allowed-origin ORIGIN]… [--tls-cert PATH --tls-key PATH]
//!                   [--authorization-server URL… [--resource URL]]
//!                   [--jwks PATH --jwt-issuer URL --jwt-audience AUD [--jwt-claim CLAIM]]
//!                   [--bot-time-ms MS | --bot-playouts N] [--seed N] [--ended-ttl SECONDS]
//!                   [--data-dir DIR | --in-memory | --postgres URL
//!                    [--nats URL --node NAME [--lease-ttl-ms MS] [--forward-timeout-ms MS]]]
//!                   [--web ADDR (--web-token TOKEN | --web-token-file PATH | --web-public)
//!                    [--web-max-connections N]
//!                    [--web-queue N]]
//! mcpl-arcade render [--size 9|13|19] [--komi K] (--moves "D4 E5 …" | --board PATH|-) [--out PATH|-]
//! ```
//!
//! `serve` prints one `listening on URL` line per network listener (`ws://ADDR`,
//! `http://ADDR/mcp`; `wss://ADDR`, `https://ADDR/mcp` with `--tls-cert` and `--tls-key`,
//! PEM files of the certificate chain and its key) on stdout — on stderr when `--stdio` is given, since stdout is then
//! the MCP channel — and serves until interrupted, or, with `--stdio`, until stdin closes.
//! Every listener serves the same arcade. A network listener needs a token configured
//! (`--token`, `--tokens-file`; the file format is in `mcpl_games::arcade::listen`) unless
//! `--allow-anonymous` is given: then a connection without a token is let in as its own
//! anonymous principal, which can play the bot but share nothing. With
//! `--authorization-server`, the Streamable HTTP listener serves OAuth protected resource
//! metadata (RFC 9728) naming it, and its 401s point there. With `--jwks`, the tokens that
//! server issues are let in too: bearer JWTs verified against the JWK Set's keys, their
//! issuer, audience and expiry checked, the player named by `--jwt-claim` (`sub`).
//!
//! `--web ADDR` serves the spectator page (issue #43, `mcpl_games::arcade::spectate::web`):
//! every game under way and the last finished ones, each board live. Games are private to
//! their players unless the operator says otherwise (**\[project\]**): `--web` needs either
//! `--web-token TOKEN` (or `--web-token-file PATH`, its first line: not on a command line other
//! users can list), which spectators give once as `http://ADDR/?token=TOKEN`, or
//! `--web-public`, which lets anyone who reaches ADDR watch every game. It prints
//! `spectator page on URL` beside the other listeners.
//!
//! Games, invitations and the lobby's challenges survive a restart (issue #15): they are
//! kept in `DIR/mcpl-state.redb` (`--data-dir`; default the OS data directory's
//! `mcpl-arcade/`, e.g. `~/.local/share/mcpl-arcade` on Linux), with the last finished games
//! the spectator page shows (`DIR/finished-games.json`); each game keeps its number.
//! `--in-memory` keeps nothing. `--postgres URL` keeps them in a PostgreSQL database
//! instead (issue #41, first step: `mcpl_cluster::PgStore`; tables created where missing),
//! each record's revision checked so that another arcade writing the same records is
//! refused rather than overwritten; the finished games the spectator page shows are then
//! not kept across restarts (they are a file beside the embedded store).
//! With `--nats URL --node NAME` as well, the arcade runs as one node of several on that
//! database and that NATS server (issue #41, `mcpl_games::arcade::node`): the node holding
//! the arcade's lease runs it, the others forward each Streamable HTTP request to it and
//! take over when it dies; each says its role on stderr (`node "n1" owns the arcade and
//! serves it`, `node "n2" stands by, forwarding to node "n1"`), and a node that loses the
//! lease stops at once with exit status 3.
//! Where they are kept is said on stderr at start-up. A store that cannot be opened
//! (damaged, another format, locked by another running arcade) stops the arcade with an
//! error naming the file (and for a lock, the process holding it where that can be told,
//! and the flags that give this arcade a store of its own).

use anyhow::{Context as _, bail};
use clap::{ArgGroup, Args, Parser, Subcommand};
use mcpl_cluster::bus::BusConfig;
use mcpl_cluster::{Fence, NatsBus, PgLeases, PgStore};
use mcpl_games::arcade::listen::{self, parse_token, parse_tokens_file, token_map};
use mcpl_games::arcade::node::{
    LeasePlacement, Node, NodeSettings, Principals, Role, share_online,
};
use mcpl_games::arcade::render::{game_from_board_text, game_from_moves};
use mcpl_games::arcade::spectate::{self, Gallery, web::Access, web::WebOptions};
use mcpl_games::arcade::{Arcade, ArcadeConfig, BotBudget, BotSettings};
use mcpl_games::go::{BoardSize, DEFAULT_KOMI, render_svg};
use mcpl_server::{RedbStore, Store, StoreError};
use mcpl_transport::{ListenAddr, ProtectedResource, ServerOptions, ServerTls};
use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "mcpl-arcade",
    version,
    about = "The MCPL arcade: Go and tic-tac-toe for agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the arcade on stdio, WebSocket and/or Streamable HTTP.
    // Boxed: its flags make it several times the size of `render`'s.
    Serve(Box<ServeArgs>),
    /// Write an SVG picture of a Go position.
    Render(RenderArgs),
}

#[derive(Args)]
struct ServeArgs {
    /// Serve one principal on stdin/stdout.
    #[arg(long)]
    stdio: bool,
    /// The principal the stdio connection serves (default: local).
    #[arg(long, value_name = "NAME")]
    principal: Option<String>,
    /// Listen for WebSocket connections on ADDR: a bare PORT binds loopback (127.0.0.1);
    /// give IP:PORT (0.0.0.0:7700) to serve other machines; port 0 picks one.
    #[arg(long, value_name = "ADDR")]
    ws: Option<ListenAddr>,
    /// Listen for Streamable HTTP on ADDR (as --ws), endpoint /mcp.
    #[arg(long, value_name = "ADDR")]
    http: Option<ListenAddr>,
    /// A bearer token and the player it authenticates (repeatable).
    #[arg(long = "token", value_name = "NAME=SECRET")]
    tokens: Vec<String>,
    /// A file of NAME=SECRET lines ('#' comments, blank lines skipped).
    #[arg(long, value_name = "PATH")]
    tokens_file: Option<PathBuf>,
    /// Let network connections without a token in, each its own anonymous principal.
    #[arg(long)]
    allow_anonymous: bool,
    /// An Origin accepted besides loopback ones (repeatable).
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// A Host accepted besides loopback names when listening on loopback, as behind a proxy
    /// that keeps the name it was reached by (repeatable).
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// How long a Streamable HTTP session may be idle (no request, no stream open) before it
    /// ends, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    http_session_idle: u64,
    /// The most Streamable HTTP sessions one player holds; one more ends the least recently
    /// active.
    #[arg(long, value_name = "N", default_value_t = 32)]
    http_sessions_per_player: usize,
    /// The most Streamable HTTP sessions of all players; past it `initialize` gets 503, but a
    /// named player's ends the least recently active anonymous session instead.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    http_max_sessions: usize,
    /// Serve TLS on the network listeners (wss://, https://) with the certificate chain in
    /// this PEM file (the server's certificate first); needs --tls-key.
    #[arg(long, value_name = "PATH", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "PATH", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// An OAuth authorization server that issues tokens for this arcade (its issuer URL,
    /// repeatable): Streamable HTTP then serves its protected resource metadata (RFC 9728)
    /// at /.well-known/oauth-protected-resource and names it in every 401.
    #[arg(long = "authorization-server", value_name = "URL")]
    authorization_servers: Vec<String>,
    /// The arcade's public URL in that metadata (as `https://arcade.example/mcp`); default: the
    /// URL each request reached. Needs --authorization-server.
    #[arg(long, value_name = "URL", requires = "authorization_servers")]
    resource: Option<String>,
    /// Also let in bearer JWTs signed with a key of this JWK Set file (RFC 7517), for
    /// --jwt-audience from --jwt-issuer and not expired; the player is the string in
    /// --jwt-claim.
    #[arg(long, value_name = "PATH", requires_all = ["jwt_issuer", "jwt_audience"])]
    jwks: Option<PathBuf>,
    /// The issuer (`iss`) a JWT must name: the authorization server's issuer URL.
    #[arg(long, value_name = "URL", requires = "jwks")]
    jwt_issuer: Option<String>,
    /// The audience (`aud`) a JWT must name: this arcade, as the authorization server
    /// knows it (its URL, usually).
    #[arg(long, value_name = "AUD", requires = "jwks")]
    jwt_audience: Option<String>,
    /// The JWT claim that names the player.
    #[arg(long, value_name = "CLAIM", default_value = "sub", requires = "jwks")]
    jwt_claim: String,
    /// The most anonymous connections (and, apart, Streamable HTTP sessions) one address holds.
    #[arg(long, value_name = "N", default_value_t = 8)]
    anonymous_per_address: usize,
    /// The most anonymous connections (and, apart, Streamable HTTP sessions) from all
    /// addresses together; an IPv6 address counts as its /64.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    anonymous_max: usize,
    /// The most WebSocket connections one player holds at once.
    #[arg(long, value_name = "N", default_value_t = 32)]
    ws_connections_per_player: usize,
    /// The bot's thinking time per 9x9 Go move, in milliseconds (scaled up on larger boards).
    #[arg(long, value_name = "MS", default_value_t = 200)]
    #[arg(conflicts_with = "bot_playouts")]
    bot_time_ms: u64,
    /// A fixed playout budget per Go move instead of a time (deterministic with --seed).
    #[arg(long, value_name = "N")]
    bot_playouts: Option<u32>,
    /// Seed the bot's choices.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// How long ended games are reported to players who were away, in seconds (default 3600).
    #[arg(long, value_name = "SECONDS")]
    ended_ttl: Option<u64>,
    /// Keep games, invitations and challenges across restarts in DIR (file
    /// mcpl-state.redb; default: the OS data directory's mcpl-arcade/).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["in_memory", "postgres"])]
    data_dir: Option<PathBuf>,
    /// Keep nothing across restarts: a restart forgets every game.
    #[arg(long, conflicts_with = "postgres")]
    in_memory: bool,
    /// Keep games, invitations and challenges in the PostgreSQL database URL
    /// (postgres://USER:PASSWORD@HOST:PORT/DBNAME, password and port optional; its tables
    /// are created where missing) instead of a file. The finished games the spectator
    /// page shows are not kept across restarts then.
    #[arg(long, value_name = "URL")]
    postgres: Option<String>,
    /// Run as one node of several arcades on the database --postgres names, coordinated
    /// over the NATS server URL (nats://HOST:PORT): one node runs the arcade, the others
    /// forward to it and take over when it dies. Needs --postgres and --node.
    #[arg(long, value_name = "URL", requires_all = ["postgres", "node"])]
    nats: Option<String>,
    /// This node's name among the arcade's nodes (unique; with --nats).
    #[arg(long, value_name = "NAME", requires = "nats")]
    node: Option<String>,
    /// How long the owner's lease lasts unless renewed (it renews at a third of it), in
    /// milliseconds: a dead owner's games resume on another node about this long after.
    #[arg(long, value_name = "MS", default_value_t = 10_000, requires = "nats")]
    lease_ttl_ms: u64,
    /// What one node owns (with --nats): `arcade`, the default, one node runs the whole
    /// arcade and the others forward to it; `principal`, every node serves, each player
    /// on the node holding her lease (taken where her first request lands), her games on
    /// it, the others forwarding her requests there (issue #41, docs/ownership.md §1).
    #[arg(long, value_enum, default_value_t = Ownership::Arcade, requires = "nats")]
    ownership: Ownership,
    /// How long a node waits for the owner's answer to a request it forwards, in
    /// milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 30_000, requires = "nats")]
    forward_timeout_ms: u64,
    /// Serve the spectator page on ADDR (as --ws): every game under way and the last
    /// finished ones, live. Needs --web-token or --web-public.
    #[arg(long, value_name = "ADDR")]
    web: Option<ListenAddr>,
    /// Spectators must give this token (once, as http://ADDR/?token=TOKEN): letters,
    /// digits, '.', '_', '~' and '-'.
    #[arg(long, value_name = "TOKEN")]
    #[arg(requires = "web", conflicts_with = "web_public")]
    web_token: Option<String>,
    /// The spectators' token, read from the first line of PATH (so that it is not on a
    /// command line other users can list, as --web-token is).
    #[arg(long, value_name = "PATH")]
    #[arg(requires = "web", conflicts_with_all = ["web_public", "web_token"])]
    web_token_file: Option<PathBuf>,
    /// Anyone who reaches --web's address may watch every game.
    #[arg(long, requires = "web")]
    web_public: bool,
    /// The most connections the spectator page serves at once; one more is answered 503.
    #[arg(long, value_name = "N", default_value_t = spectate::web::DEFAULT_MAX_CONNECTIONS, requires = "web")]
    web_max_connections: usize,
    /// How many changes a spectator may fall behind before it is sent the games afresh.
    #[arg(long, value_name = "N", default_value_t = spectate::DEFAULT_QUEUE, requires = "web")]
    web_queue: usize,
}

#[derive(Args)]
#[command(group(ArgGroup::new("position").required(true).args(["moves", "board"])))]
struct RenderArgs {
    /// Board size, for --moves.
    #[arg(long, default_value_t = 9)]
    size: u32,
    /// Komi (shown in the picture's score only through the result).
    #[arg(long, default_value_t = DEFAULT_KOMI)]
    komi: f32,
    /// The moves from the empty board, Black first ("D4 E5 pass …", or the arcade's "Moves: …" line).
    #[arg(long)]
    moves: Option<String>,
    /// A board as the arcade prints it (a file, or - for stdin).
    #[arg(long, value_name = "PATH")]
    board: Option<PathBuf>,
    /// Where to write the SVG (default: stdout).
    #[arg(long, value_name = "PATH", default_value = "-")]
    out: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Issue #43: colour codes only for a terminal, not a file (Claude Desktop's log).
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let outcome = match cli.command {
        Command::Serve(args) => serve(*args),
        Command::Render(args) => render(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpl-arcade: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Serves the tunnels other nodes open to this one, each carried to the arcade's own
/// listener of its kind; returns once NATS has every subscription made so far.
async fn tunnels_here(
    node: &Arc<Node>,
    http: Option<std::net::SocketAddr>,
    ws: Option<std::net::SocketAddr>,
) -> anyhow::Result<()> {
    let opens = node
        .tunnels()
        .opens()
        .await
        .context("serving the tunnels opened to this node")?;
    tokio::spawn(node.clone().serve_tunnels(opens, http, ws));
    // NATS has this node's subscriptions (forwarded requests, then tunnels) before it
    // says it serves: a standby that reads it as the owner finds it on the bus.
    node.bus()
        .flush()
        .await
        .context("serving the tunnels opened to this node")?;
    Ok(())
}

/// Listens on `at` with `listen`, where given; a failure says `what` was being listened
/// for.
async fn listening<F, Fut>(
    at: Option<std::net::SocketAddr>,
    listen: F,
    what: impl FnOnce(std::net::SocketAddr) -> String,
) -> anyhow::Result<Option<listen::Listener>>
where
    F: FnOnce(std::net::SocketAddr) -> Fut,
    Fut: std::future::Future<Output = std::io::Result<listen::Listener>>,
{
    match at {
        Some(at) => Ok(Some(listen(at).await.with_context(|| what(at))?)),
        None => Ok(None),
    }
}

/// The arcade's own listeners behind a cluster node's fronts, WebSocket on `ws` and
/// Streamable HTTP on `http` where given: the listeners, and where each listens.
async fn own_listeners(
    arcade: &Arcade,
    ws: Option<std::net::SocketAddr>,
    http: Option<std::net::SocketAddr>,
    opts: &Arc<ServerOptions>,
) -> anyhow::Result<(
    Vec<listen::Listener>,
    Option<std::net::SocketAddr>,
    Option<std::net::SocketAddr>,
)> {
    let own = |what: &str| {
        let what = format!("the arcade's own {what} listener");
        move |_| what
    };
    let ws = listening(
        ws,
        |at| listen::ws(arcade, at, opts.clone()),
        own("WebSocket"),
    )
    .await?;
    let http = listening(
        http,
        |at| listen::http(arcade, at, opts.clone()),
        own("Streamable HTTP"),
    )
    .await?;
    let at = |l: &Option<listen::Listener>| l.as_ref().map(listen::Listener::local_addr);
    let (internal_ws, internal_http) = (at(&ws), at(&http));
    Ok((
        ws.into_iter().chain(http).collect(),
        internal_ws,
        internal_http,
    ))
}

/// The listeners' options and the players, checked before anything starts.
fn server_options(args: &ServeArgs) -> anyhow::Result<(ServerOptions, Vec<String>)> {
    let mut tokens = Vec::new();
    for t in &args.tokens {
        let (name, secret) = parse_token(t, 0).context("--token")?;
        tokens.push((0, name, secret));
    }
    if let Some(path) = &args.tokens_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the tokens file {}", path.display()))?;
        let parsed =
            parse_tokens_file(&text).with_context(|| format!("tokens file {}", path.display()))?;
        tokens.extend(parsed.into_iter().map(|(n, s)| (0, n, s)));
    }
    let mut players: Vec<String> = tokens.iter().map(|(_, n, _)| n.clone()).collect();
    let tokens = token_map(tokens)?;
    let network = args.ws.is_some() || args.http.is_some();
    if args.principal.is_some() && !args.stdio {
        bail!("--principal names the stdio principal: it needs --stdio");
    }
    if !network && !args.stdio {
        bail!("nothing to serve: give --stdio, --ws ADDR and/or --http ADDR");
    }
    let jwt = match (&args.jwks, &args.jwt_issuer, &args.jwt_audience) {
        (Some(jwks), Some(issuer), Some(audience)) => Some(
            mcpl_transport::jwt::JwtAuth::from_jwks_file(jwks, issuer, audience, &args.jwt_claim)?,
        ),
        _ => None,
    };
    if network && tokens.is_empty() && jwt.is_none() && !args.allow_anonymous {
        bail!(
            "refusing to listen on the network with no token configured: give --token NAME=SECRET, --tokens-file PATH or --jwks PATH, or --allow-anonymous to let anyone in"
        );
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(_), _) if !network => bail!("--tls-cert serves TLS on --ws and --http: give one"),
        (Some(cert), Some(key)) => Some(ServerTls::from_pem_files(cert, key)?),
        _ => None,
    };
    let protected_resource = match args.authorization_servers.as_slice() {
        [] => None,
        _ if args.http.is_none() => {
            bail!("--authorization-server is for the Streamable HTTP listener: give --http")
        }
        servers => Some(ProtectedResource {
            authorization_servers: servers.to_vec(),
            resource: args.resource.clone(),
            scopes: Vec::new(),
        }),
    };
    let stdio_principal = args.principal.clone().unwrap_or_else(|| "local".to_owned());
    if args.stdio {
        let (name, _) = parse_token(&format!("{stdio_principal}=x"), 0).context("--principal")?;
        players.push(name);
    }
    let opts = ServerOptions {
        tokens,
        allow_anonymous: args.allow_anonymous,
        allowed_origins: args.allowed_origins.clone(),
        allowed_hosts: args.allowed_hosts.clone(),
        http_session_idle: std::time::Duration::from_secs(args.http_session_idle),
        http_sessions_per_principal: args.http_sessions_per_player,
        http_max_sessions: args.http_max_sessions,
        anonymous_per_source: args.anonymous_per_address,
        anonymous_max: args.anonymous_max,
        ws_connections_per_principal: args.ws_connections_per_player,
        stdio_principal,
        tls,
        protected_resource,
        jwt,
        ..Default::default()
    };
    Ok((opts, players))
}

/// The spectators' finished games, beside the store (`Gallery::keep_in`).
const FINISHED_FILE: &str = "finished-games.json";

/// A store, and the directory beside it where the finished games are kept (none for
/// `--postgres`).
type Chosen = (Arc<dyn Store>, Option<PathBuf>);

/// The store `--data-dir` / `--in-memory` / `--postgres` ask for (issues #15, #41). Where it is is said on
/// stderr, one line, whatever the log level (issue #43: the default is a file in the OS
/// data directory, which nothing else would tell); a store another process holds (two
/// arcades on one data directory) is refused naming the file, the holder where it can be
/// told, and the flags that give this one a store of its own.
///
/// Returns the store and its directory, where the spectators' finished games are kept too
/// (`finished-games.json`); `--postgres` has none.
fn store(args: &ServeArgs) -> anyhow::Result<Option<Chosen>> {
    if args.in_memory {
        eprintln!(
            "mcpl-arcade: games are kept in memory only (--in-memory): a restart forgets them"
        );
        return Ok(None);
    }
    if let Some(url) = &args.postgres {
        let store = PgStore::connect(url)?;
        eprintln!(
            "mcpl-arcade: games are kept in {} (--postgres)",
            store.location()
        );
        return Ok(Some((Arc::new(store), None)));
    }
    let dir = match &args.data_dir {
        Some(dir) => dir.clone(),
        None => dirs::data_dir()
            .context("no OS data directory is known here: give --data-dir DIR or --in-memory")?
            .join("mcpl-arcade"),
    };
    let store = match RedbStore::open_dir(&dir) {
        Ok(store) => store,
        Err(e @ StoreError::Locked { .. }) => bail!(
            "{e} Two arcades cannot share one store (one for WebSocket and one a surface \
             host starts with `serve --stdio`, say): give this one --data-dir DIR (a \
             directory of its own) or --in-memory"
        ),
        Err(e) => return Err(e.into()),
    };
    let flag = if args.data_dir.is_some() {
        "--data-dir"
    } else {
        "the default; --data-dir DIR or --in-memory to change"
    };
    eprintln!(
        "mcpl-arcade: games are kept in {} ({flag})",
        store.location()
    );
    Ok(Some((Arc::new(store), Some(dir))))
}

/// Who may watch the spectator page (`--web`), checked before anything starts.
fn web_access(args: &ServeArgs) -> anyhow::Result<Option<Access>> {
    if args.web.is_none() {
        return Ok(None);
    }
    let from_file = match &args.web_token_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--web-token-file {}", path.display()))?;
            let token = text.lines().next().unwrap_or_default().trim().to_owned();
            if token.is_empty() {
                bail!(
                    "--web-token-file {}: its first line is empty; write the token there",
                    path.display()
                );
            }
            Some(token)
        }
        None => None,
    };
    match (
        from_file.as_ref().or(args.web_token.as_ref()),
        args.web_public,
    ) {
        (Some(token), _) => {
            let ok = !token.is_empty()
                && token
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._~-".contains(&b));
            if !ok {
                bail!(
                    "--web-token / --web-token-file: use letters, digits, '.', '_', '~' and '-' only (it goes in a URL and a cookie)"
                );
            }
            Ok(Some(Access::Token(token.clone())))
        }
        (None, true) => Ok(Some(Access::Public)),
        (None, false) => bail!(
            "--web: games are private to their players; give --web-token TOKEN or --web-token-file \
             PATH (spectators open the page with ?token=TOKEN) or --web-public (anyone who reaches the address watches \
             every game)"
        ),
    }
}

/// The arcade's configuration, its store given (none: in memory).
fn arcade_config(
    args: &ServeArgs,
    players: Vec<String>,
    store: Option<Arc<dyn Store>>,
    finished_file: Option<PathBuf>,
) -> ArcadeConfig {
    ArcadeConfig {
        bot: BotSettings {
            budget: match args.bot_playouts {
                Some(n) => BotBudget::Playouts(n),
                None => BotBudget::Time(Duration::from_millis(args.bot_time_ms)),
            },
            seed: args.seed,
        },
        players,
        ended_ttl: args.ended_ttl.map(Duration::from_secs),
        clock: None,
        store,
        // Always the arcade's gallery: its resources read it, and it keeps the finished
        // games beside the store whether or not a page is served now.
        gallery: Some(Gallery::new(
            args.web_queue,
            spectate::DEFAULT_FINISHED_KEPT,
        )),
        finished_file,
        peers: None,
        placement: None,
        resume_nothing: false,
        on_instance_start: None,
    }
}

/// Says a line where the listeners are said: stdout, flushed (stderr with `--stdio`,
/// whose stdout is the MCP channel).
fn say(args: &ServeArgs, line: String) {
    if args.stdio {
        eprintln!("{line}");
    } else {
        println!("{line}");
        let _ = std::io::stdout().flush();
    }
}

/// Serves the spectator page (`--web`) for `gallery`, if asked for.
async fn serve_web(
    args: &ServeArgs,
    opts: &ServerOptions,
    access: Option<Access>,
    gallery: Option<Arc<Gallery>>,
) -> anyhow::Result<Option<spectate::web::WebListener>> {
    let (Some(addr), Some(access), Some(gallery)) = (args.web, access, gallery) else {
        return Ok(None);
    };
    let web = WebOptions {
        max_connections: args.web_max_connections,
        allowed_hosts: args.allowed_hosts.clone(),
        tls: opts.tls.clone(),
        ..WebOptions::new(access)
    };
    let l = spectate::web::serve(gallery, addr.addr(), web)
        .await
        .with_context(|| format!("serving the spectator page on {addr}"))?;
    say(args, format!("spectator page on {}", l.url()));
    Ok(Some(l))
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let (opts, players) = server_options(&args)?;
    let access = web_access(&args)?;
    let opts = Arc::new(opts);
    if args.nats.is_some() {
        return serve_node(args, opts, players, access);
    }
    let (store, finished_file) = match store(&args)? {
        Some((store, dir)) => (Some(store), dir.map(|dir| dir.join(FINISHED_FILE))),
        None => (None, None),
    };
    let config = arcade_config(&args, players, store, finished_file);
    let gallery = config.gallery.clone();
    actix::System::new().block_on(async move {
        let arcade = Arcade::new(config).context("building the arcade")?;
        let ws = listening(
            args.ws.map(ListenAddr::addr),
            |at| listen::ws(&arcade, at, opts.clone()),
            |at| format!("listening for WebSocket on {at}"),
        )
        .await?;
        let http = listening(
            args.http.map(ListenAddr::addr),
            |at| listen::http(&arcade, at, opts.clone()),
            |at| format!("listening for Streamable HTTP on {at}"),
        )
        .await?;
        let listeners: Vec<_> = ws.into_iter().chain(http).collect();
        for l in &listeners {
            say(&args, format!("listening on {}", l.url()));
        }
        let web_listener = serve_web(&args, &opts, access, gallery).await?;
        if args.stdio {
            eprintln!("serving stdio as {}", opts.stdio_principal);
            listen::stdio(&arcade, &opts).await;
            // Tokio reads stdin on a blocking thread that would keep the runtime alive.
            std::process::exit(0);
        }
        shutdown_signal().await;
        drop(listeners);
        drop(web_listener);
        Ok(())
    })
}

/// What one node of several owns (`--ownership`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Ownership {
    /// One node runs the whole arcade (`docs/cluster.md` §2, coarse ownership).
    Arcade,
    /// Each node runs the principals whose leases it holds (`docs/ownership.md` §1).
    Principal,
}

/// The exit status of a node that lost the arcade's lease (it stops at once; started
/// again, it stands by), or, serving by principal, could not renew its leases.
const LOST_LEASE: i32 = 3;

/// `serve --postgres URL --nats URL --node NAME`: one node of several arcades (issue #41,
/// `mcpl_games::arcade::node`). It listens in front at once, stands by (forwarding to the
/// owner) until it holds the arcade's lease, then loads the records on a store fenced by
/// that lease and runs the arcade; a renewal that fails stops it at once.
fn serve_node(
    args: ServeArgs,
    opts: Arc<ServerOptions>,
    players: Vec<String>,
    access: Option<Access>,
) -> anyhow::Result<()> {
    let (Some(pg), Some(nats), Some(name)) =
        (args.postgres.clone(), args.nats.clone(), args.node.clone())
    else {
        bail!("--nats needs --postgres URL and --node NAME");
    };
    if args.stdio {
        bail!(
            "--stdio serves one process's stdin: a node of several (--nats) serves --http and --ws only"
        );
    }
    if opts.tls.is_some() {
        bail!(
            "--tls-cert with --nats is not served yet: terminate TLS at the load balancer in front of the nodes"
        );
    }
    if args.lease_ttl_ms < 30 {
        bail!("--lease-ttl-ms: at least 30 (it is renewed at a third of it)");
    }
    let leases = Arc::new(
        PgLeases::connect(&pg, &name).with_context(|| format!("node {name:?}: the leases"))?,
    );
    let settings = NodeSettings {
        name: name.clone(),
        ttl: Duration::from_millis(args.lease_ttl_ms),
        forward_timeout: Duration::from_millis(args.forward_timeout_ms),
        max_message: NODE_MESSAGE,
    };
    if args.ownership == Ownership::Principal {
        return serve_principals(
            args,
            opts,
            players,
            access,
            (pg, nats, name),
            leases,
            settings,
        );
    }
    actix::System::new().block_on(async move {
        let bus = NatsBus::connect(
            &nats,
            BusConfig {
                max_message: NODE_MESSAGE,
                ..BusConfig::new(name.clone())
            },
        )
        .await
        .with_context(|| format!("node {name:?}"))?;
        eprintln!(
            "mcpl-arcade: node {name:?}: games are kept in {} (--postgres), nodes meet on {nats} (--nats)",
            leases.location()
        );
        let node = Node::new(settings, Arc::new(bus));
        // The fronts listen at once, whatever the role; the arcade's own listeners (once
        // this node owns it) take a port of their own on the same address.
        let mut own_http = None;
        let mut own_ws = None;
        if let Some(addr) = args.ws {
            let l = tokio::net::TcpListener::bind(addr.addr())
                .await
                .with_context(|| format!("listening for WebSocket on {addr}"))?;
            let at = l.local_addr()?;
            say(&args, format!("listening on ws://{at}"));
            own_ws = Some(std::net::SocketAddr::new(at.ip(), 0));
            tokio::spawn(node.clone().front_ws(l));
        }
        if let Some(addr) = args.http {
            let l = tokio::net::TcpListener::bind(addr.addr())
                .await
                .with_context(|| format!("listening for Streamable HTTP on {addr}"))?;
            let at = l.local_addr()?;
            say(&args, format!("listening on http://{at}{}", listen::HTTP_PATH));
            own_http = Some(std::net::SocketAddr::new(at.ip(), 0));
            tokio::spawn(node.clone().front_http(l));
        }
        // Each change of role, said on stderr whatever the log level.
        let mut roles = node.role();
        let who = name.clone();
        tokio::spawn(async move {
            while roles.changed().await.is_ok() {
                let line = match &*roles.borrow_and_update() {
                    Role::Owner { .. } => format!("mcpl-arcade: node {who:?} owns the arcade and serves it"),
                    Role::Standby { owner: Some(o) } => format!(
                        "mcpl-arcade: node {who:?} stands by, forwarding to node {o:?}"
                    ),
                    Role::Standby { owner: None } => {
                        format!("mcpl-arcade: node {who:?} stands by; no node owns the arcade now")
                    }
                };
                eprintln!("{line}");
            }
        });

        say_bus_changes(&node);

        let lease = node.wait_for_lease(&leases).await;
        let fence = Fence::new();
        fence.hold(&lease);
        let store = PgStore::connect_fenced(&pg, fence)
            .with_context(|| format!("node {name:?}: the store"))?;
        let config = arcade_config(&args, players, Some(Arc::new(store)), None);
        let gallery = config.gallery.clone();
        let arcade = Arcade::new(config).context("building the arcade")?;
        let (listeners, internal_ws, internal_http) =
            own_listeners(&arcade, own_ws, own_http, &opts).await?;
        let requests = node
            .bus()
            .serve()
            .await
            .context("serving the requests forwarded to this node")?;
        tokio::spawn(node.clone().serve_forwarded(requests, internal_http));
        // The standbys' clients' long-lived connections (WebSocket, event streams), carried
        // here through tunnels.
        tunnels_here(&node, internal_http, internal_ws).await?;
        node.become_owner(internal_http, internal_ws);
        let web_listener = serve_web(&args, &opts, access, gallery).await?;
        tokio::select! {
            lost = node.hold(&leases, &lease) => {
                eprintln!(
                    "mcpl-arcade: node {name:?} stops serving at once: {lost} (its writes would be refused; started again, it stands by)"
                );
                std::process::exit(LOST_LEASE);
            }
            why = arcade.server().store_given_up() => {
                // A commit failed: its server takes no change from now on [project].
                eprintln!(
                    "mcpl-arcade: node {name:?} stops serving at once: its store was given up ({why}); started again, it stands by"
                );
                std::process::exit(LOST_LEASE);
            }
            () = shutdown_signal() => {}
        }
        drop(listeners);
        drop(web_listener);
        // Shutting down: the others take over at once rather than at the lease's expiry.
        let _ = tokio::task::spawn_blocking(move || leases.release(&lease)).await;
        Ok(())
    })
}

/// Says on stderr, whatever the log level, each change of `node`'s connection to NATS:
/// forwarding (and, with `--ownership principal`, what the actors send each other) stops
/// while it is down — clients are refused, retryable — and resumes once it is back.
fn say_bus_changes(node: &Arc<Node>) {
    let mut connected = node.bus().connected();
    let (who, bus) = (node.name().to_owned(), node.bus().clone());
    tokio::spawn(async move {
        let mut lost = false;
        while connected.changed().await.is_ok() {
            let up = *connected.borrow_and_update();
            if up && lost {
                // Said once NATS has processed what the reconnection sent (this node's
                // subscriptions again): forwarding to it works from then on.
                if bus.flush().await.is_ok() {
                    lost = false;
                    eprintln!("mcpl-arcade: node {who:?} is connected to NATS again");
                }
            } else if !up && !lost {
                lost = true;
                eprintln!(
                    "mcpl-arcade: node {who:?} lost its connection to NATS; forwarding waits for it"
                );
            }
        }
    });
}

/// `serve --postgres URL --nats URL --node NAME --ownership principal`: one node of
/// several, each serving the principals whose leases it holds
/// (`mcpl_games::arcade::node::Principals`, `docs/ownership.md` §1). Its arcade runs at
/// once on a store fenced by the leases it takes, resuming no game (each runs on its
/// opener's node), its actors reaching those of the other nodes over NATS.
fn serve_principals(
    args: ServeArgs,
    opts: Arc<ServerOptions>,
    players: Vec<String>,
    access: Option<Access>,
    (pg, nats, name): (String, String, String),
    leases: Arc<PgLeases>,
    settings: NodeSettings,
) -> anyhow::Result<()> {
    // Who is online, shared through the lease table on a connection of its own.
    let online_leases = Arc::new(
        PgLeases::connect(&pg, &name)
            .with_context(|| format!("node {name:?}: the leases, for who is online"))?,
    );
    let ttl = settings.ttl;
    actix::System::new().block_on(async move {
        let bus = Arc::new(
            NatsBus::connect(
                &nats,
                BusConfig {
                    max_message: NODE_MESSAGE,
                    ..BusConfig::new(name.clone())
                },
            )
            .await
            .with_context(|| format!("node {name:?}"))?,
        );
        eprintln!(
            "mcpl-arcade: node {name:?}: games are kept in {} (--postgres), nodes meet on {nats} (--nats), each player served on the node holding her lease (--ownership principal)",
            leases.location()
        );
        let node = Node::new(settings, bus.clone());
        say_bus_changes(&node);
        // The fronts bind (and say where) first; they serve once the arcade runs.
        let ws_front = match args.ws {
            Some(addr) => {
                let l = tokio::net::TcpListener::bind(addr.addr())
                    .await
                    .with_context(|| format!("listening for WebSocket on {addr}"))?;
                say(&args, format!("listening on ws://{}", l.local_addr()?));
                Some(l)
            }
            None => None,
        };
        let http_front = match args.http {
            Some(addr) => {
                let l = tokio::net::TcpListener::bind(addr.addr())
                    .await
                    .with_context(|| format!("listening for Streamable HTTP on {addr}"))?;
                say(
                    &args,
                    format!("listening on http://{}{}", l.local_addr()?, listen::HTTP_PATH),
                );
                Some(l)
            }
            None => None,
        };
        let fence = Fence::new();
        let store: Arc<dyn Store> = Arc::new(
            PgStore::connect_fenced(&pg, fence.clone())
                .with_context(|| format!("node {name:?}: the store"))?,
        );
        // Made before the arcade: each game starting on it (opened or adopted) is leased
        // here first.
        let owners = Principals::new(node.clone(), leases, fence, store.clone(), opts.clone());
        // Its principals' look-ups on connections of their own, several at once.
        owners
            .look_up_on(&pg)
            .with_context(|| format!("node {name:?}: the leases, for looking principals up"))?;
        let mut config = arcade_config(&args, players, Some(store), None);
        config.peers = Some(Arc::new(mcpl_cluster::NatsPeers::new(bus.clone())));
        // A player an invitation brings starts here only under her lease.
        let placement = Arc::new(LeasePlacement::default());
        config.placement = Some(placement.clone());
        placement.serve(&owners);
        config.resume_nothing = true;
        let hook = owners.clone();
        config.on_instance_start = Some(Arc::new(move |id, how| Box::pin(hook.starting(id, how))));
        let gallery = config.gallery.clone();
        let arcade = Arcade::new(config).context("building the arcade")?;
        // Beside each front, on a port of its own on the same address.
        let beside = |front: &Option<tokio::net::TcpListener>| -> anyhow::Result<_> {
            front
                .as_ref()
                .map(|l| Ok(std::net::SocketAddr::new(l.local_addr()?.ip(), 0)))
                .transpose()
        };
        let (listeners, internal_ws, internal_http) =
            own_listeners(&arcade, beside(&ws_front)?, beside(&http_front)?, &opts).await?;
        owners.listening(internal_http, internal_ws);
        let requests = bus
            .serve()
            .await
            .context("serving the requests forwarded to this node")?;
        tokio::spawn(owners.clone().serve_forwarded(requests));
        tunnels_here(&node, internal_http, internal_ws).await?;
        tokio::spawn(share_online(arcade.clone(), online_leases, name.clone(), ttl));
        // The renewal runs on while the node stops (SIGTERM), until it hands its leases on.
        let mut held = tokio::spawn(owners.clone().hold(arcade.server().clone()));
        let given_up = arcade.server().store_given_up();
        tokio::spawn(owners.clone().scan(arcade.server().clone()));
        let mut fronts = Vec::new();
        if let Some(l) = ws_front {
            fronts.push(tokio::spawn(owners.clone().front_ws(l)));
        }
        if let Some(l) = http_front {
            fronts.push(tokio::spawn(owners.clone().front_http(l)));
        }
        eprintln!("mcpl-arcade: node {name:?} serves the players whose leases it holds");
        let web_listener = serve_web(&args, &opts, access, gallery).await?;
        tokio::select! {
            e = &mut held => {
                let e = e.map_or_else(|j| format!("its renewal stopped: {j}"), |e| e.to_string());
                eprintln!(
                    "mcpl-arcade: node {name:?} stops serving at once: its leases cannot be renewed ({e}); the others take its players once their leases expire (started again, it serves afresh)"
                );
                // Its leases are forgotten (the fence refuses every write), and it takes
                // none: the requests in flight get their answers first, for at most a
                // second [project].
                owners.stop();
                owners.answered(Duration::from_secs(1)).await;
                std::process::exit(LOST_LEASE);
            }
            why = given_up => {
                // A commit failed (another writer, or the database): its server takes no
                // change from now on, so it stops as when its leases cannot be renewed
                // [project]; the others take its players when their leases expire.
                eprintln!(
                    "mcpl-arcade: node {name:?} stops serving at once: its store was given up ({why}); the others take its players once their leases expire (started again, it serves afresh)"
                );
                owners.stop();
                owners.answered(Duration::from_secs(1)).await;
                std::process::exit(LOST_LEASE);
            }
            () = shutdown_signal() => {}
        }
        // Stopping (`docs/ownership.md` §1): nothing new taken on — the fronts stop
        // listening — and the requests in flight answered, for at most a second, as when
        // the renewal fails; then every principal and instance here released, their
        // records as last kept, and their leases let go of so that the others take them
        // at once: a player on her next request, a game at the next scan [project].
        owners.stop_taking();
        for front in fronts {
            front.abort();
        }
        drop(web_listener);
        owners.answered(Duration::from_secs(1)).await;
        drop(listeners);
        let handed = owners.hand_on(arcade.server()).await;
        held.abort();
        // What the releases answered (a call waiting on a game released) goes out first.
        owners.answered(Duration::from_secs(1)).await;
        eprintln!(
            "mcpl-arcade: node {name:?} stopped: {} players and {} games handed on ({} games stopped unreleased, their leases let expire)",
            handed.principals, handed.instances, handed.unreleased
        );
        Ok(())
    })
}

/// The most bytes of a request or an answer nodes forward to each other (NATS's own
/// default limit is 1 MiB; a little is kept for the bus's headers).
const NODE_MESSAGE: usize = 1000 * 1024;

/// Ctrl-C, or SIGTERM on Unix.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn render(args: RenderArgs) -> anyhow::Result<()> {
    let game = match (&args.moves, &args.board) {
        (Some(moves), _) => {
            let size = BoardSize::new(args.size).context("--size")?;
            game_from_moves(size, args.komi, moves)?
        }
        (None, Some(path)) => {
            let text = if path.as_os_str() == "-" {
                let mut s = String::new();
                std::io::stdin().read_to_string(&mut s)?;
                s
            } else {
                std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?
            };
            game_from_board_text(&text, args.komi)?
        }
        (None, None) => bail!("give --moves or --board"),
    };
    let svg = render_svg(&game);
    if args.out.as_os_str() == "-" {
        std::io::stdout().write_all(svg.as_bytes())?;
    } else {
        std::fs::write(&args.out, svg)
            .with_context(|| format!("writing {}", args.out.display()))?;
    }
    Ok(())
}

//! The arcade: an MCPL server on the `mcpl-server` SDK where agents play Go and
//! tic-tac-toe against a bot or each other — and a showcase of RFC-014: per-turn
//! visibility, per-instance definitions, instances shared between principals, pushes that
//! explain changes, ended records, a default-open toolset beside instanced ones, and play
//! for hosts without `toolHints`.
//!
//! # What it declares
//!
//! | toolset | declaration | tools |
//! |---|---|---|
//! | `lobby` | `default: "open"`, no instances | `games {}`, `challenge {opponent, game, size?, color?}`, `decline {instance, game?}` |
//! | `go` | `instances`, options `{opponent?, size?, komi?, color?}` | `go_play {move}` and `go_pass {}` (only on your turn; `move` an enum of the legal points, a pattern on 19×19), `go_resign {}`, `go_board {}` |
//! | `tictactoe` | `instances`, options `{opponent?, color?}` | `tictactoe_play {move}` (only on your turn; an enum of the free cells), `tictactoe_resign {}`, `tictactoe_board {}` |
//!
//! `opponent` is `"bot"` (the default) or a player's name: that player is invited into the
//! instance (its connections get a push whose hints `suggest` opening it) and plays by
//! opening it under the suggested name. The lobby's `challenge` does the same for you;
//! `decline` refuses an invitation, and the challenger is told. Who counts as *online* is
//! defined in `shared.rs`.
//!
//! The lobby acts on its caller's toolsets through the SDK, as the caller's host would
//! (`ToolContext::open_toolset`, `decline_invitation`, `invitations`); the bot's Go
//! search runs as the instance's blocking work, which wakes the table when done
//! (`InstanceContext::spawn_blocking`).
//!
//! # Layout
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`Arcade`], [`ArcadeConfig`], [`BotSettings`] |
//! | `tools.rs` | the games' declarations: toolsets, tools, options schemas |
//! | `rules.rs` | [`Rules`]: what a game tells a table |
//! | `go_rules.rs`, `tictactoe_rules.rs` | Go's and tic-tac-toe's [`Rules`] |
//! | `table/` | a two-player game as an instance's logic: seats, turns, the bot, the end |
//! | `lobby.rs` | the lobby: its toolset and tools, each declared once with its handler |
//! | `shared.rs` | who is online, the players, the challenges sent |
//! | `challenge_limit.rs` | how often one player may challenge the same other |
//! | [`listen`] | serving on stdio, WebSocket and Streamable HTTP; bearer tokens |
//! | [`node`] | one node of several arcades on PostgreSQL and NATS (issue #41): the arcade's lease, the listeners in front, forwarding to the owner |
//! | [`render`] | positions from text, for SVG pictures |
//! | [`spectate`] | the games shown to spectators, and the spectator page's listener |
//! | [`offers`] | each game as a resource for its players, how-to-play prompts, completion (MCP resources, prompts, completion) |
//!
//! # Running it
//!
//! An [`Arcade`] is made on an actix arbiter (inside `actix::System::new().block_on(..)`
//! or `#[actix::test]`) and serves any number of connections from any transport at once.
//! The bot's Go search runs on tokio's blocking pool, never on the arbiter.

mod challenge_limit;
pub mod listen;
mod lobby;
pub mod node;
pub mod offers;
pub mod render;
mod rules;
mod shared;
pub mod spectate;
mod table;
mod tools;

mod go_rules;
mod tictactoe_rules;

pub use go_rules::{ENUM_MAX_LINES, GoColor, GoOptions, GoRules, POINT_PATTERN};
pub use lobby::{CHALLENGE, DECLINE, GAMES, LOBBY};
pub use rules::{BotPlan, Outcome, Rules, Seating, Side, ToolNames};
pub use shared::{Challenge, RESERVED_NAMES};
pub use table::{Table, TableToolset, WAKE_BOT};
pub use tictactoe_rules::{MarkOption, TicTacToeOptions, TicTacToeRules};

use crate::bot::DEFAULT_MOVE_TIME;
use actix::ArbiterHandle;
use mcpl_server::{BuildError, Clock, Server, SessionHandle, Store};
use mcpl_transport::Connection;
use shared::Shared;
use std::sync::Arc;
use std::time::Duration;

/// The implementation name the arcade gives in `initialize`.
pub const SERVER_NAME: &str = "mcpl-arcade";

/// What the arcade tells the model in `initialize`.
pub const INSTRUCTIONS: &str = "An arcade: play Go or tic-tac-toe against a bot or another agent. \
The lobby (open from the start) lists games and players and sends challenges. Open a game \
toolset (go, tictactoe) to play: play on your turn with its play tool (hosts that follow toolset \
hints show it only then, listing the legal moves) and see the position with its board tool. \
A challenge reaches you as an event suggesting a game to open.";

/// How much the bot searches per Go move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BotBudget {
    /// Wall-clock time per 9×9 move; larger boards get it in proportion to their points.
    Time(Duration),
    /// A fixed number of playouts: deterministic with a seed (tests use this).
    Playouts(u32),
}

/// How the bot plays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BotSettings {
    /// Its Go search budget (tic-tac-toe is a table lookup).
    pub budget: BotBudget,
    /// A seed for its choices; `None`: a fresh random one per game.
    pub seed: Option<u64>,
}

impl Default for BotSettings {
    /// [`DEFAULT_MOVE_TIME`] (200 ms) per 9×9 move, unseeded.
    fn default() -> Self {
        BotSettings {
            budget: BotBudget::Time(DEFAULT_MOVE_TIME),
            seed: None,
        }
    }
}

/// An arcade's configuration.
#[derive(Clone, Default)]
pub struct ArcadeConfig {
    /// How the bot plays.
    pub bot: BotSettings,
    /// Players that may be challenged while offline (the operator's configured principals);
    /// players seen online may always be.
    pub players: Vec<String>,
    /// How long ended records are reported (default: the SDK's, one hour).
    pub ended_ttl: Option<Duration>,
    /// The server's clock (default: the system's).
    pub clock: Option<Arc<dyn Clock>>,
    /// Where games, invitations and the lobby's challenges are kept across restarts
    /// (issue #15; default none: a restart forgets them). See `mcpl_server::Store`.
    pub store: Option<Arc<dyn Store>>,
    /// Where every table shows its game to spectators (issue #43; default none: games
    /// are seen only by their players). Serve it with [`spectate::web::serve`].
    pub gallery: Option<Arc<spectate::Gallery>>,
    /// Where the gallery keeps the finished games across restarts
    /// ([`spectate::Gallery::keep_in`]; default none: a restart forgets them).
    /// `mcpl-arcade serve` puts it beside its store.
    pub finished_file: Option<std::path::PathBuf>,
    /// How the arcade's actors reach those on other nodes (issue #41,
    /// `docs/ownership.md` §2: a game on its opener's node, its other player's principal
    /// on hers). Default none: nothing crosses servers.
    pub peers: Option<Arc<dyn mcpl_server::peers::Peers>>,
    /// Where a player an invitation brings may start (issue #41, `docs/ownership.md` §1:
    /// on the node holding her lease; see `ServerBuilder::placement`). Default none: on
    /// this node.
    pub placement: Option<Arc<dyn mcpl_server::Placement>>,
    /// Resume none of the games its store keeps when it starts (issue #41: a node of a
    /// cluster sharing one store runs only the games opened on it; see
    /// `ServerBuilder::resume_instances`). Default `false`: every game kept resumes.
    pub resume_nothing: bool,
    /// Asked before each game starts on this arcade, opened or adopted (issue #41: a
    /// node takes the game's lease there; `ServerBuilder::on_instance_start`). Default
    /// none: nothing asked.
    pub on_instance_start: Option<InstanceStartHook>,
}

/// A start hook for [`ArcadeConfig::on_instance_start`]: the instance's id, and how it
/// starts.
pub type InstanceStartHook =
    Arc<dyn Fn(u64, mcpl_server::InstanceStart) -> mcpl_server::StartFuture + Send + Sync>;

impl std::fmt::Debug for ArcadeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArcadeConfig")
            .field("bot", &self.bot)
            .field("players", &self.players)
            .field("ended_ttl", &self.ended_ttl)
            .field("store", &self.store.as_ref().map(|s| s.location()))
            .field("gallery", &self.gallery.is_some())
            .field("finished_file", &self.finished_file)
            .field("peers", &self.peers.is_some())
            .field("placement", &self.placement.is_some())
            .field("resume_nothing", &self.resume_nothing)
            .field("on_instance_start", &self.on_instance_start.is_some())
            .finish_non_exhaustive()
    }
}

/// The arcade: one [`Server`] and the state its lobby shares. Cheap to clone; every
/// listener serves the same arcade.
#[derive(Clone)]
pub struct Arcade {
    server: Server,
    shared: Arc<Shared>,
    arbiter: ArbiterHandle,
}

impl std::fmt::Debug for Arcade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arcade")
            .field("server", &self.server)
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}

impl Arcade {
    /// Builds the arcade; its sessions run on the current actix arbiter.
    ///
    /// # Panics
    ///
    /// Outside an actix arbiter (see the module docs).
    pub fn new(config: ArcadeConfig) -> Result<Arcade, BuildError> {
        Self::on(config, actix::Arbiter::current())
    }

    /// Builds the arcade with its sessions on `arbiter`.
    pub fn on(config: ArcadeConfig, arbiter: ArbiterHandle) -> Result<Arcade, BuildError> {
        // Every table publishes its game to a gallery: the spectator page's when one is
        // served, else the arcade's own, which its resources read (`offers.rs`).
        let gallery = config.gallery.unwrap_or_else(|| {
            spectate::Gallery::new(spectate::DEFAULT_QUEUE, spectate::DEFAULT_FINISHED_KEPT)
        });
        if let Some(path) = &config.finished_file {
            match gallery.keep_in(path) {
                Ok(n) => {
                    tracing::info!(path = %path.display(), games = n, "finished games read back")
                }
                Err(e) => tracing::warn!("{e}; the finished games of before are not shown"),
            }
        }
        let shared = Arc::new(Shared::new(config.bot).with_gallery(Some(gallery.clone())));
        // A new game never takes the number of one shown before a restart.
        shared.game_numbers_past(gallery.highest());
        for p in &config.players {
            shared.add_known(p.clone());
        }
        // The lobby's tools are listed after the games', as ever.
        let mut builder = Server::builder(SERVER_NAME, env!("CARGO_PKG_VERSION"))
            .instructions(INSTRUCTIONS)
            .surface("Arcade", "Go and tic-tac-toe against a bot or other agents")
            .toolset(tools::go_toolset(shared.clone()))
            .toolset(tools::tictactoe_toolset(shared.clone()))
            .toolset(lobby::lobby_toolset(shared.clone()));
        builder = offers::register(builder, gallery);
        if let Some(ttl) = config.ended_ttl {
            builder = builder.ended_ttl(ttl);
        }
        if let Some(clock) = config.clock {
            builder = builder.clock(clock);
        }
        if let Some(store) = config.store {
            builder = builder.store(store);
        }
        if let Some(peers) = config.peers {
            builder = builder.peers(peers);
        }
        if let Some(placement) = config.placement {
            builder = builder.placement(placement);
        }
        if config.resume_nothing {
            builder = builder.resume_instances(false);
        }
        if let Some(hook) = config.on_instance_start {
            builder = builder.on_instance_start(move |id, how| hook(id, how));
        }
        let server = builder.build()?;
        shared.set_server(server.clone());
        // Games read back resume now (a bot to move thinks, the page shows them), not when
        // a player comes back.
        server.start_on(&arbiter);
        Ok(Arcade {
            server,
            shared,
            arbiter,
        })
    }

    /// Tells the lobby who is online on the other nodes of a cluster (issue #41,
    /// `--ownership principal`: `node/online.rs` reads them from the lease table), listed
    /// beside those online here and challengeable like them; replaces what was told
    /// before. An arcade alone is never told: it lists those online here.
    pub fn set_online_elsewhere(&self, names: std::collections::BTreeSet<String>) {
        self.shared.set_online_elsewhere(names);
    }

    /// The server (for its manifest, catalog, session counts).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Serves one connection (from any thread); it counts as online while it lives.
    pub fn serve(&self, conn: Connection) -> SessionHandle {
        let session = self.server.serve_in(&self.arbiter, conn);
        self.shared.connected(session.principal());
        session
    }

    /// Lets `name` be challenged while offline.
    pub fn add_player(&self, name: impl Into<String>) {
        self.shared.add_known(name);
    }

    /// The named players online now (see `shared.rs` for what "online" means).
    pub fn online(&self) -> Vec<String> {
        self.shared.online()
    }
}

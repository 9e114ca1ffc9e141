//! `durable` (issue #15): what keeping games across restarts costs. The arcade is served on
//! WebSocket twice — in memory, and on a `redb` store in a temporary directory (every
//! change fsync'd before it is answered) — in alternating windows, and players play
//! tic-tac-toe against the bot (an instant bot, so the time is the server's and the
//! store's): moves per second each way and their ratio, the store's commits per move
//! (each one fsync; concurrent steps share them, issue #42 item 1), the steps they took
//! and their time. Then, durable, one player plays Go against the bot at its default time
//! budget: each move's answer must come within the budget's margin
//! ([`GO_MARGIN`]: the search takes the budget; the writes must not add much).

use super::PerfError;
use super::client;
use mcpl_games::arcade::{Arcade, ArcadeConfig, BotBudget, BotSettings, listen};
use mcpl_protocol::jsonrpc::{Id, Request};
use mcpl_server::{Loaded, RedbStore, Store, StoreError, Writes};
use mcpl_transport::ServerOptions;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A Go move against the bot is answered within its time budget times this.
pub const GO_MARGIN: f64 = 1.5;
/// Moves per second kept, at least this times those in memory (issue #42 item 1).
pub const TARGET_RATIO: f64 = 0.5;
/// The store's commits (each one fsync) per move kept, at most (issue #42 item 1:
/// concurrent steps share commits).
pub const TARGET_COMMITS_PER_MOVE: f64 = 1.2;

/// What `durable` measures with.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DurableConfig {
    /// Players, each its own connection and principal.
    pub players: usize,
    /// Each window.
    pub window: Duration,
    /// Windows each way, alternating (in memory, durable, in memory, …).
    pub rounds: usize,
    /// Go moves against the bot, durable.
    pub go_moves: usize,
    /// The bot's time budget per 9x9 move.
    pub bot_time: Duration,
}

impl Default for DurableConfig {
    fn default() -> Self {
        DurableConfig {
            players: 8,
            window: Duration::from_secs(2),
            rounds: 2,
            go_moves: 6,
            bot_time: crate::durable::default_bot_time(),
        }
    }
}

fn default_bot_time() -> Duration {
    mcpl_games::bot::DEFAULT_MOVE_TIME
}

/// The figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Durability {
    /// Moves per second with nothing kept.
    pub moves_per_sec_off: f64,
    /// Moves per second with every change kept.
    pub moves_per_sec_on: f64,
    /// Moves made with every change kept.
    pub moves_on: u64,
    /// The store's commits per move (each one transaction, fsync'd).
    pub writes_per_move: f64,
    /// Steps handed to the store per move (each an actor's records of one step; the
    /// commits group them).
    #[serde(default)]
    pub steps_per_move: f64,
    /// The store's commit time per move, in microseconds (on its writer thread).
    pub write_us_per_move: f64,
    /// Calls that failed (none should).
    pub failed: u64,
    /// The bot's budget per Go move, in milliseconds.
    pub bot_budget_ms: f64,
    /// Go moves against the bot made, durable.
    pub go_moves: usize,
    /// Their answers' time: median and slowest, in milliseconds.
    pub go_p50_ms: f64,
    /// The slowest.
    pub go_max_ms: f64,
}

impl Durability {
    /// Durable moves per second over in-memory ones.
    pub fn ratio(&self) -> f64 {
        if self.moves_per_sec_off > 0.0 {
            self.moves_per_sec_on / self.moves_per_sec_off
        } else {
            0.0
        }
    }

    /// Every Go move within [`GO_MARGIN`] times the budget, nothing failed, the ratio at
    /// least [`TARGET_RATIO`] and at most [`TARGET_COMMITS_PER_MOVE`] commits a move.
    pub fn met(&self) -> bool {
        self.failed == 0
            && self.go_moves > 0
            && self.go_max_ms <= self.bot_budget_ms * GO_MARGIN
            && self.ratio() >= TARGET_RATIO
            && self.writes_per_move <= TARGET_COMMITS_PER_MOVE
    }
}

/// A store that times and counts its commits, and the steps they took.
struct Timed {
    inner: RedbStore,
    writes: AtomicU64,
    steps: AtomicU64,
    nanos: AtomicU64,
}

impl Timed {
    fn time<T>(&self, steps: usize, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        let nanos = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.steps.fetch_add(steps as u64, Ordering::Relaxed);
        out
    }
}

impl Store for Timed {
    fn load(&self) -> Result<Loaded, StoreError> {
        self.inner.load()
    }
    fn commit(&self, steps: &[Writes]) -> Result<(), StoreError> {
        self.time(steps.len(), || self.inner.commit(steps))
    }
    fn location(&self) -> String {
        self.inner.location()
    }
    fn reserve_instance_ids(&self, count: u64) -> Result<std::ops::Range<u64>, StoreError> {
        self.inner.reserve_instance_ids(count)
    }
}

/// The arcade served on WebSocket (in memory, or on `store`), with `players` tokens.
async fn arcade(
    store: Option<Arc<Timed>>,
    bot: BotSettings,
    players: &[String],
) -> Result<(Arcade, listen::Listener), PerfError> {
    let arcade = Arcade::new(ArcadeConfig {
        bot,
        players: players.to_vec(),
        store: store.map(|s| s as Arc<dyn Store>),
        ..Default::default()
    })?;
    let mut opts = ServerOptions {
        ws_ping_interval: None,
        ..Default::default()
    };
    for p in players {
        opts.tokens.insert(p.clone(), p.clone());
    }
    let addr: SocketAddr = ([127, 0, 0, 1], 0).into();
    let listener = listen::ws(&arcade, addr, Arc::new(opts)).await?;
    Ok((arcade, listener))
}

/// A client that sends a request and waits for its result (an error answer is
/// [`PerfError::Refused`]): a WebSocket connection here, a Streamable HTTP session through
/// a load balancer in `cluster.rs`. Each numbers its own requests.
pub(crate) trait Caller: Send {
    /// `method` with `params`: its result.
    fn ask(
        &mut self,
        method: &str,
        params: Value,
    ) -> impl Future<Output = Result<Value, PerfError>> + Send;
}

/// A WebSocket connection and its next request id.
struct WsCaller {
    conn: mcpl_transport::Connection,
    next: i64,
}

impl Caller for WsCaller {
    async fn ask(&mut self, method: &str, params: Value) -> Result<Value, PerfError> {
        self.next += 1;
        let req = Request {
            id: Id::Number(self.next),
            method: method.to_owned(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(&params)),
        };
        client::request(&mut self.conn, req).await
    }
}

pub(crate) fn call(tool: &str, args: Value, instance: &str) -> Value {
    json!({"name": tool, "arguments": args, "_meta": {"mcpl/instance": instance}})
}

pub(crate) fn text(v: &Value) -> &str {
    v.pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// One player's tic-tac-toe games against the bot until `until`, each opened as
/// `PREFIX1`, `PREFIX2`, …: moves made, calls failed. Every game is played to its end
/// but the last, which is left where `until` found it.
pub(crate) async fn play_tictactoe<C: Caller>(
    caller: &mut C,
    prefix: &str,
    until: Instant,
) -> Result<(u64, u64), PerfError> {
    let (mut moves, mut failed, mut game) = (0u64, 0u64, 0u32);
    'games: while Instant::now() < until {
        game += 1;
        let name = format!("{prefix}{game}");
        caller
            .ask(
                "toolsets/open",
                json!({"toolset": "tictactoe", "instance": name}),
            )
            .await?;
        loop {
            let mut played = false;
            for cell in ["b2", "a1", "c3", "a3", "c1", "a2", "b1", "b3", "c2"] {
                let r = caller
                    .ask(
                        "tools/call",
                        call("tictactoe_play", json!({"move": cell}), &name),
                    )
                    .await?;
                if r["isError"] == true {
                    continue; // taken: the next cell
                }
                moves += 1;
                played = true;
                let t = text(&r);
                if t.contains("wins") || t.contains("draw") || t.contains("Draw") {
                    continue 'games;
                }
                break;
            }
            if !played {
                failed += 1;
                continue 'games;
            }
            if Instant::now() >= until {
                break 'games;
            }
        }
    }
    Ok((moves, failed))
}

/// A player on a WebSocket connection of its own: [`play_tictactoe`].
async fn play_on_ws(url: String, who: String, until: Instant) -> Result<(u64, u64), PerfError> {
    let mut conn = client::connect(&url, &who).await?;
    client::handshake(&mut conn, true).await?;
    let mut caller = WsCaller { conn, next: 1 };
    play_tictactoe(&mut caller, "t", until).await
}

/// Moves per second of `players` playing for `window`.
async fn window(
    clients: &tokio::runtime::Handle,
    url: &str,
    players: &[String],
    window: Duration,
) -> Result<(u64, u64, Duration), PerfError> {
    let until = Instant::now() + window;
    let started = Instant::now();
    let tasks: Vec<_> = players
        .iter()
        .map(|p| clients.spawn(play_on_ws(url.to_owned(), p.clone(), until)))
        .collect();
    let (mut moves, mut failed) = (0, 0);
    for t in tasks {
        let (m, f) = t
            .await
            .map_err(|_| PerfError::Internal("a player's task panicked"))??;
        moves += m;
        failed += f;
    }
    Ok((moves, failed, started.elapsed()))
}

/// Go against the bot at its time budget, durable: each move's answer time.
async fn go_moves(url: String, moves: usize) -> Result<Vec<Duration>, PerfError> {
    let mut conn = client::connect(&url, "go-player").await?;
    client::handshake(&mut conn, true).await?;
    let mut caller = WsCaller { conn, next: 1 };
    caller
        .ask("toolsets/open", json!({"toolset": "go", "instance": "g1"}))
        .await?;
    let mut times = Vec::new();
    let points = [
        "E5", "C3", "G7", "C7", "G3", "E3", "E7", "C5", "G5", "D4", "F6", "D6", "F4",
    ];
    for p in points {
        if times.len() >= moves {
            break;
        }
        let start = Instant::now();
        let r = caller
            .ask("tools/call", call("go_play", json!({"move": p}), "g1"))
            .await?;
        if r["isError"] == true {
            continue;
        }
        times.push(start.elapsed());
        if !text(&r).contains("bot (White) ") {
            break; // the game ended
        }
    }
    Ok(times)
}

/// Measures. See the module docs.
pub async fn run(
    config: &DurableConfig,
    clients: &tokio::runtime::Handle,
) -> Result<Durability, PerfError> {
    let dir = tempfile::tempdir()?;
    let open = |name: &str| -> Result<Arc<Timed>, PerfError> {
        let inner = RedbStore::open_dir(&dir.path().join(name))
            .map_err(|e| PerfError::Io(std::io::Error::other(e.to_string())))?;
        Ok(Arc::new(Timed {
            inner,
            writes: AtomicU64::new(0),
            steps: AtomicU64::new(0),
            nanos: AtomicU64::new(0),
        }))
    };
    let mut players: Vec<String> = (0..config.players.max(1))
        .map(|i| format!("d{i}"))
        .collect();
    let instant = BotSettings {
        budget: BotBudget::Playouts(16),
        seed: Some(1),
    };
    let mut out = Durability::default();
    let (mut off, mut on) = ((0u64, Duration::ZERO), (0u64, Duration::ZERO));
    let (mut writes, mut steps, mut nanos) = (0u64, 0u64, 0u64);
    for round in 0..config.rounds.max(1) {
        for durable in [false, true] {
            let store = if durable {
                Some(open(&format!("r{round}"))?)
            } else {
                None
            };
            let (_arcade, listener) = arcade(store.clone(), instant, &players).await?;
            let (moves, failed, took) =
                window(clients, listener.url(), &players, config.window).await?;
            out.failed += failed;
            let side = if durable { &mut on } else { &mut off };
            side.0 += moves;
            side.1 += took;
            if let Some(s) = store {
                writes += s.writes.load(Ordering::Relaxed);
                steps += s.steps.load(Ordering::Relaxed);
                nanos += s.nanos.load(Ordering::Relaxed);
            }
        }
    }
    let rate = |(m, t): (u64, Duration)| m as f64 / t.as_secs_f64().max(f64::EPSILON);
    out.moves_per_sec_off = rate(off);
    out.moves_per_sec_on = rate(on);
    out.moves_on = on.0;
    if on.0 > 0 {
        out.writes_per_move = writes as f64 / on.0 as f64;
        out.steps_per_move = steps as f64 / on.0 as f64;
        out.write_us_per_move = nanos as f64 / 1000.0 / on.0 as f64;
    }
    // Go against the bot at its time budget, durable.
    players.push("go-player".to_owned());
    let bot = BotSettings {
        budget: BotBudget::Time(config.bot_time),
        seed: Some(1),
    };
    let (_arcade, listener) = arcade(Some(open("go")?), bot, &players).await?;
    let url = listener.url().to_owned();
    let moves = config.go_moves;
    let mut times = clients
        .spawn(go_moves(url, moves))
        .await
        .map_err(|_| PerfError::Internal("the Go player's task panicked"))??;
    times.sort();
    out.bot_budget_ms = config.bot_time.as_secs_f64() * 1000.0;
    out.go_moves = times.len();
    out.go_p50_ms = times
        .get(times.len() / 2)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    out.go_max_ms = times.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    Ok(out)
}

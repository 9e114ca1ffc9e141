//! `cluster` (issue #41): what running the arcade as several nodes on PostgreSQL and NATS
//! costs, against one embedded arcade measured in the same run.
//!
//! **The clusters** are the simulator's (`sim::nodes`), two of them, one per ownership
//! mode (`docs/ownership.md`), each `nodes` (three) `mcpl-arcade serve --postgres URL
//! --nats URL --node NAME --ownership MODE` processes on a PostgreSQL and a `nats-server`
//! of its own (`mcpl_testkit`: loopback, free ports, stopped by their ids), behind a
//! sim load balancer of its own ([`Balancer`]) in round robin ([`Balance::RoundRobin`],
//! what `docs/cluster-haproxy.cfg` does; the load here is POSTs only, which both balances
//! send alike). **`arcade`** (the coarse mode): one node owns the arcade, so two requests
//! in three reach a standby, which forwards them over NATS to the owner; the owner commits
//! each change to PostgreSQL before it answers. **`principal`**: each node serves the
//! players whose leases it holds (taken by a player's first request, where it landed), so
//! a request landing elsewhere (two in three, round robin) is forwarded to her node; each
//! answer names the node whose front it landed on (`mcpl-landed-on`) and the node whose
//! arcade served it (`mcpl-served-by`), and the figures count both kinds.
//!
//! **The floor** is one embedded node: the same `mcpl-arcade` binary, `serve` with its
//! default store (`redb` in a data directory of the run's own, every commit fsync'd) and
//! no PostgreSQL or NATS, behind a balancer of its own with that one node — so both sides
//! pay the same client and the same balancer hop (a connection of its own per request),
//! and the ratio is the cost of the nodes, the forwarding and PostgreSQL. Same machine,
//! same players, same bot (seed, playouts), started together; the windows alternate
//! (arcade, principal, floor, arcade…), so what else the machine does falls on all alike.
//!
//! **The load**, the same on both: `players` clients, each a legacy Streamable HTTP session
//! (MCP 2025-11-25: `initialize`, then every POST with its `Mcp-Session-Id`; the session
//! lives on the owner, any node forwards its requests) with one request in flight. A
//! **move** is a `tictactoe_play` answered with the bot's reply (`durable.rs`'s games:
//! each played to its end, the next opened). A **light call** is `tictactoe_board` on a
//! game opened beforehand: a read through the whole stack that changes nothing.
//!
//! **Commits per move** are counted by PostgreSQL: its transaction id counter
//! (`pg_snapshot_xmax(pg_current_snapshot())`, the next id to be given out) is read before
//! and after each window. Every transaction that writes draws one id (a read-only one
//! none; a rolled-back one would count too, and none should roll back here), and the
//! counter is exact at once, where `pg_stat_database.xact_commit` is flushed by each
//! backend at most once a second and by an idle one only after ten. Besides the moves'
//! commits the nodes write their lease (the owner renews it three times per time to live);
//! that background is read over the other sides' windows, when that cluster has no load
//! (each cluster has a PostgreSQL of its own), and taken off the move windows' count at
//! the same rate. The move windows' commits include
//! opening each new game: what playing costs. With one player each move is a commit of its
//! own (and the bot's reply, a step of its own, another); with several, concurrent steps
//! share commits (the commit queue's group commit, issue #42).
//!
//! **Skipped**, saying why, when PostgreSQL's or NATS's binaries are not on this machine
//! (`mcpl_testkit::postgres::bindir`, `mcpl_testkit::nats::binary`: `.ci/run` installs
//! both) or the `mcpl-arcade` binary is not built.

use super::PerfError;
use super::durable::{Caller, call, play_tictactoe, text};
use super::http_load::{HttpSession, texts};
use mcpl_protocol::jsonrpc::{Id, Message, Request};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sim::nodes::{Balance, Balancer, Cluster, Ownership, Upstream};
use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a request may wait for its answer before the run counts as stalled.
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// How long the embedded node may take to say where it listens.
const START_LIMIT: Duration = Duration::from_secs(30);

/// The name of the instance each player's light calls read.
const LIGHT_GAME: &str = "light";

/// What `cluster` measures with.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterConfig {
    /// Nodes in the cluster.
    pub nodes: usize,
    /// Players, each a session of its own on each side, one request in flight.
    pub players: usize,
    /// Each window.
    pub window: Duration,
    /// Windows of each kind (moves, light calls) on each side, alternating.
    pub rounds: usize,
    /// The bot's Go playouts (tic-tac-toe's bot is instant either way).
    pub bot_playouts: u32,
    /// The `mcpl-arcade` binary; `None`: beside this program (`sim::nodes::default_binary`).
    pub arcade_bin: Option<PathBuf>,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            nodes: 3,
            players: 8,
            window: Duration::from_secs(2),
            rounds: 3,
            bot_playouts: 16,
            arcade_bin: None,
        }
    }
}

/// One cluster's figures: the three nodes in one ownership mode (module docs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModeFigures {
    /// `arcade` (one node runs everything) or `principal` (each node its own players).
    pub ownership: String,
    /// Moves per second.
    pub moves_per_sec: f64,
    /// Light calls per second.
    pub light_per_sec: f64,
    /// Moves made.
    pub moves: u64,
    /// Light calls answered.
    pub light_calls: u64,
    /// Calls that failed (none should): a game that took no move, a light call answered
    /// with an error.
    pub failed: u64,
    /// Transaction ids this cluster's PostgreSQL gave out during its move windows.
    pub xids_in_moves: u64,
    /// Transaction ids per second with no load on this cluster (over the other sides'
    /// windows): the leases.
    pub background_xids_per_sec: f64,
    /// Transaction ids per second during its light windows (reads: about the background).
    pub xids_per_sec_in_light: f64,
    /// PostgreSQL commits per move: the move windows' ids less the background, per move.
    pub commits_per_move: f64,
    /// Answers whose node's front they landed on served them itself (`mcpl-landed-on` the
    /// same as `mcpl-served-by`).
    pub served_where_landed: u64,
    /// Answers forwarded: served by another node than the one they landed on.
    pub forwarded: u64,
    /// Answers that named no landing node or no serving node (the coarse mode's fronts
    /// mark neither on what the owner serves itself, nor where a request landed).
    pub unmarked: u64,
}

impl ModeFigures {
    /// Counts whole: moves and light calls made, nothing failed.
    fn complete(&self) -> bool {
        self.failed == 0 && self.moves > 0 && self.light_calls > 0
    }
}

/// The figures (module docs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterFigures {
    /// Why nothing was measured (binaries missing), if so.
    pub skipped: Option<String>,
    /// Nodes in each cluster.
    pub nodes: usize,
    /// Players on each side.
    pub players: usize,
    /// The nodes in `--ownership arcade`: one runs everything, the others forward to it.
    pub arcade: ModeFigures,
    /// The nodes in `--ownership principal`: each serves the players whose leases it holds.
    pub principal: ModeFigures,
    /// Moves per second on the embedded node.
    pub floor_moves_per_sec: f64,
    /// Light calls per second on the embedded node.
    pub floor_light_per_sec: f64,
    /// Moves made on the embedded node.
    pub floor_moves: u64,
    /// Light calls answered on the embedded node.
    pub floor_light_calls: u64,
    /// Calls that failed, on any side (none should).
    pub failed: u64,
    /// How the floor was built, for the report.
    pub floor: String,
}

impl ClusterFigures {
    /// Nothing measured, and why.
    fn skipped(config: &ClusterConfig, why: String) -> Self {
        ClusterFigures {
            skipped: Some(why),
            nodes: config.nodes,
            players: config.players,
            ..Default::default()
        }
    }

    /// Counts whole: something measured on every side, nothing failed.
    pub fn complete(&self) -> bool {
        self.skipped.is_none()
            && self.failed == 0
            && self.arcade.complete()
            && self.principal.complete()
            && self.floor_moves > 0
            && self.floor_light_calls > 0
    }
}

/// Why the cluster cannot be measured on this machine, if it cannot: PostgreSQL's or
/// NATS's binaries are missing.
pub fn missing() -> Option<String> {
    missing_of(
        mcpl_testkit::postgres::bindir().is_some(),
        mcpl_testkit::nats::binary().is_some(),
    )
}

/// The reason to skip, given whether PostgreSQL's and NATS's binaries were found.
fn missing_of(pg: bool, nats: bool) -> Option<String> {
    let what = match (pg, nats) {
        (true, true) => return None,
        (false, true) => "PostgreSQL's initdb and postgres were",
        (true, false) => "nats-server was",
        (false, false) => "PostgreSQL's initdb and postgres, and nats-server, were",
    };
    Some(format!(
        "skipped: {what} not found (pg_config --bindir, /usr/lib/postgresql/*/bin, PATH; \
         /usr/sbin/nats-server): install Debian's postgresql and nats-server packages"
    ))
}

/// Where a side's answers were served against where they landed (module docs).
#[derive(Debug, Clone, Copy, Default)]
struct Landings {
    /// Served by the node they landed on.
    here: u64,
    /// Served by another.
    forwarded: u64,
    /// Naming either node not.
    unmarked: u64,
}

impl Landings {
    fn count(&mut self, served_by: Option<&str>, landed_on: Option<&str>) {
        match (served_by, landed_on) {
            (Some(s), Some(l)) if s == l => self.here += 1,
            (Some(_), Some(_)) => self.forwarded += 1,
            _ => self.unmarked += 1,
        }
    }

    fn add(&mut self, other: Landings) {
        self.here += other.here;
        self.forwarded += other.forwarded;
        self.unmarked += other.unmarked;
    }
}

/// A Streamable HTTP session, its next request id, and where its answers were served.
struct HttpCaller {
    session: HttpSession,
    next: i64,
    landings: Landings,
}

impl Caller for HttpCaller {
    async fn ask(&mut self, method: &str, params: Value) -> Result<Value, PerfError> {
        self.next += 1;
        let id = Id::Number(self.next);
        let req = Request {
            id: id.clone(),
            method: method.to_owned(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(&params)),
        };
        let body = Message::from(req).encode();
        let HttpSession { headers, lanes } = &mut self.session;
        let lane = lanes
            .first_mut()
            .ok_or(PerfError::Internal("a session with no lane"))?;
        let reply = tokio::time::timeout(CALL_LIMIT, lane.post(headers, body.as_bytes()))
            .await
            .map_err(|_| PerfError::Stalled("a call through the balancer got no answer"))?
            .map_err(|e| PerfError::Refused {
                method: method.to_owned(),
                reason: e.to_string(),
            })?;
        let refused = |reason: String| PerfError::Refused {
            method: method.to_owned(),
            reason,
        };
        self.landings
            .count(reply.served_by.as_deref(), reply.landed_on.as_deref());
        if reply.status != 200 {
            let body = String::from_utf8_lossy(&reply.body);
            return Err(refused(format!("HTTP {}: {body}", reply.status)));
        }
        for t in texts(reply.sse, &reply.body) {
            if let Ok(Message::Response(r)) = Message::decode_str(&t)
                && r.id.as_ref() == Some(&id)
            {
                return r.result_value().map_err(|e| refused(e.to_string()));
            }
        }
        Err(refused("no answer in the reply".to_owned()))
    }
}

/// One side: a balancer's URL and a session per player.
struct Side {
    url: String,
    players: Vec<HttpCaller>,
}

impl Side {
    /// A session per player at `url`, each with its light game open.
    async fn open(url: String, players: &[String]) -> Result<Side, PerfError> {
        let mut callers = Vec::with_capacity(players.len());
        for p in players {
            let session = HttpSession::open(&url, p, 1).await?;
            let mut caller = HttpCaller {
                session,
                next: 0,
                landings: Landings::default(),
            };
            caller
                .ask(
                    "toolsets/open",
                    json!({"toolset": "tictactoe", "instance": LIGHT_GAME}),
                )
                .await?;
            callers.push(caller);
        }
        Ok(Side {
            url,
            players: callers,
        })
    }

    /// Where its answers were served against where they landed, since it opened.
    fn landings(&self) -> Landings {
        let mut all = Landings::default();
        for p in &self.players {
            all.add(p.landings);
        }
        all
    }

    /// Every player at once until `window` passes, each doing `what`: the count done and
    /// failed, and the time taken (until the last player's last answer).
    async fn window(
        &mut self,
        what: Work,
        window: Duration,
        name: &str,
    ) -> Result<(u64, u64, Duration), PerfError> {
        let started = Instant::now();
        let until = started + window;
        let tasks: Vec<_> = std::mem::take(&mut self.players)
            .into_iter()
            .map(|mut c| {
                let prefix = name.to_owned();
                tokio::spawn(async move {
                    let done = match what {
                        Work::Moves => play_tictactoe(&mut c, &prefix, until).await,
                        Work::Light => light_calls(&mut c, until).await,
                    };
                    (c, done)
                })
            })
            .collect();
        let (mut done, mut failed, mut error) = (0, 0, None);
        for t in tasks {
            let (c, result) = t
                .await
                .map_err(|_| PerfError::Internal("a player's task panicked"))?;
            self.players.push(c);
            match result {
                Ok((d, f)) => {
                    done += d;
                    failed += f;
                }
                Err(e) => error = Some(e),
            }
        }
        if let Some(e) = error {
            return Err(e);
        }
        Ok((done, failed, started.elapsed()))
    }
}

/// What a window's players do.
#[derive(Debug, Clone, Copy)]
enum Work {
    Moves,
    Light,
}

/// `tictactoe_board` on the player's light game until `until`: answered, failed.
async fn light_calls<C: Caller>(caller: &mut C, until: Instant) -> Result<(u64, u64), PerfError> {
    let (mut answered, mut failed) = (0, 0);
    while Instant::now() < until {
        let r = caller
            .ask("tools/call", call("tictactoe_board", json!({}), LIGHT_GAME))
            .await?;
        if r["isError"] == true || text(&r).is_empty() {
            failed += 1;
        } else {
            answered += 1;
        }
    }
    Ok((answered, failed))
}

/// The embedded node: `mcpl-arcade serve` on its default store, stopped by its own id
/// when dropped (with its data directory).
struct Embedded {
    child: Child,
    http: SocketAddr,
    ws: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Embedded {
    /// Starts `binary` with the players' tokens and the bot as the cluster's nodes have
    /// it, and returns once it says where it listens.
    async fn start(
        binary: &Path,
        players: &[String],
        bot_playouts: u32,
    ) -> Result<Self, PerfError> {
        let dir = tempfile::Builder::new()
            .prefix("sim-perf-embedded-")
            .tempdir()?;
        let tokens = dir.path().join("tokens.txt");
        let lines: String = players.iter().map(|p| format!("{p}={p}\n")).collect();
        std::fs::write(&tokens, lines)?;
        let mut child = Command::new(binary)
            .args(["serve", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0"])
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .arg("--tokens-file")
            .arg(&tokens)
            .args(["--bot-playouts", &bot_playouts.to_string(), "--seed", "1"])
            .env("RUST_LOG", "error")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(PerfError::Child)?;
        let stdout = child.stdout.take();
        // Read on a thread of its own: `listening on URL` for each listener. The rest is
        // not read: the pipe closes.
        let said = tokio::task::spawn_blocking(move || {
            let (mut http, mut ws) = (None, None);
            for line in BufReader::new(stdout?).lines() {
                let line = line.ok()?;
                let Some(at) = line.strip_prefix("listening on ") else {
                    continue;
                };
                if let Some(a) = at.strip_prefix("http://") {
                    http = a.trim_end_matches("/mcp").parse::<SocketAddr>().ok();
                } else if let Some(a) = at.strip_prefix("ws://") {
                    ws = a.trim_end_matches('/').parse::<SocketAddr>().ok();
                }
                if let (Some(h), Some(w)) = (http, ws) {
                    return Some((h, w));
                }
            }
            None
        });
        let mut node = Embedded {
            child,
            http: ([127, 0, 0, 1], 0).into(),
            ws: ([127, 0, 0, 1], 0).into(),
            _dir: dir,
        };
        match tokio::time::timeout(START_LIMIT, said).await {
            Ok(Ok(Some((http, ws)))) => {
                node.http = http;
                node.ws = ws;
                Ok(node)
            }
            _ => Err(PerfError::MeasureFailed {
                measure: "cluster",
                reason: format!(
                    "the embedded node ({}) did not say where it listens",
                    binary.display()
                ),
            }),
        }
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        // By its own id (SIGKILL), then reaped.
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// PostgreSQL's next transaction id (module docs).
async fn next_xid(url: &str) -> Result<u64, PerfError> {
    let url = url.to_owned();
    let failed = |reason: String| PerfError::MeasureFailed {
        measure: "cluster",
        reason: format!("reading PostgreSQL's transaction id counter: {reason}"),
    };
    tokio::task::spawn_blocking(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls)?;
        let row = client.query_one(
            "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint",
            &[],
        )?;
        Ok::<i64, postgres::Error>(row.get(0))
    })
    .await
    .map_err(|e| failed(e.to_string()))?
    .map(|x| u64::try_from(x).unwrap_or(0))
    .map_err(|e| failed(e.to_string()))
}

/// Measures (module docs). Runs on a tokio runtime (the clients'), where the balancers
/// serve too.
pub async fn run(config: &ClusterConfig) -> Result<ClusterFigures, PerfError> {
    if let Some(why) = missing() {
        return Ok(ClusterFigures::skipped(config, why));
    }
    let binary = config
        .arcade_bin
        .clone()
        .unwrap_or_else(sim::nodes::default_binary);
    if !binary.is_file() {
        return Ok(ClusterFigures::skipped(
            config,
            format!(
                "skipped: the mcpl-arcade binary was not found at {} (build it: cargo build \
                 [--release] -p mcpl-games --bin mcpl-arcade)",
                binary.display()
            ),
        ));
    }
    let players: Vec<String> = (0..config.players.max(1))
        .map(|i| format!("p{i}"))
        .collect();
    let nodes = config.nodes.max(1);
    let modes = [Ownership::Arcade, Ownership::Principal];
    let mut clusters = Vec::with_capacity(modes.len());
    for ownership in modes {
        let cluster = Cluster::start(sim::nodes::ClusterConfig {
            binary: binary.clone(),
            nodes,
            players: players.clone(),
            bot_playouts: config.bot_playouts,
            seed: 1,
            ownership,
        })
        .await
        .map_err(|e| PerfError::MeasureFailed {
            measure: "cluster",
            reason: format!("the nodes in --ownership {}: {e}", ownership.name()),
        })?;
        let front = Balancer::start(cluster.upstreams(), Balance::RoundRobin).await?;
        clusters.push((cluster, front));
    }
    let pgs: Vec<String> = clusters.iter().map(|(c, _)| c.postgres_url()).collect();
    let embedded = Embedded::start(&binary, &players, config.bot_playouts).await?;
    let floor_front = Balancer::start(
        vec![Upstream {
            http: embedded.http,
            ws: embedded.ws,
        }],
        Balance::RoundRobin,
    )
    .await?;
    let url = |b: &Balancer| format!("http://{}/mcp", b.http_addr());
    // The clusters' sides, then the floor's (the last).
    let mut sides = Vec::with_capacity(clusters.len() + 1);
    for (_, front) in &clusters {
        sides.push(Side::open(url(front), &players).await?);
    }
    sides.push(Side::open(url(&floor_front), &players).await?);
    let floor_side = sides.len() - 1;
    // The landings of opening the sessions are not the load's.
    let opened: Vec<Landings> = sides.iter().map(Side::landings).collect();
    let mut out = ClusterFigures {
        nodes,
        players: players.len(),
        floor: format!(
            "one embedded node: the same mcpl-arcade, serve on its default redb store \
             (fsync'd), no PostgreSQL or NATS, behind a balancer of its own ({})",
            sides[floor_side].url
        ),
        ..Default::default()
    };
    // Per side and kind: done, failed, time.
    let mut moves = vec![(0u64, 0u64, Duration::ZERO); sides.len()];
    let mut light = vec![(0u64, 0u64, Duration::ZERO); sides.len()];
    // Per cluster: ids in its move windows, in its light windows, and in the others'
    // windows (its background) with their time.
    let mut xids = vec![(0u64, 0u64, 0u64, Duration::ZERO); pgs.len()];
    for round in 0..config.rounds.max(1) {
        for work in [Work::Moves, Work::Light] {
            for (i, side) in sides.iter_mut().enumerate() {
                let mut before = Vec::with_capacity(pgs.len());
                for pg in &pgs {
                    before.push(next_xid(pg).await?);
                }
                let (done, failed, took) = side
                    .window(work, config.window, &format!("r{round}-"))
                    .await?;
                out.failed += failed;
                let totals = match work {
                    Work::Moves => &mut moves[i],
                    Work::Light => &mut light[i],
                };
                totals.0 += done;
                totals.1 += failed;
                totals.2 += took;
                for (c, pg) in pgs.iter().enumerate() {
                    let drawn = next_xid(pg).await?.saturating_sub(before[c]);
                    let x = &mut xids[c];
                    match (c == i, work) {
                        (true, Work::Moves) => x.0 += drawn,
                        (true, Work::Light) => x.1 += drawn,
                        (false, _) => {
                            x.2 += drawn;
                            x.3 += took;
                        }
                    }
                }
            }
        }
    }
    let rate = |n: u64, t: Duration| n as f64 / t.as_secs_f64().max(f64::EPSILON);
    for (c, ownership) in modes.iter().enumerate() {
        let (m, l, x) = (moves[c], light[c], xids[c]);
        let landed = sides[c].landings();
        let mut mode = ModeFigures {
            ownership: ownership.name().to_owned(),
            moves_per_sec: rate(m.0, m.2),
            light_per_sec: rate(l.0, l.2),
            moves: m.0,
            light_calls: l.0,
            failed: m.1 + l.1,
            xids_in_moves: x.0,
            background_xids_per_sec: rate(x.2, x.3),
            xids_per_sec_in_light: rate(x.1, l.2),
            served_where_landed: landed.here - opened[c].here,
            forwarded: landed.forwarded - opened[c].forwarded,
            unmarked: landed.unmarked - opened[c].unmarked,
            ..Default::default()
        };
        if mode.moves > 0 {
            let background = mode.background_xids_per_sec * m.2.as_secs_f64();
            mode.commits_per_move = (x.0 as f64 - background).max(0.0) / mode.moves as f64;
        }
        match ownership {
            Ownership::Arcade => out.arcade = mode,
            Ownership::Principal => out.principal = mode,
        }
    }
    let (m, l) = (moves[floor_side], light[floor_side]);
    out.floor_moves_per_sec = rate(m.0, m.2);
    out.floor_light_per_sec = rate(l.0, l.2);
    (out.floor_moves, out.floor_light_calls) = (m.0, l.0);
    // The sessions, balancers, embedded node and clusters stop as they drop (each process
    // by its own id).
    drop(sides);
    drop((floor_front, embedded, clusters));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each missing binary is named in the reason to skip, with what to install.
    #[test]
    fn the_reason_to_skip_names_what_is_missing() {
        assert_eq!(missing_of(true, true), None);
        let pg = missing_of(false, true).unwrap_or_default();
        assert!(
            pg.contains("initdb") && !pg.contains("nats-server,"),
            "{pg}"
        );
        let nats = missing_of(true, false).unwrap_or_default();
        assert!(
            nats.starts_with("skipped: nats-server was not found"),
            "{nats}"
        );
        let both = missing_of(false, false).unwrap_or_default();
        assert!(both.contains("postgres, and nats-server"), "{both}");
        for why in [pg, nats, both] {
            assert!(
                why.contains("install Debian's postgresql and nats-server"),
                "{why}"
            );
        }
    }
}

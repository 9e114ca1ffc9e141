//! `sim --nodes N` (issue #41): the arcade as N `mcpl-arcade serve --postgres URL --nats URL
//! --node NAME [--ownership arcade|principal]` processes on a PostgreSQL and a `nats-server` of the run's own (both on
//! loopback and free ports, `mcpl_testkit`), behind a load balancer in process
//! ([`balancer`]); the agents reach the balancer (through the chaos proxies).
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`Cluster`]: the processes, started, killed and started again by their own ids; the games running at an owner's death, read from PostgreSQL |
//! | `balancer` | [`Balancer`]: round robin for every request and connection, as `docs/cluster-haproxy.cfg` ([`Balance::RoundRobin`], standbys tunnel to the owner), or streams and WebSocket to the owner ([`Balance::Owner`]) |
//!
//! **The chaos** ([`Cluster::kill`]; **\[project\]**: no spec speaks of a simulator): a
//! node is killed with SIGKILL by its own process id (often the owner: the first death of
//! a run always is) and started again at once on the same ports, where it stands by; when
//! the owner died, another node takes the arcade's lease over once it expires
//! ([`LEASE_TTL`]) and reads every game back from PostgreSQL. A death is **survived** when
//! the arcade is served again after it: a node said it owns the arcade after an owner's
//! death, or the node started again said its role after a standby's. NATS is killed and
//! started again on its port ([`Cluster::restart_nats`]), and PostgreSQL stopped at once
//! (`-m immediate`) and started again ([`Cluster::restart_postgres`]). A node that ends by itself (one
//! that lost the lease stops at once, exit status 3) is started again at the next look
//! ([`Cluster::revive`]).
//!
//! **No game lost** ([`Cluster::resumed`], **\[project\]**): the games running when an
//! owner died are read from PostgreSQL just after its death (as
//! [`crate::arcade::SimStore::running`] reads the in-process store: games linked to a
//! principal, not ended); at the end none may have been ended by a takeover — told to a
//! player as ended with the server's "the server restarted, and …" reasons (a game that
//! ended since is forgotten by the store, so its players' ended records are what is read).
//!
//! **`--ownership principal`** ([`Ownership::Principal`], every node given the flag):
//! every node serves the players whose leases `(principal, NAME)` it holds, each taken
//! where her first request lands, and runs their games (`docs/ownership.md` §1); there is
//! no owner and no standby, and each node says once a life that it serves. The first death
//! is the node running the most games as PostgreSQL's leases say (then the one serving
//! the most players), the later ones it or another as the seed picks. A death is
//! **survived** when the node started again said it serves and every player whose lease it
//! held at its death is leased again (a new token: by the node her next request reached,
//! or by the node started again, which takes its own name's leases back at once) — read
//! from the leases' table every `LEASE_LOOK` until [`START_LIMIT`]. The games "running
//! at the death" are those it ran (its instance leases, or, not leased yet, a player's);
//! none may be ended by the takeover, as above.
//!
//! Every process is stopped by its own id at the end, also when the run fails
//! (`Drop`).

use crate::report::NodeTotals;
use mcpl_cluster::PgStore;
use mcpl_cluster::leases::{INSTANCE, PRINCIPAL};
use mcpl_server::Store as _;
use mcpl_testkit::nats::Nats;
use mcpl_testkit::postgres::Postgres;
use std::collections::BTreeSet;
use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

pub mod balancer;

pub use balancer::{Balance, Balancer, Upstream};

/// The lease's time to live the nodes run with: a dead owner is replaced about this long
/// after its last renewal.
pub const LEASE_TTL: Duration = Duration::from_millis(1500);

/// How long a node may take to listen, and the arcade to be served again after a death.
pub const START_LIMIT: Duration = Duration::from_secs(30);

/// How many lines of a node's stderr are kept, for a failure's message.
const LOG_KEPT: usize = 40;

/// What the role lines of the nodes say (`games/src/bin/mcpl-arcade.rs`): with
/// `--ownership arcade`, each change of role; with `--ownership principal`, once a life,
/// when it serves.
const OWNS: &str = "owns the arcade and serves it";
const STANDS_BY: &str = "stands by";
const SERVES: &str = "serves the players whose leases it holds";

/// How often PostgreSQL's leases are read while waiting for a dead node's players to be
/// served again (`--ownership principal`).
const LEASE_LOOK: Duration = Duration::from_millis(100);

/// What one node owns: `mcpl-arcade serve --ownership` (module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Ownership {
    /// One node runs the whole arcade under one lease; the others stand by (the default).
    #[default]
    Arcade,
    /// Every node serves the players whose leases it holds (`docs/ownership.md` §1).
    Principal,
}

impl Ownership {
    /// `arcade` or `principal`, as the nodes' flag takes it.
    pub fn name(self) -> &'static str {
        match self {
            Ownership::Arcade => "arcade",
            Ownership::Principal => "principal",
        }
    }
}

impl std::str::FromStr for Ownership {
    type Err = String;

    fn from_str(s: &str) -> Result<Ownership, String> {
        match s {
            "arcade" => Ok(Ownership::Arcade),
            "principal" => Ok(Ownership::Principal),
            other => Err(format!(
                "{other:?} is not an ownership: arcade or principal"
            )),
        }
    }
}

/// Why the cluster could not be started or restarted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// PostgreSQL or NATS did not start.
    #[error("{what} did not start: {error}")]
    Service {
        /// Which.
        what: &'static str,
        /// Why.
        error: std::io::Error,
    },
    /// A node's binary is not there.
    #[error(
        "the mcpl-arcade binary was not found at {0} (build it: cargo build -p mcpl-games --bin mcpl-arcade, or give --arcade-bin PATH)"
    )]
    NoBinary(PathBuf),
    /// A node did not start or did not listen.
    #[error("node {name} did not start: {detail}")]
    Node {
        /// The node.
        name: String,
        /// Why, with the end of its log.
        detail: String,
    },
    /// A file could not be written, a process not spawned.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Where `mcpl-arcade` is: beside the running executable (`target/debug/sim` →
/// `target/debug/mcpl-arcade`; a test binary in `target/debug/deps` looks one up).
pub fn default_binary() -> PathBuf {
    let name = format!("mcpl-arcade{}", std::env::consts::EXE_SUFFIX);
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().unwrap_or(Path::new("."));
    let beside = dir.join(&name);
    if beside.is_file() || dir.file_name().is_none_or(|d| d != "deps") {
        return beside;
    }
    dir.parent().unwrap_or(dir).join(name)
}

/// What the nodes are started with.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// The `mcpl-arcade` binary.
    pub binary: PathBuf,
    /// How many nodes.
    pub nodes: usize,
    /// The players: each name is its own token.
    pub players: Vec<String>,
    /// The bot's Go playouts per move.
    pub bot_playouts: u32,
    /// The bot's seed.
    pub seed: u64,
    /// What one node owns (`--ownership`, passed to every node).
    pub ownership: Ownership,
}

/// One node's process and what it said.
struct NodeProcess {
    name: String,
    child: Option<Child>,
    http: SocketAddr,
    ws: SocketAddr,
    /// Its role lines said so far, in order, and the last lines of its stderr.
    log: Arc<Mutex<NodeLog>>,
}

#[derive(Default)]
struct NodeLog {
    /// Role lines, each with its number among every node's.
    roles: Vec<(u64, String)>,
    tail: Vec<String>,
}

/// One death the chaos made.
#[derive(Debug, Clone, PartialEq)]
pub struct Death {
    /// The node killed.
    pub node: String,
    /// Whether it owned the arcade (`--ownership principal`: whether it served players).
    pub owner: bool,
    /// How long after the kill the arcade was served again (`None`: not within
    /// [`START_LIMIT`]); `--ownership principal`: every player it served, and the node
    /// started again.
    pub served_again: Option<Duration>,
    /// Games running at the death: every game at an owner's; `--ownership principal`,
    /// those it ran.
    pub running: Vec<RunningGame>,
    /// `--ownership principal`: the players whose leases it held at its death.
    pub players: usize,
}

/// A lease as PostgreSQL's table holds it now (unexpired).
#[derive(Debug, Clone, PartialEq, Eq)]
struct LeaseRow {
    kind: String,
    key: String,
    node: String,
    token: i64,
}

/// The nodes, PostgreSQL, NATS. See the module docs.
pub struct Cluster {
    /// `None` only while it is being restarted (on a blocking thread).
    pg: Option<Postgres>,
    pg_url: String,
    nats: Nats,
    config: ClusterConfig,
    tokens: tempfile::TempDir,
    nodes: Vec<NodeProcess>,
    /// Role lines said by every node, counted: a takeover shows as a new one.
    said: watch::Sender<u64>,
    deaths: Vec<Death>,
    /// `--ownership principal`: the deaths whose players are still being waited for
    /// (their index among `deaths`, the wait's task), settled by [`Cluster::settle`].
    waiting: Vec<(usize, tokio::task::JoinHandle<Option<Duration>>)>,
    /// Nodes that ended by themselves and were started again.
    revived: u32,
    nats_restarts: u32,
    pg_restarts: u32,
}

impl Cluster {
    /// Starts PostgreSQL, NATS and the nodes (the first takes the lease, the others stand
    /// by) and returns once each has said its role.
    pub async fn start(config: ClusterConfig) -> Result<Cluster, ClusterError> {
        if !config.binary.is_file() {
            return Err(ClusterError::NoBinary(config.binary.clone()));
        }
        let (pg, nats) = tokio::task::spawn_blocking(|| {
            let pg = Postgres::start().map_err(|error| ClusterError::Service {
                what: "PostgreSQL",
                error,
            })?;
            let nats = Nats::start().map_err(|error| ClusterError::Service {
                what: "nats-server",
                error,
            })?;
            Ok::<_, ClusterError>((pg, nats))
        })
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))??;
        let tokens = tempfile::Builder::new().prefix("sim-nodes-").tempdir()?;
        let lines: String = config
            .players
            .iter()
            .map(|p| format!("{p}={p}\n"))
            .collect();
        std::fs::write(tokens.path().join("tokens.txt"), lines)?;
        let mut cluster = Cluster {
            pg_url: pg.url(),
            pg: Some(pg),
            nats,
            config,
            tokens,
            nodes: Vec::new(),
            said: watch::channel(0).0,
            deaths: Vec::new(),
            waiting: Vec::new(),
            revived: 0,
            nats_restarts: 0,
            pg_restarts: 0,
        };
        let any: SocketAddr = ([127, 0, 0, 1], 0).into();
        for i in 0..cluster.config.nodes {
            let name = format!("n{}", i + 1);
            let said = cluster.said_count();
            let node = cluster.spawn(&name, any, any).await?;
            cluster.nodes.push(node);
            // One at a time: the first owns the arcade before the next stands by.
            cluster.wait_said(said, &name).await?;
        }
        Ok(cluster)
    }

    /// The nodes' fronts, in order, for the balancer.
    pub fn upstreams(&self) -> Vec<Upstream> {
        self.nodes
            .iter()
            .map(|n| Upstream {
                http: n.http,
                ws: n.ws,
            })
            .collect()
    }

    /// The nodes' names, in order.
    pub fn names(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.name.clone()).collect()
    }

    /// The PostgreSQL the nodes keep the games in.
    pub fn postgres_url(&self) -> String {
        self.pg_url.clone()
    }

    fn said_count(&self) -> u64 {
        *self.said.borrow()
    }

    /// Waits until a role line is said after the first `before` (by node `name`, for the
    /// error).
    async fn wait_said(&self, before: u64, name: &str) -> Result<(), ClusterError> {
        let mut rx = self.said.subscribe();
        match tokio::time::timeout(START_LIMIT, rx.wait_for(|n| *n > before)).await {
            Ok(Ok(_)) => Ok(()),
            _ => Err(self.failed(name, "it said no role in time")),
        }
    }

    /// A [`ClusterError::Node`] for `name` with the end of its log.
    fn failed(&self, name: &str, what: &str) -> ClusterError {
        let tail = self
            .nodes
            .iter()
            .find(|n| n.name == name)
            .map(|n| {
                n.log
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .tail
                    .join("\n")
            })
            .unwrap_or_default();
        ClusterError::Node {
            name: name.to_owned(),
            detail: format!("{what}; its log ends:\n{tail}"),
        }
    }

    /// Starts node `name` with its fronts on `http` and `ws` (port 0: any) and returns
    /// once it listens on both.
    async fn spawn(
        &self,
        name: &str,
        http: SocketAddr,
        ws: SocketAddr,
    ) -> Result<NodeProcess, ClusterError> {
        let c = &self.config;
        let mut child = Command::new(&c.binary)
            .args(["serve", "--node", name])
            .args(["--postgres", &self.pg_url, "--nats", &self.nats.url()])
            .args(["--http", &http.to_string(), "--ws", &ws.to_string()])
            .args(["--lease-ttl-ms", &LEASE_TTL.as_millis().to_string()])
            .args(["--ownership", c.ownership.name()])
            .args(["--forward-timeout-ms", "10000"])
            .arg("--tokens-file")
            .arg(self.tokens.path().join("tokens.txt"))
            .args(["--bot-playouts", &c.bot_playouts.to_string()])
            .args(["--seed", &c.seed.to_string()])
            .env(
                "RUST_LOG",
                std::env::var("SIM_NODES_LOG").unwrap_or_else(|_| "error".to_owned()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let log = Arc::new(Mutex::new(NodeLog::default()));
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let (tx, rx) = oneshot::channel();
        if let Some(out) = stdout {
            std::thread::Builder::new()
                .name(format!("sim-{name}-out"))
                .spawn(move || {
                    let (mut h, mut w) = (None, None);
                    for line in BufReader::new(out).lines() {
                        let Ok(line) = line else { break };
                        let Some(at) = line.strip_prefix("listening on ") else {
                            continue;
                        };
                        if let Some(a) = at.strip_prefix("http://") {
                            h = a.trim_end_matches("/mcp").parse::<SocketAddr>().ok();
                        } else if let Some(a) = at.strip_prefix("ws://") {
                            w = a.trim_end_matches('/').parse::<SocketAddr>().ok();
                        }
                        if let (Some(h), Some(w)) = (h, w) {
                            let _ = tx.send((h, w));
                            break;
                        }
                    }
                    // The rest is not read: the pipe closes.
                })?;
        }
        if let Some(err) = stderr {
            let (log, said, who) = (log.clone(), self.said.clone(), name.to_owned());
            let echo = std::env::var_os("SIM_NODES_LOG").is_some();
            std::thread::Builder::new()
                .name(format!("sim-{name}-err"))
                .spawn(move || {
                    for line in BufReader::new(err).lines() {
                        let Ok(line) = line else { break };
                        if echo {
                            eprintln!("[{who}] {line}");
                        }
                        let mut l = log.lock().unwrap_or_else(PoisonError::into_inner);
                        if line.contains(OWNS) || line.contains(STANDS_BY) || line.contains(SERVES)
                        {
                            // Kept before it is counted: a waiter woken by the count
                            // finds it.
                            said.send_modify(|n| {
                                *n += 1;
                                l.roles.push((*n, line.clone()));
                            });
                        }
                        l.tail.push(line);
                        if l.tail.len() > LOG_KEPT {
                            l.tail.remove(0);
                        }
                    }
                })?;
        }
        let mut node = NodeProcess {
            name: name.to_owned(),
            child: Some(child),
            http,
            ws,
            log,
        };
        match tokio::time::timeout(START_LIMIT, rx).await {
            Ok(Ok((h, w))) => {
                node.http = h;
                node.ws = w;
                Ok(node)
            }
            _ => {
                stop(&mut node);
                let tail = node
                    .log
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .tail
                    .join("\n");
                Err(ClusterError::Node {
                    name: name.to_owned(),
                    detail: format!("it did not say where it listens; its log ends:\n{tail}"),
                })
            }
        }
    }

    /// The chaos's node death: which node dies (`pick`, a number from the run's seed,
    /// chooses), then [`Cluster::kill`]. `--ownership arcade`: the owner at the first
    /// death, then the owner or a standby, half each. `--ownership principal`
    /// (**\[project\]**: no node owns everything, so the busiest plays the owner's part):
    /// the node running the most games (then serving the most players, then the first) at
    /// the first death, then it or another, half each.
    pub async fn kill_picked(&mut self, pick: u64) -> Result<(), ClusterError> {
        let n = self.nodes.len() as u64;
        // As the nodes said it (the balancer's check may be a moment behind), or as the
        // leases say.
        let busiest = match self.config.ownership {
            Ownership::Arcade => self.owner().unwrap_or(0),
            Ownership::Principal => self.busiest().await,
        };
        let first = self.deaths.is_empty();
        let i = if first || pick.is_multiple_of(2) || n < 2 {
            busiest
        } else {
            let k = (pick / 2) % (n - 1);
            ((busiest as u64 + 1 + k) % n) as usize
        };
        self.kill(i, i == busiest).await
    }

    /// The node running the most games, then serving the most players, as PostgreSQL's
    /// leases say now (the first node when they cannot be read).
    async fn busiest(&self) -> usize {
        let leases = self.leases().await.unwrap_or_default();
        let count = |node: &str, kind: &str| {
            leases
                .iter()
                .filter(|l| l.node == node && l.kind == kind)
                .count()
        };
        let mut best = (0, (0, 0));
        for (i, n) in self.nodes.iter().enumerate() {
            let held = (count(&n.name, INSTANCE), count(&n.name, PRINCIPAL));
            if held > best.1 {
                best = (i, held);
            }
        }
        best.0
    }

    /// Kills node `i` (SIGKILL, by its own process id) and starts it again on the same
    /// ports; returns once the arcade is served again (module docs) or [`START_LIMIT`]
    /// passed, and records the death. `owner`: whether it owned the arcade (with
    /// `--ownership principal`, read from the leases instead: whether it held players').
    pub async fn kill(&mut self, i: usize, owner: bool) -> Result<(), ClusterError> {
        let killed_at = Instant::now();
        let before = self.said_count();
        stop(&mut self.nodes[i]);
        let (name, http, ws) = {
            let n = &self.nodes[i];
            (n.name.clone(), n.http, n.ws)
        };
        let ownership = self.config.ownership;
        // What it held, read just after its death: its leases outlive it until they
        // expire (two thirds of their time to live at least).
        let leases = match ownership {
            Ownership::Arcade => Vec::new(),
            Ownership::Principal => self.leases().await.unwrap_or_default(),
        };
        let players: Vec<LeaseRow> = leases
            .iter()
            .filter(|l| l.node == name && l.kind == PRINCIPAL)
            .cloned()
            .collect();
        let (owner, running) = match ownership {
            Ownership::Arcade if owner => (true, self.running(|_| true).await),
            Ownership::Arcade => (false, Vec::new()),
            Ownership::Principal => (
                !players.is_empty(),
                self.running(|g| ran_on(g, &name, &leases)).await,
            ),
        };
        self.nodes[i] = self.spawn(&name, http, ws).await?;
        // An owner's death: a node said it owns the arcade after the kill. A standby's:
        // the node started again said its role. `--ownership principal`: the node started
        // again said it serves — and then every player it served is leased again, waited
        // for apart (below).
        let mut said = self.said.subscribe();
        let spoken = async {
            loop {
                said.borrow_and_update();
                if self.said_since(before, |node, line| match ownership {
                    Ownership::Arcade if owner => line.contains(OWNS),
                    Ownership::Arcade => node == name,
                    Ownership::Principal => node == name && line.contains(SERVES),
                }) {
                    return;
                }
                if said.changed().await.is_err() {
                    return;
                }
            }
        };
        let served_again = tokio::time::timeout(START_LIMIT, spoken)
            .await
            .ok()
            .map(|()| killed_at.elapsed());
        if ownership == Ownership::Principal && served_again.is_some() && !players.is_empty() {
            // **\[project\]** Not waited for on the chaos's timeline: a player comes back
            // only with her next request, which may wait out a forward in flight to the
            // dead node (`--forward-timeout-ms`) or her host's backoff; meanwhile the
            // run's other faults go on.
            let (url, count) = (self.pg_url.clone(), players.len());
            let wait = tokio::spawn(async move {
                let back = async {
                    // Each player seen leased again once is: her new node may stop in
                    // turn, and her lease lapse, before the others are (with nobody to
                    // take it again once her agent is done).
                    let mut again = vec![false; players.len()];
                    // Polled: the lease table tells nobody of a change.
                    loop {
                        if let Some(now) = leases_now(url.clone()).await {
                            for (seen, p) in again.iter_mut().zip(&players) {
                                *seen = *seen
                                    || now.iter().any(|l| {
                                        l.kind == p.kind && l.key == p.key && l.token != p.token
                                    });
                            }
                            if again.iter().all(|seen| *seen) {
                                return;
                            }
                        }
                        tokio::time::sleep(LEASE_LOOK).await;
                    }
                };
                let limit = START_LIMIT.saturating_sub(killed_at.elapsed());
                tokio::time::timeout(limit, back)
                    .await
                    .ok()
                    .map(|()| killed_at.elapsed())
            });
            self.waiting.push((self.deaths.len(), wait));
            self.deaths.push(Death {
                node: name,
                owner,
                served_again: None,
                running,
                players: count,
            });
            return Ok(());
        }
        self.deaths.push(Death {
            node: name,
            owner,
            served_again,
            running,
            players: players.len(),
        });
        Ok(())
    }

    /// Waits for what [`Cluster::kill`] left waiting (`--ownership principal`: each dead
    /// node's players leased again, at most [`START_LIMIT`] after its death) and records
    /// it in [`Cluster::deaths`].
    pub async fn settle(&mut self) {
        for (i, wait) in self.waiting.drain(..) {
            self.deaths[i].served_again = wait.await.ok().flatten();
        }
    }

    /// Every unexpired lease PostgreSQL holds now (`None`: it could not be read).
    async fn leases(&self) -> Option<Vec<LeaseRow>> {
        leases_now(self.pg_url.clone()).await
    }

    /// Whether a node said a role line after the first `before` (counted over every
    /// node) that `pick` (the node's name, the line) takes.
    fn said_since(&self, before: u64, pick: impl Fn(&str, &str) -> bool) -> bool {
        self.nodes.iter().any(|n| {
            let l = n.log.lock().unwrap_or_else(PoisonError::into_inner);
            l.roles
                .iter()
                .any(|(seq, line)| *seq > before && pick(&n.name, line))
        })
    }

    /// Kills NATS (by its own id) and starts it again on its port.
    pub async fn restart_nats(&mut self) -> Result<(), ClusterError> {
        // Blocking, briefly: the server is ready within a few hundred milliseconds.
        self.nats.restart().map_err(|error| ClusterError::Service {
            what: "nats-server (again)",
            error,
        })?;
        self.nats_restarts += 1;
        Ok(())
    }

    /// Stops PostgreSQL at once (SIGQUIT by its own id, what `pg_ctl stop -m immediate`
    /// sends: no checkpoint, crash recovery at the next start) and starts it again on its
    /// data and port. Meanwhile calls get a retryable error and are not acknowledged; the
    /// owner, whose lease renewal fails, stops (exit status 3) and is started again by
    /// [`Cluster::revive`]; a node takes the lease over once the database is back and
    /// reads every game from it.
    pub async fn restart_postgres(&mut self) -> Result<(), ClusterError> {
        let Some(mut pg) = self.pg.take() else {
            return Ok(());
        };
        // On a blocking thread: the crash recovery takes a few seconds, during which the
        // agents play on (and meet the outage).
        let (pg, started) = tokio::task::spawn_blocking(move || {
            pg.stop_immediate();
            let started = pg.restart();
            (pg, started)
        })
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
        self.pg = Some(pg);
        started.map_err(|error| ClusterError::Service {
            what: "PostgreSQL (again)",
            error,
        })?;
        self.pg_restarts += 1;
        Ok(())
    }

    /// Starts again every node that ended by itself; how many were.
    pub async fn revive(&mut self) -> Result<u32, ClusterError> {
        let mut n = 0;
        for i in 0..self.nodes.len() {
            let ended = self.nodes[i]
                .child
                .as_mut()
                .is_none_or(|c| matches!(c.try_wait(), Ok(Some(_))));
            if ended {
                let (name, http, ws) = {
                    let node = &self.nodes[i];
                    (node.name.clone(), node.http, node.ws)
                };
                stop(&mut self.nodes[i]);
                self.nodes[i] = self.spawn(&name, http, ws).await?;
                n += 1;
            }
        }
        self.revived += n;
        Ok(n)
    }

    /// The node that owns the arcade as the nodes said last (the one whose last role line
    /// says it owns it), if any.
    pub fn owner(&self) -> Option<usize> {
        self.nodes.iter().position(|n| {
            let l = n.log.lock().unwrap_or_else(PoisonError::into_inner);
            l.roles.last().is_some_and(|(_, line)| line.contains(OWNS))
        })
    }

    /// The deaths so far.
    pub fn deaths(&self) -> &[Death] {
        &self.deaths
    }

    /// Nodes that ended by themselves and were started again.
    pub fn revived(&self) -> u32 {
        self.revived
    }

    /// NATS restarts.
    pub fn nats_restarts(&self) -> u32 {
        self.nats_restarts
    }

    /// The report's row of it (the balancer's part left empty).
    pub fn totals(&self) -> NodeTotals {
        let owners = self.deaths.iter().filter(|d| d.owner);
        NodeTotals {
            nodes: self.nodes.len(),
            ownership: self.config.ownership.name().to_owned(),
            players_moved: self.deaths.iter().map(|d| d.players as u32).sum(),
            deaths: self.deaths.len() as u32,
            owner_deaths: owners.clone().count() as u32,
            survived: self
                .deaths
                .iter()
                .filter(|d| d.served_again.is_some())
                .count() as u32,
            longest_takeover_ms: owners
                .filter_map(|d| d.served_again)
                .max()
                .map_or(0, |t| t.as_millis() as u64),
            nats_restarts: self.nats_restarts,
            pg_restarts: self.pg_restarts,
            revived: self.revived,
            ..NodeTotals::default()
        }
    }

    /// The games running as PostgreSQL says now that `keep` takes (module docs); empty
    /// when it cannot be read (the run's end says so).
    async fn running(&self, keep: impl Fn(&RunningGame) -> bool) -> Vec<RunningGame> {
        let Some(loaded) = self.load().await else {
            return Vec::new();
        };
        let ids = crate::arcade::running_games(&loaded);
        loaded
            .instances
            .iter()
            .filter(|(id, _)| ids.contains(id))
            .filter_map(|(id, bytes)| {
                let r = serde_json::from_slice::<serde_json::Value>(bytes).ok()?;
                Some(RunningGame {
                    id: *id,
                    toolset: r["toolset"].as_str()?.to_owned(),
                    instance: r["name"].as_str().map(str::to_owned),
                    players: r["participants"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|p| p["Principal"].as_str().map(str::to_owned))
                        .collect(),
                })
            })
            .filter(|g| keep(g))
            .collect()
    }

    /// Every record PostgreSQL holds now (`None`: it could not be read).
    async fn load(&self) -> Option<mcpl_server::Loaded> {
        let url = self.pg_url.clone();
        tokio::task::spawn_blocking(move || PgStore::connect(&url).and_then(|s| s.load()).ok())
            .await
            .ok()
            .flatten()
    }

    /// What the deaths did to the games (module docs): running at owners' deaths, still
    /// going after (a game that ended since is forgotten by the store, and told to its
    /// players with its own reason), lost — told to a player as ended because the
    /// server restarted and its state could not be read back.
    pub async fn resumed(&self) -> crate::arcade::Resumed {
        let mut running: Vec<&RunningGame> = self.deaths.iter().flat_map(|d| &d.running).collect();
        running.sort_by_key(|g| g.id);
        running.dedup_by_key(|g| g.id);
        let Some(loaded) = self.load().await else {
            return crate::arcade::Resumed {
                running: running.len(),
                resumed: 0,
                lost: running.len(),
            };
        };
        // (principal, toolset, instance) of every end told for a restart.
        let mut told_lost = BTreeSet::new();
        for (name, bytes) in &loaded.principals {
            let Ok(r) = serde_json::from_slice::<serde_json::Value>(bytes) else {
                continue;
            };
            for e in r["state"]["ended"].as_array().into_iter().flatten() {
                let rec = &e["record"];
                if rec["reason"]
                    .as_str()
                    .is_some_and(|s| s.starts_with(RESTART_REASON))
                {
                    told_lost.insert((
                        name.clone(),
                        rec["toolset"].as_str().unwrap_or_default().to_owned(),
                        rec["instance"].as_str().map(str::to_owned),
                    ));
                }
            }
        }
        let lost_running = running
            .iter()
            .filter(|g| {
                g.players.iter().any(|p| {
                    told_lost.contains(&(p.clone(), g.toolset.clone(), g.instance.clone()))
                })
            })
            .count();
        let others = told_lost
            .iter()
            .filter(|(p, t, i)| {
                !running
                    .iter()
                    .any(|g| g.players.contains(p) && g.toolset == *t && g.instance == *i)
            })
            .count();
        crate::arcade::Resumed {
            running: running.len(),
            resumed: running.len() - lost_running,
            lost: lost_running + others,
        }
    }
}

/// How the server's reasons for a game it could not bring back begin (`mcpl_server`'s
/// restore: "the server restarted, and …").
const RESTART_REASON: &str = "the server restarted";

/// A game running at an owner's death, as PostgreSQL kept it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningGame {
    /// Its instance's id.
    pub id: u64,
    /// Its toolset.
    pub toolset: String,
    /// Its instance's name.
    pub instance: Option<String>,
    /// Its players.
    pub players: Vec<String>,
}

/// Every unexpired lease the PostgreSQL at `url` holds now (`None`: it could not be
/// read).
async fn leases_now(url: String) -> Option<Vec<LeaseRow>> {
    tokio::task::spawn_blocking(move || {
        let mut config: postgres::Config = url.parse().ok()?;
        config.connect_timeout(Duration::from_secs(2));
        let mut client = config.connect(postgres::NoTls).ok()?;
        let rows = client
            .query(
                "SELECT kind, key, node, token FROM mcpl_leases WHERE expires_at > now()",
                &[],
            )
            .ok()?;
        Some(
            rows.iter()
                .map(|r| LeaseRow {
                    kind: r.get(0),
                    key: r.get(1),
                    node: r.get(2),
                    token: r.get(3),
                })
                .collect(),
        )
    })
    .await
    .ok()
    .flatten()
}

/// Whether game `g` ran on node `node` as `leases` say: its instance's lease is the
/// node's, or nobody leased it yet (a node leases the instances it runs at its next
/// renewal) and a player's lease is.
fn ran_on(g: &RunningGame, node: &str, leases: &[LeaseRow]) -> bool {
    let id = g.id.to_string();
    match leases.iter().find(|l| l.kind == INSTANCE && l.key == id) {
        Some(l) => l.node == node,
        None => leases
            .iter()
            .any(|l| l.kind == PRINCIPAL && l.node == node && g.players.contains(&l.key)),
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // The nodes first (by their own ids), then NATS and PostgreSQL (their own Drop,
        // by their ids too).
        for n in &mut self.nodes {
            stop(n);
        }
    }
}

/// Kills a node's process by its own id (SIGKILL) and waits for it.
fn stop(node: &mut NodeProcess) {
    if let Some(mut child) = node.child.take() {
        if !matches!(child.try_wait(), Ok(Some(_))) {
            let _ = child.kill();
        }
        let _ = child.wait();
    }
}

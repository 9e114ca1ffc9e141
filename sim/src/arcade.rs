//! The arcade under test, in process: an [`Arcade`] served on a WebSocket and a
//! Streamable HTTP listener on loopback, each player's name its bearer token.
//!
//! It accepts connections itself (the arcade's `listen` module serves too, but keeps no
//! session handles) so that a run can **restart** it: every listener closed, every
//! session ended, and new listeners bound — the hosts see their connections drop and
//! reconnect, as after a server restart. The restart is a real one (issue #15): a new
//! arcade is built on the same durable store, and the old one is cut off from it as a
//! dead process is ([`SimStore`]), so its games come back only by being read back —
//! counted as resumed ([`ArcadeService::resumed`]) or lost.
//!
//! It counts the connections its Streamable HTTP listener hands the arcade, per principal
//! ([`ArcadeService::http_connections`]): a legacy host's session is one (again after a
//! cut), while MCP 2026-07-28 serves each request on a connection of its own — so a
//! principal with at least as many connections as requests answered spoke modern.
//!
//! The listeners run where the sessions do (an arbiter given to [`ArcadeService::start`]),
//! so that the server's transport tasks share its thread rather than the hosts'.

use actix::ArbiterHandle;
use mcpl_games::arcade::listen::HTTP_PATH;
use mcpl_games::arcade::{Arcade, ArcadeConfig, LOBBY};
use mcpl_server::{
    BuildError, LiveInstance, Loaded, MemoryStore, PrincipalLoaded, Restored, Server,
    SessionHandle, Store, StoreError, Writes,
};
use mcpl_transport::{Connection, Principal, ServerOptions, http, ws};
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;

/// Why the arcade could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArcadeError {
    /// The arcade's declarations were refused (a bug in the arcade).
    #[error("the arcade could not be built: {0}")]
    Build(#[from] BuildError),
    /// A listener could not be bound.
    #[error("a listener could not be bound: {0}")]
    Bind(#[from] io::Error),
}

/// A listener's accept loop; dropping this stops it (and closes the listener), and
/// [`Served::stop`] waits until it has.
struct Served {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    done: Option<oneshot::Receiver<()>>,
}

impl Served {
    /// No loop: what stands in for a stopped one.
    fn none() -> Self {
        Served {
            addr: ([127, 0, 0, 1], 0).into(),
            stop: None,
            done: None,
        }
    }

    /// Stops the loop and waits until it has ended and dropped its listener: no connection
    /// is taken from then on. A connection the listener had accepted and not handed over is
    /// dropped with it, as a dying process drops what it had not answered yet.
    async fn stop(mut self) {
        drop(self.stop.take());
        if let Some(done) = self.done.take() {
            let _ = done.await;
        }
    }
}

/// The arcade's durable store across restarts: one [`MemoryStore`], and a handle per
/// life of the arcade. A new life cuts the previous one off, as a process that died
/// writes nothing more: its actors, still running in this process, write into nothing.
#[derive(Debug, Default)]
pub struct SimStore {
    records: Arc<MemoryStore>,
    current: Mutex<Arc<AtomicBool>>,
}

impl SimStore {
    /// The handle of a new life; the previous life's handle writes nothing from now on.
    pub fn life(&self) -> Arc<dyn Store> {
        let live = Arc::new(AtomicBool::new(true));
        let old = std::mem::replace(
            &mut *self.current.lock().unwrap_or_else(PoisonError::into_inner),
            live.clone(),
        );
        old.store(false, Ordering::SeqCst);
        Arc::new(Life {
            records: self.records.clone(),
            live,
        })
    }

    /// The games running as the store says now: records of game instances (not lobbies)
    /// that have not ended and that a principal's record links to.
    pub fn running(&self) -> usize {
        self.records.load().map_or(0, |l| running_games(&l).len())
    }
}

/// The games running as `loaded` says: records of game instances (not lobbies) that have
/// not ended and that a principal's record links to; their ids.
pub fn running_games(loaded: &Loaded) -> std::collections::BTreeSet<u64> {
    let json = |r: &[u8]| serde_json::from_slice::<serde_json::Value>(r).ok();
    let linked: std::collections::HashSet<u64> = loaded
        .principals
        .iter()
        .filter_map(|(_, r)| json(r))
        .flat_map(|p| {
            p["links"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|l| l["instance"].as_u64())
                .collect::<Vec<_>>()
        })
        .collect();
    loaded
        .instances
        .iter()
        .filter(|(id, _)| linked.contains(id))
        .filter(|(_, r)| json(r).is_some_and(|r| r["ended"].is_null() && r["toolset"] != LOBBY))
        .map(|(id, _)| *id)
        .collect()
}

/// One life's handle on a [`SimStore`].
struct Life {
    records: Arc<MemoryStore>,
    live: Arc<AtomicBool>,
}

impl Life {
    fn live(&self) -> bool {
        self.live.load(Ordering::SeqCst)
    }
}

impl Store for Life {
    fn load(&self) -> Result<Loaded, StoreError> {
        self.records.load()
    }
    fn commit(&self, steps: &[Writes]) -> Result<(), StoreError> {
        if self.live() {
            self.records.commit(steps)?;
        }
        Ok(())
    }
    fn location(&self) -> String {
        "the simulator's memory".to_owned()
    }
    // Ids are taken from the records every life shares, so no two lives give one out twice
    // (issue #41).
    fn reserve_instance_ids(&self, count: u64) -> Result<std::ops::Range<u64>, StoreError> {
        self.records.reserve_instance_ids(count)
    }
    // Each record read as the memory store reads it (issue #41: a start reads what its
    // instances need, each other principal on its first use), not through `load`.
    fn load_principal(&self, principal: &str) -> Result<PrincipalLoaded, StoreError> {
        self.records.load_principal(principal)
    }
    fn load_instance(&self, id: u64) -> Result<Option<Vec<u8>>, StoreError> {
        self.records.load_instance(id)
    }
    fn live_instances(&self) -> Result<Vec<LiveInstance>, StoreError> {
        self.records.live_instances()
    }
}

/// What the restarts did to the games: how many were running at each restart, and what
/// each new life read back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resumed {
    /// Games running when the arcade stopped (summed over restarts).
    pub running: usize,
    /// Games running again after a restart.
    pub resumed: usize,
    /// Games that were running and did not come back (each ended with a record).
    pub lost: usize,
}

/// The arcade and its listeners. See the module docs.
pub struct ArcadeService {
    arcade: Arcade,
    /// Its configuration, to build it again at a restart.
    config: ArcadeConfig,
    store: Arc<SimStore>,
    /// Each earlier life's server, for what the next one read back.
    lives: Vec<Server>,
    running_at_restarts: usize,
    /// Where the listeners run (with the sessions), if not on the caller's thread.
    arbiter: Option<ArbiterHandle>,
    opts: Arc<ServerOptions>,
    sessions: Arc<Mutex<LiveSessions>>,
    /// Connections the Streamable HTTP listener handed the arcade, per principal.
    http_connections: Arc<Mutex<HashMap<String, u64>>>,
    ws: Served,
    http: Served,
    restarts: u32,
}

impl ArcadeService {
    /// Builds the arcade (its sessions and listeners on `arbiter`, or the current one)
    /// with `players` known (each name is its own token) and serves it on 127.0.0.1
    /// port 0.
    pub async fn start(
        mut config: ArcadeConfig,
        players: &[String],
        arbiter: Option<ArbiterHandle>,
    ) -> Result<Self, ArcadeError> {
        config.players.extend(players.iter().cloned());
        let store = Arc::new(SimStore::default());
        let arcade = build(&config, &store, arbiter.as_ref())?;
        // The listeners bind inside a LocalSet (`serve`): their tasks stay there.
        let mut opts = ServerOptions {
            ws_ping_interval: None,
            local_tasks: true,
            ..Default::default()
        };
        for p in players {
            opts.tokens.insert(p.clone(), p.clone());
        }
        let opts = Arc::new(opts);
        let sessions = Arc::new(Mutex::new(LiveSessions::default()));
        let http_connections = Arc::new(Mutex::new(HashMap::new()));
        let counted = Kept {
            sessions: sessions.clone(),
            http_connections: http_connections.clone(),
        };
        let ws = serve(Kind::Ws, &arcade, &opts, &counted, arbiter.as_ref()).await?;
        let http = serve(Kind::Http, &arcade, &opts, &counted, arbiter.as_ref()).await?;
        Ok(ArcadeService {
            arcade,
            config,
            store,
            lives: Vec::new(),
            running_at_restarts: 0,
            arbiter,
            opts,
            sessions,
            http_connections,
            ws,
            http,
            restarts: 0,
        })
    }

    /// The arcade.
    pub fn arcade(&self) -> &Arcade {
        &self.arcade
    }

    /// The WebSocket listener's address.
    pub fn ws_addr(&self) -> SocketAddr {
        self.ws.addr
    }

    /// The Streamable HTTP listener's address.
    pub fn http_addr(&self) -> SocketAddr {
        self.http.addr
    }

    /// `ws://ADDR`.
    pub fn ws_url(&self) -> String {
        format!("ws://{}", self.ws.addr)
    }

    /// `http://ADDR/mcp`.
    pub fn http_url(&self) -> String {
        format!("http://{}{HTTP_PATH}", self.http.addr)
    }

    /// Sessions live now.
    pub fn live_sessions(&self) -> usize {
        self.arcade.server().session_count()
    }

    /// Connections the Streamable HTTP listener handed the arcade for `principal`, over
    /// every life (module docs).
    pub fn http_connections(&self, principal: &str) -> u64 {
        self.http_connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(principal)
            .copied()
            .unwrap_or(0)
    }

    /// How many times it was restarted.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// Sessions still served by an earlier life once those closed at its restart have
    /// stopped (each awaited, up to `within`): a process that died serves none, so any is
    /// the simulator's fault, and whatever its players do there is lost.
    pub async fn sessions_of_dead_lives(&self, within: std::time::Duration) -> usize {
        let stopped = self.lives.iter().map(|life| {
            let mut live = life.watch_sessions();
            async move {
                let _ = tokio::time::timeout(within, live.wait_for(|n| *n == 0)).await;
            }
        });
        futures_util::future::join_all(stopped).await;
        self.lives.iter().map(Server::session_count).sum()
    }

    /// What the restarts did to the games so far (a life's read-back counts once its
    /// first session started it).
    pub fn resumed(&self) -> Resumed {
        let read: Vec<Restored> = self
            .lives
            .iter()
            .skip(1)
            .chain(std::iter::once(self.arcade.server()))
            .filter_map(Server::restored)
            .collect();
        Resumed {
            running: self.running_at_restarts,
            resumed: read
                .iter()
                .flat_map(|r| &r.toolsets)
                .filter(|(t, _)| t.as_str() != LOBBY)
                .map(|(_, n)| n)
                .sum(),
            lost: read.iter().map(|r| r.lost).sum(),
        }
    }

    /// Restarts: closes both listeners and every session, builds the arcade again on the
    /// same store (the old one cut off from it, as a process that died), then binds new
    /// listeners (on new ports: put a proxy in front to keep one address).
    pub async fn restart(&mut self) -> Result<(), ArcadeError> {
        // Both accept loops end before the sessions are taken: a loop still running on the
        // sessions' thread could hand the old life a connection after the take, and that
        // session would outlive the restart, its player on a server nobody else is on
        // (issue #36 item 16: ends told that the new life has no record of).
        std::mem::replace(&mut self.ws, Served::none()).stop().await;
        std::mem::replace(&mut self.http, Served::none())
            .stop()
            .await;
        let sessions: Vec<SessionHandle> = std::mem::take(
            &mut self
                .sessions
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .handles,
        );
        for s in sessions {
            s.close();
        }
        // The old life ends here: nothing it does from now on is kept.
        let arcade = build(&self.config, &self.store, self.arbiter.as_ref())?;
        self.running_at_restarts += self.store.running();
        let old = std::mem::replace(&mut self.arcade, arcade);
        self.lives.push(old.server().clone());
        let a = self.arbiter.as_ref();
        let kept = Kept {
            sessions: self.sessions.clone(),
            http_connections: self.http_connections.clone(),
        };
        self.ws = serve(Kind::Ws, &self.arcade, &self.opts, &kept, a).await?;
        self.http = serve(Kind::Http, &self.arcade, &self.opts, &kept, a).await?;
        self.restarts += 1;
        Ok(())
    }
}

/// The arcade on a new life of `store`.
fn build(
    config: &ArcadeConfig,
    store: &SimStore,
    arbiter: Option<&ArbiterHandle>,
) -> Result<Arcade, BuildError> {
    let config = ArcadeConfig {
        store: Some(store.life()),
        ..config.clone()
    };
    match arbiter {
        Some(a) => Arcade::on(config, a.clone()),
        None => Arcade::new(config),
    }
}

/// What the accept loops keep: every session (to close them at a restart), and the
/// Streamable HTTP connections counted per principal.
#[derive(Clone)]
struct Kept {
    sessions: Arc<Mutex<LiveSessions>>,
    http_connections: Arc<Mutex<HashMap<String, u64>>>,
}

/// The sessions of the running life, closed ones dropped now and then: when the list
/// has doubled since the last time, so that each connection costs O(1) amortised (the
/// list swept at every connection made a mass drop of 10,000 hosts quadratic).
#[derive(Default)]
struct LiveSessions {
    handles: Vec<SessionHandle>,
    sweep_at: usize,
}

impl Kept {
    fn keep(&self, s: SessionHandle) {
        let mut live = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if live.handles.len() >= live.sweep_at {
            live.handles.retain(SessionHandle::is_open);
            live.sweep_at = (live.handles.len() * 2).max(64);
        }
        live.handles.push(s);
    }

    fn count_http(&self, conn: &Connection) {
        if let Some(Principal::Named(name)) = &conn.info.principal {
            let mut counts = self
                .http_connections
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            *counts.entry(name.clone()).or_default() += 1;
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Ws,
    Http,
}

/// A bound listener of either kind.
enum Listener {
    Ws(ws::WsListener),
    Http(http::HttpListener),
}

impl Listener {
    fn local_addr(&self) -> SocketAddr {
        match self {
            Listener::Ws(l) => l.local_addr(),
            Listener::Http(l) => l.local_addr(),
        }
    }

    async fn accept(&mut self) -> Option<Connection> {
        match self {
            Listener::Ws(l) => l.accept().await,
            Listener::Http(l) => l.accept().await,
        }
    }
}

/// Binds a listener and accepts on it — on `arbiter` when given, so that the transport's
/// own tasks run there too — until the returned [`Served`] is dropped.
async fn serve(
    kind: Kind,
    arcade: &Arcade,
    opts: &Arc<ServerOptions>,
    kept: &Kept,
    arbiter: Option<&ArbiterHandle>,
) -> io::Result<Served> {
    let (bound_tx, bound_rx) = oneshot::channel();
    let (stop, mut stopped) = oneshot::channel::<()>();
    let (done_tx, done) = oneshot::channel::<()>();
    let (arcade, opts, kept) = (arcade.clone(), opts.clone(), kept.clone());
    let run = async move {
        let any: SocketAddr = ([127, 0, 0, 1], 0).into();
        let bound = match kind {
            Kind::Ws => ws::bind(any, opts).await.map(Listener::Ws),
            Kind::Http => http::bind(any, HTTP_PATH, opts).await.map(Listener::Http),
        };
        let mut l = match bound {
            Ok(l) => l,
            Err(e) => return drop(bound_tx.send(Err(e))),
        };
        let _ = bound_tx.send(Ok(l.local_addr()));
        loop {
            tokio::select! {
                // A stop wins over a connection ready at the same time.
                biased;
                _ = &mut stopped => break,
                conn = l.accept() => match conn {
                    Some(conn) => {
                        if let Kind::Http = kind {
                            kept.count_http(&conn);
                        }
                        kept.keep(arcade.serve(conn));
                    }
                    None => break,
                },
            }
        }
    };
    // The listener is dropped with `run`, before `done` is told.
    let run = async move {
        run.await;
        let _ = done_tx.send(());
    };
    match arbiter {
        Some(a) => {
            a.spawn(run);
        }
        None => drop(tokio::task::spawn_local(run)),
    }
    let addr = bound_rx
        .await
        .map_err(|_| io::Error::other("the listener's task ended"))??;
    Ok(Served {
        addr,
        stop: Some(stop),
        done: Some(done),
    })
}

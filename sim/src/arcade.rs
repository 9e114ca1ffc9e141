//! The arcade under test, in process: an [`Arcade`] served on a WebSocket and a
//! Streamable HTTP listener on loopback, each player's name its bearer token.
//!
//! It accepts connections itself (the arcade's `listen` module serves too, but keeps no
//! session handles) so that a run can **restart** it: every listener closed, every
//! session ended, and new listeners bound — the hosts see their connections drop and
//! reconnect, as after a server restart. The arcade's state (open games, ended records)
//! lives on across the restart, as it would with durable state; a restart that loses it is
//! not simulated.
//!
//! The listeners run where the sessions do (an arbiter given to [`ArcadeService::start`]),
//! so that the server's transport tasks share its thread rather than the hosts'.

use actix::ArbiterHandle;
use mcpl_games::arcade::listen::HTTP_PATH;
use mcpl_games::arcade::{Arcade, ArcadeConfig};
use mcpl_server::{BuildError, SessionHandle};
use mcpl_transport::{ServerOptions, http, ws};
use std::io;
use std::net::SocketAddr;
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

/// A listener's accept loop; dropping this stops it (and closes the listener).
struct Served {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

/// The arcade and its listeners. See the module docs.
pub struct ArcadeService {
    arcade: Arcade,
    /// Where the listeners run (with the sessions), if not on the caller's thread.
    arbiter: Option<ArbiterHandle>,
    opts: Arc<ServerOptions>,
    sessions: Arc<Mutex<Vec<SessionHandle>>>,
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
        let arcade = match &arbiter {
            Some(a) => Arcade::on(config, a.clone())?,
            None => Arcade::new(config)?,
        };
        let mut opts = ServerOptions {
            ws_ping_interval: None,
            ..Default::default()
        };
        for p in players {
            opts.tokens.insert(p.clone(), p.clone());
        }
        let opts = Arc::new(opts);
        let sessions = Arc::new(Mutex::new(Vec::new()));
        let ws = serve(Kind::Ws, &arcade, &opts, &sessions, arbiter.as_ref()).await?;
        let http = serve(Kind::Http, &arcade, &opts, &sessions, arbiter.as_ref()).await?;
        Ok(ArcadeService {
            arcade,
            arbiter,
            opts,
            sessions,
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

    /// How many times it was restarted.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// Restarts: closes both listeners and every session, then binds new listeners (on
    /// new ports: put a proxy in front to keep one address).
    pub async fn restart(&mut self) -> Result<(), ArcadeError> {
        let any: SocketAddr = ([127, 0, 0, 1], 0).into();
        // Stops both accept loops (their listeners close).
        self.ws = Served {
            addr: any,
            _stop: oneshot::channel().0,
        };
        self.http = Served {
            addr: any,
            _stop: oneshot::channel().0,
        };
        let sessions: Vec<SessionHandle> =
            std::mem::take(&mut *self.sessions.lock().unwrap_or_else(PoisonError::into_inner));
        for s in sessions {
            s.close();
        }
        let a = self.arbiter.as_ref();
        self.ws = serve(Kind::Ws, &self.arcade, &self.opts, &self.sessions, a).await?;
        self.http = serve(Kind::Http, &self.arcade, &self.opts, &self.sessions, a).await?;
        self.restarts += 1;
        Ok(())
    }
}

fn keep(sessions: &Mutex<Vec<SessionHandle>>, s: SessionHandle) {
    let mut v = sessions.lock().unwrap_or_else(PoisonError::into_inner);
    v.retain(SessionHandle::is_open);
    v.push(s);
}

#[derive(Clone, Copy)]
enum Kind {
    Ws,
    Http,
}

/// Binds a listener and accepts on it — on `arbiter` when given, so that the transport's
/// own tasks run there too — until the returned [`Served`] is dropped.
async fn serve(
    kind: Kind,
    arcade: &Arcade,
    opts: &Arc<ServerOptions>,
    sessions: &Arc<Mutex<Vec<SessionHandle>>>,
    arbiter: Option<&ArbiterHandle>,
) -> io::Result<Served> {
    let (bound_tx, bound_rx) = oneshot::channel();
    let (stop, mut stopped) = oneshot::channel::<()>();
    let (arcade, opts, sessions) = (arcade.clone(), opts.clone(), sessions.clone());
    let run = async move {
        let any: SocketAddr = ([127, 0, 0, 1], 0).into();
        match kind {
            Kind::Ws => {
                let mut l = match ws::bind(any, opts).await {
                    Ok(l) => l,
                    Err(e) => return drop(bound_tx.send(Err(e))),
                };
                let _ = bound_tx.send(Ok(l.local_addr()));
                loop {
                    tokio::select! {
                        _ = &mut stopped => break,
                        conn = l.accept() => match conn {
                            Some(conn) => keep(&sessions, arcade.serve(conn)),
                            None => break,
                        },
                    }
                }
            }
            Kind::Http => {
                let mut l = match http::bind(any, HTTP_PATH, opts).await {
                    Ok(l) => l,
                    Err(e) => return drop(bound_tx.send(Err(e))),
                };
                let _ = bound_tx.send(Ok(l.local_addr()));
                loop {
                    tokio::select! {
                        _ = &mut stopped => break,
                        conn = l.accept() => match conn {
                            Some(conn) => keep(&sessions, arcade.serve(conn)),
                            None => break,
                        },
                    }
                }
            }
        }
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
    Ok(Served { addr, _stop: stop })
}

//! Where clients come from: this process's stdin/stdout (the form MCP clients launch: one
//! client, one principal the operator names), or a Streamable HTTP listener whose bearer
//! tokens are the surface host's own, each naming a configured client (a principal with
//! its credentials per server).
//!
//! Each legacy connection (opened with `initialize`) gets its own [`Host`]: two clients
//! are two agents. A modern (MCP 2026-07-28) request has no connection to keep state on:
//! on Streamable HTTP each comes on a connection of its own and is served by its
//! principal's agent, one per principal ([`crate::principals`]); on stdio by the agent of
//! the connection's host, the operator's principal ([`crate::session`]).

use crate::config::{ConfigError, SurfaceConfig};
use crate::modern::{self, Era, Route};
use crate::principals::Principals;
use crate::session::{self, SessionOptions};
use mcpl_host::host::{Host, HostError, HostHandle};
use mcpl_protocol::jsonrpc::{Message, Request, Response};
use mcpl_transport::{Connection, Inbound, Outbound, Principal, ServerOptions, http};
use std::net::SocketAddr;
use std::sync::Arc;

/// Why a client could not be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The principal has no configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The host would not start.
    #[error("the host could not start: {0}")]
    Host(#[from] HostError),
    /// A listener could not be bound.
    #[error("cannot listen: {0}")]
    Io(#[from] std::io::Error),
}

/// The host for one principal's connection.
pub fn start_host(config: &SurfaceConfig, principal: &str) -> Result<HostHandle, ServeError> {
    Ok(Host::start(config.host_config(principal)?)?)
}

fn options(config: &SurfaceConfig) -> SessionOptions {
    SessionOptions {
        first_contact: config.first_contact,
    }
}

/// Serves one client on `conn` as `principal`, until it goes away. Must run on an actix
/// system (the host is an actor).
pub async fn serve_connection(
    config: &SurfaceConfig,
    principal: &str,
    conn: Connection,
) -> Result<(), ServeError> {
    let host = start_host(config, principal)?;
    session::run(conn, host, options(config)).await;
    Ok(())
}

/// The Streamable HTTP options: the surface host's own client tokens, nobody anonymous,
/// and both eras (a request without a session is MCP 2026-07-28's, checked by the
/// transport and served by its principal's agent).
pub fn http_options(config: &SurfaceConfig) -> ServerOptions {
    ServerOptions {
        tokens: config.client_tokens(),
        allow_anonymous: false,
        http_modern: true,
        ..ServerOptions::default()
    }
}

/// A Streamable HTTP listener of the surface host, endpoint `/mcp`.
#[derive(Debug)]
pub struct HttpSurface {
    listener: http::HttpListener,
    config: Arc<SurfaceConfig>,
    principals: Arc<Principals>,
}

impl HttpSurface {
    /// Binds `addr` (bind loopback unless other machines must reach it).
    pub async fn bind(config: Arc<SurfaceConfig>, addr: SocketAddr) -> Result<Self, ServeError> {
        let opts = Arc::new(http_options(&config));
        let listener = http::bind(addr, "/mcp", opts).await?;
        let principals = Principals::new(config.clone(), config.modern);
        Ok(HttpSurface {
            listener,
            config,
            principals,
        })
    }

    /// The endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.listener.local_addr())
    }

    /// Serves every client that connects, each on its own task, until the listener fails.
    /// Must run on an actix system.
    pub async fn run(mut self) {
        let idle = actix::spawn(self.principals.clone().close_idle());
        while let Some(conn) = self.listener.accept().await {
            let principal = match &conn.info.principal {
                Some(Principal::Named(name)) => name.clone(),
                // Not let in without a token (`http_options`); named for the log only.
                other => {
                    tracing::warn!(?other, "a session without a configured principal, closed");
                    continue;
                }
            };
            let config = self.config.clone();
            let principals = self.principals.clone();
            actix::spawn(async move {
                if let Err(e) = serve_http(&config, &principals, &principal, conn).await {
                    tracing::warn!(%principal, "cannot serve a client: {e}");
                }
            });
        }
        idle.abort();
    }
}

/// Serves one Streamable HTTP connection: a legacy session (its first message is
/// `initialize`) on a host of its own, or a modern request (a connection of its own,
/// which ends with its answer) by its principal's agent.
async fn serve_http(
    config: &SurfaceConfig,
    principals: &Arc<Principals>,
    principal: &str,
    mut conn: Connection,
) -> Result<(), ServeError> {
    let Some(first) = conn.inbound.recv().await else {
        return Ok(());
    };
    if let Inbound::Message {
        message: Message::Request(request),
        ..
    } = &first
    {
        match modern::era(request) {
            Ok(Era::Legacy) => {}
            Ok(Era::Modern(meta)) => {
                let answer = match modern::route(request, &meta) {
                    Ok(route) => answer_modern(principals, principal, request, route).await,
                    Err(e) => Response::err(Some(request.id.clone()), e),
                };
                send(&conn.outbound, answer).await;
                return Ok(());
            }
            // The transport reads `_meta` before it opens a connection for a modern
            // request; refused here all the same should it not.
            Err(e) => {
                send(&conn.outbound, Response::err(Some(request.id.clone()), e)).await;
                return Ok(());
            }
        }
    }
    let host = start_host(config, principal)?;
    // A legacy session: every request after its `initialize` is the legacy era's.
    session::run_from(conn, Some(first), host, options(config), None).await;
    Ok(())
}

/// A modern request's answer, from its principal's agent (none needed for
/// `server/discover`).
async fn answer_modern(
    principals: &Arc<Principals>,
    principal: &str,
    request: &Request,
    route: Route,
) -> Response {
    let id = request.id.clone();
    if route == Route::Discover {
        return modern::discover(id);
    }
    match principals.acquire(principal) {
        Ok(agent) => modern::serve(&agent, id, route).await,
        Err(e) => {
            tracing::warn!(%principal, "a modern request found no agent: {e}");
            Response::err(Some(id), e.to_error())
        }
    }
}

/// Writes an answer; a client that went away cancelled its request.
async fn send(out: &Outbound, answer: Response) {
    let _ = out.send(answer.into()).await;
}

//! Where clients come from: this process's stdin/stdout (the form MCP clients launch: one
//! client, one principal the operator names), or a Streamable HTTP listener whose bearer
//! tokens are the surface host's own, each naming a configured client (a principal with
//! its credentials per server). Each connection gets its own [`Host`]: two clients are two
//! agents.

use crate::config::{ConfigError, SurfaceConfig};
use crate::session::{self, SessionOptions};
use mcpl_host::host::{Host, HostError, HostHandle};
use mcpl_transport::{Connection, Principal, ServerOptions, http};
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
/// and no MCP 2026-07-28 requests: each connection starts a host, and serving that era is
/// issue #39 item 10's (a modern probe is answered -32601 and the client falls back).
pub fn http_options(config: &SurfaceConfig) -> ServerOptions {
    ServerOptions {
        tokens: config.client_tokens(),
        allow_anonymous: false,
        http_modern: false,
        ..ServerOptions::default()
    }
}

/// A Streamable HTTP listener of the surface host, endpoint `/mcp`.
#[derive(Debug)]
pub struct HttpSurface {
    listener: http::HttpListener,
    config: Arc<SurfaceConfig>,
}

impl HttpSurface {
    /// Binds `addr` (bind loopback unless other machines must reach it).
    pub async fn bind(config: Arc<SurfaceConfig>, addr: SocketAddr) -> Result<Self, ServeError> {
        let opts = Arc::new(http_options(&config));
        let listener = http::bind(addr, "/mcp", opts).await?;
        Ok(HttpSurface { listener, config })
    }

    /// The endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.listener.local_addr())
    }

    /// Serves every client that connects, each on its own task, until the listener fails.
    /// Must run on an actix system.
    pub async fn run(mut self) {
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
            actix::spawn(async move {
                if let Err(e) = serve_connection(&config, &principal, conn).await {
                    tracing::warn!(%principal, "cannot serve a client: {e}");
                }
            });
        }
    }
}

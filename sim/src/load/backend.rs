//! What the agents play on: the arcade in process ([`ArcadeService`]), or `--nodes N`
//! arcade processes behind the load balancer ([`crate::nodes`]); what the run asks of
//! either — where to connect, where to read the truth, what a restart is, what became of
//! the games.

use super::LoadError;
use crate::arcade::{ArcadeService, Resumed};
use crate::nodes::{Balancer, Cluster};
use crate::truth::Source;
use mcpl_games::arcade::listen::HTTP_PATH;
use std::net::SocketAddr;

/// The arcade of a run. See the module docs.
pub(crate) enum Backend {
    /// In process.
    Local(ArcadeService),
    /// Nodes, and the balancer in front of them (which runs on the proxies' thread).
    Nodes {
        cluster: Cluster,
        balancer: Balancer,
    },
}

impl Backend {
    /// Where WebSocket connections go.
    pub(crate) fn ws_addr(&self) -> SocketAddr {
        match self {
            Backend::Local(s) => s.ws_addr(),
            Backend::Nodes { balancer, .. } => balancer.ws_addr(),
        }
    }

    /// Where Streamable HTTP requests go.
    pub(crate) fn http_addr(&self) -> SocketAddr {
        match self {
            Backend::Local(s) => s.http_addr(),
            Backend::Nodes { balancer, .. } => balancer.http_addr(),
        }
    }

    /// `ws://ADDR`.
    pub(crate) fn ws_url(&self) -> String {
        format!("ws://{}", self.ws_addr())
    }

    /// `http://ADDR/mcp`.
    pub(crate) fn http_url(&self) -> String {
        format!("http://{}{HTTP_PATH}", self.http_addr())
    }

    /// Where the invariants read the server's truth.
    pub(crate) fn truth(&self) -> Source {
        match self {
            Backend::Local(s) => Source::from(s.arcade()),
            Backend::Nodes { .. } => Source::Remote(self.ws_url()),
        }
    }

    /// What the arcade saw of `principal`'s modern requests: Streamable HTTP connections
    /// it was handed (in process), or sessionless MCP 2026-07-28 requests the balancer
    /// forwarded and got an answer for (nodes).
    pub(crate) fn modern_requests(&self, principal: &str) -> u64 {
        match self {
            Backend::Local(s) => s.http_connections(principal),
            Backend::Nodes { balancer, .. } => balancer.modern_requests(principal),
        }
    }

    /// The chaos's restart: the arcade in process restarted (new listeners: `moved` is
    /// told their addresses), or a node killed and started again — the owner (the
    /// busiest, `--ownership principal`) at the first death, then it or another as `pick`
    /// (a number from the run's seed) says ([`Cluster::kill_picked`]).
    pub(crate) async fn restart(
        &mut self,
        pick: u64,
        moved: impl FnOnce(SocketAddr, SocketAddr),
    ) -> Result<(), LoadError> {
        match self {
            Backend::Local(s) => {
                s.restart().await?;
                moved(s.ws_addr(), s.http_addr());
            }
            Backend::Nodes { cluster, .. } => cluster.kill_picked(pick).await?,
        }
        Ok(())
    }

    /// What the restarts did to the games.
    pub(crate) async fn resumed(&self) -> Resumed {
        match self {
            Backend::Local(s) => s.resumed(),
            Backend::Nodes { cluster, .. } => cluster.resumed().await,
        }
    }

    /// Restarts so far (node deaths, with nodes).
    pub(crate) fn restarts(&self) -> u32 {
        match self {
            Backend::Local(s) => s.restarts(),
            Backend::Nodes { cluster, .. } => cluster.deaths().len() as u32,
        }
    }
}

//! How a link makes a connection. Production links connect to a URL; tests and the
//! simulator hand out in-memory pairs. Each call is one attempt; the link calls again after
//! its backoff when one fails or a connection drops.

use futures_util::future::BoxFuture;
use mcpl_transport::{ClientOptions, Connection, TransportError};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

type ConnectFn = dyn Fn() -> BoxFuture<'static, Result<Connection, TransportError>> + Send + Sync;

/// Makes one connection per call.
#[derive(Clone)]
pub struct Connector(Arc<ConnectFn>);

impl Connector {
    /// A connector from a closure returning one attempt's future.
    pub fn from_fn(
        f: impl Fn() -> BoxFuture<'static, Result<Connection, TransportError>> + Send + Sync + 'static,
    ) -> Self {
        Connector(Arc::new(f))
    }

    /// A connector to the server a URL names (`stdio:COMMAND …`, `ws://…`, `http://…`; see
    /// [`mcpl_transport::connect`]). Each attempt connects afresh: a stdio server is spawned
    /// again, a Streamable HTTP link starts a new session.
    pub fn url(url: impl Into<String>, options: ClientOptions) -> Self {
        let url = url.into();
        Connector::from_fn(move || {
            let (url, options) = (url.clone(), options.clone());
            Box::pin(async move { mcpl_transport::connect(&url, &options).await })
        })
    }

    /// Starts one connection attempt.
    pub fn connect(&self) -> BoxFuture<'static, Result<Connection, TransportError>> {
        (self.0)()
    }
}

impl fmt::Debug for Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Connector(..)")
    }
}

/// Why a connection attempt failed (before any handshake).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The transport could not connect.
    #[error("could not connect: {0}")]
    Transport(Arc<TransportError>),
    /// The attempt took longer than the connect timeout.
    #[error("no connection within {after:?}")]
    TimedOut {
        /// The timeout.
        after: Duration,
    },
}

//! The Streamable HTTP client's connections to its one endpoint: HTTP/1.1 over
//! `hyper::client::conn::http1`, through hyper-rustls's connector (so `https://` too), kept
//! idle between requests.
//!
//! A client talks to one origin, so the pool is a stack of idle connections, not a table
//! keyed by origin: taking one is a pop, where hyper-util's `client::legacy` pool hashed the
//! origin, compared authorities and spawned a task to hand each connection back, about a
//! fifth of a light call's client work (issue #18). What it did that matters is kept:
//!
//! - A connection goes back to the pool when its answer's body has been read to the end, or
//!   dropped; one that hyper closed (the server hung up, a body abandoned midway) is dropped.
//! - A request that a pooled connection could not take before writing any of it (the server
//!   closed the idle connection as the request was handed over) is tried again, on the next
//!   idle connection or a new one: nothing of it reached the server. A request written even
//!   in part is never sent again: a POST is not idempotent (RFC 9110 §9.2.2), the server
//!   may have acted on it.
//! - At most [`MAX_IDLE`] connections wait idle, none longer than [`IDLE_TIMEOUT`].

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::client::conn::http1;
use hyper::{Request, Response, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tower_service::Service;

/// A request's body: the client sends each message whole.
pub(super) type RequestBody = Full<Bytes>;

/// At most this many connections wait idle; a connection freed beyond them is closed. A
/// client has as many connections as POSTs at once, so this is the burst it keeps warm.
pub(super) const MAX_IDLE: usize = 64;

/// An idle connection older than this is closed rather than used (hyper-util's default):
/// servers close quiet connections, and one they closed may not have been noticed yet.
pub(super) const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub(super) enum PoolError {
    /// No connection could be made (refused, unreachable, TLS refused…).
    #[error("connecting failed")]
    Connect(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The connection was made but HTTP/1.1 could not be set up on it.
    #[error("the HTTP/1.1 handshake failed")]
    Handshake(#[source] hyper::Error),
    /// The request or its answer failed on the connection.
    #[error("the request failed")]
    Request(#[source] hyper::Error),
}

/// The connections of one client to its endpoint.
pub(super) struct Pool {
    connector: HttpsConnector<HttpConnector>,
    /// Scheme and authority: what the connector connects to.
    target: Uri,
    idle: Arc<Mutex<Vec<Idle>>>,
}

struct Idle {
    sender: http1::SendRequest<RequestBody>,
    since: Instant,
}

impl Pool {
    /// A pool of connections to `target` (its scheme and authority count) made by
    /// `connector`.
    pub(super) fn new(connector: HttpsConnector<HttpConnector>, target: Uri) -> Self {
        Pool {
            connector,
            target,
            idle: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Sends `request` (its URI in origin form, `Host` set) on an idle connection or a new
    /// one. The answer's body holds the connection until it ends or is dropped.
    pub(super) async fn request(
        &self,
        mut request: Request<RequestBody>,
    ) -> Result<Response<PooledBody>, PoolError> {
        loop {
            let (mut sender, reused) = match self.checkout() {
                Some(sender) => (sender, true),
                None => (self.connect().await?, false),
            };
            match sender.try_send_request(request).await {
                Ok(response) => {
                    let lease = Lease {
                        sender: Some(sender),
                        idle: self.idle.clone(),
                    };
                    return Ok(response.map(|body| PooledBody {
                        body,
                        lease: Some(lease),
                    }));
                }
                Err(mut failed) => match failed.take_message() {
                    // Nothing of it was written: a pooled connection the server had closed.
                    Some(unsent) if reused => {
                        tracing::trace!(error = %failed.error(), "a pooled connection was stale; the request goes on another");
                        request = unsent;
                    }
                    _ => return Err(PoolError::Request(failed.into_error())),
                },
            }
        }
    }

    /// The most recently freed idle connection that can take a request now.
    fn checkout(&self) -> Option<http1::SendRequest<RequestBody>> {
        let mut idle = lock(&self.idle);
        let now = Instant::now();
        while let Some(Idle { sender, since }) = idle.pop() {
            if now.duration_since(since) > IDLE_TIMEOUT {
                // The rest are older still.
                idle.clear();
                return None;
            }
            if sender.is_ready() {
                return Some(sender);
            }
        }
        None
    }

    async fn connect(&self) -> Result<http1::SendRequest<RequestBody>, PoolError> {
        let mut connector = self.connector.clone();
        // Both connectors are always ready (`poll_ready` is `Ready(Ok)`); `call` does it all.
        let io = connector
            .call(self.target.clone())
            .await
            .map_err(PoolError::Connect)?;
        let (sender, connection) = http1::handshake(io).await.map_err(PoolError::Handshake)?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "a Streamable HTTP client connection ended");
            }
        });
        Ok(sender)
    }
}

/// A connection out of the pool for one exchange; dropped, it goes back.
struct Lease {
    sender: Option<http1::SendRequest<RequestBody>>,
    idle: Arc<Mutex<Vec<Idle>>>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(mut sender) = self.sender.take() else {
            return;
        };
        if sender.is_closed() {
            return;
        }
        if sender.is_ready() {
            return put(&self.idle, sender);
        }
        // Not yet ready for the next request (its connection is still finishing this one, or
        // is closing): a task waits for it, unless there is no runtime to run one.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let idle = self.idle.clone();
        runtime.spawn(async move {
            if sender.ready().await.is_ok() {
                put(&idle, sender);
            }
        });
    }
}

/// Puts a ready connection on the idle stack, closing the oldest past [`MAX_IDLE`] and any
/// past [`IDLE_TIMEOUT`].
fn put(idle: &Mutex<Vec<Idle>>, sender: http1::SendRequest<RequestBody>) {
    let now = Instant::now();
    let mut idle = lock(idle);
    let stale = idle
        .iter()
        .take_while(|i| now.duration_since(i.since) > IDLE_TIMEOUT)
        .count();
    let over = (idle.len() + 1).saturating_sub(MAX_IDLE);
    idle.drain(..stale.max(over));
    idle.push(Idle { sender, since: now });
}

/// An answer's body; when it ends, fails or is dropped, its connection goes back to the pool.
pub(super) struct PooledBody {
    body: Incoming,
    lease: Option<Lease>,
}

impl Body for PooledBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            this.lease = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper_util::rt::TokioIo;

    /// A sender of a connection over an in-memory pipe (its connection task is kept in
    /// `keep`, unpolled: `put` and a stale `checkout` look at no connection state).
    async fn sender(keep: &mut Vec<Box<dyn std::any::Any>>) -> http1::SendRequest<RequestBody> {
        let (ours, theirs) = tokio::io::duplex(64);
        let (sender, connection) = http1::handshake::<_, RequestBody>(TokioIo::new(ours))
            .await
            .unwrap();
        keep.push(Box::new((connection, theirs)));
        sender
    }

    /// The idle stack keeps the newest [`MAX_IDLE`]; a connection idle past
    /// [`IDLE_TIMEOUT`] is closed when the next one is put, and never checked out.
    #[tokio::test]
    async fn at_most_max_idle_wait_and_none_past_the_idle_timeout() {
        let mut keep = Vec::new();
        let idle = Mutex::new(Vec::new());
        for _ in 0..MAX_IDLE + 6 {
            put(&idle, sender(&mut keep).await);
        }
        assert_eq!(lock(&idle).len(), MAX_IDLE, "the oldest six were closed");

        let long_ago = Instant::now() - IDLE_TIMEOUT - Duration::from_secs(1);
        for i in lock(&idle).iter_mut().take(10) {
            i.since = long_ago;
        }
        put(&idle, sender(&mut keep).await);
        assert_eq!(
            lock(&idle).len(),
            MAX_IDLE - 10 + 1,
            "the ten stale ones were closed"
        );

        // A pool whose newest idle connection is stale has none to give.
        let pool = Pool::new(
            HttpsConnector::from((HttpConnector::new(), crate::ClientTls::default().config())),
            Uri::from_static("http://127.0.0.1:1/"),
        );
        let stale = sender(&mut keep).await;
        lock(&pool.idle).push(Idle {
            sender: stale,
            since: long_ago,
        });
        assert!(pool.checkout().is_none());
        assert!(
            lock(&pool.idle).is_empty(),
            "stale ones are closed, not kept"
        );
    }
}

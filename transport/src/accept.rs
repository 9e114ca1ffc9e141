//! What a listener does when `accept` fails, shared by the WebSocket and Streamable HTTP
//! listeners.
//!
//! An error that is one connection's (it was reset before it was taken) costs nothing. Any
//! other — running out of file descriptors, above all — is not the peer's doing and will
//! fail again at once: the listener pauses [`ACCEPT_BACKOFF`] rather than spin on it (a
//! connection waiting in the kernel's backlog makes `accept` fail immediately, every time),
//! and says so at most a few times per interval ([`LogLimiter`]), with a count of what it
//! held back.

use crate::LogLimiter;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// How long accepting pauses after an error that is not one connection's; closing
/// connections may free what it lacked.
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(250);

/// The policy for one listener's accept errors (the transport's listeners', and any other
/// that accepts TCP: the arcade's spectator page).
#[derive(Debug)]
pub struct AcceptErrors {
    what: &'static str,
    log: LogLimiter,
}

impl AcceptErrors {
    /// For the listener named `what` in its log lines.
    pub fn new(what: &'static str) -> Self {
        AcceptErrors {
            what,
            log: LogLimiter::per_peer(),
        }
    }

    /// Handles one failed `accept`: nothing for a connection's own error, else a (rate
    /// limited) warning and a pause.
    pub async fn failed(&mut self, e: &io::Error) {
        if is_connection_error(e) {
            return;
        }
        let what = self.what;
        crate::warn_limited!(self.log, error = %e, "{what} accept failed; pausing");
        tokio::time::sleep(ACCEPT_BACKOFF).await;
    }

    /// The next connection `listener` accepts, past the errors [`AcceptErrors::failed`]
    /// handles.
    pub async fn accept(&mut self, listener: &TcpListener) -> (TcpStream, SocketAddr) {
        loop {
            match listener.accept().await {
                Ok(accepted) => return accepted,
                Err(e) => self.failed(&e).await,
            }
        }
    }
}

/// True for an error that is one connection's: it died before it was taken.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_lasting_error_pauses_and_a_connections_own_does_not() {
        let mut errors = AcceptErrors::new("test");
        let t0 = tokio::time::Instant::now();
        errors
            .failed(&io::Error::from(io::ErrorKind::ConnectionReset))
            .await;
        assert_eq!(t0.elapsed(), Duration::ZERO);
        // EMFILE: "Too many open files".
        errors.failed(&io::Error::from_raw_os_error(24)).await;
        assert_eq!(t0.elapsed(), ACCEPT_BACKOFF);
    }
}

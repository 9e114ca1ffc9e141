//! Why a vector did not pass, sorted by who is at fault: the server under test, then the
//! link to it. A vector that cannot run against a target is not an error: the runner skips
//! it before it starts (`Need`).

use mcpl_transport::TransportError;

/// Why a vector failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VectorError {
    /// The server broke a rule of RFC-014 (or of the fixture contract); says which.
    #[error("{0}")]
    Violation(String),
    /// The server sent something that is not a JSON-RPC message, or is too large.
    #[error("the server wrote something undecodable: {0}")]
    Undecodable(String),
    /// Nothing the vector waits for came in time.
    #[error("timed out waiting for {0}")]
    Timeout(String),
    /// The server closed the link while the vector waited.
    #[error("the server closed the connection while waiting for {0}")]
    Closed(String),
    /// Connecting or writing failed.
    #[error("transport: {0}")]
    Transport(#[from] TransportError),
    /// What the vector checks does not apply to this server, found out by asking it (a
    /// server that keeps toolsets has no idle time to check, S13): why. Reported as
    /// skipped, not failed.
    #[error("{0}")]
    NotApplicable(String),
}

/// What a vector step returns.
pub type Checked<T = ()> = Result<T, VectorError>;

/// A [`VectorError::Violation`] with this text.
pub fn violation(text: impl Into<String>) -> VectorError {
    VectorError::Violation(text.into())
}

/// Fails with a [`VectorError::Violation`] unless `cond` holds.
pub fn ensure(cond: bool, text: impl FnOnce() -> String) -> Checked {
    if cond { Ok(()) } else { Err(violation(text())) }
}

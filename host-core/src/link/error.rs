//! Errors, sorted by who is at fault, and the one place they map to JSON-RPC codes.

use super::phase::LinkPhase;
use mcpl_protocol::{ErrorCode, ErrorObject};
use std::time::Duration;

/// Why a request through the link failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    // The server: it answered, with an error or with something unreadable.
    /// The server answered with an error response.
    #[error("{method}: the server answered with an error: {error}")]
    Server {
        /// The request's method.
        method: &'static str,
        /// The server's error.
        error: ErrorObject,
    },
    /// The server's result does not fit the method's result type.
    #[error("{method}: the server's result is malformed: {detail}")]
    MalformedResult {
        /// The request's method.
        method: &'static str,
        /// What does not fit.
        detail: String,
    },
    /// The server answered this request's id with something that is not a valid JSON-RPC
    /// response (both `result` and `error`, neither, …).
    #[error("{method}: the server's response is not valid JSON-RPC: {detail}")]
    MalformedResponse {
        /// The request's method.
        method: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The server's pages never end: it handed out a cursor it had already given, or more
    /// pages than the link will follow.
    #[error("{method}: the server's paging does not end (cursor {cursor:?})")]
    EndlessPaging {
        /// The request's method.
        method: &'static str,
        /// The cursor that would have been followed.
        cursor: String,
    },
    /// No response within the timeout. The link sent `notifications/cancelled`; a result
    /// that still arrives is read and tapped (§5.2, vector 28) but reaches no caller.
    #[error("{method}: no response within {after:?}")]
    Timeout {
        /// The request's method.
        method: &'static str,
        /// The timeout.
        after: Duration,
    },

    /// A modern server asked, in an `InputRequiredResult`, for input this host does not
    /// give (sampling, roots: it does not declare them); the call is not retried.
    #[error(
        "{method}: the server asked for {asked:?}, which this host does not provide (it declares only form elicitation)"
    )]
    InputDeclined {
        /// The request's method.
        method: &'static str,
        /// The method of the input asked for.
        asked: String,
    },
    /// A modern server kept answering `InputRequiredResult` after this many retries.
    #[error("{method}: the server still asked for input after {rounds} answered rounds")]
    InputRounds {
        /// The request's method.
        method: &'static str,
        /// The retries made.
        rounds: u32,
    },

    // The connection.
    /// The link is not ready (connecting, in its handshake, or backing off); nothing was
    /// sent.
    #[error("not connected to the server (the link is {phase:?})")]
    NotConnected {
        /// Where the link is.
        phase: LinkPhase,
    },
    /// The connection went while the request was in flight; it may or may not have been
    /// carried out.
    #[error("{method}: the connection went before the response: {reason}")]
    Disconnected {
        /// The request's method.
        method: &'static str,
        /// Why the connection went.
        reason: DisconnectReason,
    },

    // The caller.
    /// The method is the link's own (`initialize`): a caller may not send it.
    #[error("{method} is sent by the link itself")]
    ReservedMethod {
        /// The method.
        method: &'static str,
    },

    // The link.
    /// The link actor has stopped.
    #[error("the server link has stopped")]
    Stopped,
}

impl LinkError {
    /// The JSON-RPC error this becomes when a host passes it on to a client of its own (a
    /// surface host, §6): the server's own error as it was, the rest by MCP's SDK
    /// conventions.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            LinkError::Server { error, .. } => error.clone(),
            LinkError::Timeout { .. } => {
                ErrorObject::new(ErrorCode::REQUEST_TIMEOUT, self.to_string())
            }
            LinkError::NotConnected { .. }
            | LinkError::Disconnected { .. }
            | LinkError::Stopped => {
                ErrorObject::new(ErrorCode::CONNECTION_CLOSED, self.to_string())
            }
            LinkError::ReservedMethod { .. } => {
                ErrorObject::new(ErrorCode::INVALID_REQUEST, self.to_string())
            }
            LinkError::MalformedResult { .. }
            | LinkError::MalformedResponse { .. }
            | LinkError::EndlessPaging { .. }
            | LinkError::InputDeclined { .. }
            | LinkError::InputRounds { .. } => ErrorObject::internal(self),
        }
    }
}

/// Why a connection ended.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DisconnectReason {
    // The server.
    /// The server answered `initialize` with a protocol version this host does not speak.
    #[error(
        "the server offered protocol version {version:?}, which this host does not speak (it speaks {supported:?})"
    )]
    UnsupportedProtocolVersion {
        /// What the server offered.
        version: String,
        /// What this host speaks.
        supported: &'static [&'static str],
    },
    /// The server answered a handshake request with an error.
    #[error("the server refused {method}: {error}")]
    HandshakeRejected {
        /// `initialize` or `featureSets/update`.
        method: &'static str,
        /// The server's error.
        error: ErrorObject,
    },
    /// The server's handshake result is malformed.
    #[error("the server's {method} result is malformed: {detail}")]
    HandshakeMalformed {
        /// `initialize` or `featureSets/update`.
        method: &'static str,
        /// What does not fit.
        detail: String,
    },
    /// The server refused the grant and did not offer to go on as plain MCP (SPEC §6.7).
    #[error("the server refused the capability grant ({}), fallback {fallback:?}", reason.as_deref().unwrap_or("no reason given"))]
    GrantRefused {
        /// The server's reason.
        reason: Option<String>,
        /// The server's fallback (`"close"`, or absent).
        fallback: Option<String>,
    },
    /// A handshake request got no response in time.
    #[error("the server did not answer {method} within {after:?}")]
    HandshakeTimeout {
        /// `initialize` or `featureSets/update`.
        method: &'static str,
        /// The timeout.
        after: Duration,
    },

    /// The link speaks only the modern era (`era = "modern"`) and the server did not answer
    /// `server/discover` as a modern server.
    #[error(
        "the server is not a modern (2026-07-28) one, and this link speaks no other era: {why}"
    )]
    NotModern {
        /// What its answer was.
        why: String,
    },

    /// The server does not read what this host writes: `queued` messages waited to be
    /// written, or one waited longer than the write timeout.
    #[error("the server does not read what this host writes ({queued} messages waiting)")]
    NotReading {
        /// Messages waiting when the link gave up.
        queued: usize,
    },

    // The transport.
    /// The connection closed (the server went, or the transport failed).
    #[error("the connection closed")]
    Closed,
    /// The connection closed, and the transport says why: a stdio server that exited by
    /// itself, with its exit status and last stderr lines (issue #43).
    #[error("the connection closed: {why}")]
    Ended {
        /// The transport's words.
        why: String,
    },

    // This host.
    /// The link was shut down.
    #[error("the link was shut down")]
    Shutdown,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_json_rpc_codes_in_one_place() {
        let server = ErrorObject::new(ErrorCode(-32050), "busy");
        let cases = [
            (
                LinkError::Server {
                    method: "tools/call",
                    error: server.clone(),
                },
                server.code,
            ),
            (
                LinkError::Timeout {
                    method: "tools/call",
                    after: Duration::from_secs(1),
                },
                ErrorCode::REQUEST_TIMEOUT,
            ),
            (
                LinkError::NotConnected {
                    phase: LinkPhase::Backoff,
                },
                ErrorCode::CONNECTION_CLOSED,
            ),
            (
                LinkError::Disconnected {
                    method: "tools/call",
                    reason: DisconnectReason::Closed,
                },
                ErrorCode::CONNECTION_CLOSED,
            ),
            (LinkError::Stopped, ErrorCode::CONNECTION_CLOSED),
            (
                LinkError::ReservedMethod {
                    method: "initialize",
                },
                ErrorCode::INVALID_REQUEST,
            ),
            (
                LinkError::MalformedResult {
                    method: "tools/call",
                    detail: "x".into(),
                },
                ErrorCode::INTERNAL_ERROR,
            ),
        ];
        for (error, code) in cases {
            assert_eq!(error.to_error_object().code, code, "{error:?}");
        }
        assert_eq!(
            LinkError::Server {
                method: "tools/call",
                error: server.clone()
            }
            .to_error_object(),
            server
        );
    }
}

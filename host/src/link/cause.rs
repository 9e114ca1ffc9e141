//! Why a server is not connected, as a person at a terminal would want it said: a token the
//! server refused (HTTP 401, on a WebSocket upgrade or on Streamable HTTP's `initialize`),
//! a connection refused (nothing listens there), a host that cannot be reached, and the
//! rest in the link's own words.

use super::connector::ConnectError;
use super::core::error::DisconnectReason;
use mcpl_protocol::ErrorCode;
use mcpl_transport::TransportError;
use std::io::ErrorKind;

/// What a person is told when the server refused the host's credentials.
pub const TOKEN_REFUSED: &str = "the server refused the token (HTTP 401)";

/// What a person is told when nothing listens at the server's address.
pub const REFUSED: &str = "connection refused: nothing listens there";

/// Why a connection attempt failed, plainly.
pub fn of_connect(error: &ConnectError) -> String {
    match error {
        ConnectError::Transport(t) => match &**t {
            TransportError::Unauthorized => TOKEN_REFUSED.to_owned(),
            TransportError::Io(e) => of_io(e),
            other => other.to_string(),
        },
        ConnectError::TimedOut { after } => {
            format!("unreachable: no connection within {after:?}")
        }
    }
}

/// Why a connection ended, plainly. A refused `initialize` whose error carries the HTTP
/// status (Streamable HTTP's way of saying the POST was refused) is said by that status.
pub fn of_disconnect(reason: &DisconnectReason) -> String {
    if let DisconnectReason::HandshakeRejected { error, .. } = reason {
        let status = error
            .data
            .as_ref()
            .and_then(|d| d.get("httpStatus"))
            .and_then(serde_json::Value::as_u64);
        match status {
            Some(401) => return TOKEN_REFUSED.to_owned(),
            Some(s) => return format!("the server refused the connection (HTTP {s})"),
            // No status: the request never got an answer (Streamable HTTP's way of saying
            // the POST could not be made): not a refusal by the server — unless nothing
            // listens there, which the transport says in `data.ioError`.
            None if error.code == ErrorCode::CONNECTION_CLOSED => {
                let io = error
                    .data
                    .as_ref()
                    .and_then(|d| d.get("ioError"))
                    .and_then(serde_json::Value::as_str);
                if io == Some("ConnectionRefused") {
                    return REFUSED.to_owned();
                }
                return format!("unreachable: {}", error.message);
            }
            None => {}
        }
    }
    reason.to_string()
}

fn of_io(e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::ConnectionRefused => REFUSED.to_owned(),
        ErrorKind::TimedOut
        | ErrorKind::HostUnreachable
        | ErrorKind::NetworkUnreachable
        | ErrorKind::AddrNotAvailable => format!("unreachable: {e}"),
        _ => format!("could not connect: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::ErrorObject;
    use std::sync::Arc;
    use std::time::Duration;

    fn transport(e: TransportError) -> ConnectError {
        ConnectError::Transport(Arc::new(e))
    }

    #[test]
    fn a_refused_token_a_refused_connection_and_an_unreachable_host_are_told_apart() {
        assert_eq!(
            of_connect(&transport(TransportError::Unauthorized)),
            TOKEN_REFUSED
        );
        let refused = std::io::Error::from(ErrorKind::ConnectionRefused);
        assert!(of_connect(&transport(refused.into())).starts_with("connection refused"));
        let unreachable = std::io::Error::from(ErrorKind::HostUnreachable);
        assert!(of_connect(&transport(unreachable.into())).starts_with("unreachable"));
        let slow = ConnectError::TimedOut {
            after: Duration::from_secs(5),
        };
        assert!(of_connect(&slow).starts_with("unreachable"));
        let rejected = transport(TransportError::Rejected { status: 403 });
        assert!(of_connect(&rejected).contains("403"));
    }

    #[test]
    fn a_refused_initialize_is_said_by_its_http_status() {
        let refused = |status: Option<u16>| {
            let mut error = ErrorObject::new(ErrorCode::CONNECTION_CLOSED, "POST refused");
            error.data = status.map(|s| serde_json::json!({ "httpStatus": s }));
            DisconnectReason::HandshakeRejected {
                method: "initialize",
                error,
            }
        };
        assert_eq!(of_disconnect(&refused(Some(401))), TOKEN_REFUSED);
        assert!(of_disconnect(&refused(Some(403))).contains("HTTP 403"));
        let unanswered = of_disconnect(&refused(None));
        assert!(
            unanswered.starts_with("unreachable: ") && unanswered.contains("POST refused"),
            "{unanswered}"
        );
        let mut nobody = ErrorObject::new(ErrorCode::CONNECTION_CLOSED, "the POST failed");
        nobody.data = Some(serde_json::json!({"ioError": "ConnectionRefused"}));
        let nobody = DisconnectReason::HandshakeRejected {
            method: "initialize",
            error: nobody,
        };
        assert_eq!(of_disconnect(&nobody), REFUSED);
        let server_error = DisconnectReason::HandshakeRejected {
            method: "initialize",
            error: ErrorObject::new(ErrorCode(-32602), "bad version"),
        };
        assert!(of_disconnect(&server_error).contains("bad version"));
        assert_eq!(
            of_disconnect(&DisconnectReason::Closed),
            "the connection closed"
        );
    }
}

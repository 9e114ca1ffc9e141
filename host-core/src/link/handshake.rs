//! The handshake's decisions: what follows the era probe's answer, and whether an
//! `initialize` result is taken. The actor (`discover.rs`, `handshake.rs`) sends and
//! tells what these say; `era.rs` reads the probe's answer itself.
//!
//! - The probe's answer (`era.rs`): a modern server's discovery makes the session Ready;
//!   a -32022 listing a modern version this host speaks sends the probe again, once, with
//!   it (a second refusal is final); a modern error ends the connection, and the server is
//!   remembered modern (falling back from a modern server would be wrong); anything else
//!   falls back to `initialize` — unless the link speaks only the modern era, then the
//!   connection ends as `NotModern`.
//! - `initialize`: an error, no answer in time or a malformed result ends the connection
//!   (and a server remembered legacy is probed afresh next time); so does a protocol
//!   version this host does not speak.

use super::decode::decode;
use super::era::{Era, EraPolicy, Probe, read_probe};
use super::error::{DisconnectReason, LinkError};
use super::grant::handshake_failure;
use mcpl_protocol::jsonrpc::RawValue;
use mcpl_protocol::mcp::{InitializeResult, SUPPORTED_PROTOCOL_VERSIONS, is_supported_version};
use mcpl_protocol::method::{Initialize, Method};
use mcpl_protocol::modern::SERVER_DISCOVER;

/// What follows the probe's answer.
#[derive(Debug, PartialEq)]
pub enum ProbeStep {
    /// Nothing: the connection went.
    Ignored,
    /// Send the probe again, stamped with this version.
    Again(String),
    /// A modern server: its discovery, as an `initialize` result would say it.
    Modern(Box<InitializeResult>),
    /// A legacy server: `initialize` follows on this connection; why, for the log.
    Initialize(String),
    /// The connection ends; `found` is what the server was found to be, if anything.
    End {
        /// Why.
        reason: DisconnectReason,
        /// The era to remember.
        found: Option<Era>,
    },
}

/// Decides what follows the probe's answer on a link configured `policy`; `retried`: it
/// answers the second probe.
pub fn probe_step(
    outcome: Result<Box<RawValue>, LinkError>,
    retried: bool,
    policy: EraPolicy,
) -> ProbeStep {
    if let Err(LinkError::Disconnected { .. } | LinkError::Stopped) = outcome {
        return ProbeStep::Ignored;
    }
    match read_probe(outcome, policy) {
        Probe::Modern(init) => ProbeStep::Modern(init),
        Probe::Retry { version, .. } if !retried => ProbeStep::Again(version),
        Probe::Retry { error, .. } | Probe::Refused(error) => ProbeStep::End {
            reason: DisconnectReason::HandshakeRejected {
                method: SERVER_DISCOVER,
                error,
            },
            found: Some(Era::Modern),
        },
        Probe::Legacy(why) if policy == EraPolicy::Modern => ProbeStep::End {
            reason: DisconnectReason::NotModern { why },
            found: None,
        },
        Probe::Legacy(why) => ProbeStep::Initialize(why),
    }
}

/// Reads `initialize`'s outcome: the result taken, or why the connection ends.
pub fn read_initialize(
    outcome: Result<Box<RawValue>, LinkError>,
) -> Result<InitializeResult, DisconnectReason> {
    let init: InitializeResult = outcome
        .and_then(|r| decode(Initialize::NAME, &r))
        .map_err(|e| handshake_failure(Initialize::NAME, e))?;
    if !is_supported_version(&init.protocol_version) {
        return Err(DisconnectReason::UnsupportedProtocolVersion {
            version: init.protocol_version,
            supported: &SUPPORTED_PROTOCOL_VERSIONS,
        });
    }
    Ok(init)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, to_raw};
    use mcpl_protocol::modern::MODERN_PROTOCOL_VERSION;
    use serde_json::json;
    use std::time::Duration;

    fn refused_version(supported: &[&str]) -> Result<Box<RawValue>, LinkError> {
        Err(LinkError::Server {
            method: SERVER_DISCOVER,
            error: ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "no")
                .with_data(json!({ "supported": supported })),
        })
    }

    #[test]
    fn issue38_02_a_refused_version_is_probed_again_once_then_final() {
        let first = probe_step(
            refused_version(&[MODERN_PROTOCOL_VERSION]),
            false,
            EraPolicy::Auto,
        );
        assert_eq!(first, ProbeStep::Again(MODERN_PROTOCOL_VERSION.to_owned()));
        let second = probe_step(
            refused_version(&[MODERN_PROTOCOL_VERSION]),
            true,
            EraPolicy::Auto,
        );
        assert!(matches!(
            second,
            ProbeStep::End {
                reason: DisconnectReason::HandshakeRejected { .. },
                found: Some(Era::Modern)
            }
        ));
        // Only legacy versions it speaks: initialize follows.
        assert!(matches!(
            probe_step(refused_version(&["2025-06-18"]), false, EraPolicy::Auto),
            ProbeStep::Initialize(_)
        ));
    }

    #[test]
    fn issue38_02_silence_falls_back_unless_the_link_is_modern_only() {
        let silence = || {
            Err(LinkError::Timeout {
                method: SERVER_DISCOVER,
                after: Duration::from_secs(3),
            })
        };
        assert!(matches!(
            probe_step(silence(), false, EraPolicy::Auto),
            ProbeStep::Initialize(_)
        ));
        assert!(matches!(
            probe_step(silence(), false, EraPolicy::Modern),
            ProbeStep::End {
                reason: DisconnectReason::NotModern { .. },
                found: None
            }
        ));
        assert_eq!(
            probe_step(Err(LinkError::Stopped), false, EraPolicy::Auto),
            ProbeStep::Ignored
        );
        let modern = probe_step(
            Ok(to_raw(
                &json!({"supportedVersions": [MODERN_PROTOCOL_VERSION]}),
            )),
            false,
            EraPolicy::Auto,
        );
        assert!(
            matches!(modern, ProbeStep::Modern(init) if init.protocol_version == MODERN_PROTOCOL_VERSION)
        );
    }

    #[test]
    fn issue38_02_an_initialize_result_in_a_version_not_spoken_ends_the_connection() {
        let result = |version: &str| {
            Ok(to_raw(&json!({
                "protocolVersion": version, "capabilities": {},
                "serverInfo": {"name": "s", "version": "1"}
            })))
        };
        assert!(read_initialize(result("2025-06-18")).is_ok());
        assert!(matches!(
            read_initialize(result("1999-01-01")),
            Err(DisconnectReason::UnsupportedProtocolVersion { .. })
        ));
        assert!(matches!(
            read_initialize(Ok(to_raw(&json!({"protocolVersion": 3})))),
            Err(DisconnectReason::HandshakeMalformed { .. })
        ));
    }
}

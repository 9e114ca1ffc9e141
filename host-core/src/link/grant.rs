//! The grant rules (SPEC §5.3, §5.4, §6.7, §17.5), as decisions on a [`Session`]: the
//! policy proposed, a receipt read, a renegotiation after the manifest changed. The actor
//! (`handshake.rs`, `policy.rs`) sends what these return and tells what they changed.
//!
//! - **The proposal** is the server's advertisement, as this host reads it, intersected
//!   with the host's own policy, sent as concrete paths; what it leaves out is denied; the
//!   feature sets this host reads as invalid are named in `disabled`.
//! - **Revoke at once**: a renegotiation that narrows the grant puts the narrower grant in
//!   force before the request is sent (host-first).
//! - **Widen on receipt**: a grant wider than the one in force is in force only once the
//!   server accepted it, and never if no receipt comes.
//! - **Fall back**: a receipt that refuses with `fallback: "close"` ends the connection;
//!   one refusing otherwise serves the server as plain MCP; so does an initial exchange
//!   that failed (an error, a malformed receipt), while a later one that failed changes
//!   nothing. An initial exchange with no answer — the transport lost it
//!   (`CONNECTION_CLOSED`), or none came in time — ends the connection so that the
//!   handshake starts again after the backoff: nothing says the server refused, and a
//!   server too busy to answer in time is not one without MCPL (issue #42: under overload
//!   hosts fell back to plain MCP for good, and lost every hint; **\[project\]**, README
//!   "No receipt in time is no refusal"). Only [`POLICY_RETRIES`] connections in a row:
//!   then one more unanswered falls back to plain MCP, as RFC-002 §12 has a legacy server
//!   that never answers do ([`initial_unanswered`]).
//!   A receipt for a policy older than the last one sent is stale and ignored.

use super::decode::decode;
use super::error::{DisconnectReason, LinkError};
use super::session::Session;
use mcpl_protocol::ErrorObject;
use mcpl_protocol::grant::{self, Grant, Refusal};
use mcpl_protocol::jsonrpc::{ErrorCode, RawValue};
use mcpl_protocol::mcpl::{FeatureSetsUpdateParams, FeatureSetsUpdateResult};
use mcpl_protocol::method::{FeatureSetsUpdate, Method};

/// The receipt's fallback under which a server that refused the grant is closed.
pub const FALLBACK_CLOSE: &str = "close";

/// What a `featureSets/update` answer says.
#[derive(Debug)]
pub enum Receipt {
    /// The server took the policy.
    Accepted(FeatureSetsUpdateResult),
    /// Refused with `fallback: "close"`.
    Close(FeatureSetsUpdateResult),
    /// Refused otherwise.
    Refused(FeatureSetsUpdateResult),
    /// No usable answer: an error, a malformed receipt.
    Failed(LinkError),
    /// No answer: the transport lost the request or its answer (it answered
    /// `CONNECTION_CLOSED`), or none came in time.
    Lost(LinkError),
    /// The connection went.
    Gone,
}

/// Reads a `featureSets/update` outcome.
pub fn read_receipt(outcome: Result<Box<RawValue>, LinkError>) -> Receipt {
    match outcome {
        Err(LinkError::Disconnected { .. } | LinkError::Stopped) => Receipt::Gone,
        Err(e @ LinkError::Timeout { .. }) => Receipt::Lost(e),
        Err(e @ LinkError::Server { .. }) if matches!(&e, LinkError::Server { error, .. } if error.code == ErrorCode::CONNECTION_CLOSED) => {
            Receipt::Lost(e)
        }
        outcome => {
            match outcome
                .and_then(|r| decode::<FeatureSetsUpdateResult>(FeatureSetsUpdate::NAME, &r))
            {
                Ok(r) if r.accepted => Receipt::Accepted(r),
                Ok(r) if r.fallback.as_deref() == Some(FALLBACK_CLOSE) => Receipt::Close(r),
                Ok(r) => Receipt::Refused(r),
                Err(e) => Receipt::Failed(e),
            }
        }
    }
}

/// How many connections in a row may leave the initial policy unanswered — each closed,
/// the handshake made again after the backoff — before the next unanswered one serves the
/// server as plain MCP (RFC-002 §12: "a legacy server that never answers times out and falls
/// back to MCP-only — or is closed, at host policy"; issue #42: a server too busy to answer
/// in time is given two more connections **\[project\]**).
pub const POLICY_RETRIES: u32 = 2;

/// The initial policy exchange's receipt as [`Session::initial_receipt`] is to take it,
/// given how many connections before this one in a row left theirs unanswered, and that
/// count after it: an unanswered exchange is [`Receipt::Lost`] (the connection ends) up to
/// [`POLICY_RETRIES`] in a row, then [`Receipt::Failed`] (plain MCP); an answer, whatever
/// it says, starts the count over.
pub fn initial_unanswered(receipt: Receipt, in_row: u32) -> (Receipt, u32) {
    match receipt {
        Receipt::Lost(e @ LinkError::Timeout { .. }) if in_row >= POLICY_RETRIES => {
            (Receipt::Failed(e), 0)
        }
        r @ Receipt::Lost(LinkError::Timeout { .. }) => (r, in_row.saturating_add(1)),
        r @ (Receipt::Lost(_) | Receipt::Gone) => (r, in_row),
        r => (r, 0),
    }
}

/// What a receipt did to the session.
#[derive(Debug, PartialEq)]
pub enum Granting {
    /// The proposed grant is in force.
    InForce,
    /// MCPL is off: the server is served as plain MCP; why, for the log.
    FellBack(String),
    /// Nothing changed (a later exchange that failed: an expansion unanswered does not
    /// activate, a revocation already did); why, for the log.
    Kept(String),
    /// The connection ends.
    End(DisconnectReason),
    /// Nothing to do: the connection went, or the receipt is stale.
    Ignored,
}

/// A renegotiation's outcome.
#[derive(Debug)]
pub struct Renegotiation {
    /// The grant in force was narrowed at once.
    pub revoked: bool,
    /// The policy to send, and the grant it proposes; none when nothing changed.
    pub request: Option<(FeatureSetsUpdateParams, Vec<String>)>,
}

/// Why a handshake request's failure ends the connection.
pub fn handshake_failure(method: &'static str, error: LinkError) -> DisconnectReason {
    match error {
        LinkError::Server { error, .. } => DisconnectReason::HandshakeRejected { method, error },
        LinkError::Timeout { after, .. } => DisconnectReason::HandshakeTimeout { method, after },
        LinkError::MalformedResult { detail, .. } | LinkError::MalformedResponse { detail, .. } => {
            DisconnectReason::HandshakeMalformed { method, detail }
        }
        LinkError::Disconnected { reason, .. } => reason,
        // Nothing else reaches a handshake request's waiter while its connection lives.
        _ => DisconnectReason::Closed,
    }
}

/// Why a server request this host does not serve is refused, on a connection whose
/// session is `session` (none before `initialize` was accepted). SPEC §5.4: a capability
/// not granted behaves as if never advertised, and an inbound method needing one is
/// rejected with §6.6's -32002 naming it (`model/info` needs `modelInfo`). A method gated
/// by nothing, or by what the grant allows but this host does not implement, is not found
/// (-32601); so is every MCPL method on a link that does not speak MCPL.
pub fn refusal_of(session: Option<&Session>, method: &str) -> ErrorObject {
    let session = session.filter(|s| s.speaks_mcpl());
    match (session, grant::server_method_capability(method)) {
        (Some(s), Some(capability)) if !s.grant().allows(capability) => Refusal::CapabilityDenied {
            capability: capability.to_owned(),
        }
        .to_error(),
        _ => ErrorObject::method_not_found(method),
    }
}

impl Session {
    /// The policy request for the manifest as it now reads under the host's `policy`, and
    /// the grant in it; counts it as the last policy sent.
    pub fn policy(&mut self, policy: &Grant) -> (FeatureSetsUpdateParams, Vec<String>) {
        let proposed = self.intended_grant(policy);
        let (denied, disabled) = match self.manifest() {
            Some(m) => (
                grant::advertised(m, self.init.capabilities.tools.is_some())
                    .into_iter()
                    .filter(|p| !proposed.iter().any(|g| g == p))
                    .map(str::to_owned)
                    .collect(),
                m.invalid_feature_sets.keys().cloned().collect::<Vec<_>>(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        self.policy_seq += 1;
        self.disabled_sent = disabled.clone();
        let params = FeatureSetsUpdateParams {
            effective_capabilities: proposed.clone(),
            denied_capabilities: denied,
            disabled,
            ..Default::default()
        };
        (params, proposed)
    }

    /// The manifest was re-read (§17.5): derives the feature sets again and, when the
    /// grant or the invalid sets changed, makes the policy to send again — revoking at
    /// once, widening only on its receipt (§6.7).
    pub fn renegotiate(&mut self, policy: &Grant) -> Renegotiation {
        self.rederive();
        let intended = self.intended_grant(policy);
        let invalid: Vec<String> = self
            .manifest()
            .map(|m| m.invalid_feature_sets.keys().cloned().collect())
            .unwrap_or_default();
        let unchanged = intended == self.granted && invalid == self.disabled_sent;
        let kept: Vec<String> = self
            .granted
            .iter()
            .filter(|p| intended.contains(p))
            .cloned()
            .collect();
        let revoked = kept.len() != self.granted.len();
        if revoked {
            // Host-first: the narrower grant is in force before anyone is told.
            self.set_granted(kept);
        }
        let request = (!unchanged).then(|| self.policy(policy));
        Renegotiation { revoked, request }
    }

    /// The initial policy's receipt (§5.3): the grant in force, or plain MCP, or the end.
    pub fn initial_receipt(&mut self, proposed: Vec<String>, receipt: Receipt) -> Granting {
        match receipt {
            Receipt::Gone => Granting::Ignored,
            Receipt::Lost(e) => Granting::End(handshake_failure(FeatureSetsUpdate::NAME, e)),
            Receipt::Close(r) => Granting::End(DisconnectReason::GrantRefused {
                reason: r.reason,
                fallback: r.fallback,
            }),
            Receipt::Accepted(r) => {
                self.set_granted(proposed);
                self.receipt = Some(r);
                Granting::InForce
            }
            Receipt::Refused(r) => {
                self.fall_back_to_mcp();
                Granting::FellBack(format!("refused: {}", r.reason.unwrap_or_default()))
            }
            Receipt::Failed(e) => {
                self.fall_back_to_mcp();
                Granting::FellBack(e.to_string())
            }
        }
    }

    /// A later policy's receipt, for the policy numbered `seq`.
    pub fn later_receipt(&mut self, seq: u64, proposed: Vec<String>, receipt: Receipt) -> Granting {
        if seq != self.policy_seq {
            return Granting::Ignored; // a newer policy was sent since
        }
        match receipt {
            Receipt::Gone => Granting::Ignored,
            Receipt::Accepted(r) => {
                self.set_granted(proposed);
                self.receipt = Some(r);
                Granting::InForce
            }
            Receipt::Close(r) => Granting::End(DisconnectReason::GrantRefused {
                reason: r.reason,
                fallback: r.fallback,
            }),
            Receipt::Refused(r) => {
                self.fall_back_to_mcp();
                Granting::FellBack(format!("{:?}", r.reason))
            }
            // An unanswered expansion does not activate; a revocation already did.
            Receipt::Failed(e) | Receipt::Lost(e) => Granting::Kept(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::to_raw;
    use mcpl_protocol::mcp::InitializeResult;
    use mcpl_protocol::mcpl::McplManifest;
    use serde_json::json;

    /// A server that speaks MCPL, lists tools and advertises `pushEvents` as `push` says.
    fn session(push: bool) -> Session {
        let init: InitializeResult = serde_json::from_value(json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}, "experimental": {"mcpl": {"version": "0.5", "pushEvents": push}}},
            "serverInfo": {"name": "s", "version": "1"}
        }))
        .unwrap();
        Session::new(init)
    }

    fn host_policy() -> Grant {
        Grant::new(["tools".to_owned(), "pushEvents".to_owned()])
    }

    fn receipt(v: serde_json::Value) -> Receipt {
        read_receipt(Ok(to_raw(&v)))
    }

    fn manifest(push: bool) -> McplManifest {
        serde_json::from_value(json!({"version": "0.5", "pushEvents": push})).unwrap()
    }

    #[test]
    fn issue38_02_the_initial_grant_is_in_force_only_on_its_receipt() {
        let mut s = session(true);
        let (params, proposed) = s.policy(&host_policy());
        assert_eq!(params.effective_capabilities, ["pushEvents", "tools"]);
        assert_eq!(s.policy_seq, 1);
        assert!(
            s.granted.is_empty(),
            "nothing granted before the receipt (§5.3)"
        );
        let verdict = s.initial_receipt(proposed, receipt(json!({"accepted": true})));
        assert_eq!(verdict, Granting::InForce);
        assert_eq!(s.granted, ["pushEvents", "tools"]);
        assert!(s.speaks_mcpl());
    }

    #[test]
    fn issue38_02_an_initial_exchange_that_fails_falls_back_or_ends() {
        let proposed = || vec!["tools".to_owned()];
        let mut s = session(true);
        let refused = receipt(json!({"accepted": false, "reason": "no"}));
        assert!(matches!(
            s.initial_receipt(proposed(), refused),
            Granting::FellBack(_)
        ));
        assert!(!s.speaks_mcpl() && s.granted.is_empty(), "plain MCP");
        let mut s = session(true);
        let malformed = receipt(json!({"accepted": "yes"}));
        assert!(matches!(
            s.initial_receipt(proposed(), malformed),
            Granting::FellBack(_)
        ));
        let mut s = session(true);
        let close = receipt(json!({"accepted": false, "fallback": "close"}));
        assert!(matches!(
            s.initial_receipt(proposed(), close),
            Granting::End(DisconnectReason::GrantRefused { .. })
        ));
        let mut s = session(true);
        let lost = read_receipt(Err(LinkError::Server {
            method: "featureSets/update",
            error: ErrorObject::new(ErrorCode::CONNECTION_CLOSED, "lost"),
        }));
        assert!(
            matches!(
                s.initial_receipt(proposed(), lost),
                Granting::End(DisconnectReason::HandshakeRejected { .. })
            ),
            "a lost exchange starts the handshake again, it does not fall back"
        );
        assert!(s.speaks_mcpl());
        // Issue #42: no receipt in time is no refusal either (a server too busy to answer).
        let mut s = session(true);
        let unanswered = read_receipt(Err(LinkError::Timeout {
            method: "featureSets/update",
            after: std::time::Duration::from_secs(10),
        }));
        assert!(
            matches!(
                s.initial_receipt(proposed(), unanswered),
                Granting::End(DisconnectReason::HandshakeTimeout { .. })
            ),
            "an unanswered exchange starts the handshake again, it does not fall back"
        );
        assert!(s.speaks_mcpl());
        // Up to POLICY_RETRIES connections in a row; the next unanswered one falls back.
        let timeout = || {
            read_receipt(Err(LinkError::Timeout {
                method: "featureSets/update",
                after: std::time::Duration::from_secs(10),
            }))
        };
        let mut in_row = 0;
        for n in 1..=POLICY_RETRIES {
            let (r, after) = initial_unanswered(timeout(), in_row);
            assert!(matches!(r, Receipt::Lost(_)), "{n}: {r:?}");
            assert_eq!(after, n);
            in_row = after;
        }
        let (r, after) = initial_unanswered(timeout(), in_row);
        assert!(matches!(r, Receipt::Failed(_)) && after == 0, "{r:?}");
        let mut s = session(true);
        assert!(matches!(
            s.initial_receipt(proposed(), r),
            Granting::FellBack(_)
        ));
        let (r, after) = initial_unanswered(receipt(json!({"accepted": true})), 1);
        assert!(
            matches!(r, Receipt::Accepted(_)) && after == 0,
            "an answer starts over"
        );
        let mut s = session(true);
        assert_eq!(
            s.initial_receipt(proposed(), read_receipt(Err(LinkError::Stopped))),
            Granting::Ignored
        );
    }

    #[test]
    fn issue38_02_a_revocation_is_in_force_at_once_and_a_widening_on_its_receipt() {
        let mut s = session(true);
        let (_, proposed) = s.policy(&host_policy());
        s.initial_receipt(proposed, receipt(json!({"accepted": true})));
        assert_eq!(
            s.renegotiate(&host_policy()).request.map(|r| r.1),
            None,
            "unchanged"
        );
        // The manifest stops advertising pushEvents: revoked before anything is sent.
        s.set_manifest(manifest(false));
        let r = s.renegotiate(&host_policy());
        assert!(r.revoked);
        assert_eq!(s.granted, ["tools"]);
        let (_, proposed) = r.request.expect("the policy is sent again");
        assert_eq!(proposed, ["tools"]);
        // It advertises it again: not in force until the receipt.
        s.set_manifest(manifest(true));
        let r = s.renegotiate(&host_policy());
        assert!(!r.revoked);
        assert_eq!(s.granted, ["tools"]);
        let (_, proposed) = r.request.unwrap();
        let seq = s.policy_seq;
        // A receipt for an older policy is stale; a failed one changes nothing.
        let accepted = || receipt(json!({"accepted": true}));
        assert_eq!(
            s.later_receipt(seq - 1, proposed.clone(), accepted()),
            Granting::Ignored
        );
        let failed = read_receipt(Err(LinkError::Timeout {
            method: "featureSets/update",
            after: std::time::Duration::from_secs(1),
        }));
        assert!(matches!(
            s.later_receipt(seq, proposed.clone(), failed),
            Granting::Kept(_)
        ));
        assert_eq!(s.granted, ["tools"]);
        assert_eq!(
            s.later_receipt(seq, proposed, accepted()),
            Granting::InForce
        );
        assert_eq!(s.granted, ["pushEvents", "tools"]);
    }

    #[test]
    fn issue38_02_a_server_request_needing_what_is_not_granted_is_refused_by_name() {
        let mut s = session(true);
        let (_, proposed) = s.policy(&host_policy());
        s.initial_receipt(proposed, receipt(json!({"accepted": true})));
        let denied = refusal_of(Some(&s), "model/info");
        assert_eq!(denied.code, ErrorCode::CAPABILITY_DENIED);
        assert_eq!(denied.data.unwrap()["capability"], "modelInfo");
        assert_eq!(
            refusal_of(Some(&s), "no/such").code,
            ErrorCode::METHOD_NOT_FOUND
        );
        s.fall_back_to_mcp();
        assert_eq!(
            refusal_of(Some(&s), "model/info").code,
            ErrorCode::METHOD_NOT_FOUND,
            "MCPL is off"
        );
        assert_eq!(
            refusal_of(None, "model/info").code,
            ErrorCode::METHOD_NOT_FOUND
        );
    }

    #[test]
    fn issue38_02_a_later_refusal_falls_back_or_closes() {
        let mut s = session(true);
        let (_, proposed) = s.policy(&host_policy());
        s.initial_receipt(proposed.clone(), receipt(json!({"accepted": true})));
        let seq = s.policy_seq;
        let close = receipt(json!({"accepted": false, "fallback": "close"}));
        assert!(matches!(
            s.later_receipt(seq, proposed.clone(), close),
            Granting::End(_)
        ));
        let refused = receipt(json!({"accepted": false}));
        assert!(matches!(
            s.later_receipt(seq, proposed, refused),
            Granting::FellBack(_)
        ));
        assert!(!s.speaks_mcpl() && s.granted.is_empty());
    }
}

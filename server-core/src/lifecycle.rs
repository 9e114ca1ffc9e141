//! The session lifecycle as a pure state machine: what the host negotiated, what it
//! granted, and which requests the current phase admits. The actor feeds it the lifecycle
//! messages and asks it before acting; it does no I/O.

use crate::push::PushError;
use mcpl_protocol::grant::{self, Policy, PolicyError};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject};
use mcpl_protocol::mcp::{ClientCapabilities, Implementation, InitializeParams, negotiate_version};
use mcpl_protocol::mcpl::{FeatureSetsUpdateParams, FeatureSetsUpdateResult, McplManifest};

/// Where a session is, named for what it waits for.
///
/// ```text
///   AwaitingInitialize ──initialize answered──▶ AwaitingInitialized
///   AwaitingInitialized ──notifications/initialized──▶ AwaitingGrant   (an MCPL host)
///                                                   └─▶ Ready           (a plain MCP host, or
///                                                                        an MCPL host whose grant
///                                                                        already came)
///   AwaitingGrant ──featureSets/update answered──▶ Ready
///   Ready ──featureSets/update answered──▶ Ready   (the grant is replaced)
/// ```
///
/// A `featureSets/update` request whose params grant and deny one path is malformed (SPEC
/// §5.4): it is refused with -32602, completes nothing, and the path is revoked from the
/// grant in force (fail closed). A `featureSets/update` *notification* never makes a
/// session ready and only narrows: its `disabled` is applied, the rest ignored (§6.7).
///
/// `ping` is answered in every phase. Before `initialize`, every other request the server
/// knows is refused with -32600 (see [`LifecycleError::NotInitialized`]); after it, requests
/// are served in every phase (MCP lets a client send requests once `initialize` is
/// answered). A `featureSets/update` that arrives before `notifications/initialized` is
/// recorded and answered. Only pushing waits for `Ready` (SPEC §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Waiting for `initialize`.
    AwaitingInitialize,
    /// `initialize` answered; waiting for `notifications/initialized`.
    AwaitingInitialized,
    /// An MCPL host: waiting for its `featureSets/update` request (SPEC §5.3).
    AwaitingGrant,
    /// Fully set up.
    Ready,
}

/// What the host advertised under `capabilities.experimental.mcpl` in `initialize`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HostFeatures {
    /// It advertised `experimental.mcpl` at all: an MCPL host.
    pub mcpl: bool,
    /// It advertised `toolHints: true` (RFC-014 §2).
    pub tool_hints: bool,
    /// It advertised `pushEvents: true`.
    pub push_events: bool,
}

/// What `initialize` settled.
#[derive(Debug, Clone, PartialEq)]
pub struct Negotiated {
    /// The protocol version answered (MCP version negotiation).
    pub protocol_version: &'static str,
    /// Who the host says it is.
    pub client_info: Implementation,
    /// What the host advertised.
    pub host: HostFeatures,
    /// Every capability the client declared, MCP's and MCPL's (`sampling`,
    /// `elicitation`, `roots`, …).
    pub capabilities: ClientCapabilities,
}

/// A lifecycle rule a request broke; each maps to a JSON-RPC error in
/// [`LifecycleError::to_error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LifecycleError {
    /// A request other than `initialize` or `ping` came before `initialize`. **Choice:**
    /// -32600 (invalid request), since the request is well-formed but not allowed yet;
    /// MCP names no code, and -32002 is MCPL's capability-denied.
    #[error("not initialized: send initialize first")]
    NotInitialized,
    /// A second `initialize` on the same session: -32600.
    #[error("already initialized")]
    AlreadyInitialized,
}

impl LifecycleError {
    /// The JSON-RPC error sent for it.
    pub fn to_error(self) -> ErrorObject {
        ErrorObject::new(ErrorCode::INVALID_REQUEST, self.to_string())
    }
}

/// A session's lifecycle state.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    phase: Phase,
    negotiated: Option<Negotiated>,
    /// The params of the last accepted policy request, as sent (for status).
    grant: Option<FeatureSetsUpdateParams>,
    /// The policy in force: that request, as read, narrowed since.
    policy: Option<Policy>,
}

/// Why a `featureSets/update` request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GrantError {
    /// It came before `initialize`.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    /// It is malformed (SPEC §5.4: a path both granted and denied).
    #[error(transparent)]
    Malformed(#[from] PolicyError),
}

impl GrantError {
    /// The JSON-RPC error sent for it.
    pub fn to_error(&self) -> ErrorObject {
        match self {
            GrantError::Lifecycle(e) => e.to_error(),
            GrantError::Malformed(e) => e.to_error(),
        }
    }
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle {
            phase: Phase::AwaitingInitialize,
            negotiated: None,
            grant: None,
            policy: None,
        }
    }
}

impl Lifecycle {
    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// What `initialize` settled, once it has been answered.
    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.negotiated.as_ref()
    }

    /// The host's latest grant, once a `featureSets/update` was answered.
    pub fn grant(&self) -> Option<&FeatureSetsUpdateParams> {
        self.grant.as_ref()
    }

    /// Whether the host advertised `toolHints` (false before `initialize`).
    pub fn host_tool_hints(&self) -> bool {
        self.negotiated.as_ref().is_some_and(|n| n.host.tool_hints)
    }

    /// Whether a request that needs a session may be served now.
    pub fn admit(&self) -> Result<(), LifecycleError> {
        match self.phase {
            Phase::AwaitingInitialize => Err(LifecycleError::NotInitialized),
            _ => Ok(()),
        }
    }

    /// `initialize`: negotiates the version and records what the host advertised.
    pub fn on_initialize(
        &mut self,
        params: &InitializeParams,
    ) -> Result<&Negotiated, LifecycleError> {
        if self.phase != Phase::AwaitingInitialize {
            return Err(LifecycleError::AlreadyInitialized);
        }
        let mcpl = params.capabilities.mcpl();
        let host = HostFeatures {
            mcpl: mcpl.is_some(),
            tool_hints: mcpl.and_then(|m| m.tool_hints) == Some(true),
            push_events: mcpl.and_then(|m| m.push_events) == Some(true),
        };
        self.phase = Phase::AwaitingInitialized;
        Ok(self.negotiated.insert(Negotiated {
            protocol_version: negotiate_version(&params.protocol_version),
            client_info: params.client_info.clone(),
            host,
            capabilities: params.capabilities.clone(),
        }))
    }

    /// `notifications/initialized`. Returns false (and changes nothing) when it was not
    /// expected now; the caller logs that.
    pub fn on_initialized(&mut self) -> bool {
        if self.phase != Phase::AwaitingInitialized {
            return false;
        }
        let mcpl = self.negotiated.as_ref().is_some_and(|n| n.host.mcpl);
        self.phase = if mcpl && self.grant.is_none() {
            Phase::AwaitingGrant
        } else {
            Phase::Ready
        };
        true
    }

    /// The policy in force, once a `featureSets/update` request was accepted.
    pub fn policy(&self) -> Option<&Policy> {
        self.policy.as_ref()
    }

    /// A `featureSets/update` request: replaces the policy (SPEC §5.4:
    /// `effectiveCapabilities` is the only allowlist, absent grants nothing) and completes
    /// the handshake if it waited for it. A malformed one is refused, and the paths it named
    /// on both sides are revoked from the policy in force (fail closed).
    pub fn on_grant(&mut self, grant: FeatureSetsUpdateParams) -> Result<(), GrantError> {
        self.admit()?;
        // The rule the surface host follows too (`mcpl_protocol::grant`).
        Policy::receive(&mut self.policy, &grant)?;
        self.accepted(grant);
        Ok(())
    }

    /// A `featureSets/update` request answered (SPEC §5.3, §6.7), as the server SDK and the
    /// surface host answer one: [`Lifecycle::on_grant`], and the receipt of the policy now
    /// in force against `manifest`, the one the host was shown
    /// ([`mcpl_protocol::grant::receipt`]).
    pub fn receive_grant(
        &mut self,
        grant: FeatureSetsUpdateParams,
        manifest: &McplManifest,
    ) -> Result<FeatureSetsUpdateResult, GrantError> {
        self.admit()?;
        let receipt = grant::receipt(manifest, Policy::receive(&mut self.policy, &grant)?);
        self.accepted(grant);
        Ok(receipt)
    }

    /// A policy request was accepted: it is the latest, and the handshake is complete if it
    /// waited for it.
    fn accepted(&mut self, grant: FeatureSetsUpdateParams) {
        self.grant = Some(grant);
        if self.phase == Phase::AwaitingGrant {
            self.phase = Phase::Ready;
        }
    }

    /// A `featureSets/update` *notification* (SPEC §6.7): only its narrowing `disabled` is
    /// applied; it never makes the session ready. Returns whether anything was applied.
    pub fn on_grant_notification(&mut self, params: &FeatureSetsUpdateParams) -> bool {
        self.policy
            .as_mut()
            .is_some_and(|p| p.narrow_by_notification(params))
    }

    /// The policy to push under, or why nothing may be pushed now.
    pub fn push_grant(&self) -> Result<&Policy, PushError> {
        if self.negotiated.as_ref().is_some_and(|n| !n.host.mcpl) {
            return Err(PushError::NotGranted);
        }
        // SPEC §5.3: nothing capability-dependent before the initial exchange completes,
        // and (MCP) no request to the host before it said `initialized`.
        match (&self.policy, self.phase) {
            (Some(policy), Phase::Ready) => Ok(policy),
            _ => Err(PushError::GrantPending),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn init(version: &str, mcpl: Option<serde_json::Value>) -> InitializeParams {
        let mut caps = json!({});
        if let Some(m) = mcpl {
            caps = json!({"experimental": {"mcpl": m}});
        }
        serde_json::from_value(json!({"protocolVersion": version, "capabilities": caps,
            "clientInfo": {"name": "h", "version": "1"}}))
        .unwrap()
    }

    fn grant(caps: &[&str]) -> FeatureSetsUpdateParams {
        FeatureSetsUpdateParams {
            effective_capabilities: caps.iter().map(|c| c.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn an_mcpl_host_waits_for_its_grant() {
        let mut l = Lifecycle::default();
        assert_eq!(l.admit(), Err(LifecycleError::NotInitialized));
        assert_eq!(l.push_grant(), Err(PushError::GrantPending));
        let n = l
            .on_initialize(&init(
                "2025-06-18",
                Some(json!({"version": "0.5", "toolHints": true})),
            ))
            .unwrap();
        assert_eq!(n.protocol_version, "2025-06-18");
        assert_eq!(
            n.host,
            HostFeatures {
                mcpl: true,
                tool_hints: true,
                push_events: false
            }
        );
        assert_eq!(l.phase(), Phase::AwaitingInitialized);
        assert!(l.on_initialized());
        assert_eq!(l.phase(), Phase::AwaitingGrant);
        assert_eq!(l.push_grant(), Err(PushError::GrantPending));
        l.on_grant(grant(&["tools", "pushEvents"])).unwrap();
        assert_eq!(l.phase(), Phase::Ready);
        assert!(l.push_grant().is_ok());
        assert!(!l.on_initialized());
        assert_eq!(
            l.on_initialize(&init("2025-11-25", None)).unwrap_err(),
            LifecycleError::AlreadyInitialized
        );
    }

    #[test]
    fn a_plain_host_is_ready_after_initialized_and_never_granted() {
        let mut l = Lifecycle::default();
        l.on_initialize(&init("1999-01-01", None)).unwrap();
        assert_eq!(
            l.negotiated().unwrap().protocol_version,
            mcpl_protocol::mcp::LATEST_PROTOCOL_VERSION
        );
        assert!(l.on_initialized());
        assert_eq!(l.phase(), Phase::Ready);
        assert_eq!(l.push_grant(), Err(PushError::NotGranted));
    }

    /// SPEC §5.4: granted and denied at once is malformed; the handshake does not complete,
    /// and a later malformed update revokes the path it named (fail closed). A notification
    /// only narrows (§6.7).
    #[test]
    fn a_malformed_policy_fails_closed_and_a_notification_only_narrows() {
        let mut l = Lifecycle::default();
        l.on_initialize(&init("2025-11-25", Some(json!({"version": "0.5"}))))
            .unwrap();
        l.on_initialized();
        let both = FeatureSetsUpdateParams {
            effective_capabilities: vec!["tools".into(), "pushEvents".into()],
            denied_capabilities: vec!["pushEvents".into()],
            ..Default::default()
        };
        assert!(matches!(
            l.on_grant(both.clone()),
            Err(GrantError::Malformed(_))
        ));
        assert_eq!(l.phase(), Phase::AwaitingGrant);
        l.on_grant(grant(&["*"])).unwrap();
        assert!(l.push_grant().unwrap().grant.allows("pushEvents"));
        assert!(l.on_grant(both).is_err());
        let policy = l.push_grant().unwrap();
        assert!(!policy.grant.allows("pushEvents") && policy.grant.allows("tools"));
        let widen = FeatureSetsUpdateParams {
            effective_capabilities: vec!["pushEvents".into(), "modelInfo".into()],
            disabled: vec!["default".into()],
            ..Default::default()
        };
        assert!(l.on_grant_notification(&widen));
        let policy = l.push_grant().unwrap();
        assert!(!policy.grant.allows("pushEvents"));
        assert_eq!(policy.disabled, ["default"]);
    }

    #[test]
    fn a_grant_before_initialized_is_kept_and_pushing_waits_for_initialized() {
        let mut l = Lifecycle::default();
        assert_eq!(
            l.on_grant(grant(&["pushEvents"])),
            Err(GrantError::Lifecycle(LifecycleError::NotInitialized))
        );
        l.on_initialize(&init("2025-11-25", Some(json!({"version": "0.5"}))))
            .unwrap();
        l.on_grant(grant(&["pushEvents"])).unwrap();
        assert_eq!(l.phase(), Phase::AwaitingInitialized);
        assert_eq!(l.push_grant(), Err(PushError::GrantPending));
        l.on_initialized();
        assert_eq!(l.phase(), Phase::Ready);
        assert!(l.push_grant().is_ok());
    }
}

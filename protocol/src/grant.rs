//! Capability grants and feature sets (SPEC §5.3, §5.4, §6; RFC-002), the same rules on
//! both sides of a connection:
//!
//! - [`CAPABILITY_PATHS`]: the closed vocabulary of capability paths (SPEC §6.2, B.2);
//! - [`path_matches`]: `*` matches exactly one segment, and segment counts must be equal
//!   (SPEC §5.4) — no prefix or subtree match, and a bare parent grants none of its leaves;
//! - [`Grant`]: an `effectiveCapabilities` list, the only allowlist (absence is denial);
//! - [`Policy::read`]: a `featureSets/update` as the server must read it — a path both
//!   granted and denied makes the message malformed (fail closed, SPEC §5.4);
//! - [`derive()`]: which declared feature sets a policy leaves enabled, and why the others are
//!   not (SPEC §6.4: `invalid_uses`; §5.3: `not_selected`; a denied capability; the host's
//!   `disabled`), and [`receipt()`], the answer that reports it (§6.7);
//! - [`Policy::receive`]: the policy in force after a `featureSets/update` request, and
//!   what a refused one revokes (fail closed);
//! - [`Derivation::check_use`]: whether a server-initiated message under a feature set may
//!   pass, and the Appendix A error when not (-32001, -32002, -32003).

use crate::jsonrpc::{ErrorCode, ErrorObject};
use crate::mcpl::{
    FeatureSetsUpdateParams, FeatureSetsUpdateResult, McplManifest, UnavailableFeature,
};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// Every capability path of MCPL 0.5 (SPEC §6.2, Appendix B.2). `uses` may name only
/// these; RFC-014 adds none (spec §1).
pub const CAPABILITY_PATHS: [&str; 17] = [
    "pushEvents",
    "tools",
    "modelInfo",
    "inferenceRequest",
    "inferenceRequest.streaming",
    "inferenceLifecycle",
    "contextHooks.beforeInference.observe",
    "contextHooks.beforeInference.inject.system",
    "contextHooks.beforeInference.inject.beforeUser",
    "contextHooks.beforeInference.inject.afterUser",
    "channels.register",
    "channels.lifecycle",
    "channels.publish",
    "channels.incoming",
    "channels.streaming",
    "channels.acknowledge",
    "channels.typing",
];

/// The capability path a server-to-host method needs (SPEC §4.1's methods, gated as §11,
/// §12 and §14's table say), or None for a method no capability gates. A host answers a
/// request for one it has not granted with -32002 and `data.capability`, as if the
/// capability had never been advertised (§5.4, §6.6); `push/event` is gated by its feature
/// set too ([`Derivation::check_use`]).
pub fn server_method_capability(method: &str) -> Option<&'static str> {
    Some(match method {
        "push/event" => "pushEvents",
        "model/info" => "modelInfo",
        "inference/request" => "inferenceRequest",
        "channels/register" | "channels/changed" | "channels/list" => "channels.register",
        "channels/incoming" => "channels.incoming",
        _ => return None,
    })
}

/// True when `path` is in the closed vocabulary.
pub fn is_capability_path(path: &str) -> bool {
    CAPABILITY_PATHS.contains(&path)
}

/// SPEC §5.4: does the grant entry `pattern` grant `path`? Segments are compared one by
/// one; `*` matches exactly one segment; the counts must be equal. So `channels.*` grants
/// `channels.publish` but not `channels.publish.x`, `contextHooks.*` grants none of the
/// depth-4 injection leaves, and a bare `*` only depth-1 paths.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let mut p = pattern.split('.');
    let mut q = path.split('.');
    loop {
        match (p.next(), q.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a == "*" || a == b => {}
            _ => return false,
        }
    }
}

/// The vocabulary paths a server advertises (SPEC §5.1: advertisement mirrors the paths; a
/// `true` at any level stands for every leaf beneath it, an object for the node itself and
/// what it lists). `tools` is advertised by MCP's own `capabilities.tools`
/// (`tools_capability`) as well as by the manifest. This is "the server's advertisement as
/// the host understands it" that a host intersects with its policy (SPEC §5.4).
pub fn advertised(manifest: &McplManifest, tools_capability: bool) -> Vec<&'static str> {
    CAPABILITY_PATHS
        .iter()
        .copied()
        .filter(|path| advertises(manifest, tools_capability, path))
        .collect()
}

fn advertises(manifest: &McplManifest, tools_capability: bool, path: &str) -> bool {
    let mut segments = path.split('.');
    let first = segments.next().unwrap_or_default();
    let push = manifest.push_events.map(serde_json::Value::Bool);
    let mut node = match first {
        "pushEvents" => push.as_ref(),
        "tools" if tools_capability => return true,
        other => manifest.other.get(other),
    };
    for segment in segments {
        node = match node {
            Some(serde_json::Value::Bool(true)) => return true,
            Some(serde_json::Value::Object(map)) => map.get(segment),
            _ => return false,
        };
    }
    matches!(
        node,
        Some(serde_json::Value::Bool(true) | serde_json::Value::Object(_))
    )
}

/// **\[project\]** A feature-set name pattern in `enabled`/`disabled`: SPEC §6.3 lets hosts
/// write `memory.*` for "all `memory.` features", so a trailing `.*` matches every name
/// under that prefix, at any depth; any other pattern matches by [`path_matches`].
pub fn feature_set_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix(".*") {
        Some(prefix) => name
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.') && rest.len() > 1),
        None => path_matches(pattern, name),
    }
}

/// An effective grant (SPEC §5.4): `effectiveCapabilities` as sent, less any path a
/// malformed policy message named on both sides (fail closed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grant {
    allow: Vec<String>,
    revoked: Vec<String>,
}

impl Grant {
    /// A grant of exactly these entries (patterns allowed).
    pub fn new<S: Into<String>>(entries: impl IntoIterator<Item = S>) -> Self {
        Grant {
            allow: entries.into_iter().map(Into::into).collect(),
            revoked: Vec::new(),
        }
    }

    /// A grant of nothing (before any policy, or after an absent `effectiveCapabilities`).
    pub fn none() -> Self {
        Grant::default()
    }

    /// True when `path` is granted.
    pub fn allows(&self, path: &str) -> bool {
        self.allow.iter().any(|p| path_matches(p, path))
            && !self.revoked.iter().any(|p| path_matches(p, path))
    }

    /// The entries as sent.
    pub fn entries(&self) -> &[String] {
        &self.allow
    }

    /// Takes `path` away whatever an entry says (fail closed).
    pub fn revoke(&mut self, path: impl Into<String>) {
        self.revoked.push(path.into());
    }

    /// This grant as a concrete list of vocabulary paths (what a host sends: it computes
    /// the intersection of paths, never a pattern the server might read differently).
    pub fn concrete_paths(&self) -> Vec<String> {
        CAPABILITY_PATHS
            .iter()
            .filter(|p| self.allows(p))
            .map(|p| (*p).to_owned())
            .collect()
    }
}

/// Why a `featureSets/update` is refused as malformed (SPEC §5.4).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A path is both granted and denied: the receiver fails closed and rejects the message.
    #[error("{path:?} is both granted (effectiveCapabilities) and denied (deniedCapabilities)")]
    GrantedAndDenied {
        /// The path (the denied entry).
        path: String,
    },
}

impl PolicyError {
    /// The JSON-RPC error for it: -32602, the params are not a valid policy.
    pub fn to_error(&self) -> ErrorObject {
        let PolicyError::GrantedAndDenied { path } = self;
        ErrorObject::new(ErrorCode::INVALID_PARAMS, self.to_string())
            .with_data(json!({"capability": path}))
    }
}

/// A policy as the server holds it: the grant and the feature-set selection (SPEC §5.3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// The effective grant.
    pub grant: Grant,
    /// `enabled`: when present, an allowlist of feature sets (names or patterns).
    pub enabled: Option<Vec<String>>,
    /// `disabled`: always subtracts.
    pub disabled: Vec<String>,
}

impl Policy {
    /// Reads a `featureSets/update` request's params (SPEC §5.3 field semantics): an absent
    /// `effectiveCapabilities` grants nothing; `deniedCapabilities` is diagnostic only but a
    /// path on both sides is malformed.
    pub fn read(params: &FeatureSetsUpdateParams) -> Result<Policy, PolicyError> {
        check_disjoint(params)?;
        Ok(Policy {
            grant: Grant::new(params.effective_capabilities.iter().cloned()),
            enabled: params.enabled.clone(),
            disabled: params.disabled.clone(),
        })
    }

    /// A `featureSets/update` *request* received by a server whose policy in force is
    /// `current` (SPEC §5.3, §5.4), the one rule the server SDK and the surface host follow:
    /// a well-formed one replaces the policy (`effectiveCapabilities` is the only
    /// allowlist, an absent one grants nothing); a malformed one (a path both granted and
    /// denied) is refused, and every path it denies — and every path it grants that one of
    /// its denials matches — is revoked from the policy in force (fail closed: a host that
    /// meant to take a capability away loses it even though its message was refused).
    pub fn receive<'a>(
        current: &'a mut Option<Policy>,
        params: &FeatureSetsUpdateParams,
    ) -> Result<&'a Policy, PolicyError> {
        match Policy::read(params) {
            Ok(policy) => Ok(current.insert(policy)),
            Err(e) => {
                if let Some(current) = current.as_mut() {
                    for denied in &params.denied_capabilities {
                        current.grant.revoke(denied.clone());
                    }
                    for granted in &params.effective_capabilities {
                        if params
                            .denied_capabilities
                            .iter()
                            .any(|d| path_matches(d, granted))
                        {
                            current.grant.revoke(granted.clone());
                        }
                    }
                }
                Err(e)
            }
        }
    }

    /// SPEC §6.7: what a server takes from a `featureSets/update` *notification*: only a
    /// narrowing `disabled` (added to this policy's); `effectiveCapabilities`, `enabled` and
    /// any widening are ignored. Returns whether anything was taken.
    pub fn narrow_by_notification(&mut self, params: &FeatureSetsUpdateParams) -> bool {
        let before = self.disabled.len();
        for d in &params.disabled {
            if !self.disabled.contains(d) {
                self.disabled.push(d.clone());
            }
        }
        self.disabled.len() != before
    }
}

/// SPEC §5.4: a path in both lists, or granted by a pattern and denied (or the reverse),
/// is a conflict.
fn check_disjoint(params: &FeatureSetsUpdateParams) -> Result<(), PolicyError> {
    for denied in &params.denied_capabilities {
        if params
            .effective_capabilities
            .iter()
            .any(|g| path_matches(g, denied) || path_matches(denied, g))
        {
            return Err(PolicyError::GrantedAndDenied {
                path: denied.clone(),
            });
        }
    }
    Ok(())
}

/// The receipt a server answers a `featureSets/update` request with (SPEC §6.7), the one
/// the server SDK and the surface host send: `accepted: true` under any grant; every
/// feature set `policy` leaves unavailable against `manifest` (the one the host was
/// shown), with its reason and the capabilities it misses, and `mode: "degraded"` when
/// there is one ([`Derivation::receipt`]); and a note for each `enabled`/`disabled` entry
/// that names no declared feature set. The receipt is testimony, never authority.
pub fn receipt(manifest: &McplManifest, policy: &Policy) -> FeatureSetsUpdateResult {
    let mut result = derive(manifest, policy).receipt();
    result.notes = policy
        .enabled
        .iter()
        .flatten()
        .chain(&policy.disabled)
        .filter(|p| {
            !manifest
                .feature_sets
                .keys()
                .any(|n| feature_set_matches(p, n))
        })
        .map(|n| format!("feature set {n:?} is not declared"))
        .collect();
    result
}

/// Why a declared feature set is not enabled.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Disabled {
    /// SPEC §6.4 rule 1: `uses` absent, empty, not strings, or naming a path outside the
    /// vocabulary.
    InvalidUses,
    /// The grant lacks capabilities its `uses` needs.
    MissingCapabilities(Vec<String>),
    /// SPEC §5.3: `enabled` is present and does not name it.
    NotSelected,
    /// The host named it in `disabled`.
    DisabledByHost,
}

impl Disabled {
    /// The reason's name on the wire (SPEC §5.3, §6.4) — `invalid_uses`, `not_selected`,
    /// and this project's `capability_denied` and `disabled` for the other two.
    pub fn reason(&self) -> &'static str {
        match self {
            Disabled::InvalidUses => "invalid_uses",
            Disabled::MissingCapabilities(_) => "capability_denied",
            Disabled::NotSelected => "not_selected",
            Disabled::DisabledByHost => "disabled",
        }
    }
}

/// Which declared feature sets a policy leaves enabled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Derivation {
    /// Every declared feature set (valid or not) and whether it is enabled.
    pub sets: BTreeMap<String, Result<(), Disabled>>,
}

/// SPEC §6.4: derives every declared feature set's availability from the policy, failing
/// closed (see [`availability`]); an invalidly declared one is disabled whatever the grant.
pub fn derive(manifest: &McplManifest, policy: &Policy) -> Derivation {
    let mut sets = BTreeMap::new();
    for name in manifest.invalid_feature_sets.keys() {
        sets.insert(name.clone(), Err(Disabled::InvalidUses));
    }
    for name in manifest.feature_sets.keys() {
        sets.insert(name.clone(), availability(manifest, policy, name));
    }
    Derivation { sets }
}

/// One declared feature set's availability (SPEC §5.3, §6.4): a valid declaration, not
/// `disabled`, selected by `enabled` if present, and every path of its `uses` granted.
/// A name the manifest does not declare validly is [`Disabled::InvalidUses`].
pub fn availability(manifest: &McplManifest, policy: &Policy, name: &str) -> Result<(), Disabled> {
    let Some(decl) = manifest.feature_sets.get(name) else {
        return Err(Disabled::InvalidUses);
    };
    if !decl.has_valid_uses() {
        return Err(Disabled::InvalidUses);
    }
    if policy.disabled.iter().any(|p| feature_set_matches(p, name)) {
        return Err(Disabled::DisabledByHost);
    }
    let selected = policy
        .enabled
        .as_ref()
        .is_none_or(|e| e.iter().any(|p| feature_set_matches(p, name)));
    if !selected {
        return Err(Disabled::NotSelected);
    }
    let missing: BTreeSet<String> = decl
        .uses
        .iter()
        .filter(|u| !policy.grant.allows(u))
        .cloned()
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Disabled::MissingCapabilities(missing.into_iter().collect()))
    }
}

/// Why a server-initiated message under a feature set is refused (SPEC §6.6, Appendix A).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The capability the method needs is not granted (or the initial policy exchange has
    /// not completed, SPEC §5.3): -32002 with `data.capability`.
    #[error("capability {capability:?} is not granted")]
    CapabilityDenied {
        /// The capability path.
        capability: String,
    },
    /// The feature set is not declared: -32003 with `data.featureSet`.
    #[error("feature set {feature_set:?} is not declared")]
    UnknownFeatureSet {
        /// The feature set as named (empty when the message named none).
        feature_set: String,
    },
    /// The feature set is declared but not enabled: -32001 with `data.featureSet`.
    #[error("feature set {feature_set:?} is not enabled ({})", reason.reason())]
    NotEnabled {
        /// The feature set.
        feature_set: String,
        /// Why.
        reason: Disabled,
    },
    /// SPEC §6.4 rule 2: the feature set's `uses` does not declare the capability it
    /// exercises (a declaration mismatch): -32002 with `data.capability`.
    #[error("feature set {feature_set:?} does not declare {capability:?} in its uses")]
    DeclarationMismatch {
        /// The feature set.
        feature_set: String,
        /// The capability exercised.
        capability: String,
    },
}

impl Refusal {
    /// The Appendix A error object, with the documented `data`.
    pub fn to_error(&self) -> ErrorObject {
        let message = self.to_string();
        match self {
            Refusal::CapabilityDenied { capability } => {
                ErrorObject::new(ErrorCode::CAPABILITY_DENIED, message)
                    .with_data(json!({"capability": capability}))
            }
            Refusal::DeclarationMismatch {
                feature_set,
                capability,
            } => ErrorObject::new(ErrorCode::CAPABILITY_DENIED, message)
                .with_data(json!({"capability": capability, "featureSet": feature_set,
                       "diagnostic": "declaration-mismatch"})),
            Refusal::UnknownFeatureSet { feature_set } => {
                ErrorObject::new(ErrorCode::UNKNOWN_FEATURE_SET, message)
                    .with_data(json!({"featureSet": feature_set}))
            }
            Refusal::NotEnabled {
                feature_set,
                reason,
            } => ErrorObject::new(ErrorCode::FEATURE_SET_NOT_ENABLED, message)
                .with_data(json!({"featureSet": feature_set, "reason": reason.reason()})),
        }
    }
}

impl Derivation {
    /// True when `feature_set` is declared and enabled.
    pub fn is_enabled(&self, feature_set: &str) -> bool {
        matches!(self.sets.get(feature_set), Some(Ok(())))
    }

    /// Whether a message that exercises `capability` under `feature_set` may pass: the
    /// grant first (admission is the grant, SPEC §5.4), then the feature set (§6.4–§6.6).
    pub fn check_use(
        &self,
        manifest: &McplManifest,
        grant: &Grant,
        feature_set: &str,
        capability: &str,
    ) -> Result<(), Refusal> {
        if !grant.allows(capability) {
            return Err(Refusal::CapabilityDenied {
                capability: capability.to_owned(),
            });
        }
        match self.sets.get(feature_set) {
            None => Err(Refusal::UnknownFeatureSet {
                feature_set: feature_set.to_owned(),
            }),
            Some(Err(reason)) => Err(Refusal::NotEnabled {
                feature_set: feature_set.to_owned(),
                reason: reason.clone(),
            }),
            Some(Ok(())) => {
                let declared = manifest
                    .feature_sets
                    .get(feature_set)
                    .is_some_and(|d| d.uses.iter().any(|u| u == capability));
                if declared {
                    Ok(())
                } else {
                    Err(Refusal::DeclarationMismatch {
                        feature_set: feature_set.to_owned(),
                        capability: capability.to_owned(),
                    })
                }
            }
        }
    }

    /// The degradation receipt (SPEC §6.7): every feature set left unavailable, with its
    /// reason and the capabilities it misses, and those capabilities at the top level. A
    /// receipt where nothing degraded has no `mode` (an absent field is no claim).
    pub fn receipt(&self) -> FeatureSetsUpdateResult {
        let mut missing_all = BTreeSet::new();
        let unavailable_features: Vec<UnavailableFeature> = self
            .sets
            .iter()
            .filter_map(|(name, state)| {
                let reason = state.as_ref().err()?;
                let missing = match reason {
                    Disabled::MissingCapabilities(m) => m.clone(),
                    _ => Vec::new(),
                };
                missing_all.extend(missing.iter().cloned());
                Some(UnavailableFeature {
                    feature_set: name.clone(),
                    missing_capabilities: missing,
                    effect: "disabled".to_owned(),
                    reason: Some(reason.reason().to_owned()),
                })
            })
            .collect();
        FeatureSetsUpdateResult {
            accepted: true,
            mode: (!unavailable_features.is_empty()).then(|| "degraded".to_owned()),
            unavailable_features,
            missing_capabilities: missing_all.into_iter().collect(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_server_method_needs_a_path_of_the_vocabulary() {
        for m in [
            "push/event",
            "model/info",
            "inference/request",
            "channels/register",
            "channels/changed",
            "channels/list",
            "channels/incoming",
        ] {
            let path = server_method_capability(m).expect(m);
            assert!(is_capability_path(path), "{m}: {path}");
        }
        assert_eq!(server_method_capability("model/info"), Some("modelInfo"));
        assert_eq!(server_method_capability("ping"), None);
        assert_eq!(server_method_capability("sampling/createMessage"), None);
    }

    #[test]
    fn a_star_matches_exactly_one_segment() {
        assert!(path_matches("channels.*", "channels.publish"));
        assert!(!path_matches("channels.*", "channels.publish.anything"));
        assert!(!path_matches("channels.*", "channels"));
        assert!(!path_matches(
            "contextHooks.*",
            "contextHooks.beforeInference.inject.system"
        ));
        assert!(path_matches(
            "contextHooks.*.inject.*",
            "contextHooks.beforeInference.inject.system"
        ));
        assert!(path_matches("*", "tools") && path_matches("*", "pushEvents"));
        assert!(!path_matches("*", "channels.publish"));
        // A bare parent grants none of its leaves.
        assert!(!path_matches("channels", "channels.publish"));
        assert!(path_matches("tools", "tools"));
    }

    #[test]
    fn feature_set_patterns_cover_a_prefix() {
        assert!(feature_set_matches("memory.*", "memory.retrieval"));
        assert!(feature_set_matches("memory.*", "memory.a.b"));
        assert!(!feature_set_matches("memory.*", "memory"));
        assert!(!feature_set_matches("memory.*", "memoryx.a"));
        assert!(feature_set_matches("memory.retrieval", "memory.retrieval"));
    }

    fn manifest() -> McplManifest {
        serde_json::from_value(serde_json::json!({"version": "0.5", "featureSets": {
            "a.tools": {"description": "a", "uses": ["tools"]},
            "b.push": {"description": "b", "uses": ["tools", "pushEvents"]},
            "c.hooks": {"description": "c", "uses": ["contextHooks.beforeInference.observe"]},
            "d.bad": {"description": "d", "uses": ["teleport"]}}}))
        .unwrap()
    }

    fn policy(v: serde_json::Value) -> Result<Policy, PolicyError> {
        Policy::read(&serde_json::from_value(v).unwrap())
    }

    #[test]
    fn a_path_granted_and_denied_makes_the_policy_malformed() {
        let e = policy(
            serde_json::json!({"effectiveCapabilities": ["tools", "pushEvents"],
                                          "deniedCapabilities": ["pushEvents"]}),
        )
        .unwrap_err();
        assert_eq!(
            e,
            PolicyError::GrantedAndDenied {
                path: "pushEvents".into()
            }
        );
        assert_eq!(e.to_error().code, ErrorCode::INVALID_PARAMS);
        assert!(
            policy(serde_json::json!({"effectiveCapabilities": ["channels.*"],
                                      "deniedCapabilities": ["channels.publish"]}))
            .is_err()
        );
        assert!(
            policy(serde_json::json!({"effectiveCapabilities": ["tools"],
                                      "deniedCapabilities": ["channels.publish"]}))
            .is_ok()
        );
    }

    #[test]
    fn derivation_fails_closed_and_the_receipt_says_why() {
        let p = policy(serde_json::json!({"effectiveCapabilities": ["*"],
                                          "enabled": ["a.tools", "b.push", "d.bad"]}))
        .unwrap();
        let d = derive(&manifest(), &p);
        assert!(d.is_enabled("a.tools") && d.is_enabled("b.push"));
        assert_eq!(d.sets["c.hooks"], Err(Disabled::NotSelected));
        assert_eq!(d.sets["d.bad"], Err(Disabled::InvalidUses));
        let r = crate::jsonrpc::to_value(&d.receipt());
        assert_eq!(
            r,
            serde_json::json!({"accepted": true, "mode": "degraded", "unavailableFeatures": [
                {"featureSet": "c.hooks", "missingCapabilities": [], "effect": "disabled",
                 "reason": "not_selected"},
                {"featureSet": "d.bad", "missingCapabilities": [], "effect": "disabled",
                 "reason": "invalid_uses"}]})
        );
        // `*` does not reach the depth-3 hook leaf.
        let p = policy(serde_json::json!({"effectiveCapabilities": ["*"], "disabled": ["b.*"]}))
            .unwrap();
        let d = derive(&manifest(), &p);
        assert_eq!(d.sets["b.push"], Err(Disabled::DisabledByHost));
        assert_eq!(
            d.sets["c.hooks"],
            Err(Disabled::MissingCapabilities(vec![
                "contextHooks.beforeInference.observe".into()
            ]))
        );
        assert_eq!(
            d.receipt().missing_capabilities,
            ["contextHooks.beforeInference.observe"]
        );
        let full = policy(
            serde_json::json!({"effectiveCapabilities": ["tools", "pushEvents"],
                                             "enabled": ["a.tools", "b.push"]}),
        )
        .unwrap();
        let mut m = manifest();
        m.feature_sets.retain(|n, _| n != "c.hooks");
        m.invalid_feature_sets.clear();
        assert_eq!(
            crate::jsonrpc::to_value(&derive(&m, &full).receipt()),
            serde_json::json!({"accepted": true})
        );
    }

    #[test]
    fn a_use_is_checked_against_the_grant_then_the_feature_set() {
        let m = manifest();
        let p =
            policy(serde_json::json!({"effectiveCapabilities": ["tools", "pushEvents"]})).unwrap();
        let d = derive(&m, &p);
        let code = |fs: &str| {
            d.check_use(&m, &p.grant, fs, "pushEvents")
                .map_err(|r| (r.to_error().code, r.to_error().data))
        };
        assert_eq!(code("b.push"), Ok(()));
        assert_eq!(
            code("nope"),
            Err((
                ErrorCode::UNKNOWN_FEATURE_SET,
                Some(serde_json::json!({"featureSet": "nope"}))
            ))
        );
        assert_eq!(
            code("d.bad").unwrap_err().0,
            ErrorCode::FEATURE_SET_NOT_ENABLED
        );
        assert_eq!(code("a.tools").unwrap_err().0, ErrorCode::CAPABILITY_DENIED);
        let none = Grant::none();
        assert_eq!(
            d.check_use(&m, &none, "b.push", "pushEvents")
                .unwrap_err()
                .to_error()
                .data,
            Some(serde_json::json!({"capability": "pushEvents"}))
        );
        // A narrowing notification subtracts and never widens.
        let mut p = p;
        assert!(
            p.narrow_by_notification(
                &serde_json::from_value(serde_json::json!({"disabled": ["b.push"],
                "effectiveCapabilities": ["*"], "enabled": ["c.hooks"]}))
                .unwrap()
            )
        );
        let d = derive(&m, &p);
        assert_eq!(d.sets["b.push"], Err(Disabled::DisabledByHost));
        assert!(!p.grant.allows("modelInfo"));
    }

    #[test]
    fn advertisement_mirrors_the_paths() {
        let m: McplManifest = serde_json::from_value(serde_json::json!({"version": "0.5",
            "pushEvents": true, "contextHooks": {"beforeInference": true},
            "inferenceRequest": {"streaming": false},
            "channels": {"publish": true, "incoming": false}}))
        .unwrap();
        assert_eq!(
            advertised(&m, true),
            [
                "pushEvents",
                "tools",
                "inferenceRequest",
                "contextHooks.beforeInference.observe",
                "contextHooks.beforeInference.inject.system",
                "contextHooks.beforeInference.inject.beforeUser",
                "contextHooks.beforeInference.inject.afterUser",
                "channels.publish"
            ]
        );
        assert_eq!(
            advertised(&McplManifest::default(), false),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn a_grant_of_star_grants_depth_one_paths_only() {
        let g = Grant::new(["*"]);
        assert_eq!(
            g.concrete_paths(),
            [
                "pushEvents",
                "tools",
                "modelInfo",
                "inferenceRequest",
                "inferenceLifecycle"
            ]
        );
    }

    fn receipt_manifest() -> McplManifest {
        serde_json::from_value(json!({"version": "0.5", "featureSets": {
            "a": {"description": "a", "uses": ["tools"]},
            "b": {"description": "b", "uses": ["pushEvents", "tools", "pushEvents"]}}}))
        .unwrap()
    }

    fn read_policy(v: serde_json::Value) -> Policy {
        Policy::read(&serde_json::from_value(v).unwrap()).unwrap()
    }

    #[test]
    fn a_full_grant_gets_a_plain_acceptance() {
        let g = read_policy(json!({"effectiveCapabilities": ["tools", "pushEvents"]}));
        assert_eq!(
            serde_json::to_value(receipt(&receipt_manifest(), &g)).unwrap(),
            json!({"accepted": true})
        );
    }

    #[test]
    fn a_partial_grant_is_degraded_naming_what_is_missing() {
        let g =
            read_policy(json!({"effectiveCapabilities": ["tools"], "enabled": ["a", "b", "zz"]}));
        assert_eq!(
            serde_json::to_value(receipt(&receipt_manifest(), &g)).unwrap(),
            json!({"accepted": true, "mode": "degraded",
                   "unavailableFeatures": [{"featureSet": "b", "missingCapabilities": ["pushEvents"],
                                            "effect": "disabled", "reason": "capability_denied"}],
                   "missingCapabilities": ["pushEvents"],
                   "notes": ["feature set \"zz\" is not declared"]})
        );
    }

    /// SPEC §5.3: `enabled` is an allowlist; a set it leaves out is reported `not_selected`.
    #[test]
    fn a_set_left_out_of_enabled_is_reported_not_selected() {
        let g = read_policy(json!({"effectiveCapabilities": ["*"], "enabled": ["a"]}));
        assert_eq!(
            serde_json::to_value(receipt(&receipt_manifest(), &g)).unwrap(),
            json!({"accepted": true, "mode": "degraded",
                   "unavailableFeatures": [{"featureSet": "b", "missingCapabilities": [],
                                            "effect": "disabled", "reason": "not_selected"}]})
        );
    }

    /// SPEC §5.4: a refused update revokes what it denies from the policy in force, and
    /// what it grants that a denial matches; the rest of that policy stands.
    #[test]
    fn a_refused_update_revokes_its_paths_from_the_policy_in_force() {
        let read = |v| serde_json::from_value::<FeatureSetsUpdateParams>(v).unwrap();
        let mut current = None;
        let refused =
            read(json!({"effectiveCapabilities": ["tools"], "deniedCapabilities": ["tools"]}));
        assert!(Policy::receive(&mut current, &refused).is_err());
        assert_eq!(current, None, "nothing in force, nothing to revoke");
        Policy::receive(
            &mut current,
            &read(json!({"effectiveCapabilities": ["tools", "pushEvents", "modelInfo"]})),
        )
        .unwrap();
        let refused = read(json!({"effectiveCapabilities": ["pushEvents", "modelInfo"],
                                  "deniedCapabilities": ["tools", "*"]}));
        let e = Policy::receive(&mut current, &refused).unwrap_err();
        assert_eq!(e.to_error().code, ErrorCode::INVALID_PARAMS);
        let grant = &current.as_ref().unwrap().grant;
        assert!(!grant.allows("tools"), "denied");
        assert!(
            !grant.allows("pushEvents"),
            "granted, and matched by the denied `*`"
        );
        let accepted = Policy::receive(
            &mut current,
            &read(json!({"effectiveCapabilities": ["tools"]})),
        )
        .unwrap()
        .clone();
        assert_eq!(
            current,
            Some(accepted),
            "a well-formed update replaces the policy"
        );
    }
}

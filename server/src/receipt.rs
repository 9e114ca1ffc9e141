//! The receipt for a grant (SPEC §6.7): what a `featureSets/update` leaves unavailable.
//!
//! The server goes on under any grant (`accepted: true`); a feature set whose `uses` the
//! grant does not cover is reported as disabled, and the mode is then `"degraded"`. The
//! receipt is testimony, never authority.

use mcpl_protocol::grant::{self, Policy, feature_set_matches};
use mcpl_protocol::mcpl::{FeatureSetsUpdateResult, McplManifest};

/// The receipt for `policy` against the manifest the host was shown: every feature set the
/// policy leaves unavailable, with its reason (`not_selected`, `invalid_uses`, a missing
/// capability, the host's `disabled`) and the capabilities it misses (SPEC §5.3, §6.4), and
/// a note for each `enabled`/`disabled` entry that names no declared feature set.
pub(crate) fn receipt(manifest: &McplManifest, policy: &Policy) -> FeatureSetsUpdateResult {
    let mut result = grant::derive(manifest, policy).receipt();
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest() -> McplManifest {
        serde_json::from_value(json!({"version": "0.5", "featureSets": {
            "a": {"description": "a", "uses": ["tools"]},
            "b": {"description": "b", "uses": ["pushEvents", "tools", "pushEvents"]}}}))
        .unwrap()
    }

    fn policy(v: serde_json::Value) -> Policy {
        Policy::read(&serde_json::from_value(v).unwrap()).unwrap()
    }

    #[test]
    fn a_full_grant_gets_a_plain_acceptance() {
        let g = policy(json!({"effectiveCapabilities": ["tools", "pushEvents"]}));
        assert_eq!(
            serde_json::to_value(receipt(&manifest(), &g)).unwrap(),
            json!({"accepted": true})
        );
    }

    #[test]
    fn a_partial_grant_is_degraded_naming_what_is_missing() {
        let g = policy(json!({"effectiveCapabilities": ["tools"], "enabled": ["a", "b", "zz"]}));
        assert_eq!(
            serde_json::to_value(receipt(&manifest(), &g)).unwrap(),
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
        let g = policy(json!({"effectiveCapabilities": ["*"], "enabled": ["a"]}));
        assert_eq!(
            serde_json::to_value(receipt(&manifest(), &g)).unwrap(),
            json!({"accepted": true, "mode": "degraded",
                   "unavailableFeatures": [{"featureSet": "b", "missingCapabilities": [],
                                            "effect": "disabled", "reason": "not_selected"}]})
        );
    }
}

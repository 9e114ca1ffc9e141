//! The receipt for a grant (SPEC §6.7): what a `featureSets/update` leaves unavailable.
//!
//! The server goes on under any grant (`accepted: true`); a feature set whose `uses` the
//! grant does not cover is reported as disabled, and the mode is then `"degraded"`. The
//! receipt is testimony, never authority.

use mcpl_protocol::mcpl::{
    FeatureSetsUpdateParams, FeatureSetsUpdateResult, McplManifest, UnavailableFeature,
};

/// The receipt for `grant` against the manifest the host was shown.
pub(crate) fn receipt(
    manifest: &McplManifest,
    grant: &FeatureSetsUpdateParams,
) -> FeatureSetsUpdateResult {
    let unavailable_features: Vec<UnavailableFeature> = manifest
        .feature_sets
        .iter()
        .filter_map(|(name, decl)| {
            let mut missing: Vec<String> = decl
                .uses
                .iter()
                .filter(|u| !grant.grants(u))
                .cloned()
                .collect();
            missing.sort();
            missing.dedup();
            (!missing.is_empty()).then(|| UnavailableFeature {
                feature_set: name.clone(),
                missing_capabilities: missing,
                effect: "disabled".to_owned(),
            })
        })
        .collect();
    let notes = grant
        .enabled
        .iter()
        .flatten()
        .chain(&grant.disabled)
        .filter(|n| !manifest.feature_sets.contains_key(*n))
        .map(|n| format!("feature set {n:?} is not declared"))
        .collect();
    FeatureSetsUpdateResult {
        accepted: true,
        mode: (!unavailable_features.is_empty()).then(|| "degraded".to_owned()),
        unavailable_features,
        notes,
        fallback: None,
        reason: None,
        meta: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest() -> McplManifest {
        serde_json::from_value(json!({"version": "0.5", "featureSets": {
            "a": {"uses": ["tools"]}, "b": {"uses": ["pushEvents", "tools", "pushEvents"]}}}))
        .unwrap()
    }

    #[test]
    fn a_full_grant_gets_a_plain_acceptance() {
        let g = serde_json::from_value(json!({"effectiveCapabilities": ["tools", "pushEvents"]}))
            .unwrap();
        assert_eq!(
            serde_json::to_value(receipt(&manifest(), &g)).unwrap(),
            json!({"accepted": true})
        );
    }

    #[test]
    fn a_partial_grant_is_degraded_naming_what_is_missing() {
        let g = serde_json::from_value(
            json!({"effectiveCapabilities": ["tools"], "enabled": ["a", "zz"]}),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(receipt(&manifest(), &g)).unwrap(),
            json!({"accepted": true, "mode": "degraded",
                   "unavailableFeatures": [{"featureSet": "b", "missingCapabilities": ["pushEvents"], "effect": "disabled"}],
                   "notes": ["feature set \"zz\" is not declared"]})
        );
    }
}

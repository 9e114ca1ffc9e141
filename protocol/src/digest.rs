//! The manifest revision digest (SPEC §17.2):
//! `"sha256:" + base64url_unpadded(SHA-256(JCS(manifest without revision)))`, where JCS is
//! RFC 8785 canonical JSON and every feature set's `uses` array is a set: sorted and
//! de-duplicated before hashing, so order and repeats never change the revision.

use crate::mcpl::McplManifest;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Why a digest could not be computed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DigestError {
    /// The manifest is not a JSON object.
    #[error("a manifest must be a JSON object")]
    NotAnObject,
    /// JCS canonicalisation failed (a number JCS cannot represent).
    #[error("cannot canonicalise the manifest: {0}")]
    Canonical(String),
}

/// The revision of a manifest given as JSON.
pub fn revision_of_value(manifest: &Value) -> Result<String, DigestError> {
    let Value::Object(map) = manifest else {
        return Err(DigestError::NotAnObject);
    };
    let mut map = map.clone();
    map.remove("revision");
    if let Some(Value::Object(sets)) = map.get_mut("featureSets") {
        for decl in sets.values_mut() {
            if let Some(Value::Array(uses)) = decl.get_mut("uses") {
                uses.sort_by_key(|v| v.to_string());
                uses.dedup();
            }
        }
    }
    let canonical = serde_jcs::to_vec(&Value::Object(map))
        .map_err(|e| DigestError::Canonical(e.to_string()))?;
    Ok(format!(
        "sha256:{}",
        URL_SAFE_NO_PAD.encode(Sha256::digest(&canonical))
    ))
}

/// The revision of a typed manifest (its own `revision` member is ignored).
pub fn manifest_revision(manifest: &McplManifest) -> Result<String, DigestError> {
    revision_of_value(&crate::jsonrpc::to_value(manifest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec_vector() -> Value {
        json!({"version":"0.5","pushEvents":true,"contextHooks":{"beforeInference":true},
               "inferenceLifecycle":true,"channels":{"register":true,"publish":true,"incoming":true},
               "featureSets":{"demo.messaging":{"description":"Demo",
                   "uses":["channels.publish","channels.incoming","pushEvents","tools"]}}})
    }

    #[test]
    fn reproduces_the_spec_test_vector() {
        assert_eq!(
            revision_of_value(&spec_vector()).unwrap(),
            "sha256:_YZTS0h1tqTAMZI6eElCszSQE2WNx3xhAhmgUvNI9H4"
        );
    }

    #[test]
    fn typed_manifest_gives_the_same_revision() {
        let m: McplManifest = serde_json::from_value(spec_vector()).unwrap();
        assert_eq!(
            manifest_revision(&m).unwrap(),
            "sha256:_YZTS0h1tqTAMZI6eElCszSQE2WNx3xhAhmgUvNI9H4"
        );
    }

    #[test]
    fn uses_is_a_set_and_revision_is_ignored() {
        let mut v = spec_vector();
        v["featureSets"]["demo.messaging"]["uses"] = json!([
            "tools",
            "pushEvents",
            "tools",
            "channels.incoming",
            "channels.publish"
        ]);
        v["revision"] = json!("sha256:whatever");
        assert_eq!(
            revision_of_value(&v).unwrap(),
            "sha256:_YZTS0h1tqTAMZI6eElCszSQE2WNx3xhAhmgUvNI9H4"
        );
    }

    #[test]
    fn any_change_changes_the_revision() {
        let mut v = spec_vector();
        v["toolHints"] = json!(true);
        assert_ne!(
            revision_of_value(&v).unwrap(),
            revision_of_value(&spec_vector()).unwrap()
        );
    }
}

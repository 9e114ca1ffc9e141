//! The manifest revision digest (SPEC §17.2):
//! `"sha256:" + base64url_unpadded(SHA-256(JCS(manifest without revision)))`, where JCS is
//! RFC 8785 canonical JSON and every feature set's `uses` array is a set: sorted and
//! de-duplicated before hashing, so order and repeats never change the revision.
//!
//! `uses` entries are sorted by their string value (code point order), not by their JSON
//! text: the two differ for strings holding `"`, `\` or characters below `#`. A `uses` that
//! is not an array of strings cannot be a set of capability paths, and is refused.

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
    /// A feature set's `uses` is not an array of strings (SPEC §6.1: capability paths).
    #[error("feature set {feature_set:?}: \"uses\" must be an array of strings")]
    UsesNotStrings {
        /// The feature set.
        feature_set: String,
    },
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
        for (name, decl) in sets.iter_mut() {
            if let Some(uses) = decl.get_mut("uses") {
                *uses = uses_as_set(uses).ok_or_else(|| DigestError::UsesNotStrings {
                    feature_set: name.clone(),
                })?;
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

/// `uses` sorted by string value and de-duplicated; `None` unless an array of strings.
fn uses_as_set(uses: &Value) -> Option<Value> {
    let mut paths = uses
        .as_array()?
        .iter()
        .map(Value::as_str)
        .collect::<Option<Vec<&str>>>()?;
    paths.sort_unstable();
    paths.dedup();
    Some(Value::Array(
        paths
            .into_iter()
            .map(|p| Value::from(p.to_owned()))
            .collect(),
    ))
}

/// The revision of a typed manifest (its own `revision` member is ignored), over the JSON
/// this type writes: what a server that sends this manifest must announce.
///
/// To check the revision of a manifest *as received*, use [`revision_of_value`] on the JSON
/// as it came: the typed form writes some defaults out (a toolset's `default: "closed"`, a
/// feature set's `uses: []`), so a manifest that left them out has a different digest once
/// decoded and encoded again.
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

    /// What `manifest_revision`'s docs warn of: decoding writes defaults out, so a received
    /// manifest that left them out is checked as received.
    #[test]
    fn a_received_manifest_is_checked_as_received_not_as_decoded() {
        let received = json!({"version": "0.5", "toolHints": true,
            "featureSets": {"f": {}}, "toolsets": {"go": {"title": "Go"}}});
        let typed: McplManifest = serde_json::from_value(received.clone()).unwrap();
        let written = crate::jsonrpc::to_value(&typed);
        assert_eq!(written["toolsets"]["go"]["default"], "closed");
        assert_eq!(written["featureSets"]["f"]["uses"], json!([]));
        assert_ne!(
            manifest_revision(&typed).unwrap(),
            revision_of_value(&received).unwrap()
        );
        assert_eq!(
            manifest_revision(&typed).unwrap(),
            revision_of_value(&written).unwrap()
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

    /// Hashes `manifest` as given: no sorting, no removal.
    fn hash_as_is(manifest: &Value) -> String {
        let canonical = serde_jcs::to_vec(manifest).unwrap();
        format!(
            "sha256:{}",
            URL_SAFE_NO_PAD.encode(Sha256::digest(&canonical))
        )
    }

    fn with_uses(uses: Value) -> Value {
        json!({"version": "0.5", "featureSets": {"x": {"uses": uses}}})
    }

    #[test]
    fn uses_sort_by_string_value_not_json_text() {
        // `a"` < `a#` as strings ('"' is 0x22, '#' 0x23), but their JSON texts `"a\""` and
        // `"a#"` sort the other way ('\\' is 0x5C); likewise `a` < `a!` against `"a!"` <
        // `"a"`.
        let text = |s: &str| serde_json::to_string(s).unwrap();
        assert!("a\"" < "a#" && text("a\"") > text("a#"));
        assert!("a" < "a!" && text("a") > text("a!"));

        let sorted = json!(["a", "a!", "a\"", "a#", "a\\", "tools"]);
        let expected = hash_as_is(&with_uses(sorted.clone()));
        for uses in [
            sorted,
            json!(["tools", "a#", "a\\", "a\"", "a!", "a"]),
            json!(["a#", "a\"", "a#", "tools", "a", "a!", "a\\", "a\"", "a"]),
        ] {
            assert_eq!(
                revision_of_value(&with_uses(uses.clone())).unwrap(),
                expected,
                "{uses}"
            );
        }
        let typed: McplManifest =
            serde_json::from_value(with_uses(json!(["a#", "tools", "a\"", "a!", "a", "a\\"])))
                .unwrap();
        assert_eq!(manifest_revision(&typed).unwrap(), expected);
    }

    #[test]
    fn uses_that_is_not_a_list_of_strings_is_refused() {
        for uses in [
            json!(["tools", 1]),
            json!("tools"),
            json!(null),
            json!([["tools"]]),
        ] {
            assert!(
                matches!(
                    revision_of_value(&with_uses(uses.clone())),
                    Err(DigestError::UsesNotStrings { feature_set }) if feature_set == "x"
                ),
                "{uses}"
            );
        }
        assert!(matches!(
            revision_of_value(&json!([])),
            Err(DigestError::NotAnObject)
        ));
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

//! The manifest revision digest (SPEC §17.2):
//!
//! ```text
//! revision = "sha256:" + base64url_unpadded( SHA-256( JCS( manifest_without_revision ) ) )
//! ```
//!
//! In five steps, each a function here so that a failing vector says which one broke
//! (`upstream/conformance/CONSUMING.md`):
//!
//! 1. **strip** the root `revision` member, and only that one;
//! 2. **set-normalise** the three set-valued arrays — `featureSets.*.uses`,
//!    `featureSets.*.tagOntology.coreTags`, `featureSets.*.tagOntology.tags.*.implies` —
//!    sorted by UTF-8 bytes and de-duplicated; every other array is a list and keeps its
//!    order;
//! 3. **check identifiers**: every identifier position must be a non-empty string of
//!    `[A-Za-z0-9._:*-]`, or no revision is computed ([`DigestError::IdentifierCharset`]);
//! 4. **canonicalise** with RFC 8785 (JCS);
//! 5. **hash and encode**.
//!
//! The digest is **total** (SPEC §17.2): anything that is not in the conforming shape —
//! `uses` as a string, `featureSets` as an array, a set holding a non-string — is hashed
//! verbatim: not sorted, not de-duplicated, not identifier-checked. Validation (SPEC §6.4,
//! [`crate::grant`]) is where such a manifest fails; the digest's job is to give every
//! implementation the same answer for the same bytes. The only refusals are a manifest that
//! is not an object and an identifier-charset violation.
//!
//! Identifier positions (the upstream vectors' `identifierPositions`, the fail-closed
//! reading of SPEC §17.2): member names at every depth of every root member other than
//! `version`, `revision` and `featureSets` (capability paths, SPEC §5.1, and RFC-014's
//! `toolHints`/`toolsets`/`surface`, whose member names are manifest member names too);
//! feature-set names; the members of the three sets; `tagOntology.tags` keys and each tag's
//! `facet`; `tagOntology.keyed` keys and their `values`; `suggestedTreatment` matchers
//! (`tagsAny`, `tagsAll`, `tagsNone`). Free text (`description`, `desc`, `title`, …) is not
//! an identifier.
//!
//! Checked against `shared/spec/upstream/conformance/manifest-digest-vectors.json`
//! (25 manifest vectors, 4 comparator vectors) in `protocol/tests/digest_vectors.rs`.

use crate::mcpl::McplManifest;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Why a digest could not be computed. The upstream vectors name each case by its
/// [`code`](DigestError::code).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DigestError {
    /// The manifest is not a JSON object (`manifest_not_object`).
    #[error("a manifest must be a JSON object")]
    NotAnObject,
    /// A string in an identifier position is empty or holds a character outside
    /// `[A-Za-z0-9._:*-]` (`identifier_charset`).
    #[error("{at}: {value:?} is not an identifier ([A-Za-z0-9._:*-], non-empty)")]
    IdentifierCharset {
        /// Where it is, as a dotted path (`featureSets.demo/messaging`).
        at: String,
        /// The offending identifier.
        value: String,
    },
}

impl DigestError {
    /// The upstream vectors' error code for this refusal.
    pub fn code(&self) -> &'static str {
        match self {
            DigestError::NotAnObject => "manifest_not_object",
            DigestError::IdentifierCharset { .. } => "identifier_charset",
        }
    }
}

/// SPEC §17.2's identifier charset: non-empty, `[A-Za-z0-9._:*-]` only.
pub fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:*-".contains(&b))
}

/// The revision of a manifest given as JSON, exactly as received.
pub fn revision_of_value(manifest: &Value) -> Result<String, DigestError> {
    Ok(revision_of_canonical(&canonical_json(manifest)?))
}

/// Steps 1–4: the exact JCS text that is hashed.
pub fn canonical_json(manifest: &Value) -> Result<String, DigestError> {
    let normalised = normalise(manifest)?;
    Ok(serde_json_canonicalizer::to_string(&normalised)
        .expect("a serde_json::Value holds no number JCS cannot write"))
}

/// Step 5: `"sha256:" + base64url_unpadded(SHA-256(canonical))`.
pub fn revision_of_canonical(canonical: &str) -> String {
    format!(
        "sha256:{}",
        URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
    )
}

/// The revision of a typed manifest (its own `revision` member is ignored), over the JSON
/// this type writes: what a server that sends this manifest must announce.
///
/// To check the revision of a manifest *as received*, use [`revision_of_value`] on the JSON
/// as it came: the typed form writes some defaults out (a toolset's `default: "closed"`),
/// so a manifest that left them out has a different digest once decoded and encoded again.
pub fn manifest_revision(manifest: &McplManifest) -> Result<String, DigestError> {
    revision_of_value(&crate::jsonrpc::to_value(manifest))
}

/// Sorts and de-duplicates a set by UTF-8 byte sequence (SPEC §17.2). Rust's `str` order
/// *is* UTF-8 byte order, which is why this is a plain sort.
pub fn set_normalise(members: &mut Vec<String>) {
    members.sort_unstable();
    members.dedup();
}

/// Root members that are not capabilities, so whose member names are not checked as
/// capability path segments (SPEC §17.1's domain table).
const ROOT_NON_CAPABILITY: [&str; 3] = ["version", "revision", "featureSets"];

/// Steps 1–3 on a copy of `manifest`.
fn normalise(manifest: &Value) -> Result<Value, DigestError> {
    let Value::Object(root) = manifest else {
        return Err(DigestError::NotAnObject);
    };
    let mut root = root.clone();
    root.remove("revision");
    for (name, value) in &root {
        if ROOT_NON_CAPABILITY.contains(&name.as_str()) {
            continue;
        }
        check(name, name)?;
        check_member_names(value, &mut name.clone())?;
    }
    // SPEC §17.2: set paths are written against the object-keyed `featureSets`; any other
    // shape is hashed verbatim.
    if let Some(Value::Object(sets)) = root.get_mut("featureSets") {
        for (name, decl) in sets.iter_mut() {
            let at = format!("featureSets.{name}");
            check(name, &at)?;
            if let Value::Object(decl) = decl {
                normalise_feature_set(decl, &at)?;
            }
        }
    }
    Ok(Value::Object(root))
}

fn normalise_feature_set(decl: &mut Map<String, Value>, at: &str) -> Result<(), DigestError> {
    as_set(decl.get_mut("uses"), &format!("{at}.uses"))?;
    let Some(Value::Object(ontology)) = decl.get_mut("tagOntology") else {
        return Ok(());
    };
    let at = format!("{at}.tagOntology");
    as_set(ontology.get_mut("coreTags"), &format!("{at}.coreTags"))?;
    if let Some(Value::Object(tags)) = ontology.get_mut("tags") {
        for (tag, desc) in tags.iter_mut() {
            let at = format!("{at}.tags.{tag}");
            check(tag, &at)?;
            if let Value::Object(desc) = desc {
                as_set(desc.get_mut("implies"), &format!("{at}.implies"))?;
                if let Some(Value::String(facet)) = desc.get("facet") {
                    check(facet, &format!("{at}.facet"))?;
                }
            }
        }
    }
    if let Some(Value::Object(keyed)) = ontology.get("keyed") {
        for (key, family) in keyed {
            let at = format!("{at}.keyed.{key}");
            check(key, &at)?;
            check_strings(family.get("values"), &format!("{at}.values"))?;
        }
    }
    if let Some(Value::Array(rules)) = ontology.get("suggestedTreatment") {
        for rule in rules {
            for matcher in ["tagsAny", "tagsAll", "tagsNone"] {
                check_strings(
                    rule.get(matcher),
                    &format!("{at}.suggestedTreatment.{matcher}"),
                )?;
            }
        }
    }
    Ok(())
}

/// A set position: an all-string array is identifier-checked, sorted and de-duplicated;
/// anything else is left verbatim (SPEC §17.2, totality).
fn as_set(value: Option<&mut Value>, at: &str) -> Result<(), DigestError> {
    let Some(Value::Array(items)) = value else {
        return Ok(());
    };
    let Some(mut members) = items
        .iter()
        .map(|m| m.as_str().map(str::to_owned))
        .collect::<Option<Vec<String>>>()
    else {
        return Ok(());
    };
    for m in &members {
        check(m, at)?;
    }
    set_normalise(&mut members);
    *items = members.into_iter().map(Value::String).collect();
    Ok(())
}

/// A list of identifiers (not a set): each string member is checked, the order kept.
fn check_strings(value: Option<&Value>, at: &str) -> Result<(), DigestError> {
    if let Some(Value::Array(items)) = value {
        for s in items.iter().filter_map(Value::as_str) {
            check(s, at)?;
        }
    }
    Ok(())
}

/// Member names at every depth below a capability member (SPEC §5.4's generic walk).
/// `at` is the path so far, grown and cut back in place: one string for the whole walk,
/// not one per member (issue #42: a manifest's options schemas are deep, and a host checks
/// the digest of every manifest it is shown).
fn check_member_names(value: &Value, at: &mut String) -> Result<(), DigestError> {
    match value {
        Value::Object(map) => {
            for (name, v) in map {
                let len = at.len();
                at.push('.');
                at.push_str(name);
                check(name, at)?;
                check_member_names(v, at)?;
                at.truncate(len);
            }
        }
        Value::Array(items) => {
            for v in items {
                check_member_names(v, at)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn check(value: &str, at: &str) -> Result<(), DigestError> {
    if is_identifier(value) {
        Ok(())
    } else {
        Err(DigestError::IdentifierCharset {
            at: at.to_owned(),
            value: value.to_owned(),
        })
    }
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
            "toolsets": {"go": {"title": "Go"}}});
        let typed: McplManifest = serde_json::from_value(received.clone()).unwrap();
        let written = crate::jsonrpc::to_value(&typed);
        assert_eq!(written["toolsets"]["go"]["default"], "closed");
        assert_ne!(
            manifest_revision(&typed).unwrap(),
            revision_of_value(&received).unwrap()
        );
        assert_eq!(
            manifest_revision(&typed).unwrap(),
            revision_of_value(&written).unwrap()
        );
    }

    /// RFC-014's members are capability-domain members: a toolset's options schema with a
    /// `$ref` is refused like any other bad member name (spec §4.1).
    #[test]
    fn rfc014_member_names_are_identifiers_too() {
        let mut v = spec_vector();
        v["toolsets"] = json!({"go": {"options": {"properties": {"$ref": {}}}}});
        assert_eq!(
            revision_of_value(&v),
            Err(DigestError::IdentifierCharset {
                at: "toolsets.go.options.properties.$ref".into(),
                value: "$ref".into()
            })
        );
        v["toolsets"] = json!({"go": {"title": "Go: the game / with free text"}});
        assert!(revision_of_value(&v).is_ok());
    }

    /// JCS writes numbers as ECMAScript does, so an integer beyond 2^53 is the double it
    /// rounds to, and member names sort by UTF-16 code units.
    #[test]
    fn numbers_and_member_names_follow_ecmascript() {
        let v = json!({"version": "0.5", "x": {"n": 9007199254740993u64}});
        assert_eq!(
            canonical_json(&v).unwrap(),
            r#"{"version":"0.5","x":{"n":9007199254740992}}"#
        );
        // U+FF61 sorts after U+10000 in UTF-8 bytes but before it in UTF-16 code units.
        let v = json!({"featureSets": {"f": {"description": "d", "\u{10000}": 1, "\u{ff61}": 2}}});
        assert_eq!(
            canonical_json(&v).unwrap(),
            "{\"featureSets\":{\"f\":{\"description\":\"d\",\"\u{10000}\":1,\"\u{ff61}\":2}}}"
        );
    }
}

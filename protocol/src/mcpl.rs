//! MCPL 0.5 base types (summarised in spec §2): capabilities, the manifest,
//! `featureSets/update`, `push/event` and manifest changes.
//!
//! The server's `capabilities.experimental.mcpl` object *is* its manifest (SPEC §17); the
//! host advertises a smaller object of its own ([`HostMcplCapabilities`]).
//!
//! `mcpl/manifest`'s result is the manifest object itself (SPEC §17.4), so its type is
//! [`McplManifest`].

use crate::hints::HintChanges;
use crate::mcp::ContentBlock;
use crate::meta::{Meta, is_none_or_empty};
use crate::toolsets::{Surface, ToolsetDecl};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The MCPL version this project speaks.
pub const MCPL_VERSION: &str = "0.5";

/// The capability path for tools, as granted in `effectiveCapabilities`.
pub const CAP_TOOLS: &str = "tools";
/// The capability path for push events.
pub const CAP_PUSH_EVENTS: &str = "pushEvents";

/// The manifest domain RFC-014 adds for `toolHints`, `toolsets` and `surface` (§4.1).
pub const DOMAIN_TOOLSETS: &str = "toolsets";

/// What a host advertises under `capabilities.experimental.mcpl` (SPEC §5.2, §2).
///
/// Read liberally, like a manifest: any object decodes; a member of the wrong type reads as
/// absent, and an object where a boolean was expected advertises the member (SPEC §5.1's
/// nested advertisement).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "Map<String, Value>")]
pub struct HostMcplCapabilities {
    /// The MCPL version (empty when the host sent none).
    pub version: String,
    /// The host accepts `push/event`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_events: Option<bool>,
    /// RFC-014: the host understands tool hints (§2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_hints: Option<bool>,
    /// The host manages feature sets (SPEC §5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_sets: Option<bool>,
    /// Other members.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl From<Map<String, Value>> for HostMcplCapabilities {
    fn from(mut raw: Map<String, Value>) -> Self {
        let mut flag = |name: &str| match raw.remove(name) {
            Some(Value::Bool(b)) => Some(b),
            Some(Value::Object(_)) => Some(true),
            _ => None,
        };
        let push_events = flag("pushEvents");
        let tool_hints = flag("toolHints");
        let feature_sets = flag("featureSets");
        let version = match raw.remove("version") {
            Some(Value::String(v)) => v,
            _ => String::new(),
        };
        HostMcplCapabilities {
            version,
            push_events,
            tool_hints,
            feature_sets,
            other: raw,
        }
    }
}

/// Decodes an optional member liberally: a value that does not decode as `T` reads as
/// absent (for capability members a peer may shape in ways this project does not know).
pub(crate) fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

/// A server's MCPL manifest: `capabilities.experimental.mcpl` (SPEC §17).
///
/// **Reading it is liberal** (SPEC §6.4, §17.5: an invalid declaration disables what it
/// declares; it never ends the connection). Any JSON object decodes:
///
/// - a feature set whose `uses` is absent, empty, not an array of strings, or names a path
///   outside the vocabulary goes to [`invalid_feature_sets`](Self::invalid_feature_sets)
///   and is disabled with `invalid_uses`; `featureSets` that is not an object (the array
///   form of Anarchid/mcpl-core 0.1) declares no valid feature set;
/// - a toolset declaration that does not decode is left out;
/// - a member of the wrong type reads as absent; an absent `version` reads as empty;
/// - the stated `revision` is checked against the digest of the object as received, and a
///   mismatch is a conformance defect to report, not a reason to refuse (SPEC §17.2).
///
/// Each of these leaves a [`ManifestDiagnostic`]. Writing it writes the typed members only:
/// a manifest built in code (a server's) has neither invalid sets nor diagnostics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "Map<String, Value>")]
pub struct McplManifest {
    /// The MCPL version.
    pub version: String,
    /// SPEC §17.2's digest of everything else; see [`crate::digest`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The server sends `push/event`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_events: Option<bool>,
    /// RFC-014: the server sends tool hints (§2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_hints: Option<bool>,
    /// Declared feature sets (the valid ones, when read from a peer).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_sets: BTreeMap<String, FeatureSetDecl>,
    /// RFC-014: declared toolsets (§4.1).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub toolsets: BTreeMap<String, ToolsetDecl>,
    /// RFC-014: the server as a whole, for a host's catalog (§10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<Surface>,
    /// Other members (`contextHooks`, `channels`, …).
    #[serde(flatten)]
    pub other: Map<String, Value>,
    /// Feature sets declared invalidly, as received: each is disabled with `invalid_uses`
    /// (SPEC §6.4). Never written.
    #[serde(skip)]
    pub invalid_feature_sets: BTreeMap<String, Value>,
    /// What reading found wrong. Never written.
    #[serde(skip)]
    pub diagnostics: Vec<ManifestDiagnostic>,
}

/// Something wrong in a manifest read from a peer, kept for logs and tests; none of these
/// refuses the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ManifestDiagnostic {
    /// `version` is absent or not a string (B.3 requires it).
    NoVersion,
    /// `featureSets` is not an object keyed by name: no feature set is validly declared.
    FeatureSetsNotAnObject,
    /// A feature set is invalid (SPEC §6.4 rule 1, `invalid_uses`), with what is wrong.
    InvalidFeatureSet {
        /// Its name.
        name: String,
        /// What is wrong.
        detail: String,
    },
    /// A feature set without a `description` (B.2 requires one). Kept.
    NoDescription {
        /// Its name.
        feature_set: String,
    },
    /// A member of the wrong type, read as absent.
    WrongType {
        /// The member.
        member: String,
    },
    /// A toolset declaration that does not decode, left out (§4.1).
    InvalidToolset {
        /// Its name.
        name: String,
        /// What is wrong.
        detail: String,
    },
    /// The stated revision is not the digest of what was received (SPEC §17.2: a
    /// conformance defect, not grounds to reject).
    RevisionMismatch {
        /// As stated.
        stated: String,
        /// As computed.
        computed: String,
    },
    /// No digest can be computed for what was received (an identifier-charset violation).
    NoDigest(crate::digest::DigestError),
}

impl std::fmt::Display for ManifestDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ManifestDiagnostic::NoVersion => write!(f, "no version"),
            ManifestDiagnostic::FeatureSetsNotAnObject => {
                write!(f, "featureSets is not an object keyed by name")
            }
            ManifestDiagnostic::InvalidFeatureSet { name, detail } => {
                write!(
                    f,
                    "feature set {name:?} is invalid (invalid_uses): {detail}"
                )
            }
            ManifestDiagnostic::NoDescription { feature_set } => {
                write!(f, "feature set {feature_set:?} has no description")
            }
            ManifestDiagnostic::WrongType { member } => {
                write!(f, "{member} has the wrong type; read as absent")
            }
            ManifestDiagnostic::InvalidToolset { name, detail } => {
                write!(f, "toolset {name:?} left out: {detail}")
            }
            ManifestDiagnostic::RevisionMismatch { stated, computed } => {
                write!(f, "revision {stated} is not the digest {computed}")
            }
            ManifestDiagnostic::NoDigest(e) => write!(f, "no digest: {e}"),
        }
    }
}

impl From<Map<String, Value>> for McplManifest {
    fn from(raw: Map<String, Value>) -> Self {
        read_manifest(raw)
    }
}

/// The liberal reading of a manifest object; see [`McplManifest`].
fn read_manifest(mut raw: Map<String, Value>) -> McplManifest {
    // `_meta` is MCP's reserved member of every result, never a capability: the result of
    // `mcpl/manifest` is the manifest itself (SPEC §17.4) and may carry one.
    raw.remove("_meta");
    let mut diagnostics = Vec::new();
    let stated = raw
        .get("revision")
        .and_then(Value::as_str)
        .map(str::to_owned);
    // The object as received, without a copy: wrapped for the digest and unwrapped after.
    let received = Value::Object(raw);
    let digest = crate::digest::revision_of_value(&received);
    let Value::Object(mut raw) = received else {
        unreachable!("wrapped as an object just above")
    };
    match digest {
        Ok(computed) => {
            if let Some(stated) = stated.as_ref().filter(|s| **s != computed) {
                diagnostics.push(ManifestDiagnostic::RevisionMismatch {
                    stated: stated.clone(),
                    computed,
                });
            }
        }
        Err(e) => diagnostics.push(ManifestDiagnostic::NoDigest(e)),
    }
    let wrong_type = |member: &str, diagnostics: &mut Vec<ManifestDiagnostic>| {
        diagnostics.push(ManifestDiagnostic::WrongType {
            member: member.to_owned(),
        })
    };
    let version = match raw.remove("version") {
        Some(Value::String(v)) => v,
        _ => {
            diagnostics.push(ManifestDiagnostic::NoVersion);
            String::new()
        }
    };
    raw.remove("revision");
    let flag = |name: &str, raw: &mut Map<String, Value>, d: &mut Vec<ManifestDiagnostic>| {
        match raw.remove(name) {
            None => None,
            Some(Value::Bool(b)) => Some(b),
            // SPEC §5.1: an object advertises sub-capabilities, so it advertises the member.
            Some(Value::Object(_)) => Some(true),
            Some(_) => {
                wrong_type(name, d);
                None
            }
        }
    };
    let push_events = flag("pushEvents", &mut raw, &mut diagnostics);
    let tool_hints = flag("toolHints", &mut raw, &mut diagnostics);
    let mut feature_sets = BTreeMap::new();
    let mut invalid_feature_sets = BTreeMap::new();
    match raw.remove("featureSets") {
        None => {}
        Some(Value::Object(sets)) => {
            for (name, decl) in sets {
                match FeatureSetDecl::read(&decl) {
                    Ok(d) => {
                        if d.description.is_none() {
                            diagnostics.push(ManifestDiagnostic::NoDescription {
                                feature_set: name.clone(),
                            });
                        }
                        feature_sets.insert(name, d);
                    }
                    Err(detail) => {
                        diagnostics.push(ManifestDiagnostic::InvalidFeatureSet {
                            name: name.clone(),
                            detail,
                        });
                        invalid_feature_sets.insert(name, decl);
                    }
                }
            }
        }
        Some(other) => {
            diagnostics.push(ManifestDiagnostic::FeatureSetsNotAnObject);
            // The array form names its sets; they are declared, and invalid.
            for entry in other.as_array().into_iter().flatten() {
                if let Some(name) = entry.get("name").and_then(Value::as_str) {
                    invalid_feature_sets.insert(name.to_owned(), entry.clone());
                }
            }
        }
    }
    let mut toolsets = BTreeMap::new();
    match raw.remove("toolsets") {
        None => {}
        Some(Value::Object(decls)) => {
            for (name, decl) in decls {
                match serde_json::from_value::<ToolsetDecl>(decl)
                    .map_err(|e| e.to_string())
                    .and_then(|d| {
                        d.check_received(&name)
                            .map(|()| d)
                            .map_err(|e| e.to_string())
                    }) {
                    Ok(mut d) => {
                        if d.options.as_ref().is_some_and(|o| !o.is_object()) {
                            diagnostics.push(ManifestDiagnostic::WrongType {
                                member: format!("toolsets.{name}.options"),
                            });
                            d.options = None;
                        }
                        toolsets.insert(name, d);
                    }
                    Err(detail) => {
                        diagnostics.push(ManifestDiagnostic::InvalidToolset { name, detail })
                    }
                }
            }
        }
        Some(_) => wrong_type("toolsets", &mut diagnostics),
    }
    let surface = match raw.remove("surface") {
        None => None,
        Some(v) => serde_json::from_value::<Surface>(v).ok().or_else(|| {
            wrong_type("surface", &mut diagnostics);
            None
        }),
    };
    McplManifest {
        version,
        revision: stated,
        push_events,
        tool_hints,
        feature_sets,
        toolsets,
        surface,
        other: raw,
        invalid_feature_sets,
        diagnostics,
    }
}

impl McplManifest {
    /// True when the manifest advertises `toolHints`.
    pub fn has_tool_hints(&self) -> bool {
        self.tool_hints == Some(true)
    }

    /// True when `name` is declared as a feature set, validly or not.
    pub fn declares_feature_set(&self, name: &str) -> bool {
        self.feature_sets.contains_key(name) || self.invalid_feature_sets.contains_key(name)
    }

    /// The manifest as a host without `toolHints` is shown it: without RFC-014's members
    /// (§4.1 **\[project\]**), and with the revision recomputed over what is shown.
    pub fn tailored_for_plain_host(&self) -> McplManifest {
        let mut m = self.clone();
        m.tool_hints = None;
        m.toolsets.clear();
        m.surface = None;
        m.revision = None;
        m.revision = crate::digest::manifest_revision(&m).ok();
        m
    }
}

/// A feature set declaration (SPEC §6.1, B.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FeatureSetDecl {
    /// What it is, in words (B.2 requires it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The capability paths it uses; a set (the digest sorts and de-duplicates it).
    #[serde(default)]
    pub uses: Vec<String>,
    /// Other members (`rollback`, `tagOntology`, …).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl FeatureSetDecl {
    /// A declaration with a description and `uses`.
    pub fn new(description: impl Into<String>, uses: &[&str]) -> Self {
        FeatureSetDecl {
            description: Some(description.into()),
            uses: uses.iter().map(|u| (*u).to_owned()).collect(),
            other: Map::new(),
        }
    }

    /// SPEC §6.4 rule 1: `uses` is present, non-empty, and names only vocabulary paths.
    pub fn has_valid_uses(&self) -> bool {
        !self.uses.is_empty()
            && self
                .uses
                .iter()
                .all(|u| crate::grant::is_capability_path(u))
    }

    /// Reads a declaration from a peer: an object whose `uses` is valid (SPEC §6.4), or
    /// what is wrong with it.
    fn read(decl: &Value) -> Result<FeatureSetDecl, String> {
        let Value::Object(map) = decl else {
            return Err("not an object".to_owned());
        };
        let uses = match map.get("uses") {
            None => return Err("no uses".to_owned()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|u| u.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
                .ok_or_else(|| "uses holds a non-string".to_owned())?,
            Some(_) => return Err("uses is not an array".to_owned()),
        };
        if uses.is_empty() {
            return Err("uses is empty".to_owned());
        }
        if let Some(bad) = uses.iter().find(|u| !crate::grant::is_capability_path(u)) {
            return Err(format!(
                "uses names {:?}, not a capability path",
                crate::jsonrpc::clip(bad, 64)
            ));
        }
        let mut other = map.clone();
        other.remove("uses");
        let description = match other.remove("description") {
            Some(Value::String(d)) => Some(d),
            _ => None,
        };
        Ok(FeatureSetDecl {
            description,
            uses,
            other,
        })
    }
}

/// `featureSets/update` params: the host's grant (SPEC §5.3, §5.4, §6.7). Sent as a request
/// after `initialize`; until it completes, capability-dependent behaviour is unavailable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureSetsUpdateParams {
    /// The effective grant: the only allowlist; absence is denial.
    #[serde(default)]
    pub effective_capabilities: Vec<String>,
    /// Advertised but denied paths (diagnostic only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denied_capabilities: Vec<String>,
    /// Feature sets to enable (an allowlist when present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<Vec<String>>,
    /// Feature sets to disable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled: Vec<String>,
    /// `_meta` (MCP reserves it here), kept as sent: a progress token, vendor keys, ….
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

impl FeatureSetsUpdateParams {
    /// True when `path` is granted.
    pub fn grants(&self, path: &str) -> bool {
        self.effective_capabilities.iter().any(|c| c == path)
    }
}

/// `featureSets/update` result: the receipt (SPEC §6.7). Consequence testimony, never
/// authority.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureSetsUpdateResult {
    /// Whether the server goes on under this grant.
    pub accepted: bool,
    /// `"degraded"` when something is unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Feature sets the grant leaves unavailable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable_features: Vec<UnavailableFeature>,
    /// Every capability the unavailable feature sets miss (and, on a refusal, what the
    /// server would have needed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_capabilities: Vec<String>,
    /// Notes, for logs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// On refusal: `"mcp-only"` or `"close"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// On refusal: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `_meta` (MCP reserves it on every result), kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// A feature set a grant leaves unavailable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnavailableFeature {
    /// The feature set.
    pub feature_set: String,
    /// What the grant lacks.
    #[serde(default)]
    pub missing_capabilities: Vec<String>,
    /// What follows (`"disabled"`).
    pub effect: String,
    /// Why: `invalid_uses`, `not_selected` (SPEC §5.3, §6.4), or this project's
    /// `capability_denied` and `disabled` (named by the host's `disabled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// SPEC §16.1: a tag is `namespace:value` (or `namespace:key=value`), both parts non-empty
/// and without whitespace. A bare `"mention"` is not a tag: a producer never emits one, and
/// a consumer treats it as absent.
pub fn is_tag(tag: &str) -> bool {
    tag.split_once(':').is_some_and(|(ns, value)| {
        !ns.is_empty()
            && !value.is_empty()
            && !tag.chars().any(|c| c.is_whitespace() || c.is_control())
    })
}

/// The tags of `tags` that are tags (§16.1), each once, in first-seen order (§16.1: a set).
pub fn valid_tags(tags: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in tags {
        if is_tag(t) && !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

/// `push/event` params (SPEC §9.1), with RFC-014's members (§5.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushEventParams {
    /// The declaring feature set (its `uses` includes `pushEvents`).
    pub feature_set: String,
    /// Unique per event; a re-send of the same event keeps it (SPEC §9.4).
    pub event_id: String,
    /// When it happened (RFC 3339).
    pub timestamp: String,
    /// Provenance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Value>,
    /// Tags (SPEC §16; RFC-014 reserves `surface:`, §10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The event's content.
    pub payload: PushPayload,
    /// RFC-006 coalescing. A push carrying `hints` never has it (§5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coalesce: Option<Value>,
    /// RFC-014: the hint changes this event explains (§5.2). Hints that cannot be read
    /// at all (no rev) read as absent here and never cost the event; a host's read tap
    /// looks at the raw member to tell that a change may have been lost.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub hints: Option<HintChanges>,
    /// RFC-014: the toolset the event is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolset: Option<String>,
    /// RFC-014: the instance the event is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// `_meta` (MCP reserves it on request params), kept as sent. RFC-014's hints travel in
    /// `hints`, never here (§5.2).
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// A push event's payload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PushPayload {
    /// Content for the model.
    pub content: Vec<ContentBlock>,
}

/// `push/event` result (SPEC §9.3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushEventResult {
    /// Whether the host accepted the event (a decision about the event, not about the
    /// server's state: a refused push's hints still apply, §5.2).
    pub accepted: bool,
    /// Set when the event started an inference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_id: Option<String>,
    /// Why it was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `_meta` (MCP reserves it on every result), kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// `mcpl/manifestChanged` params (SPEC §17.3; RFC-014 adds the `toolsets` domain, §4.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestChangedParams {
    /// The new revision.
    pub revision: String,
    /// Which domains changed (a hint the host may ignore).
    #[serde(default)]
    pub domains: Vec<String>,
    /// `_meta` (MCP reserves it on notification params), kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn push_event_round_trips_with_rfc014_members() {
        let v = json!({
            "featureSet": "arcade.games", "eventId": "ev-7", "timestamp": "2026-11-30T12:00:00Z",
            "tags": ["surface:turn"],
            "payload": {"content": [{"type": "text", "text": "Black played D4"}]},
            "hints": {"rev": 3, "tools": [{"name": "play", "instance": "g1", "visible": true}]},
            "toolset": "go", "instance": "g1"
        });
        let p: PushEventParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.hints.as_ref().unwrap().rev, 3);
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
    }

    #[test]
    fn feature_sets_update_round_trips() {
        let v =
            json!({"effectiveCapabilities": ["tools", "pushEvents"], "enabled": ["arcade.games"]});
        let p: FeatureSetsUpdateParams = serde_json::from_value(v.clone()).unwrap();
        assert!(p.grants(CAP_PUSH_EVENTS));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        let r = json!({"accepted": true, "mode": "degraded",
                       "unavailableFeatures": [{"featureSet": "x", "missingCapabilities": ["pushEvents"], "effect": "disabled"}]});
        let res: FeatureSetsUpdateResult = serde_json::from_value(r.clone()).unwrap();
        assert_eq!(serde_json::to_value(&res).unwrap(), r);
    }

    /// SPEC §6.4, §17.5: what another implementation may send decodes; each fault leaves a
    /// diagnostic and disables only what it declares.
    #[test]
    fn a_manifest_from_a_peer_is_read_liberally() {
        // Anarchid/mcpl-core 0.1: `featureSets` as an array, no `version`.
        let m: McplManifest = serde_json::from_value(json!({
            "pushEvents": true,
            "featureSets": [{"name": "chat", "description": "d", "uses": ["pushEvents"]}]
        }))
        .unwrap();
        assert_eq!(m.version, "");
        assert!(m.feature_sets.is_empty());
        assert!(m.declares_feature_set("chat"));
        assert!(m.diagnostics.contains(&ManifestDiagnostic::NoVersion));
        assert!(
            m.diagnostics
                .contains(&ManifestDiagnostic::FeatureSetsNotAnObject)
        );

        let m: McplManifest = serde_json::from_value(json!({
            "version": "0.5", "toolHints": "yes", "pushEvents": {"x": true},
            "featureSets": {
                "good": {"description": "d", "uses": ["pushEvents", "tools"]},
                "stringy": {"description": "d", "uses": "tools"},
                "empty": {"description": "d", "uses": []},
                "unknown": {"description": "d", "uses": ["tools", "teleport"]},
                "bare": {"uses": ["tools"]}
            },
            "toolsets": {"go": {"title": "Go", "instances": "many"}, "ok": {"title": "Ok"},
                         "g.1": {"title": "dotted"}, "bad/name": {}}
        }))
        .unwrap();
        assert_eq!(m.tool_hints, None, "a non-boolean reads as absent");
        assert_eq!(
            m.push_events,
            Some(true),
            "an object advertises (SPEC §5.1)"
        );
        assert_eq!(m.feature_sets.keys().collect::<Vec<_>>(), ["bare", "good"]);
        assert_eq!(
            m.invalid_feature_sets.keys().collect::<Vec<_>>(),
            ["empty", "stringy", "unknown"]
        );
        assert!(m.diagnostics.contains(&ManifestDiagnostic::NoDescription {
            feature_set: "bare".into()
        }));
        assert_eq!(m.toolsets.keys().collect::<Vec<_>>(), ["g.1", "ok"]);
    }

    #[test]
    fn a_stated_revision_is_checked_against_what_was_received() {
        let mut v = json!({"version": "0.5", "pushEvents": true});
        v["revision"] = json!(crate::digest::revision_of_value(&v).unwrap());
        let m: McplManifest = serde_json::from_value(v.clone()).unwrap();
        assert!(m.diagnostics.is_empty(), "{:?}", m.diagnostics);
        v["revision"] = json!("sha256:AAAA");
        let m: McplManifest = serde_json::from_value(v).unwrap();
        assert!(matches!(
            &m.diagnostics[..],
            [ManifestDiagnostic::RevisionMismatch { stated, .. }] if stated == "sha256:AAAA"
        ));
        assert!(m.push_events == Some(true), "the content is what counts");
    }

    #[test]
    fn a_host_capability_of_an_unexpected_shape_reads_as_absent() {
        let caps: crate::mcp::ClientCapabilities =
            serde_json::from_value(json!({"experimental": {"mcpl": true}, "sampling": {}}))
                .unwrap();
        assert!(caps.mcpl().is_none());
        let caps: crate::mcp::ClientCapabilities =
            serde_json::from_value(json!({"experimental": 7})).unwrap();
        assert!(caps.mcpl().is_none());
        let caps: crate::mcp::ClientCapabilities = serde_json::from_value(
            json!({"experimental": {"mcpl": {"toolHints": 1, "pushEvents": {}}}}),
        )
        .unwrap();
        let m = caps.mcpl().unwrap();
        assert_eq!((m.tool_hints, m.push_events), (None, Some(true)));
    }

    #[test]
    fn a_tag_is_namespace_colon_value() {
        for ok in ["chat:mention", "surface:turn", "demo:urgency=high", "a:b:c"] {
            assert!(is_tag(ok), "{ok}");
        }
        for bad in ["mention", ":x", "x:", "", "a: b", "a:\nb"] {
            assert!(!is_tag(bad), "{bad:?}");
        }
        let tags: Vec<String> = ["x:a", "bare", "x:a", "y:b"].map(String::from).into();
        assert_eq!(valid_tags(&tags), ["x:a", "y:b"]);
    }

    #[test]
    fn manifest_keeps_unknown_members() {
        let v = json!({"version": "0.5", "contextHooks": {"beforeInference": true}, "toolHints": true,
                       "surface": {"title": "Arcade", "summary": "Games"}});
        let m: McplManifest = serde_json::from_value(v.clone()).unwrap();
        assert!(m.has_tool_hints());
        assert_eq!(serde_json::to_value(&m).unwrap(), v);
        let plain = m.tailored_for_plain_host();
        assert!(plain.tool_hints.is_none() && plain.surface.is_none());
        assert!(plain.revision.is_some());
    }
}

//! MCPL 0.5 base types (summarised in spec §2): capabilities, the manifest,
//! `featureSets/update`, `push/event` and manifest changes.
//!
//! The server's `capabilities.experimental.mcpl` object *is* its manifest (SPEC §17); the
//! host advertises a smaller object of its own ([`HostMcplCapabilities`]).
//!
//! **\[project\]** The MCPL 0.5 text is not public in full. The shapes of `mcpl/manifest`'s
//! result (`{manifest}`) is this project's reading; the other shapes follow the published
//! MCPL host types.

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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostMcplCapabilities {
    /// The MCPL version.
    pub version: String,
    /// The host accepts `push/event`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_events: Option<bool>,
    /// RFC-014: the host understands tool hints (§2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_hints: Option<bool>,
    /// The host manages feature sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_sets: Option<bool>,
    /// Other members.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A server's MCPL manifest: `capabilities.experimental.mcpl` (SPEC §17).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
    /// Declared feature sets.
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
}

impl McplManifest {
    /// True when the manifest advertises `toolHints`.
    pub fn has_tool_hints(&self) -> bool {
        self.tool_hints == Some(true)
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

/// A feature set declaration (SPEC §6.1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FeatureSetDecl {
    /// What it is, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The capability paths it uses; a set (the digest sorts and de-duplicates it).
    #[serde(default)]
    pub uses: Vec<String>,
    /// Other members (`scoped`, `rollback`, `tagOntology`, …).
    #[serde(flatten)]
    pub other: Map<String, Value>,
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
    /// RFC-014: the hint changes this event explains (§5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// `mcpl/manifest` result: the current manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestResult {
    /// The manifest, with its revision.
    pub manifest: McplManifest,
    /// `_meta` (MCP reserves it on every result), kept as sent.
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

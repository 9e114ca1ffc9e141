//! RFC-014 hint changes (spec §5.1).
//!
//! Entries state **values**, never differences: applying one twice is harmless. Every
//! message carrying a `HintChanges` takes the connection's next `rev` (§5.2).

use crate::mcp::ToolAnnotations;
use crate::meta::{Meta, is_none_or_empty};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whether a tool belongs in the stable list or comes and goes (§3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    /// Belongs in the model's stable tool list.
    Static,
    /// Comes and goes with state; offered through the host's meta-tools.
    Dynamic,
}

/// A set of hint changes, as carried by a result's `_meta["mcpl/hints"]`, a push's `hints`
/// member, or a `tools/hints` notification (§5.1, §5.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HintChanges {
    /// Per connection: 1, 2, 3, … consecutive across every carrier (§5.2).
    pub rev: u64,
    /// Per-tool changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolHint>,
    /// Toolset state, as values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub toolsets: Vec<ToolsetChange>,
    /// Suggestions: shown to the agent, never acted on by the host (§5.3, vector 19).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggest: Vec<Suggestion>,
}

impl HintChanges {
    /// True when there are no entries (a full statement may be empty and still count, §4.3).
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.toolsets.is_empty() && self.suggest.is_empty()
    }
}

/// `tools/hints` params (§5.2, carrier 3): the [`HintChanges`] themselves, plus the
/// `_meta` MCP reserves on every notification's params.
///
/// `_meta` lives here rather than on [`HintChanges`], so the §5.1 shape stays exactly what
/// the other two carriers (a result's `_meta["mcpl/hints"]`, a push's `hints`) hold.
/// Absent `_meta`, the wire form is the bare `HintChanges`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolHintsParams {
    /// The changes: `rev`, `tools`, `toolsets`, `suggest` at the top level of the params.
    #[serde(flatten)]
    pub changes: HintChanges,
    /// `_meta` (MCP reserves it on notification params), kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

impl From<HintChanges> for ToolHintsParams {
    fn from(changes: HintChanges) -> Self {
        ToolHintsParams {
            changes,
            meta: None,
        }
    }
}

/// One tool's change (§5.1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolHint {
    /// The tool, by its listed name.
    pub name: String,
    /// The instance this entry is about: required with `visible` for a tool of an
    /// instanced toolset; with `definition`, that instance's own definition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// A presence move (§3: applied at the host's next tool-list boundary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence: Option<Presence>,
    /// Visible now, or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visible: Option<bool>,
    /// A new definition (dynamic tools only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<ToolDefinition>,
}

/// A definition carried by a hint (§5.1). Only `description`, `inputSchema` and
/// `annotations` change a tool: its `name`, its class (`_meta["mcpl/class"]`) and every
/// other member stay those of the listed tool, and a host ignores any other value here
/// (vector 20). Those members are still decoded, so a host can see that it ignored them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    /// Ignored by hosts; servers usually repeat the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The new description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The new input schema (a legal-moves enum, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// The new annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Ignored by hosts (vector 20).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Open or closed, as a toolset state value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolsetState {
    /// Open (or still open, with a new title).
    Open,
    /// Closed; `reason` says why and `ended` names its ended record.
    Closed,
}

/// A toolset's (or an instance's) state (§5.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolsetChange {
    /// The toolset.
    pub toolset: String,
    /// The instance, for an instanced toolset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Its state.
    pub state: ToolsetState,
    /// A (new) title; a retitle is a change with the same state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Why it closed ("White wins by 3.5").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// With state closed: the ended record's id (§4.3), so the host counts it told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
}

/// Whether a suggestion is to open or to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SuggestAction {
    /// Open the toolset (an invitation to a game).
    Open,
    /// Close it.
    Close,
}

/// A suggestion: rendered to the agent, never executed by the host (§5.3, vector 19).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    /// The toolset.
    pub toolset: String,
    /// The instance (for a shared game: the name to open it under).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Open or close.
    pub action: SuggestAction,
    /// Why, in words for the agent.
    pub reason: String,
    /// Options to open with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hint_changes_round_trip_with_every_member() {
        let v = json!({
            "rev": 5,
            "tools": [
                {"name": "play", "instance": "g1", "visible": true,
                 "definition": {"name": "play", "description": "Play a move",
                                "inputSchema": {"type": "object", "properties": {"move": {"enum": ["D4", "pass"]}}},
                                "annotations": {"readOnlyHint": false}}},
                {"name": "tools_x", "presence": "static"}
            ],
            "toolsets": [{"toolset": "go", "instance": "g1", "state": "closed",
                          "reason": "White wins by 3.5", "ended": "e-1"}],
            "suggest": [{"toolset": "go", "instance": "m1", "action": "open",
                         "reason": "bob challenges you", "options": {"size": 9}}]
        });
        let h: HintChanges = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(h.rev, 5);
        assert_eq!(
            h.tools[0]
                .definition
                .as_ref()
                .unwrap()
                .input_schema
                .as_ref()
                .unwrap()["type"],
            "object"
        );
        assert_eq!(h.toolsets[0].state, ToolsetState::Closed);
        assert_eq!(h.suggest[0].action, SuggestAction::Open);
        assert_eq!(serde_json::to_value(&h).unwrap(), v);
    }

    #[test]
    fn an_empty_statement_still_has_its_rev() {
        let h = HintChanges {
            rev: 3,
            ..Default::default()
        };
        assert_eq!(serde_json::to_value(&h).unwrap(), json!({"rev": 3}));
        assert!(h.is_empty());
    }

    #[test]
    fn tool_hints_params_are_the_bare_changes_plus_an_optional_meta() {
        let h = HintChanges {
            rev: 3,
            ..Default::default()
        };
        let bare = ToolHintsParams::from(h.clone());
        assert_eq!(serde_json::to_value(&bare).unwrap(), json!({"rev": 3}));

        let v = json!({"rev": 3, "_meta": {"vendor/x": 1}});
        let p: ToolHintsParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.changes, h);
        assert_eq!(p.meta.as_ref().unwrap().other["vendor/x"], json!(1));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        // A reader that wants only the changes (the host) decodes the same params as them.
        assert_eq!(serde_json::from_value::<HintChanges>(v).unwrap(), h);
        // The flattened changes are still checked.
        assert!(serde_json::from_value::<ToolHintsParams>(json!({"rev": -1})).is_err());
        assert!(serde_json::from_value::<ToolHintsParams>(json!({"_meta": {}})).is_err());
    }

    #[test]
    fn bad_enum_values_are_refused() {
        assert!(
            serde_json::from_value::<HintChanges>(
                json!({"rev": 1, "tools": [{"name": "a", "presence": "sometimes"}]})
            )
            .is_err()
        );
        assert!(serde_json::from_value::<HintChanges>(json!({"rev": -1})).is_err());
    }
}

//! RFC-014 hint changes (spec §5.1).
//!
//! Entries state **values**, never differences: applying one twice is harmless. Every
//! message carrying a `HintChanges` takes the connection's next `rev` (§5.2).

use crate::mcp::ToolAnnotations;
use crate::meta::{Meta, is_none_or_empty, read_count};
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
///
/// **Read liberally** ([`HintChanges::read`]): only a `rev` that is not a non-negative
/// integer makes the whole unreadable. An entry this project cannot read — a presence of
/// `"pinned"`, a state of `"paused"`, a name that is not a string — is ignored alone, and
/// the rest of the message applies, so its rev keeps the order intact. A member of an entry
/// that does not decode (a `visible` of `"yes"`) is ignored and the entry kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HintChanges {
    /// Per connection: 1, 2, 3, … consecutive across every carrier (§5.2).
    pub rev: u64,
    /// Per-tool changes, toolset state as values, and suggestions.
    #[serde(flatten)]
    pub entries: HintEntries<ToolHint, ToolsetChange>,
}

/// The three lists of entries a hint message carries, each left out of the JSON when
/// empty: RFC-014's hint changes (§5.1) with tool hints `T` and toolset changes `S`, and
/// the stateless profile's versioned hints (profile §3.3) with the same entries stamped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HintEntries<T, S> {
    /// Per-tool entries.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<T>,
    /// Toolset (and instance) state, as values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub toolsets: Vec<S>,
    /// Suggestions: shown to the agent, never acted on by the host (§5.3, vector 19).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggest: Vec<Suggestion>,
}

impl<T, S> Default for HintEntries<T, S> {
    fn default() -> Self {
        HintEntries {
            tools: Vec::new(),
            toolsets: Vec::new(),
            suggest: Vec::new(),
        }
    }
}

impl<T, S> HintEntries<T, S> {
    /// True when there is no entry in any list.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.toolsets.is_empty() && self.suggest.is_empty()
    }
}

/// Why a hint message (RFC-014's hint changes, or the stateless profile's versioned hints)
/// cannot be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HintsError {
    /// Hint changes that are not a JSON object.
    #[error("hint changes must be an object")]
    NotAnObject,
    /// `rev` is absent or not a non-negative integer (`3.0` is one, `3.5` and `-1` are
    /// not): nothing orders the message.
    #[error("hint changes need a rev, a non-negative integer (such as 3 or 3.0)")]
    NoRev,
    /// Versioned hints that are not a JSON object.
    #[error("versioned hints must be an object")]
    VersionedNotAnObject,
    /// `version` is absent or not a non-negative integer.
    #[error("versioned hints need a version, a non-negative integer")]
    NoVersion,
}

impl<'de> Deserialize<'de> for HintChanges {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        HintChanges::read(&v)
            .map(|(h, _)| h)
            .map_err(serde::de::Error::custom)
    }
}

impl HintChanges {
    /// Reads hint changes liberally (see the type's docs): the changes, and a line for
    /// each entry or member ignored.
    pub fn read(v: &Value) -> Result<(HintChanges, Vec<String>), HintsError> {
        let obj = v.as_object().ok_or(HintsError::NotAnObject)?;
        // RFC 8259: a rev written `3.0` is the rev 3; `3.5` or `-1` is none.
        let rev = obj
            .get("rev")
            .and_then(read_count)
            .ok_or(HintsError::NoRev)?;
        let mut ignored = Vec::new();
        let tools = entries(obj.get("tools"), "tools", &mut ignored, ToolHint::read);
        let toolsets = entries(obj.get("toolsets"), "toolsets", &mut ignored, |e, _| {
            ToolsetChange::deserialize(e).map_err(|e| e.to_string())
        });
        let suggest = entries(obj.get("suggest"), "suggest", &mut ignored, |e, _| {
            Suggestion::deserialize(e).map_err(|e| e.to_string())
        });
        let entries = HintEntries {
            tools,
            toolsets,
            suggest,
        };
        Ok((HintChanges { rev, entries }, ignored))
    }

    /// True when there are no entries (a full statement may be empty and still count, §4.3).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The entries of an array member, each read by `read`; one that does not read is left out
/// and noted. A member that is not an array is noted and reads as empty.
fn entries<T>(
    member: Option<&Value>,
    name: &str,
    ignored: &mut Vec<String>,
    read: impl Fn(&Value, &mut Vec<String>) -> Result<T, String>,
) -> Vec<T> {
    match member {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match read(e, ignored) {
                Ok(t) => Some(t),
                Err(why) => {
                    ignored.push(format!("{name}[{i}] ignored: {why}"));
                    None
                }
            })
            .collect(),
        Some(_) => {
            ignored.push(format!("{name} is not an array; ignored"));
            Vec::new()
        }
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
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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

impl ToolHint {
    /// Reads one entry: `name` must be a string and `instance`, when present, a string
    /// (without them the entry cannot be placed); a `presence`, `visible` or `definition`
    /// that does not decode is ignored, and noted.
    pub(crate) fn read(v: &Value, ignored: &mut Vec<String>) -> Result<ToolHint, String> {
        let obj = v.as_object().ok_or("not an object")?;
        let name = obj
            .get("name")
            .and_then(Value::as_str)
            .ok_or("no name")?
            .to_owned();
        let instance = match obj.get("instance") {
            None | Some(Value::Null) => None,
            Some(Value::String(i)) => Some(i.clone()),
            Some(_) => return Err("instance is not a string".into()),
        };
        let member = |key: &str| -> Option<&Value> { obj.get(key).filter(|v| !v.is_null()) };
        let mut note = |key: &str| ignored.push(format!("{name}: {key} ignored"));
        let presence = member("presence").and_then(|p| match Presence::deserialize(p) {
            Ok(p) => Some(p),
            Err(_) => {
                note("presence");
                None
            }
        });
        let visible = member("visible").and_then(|b| match b.as_bool() {
            Some(b) => Some(b),
            None => {
                note("visible");
                None
            }
        });
        let definition = member("definition").and_then(|d| match ToolDefinition::deserialize(d) {
            Ok(d) => Some(d),
            Err(_) => {
                note("definition");
                None
            }
        });
        Ok(ToolHint {
            name,
            instance,
            presence,
            visible,
            definition,
        })
    }
}

impl<'de> Deserialize<'de> for ToolHint {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        ToolHint::read(&v, &mut Vec::new()).map_err(serde::de::Error::custom)
    }
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
            h.entries.tools[0]
                .definition
                .as_ref()
                .unwrap()
                .input_schema
                .as_ref()
                .unwrap()["type"],
            "object"
        );
        assert_eq!(h.entries.toolsets[0].state, ToolsetState::Closed);
        assert_eq!(h.entries.suggest[0].action, SuggestAction::Open);
        assert_eq!(serde_json::to_value(&h).unwrap(), v);
    }

    /// The lists flattened from [`HintEntries`] come after `rev`, in the order RFC-014's
    /// examples write them, byte for byte; empty ones are left out.
    #[test]
    fn the_flattened_entries_keep_the_wire_bytes() {
        let h = HintChanges {
            rev: 2,
            entries: HintEntries {
                tools: vec![ToolHint {
                    name: "a".into(),
                    visible: Some(true),
                    ..Default::default()
                }],
                toolsets: Vec::new(),
                suggest: vec![Suggestion {
                    toolset: "go".into(),
                    instance: None,
                    action: SuggestAction::Open,
                    reason: "x".into(),
                    options: None,
                }],
            },
        };
        assert_eq!(
            serde_json::to_string(&h).unwrap(),
            r#"{"rev":2,"tools":[{"name":"a","visible":true}],"suggest":[{"toolset":"go","action":"open","reason":"x"}]}"#
        );
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

    /// An entry or member this project cannot read costs only itself; a message without a
    /// readable rev is unreadable as a whole.
    #[test]
    fn what_cannot_be_read_is_ignored_alone() {
        let (h, ignored) = HintChanges::read(&json!({"rev": 4, "tools": [
            {"name": "x", "presence": "pinned"},
            {"name": "y", "visible": "yes", "instance": "g1"},
            {"name": 7, "visible": true},
            {"name": "z", "instance": 3, "visible": true},
            {"name": "play", "instance": "g1", "visible": true}
        ], "toolsets": [
            {"toolset": "go", "instance": "g1", "state": "paused"},
            {"toolset": "go", "instance": "g2", "state": "open"}
        ], "suggest": "none"}))
        .unwrap();
        assert_eq!(h.rev, 4);
        let names: Vec<&str> = h.entries.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["x", "y", "play"]);
        assert_eq!(
            (h.entries.tools[0].presence, h.entries.tools[1].visible),
            (None, None)
        );
        assert_eq!(h.entries.tools[2].visible, Some(true));
        assert_eq!(h.entries.toolsets.len(), 1);
        assert_eq!(ignored.len(), 6, "{ignored:?}");
        // Through serde, as a result's _meta decodes it, the same.
        let via: HintChanges = serde_json::from_value(
            json!({"rev": 1, "tools": [{"name": "a", "presence": "sometimes"}]}),
        )
        .unwrap();
        assert_eq!(via.entries.tools[0].presence, None);
        assert_eq!(
            HintChanges::read(&json!({"rev": -1})),
            Err(HintsError::NoRev)
        );
        assert!(serde_json::from_value::<HintChanges>(json!({"tools": []})).is_err());
    }

    #[test]
    fn a_rev_written_as_a_double_is_the_same_rev() {
        let (h, _) = HintChanges::read(&json!({"rev": 3.0, "tools": []})).unwrap();
        assert_eq!(h.rev, 3);
        for bad in [json!(3.5), json!(-1.0), json!("3")] {
            assert_eq!(
                HintChanges::read(&json!({"rev": bad})),
                Err(HintsError::NoRev),
                "{bad}"
            );
        }
    }
}

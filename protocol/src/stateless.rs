//! RFC-014 on stateless MCP (2026-07-28): the wire shapes of this project's profile,
//! `docs/rfc014-stateless.md` (**\[project\]**, issue #40).
//!
//! Order comes from a **version per principal** and a **stamp per entry** instead of a rev
//! per connection (profile §2): every entry a change touches is stamped with the version
//! that change took, and a host applies an entry only when its stamp is newer than the one
//! it holds for that entry. An entry states its key's **whole** value (profile §3.3), so the
//! newest one heard is the truth whatever order the messages came in.
//!
//! | key or method | where | profile |
//! |---|---|---|
//! | `mcpl/since` | every request's `_meta`: the host's low-water mark | §3.2 |
//! | `mcpl/grant` | every request's `_meta`: the feature-set grant it runs under | §3.2 |
//! | `mcpl/revision` | a request's `_meta` (the manifest revision read), a result's (a newer one) | §3.2, §3.3 |
//! | `mcpl/hints` | every result's `_meta`: a [`VersionedHints`] | §3.3 |
//! | `mcpl/version` | a `tools/list` result's `_meta`: the version its presence is stamped with | §3.4 |
//! | `notifications/mcpl/hints` | a `subscriptions/listen` stream that asked for `mcpl/hints` | §3.5 |
//! | `notifications/mcpl/event` | a stream that asked for `mcpl/events` | §3.5 |
//! | `idleEndMs` | `server/discover`'s `mcpl/core` settings: how long an idle principal keeps its toolsets, on a server that does not keep them | §3.6 |

use crate::hints::{HintEntries, HintsError, Suggestion, ToolHint, ToolsetChange};
use crate::meta::read_count;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `_meta` key of a request: the version up to which the host holds every change.
pub const SINCE: &str = "mcpl/since";
/// `_meta` key of a request: the grant it runs under (`{effectiveCapabilities: [...]}`).
pub const GRANT: &str = "mcpl/grant";
/// `_meta` key of a request (the manifest revision the host read) and of a result (the
/// server's, when it differs).
pub const REVISION: &str = "mcpl/revision";
/// `_meta` key of a `tools/list` result: the version its presence hints are stamped with.
pub const VERSION: &str = "mcpl/version";
/// The notification carrying a change on a listen stream (params: [`VersionedHints`]).
pub const HINTS_NOTIFICATION: &str = "notifications/mcpl/hints";
/// The notification carrying an event on a listen stream (the legacy `push/event` params,
/// with `hints` a [`VersionedHints`]).
pub const EVENT_NOTIFICATION: &str = "notifications/mcpl/event";
/// The `subscriptions/listen` filter member asking for [`HINTS_NOTIFICATION`].
pub const FILTER_HINTS: &str = "mcpl/hints";
/// The `subscriptions/listen` filter member asking for [`EVENT_NOTIFICATION`].
pub const FILTER_EVENTS: &str = "mcpl/events";
/// Member of `mcpl/core`'s settings in `server/discover` (profile §3.6, vector S13): on a
/// server that does not keep toolsets, the milliseconds a principal may be idle (no
/// request, no open stream) before its toolsets end, each with an ended record. Absent:
/// the server keeps them.
pub const IDLE_END_MS: &str = "idleEndMs";

/// The host's low-water mark a request carries (`_meta["mcpl/since"]`): 0 when absent or
/// not a non-negative integer (read liberally: the host then gets a full statement, which
/// is always correct).
pub fn since(meta: Option<&Map<String, Value>>) -> u64 {
    meta.and_then(|m| m.get(SINCE))
        .and_then(read_count)
        .unwrap_or(0)
}

/// A result's `_meta["mcpl/hints"]`, or a `notifications/mcpl/hints` params (profile
/// §3.3).
///
/// **Read liberally** ([`VersionedHints::read`]): only a `version` that is not a
/// non-negative integer makes the whole unreadable. An entry without a stamp `v`, or one
/// that cannot be placed, is ignored alone and noted.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VersionedHints {
    /// The principal's version when the message was written.
    pub version: u64,
    /// A full statement: the entries are every entry of the principal's state, and a host
    /// replaces its dynamic-tool state with them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub statement: bool,
    /// Tool entries, each stating its `(name, instance)`'s whole value; toolset and
    /// instance entries, each stating its `(toolset, instance)`'s whole value; suggestions
    /// (not state, no stamp: shown once with the message carrying them).
    #[serde(flatten)]
    pub entries: HintEntries<StampedTool, StampedToolset>,
}

impl VersionedHints {
    /// Reads versioned hints liberally (see the type's docs): the hints, and a line for
    /// each entry or member ignored.
    pub fn read(v: &Value) -> Result<(VersionedHints, Vec<String>), HintsError> {
        let obj = v.as_object().ok_or(HintsError::VersionedNotAnObject)?;
        let version = obj
            .get("version")
            .and_then(read_count)
            .ok_or(HintsError::NoVersion)?;
        let mut ignored = Vec::new();
        let statement = obj
            .get("statement")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let tools = stamped(obj.get("tools"), "tools", &mut ignored, |e, ignored| {
            let hint = ToolHint::read(e, ignored)?;
            if hint.visible.is_none() {
                // An entry states its key's whole value: without `visible` it says
                // nothing a host can hold.
                return Err("no visible".into());
            }
            Ok(hint)
        })
        .into_iter()
        .map(|(hint, v)| StampedTool { hint, v })
        .collect();
        let toolsets = stamped(obj.get("toolsets"), "toolsets", &mut ignored, |e, _| {
            ToolsetChange::deserialize(e).map_err(|e| e.to_string())
        })
        .into_iter()
        .map(|(change, v)| StampedToolset { change, v })
        .collect();
        let suggest = match obj.get("suggest") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|s| Suggestion::deserialize(s).ok())
                .collect(),
            _ => Vec::new(),
        };
        let entries = HintEntries {
            tools,
            toolsets,
            suggest,
        };
        Ok((
            VersionedHints {
                version,
                statement,
                entries,
            },
            ignored,
        ))
    }

    /// True when it carries no entry (the answer to a request whose `since` is current).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<'de> Deserialize<'de> for VersionedHints {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        VersionedHints::read(&v)
            .map(|(h, _)| h)
            .map_err(serde::de::Error::custom)
    }
}

/// Each entry of an array member with its stamp `v`; an entry without one, or that `read`
/// refuses, is left out and noted.
fn stamped<T>(
    member: Option<&Value>,
    name: &str,
    ignored: &mut Vec<String>,
    read: impl Fn(&Value, &mut Vec<String>) -> Result<T, String>,
) -> Vec<(T, u64)> {
    let Some(member) = member else {
        return Vec::new();
    };
    let Value::Array(items) = member else {
        ignored.push(format!("{name} is not an array; ignored"));
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let Some(v) = e.get("v").and_then(read_count) else {
                ignored.push(format!("{name}[{i}] ignored: no stamp v"));
                return None;
            };
            match read(e, ignored) {
                Ok(t) => Some((t, v)),
                Err(why) => {
                    ignored.push(format!("{name}[{i}] ignored: {why}"));
                    None
                }
            }
        })
        .collect()
}

/// A tool entry with its stamp (profile §3.3). It states the whole value of its
/// `(name, instance)`: `visible` always; `definition` when the tool has one of its own
/// there (absent: the listed one); `presence` when it moved from the listed one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StampedTool {
    /// The entry, in RFC-014's shape (§5.1).
    #[serde(flatten)]
    pub hint: ToolHint,
    /// The version at which it last changed.
    pub v: u64,
}

/// A toolset or instance entry with its stamp (profile §3.3): its whole state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StampedToolset {
    /// The entry, in RFC-014's shape (§5.1).
    #[serde(flatten)]
    pub change: ToolsetChange,
    /// The version at which it last changed.
    pub v: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hints::ToolsetState;
    use serde_json::json;

    #[test]
    fn versioned_hints_round_trip_as_the_profile_writes_them() {
        let wire = json!({
            "version": 7,
            "tools": [{"name": "go_play", "instance": "g1", "visible": true, "v": 7}],
            "toolsets": [{"toolset": "go", "instance": "g1", "state": "closed",
                          "reason": "White wins by 3.5", "ended": "e-1", "v": 6}],
            "suggest": [{"toolset": "go", "instance": "m1", "action": "open", "reason": "x"}]
        });
        let (h, ignored) = VersionedHints::read(&wire).unwrap();
        assert!(ignored.is_empty(), "{ignored:?}");
        assert_eq!(h.version, 7);
        assert!(!h.statement);
        assert_eq!(h.entries.tools[0].v, 7);
        assert_eq!(h.entries.tools[0].hint.instance.as_deref(), Some("g1"));
        assert_eq!(h.entries.toolsets[0].change.state, ToolsetState::Closed);
        assert_eq!(serde_json::to_value(&h).unwrap(), wire);
    }

    /// The lists flattened from [`HintEntries`] come after `version` and `statement`,
    /// byte for byte; empty ones are left out.
    #[test]
    fn the_flattened_entries_keep_the_wire_bytes() {
        let wire = r#"{"version":4,"statement":true,"toolsets":[{"toolset":"go","instance":"g1","state":"open","v":3}]}"#;
        let (h, ignored) = VersionedHints::read(&serde_json::from_str(wire).unwrap()).unwrap();
        assert!(ignored.is_empty(), "{ignored:?}");
        assert_eq!(h.entries.toolsets[0].change.state, ToolsetState::Open);
        assert!(h.entries.tools.is_empty() && h.entries.suggest.is_empty());
        assert_eq!(serde_json::to_string(&h).unwrap(), wire);
    }

    #[test]
    fn an_entry_without_a_stamp_or_a_value_is_ignored_alone() {
        let (h, ignored) = VersionedHints::read(&json!({
            "version": 3.0, "statement": true, "future": 1,
            "tools": [{"name": "a", "visible": true}, {"name": "b", "v": 2},
                      {"name": "c", "visible": false, "v": 2}],
            "toolsets": [{"toolset": "go", "state": "paused", "v": 1},
                         {"toolset": "go", "state": "open", "v": 1}]
        }))
        .unwrap();
        assert_eq!(h.version, 3);
        assert!(h.statement);
        assert_eq!(h.entries.tools.len(), 1);
        assert_eq!(h.entries.tools[0].hint.name, "c");
        assert_eq!(h.entries.toolsets.len(), 1);
        assert_eq!(ignored.len(), 3, "{ignored:?}");
    }

    #[test]
    fn no_version_makes_the_whole_unreadable() {
        assert_eq!(
            VersionedHints::read(&json!({"rev": 3})).unwrap_err(),
            HintsError::NoVersion
        );
        assert_eq!(
            VersionedHints::read(&json!([])).unwrap_err(),
            HintsError::VersionedNotAnObject
        );
    }

    #[test]
    fn since_reads_liberally() {
        let meta = |v: Value| v.as_object().cloned();
        assert_eq!(since(meta(json!({"mcpl/since": 41})).as_ref()), 41);
        assert_eq!(since(meta(json!({"mcpl/since": "41"})).as_ref()), 0);
        assert_eq!(since(meta(json!({})).as_ref()), 0);
        assert_eq!(since(None), 0);
    }
}

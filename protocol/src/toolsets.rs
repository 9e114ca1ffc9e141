//! RFC-014 toolsets: declarations (§4.1) and `toolsets/open|close|list` (§4.2, §4.3).

use crate::mcp::ContentBlock;
use crate::meta::{Meta, is_none_or_empty};
use crate::names::{NameError, check_name};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whether a toolset is open from the start of every session (§4.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolsetDefault {
    /// Open from the start; appears in `toolsets/list` without an open (vector 25).
    Open,
    /// The host opens it.
    #[default]
    Closed,
}

/// A toolset declaration in the manifest (§4.1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolsetDecl {
    /// For the host's catalog and reminders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// For the host's catalog and reminders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Open or closed from the start.
    #[serde(default)]
    pub default: ToolsetDefault,
    /// May be opened more than once, each a named instance.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub instances: bool,
    /// JSON Schema for `toolsets/open` options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

/// Why a toolset declaration is invalid (§4.1).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DeclError {
    /// The toolset's name does not fit the grammar.
    #[error("toolset {name:?}: {error}")]
    BadName {
        /// The name.
        name: String,
        /// What is wrong with it.
        error: NameError,
    },
    /// `instances: true` with `default: "open"` (§4.1 **\[project\]**: invalid).
    #[error("toolset {0:?}: a toolset with instances cannot have default \"open\"")]
    OpenWithInstances(String),
    /// The options schema uses a member name outside SPEC §17.2's identifier charset.
    #[error("toolset {toolset:?}: options schema member {member:?} is outside [A-Za-z0-9._:*-]")]
    BadSchemaMember {
        /// The toolset.
        toolset: String,
        /// The member name.
        member: String,
    },
    /// The options schema is not an object schema.
    #[error("toolset {0:?}: options must be a JSON Schema object")]
    OptionsNotObject(String),
}

impl ToolsetDecl {
    /// Checks what can be checked without compiling the schema: the name grammar, `instances`
    /// with `default: "open"`, and the options schema's member names (§4.1: SPEC §17.2 makes
    /// every member name of the manifest an identifier position, so `$schema`, `$ref`,
    /// `$defs` and non-ASCII names cannot appear).
    pub fn check(&self, name: &str) -> Result<(), DeclError> {
        check_name(name).map_err(|error| DeclError::BadName {
            name: name.to_owned(),
            error,
        })?;
        if self.instances && self.default == ToolsetDefault::Open {
            return Err(DeclError::OpenWithInstances(name.to_owned()));
        }
        if let Some(schema) = &self.options {
            if !schema.is_object() {
                return Err(DeclError::OptionsNotObject(name.to_owned()));
            }
            check_members(name, schema)?;
        }
        Ok(())
    }

    /// Checks a declaration received from a peer (§4.1, liberal): only that its name is
    /// within the peer grammar ([`crate::names::check_peer_name`]). `instances` with
    /// `default: "open"` is read as closed ([`Self::is_default_open`]); an options schema
    /// is used as far as the host's bounded check goes.
    pub fn check_received(&self, name: &str) -> Result<(), DeclError> {
        crate::names::check_peer_name(name).map_err(|error| DeclError::BadName {
            name: name.to_owned(),
            error,
        })
    }

    /// True when such a toolset is open from the start: `default: "open"` without instances.
    /// A host treats `instances` with `default: "open"` as closed (§4.1).
    pub fn is_default_open(&self) -> bool {
        self.default == ToolsetDefault::Open && !self.instances
    }

    /// True when the options schema requires some member (such a toolset is not implicitly
    /// open for a host without `toolHints`, §8).
    pub fn requires_options(&self) -> bool {
        self.options
            .as_ref()
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty())
    }
}

fn check_members(toolset: &str, v: &Value) -> Result<(), DeclError> {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                if !crate::digest::is_identifier(k) {
                    return Err(DeclError::BadSchemaMember {
                        toolset: toolset.to_owned(),
                        member: k.clone(),
                    });
                }
                check_members(toolset, child)?;
            }
            Ok(())
        }
        Value::Array(a) => a.iter().try_for_each(|c| check_members(toolset, c)),
        _ => Ok(()),
    }
}

/// The server as a whole, for a host's catalog (§10).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Surface {
    /// Its title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What agents do in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// `toolsets/open` params (§4.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolsetsOpenParams {
    /// The toolset.
    pub toolset: String,
    /// A proposed instance name: used as given or the open is refused, never substituted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Options, validated against the declared schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
    /// `_meta` (MCP reserves it here), kept as sent: a progress token, vendor keys, ….
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// `toolsets/open` result (§4.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolsetsOpenResult {
    /// The instance's name (for an instanced toolset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Its title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// True when the open adopted what was already open (vector 17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted: Option<bool>,
    /// What was opened (a game's board); says so when requested options were not applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
    /// `mcpl/hints`: whenever the open changed something.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// `toolsets/close` params (§4.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolsetsCloseParams {
    /// The toolset.
    pub toolset: String,
    /// Required for an instanced toolset; refused for one without instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// `_meta` (MCP reserves it here), kept as sent: a progress token, vendor keys, ….
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// `toolsets/close` result (§4.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolsetsCloseResult {
    /// What closing did (a game resigned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
    /// `mcpl/hints`: the changes the close caused.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// `toolsets/list` params (§4.3): no members of its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolsetsListParams {
    /// `_meta` (MCP reserves it here), kept as sent: a progress token, vendor keys, ….
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// `toolsets/list` result: the full statement (§4.3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolsetsListResult {
    /// What the principal has open.
    pub open: Vec<OpenRecord>,
    /// What ended and has not expired.
    #[serde(default)]
    pub ended: Vec<EndedRecord>,
    /// `mcpl/hints`: always present, always taking the next rev, even when empty.
    #[serde(rename = "_meta")]
    pub meta: Meta,
}

/// An open toolset or instance (§4.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenRecord {
    /// The toolset.
    pub toolset: String,
    /// The instance, for an instanced toolset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Its title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The options it was opened with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

/// A toolset or instance that ended (§4.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndedRecord {
    /// Unique for the principal, never reused.
    pub id: String,
    /// The toolset.
    pub toolset: String,
    /// The instance (required for instanced toolsets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Why it ended.
    pub reason: String,
    /// When (RFC 3339).
    pub at: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declarations_decode_with_defaults() {
        let d: ToolsetDecl = serde_json::from_value(json!({"title": "Go", "instances": true,
            "options": {"type": "object", "properties": {"size": {"enum": [9, 13, 19]}}}}))
        .unwrap();
        assert_eq!(d.default, ToolsetDefault::Closed);
        assert!(d.check("go").is_ok());
        assert!(!d.is_default_open());
    }

    #[test]
    fn invalid_declarations_name_the_problem() {
        let open_inst = ToolsetDecl {
            instances: true,
            default: ToolsetDefault::Open,
            ..Default::default()
        };
        assert_eq!(
            open_inst.check("go"),
            Err(DeclError::OpenWithInstances("go".into()))
        );
        assert!(matches!(
            ToolsetDecl::default().check("a.b"),
            Err(DeclError::BadName { .. })
        ));
        let dollar = ToolsetDecl {
            options: Some(json!({"$schema": "x", "type": "object"})),
            ..Default::default()
        };
        assert!(
            matches!(dollar.check("go"), Err(DeclError::BadSchemaMember { member, .. }) if member == "$schema")
        );
        let nonascii = ToolsetDecl {
            options: Some(json!({"type": "object", "properties": {"größe": {}}})),
            ..Default::default()
        };
        assert!(matches!(
            nonascii.check("go"),
            Err(DeclError::BadSchemaMember { .. })
        ));
    }

    #[test]
    fn list_result_round_trips_and_requires_meta() {
        let v = json!({
            "open": [{"toolset": "go", "instance": "g1", "title": "Go 9x9 vs bot", "options": {"size": 9}},
                     {"toolset": "lobby"}],
            "ended": [{"id": "e-1", "toolset": "go", "instance": "g0", "reason": "White wins by 3.5", "at": "2026-11-30T12:00:00Z"}],
            "_meta": {"mcpl/hints": {"rev": 1, "tools": [{"name": "play", "instance": "g1", "visible": true}]}}
        });
        let r: ToolsetsListResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        assert!(serde_json::from_value::<ToolsetsListResult>(json!({"open": []})).is_err());
    }

    #[test]
    fn open_and_close_round_trip() {
        let p = json!({"toolset": "go", "instance": "g1", "options": {"size": 9}});
        assert_eq!(
            serde_json::to_value(serde_json::from_value::<ToolsetsOpenParams>(p.clone()).unwrap())
                .unwrap(),
            p
        );
        let r = json!({"instance": "g1", "title": "Go", "adopted": true,
                       "content": [{"type": "text", "text": "already open; size 19 not applied"}]});
        assert_eq!(
            serde_json::to_value(serde_json::from_value::<ToolsetsOpenResult>(r.clone()).unwrap())
                .unwrap(),
            r
        );
        let c = json!({"content": [{"type": "text", "text": "resigned"}], "_meta": {"mcpl/hints": {"rev": 9}}});
        assert_eq!(
            serde_json::to_value(serde_json::from_value::<ToolsetsCloseResult>(c.clone()).unwrap())
                .unwrap(),
            c
        );
    }
}

//! A principal's state as it is kept across a restart (issue #15 **\[project\]**): what
//! `toolsets/list` states (§4.3) — the open instances with their titles, options,
//! visibility and own definitions, the tools outside toolsets, the shared definitions,
//! the ended records with their expiry and last view — and the counters that keep names
//! fresh. Pure: the actors write it to a store and read it back.
//!
//! A snapshot read under another catalog (the server restarted with a new manifest) keeps
//! what still fits: an instance of a toolset no longer declared ends with an ended record
//! (as a manifest change ends it, §4.1, vector 33), a tool no longer declared is dropped.

use super::ended::EndedLog;
use super::{InstanceKey, OpenInstance, PrincipalConfig, PrincipalState, Stamps, loose_tools};
use crate::catalog::Catalog;
use crate::principal::EndedIds;
use mcpl_protocol::hints::ToolDefinition;
use mcpl_protocol::toolsets::EndedRecord;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::SystemTime;

/// The reason an instance of a toolset the restarted server no longer declares ends with.
pub const REASON_UNDECLARED: &str = "the toolset is no longer declared";

/// A principal's state, as kept. See the module docs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    instances: Vec<InstanceSnapshot>,
    loose: BTreeMap<String, bool>,
    shared_defs: BTreeMap<String, ToolDefinition>,
    ended: Vec<EndedSnapshot>,
    picked: u64,
    implicit: BTreeSet<InstanceKey>,
    /// The version and stamps (issue #40); a record written before them has none, and
    /// loads at version 0.
    #[serde(default)]
    stamps: Stamps,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct InstanceSnapshot {
    key: InstanceKey,
    title: Option<String>,
    options: Option<Value>,
    visible: BTreeSet<String>,
    definitions: BTreeMap<String, ToolDefinition>,
    opened_at: SystemTime,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct EndedSnapshot {
    record: EndedRecord,
    expires: Option<SystemTime>,
    view: Option<String>,
}

impl PrincipalState {
    /// The state as kept across a restart.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            instances: self
                .instances
                .values()
                .map(|i| InstanceSnapshot {
                    key: i.key.clone(),
                    title: i.title.clone(),
                    options: i.options.clone(),
                    visible: i.visible.clone(),
                    definitions: i.definitions.clone(),
                    opened_at: i.opened_at,
                })
                .collect(),
            loose: self.loose.clone(),
            shared_defs: self.shared_defs.clone(),
            ended: self
                .ended
                .kept()
                .map(|(record, expires, view)| EndedSnapshot {
                    record: record.clone(),
                    expires,
                    view: view.map(str::to_owned),
                })
                .collect(),
            picked: self.picked,
            implicit: self.implicit.clone(),
            stamps: self.stamps.clone(),
        }
    }

    /// The state a snapshot kept, under `catalog`: what no longer fits the catalog ends or
    /// is dropped (module docs), records expired at `now` go. New ended records take their
    /// ids from `ids`, as in [`PrincipalState::new`].
    pub fn restore(
        catalog: Arc<Catalog>,
        config: PrincipalConfig,
        ids: EndedIds,
        snapshot: Snapshot,
        now: SystemTime,
    ) -> Self {
        // A record written before versions were kept starts past the server's floor
        // (`stamps.rs`); any other goes on from its own, which the floor then passes.
        let mut stamps = snapshot.stamps;
        if stamps.version() == 0 {
            stamps = Stamps::starting_at(ids.version_floor());
        }
        ids.reached(stamps.version());
        let mut ended = EndedLog::new(ids, config.ended_ttl, config.max_ended);
        for e in snapshot.ended {
            ended.keep(e.record, e.expires, e.view.map(Arc::from));
        }
        let mut loose = loose_tools(&catalog);
        for (tool, visible) in snapshot.loose {
            if let Some(v) = loose.get_mut(&tool) {
                *v = visible;
            }
        }
        let shared_defs = snapshot
            .shared_defs
            .into_iter()
            .filter(|(t, _)| catalog.tool(t).is_some())
            .collect();
        let mut state = PrincipalState {
            catalog: catalog.clone(),
            config,
            instances: BTreeMap::new(),
            loose,
            shared_defs,
            ended,
            picked: snapshot.picked,
            implicit: BTreeSet::new(),
            stamps,
        };
        let mut undeclared = Vec::new();
        for i in snapshot.instances {
            let declared = catalog.toolset(&i.key.toolset).is_some()
                && catalog.is_instanced(&i.key.toolset) == i.key.instance.is_some();
            let tools = catalog.tools_of(&i.key.toolset);
            let keep = |t: &String| tools.contains(t);
            let instance = OpenInstance {
                key: i.key.clone(),
                title: i.title,
                options: i.options,
                visible: i.visible.into_iter().filter(keep).collect(),
                definitions: i.definitions.into_iter().filter(|(t, _)| keep(t)).collect(),
                opened_at: i.opened_at,
            };
            if !declared {
                undeclared.push(i.key.clone());
            }
            state.instances.insert(i.key, Box::new(instance));
        }
        state.implicit = snapshot
            .implicit
            .into_iter()
            .filter(|k| state.instances.contains_key(k))
            .collect();
        for key in undeclared {
            let _ = state.end(&key, REASON_UNDECLARED, now);
        }
        state.expire(now);
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ToolDecl;
    use mcpl_protocol::mcp::Tool;
    use mcpl_protocol::toolsets::ToolsetDecl;
    use serde_json::json;
    use std::time::{Duration, UNIX_EPOCH};

    fn catalog(with_go: bool) -> Arc<Catalog> {
        let mut toolsets = BTreeMap::new();
        let mut tools = vec![ToolDecl::new(Tool::new(
            "echo",
            "e",
            json!({"type": "object"}),
        ))];
        if with_go {
            toolsets.insert(
                "go".to_owned(),
                ToolsetDecl {
                    instances: true,
                    ..Default::default()
                },
            );
            tools.push(
                ToolDecl::new(Tool::new("play", "p", json!({"type": "object"})))
                    .in_toolset("go")
                    .initially_visible(false),
            );
        }
        Arc::new(Catalog::new(tools, toolsets, None).unwrap())
    }

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_796_040_000 + secs)
    }

    #[test]
    fn a_snapshot_restores_the_same_statement() {
        let ids = EndedIds::new(7);
        let mut s = PrincipalState::new(
            catalog(true),
            PrincipalConfig::default(),
            ids.clone(),
            at(0),
        );
        s.open("go", Some("g1"), None, at(1)).unwrap();
        s.open("go", Some("g2"), None, at(1)).unwrap();
        s.set_visible("play", Some("g1"), true).unwrap();
        s.end(&InstanceKey::instance("go", "g2"), "Black wins", at(2))
            .unwrap();
        let json = serde_json::to_string(&s.snapshot()).unwrap();
        let back: Snapshot = serde_json::from_str(&json).unwrap();
        let r =
            PrincipalState::restore(catalog(true), PrincipalConfig::default(), ids, back, at(3));
        assert_eq!(r.statement(at(3)), s.statement(at(3)));
        assert!(
            r.instance(&InstanceKey::instance("go", "g1"))
                .unwrap()
                .is_visible("play")
        );
    }

    #[test]
    fn an_undeclared_toolset_ends_with_a_record_and_expired_records_go() {
        let ids = EndedIds::new(7);
        let config = PrincipalConfig {
            ended_ttl: Duration::from_secs(60),
            ..Default::default()
        };
        let mut s = PrincipalState::new(catalog(true), config.clone(), ids.clone(), at(0));
        s.open("go", Some("g1"), None, at(1)).unwrap();
        s.open("go", Some("g2"), None, at(1)).unwrap();
        s.end(&InstanceKey::instance("go", "g2"), "over", at(2))
            .unwrap();
        let r = PrincipalState::restore(catalog(false), config, ids, s.snapshot(), at(100));
        assert_eq!(r.instances().count(), 0);
        let reasons: Vec<&str> = r.ended_records().map(|e| e.reason.as_str()).collect();
        assert_eq!(reasons, [REASON_UNDECLARED], "g2's record expired at 62 s");
    }
}

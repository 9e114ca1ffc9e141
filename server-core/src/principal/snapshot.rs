//! A principal's state as it is kept across a restart (issue #15 **\[project\]**): what
//! `toolsets/list` states (§4.3) — the open instances with their titles, options,
//! visibility and own definitions, the tools outside toolsets, the shared definitions,
//! the ended records with their expiry and last view — and the counters that keep names
//! fresh. Pure: the actors write it to a store and read it back.
//!
//! **In parts** (issue #42 item 1). A server keeps the record in parts, so that a step
//! writes only what changed: the core ([`PrincipalState::core_snapshot`]: everything but
//! the ended records and the tombstones of closed instances), each ended record
//! ([`EndedPart`]) and each tombstone ([`TombstonePart`](super::TombstonePart)) its own.
//! Read back, the parts go back into the core's snapshot ([`Snapshot::keep_ended`],
//! [`Snapshot::keep_tombstone`]); a record written whole, before parts, holds them in
//! itself and reads as it is.
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
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::SystemTime;

/// The reason an instance of a toolset the restarted server no longer declares ends with.
pub const REASON_UNDECLARED: &str = "the toolset is no longer declared";

/// A principal's state, as kept. See the module docs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    instances: Vec<OpenInstance>,
    loose: BTreeMap<String, bool>,
    shared_defs: BTreeMap<String, ToolDefinition>,
    ended: Vec<EndedPart>,
    picked: u64,
    implicit: BTreeSet<InstanceKey>,
    /// The version and stamps (issue #40); a record written before them has none, and
    /// loads at version 0.
    #[serde(default)]
    stamps: Stamps,
}

/// An ended record as kept: in the principal's record (written whole, before parts), or
/// as a part of its own (issue #42 item 1, [`KeptEnded`] writes it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndedPart {
    record: EndedRecord,
    expires: Option<SystemTime>,
    view: Option<String>,
}

impl EndedPart {
    /// The record's id.
    pub fn id(&self) -> &str {
        &self.record.id
    }

    /// The instance's last view, if its logic left one.
    pub fn view(&self) -> Option<&str> {
        self.view.as_deref()
    }
}

/// An ended record the state keeps, borrowed: what is written as its [`EndedPart`]
/// ([`PrincipalState::ended_kept`]).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct KeptEnded<'a> {
    /// The record.
    pub record: &'a EndedRecord,
    /// When it expires.
    pub expires: Option<SystemTime>,
    /// The instance's last view, if its logic left one (shared with the state: the same
    /// pointer is the same view).
    #[serde(serialize_with = "view_str")]
    pub view: Option<&'a Arc<str>>,
}

/// A view written as the string it is.
fn view_str<S: serde::Serializer>(view: &Option<&Arc<str>>, s: S) -> Result<S::Ok, S::Error> {
    view.map(|v| &**v).serialize(s)
}

impl Snapshot {
    /// Adds an ended record read back from a part of its own, after those kept before
    /// it (parts are read oldest first).
    pub fn keep_ended(&mut self, part: EndedPart) {
        self.ended.push(part);
    }

    /// Adds a tombstone read back from a part of its own.
    pub fn keep_tombstone(&mut self, part: super::TombstonePart) {
        self.stamps.keep_tombstone(part);
    }

    /// How many ended records it holds in itself (a record written whole holds them all;
    /// one written in parts, none).
    pub fn ended_len(&self) -> usize {
        self.ended.len()
    }
}

impl PrincipalState {
    /// The core of the state as kept across a restart: everything but its ended records
    /// ([`PrincipalState::ended_kept`]) and its tombstones
    /// ([`Stamps::tombstone_stamps`](super::Stamps::tombstone_stamps)), which are kept as
    /// parts of their own (module docs).
    pub fn core_snapshot(&self) -> Snapshot {
        Snapshot {
            instances: self.instance_snapshots(),
            loose: self.loose.clone(),
            shared_defs: self.shared_defs.clone(),
            ended: Vec::new(),
            picked: self.picked,
            implicit: self.implicit.clone(),
            stamps: self.stamps.without_tombstones(),
        }
    }

    /// Every ended record kept (expired ones too, until the next expiry reclaims them),
    /// oldest first, as its part is written.
    pub fn ended_kept(&self) -> impl Iterator<Item = KeptEnded<'_>> {
        self.ended
            .kept_shared()
            .map(|(record, expires, view)| KeptEnded {
                record,
                expires,
                view,
            })
    }

    fn instance_snapshots(&self) -> Vec<OpenInstance> {
        self.instances.values().map(|i| (**i).clone()).collect()
    }

    /// The state as kept across a restart, whole.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            instances: self.instance_snapshots(),
            loose: self.loose.clone(),
            shared_defs: self.shared_defs.clone(),
            ended: self
                .ended
                .kept()
                .map(|(record, expires, view)| EndedPart {
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
                visible: i.visible.into_iter().filter(keep).collect(),
                definitions: i.definitions.into_iter().filter(|(t, _)| keep(t)).collect(),
                ..i
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

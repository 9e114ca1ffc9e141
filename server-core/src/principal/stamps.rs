//! The principal's **version** and the **stamp** of every entry of its hint state
//! (`docs/rfc014-stateless.md` §2, **\[project\]**, issue #40): what a modern host is told,
//! ordered by state instead of by message.
//!
//! An entry is one key's whole value, as the profile's `VersionedHints` states it (§3.3):
//!
//! | key | value |
//! |---|---|
//! | `(toolset, instance)` open | `state: "open"`, its `title` |
//! | `(toolset, instance)` closed (a **tombstone**) | `state: "closed"`, `reason`, `ended` |
//! | `(tool, instance)` | `visible`, its own `definition` (where it differs), `presence` for a tool outside toolsets |
//!
//! # How stamps are kept
//!
//! [`PrincipalState::restamp`] compares the state's **view** (the entries it states now)
//! with the fingerprints of what was last stamped: when anything differs, the principal
//! takes its next version and stamps every entry that differs with it. So every change of
//! a key's value takes a new stamp by construction, whichever method of the state made it;
//! the principal's core restamps after every change it tells (`principal_core.rs`), and
//! every read ([`PrincipalState::versioned`]) restamps first, so nothing is ever read
//! stamped older than it is.
//!
//! - A tool entry whose value goes back to the default (invisible, no definition of its
//!   own) keeps its stamp and is stated `visible: false`, while its instance stays open; an
//!   instance's tool entries go with its close (its tombstone covers them, §2).
//! - A toolset without instances shares `(tool, none)` between its instance's entries and
//!   the principal's shared definitions: at its close, what outlives it under that key is
//!   stamped again with the close's version, so the tombstone (which drops the instance's
//!   entries stamped before it) leaves it.
//! - A closed instance is kept as a tombstone with its close's stamp, its reason and its
//!   ended record's id, also after the same name opens again (a host that missed both
//!   needs the tombstone to drop what it held of the earlier life). Tombstones are bounded
//!   by count and bytes ([`PrincipalConfig`]), oldest forgotten first; the newest stamp
//!   forgotten is remembered, and a host whose `since` is older gets a full statement.
//! - A host's `since` above the version (a server that lost its newest record) also gets a
//!   statement **\[project\]**: it cannot be told what it is missing any other way.
//!
//! The stamps are part of the principal's durable record ([`Snapshot`](super::Snapshot)),
//! so a restarted server continues the version; a record written before them loads
//! without stamps and restamps everything on its first read. A restarted server (or a
//! node taking the principal over, issue #41) goes on **past** the record's version
//! ([`PrincipalState::continue_after_restart`]): the last life may have told a host
//! versions it never kept, so each modern host is stated everything once after a restart
//! (**\[project\]**).
//!
//! **A version is never given twice** (**\[project\]**): a principal forgotten and created
//! again, or a server restarted without a store, would count from the start again, and a
//! host holding entries of the earlier life stamped higher would keep them. So a new
//! principal's versions start at the server's **version floor** — the newest version any
//! of its principals reached, starting from the server's epoch in milliseconds times 1024
//! ([`EndedIds`](super::EndedIds)) — and so does a record written before versions were
//! kept.

use super::{InstanceKey, PrincipalConfig, PrincipalState};
use crate::catalog::Catalog;
use mcpl_protocol::hints::{HintEntries, ToolHint, ToolsetChange, ToolsetState};
use mcpl_protocol::stateless::{StampedTool, StampedToolset, VersionedHints};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A tool entry's key: the tool and its instance (none outside instances).
pub(super) type ToolKey = (String, Option<String>);

/// A stamp and a fingerprint of the value it stamped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    v: u64,
    fp: u64,
}

/// A closed instance, kept so an older entry of it can never bring it back (§2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Tombstone {
    v: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ended: Option<String>,
}

impl Tombstone {
    /// What it weighs against [`PrincipalConfig::max_tombstone_bytes`].
    fn bytes(&self, key: &InstanceKey) -> usize {
        32 + key.toolset.len()
            + key.instance.as_ref().map_or(0, String::len)
            + self.reason.as_ref().map_or(0, String::len)
            + self.ended.as_ref().map_or(0, String::len)
    }

    fn entry(&self, key: &InstanceKey) -> StampedToolset {
        StampedToolset {
            change: ToolsetChange {
                toolset: key.toolset.clone(),
                instance: key.instance.clone(),
                state: ToolsetState::Closed,
                title: None,
                reason: self.reason.clone(),
                ended: self.ended.clone(),
            },
            v: self.v,
        }
    }
}

/// A closed instance's tombstone as a part of its own of the principal's durable record
/// (issue #42 item 1): its instance's key, its stamp, its reason and ended record's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TombstonePart {
    key: InstanceKey,
    #[serde(flatten)]
    tombstone: Tombstone,
}

impl TombstonePart {
    /// The closed instance's key.
    pub fn key(&self) -> &InstanceKey {
        &self.key
    }

    /// Its stamp: the close's version.
    pub fn stamp(&self) -> u64 {
        self.tombstone.v
    }
}

/// How far past its record's version a principal read back by a new life of the server
/// goes on ([`PrincipalState::continue_after_restart`]; **\[project\]**): more versions
/// than a previous life can give changes it did not keep before it ends (it gives up its
/// store at the first failure, and an owner node stops at its next lease renewal), and a
/// margin for a node whose clock is behind the previous owner's. Under 2^53 for about 2^32
/// lives from today's floor.
pub const RESTART_GAP: u64 = 1 << 20;

/// The principal's version and its entries' stamps. See the module docs.
///
/// As JSON, its maps with composite keys are lists of pairs (a JSON object's keys are
/// strings), and every member defaults, so a record of an older shape loads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Stamps {
    version: u64,
    #[serde(with = "pairs")]
    toolsets: BTreeMap<InstanceKey, Stamp>,
    #[serde(with = "pairs")]
    tools: BTreeMap<ToolKey, Stamp>,
    #[serde(with = "pairs")]
    tombstones: BTreeMap<InstanceKey, Tombstone>,
    /// The newest stamp of a tombstone forgotten: a `since` below it gets a statement.
    forgotten: u64,
}

impl Stamps {
    /// Stamps of a new principal whose first change takes version `floor + 1`.
    pub(super) fn starting_at(floor: u64) -> Self {
        Stamps {
            version: floor,
            ..Stamps::default()
        }
    }

    /// The principal's version: the stamp of its newest change (0: none yet).
    pub fn version(&self) -> u64 {
        self.version
    }

    #[cfg(test)]
    /// The newest stamp of a tombstone forgotten (0: none).
    pub fn forgotten(&self) -> u64 {
        self.forgotten
    }

    #[cfg(test)]
    /// How many tombstones are kept.
    pub fn tombstones(&self) -> usize {
        self.tombstones.len()
    }

    /// True when the stamp of `key`'s tombstone is kept.
    pub fn has_tombstone(&self, key: &InstanceKey) -> bool {
        self.tombstones.contains_key(key)
    }

    /// Every tombstone kept, by its instance's key, with its stamp: a tombstone's value
    /// changes only with its stamp (a close takes a new version), so the stamp tells
    /// whether the part kept for it is current (`store/parts.rs`, issue #42 item 1).
    pub fn tombstone_stamps(&self) -> impl Iterator<Item = (&InstanceKey, u64)> {
        self.tombstones.iter().map(|(k, t)| (k, t.v))
    }

    /// The tombstone of `key`, as a part of its own of the principal's record.
    pub fn tombstone_part(&self, key: &InstanceKey) -> Option<TombstonePart> {
        self.tombstones.get(key).map(|t| TombstonePart {
            key: key.clone(),
            tombstone: t.clone(),
        })
    }

    /// The stamps without their tombstones: what the principal's core record keeps, its
    /// tombstones being parts of their own (issue #42 item 1).
    pub(super) fn without_tombstones(&self) -> Stamps {
        Stamps {
            version: self.version,
            toolsets: self.toolsets.clone(),
            tools: self.tools.clone(),
            tombstones: BTreeMap::new(),
            forgotten: self.forgotten,
        }
    }

    /// Keeps a tombstone read back from its own part.
    pub(super) fn keep_tombstone(&mut self, part: TombstonePart) {
        self.tombstones.insert(part.key, part.tombstone);
    }

    /// Forgets the oldest tombstones until both bounds hold, remembering the newest stamp
    /// forgotten.
    fn bound(&mut self, config: &PrincipalConfig) {
        let mut bytes: usize = self.tombstones.iter().map(|(k, t)| t.bytes(k)).sum();
        while self.tombstones.len() > config.max_tombstones || bytes > config.max_tombstone_bytes {
            let Some(oldest) = self
                .tombstones
                .iter()
                .min_by_key(|(_, t)| t.v)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(t) = self.tombstones.remove(&oldest) {
                bytes -= t.bytes(&oldest);
                self.forgotten = self.forgotten.max(t.v);
            }
        }
    }
}

/// The principal's stamped state as its sessions hold it, to answer modern hosts from
/// (profile §3.3): the full statement at one version, and the newest tombstone stamp
/// forgotten by then. A delta since any mark is the statement's entries stamped after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned {
    statement: VersionedHints,
    forgotten: u64,
}

impl Versioned {
    /// The version it states.
    pub fn version(&self) -> u64 {
        self.statement.version
    }

    /// The full statement (`statement: true`).
    pub fn statement(&self) -> VersionedHints {
        self.statement.clone()
    }

    /// What a host whose `since` is `since` is told: the entries stamped after it, or the
    /// statement when `since` is 0, older than the newest tombstone forgotten, or newer
    /// than the version (module docs).
    pub fn since(&self, since: u64) -> VersionedHints {
        if since == 0 || since < self.forgotten || since > self.statement.version {
            return self.statement();
        }
        let st = &self.statement;
        VersionedHints {
            version: st.version,
            statement: false,
            entries: HintEntries {
                tools: st
                    .entries
                    .tools
                    .iter()
                    .filter(|e| e.v > since)
                    .cloned()
                    .collect(),
                toolsets: st
                    .entries
                    .toolsets
                    .iter()
                    .filter(|e| e.v > since)
                    .cloned()
                    .collect(),
                suggest: Vec::new(),
            },
        }
    }
}

/// A map with composite keys as [`Stamps`] writes it: a list of `[key, value]` pairs.
mod pairs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    pub(super) fn serialize<K: Serialize, V: Serialize, S: Serializer>(
        map: &BTreeMap<K, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(map)
    }

    pub(super) fn deserialize<'de, K, V, D>(d: D) -> Result<BTreeMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Ord,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Vec::<(K, V)>::deserialize(d).map(|pairs| pairs.into_iter().collect())
    }
}

/// The entries the state states now: open instances, and every tool entry that is not
/// the default (module docs).
struct View {
    toolsets: BTreeMap<InstanceKey, ToolsetChange>,
    tools: BTreeMap<ToolKey, ToolHint>,
}

/// Where a tool entry belongs.
enum Owner {
    /// To an instance: it lives while the instance is open.
    Instance(InstanceKey),
    /// To the principal (a tool outside toolsets, a shared definition).
    Principal,
    /// To nothing any more (the catalog no longer has it so).
    Gone,
}

fn owner(catalog: &Catalog, (tool, instance): &ToolKey) -> Owner {
    if catalog.tool(tool).is_none() {
        return Owner::Gone;
    }
    match (catalog.declared_toolset_of(tool), instance) {
        (None, None) => Owner::Principal,
        (None, Some(_)) => Owner::Gone,
        (Some(ts), Some(i)) if catalog.is_instanced(ts) => {
            Owner::Instance(InstanceKey::instance(ts, i.clone()))
        }
        // `(tool, none)` is also where a shared definition lives, open or not (§5.1).
        (Some(_), None) => Owner::Principal,
        (Some(_), Some(_)) => Owner::Gone,
    }
}

/// A fingerprint of a value, the same on every process and after a restart (FNV-1a over
/// its JSON).
fn fingerprint<T: Serialize>(value: &T) -> u64 {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn default_tool((name, instance): &ToolKey) -> ToolHint {
    ToolHint {
        name: name.clone(),
        instance: instance.clone(),
        visible: Some(false),
        ..Default::default()
    }
}

impl PrincipalState {
    /// The version and stamps.
    pub fn stamps(&self) -> &Stamps {
        &self.stamps
    }

    /// After a rollback to this state from one whose stamps were `lost`: the version goes
    /// on past the lost one's, and a host whose `since` is older than that gets a full
    /// statement (it may hold entries of the change that was not kept).
    pub fn continue_after(&mut self, lost: &Stamps) {
        if lost.version > self.stamps.version {
            self.stamps.version = lost.version + 1;
            self.stamps.forgotten = self.stamps.version;
            self.ended.ids().reached(self.stamps.version);
        }
    }

    /// Read back from its record by a new life of the server — a restart, or a node
    /// taking the principal over (issue #41) — **\[project\]**: the previous life may have
    /// told a modern host versions past the record (a result or a stream's event written
    /// before its record was kept, a change the store then refused, the process dying
    /// before it could roll back), and a version such a host holds must never be given to
    /// another change, or the host keeps what it was told of the lost one (an instance
    /// open that the record never had) as current. So the version jumps past any the
    /// previous life can have given — [`RESTART_GAP`] past the record's, and at least the
    /// floor of this life's clock ([`EndedIds`](super::EndedIds)) — every open entry and
    /// tool entry the record states is stamped with the jump (newer than anything the last
    /// life told of it: an unkept close's tombstone no longer hides an instance the record
    /// has open; tombstones keep their stamps, so no end is told again), and
    /// every host whose `since` is older gets a full statement once, which drops whatever
    /// it holds that the record does not state.
    pub fn continue_after_restart(&mut self) {
        let jumped = self
            .stamps
            .version
            .saturating_add(RESTART_GAP)
            .max(self.ended.ids().life_floor());
        // Every open entry and tool entry the record states is stamped again with the
        // jump: the last life may have told a host a newer stamp for one of them (a close
        // it did not keep, whose tombstone would otherwise hide the instance still open
        // here). Tombstones keep their stamps: a host tells an end when a newer closed
        // entry comes, so one stamped again would be told twice.
        let s = &mut self.stamps;
        for stamp in s.toolsets.values_mut().chain(s.tools.values_mut()) {
            stamp.v = jumped;
        }
        s.version = jumped;
        s.forgotten = jumped;
        self.ended.ids().reached(jumped);
    }

    /// The entries this state states now (module docs), built as
    /// [`PrincipalState::statement`] builds its hints, with `visible` always stated and a
    /// tool outside toolsets stated whatever its presence.
    fn view(&self) -> View {
        let mut tools: BTreeMap<ToolKey, ToolHint> = BTreeMap::new();
        let mut set = |tool: &str, inst: Option<&str>, f: &dyn Fn(&mut ToolHint)| {
            let key = (tool.to_owned(), inst.map(str::to_owned));
            f(tools
                .entry(key.clone())
                .or_insert_with(|| default_tool(&key)));
        };
        let mut toolsets = BTreeMap::new();
        for inst in self.hinted_instances() {
            toolsets.insert(
                inst.key.clone(),
                ToolsetChange {
                    toolset: inst.key.toolset.clone(),
                    instance: inst.key.instance.clone(),
                    state: ToolsetState::Open,
                    title: inst.title.clone(),
                    reason: None,
                    ended: None,
                },
            );
            for tool in &inst.visible {
                set(tool, inst.key.instance.as_deref(), &|h| {
                    h.visible = Some(true)
                });
            }
        }
        for (tool, visible) in &self.loose {
            let presence = self.catalog.tool(tool).map(|d| d.presence());
            let visible = *visible;
            set(tool, None, &move |h| {
                h.visible = Some(visible);
                h.presence = presence;
            });
        }
        for (tool, def) in &self.shared_defs {
            set(tool, None, &|h| h.definition = Some(def.clone()));
        }
        for inst in self.hinted_instances() {
            for (tool, def) in &inst.definitions {
                if self.effective_definition(tool, None).as_ref() != Some(def) {
                    set(tool, inst.key.instance.as_deref(), &|h| {
                        h.definition = Some(def.clone())
                    });
                }
            }
        }
        View { toolsets, tools }
    }

    /// Brings the stamps up to the state (module docs): when anything differs from what
    /// was last stamped, takes the next version and stamps every entry that differs with
    /// it, and returns that change's entries (what a listen stream is sent). `closes` are
    /// the change's closed entries, for each tombstone's reason and ended id (a close made
    /// without one takes its ended record's).
    pub fn restamp(&mut self, closes: &[ToolsetChange]) -> Option<VersionedHints> {
        let view = self.view();
        let live = |key: &ToolKey| match owner(&self.catalog, key) {
            Owner::Principal => true,
            Owner::Instance(k) => view.toolsets.contains_key(&k),
            Owner::Gone => false,
        };
        let mut tools = view.tools.clone();
        for key in self.stamps.tools.keys() {
            if !tools.contains_key(key) && live(key) {
                tools.insert(key.clone(), default_tool(key));
            }
        }
        let changed_tools: Vec<(ToolKey, u64)> = tools
            .iter()
            .map(|(k, h)| (k, fingerprint(h)))
            .filter(|(k, fp)| self.stamps.tools.get(*k).map(|s| s.fp) != Some(*fp))
            .map(|(k, fp)| (k.clone(), fp))
            .collect();
        let changed_toolsets: Vec<(InstanceKey, u64)> = view
            .toolsets
            .iter()
            .map(|(k, c)| (k, fingerprint(c)))
            .filter(|(k, fp)| self.stamps.toolsets.get(*k).map(|s| s.fp) != Some(*fp))
            .map(|(k, fp)| (k.clone(), fp))
            .collect();
        let closed: Vec<InstanceKey> = self
            .stamps
            .toolsets
            .keys()
            .filter(|k| !view.toolsets.contains_key(*k))
            .cloned()
            .collect();
        // A toolset without instances shares `(tool, none)` between its instance's entries
        // and the principal's shared definitions: what outlives the close (a shared
        // definition, a default stated invisible) is stamped with it again, so the
        // tombstone, which drops the instance's older entries, does not drop it.
        let mut changed_tools = changed_tools;
        for key in closed.iter().filter(|k| k.instance.is_none()) {
            for (tool_key, hint) in &tools {
                let of_toolset = tool_key.1.is_none()
                    && self.catalog.declared_toolset_of(&tool_key.0) == Some(key.toolset.as_str());
                if of_toolset && !changed_tools.iter().any(|(k, _)| k == tool_key) {
                    changed_tools.push((tool_key.clone(), fingerprint(hint)));
                }
            }
        }
        self.stamps.tools.retain(|k, _| tools.contains_key(k));
        if changed_tools.is_empty() && changed_toolsets.is_empty() && closed.is_empty() {
            return None;
        }
        let before = self.stamps.version;
        let v = before + 1;
        self.stamps.version = v;
        self.ended.ids().reached(v);
        for key in closed {
            self.stamps.toolsets.remove(&key);
            let told = closes.iter().rev().find(|c| {
                c.state == ToolsetState::Closed
                    && c.toolset == key.toolset
                    && c.instance == key.instance
            });
            let tombstone = match told {
                Some(c) => Tombstone {
                    v,
                    reason: c.reason.clone(),
                    ended: c.ended.clone(),
                },
                None => {
                    let record = self.ended.last_for(&key);
                    Tombstone {
                        v,
                        reason: record.map(|r| r.reason.clone()),
                        ended: record
                            .filter(|_| self.config.ended_ids_on_closes)
                            .map(|r| r.id.clone()),
                    }
                }
            };
            self.stamps.tombstones.insert(key, tombstone);
        }
        for (key, fp) in changed_toolsets {
            self.stamps.toolsets.insert(key, Stamp { v, fp });
        }
        for (key, fp) in changed_tools {
            self.stamps.tools.insert(key, Stamp { v, fp });
        }
        self.stamps.bound(&self.config);
        // The change's own entries: never a statement, whatever `before` is.
        Some(self.hints_since(before, false, &view, &tools))
    }

    /// What a modern host whose `since` is `since` is told (profile §3.3): the restamped
    /// state's entries stamped after `since`, or a full statement when `since` is 0, older
    /// than the newest tombstone forgotten, or newer than the version.
    pub fn versioned(&mut self, since: u64) -> VersionedHints {
        self.restamp(&[]);
        let view = self.view();
        let tools = self.stamped_tools(&view);
        let s = &self.stamps;
        let statement = since == 0 || since < s.forgotten || since > s.version;
        self.hints_since(since, statement, &view, &tools)
    }

    #[cfg(test)]
    /// The full statement (`statement: true`) of the restamped state: `toolsets/list`'s
    /// `mcpl/hints` to a modern host (profile §3.4).
    pub fn versioned_statement(&mut self) -> VersionedHints {
        self.versioned(0)
    }

    /// The restamped state, as sessions hold it ([`Versioned`]).
    pub fn versioned_now(&mut self) -> Versioned {
        let mut statement = self.versioned(0);
        // Kept while the state holds (every session shares it): no room beyond its entries
        // (issue #42).
        statement.entries.tools.shrink_to_fit();
        statement.entries.toolsets.shrink_to_fit();
        Versioned {
            statement,
            forgotten: self.stamps.forgotten,
        }
    }

    /// The view's tools with the default entry of every stamped key it leaves out.
    fn stamped_tools(&self, view: &View) -> BTreeMap<ToolKey, ToolHint> {
        let mut tools = view.tools.clone();
        for key in self.stamps.tools.keys() {
            tools
                .entry(key.clone())
                .or_insert_with(|| default_tool(key));
        }
        tools
    }

    fn hints_since(
        &self,
        since: u64,
        statement: bool,
        view: &View,
        tools: &BTreeMap<ToolKey, ToolHint>,
    ) -> VersionedHints {
        let s = &self.stamps;
        let after = |v: u64| statement || v > since;
        let mut toolsets: Vec<StampedToolset> = s
            .tombstones
            .iter()
            .filter(|(_, t)| after(t.v))
            .map(|(k, t)| t.entry(k))
            .collect();
        toolsets.extend(view.toolsets.iter().filter_map(|(k, c)| {
            let st = s.toolsets.get(k)?;
            after(st.v).then(|| StampedToolset {
                change: c.clone(),
                v: st.v,
            })
        }));
        let tools = tools
            .iter()
            .filter_map(|(k, h)| {
                let st = s.tools.get(k)?;
                after(st.v).then(|| StampedTool {
                    hint: h.clone(),
                    v: st.v,
                })
            })
            .collect();
        VersionedHints {
            version: s.version,
            statement,
            entries: HintEntries {
                tools,
                toolsets,
                suggest: Vec::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::tests::arcade;
    use crate::principal::{EndedIds, Snapshot};
    use std::sync::Arc;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_796_040_000 + secs)
    }

    fn state(config: PrincipalConfig) -> PrincipalState {
        PrincipalState::new(Arc::new(arcade()), config, EndedIds::new(1), at(0))
    }

    /// The arcade principal read back from `kept` at `now`, its ended ids from `ids`.
    fn restore(ids: EndedIds, kept: Snapshot, now: SystemTime) -> PrincipalState {
        PrincipalState::restore(
            Arc::new(arcade()),
            PrincipalConfig::default(),
            ids,
            kept,
            now,
        )
    }

    #[test]
    fn each_change_takes_the_next_version_and_stamps_what_it_touched() {
        let mut s = state(PrincipalConfig::default());
        let first = s.restamp(&[]).expect("the default-open lobby");
        assert_eq!(first.version, 1);
        assert_eq!(s.restamp(&[]), None, "nothing changed: no version");
        s.open("go", Some("g1"), None, at(1)).unwrap();
        let opened = s.restamp(&[]).unwrap();
        assert_eq!(opened.version, 2);
        assert_eq!(opened.entries.toolsets.len(), 1);
        assert_eq!(opened.entries.toolsets[0].v, 2);
        s.set_visible("play", Some("g1"), true).unwrap();
        let shown = s.restamp(&[]).unwrap();
        assert_eq!(shown.version, 3);
        assert!(shown.entries.toolsets.is_empty());
        let [t] = shown.entries.tools.as_slice() else {
            panic!("one tool entry: {shown:?}")
        };
        assert_eq!(
            (t.hint.name.as_str(), t.hint.visible, t.v),
            ("play", Some(true), 3)
        );
        // A delta since 2 carries exactly what was stamped 3 (vector S4).
        let delta = s.versioned(2);
        assert!(!delta.statement);
        assert_eq!(delta.entries.tools, shown.entries.tools);
        assert!(delta.entries.toolsets.is_empty());
        assert_eq!(
            s.versioned(3).entries.tools.len(),
            0,
            "current: {{version}} alone"
        );
        assert!(s.versioned(0).statement, "vector S3");
    }

    #[test]
    fn a_close_leaves_a_tombstone_with_its_reason_and_a_reopen_keeps_it() {
        let mut s = state(PrincipalConfig::default());
        s.open("go", Some("g1"), None, at(1)).unwrap();
        s.set_visible("play", Some("g1"), true).unwrap();
        s.restamp(&[]);
        let ended = s
            .end(&InstanceKey::instance("go", "g1"), "White wins", at(2))
            .unwrap();
        let closed = s.restamp(&ended.draft.toolsets).unwrap();
        let [c] = closed.entries.toolsets.as_slice() else {
            panic!("one closed entry: {closed:?}")
        };
        assert_eq!(c.change.state, ToolsetState::Closed);
        assert_eq!(c.change.reason.as_deref(), Some("White wins"));
        assert_eq!(c.change.ended, ended.record.map(|r| r.id));
        assert!(
            closed.entries.tools.is_empty(),
            "the tombstone covers its tools"
        );
        s.open("go", Some("g1"), None, at(3)).unwrap();
        s.restamp(&[]);
        let since_before = s.versioned(1);
        let states: Vec<ToolsetState> = since_before
            .entries
            .toolsets
            .iter()
            .map(|e| e.change.state)
            .collect();
        assert_eq!(states, [ToolsetState::Closed, ToolsetState::Open]);
    }

    #[test]
    fn tombstones_are_bounded_and_a_since_behind_them_gets_a_statement() {
        let config = PrincipalConfig {
            max_tombstones: 2,
            ..Default::default()
        };
        let mut s = state(config);
        for name in ["a", "b", "c"] {
            s.open("go", Some(name), None, at(1)).unwrap();
            s.restamp(&[]);
            s.close("go", Some(name), "closed").unwrap();
            s.restamp(&[]);
        }
        assert_eq!(s.stamps().tombstones(), 2);
        assert!(!s.stamps().has_tombstone(&InstanceKey::instance("go", "a")));
        let forgotten = s.stamps().forgotten();
        assert_eq!(forgotten, 2, "a's close (the lobby and a opened at 1)");
        assert!(s.versioned(forgotten - 1).statement, "vector S8");
        assert!(!s.versioned(forgotten).statement);
        // Bytes bound too.
        let config = PrincipalConfig {
            max_tombstone_bytes: 1,
            ..Default::default()
        };
        let mut s = state(config);
        s.open("go", Some("a"), None, at(1)).unwrap();
        s.close("go", Some("a"), "closed").unwrap();
        s.restamp(&[]);
        assert_eq!(s.stamps().tombstones(), 0);
    }

    #[test]
    fn the_version_is_kept_in_the_record_and_an_old_record_loads_without_stamps() {
        let mut s = state(PrincipalConfig::default());
        s.open("go", Some("g1"), None, at(1)).unwrap();
        s.restamp(&[]);
        s.close("go", Some("g1"), "closed").unwrap();
        s.restamp(&[]);
        let json = serde_json::to_value(s.snapshot()).unwrap();
        let back: Snapshot = serde_json::from_value(json.clone()).unwrap();
        let mut r = restore(EndedIds::new(1), back, at(2));
        assert_eq!(r.stamps(), s.stamps());
        assert_eq!(r.versioned(2), s.versioned(2));
        let mut old = json;
        old.as_object_mut().unwrap().remove("stamps");
        let back: Snapshot = serde_json::from_value(old).unwrap();
        let mut r = restore(EndedIds::new(1), back, at(2));
        // At the server's floor (0 for this source: `a_principal_created_again_…`).
        assert_eq!(r.stamps().version(), 0);
        let st = r.versioned(0);
        assert_eq!(st.version, 1, "restamped whole at its first read");
        assert!(st.statement);
    }

    #[test]
    fn a_principal_created_again_never_reuses_a_version() {
        // A server's source: its epoch is a time in nanoseconds.
        let ids = EndedIds::new(EndedIds::epoch_at(at(0)));
        let floor = ids.version_floor();
        assert!(floor > 1 << 40 && floor < 1 << 53, "JSON-safe: {floor}");
        let fresh = |ids: &EndedIds| {
            PrincipalState::new(
                Arc::new(arcade()),
                PrincipalConfig::default(),
                ids.clone(),
                at(0),
            )
        };
        let mut first = fresh(&ids);
        first.open("go", Some("g1"), None, at(1)).unwrap();
        first.restamp(&[]);
        first.close("go", Some("g1"), "closed").unwrap();
        let last = first.restamp(&[]).unwrap().version;
        assert!(last > floor);
        // Forgotten and created again: its first change comes after the last one.
        let mut again = fresh(&ids);
        let opened = again.restamp(&[]).unwrap();
        assert_eq!(opened.version, last + 1);
        // A record written before versions were kept also starts past the floor.
        let mut old = serde_json::to_value(first.snapshot()).unwrap();
        old.as_object_mut().unwrap().remove("stamps");
        let back: Snapshot = serde_json::from_value(old).unwrap();
        let restored = restore(ids.clone(), back, at(2));
        assert_eq!(restored.stamps().version(), last + 1);
    }

    #[test]
    fn a_rollback_never_reissues_a_version() {
        let mut s = state(PrincipalConfig::default());
        s.restamp(&[]);
        let kept = s.clone();
        s.open("go", Some("g1"), None, at(1)).unwrap();
        s.restamp(&[]);
        let lost = s.stamps().clone();
        let mut r = kept;
        r.continue_after(&lost);
        assert_eq!(r.stamps().version(), 3);
        assert!(r.versioned(2).statement, "a host that read the lost change");
    }

    /// Issue #41: the owner node told a modern host of an open whose record it could not
    /// keep (the database went away), then stopped; the node that read the record back
    /// gave the next change the version that host held, so the host was told nothing and
    /// believed the game open to the end. A new life goes on past it and states everything
    /// once to a host whose `since` is older.
    #[test]
    fn a_new_life_never_gives_a_version_the_last_one_told_without_keeping_it() {
        let ids = EndedIds::new(EndedIds::epoch_at(at(0)));
        let mut s = PrincipalState::new(Arc::new(arcade()), PrincipalConfig::default(), ids, at(0));
        s.open("go", Some("g1"), None, at(1)).unwrap();
        s.restamp(&[]);
        let kept = s.snapshot();
        // Told, never kept.
        s.open("go", Some("g2"), None, at(2)).unwrap();
        let told = s.restamp(&[]).expect("g2 opened").version;
        let open = |h: &VersionedHints| -> Vec<String> {
            h.entries
                .toolsets
                .iter()
                .filter(|e| e.change.state == ToolsetState::Open)
                .filter_map(|e| e.change.instance.clone())
                .collect()
        };
        // The new life's clock reads no later (a node behind the last owner's): the gap
        // alone carries it past.
        let mut r = restore(EndedIds::new(EndedIds::epoch_at(at(0))), kept, at(3));
        r.continue_after_restart();
        assert!(r.stamps().version() > told);
        r.open("go", Some("g3"), None, at(4)).unwrap();
        let next = r.restamp(&[]).expect("g3 opened");
        assert!(next.version > told, "{} reused", next.version);
        let h = r.versioned(told);
        assert!(
            h.statement,
            "the host that held {told} is told everything: {h:?}"
        );
        assert_eq!(open(&h), ["g1", "g3"], "g2, never kept, is not stated");
        // A close told but never kept: the record's open entry, stamped again with the
        // jump, is newer than the tombstone the host holds.
        let mut s2 = PrincipalState::new(
            Arc::new(arcade()),
            PrincipalConfig::default(),
            EndedIds::new(EndedIds::epoch_at(at(0))),
            at(0),
        );
        s2.open("go", Some("g1"), None, at(1)).unwrap();
        s2.restamp(&[]);
        let kept = s2.snapshot();
        s2.close("go", Some("g1"), "closed").unwrap();
        let tombstone = s2.restamp(&[]).expect("g1 closed").version;
        let mut r2 = restore(EndedIds::new(EndedIds::epoch_at(at(0))), kept, at(3));
        r2.continue_after_restart();
        let h = r2.versioned(tombstone);
        assert!(h.statement);
        let g1 = h
            .entries
            .toolsets
            .iter()
            .find(|e| e.change.instance.as_deref() == Some("g1"))
            .expect("g1 stated");
        assert_eq!(g1.change.state, ToolsetState::Open);
        assert!(g1.v > tombstone, "{} hides under the unkept close", g1.v);
        // A later clock carries it to that life's floor.
        let later = EndedIds::new(EndedIds::epoch_at(at(100)));
        let mut r = restore(later.clone(), s.snapshot(), at(101));
        r.continue_after_restart();
        assert!(r.stamps().version() >= later.life_floor());
        assert!(
            later.version_floor() >= r.stamps().version(),
            "the server's floor follows"
        );
    }
}

//! Random sequences of opens, joins, closes, ends, visibility and definition changes,
//! retitles and time passing, checked against invariants after every step:
//!
//! - ended ids are unique and never reused, and each closed entry carries its record's id;
//! - `statement()` equals what a host holds after applying the initial statement and then
//!   every emitted draft, in order (values semantics, §4.3, §5.1);
//! - an adopted open, and any refused request, changes nothing (§4.2, vector 17);
//! - `coarse_visibility()` agrees with the statement for dynamic tools (§3);
//! - no more instances are open than the limit allows (plus default-open toolsets a
//!   manifest change adds);
//! - instances opened implicitly for plain hosts (§8) never show in what hinted hosts are
//!   sent or stated, and a hinted open of one states it whole.
//!
//! Manifest changes (`replace_catalog`) switch between three catalogs: the arcade; one where
//! `solo` is gone, `play`'s declared definition changed and a default-open `desk` appeared;
//! one where `go` lost its instances (a removal plus an addition, §4.1).
//!
//! proptest prints the failing sequence (shrunk) and its seed, and keeps the seed in
//! `proptest-regressions/` so a failure replays.

use super::*;
use crate::catalog::ToolDecl;
use crate::catalog::tests::{arcade, tool};
use mcpl_protocol::hints::{ToolHint, ToolsetChange, ToolsetState};
use mcpl_protocol::mcp::Tool;
use mcpl_protocol::toolsets::{ToolsetDecl, ToolsetDefault};
use proptest::prelude::*;
use serde_json::json;
use std::time::UNIX_EPOCH;

const TOOLSETS: [&str; 5] = ["lobby", "go", "solo", "ranked", "chess"];
const NAMES: [&str; 4] = ["a", "b", "go-1", "bad name"];
const TOOLS: [&str; 10] = [
    "status",
    "news",
    "lobby_list",
    "challenge",
    "play",
    "resign",
    "hint",
    "climb",
    "doodle",
    "nope",
];
const TTL_SECS: u64 = 30;
const MAX_OPEN: usize = 4;

#[derive(Debug, Clone)]
enum Op {
    Open {
        ts: usize,
        name: Option<usize>,
        options: usize,
    },
    Join {
        name: Option<usize>,
    },
    /// §8: opened for a plain host only.
    OpenImplicitly {
        ts: usize,
    },
    Close {
        ts: usize,
        name: Option<usize>,
    },
    End {
        which: usize,
    },
    SetVisible {
        tool: usize,
        name: Option<usize>,
        visible: bool,
    },
    SetDefinition {
        tool: usize,
        name: Option<usize>,
        def: Option<usize>,
    },
    Retitle {
        which: usize,
        title: usize,
    },
    Advance {
        secs: u64,
    },
    Swap {
        variant: usize,
    },
}

fn options(i: usize) -> Option<Value> {
    match i {
        0 => None,
        1 => Some(json!({"size": 9})),
        2 => Some(json!({"size": 19})),
        3 => Some(json!({"size": 10})),
        _ => Some(json!({"ladder": "x"})),
    }
}

fn definition(i: usize) -> ToolDefinition {
    match i {
        0 => ToolDefinition {
            description: Some("blitz".into()),
            ..Default::default()
        },
        1 => ToolDefinition {
            input_schema: Some(json!({"type": "object", "properties": {"move": {"enum": ["D4"]}}})),
            ..Default::default()
        },
        _ => ToolDefinition {
            input_schema: Some(
                json!({"type": "object", "properties": {"move": {"enum": ["pass"]}}}),
            ),
            ..Default::default()
        },
    }
}

fn variant(i: usize) -> Arc<Catalog> {
    let base = arcade();
    let mut tools: Vec<ToolDecl> = base.tools().cloned().collect();
    let mut toolsets: BTreeMap<String, ToolsetDecl> = base
        .toolsets()
        .map(|(n, d)| (n.to_owned(), d.clone()))
        .collect();
    match i {
        0 => return Arc::new(base),
        1 => {
            toolsets.remove("solo");
            let desk = ToolsetDecl {
                default: ToolsetDefault::Open,
                ..Default::default()
            };
            toolsets.insert("desk".into(), desk);
            tools.push(ToolDecl::new(tool("headline")).in_toolset("desk"));
            let play = tools.iter_mut().find(|t| t.name() == "play").expect("play");
            let schema = json!({"type": "object", "properties": {"move": {"type": "string"}}});
            *play = ToolDecl::new(Tool::new("play", "Play a move (v2)", schema))
                .in_toolset("go")
                .initially_visible(false);
        }
        _ => toolsets.get_mut("go").expect("go").instances = false,
    }
    Arc::new(Catalog::new(tools, toolsets, None).expect("a valid variant"))
}

fn op() -> impl Strategy<Value = Op> {
    let name = proptest::option::of(0..NAMES.len());
    prop_oneof![
        3 => (0..TOOLSETS.len(), name.clone(), 0..5usize).prop_map(|(ts, name, options)| Op::Open { ts, name, options }),
        1 => name.clone().prop_map(|name| Op::Join { name }),
        1 => (0..TOOLSETS.len()).prop_map(|ts| Op::OpenImplicitly { ts }),
        2 => (0..TOOLSETS.len(), name.clone()).prop_map(|(ts, name)| Op::Close { ts, name }),
        1 => (0..8usize).prop_map(|which| Op::End { which }),
        4 => (0..TOOLS.len(), name.clone(), any::<bool>()).prop_map(|(tool, name, visible)| Op::SetVisible { tool, name, visible }),
        2 => (0..TOOLS.len(), name, proptest::option::of(0..3usize)).prop_map(|(tool, name, def)| Op::SetDefinition { tool, name, def }),
        1 => (0..8usize, 0..3usize).prop_map(|(which, title)| Op::Retitle { which, title }),
        1 => (0..40u64).prop_map(|secs| Op::Advance { secs }),
        1 => (0..3usize).prop_map(|variant| Op::Swap { variant }),
    ]
}

/// What a host holds, built from entries alone (§4.3, §5.1): an open entry adds an
/// instance, a closed one removes it with what was known about it, `visible` and
/// `definition` entries set values.
#[derive(Debug, Default, Clone)]
struct Host {
    open: BTreeMap<InstanceKey, Option<String>>,
    visible: BTreeSet<(String, Option<String>)>,
    shared: BTreeMap<String, ToolDefinition>,
    own: BTreeMap<(String, String), ToolDefinition>,
}

impl Host {
    fn from_statement(st: &Statement, catalog: &Catalog) -> Self {
        let mut h = Host::default();
        for r in &st.open {
            h.open.insert(
                InstanceKey {
                    toolset: r.toolset.clone(),
                    instance: r.instance.clone(),
                },
                r.title.clone(),
            );
        }
        h.apply(&st.hints, catalog);
        h
    }

    fn apply(&mut self, draft: &HintDraft, catalog: &Catalog) {
        for c in &draft.toolsets {
            let key = InstanceKey {
                toolset: c.toolset.clone(),
                instance: c.instance.clone(),
            };
            match c.state {
                ToolsetState::Open => {
                    let title = self.open.entry(key).or_insert(None);
                    if c.title.is_some() {
                        title.clone_from(&c.title);
                    }
                }
                ToolsetState::Closed => {
                    let tools = catalog.tools_of(&key.toolset);
                    self.visible
                        .retain(|(t, i)| !(tools.contains(t) && *i == key.instance));
                    if let Some(inst) = &key.instance {
                        self.own
                            .retain(|(t, i), _| !(tools.contains(t) && i == inst));
                    }
                    self.open.remove(&key);
                }
            }
        }
        for t in &draft.tools {
            let k = (t.name.clone(), t.instance.clone());
            match t.visible {
                Some(true) => {
                    self.visible.insert(k);
                }
                Some(false) => {
                    self.visible.remove(&k);
                }
                None => {}
            }
            if let Some(d) = &t.definition {
                match &t.instance {
                    Some(i) => self.own.insert((t.name.clone(), i.clone()), d.clone()),
                    None => self.shared.insert(t.name.clone(), d.clone()),
                };
            }
        }
    }

    /// What the agent can rely on: open instances with titles, visible dynamic tools where
    /// they apply, and each dynamic tool's effective definition where it applies.
    fn effective(&self, catalog: &Catalog) -> Effective {
        let mut visible = BTreeSet::new();
        let mut defs = BTreeMap::new();
        for d in catalog.tools().filter(|d| d.is_dynamic()) {
            let t = d.name().to_owned();
            let places: Vec<Option<String>> = match catalog.declared_toolset_of(&t) {
                Some(ts) => self
                    .open
                    .keys()
                    .filter(|k| k.toolset == ts)
                    .map(|k| k.instance.clone())
                    .collect(),
                None => vec![None],
            };
            for place in places {
                if self.visible.contains(&(t.clone(), place.clone())) {
                    visible.insert((t.clone(), place.clone()));
                }
                let own = place
                    .as_ref()
                    .and_then(|i| self.own.get(&(t.clone(), i.clone())));
                let def = own
                    .or_else(|| self.shared.get(&t))
                    .cloned()
                    .unwrap_or_else(|| d.definition());
                defs.insert((t.clone(), place), def);
            }
        }
        Effective {
            open: self.open.clone(),
            visible,
            defs,
        }
    }
}

#[derive(Debug, PartialEq)]
struct Effective {
    open: BTreeMap<InstanceKey, Option<String>>,
    visible: BTreeSet<(String, Option<String>)>,
    defs: BTreeMap<(String, Option<String>), ToolDefinition>,
}

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_796_040_000 + secs)
}

fn observe(s: &PrincipalState, now: SystemTime) -> (Statement, BTreeSet<String>) {
    (s.statement(now), s.coarse_visibility())
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut catalog = Arc::new(arcade());
    let config = PrincipalConfig {
        ended_ttl: Duration::from_secs(TTL_SECS),
        max_open: MAX_OPEN,
        ..Default::default()
    };
    let mut clock = 0u64;
    let mut s = PrincipalState::new(Arc::clone(&catalog), config, EndedIds::new(0), at(clock));
    let mut host = Host::from_statement(&s.statement(at(clock)), &catalog);
    let mut seen_ids = BTreeSet::new();

    for op in ops {
        let now = at(clock);
        let before = observe(&s, now);
        let keys: Vec<InstanceKey> = s.instances().map(|i| i.key().clone()).collect();
        let name = |n: &Option<usize>| n.map(|i| NAMES[i]);
        let mut ended = Vec::new();
        // Some(draft): a change to send; None: refused or adopted, so nothing may change.
        let draft: Option<HintDraft> = match op {
            Op::Open {
                ts,
                name: n,
                options: o,
            } => match s.open(TOOLSETS[*ts], name(n), options(*o), now) {
                Ok(OpenOutcome::Opened(o)) => Some(o.draft),
                Ok(OpenOutcome::Revealed(o)) => {
                    prop_assert!(
                        keys.contains(&o.key),
                        "revealed {} which was not open",
                        o.key
                    );
                    Some(o.draft)
                }
                Ok(OpenOutcome::Adopted { key, .. }) => {
                    prop_assert!(keys.contains(&key), "adopted {key} which was not open");
                    None
                }
                Err(_) => None,
            },
            Op::Join { name: n } => s.join("go", name(n), options(1), now).ok().map(|o| o.draft),
            // Hinted hosts see nothing of it: an empty draft, and the check below proves
            // the statement agrees.
            Op::OpenImplicitly { ts } => s
                .open_implicitly(TOOLSETS[*ts], now)
                .map(|_| HintDraft::new()),
            Op::Close { ts, name: n } => match s.close(TOOLSETS[*ts], name(n), "closed") {
                Ok(e) => {
                    // §4.3 (revision 4): a close the principal asked for has no record.
                    prop_assert!(e.record.is_none());
                    Some(e.draft)
                }
                Err(_) => None,
            },
            Op::End { which } => match keys.get(*which) {
                Some(k) => {
                    let implicit = s.is_implicit(k);
                    let e = s.end(k, "game over", now).expect("an open key ends");
                    if implicit {
                        // §8: an end no hinted host could see is neither recorded nor sent.
                        prop_assert!(e.record.is_none() && e.draft.is_empty());
                    } else {
                        ended.push(e.record.clone().expect("an end not asked for is recorded"));
                    }
                    Some(e.draft)
                }
                None => None,
            },
            Op::SetVisible {
                tool,
                name: n,
                visible,
            } => s.set_visible(TOOLS[*tool], name(n), *visible).ok(),
            Op::SetDefinition { tool, name: n, def } => s
                .set_definition(TOOLS[*tool], name(n), def.map(definition))
                .ok(),
            Op::Retitle { which, title } => keys
                .get(*which)
                .and_then(|k| s.retitle(k, &format!("title {title}")).ok()),
            Op::Advance { secs } => {
                clock += secs;
                s.expire(at(clock));
                Some(HintDraft::new())
            }
            Op::Swap { variant: v } => {
                let swap = s.replace_catalog(variant(*v), now);
                ended.extend(swap.ended.iter().filter_map(|e| e.record.clone()));
                Some(swap.draft)
            }
        };
        let now = at(clock);

        match draft {
            None => prop_assert_eq!(
                observe(&s, now),
                before,
                "a refused or adopted {:?} changed the state",
                op
            ),
            Some(d) => {
                // Every closed entry names a record made by this step; ids are never reused.
                let closed: Vec<&String> =
                    d.toolsets.iter().filter_map(|c| c.ended.as_ref()).collect();
                prop_assert_eq!(closed, ended.iter().map(|r| &r.id).collect::<Vec<_>>());
                for r in &ended {
                    prop_assert!(seen_ids.insert(r.id.clone()), "ended id {} reused", r.id);
                }
                // Closed entries are read with the catalog the host knew them by.
                host.apply(&d, &catalog);
            }
        }
        catalog = Arc::clone(s.catalog());

        let st = s.statement(now);
        let from_statement = Host::from_statement(&st, &catalog).effective(&catalog);
        prop_assert_eq!(host.effective(&catalog), from_statement, "after {:?}", op);

        let ids: BTreeSet<&String> = st.ended.iter().map(|r| &r.id).collect();
        prop_assert_eq!(ids.len(), st.ended.len(), "duplicate ids in the statement");
        prop_assert!(st.ended.iter().all(|r| seen_ids.contains(&r.id)));
        prop_assert!(s.instances().count() <= MAX_OPEN + 2);
        let coarse = s.coarse_visibility();
        for d in catalog.tools().filter(|d| d.is_dynamic()) {
            let stated = st
                .hints
                .tools
                .iter()
                .any(|t| t.name == d.name() && t.visible == Some(true));
            prop_assert_eq!(
                coarse.contains(d.name()),
                stated,
                "coarse visibility of {}",
                d.name()
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_sequences_keep_the_invariants(ops in proptest::collection::vec(op(), 1..60)) {
        run(&ops)?;
    }
}

/// Found by the property test: an instance's own definition, equal to a new shared one,
/// was dropped on the server while hosts kept it; the shared one going back then split them.
#[test]
fn an_own_definition_survives_a_shared_round_trip() {
    let ops = [
        Op::Join { name: None },
        Op::SetDefinition {
            tool: 5,
            name: Some(2),
            def: Some(2),
        },
        Op::SetDefinition {
            tool: 5,
            name: None,
            def: Some(2),
        },
        Op::SetDefinition {
            tool: 5,
            name: None,
            def: None,
        },
    ];
    run(&ops).expect("the invariants hold");
}

// ---- versions and stamps (issue #40, `stamps.rs`, `docs/rfc014-stateless.md` §2) ----

/// What a modern host holds, built from stamped entries alone by the profile's rule (§2,
/// §3.3): an entry applies only when its stamp is newer than the one held for its key; a
/// closed entry is also a tombstone that drops, and keeps out, the instance's entries
/// stamped before it; a statement drops what it does not state and that is stamped at or
/// below its version.
#[derive(Debug, Default, Clone)]
struct VHost {
    toolsets: BTreeMap<InstanceKey, (u64, ToolsetChange)>,
    tombs: BTreeMap<InstanceKey, u64>,
    tools: BTreeMap<(String, Option<String>), (u64, ToolHint)>,
    since: u64,
}

/// The instance a tool entry belongs to, as a host reads it from `tools/list`.
fn owner_of(catalog: &Catalog, tool: &str, instance: &Option<String>) -> Option<InstanceKey> {
    let ts = catalog.declared_toolset_of(tool)?;
    Some(InstanceKey {
        toolset: ts.to_owned(),
        instance: instance.clone(),
    })
}

impl VHost {
    fn apply(&mut self, h: &mcpl_protocol::stateless::VersionedHints, catalog: &Catalog) {
        if h.statement {
            let stated_ts: BTreeSet<InstanceKey> = h
                .entries
                .toolsets
                .iter()
                .map(|e| InstanceKey {
                    toolset: e.change.toolset.clone(),
                    instance: e.change.instance.clone(),
                })
                .collect();
            let stated_tools: BTreeSet<(String, Option<String>)> = h
                .entries
                .tools
                .iter()
                .map(|e| (e.hint.name.clone(), e.hint.instance.clone()))
                .collect();
            self.toolsets
                .retain(|k, (v, _)| *v > h.version || stated_ts.contains(k));
            self.tools
                .retain(|k, (v, _)| *v > h.version || stated_tools.contains(k));
        }
        for e in &h.entries.toolsets {
            let key = InstanceKey {
                toolset: e.change.toolset.clone(),
                instance: e.change.instance.clone(),
            };
            if e.change.state == ToolsetState::Closed {
                let tomb = self.tombs.entry(key.clone()).or_insert(0);
                *tomb = (*tomb).max(e.v);
                let tomb = *tomb;
                self.tools.retain(|(t, i), (v, _)| {
                    *v >= tomb || owner_of(catalog, t, i).as_ref() != Some(&key)
                });
            }
            if self.toolsets.get(&key).is_none_or(|(v, _)| e.v > *v) {
                self.toolsets.insert(key, (e.v, e.change.clone()));
            }
        }
        for e in &h.entries.tools {
            let key = (e.hint.name.clone(), e.hint.instance.clone());
            let owner = owner_of(catalog, &key.0, &key.1);
            if owner
                .and_then(|o| self.tombs.get(&o))
                .is_some_and(|tomb| e.v < *tomb)
            {
                continue;
            }
            if self.tools.get(&key).is_none_or(|(v, _)| e.v > *v) {
                self.tools.insert(key, (e.v, e.hint.clone()));
            }
        }
        self.since = self.since.max(h.version);
    }

    /// What the agent can rely on: the open instances with their titles, and every tool
    /// entry that says more than the default, where it applies.
    #[allow(clippy::type_complexity)]
    fn view(
        &self,
        catalog: &Catalog,
    ) -> (
        BTreeMap<InstanceKey, Option<String>>,
        BTreeMap<(String, Option<String>), ToolHint>,
    ) {
        let open: BTreeMap<InstanceKey, Option<String>> = self
            .toolsets
            .iter()
            .filter(|(_, (_, c))| c.state == ToolsetState::Open)
            .map(|(k, (_, c))| (k.clone(), c.title.clone()))
            .collect();
        let tools = self
            .tools
            .iter()
            // A tool the catalog no longer has leaves the host's list with the catalog.
            .filter(|((t, _), _)| catalog.tool(t).is_some())
            .filter(|((t, i), (_, h))| match owner_of(catalog, t, i) {
                None => true,
                // A shared definition of an instanced toolset's tool.
                Some(o) if o.instance.is_none() && catalog.is_instanced(&o.toolset) => {
                    h.definition.is_some()
                }
                Some(o) => open.contains_key(&o),
            })
            .filter(|(_, (_, h))| {
                h.visible == Some(true) || h.definition.is_some() || h.presence.is_some()
            })
            .map(|(k, (_, h))| (k.clone(), h.clone()))
            .collect();
        (open, tools)
    }
}

impl VHost {
    /// What the agent can rely on, as [`Host::effective`] says it of the legacy statement:
    /// the stamped entries read as values.
    fn effective(&self, catalog: &Catalog) -> Effective {
        let (open, tools) = self.view(catalog);
        let mut host = Host {
            open,
            ..Host::default()
        };
        for ((t, i), h) in tools {
            if h.visible == Some(true) {
                host.visible.insert((t.clone(), i.clone()));
            }
            if let Some(d) = h.definition {
                match i {
                    Some(i) => host.own.insert((t, i), d),
                    None => host.shared.insert(t, d),
                };
            }
        }
        host.effective(catalog)
    }
}

/// Applies `op` to `s`, ignoring refusals; the change's closed entries, when it made one.
fn step(s: &mut PrincipalState, op: &Op, clock: &mut u64) -> Vec<ToolsetChange> {
    let now = at(*clock);
    let keys: Vec<InstanceKey> = s.instances().map(|i| i.key().clone()).collect();
    let name = |n: &Option<usize>| n.map(|i| NAMES[i]);
    let draft = match op {
        Op::Open {
            ts,
            name: n,
            options: o,
        } => match s.open(TOOLSETS[*ts], name(n), options(*o), now) {
            Ok(OpenOutcome::Opened(o) | OpenOutcome::Revealed(o)) => Some(o.draft),
            _ => None,
        },
        Op::Join { name: n } => s.join("go", name(n), options(1), now).ok().map(|o| o.draft),
        Op::OpenImplicitly { ts } => s
            .open_implicitly(TOOLSETS[*ts], now)
            .map(|_| HintDraft::new()),
        Op::Close { ts, name: n } => s
            .close(TOOLSETS[*ts], name(n), "closed")
            .ok()
            .map(|e| e.draft),
        Op::End { which } => keys
            .get(*which)
            .and_then(|k| s.end(k, "game over", now).ok())
            .map(|e| e.draft),
        Op::SetVisible {
            tool,
            name: n,
            visible,
        } => s.set_visible(TOOLS[*tool], name(n), *visible).ok(),
        Op::SetDefinition { tool, name: n, def } => s
            .set_definition(TOOLS[*tool], name(n), def.map(definition))
            .ok(),
        Op::Retitle { which, title } => keys
            .get(*which)
            .and_then(|k| s.retitle(k, &format!("title {title}")).ok()),
        Op::Advance { secs } => {
            *clock += secs;
            s.expire(at(*clock));
            None
        }
        Op::Swap { variant: v } => Some(s.replace_catalog(variant(*v), now).draft),
    };
    draft.map(|d| d.toolsets).unwrap_or_default()
}

/// Any sequence of changes, then any `since`: the delta applied over what a host held at
/// `since` equals the statement; and every change's own entries (what a listen stream
/// carries), applied in any order, equal it too.
fn run_versioned(ops: &[Op], restamp_every: bool, order: u64) -> Result<(), TestCaseError> {
    let catalog0 = Arc::new(arcade());
    let config = PrincipalConfig {
        ended_ttl: Duration::from_secs(TTL_SECS),
        max_open: MAX_OPEN,
        max_tombstones: 3,
        ..Default::default()
    };
    let mut clock = 0u64;
    let mut s = PrincipalState::new(catalog0, config, EndedIds::new(0), at(clock));
    // What a host held at each version: the statement it read then.
    let mut held: Vec<(u64, VHost)> = Vec::new();
    let mut changes = Vec::new();
    for op in ops {
        let closes = step(&mut s, op, &mut clock);
        let before = s.stamps().version();
        // The core restamps after every change it tells; a read restamps what it missed.
        if restamp_every && let Some(change) = s.restamp(&closes) {
            prop_assert_eq!(change.version, before + 1, "one version a change");
            prop_assert!(change.entries.tools.iter().all(|t| t.v == change.version));
            prop_assert!(
                change
                    .entries
                    .toolsets
                    .iter()
                    .all(|t| t.v == change.version)
            );
            changes.push(change);
        }
        let st = s.versioned_statement();
        prop_assert!(st.statement);
        let catalog = Arc::clone(s.catalog());
        let mut h = VHost::default();
        h.apply(&st, &catalog);
        held.push((st.version, h));
    }
    let catalog = Arc::clone(s.catalog());
    let st = s.versioned_statement();
    let mut truth = VHost::default();
    truth.apply(&st, &catalog);
    // The stamped statement says what the legacy statement says (§4.3).
    let legacy = Host::from_statement(&s.statement(at(clock)), &catalog).effective(&catalog);
    prop_assert_eq!(truth.effective(&catalog), legacy, "the stamped statement");
    let truth = truth.view(&catalog);
    for (since, h) in &held {
        let delta = s.versioned(*since);
        // What a session answers from is the same.
        prop_assert_eq!(&s.versioned_now().since(*since), &delta);
        prop_assert!(
            delta.statement == (*since == 0 || *since < s.stamps().forgotten()),
            "statement only where the delta is gone (since {})",
            since
        );
        prop_assert!(delta.statement || delta.entries.tools.iter().all(|t| t.v > *since));
        let mut h = h.clone();
        h.apply(&delta, &catalog);
        prop_assert_eq!(&h.view(&catalog), &truth, "since {}", since);
        prop_assert_eq!(h.since, st.version);
    }
    if restamp_every && s.stamps().forgotten() == 0 {
        // Every change's entries, from nothing, in an order of the seed's choosing.
        let mut rng = order;
        let mut shuffled = changes.clone();
        for i in (1..shuffled.len()).rev() {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            shuffled.swap(i, (rng >> 33) as usize % (i + 1));
        }
        let mut h = VHost::default();
        for c in &shuffled {
            h.apply(c, &catalog);
        }
        prop_assert_eq!(
            &h.view(&catalog),
            &truth,
            "changes applied in order seed {}",
            order
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn versioned_deltas_equal_the_statement(
        ops in proptest::collection::vec(op(), 1..50),
        restamp_every in any::<bool>(),
        order in any::<u64>(),
    ) {
        run_versioned(&ops, restamp_every, order)?;
    }
}

/// Found by the property test: a toolset without instances shares `(tool, none)` between
/// its instance's entries and a shared definition; its close's tombstone dropped the
/// shared definition on the host, which no later delta restated.
#[test]
fn a_shared_definition_outlives_the_close_of_its_toolset() {
    let ops = [
        Op::SetDefinition {
            tool: 3,
            name: None,
            def: Some(0),
        },
        Op::Close { ts: 0, name: None },
        Op::Open {
            ts: 0,
            name: None,
            options: 0,
        },
    ];
    run_versioned(&ops, false, 0).expect("the delta equals the statement");
    run_versioned(&ops, true, 0).expect("the delta equals the statement");
}

//! One principal's toolsets: open instances, what is visible in each, ended records (§4).
//!
//! **Toolsets belong to the principal, not to a connection** (§4.6): the `Principal` actor
//! owns one [`PrincipalState`] and sends every [`HintDraft`] it returns to each of the
//! principal's connections that advertised `toolHints`, each stamping it with its own
//! [`Sequencer`](super::Sequencer) (vectors 14, 32). The draft is the same for all; who
//! carries it differs (§5.3): the connection whose request caused it puts it in that
//! result, the others get it as a push or `tools/hints`.
//!
//! # State
//!
//! - **Open instances**, keyed by [`InstanceKey`] `(toolset, instance-or-none)`, each with
//!   its title, options, the toolset's tools **visible in it** and its **own definitions**
//!   (a game's legal moves as an enum, §5.1). A toolset without instances has one key with
//!   no instance name.
//! - **Tools outside declared toolsets** (no `mcpl/toolset`, or an undeclared one, §4.4):
//!   visible or not, for the whole principal.
//! - **Shared definitions** a server replaced for this principal (a hint `definition`
//!   without `instance`, §5.1); only those that differ from the declared one are kept.
//! - **Ended records** (§4.3), see `ended.rs`.
//!
//! # Rules, where they are enforced
//!
//! | rule | spec | where |
//! |---|---|---|
//! | `default: "open"` toolsets are open from the start | §4.1, vector 25 | [`PrincipalState::new`] |
//! | options are validated; a bad one is -32602 naming the problem | §4.2 | [`PrincipalState::open`] |
//! | an instance name for a toolset without instances is refused | §4.2 | `PrincipalState::open`, `PrincipalState::close` |
//! | a proposed name is used as given or refused, never substituted | §4.2, vector 18 | [`PrincipalState::open`] |
//! | no name: the server picks a fresh one | §4.2, vector 5 | [`PrincipalState::open`] |
//! | opening what is open adopts it, changes nothing, reports differing options | §4.2, vector 17 | [`PrincipalState::open`] |
//! | close needs the instance for an instanced toolset | §4.2 | `PrincipalState::close` |
//! | every end the principal did not ask for gets an ended record; a closed entry carries its id | §4.3 | [`PrincipalState::end`] |
//! | hint entries state values, and only what changed | §5.1 | `set_visible`, `set_definition`, `retitle` |
//! | definitions change dynamic tools only | §5.1 | [`PrincipalState::set_definition`] |
//! | `toolsets/list` is a full statement | §4.3, vectors 23, 38 | [`PrincipalState::statement`] |
//! | a call's instance: the only one, or named; refusals say why | §4.5, vectors 6, 11 | [`PrincipalState::resolve_call`] |
//! | `mcpl/visible` in `tools/list`: visible in at least one open instance | §3 | [`PrincipalState::coarse_visibility`] |
//! | a host without `toolHints` uses toolsets without opening them; hinted hosts never see those implicit opens | §8 | [`PrincipalState::open_implicitly`] |
//! | a removed toolset's instances end | §4.1, vector 33 | [`PrincipalState::replace_catalog`] |
//! | every change takes the next version and stamps what it changed; closed instances are bounded tombstones | `docs/rfc014-stateless.md` §2 | [`PrincipalState::restamp`] (`stamps.rs`) |
//!
//! # What a host rebuilds
//!
//! The drafts are written so that a host applying them in order — an `open` entry adds the
//! instance, a `closed` entry removes it with everything known about it, `visible` and
//! `definition` entries set values — holds exactly what [`PrincipalState::statement`] says
//! at the same point — the effective state, that is: which instances are open, which
//! dynamic tools are visible where, and each one's definition there. The property test in
//! `proptests.rs` checks this over random sequences, manifest changes included. Closing an
//! instance also states `visible: false` for each tool that was visible in it, for hosts
//! that keep visibility apart from toolset state.
//!
//! Values have one consequence worth knowing: nothing on the wire says "forget this
//! instance's own definition", so once one was sent it stays the instance's own until the
//! instance closes (on the host, and therefore here), and it is restated whenever what it
//! would otherwise fall back to changes (see [`PrincipalState::set_definition`]).
//!
//! # Isolation and shared instances (§7)
//!
//! A `PrincipalState` holds nothing another principal can reach: it is owned by one actor,
//! and its only shared part is the read-only [`Catalog`]. An instance shared between
//! principals (two agents in one game) is one `Instance` actor with **a record in each
//! principal's state**, possibly under different names. The invited principal gets its
//! record either when its host opens the name the invitation suggested (an ordinary
//! [`PrincipalState::open`]; the actor sees the pending invitation and attaches the game
//! instead of starting one) or directly with [`PrincipalState::join`]. Each principal then
//! sees only its own record's visibility: "Black played D4" is a push to White whose hints
//! come from White's state (`set_visible("play", Some("g1"), true)` on White's state).

mod call;
mod ended;
mod errors;
mod hints;
mod implicit;
mod key;
mod lifecycle;
mod snapshot;
mod stamps;
mod statement;
mod swap;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use ended::EndedIds;
pub use errors::{CallRefusal, CallReply, CloseError, HintError, OpenError};
pub use key::InstanceKey;
pub use snapshot::{EndedPart, KeptEnded, REASON_UNDECLARED, Snapshot};
pub use stamps::{RESTART_GAP, Stamps, TombstonePart, Versioned};
pub use statement::Statement;

use super::catalog::Catalog;
use super::draft::HintDraft;
use ended::EndedLog;
use mcpl_protocol::hints::{ToolDefinition, ToolHint};
use mcpl_protocol::toolsets::{EndedRecord, OpenRecord};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Limits and lifetimes of a principal's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrincipalConfig {
    /// How long an ended record is reported (§4.3: default one hour).
    pub ended_ttl: Duration,
    /// The most ended records kept; past it the oldest goes early (a resource bound).
    pub max_ended: usize,
    /// The most instances open at once; an open beyond it is refused.
    pub max_open: usize,
    /// A closed entry names its ended record's id (`ended`, §4.3 **\[project\]**, default
    /// on), so a host counts the end told and a later statement does not tell it again.
    /// The RFC does not require it; off, a host matches the record by its instance.
    pub ended_ids_on_closes: bool,
    /// The most tombstones of closed instances kept for modern hosts' deltas
    /// (`docs/rfc014-stateless.md` §2, `stamps.rs`); past it the oldest is forgotten, and
    /// a host behind it gets a full statement.
    pub max_tombstones: usize,
    /// The most bytes the tombstones may weigh (names, reasons, ended ids), likewise.
    pub max_tombstone_bytes: usize,
}

impl Default for PrincipalConfig {
    fn default() -> Self {
        PrincipalConfig {
            ended_ttl: Duration::from_secs(3600),
            max_ended: 1024,
            max_open: 64,
            ended_ids_on_closes: true,
            max_tombstones: 1024,
            max_tombstone_bytes: 256 * 1024,
        }
    }
}

/// One open toolset or instance, as this principal sees it; kept across a restart as it
/// is (`principal/snapshot.rs`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OpenInstance {
    key: InstanceKey,
    title: Option<String>,
    options: Option<Value>,
    /// The toolset's tools visible in this instance.
    visible: BTreeSet<String>,
    /// This instance's own definitions: every one a host was sent, kept until it closes.
    definitions: BTreeMap<String, ToolDefinition>,
    opened_at: SystemTime,
}

impl OpenInstance {
    /// Its key.
    pub fn key(&self) -> &InstanceKey {
        &self.key
    }

    /// Its title.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The options it was opened with.
    pub fn options(&self) -> Option<&Value> {
        self.options.as_ref()
    }

    /// True when `tool` is visible in it.
    pub fn is_visible(&self, tool: &str) -> bool {
        self.visible.contains(tool)
    }

    /// Its own definition of `tool`, when it has one.
    #[cfg(test)]
    pub fn own_definition(&self, tool: &str) -> Option<&ToolDefinition> {
        self.definitions.get(tool)
    }

    /// Its `toolsets/list` record (§4.3).
    pub fn record(&self) -> OpenRecord {
        OpenRecord {
            toolset: self.key.toolset.clone(),
            instance: self.key.instance.clone(),
            title: self.title.clone(),
            options: self.options.clone(),
        }
    }
}

/// What an open did (§4.2).
#[derive(Debug, Clone, PartialEq)]
pub enum OpenOutcome {
    /// A new instance: run the toolset's logic, report its visibility with `set_visible` /
    /// `set_definition`, and send `draft` (with what those returned) as the result's hints.
    Opened(Opened),
    /// It was open only implicitly, for a host without `toolHints` (§8), so the hinted
    /// hosts were never told of it: now it is theirs too. Answer as for a new instance (its
    /// logic runs on, nothing to start) and send `draft`, which states it whole.
    Revealed(Opened),
    /// It was open already: adopted, nothing changed (vector 17). The result carries
    /// `adopted: true`, describes the existing instance, and when `options_differ` its
    /// content says the requested options were not applied.
    Adopted {
        /// What was adopted.
        key: InstanceKey,
        /// The request's options differ from the instance's.
        options_differ: bool,
    },
}

/// A new instance and the changes that say so.
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    /// Its key (with the name the server chose, if the host proposed none).
    pub key: InstanceKey,
    /// `{toolset, instance, state: "open", title}` and the tools visible in it from the
    /// start (their declared `mcpl/visible`).
    pub draft: HintDraft,
}

/// An instance that ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    /// Its ended record (§4.3); none for a close the principal asked for.
    pub record: Option<EndedRecord>,
    /// `{toolset, instance, state: "closed", reason, ended: id}` (§4.3; no `ended` when
    /// asked for) and `visible: false` for each tool that was visible in it.
    pub draft: HintDraft,
    /// What it was when it ended.
    pub instance: OpenInstance,
}

/// One principal's toolset state. See the module docs for the rules.
#[derive(Debug, Clone)]
pub struct PrincipalState {
    catalog: Arc<Catalog>,
    config: PrincipalConfig,
    /// Boxed: a map's node holds room for eleven entries, so a principal with one open
    /// instance (most: the lobby) kept ~2.4 KiB for it unboxed (issue #42).
    instances: BTreeMap<InstanceKey, Box<OpenInstance>>,
    /// Tools outside declared toolsets (§4.4): visible or not, for the whole principal.
    loose: BTreeMap<String, bool>,
    /// Shared definitions replaced for this principal; only those differing from declared.
    shared_defs: BTreeMap<String, ToolDefinition>,
    ended: EndedLog,
    /// Counts the names the server picked; never reset, so a picked name is not reused.
    picked: u64,
    /// Instances open only for hosts without `toolHints` (§8, `implicit.rs`): hidden from
    /// every hinted view of this state.
    implicit: BTreeSet<InstanceKey>,
    /// The principal's version and its entries' stamps, for modern hosts (`stamps.rs`).
    stamps: Stamps,
}

impl PrincipalState {
    /// A principal's state when it first connects: the `default: "open"` toolsets are open
    /// (§4.1, vector 25), each tool with its declared starting visibility. Run the logic of
    /// each ([`PrincipalState::instances`]) before answering the first `toolsets/list`.
    ///
    /// Its ended records take their ids from `ids` (§4.3): give every state of a server a
    /// clone of the server's one source, so that a principal forgotten and created again
    /// never reissues an id its host was told.
    pub fn new(
        catalog: Arc<Catalog>,
        config: PrincipalConfig,
        ids: EndedIds,
        now: SystemTime,
    ) -> Self {
        // Its versions start past every version of the server's principals (`stamps.rs`).
        let stamps = Stamps::starting_at(ids.version_floor());
        let ended = EndedLog::new(ids, config.ended_ttl, config.max_ended);
        let loose = loose_tools(&catalog);
        let mut state = PrincipalState {
            catalog,
            config,
            instances: BTreeMap::new(),
            loose,
            shared_defs: BTreeMap::new(),
            ended,
            picked: 0,
            implicit: BTreeSet::new(),
            stamps,
        };
        let defaults: Vec<String> = state.catalog.default_open().map(str::to_owned).collect();
        for ts in defaults {
            state.insert_instance(InstanceKey::toolset(ts), None, now);
        }
        state
    }

    /// The catalog this state follows.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The open instances, in key order.
    pub fn instances(&self) -> impl Iterator<Item = &OpenInstance> {
        self.instances.values().map(|i| &**i)
    }

    /// The open instance of this key.
    pub fn instance(&self, key: &InstanceKey) -> Option<&OpenInstance> {
        self.instances.get(key).map(|i| &**i)
    }

    /// The names of the open instances of an instanced toolset, in order.
    pub fn open_names(&self, toolset: &str) -> Vec<String> {
        self.instances
            .keys()
            .filter(|k| k.toolset == toolset)
            .filter_map(|k| k.instance.clone())
            .collect()
    }

    /// The only open instance of a toolset, if exactly one is: a host without `toolHints`
    /// may leave the instance out of `toolset_close` then (§8).
    pub fn sole_instance(&self, toolset: &str) -> Option<String> {
        match self.open_names(toolset).as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }

    /// The tools visible now: a toolset's tool when visible in at least one open instance,
    /// any other by the principal's visibility — `mcpl/visible` in `tools/list` (§3), for a
    /// hinted host (instances open only implicitly left out).
    pub fn coarse_visibility(&self) -> BTreeSet<String> {
        let loose = self
            .loose
            .iter()
            .filter(|(_, v)| **v)
            .map(|(t, _)| t.clone());
        let in_instances = self
            .hinted_instances()
            .flat_map(|i| i.visible.iter().cloned());
        loose.chain(in_instances).collect()
    }

    /// The definition `tool` has now in `instance` (or outside instances): its own, else the
    /// shared one this principal sees, else the declared one.
    pub fn effective_definition(
        &self,
        tool: &str,
        instance: Option<&InstanceKey>,
    ) -> Option<ToolDefinition> {
        let declared = self.catalog.tool(tool)?.definition();
        let own = instance
            .and_then(|k| self.instances.get(k))
            .and_then(|i| i.definitions.get(tool));
        Some(
            own.or_else(|| self.shared_defs.get(tool))
                .cloned()
                .unwrap_or(declared),
        )
    }

    /// Where a change to `tool` applies: `Some(key)` of its open (or to-be-checked) instance
    /// for a declared toolset's tool, `None` for a tool outside declared toolsets.
    fn target_of(
        &self,
        tool: &str,
        instance: Option<&str>,
    ) -> Result<Option<InstanceKey>, HintError> {
        if self.catalog.tool(tool).is_none() {
            return Err(HintError::UnknownTool(tool.to_owned()));
        }
        let not_allowed = |i: &str| HintError::InstanceNotAllowed {
            tool: tool.to_owned(),
            instance: i.to_owned(),
        };
        match self.catalog.declared_toolset_of(tool) {
            None => instance.map_or(Ok(None), |i| Err(not_allowed(i))),
            Some(ts) if self.catalog.is_instanced(ts) => match instance {
                Some(i) => Ok(Some(InstanceKey::instance(ts, i))),
                None => Err(HintError::InstanceRequired {
                    tool: tool.to_owned(),
                }),
            },
            Some(ts) => instance.map_or_else(
                || Ok(Some(InstanceKey::toolset(ts))),
                |i| Err(not_allowed(i)),
            ),
        }
    }
}

/// The principal-level visibility of every tool outside declared toolsets, as declared.
fn loose_tools(catalog: &Catalog) -> BTreeMap<String, bool> {
    catalog
        .tools()
        .filter(|d| catalog.declared_toolset_of(d.name()).is_none())
        .map(|d| (d.name().to_owned(), d.is_initially_visible()))
        .collect()
}

fn visible_hint(tool: &str, key: &InstanceKey, visible: bool) -> ToolHint {
    ToolHint {
        name: tool.to_owned(),
        instance: key.instance.clone(),
        visible: Some(visible),
        ..Default::default()
    }
}

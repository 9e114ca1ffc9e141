//! `Catalog`: one server's tools as the host presents them — whether hints count at all,
//! which tools are static (in the model's tool list) and which dynamic (through the
//! meta-tools), the declared toolsets, and the undeclared groups the host opens itself.
//! Sans-IO and clock-free, like [`HintState`](super::HintState).
//!
//! # The model's tool list and its boundaries (§3, §6)
//!
//! The static tools the model sees are a **snapshot** taken at tool-list boundaries:
//! [`Catalog::model_tools`] returns the same list, byte for byte, until the Host calls
//! [`Catalog::rebuild_boundary`] where it rebuilds the list anyway (a new conversation,
//! compaction, a turn start if its policy says so). Nothing else touches the snapshot, so a
//! visibility change — which the catalog never even sees — cannot change it (vector 12),
//! and a presence move waits for the next boundary, which reports it for a notice
//! (vectors 15, 24). The first `tools/list` builds the first snapshot.
//!
//! # Who decides what
//!
//! | rule | § | here |
//! |---|---|---|
//! | hints count only when both sides advertised `toolHints`; otherwise every tool is static | §2, vector 30 | [`Catalog::hints_count`] |
//! | `mcpl/toolset` implies dynamic | §3, vector 16 | [`Catalog::set_tools`] (presence comes from the hint state, which applies it) |
//! | `instances` with `default: "open"` counts as closed | §4.1 | [`Catalog::default_open`] |
//! | a tool whose toolset is not declared forms a group the host opens and gates alone | §4.4, vector 10 | [`Catalog::open_group`], [`Catalog::gate`] |
//! | presence moves wait for the next boundary and are told in a notice | §3, vectors 15, 24 | [`Catalog::rebuild_boundary`] |
//! | a manifest change removing a toolset, or changing its `instances`, ends its instances | §4.1, vector 33 | [`Catalog::update_manifest`] → [`CatalogOutput::ToolsetRemoved`] |
//! | withdrawing `toolHints` makes every tool static, and the agent is told | §4.1, vector 34 | [`Catalog::update_manifest`] → [`CatalogOutput::HintsWithdrawn`] |
//!
//! Namespacing (`server--tool`), tool policy and the meta-tools are the Host's.

use super::keys::{FastMap, FastSet};
use super::listing::Listing;
use mcpl_protocol::mcpl::McplManifest;
use mcpl_protocol::toolsets::{Surface, ToolsetDecl};
use mcpl_protocol::{Presence, Tool};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// True when `tool` can only be called as an MCP task (MCP 2025-11-25: `execution.
/// taskSupport` is `"required"`). This host does not run tasks: such a tool is left out
/// of everything the agent is offered, and the agent is told why ([`without_task_tools`]).
pub fn needs_tasks(tool: &Tool) -> bool {
    tool.execution
        .as_ref()
        .and_then(|e| e.get("taskSupport"))
        .and_then(serde_json::Value::as_str)
        == Some("required")
}

/// `tools` without the tools that [`needs_tasks`], and their names in listed order; the
/// same shared list, nothing copied, when there are none.
pub fn without_task_tools(tools: &Arc<[Tool]>) -> (Arc<[Tool]>, Vec<String>) {
    if !tools.iter().any(needs_tasks) {
        return (tools.clone(), Vec::new());
    }
    let (left_out, kept): (Vec<&Tool>, Vec<&Tool>) = tools.iter().partition(|t| needs_tasks(t));
    (
        kept.into_iter().cloned().collect(),
        left_out.into_iter().map(|t| t.name.clone()).collect(),
    )
}

/// `tools` with each name once: a name listed again is left out after its first entry, and
/// the names repeated are returned, each once, in listed order; the same shared list,
/// nothing copied, when no name repeats. The model's list holds `server--tool` for each
/// static tool and model APIs refuse a list with a name twice, so a repeat would cost every
/// request to the model; the first entry is the one [`Catalog::tool`] has always meant (§6,
/// RFC §8.1 **\[project\]**).
pub fn without_repeats(tools: &Arc<[Tool]>) -> (Arc<[Tool]>, Vec<String>) {
    let mut seen: FastSet<&str> =
        FastSet::with_capacity_and_hasher(tools.len(), Default::default());
    let mut told: FastSet<&str> = FastSet::default();
    let mut repeated: Vec<String> = Vec::new();
    let mut keep = Vec::with_capacity(tools.len());
    for (i, t) in tools.iter().enumerate() {
        if seen.insert(t.name.as_str()) {
            keep.push(i);
        } else if told.insert(t.name.as_str()) {
            repeated.push(t.name.clone());
        }
    }
    if repeated.is_empty() {
        return (tools.clone(), repeated);
    }
    (
        keep.into_iter().map(|i| tools[i].clone()).collect(),
        repeated,
    )
}

/// What a tool's `mcpl/toolset` names: owned (`ToolsetRef`), or borrowed from the
/// catalog (`ToolsetRef<&str>`, [`Catalog::toolset_ref`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolsetRef<S = String> {
    /// A toolset the manifest declares: the server opens, closes and gates it (§4.2).
    Declared(S),
    /// A group the manifest does not declare: the host opens, closes and gates it (§4.4).
    Group(S),
}

impl ToolsetRef<&str> {
    /// The same, owning its name.
    pub fn into_owned(self) -> ToolsetRef {
        match self {
            ToolsetRef::Declared(n) => ToolsetRef::Declared(n.to_owned()),
            ToolsetRef::Group(n) => ToolsetRef::Group(n.to_owned()),
        }
    }
}

/// Whether the host may send a call to a tool (§4.4, vector 10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallGate {
    /// Send it; the server gates what it owns (§3: invisible tools, closed toolsets).
    Send,
    /// Refuse without sending: the tool's undeclared group is closed.
    ClosedGroup {
        /// The group.
        group: String,
    },
    /// The server did not list such a tool.
    Unknown,
}

/// What the catalog reports for the presenter and the link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogOutput {
    /// At this boundary the tool entered (static) or left (dynamic) the model's tool list:
    /// tell the agent in a notice (§3, vectors 15, 24).
    PresenceMoved {
        /// The tool.
        tool: String,
        /// Its presence now.
        presence: Presence,
    },
    /// The manifest declares a toolset it did not.
    ToolsetAdded {
        /// The toolset.
        toolset: String,
    },
    /// The manifest no longer declares a toolset, or declares it with another `instances`
    /// flag (a removal plus an addition, §4.1 **\[project\]**): its instances are closed —
    /// the link calls [`HintState::close_toolset`](super::HintState::close_toolset) — and
    /// the agent is told (vector 33).
    ToolsetRemoved {
        /// The toolset.
        toolset: String,
    },
    /// The server withdrew `toolHints`: every tool is static from now on (entering the
    /// model's list at the next boundary), hints are ignored, and the agent is told
    /// (vector 34).
    HintsWithdrawn,
    /// The server advertises `toolHints` again (the host did all along): the link starts a
    /// fresh hint state and reads `toolsets/list` and `tools/list`.
    HintsAdvertised,
}

/// One server's catalog (see the module doc).
#[derive(Debug, Clone)]
pub struct Catalog {
    host_hints: bool,
    server_hints: bool,
    toolsets: BTreeMap<String, ToolsetDecl>,
    surface: Option<Surface>,
    /// Every listed tool, in listed order: the list the link read, shared with the hint
    /// state; each name's entry is where it first is (a name listed twice is its first
    /// entry).
    listing: Listing<usize>,
    /// The toolsets named by listed tools, declared or not.
    named: BTreeSet<String>,
    /// Current presence, as the hint state last said (moves wait for a boundary).
    presence: FastMap<String, Presence>,
    /// Undeclared groups the host has open (§4.4).
    groups_open: BTreeSet<String>,
    /// The snapshot: the static tools as of the last boundary, and every tool's presence.
    model: Vec<Tool>,
    model_presence: FastMap<String, Presence>,
    built: bool,
}

impl Catalog {
    /// A catalog from the `initialize` exchange: whether the host advertised `toolHints`,
    /// and the server's manifest (`capabilities.experimental.mcpl`), if it sent one.
    pub fn new(host_tool_hints: bool, manifest: Option<&McplManifest>) -> Self {
        let mut c = Catalog {
            host_hints: host_tool_hints,
            server_hints: false,
            toolsets: BTreeMap::new(),
            surface: None,
            listing: Listing::default(),
            named: BTreeSet::new(),
            presence: FastMap::default(),
            groups_open: BTreeSet::new(),
            model: Vec::new(),
            model_presence: FastMap::default(),
            built: false,
        };
        c.take_manifest(manifest);
        c
    }

    fn take_manifest(&mut self, manifest: Option<&McplManifest>) {
        self.server_hints = manifest.is_some_and(McplManifest::has_tool_hints);
        self.toolsets = manifest.map(|m| m.toolsets.clone()).unwrap_or_default();
        self.surface = manifest.and_then(|m| m.surface.clone());
    }

    /// §2: hints count only when both sides advertised `toolHints`. When they do not, a
    /// link feeds no hint state and every tool is static (vector 30).
    pub fn hints_count(&self) -> bool {
        self.host_hints && self.server_hints
    }

    /// Takes a complete `tools/list` (every page). `presence` gives each tool's presence as
    /// the connection's hint state holds it (stamped, §3); where it has none, the tool's
    /// own `_meta` decides (`mcpl/toolset` implying dynamic, vector 16). The first list
    /// builds the model's list; later ones wait for a boundary like any change.
    ///
    /// The tools are copied once; [`Catalog::set_tools_shared`] keeps a list the caller
    /// shares (with the hint state) without copying it.
    pub fn set_tools(&mut self, tools: &[Tool], presence: impl Fn(&str) -> Option<Presence>) {
        self.set_tools_shared(Arc::from(tools), presence);
    }

    /// [`Catalog::set_tools`], keeping a shared list: the catalog holds `tools` itself, not
    /// a copy of each tool.
    pub fn set_tools_shared(
        &mut self,
        tools: Arc<[Tool]>,
        presence: impl Fn(&str) -> Option<Presence>,
    ) {
        let mut by_name = FastMap::with_capacity_and_hasher(tools.len(), Default::default());
        for (i, t) in tools.iter().enumerate() {
            by_name.entry(t.name.clone()).or_insert(i);
        }
        // Each name once: most tools share their toolset's.
        let named: BTreeSet<&str> = tools.iter().filter_map(toolset_named).collect();
        self.named = named.into_iter().map(str::to_owned).collect();
        self.presence = tools
            .iter()
            .map(|t| {
                let p = presence(&t.name).unwrap_or_else(|| {
                    t.meta
                        .as_ref()
                        .map_or(Presence::Static, |m| m.effective_presence())
                });
                (t.name.clone(), p)
            })
            .collect();
        self.listing = Listing { tools, by_name };
        let groups: BTreeSet<String> = self.groups().into_iter().map(str::to_owned).collect();
        self.groups_open.retain(|g| groups.contains(g));
        if !self.built {
            self.rebuild_boundary();
        }
    }

    /// A presence move the hint state reported (`Change::Presence`). It reaches the
    /// model's list at the next boundary (§3). Ignored when hints do not count.
    pub fn set_presence(&mut self, tool: &str, presence: Presence) {
        if self.hints_count() && self.presence.contains_key(tool) {
            self.presence.insert(tool.to_owned(), presence);
        }
    }

    /// A tool's presence now (static for every tool when hints do not count, §2).
    pub fn presence(&self, tool: &str) -> Option<Presence> {
        let p = *self.presence.get(tool)?;
        Some(if self.hints_count() {
            p
        } else {
            Presence::Static
        })
    }

    /// True when a presence move waits for the next boundary.
    pub fn has_pending(&self) -> bool {
        self.listing
            .tools
            .iter()
            .any(|t| self.presence(&t.name) != self.model_presence.get(&t.name).copied())
    }

    /// A tool-list boundary (§3): the model's list is rebuilt from the current tools and
    /// presence, and each tool that moved since the last boundary is reported for a notice.
    /// The first build reports nothing: it is the list the conversation starts with.
    pub fn rebuild_boundary(&mut self) -> Vec<CatalogOutput> {
        let mut out = Vec::new();
        let mut model_presence =
            FastMap::with_capacity_and_hasher(self.listing.tools.len(), Default::default());
        for t in self.listing.tools.iter() {
            let Some(p) = self.presence(&t.name) else {
                continue;
            };
            if self.built
                && let Some(before) = self.model_presence.get(&t.name)
                && *before != p
            {
                out.push(CatalogOutput::PresenceMoved {
                    tool: t.name.clone(),
                    presence: p,
                });
            }
            model_presence.insert(t.name.clone(), p);
        }
        self.model = self
            .listing
            .tools
            .iter()
            .filter(|t| model_presence.get(&t.name) == Some(&Presence::Static))
            .cloned()
            .collect();
        self.model_presence = model_presence;
        self.built = true;
        out
    }

    /// The static tools in the model's list, as of the last boundary (§6: dynamic tools
    /// never enter it). Unchanged between boundaries (vector 12).
    pub fn model_tools(&self) -> &[Tool] {
        &self.model
    }

    /// Every listed tool, in listed order (static and dynamic).
    pub fn listed_tools(&self) -> impl ExactSizeIterator<Item = &Tool> {
        self.listing.tools.iter()
    }

    /// A tool's presence as of the last boundary: what the model's list reflects now. A
    /// move waits here until the next boundary (§3); None for a tool listed since.
    pub fn model_presence(&self, tool: &str) -> Option<Presence> {
        self.model_presence.get(tool).copied()
    }

    /// The dynamic tools as of now, for the meta-tools (`look`, `act`).
    pub fn dynamic_tools(&self) -> impl Iterator<Item = &Tool> {
        self.listing
            .tools
            .iter()
            .filter(|t| self.presence(&t.name) == Some(Presence::Dynamic))
    }

    /// The listed tool (the first, for a name listed twice).
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.listing.tool(name)
    }

    /// The toolset or group a tool belongs to; none when hints do not count.
    pub fn toolset_of(&self, tool: &str) -> Option<ToolsetRef> {
        self.toolset_ref(tool).map(ToolsetRef::into_owned)
    }

    /// The name of the toolset or group a tool belongs to; none when hints do not count.
    pub fn toolset_name(&self, tool: &str) -> Option<&str> {
        if !self.hints_count() {
            return None;
        }
        toolset_named(self.tool(tool)?)
    }

    /// [`Catalog::toolset_of`], borrowed.
    pub fn toolset_ref(&self, tool: &str) -> Option<ToolsetRef<&str>> {
        if !self.hints_count() {
            return None;
        }
        let name = toolset_named(self.tool(tool)?)?;
        Some(if self.toolsets.contains_key(name) {
            ToolsetRef::Declared(name)
        } else {
            ToolsetRef::Group(name)
        })
    }

    /// The declared toolsets, by name (none when hints do not count).
    pub fn toolsets(&self) -> impl Iterator<Item = (&str, &ToolsetDecl)> {
        let on = self.hints_count();
        self.toolsets
            .iter()
            .filter(move |_| on)
            .map(|(n, d)| (n.as_str(), d))
    }

    /// A declared toolset (none when hints do not count).
    pub fn declaration(&self, toolset: &str) -> Option<&ToolsetDecl> {
        self.toolsets.get(toolset).filter(|_| self.hints_count())
    }

    /// The toolsets open from the start of every session, which the host adopts from
    /// `toolsets/list` (vector 25). One with `instances` counts as closed (§4.1).
    pub fn default_open(&self) -> Vec<&str> {
        self.toolsets()
            .filter(|(_, d)| d.is_default_open())
            .map(|(n, _)| n)
            .collect()
    }

    /// The server as a whole (§10).
    pub fn surface(&self) -> Option<&Surface> {
        self.surface.as_ref().filter(|_| self.hints_count())
    }

    /// The undeclared groups: toolsets named by listed tools but not declared (§4.4).
    pub fn groups(&self) -> Vec<&str> {
        if !self.hints_count() {
            return Vec::new();
        }
        self.named
            .iter()
            .map(String::as_str)
            .filter(|n| !self.toolsets.contains_key(*n))
            .collect()
    }

    /// True when `name` is an undeclared group: a toolset listed tools name that the
    /// manifest does not declare (§4.4). False for every name when hints do not count.
    pub fn is_group(&self, name: &str) -> bool {
        self.hints_count() && self.named.contains(name) && !self.toolsets.contains_key(name)
    }

    /// Opens an undeclared group, on the host alone: no `toolsets/open` is sent (§4.4,
    /// vector 10). False when `group` is not one (a declared toolset is the server's).
    pub fn open_group(&mut self, group: &str) -> bool {
        if !self.is_group(group) {
            return false;
        }
        self.groups_open.insert(group.to_owned());
        true
    }

    /// Closes an undeclared group; false when it was not open.
    pub fn close_group(&mut self, group: &str) -> bool {
        self.groups_open.remove(group)
    }

    /// True when the host has the undeclared group open.
    pub fn is_group_open(&self, group: &str) -> bool {
        self.groups_open.contains(group)
    }

    /// Whether a call to `tool` may be sent. The host gates only undeclared groups, which
    /// the server cannot know about (§4.4, vector 10); everything else the server gates.
    pub fn gate(&self, tool: &str) -> CallGate {
        if self.tool(tool).is_none() {
            return CallGate::Unknown;
        }
        match self.toolset_of(tool) {
            Some(ToolsetRef::Group(group)) if !self.groups_open.contains(&group) => {
                CallGate::ClosedGroup { group }
            }
            _ => CallGate::Send,
        }
    }

    /// The server's manifest changed (the `toolsets` domain, §4.1): re-reads the
    /// declarations and reports what the host must do and tell.
    ///
    /// - A toolset no longer declared, or declared with another `instances` flag, is
    ///   removed (and, in the second case, added): its instances end (vector 33). One that
    ///   becomes undeclared while tools still name it is a group, and starts closed
    ///   **\[project\]**; a group that becomes declared is the server's from now on.
    /// - Withdrawn `toolHints`: every tool is static from now on (vector 34); the moves into
    ///   the model's list wait for the next boundary, like any presence move.
    pub fn update_manifest(&mut self, manifest: Option<&McplManifest>) -> Vec<CatalogOutput> {
        let counted = self.hints_count();
        let before = std::mem::take(&mut self.toolsets);
        self.take_manifest(manifest);
        let mut out = Vec::new();
        match (counted, self.hints_count()) {
            (true, false) => {
                // Every declared toolset goes with the hints.
                out.extend(
                    before
                        .into_keys()
                        .map(|toolset| CatalogOutput::ToolsetRemoved { toolset }),
                );
                out.push(CatalogOutput::HintsWithdrawn);
                self.groups_open.clear();
                return out;
            }
            (false, true) => {
                out.push(CatalogOutput::HintsAdvertised);
                return out;
            }
            (false, false) => return out,
            (true, true) => {}
        }
        for (name, old) in &before {
            match self.toolsets.get(name) {
                None => out.push(CatalogOutput::ToolsetRemoved {
                    toolset: name.clone(),
                }),
                Some(new) if new.instances != old.instances => {
                    out.push(CatalogOutput::ToolsetRemoved {
                        toolset: name.clone(),
                    });
                    out.push(CatalogOutput::ToolsetAdded {
                        toolset: name.clone(),
                    });
                }
                Some(_) => {}
            }
        }
        for name in self.toolsets.keys() {
            if !before.contains_key(name) {
                out.push(CatalogOutput::ToolsetAdded {
                    toolset: name.clone(),
                });
            }
        }
        // A group that is now declared is the server's to open; one that became a group
        // (it was declared) starts closed.
        let toolsets = &self.toolsets;
        self.groups_open.retain(|g| !toolsets.contains_key(g));
        out
    }
}

/// The toolset a listed tool's `mcpl/toolset` names.
fn toolset_named(t: &Tool) -> Option<&str> {
    t.meta.as_ref()?.toolset.as_deref()
}

#[cfg(test)]
mod tests;

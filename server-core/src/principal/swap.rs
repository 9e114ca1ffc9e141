//! Following a manifest change (§4.1, vector 33).
//!
//! [`PrincipalState::replace_catalog`] moves a principal to a new catalog:
//!
//! - a toolset no longer declared, or whose `instances` flag changed (a removal plus an
//!   addition, **\[project\]**), has its instances **ended** with ended records, so every
//!   host is told (vector 33);
//! - tools that left an instance's toolset (or the catalog) stop being visible in it and
//!   lose their definitions there;
//! - tools now outside declared toolsets (including those of a toolset that became an
//!   undeclared group, which starts closed on the host, §4.1) take their declared starting
//!   visibility for the principal; tools that left that set lose their principal-level state;
//! - replaced definitions of tools that are gone or no longer dynamic are dropped; where a
//!   tool's declared definition changed, its shared definition and every instance's own
//!   one are restated as values, so hosts holding one equal to the old declared definition
//!   fall in line (entries are values; nothing on the wire says "forget it");
//! - a newly declared `default: "open"` toolset is opened, as for a new principal.
//!
//! Declaration changes that keep a toolset and its `instances` flag (title, options…)
//! leave its instances open; a toolset that merely changed to `default: "open"` is not
//! opened for principals that already exist. The actor sends `tools/list_changed` when
//! [`ManifestDiff::tools_changed`] and `mcpl/manifestChanged` naming the `toolsets` domain
//! when [`ManifestDiff::toolsets_domain_changed`]; hosts re-read declared definitions from
//! `tools/list`.

use super::{Ended, InstanceKey, Opened, PrincipalState, loose_tools, visible_hint};
use crate::catalog::{Catalog, ManifestDiff};
use crate::draft::HintDraft;
use mcpl_protocol::hints::ToolHint;
use std::sync::Arc;
use std::time::SystemTime;

/// What moving to a new catalog did.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogSwap {
    /// What changed between the two catalogs.
    pub diff: ManifestDiff,
    /// Instances ended because their toolset was removed.
    pub ended: Vec<Ended>,
    /// Newly declared default-open toolsets, opened: run their logic.
    pub opened: Vec<Opened>,
    /// Every change to send (the ends, visibility lost or gained, the opens), in order.
    pub draft: HintDraft,
}

impl PrincipalState {
    /// Moves this principal to `catalog` (a manifest change).
    pub fn replace_catalog(&mut self, catalog: Arc<Catalog>, now: SystemTime) -> CatalogSwap {
        let diff = self.catalog.diff(&catalog);
        let old = Arc::clone(&self.catalog);
        let mut draft = HintDraft::new();
        let mut ended = Vec::new();
        for ts in &diff.removed_toolsets {
            // §4.1 [project]: a flipped `instances` flag ends the instances too; say so
            // rather than that the toolset is gone.
            let reason = match catalog.toolset(ts) {
                Some(now) if now.instances => {
                    format!("the server now offers the toolset {ts} as named instances")
                }
                Some(_) => format!("the server now offers the toolset {ts} without instances"),
                None => format!("the server no longer offers the toolset {ts}"),
            };
            for e in self.end_toolset(ts, &reason, now) {
                draft.append(e.draft.clone());
                ended.push(e);
            }
        }
        self.catalog = catalog;

        // Instances that stay: keep only their toolset's (dynamic) tools.
        for inst in self.instances.values_mut() {
            let tools = self.catalog.tools_of(&inst.key.toolset);
            let gone: Vec<String> = inst
                .visible
                .iter()
                .filter(|t| !tools.contains(t))
                .cloned()
                .collect();
            let told = !self.implicit.contains(&inst.key);
            for t in gone {
                inst.visible.remove(&t);
                if told {
                    draft.tools.push(visible_hint(&t, &inst.key, false));
                }
            }
            inst.definitions.retain(|t, _| tools.contains(t));
        }

        // Tools outside declared toolsets: keep what stays, start what is new.
        let fresh = loose_tools(&self.catalog);
        let previous = std::mem::take(&mut self.loose);
        for (tool, declared) in fresh {
            let visible = match previous.get(&tool) {
                Some(v) => *v,
                None => {
                    if declared && self.catalog.tool(&tool).is_some_and(|d| d.is_dynamic()) {
                        draft.tools.push(ToolHint {
                            name: tool.clone(),
                            visible: Some(true),
                            ..Default::default()
                        });
                    }
                    declared
                }
            };
            self.loose.insert(tool, visible);
        }
        // A tool told visible outside toolsets that a declared toolset now holds: its
        // principal-level visibility is gone, so say so — else the host keeps believing
        // it visible, under the same (tool, no instance) key the toolset's open would use
        // (found by the principal property test). Not where that toolset is open (and
        // told) with the tool visible in it: that statement stands.
        for (tool, was_visible) in previous {
            if !was_visible || self.loose.contains_key(&tool) {
                continue;
            }
            let told_dynamic = self.catalog.tool(&tool).is_some_and(|d| d.is_dynamic());
            let still_visible = self.catalog.declared_toolset_of(&tool).is_some_and(|ts| {
                let key = InstanceKey::toolset(ts);
                !self.implicit.contains(&key)
                    && self
                        .instances
                        .get(&key)
                        .is_some_and(|i| i.visible.contains(&tool))
            });
            if told_dynamic && !still_visible {
                draft.tools.push(ToolHint {
                    name: tool,
                    visible: Some(false),
                    ..Default::default()
                });
            }
        }

        // Definitions: drop those of tools gone or static. Where a declared definition
        // changed, restate the shared value and every instance's own one, so a host that
        // holds one of them (equal to the old declared one) falls in line.
        let catalog = Arc::clone(&self.catalog);
        self.shared_defs.retain(|t, def| {
            catalog
                .tool(t)
                .is_some_and(|d| d.is_dynamic() && d.definition() != *def)
        });
        for d in catalog.tools().filter(|d| d.is_dynamic()) {
            let was = old.tool(d.name()).map(|o| o.definition());
            if was.is_some_and(|w| w != d.definition()) {
                let shared = self.effective_definition(d.name(), None);
                draft.tools.extend(shared.map(|s| ToolHint {
                    name: d.name().to_owned(),
                    definition: Some(s),
                    ..Default::default()
                }));
                draft.tools.extend(self.own_definitions_of(d.name()));
            }
        }

        let mut opened = Vec::new();
        for ts in &diff.added_toolsets {
            let key = InstanceKey::toolset(ts.clone());
            if self
                .catalog
                .toolset(ts)
                .is_some_and(|d| d.is_default_open())
                && !self.instances.contains_key(&key)
            {
                let o = self.insert_instance(key, None, now);
                draft.append(o.draft.clone());
                opened.push(o);
            }
        }
        // One entry per tool, its final value (§5.1: entries are values): a tool leaving an
        // ended instance and becoming an undeclared group's tool is said once. Safe here:
        // a swap never closes and re-opens one instance (a re-declared toolset is a new
        // key, or not default-open), the case `compact` must not fold.
        draft.compact();
        CatalogSwap {
            diff,
            ended,
            opened,
            draft,
        }
    }
}

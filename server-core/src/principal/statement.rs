//! The full statement: `toolsets/list` (§4.3, vectors 23, 25, 38).
//!
//! `{open, ended, _meta: {"mcpl/hints"}}` where the hints state the whole hint state of the
//! principal's dynamic tools:
//!
//! - every tool visible in each open instance (`instance` named for an instanced toolset);
//! - every visible dynamic tool outside declared toolsets;
//! - every current definition that differs from what the host would otherwise assume: a
//!   shared definition that differs from the declared one, and an instance's own one (which
//!   differs from the shared one, or the declared one when none is shared).
//!
//! **A dynamic tool not stated visible is invisible**: a host replaces its whole state with
//! it. The hints take the next rev even when empty ([`Statement::into_result`]), and the
//! `ended` list leaves out records expired at `now`.

use super::PrincipalState;
use crate::draft::HintDraft;
#[cfg(test)]
use crate::sequencer::Sequencer;
use mcpl_protocol::hints::ToolHint;
#[cfg(test)]
use mcpl_protocol::meta::Meta;
#[cfg(test)]
use mcpl_protocol::toolsets::ToolsetsListResult;
use mcpl_protocol::toolsets::{EndedRecord, OpenRecord};
use std::collections::BTreeMap;
use std::time::SystemTime;

/// A principal's full statement, before the connection numbers it.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// What is open (default-open toolsets included, vector 25).
    pub open: Vec<OpenRecord>,
    /// What ended and has not expired.
    pub ended: Vec<EndedRecord>,
    /// The hint state of the principal's dynamic tools.
    pub hints: HintDraft,
}

impl Statement {
    /// The `toolsets/list` result, its hints stamped with this connection's next rev —
    /// always, even when they are empty (§4.3, vector 38).
    #[cfg(test)]
    pub fn into_result(self, sequencer: &mut Sequencer) -> ToolsetsListResult {
        ToolsetsListResult {
            open: self.open,
            ended: self.ended,
            meta: Meta::with_hints(sequencer.stamp(self.hints)),
        }
    }
}

impl PrincipalState {
    /// The full statement at `now` (§4.3). Entries come in a stable order: by tool name,
    /// then instance; one entry per tool and instance, with `visible` and `definition` as
    /// they apply.
    pub fn statement(&self, now: SystemTime) -> Statement {
        let mut entries: Entries = BTreeMap::new();
        // Instances open only for plain hosts are not stated (§8, `implicit.rs`).
        for inst in self.hinted_instances() {
            let instance = inst.key.instance.as_deref();
            for tool in &inst.visible {
                entry(&mut entries, tool, instance).visible = Some(true);
            }
        }
        for (tool, _) in self.loose.iter().filter(|(_, visible)| **visible) {
            if self.catalog.tool(tool).is_some_and(|d| d.is_dynamic()) {
                entry(&mut entries, tool, None).visible = Some(true);
            }
        }
        for (tool, def) in &self.shared_defs {
            entry(&mut entries, tool, None).definition = Some(def.clone());
        }
        for inst in self.hinted_instances() {
            for (tool, def) in &inst.definitions {
                // Equal to what the host would fall back to: left out. It is restated if
                // that fallback ever changes (`set_definition`, `replace_catalog`).
                if self.effective_definition(tool, None).as_ref() != Some(def) {
                    entry(&mut entries, tool, inst.key.instance.as_deref()).definition =
                        Some(def.clone());
                }
            }
        }
        Statement {
            open: self.hinted_instances().map(|i| i.record()).collect(),
            ended: self.ended.live(now).cloned().collect(),
            hints: HintDraft {
                tools: entries.into_values().collect(),
                ..Default::default()
            },
        }
    }
}

/// One entry per tool and instance, in a stable order.
type Entries = BTreeMap<(String, Option<String>), ToolHint>;

fn entry<'a>(entries: &'a mut Entries, tool: &str, instance: Option<&str>) -> &'a mut ToolHint {
    entries
        .entry((tool.to_owned(), instance.map(str::to_owned)))
        .or_insert_with(|| ToolHint {
            name: tool.to_owned(),
            instance: instance.map(str::to_owned),
            ..Default::default()
        })
}

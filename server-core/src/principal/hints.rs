//! Visibility, definitions and titles, as the toolset's logic reports them (§5.1).
//!
//! Each method changes the principal's state and returns the entries to send to every
//! connection of the principal: **values**, never differences, and none when nothing
//! changed. A definition is stated whole: members left out of a change keep those of the
//! definition it replaces, so every entry is a complete `definition` a host can apply alone.

use super::{HintError, InstanceKey, PrincipalState, visible_hint};
use crate::draft::HintDraft;
use mcpl_protocol::hints::{ToolDefinition, ToolHint, ToolsetChange, ToolsetState};

impl PrincipalState {
    /// Makes `tool` visible or not (§5.1): in `instance` of its instanced toolset, in its
    /// toolset without instances (`instance: None`), or for the principal when it is outside
    /// declared toolsets. Returns the entry to send, or an empty draft when nothing changed.
    pub fn set_visible(
        &mut self,
        tool: &str,
        instance: Option<&str>,
        visible: bool,
    ) -> Result<HintDraft, HintError> {
        let mut draft = HintDraft::new();
        match self.target_of(tool, instance)? {
            Some(key) => {
                let inst = self
                    .instances
                    .get_mut(&key)
                    .ok_or_else(|| HintError::NotOpen(key.clone()))?;
                let changed = if visible {
                    inst.visible.insert(tool.to_owned())
                } else {
                    inst.visible.remove(tool)
                };
                if changed {
                    draft.tools.push(visible_hint(tool, &key, visible));
                }
                draft = self.told(&key, draft);
            }
            None => {
                let declared = self
                    .catalog
                    .tool(tool)
                    .is_some_and(|d| d.is_initially_visible());
                let current = self.loose.entry(tool.to_owned()).or_insert(declared);
                if *current != visible {
                    *current = visible;
                    draft.tools.push(ToolHint {
                        name: tool.to_owned(),
                        visible: Some(visible),
                        ..Default::default()
                    });
                }
            }
        }
        Ok(draft)
    }

    /// Sets a dynamic tool's definition (§5.1, vector 7) — for `instance` (that instance's
    /// own: a game's legal moves) or, with `None`, the shared one this principal sees.
    /// Only `description`, `inputSchema` and `annotations` count; members left out keep the
    /// definition they replace. Entries state whole definitions (values); an empty draft
    /// when nothing changed.
    ///
    /// `definition: None` goes back: the shared one to the declared one; an instance's to
    /// the shared (or declared) one **as it is now**. An instance's own definition is
    /// sticky — a host keeps it until the instance closes, since no value on the wire says
    /// "use the shared one again" — so the state keeps it too. For the same reason, when the
    /// shared definition changes, every instance's own definition of the tool is restated
    /// beside it: a host that read a statement which left an own definition out (equal to
    /// the shared one then) must not follow the shared one where the server does not.
    pub fn set_definition(
        &mut self,
        tool: &str,
        instance: Option<&str>,
        definition: Option<ToolDefinition>,
    ) -> Result<HintDraft, HintError> {
        let decl = self
            .catalog
            .tool(tool)
            .ok_or_else(|| HintError::UnknownTool(tool.to_owned()))?;
        if !decl.is_dynamic() {
            return Err(HintError::StaticDefinition(tool.to_owned()));
        }
        let declared = decl.definition();
        let mut draft = HintDraft::new();
        match instance {
            None => {
                let old = self
                    .shared_defs
                    .get(tool)
                    .cloned()
                    .unwrap_or_else(|| declared.clone());
                let new = definition.map_or_else(|| declared.clone(), |d| complete(d, &old));
                if new == old {
                    return Ok(draft);
                }
                if new == declared {
                    self.shared_defs.remove(tool);
                } else {
                    self.shared_defs.insert(tool.to_owned(), new.clone());
                }
                draft.tools.push(definition_hint(tool, None, new));
                draft.tools.extend(self.own_definitions_of(tool));
            }
            Some(_) => {
                let key = self
                    .target_of(tool, instance)?
                    .expect("an instance was named");
                let fallback = self.shared_defs.get(tool).cloned().unwrap_or(declared);
                let inst = self
                    .instances
                    .get_mut(&key)
                    .ok_or_else(|| HintError::NotOpen(key.clone()))?;
                let old = inst
                    .definitions
                    .get(tool)
                    .cloned()
                    .unwrap_or_else(|| fallback.clone());
                let new = definition.map_or_else(|| fallback.clone(), |d| complete(d, &old));
                if new != old {
                    inst.definitions.insert(tool.to_owned(), new.clone());
                    draft
                        .tools
                        .push(definition_hint(tool, key.instance.as_deref(), new));
                }
                draft = self.told(&key, draft);
            }
        }
        Ok(draft)
    }

    /// Every instance's own definition of `tool`, as entries (a restatement).
    pub(super) fn own_definitions_of(&self, tool: &str) -> Vec<ToolHint> {
        self.hinted_instances()
            .filter_map(|i| {
                let def = i.definitions.get(tool)?;
                Some(definition_hint(
                    tool,
                    i.key.instance.as_deref(),
                    def.clone(),
                ))
            })
            .collect()
    }

    /// Retitles an open instance ("Go 9x9 vs bot — your move"): `{state: "open", title}`,
    /// a change with the same state (§5.1). Empty when the title is the same.
    pub fn retitle(&mut self, key: &InstanceKey, title: &str) -> Result<HintDraft, HintError> {
        let inst = self
            .instances
            .get_mut(key)
            .ok_or_else(|| HintError::NotOpen(key.clone()))?;
        let mut draft = HintDraft::new();
        if inst.title.as_deref() != Some(title) {
            inst.title = Some(title.to_owned());
            draft.toolsets.push(ToolsetChange {
                toolset: key.toolset.clone(),
                instance: key.instance.clone(),
                state: ToolsetState::Open,
                title: Some(title.to_owned()),
                reason: None,
                ended: None,
            });
        }
        Ok(self.told(key, draft))
    }
}

fn definition_hint(tool: &str, instance: Option<&str>, definition: ToolDefinition) -> ToolHint {
    ToolHint {
        name: tool.to_owned(),
        instance: instance.map(str::to_owned),
        definition: Some(definition),
        ..Default::default()
    }
}

/// A definition as a value (§5.1): the three members that count, those left out taken from
/// `base`; `name` repeated, `_meta` dropped (a host keeps the listed ones, vector 20).
fn complete(d: ToolDefinition, base: &ToolDefinition) -> ToolDefinition {
    ToolDefinition {
        name: base.name.clone(),
        description: d.description.or_else(|| base.description.clone()),
        input_schema: d.input_schema.or_else(|| base.input_schema.clone()),
        annotations: d.annotations.or_else(|| base.annotations.clone()),
        meta: None,
    }
}

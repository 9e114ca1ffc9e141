//! Where a `tools/call` goes (§3, §4.4, §4.5).
//!
//! - A tool outside declared toolsets runs when the principal sees it visible; an
//!   undeclared group's calls are gated by the host (§4.4), so here only visibility counts.
//! - A tool of a declared toolset without instances runs when the toolset is open and the
//!   tool visible in it.
//! - An instance-bound tool (§4.5): the instance named by `_meta["mcpl/instance"]` (or,
//!   for a host without `toolHints`, by the `instance` argument, §8); with none named,
//!   the only open instance. Several open and none named fails **naming them** (vector 6);
//!   an unknown name fails naming the open ones.
//! - A tool of a declared toolset that is not open, or a tool not visible in its target,
//!   is refused with a tool error that says why (§3, vector 11).
//!
//! - A **read-only** tool (`annotations.readOnlyHint`) of an instance that has ended, named
//!   or (with none open and none named) the toolset's latest, is answered with the last view
//!   its logic left with the ended record, for as long as the record is kept (§4.3
//!   **\[project\]**): a finished game's final board stays readable.
//!
//! The hint `instance` is the principal's own name for its instance (§7): a refusal lists
//! only this principal's instances.

use super::{CallRefusal, InstanceKey, PrincipalState};

/// Where an accepted call goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The tool.
    pub tool: String,
    /// The instance it runs in; `None` for a tool outside declared toolsets.
    pub key: Option<InstanceKey>,
}

impl PrincipalState {
    /// Resolves a hinted host's call of `tool`, with the instance the host named if any
    /// (§4.5). An instance open only implicitly (§8) is not open for it.
    pub fn resolve_call(&self, tool: &str, requested: Option<&str>) -> Result<Target, CallRefusal> {
        self.resolve(tool, requested, false)
    }

    /// Resolves a call from a host without `toolHints` (§8): the instances opened
    /// implicitly for it count as open.
    pub fn resolve_plain_call(
        &self,
        tool: &str,
        requested: Option<&str>,
    ) -> Result<Target, CallRefusal> {
        self.resolve(tool, requested, true)
    }

    fn resolve(
        &self,
        tool: &str,
        requested: Option<&str>,
        plain: bool,
    ) -> Result<Target, CallRefusal> {
        if self.catalog.tool(tool).is_none() {
            return Err(CallRefusal::UnknownTool {
                tool: tool.to_owned(),
            });
        }
        let not_applicable = |i: &str| CallRefusal::InstanceNotApplicable {
            tool: tool.to_owned(),
            instance: i.to_owned(),
        };
        let Some(toolset) = self.catalog.declared_toolset_of(tool) else {
            if let Some(i) = requested {
                return Err(not_applicable(i));
            }
            if !self.loose.get(tool).copied().unwrap_or(false) {
                return Err(CallRefusal::Invisible {
                    tool: tool.to_owned(),
                    target: None,
                });
            }
            return Ok(Target {
                tool: tool.to_owned(),
                key: None,
            });
        };
        let key = if self.catalog.is_instanced(toolset) {
            let open = self.open_names(toolset);
            if let Some(view) = self.ended_view(tool, toolset, requested, &open) {
                return Err(view);
            }
            let name = match (requested, open.as_slice()) {
                (Some(i), open) if open.iter().any(|o| o == i) => i.to_owned(),
                (Some(i), _) => {
                    return Err(CallRefusal::UnknownInstance {
                        tool: tool.to_owned(),
                        toolset: toolset.to_owned(),
                        instance: i.to_owned(),
                        open,
                    });
                }
                // §4.5: with exactly one open, a call without a name goes to it.
                (None, [only]) => only.clone(),
                (None, []) => {
                    return Err(CallRefusal::ToolsetNotOpen {
                        tool: tool.to_owned(),
                        toolset: toolset.to_owned(),
                    });
                }
                // Vector 6: several open, none named.
                (None, _) => {
                    return Err(CallRefusal::AmbiguousInstance {
                        tool: tool.to_owned(),
                        toolset: toolset.to_owned(),
                        open,
                    });
                }
            };
            InstanceKey::instance(toolset, name)
        } else {
            if let Some(i) = requested {
                return Err(not_applicable(i));
            }
            InstanceKey::toolset(toolset)
        };
        let found = self.instances.get(&key);
        let Some(instance) = found.filter(|_| plain || !self.implicit.contains(&key)) else {
            return Err(CallRefusal::ToolsetNotOpen {
                tool: tool.to_owned(),
                toolset: toolset.to_owned(),
            });
        };
        if !instance.is_visible(tool) {
            return Err(CallRefusal::Invisible {
                tool: tool.to_owned(),
                target: Some(key),
            });
        }
        Ok(Target {
            tool: tool.to_owned(),
            key: Some(key),
        })
    }

    /// The answer of a read-only `tool` of `toolset` whose instance has ended: the one
    /// `requested` when it is not open, or the latest when none is open nor named — from the
    /// last view kept with its ended record (module docs).
    fn ended_view(
        &self,
        tool: &str,
        toolset: &str,
        requested: Option<&str>,
        open: &[String],
    ) -> Option<CallRefusal> {
        let read_only = self
            .catalog
            .tool(tool)
            .and_then(|t| t.tool().annotations.as_ref())
            .and_then(|a| a.read_only_hint)
            == Some(true);
        let ended = match requested {
            Some(i) if !open.iter().any(|o| o == i) => Some(i),
            None if open.is_empty() => None,
            _ => return None,
        };
        if !read_only {
            return None;
        }
        let (record, view) = self.ended.view_of(toolset, ended)?;
        Some(CallRefusal::Ended {
            tool: tool.to_owned(),
            toolset: toolset.to_owned(),
            instance: record.instance.clone(),
            reason: record.reason.clone(),
            view: view.to_owned(),
        })
    }
}

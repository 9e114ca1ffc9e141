//! Applying one message's entries, in rev order (§5.1, §5.2), and presence by stamp (§3).
//!
//! State is stored for every tool; changes are *reported* only for tools not known static,
//! since a static tool's visibility is the server's to gate and its definition changes only
//! through `notifications/tools/list_changed` (§3, §5.1). Keeping the state lets a tool that
//! moves to dynamic be shown as it is.

use super::{DefinitionOverride, HintState, SetKey, ToolKey, changed};
use crate::state::keys::probe;
use crate::state::output::{Carrier, Cause, Change, Output};
use mcpl_protocol::hints::ToolsetChange;
use mcpl_protocol::{HintChanges, Presence, ToolsetState};

impl HintState {
    /// Applies a message whose rev is `last + 1`, then `last = rev`. Presence and
    /// suggestions were taken when it was read.
    ///
    /// **The order within a message** (§5.1 **\[project\]**). A message states values, and
    /// nothing orders its `toolsets` entries against its `tools` entries. This host applies
    /// the `toolsets` entries first, in order, then the `tools` entries, ignoring a tool
    /// entry for an instance of its toolset that is not open once the `toolsets` entries
    /// are applied. So each instance ends in the state its last entry states: a close wins
    /// over visibility stated with it, and a close followed by a re-open of the same
    /// instance — which this project's server never puts in one message, but another
    /// server may — leaves the instance open with the visibility its entries state.
    pub(super) fn apply_in_order(
        &mut self,
        rev: u64,
        carrier: Carrier,
        changes: &HintChanges,
        out: &mut Vec<Output>,
    ) {
        let cause = Cause::Message { rev, carrier };
        for ts in &changes.entries.toolsets {
            self.apply_toolset_entry(ts, &cause, out);
        }
        for t in &changes.entries.tools {
            if self.in_closed_instance(&t.name, t.instance.as_deref()) {
                continue;
            }
            if let Some(v) = t.visible {
                self.set_visible(&t.name, t.instance.as_deref(), v, &cause, out);
            }
            if let Some(d) = &t.definition {
                // §5.1, vector 20: only description, inputSchema and annotations count.
                let o = DefinitionOverride::from_hint(d);
                self.set_override(&t.name, t.instance.as_deref(), o, &cause, out);
            }
        }
        self.last = rev;
        self.stats.applied += 1;
    }

    /// True for an entry about `instance` of a listed tool's toolset when that instance is
    /// not open (§4.3: only open instances have visible tools).
    fn in_closed_instance(&self, tool: &str, instance: Option<&str>) -> bool {
        let Some(instance) = instance else {
            return false;
        };
        let Some(toolset) = self
            .listed
            .by_name
            .get(tool)
            .and_then(|l| l.toolset.as_deref())
        else {
            return false;
        };
        !self.open.contains_key(probe(&(toolset, Some(instance))))
    }

    fn set_visible(
        &mut self,
        tool: &str,
        instance: Option<&str>,
        visible: bool,
        cause: &Cause,
        out: &mut Vec<Output>,
    ) {
        // §5.1: entries are values; restating one changes nothing and is not reported.
        let key = (tool, instance);
        let differs = if visible {
            !self.visible.contains(probe(&key))
                && self
                    .visible
                    .insert((tool.to_owned(), instance.map(str::to_owned)))
        } else {
            self.visible.remove(probe(&key))
        };
        if differs && !self.is_static(tool) {
            let change = Change::Visibility {
                tool: tool.to_owned(),
                instance: instance.map(str::to_owned),
                visible,
            };
            out.push(changed(cause, change));
        }
    }

    fn set_override(
        &mut self,
        tool: &str,
        instance: Option<&str>,
        o: DefinitionOverride,
        cause: &Cause,
        out: &mut Vec<Output>,
    ) {
        if self.overrides.get(probe(&(tool, instance))) == Some(&o) {
            return;
        }
        let key = (tool.to_owned(), instance.map(str::to_owned));
        self.overrides.insert(key, o);
        if !self.is_static(tool) {
            let change = Change::Definition {
                tool: tool.to_owned(),
                instance: instance.map(str::to_owned),
            };
            out.push(changed(cause, change));
        }
    }

    /// A toolset entry states a value (§5.1): open (a retitle when already open with
    /// another title) or closed. A close ends what the instance had: its tools' visibility
    /// and its own definitions (§4.3: only open instances have visible tools).
    fn apply_toolset_entry(&mut self, ts: &ToolsetChange, cause: &Cause, out: &mut Vec<Output>) {
        let key: SetKey = (ts.toolset.clone(), ts.instance.clone());
        match ts.state {
            ToolsetState::Open if !self.fits(&ts.toolset, ts.instance.as_deref()) => {}
            ToolsetState::Open => match self.open.get_mut(&key) {
                None => {
                    let open = super::OpenToolset {
                        toolset: ts.toolset.clone(),
                        instance: ts.instance.clone(),
                        title: ts.title.clone(),
                        options: None,
                    };
                    self.open.insert(key, open);
                    let change = Change::Opened {
                        toolset: ts.toolset.clone(),
                        instance: ts.instance.clone(),
                        title: ts.title.clone(),
                    };
                    out.push(changed(cause, change));
                }
                Some(o) => {
                    if let Some(title) = &ts.title
                        && o.title.as_ref() != Some(title)
                    {
                        o.title = Some(title.clone());
                        let change = Change::Retitled {
                            toolset: ts.toolset.clone(),
                            instance: ts.instance.clone(),
                            title: title.clone(),
                        };
                        out.push(changed(cause, change));
                    }
                }
            },
            ToolsetState::Closed => {
                let was_open = self.open.remove(&key).is_some();
                // §4.3: the entry names its ended record so the id is counted told.
                let new_id = ts
                    .ended
                    .as_ref()
                    .is_some_and(|id| self.ended_reported.insert(id.clone()));
                let told = self.closed_locally.remove(&key);
                self.drop_instance_state(&key);
                if ts.ended.is_some() {
                    self.note_ended(&ts.toolset, ts.instance.as_deref());
                }
                if was_open || (new_id && !told) {
                    let change = Change::Closed {
                        toolset: ts.toolset.clone(),
                        instance: ts.instance.clone(),
                        reason: ts.reason.clone(),
                        ended: ts.ended.clone(),
                    };
                    out.push(changed(cause, change));
                }
            }
        }
    }

    /// Closes every open instance of `toolset` here, without the server: its manifest no
    /// longer declares it, or declares it differently (§4.1, vector 33: the host treats its
    /// instances as closed and tells the agent). The server's own record of each end, when
    /// it comes, is counted told and not reported again.
    pub fn close_toolset(&mut self, toolset: &str) -> Vec<Output> {
        let keys: Vec<SetKey> = self
            .open
            .keys()
            .filter(|k| k.0 == toolset)
            .cloned()
            .collect();
        let mut out = Vec::new();
        for key in keys {
            self.open.remove(&key);
            self.drop_instance_state(&key);
            let change = Change::Closed {
                toolset: key.0.clone(),
                instance: key.1.clone(),
                reason: None,
                ended: None,
            };
            out.push(changed(&Cause::ManifestChange, change));
            self.closed_locally.insert(key);
        }
        out
    }

    /// Forgets visibility and definitions held for a closed toolset or instance. Nothing is
    /// reported for them: the close is the news.
    pub(super) fn drop_instance_state(&mut self, set: &SetKey) {
        self.retire(&set.0, set.1.as_deref());
        let covered: Vec<ToolKey> = self
            .visible
            .iter()
            .filter(|k| self.covered_by(k, set))
            .cloned()
            .collect();
        for k in covered {
            self.visible.remove(&k);
        }
        let covered: Vec<ToolKey> = self
            .overrides
            .keys()
            .filter(|k| self.covered_by(k, set))
            .cloned()
            .collect();
        for k in covered {
            self.overrides.remove(&k);
        }
    }

    /// True when the (tool, instance) key belongs to the (toolset, instance) `set`.
    pub(super) fn covered_by(&self, key: &ToolKey, set: &SetKey) -> bool {
        key.1 == set.1 && self.toolset_of(&key.0) == Some(set.0.as_str())
    }

    /// What a message (or a statement) brings whatever becomes of it: its presence entries
    /// apply by stamp (§3), and its suggestions are shown with it (§5.3).
    pub(super) fn apply_unordered_entries(
        &mut self,
        changes: &HintChanges,
        rev: u64,
        cause: &Cause,
        out: &mut Vec<Output>,
    ) {
        for t in &changes.entries.tools {
            if let Some(p) = t.presence {
                self.set_presence(&t.name, p, rev, cause, out);
            }
        }
        out.extend(
            changes
                .entries
                .suggest
                .iter()
                .map(|s| changed(cause, Change::Suggested(s.clone()))),
        );
    }

    /// §3: a presence value from any source replaces the tool's only if its stamp is at
    /// least as new. A toolset's tool stays dynamic whatever is stored: [`HintState::presence`]
    /// lets `mcpl/toolset` win (vector 16), so an explicit static reports no move. A tool's
    /// first presence is not reported as a move.
    pub(super) fn set_presence(
        &mut self,
        tool: &str,
        p: Presence,
        stamp: u64,
        cause: &Cause,
        out: &mut Vec<Output>,
    ) {
        let before = self.presence(tool);
        if !self.stamp_presence(tool, p, stamp) {
            return;
        }
        let after = self.presence(tool);
        if let (Some(b), Some(a)) = (before, after)
            && b != a
        {
            out.push(changed(
                cause,
                Change::Presence {
                    tool: tool.to_owned(),
                    presence: a,
                },
            ));
        }
    }

    /// Stores `p` at `stamp` unless the tool's value is newer; true when stored.
    pub(super) fn stamp_presence(&mut self, tool: &str, p: Presence, stamp: u64) -> bool {
        match self.presence.get_mut(tool) {
            Some(s) if s.rev > stamp => false,
            Some(s) => {
                *s = super::Stamped {
                    presence: p,
                    rev: stamp,
                };
                true
            }
            None => {
                self.presence.insert(
                    tool.to_owned(),
                    super::Stamped {
                        presence: p,
                        rev: stamp,
                    },
                );
                true
            }
        }
    }
}

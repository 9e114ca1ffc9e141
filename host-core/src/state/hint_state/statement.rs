//! The two reads that restate the server's state: `toolsets/list`, a full statement taking
//! a rev (§4.3), and `tools/list`, naming the last rev taken and taking none (§3). Together
//! they are a recovery (§5.2); the first also starts every connection.

use super::{DefinitionOverride, HintState, Listed, OpenToolset, Phase, SetKey, ToolKey, changed};
use crate::state::keys::{FastMap, FastSet};
use crate::state::output::{Cause, Change, Output, RecoverReason};
use mcpl_protocol::toolsets::{EndedRecord, OpenRecord};
use mcpl_protocol::{HintChanges, Presence, Tool};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

impl HintState {
    /// Reads a `toolsets/list` result: `changes` is its `mcpl/hints` (rev M), `open` and
    /// `ended` its records.
    ///
    /// - §4.3: a full statement. Visibility and definitions of dynamic tools are replaced
    ///   by it: a dynamic tool not stated visible is invisible (vectors 23, 38). What it
    ///   reports open replaces what was open (adopted, never re-opened: vector 9).
    /// - §5.2: `last = M`; held messages with rev ≤ M are superseded (their presence was
    ///   taken by stamp when read), later ones get a fresh window and apply in order.
    /// - Ended records are reported once per id on this connection; one that explains an
    ///   instance that vanished from `open` is reported with its `Closed` change.
    /// - A statement at or below `last` is stale, like any message (§5.2): ignored, and on
    ///   an ordered link a recovery. On an unordered link two reads may cross (a `look` and
    ///   a recovery's read): the fresher one has been, or will be, read. Any statement
    ///   above `last` ends the step a connection or recovery waits for, whichever read it
    ///   answers.
    pub fn handle_statement(
        &mut self,
        changes: &HintChanges,
        open: &[OpenRecord],
        ended: &[EndedRecord],
        now: Instant,
    ) -> Vec<Output> {
        let m = changes.rev;
        let cause = Cause::Statement { rev: m };
        let mut out = Vec::new();
        self.apply_unordered_entries(changes, m, &cause, &mut out);
        if m <= self.last {
            // A stale rev like any other (§5.2); its records are still facts.
            self.report_ended(ended, &cause, &mut out);
            self.stale(m, &mut out);
            return out;
        }
        self.stats.statements += 1;
        self.replace_state(changes, open, ended, &cause, &mut out);
        self.last = m;

        // §5.2, vector 22: held messages at or below M are superseded.
        let later = match m.checked_add(1) {
            Some(after) => self.held.split_off(&after),
            None => BTreeMap::new(),
        };
        let superseded = std::mem::replace(&mut self.held, later);
        self.reweigh_held();
        self.stats.superseded += superseded.values().filter(|h| h.message.is_some()).count() as u64;
        let in_recovery = matches!(self.phase, Phase::AwaitingStatement { .. });
        // What is still early now waits for revs written after the statement: a fresh window.
        let fresh = now + self.config.hold_window;
        for h in self.held.values_mut() {
            h.deadline = h.deadline.max(fresh);
            h.expired = false;
        }

        match self.phase {
            Phase::Connecting { cover } => {
                self.phase = Phase::Idle;
                if cover > m {
                    self.start_recovery(RecoverReason::Again, &mut out);
                }
            }
            Phase::AwaitingStatement { cover } | Phase::AwaitingToolsList { cover, .. } => {
                self.phase = Phase::AwaitingToolsList {
                    statement: m,
                    cover,
                };
            }
            Phase::Idle => {}
        }
        self.drain(&mut out);
        if in_recovery {
            // A rev held before this recovery began was written before its statement, so
            // the statement's rev reaches it — unless the rev is bogus (a peer's fault).
            // What still waits for predecessors now would start a recovery per hold window
            // forever: it is dropped as stale.
            let before = self.held.len();
            self.held.retain(|_, h| !h.before_recovery);
            self.reweigh_held();
            self.stats.stale += (before - self.held.len()) as u64;
        }
        out
    }

    /// Replaces visibility, definitions and open state with the statement's, reporting
    /// each difference once.
    fn replace_state(
        &mut self,
        changes: &HintChanges,
        open: &[OpenRecord],
        ended: &[EndedRecord],
        cause: &Cause,
        out: &mut Vec<Output>,
    ) {
        let mut vis: BTreeSet<ToolKey> = BTreeSet::new();
        let mut defs: BTreeMap<ToolKey, DefinitionOverride> = BTreeMap::new();
        for t in &changes.entries.tools {
            let key = (t.name.clone(), t.instance.clone());
            if t.visible == Some(true) {
                vis.insert(key.clone());
            }
            if let Some(d) = &t.definition {
                defs.insert(key, DefinitionOverride::from_hint(d));
            }
        }
        // §4.3: the statement is about dynamic tools; what is held for a static one stays.
        vis.extend(
            self.visible
                .iter()
                .filter(|k| self.is_static(&k.0))
                .cloned(),
        );
        for (k, o) in &self.overrides {
            if self.is_static(&k.0) {
                defs.entry(k.clone()).or_insert_with(|| o.clone());
            }
        }
        let fitting: Vec<&OpenRecord> = open
            .iter()
            .filter(|r| self.fits(&r.toolset, r.instance.as_deref()))
            .collect();
        let new_open: BTreeMap<SetKey, OpenToolset> = fitting
            .into_iter()
            .map(|r| {
                let o = OpenToolset {
                    toolset: r.toolset.clone(),
                    instance: r.instance.clone(),
                    title: r.title.clone(),
                    options: r.options.clone(),
                };
                ((r.toolset.clone(), r.instance.clone()), o)
            })
            .collect();

        let closed: Vec<SetKey> = self
            .open
            .keys()
            .filter(|k| !new_open.contains_key(*k))
            .cloned()
            .collect();
        for (toolset, instance) in &closed {
            // The newest record for it explains why it is gone (§4.3).
            let rec = ended
                .iter()
                .rev()
                .find(|r| &r.toolset == toolset && &r.instance == instance);
            if let Some(r) = rec {
                self.ended_reported.insert(r.id.clone());
            }
            let change = Change::Closed {
                toolset: toolset.clone(),
                instance: instance.clone(),
                reason: rec.map(|r| r.reason.clone()),
                ended: rec.map(|r| r.id.clone()),
            };
            out.push(changed(cause, change));
        }
        for (k, o) in &new_open {
            match self.open.get(k) {
                None => {
                    let change = Change::Opened {
                        toolset: k.0.clone(),
                        instance: k.1.clone(),
                        title: o.title.clone(),
                    };
                    out.push(changed(cause, change));
                }
                Some(old) => {
                    if let Some(t) = &o.title
                        && old.title.as_ref() != Some(t)
                    {
                        let change = Change::Retitled {
                            toolset: k.0.clone(),
                            instance: k.1.clone(),
                            title: t.clone(),
                        };
                        out.push(changed(cause, change));
                    }
                }
            }
        }

        // Differences, leaving out what went with a closed instance (its close is the news):
        // a key is covered by a closed (toolset, instance) when its tool is of that toolset
        // and its instance is that instance (`covered_by`).
        let closed_set: BTreeSet<&SetKey> = closed.iter().collect();
        let gone_with_close = |k: &ToolKey| {
            self.toolset_of(&k.0)
                .is_some_and(|ts| closed_set.contains(&(ts.to_owned(), k.1.clone())))
        };
        for k in self.visible.difference(&vis) {
            if !self.is_static(&k.0) && !gone_with_close(k) {
                let change = Change::Visibility {
                    tool: k.0.clone(),
                    instance: k.1.clone(),
                    visible: false,
                };
                out.push(changed(cause, change));
            }
        }
        for k in vis.difference(&self.visible) {
            if !self.is_static(&k.0) {
                let change = Change::Visibility {
                    tool: k.0.clone(),
                    instance: k.1.clone(),
                    visible: true,
                };
                out.push(changed(cause, change));
            }
        }
        let keys: BTreeSet<&ToolKey> = self.overrides.keys().chain(defs.keys()).collect();
        for k in keys {
            let (old, new) = (self.overrides.get(k), defs.get(k));
            if old == new || self.is_static(&k.0) || (new.is_none() && gone_with_close(k)) {
                continue;
            }
            out.push(changed(
                cause,
                Change::Definition {
                    tool: k.0.clone(),
                    instance: k.1.clone(),
                },
            ));
        }
        self.visible = vis;
        self.overrides = defs;
        self.open = new_open;
        self.report_ended(ended, cause, out);
    }

    /// §4.3: each ended record is reported once on this connection (the presenter tells
    /// each id once across connections, vector 13).
    fn report_ended(&mut self, ended: &[EndedRecord], cause: &Cause, out: &mut Vec<Output>) {
        for r in ended {
            self.retire(&r.toolset, r.instance.as_deref());
            self.note_ended(&r.toolset, r.instance.as_deref());
            let told = self
                .closed_locally
                .remove(&(r.toolset.clone(), r.instance.clone()));
            if self.ended_reported.insert(r.id.clone()) && !told {
                out.push(changed(cause, Change::Ended(r.clone())));
            }
        }
    }

    /// Reads a complete `tools/list` result (every page) naming rev `rev` (§3):
    ///
    /// - presence of each tool by stamp `rev`, `mcpl/toolset` implying dynamic (vector 16);
    /// - the declared definitions and toolset memberships, when this list is at least as
    ///   new as the last one read (a tool no longer listed is forgotten);
    /// - `last` does not move (§5.2); the list takes no rev (vector 27).
    ///
    /// It ends a recovery's second step; if something seen meanwhile was not covered by
    /// the statement, or a hold is still expired, the next recovery starts.
    ///
    /// The tools are copied once; [`HintState::handle_tools_list_shared`] keeps a list the
    /// caller shares (with the [`Catalog`](crate::state::Catalog)) without copying it.
    pub fn handle_tools_list(&mut self, tools: &[Tool], rev: u64) -> Vec<Output> {
        self.handle_tools_list_shared(&Arc::from(tools), rev)
    }

    /// [`HintState::handle_tools_list`], keeping a shared list: the state holds `tools`
    /// itself, not a copy of each tool.
    pub fn handle_tools_list_shared(&mut self, tools: &Arc<[Tool]>, rev: u64) -> Vec<Output> {
        let cause = Cause::ToolsList { rev };
        let mut out = Vec::new();
        let newer = self.listed_rev.is_none_or(|r| rev >= r);
        let mut previous = None;
        if newer {
            // In name order, so that what forgetting them reports does not depend on the
            // table's hashing.
            let mut gone: Vec<String> = Vec::new();
            if !self.listed.by_name.is_empty() {
                let names: FastSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                gone = self
                    .listed
                    .by_name
                    .keys()
                    .filter(|n| !names.contains(n.as_str()))
                    .cloned()
                    .collect();
            }
            gone.sort_unstable();
            for name in gone {
                self.forget_tool(&name, &cause, &mut out);
            }
            self.listed_rev = Some(rev);
            previous = Some(std::mem::replace(&mut self.listed.tools, tools.clone()));
        }
        // Where each name was met so far in this list: a name listed twice is compared
        // with its previous entry, as each entry replaces the one before.
        let mut met: FastMap<&str, usize> = FastMap::default();
        if previous.is_some() {
            met.reserve(tools.len());
            self.listed
                .by_name
                .reserve(tools.len().saturating_sub(self.listed.by_name.len()));
        }
        for (at, t) in tools.iter().enumerate() {
            let meta = t.meta.as_ref();
            let before = self.presence(&t.name);
            let mut declared_changed = false;
            if let Some(previous) = &previous {
                let old = match met.insert(&t.name, at) {
                    Some(earlier) => Some(&tools[earlier]),
                    None => self.listed.by_name.get(&t.name).map(|l| &previous[l.at]),
                };
                if let Some(old) = old {
                    declared_changed = old.description != t.description
                        || old.input_schema != t.input_schema
                        || old.annotations != t.annotations;
                }
                let listed = Listed {
                    at,
                    toolset: meta.and_then(|m| m.toolset.clone()),
                };
                match self.listed.by_name.get_mut(&t.name) {
                    Some(l) => *l = listed,
                    None => {
                        self.listed.by_name.insert(t.name.clone(), listed);
                    }
                }
            }
            let presence = meta.map_or(Presence::Static, |m| m.effective_presence());
            self.stamp_presence(&t.name, presence, rev);
            let after = self.presence(&t.name);
            if let (Some(b), Some(a)) = (before, after)
                && b != a
            {
                out.push(changed(
                    &cause,
                    Change::Presence {
                        tool: t.name.clone(),
                        presence: a,
                    },
                ));
            }
            if declared_changed && after == Some(Presence::Dynamic) {
                out.push(changed(
                    &cause,
                    Change::Definition {
                        tool: t.name.clone(),
                        instance: None,
                    },
                ));
            }
        }
        if let Phase::AwaitingToolsList { statement, cover } = self.phase {
            self.phase = Phase::Idle;
            let expired = self.held.iter().find(|(_, h)| h.expired).map(|(r, _)| *r);
            if cover > statement {
                self.start_recovery(RecoverReason::Again, &mut out);
            } else if let Some(rev) = expired {
                self.start_recovery(RecoverReason::HoldExpired { rev }, &mut out);
            }
        }
        out
    }

    /// Forgets a tool the newest list no longer has; a visible one is reported invisible.
    fn forget_tool(&mut self, name: &str, cause: &Cause, out: &mut Vec<Output>) {
        let report = !self.is_static(name);
        let keys: Vec<ToolKey> = self
            .visible
            .range(tool_keys(name))
            .take_while(|k| k.0 == name)
            .cloned()
            .collect();
        for k in keys {
            self.visible.remove(&k);
            if report {
                out.push(changed(
                    cause,
                    Change::Visibility {
                        tool: k.0,
                        instance: k.1,
                        visible: false,
                    },
                ));
            }
        }
        let keys: Vec<ToolKey> = self
            .overrides
            .range(tool_keys(name))
            .take_while(|(k, _)| k.0 == name)
            .map(|(k, _)| k.clone())
            .collect();
        for k in keys {
            self.overrides.remove(&k);
        }
        self.listed.by_name.remove(name);
        self.presence.remove(name);
    }
}

/// Where `tool`'s keys start: (tool, instance) keys sort by tool first, and `None` before
/// every instance, so a tool's keys are one run from (tool, None).
fn tool_keys(tool: &str) -> std::ops::RangeFrom<ToolKey> {
    (tool.to_owned(), None)..
}

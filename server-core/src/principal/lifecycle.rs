//! Opening, closing and ending instances (§4.2, §4.3).
//!
//! An open is checked in the spec's order — the toolset is declared, an instance name only
//! for a toolset with instances, the name fits the grammar, the options fit the schema —
//! before anything changes; a refused open leaves the state as it was. What is open is
//! adopted, never opened twice (vector 17). Every end the principal did not ask for leaves
//! an ended record whose id the closed entry carries (§4.3; the RFC's revision 4: "ended
//! records every end the host did not ask for"). A close the principal asked for — its
//! `toolsets/close`, a compat `toolset_close`, a tool handler's close on its behalf — leaves
//! none: every connection of the principal is told by the close's hint changes, and a
//! later `toolsets/list` does not report the principal's own close as an end "while you
//! were away" **\[project\]** (the principal, not one connection, is who asked).

use super::{
    CloseError, Ended, EndedRecord, HintError, InstanceKey, OpenError, OpenInstance, OpenOutcome,
    Opened, PrincipalState, visible_hint,
};
use crate::draft::HintDraft;
use mcpl_protocol::hints::{ToolsetChange, ToolsetState};
use mcpl_protocol::names::{MAX_NAME_LEN, check_peer_name};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::SystemTime;

impl PrincipalState {
    /// `toolsets/open` (§4.2). Checked in this order: the toolset is declared; an
    /// `instance` only for a toolset with instances; the name fits the grammar (refused,
    /// never replaced: vector 18); the options pass the declared schema. Then: an open key
    /// is **adopted** (nothing changes, vector 17); otherwise a new instance opens under the
    /// proposed name, or a fresh one the server picks when none was proposed.
    pub fn open(
        &mut self,
        toolset: &str,
        proposed: Option<&str>,
        options: Option<Value>,
        now: SystemTime,
    ) -> Result<OpenOutcome, OpenError> {
        let instanced = self.check_open(toolset, proposed, options.as_ref())?;
        let key = match proposed {
            Some(name) => InstanceKey::instance(toolset, name),
            // An open without a name is not idempotent (§4.2): always a fresh instance.
            None if instanced => {
                let key = self.fresh_key(toolset, now);
                return self.open_new(key, options, now).map(OpenOutcome::Opened);
            }
            None => InstanceKey::toolset(toolset),
        };
        if self.implicit.contains(&key) {
            // §8 (`implicit.rs`): open for plain hosts only; a hinted open makes it everyone's,
            // or, asking for other options, replaces it unseen.
            let current = self.instances.get(&key).and_then(|i| i.options.as_ref());
            if same_options(options.as_ref(), current) {
                return Ok(self.reveal(key));
            }
            self.end_with(&key, "reopened with other options", None)
                .expect("an implicit instance is open");
            return self.open_new(key, options, now).map(OpenOutcome::Opened);
        }
        if let Some(existing) = self.instances.get(&key) {
            // §4.2: absent options are `{}`, so adopting without options an instance opened
            // with some differs, and is said (the "adopting without options").
            let options_differ = !same_options(options.as_ref(), existing.options.as_ref());
            return Ok(OpenOutcome::Adopted {
                key,
                options_differ,
            });
        }
        self.open_new(key, options, now).map(OpenOutcome::Opened)
    }

    /// Adds an instance that another principal opened and invited this one into (§7: a
    /// shared instance is a record in each principal's state). `instance` names it for this
    /// principal (a fresh name when `None`); a name already open is refused
    /// ([`OpenError::InstanceTaken`]) rather than adopted, since it would be another game.
    /// The options are the instance's own and are checked like an open's.
    pub fn join(
        &mut self,
        toolset: &str,
        instance: Option<&str>,
        options: Option<Value>,
        now: SystemTime,
    ) -> Result<Opened, OpenError> {
        let instanced = self.check_open(toolset, instance, options.as_ref())?;
        let key = match instance {
            Some(name) => InstanceKey::instance(toolset, name),
            None if instanced => self.fresh_key(toolset, now),
            None => InstanceKey::toolset(toolset),
        };
        if self.instances.contains_key(&key) {
            return Err(OpenError::InstanceTaken(key));
        }
        self.open_new(key, options, now)
    }

    /// Forgets an instance whose open draft was **never sent** (the toolset's logic failed
    /// to start it): no ended record, no hints. Once its draft went out, end it instead.
    pub fn cancel_open(&mut self, key: &InstanceKey) -> Option<OpenInstance> {
        self.implicit.remove(key);
        self.instances.remove(key).map(|i| *i)
    }

    /// The checks shared by `open` and `join`; returns whether the toolset has instances.
    fn check_open(
        &self,
        toolset: &str,
        name: Option<&str>,
        options: Option<&Value>,
    ) -> Result<bool, OpenError> {
        let decl = self
            .catalog
            .toolset(toolset)
            .ok_or_else(|| OpenError::UnknownToolset(toolset.to_owned()))?;
        if let Some(name) = name {
            // §4.2: a toolset without instances takes no instance name.
            if !decl.instances {
                return Err(OpenError::InstanceNotAllowed {
                    toolset: toolset.to_owned(),
                    instance: name.to_owned(),
                });
            }
            // §4.1 [project]: a host's proposed name is taken within the peer grammar (SPEC
            // §17.2's charset, `.` and `:` included); §4.2: refused, never substituted
            // (vector 18). Names this server makes itself keep the stricter grammar.
            check_peer_name(name).map_err(|error| OpenError::BadInstanceName {
                instance: name.to_owned(),
                error,
            })?;
        }
        // §4.2: options are validated against the declared schema.
        self.catalog
            .validate_options(toolset, options)
            .map_err(|problems| OpenError::InvalidOptions {
                toolset: toolset.to_owned(),
                problems,
            })?;
        Ok(decl.instances)
    }

    fn open_new(
        &mut self,
        key: InstanceKey,
        options: Option<Value>,
        now: SystemTime,
    ) -> Result<Opened, OpenError> {
        if self.instances.len() >= self.config.max_open {
            return Err(OpenError::TooManyOpen {
                limit: self.config.max_open,
            });
        }
        Ok(self.insert_instance(key, options, now))
    }

    /// Opens `key` with the toolset's declared title and starting visibility.
    pub(super) fn insert_instance(
        &mut self,
        key: InstanceKey,
        options: Option<Value>,
        now: SystemTime,
    ) -> Opened {
        let title = self
            .catalog
            .toolset(&key.toolset)
            .and_then(|d| d.title.clone());
        let visible: BTreeSet<String> = self
            .catalog
            .tools_of(&key.toolset)
            .iter()
            .filter(|t| {
                self.catalog
                    .tool(t)
                    .is_some_and(|d| d.is_initially_visible())
            })
            .cloned()
            .collect();
        let mut draft = HintDraft::new();
        draft.toolsets.push(ToolsetChange {
            toolset: key.toolset.clone(),
            instance: key.instance.clone(),
            state: ToolsetState::Open,
            title: title.clone(),
            reason: None,
            ended: None,
        });
        draft
            .tools
            .extend(visible.iter().map(|t| visible_hint(t, &key, true)));
        let instance = OpenInstance {
            key: key.clone(),
            title,
            options,
            visible,
            definitions: BTreeMap::new(),
            opened_at: now,
        };
        self.instances.insert(key.clone(), Box::new(instance));
        Opened { key, draft }
    }

    /// A name for an instance the host did not name (§4.2): `<toolset>-<n>`, never one that
    /// is open or has a kept ended record, and never one the server picked before.
    fn fresh_key(&mut self, toolset: &str, now: SystemTime) -> InstanceKey {
        self.expire(now);
        loop {
            self.picked += 1;
            let suffix = format!("-{}", self.picked);
            // Keep within the grammar's length: the toolset name is valid, so its prefix is.
            let prefix: String = toolset.chars().take(MAX_NAME_LEN - suffix.len()).collect();
            let key = InstanceKey::instance(toolset, format!("{prefix}{suffix}"));
            if !self.instances.contains_key(&key) && self.ended.last_for(&key).is_none() {
                return key;
            }
        }
    }

    /// Checks a `toolsets/close` request without closing (§4.2): the toolset is declared,
    /// the instance is named exactly when it has instances, and it is open. The actor runs
    /// the toolset's closing logic (a game resigned) between this and [`PrincipalState::end`].
    pub fn resolve_close(
        &self,
        toolset: &str,
        instance: Option<&str>,
    ) -> Result<InstanceKey, CloseError> {
        let decl = self
            .catalog
            .toolset(toolset)
            .ok_or_else(|| CloseError::UnknownToolset(toolset.to_owned()))?;
        let key = match (decl.instances, instance) {
            (true, Some(name)) => InstanceKey::instance(toolset, name),
            // §4.2: required — another connection may have just opened a second one.
            (true, None) => {
                return Err(CloseError::InstanceRequired {
                    toolset: toolset.to_owned(),
                    open: self.open_names(toolset),
                });
            }
            (false, Some(name)) => {
                return Err(CloseError::InstanceNotAllowed {
                    toolset: toolset.to_owned(),
                    instance: name.to_owned(),
                });
            }
            (false, None) => InstanceKey::toolset(toolset),
        };
        // An instance open only implicitly (§8) is not open as a hinted host sees it.
        if !self.instances.contains_key(&key) || self.implicit.contains(&key) {
            let ended = self.ended.last_for(&key).cloned().map(Box::new);
            return Err(CloseError::NotOpen { key, ended });
        }
        Ok(key)
    }

    /// `toolsets/close` (§4.2): [`PrincipalState::resolve_close`], then
    /// [`PrincipalState::end_asked`] with `reason`.
    #[cfg(test)]
    pub fn close(
        &mut self,
        toolset: &str,
        instance: Option<&str>,
        reason: &str,
    ) -> Result<Ended, CloseError> {
        let key = self.resolve_close(toolset, instance)?;
        Ok(self
            .end_asked(&key, reason)
            .expect("resolve_close found it open"))
    }

    /// Ends an instance for a reason the principal did not ask for (a game over, a
    /// timeout, a manifest change): removes it and records it (§4.3). The draft's closed
    /// entry carries the record's id so every connection counts it told.
    pub fn end(
        &mut self,
        key: &InstanceKey,
        reason: &str,
        now: SystemTime,
    ) -> Result<Ended, HintError> {
        self.end_with(key, reason, Some(now))
    }

    /// [`PrincipalState::end`], leaving `view` — the instance's last view, its logic's —
    /// with the record: the instance's read-only tools answer with it while the record is
    /// kept (§4.3 **\[project\]**, `call.rs`).
    pub fn end_showing(
        &mut self,
        key: &InstanceKey,
        reason: &str,
        view: Option<Arc<str>>,
        now: SystemTime,
    ) -> Result<Ended, HintError> {
        let ended = self.end_with(key, reason, Some(now))?;
        if let (Some(record), Some(view)) = (&ended.record, view) {
            self.ended.set_view(&record.id, view);
        }
        Ok(ended)
    }

    /// Ends an instance the principal asked to close: removes it without a record (module
    /// docs); the draft's closed entry has no `ended` id.
    pub fn end_asked(&mut self, key: &InstanceKey, reason: &str) -> Result<Ended, HintError> {
        self.end_with(key, reason, None)
    }

    /// Ends `key`, recorded at `recorded_at` when given.
    fn end_with(
        &mut self,
        key: &InstanceKey,
        reason: &str,
        recorded_at: Option<SystemTime>,
    ) -> Result<Ended, HintError> {
        let instance = self
            .instances
            .remove(key)
            .ok_or_else(|| HintError::NotOpen(key.clone()))?;
        // An implicit instance (§8) ends unseen by hinted hosts: no record, nothing sent.
        let hidden = self.implicit.remove(key);
        let record = recorded_at
            .filter(|_| !hidden)
            .map(|now| self.ended.record(key, reason, now));
        let mut draft = HintDraft::new();
        draft.toolsets.push(ToolsetChange {
            toolset: key.toolset.clone(),
            instance: key.instance.clone(),
            state: ToolsetState::Closed,
            title: None,
            reason: Some(reason.to_owned()),
            ended: record
                .as_ref()
                .filter(|_| self.config.ended_ids_on_closes)
                .map(|r| r.id.clone()),
        });
        draft
            .tools
            .extend(instance.visible.iter().map(|t| visible_hint(t, key, false)));
        if hidden {
            draft = HintDraft::new();
        }
        Ok(Ended {
            record,
            draft,
            instance: *instance,
        })
    }

    /// Ends every open instance of a toolset.
    pub fn end_toolset(&mut self, toolset: &str, reason: &str, now: SystemTime) -> Vec<Ended> {
        let keys: Vec<InstanceKey> = self
            .instances
            .keys()
            .filter(|k| k.toolset == toolset)
            .cloned()
            .collect();
        keys.iter()
            .filter_map(|k| self.end(k, reason, now).ok())
            .collect()
    }

    /// Ends everything open: for a server that does not keep toolsets across connections,
    /// when the principal's last connection closes (§4.6).
    pub fn end_all(&mut self, reason: &str, now: SystemTime) -> Vec<Ended> {
        let keys: Vec<InstanceKey> = self.instances.keys().cloned().collect();
        keys.iter()
            .filter_map(|k| self.end(k, reason, now).ok())
            .collect()
    }

    /// Drops ended records that expired at `now` (§4.3).
    pub fn expire(&mut self, now: SystemTime) {
        self.ended.expire(now);
    }

    /// When the next kept ended record expires; `None` when none is kept (the actor may
    /// forget a principal with nothing open and nothing left to report).
    pub fn next_expiry(&self) -> Option<SystemTime> {
        self.ended.next_expiry()
    }

    /// The ended records kept, oldest first (call [`PrincipalState::expire`] first, or use
    /// the statement, which leaves out the expired).
    pub fn ended_records(&self) -> impl Iterator<Item = &EndedRecord> {
        self.ended.all()
    }
}

/// Absent options equal `{}`; present ones compare as JSON values.
/// Options compared as §4.2 reads them: absent is `{}`.
fn same_options(requested: Option<&Value>, current: Option<&Value>) -> bool {
    let empty = Value::Object(Default::default());
    requested.unwrap_or(&empty) == current.unwrap_or(&empty)
}

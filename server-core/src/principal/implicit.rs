//! Implicit opens: toolsets open for a host without `toolHints` (§8).
//!
//! §8: for a host that did not advertise `toolHints` the server behaves as without the
//! RFC — the tools of a toolset that needs no options are usable without anyone opening
//! it. The principal's state is shared by all its connections (§4.6), so a plain client
//! and a hinted host on one principal meet here, and neither may strand the other
//! (the project's issue on RFC-014's boundaries, item 4):
//!
//! - An **implicit** instance is opened for the plain connections only. No hinted
//!   connection hears of it: no hint entry, no `open` record in `toolsets/list`, no
//!   coarse `mcpl/visible`, no ended record when it ends; a hinted host's call or close
//!   finds the toolset not open, as its own view says.
//! - A hinted host that opens it **reveals** it ([`OpenOutcome::Revealed`]): the same
//!   instance, its logic's state kept, stated whole to every hinted connection — unless
//!   the open asks for other options, when the implicit instance ends unseen and a new one
//!   opens with them.
//! - A hinted host that closes a toolset a plain connection uses does close it (the
//!   principal's state); the actor then opens it implicitly again for the plain
//!   connection, which is not told "not open; open it first" for tools it never opened.
//!
//! **\[project\]**: the RFC does not say how §4.6's shared state and §8's plain hosts
//! combine; this is the reading under which each connection sees what its own protocol
//! says.

use super::{InstanceKey, OpenInstance, OpenOutcome, Opened, PrincipalState, visible_hint};
use crate::draft::HintDraft;
use mcpl_protocol::hints::{ToolHint, ToolsetChange, ToolsetState};
use std::time::SystemTime;

impl PrincipalState {
    /// Opens `toolset` (one without instances) for the principal's plain connections
    /// only, with its declared starting visibility. `None` when it is open already, is not
    /// a toolset without instances, or the limit of open instances is reached. Nothing is
    /// sent for it: run its logic, whose changes stay unsent while it is implicit.
    pub fn open_implicitly(&mut self, toolset: &str, now: SystemTime) -> Option<InstanceKey> {
        let decl = self.catalog.toolset(toolset)?;
        let key = InstanceKey::toolset(toolset);
        if decl.instances
            || self.instances.contains_key(&key)
            || self.instances.len() >= self.config.max_open
        {
            return None;
        }
        let Opened { key, .. } = self.insert_instance(key, None, now);
        self.implicit.insert(key.clone());
        Some(key)
    }

    /// True when `key` is open only implicitly (hidden from hinted hosts).
    pub fn is_implicit(&self, key: &InstanceKey) -> bool {
        self.implicit.contains(key)
    }

    /// The open instances a hinted host is told of, in key order.
    pub(super) fn hinted_instances(&self) -> impl Iterator<Item = &OpenInstance> {
        self.instances
            .values()
            .map(|i| &**i)
            .filter(|i| !self.implicit.contains(&i.key))
    }

    /// Makes an implicit instance every connection's and returns what states it whole:
    /// its `open` entry with its title, the tools visible in it, its own definitions.
    pub(super) fn reveal(&mut self, key: InstanceKey) -> OpenOutcome {
        self.implicit.remove(&key);
        let inst = &self.instances[&key];
        let mut draft = HintDraft::new();
        draft.toolsets.push(ToolsetChange {
            toolset: key.toolset.clone(),
            instance: key.instance.clone(),
            state: ToolsetState::Open,
            title: inst.title.clone(),
            reason: None,
            ended: None,
        });
        draft
            .tools
            .extend(inst.visible.iter().map(|t| visible_hint(t, &key, true)));
        draft
            .tools
            .extend(inst.definitions.iter().map(|(t, d)| ToolHint {
                name: t.clone(),
                instance: key.instance.clone(),
                definition: Some(d.clone()),
                ..Default::default()
            }));
        OpenOutcome::Revealed(Opened { key, draft })
    }

    /// `draft` when `key`'s changes are told to hinted hosts, else nothing.
    pub(super) fn told(&self, key: &InstanceKey, draft: HintDraft) -> HintDraft {
        if self.implicit.contains(key) {
            HintDraft::new()
        } else {
            draft
        }
    }
}

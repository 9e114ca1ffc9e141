//! A principal kept across restarts (issue #15 **\[project\]**): its record — the state
//! `toolsets/list` states and its links to instances — written whenever it changed, before
//! what changed it is delivered (`fanout.rs`), and read back when the server starts
//! (`actors/restore.rs`).

use super::{InstanceLink, PrincipalActor, Registrar};
use crate::core::PrincipalState;
use crate::shared::Shared;
use crate::store::records::{LinkRecord, PrincipalRecord};
use mcpl_transport::Principal;
use std::collections::BTreeMap;
use std::sync::Arc;

impl PrincipalActor {
    /// Writes the principal's record, when the server keeps durable state, the principal
    /// can come back (it is named) and the record changed.
    pub(super) fn persist(&mut self) {
        let Principal::Named(name) = &self.principal else {
            return;
        };
        if self.shared.store.is_none() {
            return;
        }
        let record = PrincipalRecord {
            state: self.state.snapshot(),
            links: self
                .links
                .iter()
                .map(|(key, l)| LinkRecord {
                    key: key.clone(),
                    instance: l.id.0,
                    who: l.who.0,
                })
                .collect(),
        };
        match serde_json::to_vec(&record) {
            Ok(bytes) if self.saved.as_deref() != Some(&bytes) => {
                self.shared.write_principal(name, Some(&bytes));
                self.saved = Some(bytes);
            }
            Ok(_) => {}
            Err(e) => {
                tracing::error!(principal = %name, error = %e, "a principal's record does not encode")
            }
        }
    }

    /// Forgets the principal's record: it retires with nothing left.
    pub(super) fn forget(&mut self) {
        if let Principal::Named(name) = &self.principal
            && self.saved.take().is_some()
        {
            self.shared.write_principal(name, None);
        }
    }

    /// The actor of a principal read back after a restart: its state, and its links to the
    /// instances that were read back too (started with it, `actors/restore.rs`).
    pub(crate) fn restored(
        shared: Arc<Shared>,
        registrar: Registrar,
        generation: u64,
        principal: Principal,
        state: PrincipalState,
        links: BTreeMap<crate::core::InstanceKey, InstanceLink>,
    ) -> Self {
        let mut actor = PrincipalActor::new(shared, registrar, generation, principal);
        actor.state = state;
        actor.links = links;
        // Written on its first change (or now, by the restore, if it changed in reading).
        actor.saved = Some(Vec::new());
        actor.persist();
        actor
    }
}

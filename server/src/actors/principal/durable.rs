//! A principal kept across restarts (issue #15 **\[project\]**): its record — the state
//! `toolsets/list` states and its links to instances — handed to the store whenever it
//! changed, what changed it delivered once it is kept (`fanout.rs`, issue #42 item 1), and read back when the server starts
//! (`actors/restore.rs`).

use super::{InstanceLink, PrincipalActor, Registrar};
use crate::core::PrincipalState;
use crate::core::principal_core::PrincipalCore;
use crate::ids::InstanceId;
use crate::shared::Shared;
use crate::store::Ticket;
use crate::store::records::{LinkRecord, NotKept, PrincipalRecord};
use mcpl_transport::Principal;
use std::collections::BTreeMap;
use std::sync::Arc;

impl PrincipalActor {
    /// Hands the principal's record to the store, when the server keeps durable state,
    /// the principal can come back (it is named) and the record changed; the ticket of the
    /// last record handed over, which what it tells waits for (issue #42 item 1). Fails
    /// when the store was given up (issue #37 item 2).
    pub(super) fn persist(&mut self) -> Result<Ticket, NotKept> {
        let Principal::Named(name) = &self.principal else {
            return Ok(Ticket::NONE);
        };
        if self.shared.store.is_none() {
            return Ok(Ticket::NONE);
        }
        match serde_json::to_vec(&self.record()) {
            Ok(bytes) if self.written.as_deref() != Some(&bytes) => {
                self.written_at = self.shared.write_principal(name, Some(&bytes))?;
                match self.shared.outcome(self.written_at) {
                    // Nothing to wait for (no store to wait on).
                    Some(Ok(())) => self.saved = Some(bytes.clone()),
                    _ => self.unkept.push_back((self.written_at, bytes.clone())),
                }
                self.written = Some(bytes);
            }
            Ok(_) => {}
            Err(e) => {
                tracing::error!(principal = %name, error = %e, "a principal's record does not encode");
            }
        }
        Ok(self.written_at)
    }

    /// `ticket` was kept, and with it every record handed over before it.
    pub(super) fn kept_up_to(&mut self, ticket: Ticket) {
        while self.unkept.front().is_some_and(|(t, _)| *t <= ticket) {
            self.saved = self.unkept.pop_front().map(|(_, bytes)| bytes);
        }
    }

    fn record(&self) -> PrincipalRecord {
        PrincipalRecord {
            state: self.core.state().snapshot(),
            links: self
                .core
                .links()
                .iter()
                .map(|(key, l)| LinkRecord {
                    key: key.clone(),
                    instance: l.id.0,
                    who: l.who.0,
                })
                .collect(),
        }
    }

    /// A change could not be kept: the state goes back to the record last kept (or,
    /// with none, to what a new principal has), so what `toolsets/list` and `tools/list`
    /// state stays what was told (issue #37 item 2). Links the record does not have are
    /// given up (their instances see this principal leave). Nothing to do when every
    /// record it handed over was kept (what failed was an instance's step).
    pub(super) fn roll_back(&mut self) {
        if self.unkept.is_empty() {
            return;
        }
        self.unkept.clear();
        self.written.clone_from(&self.saved);
        self.written_at = Ticket::NONE;
        let kept = match self.saved.as_deref() {
            Some(bytes) if !bytes.is_empty() => {
                match serde_json::from_slice::<PrincipalRecord>(bytes) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        tracing::error!(principal = %self.principal.name(), error = %e, "a principal's own record does not decode");
                        return;
                    }
                }
            }
            // Read back after a restart and not written since (`restored`): what is on
            // disk is the record as read, not kept here; the state is left as it is, and
            // the next change is refused the same way.
            Some(_) => return,
            None => None,
        };
        let now = self.shared.now();
        let (state, links) = match kept {
            Some(r) => (
                PrincipalState::restore(
                    self.shared.catalog(),
                    self.shared.principal_config.clone(),
                    self.shared.ended_ids.clone(),
                    r.state,
                    now,
                ),
                r.links,
            ),
            None => (PrincipalActor::fresh_state(&self.shared), Vec::new()),
        };
        let kept: BTreeMap<_, _> = links
            .into_iter()
            .map(|l| (l.key, InstanceId(l.instance)))
            .collect();
        self.core.handle_rolled_back(state, &kept);
    }

    /// Forgets the principal's record: it retires with nothing left.
    pub(super) fn forget(&mut self) {
        if let Principal::Named(name) = &self.principal
            && self.written.take().is_some()
        {
            self.saved = None;
            self.unkept.clear();
            // A record left behind after a restart is read back as idle and retires again.
            let _ = self.shared.write_principal(name, None);
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
        let anonymous = matches!(principal, Principal::Anonymous(_));
        let core = PrincipalCore::new(state, anonymous, shared.keep_toolsets, links)
            .with_idle_end(shared.idle_end);
        let mut actor = PrincipalActor::new(shared, registrar, generation, principal);
        actor.core = core;
        // Written on its first change (or now, by the restore, if it changed in reading).
        actor.saved = Some(Vec::new());
        actor.written = Some(Vec::new());
        // Not kept: the next change tries again (and is refused if the store is gone).
        let _ = actor.persist();
        actor
    }
}

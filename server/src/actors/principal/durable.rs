//! A principal kept across restarts (issue #15 **\[project\]**): its record — the state
//! `toolsets/list` states and its links to instances — handed to the store whenever it
//! changed, what changed it delivered once it is kept (`fanout.rs`, issue #42 item 1), and read back when the server starts
//! (`actors/restore.rs`). The record is written in parts (issue #42 item 1,
//! `server-core/src/store/parts.rs`): its core, and each ended record and tombstone under
//! a key of its own, a step writing only the parts that changed.

use super::{InstanceLink, PrincipalActor, Registrar};
use crate::core::PrincipalState;
use crate::core::principal_core::PrincipalCore;
use crate::ids::InstanceId;
use crate::shared::Shared;
use crate::store::parts::{self, Delta, Ledger, Stored};
use crate::store::records::{Heard, LinkRecord, NotKept};
use crate::store::{Ticket, Writes};
use mcpl_transport::Principal;
use std::collections::BTreeMap;
use std::sync::Arc;

impl PrincipalActor {
    /// Hands what changed of the principal's record to the store, when the server keeps
    /// durable state, the principal can come back (it is named) and anything changed: its
    /// core when it did, and only the parts that did (issue #42 item 1). The ticket of
    /// the last change handed over, which what it tells waits for. Fails when the store
    /// was given up (issue #37 item 2).
    pub(super) fn persist(&mut self) -> Result<Ticket, NotKept> {
        let Principal::Named(name) = &self.principal else {
            return Ok(Ticket::NONE);
        };
        if self.shared.store.is_none() {
            return Ok(Ticket::NONE);
        }
        let change = match self.written.change(self.core.state(), self.links()) {
            Ok(Some(change)) => change,
            Ok(None) => return Ok(self.written_at),
            Err(e) => {
                tracing::error!(principal = %name, error = %e, "a principal's record does not encode");
                return Ok(self.written_at);
            }
        };
        let writes = Writes {
            principals: change
                .core
                .iter()
                .map(|core| (name.clone(), Some(core.clone())))
                .collect(),
            parts: change
                .parts
                .iter()
                .map(|(part, bytes)| (name.clone(), part.clone(), bytes.clone()))
                .collect(),
            ..Writes::default()
        };
        self.written_at = self.shared.submit(writes).inspect_err(|_| {
            // Not even handed over (the store was given up): the change is rolled back
            // all the same (issue #41: before, it stayed, and was told as if kept).
            self.refused = true;
        })?;
        self.written.apply(&change);
        let kept = change.into_delta();
        match self.shared.outcome(self.written_at) {
            // Nothing to wait for (no store to wait on).
            Some(Ok(())) => self.keep(kept),
            _ => self.unkept.push_back((self.written_at, kept)),
        }
        Ok(self.written_at)
    }

    /// `kept` is in the store.
    fn keep(&mut self, kept: Delta) {
        self.saved.get_or_insert_default().apply(kept);
        self.saved_as_read = false;
    }

    /// `ticket` was kept, and with it every change handed over before it.
    pub(super) fn kept_up_to(&mut self, ticket: Ticket) {
        while self.unkept.front().is_some_and(|(t, _)| *t <= ticket) {
            if let Some((_, kept)) = self.unkept.pop_front() {
                self.keep(kept);
            }
        }
        if self.unkept.is_empty() {
            // All kept: an idle principal keeps no room for changes waiting (issue #42).
            self.unkept = std::collections::VecDeque::new();
        }
    }

    fn links(&self) -> Vec<LinkRecord> {
        self.core
            .links()
            .iter()
            .map(|(key, l)| LinkRecord {
                key: key.clone(),
                instance: l.id.0,
                who: l.who.0,
                // Issue #41 (`docs/ownership.md` §3): read again, it drops what it applied.
                heard: self
                    .seen
                    .get(&(l.id.0, super::remote::BATCHES))
                    .map(|(stream, number)| Heard { stream, number }),
            })
            .collect()
    }

    /// A change could not be kept: the state goes back to the record last kept (or,
    /// with none, to what a new principal has), so what `toolsets/list` and `tools/list`
    /// state stays what was told (issue #37 item 2). Links the record does not have are
    /// given up (their instances see this principal leave). Nothing to do when every
    /// record it handed over was kept (what failed was an instance's step).
    pub(super) fn roll_back(&mut self) {
        if self.unkept.is_empty() && !std::mem::take(&mut self.refused) {
            return;
        }
        self.unkept.clear();
        self.written_at = Ticket::NONE;
        let read = match &self.saved {
            Some(stored) => {
                let parts = stored.parts.iter().map(|(n, b)| (n.as_str(), b.as_slice()));
                match parts::read(&stored.core, parts) {
                    Ok(read) => Some(read),
                    Err(e) => {
                        tracing::error!(principal = %self.principal.name(), error = %e, "a principal's own record does not decode");
                        self.written = Ledger::default();
                        return;
                    }
                }
            }
            None => None,
        };
        if self.saved_as_read {
            // Read back after a restart and not written since: what is in the store is
            // the record as read; the state is left as it is, and the next change is
            // refused the same way.
            if let Some(read) = read {
                self.written = read.ledger;
                self.written.adopt(self.core.state());
            }
            return;
        }
        let now = self.shared.now();
        let (state, links) = match read {
            Some(read) => {
                let state = PrincipalState::restore(
                    self.shared.catalog(),
                    self.shared.principal_config.clone(),
                    self.shared.ended_ids.clone(),
                    read.record.state,
                    now,
                );
                self.written = read.ledger;
                self.written.adopt(&state);
                (state, read.record.links)
            }
            None => {
                self.written = Ledger::default();
                (PrincipalActor::fresh_state(&self.shared), Vec::new())
            }
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
            && self.written.is_written()
        {
            self.written = Ledger::default();
            self.saved = None;
            self.saved_as_read = false;
            self.unkept.clear();
            // Its parts go with it. A record left behind after a restart is read back as
            // idle and retires again.
            let _ = self.shared.write_principal(name, None);
        }
    }

    /// The actor of a principal read back after a restart: its state, and its links to the
    /// instances that were read back too (started with it, `actors/restore.rs`); what the
    /// store holds of its record, and the ledger read with it.
    pub(crate) fn restored(
        shared: Arc<Shared>,
        registrar: Registrar,
        generation: u64,
        principal: Principal,
        state: PrincipalState,
        links: BTreeMap<crate::core::InstanceKey, InstanceLink>,
        (stored, mut ledger): (Stored, Ledger),
    ) -> Self {
        let anonymous = matches!(principal, Principal::Anonymous(_));
        let core = PrincipalCore::new(state, anonymous, shared.keep_toolsets, links)
            .with_idle_end(shared.idle_end);
        let mut actor = PrincipalActor::new(shared, registrar, generation, principal);
        actor.core = core;
        // The last batch it applied of each instance elsewhere (issue #41, §3).
        for (instance, heard) in crate::store::records::heard(&stored.core) {
            let key = (instance, super::remote::BATCHES);
            actor.seen.set(key, heard.stream, heard.number);
        }
        // Written on its first change (or now, by the restore, if it changed in reading:
        // a record written whole, before parts, is written in parts now).
        ledger.adopt(actor.core.state());
        actor.saved = Some(stored);
        actor.saved_as_read = true;
        actor.written = ledger;
        // Not kept: the next change tries again (and is refused if the store is gone).
        let _ = actor.persist();
        actor
    }
}

//! Reading a server's durable state back when it starts (issue #15 **\[project\]**): every
//! principal with a record gets its actor again, with its state (`toolsets/list` is
//! truthful at once, §4.3), and every instance one of them still links to gets its actor
//! again, its logic read back — so a host reconnecting adopts its instances without
//! opening them again (§4.6, vector 9).
//!
//! What cannot come back ends, each with an ended record saying why
//! (`server-core/src/principal_core/restore.rs`), and the rest load:
//! an instance whose logic is not [`Durable`](crate::Durable)
//! ([`REASON_NOT_KEPT`]), whose record is missing ([`REASON_LOST`]), unreadable or in a
//! format its logic does not read (the reason names the store and what was wrong), or
//! that had ended (its own reason: an ended game is never resurrected). A principal whose
//! record cannot be read is left out, logged with the store and the error.
//!
//! The actors are made with their addresses first (`Context::new`), so principals and
//! instances can link to each other before either runs.

use crate::actors::instance::{InstanceActor, Link, ToPrincipal};
use crate::actors::principal::{PrincipalActor, Registrar};
use crate::author::{Logic, ParticipantId};
use crate::core::principal_core::read_back;
use crate::core::{InstanceKey, PrincipalState};
use crate::ids::InstanceId;
use crate::shared::Shared;
use crate::store::parts::{self, Ledger, Stored};
use crate::store::records::{
    InstanceRecord, LogicRecord, PrincipalRecord, REASON_LOST, REASON_NOT_KEPT,
};
use crate::store::{Loaded, Restored};
use actix::prelude::*;
use mcpl_transport::Principal;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// What was restored, and the principals' actors.
pub(crate) struct Outcome {
    pub(crate) principals: Vec<RestoredPrincipal>,
    pub(crate) counts: Restored,
}

/// A principal's actor, restored and running.
pub(crate) struct RestoredPrincipal {
    pub(crate) principal: Principal,
    pub(crate) addr: Addr<PrincipalActor>,
    pub(crate) generation: u64,
}

/// An instance that will not run again, and why.
type Ends = HashMap<u64, String>;

/// Starts the actors of everything `loaded` holds, on the current arbiter. `registrar`
/// makes each principal's registrar; `next_generation` numbers the principals.
pub(crate) fn restore(
    shared: &Arc<Shared>,
    loaded: Loaded,
    registrar: impl Fn() -> Registrar,
    router: Recipient<ToPrincipal>,
    mut next_generation: impl FnMut() -> u64,
) -> Outcome {
    let location = shared
        .store
        .as_ref()
        .map_or_else(|| "memory".to_owned(), |s| s.location());
    let now = shared.now();
    // Each principal's parts (issue #42 item 1), by its name.
    let mut parts: HashMap<String, BTreeMap<String, Vec<u8>>> = HashMap::new();
    for (name, part, bytes) in loaded.parts {
        parts.entry(name).or_default().insert(part, bytes);
    }
    let mut principals: Vec<(String, PrincipalRecord, (Stored, Ledger))> = Vec::new();
    for (name, core) in loaded.principals {
        let stored = Stored {
            core,
            parts: parts.remove(&name).unwrap_or_default(),
        };
        let of = stored.parts.iter().map(|(n, b)| (n.as_str(), b.as_slice()));
        match parts::read(&stored.core, of) {
            Ok(read) => {
                for (part, e) in &read.unread {
                    tracing::error!(
                        store = %location, principal = %name, part = %part, error = %e,
                        "a part of a principal's record cannot be read; it is left out"
                    );
                }
                principals.push((name, read.record, (stored, read.ledger)));
            }
            Err(e) => tracing::error!(
                store = %location, principal = %name, error = %e,
                "a principal's record cannot be read; it is left out"
            ),
        }
    }
    // Parts of no principal's record (none is written without it): forgotten.
    for name in parts.keys() {
        let _ = shared.write_principal(name, None);
    }
    // Which principal links to which instance, as each principal's record says.
    let mut linked: HashMap<u64, BTreeMap<ParticipantId, (String, InstanceKey)>> = HashMap::new();
    for (name, r, _) in &principals {
        for l in &r.links {
            linked
                .entry(l.instance)
                .or_default()
                .insert(ParticipantId(l.who), (name.clone(), l.key.clone()));
        }
    }
    let mut contexts: HashMap<String, Context<PrincipalActor>> = principals
        .iter()
        .map(|(n, _, _)| (n.clone(), Context::new()))
        .collect();
    let mut ends: Ends = HashMap::new();
    // Instances that were running and will not run again.
    let mut lost = std::collections::HashSet::new();
    let mut instances: HashMap<u64, Addr<InstanceActor>> = HashMap::new();
    let mut toolsets: BTreeMap<String, usize> = BTreeMap::new();
    for (id, bytes) in loaded.instances {
        shared.instance_ids_past(id);
        let Some(links) = linked.remove(&id) else {
            // No principal links to it any more: nothing to resume.
            let _ = shared.write_instance(id, None);
            continue;
        };
        let record = match serde_json::from_slice::<InstanceRecord>(&bytes) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(store = %location, instance = id, error = %e, "an instance's record cannot be read; it ends");
                ends.insert(id, format!("the server restarted, and the instance's state in {location} could not be read: {e}"));
                lost.insert(id);
                continue;
            }
        };
        let logic = match readable(shared, &record, &location) {
            Ok(logic) => logic,
            Err(reason) => {
                if record.ended.is_none() {
                    lost.insert(id);
                }
                ends.insert(id, reason);
                continue;
            }
        };
        *toolsets.entry(record.toolset.clone()).or_default() += 1;
        let ctx: Context<InstanceActor> = Context::new();
        let links = links
            .into_iter()
            .filter(|(who, (_, key))| record.links.get(&who.0) == Some(key))
            .filter_map(|(who, (name, key))| {
                let principal = contexts.get(&name)?.address().recipient();
                Some((who, Link { principal, key }))
            })
            .collect();
        let actor = InstanceActor::restored(
            shared.clone(),
            router.clone(),
            InstanceId(id),
            record,
            logic,
            links,
        );
        instances.insert(id, ctx.address());
        ctx.run(actor);
    }
    let mut restored = Vec::new();
    let mut lost_unlinked = 0;
    for (name, record, kept) in principals {
        let Some(ctx) = contexts.remove(&name) else {
            continue;
        };
        let mut state = PrincipalState::restore(
            shared.catalog(),
            shared.principal_config.clone(),
            shared.ended_ids.clone(),
            record.state,
            now,
        );
        // A new life: past every version the last one may have told without keeping it,
        // before any change made here (an instance lost below) takes one (issue #41).
        state.continue_after_restart();
        let back = read_back(
            state,
            record.links,
            |id| instances.get(&id).cloned(),
            |id| ends.get(&id).cloned(),
            now,
        );
        lost.extend(back.lost);
        lost_unlinked += back.lost_unlinked;
        let (state, links) = (back.state, back.links);
        let principal = Principal::Named(name);
        let generation = next_generation();
        let actor = PrincipalActor::restored(
            shared.clone(),
            registrar(),
            generation,
            principal.clone(),
            state,
            links,
            kept,
        );
        let addr = ctx.run(actor);
        restored.push(RestoredPrincipal {
            principal,
            addr,
            generation,
        });
    }
    let counts = Restored {
        principals: restored.len(),
        instances: instances.len(),
        toolsets,
        lost: lost.len() + lost_unlinked,
    };
    tracing::info!(store = %location, ?counts, "durable state read back");
    Outcome {
        principals: restored,
        counts,
    }
}

/// The logic of an instance read back, or why it will not run again.
fn readable(
    shared: &Shared,
    record: &InstanceRecord,
    location: &str,
) -> Result<Box<dyn Logic>, String> {
    if let Some(reason) = &record.ended {
        return Err(reason.clone());
    }
    match &record.logic {
        LogicRecord::Kept { format, state } => {
            let Some(restore) = shared.restore_of(&record.toolset) else {
                return Err(REASON_NOT_KEPT.to_owned());
            };
            restore(*format, state.clone()).map_err(|e| {
                tracing::error!(store = %location, toolset = %record.toolset, error = %e, "an instance's state cannot be read back; it ends");
                format!("the server restarted, and the instance's state in {location} could not be read back: {e}")
            })
        }
        LogicRecord::NotKept => Err(REASON_NOT_KEPT.to_owned()),
        LogicRecord::Unwritable(e) => Err(format!(
            "the server restarted, and the instance's state could not be kept: {e}"
        )),
        LogicRecord::Gone => Err(REASON_LOST.to_owned()),
    }
}

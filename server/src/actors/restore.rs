//! Reading a server's durable state back when it starts (issue #15 **\[project\]**): every
//! instance a principal still links to gets its actor again, its logic read back — so a
//! host reconnecting adopts its instances without opening them again (§4.6, vector 9) —
//! and so does every principal those instances name, with its state.
//!
//! **Only what the instances need** (issue #41 **\[project\]**): the start reads every
//! instance's record and the records of the principals they name ([`read_start`]), not
//! every principal's — a node's start and a takeover no longer grow with every principal
//! ever seen. Any other principal is read on its first use ([`fetch`], [`revive`]: a
//! session attaching, an invitation naming it; `registry.rs`) and comes back as a restart
//! brings it back: its ended records and tombstones from its parts, its version past its
//! record's (`continue_after_restart`), linked to the instances running, each other
//! instance it linked to ended with the reason its record gives — but, on a server with
//! peers, one whose record is live, linked by reference (it may run on another server, or
//! be adopted here: `docs/ownership.md` §4, a principal's takeover). An instance of a plain
//! toolset of one instance per principal (a lobby) is not read back: its principal starts
//! it anew ([`drop_anew`]).
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

use crate::actors::instance::{InstanceActor, Link, PrincipalRef, ToPrincipal};
use crate::actors::principal::{InstanceRef, PrincipalActor, Registrar};
use crate::author::{Logic, ParticipantId};
use crate::core::principal_core::InstanceLink;
use crate::core::principal_core::read_back;
use crate::core::{InstanceKey, PrincipalState};
use crate::ids::InstanceId;
use crate::shared::Shared;
use crate::store::parts::{self, Ledger, Stored};
use crate::store::records::{
    InstanceRecord, LinkRecord, LogicRecord, PrincipalRecord, REASON_LOST, REASON_NOT_KEPT,
};
use crate::store::{Loaded, PrincipalLoaded, Restored, Store, StoreError};
use actix::prelude::*;
use mcpl_transport::Principal;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// What was restored, and the principals' actors.
pub(crate) struct Outcome {
    pub(crate) principals: Vec<RestoredPrincipal>,
    /// The instances running again, by id: a principal read later (on its first use)
    /// links to those still running.
    pub(crate) instances: HashMap<u64, Addr<InstanceActor>>,
    pub(crate) counts: Restored,
}

/// What a server reads of its store when it starts (issue #41 **\[project\]**): every
/// instance's record ([`Store::live_instances`]) and the records of the principals they
/// name — not every principal's. The others are read on their first use
/// ([`fetch`]). Read where the server is built, so a store that cannot be read fails the
/// build, as before.
///
/// An instance of a toolset its principal's actor starts anew (`anew`: a plain,
/// default-open toolset of one instance per principal, a lobby) is not read back at all: its principal,
/// whenever it is read, starts it again ([`drop_anew`]).
pub(crate) fn read_start(
    store: &dyn Store,
    anew: &dyn Fn(&str) -> bool,
) -> Result<Loaded, StoreError> {
    /// The toolset of an instance's record, the rest skipped.
    #[derive(serde::Deserialize)]
    struct Toolset {
        toolset: String,
    }
    let mut live = store.live_instances()?;
    live.retain(|i| {
        serde_json::from_slice::<Toolset>(&i.record).map_or(true, |r| !anew(&r.toolset))
    });
    let names: BTreeSet<&str> = live
        .iter()
        .flat_map(|i| i.principals.iter().map(String::as_str))
        .collect();
    let mut loaded = Loaded::default();
    for name in names {
        let principal = store.load_principal(name)?;
        for (part, bytes) in principal.parts {
            loaded.parts.push((name.to_owned(), part, bytes));
        }
        if let Some(core) = principal.core {
            loaded.principals.push((name.to_owned(), core));
        }
    }
    loaded.instances = live.into_iter().map(|i| (i.id, i.record)).collect();
    Ok(loaded)
}

/// Drops from `links` each link to an instance not `running` of a toolset the principal's
/// actor starts anew ([`Shared::started_anew`]: a plain, default-open toolset of one
/// instance per principal, a lobby), forgetting its record **\[project\]**: the state keeps it open,
/// and the actor starts it again when it starts (`PrincipalActor::started`), as it does a
/// default-open toolset — rather than every principal holding one being read at start to
/// resume an instance that holds nothing of its own (issue #41).
fn drop_anew(shared: &Shared, links: &mut Vec<LinkRecord>, running: impl Fn(u64) -> bool) {
    links.retain(|l| {
        let anew = !running(l.instance) && shared.started_anew(&l.key.toolset);
        if anew {
            let _ = shared.write_instance(l.instance, None);
        }
        !anew
    });
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
                let principal = PrincipalRef::Local(contexts.get(&name)?.address().recipient());
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
        let mut links = record.links;
        drop_anew(shared, &mut links, |id| instances.contains_key(&id));
        let back = read_back(
            state,
            links,
            |id| instances.get(&id).cloned().map(InstanceRef::Local),
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
        instances,
        counts,
    }
}

/// The logic of an instance read back, or why it will not run again.
pub(crate) fn readable(
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

/// A principal's record read on its first use (issue #41), with the records of the
/// instances it links to that were not running when it was read.
pub(crate) struct Fetched {
    /// Its record and parts.
    pub(crate) principal: PrincipalLoaded,
    /// The records of the instances it links to, but those running (`None`: no record).
    pub(crate) instances: HashMap<u64, Option<Vec<u8>>>,
}

/// Reads `name`'s record and the records of the instances it links to that are not in
/// `running` (those running are linked to as they are): a blocking call, made off the
/// actors' threads.
pub(crate) fn fetch(
    store: &dyn Store,
    name: &str,
    running: &HashSet<u64>,
) -> Result<Fetched, StoreError> {
    /// The links of a principal's record, the rest skipped.
    #[derive(serde::Deserialize)]
    struct Links {
        links: Vec<LinkRecord>,
    }
    let principal = store.load_principal(name)?;
    let mut instances = HashMap::new();
    let links = principal
        .core
        .as_deref()
        .and_then(|core| serde_json::from_slice::<Links>(core).ok());
    for l in links.map(|l| l.links).unwrap_or_default() {
        if !running.contains(&l.instance) && !instances.contains_key(&l.instance) {
            instances.insert(l.instance, store.load_instance(l.instance)?);
        }
    }
    Ok(Fetched {
        principal,
        instances,
    })
}

/// A principal read on its first use, ready to run: what [`PrincipalActor::restored`]
/// takes, once each link to an instance elsewhere is made a reference by the actor's
/// address (`registry.rs`, `start`).
pub(crate) struct Revived {
    pub(crate) state: PrincipalState,
    pub(crate) links: BTreeMap<InstanceKey, InstanceLink<Linked>>,
    pub(crate) kept: (Stored, Ledger),
    /// The instances it links to by reference (issue #41: live, not running here): each
    /// runs on another server, or nobody runs it now (`registry/owning.rs` adopts those).
    pub(crate) elsewhere: Vec<u64>,
}

/// Where a principal read on its first use finds an instance it links to.
pub(crate) enum Linked {
    /// Its actor runs here.
    Here(Addr<InstanceActor>),
    /// It does not run here, and its record is live (issue #41, on a server with peers):
    /// reached by its id, wherever it runs (`RemoteInstance`).
    Elsewhere(InstanceId),
}

/// What `fetched` comes to for principal `name` (issue #41): its state read back as a
/// restart reads it (`restore`) — past every version its last life may have told, linked
/// to the instances of `running` still running, every other instance it linked to ended
/// with the reason its record gives (or [`REASON_LOST`]). `None` when it has no record it
/// can read: it starts as a new principal (parts left without a record are forgotten).
///
/// **On a server with peers** (issue #41, `docs/ownership.md` §4: a principal's takeover
/// is its first-use read), an instance not running here whose record is live — not
/// ended, its logic kept and readable here — is not ended: it may run on another server,
/// or nobody may run it now (its server died, or released it). It is linked by reference
/// ([`Linked::Elsewhere`], listed in [`Revived::elsewhere`]): her calls, and what the
/// instance tells her, cross as they do after an adoption; the registry then adopts here
/// each one nobody serves (`registry/owning.rs`). An instance with no record, or whose
/// record says it ended, ends as without peers.
pub(crate) fn revive(
    shared: &Arc<Shared>,
    name: &str,
    fetched: Fetched,
    running: &HashMap<u64, Addr<InstanceActor>>,
) -> Option<Revived> {
    let location = shared
        .store
        .as_ref()
        .map_or_else(|| "memory".to_owned(), |s| s.location());
    let Fetched {
        principal,
        instances,
    } = fetched;
    let Some(core) = principal.core else {
        if !principal.parts.is_empty() {
            // Parts of no principal's record (none is written without it): forgotten.
            let _ = shared.write_principal(name, None);
        }
        return None;
    };
    let stored = Stored {
        core,
        parts: principal.parts.into_iter().collect(),
    };
    let of = stored.parts.iter().map(|(n, b)| (n.as_str(), b.as_slice()));
    let read = match parts::read(&stored.core, of) {
        Ok(read) => read,
        Err(e) => {
            tracing::error!(
                store = %location, principal = %name, error = %e,
                "a principal's record cannot be read; it starts anew"
            );
            return None;
        }
    };
    for (part, e) in &read.unread {
        tracing::error!(
            store = %location, principal = %name, part = %part, error = %e,
            "a part of a principal's record cannot be read; it is left out"
        );
    }
    let now = shared.now();
    let mut state = PrincipalState::restore(
        shared.catalog(),
        shared.principal_config.clone(),
        shared.ended_ids.clone(),
        read.record.state,
        now,
    );
    // A new life of this principal, as after a restart (issue #41).
    state.continue_after_restart();
    let live = |id: u64| running.get(&id).is_some_and(|a| a.connected());
    let mut links = read.record.links;
    drop_anew(shared, &mut links, live);
    let peers = shared.peers.is_some();
    let back = read_back(
        state,
        links,
        |id| {
            let here = running.get(&id).filter(|a| a.connected()).cloned();
            here.map(Linked::Here).or_else(|| match instances.get(&id) {
                Some(Some(bytes)) if peers && record_live(shared, bytes) => {
                    Some(Linked::Elsewhere(InstanceId(id)))
                }
                _ => None,
            })
        },
        |id| match instances.get(&id) {
            Some(Some(bytes)) => not_running(shared, bytes, &location),
            _ => None,
        },
        now,
    );
    let elsewhere: Vec<u64> = back
        .links
        .values()
        .filter(|l| matches!(l.addr, Linked::Elsewhere(_)))
        .map(|l| l.id.0)
        .collect();
    tracing::debug!(store = %location, principal = %name, ?elsewhere, "principal read on its first use");
    Some(Revived {
        state: back.state,
        links: back.links,
        kept: (stored, read.ledger),
        elsewhere,
    })
}

/// The links of a principal read on its first use, as its actor (`ctx`) holds them: one
/// to an instance elsewhere becomes a reference by its id, whose calls that do not get
/// through are answered by the actor (as `PrincipalActor::remote_instance` makes them).
/// Made as the actor is made, on its arbiter.
pub(crate) fn links_of(
    shared: &Shared,
    links: BTreeMap<InstanceKey, InstanceLink<Linked>>,
    ctx: &Context<PrincipalActor>,
) -> BTreeMap<InstanceKey, crate::actors::principal::InstanceLink> {
    links
        .into_iter()
        .filter_map(|(key, l)| {
            let addr = match l.addr {
                Linked::Here(addr) => InstanceRef::Local(addr),
                Linked::Elsewhere(id) => {
                    let me = ctx.address();
                    let remote = crate::actors::remote::RemoteInstance::new(shared, id, move |b| {
                        me.do_send(crate::actors::instance::Batched(
                            b,
                            crate::store::Follow::NONE,
                        ));
                    });
                    // Only made with peers (`revive`), so always a reference.
                    InstanceRef::Remote(remote?)
                }
            };
            let (id, who) = (l.id, l.who);
            Some((key, InstanceLink { addr, id, who }))
        })
        .collect()
}

/// Whether the record `bytes` of an instance not running here is live (issue #41): not
/// ended, its logic kept in a form this server reads — it may run on another server, or
/// be adopted here.
fn record_live(shared: &Shared, bytes: &[u8]) -> bool {
    serde_json::from_slice::<InstanceRecord>(bytes).is_ok_and(|r| {
        r.ended.is_none()
            && matches!(r.logic, LogicRecord::Kept { .. })
            && shared.restore_of(&r.toolset).is_some()
    })
}

/// Why an instance whose record is `bytes`, and which is not running, ended: its own
/// reason, or why it could not come back; `None` ([`REASON_LOST`]) for one whose record
/// says it runs — it did not come back in this server's life.
fn not_running(shared: &Shared, bytes: &[u8], location: &str) -> Option<String> {
    let record = match serde_json::from_slice::<InstanceRecord>(bytes) {
        Ok(r) => r,
        Err(e) => {
            return Some(format!(
                "the server restarted, and the instance's state in {location} could not be read: {e}"
            ));
        }
    };
    if let Some(reason) = record.ended {
        return Some(reason);
    }
    match record.logic {
        LogicRecord::Kept { .. } if shared.restore_of(&record.toolset).is_none() => {
            Some(REASON_NOT_KEPT.to_owned())
        }
        LogicRecord::Kept { .. } | LogicRecord::Gone => None,
        LogicRecord::NotKept => Some(REASON_NOT_KEPT.to_owned()),
        LogicRecord::Unwritable(e) => Some(format!(
            "the server restarted, and the instance's state could not be kept: {e}"
        )),
    }
}

//! Which instances this server runs, and moving one (issue #41 item 3,
//! `docs/ownership.md` §4): the registry knows every instance running (`running`), so it
//! releases one ([`ReleaseInstance`]: the instance's actor becomes a shell, `release.rs`)
//! and adopts one from its record ([`AdoptInstance`]) — the takeover of one instance, as a
//! restart resumes every one (`restore.rs`), while the server runs.
//!
//! **Adopting.** Once every step handed to the store is decided, the instance's record is
//! read, with the records of its principals that have no actor here (off the actors'
//! threads). Back in the registry, in its mailbox's order: the instance's actor is made
//! with its address first (`Context::new`), each principal of it running here links to
//! that address ([`Relink`]: its key and who it is there come back), each one read is
//! started linked to it (`restore::revive`, as on its first use), and the actor runs with
//! those links — a principal whose record no longer links to the instance is gone from it.
//! Its logic's resume runs first (timers, a bot's move), as after a restart. The registry
//! awaits nobody in its mailbox: the relinks' answers come back as a spawned future.
//!
//! **With peers** (issue #41): an instance whose address is served is run by another
//! server, and is not adopted ([`OwnershipError::Elsewhere`]); otherwise its address is
//! claimed ([`claim`]) before its actor is made, and served from the inbox claimed, so two
//! servers adopting it at once run it once. A principal read on its first use adopts so
//! each instance it links to that nobody runs ([`Registry::adopt_unserved`]).

use super::Registry;
use crate::actors::instance::{InstanceActor, Link, PrincipalRef, Release};
use crate::actors::principal::{InstanceStarted, Relink};
use crate::actors::remote::RemotePrincipal;
use crate::actors::restore::{self, Fetched};
use crate::author::ParticipantId;
use crate::core::InstanceKey;
use crate::ids::InstanceId;
use crate::ownership::{OwnershipError, StartRefused};
use crate::peers::{Inbox, PeerAddress, PeerError, Peers};
use crate::store::Store;
use crate::store::records::{self, InstanceRecord};
use actix::prelude::*;
use mcpl_transport::Principal;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Which instances run here, by id, sorted.
#[derive(Message)]
#[rtype(result = "Vec<u64>")]
pub(crate) struct RunningInstances;

/// Release instance `id` (`release.rs`).
#[derive(Message)]
#[rtype(result = "Result<(), OwnershipError>")]
pub(crate) struct ReleaseInstance {
    pub(crate) id: u64,
}

/// Adopt instance `id` from its record (see the module docs).
#[derive(Message)]
#[rtype(result = "Result<(), OwnershipError>")]
pub(crate) struct AdoptInstance {
    pub(crate) id: u64,
}

/// An instance read for an adoption (see [`adopting_read`]).
struct Adopting {
    /// Its record.
    bytes: Vec<u8>,
    /// Its principals' records, of those with no actor here nor on another server.
    fetched: HashMap<String, Fetched>,
    /// Its principals on another server (issue #41, with peers).
    remote: HashSet<String>,
    /// Its address on the peers, claimed for its actor (issue #41, with peers): released
    /// if the adoption is refused after all.
    claim: Option<Inbox>,
}

type Read = Result<Adopting, OwnershipError>;

/// How long an adoption waits at most for the peers to say whether another server runs
/// the instance, and to claim its address (**\[project\]**: 2 s, as a probe over NATS,
/// `mcpl_cluster::PROBE_TIMEOUT`): past it, nothing is adopted, and the adoption is
/// refused ([`OwnershipError::Peers`], retryable).
const PROBE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// From how many entries `running` drops its stopped ones, each time its size reaches a
/// power of two (amortized: a server of short games does not hold every one it ran).
const RUNNING_TIDY: usize = 64;

impl Registry {
    /// The actor of instance `id`, when it runs here.
    fn running_addr(&self, id: u64) -> Option<Addr<InstanceActor>> {
        self.running.get(&id).filter(|a| a.connected()).cloned()
    }

    /// Instance `id` read back, with the principals of it this server does not run: made
    /// to run, once its principals here have linked to it.
    fn adopt_read(
        &mut self,
        id: u64,
        read: Read,
    ) -> ResponseActFuture<Self, Result<(), OwnershipError>> {
        let (bytes, mut fetched, remote, mut claim) = match read {
            Ok(r) => (r.bytes, r.fetched, r.remote, r.claim),
            Err(e) => return Box::pin(actix::fut::ready(Err(e))),
        };
        // Refused after all: its address claimed is served no more.
        let mut refuse = |e| {
            if let Some(inbox) = claim.take() {
                actix::spawn(inbox.split().1.close());
            }
            Box::pin(actix::fut::ready(Err(e))) as ResponseActFuture<Self, _>
        };
        if self.running_addr(id).is_some() {
            return refuse(OwnershipError::Running { id });
        }
        let location = self.shared.store_location();
        let record = match serde_json::from_slice::<InstanceRecord>(&bytes) {
            Ok(r) => r,
            Err(e) => {
                let reason = format!("its record in {location} cannot be read: {e}");
                return refuse(OwnershipError::Unreadable { id, reason });
            }
        };
        if let Some(reason) = &record.ended {
            let reason = reason.clone();
            return refuse(OwnershipError::Ended { id, reason });
        }
        let logic = match restore::readable(&self.shared, &record, &location) {
            Ok(logic) => logic,
            Err(reason) => return refuse(OwnershipError::Unreadable { id, reason }),
        };
        let names = records::needs(&bytes)
            .map(|n| n.principals)
            .unwrap_or_default();
        if let Some(name) = names
            .iter()
            .find(|n| self.loading.contains_key(&Principal::Named((*n).clone())))
        {
            let principal = name.clone();
            return refuse(OwnershipError::Busy { id, principal });
        }
        let instance: Context<InstanceActor> = Context::new();
        let addr = instance.address();
        self.running.insert(id, addr.clone());
        // Each principal of it: (its recipient, the answer to a relink), or linked already.
        let mut relinks = Vec::new();
        let mut links: BTreeMap<ParticipantId, Link> = BTreeMap::new();
        for name in names {
            let principal = Principal::Named(name.clone());
            if let Some(entry) = self.principals.get(&principal) {
                let to = entry.addr.clone();
                let relink = to.send(Relink {
                    id: InstanceId(id),
                    addr: Some(addr.clone()),
                });
                let to = PrincipalRef::Local(to.recipient());
                relinks.push(async move { (to, relink.await.ok().flatten()) });
            } else if remote.contains(&name) {
                // Its actor runs on another server: linked there by name.
                if let Some((who, key)) = remote_participant(&record, &name)
                    && let Some(r) = RemotePrincipal::new(&self.shared, name.clone())
                {
                    let principal = PrincipalRef::Remote(r);
                    links.insert(who, Link { principal, key });
                }
            } else if let Some(f) = fetched.remove(&name) {
                let revived = restore::revive(&self.shared, &name, f, &self.running);
                let link = revived.as_ref().and_then(|r| {
                    r.links
                        .iter()
                        .find(|(_, l)| l.id.0 == id)
                        .map(|(key, l)| (key.clone(), l.who))
                });
                let entry = self.start(&principal, &Arbiter::current(), revived);
                if let Some((key, who)) = link {
                    let principal = PrincipalRef::Local(entry.addr.clone().recipient());
                    links.insert(who, Link { principal, key });
                }
                self.principals.insert(principal, entry);
            }
            // Otherwise it retired meanwhile, so it links to nothing: gone from it.
        }
        self.published
            .principals
            .store(self.principals.len(), Ordering::Relaxed);
        let shared = self.shared.clone();
        let router = self
            .me
            .clone()
            .expect("set when the registry started")
            .recipient();
        Box::pin(
            futures_util::future::join_all(relinks)
                .into_actor(self)
                .map(move |answers, _, _| {
                    for (principal, answer) in answers {
                        if let Some((key, who)) = answer {
                            links.insert(who, Link { principal, key });
                        }
                    }
                    // Only the links the instance's record agrees with (`restore.rs`).
                    links.retain(|who, l| record.links.get(&who.0) == Some::<&InstanceKey>(&l.key));
                    let actor = InstanceActor::restored(
                        shared,
                        router,
                        InstanceId(id),
                        record,
                        logic,
                        links,
                    )
                    .claimed(claim);
                    instance.run(actor);
                    tracing::info!(instance = id, "instance adopted");
                    Ok(())
                }),
        )
    }
}

impl Registry {
    /// Adopts here each of instances `ids` that nobody serves (issue #41,
    /// `docs/ownership.md` §4): a principal read on its first use links to them by
    /// reference (`restore::revive`), and one nobody runs — its server died, or released
    /// it — is taken over by its principal's server **\[project\]**, as an instance runs
    /// beside its opener (§1), until leases decide (§5, slice 4). Each is an
    /// [`AdoptInstance`] of its own, off the registry's mailbox: its probe and claim
    /// ([`claim`]) are bounded by [`PROBE_WAIT`], and other principals' reads go on
    /// meanwhile. One another server runs (or claims first) stays linked by reference; a
    /// principal of it being read here adopts it once read. When the peers cannot say
    /// (a probe or claim failed or timed out), or the server's start hook cannot let it
    /// start now (`OwnershipError::StartRefused`), it is tried again, after 1 s, doubling up to
    /// 30 s (`read_again_after`) **\[project\]**: her calls to it are answered "retry"
    /// meanwhile, and nobody runs it.
    pub(super) fn adopt_unserved(&self, ids: Vec<u64>) {
        let Some(me) = self.me.clone() else { return };
        for id in ids {
            let me = me.clone();
            actix::spawn(async move {
                let mut failed = 0;
                loop {
                    match me.send(AdoptInstance { id }).await {
                        Ok(Ok(())) => {
                            tracing::info!(
                                instance = id,
                                "adopted on a principal's first use: nobody ran it"
                            );
                        }
                        Ok(Err(
                            e
                            @ (OwnershipError::Peers { .. } | OwnershipError::StartRefused { .. }),
                        )) => {
                            failed += 1;
                            let after = super::read_again_after(failed);
                            tracing::warn!(instance = id, error = %e, ?after, "the peers cannot say whether an instance a principal links to runs elsewhere; asked again");
                            tokio::time::sleep(after).await;
                            continue;
                        }
                        Ok(Err(
                            OwnershipError::Elsewhere { .. }
                            | OwnershipError::Running { .. }
                            | OwnershipError::Busy { .. },
                        ))
                        | Err(_) => {}
                        Ok(Err(e)) => {
                            tracing::warn!(instance = id, error = %e, "an instance a principal links to is not adopted: her calls to it are answered \"retry\"");
                        }
                    }
                    break;
                }
            });
        }
    }
}

impl Handler<InstanceStarted> for Registry {
    type Result = ();

    fn handle(&mut self, m: InstanceStarted, _: &mut Context<Self>) {
        let n = self.running.len();
        if n >= RUNNING_TIDY && n.is_power_of_two() {
            self.running.retain(|_, a| a.connected());
        }
        self.running.insert(m.id, m.addr);
    }
}

impl Handler<RunningInstances> for Registry {
    type Result = Vec<u64>;

    fn handle(&mut self, _: RunningInstances, _: &mut Context<Self>) -> Vec<u64> {
        self.running.retain(|_, a| a.connected());
        let mut ids: Vec<u64> = self.running.keys().copied().collect();
        ids.sort_unstable();
        ids
    }
}

impl Handler<ReleaseInstance> for Registry {
    type Result = ResponseActFuture<Self, Result<(), OwnershipError>>;

    /// The instance is forgotten here once released, or stopped without its last steps
    /// kept: its shell goes once its principals let go of it.
    fn handle(
        &mut self,
        ReleaseInstance { id }: ReleaseInstance,
        _: &mut Context<Self>,
    ) -> Self::Result {
        let Some(addr) = self.running_addr(id) else {
            return Box::pin(actix::fut::ready(Err(OwnershipError::NotRunning { id })));
        };
        Box::pin(
            addr.clone()
                .send(Release)
                .into_actor(self)
                .map(move |answer, act, _| {
                    let answer = answer.unwrap_or(Err(OwnershipError::NotRunning { id }));
                    if matches!(answer, Ok(_) | Err(OwnershipError::NotKept { .. }))
                        && act.running.get(&id) == Some(&addr)
                    {
                        act.running.remove(&id);
                    }
                    let linked = answer?;
                    // With peers, its principals here reach it wherever it runs next, and
                    // are told "retry" until it runs somewhere (issue #41, `remote.rs`).
                    if act.shared.peers.is_some() {
                        for name in linked {
                            if let Some(entry) = act.principals.get(&Principal::Named(name)) {
                                entry.addr.do_send(Relink {
                                    id: InstanceId(id),
                                    addr: None,
                                });
                            }
                        }
                    }
                    Ok(())
                }),
        )
    }
}

impl Handler<AdoptInstance> for Registry {
    type Result = ResponseActFuture<Self, Result<(), OwnershipError>>;

    fn handle(
        &mut self,
        AdoptInstance { id }: AdoptInstance,
        _: &mut Context<Self>,
    ) -> Self::Result {
        if self.running_addr(id).is_some() {
            return Box::pin(actix::fut::ready(Err(OwnershipError::Running { id })));
        }
        let Some(store) = self.shared.store.clone() else {
            return Box::pin(actix::fut::ready(Err(OwnershipError::NoStore { id })));
        };
        // Those with an actor here (or being read) are linked, not read.
        let resident: HashSet<String> = self
            .principals
            .keys()
            .chain(self.loading.keys())
            .filter_map(|p| match p {
                Principal::Named(n) => Some(n.clone()),
                Principal::Anonymous(_) => None,
            })
            .collect();
        self.running.retain(|_, a| a.connected());
        let mut running: HashSet<u64> = self.running.keys().copied().collect();
        // Its own record is read apart: not as one of its principals' instances.
        running.insert(id);
        let settled = self.shared.settled();
        let peers = self.shared.peers.clone();
        let hook = self.shared.start_hook.clone();
        let placement = self.shared.placement.clone();
        Box::pin(
            async move {
                settled.await;
                // The server's start hook first (issue #41: a cluster takes the
                // instance's lease): refused, nothing is read.
                if let Some(hook) = hook {
                    match hook(id, crate::InstanceStart::Adopted).await {
                        Ok(()) => {}
                        Err(StartRefused::Elsewhere) => {
                            return Err(OwnershipError::Elsewhere { id });
                        }
                        Err(StartRefused::Unavailable(reason)) => {
                            return Err(OwnershipError::StartRefused { id, reason });
                        }
                    }
                }
                adopting_read(store, peers, placement, id, resident, running).await
            }
            .into_actor(self)
            .then(move |read, act, _| act.adopt_read(id, read)),
        )
    }
}

/// Reads instance `id`'s record; asks the peers (when there are some) which of its
/// principals with no actor here run on another server; reads the records of the others
/// — with a [`Placement`](crate::Placement), only those it places here (issue #41).
async fn adopting_read(
    store: Arc<dyn Store>,
    peers: Option<Arc<dyn Peers>>,
    placement: Option<Arc<dyn crate::placement::Placement>>,
    id: u64,
    resident: HashSet<String>,
    running: HashSet<u64>,
) -> Read {
    let location = store.location();
    let failed = move |e: tokio::task::JoinError| OwnershipError::Store {
        id,
        source: crate::store::StoreError::Io {
            path: location.clone().into(),
            detail: format!("reading an instance's record failed: {e}"),
        },
    };
    // Run by another server: nothing read (issue #41).
    if let Some(peers) = &peers
        && served_elsewhere(&**peers, id).await?
    {
        return Err(OwnershipError::Elsewhere { id });
    }
    let on = store.clone();
    let bytes = tokio::task::spawn_blocking(move || read_record(&*on, id))
        .await
        .map_err(&failed)??;
    let names = names_of(&bytes);
    let mut remote = HashSet::new();
    if let Some(peers) = &peers {
        for name in names.into_iter().filter(|n| !resident.contains(n)) {
            let at = PeerAddress::Principal(name.clone());
            match peers.served(at).await {
                Ok(true) => {
                    remote.insert(name);
                }
                Ok(false) => {}
                // Not known to run elsewhere: read here, as without peers.
                Err(e) => {
                    tracing::warn!(instance = id, principal = %name, error = %e, "the peers could not say where a principal runs")
                }
            }
        }
    }
    // A player nobody serves now is read here only where the placement says she may run
    // (issue #41, `docs/ownership.md` §1 **\[project\]**): on a cluster, under her lease.
    // Held elsewhere — her node retired her actor, or is starting again — she is linked
    // there by name, as one served there; nobody can say — the adoption is refused now,
    // tried again later. Read here without her lease, her actor wrote over the records
    // her node kept meanwhile (the store's revision check refused it, and this server
    // gave its store up).
    if let Some(placement) = &placement {
        for name in names_of(&bytes) {
            if resident.contains(&name) || remote.contains(&name) {
                continue;
            }
            match placement.place(&name).await {
                crate::placement::Placed::Here => {}
                crate::placement::Placed::Elsewhere => {
                    remote.insert(name);
                }
                crate::placement::Placed::Unknown => {
                    return Err(OwnershipError::StartRefused {
                        id,
                        reason: format!("where its player {name:?} may run cannot be said now"),
                    });
                }
            }
        }
    }
    let skip: HashSet<String> = resident.union(&remote).cloned().collect();
    let (bytes, fetched) = tokio::task::spawn_blocking(move || {
        read_principals(&*store, id, &bytes, &skip, &running).map(|f| (bytes, f))
    })
    .await
    .map_err(&failed)??;
    let claim = match &peers {
        Some(peers) => Some(claim(&**peers, id).await?),
        None => None,
    };
    Ok(Adopting {
        bytes,
        fetched,
        remote,
        claim,
    })
}

/// The named principals of an instance's record.
fn names_of(bytes: &[u8]) -> Vec<String> {
    records::needs(bytes)
        .map(|n| n.principals)
        .unwrap_or_default()
}

/// Whether another server runs instance `id` now: somebody serves its address (bounded
/// by [`PROBE_WAIT`]).
async fn served_elsewhere(peers: &dyn Peers, id: u64) -> Result<bool, OwnershipError> {
    let at = PeerAddress::Instance(id);
    match tokio::time::timeout(PROBE_WAIT, peers.served(at.clone())).await {
        Ok(Ok(served)) => Ok(served),
        Ok(Err(source)) => Err(OwnershipError::Peers { id, source }),
        Err(_) => Err(OwnershipError::Peers {
            id,
            source: PeerError::TimedOut(at),
        }),
    }
}

/// Claims instance `id`'s address on the peers for the actor an adoption makes, before it
/// runs (issue #41 **\[project\]**: two servers adopting one instance at once — a
/// principal's first use on each, an operator's adoption — never both run it, so never
/// two actors write one record): the address is served from the inbox returned, or
/// somebody serves it already ([`OwnershipError::Elsewhere`]: the other server won, and
/// this one's principals reach it there). In one process ([`InProcessPeers`]) serving is
/// exclusive; over NATS a subscription is not, and the probe just before is the check —
/// two claims within one probe's round trip both succeed, and the store's revision check
/// refuses the later writer's commit (`mcpl_cluster::PgStore`), until leases decide who
/// runs what (`docs/ownership.md` §5, slice 4).
///
/// [`InProcessPeers`]: crate::InProcessPeers
async fn claim(peers: &dyn Peers, id: u64) -> Result<Inbox, OwnershipError> {
    if served_elsewhere(peers, id).await? {
        return Err(OwnershipError::Elsewhere { id });
    }
    let at = PeerAddress::Instance(id);
    match tokio::time::timeout(PROBE_WAIT, peers.serve(at.clone())).await {
        Ok(Ok(inbox)) => Ok(inbox),
        Ok(Err(PeerError::Taken(_))) => Err(OwnershipError::Elsewhere { id }),
        Ok(Err(source)) => Err(OwnershipError::Peers { id, source }),
        Err(_) => Err(OwnershipError::Peers {
            id,
            source: PeerError::TimedOut(at),
        }),
    }
}

/// Instance `id`'s record (a blocking call, off the actors' threads).
fn read_record(store: &dyn crate::store::Store, id: u64) -> Result<Vec<u8>, OwnershipError> {
    let failed = |source| OwnershipError::Store { id, source };
    match store.load_instance(id).map_err(failed)? {
        Some(bytes) => Ok(bytes),
        None => {
            let store = store.location();
            Err(OwnershipError::Unknown { id, store })
        }
    }
}

/// Who principal `name` is in the instance of `record`, and its key for it, when it
/// links to it.
fn remote_participant(record: &InstanceRecord, name: &str) -> Option<(ParticipantId, InstanceKey)> {
    record
        .participants
        .iter()
        .enumerate()
        .find_map(|(i, p)| match p {
            records::ParticipantRecord::Principal(n)
            | records::ParticipantRecord::Left(Some(n))
                if n == name =>
            {
                let who = u32::try_from(i).ok()?;
                let key = record.links.get(&who)?.clone();
                Some((ParticipantId(who), key))
            }
            _ => None,
        })
}

/// Reads the records of the principals of instance `id` (its record `bytes`) not in
/// `skip` (a blocking call, off the actors' threads).
fn read_principals(
    store: &dyn crate::store::Store,
    id: u64,
    bytes: &[u8],
    skip: &HashSet<String>,
    running: &HashSet<u64>,
) -> Result<HashMap<String, Fetched>, OwnershipError> {
    let failed = |source| OwnershipError::Store { id, source };
    let mut fetched = HashMap::new();
    let names = records::needs(bytes)
        .map(|n| n.principals)
        .unwrap_or_default();
    for name in names.into_iter().filter(|n| !skip.contains(n)) {
        let f = restore::fetch(store, &name, running).map_err(failed)?;
        fetched.insert(name, f);
    }
    Ok(fetched)
}

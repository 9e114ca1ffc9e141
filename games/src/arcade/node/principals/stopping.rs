//! A node stopping (SIGTERM, `docs/ownership.md` §1, §4): it hands what it runs on at
//! once rather than leaving it for its leases to expire or its players to come back.
//!
//! 1. [`Principals::stop_taking`]: from then on it takes nothing new on — a request
//!    forwarded to it is answered [`NOT_OWNER`](super::NOT_OWNER) (its sender looks the
//!    holder up again), no instance starts here (an open is answered "retry"), no scan
//!    adopts, a player an invitation brings is not placed here, and the renewal leases
//!    and releases nothing more (it only renews, until the end). Its fronts stop
//!    listening (`mcpl-arcade`), and the requests in flight get their answers, for at
//!    most a second ([`Principals::answered`]), as when its renewal fails.
//! 2. [`Principals::hand_on`]: each principal it holds is released
//!    (`Server::release_principal`: her sessions close and her hosts reconnect elsewhere,
//!    her instances here reach her by name), then each instance it runs
//!    (`Server::release_instance`: it takes no step, its bot and timers wait for its
//!    adoption) — every record as last kept. Principals first **\[project\]**: a
//!    principal released leaves the instances she starts anew (her lobby) rather than
//!    leave them live for a scan to adopt for nothing.
//! 3. The renewals stop; the principals' lease rows are deleted (her next request, on
//!    any node, takes her there) and the instances' leases are let expire, their rows
//!    kept (`PgLeases::expire`): another node's next scan — within a third of the time to
//!    live — adopts each, its bot's owed move made and its timers running with nobody
//!    connected, and takes its players' leases as it does for a dead node's games.
//!    Principals' rows first: a scan finding an instance whose player this node still
//!    held would leave it to this node.
//!
//! An instance that cannot be released (invitations not taken up, a logic not kept) stops
//! with the process: its lease is let expire all the same, and a scan finds it as it
//! finds a dead node's.

use super::{Principals, blocking, lock};
use mcpl_cluster::leases::{INSTANCE, Lease, PRINCIPAL};
use mcpl_server::{OwnershipError, Server};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// What a node stopping handed on ([`Principals::hand_on`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HandedOn {
    /// Principals released here, their rows deleted.
    pub principals: usize,
    /// Instances released here, their leases let expire.
    pub instances: usize,
    /// Instances that could not be released (they stop with the process), their leases
    /// let expire all the same.
    pub unreleased: usize,
}

/// Releases principal `name`'s actor on `server`; one being read or retiring just now is
/// asked again every 100 ms, for up to `patience`.
pub(super) async fn release_principal(
    server: &Server,
    name: &str,
    patience: Duration,
) -> Result<(), OwnershipError> {
    let give_up = tokio::time::Instant::now() + patience;
    loop {
        match server.release_principal(name).await {
            Err(OwnershipError::PrincipalBusy { .. }) if tokio::time::Instant::now() < give_up => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => return other,
        }
    }
}

impl Principals {
    /// Whether the node is stopping ([`Principals::stop_taking`]).
    pub(super) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// The node stops taking anything new on (see the module docs, step 1); once is
    /// enough, again changes nothing.
    pub fn stop_taking(&self) {
        self.stopping.store(true, Ordering::Release);
    }

    /// Hands on everything this node runs (see the module docs, steps 2 and 3), once
    /// [`Principals::stop_taking`] was called and the requests in flight answered; `server`
    /// is its arcade's. Every lease this node held is let go of when it returns.
    pub async fn hand_on(&self, server: &Server) -> HandedOn {
        self.stop_taking();
        let (me, ttl) = (self.node.settings.name.clone(), self.node.settings.ttl);
        let mut handed = HandedOn::default();
        for name in self.held_principals() {
            match release_principal(server, &name, ttl).await {
                Ok(()) | Err(OwnershipError::PrincipalNotRunning { .. }) => {
                    handed.principals += 1;
                }
                Err(e) => {
                    tracing::warn!(node = %me, principal = %name, error = %e, "a principal could not be released cleanly as the node stops");
                    handed.principals += 1;
                }
            }
        }
        for id in server.running_instances().await {
            match server.release_instance(id).await {
                Ok(()) => handed.instances += 1,
                Err(OwnershipError::NotRunning { .. }) => {}
                Err(e) => {
                    tracing::warn!(node = %me, instance = id, error = %e, "an instance could not be released as the node stops: it stops with the process, its lease let expire for a scan");
                    handed.unreleased += 1;
                }
            }
        }
        // No renewal from here on: one under way ends first, and the next renews nothing.
        let _renewals = self.renewing.lock().await;
        let all: Vec<Lease> = lock(&self.held).drain().map(|(_, l)| l).collect();
        let (principals, instances): (Vec<Lease>, Vec<Lease>) =
            all.into_iter().partition(|l| l.kind == PRINCIPAL);
        for lease in principals {
            self.fence.forget(&lease.kind, &lease.key);
            let leases = self.leases.clone();
            if let Err(e) = blocking(move || leases.release(&lease)).await {
                tracing::warn!(node = %me, error = %e, "a principal's lease could not be released: it expires");
            }
        }
        for lease in instances.into_iter().filter(|l| l.kind == INSTANCE) {
            self.fence.forget(&lease.kind, &lease.key);
            let leases = self.leases.clone();
            if let Err(e) = blocking(move || leases.expire(&lease)).await {
                tracing::warn!(node = %me, error = %e, "an instance's lease could not be let expire: it expires in its time");
            }
        }
        handed
    }
}

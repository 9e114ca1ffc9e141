//! The lobby's "players online" across nodes (issue #41, `docs/ownership.md` §1;
//! `mcpl-arcade serve … --ownership principal`): a player online on any node is listed as
//! online by every node's lobby.
//!
//! **\[project\]** The lease table says it, no message between nodes: a named principal's
//! sessions all run on the node holding her lease `(principal, NAME)`, so that node alone
//! knows whether she is online, and marks her lease row so ([`PgLeases::share_online`]).
//! A live lease alone would not do: a node keeps a principal's lease after her last
//! connection closes (her actor, her games and her kept toolsets stay there), so every
//! player ever served would be listed for as long as her node lives. At a third of the
//! lease's time to live, each node marks which of its principals' leases are of players
//! online on it and reads every lease marked online, in one call on a connection of its
//! own (a slow read never holds up a renewal), and tells its arcade those held by the
//! other nodes ([`Arcade::set_online_elsewhere`]); its own it knows first-hand.
//!
//! **Bounds.** A player's arrival or departure reaches the other nodes' lobbies within
//! two thirds of the lease's time to live (marked at her node's next round, read at
//! theirs); an expired lease (its node died) is never read, so a dead node's players
//! leave the lists within the time to live. At most [`ONLINE_SHARED`] players online on
//! the other nodes are listed, the first by name **\[project\]**; the others are counted
//! in the node's log line. A round the database fails lists none elsewhere until the next
//! one succeeds (what it read last may be stale by then).

use super::blocking;
use crate::arcade::Arcade;
use mcpl_cluster::PgLeases;
use mcpl_cluster::leases::PRINCIPAL;
use mcpl_transport::Principal;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// The most players online on other nodes a node lists (module docs) **\[project\]**:
/// the lobby's page is 50; ten thousand names are a few hundred KiB read at each round.
pub const ONLINE_SHARED: usize = 10_000;

/// Shares who is online between `arcade`, served as node `node`, and the other nodes
/// through the lease table on `leases` (a connection of its own), at a third of `ttl`,
/// until the process ends (module docs). Each change of how many are online elsewhere is
/// said on stderr.
pub async fn share_online(arcade: Arcade, leases: Arc<PgLeases>, node: String, ttl: Duration) {
    let mut tick = tokio::time::interval(ttl / 3);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut told: Option<BTreeSet<String>> = None;
    let mut failing = false;
    loop {
        tick.tick().await;
        let here: Vec<String> = arcade
            .server()
            .online_page(None, ONLINE_SHARED)
            .principals
            .iter()
            .filter(|p| matches!(p, Principal::Named(_)))
            .map(Principal::name)
            .collect();
        let l = leases.clone();
        let read = blocking(move || l.share_online(PRINCIPAL, &here, ONLINE_SHARED)).await;
        let (elsewhere, total) = match read {
            Ok(online) => {
                failing = false;
                let elsewhere: BTreeSet<String> = online
                    .keys
                    .into_iter()
                    .filter(|(_, holder)| *holder != node)
                    .map(|(key, _)| key)
                    .collect();
                (elsewhere, online.total)
            }
            Err(e) => {
                if !failing {
                    tracing::warn!(error = %e, "who is online on the other nodes cannot be read");
                }
                failing = true;
                (BTreeSet::new(), 0)
            }
        };
        if told.as_ref() != Some(&elsewhere) {
            eprintln!(
                "mcpl-arcade: node {node:?} lists {} player(s) online on other nodes ({total} online in all)",
                elsewhere.len()
            );
            arcade.set_online_elsewhere(elsewhere.clone());
            told = Some(elsewhere);
        }
    }
}

//! Principals placed before they start (issue #41, `docs/ownership.md` §1;
//! `crate::placement`): on a server given a [`Placement`](crate::Placement), a named
//! principal with no actor here that an invitation (nobody serving her on the peers) or an
//! outbox's batches bring here is started only once the placement says **here** (the node
//! holds her lease, or took it). What arrives for her meanwhile waits, in order; a session
//! attaching meanwhile places her here at once (the cluster's front sent it here).
//!
//! **Elsewhere, or nobody can say**: what waited is sent to her address on the peers again
//! after a pause — 1 s, doubling for each such answer in a row up to 30 s
//! (`read_again_after`) **\[project\]** — and what comes back (nobody serves her yet) is
//! placed again. So an invitation reaches her once whoever holds her runs her, and is
//! never started here against her lease. An outbox's batches wait in the outbox, which
//! asks again itself.

use super::{Held, Registry, read_again_after};
use crate::placement::Placed;
use actix::prelude::*;
use mcpl_transport::Principal;

/// A principal being placed, or waiting to be sent to again: what waits for her.
pub(crate) struct Placing {
    /// The placement asked (or the pause scheduled) that this entry waits for.
    token: u64,
    held: Vec<Held>,
}

/// The placement's answer for `principal`.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct PlacedFor {
    principal: Principal,
    token: u64,
    placed: Placed,
}

impl Registry {
    /// Asks the placement whether `principal` starts here, `m` waiting for the answer
    /// (none: an outbox's first use).
    pub(super) fn place(&mut self, principal: Principal, m: Option<Held>) {
        if let Some(p) = self.placing.get_mut(&principal) {
            p.held.extend(m);
            return;
        }
        let (Some(placement), Some(me), Principal::Named(name)) =
            (self.shared.placement.clone(), self.me.clone(), &principal)
        else {
            self.loading
                .insert(principal.clone(), m.into_iter().collect());
            return self.fetch(principal);
        };
        self.next_read += 1;
        let token = self.next_read;
        let asked = placement.place(name);
        let held = m.into_iter().collect();
        self.placing
            .insert(principal.clone(), Placing { token, held });
        actix::spawn(async move {
            let placed = asked.await;
            me.do_send(PlacedFor {
                principal,
                token,
                placed,
            });
        });
    }

    /// `m` for a principal being placed: it waits with the rest — but a session attaching
    /// places her here (whoever routes connections sent it), and she is read now.
    pub(super) fn while_placing(&mut self, principal: &Principal, m: Held) {
        let Some(p) = self.placing.get_mut(principal) else {
            return self.route_here(principal, m);
        };
        if !matches!(m, Held::Attach(..)) {
            return p.held.push(m);
        }
        let mut held = self
            .placing
            .remove(principal)
            .map(|p| p.held)
            .unwrap_or_default();
        held.push(m);
        self.placed_away.remove(principal);
        self.loading.insert(principal.clone(), held);
        self.fetch(principal.clone());
    }

    /// What waits for `principal`, after a pause, to her address on the peers again.
    fn send_again(&mut self, principal: Principal, token: u64) {
        if self
            .placing
            .get(&principal)
            .is_none_or(|p| p.token != token)
        {
            return; // placed here meanwhile (a session)
        }
        let held = self
            .placing
            .remove(&principal)
            .map(|p| p.held)
            .unwrap_or_default();
        let here = self.principals.contains_key(&principal);
        for m in held {
            if here {
                self.route_here(&principal, m); // started meanwhile (an adoption)
            } else {
                self.send_elsewhere(&principal, m);
            }
        }
    }
}

impl Handler<PlacedFor> for Registry {
    type Result = ();

    fn handle(&mut self, m: PlacedFor, ctx: &mut Context<Self>) {
        let principal = m.principal;
        if self
            .placing
            .get(&principal)
            .is_none_or(|p| p.token != m.token)
        {
            return; // placed here meanwhile (a session)
        }
        match m.placed {
            Placed::Here => {
                self.placed_away.remove(&principal);
                let held = self
                    .placing
                    .remove(&principal)
                    .map(|p| p.held)
                    .unwrap_or_default();
                if self.principals.contains_key(&principal) {
                    // Started meanwhile (an adoption read her): what waited goes to her.
                    for m in held {
                        self.route_here(&principal, m);
                    }
                    return;
                }
                self.loading.insert(principal.clone(), held);
                self.fetch(principal);
            }
            Placed::Elsewhere | Placed::Unknown => {
                let away = self.placed_away.entry(principal.clone()).or_default();
                *away += 1;
                let after = read_again_after(*away);
                tracing::debug!(principal = %principal.name(), placed = ?m.placed, ?after, "a principal brought here runs elsewhere: what waits for her is sent to her again");
                let Some(p) = self.placing.get_mut(&principal) else {
                    return;
                };
                if p.held.is_empty() {
                    // An outbox's first use: the outbox asks again itself.
                    self.placing.remove(&principal);
                    return;
                }
                self.next_read += 1;
                let token = self.next_read;
                p.token = token;
                ctx.run_later(after, move |act, _| act.send_again(principal, token));
            }
        }
    }
}

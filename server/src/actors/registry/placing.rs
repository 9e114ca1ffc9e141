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
//!
//! **Bounded** **\[project\]**: what waits for one principal — here while her placement
//! is asked or her next try is due, and in the registry's `loading` while her record is
//! read or read again after a failure — is at most [`WAITING_INVITATIONS`] invitations and
//! [`WAITING_BYTES`] bytes of them ([`Registry::waits`]). An invitation past the bound is
//! **declined on her behalf**, as one past the bound of what goes to a principal
//! elsewhere (`elsewhere.rs`): its instance hears the decline, so nothing waits on an
//! invitation never shown. A withdrawal of an invitation still waiting takes it back —
//! neither reaches her —; any other withdrawal waits (one per invitation at most). While
//! placed, a detach or a catalog swap is dropped: she has no actor here to tell.

use super::{Held, Registry, read_again_after};
use crate::actors::instance::{Decline, Invitation};
use crate::placement::{Placed, WAITING_BYTES, WAITING_INVITATIONS};
use actix::prelude::*;
use mcpl_transport::Principal;

/// What an invitation held for a principal weighs against [`WAITING_BYTES`].
fn weight(i: &Invitation) -> usize {
    let invite = &i.invite;
    let options = invite
        .options
        .as_ref()
        .and_then(|o| serde_json::to_vec(o).ok())
        .map_or(0, |o| o.len());
    invite.reason.len()
        + invite.toolset.len()
        + invite.name.as_ref().map_or(0, String::len)
        + invite.from.name().len()
        + options
}

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
            if let Some(m) = m {
                Self::waits(&mut p.held, &principal, m);
            }
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
        match m {
            Held::Attach(..) => {}
            // No actor of hers here to tell (a session attaching places her first).
            Held::Detach(_) | Held::Swap(_) => return,
            m => return Self::waits(&mut p.held, principal, m),
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

    /// `m` waits for `principal` in `held`, within the bound (see the module docs): an
    /// invitation past it declined on her behalf, a withdrawal taking back the invitation
    /// it withdraws when that still waits.
    pub(super) fn waits(held: &mut Vec<Held>, principal: &Principal, m: Held) {
        match m {
            Held::Withdrawn(w) => {
                let waiting = held.iter().position(
                    |h| matches!(h, Held::Invitation(i) if i.id == w.id && i.invite.who == w.who),
                );
                match waiting {
                    Some(at) => drop(held.remove(at)),
                    None => held.push(Held::Withdrawn(w)),
                }
            }
            Held::Invitation(i) => {
                let (invitations, bytes) = held.iter().fold((0, 0), |(n, b), h| match h {
                    Held::Invitation(j) => (n + 1, b + weight(j)),
                    _ => (n, b),
                });
                if invitations < WAITING_INVITATIONS && bytes + weight(&i) <= WAITING_BYTES {
                    return held.push(Held::Invitation(i));
                }
                tracing::warn!(principal = %principal.name(), instance = %i.id, "too many invitations wait for a principal being placed or read: declined on its behalf");
                i.instance.do_send(Decline {
                    who: i.invite.who,
                    principal: principal.clone(),
                });
            }
            other => held.push(other),
        }
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

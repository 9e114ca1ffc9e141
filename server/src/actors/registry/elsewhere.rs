//! Invitations for principals that run on another server (issue #41, `docs/ownership.md`
//! §2, §4.6 shared instances): an instance here invites a named principal this server
//! runs no actor of (none, none being read), and the server has peers — the invitation
//! goes to whoever serves that principal's address (`mcpl.a.<principal>`), as
//! `wire::ToPrincipal::Invitation`, and a withdrawal after it as `InvitationWithdrawn`.
//! The invitee's server shows it (its principal links to the instance by id) and its
//! join, decline and calls come back over the references of `actors/remote.rs`.
//!
//! **Nobody serves it** (the peers answer "no responders": nothing ran) **\[project\]**:
//! the message comes back and is routed here as before — the principal is read and
//! started on its first use. Sending is the probe: asking whether somebody serves the
//! address and then sending would leave a gap between the two.
//!
//! **In order.** One stream per principal while something is in flight to it: what the
//! registry routes for that principal meanwhile (another invitation, a withdrawal) goes
//! after it on the same stream, and what comes back is routed here in the order it was
//! sent. The registry counts what is in flight and forgets the stream when nothing is, so
//! it holds one only for principals with a message under way. A message not acknowledged
//! otherwise (a time-out, a full inbox, the bus down) is logged and not sent again.
//!
//! **Bounded** (`peers::PeerBounds`, count and bytes per principal): an invitation past
//! the bound is **declined on the invitee's behalf** **\[project\]** — its instance
//! hears the decline (as if the invitee said no), so nothing waits on an invitation never
//! sent; a withdrawal always goes (one per invitation in flight at most).

use super::{Held, Registry};
use crate::actors::instance::ForPrincipal;
use crate::actors::remote;
use crate::core::wire::{Numbered, RemoteInvite, ToPrincipal as WireToPrincipal};
use crate::peers::{PeerAddress, PeerError};
use crate::shared::Shared;
use actix::prelude::*;
use mcpl_transport::Principal;
use tokio::sync::mpsc;

/// The stream of invitations and withdrawals to one principal served elsewhere, with how
/// many of them are in flight.
pub(crate) struct Elsewhere {
    stream: mpsc::UnboundedSender<(ForPrincipal, usize)>,
    pending: usize,
    /// The bytes of what is in flight (as JSON).
    bytes: usize,
}

/// The stream's account of one message it had: `back` when nobody served the principal
/// (or it could not be sent at all): route it here.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct Passed {
    principal: Principal,
    back: Option<ForPrincipal>,
    /// Its size, as counted when it was sent.
    size: usize,
}

impl Registry {
    /// Whether `m` for `principal` goes to another server: something is in flight to it
    /// already (it goes after), or the principal is named, has no actor here nor a read
    /// under way, and the server has peers — and, for an invitation, its opener is named
    /// (an anonymous principal never crosses servers, `docs/ownership.md` §1).
    pub(super) fn goes_elsewhere(&self, principal: &Principal, m: &Held) -> bool {
        let message = match m {
            Held::Invitation(i) => Some(matches!(i.invite.from, Principal::Named(_))),
            Held::Withdrawn(_) => Some(true),
            _ => None,
        };
        let Some(crosses) = message else {
            return false;
        };
        if self.elsewhere.contains_key(principal) {
            return true;
        }
        crosses
            && self.shared.peers.is_some()
            && matches!(principal, Principal::Named(_))
            && !self.principals.contains_key(principal)
            && !self.loading.contains_key(principal)
            && !self.placing.contains_key(principal)
    }

    /// Sends `m` on `principal`'s stream (see the module docs).
    pub(super) fn send_elsewhere(&mut self, principal: &Principal, m: Held) {
        let message = match m {
            Held::Invitation(i) => ForPrincipal::Invitation(i),
            Held::Withdrawn(w) => ForPrincipal::Withdrawn(w),
            other => return self.route_here(principal, other),
        };
        if !self.elsewhere.contains_key(principal) {
            let me = self.me.clone().expect("set when the registry started");
            let stream = stream(&self.shared, principal.clone(), me);
            let entry = Elsewhere {
                stream,
                pending: 0,
                bytes: 0,
            };
            self.elsewhere.insert(principal.clone(), entry);
        }
        let size = wire(&message)
            .and_then(|w| serde_json::to_vec(&w).ok())
            .map_or(0, |b| b.len());
        let bounds = self.shared.peer_bounds;
        let entry = self
            .elsewhere
            .get_mut(principal)
            .expect("inserted just above");
        if let ForPrincipal::Invitation(i) = &message
            && (entry.pending >= bounds.count || entry.bytes.saturating_add(size) > bounds.bytes)
        {
            // Past the bound (see the module docs): declined on the invitee's behalf.
            tracing::warn!(principal = %principal.name(), instance = %i.id, "too many invitations in flight to a principal on another server: declined on its behalf");
            i.instance.do_send(crate::actors::instance::Decline {
                who: i.invite.who,
                principal: principal.clone(),
            });
            return;
        }
        entry.pending += 1;
        entry.bytes += size;
        if let Err(unsent) = entry.stream.send((message, size)) {
            // Its task is gone (the peers with it): routed here.
            let (message, size) = unsent.0;
            self.passed(principal.clone(), Some(message), size);
        }
    }

    /// Nobody serves `principal`, and an instance here has batches for it (issue #41,
    /// `actors/outbox.rs`): its actor is started here — read first, as on any first use —
    /// unless it has one here or is being read; it serves its address once it runs, where
    /// the outbox's next try reaches it.
    pub(super) fn first_use(&mut self, principal: &Principal) {
        if self.principals.contains_key(principal)
            || self.loading.contains_key(principal)
            || self.placing.contains_key(principal)
            || !matches!(principal, Principal::Named(_))
        {
            return;
        }
        tracing::debug!(principal = %principal.name(), "nobody serves a principal an outbox holds batches for: started here");
        if self.reads(principal) && self.shared.placement.is_some() {
            // Placed first (`placing.rs`): started here only where the cluster says.
            self.place(principal.clone(), None);
        } else if self.reads(principal) {
            self.loading.insert(principal.clone(), Vec::new());
            self.fetch(principal.clone());
        } else {
            self.entry(principal, &Arbiter::current());
        }
    }

    /// One message of `principal`'s stream, of `size` bytes, was sent, or came `back`.
    fn passed(&mut self, principal: Principal, back: Option<ForPrincipal>, size: usize) {
        if back.is_none() {
            self.placed_away.remove(&principal); // it reached her
        }
        if let Some(entry) = self.elsewhere.get_mut(&principal) {
            entry.pending = entry.pending.saturating_sub(1);
            entry.bytes = entry.bytes.saturating_sub(size);
            if entry.pending == 0 {
                self.elsewhere.remove(&principal);
            }
        }
        if let Some(m) = back {
            let held = match m {
                ForPrincipal::Invitation(i) => Held::Invitation(i),
                ForPrincipal::Withdrawn(w) => Held::Withdrawn(w),
                ForPrincipal::FirstUse => return self.first_use(&principal),
            };
            self.route_here(&principal, held);
        }
    }
}

impl Handler<Passed> for Registry {
    type Result = ();

    fn handle(&mut self, m: Passed, _: &mut Context<Self>) {
        self.passed(m.principal, m.back, m.size);
    }
}

/// The task sending `principal`'s stream in order, each message's outcome told to the
/// registry `me`.
fn stream(
    shared: &std::sync::Arc<Shared>,
    principal: Principal,
    me: Addr<Registry>,
) -> mpsc::UnboundedSender<(ForPrincipal, usize)> {
    let (tx, mut rx) = mpsc::unbounded_channel::<(ForPrincipal, usize)>();
    let (peers, timeout) = (shared.peers.clone(), shared.peer_timeout);
    actix::spawn(async move {
        let stream = remote::new_stream();
        let mut number = 0;
        while let Some((message, size)) = rx.recv().await {
            let crossing = match (&peers, &principal, wire(&message)) {
                (Some(peers), Principal::Named(name), Some(wire)) => Some((peers, name, wire)),
                _ => None,
            };
            let back = match crossing {
                // It cannot cross: routed here.
                None => Some(message),
                Some((peers, name, wire)) => {
                    number += 1;
                    let numbered = Numbered {
                        stream,
                        number,
                        message: wire,
                    };
                    let to = PeerAddress::Principal(name.clone());
                    match remote::send(&**peers, to, &numbered, timeout).await {
                        Ok(()) => None,
                        // Nothing ran: nobody serves it (its first use is here), or it
                        // is too large to cross.
                        Err(PeerError::NoResponders(_) | PeerError::TooLarge { .. }) => {
                            Some(message)
                        }
                        Err(e) => {
                            tracing::warn!(principal = %name, error = %e, "an invitation or withdrawal for a principal on another server was not acknowledged");
                            None
                        }
                    }
                }
            };
            let principal = principal.clone();
            me.do_send(Passed {
                principal,
                back,
                size,
            });
        }
    });
    tx
}

/// `m` as it crosses servers; `None` for an anonymous opener's invitation.
fn wire(m: &ForPrincipal) -> Option<WireToPrincipal> {
    match m {
        ForPrincipal::Invitation(i) => {
            let invite = RemoteInvite::try_from(i.invite.clone()).ok()?;
            Some(WireToPrincipal::Invitation { id: i.id, invite })
        }
        ForPrincipal::Withdrawn(w) => Some(WireToPrincipal::InvitationWithdrawn {
            id: w.id,
            who: w.who,
        }),
        ForPrincipal::FirstUse => None,
    }
}

//! What a principal and an instance say to each other.

use super::InstanceActor;
use crate::author::{Opening, ParticipantId, ToolsetLogic};
use crate::core::instance_core::Invite;
use crate::ids::InstanceId;
use crate::ids::SessionId;
use crate::store::Follow;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::Id;
use mcpl_transport::Principal;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A principal's record of an instance: where its changes go, and under which name (§7).
pub(crate) type Link = crate::core::instance_core::Link<PrincipalRef>;

/// An instance's link to a participant's principal: here, or on another server (issue
/// #41, `actors/remote.rs`).
#[derive(Clone)]
pub(crate) enum PrincipalRef {
    /// The principal's actor runs here.
    Local(Recipient<Batched>),
    /// It runs elsewhere: reached by its name.
    Remote(crate::actors::remote::RemotePrincipal),
}

impl PrincipalRef {
    /// Hands the principal a batch: here at once (it waits for the batch's ticket
    /// itself); elsewhere once the ticket is kept, in order.
    pub(crate) fn do_send(&self, Batched(batch, follow): Batched) {
        match self {
            PrincipalRef::Local(r) => r.do_send(Batched(batch, follow)),
            PrincipalRef::Remote(r) => {
                // Another server's commit cannot follow this one's (`docs/ownership.md`
                // §3): nothing to promise.
                drop(follow);
                r.send(batch);
            }
        }
    }
}

pub(crate) use crate::core::batch::{Batch, CallAnswer, Closed, EnterFailure, Entered};

/// An instance's [`Batch`] for a principal, as a message (the core's type knows no actix),
/// with the step the principal is to hand over once it applied it, promised to the commit
/// queue so that the instance's record waits to be committed with it (issue #42 item 1).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Batched(pub(crate) Batch, pub(crate) Follow);

// ---- principal → instance ----

/// Run the toolset's open (awaited by the opener's principal; the answer carries the
/// principal's step promised to follow the instance's, [`Batched`]).
#[derive(Message)]
#[rtype(result = "Result<(Entered, Follow), EnterFailure>")]
pub(crate) struct Start {
    pub(crate) logic: Arc<dyn ToolsetLogic>,
    pub(crate) opening: Opening,
    pub(crate) link: Link,
}

/// An invited principal opened the instance (awaited by its principal; see [`Start`]).
#[derive(Message)]
#[rtype(result = "Result<(Entered, Follow), EnterFailure>")]
pub(crate) struct Join {
    pub(crate) who: ParticipantId,
    pub(crate) principal: Principal,
    pub(crate) link: Link,
}

/// A participant called a tool of the toolset.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Call {
    pub(crate) who: ParticipantId,
    /// The caller's record, for an answer even when it is no longer linked.
    pub(crate) link: Link,
    pub(crate) session: SessionId,
    pub(crate) request: Id,
    pub(crate) tool: String,
    pub(crate) arguments: Map<String, Value>,
}

/// A participant closes the instance (`toolsets/close`; awaited by its principal; see
/// [`Start`]).
#[derive(Message)]
#[rtype(result = "(Closed, Follow)")]
pub(crate) struct CloseInstance {
    pub(crate) who: ParticipantId,
}

/// A participant's record ended on its principal's side (its last connection closed, a
/// manifest change): the logic hears it as a close, nothing goes back to it.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Leave {
    pub(crate) who: ParticipantId,
    /// The instance's step, promised to follow the principal's ([`Batched`]).
    pub(crate) follow: Follow,
}

/// A principal dropped its link after applying the instance's end.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Unlink {
    pub(crate) who: ParticipantId,
    /// The instance's step (its record forgotten, or written without the link), promised
    /// to follow the principal's ([`Batched`]).
    pub(crate) follow: Follow,
}

// ---- instance → principal ----

/// An instance invites the principal (§4.6: a shared instance).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Invitation {
    pub(crate) instance: Addr<InstanceActor>,
    pub(crate) id: InstanceId,
    pub(crate) invite: Invite,
}

/// The invited principal received the invitation and shows it under `name` (§7; `None`
/// for a toolset without instances).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct InvitationNamed {
    pub(crate) who: ParticipantId,
    pub(crate) name: Option<String>,
}

/// The invited principal declines (awaited by its principal, for the handler that asked).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Decline {
    pub(crate) who: ParticipantId,
    pub(crate) principal: Principal,
}

// ---- instance → registry ----

/// A message for a principal, which may have no actor yet (an invitation reaches a
/// principal with no connection): the registry routes it, starting the actor if needed.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct ToPrincipal {
    pub(crate) principal: Principal,
    pub(crate) message: ForPrincipal,
}

/// What [`ToPrincipal`] carries.
pub(crate) enum ForPrincipal {
    Invitation(Invitation),
    Withdrawn(InvitationWithdrawn),
    /// Nobody serves the principal, and this instance's outbox holds batches for it
    /// (issue #41, `docs/ownership.md` §2): started here on its first use, where the
    /// outbox reaches it next (`registry/elsewhere.rs`).
    FirstUse,
}

/// The instance ended or closed before the invited principal joined.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct InvitationWithdrawn {
    pub(crate) id: InstanceId,
    pub(crate) who: ParticipantId,
}

/// Participant `who`'s principal, `name`, was released on this server (issue #41,
/// `Server::release_principal`): the instance reaches it by name from now on, wherever it
/// runs next — its batches through the outbox (`outbox.rs`). Answered once relinked
/// (false: `who` does not link here, or the server has no peers).
#[derive(Message)]
#[rtype(result = "bool")]
pub(crate) struct ParticipantMoved {
    pub(crate) who: ParticipantId,
    pub(crate) name: String,
}

//! The records a server writes to its [`Store`](super::Store), as JSON: one per principal,
//! one per instance. Their shape is the store's format (`redb_store.rs`'s `FORMAT`).

pub(crate) use super::not_kept::NotKept;
use super::{Ticket, Writes};
use crate::author::{Participant, ParticipantId, ParticipantKind};
use crate::core::{InstanceKey, Snapshot};
use crate::shared::Shared;
use mcpl_transport::Principal;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The reason an instance ends with when its logic is not kept across restarts.
pub const REASON_NOT_KEPT: &str =
    "the server restarted, and this toolset's instances do not survive a restart";
/// The reason an instance ends with when its record was not found after a restart.
pub const REASON_LOST: &str = "the server restarted, and the instance's state was not found";

/// A principal's record: its state and its links to instances.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct PrincipalRecord {
    pub(crate) state: Snapshot,
    pub(crate) links: Vec<LinkRecord>,
}

/// A principal's link to an instance: its key for it, the instance, and who it is there.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LinkRecord {
    pub(crate) key: InstanceKey,
    pub(crate) instance: u64,
    pub(crate) who: u32,
}

/// An instance's record.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct InstanceRecord {
    pub(crate) toolset: String,
    pub(crate) name: Option<String>,
    pub(crate) options: Value,
    pub(crate) participants: Vec<ParticipantRecord>,
    pub(crate) names: BTreeMap<u32, String>,
    /// The participants whose principals link here, with their key for it.
    pub(crate) links: BTreeMap<u32, InstanceKey>,
    pub(crate) invited: BTreeMap<u32, InviteRecord>,
    pub(crate) next_call: u64,
    pub(crate) ended: Option<String>,
    pub(crate) logic: LogicRecord,
}

/// An invitation not taken up yet: sent again after a restart.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct InviteRecord {
    pub(crate) principal: String,
    pub(crate) reason: String,
    pub(crate) options: Option<Value>,
}

/// The logic's state.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum LogicRecord {
    /// A [`Durable`](crate::Durable) logic's, in its format.
    Kept { format: u32, state: Value },
    /// The logic is not kept across restarts.
    NotKept,
    /// The logic is durable but its state could not be written (the reason).
    Unwritable(String),
    /// The instance has ended: no logic.
    Gone,
}

/// A participant, as kept. An anonymous principal can never come back (§4.6): it is kept
/// as gone.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum ParticipantRecord {
    Principal(String),
    Invited(String),
    Bot(String),
    Left(Option<String>),
    Declined(Option<String>),
}

fn named(p: &Principal) -> Option<String> {
    match p {
        Principal::Named(n) => Some(n.clone()),
        Principal::Anonymous(_) => None,
    }
}

fn principal(name: Option<String>) -> Principal {
    name.map_or_else(Principal::anonymous, Principal::Named)
}

impl ParticipantRecord {
    pub(crate) fn of(p: &Participant) -> Self {
        match &p.kind {
            ParticipantKind::Principal(Principal::Named(n)) => Self::Principal(n.clone()),
            ParticipantKind::Invited(Principal::Named(n)) => Self::Invited(n.clone()),
            ParticipantKind::Bot(n) => Self::Bot(n.clone()),
            ParticipantKind::Principal(p)
            | ParticipantKind::Invited(p)
            | ParticipantKind::Left(p) => Self::Left(named(p)),
            ParticipantKind::Declined(p) => Self::Declined(named(p)),
        }
    }

    pub(crate) fn participant(self, id: usize) -> Participant {
        let kind = match self {
            Self::Principal(n) => ParticipantKind::Principal(Principal::Named(n)),
            Self::Invited(n) => ParticipantKind::Invited(Principal::Named(n)),
            Self::Bot(n) => ParticipantKind::Bot(n),
            Self::Left(n) => ParticipantKind::Left(principal(n)),
            Self::Declined(n) => ParticipantKind::Declined(principal(n)),
        };
        Participant {
            id: ParticipantId(u32::try_from(id).unwrap_or(u32::MAX)),
            kind,
        }
    }
}

impl Shared {
    /// Hands an instance's record (`Some`) or its forgetting (`None`) to the store; the
    /// ticket to wait for before telling what it keeps ([`Ticket::NONE`] without a store).
    /// Once the store was given up, nothing is written ([`NotKept`]).
    pub(crate) fn write_instance(&self, id: u64, record: Option<&[u8]>) -> Result<Ticket, NotKept> {
        self.submit(Writes::instance(id, record))
    }

    /// Hands a principal's record (`Some`) or its forgetting (`None`) to the store. See
    /// [`Shared::write_instance`].
    pub(crate) fn write_principal(
        &self,
        principal: &str,
        record: Option<&[u8]>,
    ) -> Result<Ticket, NotKept> {
        self.submit(Writes::principal(principal, record))
    }

    fn submit(&self, writes: Writes) -> Result<Ticket, NotKept> {
        match &self.commits {
            Some(queue) => queue.submit(writes),
            None => Ok(Ticket::NONE),
        }
    }

    /// What became of `t`, when that is decided: kept, or not (the store was given up).
    pub(crate) fn outcome(&self, t: Ticket) -> Option<Result<(), NotKept>> {
        match &self.commits {
            Some(queue) => queue.outcome(t),
            None => Some(Ok(())),
        }
    }

    /// Resolves once `t` is decided. See [`Shared::outcome`].
    pub(crate) fn kept(
        &self,
        t: Ticket,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), NotKept>>>> {
        match &self.commits {
            Some(queue) => Box::pin(queue.wait(t)),
            None => Box::pin(std::future::ready(Ok(()))),
        }
    }
}

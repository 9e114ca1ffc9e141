//! The records a server writes to its `Store`, as JSON: one per principal,
//! one per instance. Their shape is the store's format (`redb_store.rs`'s `FORMAT`).

pub use super::not_kept::NotKept;
use crate::author::{Participant, ParticipantId, ParticipantKind};
use crate::{InstanceKey, Snapshot};
use mcpl_protocol::principal::Principal;
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
pub struct PrincipalRecord {
    /// The principal's pure state.
    pub state: Snapshot,
    /// Its links to instances.
    pub links: Vec<LinkRecord>,
}

/// A principal's link to an instance: its key for it, the instance, and who it is there.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LinkRecord {
    /// The principal's key for the instance.
    pub key: InstanceKey,
    /// The instance's id.
    pub instance: u64,
    /// Who the principal is there.
    pub who: u32,
    /// The last batch applied of the instance's stream when it runs on another server
    /// (issue #41, `docs/ownership.md` §3): a principal read again drops what it applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heard: Option<Heard>,
}

/// The last message applied of a numbered stream from another server: its stream and
/// number (`wire::Numbered`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heard {
    /// The stream.
    pub stream: u64,
    /// The last number applied.
    pub number: u64,
}

/// The batches an instance sent a participant's principal on another server and that
/// were not acknowledged yet, with the stream they go on (issue #41, `docs/ownership.md`
/// §3): kept with the instance so that whoever runs it next sends them again, on the
/// same stream and numbers, and the principal drops what it applied.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutboxRecord {
    /// The principal's name.
    pub principal: String,
    /// The stream's id (`wire::Numbered::stream`).
    pub stream: u64,
    /// The last number given to a batch.
    pub sent: u64,
    /// The batches not acknowledged, by number, oldest first (each a `Batch` as JSON).
    pub held: Vec<(u64, Value)>,
}

/// An instance's record.
#[derive(Debug, Serialize, Deserialize)]
pub struct InstanceRecord {
    /// The toolset.
    pub toolset: String,
    /// The instance's name.
    pub name: Option<String>,
    /// The options it was opened with.
    pub options: Value,
    /// Its participants, by id.
    pub participants: Vec<ParticipantRecord>,
    /// The names participants were shown by (§7), by id.
    pub names: BTreeMap<u32, String>,
    /// The participants whose principals link here, with their key for it.
    pub links: BTreeMap<u32, InstanceKey>,
    /// Invitations not taken up, by participant id.
    pub invited: BTreeMap<u32, InviteRecord>,
    /// The next call id to hand out.
    pub next_call: u64,
    /// The reason, once ended.
    pub ended: Option<String>,
    /// The logic's state.
    pub logic: LogicRecord,
    /// Per participant whose principal runs on another server: its stream and the
    /// batches not acknowledged (issue #41, `docs/ownership.md` §3).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub outbox: BTreeMap<u32, OutboxRecord>,
}

/// An invitation not taken up yet: sent again after a restart.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InviteRecord {
    /// The invited principal's name.
    pub principal: String,
    /// Why, as the invitee is told.
    pub reason: String,
    /// The options its open carries.
    pub options: Option<Value>,
}

/// The logic's state.
#[derive(Debug, Serialize, Deserialize)]
pub enum LogicRecord {
    /// A `Durable` logic's, in its format.
    Kept {
        /// The format its `Durable` logic wrote.
        format: u32,
        /// The state.
        state: Value,
    },
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
pub enum ParticipantRecord {
    /// A named principal present.
    Principal(String),
    /// A named principal invited, not joined.
    Invited(String),
    /// A bot, by name.
    Bot(String),
    /// A principal that left (its name if named).
    Left(Option<String>),
    /// A principal that declined (its name if named).
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
    /// A participant as kept.
    pub fn of(p: &Participant) -> Self {
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

    /// The participant `id` this record was kept for.
    pub fn participant(self, id: usize) -> Participant {
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

/// The last batch applied of each instance's stream a principal's core record `bytes`
/// keeps (`LinkRecord::heard`, issue #41), read from its links only; none when they
/// cannot be read.
pub fn heard(bytes: &[u8]) -> Vec<(u64, Heard)> {
    #[derive(Deserialize)]
    struct Links {
        links: Vec<Link>,
    }
    #[derive(Deserialize)]
    struct Link {
        instance: u64,
        #[serde(default)]
        heard: Option<Heard>,
    }
    serde_json::from_slice::<Links>(bytes)
        .map(|l| {
            l.links
                .into_iter()
                .filter_map(|l| Some((l.instance, l.heard?)))
                .collect()
        })
        .unwrap_or_default()
}

/// What an instance's record says its resumption needs ([`needs`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needs {
    /// Its record says it ended.
    pub ended: bool,
    /// The named principals among its participants, present or linking to it, sorted and
    /// each once: the principals whose records its resumption reads (issue #41).
    pub principals: Vec<String>,
}

/// What an instance's record `bytes` needs to be resumed, read from only the fields that
/// say it (its logic's state is skipped); `None` when they cannot be read.
pub fn needs(bytes: &[u8]) -> Option<Needs> {
    #[derive(Deserialize)]
    struct Head {
        participants: Vec<ParticipantRecord>,
        #[serde(default)]
        links: BTreeMap<u32, serde::de::IgnoredAny>,
        ended: Option<String>,
    }
    let head: Head = serde_json::from_slice(bytes).ok()?;
    let mut principals: Vec<String> = head
        .participants
        .iter()
        .enumerate()
        .filter_map(|(id, p)| match p {
            ParticipantRecord::Principal(n) => Some(n.clone()),
            ParticipantRecord::Invited(n) | ParticipantRecord::Left(Some(n))
                if u32::try_from(id).is_ok_and(|id| head.links.contains_key(&id)) =>
            {
                Some(n.clone())
            }
            _ => None,
        })
        .collect();
    principals.sort_unstable();
    principals.dedup();
    Some(Needs {
        ended: head.ended.is_some(),
        principals,
    })
}

//! Who takes part in an instance: principals (each with its own connections), principals
//! invited but not yet joined, and bots the logic plays itself (§4.6, §7).

use mcpl_protocol::principal::Principal;
use std::fmt;

/// A participant of one instance, as its logic names it. Ids are given out in order from 0
/// and never reused within an instance.
/// Serialized as its number, for `Durable` logic that keeps its seats.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct ParticipantId(#[doc(hidden)] pub u32);

impl fmt::Display for ParticipantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "p{}", self.0)
    }
}

/// What a participant is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParticipantKind {
    /// A principal with the instance open: its connections see what the logic shows it.
    Principal(Principal),
    /// A principal invited with `InstanceContext::invite`
    /// that has not opened the instance yet. Changes for it are dropped; set its visibility
    /// in `InstanceLogic::join`.
    Invited(Principal),
    /// A player the logic moves itself (a bot). It has no connections: changes and events
    /// for it are dropped.
    Bot(String),
    /// A principal that closed the instance (or whose record ended): nothing reaches it.
    Left(Principal),
    /// A principal that declined its invitation
    /// (`InstanceLogic::declined`): nothing reaches it.
    Declined(Principal),
}

/// A participant: its id and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participant {
    #[doc(hidden)]
    pub id: ParticipantId,
    #[doc(hidden)]
    pub kind: ParticipantKind,
}

impl Participant {
    /// Its id.
    pub fn id(&self) -> ParticipantId {
        self.id
    }

    /// What it is.
    pub fn kind(&self) -> &ParticipantKind {
        &self.kind
    }

    /// Its name, for the logic's texts: the principal's name, or the bot's.
    pub fn name(&self) -> String {
        match &self.kind {
            ParticipantKind::Principal(p)
            | ParticipantKind::Invited(p)
            | ParticipantKind::Left(p)
            | ParticipantKind::Declined(p) => p.name(),
            ParticipantKind::Bot(name) => name.clone(),
        }
    }

    /// The principal, for any participant that is not a bot.
    pub fn principal(&self) -> Option<&Principal> {
        match &self.kind {
            ParticipantKind::Principal(p)
            | ParticipantKind::Invited(p)
            | ParticipantKind::Left(p)
            | ParticipantKind::Declined(p) => Some(p),
            ParticipantKind::Bot(_) => None,
        }
    }

    /// True for a bot.
    pub fn is_bot(&self) -> bool {
        matches!(self.kind, ParticipantKind::Bot(_))
    }

    /// True for a principal that has the instance open now.
    pub fn is_present(&self) -> bool {
        matches!(self.kind, ParticipantKind::Principal(_))
    }
}

/// Whom a change or an event is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// Every participant.
    All,
    /// One participant.
    Only(ParticipantId),
    /// Every participant but one (the mover, say).
    AllBut(ParticipantId),
}

impl Audience {
    /// True when `id` is in the audience.
    pub fn includes(self, id: ParticipantId) -> bool {
        match self {
            Audience::All => true,
            Audience::Only(p) => p == id,
            Audience::AllBut(p) => p != id,
        }
    }
}

impl From<ParticipantId> for Audience {
    fn from(id: ParticipantId) -> Self {
        Audience::Only(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audiences() {
        let (a, b) = (ParticipantId(0), ParticipantId(1));
        assert!(Audience::All.includes(a));
        assert!(Audience::from(a).includes(a) && !Audience::from(a).includes(b));
        assert!(!Audience::AllBut(a).includes(a) && Audience::AllBut(a).includes(b));
    }

    #[test]
    fn names() {
        let bob = Participant {
            id: ParticipantId(1),
            kind: ParticipantKind::Invited(Principal::Named("bob".into())),
        };
        assert_eq!(bob.name(), "bob");
        assert!(!bob.is_present() && !bob.is_bot());
        let bot = Participant {
            id: ParticipantId(2),
            kind: ParticipantKind::Bot("gnugo".into()),
        };
        assert_eq!((bot.name(), bot.principal()), ("gnugo".to_owned(), None));
    }
}

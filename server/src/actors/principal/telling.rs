//! What the principal is to tell, in order, once the records it depends on are kept
//! (issue #42 item 1): the queue's entries, generic over the actor a read runs on, so that
//! the actor holds them without this module depending on it (`fanout.rs` tells them).

use crate::core::InstanceKey;
use crate::core::principal::Versioned;
use crate::core::principal_core::Applied;
use crate::store::Ticket;
use crate::store::records::NotKept;
use std::sync::Arc;

/// What the principal is to tell once the records it depends on are kept (issue #42 item
/// 1): the instance's and the principal's own, the later of the two tickets — or refused
/// at once, the store being given up.
pub(super) struct Telling<A> {
    pub told: Told<A>,
    pub after: Result<Ticket, NotKept>,
    /// Its number (`told_seq`): sessions attached after it was made do not get it.
    pub seq: u64,
    /// The stamped state as of it, given to the sessions once it is kept (and never when
    /// it is not: `PrincipalCore::versioned_now`).
    pub versioned: Arc<Versioned>,
}

/// What waits its turn to be told.
pub(super) enum Told<A> {
    /// A batch applied (or an open, a close): its draft, events and answers, refused if
    /// not kept.
    Applied {
        about: Option<InstanceKey>,
        applied: Applied,
    },
    /// Something that tells what the state is (a `tools/list`, a `toolsets/list`, an
    /// invitation's push), made when its turn comes: after the changes before it, and of
    /// the state kept when they were rolled back.
    Read(Box<dyn FnOnce(&mut A)>),
}

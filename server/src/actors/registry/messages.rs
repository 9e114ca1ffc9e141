//! What the registry publishes, and what sessions tell it.

use crate::actors::principal::{PrincipalActor, SessionAddr};
use crate::ids::SessionId;
use actix::prelude::*;
use mcpl_transport::Principal;
use std::collections::BTreeSet;
use std::sync::atomic::AtomicUsize;
use tokio::sync::watch;

/// What the registry publishes, read by the [`Server`](crate::Server) handle from any
/// thread; the registry is its one writer.
pub(crate) struct Published {
    /// How many sessions are attached.
    pub(crate) sessions: watch::Sender<usize>,
    /// How many principals have an actor.
    pub(crate) principals: AtomicUsize,
    /// The named principals with at least one session. A set changed in place as a
    /// principal's first session attaches and its last detaches, never rebuilt: at 10,000
    /// hosts reconnecting at once, rebuilding and sorting the list at every attach was
    /// quadratic (issue #42's mass drop).
    pub(crate) online: std::sync::Mutex<BTreeSet<Principal>>,
    /// What the start read back from the store (issue #15), once it did.
    pub(crate) restored: std::sync::Mutex<Option<crate::store::Restored>>,
}

impl Published {
    pub(crate) fn new() -> Self {
        Published {
            sessions: watch::channel(0).0,
            principals: AtomicUsize::new(0),
            online: std::sync::Mutex::new(BTreeSet::new()),
            restored: std::sync::Mutex::new(None),
        }
    }
}

/// A session attaches to its principal; the answer is the principal's actor.
#[derive(Message)]
#[rtype(result = "Result<Addr<PrincipalActor>, AttachError>")]
pub(crate) struct AttachSession {
    pub(crate) principal: Principal,
    pub(crate) id: SessionId,
    pub(crate) to: SessionAddr,
    /// Where to start the principal's actor if it has none: the session's arbiter.
    pub(crate) arbiter: ArbiterHandle,
}

/// A session stopped.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct DetachSession {
    pub(crate) principal: Principal,
    pub(crate) id: SessionId,
}

/// Why a session could not attach to its principal.
#[derive(Debug, Clone)]
pub(crate) enum AttachError {
    /// The server is gone.
    Gone,
    /// The principal's record could not be read from the store (issue #41: a principal is
    /// read on its first use): the store's error. Nothing was changed; trying again reads
    /// it again.
    Unreadable(String),
}

/// A principal's record, read for its first use (or why it could not be).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct FetchedFor {
    pub(crate) principal: Principal,
    pub(crate) read: Result<crate::actors::restore::Fetched, crate::store::StoreError>,
}

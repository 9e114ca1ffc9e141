//! Which instances a server runs, for a cluster that moves them between its nodes (issue
//! #41 item 3, `docs/ownership.md`): [`Server::release_instance`] stops one without
//! ending it, [`Server::adopt_instance`] runs one again from its record, and
//! [`Server::running_instances`] lists them; [`Server::release_principal`] stops a
//! principal's actor without ending anything, so that its next first use elsewhere takes
//! it over. The leases that say which node may run an
//! instance are the cluster's (`mcpl_cluster::PgLeases`); the SDK only does what it is
//! told, and says clearly when it cannot — and asks, before an instance starts here, the
//! hook given with [`ServerBuilder::on_instance_start`] ([`InstanceStart`]), so that the
//! cluster takes the instance's lease before its first write.
//!
//! [`ServerBuilder::on_instance_start`]: crate::ServerBuilder::on_instance_start
//!
//! [`Server::release_instance`]: crate::Server::release_instance
//! [`Server::adopt_instance`]: crate::Server::adopt_instance
//! [`Server::running_instances`]: crate::Server::running_instances
//! [`Server::release_principal`]: crate::Server::release_principal

use crate::store::StoreError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// How an instance comes to run on a server, as its start hook
/// ([`ServerBuilder::on_instance_start`](crate::ServerBuilder::on_instance_start)) is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InstanceStart {
    /// A principal here opens it (`toolsets/open`, a default or an implicit open): a new
    /// id, nothing of it written yet.
    Opened,
    /// It is adopted from its record ([`Server::adopt_instance`](crate::Server::adopt_instance),
    /// or a principal's first use here linking to an instance nobody runs).
    Adopted,
}

/// Why an instance's start hook refused it. Nothing of the instance ran here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StartRefused {
    /// Another server runs it (holds its lease): an adoption is refused
    /// [`OwnershipError::Elsewhere`] (its principals here reach it there); an open is
    /// answered "retry".
    #[error("another server runs it")]
    Elsewhere,
    /// It cannot be said now (the leases cannot be read): an adoption is refused
    /// [`OwnershipError::StartRefused`], an open answered "retry" (`-32603`, `data:
    /// {retryable: true, ran: false}`).
    #[error("{0}")]
    Unavailable(String),
}

/// What a start hook returns: resolved before the instance runs here.
pub type StartFuture = Pin<Box<dyn Future<Output = Result<(), StartRefused>> + Send>>;

/// A server's start hook (see
/// [`ServerBuilder::on_instance_start`](crate::ServerBuilder::on_instance_start)).
pub(crate) type StartHook = Arc<dyn Fn(u64, InstanceStart) -> StartFuture + Send + Sync>;

/// Why an instance could not be released or adopted, or a principal released. Nothing
/// changed, unless said.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OwnershipError {
    /// Release: the instance does not run on this server (never did, was released, or
    /// stopped once nobody linked to it).
    #[error("instance {id} is not running on this server")]
    NotRunning {
        /// The instance.
        id: u64,
    },
    /// Adopt: the instance already runs on this server.
    #[error("instance {id} is already running on this server")]
    Running {
        /// The instance.
        id: u64,
    },
    /// Adopt: the store holds no record of the instance (it never existed, or every
    /// participant left it and its record was forgotten).
    #[error("the store {store} holds no record of instance {id}")]
    Unknown {
        /// The instance.
        id: u64,
        /// Where the store is.
        store: String,
    },
    /// The instance ended: it is neither released nor adopted. Its participants learn the
    /// end from its record when their principals are read.
    #[error("instance {id} has ended ({reason}); an ended instance is not moved")]
    Ended {
        /// The instance.
        id: u64,
        /// Why it ended.
        reason: String,
    },
    /// Release: the instance has invitations not taken up, which live in the invited
    /// principals' actors here **\[project\]**: release it once they are answered.
    #[error(
        "instance {id} has invitations not taken up yet; it is released once they are answered"
    )]
    InvitationsPending {
        /// The instance.
        id: u64,
    },
    /// Release: the instance's logic is not kept ([`Durable`](crate::Durable)), or its
    /// state cannot be written now: released, it could not run again anywhere.
    #[error("instance {id} cannot be released: {reason}")]
    NotDurable {
        /// The instance.
        id: u64,
        /// Why its state would be lost.
        reason: String,
    },
    /// Release: it is being released already.
    #[error("instance {id} is being released already")]
    Releasing {
        /// The instance.
        id: u64,
    },
    /// Adopt: the record cannot be run again (its logic is not kept, its state does not
    /// read back): the reason a restart would end it with.
    #[error("instance {id} cannot run again: {reason}")]
    Unreadable {
        /// The instance.
        id: u64,
        /// Why.
        reason: String,
    },
    /// Adopt: a principal of the instance is being read from the store for its first use
    /// at this moment; try again.
    #[error("principal {principal:?} of instance {id} is being read from the store; try again")]
    Busy {
        /// The instance.
        id: u64,
        /// The principal being read.
        principal: String,
    },
    /// Release: a step of the instance could not be kept (the store was given up); the
    /// actor stopped all the same, and its record is what was last kept.
    #[error("instance {id} stopped, but its last steps could not be kept: {reason}")]
    NotKept {
        /// The instance.
        id: u64,
        /// Why.
        reason: String,
    },
    /// Adopt: another server runs the instance (issue #41): somebody serves its address on
    /// the peers, or claimed it first when two servers adopted it at once. Nothing ran
    /// here; its principals here reach it where it runs.
    #[error("instance {id} runs on another server")]
    Elsewhere {
        /// The instance.
        id: u64,
    },
    /// Adopt: the peers could not say whether another server runs the instance, nor let
    /// this one claim it: nothing ran here; try again.
    #[error("instance {id} could not be claimed on the peers: {source}")]
    Peers {
        /// The instance.
        id: u64,
        /// The peers' error.
        #[source]
        source: crate::peers::PeerError,
    },
    /// Adopt: the server's start hook
    /// ([`ServerBuilder::on_instance_start`](crate::ServerBuilder::on_instance_start))
    /// could not let it start now (its lease cannot be read): nothing ran here; try again.
    #[error("instance {id} may not start on this server now: {reason}")]
    StartRefused {
        /// The instance.
        id: u64,
        /// What the hook said.
        reason: String,
    },
    /// Adopt: the server keeps no durable state, so it has no record to adopt from.
    #[error("this server keeps no durable state: there is no record to adopt instance {id} from")]
    NoStore {
        /// The instance.
        id: u64,
    },
    /// Adopt: reading the records failed.
    #[error("instance {id} could not be read: {source}")]
    Store {
        /// The instance.
        id: u64,
        /// The store's error.
        #[source]
        source: StoreError,
    },
    /// The server's actors are gone (its system stopped).
    #[error("the server is gone")]
    Gone,
    /// Release a principal: it has no actor on this server (never used here, retired, or
    /// released already), or it is anonymous (it has no record to come back from).
    #[error("principal {principal:?} is not running on this server")]
    PrincipalNotRunning {
        /// The principal's name.
        principal: String,
    },
    /// Release a principal: it is being read for its first use, retiring, or released
    /// at this moment; try again.
    #[error("principal {principal:?} is being read, retired or released just now; try again")]
    PrincipalBusy {
        /// The principal's name.
        principal: String,
    },
    /// Release a principal: it links to an instance running here and the server has no
    /// peers **\[project\]**: the instance could reach it nowhere else.
    #[error(
        "principal {principal:?} links to instance {instance} running here, and this server has no peers to reach it elsewhere"
    )]
    PrincipalLinked {
        /// The principal's name.
        principal: String,
        /// An instance it links to here.
        instance: u64,
    },
    /// Release a principal: a step of it could not be kept (the store was given up); its
    /// actor stopped all the same, and its record is what was last kept.
    #[error("principal {principal:?} stopped, but its last steps could not be kept: {reason}")]
    PrincipalNotKept {
        /// The principal's name.
        principal: String,
        /// Why.
        reason: String,
    },
}

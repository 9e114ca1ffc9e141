//! Where a principal's actor may start (issue #41, `docs/ownership.md` §1): a cluster
//! that runs each principal on the node holding her lease tells the SDK, through a
//! [`Placement`] given with [`ServerBuilder::placement`], whether this server may start a
//! principal that something other than a session brings here — an invitation for her
//! that nobody serves on the peers, batches an outbox holds for her. A session is placed
//! by whoever routes connections (the cluster's fronts), and always attaches here.
//!
//! [`ServerBuilder::placement`]: crate::ServerBuilder::placement

use std::future::Future;
use std::pin::Pin;

/// What a [`Placement`] says of a principal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// This server may run her (it holds her lease, or just took it): she is read from
    /// her record and started here.
    Here,
    /// Another server holds her: what waits for her is sent to her address on the peers
    /// again, after a pause, until whoever runs her takes it — or she is placed here.
    Elsewhere,
    /// Nobody can say now (the leases cannot be read): asked again after a pause.
    Unknown,
}

/// Where a principal's actor may start. See the module docs.
pub trait Placement: Send + Sync + 'static {
    /// Whether principal `name` may start on this server now; may take her lease.
    fn place(&self, name: &str) -> Pin<Box<dyn Future<Output = Placed> + Send>>;
}

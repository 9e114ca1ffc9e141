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

/// The most invitations that wait for one principal on a server while no actor of hers
/// runs there (issue #41): while her placement is asked, while what waited waits to be
/// sent to her again, and while her record is read for her first use. One more is
/// declined on her behalf (its instance hears the decline, as if she said no), and a
/// withdrawal of one still waiting takes it back. **\[project\]**: an invitation is a game
/// asking her to play, and what waits came within one placement or one read — 30 s at
/// most, the longest pause between tries; 64 games inviting one player within that is a
/// flood (the arcade lets one challenger invite the same player 5 times in 10 minutes),
/// and the bound keeps a principal nobody can place from holding a server's memory.
pub const WAITING_INVITATIONS: usize = 64;

/// The most bytes of the invitations that wait for one principal (their reasons, names
/// and options as JSON), with [`WAITING_INVITATIONS`] **\[project\]**: 1 MiB, the largest
/// message a node forwards — 64 invitations of 16 KiB each, more than any game's options
/// need.
pub const WAITING_BYTES: usize = 1 << 20;

//! The distributed parts of the MCPL arcade (issue #41): several nodes on existing
//! distributed engines instead of one process on one disk.
//!
//! Its bricks so far: the SDK's durable state on PostgreSQL, the bus between nodes on
//! NATS core, and leases in PostgreSQL saying which node runs what (`docs/cluster.md`
//! says how nodes will put them together):
//!
//! | module | what |
//! |---|---|
//! | [`pg_store`] | [`PgStore`]: an [`mcpl_server::Store`] on PostgreSQL; each group commit one transaction, each record's revision checked so that two nodes never both write its next version; bound to a node's [`Fence`], each commit also checks the node's leases on what it writes |
//! | [`bus`] | [`NatsBus`]: a principal's change notices to every node watching it, with gap and resync detection (a lost message costs a read from the store, never a version), and requests forwarded to a named node; escaped subjects, everything bounded |
//! | [`tunnel`] | [`Tunnels`]: a long-lived byte stream (a client's WebSocket connection, an event stream) carried from the node it reached to the node that serves it, as numbered frames on subjects of its own; a gap, a peer gone or silent, or idleness ends it; windows hold a slow reader's sender back; bounded per node |
//! | [`peers`] | [`NatsPeers`]: the SDK's `Peers` over NATS — a principal's actor on one node and an instance's on another talk on subjects named by the actor (`mcpl.i.<id>`, `mcpl.a.<principal>`), subscribed by whichever node runs it; "no responders" is "nobody owns it now" |
//! | [`leases`] | [`PgLeases`]: `(kind, key)` → `(node, fencing token, expiry)` on the database's clock: acquire, renew, release, holder, take over; [`Fence`]: the leases a node's [`PgStore`] commits are fenced by |
//!
//! A server built with a [`PgStore`] (`ServerBuilder::store`, or `mcpl-arcade serve
//! --postgres URL`) keeps its principals and instances there instead of in an embedded
//! `redb` file; what the SDK does with them is unchanged. `mcpl-arcade serve --postgres URL
//! --nats URL --node NAME` runs the arcade as several nodes on all three
//! (`mcpl_games::arcade::node`): one lease of kind [`leases::ARCADE`] names the node that
//! runs it, the others forward to it over the bus and take over when it dies.

pub mod bus;
pub mod leases;
pub mod peers;
pub mod pg_store;
pub mod tunnel;

pub use bus::NatsBus;
pub use leases::{Fence, PgLeases};
pub use peers::NatsPeers;
pub use pg_store::PgStore;
pub use tunnel::Tunnels;

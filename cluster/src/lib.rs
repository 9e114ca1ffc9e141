//! The distributed parts of the MCPL arcade (issue #41): several nodes on existing
//! distributed engines instead of one process on one disk.
//!
//! Its first brick is the SDK's durable state on PostgreSQL:
//!
//! | module | what |
//! |---|---|
//! | [`pg_store`] | [`PgStore`]: an [`mcpl_server::Store`] on PostgreSQL; each group commit one transaction, each record's revision checked so that two nodes never both write its next version |
//!
//! A server built with a [`PgStore`] (`ServerBuilder::store`, or `mcpl-arcade serve
//! --postgres URL`) keeps its principals and instances there instead of in an embedded
//! `redb` file; what the SDK does with them is unchanged.

pub mod bus;
pub mod leases;
pub mod pg_store;

pub use bus::NatsBus;
pub use leases::{Fence, PgLeases};
pub use pg_store::PgStore;

//! Durable state (issue #15 **\[project\]**): where a server keeps what must survive a
//! restart — each principal's record (its kept instances, their visibility and
//! definitions, its ended records with their expiry: what `toolsets/list` states, §4.3)
//! and each instance's record (its participants, invitations, the names each principal
//! gives it, and its logic's state when the logic is [`Durable`](crate::Durable)).
//!
//! [`Store`] is small on purpose: load everything at start, and commit [`Writes`] — what
//! steps put and delete, handed over as values, written together or not at all. The SDK
//! encodes the records (JSON, `records.rs`); a store keeps bytes. [`RedbStore`] is the
//! embedded default (one `redb` file, crash-safe commits); [`MemoryStore`] keeps the
//! records in the process (a server restarted in the same process reads them back: tests,
//! `sim perf`). A server built without a store writes nothing and keeps today's
//! behaviour. A store shared by several servers (PostgreSQL: `mcpl_cluster::PgStore`,
//! issue #41) checks each record's revision as it commits, and refuses a commit that would
//! write over another server's ([`StoreError::Conflict`]).
//!
//! **Order.** A record is written before the answers and events of the step that changed
//! it go out (an instance's before its batches, a principal's before its deliveries), so
//! what a player was told happened, happened. A step whose record cannot be written is
//! not acknowledged, and the store is given up until a restart (`records.rs`, `NotKept`).
//!
//! **Group commit** (issue #42 item 1, `queue.rs`). The actors do not write: each hands
//! its step's records to the server's commit queue and gets a ticket; one writer
//! thread takes every step waiting and commits them all in one [`Store::commit`] (one
//! transaction, one fsync), in the order they were handed over. What a step tells waits
//! for its ticket (the instance's, carried in its batches, and the principal's own), so
//! answers still go out only once their records are durable; actors never block on a
//! write, and concurrent steps share commits. A step another actor's step must follow
//! before anything is told (a move's principal records after its instance's) is
//! committed with it: the writer waits, bounded, for follow-ups promised ([`FOLLOW_WAIT`]).

mod memory;
use mcpl_server_core::store::not_kept;
mod queue;
pub(crate) use mcpl_server_core::store::parts;
pub(crate) use mcpl_server_core::store::records;
mod redb_store;

pub(crate) use mcpl_server_core::store::Ticket;
pub(crate) use queue::{CommitQueue, Follow};
pub use queue::{FOLLOW_WAIT, StoreStats};

pub use memory::MemoryStore;
pub use redb_store::RedbStore;

use std::path::PathBuf;

/// What a server read back from its store when it started
/// ([`Server::restored`](crate::Server::restored)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restored {
    /// Principals given back their state.
    pub principals: usize,
    /// Instances running again, where they were.
    pub instances: usize,
    /// Of those, how many of each toolset.
    pub toolsets: std::collections::BTreeMap<String, usize>,
    /// Instances that were running when the server stopped and could not come back (their
    /// logic is not kept, their record was missing or unreadable): each ended with an ended
    /// record saying why. Instances that had ended before are not counted.
    pub lost: usize,
}

/// Everything a store holds, as [`Store::load`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Each principal's record, by the principal's name.
    pub principals: Vec<(String, Vec<u8>)>,
    /// Each instance's record, by its id.
    pub instances: Vec<(u64, Vec<u8>)>,
    /// The parts of principals' records kept under keys of their own (see [`Writes`]), by
    /// the principal's name and the part's, in that order.
    pub parts: Vec<(String, String, Vec<u8>)>,
}

/// What one step keeps (issue #42 item 1): records put (`Some`, replacing the one kept)
/// or forgotten (`None`), written together or not at all. A value, so that a store
/// decides how to commit it — one embedded transaction, or a database's.
///
/// **Parts** (issue #42 item 1). A principal's record is kept as its core record (in
/// `principals`) and parts under keys of their own (in `parts`: each ended record, each
/// tombstone of a closed instance), so that a step writes only what changed, never the
/// whole list. A part belongs to its principal's record: forgetting the record (`None`
/// in `principals`) forgets every part of it too, and a store that checks revisions
/// checks the core record's for a step that writes only parts of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writes {
    /// Principals' records, by the principal's name.
    pub principals: Vec<(String, Option<Vec<u8>>)>,
    /// Instances' records, by the instance's id.
    pub instances: Vec<(u64, Option<Vec<u8>>)>,
    /// Parts of principals' records put or forgotten, by the principal's name and the
    /// part's; written after the step's principals' records.
    pub parts: Vec<(String, String, Option<Vec<u8>>)>,
}

impl Writes {
    /// One principal's record put (`Some`) or forgotten (`None`).
    pub fn principal(name: &str, record: Option<&[u8]>) -> Self {
        Writes {
            principals: vec![(name.to_owned(), record.map(<[u8]>::to_vec))],
            ..Writes::default()
        }
    }

    /// One instance's record put (`Some`) or forgotten (`None`).
    pub fn instance(id: u64, record: Option<&[u8]>) -> Self {
        Writes {
            instances: vec![(id, record.map(<[u8]>::to_vec))],
            ..Writes::default()
        }
    }

    /// How many records and parts it puts or forgets.
    pub fn len(&self) -> usize {
        self.principals.len() + self.instances.len() + self.parts.len()
    }

    /// True when it writes nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of the records and parts it puts: what a store writes for it.
    pub fn bytes(&self) -> usize {
        let principals = self.principals.iter().filter_map(|(_, r)| r.as_ref());
        let instances = self.instances.iter().filter_map(|(_, r)| r.as_ref());
        let parts = self.parts.iter().filter_map(|(_, _, r)| r.as_ref());
        principals.chain(instances).chain(parts).map(Vec::len).sum()
    }

    /// What `steps` leave when written in order, each record and part once, in key order
    /// (principals, then instances): what a store writes for one commit of them.
    pub fn net(steps: &[Writes]) -> Net<'_> {
        let mut net = Net::default();
        for step in steps {
            for (name, record) in &step.principals {
                let p = net.principals.entry(name).or_default();
                p.record = Some(record.as_deref());
                if record.is_none() {
                    // Forgetting a record forgets its parts, also those kept before.
                    p.cleared = true;
                    p.parts.clear();
                }
            }
            for (name, part, record) in &step.parts {
                let p = net.principals.entry(name).or_default();
                p.parts.insert(part, record.as_deref());
            }
            for (id, record) in &step.instances {
                net.instances.insert(*id, record.as_deref());
            }
        }
        net
    }
}

/// What several steps leave ([`Writes::net`]): each principal's record with its parts,
/// and each instance's record, by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Net<'a> {
    /// Each principal written, by name.
    pub principals: std::collections::BTreeMap<&'a str, PrincipalNet<'a>>,
    /// Each instance's record put (`Some`) or forgotten (`None`), by id.
    pub instances: std::collections::BTreeMap<u64, Option<&'a [u8]>>,
}

/// What several steps leave of one principal's record ([`Writes::net`]), in the order a
/// store writes it: its parts kept before forgotten (`cleared`), its core record, then
/// its parts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrincipalNet<'a> {
    /// The core record put (`Some(Some)`) or forgotten (`Some(None)`); `None`: only parts
    /// of it are written.
    pub record: Option<Option<&'a [u8]>>,
    /// The record was forgotten in one of the steps: every part kept before goes.
    pub cleared: bool,
    /// Parts put (`Some`) or forgotten (`None`), by name.
    pub parts: std::collections::BTreeMap<&'a str, Option<&'a [u8]>>,
}

/// Where a server keeps its durable state. See the module docs.
pub trait Store: Send + Sync + 'static {
    /// Everything kept, read once when the server starts.
    fn load(&self) -> Result<Loaded, StoreError>;
    /// Writes every step's records, in order (a later step's record replaces an earlier
    /// one's), all in one transaction, durably before it returns: all of them or none.
    /// The server calls it from one thread at a time, with every step that waited while
    /// the commit before ran (group commit: `queue.rs`).
    fn commit(&self, steps: &[Writes]) -> Result<(), StoreError>;
    /// Where it keeps them, for messages ("memory", a file's path).
    fn location(&self) -> String;

    /// Writes a principal's record (replacing the one it had), durably before it returns:
    /// a commit of one step that writes only it.
    fn put_principal(&self, principal: &str, record: &[u8]) -> Result<(), StoreError> {
        self.commit(&[Writes::principal(principal, Some(record))])
    }
    /// Forgets a principal's record, with its parts.
    fn delete_principal(&self, principal: &str) -> Result<(), StoreError> {
        self.commit(&[Writes::principal(principal, None)])
    }
    /// Writes an instance's record (replacing the one it had), durably before it returns.
    fn put_instance(&self, id: u64, record: &[u8]) -> Result<(), StoreError> {
        self.commit(&[Writes::instance(id, Some(record))])
    }
    /// Forgets an instance's record.
    fn delete_instance(&self, id: u64) -> Result<(), StoreError> {
        self.commit(&[Writes::instance(id, None)])
    }
}

/// Why a store could not be opened, read or written. Each names the file and what was
/// wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store's file could not be opened (missing directory, permissions, a file that
    /// is not a store, or one that is damaged).
    #[error("cannot open the store {path}: {detail}")]
    Open {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// Another process holds the store's file open (redb locks it: "Database already
    /// open. Cannot acquire lock."): two servers cannot share one store (issue #43).
    #[error(
        "the store {path} is in use by another process{}: redb says \"Database already open. Cannot acquire lock.\"",
        holder.as_ref().map(|h| format!(" ({h})")).unwrap_or_default()
    )]
    Locked {
        /// The file.
        path: PathBuf,
        /// The process holding it, where it can be told (`pid 4242, mcpl-arcade`: Linux).
        holder: Option<String>,
    },
    /// The store was written by a server whose format this one does not read.
    #[error("the store {path} is in format {found}; this server reads format {expected}")]
    Incompatible {
        /// The file.
        path: PathBuf,
        /// The format it holds.
        found: u64,
        /// The format this server reads and writes.
        expected: u64,
    },
    /// Reading or writing a record failed.
    #[error("the store {path}: {detail}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// A record was written, created or deleted by another writer since this store read
    /// or last wrote it (issue #41 item 1: a shared store, PostgreSQL, checks each
    /// record's revision): the commit wrote nothing. The server gives its store up until
    /// a restart (`queue.rs`): a node that lost a record to another no longer owns it,
    /// and must not write it again from what it had **\[project\]**.
    #[error(
        "the store {store}: {what} was changed by another writer since this server read it ({detail}); nothing of this commit was written"
    )]
    Conflict {
        /// Where the store is (its [`Store::location`]).
        store: String,
        /// The record, as `principal "alice"` or `instance 7`.
        what: String,
        /// The revision expected and what the store holds instead.
        detail: String,
    },
}

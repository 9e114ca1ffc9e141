//! Durable state (issue #15 **\[project\]**): where a server keeps what must survive a
//! restart — each principal's record (its kept instances, their visibility and
//! definitions, its ended records with their expiry: what `toolsets/list` states, §4.3)
//! and each instance's record (its participants, invitations, the names each principal
//! gives it, and its logic's state when the logic is [`Durable`](crate::Durable)).
//!
//! [`Store`] is small on purpose: read what a start needs (every instance's record and
//! the principals they name, [`Store::live_instances`]) and each other principal's record
//! on its first use ([`Store::load_principal`], issue #41), and commit [`Writes`] — what
//! steps put and delete, handed over as values, written together or not at all — and
//! reserve blocks of new instance ids ([`Store::reserve_instance_ids`], issue #41: servers
//! sharing a store never give two instances one id, nor does a server started again). The SDK
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
/// What an instance's record says its adoption needs — whether it ended, and the named
/// principals it reads (issue #41: a cluster's scan for instances a dead node ran decides
/// with it where each is adopted, `docs/ownership.md` §4) — read from a record's bytes as
/// a store keeps them ([`Store::load_instance`]).
pub use mcpl_server_core::store::records::{Needs as InstanceNeeds, needs as instance_needs};
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
    /// Principals given back their state at start: those its instances name (issue #41:
    /// every other principal is read on its first use, and not counted here).
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

/// One principal's record as a store keeps it ([`Store::load_principal`]): its core and
/// its parts (issue #42 item 1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrincipalLoaded {
    /// Its core record; `None`: it has none (parts left without one are a record's
    /// remains, which the server forgets).
    pub core: Option<Vec<u8>>,
    /// Its parts, by name, in name order.
    pub parts: Vec<(String, Vec<u8>)>,
}

/// An instance whose record a store keeps, as [`Store::live_instances`] lists it: what a
/// server resumes when it starts, with the principals it needs read first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveInstance {
    /// Its id.
    pub id: u64,
    /// Whether its record says it ended (it waits for a participant to be told).
    pub ended: bool,
    /// The named principals it has as participants, sorted: the records its resumption
    /// reads. Empty when the record cannot be read (it then ends for whoever links to it).
    pub principals: Vec<String>,
    /// Its record.
    pub record: Vec<u8>,
}

impl LiveInstance {
    /// The entry for instance `id` whose record is `record`, what it needs read from the
    /// record itself (the SDK's format, `records.rs`): a store keeps bytes, and lists its
    /// instances with this.
    pub fn of(id: u64, record: Vec<u8>) -> Self {
        let (ended, principals) = match records::needs(&record) {
            Some(needs) => (needs.ended, needs.principals),
            None => (false, Vec::new()),
        };
        LiveInstance {
            id,
            ended,
            principals,
            record,
        }
    }
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
    /// Everything kept, in one read. The server itself no longer calls it (it reads
    /// [`Store::live_instances`] at start and each principal on its first use, issue
    /// #41); tools and tests read a whole store with it, and the other reads' defaults
    /// are made of it.
    fn load(&self) -> Result<Loaded, StoreError>;
    /// Writes every step's records, in order (a later step's record replaces an earlier
    /// one's), all in one transaction, durably before it returns: all of them or none.
    /// The server calls it from one thread at a time, with every step that waited while
    /// the commit before ran (group commit: `queue.rs`).
    fn commit(&self, steps: &[Writes]) -> Result<(), StoreError>;
    /// Where it keeps them, for messages ("memory", a file's path).
    fn location(&self) -> String;
    /// Reserves `count` (at least 1) new instance ids, `start..start + count`, durably
    /// before it returns (issue #41): ids no call of this store returned before — nor any
    /// other process's on the same records, before or after a restart — and above every
    /// instance id the store keeps. A server takes a block at a time and hands its ids out
    /// itself; ids of a block it did not use are never used (gaps are fine). Servers
    /// sharing one store (PostgreSQL) thus never give two instances one id. A store
    /// reserves with one write of its own (a counter), none of the records': it is not a
    /// step, and its failure gives the store up for nothing (the open asking is answered
    /// "retry").
    fn reserve_instance_ids(&self, count: u64) -> Result<std::ops::Range<u64>, StoreError>;

    /// One principal's record with its parts (issue #41: a server reads a principal when
    /// it is first used, not every principal when it starts). A store that checks
    /// revisions remembers the one read, as [`Store::load`] does. The default reads
    /// everything ([`Store::load`]) and keeps `principal`'s.
    fn load_principal(&self, principal: &str) -> Result<PrincipalLoaded, StoreError> {
        let loaded = self.load()?;
        Ok(PrincipalLoaded {
            core: loaded
                .principals
                .into_iter()
                .find_map(|(name, core)| (name == principal).then_some(core)),
            parts: loaded
                .parts
                .into_iter()
                .filter(|(name, _, _)| name == principal)
                .map(|(_, part, bytes)| (part, bytes))
                .collect(),
        })
    }

    /// One instance's record; `None` when there is none (issue #41). As
    /// [`Store::load_principal`].
    fn load_instance(&self, id: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let loaded = self.load()?;
        Ok(loaded
            .instances
            .into_iter()
            .find_map(|(i, record)| (i == id).then_some(record)))
    }

    /// Every instance record kept, in id order, each with the principals it names
    /// ([`LiveInstance::of`]): what a server resumes when it starts (issue #41), reading
    /// only those principals' records. An instance's record is forgotten once no principal
    /// links to it, so each one kept is live — running when the server stopped — or, rarely,
    /// ended with a participant not told yet (the server stopped in between), which the
    /// start tells. As [`Store::load_principal`]; the default reads everything.
    fn live_instances(&self) -> Result<Vec<LiveInstance>, StoreError> {
        let loaded = self.load()?;
        Ok(loaded
            .instances
            .into_iter()
            .map(|(id, record)| LiveInstance::of(id, record))
            .collect())
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    /// An instance's record as the SDK writes it, but for its logic: `alice` present,
    /// `bob` gone, a bot, `carol` invited.
    const GAME: &[u8] = br#"{"toolset":"go","name":"g","options":null,
        "participants":[{"Principal":"alice"},{"Left":"bob"},{"Bot":"gnugo"},{"Invited":"carol"}],
        "names":{},"links":{"0":{"toolset":"go","instance":"g"}},"invited":{},"next_call":0,
        "ended":null,"logic":"NotKept"}"#;

    /// One step writing `name`'s core record and its parts.
    fn with_parts(name: &str, core: &[u8], parts: &[(&str, &[u8])]) -> Writes {
        Writes {
            principals: vec![(name.to_owned(), Some(core.to_vec()))],
            parts: parts
                .iter()
                .map(|(p, r)| (name.to_owned(), (*p).to_owned(), Some(r.to_vec())))
                .collect(),
            ..Writes::default()
        }
    }

    /// What every store's reads of one record give (issue #41), against what `load`
    /// gives of the same store.
    fn reads_one_record_at_a_time(store: &dyn Store) {
        store
            .commit(&[
                with_parts("alice", b"a", &[("ended/2", b"2"), ("closed/x", b"x")]),
                with_parts("alice2", b"a2", &[("ended/1", b"1")]),
                with_parts("al", b"al", &[]),
                Writes::instance(7, Some(GAME)),
                Writes::instance(3, Some(b"not a record")),
            ])
            .unwrap();
        let alice = store.load_principal("alice").unwrap();
        assert_eq!(alice.core.as_deref(), Some(&b"a"[..]));
        let names: Vec<&str> = alice.parts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["closed/x", "ended/2"], "hers only, in name order");
        assert_eq!(store.load_principal("al").unwrap().parts, []);
        assert_eq!(
            store.load_principal("nobody").unwrap(),
            PrincipalLoaded::default()
        );
        assert_eq!(store.load_instance(7).unwrap().as_deref(), Some(GAME));
        assert_eq!(store.load_instance(8).unwrap(), None);
        let live = store.live_instances().unwrap();
        assert_eq!(
            live,
            [
                LiveInstance {
                    id: 3,
                    ended: false,
                    principals: Vec::new(),
                    record: b"not a record".to_vec(),
                },
                LiveInstance {
                    id: 7,
                    ended: false,
                    principals: vec!["alice".to_owned()],
                    record: GAME.to_vec(),
                },
            ]
        );
        // The same as the whole store says.
        let loaded = store.load().unwrap();
        assert_eq!(
            live.iter()
                .map(|l| (l.id, l.record.clone()))
                .collect::<Vec<_>>(),
            loaded.instances
        );
        store.delete_principal("alice").unwrap();
        assert_eq!(
            store.load_principal("alice").unwrap(),
            PrincipalLoaded::default()
        );
    }

    #[test]
    fn the_memory_store_reads_one_record_at_a_time() {
        reads_one_record_at_a_time(&MemoryStore::new());
    }

    #[test]
    fn the_redb_store_reads_one_record_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        reads_one_record_at_a_time(&RedbStore::open_dir(dir.path()).unwrap());
    }

    /// Blocks of instance ids follow each other, never overlap, and start past every
    /// instance kept (a store written before the counter, a record put by hand).
    fn reserves_ids_past_every_block_and_every_instance_kept(store: &dyn Store) {
        store.put_instance(7, GAME).unwrap();
        assert_eq!(store.reserve_instance_ids(64).unwrap(), 8..72);
        assert_eq!(store.reserve_instance_ids(2).unwrap(), 72..74);
        store.put_instance(500, GAME).unwrap();
        assert_eq!(store.reserve_instance_ids(1).unwrap(), 501..502);
        store.delete_instance(500).unwrap();
        assert_eq!(store.reserve_instance_ids(1).unwrap(), 502..503);
    }

    #[test]
    fn the_memory_store_reserves_instance_ids_in_blocks() {
        reserves_ids_past_every_block_and_every_instance_kept(&MemoryStore::new());
    }

    #[test]
    fn the_redb_store_reserves_instance_ids_in_blocks_kept_across_a_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let store = RedbStore::open_dir(dir.path()).unwrap();
        assert_eq!(store.reserve_instance_ids(64).unwrap(), 1..65);
        drop(store);
        let store = RedbStore::open_dir(dir.path()).unwrap();
        assert_eq!(store.reserve_instance_ids(64).unwrap(), 65..129);
        let other = tempfile::tempdir().unwrap();
        reserves_ids_past_every_block_and_every_instance_kept(
            &RedbStore::open_dir(other.path()).unwrap(),
        );
    }

    #[test]
    fn an_instance_needs_its_present_and_linked_principals_and_says_if_it_ended() {
        let needs = records::needs(GAME).unwrap();
        assert_eq!(needs.principals, ["alice"]);
        assert!(!needs.ended);
        let ended = String::from_utf8_lossy(GAME).replace(r#""ended":null"#, r#""ended":"over""#);
        assert!(records::needs(ended.as_bytes()).unwrap().ended);
        assert_eq!(records::needs(b"{"), None);
    }
}

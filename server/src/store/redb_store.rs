//! [`RedbStore`]: the embedded default, one `redb` file.
//!
//! Why redb (README, "Durable state"): pure Rust (no C toolchain, unlike SQLite), a
//! key-value model that fits records put and deleted whole, and copy-on-write commits
//! that are fsync'd before `commit` returns, so a SIGKILL leaves the last commit intact.
//! Every step the commit queue hands over at once is one write transaction: one fsync.

use super::{LiveInstance, Loaded, PrincipalLoaded, Store, StoreError, Writes};
use redb::{Database, ReadableTable, TableDefinition};
use std::path::{Path, PathBuf};

const PRINCIPALS: TableDefinition<&str, &[u8]> = TableDefinition::new("principals");
const INSTANCES: TableDefinition<u64, &[u8]> = TableDefinition::new("instances");
/// Principals' records' parts, by the principal's name and the part's (issue #42 item 1).
const PARTS: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("principal_parts");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
/// The key in [`META`] of the next instance id no server was given (issue #41,
/// [`Store::reserve_instance_ids`]); a block starts past the largest instance id kept
/// too, so a file written before the counter starts where servers started then.
const NEXT_INSTANCE: &str = "next_instance_id";
/// The format of the records this server writes; a store in another is refused.
/// Format 2 (issue #42 item 1) keeps parts of principals' records under keys of their
/// own; a store in format 1 (every principal's record whole, no parts) is read as it is
/// and marked 2 when opened: its records load, and each is written in parts on its next
/// change. A server reading only format 1 refuses the store from then on, rather than
/// miss the parts.
const FORMAT: u64 = 2;
/// The format before parts, read and upgraded.
const FORMAT_WHOLE: u64 = 1;
/// The store's file in a data directory.
pub const FILE_NAME: &str = "mcpl-state.redb";

/// Records in one `redb` file. See the module docs.
pub struct RedbStore {
    db: Database,
    path: PathBuf,
}

impl std::fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl RedbStore {
    /// Opens (or creates) the store in directory `dir` (created if missing), in its file
    /// [`RedbStore::FILE_NAME`]. A file that is not a store, is damaged, or holds another
    /// format is an error naming it.
    pub fn open_dir(dir: &Path) -> Result<Self, StoreError> {
        let path = dir.join(FILE_NAME);
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
            path: path.clone(),
            detail: format!("cannot create the directory: {e}"),
        })?;
        Self::open(&path)
    }

    /// The store's file name in a data directory.
    pub const FILE_NAME: &'static str = FILE_NAME;

    /// Opens (or creates) the store in the file `path`. See [`RedbStore::open_dir`].
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let open = |e: &dyn std::fmt::Display| StoreError::Open {
            path: path.to_owned(),
            detail: e.to_string(),
        };
        // redb reports a damaged file as an error; a panic inside it would be a bug of
        // its own, but a store must never take the server down with one (issue #15).
        let db = quietly(|| Database::create(path))
            .map_err(|why| open(&format!("the file is damaged (reading it: {why})")))?
            .map_err(|e| match e {
                redb::DatabaseError::DatabaseAlreadyOpen => StoreError::Locked {
                    path: path.to_owned(),
                    holder: lock_holder(path),
                },
                e => open(&e),
            })?;
        let store = RedbStore {
            db,
            path: path.to_owned(),
        };
        store.init()?;
        Ok(store)
    }

    fn io(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::Io {
            path: self.path.clone(),
            detail: e.to_string(),
        }
    }

    /// Creates the tables and checks (or writes) the format.
    fn init(&self) -> Result<(), StoreError> {
        let w = self.db.begin_write().map_err(|e| self.io(e))?;
        {
            w.open_table(PRINCIPALS).map_err(|e| self.io(e))?;
            w.open_table(INSTANCES).map_err(|e| self.io(e))?;
            w.open_table(PARTS).map_err(|e| self.io(e))?;
            let mut meta = w.open_table(META).map_err(|e| self.io(e))?;
            let found = meta
                .get("format")
                .map_err(|e| self.io(e))?
                .map(|v| v.value());
            match found {
                Some(FORMAT_WHOLE) => {
                    meta.insert("format", FORMAT).map_err(|e| self.io(e))?;
                }
                Some(found) if found != FORMAT => {
                    return Err(StoreError::Incompatible {
                        path: self.path.clone(),
                        found,
                        expected: FORMAT,
                    });
                }
                Some(_) => {}
                None => {
                    meta.insert("format", FORMAT).map_err(|e| self.io(e))?;
                }
            }
        }
        w.commit().map_err(|e| self.io(e))
    }

    /// Every record, read in one transaction.
    fn read_all(&self) -> Result<Loaded, StoreError> {
        let r = self.db.begin_read().map_err(|e| self.io(e))?;
        let mut loaded = Loaded::default();
        let principals = r.open_table(PRINCIPALS).map_err(|e| self.io(e))?;
        for entry in principals.iter().map_err(|e| self.io(e))? {
            let (k, v) = entry.map_err(|e| self.io(e))?;
            loaded
                .principals
                .push((k.value().to_owned(), v.value().to_vec()));
        }
        let instances = r.open_table(INSTANCES).map_err(|e| self.io(e))?;
        for entry in instances.iter().map_err(|e| self.io(e))? {
            let (k, v) = entry.map_err(|e| self.io(e))?;
            loaded.instances.push((k.value(), v.value().to_vec()));
        }
        let parts = r.open_table(PARTS).map_err(|e| self.io(e))?;
        for entry in parts.iter().map_err(|e| self.io(e))? {
            let (k, v) = entry.map_err(|e| self.io(e))?;
            let (principal, part) = k.value();
            loaded
                .parts
                .push((principal.to_owned(), part.to_owned(), v.value().to_vec()));
        }
        Ok(loaded)
    }

    /// One principal's core record and parts, read in one transaction.
    fn read_principal(&self, principal: &str) -> Result<PrincipalLoaded, StoreError> {
        let r = self.db.begin_read().map_err(|e| self.io(e))?;
        let principals = r.open_table(PRINCIPALS).map_err(|e| self.io(e))?;
        let core = principals
            .get(principal)
            .map_err(|e| self.io(e))?
            .map(|v| v.value().to_vec());
        let mut loaded = PrincipalLoaded {
            core,
            parts: Vec::new(),
        };
        let parts = r.open_table(PARTS).map_err(|e| self.io(e))?;
        for entry in parts.range((principal, "")..).map_err(|e| self.io(e))? {
            let (k, v) = entry.map_err(|e| self.io(e))?;
            let (owner, part) = k.value();
            if owner != principal {
                break;
            }
            loaded.parts.push((part.to_owned(), v.value().to_vec()));
        }
        Ok(loaded)
    }

    /// One instance's record.
    fn read_instance(&self, id: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let r = self.db.begin_read().map_err(|e| self.io(e))?;
        let instances = r.open_table(INSTANCES).map_err(|e| self.io(e))?;
        let record = instances.get(id).map_err(|e| self.io(e))?;
        Ok(record.map(|v| v.value().to_vec()))
    }

    /// Every instance's record, listed.
    fn read_instances(&self) -> Result<Vec<LiveInstance>, StoreError> {
        let r = self.db.begin_read().map_err(|e| self.io(e))?;
        let instances = r.open_table(INSTANCES).map_err(|e| self.io(e))?;
        let mut live = Vec::new();
        for entry in instances.iter().map_err(|e| self.io(e))? {
            let (k, v) = entry.map_err(|e| self.io(e))?;
            live.push(LiveInstance::of(k.value(), v.value().to_vec()));
        }
        Ok(live)
    }

    /// Runs a read, a damaged file an error rather than a panic (as `load`).
    fn reading<T>(&self, read: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
        quietly(read).map_err(|why| StoreError::Open {
            path: self.path.clone(),
            detail: format!("the file is damaged (reading it: {why})"),
        })?
    }

    fn write<T>(
        &self,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<T, Box<redb::Error>>,
    ) -> Result<T, StoreError> {
        let write = || {
            let w = self.db.begin_write().map_err(|e| self.io(e))?;
            let value = f(&w).map_err(|e| self.io(e))?;
            w.commit().map_err(|e| self.io(e))?;
            Ok(value)
        };
        quietly(write).map_err(|why| self.io(format!("the file is damaged (writing it: {why})")))?
    }
}

/// The process holding `path`'s lock, as `pid N, NAME`, from `/proc/locks` (redb takes a
/// `flock` on its file; Linux lists each with its holder's pid and the file's inode).
/// `None` elsewhere, or when it cannot be told.
#[cfg(target_os = "linux")]
fn lock_holder(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let inode = std::fs::metadata(path).ok()?.ino();
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    // `1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF`
    let pid = locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (pid, file) = (fields.get(4)?, fields.get(5)?);
        let ino: u64 = file.rsplit(':').next()?.parse().ok()?;
        (ino == inode && *pid != std::process::id().to_string()).then(|| pid.to_string())
    })?;
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    Some(match name.trim() {
        "" => format!("pid {pid}"),
        name => format!("pid {pid}, {name}"),
    })
}

/// See the Linux version: no holder is told elsewhere.
#[cfg(not(target_os = "linux"))]
fn lock_holder(_path: &Path) -> Option<String> {
    None
}

/// Runs `f`, turning a panic inside it (redb asserts on some damaged files) into an error
/// that says what it was — without the panic hook's report on stderr first: a damaged
/// store is an error the operator reads once, clearly, not a "thread panicked" line that
/// looks like a crash (issue #37, item 11). Other threads' panics are reported as ever.
fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    use std::cell::RefCell;
    thread_local! {
        /// `Some` while this thread runs `quietly`: the message of a panic inside it.
        static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
    }
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let quiet = CAUGHT.with(|c| match c.borrow_mut().as_mut() {
                Some(slot) => {
                    let message = info
                        .payload()
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| info.payload().downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a panic".to_owned());
                    *slot = match info.location() {
                        Some(at) => format!("{message}, at {}:{}", at.file(), at.line()),
                        None => message,
                    };
                    true
                }
                None => false,
            });
            if !quiet {
                previous(info);
            }
        }));
    });
    CAUGHT.with(|c| *c.borrow_mut() = Some(String::new()));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    let caught = CAUGHT.with(|c| c.borrow_mut().take()).unwrap_or_default();
    result.map_err(|_| caught)
}

/// A redb error, boxed (it is large).
fn boxed(e: impl Into<redb::Error>) -> Box<redb::Error> {
    Box::new(e.into())
}

impl Store for RedbStore {
    fn load(&self) -> Result<Loaded, StoreError> {
        // As in `open`: a damaged file is an error, never a panic of the server's.
        self.reading(|| self.read_all())
    }

    fn load_principal(&self, principal: &str) -> Result<PrincipalLoaded, StoreError> {
        self.reading(|| self.read_principal(principal))
    }

    fn load_instance(&self, id: u64) -> Result<Option<Vec<u8>>, StoreError> {
        self.reading(|| self.read_instance(id))
    }

    fn live_instances(&self) -> Result<Vec<LiveInstance>, StoreError> {
        self.reading(|| self.read_instances())
    }

    fn reserve_instance_ids(&self, count: u64) -> Result<std::ops::Range<u64>, StoreError> {
        // One write transaction: the counter read and moved past the block, fsync'd before
        // the block is handed out, so a server started again on the file never gets it.
        self.write(|w| {
            let mut meta = w.open_table(META).map_err(boxed)?;
            let next = meta
                .get(NEXT_INSTANCE)
                .map_err(boxed)?
                .map_or(1, |v| v.value());
            // Past every instance kept too: a file written before the counter, or a record
            // put by hand (`put_instance`).
            let instances = w.open_table(INSTANCES).map_err(boxed)?;
            let last = instances.last().map_err(boxed)?.map(|(k, _)| k.value());
            let start = next.max(last.map_or(1, |id| id.saturating_add(1)));
            let end = start.saturating_add(count.max(1));
            meta.insert(NEXT_INSTANCE, end).map_err(boxed)?;
            Ok(start..end)
        })
    }

    fn commit(&self, steps: &[Writes]) -> Result<(), StoreError> {
        // A record written by several of the steps is written once, as the last left it.
        let net = Writes::net(steps);
        // One write transaction for every step handed over: one fsync (redb's default
        // durability) for all of them.
        self.write(|w| {
            let mut table = w.open_table(PRINCIPALS).map_err(boxed)?;
            let mut parts = w.open_table(PARTS).map_err(boxed)?;
            for (name, p) in net.principals {
                if p.cleared {
                    let mut kept = Vec::new();
                    for entry in parts.range((name, "")..).map_err(boxed)? {
                        let (k, _) = entry.map_err(boxed)?;
                        let (owner, part) = k.value();
                        if owner != name {
                            break;
                        }
                        kept.push(part.to_owned());
                    }
                    for part in kept {
                        parts.remove((name, part.as_str())).map_err(boxed)?;
                    }
                }
                match p.record {
                    Some(Some(r)) => table.insert(name, r).map(drop),
                    Some(None) => table.remove(name).map(drop),
                    None => Ok(()),
                }
                .map_err(boxed)?;
                for (part, record) in p.parts {
                    match record {
                        Some(r) => parts.insert((name, part), r).map(drop),
                        None => parts.remove((name, part)).map(drop),
                    }
                    .map_err(boxed)?;
                }
            }
            let mut table = w.open_table(INSTANCES).map_err(boxed)?;
            for (id, record) in net.instances {
                match record {
                    Some(r) => table.insert(id, r),
                    None => table.remove(id),
                }
                .map_err(boxed)?;
            }
            Ok(())
        })
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_reopening_and_a_damaged_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = RedbStore::open_dir(dir.path()).unwrap();
            s.put_principal("alice", b"{}").unwrap();
            s.put_instance(3, b"x").unwrap();
            s.put_instance(4, b"y").unwrap();
            s.delete_instance(4).unwrap();
        }
        let s = RedbStore::open_dir(dir.path()).unwrap();
        let loaded = s.load().unwrap();
        assert_eq!(loaded.principals, [("alice".to_owned(), b"{}".to_vec())]);
        assert_eq!(loaded.instances, [(3, b"x".to_vec())]);
        drop(s);
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, b"not a store at all, just some bytes").unwrap();
        let err = RedbStore::open_dir(dir.path()).unwrap_err();
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }

    /// One step writing `name`'s core record (when given) and its parts.
    fn with_parts(name: &str, core: Option<&[u8]>, parts: &[(&str, Option<&[u8]>)]) -> Writes {
        Writes {
            principals: core
                .map(|c| vec![(name.to_owned(), Some(c.to_vec()))])
                .unwrap_or_default(),
            parts: parts
                .iter()
                .map(|(p, r)| (name.to_owned(), (*p).to_owned(), r.map(<[u8]>::to_vec)))
                .collect(),
            ..Writes::default()
        }
    }

    fn parts(s: &RedbStore) -> Vec<(String, String)> {
        let loaded = s.load().unwrap();
        loaded.parts.into_iter().map(|(p, n, _)| (p, n)).collect()
    }

    #[test]
    fn parts_go_with_their_principal_and_only_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let s = RedbStore::open_dir(dir.path()).unwrap();
        s.commit(&[
            with_parts(
                "alice",
                Some(b"a"),
                &[("ended/1", Some(b"1")), ("ended/2", Some(b"2"))],
            ),
            with_parts("alice2", Some(b"a2"), &[("ended/1", Some(b"1"))]),
            with_parts("alice", None, &[("ended/1", None)]),
        ])
        .unwrap();
        let own = |p: &str, n: &str| (p.to_owned(), n.to_owned());
        assert_eq!(
            parts(&s),
            [own("alice", "ended/2"), own("alice2", "ended/1")]
        );
        // Forgotten and made again in one commit: only the parts written after are kept.
        s.commit(&[
            Writes::principal("alice", None),
            with_parts("alice", Some(b"b"), &[("ended/3", Some(b"3"))]),
        ])
        .unwrap();
        assert_eq!(
            parts(&s),
            [own("alice", "ended/3"), own("alice2", "ended/1")]
        );
        s.delete_principal("alice").unwrap();
        assert_eq!(parts(&s), [own("alice2", "ended/1")]);
    }

    #[test]
    fn a_store_of_records_written_whole_loads_and_is_marked_for_parts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        {
            // The file as a server before parts left it: format 1, no table of parts.
            let db = Database::create(&path).unwrap();
            let w = db.begin_write().unwrap();
            w.open_table(PRINCIPALS)
                .unwrap()
                .insert("alice", &b"whole"[..])
                .unwrap();
            w.open_table(INSTANCES).unwrap();
            w.open_table(META)
                .unwrap()
                .insert("format", FORMAT_WHOLE)
                .unwrap();
            w.commit().unwrap();
        }
        let s = RedbStore::open(&path).unwrap();
        let loaded = s.load().unwrap();
        assert_eq!(loaded.principals, [("alice".to_owned(), b"whole".to_vec())]);
        assert!(loaded.parts.is_empty());
        s.commit(&[with_parts(
            "alice",
            Some(b"core"),
            &[("ended/1", Some(b"1"))],
        )])
        .unwrap();
        drop(s);
        let db = Database::create(&path).unwrap();
        let r = db.begin_read().unwrap();
        let format = r
            .open_table(META)
            .unwrap()
            .get("format")
            .unwrap()
            .map(|v| v.value());
        assert_eq!(format, Some(FORMAT));
        drop(r);
        drop(db);
        assert_eq!(parts(&RedbStore::open(&path).unwrap()).len(), 1);
    }
}

//! The told ended ids persisted in a small file under the host's state directory (§4.3,
//! vector 13: a restart never tells an id twice). I/O, so it lives beside the Host actor
//! that calls it, not among the pure cores: the Host calls [`ToldStore::save`] when
//! [`ToldIds::take_dirty`] says so, and the cores give it the persisted form ([`ToldFile`]).
//!
//! Writes are atomic: the new content goes to a temporary file in the same directory,
//! which is synced and renamed over the old one, so a crash leaves the old file or the
//! new, never half of one.

use crate::state::{ToldFile, ToldIds};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file's name under the state directory.
pub const TOLD_FILE: &str = "told-ended.json";

/// Why the told ids could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The file is not what this host writes (the Host may start from an empty set).
    #[error("told-ids file {path} is corrupt: {source}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Why it does not decode.
        source: serde_json::Error,
    },
    /// The file has a version this host does not know.
    #[error("told-ids file {path} has unknown version {version}")]
    UnknownVersion {
        /// The file.
        path: PathBuf,
        /// Its version.
        version: u32,
    },
    /// The file system refused.
    #[error("told-ids file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The state directory a host program uses when none is given: `app` under the OS data
/// directory (`~/.local/share/<app>` on Linux, honouring `XDG_DATA_HOME`). A default, so
/// that a restart never tells an ended record twice (§4.3, vector 13) without anyone having
/// to ask for it; None where the OS names no data directory.
pub fn default_state_dir(app: &str) -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join(app))
}

/// Where the told ids live: `<state dir>/told-ended.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToldStore {
    path: PathBuf,
}

impl ToldStore {
    /// A store under `state_dir` (created on the first save).
    pub fn new(state_dir: impl AsRef<Path>) -> Self {
        ToldStore {
            path: state_dir.as_ref().join(TOLD_FILE),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the told ids, keeping up to `capacity` per server. A missing file is an empty
    /// set.
    pub fn load(&self, capacity: usize) -> Result<ToldIds, StoreError> {
        let bytes = match fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ToldIds::new(capacity));
            }
            Err(source) => return Err(self.io(source)),
        };
        let file: ToldFile =
            serde_json::from_slice(&bytes).map_err(|source| StoreError::Corrupt {
                path: self.path.clone(),
                source,
            })?;
        if !(1..=2).contains(&file.version) {
            return Err(StoreError::UnknownVersion {
                path: self.path.clone(),
                version: file.version,
            });
        }
        Ok(ToldIds::from_file(file, capacity))
    }

    /// Writes the told ids atomically (temporary file, sync, rename).
    pub fn save(&self, ids: &ToldIds) -> Result<(), StoreError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        let body =
            serde_json::to_vec_pretty(&ids.to_file()).map_err(|source| StoreError::Corrupt {
                path: self.path.clone(),
                source,
            })?;
        let tmp = self
            .path
            .with_extension(format!("tmp.{}", std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(&body)?;
            f.sync_all()?;
            fs::rename(&tmp, &self.path)?;
            // The rename is durable once the directory is synced (best effort where a
            // directory cannot be opened).
            if let Ok(d) = fs::File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(())
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            self.io(e)
        })
    }

    fn io(&self, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_and_loads_across_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let store = ToldStore::new(dir.path().join("state"));
        assert!(store.load(16).unwrap().is_empty(), "missing file: empty");
        let mut ids = ToldIds::new(16);
        ids.mark_told("arcade", "e-1");
        store.save(&ids).unwrap();
        ids.mark_told("arcade", "e-2");
        store.save(&ids).unwrap();
        let back = ToldStore::new(dir.path().join("state")).load(16).unwrap();
        assert!(back.contains("arcade", "e-1") && back.contains("arcade", "e-2"));
        let leftovers: Vec<_> = fs::read_dir(dir.path().join("state"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, [TOLD_FILE], "no temporary file is left behind");
    }

    #[test]
    fn a_corrupt_or_foreign_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let store = ToldStore::new(dir.path());
        fs::write(store.path(), b"{not json").unwrap();
        assert!(matches!(store.load(16), Err(StoreError::Corrupt { .. })));
        fs::write(store.path(), br#"{"version": 9, "servers": {}}"#).unwrap();
        assert!(matches!(
            store.load(16),
            Err(StoreError::UnknownVersion { version: 9, .. })
        ));
    }
}

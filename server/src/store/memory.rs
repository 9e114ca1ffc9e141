//! [`MemoryStore`]: records kept in the process.

use super::{Loaded, Store, StoreError};
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// Keeps the records in memory: a server built again in the same process with a clone of
/// the same `Arc<MemoryStore>` reads them back, as after a restart. Nothing survives the
/// process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    records: Mutex<Records>,
}

#[derive(Debug, Default)]
struct Records {
    principals: BTreeMap<String, Vec<u8>>,
    instances: BTreeMap<u64, Vec<u8>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut Records) -> R) -> R {
        f(&mut self.records.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Store for MemoryStore {
    fn load(&self) -> Result<Loaded, StoreError> {
        Ok(self.with(|r| Loaded {
            principals: r
                .principals
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            instances: r.instances.iter().map(|(k, v)| (*k, v.clone())).collect(),
        }))
    }

    fn put_principal(&self, principal: &str, record: &[u8]) -> Result<(), StoreError> {
        self.with(|r| r.principals.insert(principal.to_owned(), record.to_vec()));
        Ok(())
    }

    fn delete_principal(&self, principal: &str) -> Result<(), StoreError> {
        self.with(|r| r.principals.remove(principal));
        Ok(())
    }

    fn put_instance(&self, id: u64, record: &[u8]) -> Result<(), StoreError> {
        self.with(|r| r.instances.insert(id, record.to_vec()));
        Ok(())
    }

    fn delete_instance(&self, id: u64) -> Result<(), StoreError> {
        self.with(|r| r.instances.remove(&id));
        Ok(())
    }

    fn location(&self) -> String {
        "memory".to_owned()
    }
}

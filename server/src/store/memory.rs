//! [`MemoryStore`]: records kept in the process.

use super::{Loaded, Store, StoreError, Writes};
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

    fn commit(&self, steps: &[Writes]) -> Result<(), StoreError> {
        self.with(|r| {
            for step in steps {
                for (name, record) in &step.principals {
                    match record {
                        Some(b) => r.principals.insert(name.clone(), b.clone()),
                        None => r.principals.remove(name),
                    };
                }
                for (id, record) in &step.instances {
                    match record {
                        Some(b) => r.instances.insert(*id, b.clone()),
                        None => r.instances.remove(id),
                    };
                }
            }
        });
        Ok(())
    }

    fn location(&self) -> String {
        "memory".to_owned()
    }
}

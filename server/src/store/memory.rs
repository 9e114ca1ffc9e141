//! [`MemoryStore`]: records kept in the process.

use super::{LiveInstance, Loaded, PrincipalLoaded, Store, StoreError, Writes};
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
    /// Principals' parts, by principal and part.
    parts: BTreeMap<(String, String), Vec<u8>>,
    /// The next instance id no server was given ([`Store::reserve_instance_ids`]); 0:
    /// none reserved yet.
    next_instance: u64,
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
            parts: r
                .parts
                .iter()
                .map(|((p, k), v)| (p.clone(), k.clone(), v.clone()))
                .collect(),
        }))
    }

    fn commit(&self, steps: &[Writes]) -> Result<(), StoreError> {
        let net = Writes::net(steps);
        self.with(|r| {
            for (name, p) in net.principals {
                if p.cleared {
                    r.parts.retain(|(owner, _), _| owner != name);
                }
                match p.record {
                    Some(Some(b)) => {
                        r.principals.insert(name.to_owned(), b.to_vec());
                    }
                    Some(None) => {
                        r.principals.remove(name);
                    }
                    None => {}
                }
                for (part, record) in p.parts {
                    let key = (name.to_owned(), part.to_owned());
                    match record {
                        Some(b) => r.parts.insert(key, b.to_vec()),
                        None => r.parts.remove(&key),
                    };
                }
            }
            for (id, record) in net.instances {
                match record {
                    Some(b) => r.instances.insert(id, b.to_vec()),
                    None => r.instances.remove(&id),
                };
            }
        });
        Ok(())
    }

    fn location(&self) -> String {
        "memory".to_owned()
    }

    fn reserve_instance_ids(&self, count: u64) -> Result<std::ops::Range<u64>, StoreError> {
        Ok(self.with(|r| {
            // Past any record put by hand (`put_instance`), as a file written before.
            let kept = r.instances.keys().next_back().map_or(1, |id| id + 1);
            let start = r.next_instance.max(kept);
            r.next_instance = start.saturating_add(count.max(1));
            start..r.next_instance
        }))
    }

    fn load_principal(&self, principal: &str) -> Result<PrincipalLoaded, StoreError> {
        Ok(self.with(|r| PrincipalLoaded {
            core: r.principals.get(principal).cloned(),
            parts: r
                .parts
                .range((principal.to_owned(), String::new())..)
                .take_while(|((owner, _), _)| owner == principal)
                .map(|((_, part), v)| (part.clone(), v.clone()))
                .collect(),
        }))
    }

    fn load_instance(&self, id: u64) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.with(|r| r.instances.get(&id).cloned()))
    }

    fn live_instances(&self) -> Result<Vec<LiveInstance>, StoreError> {
        let records: Vec<(u64, Vec<u8>)> =
            self.with(|r| r.instances.iter().map(|(k, v)| (*k, v.clone())).collect());
        Ok(records
            .into_iter()
            .map(|(id, record)| LiveInstance::of(id, record))
            .collect())
    }
}

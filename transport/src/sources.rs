//! Counting what each source address holds, so one address cannot hold without bound what
//! it costs nothing to make: anonymous principals ([`ServerOptions::anonymous_per_source`]).
//!
//! [`ServerOptions::anonymous_per_source`]: crate::ServerOptions::anonymous_per_source

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// Live counts by source address; one per listener.
#[derive(Debug, Default, Clone)]
pub(crate) struct Sources(Arc<Mutex<HashMap<IpAddr, usize>>>);

impl Sources {
    /// A slot for `ip` when it holds fewer than `limit`; `None` at the limit. The slot counts
    /// until it is dropped.
    pub(crate) fn take(&self, ip: IpAddr, limit: usize) -> Option<SourceSlot> {
        let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let n = counts.entry(ip).or_insert(0);
        if *n >= limit {
            return None;
        }
        *n += 1;
        Some(SourceSlot {
            sources: self.clone(),
            ip,
        })
    }

    /// How many `ip` holds now.
    #[cfg(test)]
    fn held(&self, ip: IpAddr) -> usize {
        let counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        counts.get(&ip).copied().unwrap_or(0)
    }
}

/// One thing a source address holds; released when dropped.
#[derive(Debug)]
pub(crate) struct SourceSlot {
    sources: Sources,
    ip: IpAddr,
}

impl Drop for SourceSlot {
    fn drop(&mut self) {
        let mut counts = self
            .sources
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = counts.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_count_per_address_up_to_the_limit_and_free_when_dropped() {
        let sources = Sources::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let first = sources.take(a, 2).unwrap();
        let _second = sources.take(a, 2).unwrap();
        assert!(sources.take(a, 2).is_none(), "at the limit");
        assert!(
            sources.take(b, 2).is_some(),
            "another address is counted apart"
        );
        drop(first);
        assert_eq!(sources.held(a), 1);
        assert!(sources.take(a, 2).is_some());
    }
}

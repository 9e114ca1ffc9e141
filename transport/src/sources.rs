//! Counting what each source of connections holds, so that none can hold without bound what
//! costs it nothing to make: anonymous principals by source address
//! ([`ServerOptions::anonymous_per_source`]) and in all ([`ServerOptions::anonymous_max`]),
//! and a named principal's WebSocket connections
//! ([`ServerOptions::ws_connections_per_principal`]).
//!
//! An IPv6 address counts as its /64: one host is routinely given a whole /64, so counting
//! single addresses would bound nothing (issue #37, item 3). An IPv4-mapped IPv6 address
//! counts as the IPv4 address it maps.
//!
//! [`ServerOptions::anonymous_per_source`]: crate::ServerOptions::anonymous_per_source
//! [`ServerOptions::anonymous_max`]: crate::ServerOptions::anonymous_max
//! [`ServerOptions::ws_connections_per_principal`]: crate::ServerOptions::ws_connections_per_principal

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex, PoisonError};

/// What is counted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Source {
    /// Anonymous principals from one address ([`Source::of`]).
    Address(IpAddr),
    /// Anonymous principals from every address.
    Anonymous,
    /// One named principal's connections.
    Principal(Arc<str>),
}

impl Source {
    /// The source an address counts under: itself for IPv4, its /64 for IPv6.
    pub(crate) fn of(ip: IpAddr) -> Source {
        Source::Address(network(ip))
    }
}

/// `ip` as counted: an IPv4 address as it is (an IPv4-mapped IPv6 one as its IPv4
/// address), an IPv6 address as its /64.
pub(crate) fn network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

/// Live counts by source; one per listener.
#[derive(Debug, Default, Clone)]
pub(crate) struct Sources(Arc<Mutex<HashMap<Source, usize>>>);

impl Sources {
    /// A slot counted under every one of `limits`' sources when each holds fewer than its
    /// limit; `Err` names the first source at its limit, and nothing is taken. The slot
    /// counts until it is dropped.
    pub(crate) fn take(&self, limits: &[(Source, usize)]) -> Result<SourceSlot, Source> {
        let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((full, _)) = limits
            .iter()
            .find(|(source, limit)| counts.get(source).copied().unwrap_or(0) >= *limit)
        {
            return Err(full.clone());
        }
        for (source, _) in limits {
            *counts.entry(source.clone()).or_insert(0) += 1;
        }
        Ok(SourceSlot {
            sources: self.clone(),
            counted: limits.iter().map(|(s, _)| s.clone()).collect(),
        })
    }

    /// How many `source` holds now.
    #[cfg(test)]
    fn held(&self, source: &Source) -> usize {
        let counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        counts.get(source).copied().unwrap_or(0)
    }
}

/// One thing held under one or more sources; released when dropped.
#[derive(Debug)]
pub(crate) struct SourceSlot {
    sources: Sources,
    counted: Vec<Source>,
}

impl Drop for SourceSlot {
    fn drop(&mut self) {
        let mut counts = self
            .sources
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for source in &self.counted {
            if let Some(n) = counts.get_mut(source) {
                *n -= 1;
                if *n == 0 {
                    counts.remove(source);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ip: &str) -> Source {
        Source::of(ip.parse().unwrap())
    }

    #[test]
    fn slots_count_per_address_up_to_the_limit_and_free_when_dropped() {
        let sources = Sources::default();
        let (a, b) = (at("192.0.2.1"), at("192.0.2.2"));
        let first = sources.take(&[(a.clone(), 2)]).unwrap();
        let _second = sources.take(&[(a.clone(), 2)]).unwrap();
        assert_eq!(
            sources.take(&[(a.clone(), 2)]).unwrap_err(),
            a,
            "at the limit"
        );
        assert!(
            sources.take(&[(b, 2)]).is_ok(),
            "another address is counted apart"
        );
        drop(first);
        assert_eq!(sources.held(&a), 1);
        assert!(sources.take(&[(a, 2)]).is_ok());
    }

    #[test]
    fn an_ipv6_address_counts_as_its_64_and_a_mapped_ipv4_as_itself() {
        assert_eq!(at("2001:db8:1:2:aaaa::1"), at("2001:db8:1:2:ffff:1:2:3"));
        assert_ne!(at("2001:db8:1:2::1"), at("2001:db8:1:3::1"));
        assert_eq!(at("::ffff:192.0.2.7"), at("192.0.2.7"));
    }

    #[test]
    fn a_slot_under_several_sources_takes_all_or_none() {
        let sources = Sources::default();
        let (a, b) = (at("192.0.2.1"), at("192.0.2.2"));
        let limits = |addr: &Source| [(addr.clone(), 8), (Source::Anonymous, 2)];
        let _one = sources.take(&limits(&a)).unwrap();
        let _two = sources.take(&limits(&b)).unwrap();
        assert_eq!(sources.take(&limits(&a)).unwrap_err(), Source::Anonymous);
        assert_eq!(
            sources.held(&a),
            1,
            "nothing was taken for the refused slot"
        );
        drop(_two);
        assert!(sources.take(&limits(&a)).is_ok());
    }
}

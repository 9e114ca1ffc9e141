//! Where a network listener binds, as an operator writes it on a command line.
//!
//! MCP's transport security advice is to bind loopback unless the server is meant for other
//! machines, so a bare port binds `127.0.0.1`: serving the network takes an explicit
//! address (`0.0.0.0:8765`, `[::]:8765`). Host names other than `localhost` are refused
//! rather than resolved, so what a listener binds never depends on DNS.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::str::FromStr;

/// A listener's address: `PORT` (loopback), `localhost:PORT`, `IP:PORT` or `[IPv6]:PORT`.
///
/// ```
/// use mcpl_transport::ListenAddr;
/// let a: ListenAddr = "8765".parse().unwrap();
/// assert!(a.addr().ip().is_loopback());
/// let b: ListenAddr = "0.0.0.0:8765".parse().unwrap();
/// assert!(!b.addr().ip().is_loopback());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListenAddr(SocketAddr);

impl ListenAddr {
    /// Loopback (`127.0.0.1`) on `port`; port 0 lets the system pick one.
    pub fn loopback(port: u16) -> Self {
        Self(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port))
    }

    /// The socket address to bind.
    pub fn addr(self) -> SocketAddr {
        self.0
    }
}

impl From<SocketAddr> for ListenAddr {
    fn from(addr: SocketAddr) -> Self {
        Self(addr)
    }
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Why a listen address was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ListenAddrError {
    /// Neither a port, nor `localhost:PORT`, nor `IP:PORT`.
    #[error(
        "{0:?} is not a listen address: give PORT (binds 127.0.0.1), localhost:PORT, IP:PORT or [IPv6]:PORT"
    )]
    Invalid(String),
    /// A host name other than `localhost`; it would need DNS to bind.
    #[error("{0:?} names a host; give an IP address (0.0.0.0 for every interface) or localhost")]
    HostName(String),
}

impl FromStr for ListenAddr {
    type Err = ListenAddrError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Ok(port) = s.parse::<u16>() {
            return Ok(Self::loopback(port));
        }
        if let Ok(addr) = s.parse::<SocketAddr>() {
            return Ok(Self(addr));
        }
        match s.rsplit_once(':') {
            Some((host, port)) if host.eq_ignore_ascii_case("localhost") => port
                .parse::<u16>()
                .map(Self::loopback)
                .map_err(|_| ListenAddrError::Invalid(s.to_owned())),
            Some((host, port))
                if port.parse::<u16>().is_ok()
                    && !host.is_empty()
                    && host.parse::<IpAddr>().is_err()
                    && !host.contains([':', '[', ']']) =>
            {
                Err(ListenAddrError::HostName(s.to_owned()))
            }
            _ => Err(ListenAddrError::Invalid(s.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_binds_loopback_and_an_address_binds_where_told() {
        let cases: [(&str, &str); 6] = [
            ("8765", "127.0.0.1:8765"),
            ("0", "127.0.0.1:0"),
            ("localhost:8765", "127.0.0.1:8765"),
            ("127.0.0.1:1", "127.0.0.1:1"),
            ("0.0.0.0:8765", "0.0.0.0:8765"),
            ("[::1]:8765", "[::1]:8765"),
        ];
        for (text, want) in cases {
            let got: ListenAddr = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(got.addr(), want.parse::<SocketAddr>().unwrap(), "{text}");
        }
        assert!(
            "8765"
                .parse::<ListenAddr>()
                .unwrap()
                .addr()
                .ip()
                .is_loopback()
        );
    }

    #[test]
    fn host_names_and_junk_are_refused() {
        assert_eq!(
            "example.com:80".parse::<ListenAddr>(),
            Err(ListenAddrError::HostName("example.com:80".into()))
        );
        for junk in [
            "",
            "port",
            "65536",
            "127.0.0.1",
            "localhost:x",
            ":80x",
            "[::1]",
        ] {
            assert!(
                matches!(junk.parse::<ListenAddr>(), Err(ListenAddrError::Invalid(_))),
                "{junk:?} accepted"
            );
        }
    }
}

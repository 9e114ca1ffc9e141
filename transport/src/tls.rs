//! TLS for the network transports, with rustls and its `ring` provider (the only crypto
//! provider in the workspace).
//!
//! - [`ClientTls`]: how a client end verifies a server reached by `wss://` or `https://`:
//!   the webpki roots (Mozilla's list, compiled in), plus the certificates of an optional CA
//!   file for servers with a private CA. [`ClientOptions::tls`] holds one; the default is
//!   the webpki roots alone.
//! - [`ServerTls`]: a certificate chain and private key a listener serves TLS with
//!   ([`ServerOptions::tls`]). The handshake runs in each connection's own task, bounded by
//!   the listener's handshake or read timeout, so a peer that stalls it holds up nobody.
//!
//! A file that cannot be read, holds no certificate or key, or a key that does not match its
//! certificate is a [`TlsError`] naming the file. A server that fails verification (an
//! unknown CA, a certificate for another name, an expired one) is
//! [`TransportError::Tls`], naming the host.
//!
//! [`ClientOptions::tls`]: crate::ClientOptions::tls
//! [`ServerOptions::tls`]: crate::ServerOptions::tls

use crate::TransportError;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// The rustls crate, for [`TransportError::Tls`]'s error (`rustls::Error`,
/// `rustls::CertificateError`) and [`ClientTls::rustls_config`]'s type.
pub use rustls;

/// How long [`probe`] may take to connect and complete a handshake.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why TLS could not be configured from the files given.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not well-formed PEM.
    #[error("{} is not valid PEM: {source}", path.display())]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: rustls::pki_types::pem::Error,
    },
    /// The file holds no `CERTIFICATE` section.
    #[error("{} holds no PEM certificate", path.display())]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// The file holds no private key section (PKCS#8, PKCS#1 or SEC1).
    #[error("{} holds no PEM private key", path.display())]
    NoKey {
        /// The file.
        path: PathBuf,
    },
    /// A certificate of a CA file is not one a client can trust (not a valid X.509
    /// certificate, say).
    #[error("a certificate in the CA file {} is not usable: {source}", path.display())]
    BadCa {
        /// The CA file.
        path: PathBuf,
        /// Why rustls refused it.
        source: rustls::Error,
    },
    /// rustls refused the certificate chain with this key: most often, the key is not the
    /// certificate's.
    #[error("the certificate {} and key {} cannot be served: {source}", cert.display(), key.display())]
    Refused {
        /// The certificate chain's file.
        cert: PathBuf,
        /// The key's file.
        key: PathBuf,
        /// Why rustls refused them.
        source: rustls::Error,
    },
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// How a client verifies the servers it reaches over TLS. Cloning shares the configuration.
#[derive(Clone)]
pub struct ClientTls {
    config: Arc<rustls::ClientConfig>,
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTls").finish_non_exhaustive()
    }
}

impl Default for ClientTls {
    /// The webpki roots alone, built once per process.
    fn default() -> Self {
        static WEBPKI: OnceLock<ClientTls> = OnceLock::new();
        WEBPKI
            .get_or_init(|| ClientTls::with_roots(webpki_roots()))
            .clone()
    }
}

fn webpki_roots() -> rustls::RootCertStore {
    rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    }
}

impl ClientTls {
    /// The webpki roots plus every certificate in the PEM file `path` (a private CA).
    pub fn with_ca_file(path: impl AsRef<Path>) -> Result<Self, TlsError> {
        let path = path.as_ref();
        let mut roots = webpki_roots();
        for cert in read_certs(path)? {
            roots.add(cert).map_err(|source| TlsError::BadCa {
                path: path.to_owned(),
                source,
            })?;
        }
        Ok(Self::with_roots(roots))
    }

    fn with_roots(roots: rustls::RootCertStore) -> Self {
        let config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        ClientTls {
            config: Arc::new(config),
        }
    }

    /// The rustls configuration, for a connector (tungstenite's, the Streamable HTTP
    /// client's, the probe's).
    pub(crate) fn config(&self) -> Arc<rustls::ClientConfig> {
        self.config.clone()
    }

    /// The rustls configuration, for another client to verify servers the same way (say,
    /// reqwest's `use_preconfigured_tls`, which takes a clone of it).
    pub fn rustls_config(&self) -> Arc<rustls::ClientConfig> {
        self.config()
    }
}

/// A certificate chain and key a listener serves TLS with. Cloning shares it.
#[derive(Clone)]
pub struct ServerTls {
    acceptor: tokio_rustls::TlsAcceptor,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls").finish_non_exhaustive()
    }
}

impl ServerTls {
    /// The chain in the PEM file `cert` (the server's certificate first, then any
    /// intermediates) and the private key in the PEM file `key`.
    pub fn from_pem_files(cert: impl AsRef<Path>, key: impl AsRef<Path>) -> Result<Self, TlsError> {
        let (cert, key) = (cert.as_ref(), key.as_ref());
        let chain = read_certs(cert)?;
        let bytes = read(key)?;
        let private = PrivateKeyDer::from_pem_slice(&bytes).map_err(|e| match e {
            rustls::pki_types::pem::Error::NoItemsFound => TlsError::NoKey {
                path: key.to_owned(),
            },
            source => TlsError::Pem {
                path: key.to_owned(),
                source,
            },
        })?;
        let config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_no_client_auth()
            .with_single_cert(chain, private)
            .map_err(|source| TlsError::Refused {
                cert: cert.to_owned(),
                key: key.to_owned(),
                source,
            })?;
        Ok(ServerTls {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        })
    }

    /// Runs the server side of the handshake over `io` (the listeners do; so may another
    /// server that serves the same certificate). Bound it with a timeout: a peer may stall.
    pub async fn accept<S>(&self, io: S) -> io::Result<tokio_rustls::server::TlsStream<S>>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        self.acceptor.accept(io).await
    }
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_owned(),
        source,
    })
}

/// Every `CERTIFICATE` section of a PEM file; at least one.
fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = read(path)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| TlsError::Pem {
            path: path.to_owned(),
            source,
        })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate {
            path: path.to_owned(),
        });
    }
    Ok(certs)
}

/// The rustls error somewhere in `error`'s chain of causes, if any: tokio-rustls wraps it in
/// an `io::Error`, hyper-rustls that in another, and the client pool's connect error holds that
/// boxed as its source; an `io::Error`'s `source` skips the error it carries, so each one's
/// inner error is searched too.
pub(crate) fn rustls_cause<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a rustls::Error> {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<rustls::Error>() {
            return Some(found);
        }
        if let Some(inner) = e.downcast_ref::<io::Error>().and_then(|io| io.get_ref())
            && let Some(found) = rustls_cause(inner)
        {
            return Some(found);
        }
        next = e.source();
    }
    None
}

/// Where a URL's host is and the name its certificate must carry: a DNS name or an IP
/// address (`None`: no host, or a name rustls cannot verify).
fn target(url: &url::Url) -> Option<(String, ServerName<'static>)> {
    Some(match url.host()? {
        url::Host::Domain(d) => (d.to_owned(), ServerName::try_from(d.to_owned()).ok()?),
        url::Host::Ipv4(ip) => (ip.to_string(), ServerName::from(std::net::IpAddr::V4(ip))),
        url::Host::Ipv6(ip) => (ip.to_string(), ServerName::from(std::net::IpAddr::V6(ip))),
    })
}

/// Connects to an `https://` URL's server and completes a TLS handshake, then hangs up:
/// the Streamable HTTP client does no I/O until its first message, so this is how
/// [`http::connect`](crate::http::connect) refuses a server that fails verification at once,
/// as the WebSocket client does, rather than on every POST.
pub(crate) async fn probe(tls: &ClientTls, url: &url::Url) -> Result<(), TransportError> {
    let host = url.host_str().unwrap_or_default().to_owned();
    let (address, name) = target(url).ok_or_else(|| TransportError::BadUrl {
        url: url.to_string(),
        reason: "the host is not a DNS name or an IP address".to_owned(),
    })?;
    let port = url.port_or_known_default().unwrap_or(443);
    let connector = tokio_rustls::TlsConnector::from(tls.config());
    let handshake = async {
        // Resolved by tokio, off the runtime's threads (`Url::socket_addrs` would block).
        let tcp = TcpStream::connect((address.as_str(), port)).await?;
        connector.connect(name, tcp).await.map(drop)
    };
    match tokio::time::timeout(PROBE_TIMEOUT, handshake).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(failure(&e, &host).unwrap_or(TransportError::Io(e))),
        Err(_) => Err(TransportError::Io(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("no TLS handshake with {host} within {PROBE_TIMEOUT:?}"),
        ))),
    }
}

/// [`TransportError::Tls`] when TLS is what made a client's attempt fail.
pub(crate) fn failure(
    error: &(dyn std::error::Error + 'static),
    host: &str,
) -> Option<TransportError> {
    rustls_cause(error).map(|e| TransportError::Tls {
        host: host.to_owned(),
        error: e.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_testkit::tls::TestCa;

    #[test]
    fn files_that_are_missing_empty_or_mismatched_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let ca = TestCa::new("unit CA");
        let files = ca.server_cert(&["localhost"]).write(dir.path(), "server");
        let other = ca.server_cert(&["localhost"]).write(dir.path(), "other");
        ServerTls::from_pem_files(&files.cert, &files.key).unwrap();

        let missing = dir.path().join("missing.pem");
        match ServerTls::from_pem_files(&missing, &files.key) {
            Err(TlsError::Read { path, .. }) => assert_eq!(path, missing),
            other => panic!("expected Read, got {other:?}"),
        }
        // The key file holds no certificate; the chain file holds no key.
        match ServerTls::from_pem_files(&files.key, &files.key) {
            Err(TlsError::NoCertificate { path }) => assert_eq!(path, files.key),
            other => panic!("expected NoCertificate, got {other:?}"),
        }
        match ServerTls::from_pem_files(&files.cert, &files.cert) {
            Err(TlsError::NoKey { path }) => assert_eq!(path, files.cert),
            other => panic!("expected NoKey, got {other:?}"),
        }
        match ServerTls::from_pem_files(&files.cert, &other.key) {
            Err(TlsError::Refused { cert, key, .. }) => {
                assert_eq!((cert, key), (files.cert.clone(), other.key.clone()));
            }
            other => panic!("expected Refused, got {other:?}"),
        }
        let ca_file = ca.write(dir.path());
        ClientTls::with_ca_file(&ca_file).unwrap();
        match ClientTls::with_ca_file(&files.key) {
            Err(TlsError::NoCertificate { path }) => assert_eq!(path, files.key),
            other => panic!("expected NoCertificate, got {other:?}"),
        }
        let garbled = dir.path().join("garbled.pem");
        std::fs::write(&garbled, "-----BEGIN CERTIFICATE-----\n@@@\n").unwrap();
        match ClientTls::with_ca_file(&garbled) {
            Err(TlsError::Pem { path, .. }) => assert_eq!(path, garbled),
            other => panic!("expected Pem, got {other:?}"),
        }
    }

    #[test]
    fn a_rustls_error_is_found_inside_io_errors() {
        let inner = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let wrapped = io::Error::new(io::ErrorKind::InvalidData, inner.clone());
        let outer = io::Error::other(wrapped);
        assert_eq!(rustls_cause(&outer), Some(&inner));
        assert_eq!(rustls_cause(&io::Error::other("plain")), None);
    }
}

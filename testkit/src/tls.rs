//! Certificate authorities made at test time (`rcgen`), for TLS tests on loopback: a CA, a
//! server certificate it signs for the names a test asks for, and the PEM a client trusts.
//!
//! Nothing is written to disk here; [`TestCa::write`] and [`ServerCert::write`] put the PEM
//! in a directory a test owns, for code that takes file paths.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use std::path::{Path, PathBuf};

/// A certificate authority: its certificate (to trust) and what signs with it.
pub struct TestCa {
    cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCa").finish_non_exhaustive()
    }
}

/// A server's certificate chain (leaf, then the CA) and private key, in PEM.
#[derive(Debug, Clone)]
pub struct ServerCert {
    /// The leaf certificate followed by its issuer's.
    pub chain_pem: String,
    /// The leaf's private key (PKCS#8).
    pub key_pem: String,
}

/// Where [`ServerCert::write`] put a chain and its key.
#[derive(Debug, Clone)]
pub struct CertFiles {
    /// The chain's file.
    pub cert: PathBuf,
    /// The key's file.
    pub key: PathBuf,
}

impl TestCa {
    /// A fresh CA named `name` (its common name), with a key of its own.
    pub fn new(name: &str) -> Self {
        let key = KeyPair::generate().expect("generate the CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).expect("self-sign the CA");
        TestCa {
            cert_pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// The CA's certificate, PEM: what a client adds to its roots.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// A server certificate valid for `names` (DNS names or IP addresses, as written),
    /// signed by this CA.
    pub fn server_cert(&self, names: &[&str]) -> ServerCert {
        let key = KeyPair::generate().expect("generate the server key");
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).expect("server parameters");
        params
            .distinguished_name
            .push(DnType::CommonName, "mcpl test server");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("sign the server certificate");
        ServerCert {
            chain_pem: format!("{}{}", cert.pem(), self.cert_pem),
            key_pem: key.serialize_pem(),
        }
    }

    /// Writes the CA's certificate to `dir/ca.pem` and returns the path.
    pub fn write(&self, dir: &Path) -> PathBuf {
        let path = dir.join("ca.pem");
        std::fs::write(&path, &self.cert_pem).expect("write the CA certificate");
        path
    }
}

impl ServerCert {
    /// Writes the chain and key to `dir/{stem}.pem` and `dir/{stem}.key`.
    pub fn write(&self, dir: &Path, stem: &str) -> CertFiles {
        let files = CertFiles {
            cert: dir.join(format!("{stem}.pem")),
            key: dir.join(format!("{stem}.key")),
        };
        std::fs::write(&files.cert, &self.chain_pem).expect("write the certificate chain");
        std::fs::write(&files.key, &self.key_pem).expect("write the key");
        files
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_certificate_chains_to_its_ca() {
        let ca = TestCa::new("test CA");
        let cert = ca.server_cert(&["localhost", "127.0.0.1"]);
        assert_eq!(cert.chain_pem.matches("BEGIN CERTIFICATE").count(), 2);
        assert!(cert.chain_pem.ends_with(ca.cert_pem()));
        assert!(cert.key_pem.contains("PRIVATE KEY"));
        assert_ne!(TestCa::new("other").cert_pem(), ca.cert_pem());
    }
}

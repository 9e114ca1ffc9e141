//! An authorization server's signing key made at test time (`rcgen`, EC P-256): its JWK Set
//! to give a resource server, and ES256 tokens it signs with whatever claims a test asks for.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rcgen::{KeyPair, PKCS_ECDSA_P256_SHA256};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A signing key with its key id.
pub struct TestIssuer {
    kid: String,
    key: KeyPair,
}

impl std::fmt::Debug for TestIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestIssuer")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl TestIssuer {
    /// A fresh P-256 key named `kid`.
    pub fn new(kid: &str) -> Self {
        TestIssuer {
            kid: kid.to_owned(),
            key: KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("a P-256 key"),
        }
    }

    /// The JWK Set with its public key (`kty` EC, `crv` P-256, `alg` ES256, `kid`).
    pub fn jwks(&self) -> String {
        // The uncompressed point: 0x04, then x and y, 32 bytes each.
        let point = self.key.public_key_raw();
        let (x, y) = point[1..].split_at(32);
        json!({"keys": [{
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": self.kid,
            "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)
        }]})
        .to_string()
    }

    /// Writes the JWK Set to `dir/jwks.json` and returns the path.
    pub fn write_jwks(&self, dir: &Path) -> PathBuf {
        let path = dir.join("jwks.json");
        std::fs::write(&path, self.jwks()).expect("writing the JWKS");
        path
    }

    /// An ES256 token with these claims, its header naming this key.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        let key = EncodingKey::from_ec_der(&self.key.serialize_der());
        jsonwebtoken::encode(&header, claims, &key).expect("signing a token")
    }

    /// An ES256 token with these claims under a header written as given (`alg` and `kid` are
    /// set to this key's; everything else is the caller's, such as a `crit` member that
    /// `jsonwebtoken`'s header type cannot hold).
    pub fn sign_with_header(&self, header: &Value, claims: &Value) -> String {
        let mut header = header.clone();
        header["alg"] = json!("ES256");
        header["kid"] = json!(self.kid);
        let message = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let key = EncodingKey::from_ec_der(&self.key.serialize_der());
        let signature = jsonwebtoken::crypto::sign(message.as_bytes(), &key, Algorithm::ES256)
            .expect("signing a token");
        format!("{message}.{signature}")
    }

    /// The usual claims of [`TestIssuer::token`], for [`TestIssuer::sign_with_header`].
    pub fn claims(iss: &str, aud: &str, sub: &str, ttl_secs: i64) -> Value {
        json!({"iss": iss, "aud": aud, "sub": sub, "exp": now() + ttl_secs})
    }

    /// A token for `sub` from `iss` to `aud`, expiring `ttl_secs` from now (negative: in the
    /// past).
    pub fn token(&self, iss: &str, aud: &str, sub: &str, ttl_secs: i64) -> String {
        self.sign(&Self::claims(iss, aud, sub, ttl_secs))
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

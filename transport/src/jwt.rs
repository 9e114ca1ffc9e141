//! Bearer JWTs from an authorization server (MCP 2025-11-25 "Authorization": the server is
//! an OAuth resource server; a token is a JWT the authorization server signed): verified
//! against the keys of a JWKS document, its issuer, audience and expiry checked, and one
//! claim naming the principal (RFC-014 §4.6: a principal is who the credential says).
//!
//! A key is used only for its own algorithm — the JWK's `alg`, else the one its type and
//! curve imply (EC P-256 → ES256, P-384 → ES384, RSA → RS256, Ed25519 → EdDSA, a symmetric
//! key → HS256) — so a token cannot pick how it is checked (no `none`, no RSA key read as an
//! HMAC secret). A token naming a key id (`kid`) is checked with that key only; without one,
//! with each key whose algorithm is the token's.
//!
//! [`ServerOptions::authenticate`](crate::ServerOptions::authenticate) tries the configured
//! static tokens first, then [`JwtAuth`]; a refusal is a 401 either way, and the reason is
//! logged at debug.

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most bytes a principal's name from a claim may have.
pub const MAX_PRINCIPAL_LEN: usize = 256;

/// Seconds of clock difference allowed when checking `exp` and `nbf` (the default).
pub const DEFAULT_LEEWAY_SECS: u64 = 60;

/// What verifies bearer JWTs, and which claim names the principal. Cheap to clone.
#[derive(Clone)]
pub struct JwtAuth {
    issuer: String,
    audience: String,
    claim: String,
    leeway: u64,
    keys: Arc<[Key]>,
}

struct Key {
    kid: Option<String>,
    algorithm: Algorithm,
    key: DecodingKey,
}

impl std::fmt::Debug for JwtAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtAuth")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("claim", &self.claim)
            .field("keys", &self.keys.len())
            .finish()
    }
}

/// Why a JWKS could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JwtConfigError {
    /// The JWKS file could not be read.
    #[error("reading the JWKS file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The JWKS is not a JWK Set (RFC 7517 §5).
    #[error("the JWKS {from} is not a JWK Set: {detail}")]
    Parse {
        /// Where it came from.
        from: String,
        /// What was wrong.
        detail: String,
    },
    /// No key in it can verify signatures here.
    #[error("the JWKS {from} has no key this server can verify with{detail}")]
    NoUsableKey {
        /// Where it came from.
        from: String,
        /// What was wrong with each key, if any was there.
        detail: String,
    },
}

/// Why a token was refused. Every one is a 401.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwtRefusal {
    /// Not a JWT, or one whose header cannot be read.
    #[error("not a JWT: {0}")]
    Malformed(String),
    /// No configured key has the token's key id, or its algorithm.
    #[error("no key for this token (kid {kid:?}, alg {alg:?})")]
    UnknownKey {
        /// The token's key id.
        kid: Option<String>,
        /// The token's algorithm.
        alg: String,
    },
    /// The signature, issuer, audience or a time claim is wrong.
    #[error("the token is not valid: {0}")]
    Invalid(String),
    /// It has expired.
    #[error("the token has expired")]
    Expired,
    /// The claim naming the principal is missing, not a string, empty, too long or holds
    /// control characters.
    #[error("the claim {0:?} names no principal")]
    NoPrincipal(String),
    /// The header's `crit` names extensions this server does not understand (every one: it
    /// implements none), or is not a list of names (RFC 7515 §4.1.11).
    #[error("the token's critical header extensions are not understood: {0}")]
    Critical(String),
}

impl JwtAuth {
    /// Tokens `issuer` signed for `audience` with a key of the JWK Set in the file at
    /// `jwks`; the principal is the string in claim `claim` (`sub`, usually).
    pub fn from_jwks_file(
        jwks: &Path,
        issuer: &str,
        audience: &str,
        claim: &str,
    ) -> Result<Self, JwtConfigError> {
        let text = std::fs::read_to_string(jwks).map_err(|source| JwtConfigError::Read {
            path: jwks.to_owned(),
            source,
        })?;
        Self::from_jwks(&text, &jwks.display().to_string(), issuer, audience, claim)
    }

    /// The same from a JWK Set's text; `from` says where it came from, for errors.
    pub fn from_jwks(
        jwks: &str,
        from: &str,
        issuer: &str,
        audience: &str,
        claim: &str,
    ) -> Result<Self, JwtConfigError> {
        let set: JwkSet = serde_json::from_str(jwks).map_err(|e| JwtConfigError::Parse {
            from: from.to_owned(),
            detail: e.to_string(),
        })?;
        let mut keys = Vec::new();
        let mut skipped = Vec::new();
        for jwk in &set.keys {
            match usable(jwk) {
                Ok(key) => keys.push(key),
                Err(why) => skipped.push(format!(
                    "{}: {why}",
                    jwk.common.key_id.as_deref().unwrap_or("a key without kid")
                )),
            }
        }
        if keys.is_empty() {
            return Err(JwtConfigError::NoUsableKey {
                from: from.to_owned(),
                detail: if skipped.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", skipped.join("; "))
                },
            });
        }
        for s in &skipped {
            tracing::warn!(jwks = from, key = %s, "a JWKS key left out");
        }
        Ok(JwtAuth {
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            claim: claim.to_owned(),
            leeway: DEFAULT_LEEWAY_SECS,
            keys: keys.into(),
        })
    }

    /// The same, allowing `secs` of clock difference on `exp` and `nbf`.
    pub fn with_leeway(mut self, secs: u64) -> Self {
        self.leeway = secs;
        self
    }

    /// The principal a valid token names (module docs), or why it is refused.
    pub fn verify(&self, token: &str) -> Result<String, JwtRefusal> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| JwtRefusal::Malformed(e.to_string()))?;
        critical(token)?;
        let candidates: Vec<&Key> = self
            .keys
            .iter()
            .filter(|k| k.algorithm == header.alg)
            .filter(|k| header.kid.is_none() || k.kid == header.kid)
            .collect();
        if candidates.is_empty() {
            return Err(JwtRefusal::UnknownKey {
                kid: header.kid.clone(),
                alg: format!("{:?}", header.alg),
            });
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = self.leeway;
        validation.validate_nbf = true;
        let mut refusal = None;
        for k in candidates {
            match jsonwebtoken::decode::<Map<String, Value>>(token, &k.key, &validation) {
                Ok(data) => return self.principal(&data.claims),
                Err(e) => {
                    use jsonwebtoken::errors::ErrorKind;
                    let this = match e.kind() {
                        ErrorKind::ExpiredSignature => JwtRefusal::Expired,
                        _ => JwtRefusal::Invalid(e.to_string()),
                    };
                    // A bad signature under one key may verify under the next; any other
                    // fault is the token's whatever the key.
                    if !matches!(e.kind(), ErrorKind::InvalidSignature) {
                        return Err(this);
                    }
                    refusal = Some(this);
                }
            }
        }
        Err(refusal.unwrap_or_else(|| JwtRefusal::Invalid("no key verified it".to_owned())))
    }

    fn principal(&self, claims: &Map<String, Value>) -> Result<String, JwtRefusal> {
        let name = claims.get(&self.claim).and_then(Value::as_str);
        match name {
            Some(n)
                if !n.is_empty()
                    && n.len() <= MAX_PRINCIPAL_LEN
                    && !n.chars().any(char::is_control) =>
            {
                Ok(n.to_owned())
            }
            _ => Err(JwtRefusal::NoPrincipal(self.claim.clone())),
        }
    }
}

/// RFC 7515 §4.1.11: a recipient MUST reject a JWS whose `crit` lists an extension it does
/// not understand. This server understands none, so any `crit` member refuses the token
/// (an empty or malformed one too: the RFC forbids both). `jsonwebtoken`'s header type does
/// not keep the member, so the header is read here on its own.
fn critical(token: &str) -> Result<(), JwtRefusal> {
    use base64::Engine as _;
    let encoded = token.split('.').next().unwrap_or_default();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(encoded)
        .map_err(|e| JwtRefusal::Malformed(e.to_string()))?;
    let header: Map<String, Value> =
        serde_json::from_slice(&bytes).map_err(|e| JwtRefusal::Malformed(e.to_string()))?;
    match header.get("crit") {
        None => Ok(()),
        Some(Value::Array(names)) if !names.is_empty() => {
            let names: Vec<String> = names
                .iter()
                .map(|n| match n {
                    Value::String(s) => format!("{s:?}"),
                    other => other.to_string(),
                })
                .collect();
            Err(JwtRefusal::Critical(clip(names.join(", "))))
        }
        Some(other) => Err(JwtRefusal::Critical(clip(format!(
            "malformed crit {other}"
        )))),
    }
}

/// What a refusal quotes of a token, at most 128 bytes (it is logged at debug).
fn clip(mut s: String) -> String {
    if s.len() > 128 {
        let mut cut = 128;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// A JWK as a key this server verifies with, with the one algorithm it is used for.
fn usable(jwk: &Jwk) -> Result<Key, String> {
    let implied = match &jwk.algorithm {
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => Algorithm::ES256,
            EllipticCurve::P384 => Algorithm::ES384,
            ref other => return Err(format!("the curve {other:?} is not supported")),
        },
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::OctetKeyPair(_) => Algorithm::EdDSA,
        AlgorithmParameters::OctetKey(_) => Algorithm::HS256,
    };
    let algorithm = match jwk.common.key_algorithm {
        Some(a) => a
            .to_string()
            .parse::<Algorithm>()
            .map_err(|_| format!("the algorithm {a} does not sign"))?,
        None => implied,
    };
    let key = DecodingKey::from_jwk(jwk).map_err(|e| e.to_string())?;
    Ok(Key {
        kid: jwk.common.key_id.clone(),
        algorithm,
        key,
    })
}

//! Bearer JWTs (`mcpl_transport::jwt`): what a resource server verifying an authorization
//! server's tokens accepts and refuses, through `ServerOptions::authenticate` and over a
//! real Streamable HTTP listener on loopback (the 401 a client sees).

use mcpl_testkit::jwt::{TestIssuer, now};
use mcpl_transport::config::{AuthError, Principal};
use mcpl_transport::jwt::{JwtAuth, JwtConfigError, JwtRefusal};
use mcpl_transport::{ClientOptions, ServerOptions};
use serde_json::json;
use std::sync::Arc;

const ISS: &str = "https://auth.example";
const AUD: &str = "https://arcade.example/mcp";

fn auth(issuer: &TestIssuer) -> JwtAuth {
    JwtAuth::from_jwks(&issuer.jwks(), "the test JWKS", ISS, AUD, "sub").expect("a usable JWKS")
}

#[test]
fn a_valid_token_names_its_principal_and_every_fault_is_refused_with_its_reason() {
    let issuer = TestIssuer::new("k1");
    let a = auth(&issuer);
    assert_eq!(
        a.verify(&issuer.token(ISS, AUD, "alice", 600)),
        Ok("alice".to_owned())
    );
    // Within the leeway an expired token still passes; past it, not.
    assert_eq!(
        a.verify(&issuer.token(ISS, AUD, "alice", -30)),
        Ok("alice".to_owned())
    );
    assert_eq!(
        a.verify(&issuer.token(ISS, AUD, "alice", -3600)),
        Err(JwtRefusal::Expired)
    );
    let strict = a.clone().with_leeway(0);
    assert_eq!(
        strict.verify(&issuer.token(ISS, AUD, "alice", -30)),
        Err(JwtRefusal::Expired)
    );
    assert!(matches!(
        a.verify(&issuer.token("https://other.example", AUD, "alice", 600)),
        Err(JwtRefusal::Invalid(_))
    ));
    assert!(matches!(
        a.verify(&issuer.token(ISS, "https://elsewhere.example/mcp", "alice", 600)),
        Err(JwtRefusal::Invalid(_))
    ));
    // Signed by a key the JWKS does not have, under the same key id.
    let stranger = TestIssuer::new("k1");
    assert!(matches!(
        a.verify(&stranger.token(ISS, AUD, "alice", 600)),
        Err(JwtRefusal::Invalid(_))
    ));
    // Under a key id the JWKS does not have.
    let other_kid = TestIssuer::new("k2");
    assert!(matches!(
        a.verify(&other_kid.token(ISS, AUD, "alice", 600)),
        Err(JwtRefusal::UnknownKey { .. })
    ));
    // No expiry, or no usable principal.
    let no_exp = issuer.sign(&json!({"iss": ISS, "aud": AUD, "sub": "alice"}));
    assert!(matches!(a.verify(&no_exp), Err(JwtRefusal::Invalid(_))));
    for sub in [
        json!(""),
        json!(7),
        json!("a\u{7}b"),
        json!("x".repeat(300)),
    ] {
        let t = issuer.sign(&json!({"iss": ISS, "aud": AUD, "sub": sub, "exp": now() + 600}));
        assert_eq!(
            a.verify(&t),
            Err(JwtRefusal::NoPrincipal("sub".into())),
            "{sub}"
        );
    }
    // An unsigned token ("alg": "none") or a token with an HMAC header is never checked
    // with the EC key.
    for header in [json!({"alg": "none"}), json!({"alg": "HS256", "kid": "k1"})] {
        let b64 = |v: &serde_json::Value| {
            use base64::Engine as _;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        let claims = json!({"iss": ISS, "aud": AUD, "sub": "alice", "exp": now() + 600});
        let forged = format!("{}.{}.c2ln", b64(&header), b64(&claims));
        assert!(a.verify(&forged).is_err(), "{header}");
    }
    assert!(matches!(
        a.verify("not a jwt"),
        Err(JwtRefusal::Malformed(_))
    ));
}

/// Issue #37 item 9: RFC 7515 §4.1.11 — a `crit` naming an extension the server does not
/// understand (it understands none) refuses the token, validly signed or not; so does a
/// `crit` that is empty or not a list. The same token without `crit` passes.
#[test]
fn hardening2_09_a_jwt_whose_crit_names_an_unknown_extension_is_refused() {
    let issuer = TestIssuer::new("k1");
    let a = auth(&issuer);
    let claims = TestIssuer::claims(ISS, AUD, "alice", 600);
    assert_eq!(
        a.verify(&issuer.sign_with_header(&json!({"typ": "JWT"}), &claims)),
        Ok("alice".to_owned())
    );
    for crit in [
        json!({"crit": ["exp-ext"], "exp-ext": 1}),
        json!({"crit": ["b64"], "b64": false}),
        json!({"crit": []}),
        json!({"crit": "exp-ext"}),
    ] {
        let token = issuer.sign_with_header(&crit, &claims);
        assert!(
            matches!(a.verify(&token), Err(JwtRefusal::Critical(_))),
            "{crit}: {:?}",
            a.verify(&token)
        );
    }
}

#[test]
fn another_claim_can_name_the_principal() {
    let issuer = TestIssuer::new("k1");
    let a = JwtAuth::from_jwks(&issuer.jwks(), "t", ISS, AUD, "preferred_username").unwrap();
    let t = issuer.sign(&json!({"iss": ISS, "aud": AUD, "sub": "u-123",
        "preferred_username": "bob", "exp": now() + 600}));
    assert_eq!(a.verify(&t), Ok("bob".to_owned()));
}

#[test]
fn a_jwks_that_is_missing_unreadable_or_without_usable_keys_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.json");
    let e = JwtAuth::from_jwks_file(&missing, ISS, AUD, "sub").unwrap_err();
    assert!(
        matches!(e, JwtConfigError::Read { .. }) && e.to_string().contains("nope.json"),
        "{e}"
    );
    let e = JwtAuth::from_jwks("[1]", "x.json", ISS, AUD, "sub").unwrap_err();
    assert!(
        matches!(e, JwtConfigError::Parse { .. }) && e.to_string().contains("x.json"),
        "{e}"
    );
    let e = JwtAuth::from_jwks(r#"{"keys": []}"#, "y.json", ISS, AUD, "sub").unwrap_err();
    assert!(matches!(e, JwtConfigError::NoUsableKey { .. }), "{e}");
    let issuer = TestIssuer::new("k1");
    let path = issuer.write_jwks(dir.path());
    assert!(JwtAuth::from_jwks_file(&path, ISS, AUD, "sub").is_ok());
}

#[test]
fn static_tokens_are_tried_first_then_the_jwt() {
    let issuer = TestIssuer::new("k1");
    let mut opts = ServerOptions::default();
    opts.tokens.insert("s3cret".into(), "carol".into());
    opts.jwt = Some(auth(&issuer));
    let bearer = |t: &str| format!("Bearer {t}");
    assert_eq!(
        opts.authenticate(Some(&bearer("s3cret"))),
        Ok(Principal::Named("carol".into()))
    );
    let jwt = issuer.token(ISS, AUD, "alice", 600);
    assert_eq!(
        opts.authenticate(Some(&bearer(&jwt))),
        Ok(Principal::Named("alice".into()))
    );
    let expired = issuer.token(ISS, AUD, "alice", -3600);
    assert_eq!(
        opts.authenticate(Some(&bearer(&expired))),
        Err(AuthError::Invalid)
    );
    assert_eq!(opts.authenticate(None), Err(AuthError::Missing));
}

/// Over Streamable HTTP on loopback: a JWT's principal is the connection's; an expired or
/// foreign-signed one gets 401.
#[tokio::test]
async fn over_http_a_jwt_connects_as_its_principal_and_a_bad_one_gets_401() {
    let issuer = TestIssuer::new("k1");
    let opts = ServerOptions {
        jwt: Some(auth(&issuer)),
        ..Default::default()
    };
    let mut listener =
        mcpl_transport::http::bind(([127, 0, 0, 1], 0).into(), "/mcp", Arc::new(opts))
            .await
            .unwrap();
    let url = format!("http://{}/mcp", listener.local_addr());
    let client = |token: String| ClientOptions {
        token: Some(token),
        ..Default::default()
    };
    let conn = mcpl_transport::connect(&url, &client(issuer.token(ISS, AUD, "alice", 600)))
        .await
        .unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    conn.outbound
        .send(mcpl_protocol::Message::from_value(init.clone()).unwrap())
        .await
        .unwrap();
    let served = listener.accept().await.expect("a session");
    assert_eq!(
        served.info.principal,
        Some(Principal::Named("alice".into()))
    );
    let http = reqwest::Client::new();
    for (what, token) in [
        ("expired", issuer.token(ISS, AUD, "alice", -3600)),
        (
            "foreign-signed",
            TestIssuer::new("k1").token(ISS, AUD, "alice", 600),
        ),
    ] {
        let r = http
            .post(&url)
            .bearer_auth(token)
            .header("Accept", "application/json, text/event-stream")
            .json(&init)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{what}");
        let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
        assert!(challenge.starts_with("Bearer"), "{what}: {challenge}");
    }
}

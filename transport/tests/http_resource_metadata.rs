//! OAuth protected resource metadata on the Streamable HTTP server (RFC 9728, MCP
//! 2025-11-25 "Authorization"): configured with an authorization server, a 401 names the
//! metadata's URL and the server serves it; unconfigured, neither.

use crate::support;

use mcpl_testkit::tls::TestCa;
use mcpl_testkit::within_named;
use mcpl_transport::http::{self, HttpListener};
use mcpl_transport::{ClientTls, Principal, ProtectedResource, ServerOptions, ServerTls};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use support::*;

fn metadata_opts() -> ServerOptions {
    ServerOptions {
        protected_resource: Some(ProtectedResource {
            authorization_servers: vec!["https://auth.example".into()],
            scopes: vec!["play".into()],
            resource: None,
        }),
        ..server_opts()
    }
}

async fn listen(opts: ServerOptions) -> HttpListener {
    http::bind(loopback(), "/mcp", Arc::new(opts))
        .await
        .unwrap()
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(DEADLINE)
        .build()
        .unwrap()
}

/// POSTs `initialize` with `authorization`, if any.
async fn post(url: &str, authorization: Option<&str>) -> reqwest::Response {
    let mut req = client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(initialize(1).encode());
    if let Some(a) = authorization {
        req = req.header("authorization", a);
    }
    req.send().await.unwrap()
}

/// The URL in a `resource_metadata="…"` parameter.
fn metadata_url(challenge: &str) -> &str {
    challenge
        .split("resource_metadata=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no resource_metadata in {challenge:?}"))
}

#[tokio::test]
async fn a_401_points_at_the_metadata_the_server_serves() {
    let listener = listen(metadata_opts()).await;
    let port = listener.local_addr().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let expected = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");

    let missing = post(&url, None).await;
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    let challenge = missing.headers()["www-authenticate"].to_str().unwrap();
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{expected}\"")
    );
    // The server's own message is still the body.
    let body: Value = missing.json().await.unwrap();
    assert!(body["error"]["message"].is_string(), "{body}");

    let wrong = post(&url, Some("Bearer wrong")).await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let challenge = wrong.headers()["www-authenticate"].to_str().unwrap();
    assert_eq!(metadata_url(challenge), expected);
    assert!(
        challenge.ends_with("error=\"invalid_token\""),
        "{challenge}"
    );

    // Both the path-inserted URL and the root serve the document, to any origin.
    let root = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource");
    for at in [expected.as_str(), root.as_str()] {
        let resp = client().get(at).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{at}");
        assert_eq!(resp.headers()["access-control-allow-origin"], "*");
        let doc: Value = resp.json().await.unwrap();
        assert_eq!(
            doc,
            json!({"resource": url, "authorization_servers": ["https://auth.example"],
                "bearer_methods_supported": ["header"], "scopes_supported": ["play"]}),
            "{at}"
        );
    }
    // A valid token still opens a session (its `initialize` waits for an answer).
    let opening = tokio::spawn(async move { post(&url, Some("Bearer s3cret")).await });
    let mut listener = listener;
    let session = within_named("accept", listener.accept()).await.unwrap();
    assert_eq!(
        session.info.principal,
        Some(Principal::Named("alice".into()))
    );
    opening.abort();
}

#[tokio::test]
async fn a_configured_resource_is_named_as_configured() {
    let mut opts = metadata_opts();
    if let Some(pr) = opts.protected_resource.as_mut() {
        pr.resource = Some("https://arcade.example/games/mcp".into());
    }
    let listener = listen(opts).await;
    let url = format!("http://{}/mcp", listener.local_addr());
    let resp = post(&url, None).await;
    assert_eq!(
        metadata_url(resp.headers()["www-authenticate"].to_str().unwrap()),
        "https://arcade.example/.well-known/oauth-protected-resource/games/mcp"
    );
    let root = format!(
        "http://{}/.well-known/oauth-protected-resource",
        listener.local_addr()
    );
    let doc: Value = client()
        .get(root)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["resource"], "https://arcade.example/games/mcp");
}

#[tokio::test]
async fn over_tls_the_resource_is_https() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("metadata test CA");
    let files = ca.server_cert(&["localhost"]).write(dir.path(), "server");
    let opts = ServerOptions {
        tls: Some(ServerTls::from_pem_files(&files.cert, &files.key).unwrap()),
        ..metadata_opts()
    };
    let listener = listen(opts).await;
    let port = listener.local_addr().port();
    let tls = ClientTls::with_ca_file(ca.write(dir.path())).unwrap();
    let https = reqwest::Client::builder()
        .use_preconfigured_tls((*tls.rustls_config()).clone())
        .timeout(DEADLINE)
        .build()
        .unwrap();
    let at = format!("https://localhost:{port}/.well-known/oauth-protected-resource/mcp");
    let doc: Value = https.get(&at).send().await.unwrap().json().await.unwrap();
    assert_eq!(doc["resource"], format!("https://localhost:{port}/mcp"));
}

#[tokio::test]
async fn unconfigured_there_is_no_metadata_and_a_bare_challenge() {
    let listener = listen(server_opts()).await;
    let base = format!("http://{}", listener.local_addr());
    let resp = post(&format!("{base}/mcp"), None).await;
    assert_eq!(resp.headers()["www-authenticate"], "Bearer");
    for at in ["", "/mcp"] {
        let url = format!("{base}/.well-known/oauth-protected-resource{at}");
        let resp = client().get(url).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn on_loopback_a_foreign_host_gets_no_metadata() {
    let listener = listen(metadata_opts()).await;
    let url = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        listener.local_addr()
    );
    let resp = client()
        .get(url)
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
}

/// The metadata is read with GET, or HEAD for its headers alone; another method is 405
/// naming those two.
#[tokio::test]
async fn the_metadata_takes_get_and_head_and_other_methods_get_405() {
    let listener = listen(metadata_opts()).await;
    let url = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        listener.local_addr()
    );
    let head = client().head(&url).send().await.unwrap();
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(head.headers()["content-type"], "application/json");
    assert!(head.bytes().await.unwrap().is_empty(), "a HEAD has no body");
    for method in [reqwest::Method::POST, reqwest::Method::DELETE] {
        let resp = client().request(method.clone(), &url).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(resp.headers()["allow"], "GET, HEAD", "{method}");
    }
}

//! OAuth protected resource metadata (RFC 9728), which MCP 2025-11-25 ("Authorization")
//! asks of a server that takes tokens from an authorization server: a 401 names the
//! metadata's URL in `WWW-Authenticate` (RFC 9728 §5.1), and the metadata names the
//! authorization servers, so a client such as the MCP Inspector learns where to get a token
//! instead of guessing.
//!
//! The metadata's URL is the resource's with the well-known path inserted between host and
//! path (§3.1): `https://h/mcp` → `https://h/.well-known/oauth-protected-resource/mcp`. The
//! server also answers at the root (`…/oauth-protected-resource`), which MCP clients try
//! when the first is missing. Pure functions here; the server routes and answers.

use crate::ProtectedResource;
use axum::http::HeaderValue;
use serde_json::{Value, json};

/// The well-known path of the metadata (RFC 9728 §3).
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The resource a request reached: the configured URL, else `scheme://host` + `path` from
/// the request's `Host` header (`None` without a usable one).
pub(super) fn resource(
    config: &ProtectedResource,
    scheme: &str,
    host: Option<&str>,
    path: &str,
) -> Option<url::Url> {
    if let Some(configured) = &config.resource {
        return url::Url::parse(configured).ok();
    }
    // Names, IPv4 and bracketed IPv6 addresses, and a port: nothing to quote or escape.
    let host = host.filter(|h| {
        h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
    })?;
    let url = url::Url::parse(&format!("{scheme}://{host}{path}")).ok()?;
    // A `Host` carrying user information or a path is not a host.
    (url.username().is_empty() && url.password().is_none() && url.path() == path).then_some(url)
}

/// Where the metadata of `resource` is: its origin, the well-known path, then its own path
/// without a trailing slash (§3.1).
pub(super) fn metadata_url(resource: &url::Url) -> String {
    let origin = resource.origin().ascii_serialization();
    let path = resource.path().trim_end_matches('/');
    format!("{origin}{WELL_KNOWN}{path}")
}

/// The metadata document (§2) for `resource`.
pub(super) fn document(config: &ProtectedResource, resource: &url::Url) -> Value {
    let mut doc = json!({
        "resource": resource.as_str(),
        "authorization_servers": config.authorization_servers,
        "bearer_methods_supported": ["header"],
    });
    if !config.scopes.is_empty() {
        doc["scopes_supported"] = json!(config.scopes);
    }
    doc
}

/// The `WWW-Authenticate` value of a 401: the metadata's URL, and `invalid_token` when a
/// token was presented and refused (RFC 6750 §3: none when the request had no token).
/// `None` for a URL with a quote or backslash in it.
pub(super) fn challenge(metadata_url: &str, invalid_token: bool) -> Option<HeaderValue> {
    // A quoted-string could escape them; a URL need not have them.
    if metadata_url.contains(['"', '\\']) {
        return None;
    }
    let mut value = format!("Bearer resource_metadata=\"{metadata_url}\"");
    if invalid_token {
        value.push_str(", error=\"invalid_token\"");
    }
    HeaderValue::from_str(&value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ProtectedResource {
        ProtectedResource {
            authorization_servers: vec!["https://auth.example".into()],
            ..ProtectedResource::default()
        }
    }

    #[test]
    fn the_resource_is_configured_or_the_url_the_request_reached() {
        let r = resource(&config(), "https", Some("arcade.example:8443"), "/mcp").unwrap();
        assert_eq!(r.as_str(), "https://arcade.example:8443/mcp");
        assert_eq!(resource(&config(), "http", None, "/mcp"), None);
        for bad in [
            "a@evil.example",
            "evil.example/x",
            "evil\"x",
            "evil\\x",
            "h x",
        ] {
            assert_eq!(
                resource(&config(), "http", Some(bad), "/mcp"),
                None,
                "{bad}"
            );
        }
        let fixed = ProtectedResource {
            resource: Some("https://public.example/arcade/mcp".into()),
            ..config()
        };
        let r = resource(&fixed, "http", Some("127.0.0.1:7700"), "/mcp").unwrap();
        assert_eq!(r.as_str(), "https://public.example/arcade/mcp");
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_path_before_the_resources() {
        let at = |u: &str| metadata_url(&url::Url::parse(u).unwrap());
        assert_eq!(
            at("https://h.example/mcp"),
            "https://h.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            at("http://127.0.0.1:7700/"),
            "http://127.0.0.1:7700/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            at("https://h.example:443/a/mcp/"),
            "https://h.example/.well-known/oauth-protected-resource/a/mcp"
        );
    }

    #[test]
    fn the_document_and_the_challenge() {
        let with_scopes = ProtectedResource {
            scopes: vec!["play".into()],
            ..config()
        };
        let r = url::Url::parse("https://h.example/mcp").unwrap();
        assert_eq!(
            document(&config(), &r),
            json!({"resource": "https://h.example/mcp",
                "authorization_servers": ["https://auth.example"],
                "bearer_methods_supported": ["header"]})
        );
        assert_eq!(
            document(&with_scopes, &r)["scopes_supported"],
            json!(["play"])
        );
        let m = "https://h.example/.well-known/oauth-protected-resource/mcp";
        assert_eq!(
            challenge(m, false).unwrap(),
            "Bearer resource_metadata=\"https://h.example/.well-known/oauth-protected-resource/mcp\""
        );
        assert_eq!(
            challenge(m, true).unwrap(),
            "Bearer resource_metadata=\"https://h.example/.well-known/oauth-protected-resource/mcp\", error=\"invalid_token\""
        );
        assert_eq!(challenge("https://h.example/\"x", false), None);
    }
}

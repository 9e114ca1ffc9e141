//! Options for client and server ends: message size limits, bearer tokens mapped to
//! principals, allowed origins, and the few per-transport knobs (WebSocket keepalive,
//! Streamable HTTP response style, queue and read timeout, a spawned child's stderr, the HTTP
//! client's delivery hook) and TLS: a listener's certificate, a client's trusted roots.

use crate::delivery::DeliveryHook;
use crate::tls::{ClientTls, ServerTls};
use std::collections::HashMap;
use std::time::Duration;

/// Who a server-side connection authenticated as (RFC-014 §4.6); defined in
/// [`mcpl_protocol::principal`] so that pure cores can name it without the transport.
pub use mcpl_protocol::principal::Principal;

/// Options for a server end.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The largest message accepted, in bytes (default 4 MiB).
    pub max_message_size: usize,
    /// Bearer tokens and the principal each maps to. With none configured, a network
    /// listener lets nobody in unless `allow_anonymous` is set.
    pub tokens: HashMap<String, String>,
    /// Let connections without a token in, each its own anonymous principal.
    pub allow_anonymous: bool,
    /// `Origin` values accepted on HTTP and WebSocket (DNS-rebinding protection). A request
    /// without `Origin` (a non-browser client) is accepted; one with an `Origin` not listed
    /// is refused with 403. Loopback origins (`http://localhost[:port]`,
    /// `http://127.0.0.1[:port]`, `http://[::1][:port]`) are always accepted.
    pub allowed_origins: Vec<String>,
    /// `Host` values accepted besides loopback names (`localhost`, `127.0.0.1`, `[::1]`,
    /// any port) when the listener is bound to a loopback address, where a request naming
    /// another host is refused with 403 (DNS-rebinding protection, [`ServerOptions::host_allowed`]).
    /// A listener bound beyond loopback does not check `Host`.
    pub allowed_hosts: Vec<String>,
    /// The principal a stdio server serves.
    pub stdio_principal: String,
    /// How often a WebSocket server pings its peer (`None`: never). A peer that has sent
    /// nothing, not even the automatic pong, by the next ping is closed (1008). Default 30 s.
    /// The link is read as its consumer reads it ([`crate::Incoming`]), so the check holds
    /// while the consumer waits for the next message: one busy elsewhere has not read the
    /// pong, and its peer is not blamed.
    pub ws_ping_interval: Option<Duration>,
    /// How a Streamable HTTP server answers a POSTed request (default: one JSON body).
    pub http_response_mode: HttpResponseMode,
    /// Serve MCP 2026-07-28 requests on Streamable HTTP (default `true`): a POSTed request
    /// without `Mcp-Session-Id`, other than `initialize`, is checked and handed to
    /// [`crate::http::HttpListener::accept`] as a connection of its own (the `http` module
    /// docs). A server whose connections cost much (the surface host starts a host for
    /// each) and that does not serve the era turns it off: such a request is then refused
    /// as in 2025-11-25 (400, the session id is missing; `server/discover` -32601, so a
    /// dual-era client falls back to `initialize`), and so are a GET or DELETE without a
    /// session (400, not 405).
    pub http_modern: bool,
    /// How many server-to-client messages a Streamable HTTP session holds for a client that
    /// has no stream open to take them (default 1024). Past that the oldest is dropped with a
    /// warning, as a lost stream would have lost it.
    pub http_queue_limit: usize,
    /// How many messages already sent on the GET stream a Streamable HTTP session keeps for
    /// a client that reopens the stream with `Last-Event-ID` (default 64): what was in
    /// flight when a stream broke is sent again. 0 turns resumption off.
    pub http_replay_limit: usize,
    /// How long a Streamable HTTP client may take to send a request's head (request line and
    /// headers) and then, counted afresh, its whole body (default 30 s). A head late → the
    /// connection is closed; a body late → 408 Request Timeout and the connection is closed.
    /// The head's clock starts when the connection opens and, on a kept-alive connection,
    /// when the previous answer is written, so it also closes connections idle that long.
    /// It bounds only what the client sends: not how long a request waits for its answer,
    /// nor how long a GET stream stays open.
    pub http_read_timeout: Duration,
    /// How long a Streamable HTTP session may go without a request and without a GET stream
    /// open before it is ended and its memory returned (default 15 min). A client that comes
    /// back later gets 404 and starts a new session, as MCP says it should.
    pub http_session_idle: Duration,
    /// The most Streamable HTTP sessions one named principal holds at once (default 32).
    /// Opening one more ends the principal's least recently used one.
    pub http_sessions_per_principal: usize,
    /// The most Streamable HTTP sessions a listener holds at once, of all principals
    /// (default 10,000); past it `initialize` is refused with 503.
    pub http_max_sessions: usize,
    /// The most anonymous principals ([`ServerOptions::allow_anonymous`]) one source address
    /// holds at once, WebSocket connections and Streamable HTTP sessions counted apart
    /// (default 8); past it a new one is refused with 429. Each anonymous principal has the
    /// server's per-principal limits, so this bounds what one address can hold.
    pub anonymous_per_source: usize,
    /// The most anonymous principals a listener holds at once from all addresses together
    /// (default 1,000): past it a new one is refused with 503. Addresses are many (an IPv6
    /// host has a /64; loopback a /8), so the per-address cap alone does not bound them,
    /// and the named principals' room must not go to anonymous crowds (issue #37, item 3):
    /// a Streamable HTTP listener at [`ServerOptions::http_max_sessions`] ends its least
    /// recently active anonymous session to let a named principal in.
    pub anonymous_max: usize,
    /// The most WebSocket connections one named principal holds at once on a listener
    /// (default 32); past it a new one is refused with 429. Each connection may hold up to
    /// twice the message limit of answers its client has not read
    /// ([`crate::ws::depth_bytes`]), so this bounds what one principal can make the server
    /// hold.
    pub ws_connections_per_principal: usize,
    /// Streamable HTTP: what the server says about itself as an OAuth protected resource
    /// (RFC 9728, MCP 2025-11-25 "Authorization"). With it, the server serves its metadata at
    /// `/.well-known/oauth-protected-resource` (and that path followed by the endpoint's)
    /// and each 401 points there: `WWW-Authenticate: Bearer resource_metadata="…"`.
    /// `None` (the default): no metadata (404) and a bare `WWW-Authenticate: Bearer`.
    pub protected_resource: Option<ProtectedResource>,
    /// Bearer JWTs accepted besides [`ServerOptions::tokens`]: a token that is not a
    /// configured one is verified as a JWT and its claim names the principal
    /// ([`crate::jwt`]). `None` (the default): static tokens only.
    pub jwt: Option<crate::jwt::JwtAuth>,
    /// The certificate and key the WebSocket and Streamable HTTP listeners serve TLS with
    /// (`wss://`, `https://`); `None` (the default) serves plain `ws://` and `http://`.
    pub tls: Option<ServerTls>,
    /// Run a listener's tasks — its accept loop, each handshake, each WebSocket
    /// connection's reader and writer, each HTTP connection and Streamable HTTP session's
    /// pump — on the binding thread's `tokio::task::LocalSet`
    /// (an actix arbiter's) instead of the runtime's scheduler. Actors on that arbiter and
    /// the connections they serve then share one run queue: a message between them needs
    /// no trip through the runtime's I/O driver first (issue #18: one call's latency).
    /// With it set, [`crate::ws::bind`] and [`crate::http::bind`] must be called inside a
    /// `LocalSet` (they panic otherwise, as `tokio::task::spawn_local` does). Default
    /// `false`; mcpl-server's listeners set it when they bind on an arbiter.
    pub local_tasks: bool,
    /// The tools whose `inputSchema` marks arguments with `x-mcp-header` (MCP 2026-07-28,
    /// SEP-2243): a modern `tools/call` of one on Streamable HTTP must carry each marked
    /// argument as its `Mcp-Param-*` header, matching the body, or it is refused with
    /// -32020 and 400 ("Server Behavior for Custom Headers"). Empty by default;
    /// mcpl-server's `Server::serve_http` fills it from the server's tools
    /// (`Server::tool_header_marks`).
    pub tool_headers: ToolHeaderMarks,
}

/// Each tool's `x-mcp-header` marks, by tool name ([`ServerOptions::tool_headers`]).
#[derive(Clone, Default)]
pub struct ToolHeaderMarks(
    pub std::sync::Arc<HashMap<String, Vec<mcpl_protocol::header_params::HeaderParam>>>,
);

impl ToolHeaderMarks {
    /// The marks of `tool`, if it has any.
    pub fn of(&self, tool: &str) -> Option<&[mcpl_protocol::header_params::HeaderParam]> {
        self.0.get(tool).map(Vec::as_slice)
    }

    /// True when no tool has marks.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for ToolHeaderMarks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, v.len())))
            .finish()
    }
}

/// How a Streamable HTTP server answers a POSTed request (MCP 2025-11-25, "Sending Messages
/// to the Server", item 5: either is allowed and a client must support both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HttpResponseMode {
    /// `Content-Type: application/json`: the HTTP request is held until the session writes
    /// the response, which is the whole body.
    #[default]
    Json,
    /// `Content-Type: text/event-stream`: server requests and notifications written while the
    /// request is pending and no GET stream is open go on this stream, then the response,
    /// and the stream ends.
    Sse,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            max_message_size: crate::DEFAULT_MAX_MESSAGE_SIZE,
            tokens: HashMap::new(),
            allow_anonymous: false,
            allowed_origins: Vec::new(),
            stdio_principal: "local".to_owned(),
            ws_ping_interval: Some(Duration::from_secs(30)),
            http_response_mode: HttpResponseMode::Json,
            http_modern: true,
            http_queue_limit: 1024,
            http_replay_limit: 64,
            http_read_timeout: Duration::from_secs(30),
            allowed_hosts: Vec::new(),
            http_session_idle: Duration::from_secs(15 * 60),
            http_sessions_per_principal: 32,
            http_max_sessions: 10_000,
            anonymous_per_source: 8,
            anonymous_max: 1_000,
            ws_connections_per_principal: 32,
            tls: None,
            protected_resource: None,
            jwt: None,
            local_tasks: false,
            tool_headers: ToolHeaderMarks::default(),
        }
    }
}

/// A server's OAuth protected resource metadata (RFC 9728 §2), the part an operator
/// configures: a client that gets a 401 reads it to learn where to get a token.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProtectedResource {
    /// The authorization servers' issuer URLs (`authorization_servers`).
    pub authorization_servers: Vec<String>,
    /// The server's canonical URL (`resource`): the MCP endpoint as clients reach it, such as
    /// `https://arcade.example/mcp`. `None`: the URL each request reached, from its `Host`
    /// header, the listener's scheme and the endpoint path (behind a proxy that rewrites
    /// any of these, configure it).
    pub resource: Option<String>,
    /// `scopes_supported`, left out when empty.
    pub scopes: Vec<String>,
}

/// Why a connection attempt was not authenticated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No `Authorization: Bearer` header, and anonymous connections are not allowed.
    #[error("a bearer token is required")]
    Missing,
    /// The token is not one the operator configured.
    #[error("the bearer token is not valid")]
    Invalid,
}

/// Who a request authenticated as, before a principal is made of it
/// ([`ServerOptions::caller`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Caller<'a> {
    /// A named principal: a configured token's name, or a verified JWT's subject.
    Named(std::borrow::Cow<'a, str>),
    /// No token, where anonymous connections are allowed.
    Anonymous,
}

impl Caller<'_> {
    /// The principal: the name, or a fresh anonymous principal.
    pub(crate) fn into_principal(self) -> Principal {
        match self {
            Caller::Named(name) => Principal::Named(name.into_owned()),
            Caller::Anonymous => Principal::anonymous(),
        }
    }
}

impl ServerOptions {
    /// Maps an `Authorization` header value (if any) to a principal (RFC-014 §4.6): a
    /// configured token, else a JWT [`ServerOptions::jwt`] verifies.
    pub fn authenticate(&self, authorization: Option<&str>) -> Result<Principal, AuthError> {
        self.caller(authorization).map(Caller::into_principal)
    }

    /// [`ServerOptions::authenticate`] without making the principal: a configured token's
    /// name is borrowed, and an anonymous caller gets no principal of its own yet. A
    /// Streamable HTTP request that names its session only compares the two (issue #42:
    /// the name's copy was an allocation on every POST).
    pub(crate) fn caller(&self, authorization: Option<&str>) -> Result<Caller<'_>, AuthError> {
        match authorization {
            None if self.allow_anonymous => Ok(Caller::Anonymous),
            None => Err(AuthError::Missing),
            Some(h) => {
                let token = h
                    .strip_prefix("Bearer ")
                    .or_else(|| h.strip_prefix("bearer "))
                    .ok_or(AuthError::Invalid)?
                    .trim();
                if let Some(p) = self.tokens.get(token) {
                    return Ok(Caller::Named(std::borrow::Cow::Borrowed(p)));
                }
                let jwt = self.jwt.as_ref().ok_or(AuthError::Invalid)?;
                jwt.verify(token)
                    .map(|name| Caller::Named(std::borrow::Cow::Owned(name)))
                    .map_err(|why| {
                        tracing::debug!(%why, "a bearer JWT refused");
                        AuthError::Invalid
                    })
            }
        }
    }

    /// True when a request with this `Origin` header (if any) may proceed: none (a client
    /// that is not a browser), one listed in [`ServerOptions::allowed_origins`] (compared as
    /// origins: scheme, host and port), or a loopback one. An `Origin` is parsed as a URL and
    /// must be one: `http`/`https`, no user information, no path, query or fragment — so
    /// `http://localhost:80@evil.example` names `evil.example` and is refused.
    pub fn origin_allowed(&self, origin: Option<&str>) -> bool {
        let Some(origin) = origin else { return true };
        // "null" (an opaque origin) is only ever accepted by name.
        if self.allowed_origins.iter().any(|o| o == origin) {
            return true;
        }
        let Some(parsed) = parse_origin(origin) else {
            return false;
        };
        let listed = self
            .allowed_origins
            .iter()
            .filter_map(|o| parse_origin(o))
            .any(|o| o.origin() == parsed.origin());
        listed || parsed.host().is_some_and(|h| is_loopback_host(&h))
    }

    /// True when a request with this `Host` header may reach a listener bound to `local`.
    /// Bound to loopback, the host must be a loopback name or one listed in
    /// [`ServerOptions::allowed_hosts`], with any port: a page whose name an attacker
    /// rebinds to 127.0.0.1 still sends its own name. Bound beyond loopback, anything goes.
    pub fn host_allowed(&self, host: Option<&str>, local: std::net::SocketAddr) -> bool {
        if !local.ip().is_loopback() {
            return true;
        }
        let Some(host) = host else { return false };
        // What loopback clients send, told without building a URL (issue #18: the parse was
        // about a tenth of the server thread's time per Streamable HTTP POST).
        is_literal_loopback(host) || self.host_allowed_parsed(host)
    }

    /// [`ServerOptions::host_allowed`] on a loopback listener, by parsing `host` as a URL's
    /// authority.
    fn host_allowed_parsed(&self, host: &str) -> bool {
        let Ok(url) = url::Url::parse(&format!("http://{host}/")) else {
            return false;
        };
        if url.path() != "/" || !url.username().is_empty() || url.password().is_some() {
            return false;
        }
        let Some(parsed) = url.host() else {
            return false;
        };
        is_loopback_host(&parsed)
            || self
                .allowed_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(&parsed.to_string()))
    }
}

/// An `Origin` header value as a URL, if it is a well-formed origin (RFC 6454: scheme, host
/// and optional port, nothing else).
fn parse_origin(origin: &str) -> Option<url::Url> {
    let url = url::Url::parse(origin).ok()?;
    let bare = matches!(url.scheme(), "http" | "https")
        && url.username().is_empty()
        && url.password().is_none()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        && url.host().is_some();
    // `Url` gives "http://a" the path "/"; an origin with a written path is not one.
    let written_path = origin
        .split_once("://")
        .is_some_and(|(_, rest)| rest.contains('/'));
    (bare && !written_path).then_some(url)
}

/// `127.0.0.1`, `localhost` (any case) or `[::1]`, each with or without a port: the common
/// `Host` headers of a loopback client. Says yes only to what the full parse accepts too;
/// anything else (`127.1`, `0x7f.0.0.1`, a name in `allowed_hosts`) goes to the parse.
fn is_literal_loopback(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port))
            if !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && port.parse::<u16>().is_ok() =>
        {
            name
        }
        _ => host,
    };
    matches!(name, "127.0.0.1" | "[::1]") || name.eq_ignore_ascii_case("localhost")
}

/// `localhost`, an IPv4 loopback address or `::1`.
fn is_loopback_host(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    }
}

/// Options for a client end.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The largest message accepted, in bytes (default 4 MiB).
    pub max_message_size: usize,
    /// A bearer token to present (WebSocket upgrade and every HTTP request).
    pub token: Option<String>,
    /// What becomes of a spawned stdio server's stderr (default: inherited).
    pub child_stderr: ChildStderr,
    /// Streamable HTTP only: awaited before each message read is delivered, so a simulator
    /// can delay POST responses and the GET stream independently (see [`DeliveryHook`]).
    pub delivery_hook: Option<DeliveryHook>,
    /// How a server reached over `wss://` or `https://` is verified (default: the webpki
    /// roots; [`ClientTls::with_ca_file`] adds a private CA).
    pub tls: ClientTls,
}

/// What becomes of a spawned stdio server's stderr. MCP lets a server log anything there,
/// and says a client should not take it as a sign of error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChildStderr {
    /// The child writes to this process's stderr.
    #[default]
    Inherit,
    /// Each line becomes a `tracing` event at INFO, target `mcpl_transport::stdio::child`;
    /// the last few are said again at WARN if the child exits by itself (issue #43).
    Tracing,
    /// Discarded.
    Discard,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            max_message_size: crate::DEFAULT_MAX_MESSAGE_SIZE,
            token: None,
            child_stderr: ChildStderr::Inherit,
            delivery_hook: None,
            tls: ClientTls::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ServerOptions {
        let mut o = ServerOptions::default();
        o.tokens.insert("s3cret".into(), "alice".into());
        o
    }

    #[test]
    fn bearer_tokens_map_to_principals() {
        let o = opts();
        assert_eq!(
            o.authenticate(Some("Bearer s3cret")),
            Ok(Principal::Named("alice".into()))
        );
        assert_eq!(o.authenticate(Some("Bearer nope")), Err(AuthError::Invalid));
        assert_eq!(
            o.authenticate(Some("Basic s3cret")),
            Err(AuthError::Invalid)
        );
        assert_eq!(o.authenticate(None), Err(AuthError::Missing));
    }

    #[test]
    fn anonymous_connections_are_each_their_own_principal() {
        let o = ServerOptions {
            allow_anonymous: true,
            ..opts()
        };
        let a = o.authenticate(None).unwrap();
        let b = o.authenticate(None).unwrap();
        assert_ne!(a, b);
        assert!(a.name().starts_with("anon-"));
    }

    #[test]
    fn origins() {
        let o = ServerOptions {
            allowed_origins: vec!["https://app.example".into()],
            ..opts()
        };
        assert!(o.origin_allowed(None));
        assert!(o.origin_allowed(Some("http://localhost:3000")));
        assert!(o.origin_allowed(Some("http://127.0.0.1")));
        assert!(o.origin_allowed(Some("http://[::1]:8080")));
        assert!(o.origin_allowed(Some("https://app.example")));
        assert!(!o.origin_allowed(Some("http://evil.example")));
        assert!(!o.origin_allowed(Some("http://localhost.evil.example")));
        assert!(!o.origin_allowed(Some("null")));
    }

    #[test]
    fn hardening_04_an_origin_is_parsed_as_a_url() {
        let o = ServerOptions {
            allowed_origins: vec!["https://app.example".into()],
            ..opts()
        };
        for bad in [
            "http://localhost:80@evil.example",
            "http://localhost@evil.example",
            "http://evil.example#@localhost",
            "http://localhost/path",
            "http://localhost?x=1",
            "ftp://localhost",
            "http://127.0.0.1.evil.example",
            "https://app.example:444",
            "https://app.example.evil",
            "localhost",
            "",
        ] {
            assert!(!o.origin_allowed(Some(bad)), "{bad}");
        }
        for good in [
            "http://LOCALHOST:3000",
            "http://127.0.0.2",
            "https://app.example:443",
            "HTTPS://APP.EXAMPLE",
        ] {
            assert!(o.origin_allowed(Some(good)), "{good}");
        }
    }

    #[test]
    fn hardening_04_bound_to_loopback_the_host_must_be_a_loopback_name() {
        let o = ServerOptions {
            allowed_hosts: vec!["arcade.internal".into()],
            ..opts()
        };
        let local: std::net::SocketAddr = "127.0.0.1:7700".parse().unwrap();
        for good in [
            "localhost",
            "localhost:7700",
            "127.0.0.1:7700",
            "[::1]:7700",
            "arcade.internal:80",
        ] {
            assert!(o.host_allowed(Some(good), local), "{good}");
        }
        for bad in [
            "evil.example",
            "evil.example:7700",
            "localhost.evil.example",
            "a@localhost",
            "localhost/x",
            "",
        ] {
            assert!(!o.host_allowed(Some(bad), local), "{bad}");
        }
        assert!(!o.host_allowed(None, local));
        let public: std::net::SocketAddr = "0.0.0.0:7700".parse().unwrap();
        assert!(o.host_allowed(Some("evil.example"), public));
    }

    #[test]
    fn the_literal_loopback_shortcut_says_yes_only_where_the_full_parse_does() {
        let o = opts();
        let cases = [
            "127.0.0.1",
            "127.0.0.1:7700",
            "127.0.0.1:65535",
            "127.0.0.1:65536",
            "127.0.0.1:99999",
            "127.0.0.1:",
            "127.0.0.1:+80",
            "127.0.0.1:80x",
            "localhost",
            "LocalHost:1",
            "localhost:0080",
            "[::1]",
            "[::1]:7700",
            "[::1]:",
            "::1",
            "127.1",
            "0x7f.0.0.1:80",
            "127.0.0.1.evil.example",
            "localhost.evil.example:80",
            "a@127.0.0.1",
            "127.0.0.1/x",
            "127.0.0.1:80:80",
            "evil.example",
            "",
        ];
        for host in cases {
            if is_literal_loopback(host) {
                assert!(
                    o.host_allowed_parsed(host),
                    "{host}: shortcut yes, parse no"
                );
            }
        }
        for host in ["127.0.0.1", "127.0.0.1:7700", "localhost:80", "[::1]:7700"] {
            assert!(is_literal_loopback(host), "{host} takes the shortcut");
        }
        for host in ["127.0.0.1:99999", "127.0.0.1:+80", "127.1", "::1"] {
            assert!(!is_literal_loopback(host), "{host} goes to the parse");
        }
    }
}

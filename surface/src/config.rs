//! The surface host's configuration: the `mcpServers` JSON that MCP clients already use
//! (`command` + `args` + `env` for a stdio server, `url` + `headers` for a remote one), and
//! under `surface` the host's own options: the state directory, the hold window, the bounds
//! on the hosts kept for modern clients ([`crate::pool`]), and the clients it serves, each a principal with its own credentials per server.
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "arcade": {"url": "http://127.0.0.1:7700/mcp", "headers": {"Authorization": "Bearer s3cret"}},
//!     "local":  {"command": "mcpl-arcade", "args": ["serve", "--stdio"], "env": {"RUST_LOG": "warn"}}
//!   },
//!   "surface": {
//!     "stateDir": "/var/lib/mcpl-surface",
//!     "holdMs": 250,
//!     "windowMessages": 40,
//!     "modernHosts": 16,
//!     "modernIdleMs": 600000,
//!     "clients": {
//!       "alice": {"token": "alice-client-secret",
//!                 "servers": {"arcade": {"headers": {"Authorization": "Bearer alice-secret"}}}}
//!     }
//!   }
//! }
//! ```
//!
//! `${VAR}` and `${VAR:-default}` are expanded from the environment in `command`, `args`,
//! `env`, `url` and `headers`, as Claude Code does in `.mcp.json` (and, **\[project\]**, in
//! the clients' tokens and credentials); a variable that is not set and has no default is
//! an error at start naming it.
//!
//! The operator chooses exactly which servers and credentials are used (§7): a client of the
//! surface host names a server of this file, never a URL or a command. Credentials are the
//! operator's (RFC-015 is not implemented); they are kept out of `Debug` and logs.

use mcpl_host::host::{HostConfig, ServerConfig};
use mcpl_host::link::Connector;
use mcpl_transport::ClientOptions;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The largest configuration file read, in bytes.
pub const MAX_CONFIG_SIZE: u64 = 1024 * 1024;

/// The principal a client is served as when the operator names none (stdio).
pub const DEFAULT_PRINCIPAL: &str = "local";

/// What is wrong with a configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file is larger than [`MAX_CONFIG_SIZE`].
    #[error("{path} is larger than {MAX_CONFIG_SIZE} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// Not JSON of the expected shape (the offending value is not quoted: it may be a
    /// secret in the wrong place).
    #[error("not a valid configuration: {0}")]
    Json(String),
    /// No server is configured.
    #[error("no server in \"mcpServers\"")]
    NoServers,
    /// A server entry is neither a stdio nor a remote server, or mixes both.
    #[error("server {server:?}: {reason}")]
    Server {
        /// The server's name.
        server: String,
        /// What is wrong.
        reason: String,
    },
    /// A client entry is wrong.
    #[error("client {client:?}: {reason}")]
    Client {
        /// The client's principal.
        client: String,
        /// What is wrong.
        reason: String,
    },
    /// A `surface` option is out of range.
    #[error("surface: {0}")]
    Surface(String),
    /// The named principal is not configured.
    #[error("no client {0:?} in \"surface.clients\"")]
    UnknownClient(String),
    /// A `${VAR}` in the configuration names a variable that is not set, and gives no
    /// default (`${VAR:-default}`): Claude Code's rule for `.mcp.json` (issue #43).
    #[error(
        "{place}: ${{{name}}} is not set in the environment and has no default: set {name}, or write ${{{name}:-DEFAULT}}"
    )]
    UnsetVariable {
        /// Where it is (`server "arcade" headers`).
        place: String,
        /// The variable.
        name: String,
    },
}

/// Expands `${VAR}` and `${VAR:-default}` in one configuration value, as Claude Code does
/// in `.mcp.json` (its MCP docs, "Environment variable expansion"): `${VAR}` is the
/// variable's value and an error when it is not set; `${VAR:-default}` is `default` when
/// it is not set — **\[project\]** or set but empty, as a POSIX shell's `:-` does. `VAR` is
/// a letter or `_` then letters, digits or `_`; anything else (`$VAR`, `${`, `${1}`) is
/// left as written, and a value brought in is not expanded again. The default is the text
/// up to the first `}` (no nesting).
fn expand(
    value: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    place: &dyn Fn() -> String,
) -> Result<String, ConfigError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[at..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            out.push_str("${");
            rest = after;
            continue;
        }
        match (lookup(name), default) {
            (Some(v), Some(d)) if v.is_empty() => out.push_str(d),
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => {
                return Err(ConfigError::UnsetVariable {
                    place: place(),
                    name: name.to_owned(),
                });
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// [`expand`] over a map's values (the keys are left as written).
fn expand_map(
    map: &mut BTreeMap<String, Secret>,
    lookup: &dyn Fn(&str) -> Option<String>,
    place: &dyn Fn() -> String,
) -> Result<(), ConfigError> {
    for value in map.values_mut() {
        value.0 = expand(&value.0, lookup, place)?;
    }
    Ok(())
}

impl RawServer {
    /// Expands the variables of Claude Code's five fields: `command`, `args`, `env`, `url`
    /// and `headers`.
    fn expand(
        &mut self,
        name: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), ConfigError> {
        let at = |field: &'static str| move || format!("server {name:?} {field}");
        if let Some(command) = &mut self.command {
            *command = expand(command, lookup, &at("command"))?;
        }
        for arg in &mut self.args {
            *arg = expand(arg, lookup, &at("args"))?;
        }
        expand_map(&mut self.env, lookup, &at("env"))?;
        if let Some(url) = &mut self.url {
            *url = expand(url, lookup, &at("url"))?;
        }
        expand_map(&mut self.headers, lookup, &at("headers"))
    }
}

impl RawClient {
    /// **\[project\]** The surface's own part is expanded as `mcpServers` is: a client's
    /// token and its credentials per server.
    fn expand(
        &mut self,
        name: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), ConfigError> {
        if let Some(token) = &mut self.token {
            token.0 = expand(&token.0, lookup, &|| format!("client {name:?} token"))?;
        }
        for (server, creds) in &mut self.servers {
            let at = |field: &'static str| move || format!("client {name:?} {server:?} {field}");
            expand_map(&mut creds.env, lookup, &at("env"))?;
            expand_map(&mut creds.headers, lookup, &at("headers"))?;
        }
        Ok(())
    }
}

/// A secret: shown as `<redacted>` by `Debug`.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// The secret itself.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// One `mcpServers` entry, as read.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    /// `stdio`, `http`, `streamable-http` or `sse` (Claude Code writes it); optional.
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, Secret>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, Secret>,
}

/// A client's credentials for one server, as read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCredentials {
    #[serde(default)]
    env: BTreeMap<String, Secret>,
    #[serde(default)]
    headers: BTreeMap<String, Secret>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClient {
    #[serde(default)]
    token: Option<Secret>,
    #[serde(default)]
    servers: BTreeMap<String, RawCredentials>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawSurface {
    #[serde(default)]
    state_dir: Option<PathBuf>,
    #[serde(default)]
    hold_ms: Option<u64>,
    #[serde(default)]
    first_contact_ms: Option<u64>,
    #[serde(default)]
    window_messages: Option<usize>,
    #[serde(default)]
    modern_hosts: Option<usize>,
    #[serde(default)]
    modern_idle_ms: Option<u64>,
    #[serde(default)]
    clients: BTreeMap<String, RawClient>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawConfig {
    mcp_servers: BTreeMap<String, RawServer>,
    #[serde(default)]
    surface: RawSurface,
}

/// How a backing server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A child process spoken to over its stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: BTreeMap<String, Secret>,
    },
    /// A server at a URL (`http://`, `https://`, `ws://`, `wss://`).
    Remote {
        /// The URL.
        url: String,
        /// The bearer token sent, from an `Authorization: Bearer …` header.
        token: Option<Secret>,
    },
}

/// One backing server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackingServer {
    /// Its name: the `server` of the meta-tools, the prefix of its static tools.
    pub name: String,
    /// How it is reached, with the operator's default credentials.
    pub endpoint: Endpoint,
}

/// Credentials one client uses at one server instead of the defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    /// Variables added to (or replacing those of) a stdio server's environment.
    pub env: BTreeMap<String, Secret>,
    /// The bearer token for a remote server.
    pub token: Option<Secret>,
}

/// One client of the surface host: a principal the operator configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Client {
    /// The bearer token it presents to the surface host over Streamable HTTP.
    pub token: Option<Secret>,
    /// Its credentials per server; a server not named here is reached with the defaults.
    pub servers: BTreeMap<String, Credentials>,
}

/// The whole configuration.
#[derive(Debug, Clone)]
pub struct SurfaceConfig {
    /// The backing servers, by name.
    pub servers: Vec<BackingServer>,
    /// Where each principal's told records are kept (a directory per principal).
    pub state_dir: Option<PathBuf>,
    /// The hold window of each host (§5.2).
    pub hold_window: Duration,
    /// How long `tools/list` waits for the backing servers to settle.
    pub first_contact: Duration,
    /// How many of the latest messages (results, events, notices) the host counts as in the
    /// client's context. MCP has no way for a client to report a compaction, so this window
    /// stands for it: an open toolset whose announcement is older is re-stated, with what is
    /// usable in it, in the next result (§8.3 Reminders). Default 40.
    pub window_messages: usize,
    /// The hosts kept for modern (MCP 2026-07-28) clients over Streamable HTTP, one per
    /// principal: how many at most (`modernHosts`, default 16) and how long one without a
    /// request in flight is kept (`modernIdleMs`, default 10 minutes).
    pub modern: crate::pool::Limits,
    /// The clients, by principal.
    pub clients: BTreeMap<String, Client>,
}

/// `modernHosts` (1 to 1024) and `modernIdleMs` (1 s to a day), or their defaults.
fn modern_limits(
    hosts: Option<usize>,
    idle_ms: Option<u64>,
) -> Result<crate::pool::Limits, ConfigError> {
    let default = crate::pool::Limits::default();
    let max = match hosts {
        None => default.max,
        Some(n) if (1..=1024).contains(&n) => n,
        Some(n) => {
            return Err(ConfigError::Surface(format!(
                "modernHosts {n}: give 1 to 1024"
            )));
        }
    };
    let idle = match idle_ms {
        None => default.idle,
        Some(ms) if (1_000..=86_400_000).contains(&ms) => Duration::from_millis(ms),
        Some(ms) => {
            return Err(ConfigError::Surface(format!(
                "modernIdleMs {ms}: give 1000 to 86400000"
            )));
        }
    };
    Ok(crate::pool::Limits {
        max,
        idle,
        ..default
    })
}

/// A principal's name, safe as a directory name and in logs.
fn valid_principal(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && !name.starts_with('.')
}

/// The bearer token of an `Authorization: Bearer …` header; any other header is refused
/// (the transports send no other).
fn bearer(
    headers: &BTreeMap<String, Secret>,
    what: impl Fn(String) -> ConfigError,
) -> Result<Option<Secret>, ConfigError> {
    let mut token = None;
    for (name, value) in headers {
        if !name.eq_ignore_ascii_case("authorization") {
            return Err(what(format!(
                "header {name:?} is not supported: only \"Authorization\": \"Bearer …\" is sent"
            )));
        }
        match value.expose().strip_prefix("Bearer ") {
            Some(t) if !t.trim().is_empty() => token = Some(Secret(t.trim().to_owned())),
            _ => {
                return Err(what(
                    "the Authorization header must be \"Bearer TOKEN\"".to_owned(),
                ));
            }
        }
    }
    Ok(token)
}

/// A JSON error without the value it quotes: serde says `invalid type: string "…",
/// expected a map`, and that string can be a token written where a map was expected.
fn scrub(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    for kind in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = msg.strip_prefix(kind)
            && let Some(at) = rest.find(", expected")
        {
            let what = rest[..at].split_whitespace().next().unwrap_or("value");
            return format!("{kind}{what} (not shown){}", &rest[at..]);
        }
    }
    msg
}

impl SurfaceConfig {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let read = |error| ConfigError::Read {
            path: path.to_owned(),
            error,
        };
        let size = std::fs::metadata(path).map_err(read)?.len();
        if size > MAX_CONFIG_SIZE {
            return Err(ConfigError::TooLarge {
                path: path.to_owned(),
            });
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        Self::parse(&text)
    }

    /// Parses and checks a configuration, `${VAR}` expanded from this process's
    /// environment.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        Self::parse_with_env(text, &|name| std::env::var(name).ok())
    }

    /// Parses and checks a configuration, `${VAR}` and `${VAR:-default}` expanded with
    /// `lookup` (`None`: not set) in `command`, `args`, `env`, `url` and `headers`, as
    /// Claude Code does, and in the clients' tokens and credentials.
    pub fn parse_with_env(
        text: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let mut raw: RawConfig =
            serde_json::from_str(text).map_err(|e| ConfigError::Json(scrub(&e)))?;
        if raw.mcp_servers.is_empty() {
            return Err(ConfigError::NoServers);
        }
        for (name, s) in &mut raw.mcp_servers {
            s.expand(name, lookup)?;
        }
        for (name, c) in &mut raw.surface.clients {
            c.expand(name, lookup)?;
        }
        let mut servers = Vec::new();
        for (name, s) in raw.mcp_servers {
            let err = |reason: String| ConfigError::Server {
                server: name.clone(),
                reason,
            };
            let endpoint = match (s.command, s.url) {
                (Some(command), None) => {
                    if !s.headers.is_empty() {
                        return Err(err("\"headers\" are for a server with a \"url\"".into()));
                    }
                    if !matches!(s.kind.as_deref(), None | Some("stdio")) {
                        return Err(err(
                            "a server with a \"command\" is of type \"stdio\"".into()
                        ));
                    }
                    Endpoint::Stdio {
                        command,
                        args: s.args,
                        env: s.env,
                    }
                }
                (None, Some(url)) => {
                    if !s.args.is_empty() || !s.env.is_empty() {
                        return Err(err(
                            "\"args\" and \"env\" are for a server with a \"command\"".into(),
                        ));
                    }
                    let scheme_ok = ["http://", "https://", "ws://", "wss://"]
                        .iter()
                        .any(|p| url.starts_with(p));
                    if !scheme_ok {
                        let shown = mcpl_transport::redact_url(&url);
                        let hint = if !url.contains("://") && url.contains(':') {
                            format!(" (did you mean http://{shown}/mcp or ws://{shown}?)")
                        } else {
                            String::new()
                        };
                        return Err(err(format!(
                            "url {shown:?} is not http://, https://, ws:// or wss://{hint}"
                        )));
                    }
                    // Issue #43: one the transport cannot use (a bad port, no host) is
                    // refused now rather than retried forever.
                    mcpl_transport::check_url(&url).map_err(|e| err(e.to_string()))?;
                    if s.kind.as_deref() == Some("sse") {
                        return Err(err(
                            "the old HTTP+SSE transport is not supported; Streamable HTTP is"
                                .into(),
                        ));
                    }
                    Endpoint::Remote {
                        url,
                        token: bearer(&s.headers, err)?,
                    }
                }
                (Some(_), Some(_)) => {
                    return Err(err("give either \"command\" or \"url\", not both".into()));
                }
                (None, None) => return Err(err("give a \"command\" or a \"url\"".into())),
            };
            servers.push(BackingServer { name, endpoint });
        }
        let mut clients = BTreeMap::new();
        for (name, c) in raw.surface.clients {
            let err = |reason: String| ConfigError::Client {
                client: name.clone(),
                reason,
            };
            if !valid_principal(&name) {
                return Err(err(
                    "a principal is 1-64 letters, digits, '-', '_' or '.' (not first)".into(),
                ));
            }
            let mut creds = BTreeMap::new();
            for (server, raw) in c.servers {
                let Some(backing) = servers.iter().find(|s| s.name == server) else {
                    return Err(err(format!(
                        "names server {server:?}, not in \"mcpServers\""
                    )));
                };
                let stdio = matches!(backing.endpoint, Endpoint::Stdio { .. });
                if stdio && !raw.headers.is_empty() {
                    return Err(err(format!("{server:?} is a stdio server: give \"env\"")));
                }
                if !stdio && !raw.env.is_empty() {
                    return Err(err(format!(
                        "{server:?} is a remote server: give \"headers\""
                    )));
                }
                let token = bearer(&raw.headers, err)?;
                creds.insert(
                    server,
                    Credentials {
                        env: raw.env,
                        token,
                    },
                );
            }
            clients.insert(
                name,
                Client {
                    token: c.token,
                    servers: creds,
                },
            );
        }
        let mut tokens = std::collections::BTreeSet::new();
        for (name, c) in &clients {
            if let Some(t) = &c.token
                && !tokens.insert(t.expose())
            {
                return Err(ConfigError::Client {
                    client: name.clone(),
                    reason: "its token is another client's too".into(),
                });
            }
        }
        let modern = modern_limits(raw.surface.modern_hosts, raw.surface.modern_idle_ms)?;
        Ok(SurfaceConfig {
            servers,
            state_dir: raw.surface.state_dir,
            hold_window: Duration::from_millis(raw.surface.hold_ms.unwrap_or(250)),
            first_contact: Duration::from_millis(raw.surface.first_contact_ms.unwrap_or(15_000)),
            window_messages: match raw.surface.window_messages {
                None => mcpl_host::state::ConversationConfig::default().window,
                Some(n) if (4..=10_000).contains(&n) => n,
                Some(n) => {
                    return Err(ConfigError::Surface(format!(
                        "windowMessages {n}: give 4 to 10000"
                    )));
                }
            },
            modern,
            clients,
        })
    }

    /// The surface host's bearer tokens for Streamable HTTP: secret → principal.
    pub fn client_tokens(&self) -> std::collections::HashMap<String, String> {
        self.clients
            .iter()
            .filter_map(|(name, c)| Some((c.token.as_ref()?.expose().to_owned(), name.clone())))
            .collect()
    }

    /// The host configuration for one client: every backing server, reached with the
    /// principal's credentials where it has its own. A principal the configuration does
    /// not name is refused unless it is [`DEFAULT_PRINCIPAL`] (a stdio client's default).
    pub fn host_config(&self, principal: &str) -> Result<HostConfig, ConfigError> {
        let client = match self.clients.get(principal) {
            Some(c) => Some(c),
            None if principal == DEFAULT_PRINCIPAL => None,
            None => return Err(ConfigError::UnknownClient(principal.to_owned())),
        };
        let servers = self
            .servers
            .iter()
            .map(|s| {
                let own = client.and_then(|c| c.servers.get(&s.name));
                ServerConfig::new(s.name.clone(), connector(&s.endpoint, own))
            })
            .collect();
        let mut config = HostConfig::new(servers).with_hold_window(self.hold_window);
        config.conversation.window = self.window_messages;
        config.conversation.history = config.conversation.history.max(self.window_messages);
        if let Some(dir) = &self.state_dir {
            // One directory per principal: told records are the agent's (§4.3).
            config = config.with_state_dir(dir.join(principal));
        }
        Ok(config)
    }
}

/// A connector for one server, with a client's own credentials over the defaults.
fn connector(endpoint: &Endpoint, own: Option<&Credentials>) -> Connector {
    match endpoint {
        Endpoint::Stdio { command, args, env } => {
            let mut env = env.clone();
            if let Some(own) = own {
                env.extend(own.env.clone());
            }
            let (command, args) = (command.clone(), args.clone());
            Connector::from_fn(move || {
                let options = ClientOptions {
                    child_stderr: mcpl_transport::ChildStderr::Tracing,
                    ..ClientOptions::default()
                };
                let r = mcpl_transport::stdio::spawn(
                    &command,
                    &args,
                    env.iter().map(|(k, v)| (k.as_str(), v.expose())),
                    &options,
                );
                Box::pin(std::future::ready(r))
            })
        }
        Endpoint::Remote { url, token } => {
            let token = own.and_then(|o| o.token.clone()).or_else(|| token.clone());
            let options = ClientOptions {
                token: token.map(|t| t.expose().to_owned()),
                ..ClientOptions::default()
            };
            Connector::url(url.clone(), options)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{
      "mcpServers": {
        "arcade": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer default-secret"}},
        "local": {"type": "stdio", "command": "mcpl-arcade", "args": ["serve", "--stdio"], "env": {"K": "v"}}
      },
      "surface": {"holdMs": 100, "stateDir": "/tmp/s",
                  "clients": {"alice": {"token": "a-client", "servers": {"arcade": {"headers": {"authorization": "Bearer alice-secret"}}}},
                              "bob": {"token": "b-client"}}}
    }"#;

    #[test]
    fn reads_mcp_servers_and_the_surface_options() {
        let c = SurfaceConfig::parse(GOOD).unwrap();
        assert_eq!(c.servers.len(), 2);
        assert_eq!(c.hold_window, Duration::from_millis(100));
        assert_eq!(c.window_messages, 40);
        assert_eq!(
            c.servers[0].endpoint,
            Endpoint::Remote {
                url: "http://127.0.0.1:1/mcp".into(),
                token: Some(Secret("default-secret".into()))
            }
        );
        let alice = &c.clients["alice"].servers["arcade"];
        assert_eq!(alice.token.as_ref().unwrap().expose(), "alice-secret");
        let tokens = c.client_tokens();
        assert_eq!(tokens["a-client"], "alice");
        assert_eq!(tokens["b-client"], "bob");
        let hc = c.host_config("alice").unwrap();
        assert_eq!(hc.servers.len(), 2);
        assert_eq!(hc.state_dir.as_deref(), Some(Path::new("/tmp/s/alice")));
        assert!(matches!(
            c.host_config("mallory"),
            Err(ConfigError::UnknownClient(_))
        ));
        assert!(c.host_config(DEFAULT_PRINCIPAL).is_ok());
    }

    #[test]
    fn variables_are_expanded_as_claude_code_does() {
        let env = |name: &str| match name {
            "TOKEN" => Some("t0k".to_owned()),
            "EMPTY" => Some(String::new()),
            "PORT" => Some("7700".to_owned()),
            _ => None,
        };
        let place = || "here".to_owned();
        let x = |v: &str| expand(v, &env, &place);
        assert_eq!(x("Bearer ${TOKEN}").unwrap(), "Bearer t0k");
        assert_eq!(x("${MISSING:-dflt}/${PORT}").unwrap(), "dflt/7700");
        assert_eq!(x("${EMPTY:-dflt}").unwrap(), "dflt");
        assert_eq!(x("${EMPTY}").unwrap(), "");
        // Not the documented forms: left as written.
        for literal in ["$TOKEN", "${", "${1X}", "a ${ b", "${TOKEN"] {
            assert_eq!(x(literal).unwrap(), literal);
        }
        let e = x("${MISSING}").unwrap_err().to_string();
        assert!(e.contains("here: ${MISSING} is not set"), "{e}");
        let c = SurfaceConfig::parse_with_env(
            r#"{"mcpServers": {
                 "a": {"url": "http://127.0.0.1:${PORT}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
                 "b": {"command": "${BIN:-mcpl-arcade}", "args": ["--x=${TOKEN}"], "env": {"K": "${TOKEN}"}}},
               "surface": {"clients": {"c": {"token": "${TOKEN:-x}-c"}}}}"#,
            &env,
        )
        .unwrap();
        assert_eq!(
            c.servers[0].endpoint,
            Endpoint::Remote {
                url: "http://127.0.0.1:7700/mcp".into(),
                token: Some(Secret("t0k".into()))
            }
        );
        let Endpoint::Stdio { command, args, env } = &c.servers[1].endpoint else {
            panic!("{:?}", c.servers[1]);
        };
        assert_eq!(command, "mcpl-arcade");
        assert_eq!(args, &["--x=t0k"]);
        assert_eq!(env["K"].expose(), "t0k");
        assert_eq!(c.clients["c"].token.as_ref().unwrap().expose(), "t0k-c");
    }

    #[test]
    fn secrets_stay_out_of_debug() {
        let c = SurfaceConfig::parse(GOOD).unwrap();
        let shown = format!("{c:?}");
        for secret in [
            "default-secret",
            "alice-secret",
            "a-client",
            "b-client",
            "\"v\"",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }

    #[test]
    fn refuses_what_it_cannot_honour() {
        let cases = [
            (r#"{"mcpServers": {}}"#, "no server"),
            (
                r#"{"mcpServers": {"a": {}}}"#,
                "give a \"command\" or a \"url\"",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}"#,
                "not both",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "file:///etc/passwd"}}}"#,
                "is not http://",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "127.0.0.1:8765"}}}"#,
                "did you mean http://127.0.0.1:8765/mcp or ws://127.0.0.1:8765?",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://127.0.0.1:87650/mcp"}}}"#,
                "invalid port number",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://h/", "headers": {"Authorization": "Bearer ${NO_SUCH_VAR_43}"}}}}"#,
                "server \"a\" headers: ${NO_SUCH_VAR_43} is not set",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://h/", "headers": {"X-Key": "k"}}}}"#,
                "not supported",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://h/", "headers": {"Authorization": "Basic k"}}}}"#,
                "Bearer TOKEN",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://h/", "type": "sse"}}}"#,
                "HTTP+SSE",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "cwd": "/"}}}"#,
                "unknown field",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x"}}, "surface": {"windowMessages": 1}}"#,
                "give 4 to 10000",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x"}}, "surface": {"modernHosts": 0}}"#,
                "give 1 to 1024",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x"}}, "surface": {"modernIdleMs": 10}}"#,
                "give 1000 to 86400000",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x"}}, "surface": {"clients": {"../x": {}}}}"#,
                "a principal is",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x"}}, "surface": {"clients": {"c": {"servers": {"b": {}}}}}}"#,
                "not in \"mcpServers\"",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x"}}, "surface": {"clients": {"c": {"token": "t"}, "d": {"token": "t"}}}}"#,
                "another client's",
            ),
        ];
        let leak = SurfaceConfig::parse(
            r#"{"mcpServers": {"a": {"url": "http://h/", "headers": "Bearer hunter2"}}}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(!leak.contains("hunter2"), "{leak}");
        assert!(leak.contains("expected a map"), "{leak}");
        for (text, want) in cases {
            let e = SurfaceConfig::parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
            assert!(!e.contains("Basic k"), "a secret in an error: {e}");
        }
    }
}

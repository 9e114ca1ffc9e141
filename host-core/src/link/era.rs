//! Which era of MCP a link speaks with its server (MCP 2026-07-28 `basic/versioning.md`):
//! legacy (`initialize`, 2025-11-25 and before) or modern (per-request `_meta`,
//! 2026-07-28). Pure: the probe's answer in, a verdict out; a request's params in, the
//! same params stamped with the era's `_meta` out.
//!
//! **The probe** (stdio `basic/transports/stdio.md` and Streamable HTTP
//! `streamable-http.md`, "Backward Compatibility"): `server/discover`, stamped with this
//! host's modern version, first on every connection a link may speak modern on. A
//! `DiscoverResult` naming a modern version this host speaks makes the server modern; a
//! recognized modern error (-32020, -32021, -32022) makes it modern too — it is not
//! fallen back from, the connection fails with what the server said; any other error
//! (whatever its code: the fallback "MUST NOT be keyed to one specific error code"), a
//! result that is no `DiscoverResult`, or no answer within the handshake timeout makes it
//! legacy, and `initialize` follows on the same connection. On Streamable HTTP the
//! transport hands over the JSON-RPC error in a 400's body as the answer, so the same
//! reading serves both bindings; an empty or non-JSON-RPC body arrives as the transport's
//! own error and reads as legacy.
//!
//! **\[project\] A version refused** (`versioning.md`, "Protocol Version Negotiation": the client
//! "SHOULD select a mutually supported version from the `supported` list and retry"):
//! -32022 to the probe whose `data.supported` lists a modern version this host speaks has
//! the probe sent again, once, stamped with that version; one that lists only legacy
//! versions this host speaks sends it on to `initialize` (the binding pages: "use one of
//! the versions in its advertised `supported` list", here a legacy one); one that lists
//! neither ends the connection with what the server said. A modern request of a caller
//! refused so is sent again once the same way (`requests.rs`).
//!
//! **\[project\]** With `auto`, a dual-era server whose `server/discover` advertises MCPL
//! (`capabilities.extensions["mcpl/core"]`) and lists a legacy version this host speaks
//! is served in the legacy era (`modern` serves it modern): the legacy era is where this
//! host has served RFC-014 longest, and `auto` keeps it there.
//!
//! **\[project\]** A modern server whose discovery declares `mcpl/core` **and** carries
//! `_meta["mcpl/hints"]` (it hints this host's requests: the probe declared `mcpl/core`,
//! and the principal is a named one, `docs/rfc014-stateless.md` §3.6) is served under the
//! stateless profile (`profile.rs`): its manifest (the extension's settings) is the
//! session's, as `experimental.mcpl` carries it on legacy. One that declares it without
//! hinting (an anonymous principal's requests) is served as plain MCP.
//!
//! **\[project\]** What is found is remembered for the link's life: a reconnect goes
//! straight to `initialize` for a server found legacy, and probes again (it needs the
//! capabilities anyway) for one found modern. A server found legacy that then refuses
//! `initialize` is forgotten, and the next connection probes afresh (versioning: "re-probing
//! if the cached assumption later fails").

use super::error::LinkError;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, RawValue, decode_result, to_raw};
use mcpl_protocol::mcp::{
    ClientCapabilities, Implementation, InitializeResult, ServerCapabilities, ServerExperimental,
    is_supported_version,
};
use mcpl_protocol::mcpl::McplManifest;
use mcpl_protocol::modern::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, MCPL_EXTENSION, MODERN_PROTOCOL_VERSION,
    MODERN_PROTOCOL_VERSIONS, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY, is_modern_version,
};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// Which era a link may speak: what the configuration says (`era = "auto" | "legacy" |
/// "modern"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EraPolicy {
    /// Probe with `server/discover` and fall back to `initialize` (module docs): the
    /// default, what the binding pages ask of a client that speaks both eras.
    #[default]
    Auto,
    /// `initialize` only, as before MCP 2026-07-28.
    Legacy,
    /// The modern era only: a server that does not answer `server/discover` as a modern
    /// server is not connected to.
    Modern,
}

impl EraPolicy {
    /// The configuration's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            EraPolicy::Auto => "auto",
            EraPolicy::Legacy => "legacy",
            EraPolicy::Modern => "modern",
        }
    }
}

impl fmt::Display for EraPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An era word that is none of `auto`, `legacy`, `modern`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is no era: say auto, legacy or modern")]
pub struct UnknownEra(pub String);

impl FromStr for EraPolicy {
    type Err = UnknownEra;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(EraPolicy::Auto),
            "legacy" => Ok(EraPolicy::Legacy),
            "modern" => Ok(EraPolicy::Modern),
            other => Err(UnknownEra(other.to_owned())),
        }
    }
}

/// The era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize` and a session (MCP 2025-11-25 and before).
    Legacy,
    /// Per-request `_meta`, no session (MCP 2026-07-28).
    Modern,
}

/// What the probe's answer says.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    /// A modern server: its discovery, as the session's `initialize` result would say it
    /// (the version this host will send, its capabilities, `serverInfo`, instructions).
    Modern(Box<InitializeResult>),
    /// A modern server that refused the probe with one of the era's errors: not to be
    /// fallen back from.
    Refused(ErrorObject),
    /// A modern server that refused the version sent (-32022) but serves `version`, a
    /// modern one this host speaks: the probe goes again with it, once (`error` is what
    /// ends the connection if it was the second try).
    Retry {
        /// The version to stamp the probe with.
        version: String,
        /// The refusal.
        error: ErrorObject,
    },
    /// A legacy server, or one to serve as legacy (module docs); why, for the log.
    Legacy(String),
}

/// `server/discover`'s result as read here: liberally, everything but the versions
/// optional.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Discovered {
    supported_versions: Vec<String>,
    #[serde(default)]
    capabilities: ServerCapabilities,
    #[serde(default)]
    instructions: Option<String>,
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

/// Reads the probe's outcome (module docs) for a link configured `policy`: only `auto`
/// sends a dual-era MCPL server on to `initialize` (`modern` asked for the modern era).
pub fn read_probe(outcome: Result<Box<RawValue>, LinkError>, policy: EraPolicy) -> Probe {
    let result = match outcome {
        Ok(result) => result,
        Err(LinkError::Server { error, .. }) if is_modern_error(error.code) => {
            return match supported_choice(&error) {
                Supported::Modern(version) => Probe::Retry { version, error },
                Supported::LegacyOnly(versions) => Probe::Legacy(format!(
                    "it refused {MODERN_PROTOCOL_VERSION} and serves only legacy versions ({versions:?})"
                )),
                Supported::Nothing => Probe::Refused(error),
            };
        }
        Err(e) => return Probe::Legacy(e.to_string()),
    };
    let Ok(found) = decode_result::<Discovered>(&result) else {
        return Probe::Legacy("its server/discover result is no DiscoverResult".to_owned());
    };
    let mcpl = found
        .capabilities
        .other
        .get("extensions")
        .and_then(Value::as_object)
        .is_some_and(|e| e.contains_key(MCPL_EXTENSION));
    let legacy_too = found
        .supported_versions
        .iter()
        .any(|v| is_supported_version(v));
    if mcpl && legacy_too && policy == EraPolicy::Auto {
        return Probe::Legacy(
            "it speaks MCPL, which this host speaks in the legacy era under `auto`".to_owned(),
        );
    }
    let Some(version) = found
        .supported_versions
        .iter()
        .find(|v| is_modern_version(v))
    else {
        return Probe::Legacy(format!(
            "it lists no modern version this host speaks ({:?})",
            found.supported_versions
        ));
    };
    let server_info = found
        .meta
        .as_ref()
        .and_then(|m| m.get(SERVER_INFO_KEY))
        .and_then(|v| serde_json::from_value::<Implementation>(v.clone()).ok())
        // serverInfo is a SHOULD, for display only: a server without one is not refused.
        .unwrap_or_else(|| Implementation::new("unnamed", ""));
    let hinted = found
        .meta
        .as_ref()
        .is_some_and(|m| m.contains_key(mcpl_protocol::meta::HINTS));
    let mut capabilities = found.capabilities;
    // The manifest of a legacy `initialize` has no place in a modern session: the
    // profile's is the `mcpl/core` extension's settings, taken only when this host's
    // requests are hinted (module docs).
    let manifest = capabilities
        .other
        .get("extensions")
        .and_then(|e| e.get(MCPL_EXTENSION))
        .filter(|_| hinted)
        .and_then(|m| serde_json::from_value::<McplManifest>(m.clone()).ok());
    capabilities.experimental = manifest.map(|m| ServerExperimental {
        mcpl: Some(m),
        other: Map::new(),
    });
    Probe::Modern(Box::new(InitializeResult {
        protocol_version: version.clone(),
        capabilities,
        server_info,
        instructions: found.instructions,
        meta: None,
    }))
}

/// What a -32022's `data.supported` offers this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Supported {
    /// A modern version this host speaks (the newest of them).
    Modern(String),
    /// Only legacy versions this host speaks (`initialize` can go on with them).
    LegacyOnly(Vec<String>),
    /// Nothing this host speaks, or the error is no -32022 or lists nothing readable.
    Nothing,
}

/// How many entries of `data.supported` are looked at: a server lists a handful; what a
/// peer writes is bounded here, whatever the transport let through.
const SUPPORTED_READ_LIMIT: usize = 64;

/// Reads an `UnsupportedProtocolVersionError`'s `data.supported` (liberally: entries that
/// are no strings are skipped) for a version this host speaks, modern first.
pub fn supported_choice(error: &ErrorObject) -> Supported {
    if error.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        return Supported::Nothing;
    }
    let listed: Vec<&str> = error
        .data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .take(SUPPORTED_READ_LIMIT)
                .filter_map(Value::as_str)
                .collect()
        })
        .unwrap_or_default();
    // This host's own order (newest first) decides among the modern versions both speak.
    if let Some(version) = MODERN_PROTOCOL_VERSIONS.iter().find(|v| listed.contains(v)) {
        return Supported::Modern((*version).to_owned());
    }
    let legacy: Vec<String> = listed
        .iter()
        .filter(|v| is_supported_version(v))
        .map(|v| (*v).to_owned())
        .collect();
    if legacy.is_empty() {
        Supported::Nothing
    } else {
        Supported::LegacyOnly(legacy)
    }
}

/// The modern era's own error codes (MCP `basic/index.md`, "Error Codes"): what a client
/// recognizes as a modern server's answer.
pub fn is_modern_error(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::HEADER_MISMATCH
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
    )
}

/// What every modern request of a link says of the host in `_meta` (MCP `basic/index.md`,
/// "Per-request protocol fields").
#[derive(Debug, Clone, PartialEq)]
pub struct Stamp {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub version: String,
    /// `io.modelcontextprotocol/clientInfo` (a SHOULD on every request).
    pub client_info: Implementation,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub capabilities: ClientCapabilities,
}

impl Stamp {
    /// The stamp this host sends before it knows the server's version: its own.
    ///
    /// **\[project\]** The capabilities declare form elicitation (`{"elicitation":
    /// {"form": {}}}`) and nothing else. In the modern era a question comes back inside
    /// the result (MRTR), and this host answers every form at once without inventing
    /// anything (`elicit.rs`: the server's own defaults, or decline); a server may ask only
    /// what is declared (MRTR "Server Requirements"), so declaring it lets one with a safe
    /// default go on rather than fail with -32021. Sampling and roots, which this host
    /// cannot answer, are not declared. (The legacy era still declares none: there a
    /// question is a request of the server's own, answered the same way.)
    ///
    /// `mcpl`: the host declares `extensions["mcpl/core"]` (the stateless profile,
    /// `profile.rs`; a host that does not advertise tool hints does not).
    pub fn new(client_info: Implementation, mcpl: bool) -> Self {
        let mut other = Map::new();
        other.insert("elicitation".to_owned(), serde_json::json!({ "form": {} }));
        if mcpl {
            other.insert(
                "extensions".to_owned(),
                serde_json::json!({ MCPL_EXTENSION: super::profile::declaration() }),
            );
        }
        Stamp {
            version: MODERN_PROTOCOL_VERSION.to_owned(),
            client_info,
            capabilities: ClientCapabilities {
                experimental: None,
                other,
            },
        }
    }

    /// `params` with the per-request keys in its `_meta` (what `_meta` held is kept, and
    /// so are the other params). Params that are not an object (no MCP request has such)
    /// are replaced by an object holding only `_meta`.
    pub fn apply(&self, params: Option<&RawValue>) -> Box<RawValue> {
        let mut object = params
            .and_then(|p| serde_json::from_str::<Map<String, Value>>(p.get()).ok())
            .unwrap_or_default();
        let meta = object
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Value::Object(meta) = meta {
            meta.insert(
                PROTOCOL_VERSION_KEY.to_owned(),
                Value::from(self.version.clone()),
            );
            meta.insert(
                CLIENT_INFO_KEY.to_owned(),
                serde_json::to_value(&self.client_info).unwrap_or(Value::Null),
            );
            meta.insert(
                CLIENT_CAPABILITIES_KEY.to_owned(),
                serde_json::to_value(&self.capabilities).unwrap_or(Value::Null),
            );
        }
        to_raw(&object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(v: Value) -> Result<Box<RawValue>, LinkError> {
        Ok(to_raw(&v))
    }

    fn error(code: i64) -> Result<Box<RawValue>, LinkError> {
        Err(LinkError::Server {
            method: "server/discover",
            error: ErrorObject::new(ErrorCode(code), "no"),
        })
    }

    #[test]
    fn a_discover_result_with_our_version_is_a_modern_server() {
        let probe = read_probe(
            answer(json!({
                "resultType": "complete",
                "supportedVersions": ["2099-01-01", "2026-07-28"],
                "capabilities": {"tools": {"listChanged": true}, "experimental": {"mcpl": {}}},
                "_meta": {SERVER_INFO_KEY: {"name": "s", "version": "2"}},
                "instructions": "be kind",
                "ttlMs": 0, "cacheScope": "public"
            })),
            EraPolicy::Auto,
        );
        let Probe::Modern(init) = probe else {
            panic!("{probe:?}")
        };
        assert_eq!(init.protocol_version, "2026-07-28");
        assert_eq!(init.server_info.name, "s");
        assert_eq!(init.instructions.as_deref(), Some("be kind"));
        assert!(init.capabilities.tools.unwrap().list_changed.unwrap());
        assert!(init.capabilities.experimental.is_none());
    }

    #[test]
    fn any_error_but_the_eras_own_or_an_odd_result_is_a_legacy_server() {
        for outcome in [
            error(-32601),
            error(-32602),
            error(-32600),
            error(-32000),
            Err(LinkError::Timeout {
                method: "server/discover",
                after: std::time::Duration::from_secs(1),
            }),
            answer(json!({"tools": []})),
            answer(json!({"supportedVersions": ["2025-11-25"]})),
            answer(json!([1])),
        ] {
            assert!(matches!(
                read_probe(outcome, EraPolicy::Auto),
                Probe::Legacy(_)
            ));
        }
        for code in [-32020, -32021, -32022] {
            assert!(
                matches!(read_probe(error(code), EraPolicy::Auto), Probe::Refused(e) if e.code.0 == code)
            );
        }
    }

    fn unsupported(supported: Value) -> ErrorObject {
        ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "no")
            .with_data(json!({"supported": supported, "requested": "2026-07-28"}))
    }

    #[test]
    fn a_refused_version_is_retried_with_one_both_speak_or_falls_back_to_legacy() {
        let probe = |supported: Value| {
            read_probe(
                Err(LinkError::Server {
                    method: "server/discover",
                    error: unsupported(supported),
                }),
                EraPolicy::Auto,
            )
        };
        assert!(matches!(
            probe(json!(["2099-01-01", 3, "2026-07-28", "2025-11-25"])),
            Probe::Retry { version, .. } if version == "2026-07-28"
        ));
        assert!(matches!(
            probe(json!(["2025-06-18", "2025-11-25"])),
            Probe::Legacy(_)
        ));
        for nothing in [json!(["2099-01-01"]), json!([]), json!("2026-07-28")] {
            assert!(matches!(probe(nothing), Probe::Refused(_)));
        }
        let bare = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "no");
        assert_eq!(supported_choice(&bare), Supported::Nothing);
        let other = ErrorObject::new(ErrorCode(-32021), "no")
            .with_data(json!({"supported": ["2026-07-28"]}));
        assert_eq!(supported_choice(&other), Supported::Nothing);
    }

    #[test]
    fn a_dual_era_mcpl_server_is_served_legacy() {
        let both = |versions: Value, policy| {
            read_probe(
                answer(json!({
                    "supportedVersions": versions,
                    "capabilities": {"extensions": {"mcpl/core": {"version": "0.5"}}}
                })),
                policy,
            )
        };
        let dual = || json!(["2026-07-28", "2025-11-25"]);
        assert!(matches!(both(dual(), EraPolicy::Auto), Probe::Legacy(_)));
        assert!(matches!(both(dual(), EraPolicy::Modern), Probe::Modern(_)));
        assert!(matches!(
            both(json!(["2026-07-28"]), EraPolicy::Auto),
            Probe::Modern(_)
        ));
    }

    #[test]
    fn the_stamp_adds_the_keys_and_keeps_the_rest() {
        let stamp = Stamp::new(Implementation::new("h", "1"), false);
        let params = to_raw(&json!({"name": "t", "_meta": {"progressToken": 3}}));
        let v: Value = serde_json::from_str(stamp.apply(Some(&params)).get()).unwrap();
        assert_eq!(v["name"], "t");
        assert_eq!(v["_meta"]["progressToken"], 3);
        assert_eq!(v["_meta"][PROTOCOL_VERSION_KEY], "2026-07-28");
        assert_eq!(v["_meta"][CLIENT_INFO_KEY]["name"], "h");
        assert_eq!(
            v["_meta"][CLIENT_CAPABILITIES_KEY],
            json!({"elicitation": {"form": {}}})
        );
        let bare: Value = serde_json::from_str(stamp.apply(None).get()).unwrap();
        assert_eq!(bare["_meta"][PROTOCOL_VERSION_KEY], "2026-07-28");
    }

    #[test]
    fn the_policy_reads_its_three_words() {
        for p in [EraPolicy::Auto, EraPolicy::Legacy, EraPolicy::Modern] {
            assert_eq!(p.as_str().parse::<EraPolicy>(), Ok(p));
        }
        assert!("new".parse::<EraPolicy>().is_err());
    }
}

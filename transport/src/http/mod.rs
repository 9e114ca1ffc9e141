//! MCP Streamable HTTP (2025-11-25, "Transports" § Streamable HTTP), both ends; the server
//! end also serves MCP 2026-07-28's stateless requests ([`modern`]).
//!
//! One MCP endpoint takes POST (client messages), GET (the server's stream of requests and
//! notifications) and DELETE (end the session). An MCP session (`Mcp-Session-Id`) is one
//! [`Connection`](crate::Connection): unordered, since a POST's answer and the GET stream are
//! separate HTTP streams and nothing orders them (RFC-014 §5.2 is why a host must know).
//!
//! Server ([`bind`], [`HttpListener`]), per request, in this order:
//! 1. `Origin` refused by [`ServerOptions::origin_allowed`] → 403; bearer token missing or
//!    unknown → 401 with `WWW-Authenticate: Bearer` (every request, not just the first);
//!    with [`ServerOptions::protected_resource`], `Bearer resource_metadata="…"` naming
//!    the metadata the server then serves ([`resource`], RFC 9728), plus
//!    `error="invalid_token"` when a token was refused.
//! 2. POST must `Accept` both `application/json` and `text/event-stream`, GET the latter
//!    (406); a POST body must be `Content-Type: application/json` (415).
//! 3. `Mcp-Session-Id`: unknown or ended → 404; another principal's → 403; absent → a
//!    POSTed `initialize` request opens a session: a new connection is handed to
//!    [`HttpListener::accept`] and the answer carries the new id (128 random bits, hex).
//!    Any other POSTed request without one is MCP 2026-07-28's ([`modern`]): its `_meta`
//!    read (-32602), `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` checked against
//!    its body (-32020), its version served (-32022), each refused with 400; then it is
//!    handed to [`HttpListener::accept`] as a connection of its own (no id; an anonymous
//!    one a fresh principal holding one of its address's anonymous slots), whose every
//!    message goes on the request's answer and which ends with it — a client that closes
//!    the answer cancels the request. Its answer is 400 for the era's errors, 404 for
//!    -32601. A notification or response without an id → 400; a GET or DELETE without
//!    one → 405 (`Allow: POST`), or 400 when its `MCP-Protocol-Version` is a legacy one. `MCP-Protocol-Version`, on any request of a session: unsupported → 400; absent →
//!    2025-03-26 is assumed, as MCP says, which is supported.
//! 4. POST body: over `max_message_size` → 413 with a JSON-RPC error body; not a JSON-RPC
//!    message → 400 with the parse-error (or invalid-request) response as body. Either is
//!    also delivered to the session as `TooLarge`/`Malformed` when the session is known; an
//!    answer the session writes to it is dropped (it has no id to route by).
//! 5. A notification or response → 202, no body. A request → held until the session writes
//!    the response with its id: one `application/json` body, or, with
//!    [`HttpResponseMode::Sse`], an SSE stream that first carries server messages written
//!    while it waits (when no GET stream is open) and ends after the response. A request
//!    with `_meta.progressToken` gets its `notifications/progress` on its own answer (MCP:
//!    related messages SHOULD go on the request's stream), before the response; a JSON
//!    answer becomes an SSE stream when its first progress comes before the response.
//!    A request the client cancels (a POSTed `notifications/cancelled` naming it) gets no
//!    response (MCP "Cancellation"), so its answer ends there (issue #36, item 12,
//!    **\[project\]**): an SSE answer after what it holds, a JSON answer not yet begun as an
//!    SSE stream that ends at once (MCP answers a request's POST with SSE or JSON).
//!
//! A server request related to a pending client request ([`Outbound::relate`]: a
//! `sampling/createMessage` asked while answering a `tools/call`) rides that request's
//! answer too, as progress does. An answer's last slot is kept for its response: what
//! would fill it goes where unrelated messages go, so a client slow to read its answer
//! never loses the response. Other server-to-client requests and notifications (and a
//! related one whose request is no longer pending) go to the GET stream; with none open, to the
//! newest pending SSE answer (in SSE mode); else into a queue of
//! [`ServerOptions::http_queue_limit`] flushed when a GET stream opens. A GET stream whose
//! client does not keep up (its channel of that size is full) is ended, and what follows
//! waits in the queue for the client to reopen it. A second GET stream
//! *replaces* the first (which ends once it has written what it holds) rather than getting
//! 409: a client that lost its stream without the server noticing can always reopen it.
//! SSE events are `event: message` with the message as `data`. On the GET stream each
//! also has an event id (1, 2, … per session), and the server keeps the last
//! `http_replay_limit` messages it sent there: a client that reopens the stream with
//! `Last-Event-ID` gets again what followed that id (MCP resumability; never what went on
//! another stream). Answers to POSTs have no ids and cannot be resumed: a client whose
//! answer broke off makes up an error for its request. DELETE → 200 and the session's
//! inbound ends.
//! When the server drops the session's `Outbound`, the session ends too (later use → 404).
//!
//! Client ([`connect`]): POSTs each message concurrently, reads JSON or SSE answers, keeps
//! the GET stream open, and makes up an error response for any request whose POST failed so
//! that no requester waits forever; the function docs give the details. A request whose
//! `_meta` names a protocol version is MCP 2026-07-28's (`client_modern`): its POST mirrors
//! the body in `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`, carries no session id,
//! and a 4xx whose body is a JSON-RPC error is answered with that error itself.
//!
//! [`ServerOptions::origin_allowed`]: crate::ServerOptions::origin_allowed
//! [`ServerOptions::protected_resource`]: crate::ServerOptions::protected_resource
//! [`Outbound::relate`]: crate::Outbound::relate
//! [`ServerOptions::http_queue_limit`]: crate::ServerOptions::http_queue_limit
//! [`HttpResponseMode::Sse`]: crate::HttpResponseMode::Sse

mod client;
mod client_modern;
pub mod modern;
mod pool;
pub mod resource;
mod server;
mod session;

pub use client::{CLOSE_GRACE, connect};
pub use server::{HttpListener, bind, serve_http1};

use axum::http::HeaderMap;
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use mcpl_protocol::jsonrpc::{RawValue, member};

/// The session header (header names are case-insensitive; this is the canonical spelling
/// lowercased, as HTTP/2 and the SDKs send it).
pub const MCP_SESSION_ID: &str = "mcp-session-id";
/// The negotiated protocol version header.
pub const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The protocol version a server assumes when the header is absent (MCP 2025-11-25).
pub const DEFAULT_PROTOCOL_VERSION: &str = "2025-03-26";

/// The header names, made once: a name given as text is parsed again at every use.
const SESSION_HEADER: axum::http::HeaderName = axum::http::HeaderName::from_static(MCP_SESSION_ID);
const VERSION_HEADER: axum::http::HeaderName =
    axum::http::HeaderName::from_static(MCP_PROTOCOL_VERSION);
const LAST_EVENT_ID: axum::http::HeaderName = axum::http::HeaderName::from_static("last-event-id");

const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";

/// A request's `params._meta.progressToken`, read without decoding the rest of the params
/// (a token of the wrong shape, or params that are not an object, read as none).
fn request_progress_token(params: Option<&RawValue>) -> Option<serde_json::Value> {
    let params = params?;
    // Most requests carry no token: unless the name is there as it is, or some escape could
    // spell it, there is nothing to parse (issue #18).
    let text = params.get();
    if !text.contains("progressToken") && !text.contains("\\u") {
        return None;
    }
    notified_progress_token(member(params, "_meta").as_deref())
}

/// A `notifications/progress`'s `params.progressToken` (or the `progressToken` member of a
/// request's `_meta`), read as [`request_progress_token`] reads a request's: only an
/// object's member, so params sent as an array name no token.
fn notified_progress_token(params: Option<&RawValue>) -> Option<serde_json::Value> {
    let token = member(params?, "progressToken")?;
    serde_json::from_str(token.get()).ok()
}

/// True when the `Accept` headers list every one of `media` (fewer than 32; parameters such as
/// `q` are ignored). One pass over the items for all of them: a POST checks two on every
/// call (issue #18).
fn accepts(headers: &HeaderMap, media: &[&str]) -> bool {
    // The common case, with no parsing: what our client and the MCP SDKs send.
    if headers
        .get(ACCEPT)
        .is_some_and(|v| is_exact_list(v.as_bytes(), media))
    {
        return true;
    }
    let all = (1u32 << media.len()) - 1;
    let mut seen = 0u32;
    for item in headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
    {
        let item = media_type(item);
        for (i, m) in media.iter().enumerate() {
            if item.eq_ignore_ascii_case(m) {
                seen |= 1 << i;
            }
        }
        if seen == all {
            return true;
        }
    }
    seen == all
}

/// True when `value` is `media` joined by `", "`, byte for byte.
fn is_exact_list(value: &[u8], media: &[&str]) -> bool {
    let mut rest = value;
    for (i, m) in media.iter().enumerate() {
        if i > 0 {
            let Some(r) = rest.strip_prefix(b", ") else {
                return false;
            };
            rest = r;
        }
        let Some(r) = rest.strip_prefix(m.as_bytes()) else {
            return false;
        };
        rest = r;
    }
    rest.is_empty()
}

/// True when `Content-Type` is `media` (parameters such as `charset` are ignored).
fn content_type_is(headers: &HeaderMap, media: &str) -> bool {
    headers.get(CONTENT_TYPE).is_some_and(|v| {
        // The common case, with no parsing: the type alone, as clients send it.
        v.as_bytes() == media.as_bytes()
            || v.to_str()
                .is_ok_and(|v| media_type(v).eq_ignore_ascii_case(media))
    })
}

fn media_type(value: &str) -> &str {
    value.split(';').next().unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(name: axum::http::header::HeaderName, values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(name.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn a_requests_progress_token_is_read_however_its_name_is_spelled() {
        let token = |params: &str| {
            request_progress_token(Some(&RawValue::from_string(params.into()).unwrap()))
        };
        assert_eq!(
            token(r#"{"_meta":{"progressToken":"p-1"}}"#),
            Some(serde_json::json!("p-1"))
        );
        // JSON allows any character of a name to be escaped.
        assert_eq!(
            token(r#"{"_meta":{"progress\u0054oken":7}}"#),
            Some(serde_json::json!(7))
        );
        assert_eq!(token(r#"{"name":"light","arguments":{}}"#), None);
        assert_eq!(token(r#"{"name":"progressToken"}"#), None);
        assert_eq!(token("[1]"), None);
        // Params sent as an array are no object: no member of theirs is a `_meta`.
        assert_eq!(token(r#"[{"progressToken":1}]"#), None);
        assert_eq!(token(r#"[{"_meta":{"progressToken":1}}]"#), None);
        assert_eq!(request_progress_token(None), None);
    }

    #[test]
    fn accept_lists_are_read_item_by_item() {
        let h = headers(ACCEPT, &["application/json, text/event-stream"]);
        assert!(accepts(&h, &[JSON, EVENT_STREAM]));
        assert!(accepts(&h, &[JSON]), "one item of the list");
        assert!(accepts(&h, &[EVENT_STREAM]));
        let h = headers(ACCEPT, &["text/event-stream, application/json"]);
        assert!(accepts(&h, &[JSON, EVENT_STREAM]), "in any order");
        let h = headers(ACCEPT, &["application/json, text/event-streams"]);
        assert!(!accepts(&h, &[JSON, EVENT_STREAM]));
        let h = headers(
            ACCEPT,
            &["application/json, text/plain", "text/event-stream"],
        );
        assert!(accepts(&h, &[JSON, EVENT_STREAM]), "over two headers");
        let h = headers(ACCEPT, &["application/json;q=0.9", "TEXT/Event-Stream"]);
        assert!(accepts(&h, &[JSON, EVENT_STREAM]));
        let h = headers(ACCEPT, &["application/json"]);
        assert!(!accepts(&h, &[EVENT_STREAM]));
        assert!(!accepts(&h, &[JSON, EVENT_STREAM]));
        assert!(accepts(&h, &[JSON]));
        assert!(!accepts(&HeaderMap::new(), &[JSON]));
    }

    #[test]
    fn content_type_ignores_parameters() {
        assert!(content_type_is(
            &headers(CONTENT_TYPE, &["application/json; charset=utf-8"]),
            JSON
        ));
        assert!(!content_type_is(
            &headers(CONTENT_TYPE, &["text/plain"]),
            JSON
        ));
        assert!(!content_type_is(&HeaderMap::new(), JSON));
    }
}

//! Streamable HTTP for MCP 2026-07-28 (`basic/transports/streamable-http.md`): the checks a
//! modern POST passes before it reaches a server, and the HTTP status of its answer. Pure:
//! headers and a body in, a verdict out.
//!
//! A modern POST mirrors its body in headers (`MCP-Protocol-Version`, `Mcp-Method`, and for
//! `tools/call`, `resources/read` and `prompts/get` `Mcp-Name`); a header missing, malformed,
//! or not matching the body is -32020 with 400 ("Server Validation"). `Mcp-Name` may come
//! Base64-encoded as `=?base64?…?=` ("Value Encoding") and is decoded before comparing.

use super::{MCP_PROTOCOL_VERSION, VERSION_HEADER};
use axum::http::{HeaderMap, HeaderName, StatusCode};
use mcpl_protocol::header_params;
use mcpl_protocol::jsonrpc::member;
use mcpl_protocol::modern::{self, RequestMeta, name_member};
use mcpl_protocol::{ErrorCode, ErrorObject, Request};

/// `Mcp-Method`: the request's method.
pub const MCP_METHOD: &str = "mcp-method";
/// `Mcp-Name`: the request's `params.name` or `params.uri`.
pub const MCP_NAME: &str = "mcp-name";

const METHOD_HEADER: HeaderName = HeaderName::from_static(MCP_METHOD);
const NAME_HEADER: HeaderName = HeaderName::from_static(MCP_NAME);

/// Checks a modern request's headers against its body (module docs).
pub(super) fn check_headers(
    headers: &HeaderMap,
    request: &Request,
    meta: &RequestMeta,
) -> Result<(), ErrorObject> {
    let version = header(headers, &VERSION_HEADER, "MCP-Protocol-Version")?;
    if version != meta.protocol_version {
        return Err(modern::header_mismatch(format!(
            "{MCP_PROTOCOL_VERSION} header value {:?} does not match the body's {:?}",
            clip(version),
            clip(&meta.protocol_version)
        )));
    }
    let method = header(headers, &METHOD_HEADER, "Mcp-Method")?;
    if method != request.method {
        return Err(modern::header_mismatch(format!(
            "Mcp-Method header value {:?} does not match the body's {:?}",
            clip(method),
            clip(&request.method)
        )));
    }
    let Some(member_name) = name_member(&request.method) else {
        return Ok(());
    };
    let sent = header(headers, &NAME_HEADER, "Mcp-Name")?;
    let Ok(name) = mcpl_protocol::header_params::decode_value(sent) else {
        return Err(modern::header_mismatch(
            "Mcp-Name header value is not valid Base64 of UTF-8",
        ));
    };
    let body = request
        .params
        .as_deref()
        .and_then(|p| member(p, member_name))
        .and_then(|v| serde_json::from_str::<String>(v.get()).ok());
    if body.as_deref() != Some(name.as_str()) {
        return Err(modern::header_mismatch(format!(
            "Mcp-Name header value {:?} does not match the body's params.{member_name}",
            clip(&name)
        )));
    }
    Ok(())
}

/// Checks a modern `tools/call`'s `Mcp-Param-*` headers against its body (SEP-2243,
/// "Server Behavior for Custom Headers"): each argument the tool marks that is present and
/// not null must come as its header, decoded to the same value (integers compared as
/// numbers); a marked header whose argument is absent or null, a value with characters a
/// header may not hold, or a sentinel that is not Base64 of UTF-8 is refused. Every
/// refusal is -32020 ([`status_of`] makes it 400).
pub(super) fn check_param_headers(
    headers: &HeaderMap,
    request: &Request,
    marks: &crate::ToolHeaderMarks,
) -> Result<(), ErrorObject> {
    if request.method != "tools/call" || marks.is_empty() {
        return Ok(());
    }
    let Some(params) = request.params.as_deref() else {
        return Ok(());
    };
    let Ok(call) = serde_json::from_str::<serde_json::Value>(params.get()) else {
        return Ok(());
    };
    let Some(marked) = call
        .get("name")
        .and_then(serde_json::Value::as_str)
        .and_then(|name| marks.of(name))
    else {
        return Ok(());
    };
    let arguments = call.get("arguments").unwrap_or(&serde_json::Value::Null);
    for mark in marked {
        let header = mark.header();
        let body = mark.value_in(arguments).filter(|v| !v.is_null());
        let sent = headers.get(header.as_str());
        match (body, sent) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(modern::header_mismatch(format!(
                    "the {header} header is required: the argument it mirrors is in the body"
                )));
            }
            (None, Some(_)) => {
                return Err(modern::header_mismatch(format!(
                    "the {header} header mirrors an argument the body does not have"
                )));
            }
            (Some(value), Some(sent)) => {
                let decoded = std::str::from_utf8(sent.as_bytes())
                    .ok()
                    .and_then(|v| header_params::decode_value(v).ok())
                    .ok_or_else(|| {
                        modern::header_mismatch(format!(
                            "the {header} header holds characters a header may not, or a =?base64?…?= that is not Base64 of UTF-8"
                        ))
                    })?;
                if !header_params::matches(&decoded, value) {
                    return Err(modern::header_mismatch(format!(
                        "the {header} header value {:?} does not match the body's argument",
                        clip(&decoded)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The value of a required header as text, or -32020 saying it is missing or malformed.
fn header<'h>(
    headers: &'h HeaderMap,
    name: &HeaderName,
    shown: &str,
) -> Result<&'h str, ErrorObject> {
    let Some(value) = headers.get(name) else {
        return Err(modern::header_mismatch(format!(
            "the {shown} header is required"
        )));
    };
    value.to_str().map_err(|_| {
        modern::header_mismatch(format!(
            "the {shown} header holds characters a header may not"
        ))
    })
}

fn clip(s: &str) -> std::borrow::Cow<'_, str> {
    mcpl_protocol::jsonrpc::clip(s, mcpl_protocol::jsonrpc::ECHO_LIMIT)
}

/// The HTTP status of a modern request's JSON-RPC error (MCP Streamable HTTP: 400 for the
/// era's own errors and a malformed `_meta`, 404 for an unknown method); any other answer
/// is 200.
pub(super) fn status_of(error: Option<&ErrorObject>) -> StatusCode {
    match error.map(|e| e.code) {
        Some(
            ErrorCode::HEADER_MISMATCH
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        Some(ErrorCode::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use mcpl_protocol::Id;
    use serde_json::json;

    fn call(name: &str) -> (Request, RequestMeta) {
        let params = json!({"name": name, "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}});
        let request = Request {
            id: Id::Number(1),
            method: "tools/call".into(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(&params)),
        };
        let meta = RequestMeta::read(request.params.as_deref())
            .unwrap()
            .unwrap();
        (request, meta)
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn code(r: Result<(), ErrorObject>) -> Option<ErrorCode> {
        r.err().map(|e| e.code)
    }

    #[test]
    fn every_header_must_be_there_and_match_the_body() {
        let (req, meta) = call("héllo");
        let good = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?aMOpbGxv?="),
        ];
        assert_eq!(code(check_headers(&headers(&good), &req, &meta)), None);
        for drop in 0..good.len() {
            let fewer: Vec<_> = good
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != drop)
                .map(|(_, p)| *p)
                .collect();
            assert_eq!(
                code(check_headers(&headers(&fewer), &req, &meta)),
                Some(ErrorCode::HEADER_MISMATCH),
                "without {}",
                good[drop].0
            );
        }
        for (i, wrong) in ["2025-11-25", "tools/list", "hello"].iter().enumerate() {
            let mut h = headers(&good);
            h.insert(good[i].0, HeaderValue::from_str(wrong).unwrap());
            assert_eq!(
                code(check_headers(&h, &req, &meta)),
                Some(ErrorCode::HEADER_MISMATCH),
                "{} {wrong}",
                good[i].0
            );
        }
        let mut h = headers(&good);
        h.insert("mcp-name", HeaderValue::from_static("=?base64?!!?="));
        assert_eq!(
            code(check_headers(&h, &req, &meta)),
            Some(ErrorCode::HEADER_MISMATCH)
        );
    }

    #[test]
    fn a_plain_name_is_compared_as_it_is() {
        let (req, meta) = call("echo");
        let h = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ]);
        assert_eq!(code(check_headers(&h, &req, &meta)), None);
    }

    #[test]
    fn statuses_follow_the_error() {
        let e = |c| ErrorObject::new(c, "x");
        assert_eq!(status_of(None), StatusCode::OK);
        assert_eq!(
            status_of(Some(&e(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION))),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status_of(Some(&e(ErrorCode::METHOD_NOT_FOUND))),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            status_of(Some(&e(ErrorCode::INTERNAL_ERROR))),
            StatusCode::OK
        );
    }

    /// SEP-2243 on the server: the marked argument must come as its header, equal once
    /// decoded; missing, different, undecodable, or present without its argument is -32020.
    #[test]
    fn issue39_sep2243_marked_arguments_are_checked_against_their_headers() {
        use mcpl_protocol::header_params::header_params;
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"}}});
        let marks = crate::ToolHeaderMarks(std::sync::Arc::new(
            [("sql".to_owned(), header_params(&schema).unwrap())].into(),
        ));
        let call = |args: serde_json::Value| Request {
            id: Id::Number(1),
            method: "tools/call".into(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(
                &json!({"name": "sql", "arguments": args}),
            )),
        };
        let with = |pairs: &[(&'static str, &'static str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, HeaderValue::from_static(v));
            }
            h
        };
        let ok = [
            (
                json!({"region": "Hello", "n": 42}),
                with(&[
                    ("mcp-param-region", "=?base64?SGVsbG8=?="),
                    ("mcp-param-n", "42.0"),
                ]),
            ),
            (
                json!({"region": "us-west1"}),
                with(&[("mcp-param-region", "us-west1")]),
            ),
            (json!({"region": null}), with(&[])),
        ];
        for (args, headers) in ok {
            assert!(
                check_param_headers(&headers, &call(args.clone()), &marks).is_ok(),
                "{args}"
            );
        }
        let refused = [
            (json!({"region": "us-west1"}), with(&[])),
            (
                json!({"region": "us-west1"}),
                with(&[("mcp-param-region", "eu-west1")]),
            ),
            (
                json!({"region": "Hello"}),
                with(&[("mcp-param-region", "=?base64?SGVsbG8?=")]),
            ),
            (json!({}), with(&[("mcp-param-region", "x")])),
        ];
        for (args, headers) in refused {
            let e = check_param_headers(&headers, &call(args.clone()), &marks).unwrap_err();
            assert_eq!(e.code, ErrorCode::HEADER_MISMATCH, "{args} {headers:?}");
        }
        // A tool without marks, or another method, is not looked at.
        let other = Request {
            id: Id::Number(2),
            method: "tools/call".into(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(
                &json!({"name": "plain", "arguments": {"region": "x"}}),
            )),
        };
        assert!(check_param_headers(&HeaderMap::new(), &other, &marks).is_ok());
    }
}

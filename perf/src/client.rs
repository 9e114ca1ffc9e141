//! Raw clients for the measurements: mcpl-transport's client ends (WebSocket and
//! Streamable HTTP), the handshake a host makes, and light `tools/call` requests whose
//! answers are checked and counted. No Host: its per-call work is not the session layer's.
//! The HTTP throughput rows use a leaner load generator (`http_load.rs`), with this
//! file's initialize parameters, light call and reading of answers.

use super::PerfError;
use mcpl_protocol::jsonrpc::{Id, Message, Notification, Request, Response};
use mcpl_protocol::mcp::{
    CallToolParams, ClientCapabilities, ClientExperimental, Empty, Implementation,
    InitializeParams, LATEST_PROTOCOL_VERSION,
};
use mcpl_protocol::mcpl::{HostMcplCapabilities, MCPL_VERSION};
use mcpl_protocol::method::{CallTool, Initialize, Initialized, ListTools, ToolsetsList};
use mcpl_protocol::modern;
use mcpl_protocol::toolsets::ToolsetsListParams;
use mcpl_transport::{ClientOptions, Connection, Inbound};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::LazyLock;
use std::time::Duration;

/// The light tool's name, on our server and on rmcp's.
pub const LIGHT_TOOL: &str = "light";
/// What the light tool answers.
pub const LIGHT_TEXT: &str = "ok";

/// How long a handshake step may take before the connection counts as failed.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// The members of a light call's result that [`answer_of`] checks (MCP `CallToolResult`),
/// borrowed from the result's text where it has no escapes.
#[derive(serde::Deserialize)]
struct LightResult<'a> {
    #[serde(default, borrow)]
    content: Vec<LightBlock<'a>>,
    #[serde(default, rename = "isError")]
    is_error: bool,
}

/// A content block's type and text.
#[derive(serde::Deserialize)]
struct LightBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

/// How an answer to a light call came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// A result with the light tool's text.
    Ok(i64),
    /// A JSON-RPC error, a tool error, or a result that is not the light tool's.
    Wrong(i64),
}

/// Connects to `url` (`ws://…` or `http://…`) presenting `token`.
pub async fn connect(url: &str, token: &str) -> Result<Connection, PerfError> {
    let options = ClientOptions {
        token: Some(token.to_owned()),
        ..Default::default()
    };
    mcpl_transport::connect(url, &options)
        .await
        .map_err(|e| PerfError::Connect {
            url: url.to_owned(),
            reason: e.to_string(),
        })
}

/// What a host says about itself: MCPL with `toolHints` and `pushEvents`.
pub(super) fn initialize_params() -> InitializeParams {
    InitializeParams {
        protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
        capabilities: ClientCapabilities {
            experimental: Some(ClientExperimental {
                mcpl: Some(HostMcplCapabilities {
                    version: MCPL_VERSION.to_owned(),
                    push_events: Some(true),
                    tool_hints: Some(true),
                    feature_sets: None,
                    other: Map::new(),
                }),
                other: Map::new(),
            }),
            other: Map::new(),
        },
        client_info: Implementation::new("sim-perf", env!("CARGO_PKG_VERSION")),
        meta: None,
    }
}

/// `initialize` and `notifications/initialized`; with `list`, then `tools/list` and
/// `toolsets/list` as a host reads them at connect time. Request ids are negative, so
/// they never meet a call's.
pub async fn handshake(conn: &mut Connection, list: bool) -> Result<(), PerfError> {
    request(
        conn,
        Request::new::<Initialize>(Id::Number(-1), &initialize_params()),
    )
    .await?;
    send(
        conn,
        Notification::new::<Initialized>(&Empty::default()).into(),
    )
    .await?;
    if list {
        request(
            conn,
            Request::new::<ListTools>(Id::Number(-2), &Default::default()),
        )
        .await?;
        let params = ToolsetsListParams::default();
        request(conn, Request::new::<ToolsetsList>(Id::Number(-3), &params)).await?;
    }
    Ok(())
}

async fn send(conn: &Connection, message: Message) -> Result<(), PerfError> {
    conn.outbound
        .send(message)
        .await
        .map_err(|_| PerfError::Closed("while sending"))
}

/// Sends a request and waits for its successful answer (notifications meanwhile are
/// skipped).
pub(super) async fn request(conn: &mut Connection, req: Request) -> Result<Value, PerfError> {
    let (id, method) = (req.id.clone(), req.method.clone());
    send(conn, req.into()).await?;
    let answer = async {
        loop {
            match conn.inbound.recv().await {
                None => return Err(PerfError::Closed("during the handshake")),
                Some(Inbound::Message {
                    message: Message::Response(r),
                    ..
                }) if r.id.as_ref() == Some(&id) => {
                    return r.result_value().map_err(|e| PerfError::Refused {
                        method: method.clone(),
                        reason: e.to_string(),
                    });
                }
                Some(_) => {}
            }
        }
    };
    tokio::time::timeout(STEP_TIMEOUT, answer)
        .await
        .map_err(|_| PerfError::Stalled("a handshake step got no answer"))?
}

/// A light `tools/call` with this id: the one request, encoded once, with the id changed
/// (the client is shared by every row and its floor; its own work is kept small).
pub fn light_call(id: i64) -> Message {
    static LIGHT: LazyLock<Request> = LazyLock::new(|| {
        let params = CallToolParams {
            name: LIGHT_TOOL.to_owned(),
            arguments: Some(Map::new()),
            meta: None,
        };
        Request::new::<CallTool>(Id::Number(0), &params)
    });
    Request {
        id: Id::Number(id),
        ..LIGHT.clone()
    }
    .into()
}

/// A light `tools/call` as MCP 2026-07-28 sends it (the `modern` row): the same request
/// with the `_meta` every modern request carries (`basic/versioning.md`): the protocol
/// version, the client's info and its capabilities (none). Encoded once, the id changed.
pub fn modern_light_call(id: i64) -> Message {
    static LIGHT: LazyLock<Request> = LazyLock::new(|| {
        let mut meta = Map::new();
        meta.insert(
            modern::PROTOCOL_VERSION_KEY.to_owned(),
            Value::from(modern::MODERN_PROTOCOL_VERSION),
        );
        let info = Implementation::new("sim-perf", env!("CARGO_PKG_VERSION"));
        meta.insert(
            modern::CLIENT_INFO_KEY.to_owned(),
            serde_json::to_value(info).unwrap_or_default(),
        );
        meta.insert(
            modern::CLIENT_CAPABILITIES_KEY.to_owned(),
            Value::Object(Map::new()),
        );
        let params = CallToolParams {
            name: LIGHT_TOOL.to_owned(),
            arguments: Some(Map::new()),
            meta: Some(meta.into()),
        };
        Request::new::<CallTool>(Id::Number(0), &params)
    });
    Request {
        id: Id::Number(id),
        ..LIGHT.clone()
    }
    .into()
}

/// The answer to a light call, if `item` is one (a response with a numeric id).
pub fn answer_of(item: &Inbound) -> Option<Answer> {
    let Inbound::Message {
        message:
            Message::Response(Response {
                id: Some(Id::Number(id)),
                outcome,
            }),
        ..
    } = item
    else {
        return None;
    };
    let id = *id;
    let right = outcome.as_deref().is_ok_and(|r| right(r.get()));
    Some(if right {
        Answer::Ok(id)
    } else {
        Answer::Wrong(id)
    })
}

/// Whether `result` (a result's text) is the light tool's answer: not an error, its first
/// content block the light tool's text.
fn right(result: &str) -> bool {
    // Decoded straight from the result's text into the few members checked: the client is
    // shared by every row and its floor, and a full `CallToolResult` (content blocks are an
    // internally tagged enum, buffered before they are read) would cost it more than the
    // protocol's reading does.
    serde_json::from_str::<LightResult>(result).is_ok_and(|r| {
        !r.is_error
            && matches!(r.content.first(), Some(b) if b.kind == "text" && b.text.as_deref() == Some(LIGHT_TEXT))
    })
}

/// A JSON-RPC response's members that [`answer_in`] reads.
#[derive(serde::Deserialize)]
struct LightReply<'a> {
    #[serde(default)]
    id: Option<i64>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// The answer to a light call in `text`, one message's JSON, if it is one (a response with
/// a numeric id): [`answer_of`] for text not yet decoded, reading only what it checks.
pub fn answer_in(text: &str) -> Option<Answer> {
    let reply: LightReply = serde_json::from_str(text).ok()?;
    let id = reply.id?;
    let right = reply.error.is_none() && reply.result.is_some_and(|r| right(r.get()));
    Some(if right {
        Answer::Ok(id)
    } else {
        Answer::Wrong(id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_transport::StreamId;

    /// The answer in `wire`, read both ways (decoded, and straight from the text): they
    /// must agree.
    fn answer(wire: &str) -> Option<Answer> {
        let message = Message::decode(wire.as_bytes()).expect("a message");
        let decoded = answer_of(&Inbound::Message {
            stream: StreamId(0),
            message,
        });
        assert_eq!(answer_in(wire), decoded, "{wire}");
        decoded
    }

    /// Every light call is the same request but for its id.
    #[test]
    fn a_light_call_is_the_light_tool_with_no_arguments_and_its_own_id() {
        for id in [1, 7, -3] {
            let Message::Request(r) = light_call(id) else {
                panic!("a request");
            };
            assert_eq!((r.id, r.method.as_str()), (Id::Number(id), "tools/call"));
            let params: Value = serde_json::from_str(r.params.unwrap().get()).unwrap();
            assert_eq!(
                params,
                serde_json::json!({"name": LIGHT_TOOL, "arguments": {}})
            );
        }
    }

    /// A modern light call is the light call with the `_meta` of MCP 2026-07-28.
    #[test]
    fn a_modern_light_call_carries_the_version_and_the_client_in_its_meta() {
        let Message::Request(r) = modern_light_call(5) else {
            panic!("a request");
        };
        assert_eq!((r.id, r.method.as_str()), (Id::Number(5), "tools/call"));
        let params: Value = serde_json::from_str(r.params.unwrap().get()).unwrap();
        assert_eq!(params["name"], LIGHT_TOOL);
        assert_eq!(params["arguments"], serde_json::json!({}));
        let meta = &params["_meta"];
        assert_eq!(meta[modern::PROTOCOL_VERSION_KEY], "2026-07-28");
        assert_eq!(meta[modern::CLIENT_CAPABILITIES_KEY], serde_json::json!({}));
        assert_eq!(meta[modern::CLIENT_INFO_KEY]["name"], "sim-perf");
    }

    /// Only the light tool's text in a result that is not an error counts as right.
    #[test]
    fn answers_are_told_right_from_wrong_by_the_results_text() {
        let ok = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}]}}"#;
        assert_eq!(answer(ok), Some(Answer::Ok(7)));
        let with_more = r#"{"jsonrpc":"2.0","id":8,"result":{"content":[{"text":"ok","type":"text","annotations":{}}],"isError":false,"_meta":{"x":1}}}"#;
        assert_eq!(answer(with_more), Some(Answer::Ok(8)));
        let escaped = r#"{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"t\u0065xt","text":"\u006fk"}]}}"#;
        assert_eq!(
            answer(escaped),
            Some(Answer::Ok(8)),
            "escapes are read as what they spell"
        );
        for wrong in [
            r#"{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"ok"}],"isError":true}}"#,
            r#"{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"no"}]}}"#,
            r#"{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"image","data":"ok","mimeType":"image/png"}]}}"#,
            r#"{"jsonrpc":"2.0","id":9,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":9,"result":[]}"#,
            r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no"}}"#,
        ] {
            assert_eq!(answer(wrong), Some(Answer::Wrong(9)), "{wrong}");
        }
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":"s","result":{}}"#),
            None,
            "not a numeric id: not a light call's answer"
        );
    }
}

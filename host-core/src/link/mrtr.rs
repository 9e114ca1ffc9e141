//! Multi round-trip requests (MCP 2026-07-28 `basic/patterns/mrtr.md`): a modern server
//! that needs input answers `tools/call`, `prompts/get` or `resources/read` with an
//! `InputRequiredResult` (`resultType: "input_required"`, `inputRequests`,
//! `requestState`), and the client retries the request with `inputResponses` and the
//! `requestState` echoed unread. Pure: a result in, a verdict out.
//!
//! What this host answers, with nobody to ask (as `elicit.rs` does for the legacy era's
//! `elicitation/create`): a form whose every required field has a default the server
//! offered is accepted with those defaults, any other elicitation declined. Sampling,
//! roots and anything else are not declared, so a server should not ask them; one that
//! does gets the call failed with [`LinkError::InputDeclined`] naming what was asked,
//! rather than a made-up answer. **\[project\]** At most [`MAX_INPUT_ROUNDS`] retries per
//! call: a server that keeps asking ends with [`LinkError::InputRounds`], never a hang.

use super::elicit::unattended;
use super::error::LinkError;
use mcpl_protocol::client_features::{ElicitAction, ElicitParams, ElicitResult};
use mcpl_protocol::jsonrpc::{RawValue, member, to_raw};
use mcpl_protocol::method::Elicit;
use mcpl_protocol::method::Method;
use serde::Deserialize;
use serde_json::{Map, Value};

/// How many times one call is retried with answers before the link gives up.
pub const MAX_INPUT_ROUNDS: u32 = 8;

/// The `resultType` of an `InputRequiredResult`.
const INPUT_REQUIRED: &str = "input_required";

/// What to do with a modern result.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// The request's final answer (`resultType` `complete`, or absent: MCP
    /// `basic/index.md` says to read an absent one as `complete`).
    Final,
    /// Retry the request with these params.
    Retry(Box<RawValue>),
    /// The call fails.
    Fail(LinkError),
}

/// One entry of `inputRequests`.
#[derive(Deserialize)]
struct InputRequest {
    method: String,
    #[serde(default)]
    params: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InputRequired {
    #[serde(default)]
    input_requests: Option<Map<String, Value>>,
    #[serde(default)]
    request_state: Option<String>,
}

/// Reads `result`, the answer to `method` sent with `params` (unstamped) after `rounds`
/// retries.
pub fn read(
    method: &'static str,
    params: Option<&RawValue>,
    result: &RawValue,
    rounds: u32,
) -> Verdict {
    let kind = member(result, "resultType")
        .map(|t| serde_json::from_str::<String>(t.get()).map_err(|_| t.get().to_owned()));
    match kind {
        None => return Verdict::Final,
        Some(Ok(k)) if k == mcpl_protocol::modern::RESULT_COMPLETE => return Verdict::Final,
        Some(Ok(k)) if k == INPUT_REQUIRED => {}
        // "A resultType of any value unrecognized by the client MUST be considered invalid."
        Some(Ok(other)) | Some(Err(other)) => {
            return Verdict::Fail(LinkError::MalformedResult {
                method,
                detail: format!("resultType {other:?} is none this host knows"),
            });
        }
    }
    if rounds >= MAX_INPUT_ROUNDS {
        return Verdict::Fail(LinkError::InputRounds { method, rounds });
    }
    let asked: InputRequired = match mcpl_protocol::jsonrpc::decode_result(result) {
        Ok(a) => a,
        Err(e) => {
            return Verdict::Fail(LinkError::MalformedResult {
                method,
                detail: e.0,
            });
        }
    };
    let mut responses = Map::new();
    for (key, request) in asked.input_requests.unwrap_or_default() {
        let request: InputRequest = match serde_json::from_value(request) {
            Ok(r) => r,
            Err(e) => {
                return Verdict::Fail(LinkError::MalformedResult {
                    method,
                    detail: format!("inputRequests[{key:?}]: {e}"),
                });
            }
        };
        if request.method != Elicit::NAME {
            return Verdict::Fail(LinkError::InputDeclined {
                method,
                asked: request.method,
            });
        }
        let answer = match request.params.map(serde_json::from_value::<ElicitParams>) {
            Some(Ok(params)) => {
                let (answer, why) = unattended(&params);
                tracing::info!(question = %params.message, action = answer.action.as_str(), "the server asked for input: {why}");
                answer
            }
            // A question this host cannot read is declined, as `elicit.rs` declines a form
            // it cannot read.
            _ => ElicitResult {
                action: ElicitAction::Decline,
                content: None,
                meta: None,
            },
        };
        responses.insert(key, serde_json::to_value(&answer).unwrap_or(Value::Null));
    }
    let mut retry = params
        .and_then(|p| serde_json::from_str::<Map<String, Value>>(p.get()).ok())
        .unwrap_or_default();
    // Only this round's answers and state go back (MRTR "Client Requirements": they "affect
    // only the client's retry"); an earlier round's are replaced.
    retry.remove("inputResponses");
    retry.remove("requestState");
    if !responses.is_empty() {
        retry.insert("inputResponses".to_owned(), Value::Object(responses));
    }
    if let Some(state) = asked.request_state {
        retry.insert("requestState".to_owned(), Value::String(state));
    }
    Verdict::Retry(to_raw(&retry))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(v: Value) -> Box<RawValue> {
        to_raw(&v)
    }

    fn retry_params(v: Verdict) -> Value {
        match v {
            Verdict::Retry(p) => serde_json::from_str(p.get()).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    fn form(required: Value, properties: Value) -> Value {
        json!({"method": "elicitation/create", "params": {"mode": "form", "message": "?",
            "requestedSchema": {"type": "object", "properties": properties, "required": required}}})
    }

    #[test]
    fn complete_and_absent_result_types_are_final_and_others_invalid() {
        let p = raw(json!({}));
        assert!(matches!(
            read("tools/call", None, &raw(json!({"content": []})), 0),
            Verdict::Final
        ));
        assert!(matches!(
            read(
                "tools/call",
                None,
                &raw(json!({"resultType": "complete"})),
                0
            ),
            Verdict::Final
        ));
        assert!(matches!(
            read(
                "tools/call",
                Some(&p),
                &raw(json!({"resultType": "task"})),
                0
            ),
            Verdict::Fail(LinkError::MalformedResult { .. })
        ));
    }

    #[test]
    fn a_defaultable_form_is_answered_and_the_state_echoed() {
        let params = raw(json!({"name": "t", "arguments": {"x": 1}, "requestState": "old"}));
        let result = raw(json!({"resultType": "input_required",
            "inputRequests": {"q": form(json!(["size"]), json!({"size": {"type": "integer", "default": 9}})),
                              "n": form(json!(["name"]), json!({"name": {"type": "string"}}))},
            "requestState": "opaque ∆"}));
        let v = retry_params(read("tools/call", Some(&params), &result, 0));
        assert_eq!(v["name"], "t");
        assert_eq!(v["arguments"], json!({"x": 1}));
        assert_eq!(v["requestState"], "opaque ∆");
        assert_eq!(
            v["inputResponses"]["q"],
            json!({"action": "accept", "content": {"size": 9}})
        );
        assert_eq!(v["inputResponses"]["n"], json!({"action": "decline"}));
    }

    #[test]
    fn without_a_state_none_is_sent_back() {
        let params = raw(json!({"name": "t", "requestState": "earlier"}));
        let result = raw(json!({"resultType": "input_required",
            "inputRequests": {"q": form(json!([]), json!({}))}}));
        let v = retry_params(read("tools/call", Some(&params), &result, 1));
        assert!(v.get("requestState").is_none());
    }

    #[test]
    fn sampling_and_roots_are_declined_and_rounds_are_bounded() {
        for asked in ["sampling/createMessage", "roots/list"] {
            let result = raw(json!({"resultType": "input_required",
                "inputRequests": {"a": {"method": asked, "params": {}}}}));
            assert!(matches!(
                read("tools/call", None, &result, 0),
                Verdict::Fail(LinkError::InputDeclined { method: "tools/call", asked: a }) if a == asked
            ));
        }
        let again = raw(json!({"resultType": "input_required", "requestState": "s"}));
        assert!(matches!(
            read("tools/call", None, &again, MAX_INPUT_ROUNDS - 1),
            Verdict::Retry(_)
        ));
        assert!(matches!(
            read("tools/call", None, &again, MAX_INPUT_ROUNDS),
            Verdict::Fail(LinkError::InputRounds {
                method: "tools/call",
                rounds: MAX_INPUT_ROUNDS
            })
        ));
    }
}

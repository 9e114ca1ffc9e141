//! `mcpl-host console`: a JSON-lines protocol for scripts and tests to play the agent.
//!
//! In, one object per line, each with an `id` (any JSON; echoed back) and one request:
//!
//! | line | answer |
//! |---|---|
//! | `{"id":…,"tool":NAME,"args":{…}}` | `{"id":…,"result":CallToolResult}` — a meta-tool or a static `server--tool`, called as the agent would |
//! | `{"id":…,"tools":true}` | `{"id":…,"tools":[Tool…]}` — the model's tool list |
//! | `{"id":…,"transcript":true}` | `{"id":…,"transcript":[Shown…]}` — the messages shown to the agent since the last such request |
//! | `{"id":…,"turn":true}` | `{"id":…,"reminder":Shown\|null}` — the agent's turn starts (a reminder if one is due; a notice of what the last turn left out comes first, as an event) |
//! | `{"id":…,"boundary":true}` | `{"id":…,"tools":[Tool…]}` — a tool-list boundary, then the list |
//! | `{"id":…,"compact":true}` | `{"id":…,"tools":[Tool…]}` — a compaction (and its boundary), then the list |
//!
//! Out, besides the answers: `{"event":Shown}` for each notice, push or reminder as it is
//! shown — at most 32 KiB of them between two of the agent's actions (a `turn` or a
//! `tool`), the rest left out and counted in a notice at the next. A line that cannot be read is answered `{"id":…,"error":"…"}` (`id` null when
//! it could not be found); the console goes on. `Shown` is `{"seq","kind","server"?,"text"}`,
//! `kind` one of `notice`, `push`, `reminder`, `tool_result`. The binary reads its first
//! line once every server has settled or turned out unreachable; end of input ends it.

use crate::host::Shown;
use mcpl_protocol::{CallToolResult, Tool};
use serde_json::{Map, Value, json};

/// One request.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Call a tool as the agent.
    Call {
        /// The tool.
        tool: String,
        /// Its arguments (`null` when left out).
        args: Value,
    },
    /// The model's tool list.
    Tools,
    /// The messages since the last transcript.
    Transcript,
    /// The agent's turn starts.
    Turn,
    /// A tool-list boundary.
    Boundary,
    /// A compaction.
    Compact,
}

/// Why a line is not a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// Not JSON.
    #[error("the line is not JSON: {0}")]
    NotJson(String),
    /// JSON, but not an object.
    #[error("the line must be a JSON object")]
    NotAnObject,
    /// No request member, or more than one.
    #[error(
        "the line must carry exactly one of \"tool\", \"tools\", \"transcript\", \"turn\", \"boundary\", \"compact\""
    )]
    NoRequest,
    /// A member of the wrong type.
    #[error("{member}: {expected}")]
    BadMember {
        /// The member.
        member: &'static str,
        /// What it must be.
        expected: &'static str,
    },
}

/// A line read: its `id` (null when none could be found) and the request, or why not.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The `id` to answer with.
    pub id: Value,
    /// The request.
    pub request: Result<Request, LineError>,
}

const FLAGS: [(&str, Request); 5] = [
    ("tools", Request::Tools),
    ("transcript", Request::Transcript),
    ("turn", Request::Turn),
    ("boundary", Request::Boundary),
    ("compact", Request::Compact),
];

/// Reads one line.
pub fn parse(line: &str) -> Line {
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return Line {
                id: Value::Null,
                request: Err(LineError::NotJson(e.to_string())),
            };
        }
    };
    let Value::Object(obj) = value else {
        return Line {
            id: Value::Null,
            request: Err(LineError::NotAnObject),
        };
    };
    Line {
        id: obj.get("id").cloned().unwrap_or(Value::Null),
        request: request(&obj),
    }
}

fn request(obj: &Map<String, Value>) -> Result<Request, LineError> {
    let flags: Vec<&(&str, Request)> = FLAGS.iter().filter(|(k, _)| obj.contains_key(*k)).collect();
    match (obj.get("tool"), flags.as_slice()) {
        (Some(tool), []) => {
            let tool = tool.as_str().ok_or(LineError::BadMember {
                member: "tool",
                expected: "a tool's name (a string)",
            })?;
            let args = obj.get("args").cloned().unwrap_or(Value::Null);
            if !(args.is_null() || args.is_object()) {
                return Err(LineError::BadMember {
                    member: "args",
                    expected: "an object",
                });
            }
            Ok(Request::Call {
                tool: tool.to_owned(),
                args,
            })
        }
        (None, [(key, req)]) => {
            if obj.get(*key) != Some(&Value::Bool(true)) {
                return Err(LineError::BadMember {
                    member: key,
                    expected: "true",
                });
            }
            Ok(req.clone())
        }
        _ => Err(LineError::NoRequest),
    }
}

fn line(v: Value) -> String {
    v.to_string()
}

/// `{"id":…,"result":…}`.
pub fn result(id: &Value, r: &CallToolResult) -> String {
    line(json!({"id": id, "result": r}))
}

/// `{"id":…,"tools":[…]}`.
pub fn tools(id: &Value, t: &[Tool]) -> String {
    line(json!({"id": id, "tools": t}))
}

/// `{"id":…,"transcript":[…]}`.
pub fn transcript(id: &Value, shown: &[Shown]) -> String {
    line(json!({"id": id, "transcript": shown}))
}

/// `{"id":…,"reminder":…}`.
pub fn reminder(id: &Value, r: Option<&Shown>) -> String {
    line(json!({"id": id, "reminder": r}))
}

/// `{"id":…,"error":"…"}`.
pub fn error(id: &Value, message: &str) -> String {
    line(json!({"id": id, "error": message}))
}

/// `{"event":…}`.
pub fn event(shown: &Shown) -> String {
    line(json!({ "event": shown }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_read_by_their_member() {
        let l = parse(r#"{"id":1,"tool":"toolsets--look","args":{"server":"arcade"}}"#);
        assert_eq!(l.id, json!(1));
        assert_eq!(
            l.request,
            Ok(Request::Call {
                tool: "toolsets--look".into(),
                args: json!({"server": "arcade"})
            })
        );
        assert_eq!(
            parse(r#"{"id":"a","tool":"arcade--clock"}"#).request,
            Ok(Request::Call {
                tool: "arcade--clock".into(),
                args: Value::Null
            })
        );
        assert_eq!(
            parse(r#"{"id":2,"tools":true}"#).request,
            Ok(Request::Tools)
        );
        assert_eq!(
            parse(r#"{"transcript":true}"#).request,
            Ok(Request::Transcript)
        );
        assert_eq!(parse(r#"{"id":3,"turn":true}"#).request, Ok(Request::Turn));
        assert_eq!(parse(r#"{"boundary":true}"#).request, Ok(Request::Boundary));
        assert_eq!(parse(r#"{"compact":true}"#).request, Ok(Request::Compact));
    }

    #[test]
    fn bad_lines_say_why_and_keep_the_id_when_there_is_one() {
        let l = parse("not json");
        assert_eq!(l.id, Value::Null);
        assert!(matches!(l.request, Err(LineError::NotJson(_))));
        assert_eq!(parse("[1]").request, Err(LineError::NotAnObject));
        let l = parse(r#"{"id":7}"#);
        assert_eq!((l.id, l.request), (json!(7), Err(LineError::NoRequest)));
        assert_eq!(
            parse(r#"{"id":7,"tools":true,"transcript":true}"#).request,
            Err(LineError::NoRequest)
        );
        assert_eq!(
            parse(r#"{"id":7,"tool":"x","tools":true}"#).request,
            Err(LineError::NoRequest)
        );
        assert!(matches!(
            parse(r#"{"id":7,"tool":5}"#).request,
            Err(LineError::BadMember { member: "tool", .. })
        ));
        assert!(matches!(
            parse(r#"{"id":7,"tool":"x","args":[1]}"#).request,
            Err(LineError::BadMember { member: "args", .. })
        ));
        assert!(matches!(
            parse(r#"{"id":7,"tools":1}"#).request,
            Err(LineError::BadMember {
                member: "tools",
                ..
            })
        ));
    }

    #[test]
    fn answers_are_one_json_object_each() {
        let r = result(&json!(1), &CallToolResult::text("ok"));
        assert_eq!(
            serde_json::from_str::<Value>(&r).unwrap(),
            json!({"id": 1, "result": {"content": [{"type": "text", "text": "ok"}]}})
        );
        assert!(!r.contains('\n'));
        assert_eq!(
            serde_json::from_str::<Value>(&error(&Value::Null, "bad")).unwrap(),
            json!({"id": null, "error": "bad"})
        );
    }
}

//! What a server may ask of its client (MCP 2025-11-25, "Client Features"): a model
//! completion (`sampling/createMessage`), input from the user (`elicitation/create`) and
//! the client's roots, the directories or files it lets the server work in (`roots/list`).
//!
//! A server sends these only while it serves one of the client's requests (MCP 2025-11-25:
//! a tool call, say) and only when the client declared the capability in `initialize`
//! ([`ClientCapabilities::supports_sampling`], [`ClientCapabilities::supports_elicitation`]).
//!
//! The types keep what they do not model: sampling content is kept as JSON, since MCP
//! 2025-11-25 lets it be one block or an array, and of kinds a tool result never holds
//! (`tool_use`, `tool_result`); sampling's and elicitation's further members (model
//! preferences, tools, URL-mode elicitation's `url` and `elicitationId`) are kept in
//! `other`, so nothing a peer sends is lost on the way through.

use crate::mcp::ClientCapabilities;
use crate::meta::{Meta, is_none_or_empty};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The client capability for `sampling/createMessage`.
pub const SAMPLING_CAPABILITY: &str = "sampling";

/// The client capability for `elicitation/create`.
pub const ELICITATION_CAPABILITY: &str = "elicitation";

/// The client capability for `roots/list`.
pub const ROOTS_CAPABILITY: &str = "roots";

impl ClientCapabilities {
    /// True when the client declared `sampling`: it answers `sampling/createMessage`.
    pub fn supports_sampling(&self) -> bool {
        self.other
            .get(SAMPLING_CAPABILITY)
            .is_some_and(Value::is_object)
    }

    /// True when the client declared `roots`: it answers `roots/list`.
    pub fn supports_roots(&self) -> bool {
        self.other
            .get(ROOTS_CAPABILITY)
            .is_some_and(Value::is_object)
    }

    /// True when the client declared `elicitation` with form mode: it answers
    /// `elicitation/create` with a `requestedSchema`. MCP 2025-11-25: an empty
    /// `"elicitation": {}` means form mode, as it did before modes existed; a client that
    /// lists modes must list `form`.
    pub fn supports_elicitation(&self) -> bool {
        match self.other.get(ELICITATION_CAPABILITY) {
            Some(Value::Object(modes)) => {
                let listed = modes.contains_key("form") || modes.contains_key("url");
                !listed || modes.get("form").is_some_and(Value::is_object)
            }
            _ => false,
        }
    }
}

/// Who speaks a sampling message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// One content block, or an array of them, as JSON (see the module docs).
    pub content: Value,
    /// `_meta`, kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A user message of one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::User,
            content: json!({"type": "text", "text": text.into()}),
            meta: None,
        }
    }
}

/// `sampling/createMessage` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens the client should sample (`1024.0` is `1024`, RFC 8259).
    #[serde(deserialize_with = "crate::meta::deserialize_count")]
    pub max_tokens: u64,
    /// A system prompt the client may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// The rest (`modelPreferences`, `includeContext`, `metadata`, `tools`, `toolChoice`, …).
    #[serde(flatten)]
    pub other: Map<String, Value>,
    /// `_meta`, kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

impl CreateMessageParams {
    /// Asks for at most `max_tokens` tokens in answer to one user text.
    pub fn user_text(text: impl Into<String>, max_tokens: u64) -> Self {
        CreateMessageParams {
            messages: vec![SamplingMessage::user_text(text)],
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: None,
            other: Map::new(),
            meta: None,
        }
    }
}

/// `sampling/createMessage` result: the sampled message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who speaks (the model: `assistant`).
    pub role: Role,
    /// One content block, or an array of them, as JSON.
    pub content: Value,
    /// The model that sampled it.
    pub model: String,
    /// Why sampling stopped (`endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or another).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Members this type does not model, kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
    /// `_meta`, kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

impl CreateMessageResult {
    /// The text of the content's text blocks, joined with newlines; empty when it has none.
    pub fn text(&self) -> String {
        let blocks = match &self.content {
            Value::Array(blocks) => blocks.as_slice(),
            one => std::slice::from_ref(one),
        };
        blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `elicitation/create` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    /// What to ask the user.
    pub message: String,
    /// Form mode: the JSON Schema of the answer (an object of primitive-typed properties).
    /// Absent in URL mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
    /// `form` or `url`; absent means form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The rest (URL mode's `url` and `elicitationId`, …).
    #[serde(flatten)]
    pub other: Map<String, Value>,
    /// `_meta`, kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

impl ElicitParams {
    /// A form-mode request: `message`, answered by an object matching `schema`.
    pub fn form(message: impl Into<String>, schema: Value) -> Self {
        ElicitParams {
            message: message.into(),
            requested_schema: Some(schema),
            mode: None,
            other: Map::new(),
            meta: None,
        }
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form: `content` holds the answer.
    Accept,
    /// Said no.
    Decline,
    /// Dismissed it without choosing.
    Cancel,
}

impl ElicitAction {
    /// The wire name: `accept`, `decline` or `cancel`.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitAction::Accept => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }
}

/// `elicitation/create` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The answer, when accepted in form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    /// `_meta`, kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// A root: a directory or file the client lets the server work in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// Its URI (MCP 2025-11-25: a `file://` URI).
    pub uri: String,
    /// A name to show for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `_meta`, kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

/// `roots/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The client's roots now.
    pub roots: Vec<Root>,
    /// `_meta`, kept as sent.
    #[serde(rename = "_meta", default, skip_serializing_if = "is_none_or_empty")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(v: Value) -> ClientCapabilities {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn capabilities_say_what_the_client_answers() {
        assert!(!caps(json!({})).supports_sampling());
        assert!(caps(json!({"sampling": {}})).supports_sampling());
        assert!(caps(json!({"sampling": {"tools": {}}})).supports_sampling());
        assert!(!caps(json!({"sampling": true})).supports_sampling());

        assert!(!caps(json!({})).supports_roots());
        assert!(caps(json!({"roots": {"listChanged": true}})).supports_roots());

        assert!(!caps(json!({})).supports_elicitation());
        assert!(caps(json!({"elicitation": {}})).supports_elicitation());
        assert!(caps(json!({"elicitation": {"form": {}}})).supports_elicitation());
        assert!(caps(json!({"elicitation": {"form": {}, "url": {}}})).supports_elicitation());
        assert!(!caps(json!({"elicitation": {"url": {}}})).supports_elicitation());
        assert!(!caps(json!({"elicitation": null})).supports_elicitation());
    }

    #[test]
    fn max_tokens_written_as_a_double_is_the_same_count() {
        let read = |n: Value| {
            serde_json::from_value::<CreateMessageParams>(json!({"messages": [], "maxTokens": n}))
        };
        assert_eq!(read(json!(1024.0)).unwrap().max_tokens, 1024);
        assert!(read(json!(10.5)).is_err());
        assert!(read(json!(-1)).is_err());
    }

    #[test]
    fn a_result_s_text_joins_its_text_blocks() {
        let one: CreateMessageResult = serde_json::from_value(json!({
            "role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"
        }))
        .unwrap();
        assert_eq!(one.text(), "hi");
        let many: CreateMessageResult = serde_json::from_value(json!({
            "role": "assistant", "model": "m", "content": [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "", "mimeType": "image/png"},
                {"type": "text", "text": "b"}
            ]
        }))
        .unwrap();
        assert_eq!(many.text(), "a\nb");
    }
}

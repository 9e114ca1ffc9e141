//! What a server offers besides tools (MCP "Server Features", both 2025-11-25 and
//! 2026-07-28): resources (`resources/list`, `resources/templates/list`, `resources/read`),
//! prompts (`prompts/list`, `prompts/get`) and argument completion (`completion/complete`).
//!
//! Decoded liberally: members this crate does not know (`icons`, `annotations`, `_meta`, a
//! later revision's additions) are kept in each type's `other` and written back as they
//! came, never refused.

use crate::client_features::Role;
use crate::mcp::ContentBlock;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// `resources` in the server's capabilities.
pub const RESOURCES_CAPABILITY: &str = "resources";
/// `prompts` in the server's capabilities.
pub const PROMPTS_CAPABILITY: &str = "prompts";
/// `completions` in the server's capabilities.
pub const COMPLETIONS_CAPABILITY: &str = "completions";
/// The most values one `completion/complete` result may carry (MCP completion: "MUST NOT
/// exceed 100 items").
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What MCP's schema gives both a [`Resource`] and a [`ResourceTemplate`]: its name, a
/// title, what it is and its MIME type (flattened into each: the same members on the wire).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    /// Its name.
    pub name: String,
    /// A title for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is (a template: what its resources are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type (a template: when all its resources share one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

impl ResourceInfo {
    /// Named `name`, of `mime_type`, described by `description`, with no title.
    pub fn new(
        name: impl Into<String>,
        mime_type: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        ResourceInfo {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            mime_type: Some(mime_type.into()),
        }
    }

    /// The same, with a title for display.
    pub fn titled(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// A resource a server lists (MCP `Resource`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// Its URI, which `resources/read` names.
    pub uri: String,
    /// Its name, title, description and MIME type.
    #[serde(flatten)]
    pub info: ResourceInfo,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Every other member, kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Resource {
    /// A resource at `uri` described by `info`.
    pub fn new(uri: impl Into<String>, info: ResourceInfo) -> Self {
        Resource {
            uri: uri.into(),
            info,
            size: None,
            other: Map::new(),
        }
    }
}

/// A family of resources named by an RFC 6570 URI template (MCP `ResourceTemplate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The template (`game://{instance}/board`).
    pub uri_template: String,
    /// Its name, title, description and MIME type.
    #[serde(flatten)]
    pub info: ResourceInfo,
    /// Every other member, kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl ResourceTemplate {
    /// A template `uri_template` described by `info`.
    pub fn new(uri_template: impl Into<String>, info: ResourceInfo) -> Self {
        ResourceTemplate {
            uri_template: uri_template.into(),
            info,
            other: Map::new(),
        }
    }
}

/// What a resource holds: text, or binary data in base64 (MCP `TextResourceContents`,
/// `BlobResourceContents`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// The URI these contents are of.
    pub uri: String,
    /// Their MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Binary contents, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// Every other member, kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl ResourceContents {
    /// Text contents of `uri`.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: Some(text.into()),
            blob: None,
            other: Map::new(),
        }
    }

    /// Binary contents of `uri`, given in base64.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        base64: impl Into<String>,
    ) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: None,
            blob: Some(base64.into()),
            other: Map::new(),
        }
    }
}

/// The params of a list request: where the page starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListParams {
    /// The cursor of the page asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Every other member (`_meta`, …), kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `resources/list`'s result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// The resources.
    pub resources: Vec<Resource>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `resources/templates/list`'s result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// The templates.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `resources/read`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceParams {
    /// The resource.
    pub uri: String,
    /// Every other member (`_meta`, …), kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `resources/read`'s result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// What the resource holds (one or more parts).
    pub contents: Vec<ResourceContents>,
}

/// One argument a prompt takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

impl PromptArgument {
    /// A required argument.
    pub fn required(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required: Some(true),
        }
    }

    /// An optional argument.
    pub fn optional(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required: None,
        }
    }
}

/// A prompt a server lists (MCP `Prompt`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Its name, which `prompts/get` names.
    pub name: String,
    /// A title for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
    /// Every other member, kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Prompt {
    /// A prompt `name` described by `description`, taking `arguments`.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        arguments: Vec<PromptArgument>,
    ) -> Self {
        Prompt {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            arguments,
            other: Map::new(),
        }
    }

    /// The same, with a title for display.
    pub fn titled(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// `prompts/get`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptParams {
    /// The prompt.
    pub name: String,
    /// Its arguments, each a string.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub arguments: BTreeMap<String, String>,
    /// Every other member (`_meta`, …), kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A user message of `text`.
    pub fn user(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::User,
            content: ContentBlock::text(text),
        }
    }

    /// A user message of `content`.
    pub fn user_content(content: ContentBlock) -> Self {
        PromptMessage {
            role: Role::User,
            content,
        }
    }
}

/// `prompts/get`'s result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// What the prompt is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its messages.
    pub messages: Vec<PromptMessage>,
}

/// `prompts/list`'s result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// The prompts.
    pub prompts: Vec<Prompt>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// What `completion/complete` completes an argument of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionRef {
    /// A prompt's argument.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt.
        name: String,
    },
    /// A resource template's variable.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The template.
        uri: String,
    },
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionArgument {
    /// Its name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
}

/// Arguments already given, which a completion may depend on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompletionContext {
    /// Each argument already resolved.
    #[serde(default)]
    pub arguments: BTreeMap<String, String>,
}

/// `completion/complete`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteParams {
    /// What is completed.
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    /// The argument.
    pub argument: CompletionArgument,
    /// Arguments already given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// Every other member (`_meta`, …), kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The values a completion offers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most [`MAX_COMPLETION_VALUES`] values.
    pub values: Vec<String>,
    /// How many there are in all, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// `values` cut to [`MAX_COMPLETION_VALUES`], with the total and whether some were cut.
    pub fn of(mut values: Vec<String>) -> Self {
        let total = values.len();
        values.truncate(MAX_COMPLETION_VALUES);
        Completion {
            has_more: Some(total > values.len()),
            total: Some(total as u64),
            values,
        }
    }
}

/// `completion/complete`'s result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompleteResult {
    /// The values.
    pub completion: Completion,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn issue39_07_the_spec_examples_read_and_write_back() {
        let listed = json!({"uri": "file:///project/src/main.rs", "name": "main.rs",
            "title": "Rust Software Application Main File", "description": "Primary application entry point",
            "mimeType": "text/x-rust", "icons": [{"src": "https://example.com/rust-file-icon.png"}]});
        let r: Resource = serde_json::from_value(listed.clone()).unwrap();
        assert_eq!(r.info.mime_type.as_deref(), Some("text/x-rust"));
        assert_eq!(serde_json::to_value(&r).unwrap(), listed, "icons kept");
        let template = json!({"uriTemplate": "file:///{path}", "name": "Project Files"});
        let t: ResourceTemplate = serde_json::from_value(template.clone()).unwrap();
        assert_eq!(serde_json::to_value(&t).unwrap(), template);
        let prompt = json!({"name": "code_review", "arguments": [
            {"name": "code", "description": "The code to review", "required": true}]});
        let p: Prompt = serde_json::from_value(prompt.clone()).unwrap();
        assert_eq!(serde_json::to_value(&p).unwrap(), prompt);
        let complete = json!({"ref": {"type": "ref/prompt", "name": "code_review"},
            "argument": {"name": "language", "value": "py"},
            "context": {"arguments": {"framework": "flask"}}});
        let c: CompleteParams = serde_json::from_value(complete.clone()).unwrap();
        assert_eq!(
            c.reference,
            CompletionRef::Prompt {
                name: "code_review".into()
            }
        );
        assert_eq!(serde_json::to_value(&c).unwrap(), complete);
        let read = json!({"contents": [{"uri": "file:///example.png", "mimeType": "image/png",
            "blob": "AA=="}]});
        let rr: ReadResourceResult = serde_json::from_value(read.clone()).unwrap();
        assert_eq!(serde_json::to_value(&rr).unwrap(), read);
    }

    #[test]
    fn issue39_07_a_completion_carries_at_most_a_hundred_values() {
        let c = Completion::of((0..150).map(|i| i.to_string()).collect());
        assert_eq!(
            (c.values.len(), c.total, c.has_more),
            (100, Some(150), Some(true))
        );
        let c = Completion::of(vec!["a".into()]);
        assert_eq!(
            (c.values.len(), c.total, c.has_more),
            (1, Some(1), Some(false))
        );
    }
}

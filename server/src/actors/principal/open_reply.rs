//! What an open came to ([`OpenReply`]), put in the asker's terms: a host's
//! `toolsets/open` result, a tool handler's [`Opened`], or a plain host's `toolset_open`
//! text (§8).

use super::{AnswerBody, HandlerAnswer, Via};
use crate::author::Refusal;
use crate::core::{InstanceKey, OpenError};
use crate::tool::outcome::{OpenToolsetError, Opened};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject};
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
use mcpl_protocol::toolsets::ToolsetsOpenResult;

/// What an open came to, before it is put in the asker's terms ([`OpenReply::body`]).
pub(super) enum OpenReply {
    /// A new instance, or a joined one.
    Opened {
        key: InstanceKey,
        title: Option<String>,
        content: Vec<ContentBlock>,
    },
    /// What was open, adopted (§4.2, vector 17); `text` says so.
    Adopted {
        key: InstanceKey,
        title: Option<String>,
        text: String,
    },
    /// Refused by the rules (§4.1, §4.2).
    Invalid(OpenError),
    /// Refused by the toolset's logic.
    Refused(Refusal),
    /// The toolset's logic failed.
    Failed,
}

impl OpenReply {
    /// The answer: `toolsets/open`'s result or error, a compat tool's result (§8: the
    /// model reads why as a tool error), or a handler's typed outcome.
    pub(super) fn body(self, via: Via) -> AnswerBody {
        match via {
            Via::Rpc => AnswerBody::Open(match self {
                OpenReply::Opened {
                    key,
                    title,
                    content,
                } => Ok(ToolsetsOpenResult {
                    instance: key.instance,
                    title,
                    adopted: None,
                    content: (!content.is_empty()).then_some(content),
                    meta: None,
                }),
                OpenReply::Adopted { key, title, text } => Ok(ToolsetsOpenResult {
                    instance: key.instance,
                    title,
                    adopted: Some(true),
                    content: Some(vec![ContentBlock::text(text)]),
                    meta: None,
                }),
                OpenReply::Invalid(e) => Err(e.to_error_object()),
                OpenReply::Refused(r) => Err(ErrorObject::new(
                    ErrorCode::INVALID_PARAMS,
                    r.message().to_owned(),
                )),
                OpenReply::Failed => Err(failed()),
            }),
            Via::Compat => AnswerBody::Call(Ok(match self {
                OpenReply::Opened {
                    key,
                    title,
                    content,
                } => compat_opened(&key, title.as_deref(), content),
                OpenReply::Adopted { text, .. } => CallToolResult::text(text),
                OpenReply::Invalid(e) => CallToolResult::error(e.to_string()),
                OpenReply::Refused(r) => CallToolResult::error(r.message()),
                OpenReply::Failed => CallToolResult::error(failed().message),
            })),
            Via::Handler(token) => {
                let outcome = match self {
                    OpenReply::Opened {
                        key,
                        title,
                        content,
                    } => Ok(Opened {
                        toolset: key.toolset,
                        instance: key.instance,
                        title,
                        adopted: false,
                        content,
                    }),
                    OpenReply::Adopted { key, title, text } => Ok(Opened {
                        toolset: key.toolset,
                        instance: key.instance,
                        title,
                        adopted: true,
                        content: vec![ContentBlock::text(text)],
                    }),
                    OpenReply::Invalid(e) => Err(OpenToolsetError::Invalid(e)),
                    OpenReply::Refused(r) => Err(OpenToolsetError::Refused(r)),
                    OpenReply::Failed => Err(OpenToolsetError::Failed),
                };
                AnswerBody::Handler {
                    token,
                    answer: HandlerAnswer::Open(outcome),
                }
            }
        }
    }
}

pub(super) fn failed() -> ErrorObject {
    ErrorObject::internal("the toolset failed to open")
}

/// What a host without `toolHints` reads after `toolset_open` (§8).
fn compat_opened(
    key: &InstanceKey,
    title: Option<&str>,
    content: Vec<ContentBlock>,
) -> CallToolResult {
    let mut text = format!("Opened {key}");
    if let Some(t) = title {
        text.push_str(&format!(" ({t})"));
    }
    if key.instance.is_some() {
        text.push_str(". Name it as the `instance` argument of its tools when several are open");
    }
    text.push('.');
    let mut blocks = vec![ContentBlock::text(text)];
    blocks.extend(content);
    CallToolResult {
        content: blocks,
        ..Default::default()
    }
}

//! What the principal answers, in the asker's terms (§4.2, §8): where a request came from
//! ([`Via`]), where its answer goes ([`ReplyTo`]), the answers ([`Answer`]), and what goes to
//! a session ([`Deliver`]). An open's or a close's outcome becomes a host's
//! `toolsets/open|close` result, a plain host's compat-tool text (§8) or a handler's typed
//! outcome here, in one place.

use crate::author::{Event, Refusal};
use crate::ids::SessionId;
use crate::store::records::NotKept;
use crate::tool::outcome::{CloseToolsetError, OpenToolsetError, Opened};
use crate::{CloseError, HintDraft, InstanceKey, OpenError};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Id};
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
use mcpl_protocol::meta::Meta;
use mcpl_protocol::toolsets::{ToolsetsCloseResult, ToolsetsOpenResult};
use serde_json::{Map, Value};

/// How a request reached the principal: as `toolsets/open|close` from a host with
/// `toolHints`, as the `toolset_open`/`toolset_close` tools of a host without (§8), or from
/// a tool handler acting for its caller (`ToolContext::open_toolset`), whose session knows
/// the handler by this token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `toolsets/open|close` from a host with `toolHints`.
    Rpc,
    /// The compat tools of a host without `toolHints` (§8).
    Compat,
    /// A tool handler acting for its caller, by its token.
    Handler(u64),
}

/// Where the answer to a request goes. For a handler's request, `request` is the handler's
/// `tools/call`: the changes are held for its result (§5.3).
#[derive(Debug, Clone)]
pub struct ReplyTo {
    /// The session that asked.
    pub session: SessionId,
    /// The request's id.
    pub request: Id,
    /// How it came.
    pub via: Via,
}

/// Changes to the principal's state, with what explains them: answers to this session's
/// requests (which carry the changes, §5.3), events (pushed with them), or neither
/// (`tools/hints`). The session carries it as `server-core/src/carrier.rs` decides.
#[derive(Debug)]
pub struct Deliver {
    /// The instance the changes and events are about (the push's `toolset`/`instance`).
    pub about: Option<InstanceKey>,
    /// The changes.
    pub draft: HintDraft,
    /// Answers to this session's requests.
    pub answers: Vec<Answer>,
    /// Events explaining the changes.
    pub events: Vec<Event>,
    /// A call of this session, still waiting, whose result is to carry the draft (§5.3:
    /// `InstanceContext::hold_for`); see `server-core/src/carrier.rs`.
    pub hold: Option<Id>,
}

/// The answer to one of the session's requests.
#[derive(Debug)]
pub struct Answer {
    /// The request's id.
    pub request: Id,
    /// The answer.
    pub body: AnswerBody,
    /// A deferred call answered by a step something else caused (another's move, a
    /// timer): the delivery's changes and events are that something's, not the call's
    /// (§5.3). See `server-core/src/carrier.rs` for what that changes when the call was cancelled.
    pub deferred: bool,
}

/// What a request is answered with.
#[derive(Debug)]
pub enum AnswerBody {
    /// A `tools/call`'s result.
    Call(Result<CallToolResult, ErrorObject>),
    /// A `toolsets/open`'s result.
    Open(Result<ToolsetsOpenResult, ErrorObject>),
    /// A `toolsets/close`'s result.
    Close(Result<ToolsetsCloseResult, ErrorObject>),
    /// The call goes to a tool's own handler, which the session runs.
    RunHandler {
        /// The tool.
        tool: String,
        /// The call's arguments.
        arguments: Option<Map<String, Value>>,
        /// The instance it names.
        instance: Option<String>,
        /// The call's `_meta`.
        meta: Option<Meta>,
        /// A loose tool: the session may run its later calls itself (`server-core/src/session.rs`:
        /// direct calls).
        direct: bool,
    },
    /// What a tool handler asked for (`Via::Handler(token)`); the draft is held for the
    /// handler's result.
    Handler {
        /// The handler's token.
        token: u64,
        /// The answer.
        answer: HandlerAnswer,
    },
}

impl AnswerBody {
    /// What the answer becomes when the step it answers could not be kept (issue #37
    /// item 2): a call, open or close fails with the store's error; a handler's own
    /// request fails the same way. A call sent on to its handler changed nothing yet.
    pub fn refuse(&mut self, not_kept: &NotKept) {
        match self {
            AnswerBody::Call(r) => *r = Err(not_kept.error()),
            AnswerBody::Open(r) => *r = Err(not_kept.error()),
            AnswerBody::Close(r) => *r = Err(not_kept.error()),
            AnswerBody::RunHandler { .. } => {}
            AnswerBody::Handler { answer, .. } => answer.refuse(not_kept),
        }
    }
}

/// The answer to a tool handler's request.
#[derive(Debug)]
pub enum HandlerAnswer {
    /// What an open came to.
    Open(Result<Opened, OpenToolsetError>),
    /// What a close came to.
    Close(Result<Vec<ContentBlock>, CloseToolsetError>),
}

impl HandlerAnswer {
    /// See [`AnswerBody::refuse`].
    fn refuse(&mut self, not_kept: &NotKept) {
        match self {
            HandlerAnswer::Open(r) => *r = Err(OpenToolsetError::NotKept(not_kept.0.clone())),
            HandlerAnswer::Close(r) => *r = Err(CloseToolsetError::NotKept(not_kept.0.clone())),
        }
    }
}

/// What an open came to, before it is put in the asker's terms ([`OpenReply::body`]).
pub enum OpenReply {
    /// A new instance, or a joined one.
    Opened {
        /// This principal's key for the instance.
        key: InstanceKey,
        /// The instance's title.
        title: Option<String>,
        /// What the opener is told.
        content: Vec<ContentBlock>,
    },
    /// What was open, adopted (§4.2, vector 17); `text` says so.
    Adopted {
        /// This principal's key for the instance.
        key: InstanceKey,
        /// The instance's title.
        title: Option<String>,
        /// What the opener is told.
        text: String,
    },
    /// Refused by the rules (§4.1, §4.2).
    Invalid(OpenError),
    /// Refused by the toolset's logic.
    Refused(Refusal),
    /// The toolset's logic failed.
    Failed,
    /// No instance could be started just now (why: the store's error); nothing was
    /// opened, and the same open may be sent again.
    Unavailable(String),
}

impl OpenReply {
    /// The answer: `toolsets/open`'s result or error, a compat tool's result (§8: the
    /// model reads why as a tool error), or a handler's typed outcome.
    pub fn body(self, via: Via) -> AnswerBody {
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
                OpenReply::Unavailable(why) => Err(unavailable(&why)),
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
                OpenReply::Unavailable(why) => CallToolResult::error(unavailable(&why).message),
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
                    OpenReply::Unavailable(why) => Err(OpenToolsetError::Unavailable(why)),
                };
                AnswerBody::Handler {
                    token,
                    answer: HandlerAnswer::Open(outcome),
                }
            }
        }
    }
}

pub fn failed() -> ErrorObject {
    ErrorObject::internal("the toolset failed to open")
}

/// An open that started nothing because no instance id could be taken from the store
/// (issue #41) **\[project\]**: -32603 with the retryable shape of the nodes' refusals
/// (`data: {retryable: true, ran: false}`): nothing was opened, the same open may be sent
/// again.
pub fn unavailable(why: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "the toolset could not be opened just now: the server could not take an id for \
             a new instance from its store ({why}); nothing was opened, try again"
        ),
    )
    .with_data(serde_json::json!({"retryable": true, "ran": false}))
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

/// The answer to a close, in the asker's terms: `toolsets/close`'s result or error, a
/// compat tool's result (§8), or a handler's typed outcome.
pub fn close_body(
    via: Via,
    key: &InstanceKey,
    outcome: Result<Vec<ContentBlock>, CloseError>,
) -> AnswerBody {
    match via {
        Via::Rpc => AnswerBody::Close(match outcome {
            Ok(content) => Ok(ToolsetsCloseResult {
                content: (!content.is_empty()).then_some(content),
                meta: None,
            }),
            Err(e) => Err(e.to_error_object()),
        }),
        Via::Compat => AnswerBody::Call(Ok(match outcome {
            Ok(content) => {
                let mut result = CallToolResult::text(format!("Closed {key}."));
                result.content.extend(content);
                result
            }
            Err(e) => CallToolResult::error(e.to_string()),
        })),
        Via::Handler(token) => AnswerBody::Handler {
            token,
            answer: HandlerAnswer::Close(outcome.map_err(CloseToolsetError::Invalid)),
        },
    }
}

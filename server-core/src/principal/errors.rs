//! Why an open, a close, a call or an actor's hint change is refused.
//!
//! Sorted by who is at fault: [`OpenError`], [`CloseError`] and [`CallRefusal`] are the
//! host's (or its agent's) requests that cannot be served — answered, and the link goes on;
//! [`HintError`] is the server's own misuse of the core (an actor bug). Each maps to the wire
//! in exactly one method:
//!
//! | error | method | wire |
//! |---|---|---|
//! | [`OpenError`] | [`OpenError::to_error_object`] | JSON-RPC -32602 naming the problem (§4.2) |
//! | [`CloseError`] | [`CloseError::to_error_object`] | JSON-RPC -32602 |
//! | [`CallRefusal`] | [`CallRefusal::reply`] | a tool result with `isError: true` saying why (§3, §4.5, vectors 6, 11); an unknown tool is -32602 (MCP) |
//! | [`HintError`] | [`HintError::to_error_object`] | JSON-RPC -32603 |
//!
//! A host without `toolHints` opens and closes through the `toolset_open`/`toolset_close`
//! tools (§8): there the same refusal is a tool error, `CallToolResult::error(e.to_string())`.
//!
//! §7: every name in these errors is the principal's own — the open instances a refusal
//! lists come from this principal's state only.

use super::InstanceKey;
use crate::catalog::OptionsProblem;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, MESSAGE_LIMIT, clip_owned};
use mcpl_protocol::mcp::CallToolResult;
use mcpl_protocol::names::NameError;
use mcpl_protocol::toolsets::EndedRecord;
use serde_json::json;

/// Why `toolsets/open` is refused (§4.2).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// No such toolset is declared.
    #[error("no toolset {0:?} is declared")]
    UnknownToolset(String),
    /// An instance name for a toolset without instances (§4.2).
    #[error("toolset {toolset:?} has no instances; leave out the instance name ({instance:?})")]
    InstanceNotAllowed {
        /// The toolset.
        toolset: String,
        /// The name that was sent.
        instance: String,
    },
    /// A proposed name that does not fit the grammar (§4.1): refused, never replaced
    /// (§4.2, vector 18).
    #[error("instance name {instance:?} is not valid: {error}")]
    BadInstanceName {
        /// The name that was sent.
        instance: String,
        /// What is wrong with it.
        error: NameError,
    },
    /// The options fail the declared schema (§4.2).
    #[error("options for toolset {toolset:?} are invalid: {}", join(.problems))]
    InvalidOptions {
        /// The toolset.
        toolset: String,
        /// What is wrong, where (at most `MAX_OPTION_PROBLEMS`).
        problems: Vec<OptionsProblem>,
    },
    /// The principal has as many instances open as the server allows.
    #[error("{limit} toolsets are open already; close one first")]
    TooManyOpen {
        /// The limit (`PrincipalConfig::max_open`).
        limit: usize,
    },
    /// `join` named an instance that is open already (local misuse: the actor picks a free
    /// name for an invitation).
    #[error("{0} is open already")]
    InstanceTaken(InstanceKey),
}

fn join(problems: &[OptionsProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl OpenError {
    /// The JSON-RPC error: -32602, naming the problem (§4.2); invalid options also list
    /// their problems in `data.problems` as `{at, problem}`.
    pub fn to_error_object(&self) -> ErrorObject {
        let mut e = ErrorObject::new(ErrorCode::INVALID_PARAMS, self.to_string());
        if let OpenError::InvalidOptions { problems, .. } = self {
            let list: Vec<_> = problems
                .iter()
                .map(|p| json!({"at": p.at, "problem": p.problem}))
                .collect();
            e.data = Some(json!({ "problems": list }));
        }
        e
    }
}

/// Why `toolsets/close` is refused (§4.2).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CloseError {
    /// No such toolset is declared.
    #[error("no toolset {0:?} is declared")]
    UnknownToolset(String),
    /// A toolset with instances needs the instance named (§4.2: another connection of the
    /// principal may have just opened a second one).
    #[error("toolset {toolset:?} has instances; name the one to close (open: {})", list(.open))]
    InstanceRequired {
        /// The toolset.
        toolset: String,
        /// Its open instances.
        open: Vec<String>,
    },
    /// An instance name for a toolset without instances (§4.2).
    #[error("toolset {toolset:?} has no instances; leave out the instance name ({instance:?})")]
    InstanceNotAllowed {
        /// The toolset.
        toolset: String,
        /// The name that was sent.
        instance: String,
    },
    /// It is not open; `ended` is its newest ended record, when one is kept.
    #[error("{key} is not open{}", .ended.as_ref().map(|e| format!(" (it ended: {})", e.reason)).unwrap_or_default())]
    NotOpen {
        /// What was named.
        key: InstanceKey,
        /// How it ended, if it did recently.
        ended: Option<Box<EndedRecord>>,
    },
}

impl CloseError {
    /// The JSON-RPC error: -32602.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::new(ErrorCode::INVALID_PARAMS, self.to_string())
    }
}

/// Why a `tools/call` cannot go to the tool (§3, §4.5).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallRefusal {
    /// No such tool (MCP: a JSON-RPC error, not a tool error).
    #[error("unknown tool {tool:?}")]
    UnknownTool {
        /// The name called.
        tool: String,
    },
    /// An instance was named for a tool that is not instance-bound.
    #[error("{tool} is not bound to instances; call it without naming one ({instance:?})")]
    InstanceNotApplicable {
        /// The tool.
        tool: String,
        /// The name that was sent.
        instance: String,
    },
    /// Several instances are open and none was named (§4.5, vector 6).
    #[error("{tool}: several {toolset} instances are open ({}); name the one this call is for", list(.open))]
    AmbiguousInstance {
        /// The tool.
        tool: String,
        /// Its toolset.
        toolset: String,
        /// The open instances.
        open: Vec<String>,
    },
    /// The named instance is not open (§4.5).
    #[error("{tool}: no {toolset} instance {instance:?} is open (open: {})", list(.open))]
    UnknownInstance {
        /// The tool.
        tool: String,
        /// Its toolset.
        toolset: String,
        /// The name that was sent.
        instance: String,
        /// The open instances.
        open: Vec<String>,
    },
    /// The tool's declared toolset is not open (§3, vector 11).
    #[error("{tool} belongs to toolset {toolset}, which is not open; open it first")]
    ToolsetNotOpen {
        /// The tool.
        tool: String,
        /// Its toolset.
        toolset: String,
    },
    /// A read-only tool of an instance that has ended: answered (not as an error) with the
    /// last view its logic left with the ended record (§4.3 **\[project\]**, `call.rs`).
    #[error("{} has ended: {reason}. Its last view:\n\n{view}", ended_name(.toolset, .instance.as_deref()))]
    Ended {
        /// The tool.
        tool: String,
        /// Its toolset.
        toolset: String,
        /// The instance that ended.
        instance: Option<String>,
        /// The ended record's reason.
        reason: String,
        /// The last view.
        view: String,
    },
    /// The tool is not visible — not usable now — in the target (§3, vector 11).
    #[error("{tool} is not available right now{}", .target.as_ref().map(|k| format!(" in {k}")).unwrap_or_default())]
    Invisible {
        /// The tool.
        tool: String,
        /// The instance it was resolved to, for a toolset's tool.
        target: Option<InstanceKey>,
    },
}

fn ended_name(toolset: &str, instance: Option<&str>) -> String {
    match instance {
        Some(i) => format!("{toolset} {i}"),
        None => toolset.to_owned(),
    }
}

/// What a refused `tools/call` is answered with.
#[derive(Debug, Clone, PartialEq)]
pub enum CallReply {
    /// A tool result with `isError: true` whose text says why (§3).
    ToolError(CallToolResult),
    /// A JSON-RPC error.
    Rpc(ErrorObject),
    /// A tool result that is no error: a read-only tool of an ended instance, answered
    /// from the last view kept with its record ([`CallRefusal::Ended`]).
    Answer(CallToolResult),
}

impl CallRefusal {
    /// The answer to the call: an unknown tool is a JSON-RPC -32602 (MCP); an ended
    /// instance's last view is a plain result; every other refusal is a tool error the
    /// agent reads (§3, §4.5, vectors 6, 11).
    pub fn reply(&self) -> CallReply {
        match self {
            CallRefusal::UnknownTool { .. } => CallReply::Rpc(ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                self.to_string(),
            )),
            // The logic's own text, as its tool would have answered: not an error, and not
            // the peer's words (no clip beyond what the logic chose).
            CallRefusal::Ended { .. } => CallReply::Answer(CallToolResult::text(self.to_string())),
            // What it says may quote the peer's names: never whole (hardening, item 6).
            _ => CallReply::ToolError(CallToolResult::error(clip_owned(
                self.to_string(),
                MESSAGE_LIMIT,
            ))),
        }
    }
}

/// The server misused the core: an actor asked for a change that cannot apply. A bug on
/// this side, never the peer's doing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HintError {
    /// No such tool in the catalog.
    #[error("unknown tool {0:?}")]
    UnknownTool(String),
    /// The instance is not open.
    #[error("{0} is not open")]
    NotOpen(InstanceKey),
    /// A tool of a toolset with instances was changed without naming the instance (§5.1:
    /// `instance` is required with `visible` for such a tool).
    #[error("{tool} belongs to an instanced toolset; name the instance")]
    InstanceRequired {
        /// The tool.
        tool: String,
    },
    /// An instance was named for a tool that is not instance-bound.
    #[error("{tool} is not bound to instances (got {instance:?})")]
    InstanceNotAllowed {
        /// The tool.
        tool: String,
        /// The name given.
        instance: String,
    },
    /// A definition change for a static tool (§5.1: dynamic tools only; a static tool's
    /// definition changes through `notifications/tools/list_changed`).
    #[error("{0} is static; its definition changes only through tools/list_changed")]
    StaticDefinition(String),
}

impl HintError {
    /// The JSON-RPC error, should one be owed to a request: -32603 (the server's fault).
    #[cfg(test)]
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::internal(self)
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

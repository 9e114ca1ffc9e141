//! What a tool call comes to when it does not produce a result: [`ToolError`], sorted by
//! who is at fault, and the one place it becomes what the host receives. It knows nothing
//! of sessions, so the actors that carry call answers depend on it alone.

use mcpl_protocol::jsonrpc::ErrorObject;
use mcpl_protocol::mcp::CallToolResult;

/// Why a tool call did not produce a result, sorted by who is at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The caller's arguments do not fit the tool: a tool error the model can correct.
    #[error("invalid arguments for tool {tool:?}: {detail}")]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// What is wrong (serde's description, with the path where it has one).
        detail: String,
    },
    /// The tool could not do what was asked (no such game, not your turn): a tool error
    /// whose text the model reads.
    #[error("{message}")]
    Failed {
        /// What to tell the model.
        message: String,
    },
    /// The server failed: a JSON-RPC internal error (-32603); the source is logged, not sent.
    #[error("internal error: {0}")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ToolError {
    /// A [`ToolError::Failed`] with this text.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed {
            message: message.into(),
        }
    }

    /// A [`ToolError::Internal`] wrapping `source`.
    pub fn internal(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        ToolError::Internal(source.into())
    }

    /// The one place a handler's error becomes what the host receives: a tool error result,
    /// or a JSON-RPC error.
    pub fn into_outcome(self) -> Result<CallToolResult, ErrorObject> {
        match self {
            ToolError::InvalidArguments { .. } | ToolError::Failed { .. } => {
                Ok(CallToolResult::error(self.to_string()))
            }
            ToolError::Internal(source) => {
                tracing::warn!(error = %source, "tool handler failed internally");
                Err(ErrorObject::internal("the tool failed"))
            }
        }
    }
}

/// What a handler's future resolves to.
pub type ToolResult = Result<CallToolResult, ToolError>;

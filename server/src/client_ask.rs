//! What a handler asks of its client, seen from the handler's side: why a question got no
//! answer ([`AskError`]), the capability it needs, and the session's side of asking as a
//! trait ([`AskClient`]). A leaf module: the tool and the resource or prompt contexts ask
//! through it, and the session answers (`session/asks.rs`), without either importing the
//! other's module.

use mcpl_protocol::jsonrpc::{ErrorObject, Id, RawValue};
use std::future::Future;
use std::pin::Pin;

/// Why a request to the client got no result, sorted by who is at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The client did not declare the capability in `initialize`, so MCP forbids asking.
    #[error("the client does not support {capability} (it did not declare the capability)")]
    NotSupported {
        /// The capability: `sampling`, `elicitation` or `roots`.
        capability: &'static str,
    },
    /// The call is an MCP 2026-07-28 request that carried no answer to this question: it
    /// went to the client in the call's `InputRequiredResult`, and this run of the handler
    /// has ended (it is cancelled; whatever it returns is dropped). The client's retry runs
    /// the handler again, and this question then returns the client's answer (module docs).
    #[error(
        "the client speaks MCP 2026-07-28: {capability} was asked in an InputRequiredResult, and the call's retry will carry the answer"
    )]
    InputRequired {
        /// The capability: `sampling`, `elicitation` or `roots`.
        capability: &'static str,
    },
    /// The call is an MCP 2026-07-28 request and asking would pass a bound of MRTR's: too
    /// many questions in one run, or answers that outgrow the request state.
    #[error("the question cannot be asked: {0}")]
    Limit(String),
    /// The call asking was answered or cancelled: nobody waits for the answer.
    #[error("the tool call has ended")]
    CallEnded,
    /// The client answered with an error (a person refused sampling, say).
    #[error("the client refused: {} ({})", .0.message, .0.code.0)]
    Client(ErrorObject),
    /// The client's result does not have the method's shape.
    #[error("the client's result is malformed: {0}")]
    MalformedResult(String),
    /// No answer within the server's ask timeout; the client was told it is cancelled.
    #[error("the client did not answer in time")]
    TimedOut,
    /// The session closed first.
    #[error("the session is closed")]
    Closed,
}

/// The capability a request needs the client to have declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Needs {
    Sampling,
    Elicitation,
    Roots,
}

/// The session's side of asking: sends `method` with `params` for the handler of request
/// `request` (a tool call's `key`, or none for a resource or prompt request) and returns the
/// client's raw result (`session/asks.rs` says how each era is asked).
pub(crate) trait AskClient: Send + Sync + std::fmt::Debug {
    /// Asks, and waits for the answer or why none came.
    fn ask_client(
        &self,
        request: Id,
        key: Option<u64>,
        input_key: Option<String>,
        needs: Needs,
        method: &'static str,
        params: Box<RawValue>,
    ) -> Pin<Box<dyn Future<Output = Result<Box<RawValue>, AskError>> + Send + '_>>;
}

//! What a handler asks of its client, seen from the handler's side: why a question got no
//! answer ([`AskError`]), the capability it needs, and the session's side of asking as a
//! trait ([`AskClient`]). A leaf module: the tool and the resource or prompt contexts ask
//! through it, and the session answers (`session/asks.rs`), without either importing the
//! other's module.

use mcpl_protocol::jsonrpc::{ErrorObject, Id, RawValue, decode_result, to_raw};
use mcpl_protocol::method::RequestMethod;
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

/// A handler's request for its client (`tool/ask.rs`, or a resource or prompt handler's,
/// `features.rs`), asked by the session (`session/asks.rs`).
#[derive(Debug)]
pub(crate) struct Ask {
    /// The handler's request: a `tools/call`, and its key in the session's `Requests`; or
    /// a resource or prompt request (`features.rs`), with no key.
    pub(crate) call: Id,
    pub(crate) key: Option<u64>,
    pub(crate) method: &'static str,
    pub(crate) needs: Needs,
    pub(crate) params: Box<RawValue>,
    /// The key its question goes under in a modern client's `InputRequiredResult`, when
    /// the handler chose one (`mrtr.rs`).
    pub(crate) input_key: Option<String>,
}

/// The session's side of asking: sends the question for its handler's request and returns
/// the client's raw result (`session/asks.rs` says how each era is asked).
pub(crate) trait AskClient: Send + Sync + std::fmt::Debug {
    /// Asks, and waits for the answer or why none came.
    fn ask_client(
        &self,
        ask: Ask,
    ) -> Pin<Box<dyn Future<Output = Result<Box<RawValue>, AskError>> + Send + '_>>;
}

/// Asks `client` the question `M` with `params` for the handler of request `call` (a tool
/// call's `key`, or none for a resource or prompt request), under `input_key` in a modern
/// client's `InputRequiredResult` when the handler chose one, and reads the result as
/// `M`'s.
pub(crate) async fn ask<M: RequestMethod>(
    client: &dyn AskClient,
    call: Id,
    key: Option<u64>,
    input_key: Option<&str>,
    needs: Needs,
    params: &M::Params,
) -> Result<M::Result, AskError> {
    let result = client
        .ask_client(Ask {
            call,
            key,
            method: M::NAME,
            needs,
            params: to_raw(params),
            input_key: input_key.map(str::to_owned),
        })
        .await?;
    decode_result(&result).map_err(|e| AskError::MalformedResult(e.0))
}

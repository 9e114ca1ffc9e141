//! The pending table's waiters as the actor holds them ([`super::core::pending`] is the
//! table): a caller is answered by a closure that decodes the result by its method's type,
//! a caller waiting for a tools listing on a channel.

use super::core::error::LinkError;
use super::core::pending;
use mcpl_protocol::jsonrpc::RawValue;
use mcpl_protocol::mcp::Tool;
use tokio::sync::oneshot;

/// How a caller is answered.
pub(super) type Reply = Box<dyn FnOnce(Result<Box<RawValue>, LinkError>)>;

/// Who waits for a response.
pub(super) type Waiter = pending::Waiter<Reply>;

/// A caller's request to a modern server, between its rounds.
pub(super) type InputRound = pending::InputRound<Reply>;

/// Who waits for a listing.
pub(super) type ToolsReply = oneshot::Sender<Result<Vec<Tool>, LinkError>>;

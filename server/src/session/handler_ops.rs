//! The table of tool handlers' opens and closes (`for_handlers.rs`) the session passed to
//! its principal and waits for, each by the token its `Via::Handler` carries: the call it
//! serves, and where the outcome goes back to the handler.
//!
//! A table without the actor (like `outgoing.rs`), so the actor's state names it without
//! the file that drives it naming the actor back.

use crate::core::tool::outcome::{CloseToolsetError, OpenToolsetError, Opened};
use mcpl_protocol::jsonrpc::Id;
use mcpl_protocol::mcp::ContentBlock;
use std::collections::HashMap;
use tokio::sync::oneshot;

/// Where an answer goes back to a handler.
#[derive(Debug)]
pub(super) enum Waiting {
    Open(oneshot::Sender<Result<Opened, OpenToolsetError>>),
    Close(oneshot::Sender<Result<Vec<ContentBlock>, CloseToolsetError>>),
}

/// A handler's open or close, forwarded and not answered yet.
#[derive(Debug)]
pub(super) struct Op {
    /// The handler's `tools/call`, and its key in the session's `Requests`.
    pub(super) call: Id,
    pub(super) key: u64,
    pub(super) waiting: Waiting,
}

/// The handlers' opens and closes in flight, by token.
#[derive(Debug, Default)]
pub(crate) struct HandlerOps {
    next: u64,
    ops: HashMap<u64, Op>,
}

impl HandlerOps {
    /// Records an op and returns its token (a new one each time).
    pub(super) fn insert(&mut self, call: Id, key: u64, waiting: Waiting) -> u64 {
        self.next += 1;
        self.ops.insert(self.next, Op { call, key, waiting });
        self.next
    }

    /// The op of `token`, taken out of the table: `None` for a token not waited for.
    pub(super) fn remove(&mut self, token: u64) -> Option<Op> {
        self.ops.remove(&token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_op_gets_its_own_token_and_is_taken_once() {
        let mut ops = HandlerOps::default();
        let (tx, _rx) = oneshot::channel();
        let a = ops.insert(Id::Number(1), 7, Waiting::Open(tx));
        let (tx, _rx) = oneshot::channel();
        let b = ops.insert(Id::Number(2), 8, Waiting::Close(tx));
        assert_ne!(a, b);
        let op = ops.remove(a).expect("a is waited for");
        assert_eq!((op.call, op.key), (Id::Number(1), 7));
        assert!(matches!(op.waiting, Waiting::Open(_)));
        assert!(ops.remove(a).is_none(), "an answer comes once");
        assert!(ops.remove(99).is_none(), "a token never given");
        assert!(matches!(
            ops.remove(b).map(|op| op.waiting),
            Some(Waiting::Close(_))
        ));
    }
}

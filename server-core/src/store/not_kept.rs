//! [`NotKept`]: what a step that could not be kept fails with. A value the commit queue
//! gives and the cores carry, apart from the records and the queue that both name it.

use mcpl_protocol::jsonrpc::ErrorObject;

/// Why a step is not acknowledged: the store could not keep what it changed (issue #37
/// item 2), with the store's error.
///
/// **\[project\]** What a player was told happened must have happened. So a step whose
/// records cannot be written tells no one of its changes, events or end, sends no
/// invitation, and its calls fail with [`NotKept::error`]. The store is then given up
/// until the server restarts: nothing more is written (redb itself refuses every write
/// after an I/O error until it is opened again), so every later step that changes kept
/// state is refused the same way, while one that changes nothing (a read) is answered.
/// A restart reads back the last records written, which are what players were told. The
/// failure is logged once, not per write.
#[derive(Debug, Clone)]
pub struct NotKept(pub String);

impl NotKept {
    /// What a call, open or close that could not be kept fails with (-32603). It claims
    /// no more than it knows: a call answered by a later step (a move the bot answers)
    /// may have kept its own step before the one that failed.
    ///
    /// **\[project\]** Its `data` is `{"retryable": true, "ran": null, "kept": false}`, the
    /// shape the arcade's nodes give a request they could not carry (issue #41): the
    /// change is not acknowledged, and the call is worth trying again once the server is
    /// restarted — or, in a cluster whose database went away, once a node holds the
    /// arcade again — after reading the state (`ran: null`: it may have run in part).
    pub fn error(&self) -> ErrorObject {
        ErrorObject::new(
            mcpl_protocol::jsonrpc::ErrorCode::INTERNAL_ERROR,
            format!(
                "Not acknowledged: the server could not keep what this changed ({}). It takes \
                 no more changes until it is restarted with a store it can write.",
                self.0
            ),
        )
        .with_data(serde_json::json!({"retryable": true, "ran": null, "kept": false}))
    }
}

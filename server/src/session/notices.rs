//! MCP progress and logging in a session (MCP 2025-11-25, "Utilities / Progress" and
//! "Utilities / Logging"): a tool handler's `notifications/progress` and
//! `notifications/message` ([`Notice`], from `tool/notify.rs`), and `logging/setLevel`.
//!
//! A notice is a notification without hint changes: it is written with `SessionActor::write`,
//! the single write path, and takes no rev (§5.2); nothing held for a call is flushed for
//! it. The handler awaits the actor's answer, which comes once the notice is queued, so a
//! call's notices are queued before its result.
//!
//! **Log level.** A session starts at the server's initial level
//! ([`ServerBuilder::logging`](crate::ServerBuilder::logging)); `logging/setLevel` replaces
//! it, and only messages at or above it are written (MCP: the server SHOULD only send
//! those). A level that is not one of the eight RFC 5424 names is -32602 (the params do not
//! decode). A server that does not offer logging has no level: `logging/setLevel` is -32601
//! there (`dispatch.rs`) and log messages are dropped.

use super::SessionActor;
use crate::core::requests::ProgressRefused;
use crate::tool::NotifyError;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{ErrorObject, Id, Notification};
use mcpl_protocol::mcp::{Empty, LoggingMessageParams, ProgressParams, SetLevelParams};
use mcpl_protocol::method::{LoggingMessage, Progress};

/// A tool handler's notification for its host.
#[derive(Debug)]
pub(crate) enum Notice {
    /// `notifications/progress` for the handler's call.
    Progress {
        /// The call's request id and its key in the session's `Requests`.
        call: Id,
        key: u64,
        params: ProgressParams,
    },
    /// `notifications/message`, if at or above the session's level.
    Log(LoggingMessageParams),
}

impl Message for Notice {
    type Result = Result<(), NotifyError>;
}

impl Handler<Notice> for SessionActor {
    type Result = Result<(), NotifyError>;

    fn handle(&mut self, notice: Notice, _: &mut Context<Self>) -> Self::Result {
        match notice {
            Notice::Progress { call, key, params } => {
                self.core.progress(&call, key, params.progress).map_err(
                    |refused| match refused {
                        ProgressRefused::Ended => NotifyError::CallEnded,
                        ProgressRefused::NotIncreasing { last, given } => {
                            NotifyError::NotIncreasing { last, given }
                        }
                    },
                )?;
                self.write(Notification::new::<Progress>(&params).into());
            }
            Notice::Log(params) => {
                if self.log_level.is_some_and(|least| params.level >= least) {
                    self.write(Notification::new::<LoggingMessage>(&params).into());
                } else {
                    tracing::trace!(session = %self.id, level = ?params.level, "log message below the level; not sent");
                }
            }
        }
        Ok(())
    }
}

impl SessionActor {
    /// True when the server offers MCP logging, so `logging/setLevel` is served.
    pub(super) fn offers_logging(&self) -> bool {
        self.log_level.is_some()
    }

    /// `logging/setLevel`: from now on only messages at `level` or above are sent.
    pub(super) fn set_level(&mut self, params: SetLevelParams) -> Result<Empty, ErrorObject> {
        tracing::debug!(session = %self.id, level = ?params.level, "log level set");
        self.log_level = Some(params.level);
        Ok(Empty::default())
    }
}

//! MCP progress and logging in a session (MCP 2025-11-25, "Utilities / Progress" and
//! "Utilities / Logging"): a tool handler's `notifications/progress` and
//! `notifications/message` (`session_port.rs`'s `Notice`, from `tool/notify.rs`), fed to the core, which
//! owns the rules (progress only increases, a call's progress ends with it, the log level
//! `logging/setLevel` set).
//!
//! A notice is a notification without hint changes: it takes no rev (§5.2); nothing held
//! for a call is flushed for it. The handler awaits the actor's answer, which comes once the notice is queued, so a
//! call's notices are queued before its result.
//!
//! **Log level.** A session starts at the server's initial level
//! ([`ServerBuilder::logging`](crate::ServerBuilder::logging)); `logging/setLevel` replaces
//! it, and only messages at or above it are written (MCP: the server SHOULD only send
//! those). A level that is not one of the eight RFC 5424 names is -32602 (the params do not
//! decode). A server that does not offer logging has no level: `logging/setLevel` is -32601
//! there (`server-core/src/session/inbound.rs`) and log messages are dropped.

use super::SessionActor;
use crate::core::requests::ProgressRefused;
use crate::session_port::{Notice, NotifyError};
use actix::prelude::*;

impl Message for Notice {
    type Result = Result<(), NotifyError>;
}

impl Handler<Notice> for SessionActor {
    type Result = Result<(), NotifyError>;

    fn handle(&mut self, notice: Notice, ctx: &mut Context<Self>) -> Self::Result {
        match notice {
            Notice::Progress { call, key, params } => {
                self.core
                    .progress(&call, key, params)
                    .map_err(|refused| match refused {
                        ProgressRefused::Ended => NotifyError::CallEnded,
                        ProgressRefused::NotIncreasing { last, given } => {
                            NotifyError::NotIncreasing { last, given }
                        }
                    })?;
            }
            Notice::Log { call, params } => self.core.log(Some(&call), params),
        }
        self.drive(ctx);
        Ok(())
    }
}

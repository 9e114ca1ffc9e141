//! What a tool handler tells its host while its call runs: progress of the call (MCP
//! 2025-11-25, "Utilities / Progress") and log messages ("Utilities / Logging").
//!
//! Both become notifications the session writes through its single write path; they carry
//! no hint changes, so they take no rev (§5.2). Each method returns once its notification is
//! queued on the connection (or deliberately not sent), so everything a handler reported
//! is queued before its call's result: on an ordered link the host reads them first.
//!
//! - **Progress** is sent only when the call's `_meta.progressToken` asked for it, with
//!   that token. MCP: the value MUST increase with each notification, and notifications
//!   stop once the call is answered or cancelled — both are checked, and refused as
//!   [`NotifyError`]s.
//! - **Log messages** are sent only when the server offers logging
//!   ([`ServerBuilder::logging`](crate::ServerBuilder::logging)) and at or above the
//!   session's level: the one the client set with `logging/setLevel`, else the server's
//!   initial one (MCP: the server SHOULD only send messages at or above the level set).

use crate::session_port::{Notice, NotifyError};
use crate::tool::ToolContext;
use mcpl_protocol::mcp::{LoggingLevel, LoggingMessageParams, ProgressParams, ProgressToken};
use serde_json::Value;

impl ToolContext {
    /// The progress token the call's `_meta` carried (`progressToken`), if any: the host
    /// wants `notifications/progress` for this call.
    pub fn progress_token(&self) -> Option<ProgressToken> {
        self.meta.as_ref().and_then(ProgressToken::from_meta)
    }

    /// Sends `notifications/progress` for this call — `progress` so far, out of `total`
    /// when known, with a human-readable `message` — and returns once it is queued. Does
    /// nothing (and succeeds) when the call has no progress token.
    ///
    /// Refused when a value is not finite ([`NotifyError::NotFinite`]), when `progress`
    /// is not greater than the last one sent ([`NotifyError::NotIncreasing`]), and after
    /// the call ended ([`NotifyError::CallEnded`]).
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), NotifyError> {
        let Some(progress_token) = self.progress_token() else {
            return Ok(());
        };
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return Err(NotifyError::NotFinite);
        }
        let params = ProgressParams {
            progress_token,
            progress,
            total,
            message,
            meta: None,
        };
        self.session
            .notify(Notice::Progress {
                call: self.request_id.clone(),
                key: self.call_key,
                params,
            })
            .await
    }

    /// Sends a log message (`notifications/message`) at `level`, from `logger` if named,
    /// saying `data` (any JSON value), and returns once it is queued. Succeeds without
    /// sending when the server does not offer logging
    /// ([`ServerBuilder::logging`](crate::ServerBuilder::logging)) or `level` is below
    /// the session's level (see the module docs).
    pub async fn log(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: Value,
    ) -> Result<(), NotifyError> {
        let params = LoggingMessageParams {
            level,
            logger: logger.map(str::to_owned),
            data,
            meta: None,
        };
        self.session
            .notify(Notice::Log {
                call: self.request_id.clone(),
                params,
            })
            .await
    }
}

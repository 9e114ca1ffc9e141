//! What a plain tool handler may do with its caller's toolsets (§4.2, §4.6): open and close
//! them as `toolsets/open|close` would, and see or decline the invitations the caller has.
//!
//! A lobby's `challenge` opens a game for its caller; its `decline` turns an invitation
//! down. The open runs exactly as the host's own `toolsets/open` runs — the same checks
//! (§4.1 names, §4.2 options), the same naming and adoption, the toolset's logic — and
//! what it changes is reported the way §5.3 asks:
//!
//! - **on the calling connection**, in the handler's own result: the changes are held
//!   until the handler returns and ride in its `_meta["mcpl/hints"]` (a call reports its
//!   own consequences). Held changes never overtake others (§5.2): if anything else
//!   carrying hint changes must be written to that connection first, they go just before
//!   it as `tools/hints`; a cancelled call's go as `tools/hints` at once (vector 29);
//! - **on the principal's other connections**, as hint changes of their own, pushed with
//!   the toolset's event or as `tools/hints` (§4.6, vectors 14, 32).

use super::outcome::{CloseToolsetError, DeclineError, Invitation, OpenToolsetError, Opened};
use crate::session_port::{ForHandler, SessionClosed};
use crate::tool::ToolContext;
use mcpl_protocol::mcp::ContentBlock;
use serde_json::Value;
use tokio::sync::oneshot;

impl ToolContext {
    /// Opens a toolset for the calling principal as its host's `toolsets/open {toolset,
    /// instance, options}` would (§4.2): checked the same way, named the same way (a
    /// proposed name is used as given or refused; none: the server chooses), adopting what
    /// is open (vector 17), joining an instance the principal was invited to under that
    /// name, and running the toolset's logic.
    ///
    /// The changes it causes come back **in this handler's own result** on the calling
    /// connection, and as hint changes on the principal's other connections (§5.3; module
    /// docs for the order rule).
    ///
    /// ```no_run
    /// use mcpl_protocol::mcp::CallToolResult;
    /// use mcpl_server::{ToolContext, ToolError};
    /// use serde_json::json;
    ///
    /// async fn challenge(ctx: ToolContext, opponent: String) -> Result<CallToolResult, ToolError> {
    ///     let opened = ctx
    ///         .open_toolset("go", None, Some(json!({"opponent": opponent})))
    ///         .await?;
    ///     let name = opened.instance.unwrap_or_default();
    ///     Ok(CallToolResult::text(format!("The game is open as go:{name}.")))
    /// }
    /// ```
    pub async fn open_toolset(
        &self,
        toolset: &str,
        instance: Option<&str>,
        options: Option<Value>,
    ) -> Result<Opened, OpenToolsetError> {
        let (reply, rx) = oneshot::channel();
        self.session.for_handler(ForHandler::Open {
            call: self.request_id.clone(),
            key: self.call_key,
            toolset: toolset.to_owned(),
            instance: instance.map(str::to_owned),
            options,
            reply,
        });
        rx.await.unwrap_or(Err(OpenToolsetError::Closed))
    }

    /// Closes one of the calling principal's toolsets as its host's `toolsets/close
    /// {toolset, instance}` would (§4.2; `instance` required for a toolset with
    /// instances), running the logic's close (a game in progress is resigned). Returns
    /// what the logic said; the changes are reported as for
    /// [`ToolContext::open_toolset`].
    ///
    /// ```no_run
    /// # async fn leave(ctx: mcpl_server::ToolContext) -> Result<(), mcpl_server::ToolError> {
    /// let said = ctx.close_toolset("go", Some("g1")).await?;
    /// # let _ = said; Ok(()) }
    /// ```
    pub async fn close_toolset(
        &self,
        toolset: &str,
        instance: Option<&str>,
    ) -> Result<Vec<ContentBlock>, CloseToolsetError> {
        let (reply, rx) = oneshot::channel();
        self.session.for_handler(ForHandler::Close {
            call: self.request_id.clone(),
            key: self.call_key,
            toolset: toolset.to_owned(),
            instance: instance.map(str::to_owned),
            reply,
        });
        rx.await.unwrap_or(Err(CloseToolsetError::Closed))
    }

    /// The calling principal's invitations not yet taken up or declined, by toolset and
    /// instance name. §7: only its own.
    ///
    /// ```no_run
    /// # async fn list(ctx: mcpl_server::ToolContext) {
    /// for inv in ctx.invitations().await.unwrap_or_default() {
    ///     println!("{}: open {}:{} to join", inv.reason, inv.toolset, inv.instance.unwrap_or_default());
    /// }
    /// # }
    /// ```
    pub async fn invitations(&self) -> Result<Vec<Invitation>, SessionClosed> {
        let (reply, rx) = oneshot::channel();
        self.session.for_handler(ForHandler::Invitations { reply });
        rx.await.map_err(|_| SessionClosed)
    }

    /// Declines one of the calling principal's invitations, named as this principal sees
    /// it ([`Invitation::instance`]): it is gone from the principal, and the inviting
    /// instance's logic hears it ([`InstanceLogic::declined`](crate::InstanceLogic::declined))
    /// — which may tell the others and end the instance — before this returns. Returns
    /// the declined invitation.
    ///
    /// ```no_run
    /// # use mcpl_server::{ToolContext, ToolError};
    /// # async fn decline(ctx: ToolContext) -> Result<String, ToolError> {
    /// let declined = ctx
    ///     .decline_invitation("go", Some("g1"))
    ///     .await
    ///     .map_err(|e| ToolError::failed(e.to_string()))?;
    /// Ok(format!("You declined: {}", declined.reason))
    /// # }
    /// ```
    pub async fn decline_invitation(
        &self,
        toolset: &str,
        instance: Option<&str>,
    ) -> Result<Invitation, DeclineError> {
        let (reply, rx) = oneshot::channel();
        self.session.for_handler(ForHandler::Decline {
            toolset: toolset.to_owned(),
            instance: instance.map(str::to_owned),
            reply,
        });
        rx.await.unwrap_or(Err(DeclineError::Closed))
    }
}

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

use crate::author::Refusal;
use crate::core::{CloseError, OpenError};
use crate::session::SessionClosed;
use crate::tool::{ToolContext, ToolError};
use mcpl_protocol::mcp::ContentBlock;
use mcpl_transport::Principal;
use serde_json::Value;
use tokio::sync::oneshot;

/// What [`ToolContext::open_toolset`] opened (or adopted).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Opened {
    /// The toolset.
    pub toolset: String,
    /// The instance's name as the caller's principal knows it (for a toolset with
    /// instances): the proposed one, or the one the server chose.
    pub instance: Option<String>,
    /// Its title.
    pub title: Option<String>,
    /// True when it was open already and was adopted: nothing changed (§4.2, vector 17).
    pub adopted: bool,
    /// What the toolset's logic told the opener (a board); for an adoption, that it was
    /// adopted and whether the requested options differ.
    pub content: Vec<ContentBlock>,
}

/// Why [`ToolContext::open_toolset`] opened nothing, sorted by who is at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenToolsetError {
    /// The open breaks a rule of §4.1/§4.2 (no such toolset, an instance name for a
    /// toolset without instances, a malformed name, options the schema refuses, too many
    /// open): what a host's `toolsets/open` would get as -32602.
    #[error(transparent)]
    Invalid(OpenError),
    /// The toolset's logic refused it (its text says why).
    #[error("{0}")]
    Refused(Refusal),
    /// The calling session ended before the open was answered.
    #[error("the session closed")]
    Closed,
    /// The toolset's logic failed (panicked) opening it.
    #[error("the toolset failed to open")]
    Failed,
}

impl From<OpenToolsetError> for ToolError {
    /// A refusal the model can act on is a tool error saying why; the rest are internal.
    fn from(e: OpenToolsetError) -> Self {
        match e {
            OpenToolsetError::Invalid(_) | OpenToolsetError::Refused(_) => {
                ToolError::failed(e.to_string())
            }
            OpenToolsetError::Closed | OpenToolsetError::Failed => ToolError::internal(e),
        }
    }
}

/// Why [`ToolContext::close_toolset`] closed nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CloseToolsetError {
    /// The close breaks a rule of §4.2 (no such toolset, the instance missing or not
    /// allowed, not open): what a host's `toolsets/close` would get as -32602.
    #[error(transparent)]
    Invalid(CloseError),
    /// The calling session ended before the close was answered.
    #[error("the session closed")]
    Closed,
}

impl From<CloseToolsetError> for ToolError {
    fn from(e: CloseToolsetError) -> Self {
        match e {
            CloseToolsetError::Invalid(_) => ToolError::failed(e.to_string()),
            CloseToolsetError::Closed => ToolError::internal(e),
        }
    }
}

/// An invitation into a shared instance that the principal has neither taken up nor
/// declined (§4.6).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Invitation {
    /// The toolset.
    pub toolset: String,
    /// The name this principal sees the instance under: opening it
    /// (`toolsets/open`, or [`ToolContext::open_toolset`]) joins. It is the opener's name,
    /// or that name with a `-N` suffix when this principal already used it.
    pub instance: Option<String>,
    /// Why it was sent, as the inviting logic put it ("alice challenges you to Go 9x9").
    pub reason: String,
    /// The instance's options, as suggested to this principal.
    pub options: Option<Value>,
    /// The principal that opened the instance.
    pub from: Principal,
}

/// Why [`ToolContext::decline_invitation`] declined nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DeclineError {
    /// The principal has no such invitation (never had, or it was withdrawn, joined or
    /// declined). `open` is true when the principal has an instance open under that name
    /// — it may have joined it on another connection.
    #[error("there is no invitation to {}{}", marker(.toolset, .instance.as_deref()), if *.open { "; it is open (joined already?)" } else { "" })]
    NotInvited {
        /// The toolset named.
        toolset: String,
        /// The instance named.
        instance: Option<String>,
        /// An instance of that name is open for the principal.
        open: bool,
    },
    /// The calling session ended before the decline was answered.
    #[error("the session closed")]
    Closed,
}

/// `toolset` or `toolset:instance`, as in a host's marker (§6).
fn marker(toolset: &str, instance: Option<&str>) -> String {
    match instance {
        Some(i) => format!("{toolset}:{i}"),
        None => toolset.to_owned(),
    }
}

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
        self.session.for_handler(crate::session::ForHandler::Open {
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
        self.session.for_handler(crate::session::ForHandler::Close {
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
        self.session
            .for_handler(crate::session::ForHandler::Invitations { reply });
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
        self.session
            .for_handler(crate::session::ForHandler::Decline {
                toolset: toolset.to_owned(),
                instance: instance.map(str::to_owned),
                reply,
            });
        rx.await.unwrap_or(Err(DeclineError::Closed))
    }
}

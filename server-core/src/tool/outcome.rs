//! What a tool handler's toolset requests come to ([`Opened`], [`Invitation`]) and why they
//! fail ([`OpenToolsetError`], [`CloseToolsetError`], [`DeclineError`]). Plain data: the
//! principal actor builds these answers without knowing the session that asked.

use super::error::ToolError;
use crate::author::Refusal;
use crate::{CloseError, OpenError};
use mcpl_protocol::mcp::ContentBlock;
use mcpl_protocol::principal::Principal;
use serde_json::Value;

/// What `ToolContext::open_toolset` opened (or adopted).
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

/// Why `ToolContext::open_toolset` opened nothing, sorted by who is at fault.
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
    /// The server could not keep the open: its store failed (the store's error).
    #[error("not acknowledged: the server could not keep what this changed ({0})")]
    NotKept(String),
    /// Nothing was opened: the server could not take an id for a new instance from its
    /// store just now (issue #41; the store's error). The same open may be tried again.
    #[error(
        "the toolset could not be opened just now: no instance id could be taken from the store ({0}); nothing was opened, try again"
    )]
    Unavailable(String),
}

impl From<OpenToolsetError> for ToolError {
    /// A refusal the model can act on is a tool error saying why; the rest are internal.
    fn from(e: OpenToolsetError) -> Self {
        match e {
            OpenToolsetError::Invalid(_) | OpenToolsetError::Refused(_) => {
                ToolError::failed(e.to_string())
            }
            OpenToolsetError::Closed
            | OpenToolsetError::Failed
            | OpenToolsetError::NotKept(_)
            | OpenToolsetError::Unavailable(_) => ToolError::internal(e),
        }
    }
}

/// Why `ToolContext::close_toolset` closed nothing.
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
    /// The server could not keep the close: its store failed (the store's error).
    #[error("not acknowledged: the server could not keep what this changed ({0})")]
    NotKept(String),
}

impl From<CloseToolsetError> for ToolError {
    fn from(e: CloseToolsetError) -> Self {
        match e {
            CloseToolsetError::Invalid(_) => ToolError::failed(e.to_string()),
            CloseToolsetError::Closed | CloseToolsetError::NotKept(_) => ToolError::internal(e),
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
    /// (`toolsets/open`, or `ToolContext::open_toolset`) joins. It is the opener's name,
    /// or that name with a `-N` suffix when this principal already used it.
    pub instance: Option<String>,
    /// Why it was sent, as the inviting logic put it ("alice challenges you to Go 9x9").
    pub reason: String,
    /// The instance's options, as suggested to this principal.
    pub options: Option<Value>,
    /// The principal that opened the instance.
    pub from: Principal,
}

/// Why `ToolContext::decline_invitation` declined nothing.
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

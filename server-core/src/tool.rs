//! What a tool call comes to, as values the cores and the handlers both name: a handler's
//! error ([`error`]) and what a handler's opening, closing or declining a toolset comes to
//! ([`outcome`]). `mcpl_server::tool` re-exports them beside the handler's context.

pub mod error;
pub mod outcome;

pub use error::{ToolError, ToolResult};
pub use outcome::{CloseToolsetError, DeclineError, Invitation, OpenToolsetError, Opened};

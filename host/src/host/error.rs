//! Why the host could not be made or reached. A tool call never fails with one of these:
//! whatever goes wrong with a call becomes a tool error the agent reads (§6).

use crate::state::conversation::ServerNameError;
use mcpl_protocol::names::NameError;

/// The host's errors, by who is at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    // The configuration.
    /// A server's name does not fit the name grammar (§4.1): it appears in markers and in
    /// `server--tool`, so it may hold no `/`, `:` or `.`.
    #[error("{name:?} is not a usable server name: {error}")]
    BadServerName {
        /// The name.
        name: String,
        /// What is wrong with it.
        error: NameError,
    },
    /// A server's name would make the model's tool names collide (§6, RFC §8.1): the
    /// meta-tools' `toolsets`, or one holding `--` or ending with `-`.
    #[error("{name:?} cannot name a server: {error}")]
    CollidingServerName {
        /// The name.
        name: String,
        /// Why.
        error: ServerNameError,
    },
    /// Two servers have one name.
    #[error("two servers are named {name:?}")]
    DuplicateServer {
        /// The name.
        name: String,
    },

    // The host.
    /// The host actor has stopped.
    #[error("the host has stopped")]
    Stopped,
}

impl From<actix::MailboxError> for HostError {
    fn from(_: actix::MailboxError) -> Self {
        HostError::Stopped
    }
}

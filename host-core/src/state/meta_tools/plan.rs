//! What a meta-tool call becomes ([`Plan`]), what the meta-tools read ([`World`]) and
//! their settings: the types every meta-tool's module shares, apart from the module that
//! dispatches to them.

use crate::state::args_check::CheckLimits;
use crate::state::presenter::{Presenter, TextBounds};
use crate::state::view::{Marker, ServerView};
use mcpl_protocol::CallToolParams;
use mcpl_protocol::CallToolResult;
use mcpl_protocol::toolsets::{ToolsetsCloseParams, ToolsetsOpenParams};
use std::collections::BTreeSet;

use super::error::MetaError;

/// What the meta-tools read: every server, and the presenter (ended records and
/// suggestions for `look`).
#[derive(Debug, Clone, Copy)]
pub struct World<'a> {
    /// Every server the agent can reach.
    pub servers: &'a [ServerView<'a>],
    /// The presenter.
    pub presenter: &'a Presenter,
}

impl<'a> World<'a> {
    /// The server of that name.
    pub fn server(&self, name: &str) -> Option<&'a ServerView<'a>> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// True when the agent's tool list has the meta-tools: some server's hints count (as
    /// [`ToolList::build`](crate::state::conversation::ToolList::build) decides). Errors point to
    /// them only then.
    pub fn meta_tools_listed(&self) -> bool {
        self.servers.iter().any(|s| s.catalog.hints_count())
    }
}

/// A request for a server's link.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// `tools/call`.
    Call(CallToolParams),
    /// `toolsets/open`.
    Open(ToolsetsOpenParams),
    /// `toolsets/close`.
    Close(ToolsetsCloseParams),
}

/// What the result of a [`SendPlan`] is about, for [`Presenter::finish`].
#[derive(Debug, Clone, PartialEq)]
pub enum After {
    /// A tool call.
    Call {
        /// The tool, by the server's name for it.
        tool: String,
        /// Where it was called (`act` of a toolset's tool); None for a direct call.
        marker: Option<Marker>,
        /// True when the agent called it through `toolsets--act`.
        via_act: bool,
    },
    /// An open; the marker names the proposed instance, if any.
    Open {
        /// What is being opened.
        marker: Marker,
    },
    /// A close.
    Close {
        /// What is being closed.
        marker: Marker,
    },
}

/// A request to send, and what its result is about.
#[derive(Debug, Clone, PartialEq)]
pub struct SendPlan {
    /// The server, by its name in this host.
    pub server: String,
    /// The request.
    pub request: Outgoing,
    /// What the result is about.
    pub after: After,
}

/// An undeclared group to open or close locally (§4.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupPlan {
    /// The server.
    pub server: String,
    /// The group.
    pub group: String,
    /// Open (true) or close.
    pub open: bool,
}

/// An answer made without the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The result for the agent.
    pub result: CallToolResult,
    /// The open toolsets it shows (they count as announced).
    pub announces: BTreeSet<Marker>,
}

/// What to do with a model's tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Send a request (see the module doc).
    Send(SendPlan),
    /// Open or close an undeclared group locally.
    Group(GroupPlan),
    /// Answer locally.
    Answer(Answer),
    /// Refuse without sending: answer with [`MetaError::to_result`].
    Refused(MetaError),
}

/// [`MetaConfig::max_look_bytes`] by default: 48 KiB.
pub const DEFAULT_MAX_LOOK_BYTES: usize = 48 * 1024;

/// Settings of the meta-tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaConfig {
    /// Bounds of `act`'s argument check (§6).
    pub check: CheckLimits,
    /// Bounds on server text in `look`.
    pub bounds: TextBounds,
    /// Bytes one `look` answer holds (whole lines; past it, a last line counts what was
    /// left out and says how to narrow the look; issue #37 item 5).
    pub max_look_bytes: usize,
    /// A tag in proposed instance names (`game-<tag>1`), so hosts sharing a principal do
    /// not propose the same names; none by default. Only its letters, digits, `_` and `-`
    /// are used, at most 16 of them.
    pub instance_tag: Option<String>,
    /// The first number proposed.
    pub first_instance: u64,
}

impl Default for MetaConfig {
    fn default() -> Self {
        MetaConfig {
            check: CheckLimits::default(),
            bounds: TextBounds::default(),
            max_look_bytes: DEFAULT_MAX_LOOK_BYTES,
            instance_tag: None,
            first_instance: 1,
        }
    }
}

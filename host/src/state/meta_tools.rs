//! The pure part of the meta-tools (§6 "RFC §8.2"): `toolsets--open`, `toolsets--act`,
//! `toolsets--look` and `toolsets--close`, a small constant set of the host's own,
//! aggregated across every server — and the direct call of a static `server--tool`, which
//! `act` shares its dispatch with. Each call becomes a [`Plan`]:
//!
//! | plan | the Host then |
//! |---|---|
//! | [`Plan::Send`] | `presenter.sending(server)`; sends [`SendPlan::request`] on that server's link; `presenter.finish(view, &plan, outcome)` gives the agent's result |
//! | [`Plan::Group`] | [`apply_group`] to that server's catalog (never sent, §4.4); `presenter.group_changed(view, &plan)` gives the agent's answer |
//! | [`Plan::Answer`] | answers with it (`look`); `presenter.shown(&answer.announces)` |
//! | [`Plan::Refused`] | answers with [`MetaError::to_result`]: nothing is sent |
//!
//! # Rules, and where each is enforced
//!
//! | rule | § | where |
//! |---|---|---|
//! | `server` may be left out when the name is unambiguous; otherwise the candidates are named | §6 | `resolve` |
//! | `open`/`close` refuse an `instance` for a toolset without instances before sending | §4.2 | `open_close` |
//! | `open` of an instanced toolset without a name proposes a fresh one (`game-1`, …) so a retried open finds what the first opened **\[project\]** | §4.2, vector 18 | [`MetaTools::propose_instance`] |
//! | instance names are checked against the grammar before sending | §4.1 | `open_close` |
//! | `close` needs the instance when several are open, fills it in when one is | §4.2 | `open_close` |
//! | undeclared groups are opened and closed here alone, and their closed tools gated | §4.4, vector 10 | `open_close`, `act` |
//! | `act`: the named instance, or the only open one, or an error naming the open ones | §4.5, vector 6 | `act` |
//! | `act` refuses a tool not visible in that instance (and names where it is usable) | §3, vector 11 | `act` |
//! | `act` of a read-only tool reaches a finished instance whose record is kept; another tool is refused naming what still answers, not advised to re-open **\[project\]** | §4.3 | `act` |
//! | `act` checks `args` against the instance's current definition, bounded | §6 | `act` with [`args_check`](super::args_check) |
//! | `act` goes down the same dispatch path as a direct call, adding only `_meta["mcpl/instance"]` | §6 | `act::dispatch` |
//! | a dynamic tool called as `server--tool` is refused, pointing to `act` | §6 "RFC §8.1" | `act::direct` |
//! | tool policy: a denied tool is not callable through `act`, nor shown by `look` | §6 | `resolve`, `look` |
//! | suggestions are shown by `look`, never acted on | §5.3, vector 19 | `look` |
//!
//! A server named `toolsets` would collide with the meta-tools' names; the meta-tools win.

mod act;
mod args;
mod defs;
mod error;
mod look;
mod open_close;
mod resolve;
#[cfg(test)]
mod tests;

pub use defs::{ACT, CLOSE, LOOK, OPEN, definitions, is_meta_tool};
pub use error::{EndedCall, MetaError};

use super::args_check::CheckLimits;
use super::catalog::Catalog;
use super::presenter::{Presenter, TextBounds};
use super::view::{Marker, ServerView};
use mcpl_protocol::CallToolParams;
use mcpl_protocol::CallToolResult;
use mcpl_protocol::names::{MAX_NAME_LEN, is_valid_name};
use mcpl_protocol::toolsets::{ToolsetsCloseParams, ToolsetsOpenParams};
use serde_json::Value;
use std::collections::BTreeSet;

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
    /// [`ToolList::build`](super::conversation::ToolList::build) decides). Errors point to
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

/// The meta-tools: stateless but for the counter of proposed instance names.
#[derive(Debug, Clone)]
pub struct MetaTools {
    config: MetaConfig,
    next_instance: u64,
}

impl MetaTools {
    /// Meta-tools with these settings.
    pub fn new(config: MetaConfig) -> Self {
        let next_instance = config.first_instance;
        MetaTools {
            config,
            next_instance,
        }
    }

    /// Plans a model's tool call: one of the four meta-tools, or a direct `server--tool`.
    pub fn plan(&mut self, name: &str, args: &Value, world: &World<'_>) -> Plan {
        let planned = match name {
            OPEN => self.open(args, world),
            ACT => act::act(&self.config, args, world),
            LOOK => look::look(&self.config, args, world),
            CLOSE => open_close::close(args, world),
            _ => act::direct(name, args, world),
        };
        planned.unwrap_or_else(Plan::Refused)
    }

    /// A fresh instance name for `toolset` that is not open on `view`: `<toolset>-<n>`
    /// (with the configured tag before `n`), fitting the name grammar (§4.1). A host that
    /// may retry proposes a name, so a retried open finds the first one (§4.2, vector 18).
    pub fn propose_instance(&mut self, view: &ServerView<'_>, toolset: &str) -> String {
        // Only grammar characters, so every proposal below is a valid name and the loop
        // ends (only finitely many instances can be open).
        let tag: String = self
            .config
            .instance_tag
            .as_deref()
            .unwrap_or_default()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .take(16)
            .collect();
        loop {
            let n = self.next_instance;
            self.next_instance = self.next_instance.wrapping_add(1);
            // ASCII throughout: at most 1 + 16 + 20 bytes.
            let suffix = format!("-{tag}{n}");
            let room = MAX_NAME_LEN - suffix.len();
            let base: String = toolset.chars().take(room).collect();
            let mut name = format!("{base}{suffix}");
            if !is_valid_name(&name) {
                // A toolset name outside the grammar (a faulty server): a neutral base.
                name = format!("i{suffix}");
            }
            // Not a name open now, nor one whose end may still be told (§4.2, §4.3).
            let taken = view.hints.is_some_and(|h| h.name_in_use(toolset, &name));
            if !taken {
                return name;
            }
        }
    }
}

/// Applies a [`GroupPlan`] to the server's catalog: the group opens or closes here alone,
/// nothing is sent (§4.4, vector 10). True when it changed. Then
/// [`Presenter::group_changed`] gives the agent's answer.
pub fn apply_group(plan: &GroupPlan, catalog: &mut Catalog) -> bool {
    if plan.open {
        catalog.open_group(&plan.group)
    } else {
        catalog.close_group(&plan.group)
    }
}

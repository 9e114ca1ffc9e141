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
mod plan;
mod propose;
mod resolve;
#[cfg(test)]
mod tests;

pub use defs::{ACT, CLOSE, LOOK, OPEN, definitions, is_meta_tool};
pub use error::{EndedCall, MetaError};
pub use plan::{
    After, Answer, DEFAULT_MAX_LOOK_BYTES, GroupPlan, MetaConfig, Outgoing, Plan, SendPlan, World,
};

use super::catalog::Catalog;
use super::view::ServerView;
use serde_json::Value;

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
            OPEN => open_close::open(&self.config, &mut self.next_instance, args, world),
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
        propose::instance(&self.config, &mut self.next_instance, view, toolset)
    }
}

/// Applies a [`GroupPlan`] to the server's catalog: the group opens or closes here alone,
/// nothing is sent (§4.4, vector 10). True when it changed. Then
/// [`Presenter::group_changed`](super::Presenter::group_changed) gives the agent's answer.
pub fn apply_group(plan: &GroupPlan, catalog: &mut Catalog) -> bool {
    if plan.open {
        catalog.open_group(&plan.group)
    } else {
        catalog.close_group(&plan.group)
    }
}

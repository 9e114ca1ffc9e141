//! The host's pure state machines for RFC-014: no I/O, no clock, no async. The
//! `ServerLink` actor feeds them what it reads, in read order, and acts on what they return.
//!
//! | module | what | spec |
//! |---|---|---|
//! | [`hint_state`] | one connection's hint state: `last` rev, held early messages, visibility and definitions per (tool, instance), presence with its rev stamp, open toolsets, recovery | §3, §4.3, §5.1, §5.2 |
//! | [`stamped`] | one server's hint state on MCP 2026-07-28 under this project's stateless profile: newest stamp wins per key, closed instances as tombstones, statements replace, the `since` mark | profile §2, §3.3, §3.5 (`docs/rfc014-stateless.md`) |
//! | [`output`] | what the hint state reports: each change once, with its cause, and `Recover` | §5.2, §6 |
//! | [`catalog`] | one server's tools: whether hints count, static vs dynamic, declared toolsets, undeclared groups, the model's tool list and its boundaries, manifest changes | §2, §3, §4.1, §4.4 |
//! | [`view`] | [`ServerView`]: one server as presentation reads it (catalog, hint state, policy, `pushEvents` grant); markers; what is open and usable now | §6 |
//! | [`tool_policy`] | per-server allow/deny lists with `*` | §6 |
//! | [`presenter`] | what the agent is told, once: markers, announcements on results, after pushes or as notices, reminders, ended ids told (persisted by the Host's `mcpl_host::host::ToldStore`: no I/O in this module) | §4.3, §6, §7 |
//! | [`conversation`] | the messages the agent was shown, its context window, and the model's tool list | §6 |
//! | [`meta_tools`] | `toolsets--open/act/look/close` and direct `server--tool` calls, planned | §4.2, §4.4, §4.5, §6 |
//! | [`args_check`] | `act`'s bounded argument check (depth 24, 5,000 steps, no regex) | §6, §7 |
//! | [`keys`] | the `(name, instance)` keys of the per-tool tables, looked up without allocating | |
//! | `listing` | a `tools/list` as the catalog and the hint state keep it: the one shared list and an entry per name | §3 |
//! | `seen_ids` | the bounded set of push event ids seen on one connection | §5.2, vector 35 |
//! | [`host_core`] | [`HostCore`]: all of the above composed for one agent — every server's [`ServerSlot`] (its connection's phase: the link's [`LinkPhase`](crate::link::phase::LinkPhase) as last told, reads of its state, hold deadline), driven by inputs with `now` and drained through `poll_action`/`poll_shown` | §4.3, §5.2, §6 |
//!
//! # The rules, and where each is enforced
//!
//! | rule | § | where |
//! |---|---|---|
//! | a message's changes apply when it is **read**, whatever is decided about it (refused push, timed-out call) | §5.2, vectors 3, 28 | [`HintState::handle_hints`] is called by the read tap |
//! | `rev == last + 1`: apply, then drain held successors | §5.2 | `handle_hints`, `drain` |
//! | `rev <= last`: visibility, definition, toolset entries stale; ordered link: recover | §5.2, vectors 4, 21 | `stale` |
//! | `rev > last + 1`: ordered: recover; unordered: hold for the window (250 ms) | §5.2, vectors 21, 37 | `early`, [`HintState::handle_timeout`] |
//! | presence by stamp, whatever the message's fate | §3 | `set_presence`, `stamp_presence` |
//! | `mcpl/toolset` implies dynamic; an explicit static is ignored | §3, vector 16 | [`HintState::presence`] (the one place presence is read) |
//! | a definition changes only description, inputSchema, annotations | §5.1, vector 20 | [`DefinitionOverride::from_hint`] |
//! | a seen push `eventId`: hints ignored, rev counted as read | §5.2, vector 35 | `handle_hints` |
//! | a push with `coalesce` and hints: hints ignored, recover | §5.2 | `handle_hints` |
//! | one recovery at a time; `toolsets/list` then `tools/list` | §5.2 | `request_recovery`, the phases |
//! | the statement replaces dynamic visibility and definitions, and open state | §4.3, vectors 23, 38 | [`HintState::handle_statement`] |
//! | after a statement at M, held or late revs ≤ M are ignored | §5.2, vector 22 | `handle_statement`, `stale` |
//! | `tools/list` applies presence by stamp K and does not move `last` | §3, §5.2, vector 27 | [`HintState::handle_tools_list`] |
//! | a closed instance takes its visibility and own definitions with it | §4.3 | `drop_instance_state` |
//! | an open entry or record that does not fit the declared toolsets (undeclared, or an instance where the declaration says otherwise) is ignored, alone **\[project\]** | §4.1, §5.1 | [`HintState::set_declared`], `fits` |
//! | an ended record is reported once per connection | §4.3, vector 13 | `report_ended` |
//!
//! Whether hints count at all (both sides advertised `toolHints`, §2, vector 30) is the
//! [`Catalog`]'s to say, and the link's to act on: a link whose hints do not count never
//! feeds a `HintState`. Announcement wording, markers, and telling an ended id once across
//! restarts belong to the presenter.
//!
//! # Wiring (what the link does with each read)
//!
//! | read | call | then |
//! |---|---|---|
//! | `initialize` result | `Catalog::new(host_hints, manifest)`, `HintState::new(config)` per connection | |
//! | `tools/list` (all pages; the link's `ToolsListed` event carries K and the list, shared) | `HintState::handle_tools_list_shared(tools, K)`, then `Catalog::set_tools_shared(tools, \|t\| hint_state.presence(t))`: both keep the one list, no tool is copied | |
//! | `toolsets/list` | `HintState::handle_statement(hints, open, ended, now)` | |
//! | a result's `mcpl/hints`, a push's `hints`, `tools/hints` | `HintState::handle_hints(carrier, hints, now)` | |
//! | timer at `poll_timeout()` | `HintState::handle_timeout(now)` | |
//! | `Output::Recover` | read `toolsets/list`, then `tools/list` | on failure `handle_recovery_failed()` |
//! | `Change::Presence` | `Catalog::set_presence(tool, p)` | told at `rebuild_boundary()` |
//! | `mcpl/manifestChanged` (`toolsets` domain) | `Catalog::update_manifest(manifest)` | `ToolsetRemoved` → `HintState::close_toolset`; `HintsWithdrawn` → drop the hint state |
//!
//! # Wiring the agent's side (what [`HostCore`] does)
//!
//! [`HostCore`] is this wiring, in code; the actor `mcpl_host::host::Host` feeds it what the
//! links tell and the agent asks, and carries out its [`Action`]s (its module doc says how
//! read order is kept between the link's tap and the Host's mailbox).
//!
//! The core owns, per server, the [`Catalog`], the current connection's `Option<HintState>`,
//! a [`ToolPolicy`] and whether it granted `pushEvents`, and builds a [`ServerView`] from
//! them whenever it calls in; and, once, a [`Presenter`], a [`Conversation`] per agent and
//! [`MetaTools`]. Every `Vec<AgentMessage>` returned below is shown to the agent and
//! recorded with `Conversation::push`. Outputs are fed in read order: the tap's hint-state
//! outputs reach the presenter before the result or push they came with is handled.
//!
//! | event | call | then |
//! |---|---|---|
//! | start | `ToldStore::new(state_dir).load(cap)` → `Presenter::new(config, told)` (a corrupt file: log, start empty) | |
//! | any `HintState` call above returned outputs | `Presenter::ingest(view, &outputs)` | show the notices |
//! | a `push/event` was decided | `Presenter::push(view, &params, accepted)` | show it (the changes it carried follow its content) |
//! | `CatalogOutput`s (a boundary, a manifest change) | `Presenter::catalog_outputs(view, &outs)` | show the notices |
//! | a connection ended | `Presenter::disconnected(view)` | show the notices |
//! | the agent calls a tool `name` with `args` | `MetaTools::plan(name, &args, &World { servers, presenter })` | by [`Plan`]: |
//! | — `Plan::Send(p)` | `Presenter::sending(&p.server)`; send `p.request` on the link | on the answer or failure: `Presenter::finish(view, &p, outcome)` → the agent's result, its `announces`, and notices |
//! | — `Plan::Group(g)` | `meta_tools::apply_group(&g, &mut catalog)` (nothing is sent, §4.4) | `Presenter::group_changed(view, &g)` → the answer |
//! | — `Plan::Answer(a)` | answer `a.result` | `Presenter::shown(&a.announces)` |
//! | — `Plan::Refused(e)` | answer `e.to_result()` (nothing is sent) | |
//! | a tool-list boundary (new conversation, compaction, list_changed) | each `Catalog::rebuild_boundary()` → `catalog_outputs`; then `Conversation::rebuild_tool_list(views, bounds)` | the only way the model's list changes (vector 12) |
//! | the host opens/closes a group or edits a policy on its own | `Presenter::refresh(view)` | show the notices |
//! | the agent's turn starts | `Presenter::reminder(&conversation, views)` | show it, if any |
//! | after any of these | `if presenter.take_told_dirty() { store.save(presenter.told_ids()) }` | vector 13 across restarts |
//!
//! Record a tool result in the conversation with the markers it announces
//! (`Finished::announces`, `Answer::announces`), so reminders know what is in view.

pub mod args_check;
pub mod catalog;
pub mod conversation;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod hint_state;
pub mod host_core;
pub mod keys;
mod listing;
pub mod meta_tools;
pub mod output;
pub mod presenter;
// `pub` (it was `pub(crate)`) for the link actor in `mcpl-host`, which keeps the admitted
// push ids across connections; hidden: the driver's interface, not an API.
#[doc(hidden)]
pub mod seen_ids;
pub mod stamped;
pub mod tool_policy;
pub mod view;

pub use args_check::{ArgCheck, CheckLimits, Problem, Unchecked};
pub use catalog::{CallGate, Catalog, CatalogOutput, ToolsetRef};
pub use conversation::{AgentMessage, Conversation, ConversationConfig, MessageKind, ToolList};
#[cfg(feature = "fault-injection")]
pub use hint_state::HintFault;
pub use hint_state::{
    DEFAULT_HOLD_WINDOW, DEFAULT_MAX_HELD, DefinitionOverride, HintConfig, HintState, OpenToolset,
};
pub use host_core::{
    Action, CoreConfig, HintSummary, HostCore, HostStatus, RESULTS_READ, ReadOutcome, ReadStep,
    ServerSlot, ServerStatus, Step, reads_result, wants_read,
};
pub use meta_tools::{
    After, Answer, GroupPlan, MetaConfig, MetaError, MetaTools, Outgoing, Plan, SendPlan, World,
};
pub use output::{Carrier, Cause, Change, HintStats, Output, RecoverReason, ResultOf};
pub use presenter::{
    CallFailure, Finished, Outcome, Presenter, PresenterConfig, TextBounds, ToldFile, ToldIds,
};
pub use tool_policy::ToolPolicy;
pub use view::{Marker, ServerView};

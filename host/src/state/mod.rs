//! The host's pure state machines for RFC-014: no I/O, no clock, no async. The
//! `ServerLink` actor feeds them what it reads, in read order, and acts on what they return.
//!
//! | module | what | spec |
//! |---|---|---|
//! | [`hint_state`] | one connection's hint state: `last` rev, held early messages, visibility and definitions per (tool, instance), presence with its rev stamp, open toolsets, recovery | §3, §4.3, §5.1, §5.2 |
//! | [`output`] | what the hint state reports: each change once, with its cause, and `Recover` | §5.2, §6 |
//! | [`catalog`] | one server's tools: whether hints count, static vs dynamic, declared toolsets, undeclared groups, the model's tool list and its boundaries, manifest changes | §2, §3, §4.1, §4.4 |
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
//! | `tools/list` (all pages) | `HintState::handle_tools_list(tools, K)`, then `Catalog::set_tools(tools, \|t\| hint_state.presence(t))` | |
//! | `toolsets/list` | `HintState::handle_statement(hints, open, ended, now)` | |
//! | a result's `mcpl/hints`, a push's `hints`, `tools/hints` | `HintState::handle_hints(carrier, hints, now)` | |
//! | timer at `poll_timeout()` | `HintState::handle_timeout(now)` | |
//! | `Output::Recover` | read `toolsets/list`, then `tools/list` | on failure `handle_recovery_failed()` |
//! | `Change::Presence` | `Catalog::set_presence(tool, p)` | told at `rebuild_boundary()` |
//! | `mcpl/manifestChanged` (`toolsets` domain) | `Catalog::update_manifest(manifest)` | `ToolsetRemoved` → `HintState::close_toolset` |

pub mod args_check;
pub mod catalog;
pub mod hint_state;
pub mod output;
mod seen_ids;

pub use catalog::{CallGate, Catalog, CatalogOutput, ToolsetRef};
pub use hint_state::{
    DEFAULT_HOLD_WINDOW, DEFAULT_MAX_HELD, DefinitionOverride, HintConfig, HintState, OpenToolset,
};
pub use output::{Carrier, Cause, Change, HintStats, Output, RecoverReason, ResultOf};

//! The MCPL server's pure cores (issue #38): the server's RFC-014 rules as state machines,
//! no I/O, no async, no clock. `mcpl-server` drives them from its actors and re-exports
//! what its users name at their old paths (`mcpl_server::push`, `mcpl_server::manifest`,
//! the errors and values in `mcpl_server::tool` and `mcpl_server::author`); this crate's
//! `Cargo.toml` is what keeps them pure: it depends on no async runtime, actor framework,
//! transport or I/O crate, and `scripts/purity.py` reads `cargo tree -p mcpl-server-core -e
//! normal` to prove it.
//!
//! Time comes in as a [`std::time::SystemTime`] argument; every output is a returned value
//! (a [`HintDraft`] of changes to send, a record, a typed error). The actors around these
//! cores — `SessionActor` (one per connection), `PrincipalActor` (one per principal) and
//! `InstanceActor` (one per toolset instance) — feed a core, and send what it returned; no
//! actor file decides a rule of the RFC. Every rule
//! of the spec that lives here is marked with its section of `shared/spec/RFC-014.md`.
//!
//! | module | core | owns | spec |
//! |---|---|---|---|
//! | [`draft`] | [`HintDraft`] | hint changes not yet numbered | §5.1 |
//! | [`sequencer`] | [`Sequencer`] | one connection's `rev` counter | §5.2, §3 |
//! | [`carrier`] | [`Carriers`](carrier::Carriers) | one connection's carrier choice (result, push, `tools/hints`), cancelled and deferred calls, changes held for a call's result | §5.2, §5.3 |
//! | `session` | `SessionCore` | one connection's session in the style of quinn-proto: the host's messages, the principal's deliveries and handler ends in; messages to write and things to do out, drained with `poll`; routing, the lifecycle, requests in flight, the carrier choice and the rules joining them; the era of each request and what a modern one is owed (`session/modern.rs`), its `subscriptions/listen` streams (`session/listen.rs`) | §2, §3, §4.3, §5.2, §5.3, SPEC §3, §6 (vectors 2, 3, 29, 31, 38); MCP 2026-07-28 |
//! | [`dispatch`] | `Route` | the receipt of a client's message, shared with the surface host: the one table of request methods (built from the method markers), each request's era, a legacy request's route and the before-`initialize` rule, a modern one's route and version, the notifications a session acts on, the refusal of a message too large | MCP "Lifecycle", `basic/versioning.md`; issue #38 item 5 |
//! | `requests` | `Requests` | one connection's requests in flight: forwarded to the principal or running as handler calls; id reuse (its refusal's words, shared with the surface host), a bound on how many, answer-once, cancellation, progress | JSON-RPC, MCP "Cancellation", "Progress", §5.2 (vector 29) |
//! | [`lifecycle`] | `Lifecycle` | one connection's phases (`initialize`, `featureSets/update`), the negotiated version and features, the grant | SPEC §3, §6 |
//! | [`catalog`] | [`Catalog`] | the tools with their declared hints, the toolset declarations, what each kind of host is shown, manifest diffs | §3, §4.1, §8 |
//! | [`principal`] | [`PrincipalState`] | one principal's open instances, per-instance visibility and definitions, ended records, call resolution; its version and the stamp of every entry, tombstones of closed instances (`principal/stamps.rs`) | §4.2–§4.6, §5.1, §7; `docs/rfc014-stateless.md` §2 |
//! | `principal_core` | `PrincipalCore` | one principal in the style of `SessionCore`: its sessions, links to instances and invitations in; what to tell whom, instances to start, join, close or leave out, drained with `poll`; the default opens, the last connection's end, the implicit opens for plain hosts, the asked or shown end, the split of each change among the sessions, invitations and their names, where a call goes | §4.1, §4.2, §4.3, §4.5, §4.6, §5.3, §7, §8 |
//! | `instance_core` | `InstanceCore` | one toolset instance: its participants, links, waiting calls, invitations; a step's effects in, one batch per participant principal, invitations, timers out; the end and a panic's end, who may call and join, leaving | §4.2, §4.3, §4.5, §4.6, §5.3, §7 |
//! | `batch` | `Batch` | what one step of an instance means for one principal, and what an instance answers an open, a join or a close | §5.1, §5.3 |
//! | [`ids`] | `SessionId`, `InstanceId` | what actors and cores name each other by | |
//! | [`author`] | `Event`, `Effect`, `Refusal` | the values an instance's logic and the cores share: a call's id, an event, participants and audiences, a refusal, what a step did | §5.1, §10 |
//! | [`tool`] | `ToolError` | a handler's error, and what a handler's open, close or decline of a toolset comes to | §4.2, §4.3, §7 |
//! | [`store`] | `Ticket` | the records a server keeps (JSON), why a step was not kept (`NotKept`), a step's place in the commit queue | issue #15, #37 |
//! | [`push`] | `PushEvent` | a push event and its checks | SPEC §9 |
//! | [`manifest`] | | manifest checks, each host's view of it, changed domains | SPEC §17 |
//! | [`paging`] | | `tools/list` paging | MCP |
//! | [`wire`] | `ToInstance`, `ToPrincipal`, `Reply` | the messages between a principal and an instance on two nodes, as JSON, bounded; numbered one-way streams and their acknowledgements (sent by `mcpl_server`'s `actors/remote.rs` through its `Peers`) | issue #41, `docs/ownership.md` §2 |
//! | [`mrtr`] | `Carried` | MCP 2026-07-28 multi round-trip requests: a handler's question as an `InputRequiredResult`, its signed `requestState`, the retry's answers | MCP 2026-07-28 |
//!
//! How the actors use them, in one picture:
//!
//! ```text
//!  host ──toolsets/open──▶ SessionActor ──▶ PrincipalActor: PrincipalCore::handle_open ─▶ poll: Start, Tell
//!                                           │ (InstanceActor runs the toolset's logic: set_visible, …)
//!                                           ├─▶ SessionActor A: Sequencer::stamp(draft) ─▶ result _meta
//!                                           └─▶ SessionActor B: Sequencer::stamp(draft) ─▶ push / tools/hints
//! ```
//!
//! A [`HintDraft`] is the same for every connection of the principal; each connection
//! numbers it on its own counter (§4.6, vector 14). A connection whose host did not
//! advertise `toolHints` gets none of it (§2, §8, vector 8).
//!
//! Section signs (§) refer to `shared/spec/RFC-014.md` unless they say "SPEC §" (MCPL 0.5)
//! or "MCP".

#![warn(missing_docs)]
pub mod author;
pub mod batch;
pub mod carrier;
pub mod catalog;
pub mod dispatch;
pub mod draft;
pub mod ids;
pub mod instance_core;
pub mod lifecycle;
pub mod manifest;
pub mod mrtr;
pub mod paging;
pub mod principal;
pub mod principal_core;
pub mod push;
pub mod requests;
pub mod sequencer;
pub mod session;
pub mod store;
pub mod tool;
pub mod wire;

use mcpl_protocol::principal::Principal;

pub use catalog::{Catalog, CatalogError, OptionsProblem, PlainCall, PlainHosts, ToolDecl};
pub use draft::HintDraft;
pub use principal::{
    CallReply, CloseError, EndedIds, InstanceKey, OpenError, OpenOutcome, Opened, PrincipalConfig,
    PrincipalState, REASON_UNDECLARED, RESTART_GAP, Snapshot, Statement, Versioned,
};
pub use sequencer::Sequencer;

//! `ServerLink`: the host's actor for one server, around a sans-IO core.
//!
//! A link owns one transport connection at a time and everything that is per connection:
//! the handshake (or, with a modern MCP 2026-07-28 server, the `server/discover` probe and
//! per-request `_meta`: `era`), request ids and their timeouts, the answers to the server's own requests,
//! and reconnecting with capped exponential backoff when the connection goes. Its outputs:
//!
//! - the **read tap** ([`Tap`]): every inbound message, before the link does anything with
//!   it, in read order, with the context a hint state needs (stream, `ordered`, the method a
//!   response answers and whether it is still awaited or timed out, the connection epoch).
//!   RFC-014 §5.2 applies hints *when a message is read*, whatever then becomes of it: a
//!   refused push, a result that arrives after its call timed out (vector 28);
//! - [`LinkEvent`]s to subscribers (an actor, a channel, or a callback run on the link):
//!   connected, disconnected, every tools listing with the rev it names, pushes and
//!   notifications;
//! - answers to typed requests ([`CallTool`], [`ListTools`], [`SendRequest`]).
//!
//! **Sans I/O.** What is decided per connection lives in a pure core
//! (`host-core/src/link/`, the `mcpl-host-core` crate: `LinkCore`, no runtime, no transport, no clock): the connection's
//! one phase enum (`Stage`), the session and its grant rules, the era's stamp, the pending
//! table with its deadlines, paging, and the readings of what the server answers (a probe, a
//! page, an input request). The actor ([`ServerLink`]) connects, backs off, runs the
//! writer task and the read stream, feeds the core what it reads (`handle_read(msg, now)`)
//! and the time when its one timer fires (`handle_timeout(now)`), and carries out what the
//! core polls: messages to write (`poll_transmit`), outcomes and messages to act on
//! (`poll_event`), the next deadline (`poll_timeout`).
//!
//! **The state machine.** A link is in one [`LinkPhase`]: `Connecting`, `Backoff` and
//! `Stopped` are the link's own (across connections: `lifecycle.rs`); while linked, the
//! phase is the connection's handshake `Stage` (the core's, one enum per connection). The
//! agent side holds no phase enum of its own: its `state::ServerSlot` keeps the
//! [`LinkPhase`] as the tap and the link's events last told it (`Connecting`,
//! `AwaitingGrantReceipt`, `Ready`, `Backoff`; `ServerSlot::phase` says when each).
//!
//! ```text
//!                         start
//!                           │
//!                           ▼
//!    ┌─────────────────▶ Connecting ───attempt failed───────────────────┐
//!    │                      │ connected: epoch += 1; a server that may  │
//!    │                      │ be modern (era.rs): send server/discover, │
//!    │                      │ else send initialize ───────────┐         │
//!    │                      ▼                                 │         │
//!    │          AwaitingDiscoverResult ──a modern error; not ─┼─────────┤
//!    │             │        │            modern with "modern" │         │
//!    │             │        │ any other answer, or none in    │         │
//!    │             │        │ time: send initialize           │         │
//!    │             │        ▼                                 │         │
//!    │             │  AwaitingInitializeResult ◀──────────────┘         │
//!    │             │        │  ──error, unsupported version, ───────────┤
//!    │             │        │    malformed, timeout, closed             │
//!    │             │        │ result accepted: tap Connected,           │
//!    │             │        │ send notifications/initialized            │
//!    │             │        ├──────── plain MCP server ───────┐         │
//!    │             │        │ server speaks MCPL:             │         │
//!    │             │        │ send featureSets/update         │         │
//!    │             │        ▼ (a request)                     │         │
//!    │             │  AwaitingGrantReceipt ──refused with ────┼─────────┤
//!    │             │        │                "close", closed  │         │
//!    │             │        │ receipt read; or refused        │         │
//!    │             │        │ "mcp-only", an error, a timeout,│         │
//!    │             │        │ a malformed receipt: MCP only   │         │
//!    │             │        ▼                                 │         │
//!    │  a modern   └────▶ Ready ◀─────────────────────────────┘         │
//!    │  DiscoverResult:     │ backoff reset; tools/list (paged); to a   │
//!    │  tap Connected (no   │ modern server that lists changes or       │
//!    │  initialized; plain  │ hints, subscriptions/listen               │
//!    │  MCP, or the profile)│ closed                                    │
//!    │                      ▼                                           │
//!    └── timer ──────── Backoff ◀───────────────────────────────────────┘
//!
//!    any state ── Shutdown ──▶ Stopped
//! ```
//!
//! In `AwaitingDiscoverResult`, a -32022 that lists a modern version this host speaks has
//! the probe sent again once with it, and one listing only legacy versions it speaks goes
//! on to `initialize` (`era.rs`, "A version refused").
//!
//! In `AwaitingDiscoverResult`, a -32022 that lists a modern version this host speaks has
//! the probe sent again once with it, and one listing only legacy versions it speaks goes
//! on to `initialize` (`host-core/src/link/era.rs`, "A version refused").
//!
//! **The rules, and where each lives:**
//! - *Handshake and era* (`host-core/src/link/era.rs` reads a probe's answer, `host-core/src/link/handshake.rs`
//!   decides what follows it and whether an `initialize` result is taken; `discover.rs`
//!   and `handshake.rs` send and apply): probe with `server/discover` unless the link speaks
//!   only legacy or found the server legacy; a modern answer makes the session Ready at
//!   once (plain MCP); a modern error is final; anything else falls back to `initialize`.
//!   A handshake request that fails, times out or is malformed ends the connection (not
//!   the probe: no answer in time means legacy).
//! - *Grants* (`host-core/src/link/grant.rs`, applied by `handshake.rs` and `policy.rs`; SPEC §5.4,
//!   §6.7): the proposal is the server's advertisement intersected with the host's policy;
//!   a narrowing (revocation) is in force **at once**, a widening only **on its receipt**;
//!   a refusal with `fallback: "close"` ends the connection, any other failed exchange
//!   (refused, an error, a timeout, a malformed receipt) **falls back** to plain MCP; a
//!   transport-lost exchange starts the handshake again on a new connection. A server
//!   request needing a capability not granted gets -32002 naming it, others -32601.
//! - *Paging* (`host-core/src/link/paging.rs`; the core sends the pages itself, `refresh.rs` tells the
//!   end and arms the retry): one listing at a time, one more queued behind it; cursors
//!   followed to the end, a repeated one is endless paging; the lowest rev and the least
//!   `ttlMs` of the pages; a failed listing the host needs is retried after a growing
//!   delay; without a change stream, a `tools/call` after the list went stale lists again
//!   (`host-core/src/link/session.rs`).
//! - *Pending requests* (`host-core/src/link/pending.rs`, `LinkCore::handle_read`/`handle_timeout`):
//!   ids from 1 per connection; each awaited request has a deadline (none for
//!   `subscriptions/listen`); at its deadline the waiter gets `Timeout` and the server is
//!   told `notifications/cancelled` (never for `initialize` or the probe, nor on modern
//!   Streamable HTTP); its id is remembered, bounded, so that a late result is still
//!   tapped with its method (§5.2, vector 28). An answer broken off on an unordered link
//!   is cancelled before it is delivered (vector 29). A drop of the connection fails every
//!   request in flight with `Disconnected`.
//! - *Pushes* (`host-core/src/link/push.rs`; SPEC §5.4, §9): admitted by the grant before anything else
//!   is read of them (no MCPL: -32601; before the receipt or not granted: -32002; bad
//!   params: -32602; the feature set undeclared, disabled or not using `pushEvents`); a
//!   retry (same id, same content) is answered and not shown again (`push.rs`).
//! - *Manifest re-reads* (`host-core/src/link/paging.rs`, `Refresh::want_manifest`; SPEC §17.8): one
//!   at a time, at most one per `manifest_min_interval`, announcements in between
//!   coalesced into one read at the end of the interval and counted.
//! - *RFC-014's stateless profile* (`host-core/src/link/profile.rs`, fed by `read.rs`, set up by
//!   `discover.rs`; `docs/rfc014-stateless.md`, issue #40): a modern server whose
//!   discovery declares `mcpl/core` and carries `mcpl/hints` is served MCPL: its requests
//!   carry the link's mark and grant, and every stamped message read goes through the
//!   link's `StampedView` (kept across connections) before the tap, which sees the legacy
//!   changes it made in the view; a cut `mcpl/hints` stream is reopened from the mark.
//! - *A modern request's rounds* (`host-core/src/link/mrtr.rs`, `LinkCore`): an `InputRequiredResult`
//!   is answered and the request sent again, at most `MAX_INPUT_ROUNDS` times; a -32022
//!   listing a modern version this host speaks is adopted and the request sent again once.
//!
//! Every drop of a connection is tapped and announced as `Disconnected`. Requests from
//! callers are sent only in `Ready`; in any other phase they fail at once with
//! `NotConnected`.
//!
//! Layout:
//!
//! | file | what |
//! |---|---|
//! | `mcpl_host_core::link` (the actor's files say `super::core`) | `LinkCore`: one connection's rules, sans I/O, in the pure crate (its own table lists its files) |
//! | `config` | [`LinkConfig`], [`BackoffConfig`], [`PushPolicy`] |
//! | `connector` | [`Connector`]: how a connection is made (a URL, or a closure in tests); [`ConnectError`], why it was not |
//! | `backoff` | [`Backoff`]: the pure reconnect-delay sequence |
//! | `mcpl_host_core::link::error` | [`LinkError`], [`DisconnectReason`], by who is at fault (pure, in the core crate; [`ConnectError`] is `connector`'s) |
//! | `cause` | why a server is not connected, plainly (a refused token, a refused connection, unreachable) |
//! | `lifecycle` | the link's states across connections; what the actor holds per connection |
//! | `pending` | the pending table's waiters as the actor answers them |
//! | `tap` | [`TapEvent`], [`Tap`] |
//! | `events` | [`LinkEvent`], [`EventSink`] |
//! | `gate` | [`ReadGate`]: how far the link reads ahead of its consumer |
//! | `status` | [`LinkStatus`], [`SessionInfo`] |
//! | `manifest` | re-reading the manifest after `mcpl/manifestChanged`, rate-bounded (SPEC §17.8) |
//! | `push` | a server's `push/event` answered (the push policy asked) and told |
//! | `policy` | renegotiating the feature-set policy, and its receipt |
//! | `api` | the actix messages the link answers |
//! | `io` | the read stream and the writer task, which know nothing of the actor |
//! | `write` | the core's messages handed to the writer; a server that does not read is dropped |
//! | `actor` | the actor: connecting, backoff, disconnecting |
//! | `discover` | the probe sent, a modern session made ready (under the stateless profile when the server hints this host), `subscriptions/listen` |
//! | `handshake` | `initialize`, `notifications/initialized`, `featureSets/update` |
//! | `read` | the inbound side: tap, then the core; server requests, notifications |
//! | `requests` | sending requests through the core, its timer, outcomes to waiters |
//! | `refresh` | listings asked of the core, their end told, stale lists re-read |

mod actor;
mod api;
mod backoff;
pub mod cause;
mod config;
mod connector;
/// The link's pure core, in `mcpl-host-core` (no runtime, no transport: issue #38); the
/// actor's files name it `super::core` as when it was a module here.
use mcpl_host_core::link as core;
mod discover;
mod events;
mod gate;
mod handshake;
mod io;
mod lifecycle;
mod manifest;
mod pending;
mod policy;
mod push;
mod read;
mod refresh;
mod requests;
mod status;
mod tap;
mod write;

pub use self::core::era::{Era, EraPolicy, UnknownEra};
pub use self::core::error::{DisconnectReason, LinkError};
pub use self::core::grant::POLICY_RETRIES;
pub use self::core::mrtr::MAX_INPUT_ROUNDS;
pub use self::core::phase::LinkPhase;
pub use actor::ServerLink;
pub use api::{
    CallTool, GetStatus, ListTools, SendRequest, SetPushPolicy, Shutdown, Subscribe, stopped,
};
pub use backoff::Backoff;
pub use config::{BackoffConfig, LinkConfig, PushPolicy};
pub use connector::ConnectError;
pub use connector::Connector;
pub use events::{EventCallback, EventSink, LinkEvent};
pub use gate::{DEFAULT_READ_AHEAD, ReadGate, Ticket};
pub use status::{LinkStatus, SessionInfo};
pub use tap::{Answered, AwaitStatus, ReadEvent, Tap, TapEvent, Tapped};

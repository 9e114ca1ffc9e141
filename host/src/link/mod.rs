//! `ServerLink`: the host's actor for one server.
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
//! Layout:
//!
//! | file | what |
//! |---|---|
//! | `config` | [`LinkConfig`], [`BackoffConfig`], [`PushPolicy`] |
//! | `connector` | [`Connector`]: how a connection is made (a URL, or a closure in tests) |
//! | `backoff` | [`Backoff`]: the pure reconnect-delay sequence |
//! | `error` | [`LinkError`], [`DisconnectReason`], [`ConnectError`], by who is at fault |
//! | `cause` | why a server is not connected, plainly (a refused token, a refused connection, unreachable) |
//! | `lifecycle` | the link's states, named for what they wait for, and [`LinkPhase`] |
//! | `pending` | the per-connection table of awaited and timed-out request ids |
//! | `tap` | [`TapEvent`], [`Tap`] |
//! | `events` | [`LinkEvent`], [`EventSink`] |
//! | `gate` | [`ReadGate`]: how far the link reads ahead of its consumer |
//! | `status` | [`LinkStatus`], [`SessionInfo`] |
//! | `decode` | a `tools/list` page decoded without rebuilding its schemas; a wrapped manifest |
//! | `manifest` | re-reading the manifest after `mcpl/manifestChanged`, rate-bounded (SPEC §17.8) |
//! | `push` | a server's `push/event`: admitted or refused, answered, told |
//! | `elicit` | a server's `elicitation/create` answered with nobody to ask |
//! | `policy` | renegotiating the feature-set policy, and its receipt |
//! | `api` | the actix messages the link answers |
//! | `write` | the write queue and its task; a server that does not read is dropped |
//! | `actor` | the actor: connecting, backoff, disconnecting |
//! | `era` | [`EraPolicy`], [`Era`]: the `server/discover` probe read, a modern request's `_meta` |
//! | `discover` | the probe sent, a modern session made ready, `subscriptions/listen` |
//! | `mrtr` | a modern server's `InputRequiredResult` answered and the request retried |
//! | `handshake` | `initialize`, `notifications/initialized`, `featureSets/update` |
//! | `read` | the inbound side: tap, then responses, server requests, notifications |
//! | `requests` | sending requests, their timeouts and completions |
//! | `refresh` | `tools/list` paging and manifest re-reads |

mod actor;
mod api;
mod backoff;
pub mod cause;
mod config;
mod connector;
mod decode;
mod discover;
mod elicit;
mod era;
mod error;
mod events;
mod gate;
mod handshake;
mod lifecycle;
mod manifest;
mod mrtr;
mod pending;
mod policy;
mod push;
mod read;
mod refresh;
mod requests;
mod status;
mod tap;
mod write;

pub use actor::ServerLink;
pub use api::{CallTool, GetStatus, ListTools, SendRequest, SetPushPolicy, Shutdown, Subscribe};
pub use backoff::Backoff;
pub use config::{BackoffConfig, LinkConfig, PushPolicy};
pub use connector::Connector;
pub use era::{Era, EraPolicy, UnknownEra};
pub use error::{ConnectError, DisconnectReason, LinkError};
pub use events::{EventCallback, EventSink, LinkEvent};
pub use gate::{DEFAULT_READ_AHEAD, ReadGate, Ticket};
pub use lifecycle::LinkPhase;
pub use mrtr::MAX_INPUT_ROUNDS;
pub use status::{LinkStatus, SessionInfo};
pub use tap::{Answered, AwaitStatus, ReadEvent, Tap, TapEvent, Tapped};

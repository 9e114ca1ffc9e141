//! What [`SessionCore`](super::SessionCore) asks of the actor driving it: messages for the
//! host ([`Transmit`], drained with `poll_transmit`) and everything else ([`Event`], drained
//! with `poll_event`). The core never looks inside the actor's own types: an answer from
//! the principal, an event to push and what stops a running handler call are the [`Io`]'s.

use crate::catalog::{Catalog, HostView};
use crate::paging;
use crate::principal_core::HostCall;
use crate::{HintDraft, Statement};
use mcpl_protocol::jsonrpc::{ErrorObject, Id, Message, Request, Response};
use mcpl_protocol::mcp::{CallToolResult, ListToolsResult};
use mcpl_protocol::meta::Meta;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::sync::Arc;

/// The actor's own types the core carries without looking inside.
pub trait Io {
    /// Stops a running handler call (its task handles).
    type Stop: Debug;
    /// An answer from the principal to one of the host's requests: written as the
    /// response, or a call to run as a handler.
    type Answer: Debug;
    /// An event to push, with where it goes (cloned for each stream that carries it).
    type Event: Debug + Clone;
}

/// A message for the host. The actor writes them in the order drained; those carrying
/// hint changes take the connection's next rev as they are written (§5.2), so the order
/// the core queued them is the order of their revs.
#[derive(Debug)]
pub enum Transmit<T: Io> {
    /// A message with no hint changes (takes no rev).
    Message(Message),
    /// `tools/hints`, numbered with the next rev (§5.2: changes nothing else explains).
    Hints(HintDraft),
    /// The principal's answer to a request: a result carries `hints` in its `_meta`, an
    /// error never does.
    Answer {
        /// The request answered.
        request: Id,
        /// What it is answered with.
        answer: T::Answer,
        /// The changes the result carries (§5.2, §5.3).
        hints: Option<HintDraft>,
    },
    /// A handler call's result, carrying `hints` (§5.3: what the handler opened or closed
    /// for its caller).
    CallResult {
        /// The call.
        request: Id,
        /// Its result. Not boxed: it goes from the handler to its encoding through the
        /// queue alone (issue #42: a box a light call).
        result: CallToolResult,
        /// The changes it carries.
        hints: Option<HintDraft>,
    },
    /// An event to push: the first of a delivery carries its changes (§5.2, vector 3).
    Push {
        /// The event.
        event: T::Event,
        /// The feature set it goes under (SPEC §9).
        feature_set: String,
        /// The changes it carries.
        hints: Option<HintDraft>,
    },
    /// `notifications/mcpl/event` on a listen stream (`listen.rs`, profile §3.5): takes no
    /// rev; its changes are the stamped `hints`.
    StreamEvent {
        /// The `subscriptions/listen` request whose stream carries it.
        listen: Id,
        /// The event.
        event: T::Event,
        /// The feature set it goes under (SPEC §9), under the stream's grant.
        feature_set: String,
        /// Its changes, stamped (profile §3.3), and the suggestions that explain it.
        hints: mcpl_protocol::stateless::VersionedHints,
    },
    /// `toolsets/list`'s result: the full statement, numbered with the next rev even when
    /// it changes nothing (§4.3, vector 38).
    Statement {
        /// The request answered.
        request: Id,
        /// The statement.
        statement: Statement,
    },
    /// A `tools/list` page: its `mcpl/rev` is the last rev taken when it is written (§3).
    ToolsList(ToolsPage),
}

/// What the actor does besides writing.
#[derive(Debug)]
pub enum Event<T: Io> {
    /// Tell the principal: a request it answers, or a step of the handshake.
    Forward(Forward),
    /// Run the principal's answer as the tool's own handler.
    Run {
        /// The call.
        request: Id,
        /// The answer naming the handler.
        answer: T::Answer,
    },
    /// Run a call of a loose tool's own handler at once, without asking the principal:
    /// it said this session may, and nothing since changed the tool for it
    /// ([`SessionCore`](super::SessionCore)'s direct calls).
    RunDirect {
        /// The call.
        request: Id,
        /// The tool.
        tool: String,
        /// Its arguments.
        arguments: Option<Map<String, Value>>,
        /// The call's `_meta`.
        meta: Option<Meta>,
    },
    /// The host cancelled a running handler call: stop it, and abandon what it asked of
    /// the host.
    Stop {
        /// The call.
        request: Id,
        /// What stops it.
        stop: T::Stop,
    },
    /// A handler call ended with a response: abandon what it asked of the host and left
    /// unanswered.
    Ended(Id),
    /// A `subscriptions/listen` stream ended (`listen.rs`): what it held is released.
    ListenEnded(Id),
    /// This session now watches the resource at this URI (`watch.rs`): tell it its
    /// changes ([`SessionCore::resource_updated`](super::SessionCore::resource_updated)).
    Watch(String),
    /// This session no longer watches the resource at this URI.
    Unwatch(String),
    /// The host answered one of the session's own requests.
    Response(Response),
    /// Serve this modern request on a connection of its own, under a principal of its own
    /// (`modern.rs`: a request no credential authenticated); what that connection writes
    /// is written here, and its answer ends it.
    Detach(Request),
    /// Serve a resource, prompt or completion request with the server's handlers, and
    /// give the answer to [`SessionCore::feature_answered`](super::SessionCore::feature_answered).
    Serve {
        /// The request.
        request: Id,
        /// What it asks.
        feature: super::FeatureRequest,
    },
    /// The host cancelled a request served on a connection of its own: tell it there.
    CancelDetached {
        /// The request.
        request: Id,
        /// The host's reason, if it gave one.
        reason: Option<String>,
    },
}

/// What the principal is told.
#[derive(Debug, Clone, PartialEq)]
pub enum Forward {
    /// `initialize` was answered, or the connection's first modern request came: whether
    /// the host advertised `toolHints` (§2).
    Initialized {
        /// `toolHints` as the host advertised it.
        tool_hints: bool,
        /// Told by a modern request (no `initialize`): the connection's end starts the
        /// idle time, not §4.6's end (profile §3.6).
        modern: bool,
    },
    /// The handshake completed (SPEC §5.3): pushing may be allowed now.
    Ready,
    /// `tools/list` (§3).
    ListTools {
        /// The request.
        request: Id,
        /// The page asked for.
        cursor: Option<String>,
    },
    /// `toolsets/list` (§4.3).
    ListToolsets {
        /// The request.
        request: Id,
    },
    /// `toolsets/open` (§4.2).
    Open {
        /// The request.
        request: Id,
        /// The toolset.
        toolset: String,
        /// The instance named, if any.
        instance: Option<String>,
        /// The options given.
        options: Option<Value>,
    },
    /// `toolsets/close` (§4.2).
    Close {
        /// The request.
        request: Id,
        /// The toolset.
        toolset: String,
        /// The instance named, if any.
        instance: Option<String>,
        /// A modern host's: one of what is closed, its tombstone held, succeeds again
        /// (issue #40, vector S12).
        retried: bool,
    },
    /// `tools/call`.
    Call(HostCall),
}

/// A `tools/list` page to write once the last rev is known (§3).
#[derive(Debug)]
pub struct ToolsPage {
    /// The `tools/list` request's id.
    pub request: Id,
    /// Its cursor.
    pub cursor: Option<String>,
    /// The catalog the page is read from.
    pub catalog: Arc<Catalog>,
    /// The tools visible to the principal.
    pub visible: BTreeSet<String>,
    /// What kind of host is shown the page (§8).
    pub view: HostView,
    /// Tools per page.
    pub page_size: usize,
    /// Listed by name (a hinted modern host: `docs/rfc014-stateless.md` §3.4, a
    /// deterministic order); otherwise in the catalog's order.
    pub by_name: bool,
}

impl ToolsPage {
    /// The response, with `last` — the last rev the connection took — as its `mcpl/rev`
    /// for a host shown hints.
    pub fn response(self, last: u64) -> Message {
        let ListToolsResult {
            mut tools, meta, ..
        } = self.catalog.list_tools(self.view, &self.visible, last);
        if self.by_name {
            tools.sort_by(|a, b| a.name.cmp(&b.name));
        }
        match paging::page(tools, self.cursor.as_deref(), self.page_size) {
            Ok(page) => Response::ok_typed(
                self.request,
                &ListToolsResult {
                    tools: page.tools,
                    next_cursor: page.next_cursor,
                    meta: meta.filter(|_| self.view == HostView::Hinted),
                },
            ),
            Err(e) => Response::err(Some(self.request), ErrorObject::invalid_params(e)),
        }
        .into()
    }
}

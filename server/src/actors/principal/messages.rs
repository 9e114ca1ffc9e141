//! What sessions and their principal say to each other.

use crate::actors::instance::ToPrincipal;
use crate::core::principal_core::CallRequest;
use crate::core::{Catalog, HintDraft, Statement};
use crate::ids::SessionId;
use crate::tool::outcome::{DeclineError, Invitation};
use actix::prelude::*;
use mcpl_protocol::jsonrpc::Id;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;
use tokio::sync::oneshot;

pub(crate) use crate::core::principal_core::{
    Answer, AnswerBody, Deliver, HandlerAnswer, ReplyTo, Via,
};

// ---- session → principal ----

/// A session of this principal started.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Attach {
    pub(crate) id: SessionId,
    pub(crate) to: SessionAddr,
}

/// How a principal reaches one of its sessions: the messages it sends one, each to the
/// session's actor (the principal never names the session's type), through one
/// recipient — a recipient is a boxed sender, and a session made one for each message
/// kind (six allocations, six more each time the address was cloned: issue #42 item 3,
/// where every modern request attaches a session of its own).
#[derive(Clone)]
pub(crate) struct SessionAddr(Recipient<ForSession>);

impl SessionAddr {
    /// The session behind `to`.
    pub(crate) fn new(to: Recipient<ForSession>) -> Self {
        SessionAddr(to)
    }

    /// Delivers a principal's [`Deliver`].
    pub(crate) fn deliver(&self, m: ToSession) {
        self.0.do_send(ForSession::Deliver(m));
    }

    /// Tells it the catalog it serves changed.
    pub(crate) fn swapped(&self, m: CatalogSwapped) {
        self.0.do_send(ForSession::Swapped(m));
    }

    /// Answers its `toolsets/list`.
    pub(crate) fn statement(&self, m: StatementFor) {
        self.0.do_send(ForSession::Statement(m));
    }

    /// Answers its `tools/list`.
    pub(crate) fn tools(&self, m: ToolsView) {
        self.0.do_send(ForSession::Tools(m));
    }

    /// Gives it the stamped state (issue #40).
    pub(crate) fn versioned(&self, m: VersionedFor) {
        self.0.do_send(ForSession::Versioned(m));
    }

    /// Closes the session: its principal was released here (issue #41,
    /// `Server::release_principal`), so its host reconnects where it runs next.
    pub(crate) fn close(&self) {
        self.0.do_send(ForSession::Close(PrincipalReleased));
    }
}

/// Whatever a principal sends a session ([`SessionAddr`]).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) enum ForSession {
    /// [`ToSession`].
    Deliver(ToSession),
    /// [`CatalogSwapped`].
    Swapped(CatalogSwapped),
    /// [`StatementFor`].
    Statement(StatementFor),
    /// [`ToolsView`].
    Tools(ToolsView),
    /// [`VersionedFor`].
    Versioned(VersionedFor),
    /// [`PrincipalReleased`].
    Close(PrincipalReleased),
}

// ---- principal ⇄ registry ----

/// Where a principal's actor reaches the registry that started it.
#[derive(Clone)]
pub(crate) struct Registrar {
    /// Told when nothing is left of the principal; the registry then asks it to
    /// [`Retire`].
    pub(crate) idle: Recipient<Idle>,
    /// Routes its instances' invitations to other principals.
    pub(crate) route: Recipient<ToPrincipal>,
    /// Told of each instance it starts, so the server knows what runs (issue #41: an
    /// instance released and adopted, `actors/registry/owning.rs`).
    pub(crate) running: Recipient<InstanceStarted>,
}

/// A principal started instance `id`'s actor.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct InstanceStarted {
    pub(crate) id: u64,
    pub(crate) addr: Addr<crate::actors::instance::InstanceActor>,
}

/// Instance `id` runs again behind `addr` (issue #41: adopted), or (`None`) on another
/// server, reached through the peers: this principal's link to it, and an invitation of
/// it, reach it there. The answer is its key for the instance and who it is there, when
/// it links to it.
#[derive(Message)]
#[rtype(result = "Option<(crate::core::InstanceKey, crate::author::ParticipantId)>")]
pub(crate) struct Relink {
    pub(crate) id: crate::ids::InstanceId,
    pub(crate) addr: Option<Addr<crate::actors::instance::InstanceActor>>,
}

/// A principal's link to an instance: here, or on another server (issue #41,
/// `actors/remote.rs`).
#[derive(Clone)]
pub(crate) enum InstanceRef {
    /// The instance's actor runs here.
    Local(Addr<crate::actors::instance::InstanceActor>),
    /// It runs elsewhere: reached by its id.
    Remote(crate::actors::remote::RemoteInstance),
}

/// The principal started as `generation` has nothing left (no session, nothing open, no
/// invitation, no ended record to report).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Idle {
    pub(crate) principal: mcpl_transport::Principal,
    pub(crate) generation: u64,
}

/// The registry's answer to [`Idle`], sent after everything it routed to the principal
/// before: the principal stops (true) if it is still idle, having seen all of it — so a
/// session attaching or an invitation arriving meanwhile keeps it, by mailbox order.
#[derive(Message)]
#[rtype(result = "bool")]
pub(crate) struct Retire;

/// A session of this principal stopped.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Detach {
    pub(crate) id: SessionId,
}

/// A session's host answered `initialize`: whether it advertised `toolHints`.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct HostInitialized {
    pub(crate) id: SessionId,
    pub(crate) tool_hints: bool,
    /// Told by a modern request rather than `initialize` (profile §3.6).
    pub(crate) modern: bool,
}

/// A session finished its handshake (SPEC §5.3): pushing may be allowed now.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct SessionReady {
    pub(crate) id: SessionId,
}

/// `tools/list`: the principal's visibility, to list with.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct ListTools {
    pub(crate) session: SessionId,
    pub(crate) request: Id,
    pub(crate) cursor: Option<String>,
}

/// `toolsets/list`: the full statement.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct ListToolsets {
    pub(crate) session: SessionId,
    pub(crate) request: Id,
}

/// `toolsets/open` (or `toolset_open`).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct OpenToolset {
    pub(crate) reply: ReplyTo,
    pub(crate) toolset: String,
    pub(crate) instance: Option<String>,
    pub(crate) options: Option<Value>,
}

/// `toolsets/close` (or `toolset_close`).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct CloseToolset {
    pub(crate) reply: ReplyTo,
    pub(crate) toolset: String,
    pub(crate) instance: Option<String>,
    /// A modern host's close: one of what is closed, its tombstone held, succeeds again
    /// (issue #40, vector S12).
    pub(crate) retried: bool,
}

/// `tools/call`.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct CallTool(pub(crate) CallRequest);

/// A tool handler asks for its principal's pending invitations.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct ListInvitations {
    pub(crate) reply: oneshot::Sender<Vec<Invitation>>,
}

/// A tool handler declines one of its principal's invitations.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct DeclineInvitation {
    pub(crate) toolset: String,
    pub(crate) instance: Option<String>,
    pub(crate) reply: oneshot::Sender<Result<Invitation, DeclineError>>,
}

/// The server's manifest (and so its catalog) was replaced.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct SwapCatalog(pub(crate) Arc<Catalog>);

// ---- principal → session ----

/// A principal's [`Deliver`] for one session, as a message (the core's type knows no actix).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct ToSession(pub(crate) Deliver);

/// The answer to `toolsets/list`.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct StatementFor {
    pub(crate) request: Id,
    pub(crate) statement: Statement,
}

/// What `tools/list` is built from.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct ToolsView {
    pub(crate) request: Id,
    pub(crate) cursor: Option<String>,
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) visible: BTreeSet<String>,
}

/// The principal's stamped state changed (issue #40): what modern hosts are answered
/// from, and what `mcpl/hints` listen streams are sent.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct VersionedFor(pub(crate) Arc<crate::core::Versioned>);

/// The session's principal was released on this server (issue #41): the session closes
/// (its host reconnects, and lands where the principal runs next).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct PrincipalReleased;

/// The principal moved to a new catalog: what that changed.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct CatalogSwapped {
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) draft: HintDraft,
}

//! What the session tells its principal and the principal's answers that are not
//! deliveries: `tools/list` (§3), `toolsets/list` (§4.3). The core decided what is
//! forwarded (`server-core/src/session/inbound.rs`); the actor turns each [`Forward`] into the
//! principal's message.

use super::SessionActor;
use crate::actors::principal::{
    self, HostInitialized, ReplyTo, SessionReady, StatementFor, ToolsView, VersionedFor, Via,
};
use crate::core::principal_core::CallRequest;
use crate::core::session::Forward;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::Id;

impl SessionActor {
    /// Tells the principal what the core forwards.
    pub(super) fn forward(&mut self, f: Forward) {
        let session = self.id;
        match f {
            Forward::Initialized { tool_hints, modern } => self.tell_principal(HostInitialized {
                id: session,
                tool_hints,
                modern,
            }),
            Forward::Ready => self.tell_principal(SessionReady { id: session }),
            Forward::ListTools { request, cursor } => self.tell_principal(principal::ListTools {
                session,
                request,
                cursor,
            }),
            Forward::ListToolsets { request } => {
                self.tell_principal(principal::ListToolsets { session, request })
            }
            Forward::Open {
                request,
                toolset,
                instance,
                options,
            } => self.tell_principal(principal::OpenToolset {
                reply: self.reply_to(request),
                toolset,
                instance,
                options,
            }),
            Forward::Close {
                request,
                toolset,
                instance,
                retried,
            } => self.tell_principal(principal::CloseToolset {
                reply: self.reply_to(request),
                toolset,
                instance,
                retried,
            }),
            Forward::Call(call) => {
                self.tell_principal(principal::CallTool(CallRequest { session, call }))
            }
        }
    }

    fn reply_to(&self, request: Id) -> ReplyTo {
        ReplyTo {
            session: self.id,
            request,
            via: Via::Rpc,
        }
    }
}

impl Handler<ToolsView> for SessionActor {
    type Result = ();

    /// §3: every tool, with the principal's coarse visibility.
    fn handle(&mut self, m: ToolsView, ctx: &mut Context<Self>) {
        self.core
            .tools_view(m.request, m.cursor, m.catalog, m.visible);
        self.drive(ctx);
    }
}

impl Handler<StatementFor> for SessionActor {
    type Result = ();

    /// §4.3: the full statement.
    fn handle(&mut self, m: StatementFor, ctx: &mut Context<Self>) {
        self.core.statement(m.request, m.statement);
        self.drive(ctx);
    }
}

impl Handler<VersionedFor> for SessionActor {
    type Result = ();

    /// The principal's stamped state changed (issue #40): what modern hosts are answered
    /// from, and what `mcpl/hints` streams are sent.
    fn handle(&mut self, m: VersionedFor, ctx: &mut Context<Self>) {
        self.core.versioned_changed(m.0);
        self.drive(ctx);
    }
}

//! `tools/call` (§3, §4.5, §8): the core says where a call goes (`core/principal_core/
//! requests.rs`); the actor forwards it into the instance's logic.

use super::{CallTool, InstanceLink, InstanceRef, PrincipalActor};
use crate::actors::instance::{CallIn, Link, PrincipalRef};
use crate::core::InstanceKey;
use crate::core::wire::ToInstance;
use crate::ids::SessionId;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::Id;
use serde_json::{Map, Value};

impl Handler<CallTool> for PrincipalActor {
    type Result = ();

    fn handle(&mut self, m: CallTool, ctx: &mut Context<Self>) {
        let shared = self.shared.clone();
        self.core
            .handle_call(m.0, |tool| shared.has_handler(tool), self.shared.now());
        self.flush(ctx);
    }
}

impl PrincipalActor {
    /// Runs a call in the instance's logic; its answer comes back in a batch.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_instance(
        &mut self,
        link: InstanceLink,
        key: InstanceKey,
        session: SessionId,
        request: Id,
        tool: String,
        arguments: Map<String, Value>,
        ctx: &mut Context<Self>,
    ) {
        match link.addr {
            InstanceRef::Local(addr) => addr.do_send(CallIn {
                who: link.who,
                link: Link {
                    principal: PrincipalRef::Local(ctx.address().recipient()),
                    key,
                },
                session,
                request,
                tool,
                arguments,
            }),
            InstanceRef::Remote(r) => r.tell(ToInstance::Call {
                who: link.who,
                principal: self.principal.name(),
                key,
                session,
                request,
                tool,
                arguments,
            }),
        }
    }
}

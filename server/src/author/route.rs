//! Typed routes (issue #38 item 4): a toolset's tool declared once — its name,
//! description, argument type and handler — with its `inputSchema` derived from the
//! argument type. The instance actor hands each call to its tool's route; the route decodes
//! the arguments the one way [`ToolCall::args`] does (a mismatch is the same
//! [`ToolError::InvalidArguments`] tool error everywhere) and runs the handler on the
//! instance's logic. A tool without a route goes to [`InstanceLogic::call`].
//!
//! The routes of a toolset name the logic type they run on; [`Started`](crate::Started)
//! erases it, so the SDK checks it when a call arrives. An open that returns logic of
//! another type than the toolset's routes name is the author's bug: its calls are answered
//! with an internal error naming both types.

use super::context::InstanceContext;
use super::event::CallId;
use super::logic::{InstanceLogic, Reply, ToolCall};
use super::participant::ParticipantId;
use crate::tool::error::ToolError;
use serde::de::DeserializeOwned;
use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The call a routed handler answers: its id (for [`InstanceContext::answer`] after
/// [`Reply::Later`]) and who made it. The arguments are the handler's typed argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    id: CallId,
    caller: ParticipantId,
}

impl Call {
    /// This call's id, for [`InstanceContext::answer`] after [`Reply::Later`].
    pub fn id(&self) -> CallId {
        self.id
    }

    /// Who called.
    pub fn caller(&self) -> ParticipantId {
        self.caller
    }
}

/// A handler with its argument and logic types erased.
type RunFn = dyn Fn(&mut dyn Any, &ToolCall, &mut InstanceContext) -> Reply + Send + Sync;

/// One tool's handler, for logic of one type.
#[derive(Clone)]
pub(crate) struct Route {
    /// The logic it runs on, for the build's checks.
    logic: TypeId,
    run: Arc<RunFn>,
}

impl Route {
    /// The route running `handler` on logic `L` with arguments decoded as `A`.
    pub(crate) fn new<L, A, F>(handler: F) -> Self
    where
        L: InstanceLogic,
        A: DeserializeOwned + 'static,
        F: Fn(&mut L, A, Call, &mut InstanceContext) -> Reply + Send + Sync + 'static,
    {
        let run = move |logic: &mut dyn Any, call: &ToolCall, cx: &mut InstanceContext| {
            let Some(logic) = logic.downcast_mut::<L>() else {
                return Reply::Now(Err(mismatch(call, std::any::type_name::<L>())));
            };
            match call.args::<A>() {
                Ok(args) => {
                    let at = Call {
                        id: call.id(),
                        caller: call.caller(),
                    };
                    handler(logic, args, at, cx)
                }
                Err(e) => Reply::Now(Err(e)),
            }
        };
        Route {
            logic: TypeId::of::<L>(),
            run: Arc::new(run),
        }
    }
}

/// The internal error of a call whose instance runs logic its route was not written for.
fn mismatch(call: &ToolCall, expected: &str) -> ToolError {
    ToolError::internal(format!(
        "tool {:?} is routed to logic of type {expected}, but its instance runs other logic",
        call.tool()
    ))
}

/// A toolset's routes, by tool name.
#[derive(Clone, Default)]
pub(crate) struct Routes(BTreeMap<String, Route>);

impl Routes {
    /// Adds `route` for `tool`; false when the tool already had one.
    pub(crate) fn insert(&mut self, tool: String, route: Route) -> bool {
        self.0.insert(tool, route).is_none()
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether every route runs on logic of one type.
    pub(crate) fn one_logic(&self) -> bool {
        let mut types = self.0.values().map(|r| r.logic);
        let first = types.next();
        types.all(|t| Some(t) == first)
    }

    /// Answers `call` by its tool's route, or by the logic's own
    /// [`InstanceLogic::call`] when the tool has none.
    pub(crate) fn dispatch(
        &self,
        logic: &mut dyn super::durable::Logic,
        call: ToolCall,
        cx: &mut InstanceContext,
    ) -> Reply {
        let Some(route) = self.0.get(call.tool()) else {
            return logic.call(call, cx);
        };
        (route.run)(logic.author(), &call, cx)
    }
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

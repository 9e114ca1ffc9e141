//! The messages a [`ServerLink`] answers.
//!
//! Requests to the server ([`CallTool`], [`ListTools`], [`SendRequest`]) go through only
//! when the link is `Ready`; otherwise they fail at once with `NotConnected`. Each has a
//! timeout (the configured one unless the message sets its own).

use super::actor::ServerLink;
use super::config::PushPolicy;
use super::core::error::LinkError;
use super::events::EventSink;
use super::status::LinkStatus;
use actix::prelude::*;
use mcpl_protocol::mcp::{CallToolParams, CallToolResult, Tool};
use mcpl_protocol::meta::Meta;
use mcpl_protocol::method::{self, RequestMethod};
use serde_json::{Map, Value};
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;
use tokio::sync::oneshot;

/// Calls a tool (`tools/call`).
#[derive(Debug, Clone, PartialEq)]
pub struct CallTool {
    /// The tool's name on the server.
    pub name: String,
    /// Its arguments.
    pub arguments: Option<Map<String, Value>>,
    /// `_meta` for the call (RFC-014's `mcpl/instance`, §4.5).
    pub meta: Option<Meta>,
    /// This call's timeout, if not the configured one.
    pub timeout: Option<Duration>,
}

/// A link actor that has gone answers nothing: its callers see [`LinkError::Stopped`]. (A
/// function, not `From`: `LinkError` lives in the pure `mcpl-host-core`, which knows no
/// actix.)
pub fn stopped(_: actix::MailboxError) -> LinkError {
    LinkError::Stopped
}

impl CallTool {
    /// A call of `name` without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        CallTool {
            name: name.into(),
            arguments: None,
            meta: None,
            timeout: None,
        }
    }
    /// With arguments.
    pub fn with_arguments(mut self, arguments: Map<String, Value>) -> Self {
        self.arguments = Some(arguments);
        self
    }
    /// With `_meta`.
    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }
    /// With its own timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

impl Message for CallTool {
    type Result = Result<CallToolResult, LinkError>;
}

impl Handler<CallTool> for ServerLink {
    type Result = ResponseFuture<Result<CallToolResult, LinkError>>;

    fn handle(&mut self, msg: CallTool, ctx: &mut Context<Self>) -> Self::Result {
        let params = CallToolParams {
            name: msg.name,
            arguments: msg.arguments,
            meta: msg.meta,
        };
        self.ask::<method::CallTool>(&params, msg.timeout, ctx)
    }
}

/// Lists every tool (`tools/list`, all pages), refreshing the link's own list. While a
/// listing is under way this one follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListTools;

impl Message for ListTools {
    type Result = Result<Vec<Tool>, LinkError>;
}

impl Handler<ListTools> for ServerLink {
    type Result = ResponseFuture<Result<Vec<Tool>, LinkError>>;

    fn handle(&mut self, _: ListTools, ctx: &mut Context<Self>) -> Self::Result {
        let (tx, rx) = oneshot::channel();
        self.refresh_tools(Some(tx), false, ctx);
        Box::pin(async move { rx.await.unwrap_or(Err(LinkError::Stopped)) })
    }
}

/// Any typed request: `SendRequest::<ToolsetsOpen>::new(params)`; the result is decoded by
/// the method's result type.
pub struct SendRequest<M: RequestMethod> {
    /// The params.
    pub params: M::Params,
    /// This request's timeout, if not the configured one.
    pub timeout: Option<Duration>,
    method: PhantomData<fn() -> M>,
}

impl<M: RequestMethod> SendRequest<M> {
    /// A request with these params.
    pub fn new(params: M::Params) -> Self {
        SendRequest {
            params,
            timeout: None,
            method: PhantomData,
        }
    }
    /// With its own timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

impl<M: RequestMethod> fmt::Debug for SendRequest<M>
where
    M::Params: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendRequest")
            .field("method", &M::NAME)
            .field("params", &self.params)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl<M: RequestMethod + 'static> Message for SendRequest<M> {
    type Result = Result<M::Result, LinkError>;
}

impl<M: RequestMethod + 'static> Handler<SendRequest<M>> for ServerLink {
    type Result = ResponseFuture<Result<M::Result, LinkError>>;

    fn handle(&mut self, msg: SendRequest<M>, ctx: &mut Context<Self>) -> Self::Result {
        self.ask::<M>(&msg.params, msg.timeout, ctx)
    }
}

impl ServerLink {
    fn ask<M: RequestMethod>(
        &mut self,
        params: &M::Params,
        timeout: Option<Duration>,
        ctx: &mut Context<Self>,
    ) -> ResponseFuture<Result<M::Result, LinkError>> {
        let (tx, rx) = oneshot::channel();
        self.caller_request::<M>(params, timeout, tx, ctx);
        Box::pin(async move { rx.await.unwrap_or(Err(LinkError::Stopped)) })
    }
}

/// Stops the link: the connection is closed, requests in flight fail with `Disconnected`
/// (reason `Shutdown`), subscribers get `Disconnected`, and the actor stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Message)]
#[rtype(result = "()")]
pub struct Shutdown;

impl Handler<Shutdown> for ServerLink {
    type Result = ();

    fn handle(&mut self, _: Shutdown, ctx: &mut Context<Self>) {
        self.shutdown(ctx);
    }
}

/// Asks for a [`LinkStatus`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Message)]
#[rtype(result = "LinkStatus")]
pub struct GetStatus;

impl Handler<GetStatus> for ServerLink {
    type Result = MessageResult<GetStatus>;

    fn handle(&mut self, _: GetStatus, _ctx: &mut Context<Self>) -> Self::Result {
        MessageResult(self.status())
    }
}

/// Adds a subscriber to the link's events.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct Subscribe(pub EventSink);

impl Handler<Subscribe> for ServerLink {
    type Result = ();

    fn handle(&mut self, msg: Subscribe, _ctx: &mut Context<Self>) {
        self.config.subscribers.push(msg.0);
    }
}

/// Replaces the push policy.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct SetPushPolicy(pub PushPolicy);

impl Handler<SetPushPolicy> for ServerLink {
    type Result = ();

    fn handle(&mut self, msg: SetPushPolicy, _ctx: &mut Context<Self>) {
        self.config.push_policy = msg.0;
    }
}

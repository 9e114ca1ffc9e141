//! The logic a server author writes for a toolset: how an instance opens
//! ([`ToolsetLogic`]), and how it answers, takes others in (or hears them decline),
//! closes and wakes ([`InstanceLogic`]). Everything it changes it says through the
//! [`InstanceContext`](crate::InstanceContext); the SDK turns that into hint changes, pushes
//! and results (§5.2, §5.3). No rev, session or principal state is in sight.

use super::context::InstanceContext;
use super::event::CallId;
use super::participant::ParticipantId;
use crate::tool::error::{ToolError, ToolResult};
use mcpl_protocol::mcp::{CallToolResult, ContentBlock};
pub(crate) use mcpl_server_core::author::Refusal;
use mcpl_transport::Principal;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// One open instance's logic (a game): its tools' handlers are its toolset's routes
/// ([`Toolset::route`](crate::Toolset::route)), and every method here has a default. Each
/// runs in the instance's actor, one at a time; a panic ends the instance with the reason "internal error" and every participant
/// is told, while the rest of the server goes on.
pub trait InstanceLogic: Send + 'static {
    /// A participant called one of the toolset's tools that has no typed route
    /// ([`Toolset::route`](crate::Toolset::route), where tools are best declared: each
    /// call goes to its own handler with its arguments decoded). The SDK already checked
    /// that the tool is visible to that participant in this instance (§3, §4.5). Answer
    /// now, or [`Reply::Later`] and answer with [`InstanceContext::answer`] when something
    /// else happens (an opponent's move). By default the call is a tool error: nothing
    /// answers it.
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        let _ = cx;
        Reply::error(format!("{} has nothing to answer it", call.tool()))
    }

    /// An invited principal opened the instance: take it in (its visibility, its
    /// definitions) and say what to tell it, or refuse. By default nobody joins.
    fn join(&mut self, who: ParticipantId, cx: &mut InstanceContext) -> Result<Joined, Refusal> {
        let _ = (who, cx);
        Err(Refusal::new("this instance takes no other participants"))
    }

    /// A participant closed the instance (`toolsets/close`), or its principal's record of
    /// it ended for a reason of its own (its last connection closed on a server that does
    /// not keep toolsets, a manifest change). Return what to tell it (a game resigned). Its
    /// own record ends when this returns; to end the instance for everyone, call
    /// [`InstanceContext::end`].
    fn close(&mut self, who: ParticipantId, cx: &mut InstanceContext) -> Vec<ContentBlock> {
        let _ = (who, cx);
        Vec::new()
    }

    /// A timer set with [`InstanceContext::wake_after`] fired (a bot's move, a clock), work
    /// started with [`InstanceContext::spawn_blocking`] finished, or something outside
    /// called [`InstanceWaker::wake`](crate::InstanceWaker::wake) — each with its tag. Nobody
    /// awaits this step: what it changes is pushed with its events, or rides in the answers
    /// it gives (§5.3).
    fn wake(&mut self, tag: u64, cx: &mut InstanceContext) {
        let _ = (tag, cx);
    }

    /// The invitation to `who` ([`InstanceContext::invite`]) reached its principal, which
    /// shows it under `name` — the opener's name for the instance, or that name with a
    /// `-N` suffix when the principal already uses it; `None` for a toolset without
    /// instances. From now on [`InstanceContext::name_for`] says the same. By default
    /// nothing happens.
    ///
    /// ```
    /// use mcpl_server::{Event, InstanceContext, InstanceLogic, ParticipantId};
    ///
    /// struct Table { host: ParticipantId }
    ///
    /// impl InstanceLogic for Table {
    ///     fn invited(&mut self, who: ParticipantId, name: Option<&str>, cx: &mut InstanceContext) {
    ///         let text = format!("{} was invited; the game is {} to them.", cx.name(who), name.unwrap_or("-"));
    ///         cx.event(self.host, Event::text(text));
    ///     }
    /// }
    /// ```
    fn invited(&mut self, who: ParticipantId, name: Option<&str>, cx: &mut InstanceContext) {
        let _ = (who, name, cx);
    }

    /// The invited `who` declined the invitation (a tool handler called
    /// [`ToolContext::decline_invitation`](crate::ToolContext::decline_invitation)): it is
    /// now [`ParticipantKind::Declined`](crate::ParticipantKind::Declined) and nothing
    /// reaches it. Tell the others, and end the instance if it cannot go on without it. By
    /// default nothing happens.
    ///
    /// ```
    /// use mcpl_server::{Event, InstanceContext, InstanceLogic, ParticipantId};
    ///
    /// struct Table { host: ParticipantId }
    ///
    /// impl InstanceLogic for Table {
    ///     fn declined(&mut self, who: ParticipantId, cx: &mut InstanceContext) {
    ///         let name = cx.name(who);
    ///         cx.event(self.host, Event::text(format!("{name} declined your challenge.")));
    ///         cx.end(format!("{name} declined the challenge"));
    ///     }
    /// }
    /// ```
    fn declined(&mut self, who: ParticipantId, cx: &mut InstanceContext) {
        let _ = (who, cx);
    }
}

/// What an open is given.
#[derive(Debug, Clone, PartialEq)]
pub struct Opening {
    pub(crate) toolset: String,
    pub(crate) instance: Option<String>,
    pub(crate) options: Value,
    pub(crate) opener: ParticipantId,
    pub(crate) principal: Principal,
}

impl Opening {
    /// The toolset.
    pub fn toolset(&self) -> &str {
        &self.toolset
    }

    /// The opener's name for the instance (none for a toolset without instances).
    pub fn instance(&self) -> Option<&str> {
        self.instance.as_deref()
    }

    /// The options, as validated against the declared schema (`{}` when none were sent).
    pub fn options(&self) -> &Value {
        &self.options
    }

    /// The options decoded as `T`; a mismatch refuses the open, naming the problem.
    pub fn options_as<T: DeserializeOwned>(&self) -> Result<T, Refusal> {
        crate::decode::from_json(self.options.clone())
            .map_err(|e| Refusal::new(format!("options: {e}")))
    }

    /// The participant who opened it.
    pub fn opener(&self) -> ParticipantId {
        self.opener
    }

    /// The opener's principal.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }
}

/// An invited principal, taken in: its title and what to tell it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Joined {
    pub(crate) title: Option<String>,
    pub(crate) content: Vec<ContentBlock>,
}

impl Joined {
    /// Nothing to say; the declared title.
    pub fn new() -> Self {
        Self::default()
    }

    told_builders!("joiner", "\"Go vs alice\"", "");
}

/// A call of one of the toolset's tools.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub(crate) id: CallId,
    pub(crate) tool: String,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) caller: ParticipantId,
}

impl ToolCall {
    /// This call's id, for [`InstanceContext::answer`] after [`Reply::Later`].
    pub fn id(&self) -> CallId {
        self.id
    }

    /// The tool called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Who called.
    pub fn caller(&self) -> ParticipantId {
        self.caller
    }

    /// The arguments, as sent (without the `instance` a host without `toolHints` adds, §8).
    pub fn arguments(&self) -> &Map<String, Value> {
        &self.arguments
    }

    /// The arguments decoded as `T`; a mismatch is a tool error naming the problem, for the
    /// model to correct (MCP: input errors are tool errors).
    pub fn args<T: DeserializeOwned>(&self) -> Result<T, ToolError> {
        crate::decode::from_json(Value::Object(self.arguments.clone())).map_err(|e| {
            ToolError::InvalidArguments {
                tool: self.tool.clone(),
                detail: e.to_string(),
            }
        })
    }
}

/// How a call is answered.
// A reply is made once per call and moved straight on; boxing the result would only cost
// an allocation and make `Reply::Now(Ok(..))` harder to write.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Reply {
    /// Now, with this result.
    Now(ToolResult),
    /// Later, with [`InstanceContext::answer`] (until then the host waits; an instance that
    /// ends answers every waiting call with a tool error saying why). Changes made for the
    /// caller meanwhile go out at once, unless [`InstanceContext::hold_for`] keeps them for
    /// the answer (§5.3).
    Later,
}

impl Reply {
    /// A result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Reply::Now(Ok(CallToolResult::text(text)))
    }

    /// A tool error saying why (§3: the model reads it).
    pub fn error(text: impl Into<String>) -> Self {
        Reply::Now(Err(ToolError::failed(text)))
    }
}

impl From<ToolResult> for Reply {
    fn from(r: ToolResult) -> Self {
        Reply::Now(r)
    }
}

impl From<CallToolResult> for Reply {
    fn from(r: CallToolResult) -> Self {
        Reply::Now(Ok(r))
    }
}

impl From<ToolError> for Reply {
    fn from(e: ToolError) -> Self {
        Reply::Now(Err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, Debug, PartialEq)]
    struct Take {
        count: u32,
    }

    #[test]
    fn arguments_decode_or_are_a_tool_error() {
        let call = ToolCall {
            id: CallId(1),
            tool: "take".into(),
            arguments: json!({"count": 2}).as_object().unwrap().clone(),
            caller: ParticipantId(0),
        };
        assert_eq!(call.args::<Take>().unwrap(), Take { count: 2 });
        let bad = ToolCall {
            arguments: Map::new(),
            ..call
        };
        assert!(matches!(
            bad.args::<Take>(),
            Err(ToolError::InvalidArguments { .. })
        ));
    }
}

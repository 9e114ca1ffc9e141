//! Test support: an arcade server's catalog, tools and messages (the builders), and
//! [`Host`], which drives the real composition — a [`HostCore`] — as the `Host` actor does:
//! each server message becomes the read the link would tap (a `toolsets/list` response, a
//! push, `tools/hints`, a result carrying hints), each agent call is planned, carried out
//! and finished through the core. The tests then read the core's parts directly.

use super::conversation::{AgentMessage, Conversation, ConversationConfig};
use super::hint_state::HintConfig;
use super::host_core::{CoreConfig, HostCore, ServerSlot, Step};
use super::meta_tools::{self, MetaConfig, MetaTools, Plan, SendPlan};
use super::output::{Carrier, Output, ResultOf};
use super::presenter::{Outcome, Presenter, PresenterConfig, ToldIds};
use super::tool_policy::ToolPolicy;
use mcpl_protocol::hints::{HintEntries, SuggestAction, ToolDefinition, ToolHint, ToolsetChange};
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, McplManifest, PushEventParams, PushPayload};
use mcpl_protocol::meta::HINTS;
use mcpl_protocol::method::{
    CallTool, Method, PushEvent, ToolHints, ToolsetsClose, ToolsetsList, ToolsetsOpen,
};
use mcpl_protocol::toolsets::{
    EndedRecord, OpenRecord, ToolsetDecl, ToolsetDefault, ToolsetsListResult,
};
use mcpl_protocol::{
    CallToolResult, ContentBlock, HintChanges, Id, Message, Meta, Notification, Presence, Request,
    Response, Suggestion, Tool, ToolsetState,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

pub(crate) fn tool(name: &str, toolset: Option<&str>, presence: Option<Presence>) -> Tool {
    let schema = match name {
        "play" => json!({"type": "object",
            "properties": {"move": {"enum": ["D4", "Q16", "pass"]}},
            "required": ["move"], "additionalProperties": false}),
        _ => json!({"type": "object"}),
    };
    let mut t = Tool::new(name, format!("{name} does its thing"), schema);
    let meta = Meta {
        toolset: toolset.map(Into::into),
        presence,
        ..Default::default()
    };
    t.meta = (!meta.is_empty()).then_some(meta);
    t
}

/// clock: static; seek: lobby (default open); play, resign: game (instanced); scratch: the
/// undeclared group `notes`; roam and admin_reset: dynamic outside toolsets.
pub(crate) fn arcade_tools() -> Vec<Tool> {
    vec![
        tool("clock", None, None),
        tool("seek", Some("lobby"), None),
        tool("play", Some("game"), None),
        tool("resign", Some("game"), None),
        tool("scratch", Some("notes"), None),
        tool("roam", None, Some(Presence::Dynamic)),
        tool("admin_reset", None, Some(Presence::Dynamic)),
    ]
}

pub(crate) fn arcade_manifest(hints: bool, with_game: bool) -> McplManifest {
    let mut m = McplManifest {
        version: "0.5".into(),
        tool_hints: hints.then_some(true),
        ..Default::default()
    };
    m.toolsets.insert(
        "lobby".into(),
        ToolsetDecl {
            title: Some("Lobby".into()),
            summary: Some("Find games and opponents".into()),
            default: ToolsetDefault::Open,
            ..Default::default()
        },
    );
    if with_game {
        m.toolsets.insert(
            "game".into(),
            ToolsetDecl {
                title: Some("Go".into()),
                summary: Some("A game of Go".into()),
                instances: true,
                options: Some(json!({"type": "object",
                    "properties": {"size": {"type": "integer", "enum": [9, 13, 19]}}})),
                ..Default::default()
            },
        );
    }
    m
}

pub(crate) fn vis(tool: &str, instance: Option<&str>, visible: bool) -> ToolHint {
    ToolHint {
        name: tool.into(),
        instance: instance.map(Into::into),
        visible: Some(visible),
        ..Default::default()
    }
}

pub(crate) fn def(
    tool: &str,
    instance: Option<&str>,
    description: &str,
    schema: Value,
) -> ToolHint {
    ToolHint {
        name: tool.into(),
        instance: instance.map(Into::into),
        definition: Some(ToolDefinition {
            description: Some(description.into()),
            input_schema: Some(schema),
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub(crate) fn set(toolset: &str, instance: Option<&str>, state: ToolsetState) -> ToolsetChange {
    ToolsetChange {
        toolset: toolset.into(),
        instance: instance.map(Into::into),
        state,
        title: None,
        reason: None,
        ended: None,
    }
}

pub(crate) fn suggestion(toolset: &str, instance: Option<&str>, reason: &str) -> Suggestion {
    Suggestion {
        toolset: toolset.into(),
        instance: instance.map(Into::into),
        action: SuggestAction::Open,
        reason: reason.into(),
        options: Some(json!({"size": 9})),
    }
}

pub(crate) fn ended(id: &str, toolset: &str, instance: Option<&str>, reason: &str) -> EndedRecord {
    EndedRecord {
        id: id.into(),
        toolset: toolset.into(),
        instance: instance.map(Into::into),
        reason: reason.into(),
        at: "2026-11-30T12:00:00Z".into(),
    }
}

pub(crate) fn open_rec(toolset: &str, instance: Option<&str>) -> OpenRecord {
    OpenRecord {
        toolset: toolset.into(),
        instance: instance.map(Into::into),
        title: None,
        options: None,
    }
}

pub(crate) fn changes(rev: u64, tools: Vec<ToolHint>, toolsets: Vec<ToolsetChange>) -> HintChanges {
    HintChanges {
        rev,
        entries: HintEntries {
            tools,
            toolsets,
            suggest: Vec::new(),
        },
    }
}

pub(crate) fn push_params(
    event_id: &str,
    text: &str,
    hints: Option<HintChanges>,
) -> PushEventParams {
    PushEventParams {
        feature_set: "arcade.games".into(),
        event_id: event_id.into(),
        timestamp: "2026-11-30T12:00:00Z".into(),
        origin: None,
        tags: vec!["surface:turn".into()],
        payload: PushPayload {
            content: vec![ContentBlock::text(text)],
        },
        coalesce: None,
        hints,
        toolset: Some("game".into()),
        instance: Some("g1".into()),
        meta: None,
    }
}

/// A [`HostCore`] with what a test plays: the servers (`now`, one connection each) and
/// their answers.
pub(crate) struct Host {
    pub core: HostCore,
    pub now: Instant,
    /// The request ids the test's reads use.
    next_id: i64,
}

impl Host {
    pub fn new(window: usize, told: ToldIds) -> Self {
        let core = HostCore::new(
            Vec::new(),
            Presenter::new(PresenterConfig::default(), told),
            Conversation::new(ConversationConfig {
                window,
                ..Default::default()
            }),
            MetaTools::new(MetaConfig::default()),
            CoreConfig {
                retry_delay: std::time::Duration::from_secs(1),
                retry_jitter: 0.0,
                retry_seed: 0,
            },
        );
        Host {
            core,
            now: Instant::now(),
            next_id: 1000,
        }
    }

    /// An arcade with the lobby open and `seek` visible (its connect-time statement at
    /// rev 1), then the first tool-list boundary.
    pub fn with_arcade(name: &str, push_events: bool) -> Self {
        let mut h = Host::new(40, ToldIds::default());
        h.add_server(name, push_events, ToolPolicy::allow_all());
        h
    }

    pub fn add_server(&mut self, name: &str, push_events: bool, policy: ToolPolicy) {
        self.add_server_with(name, push_events, policy, HintConfig::ordered());
    }

    /// Connects a server as the link would tell it: `initialize` read (its manifest),
    /// the handshake done (`pushEvents` granted or not), the tools listed, the statement
    /// the core asked for read and answered, then a boundary.
    pub fn add_server_with(
        &mut self,
        name: &str,
        push_events: bool,
        policy: ToolPolicy,
        config: HintConfig,
    ) {
        let manifest = arcade_manifest(true, true);
        self.core
            .add_server(ServerSlot::new(name, true, policy, config));
        self.core
            .connected(name, 1, config.ordered, Some(&manifest));
        let granted: Vec<String> = push_events
            .then(|| CAP_PUSH_EVENTS.to_owned())
            .into_iter()
            .collect();
        self.core.handshake_done(name, 1, true, &granted, self.now);
        let tools: Arc<[Tool]> = arcade_tools().into();
        self.core.listed(name, 1, &tools, None, false);
        self.drain();
        let i = self.index(name);
        self.statement(
            i,
            &changes(
                1,
                vec![
                    vis("seek", None, true),
                    vis("roam", None, true),
                    vis("admin_reset", None, true),
                ],
                vec![],
            ),
            &[open_rec("lobby", None)],
            &[],
        );
        self.boundary();
    }

    /// What the core showed since the last drain; its actions (reads, timers) are
    /// dropped: no test here answers them.
    fn drain(&mut self) -> Vec<AgentMessage> {
        while self.core.poll_action().is_some() {}
        std::iter::from_fn(|| self.core.poll_shown())
            .map(|(_, m)| m)
            .collect()
    }

    fn name(&self, i: usize) -> String {
        self.core.servers[i].name().to_owned()
    }

    fn epoch(&self, i: usize) -> u64 {
        self.core.servers[i].epoch()
    }

    fn id(&mut self) -> Id {
        self.next_id += 1;
        Id::Number(self.next_id)
    }

    /// A `toolsets/list` read (connect or recovery), as the tap passes its response.
    pub fn statement(
        &mut self,
        i: usize,
        c: &HintChanges,
        open: &[OpenRecord],
        ended: &[EndedRecord],
    ) -> Vec<AgentMessage> {
        let result = ToolsetsListResult {
            open: open.to_vec(),
            ended: ended.to_vec(),
            meta: Meta::with_hints(c.clone()),
        };
        let id = self.id();
        let response = Response::ok_typed(id.clone(), &result);
        let (name, epoch, now) = (self.name(i), self.epoch(i), self.now);
        self.core.read(
            &name,
            epoch,
            Message::Response(response),
            Some((id, ToolsetsList::NAME)),
            now,
        );
        self.drain()
    }

    /// A hint-carrying message read by the tap, as the server would write it.
    pub fn read(&mut self, i: usize, carrier: Carrier, c: HintChanges) -> Vec<AgentMessage> {
        let hints = serde_json::to_value(&c).unwrap();
        let (message, answers) = match carrier {
            Carrier::Standalone => (
                Message::Notification(Notification {
                    method: ToolHints::NAME.to_owned(),
                    params: Some(mcpl_protocol::jsonrpc::to_raw(&hints)),
                }),
                None,
            ),
            Carrier::Push { event_id, coalesce } => {
                let mut params = json!({"featureSet": "arcade.games", "eventId": event_id,
                    "timestamp": "2026-11-30T12:00:00Z", "payload": {"content": []},
                    "hints": hints});
                if coalesce {
                    params["coalesce"] = json!({"key": "turn"});
                }
                (
                    Message::Request(Request {
                        id: self.id(),
                        method: PushEvent::NAME.to_owned(),
                        params: Some(mcpl_protocol::jsonrpc::to_raw(&params)),
                    }),
                    None,
                )
            }
            Carrier::Result { of, request } => {
                let method = match of {
                    ResultOf::CallTool => CallTool::NAME,
                    ResultOf::ToolsetsOpen => ToolsetsOpen::NAME,
                    ResultOf::ToolsetsClose => ToolsetsClose::NAME,
                };
                let result = json!({"content": [], "_meta": {HINTS: hints}});
                (
                    Message::Response(Response::ok(request.clone(), result)),
                    Some((request, method)),
                )
            }
        };
        let (name, epoch, now) = (self.name(i), self.epoch(i), self.now);
        self.core.read(&name, epoch, message, answers, now);
        self.drain()
    }

    /// Hint-state outputs made outside a read (a test that drives the hint state itself).
    pub fn ingest(&mut self, i: usize, out: &[Output]) -> Vec<AgentMessage> {
        let name = self.name(i);
        self.core.after_hints(&name, out.to_vec());
        self.drain()
    }

    /// A `tools/hints` notification.
    pub fn standalone(&mut self, i: usize, c: HintChanges) -> Vec<AgentMessage> {
        self.read(i, Carrier::Standalone, c)
    }

    /// A push read (its hints applied) and then decided.
    pub fn push(&mut self, i: usize, p: &PushEventParams, accepted: bool) -> Vec<AgentMessage> {
        let request = Request {
            id: self.id(),
            method: PushEvent::NAME.to_owned(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(&p)),
        };
        let (name, epoch, now) = (self.name(i), self.epoch(i), self.now);
        self.core
            .read(&name, epoch, Message::Request(request), None, now);
        self.core.push_decided(&name, epoch, p, accepted);
        self.drain()
    }

    /// A tool-list boundary. True when the list changed.
    pub fn boundary(&mut self) -> bool {
        let changed = self.core.boundary();
        self.drain();
        changed
    }

    pub fn plan(&mut self, name: &str, args: Value) -> Plan {
        self.core.plan(name, &args)
    }

    /// A model's tool call, end to end: planned and carried out; a request to send is
    /// answered by `respond`, whose result's hints the tap reads first, then finished.
    /// Returns the agent's result (recorded in the conversation) and the plan.
    pub fn call(
        &mut self,
        name: &str,
        args: Value,
        respond: impl FnOnce(&SendPlan) -> Outcome,
    ) -> (CallToolResult, Plan) {
        let plan = self.core.plan(name, &args);
        let result = match self.core.carry_out(plan.clone()) {
            Step::Done(result) => result,
            Step::Send(p) => {
                let i = self.index(&p.server);
                let outcome = respond(&p);
                if let Some(h) = outcome_hints(&outcome) {
                    let of = match &outcome {
                        Outcome::Call(_) => ResultOf::CallTool,
                        Outcome::Open(_) => ResultOf::ToolsetsOpen,
                        Outcome::Close(_) => ResultOf::ToolsetsClose,
                    };
                    let request = Id::Number(7);
                    self.read(i, Carrier::Result { of, request }, h);
                }
                let now = self.now;
                self.core.finish_call(&p, outcome, now)
            }
        };
        self.drain();
        (result, plan)
    }

    pub fn index(&self, server: &str) -> usize {
        self.core
            .servers
            .iter()
            .position(|s| s.name() == server)
            .expect("known server")
    }

    pub fn turn(&mut self) -> Option<AgentMessage> {
        let r = self.core.start_turn().map(|(_, m)| m);
        self.drain();
        r
    }

    pub fn look(&mut self, args: Value) -> String {
        self.call(meta_tools::LOOK, args, |_| {
            unreachable!("look sends nothing")
        })
        .0
        .joined_text()
    }
}

fn outcome_hints(o: &Outcome) -> Option<HintChanges> {
    let meta = match o {
        Outcome::Call(Ok(r)) => r.meta.as_ref(),
        Outcome::Open(Ok(r)) => r.meta.as_ref(),
        Outcome::Close(Ok(r)) => r.meta.as_ref(),
        _ => None,
    };
    meta?.hints.clone()
}

/// An open result carrying `hints`.
pub(crate) fn open_result(
    instance: Option<&str>,
    title: Option<&str>,
    hints: Option<HintChanges>,
) -> Outcome {
    Outcome::Open(Ok(mcpl_protocol::toolsets::ToolsetsOpenResult {
        instance: instance.map(Into::into),
        title: title.map(Into::into),
        adopted: None,
        content: Some(vec![ContentBlock::text("A fresh 9x9 board.\n. . .")]),
        meta: hints.map(Meta::with_hints),
    }))
}

/// Opens game instance `name` through the meta-tool with the server's usual answer (rev
/// `rev`: open, play and resign visible). Returns the agent's result text.
pub(crate) fn open_game(h: &mut Host, name: &str, rev: u64) -> String {
    let hints = changes(
        rev,
        vec![
            vis("play", Some(name), true),
            vis("resign", Some(name), true),
        ],
        vec![ToolsetChange {
            title: Some(format!("Go 9x9 {name}")),
            ..set("game", Some(name), ToolsetState::Open)
        }],
    );
    let (r, _) = h.call(
        meta_tools::OPEN,
        json!({"toolset": "game", "instance": name}),
        |_| open_result(Some(name), Some("Go 9x9"), Some(hints)),
    );
    r.joined_text()
}

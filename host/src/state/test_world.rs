//! Test support: an arcade server's catalog and hint state, and [`Host`], the wiring of
//! `state/mod.rs` in miniature (what the real `Host` actor does with each read, call and
//! boundary), so the presenter, conversation and meta-tools are tested as they are used.

use super::catalog::Catalog;
use super::conversation::{AgentMessage, Conversation, ConversationConfig, MessageKind};
use super::hint_state::{HintConfig, HintState};
use super::meta_tools::{self, MetaConfig, MetaTools, Plan, SendPlan, World};
use super::output::{Carrier, Output, ResultOf};
use super::presenter::{Outcome, Presenter, PresenterConfig, ToldIds};
use super::tool_policy::ToolPolicy;
use super::view::ServerView;
use mcpl_protocol::hints::{SuggestAction, ToolDefinition, ToolHint, ToolsetChange};
use mcpl_protocol::mcpl::{McplManifest, PushEventParams, PushPayload};
use mcpl_protocol::toolsets::{EndedRecord, OpenRecord, ToolsetDecl, ToolsetDefault};
use mcpl_protocol::{
    CallToolResult, ContentBlock, HintChanges, Id, Meta, Presence, Suggestion, Tool, ToolsetState,
};
use serde_json::{Value, json};
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
                    "properties": {"size": {"enum": [9, 13, 19]}}})),
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
        tools,
        toolsets,
        suggest: Vec::new(),
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

/// One server as the Host owns it.
pub(crate) struct Server {
    pub name: String,
    pub catalog: Catalog,
    pub hints: Option<HintState>,
    pub policy: ToolPolicy,
    pub push_events: bool,
    pub tools: Vec<Tool>,
}

impl Server {
    pub fn view(&self) -> ServerView<'_> {
        ServerView {
            name: &self.name,
            catalog: &self.catalog,
            hints: self.hints.as_ref(),
            policy: &self.policy,
            push_events: self.push_events,
            connected: true,
        }
    }
}

/// The Host's wiring in miniature.
pub(crate) struct Host {
    pub servers: Vec<Server>,
    pub presenter: Presenter,
    pub conversation: Conversation,
    pub meta: MetaTools,
    pub now: Instant,
}

impl Host {
    pub fn new(window: usize, told: ToldIds) -> Self {
        Host {
            servers: Vec::new(),
            presenter: Presenter::new(PresenterConfig::default(), told),
            conversation: Conversation::new(ConversationConfig {
                window,
                ..Default::default()
            }),
            meta: MetaTools::new(MetaConfig::default()),
            now: Instant::now(),
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

    pub fn add_server_with(
        &mut self,
        name: &str,
        push_events: bool,
        policy: ToolPolicy,
        config: HintConfig,
    ) {
        let tools = arcade_tools();
        let manifest = arcade_manifest(true, true);
        let mut catalog = Catalog::new(true, Some(&manifest));
        let mut hints = HintState::new(config);
        hints.handle_tools_list(&tools, 0);
        catalog.set_tools(&tools, |t| hints.presence(t));
        self.servers.push(Server {
            name: name.into(),
            catalog,
            hints: Some(hints),
            policy,
            push_events,
            tools,
        });
        let i = self.servers.len() - 1;
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

    fn show(&mut self, messages: Vec<AgentMessage>) -> Vec<AgentMessage> {
        for m in &messages {
            self.conversation.push(m.clone());
        }
        messages
    }

    /// A `toolsets/list` read (connect or recovery).
    pub fn statement(
        &mut self,
        i: usize,
        c: &HintChanges,
        open: &[OpenRecord],
        ended: &[EndedRecord],
    ) -> Vec<AgentMessage> {
        let now = self.now;
        let out = self.servers[i]
            .hints
            .as_mut()
            .expect("hints")
            .handle_statement(c, open, ended, now);
        self.ingest(i, &out)
    }

    /// A hint-carrying message read by the tap.
    pub fn read(&mut self, i: usize, carrier: Carrier, c: HintChanges) -> Vec<AgentMessage> {
        let now = self.now;
        let out = self.servers[i]
            .hints
            .as_mut()
            .expect("hints")
            .handle_hints(carrier, c, now);
        self.ingest(i, &out)
    }

    pub fn ingest(&mut self, i: usize, out: &[Output]) -> Vec<AgentMessage> {
        for o in out {
            if let Some(super::output::Change::Presence { tool, presence }) = o.change() {
                self.servers[i].catalog.set_presence(tool, *presence);
            }
        }
        let view = self.servers[i].view();
        let msgs = self.presenter.ingest(&view, out);
        self.show(msgs)
    }

    /// A `tools/hints` notification.
    pub fn standalone(&mut self, i: usize, c: HintChanges) -> Vec<AgentMessage> {
        self.read(i, Carrier::Standalone, c)
    }

    /// A push read (its hints applied) and then decided.
    pub fn push(&mut self, i: usize, p: &PushEventParams, accepted: bool) -> Vec<AgentMessage> {
        let mut shown = Vec::new();
        if let Some(h) = &p.hints {
            shown.extend(self.read(
                i,
                Carrier::Push {
                    event_id: p.event_id.clone(),
                    coalesce: false,
                },
                h.clone(),
            ));
        }
        let view = self.servers[i].view();
        let msgs = self.presenter.push(&view, p, accepted);
        shown.extend(self.show(msgs));
        shown
    }

    /// A tool-list boundary: each catalog rebuilds, the presenter tells the moves, the
    /// conversation's list is rebuilt. True when the list changed.
    pub fn boundary(&mut self) -> bool {
        for i in 0..self.servers.len() {
            let outs = self.servers[i].catalog.rebuild_boundary();
            let view = self.servers[i].view();
            let msgs = self.presenter.catalog_outputs(&view, &outs);
            self.show(msgs);
        }
        let views: Vec<ServerView<'_>> = self.servers.iter().map(Server::view).collect();
        let bounds = *self.presenter.bounds();
        self.conversation.rebuild_tool_list(&views, &bounds)
    }

    pub fn plan(&mut self, name: &str, args: Value) -> Plan {
        let views: Vec<ServerView<'_>> = self.servers.iter().map(Server::view).collect();
        let world = World {
            servers: &views,
            presenter: &self.presenter,
        };
        self.meta.plan(name, &args, &world)
    }

    /// A model's tool call, end to end: plan, then send (the server answers with
    /// `respond`, whose result's hints the tap reads first), or apply a group, or answer.
    /// Returns the agent's result (recorded in the conversation) and the plan.
    pub fn call(
        &mut self,
        name: &str,
        args: Value,
        respond: impl FnOnce(&SendPlan) -> Outcome,
    ) -> (CallToolResult, Plan) {
        let plan = self.plan(name, args);
        let (result, announces) = match &plan {
            Plan::Send(p) => {
                let i = self.index(&p.server);
                self.presenter.sending(&p.server);
                let outcome = respond(p);
                if let Some(h) = outcome_hints(&outcome) {
                    let of = match &outcome {
                        Outcome::Call(_) => ResultOf::CallTool,
                        Outcome::Open(_) => ResultOf::ToolsetsOpen,
                        Outcome::Close(_) => ResultOf::ToolsetsClose,
                    };
                    self.read(
                        i,
                        Carrier::Result {
                            of,
                            request: Id::Number(7),
                        },
                        h,
                    );
                }
                let view = self.servers[i].view();
                let f = self.presenter.finish(&view, p, outcome);
                self.show(f.notices);
                (f.result, f.announces)
            }
            Plan::Group(g) => {
                let i = self.index(&g.server);
                meta_tools::apply_group(g, &mut self.servers[i].catalog);
                let view = self.servers[i].view();
                let a = self.presenter.group_changed(&view, g);
                (a.result, a.announces)
            }
            Plan::Answer(a) => {
                self.presenter.shown(&a.announces);
                (a.result.clone(), a.announces.clone())
            }
            Plan::Refused(e) => (e.to_result(), Default::default()),
        };
        self.conversation.push(AgentMessage {
            kind: MessageKind::ToolResult,
            server: None,
            text: result.joined_text(),
            announces,
        });
        (result, plan)
    }

    pub fn index(&self, server: &str) -> usize {
        self.servers
            .iter()
            .position(|s| s.name == server)
            .expect("known server")
    }

    pub fn turn(&mut self) -> Option<AgentMessage> {
        let views: Vec<ServerView<'_>> = self.servers.iter().map(Server::view).collect();
        let r = self.presenter.reminder(&self.conversation, &views);
        if let Some(m) = &r {
            self.conversation.push(m.clone());
        }
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

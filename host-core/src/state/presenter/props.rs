//! Property test: over random sequences of hint changes, carried by `tools/hints`, pushes
//! (shown or refused) and call results, the agent is told each change once and ends up
//! told everything — read back from the words it was shown — and the model's tool list
//! never changes (vector 12).

use super::*;
use crate::state::fixtures::*;
use crate::state::meta_tools::{After, Outgoing, SendPlan};
use crate::state::output::{Carrier, ResultOf};
use mcpl_protocol::hints::ToolHint;
use mcpl_protocol::{CallToolParams, CallToolResult, HintChanges, Id, Meta, ToolsetState};
use proptest::prelude::*;
use serde_json::json;
use std::collections::BTreeSet;

#[derive(Debug, Clone)]
enum Op {
    Vis(&'static str, Option<&'static str>, bool),
    Def(&'static str, Option<&'static str>, &'static str),
    Open(&'static str),
    Close(&'static str),
}

#[derive(Debug, Clone, Copy)]
enum How {
    Standalone,
    Push(bool),
    Result,
    /// The connection drops and comes back: a fresh hint state reads a statement that
    /// restates the server's state (the step's ops are not sent).
    Reconnect,
}

fn op() -> impl Strategy<Value = Op> {
    let tool = prop::sample::select(vec!["play", "resign", "seek", "roam"]);
    let inst = prop::sample::select(vec![None, Some("g1"), Some("g2")]);
    let game = prop::sample::select(vec!["g1", "g2"]);
    prop_oneof![
        (tool.clone(), inst.clone(), any::<bool>()).prop_map(|(t, i, v)| Op::Vis(t, i, v)),
        (tool, inst, prop::sample::select(vec!["a", "b"])).prop_map(|(t, i, d)| Op::Def(t, i, d)),
        game.clone().prop_map(Op::Open),
        game.prop_map(Op::Close),
    ]
}

fn how() -> impl Strategy<Value = How> {
    prop_oneof![
        Just(How::Standalone),
        any::<bool>().prop_map(How::Push),
        Just(How::Result),
        Just(How::Reconnect),
    ]
}

fn apply(c: &mut HintChanges, op: &Op) {
    match op {
        Op::Vis(t, i, v) => c.entries.tools.push(vis(t, *i, *v)),
        Op::Def(t, i, d) => c.entries.tools.push(ToolHint {
            ..def(t, *i, d, json!({"type": "object", "description": *d}))
        }),
        Op::Open(g) => c
            .entries
            .toolsets
            .push(set("game", Some(g), ToolsetState::Open)),
        Op::Close(g) => c
            .entries
            .toolsets
            .push(set("game", Some(g), ToolsetState::Closed)),
    }
}

/// What the words shown say is usable: (tool, marker) → told. Panics on a line that tells
/// something twice or contradicts what was told.
#[derive(Default)]
struct Reader {
    usable: BTreeSet<(String, String)>,
    open: BTreeSet<String>,
}

impl Reader {
    fn read(&mut self, text: &str) -> Result<(), String> {
        for line in text.lines() {
            let Some(line) = line.strip_prefix("- ") else {
                continue;
            };
            let marker_of = |s: &str| s[s.find('[').unwrap()..=s.find(']').unwrap()].to_owned();
            if let Some(rest) = line.strip_prefix("Usable: ") {
                let tool = rest.split(' ').next().unwrap().to_owned();
                if !self.usable.insert((tool, marker_of(rest))) {
                    return Err(format!("told twice: {line}"));
                }
            } else if let Some(rest) = line.strip_prefix("Changed: ") {
                let tool = rest.split(' ').next().unwrap().to_owned();
                if !self.usable.contains(&(tool, marker_of(rest))) {
                    return Err(format!("changed but not usable: {line}"));
                }
            } else if let Some(rest) = line.strip_prefix("No longer usable: ") {
                let tool = rest.split(' ').next().unwrap().to_owned();
                if !self.usable.remove(&(tool, marker_of(rest))) {
                    return Err(format!("not usable before: {line}"));
                }
            } else if let Some(rest) = line.strip_prefix("Opened ") {
                if !self.open.insert(marker_of(rest)) {
                    return Err(format!("opened twice: {line}"));
                }
            } else if let Some(rest) = line.strip_prefix("Closed ") {
                let m = marker_of(rest);
                if !self.open.remove(&m) {
                    return Err(format!("closed but not open: {line}"));
                }
                self.usable.retain(|(_, um)| *um != m);
            }
        }
        Ok(())
    }
}

/// Replaces the connection's hint state with a fresh one that reads a statement of what
/// the old one held (what the server would state), and returns what the agent was shown.
fn reconnect(h: &mut Host) -> Vec<AgentMessage> {
    let old = h.core.servers[0].hints.take().expect("hints");
    let mut tools = Vec::new();
    for (t, i) in old.visible_tools() {
        tools.push(vis(t, i, true));
    }
    for t in ["play", "resign", "seek", "roam"] {
        for i in [None, Some("g1"), Some("g2")] {
            if let Some(o) = old.definition_override(t, i) {
                tools.push(ToolHint {
                    name: t.into(),
                    instance: i.map(Into::into),
                    definition: Some(mcpl_protocol::hints::ToolDefinition {
                        description: o.description.clone(),
                        input_schema: o.input_schema.clone(),
                        ..Default::default()
                    }),
                    ..Default::default()
                });
            }
        }
    }
    let open: Vec<_> = old
        .open_instances()
        .map(|o| mcpl_protocol::toolsets::OpenRecord {
            toolset: o.toolset.clone(),
            instance: o.instance.clone(),
            title: o.title.clone(),
            options: None,
        })
        .collect();
    let mut fresh =
        crate::state::hint_state::HintState::new(crate::state::hint_state::HintConfig::ordered());
    fresh.handle_tools_list(&arcade_tools(), 0);
    h.core.servers[0].hints = Some(fresh);
    let view = h.core.servers[0].view();
    assert!(h.core.presenter.disconnected(&view).is_empty());
    h.statement(0, &changes(1, tools, vec![]), &open, &[])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_change_is_told_once_and_everything_is_told(
        steps in prop::collection::vec((prop::collection::vec(op(), 1..4), how()), 1..30)
    ) {
        let mut h = Host::with_arcade("arcade", true);
        let list = h.core.conversation.tool_list().to_json();
        let mut rev = 2;
        for (i, (ops, how)) in steps.iter().enumerate() {
            let mut c = changes(rev, vec![], vec![]);
            for o in ops {
                apply(&mut c, o);
            }
            rev += 1;
            match how {
                How::Standalone => {
                    h.standalone(0, c);
                }
                How::Push(accepted) => {
                    let p = push_params(&format!("ev-{i}"), "something happened", Some(c));
                    h.push(0, &p, *accepted);
                }
                How::Reconnect => {
                    let shown = reconnect(&mut h);
                    prop_assert!(shown.is_empty(), "a restatement told: {:?}", shown);
                    rev = 2;
                    continue;
                }
                How::Result => {
                    h.core.presenter.sending("arcade");
                    let carrier = Carrier::Result { of: ResultOf::CallTool, request: Id::Number(i as i64) };
                    h.read(0, carrier, c.clone());
                    let plan = SendPlan {
                        server: "arcade".into(),
                        request: Outgoing::Call(CallToolParams { name: "roam".into(), arguments: None, meta: None }),
                        after: After::Call { tool: "roam".into(), marker: None, via_act: true },
                    };
                    let result = CallToolResult { meta: Some(Meta::with_hints(c)), ..CallToolResult::text("ok") };
                    let view = h.core.servers[0].view();
                    let f = h.core.presenter.finish(&view, &plan, Outcome::Call(Ok(result)));
                    h.core.conversation.push(AgentMessage {
                        kind: crate::state::conversation::MessageKind::ToolResult,
                        server: None,
                        text: f.result.joined_text(),
                        announces: f.announces,
                        restates: false,
                    });
                    for n in f.notices {
                        h.core.conversation.push(n);
                    }
                }
            }
            prop_assert_eq!(&h.core.conversation.tool_list().to_json(), &list);
        }
        let mut reader = Reader::default();
        for m in h.core.conversation.messages() {
            reader.read(&m.message.text).map_err(TestCaseError::fail)?;
        }
        let actual = h.core.servers[0].view().actual();
        let usable: BTreeSet<(String, String)> = actual
            .usable
            .iter()
            .map(|((t, _), (m, _))| (t.clone(), m.to_string()))
            .collect();
        prop_assert_eq!(reader.usable, usable);
        let open: BTreeSet<String> = actual.open.values().map(|s| s.marker.to_string()).collect();
        prop_assert_eq!(reader.open, open);
    }
}

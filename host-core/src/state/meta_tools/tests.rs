//! Meta-tool tests; vectors named where they apply.

use super::*;
use crate::state::args_check::Problem;
use crate::state::fixtures::*;
use crate::state::tool_policy::ToolPolicy;
use crate::state::view::Marker;
use mcpl_protocol::names::NameError;
use mcpl_protocol::{CallToolParams, Meta, ToolsetState};
use serde_json::json;

fn refused(p: Plan) -> MetaError {
    match p {
        Plan::Refused(e) => e,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn sent(p: Plan) -> SendPlan {
    match p {
        Plan::Send(s) => s,
        other => panic!("expected a send, got {other:?}"),
    }
}

fn with_two_games() -> Host {
    let mut h = Host::with_arcade("arcade", true);
    open_game(&mut h, "g1", 2);
    open_game(&mut h, "g2", 3);
    h
}

#[test]
fn act_sends_the_exact_call_with_the_instance_in_meta() {
    let mut h = Host::with_arcade("arcade", true);
    open_game(&mut h, "g1", 2);
    let s = sent(h.plan(ACT, json!({"tool": "play", "args": {"move": "D4"}})));
    assert_eq!(s.server, "arcade");
    assert_eq!(
        s.request,
        Outgoing::Call(CallToolParams {
            name: "play".into(),
            arguments: Some(json!({"move": "D4"}).as_object().unwrap().clone()),
            meta: Some(Meta::with_instance("g1")),
        })
    );
    assert_eq!(
        serde_json::to_value(match &s.request {
            Outgoing::Call(p) => p,
            _ => unreachable!(),
        })
        .unwrap(),
        json!({"name": "play", "arguments": {"move": "D4"}, "_meta": {"mcpl/instance": "g1"}})
    );
    assert_eq!(
        s.after,
        After::Call {
            tool: "play".into(),
            marker: Some(Marker::new("arcade", "game", Some("g1"))),
            via_act: true
        }
    );
}

#[test]
fn act_and_a_direct_call_share_one_dispatch_path() {
    let mut h = Host::with_arcade("arcade", true);
    let direct = sent(h.plan("arcade--clock", json!({"tz": "UTC"})));
    let via_act = sent(h.plan(ACT, json!({"tool": "roam", "args": {"tz": "UTC"}})));
    let (Outgoing::Call(d), Outgoing::Call(a)) = (&direct.request, &via_act.request) else {
        panic!("both are tools/call");
    };
    assert_eq!(d.arguments, a.arguments);
    assert_eq!(
        (d.meta.as_ref(), a.meta.as_ref()),
        (None, None),
        "no instance, no _meta"
    );
    assert_eq!(d.name, "clock");
    assert_eq!(a.name, "roam");
}

#[test]
fn vector_06_act_with_several_instances_open_and_none_named_names_them() {
    let mut h = with_two_games();
    match refused(h.plan(ACT, json!({"tool": "play", "args": {"move": "D4"}}))) {
        MetaError::InstanceRequired { marker, open } => {
            assert_eq!(marker, Marker::new("arcade", "game", None));
            assert_eq!(open, ["g1", "g2"]);
        }
        e => panic!("{e:?}"),
    }
    let s = sent(h.plan(
        ACT,
        json!({"tool": "play", "instance": "g2", "args": {"move": "D4"}}),
    ));
    let Outgoing::Call(p) = s.request else {
        panic!()
    };
    assert_eq!(p.meta, Some(Meta::with_instance("g2")));
    assert!(matches!(
        refused(h.plan(ACT, json!({"tool": "play", "instance": "g9"}))),
        MetaError::UnknownInstance { open, .. } if open == ["g1", "g2"]
    ));
}

#[test]
fn issue42_before_the_statement_is_read_an_instance_is_not_said_to_be_closed() {
    // A new connection whose connect-time statement is not read yet (the host's wait for
    // it over): g1 may well be open there, and the host does not know.
    let mut h = with_two_games();
    let manifest = crate::state::fixtures::arcade_manifest(true, true);
    h.core.connected("arcade", 2, true, Some(&manifest));
    match refused(h.plan(ACT, json!({"tool": "play", "instance": "g1"}))) {
        MetaError::NotSettled { server } => assert_eq!(server, "arcade"),
        e => panic!("expected NotSettled, got {e:?}"),
    }
    assert!(matches!(
        refused(h.plan(CLOSE, json!({"toolset": "game"}))),
        MetaError::NotSettled { .. }
    ));
}

#[test]
fn vector_11_act_on_a_tool_not_visible_there_says_where_it_is() {
    let mut h = with_two_games();
    h.standalone(0, changes(4, vec![vis("play", Some("g1"), false)], vec![]));
    match refused(h.plan(
        ACT,
        json!({"tool": "play", "instance": "g1", "args": {"move": "D4"}}),
    )) {
        MetaError::NotVisible {
            tool,
            marker,
            usable_in,
        } => {
            assert_eq!(tool, "play");
            assert_eq!(marker, Marker::new("arcade", "game", Some("g1")));
            assert_eq!(usable_in, ["[arcade/game:g2]"]);
        }
        e => panic!("{e:?}"),
    }
    // A declared toolset that is not open.
    let mut h = Host::with_arcade("arcade", true);
    assert!(matches!(
        refused(h.plan(ACT, json!({"tool": "play"}))),
        MetaError::NotOpen { .. }
    ));
}

#[test]
fn act_checks_args_against_the_current_definition_before_sending() {
    let mut h = Host::with_arcade("arcade", true);
    open_game(&mut h, "g1", 2);
    match refused(h.plan(ACT, json!({"tool": "play", "args": {"move": "D4", "x": 1}}))) {
        MetaError::InvalidArgs { tool, problems } => {
            assert_eq!(tool, "play");
            assert_eq!(problems[0].path, "");
        }
        e => panic!("{e:?}"),
    }
    // A value outside the enum, and nothing else wrong, is the server's to explain
    // (`args_check.rs`, issue #36 item 14).
    sent(h.plan(ACT, json!({"tool": "play", "args": {"move": "E5"}})));
    // The instance's own definition now requires a note (§5.1): checked against it.
    let schema = json!({"type": "object", "properties": {"move": {"enum": ["E5"]},
        "note": {"type": "string"}}, "required": ["move", "note"]});
    h.standalone(
        0,
        changes(3, vec![def("play", Some("g1"), "Play", schema)], vec![]),
    );
    sent(h.plan(
        ACT,
        json!({"tool": "play", "args": {"move": "E5", "note": "gg"}}),
    ));
    assert!(matches!(
        refused(h.plan(ACT, json!({"tool": "play", "args": {"move": "E5"}}))),
        MetaError::InvalidArgs { .. }
    ));
    // A schema the host does not check (deeper than 24 levels) is left to the server.
    let mut deep = json!({"type": "integer"});
    for _ in 0..30 {
        deep = json!({"type": "object", "properties": {"a": deep}});
    }
    h.standalone(
        0,
        changes(4, vec![def("play", Some("g1"), "Play", deep)], vec![]),
    );
    sent(h.plan(ACT, json!({"tool": "play", "args": {"a": "anything"}})));
}

#[test]
fn a_dynamic_tool_called_by_its_namespaced_name_points_to_act() {
    let mut h = Host::with_arcade("arcade", true);
    assert_eq!(
        refused(h.plan("arcade--roam", json!({}))),
        MetaError::DynamicByName {
            server: "arcade".into(),
            tool: "roam".into()
        }
    );
    let e = refused(h.plan("arcade--roam", json!({})));
    assert!(e.to_result().is_error);
    assert!(e.to_string().contains("toolsets--act"));
    assert!(matches!(
        refused(h.plan("arcade--nope", json!({}))),
        MetaError::UnknownTool { .. }
    ));
    assert!(matches!(
        refused(h.plan(ACT, json!({"tool": "clock"}))),
        MetaError::StaticThroughAct { name } if name == "arcade--clock"
    ));
    assert!(matches!(
        refused(h.plan("arcade--clock", json!([1]))),
        MetaError::InvalidArgs { problems, .. } if problems == [Problem { path: String::new(), message: "the arguments must be an object".into() }]
    ));
}

#[test]
fn an_ambiguous_name_fails_naming_the_servers_and_server_resolves_it() {
    let mut h = Host::with_arcade("arcade", true);
    h.add_server("casino", true, ToolPolicy::allow_all());
    match refused(h.plan(OPEN, json!({"toolset": "game"}))) {
        MetaError::Ambiguous { name, candidates } => {
            assert_eq!(name, "game");
            assert_eq!(candidates, ["arcade", "casino"]);
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(
        sent(h.plan(OPEN, json!({"toolset": "game", "server": "casino"}))).server,
        "casino"
    );
    // A tool usable on one server only resolves to it.
    assert!(matches!(
        refused(h.plan(ACT, json!({"tool": "play"}))),
        MetaError::Ambiguous { .. }
    ));
    let i = h.index("casino");
    h.standalone(
        i,
        changes(
            2,
            vec![vis("play", Some("c1"), true)],
            vec![set("game", Some("c1"), ToolsetState::Open)],
        ),
    );
    let s = sent(h.plan(ACT, json!({"tool": "play", "args": {"move": "D4"}})));
    assert_eq!(s.server, "casino");
    assert_eq!(
        sent(h.plan(ACT, json!({"tool": "arcade--roam"}))).server,
        "arcade"
    );
    assert!(matches!(
        refused(h.plan(ACT, json!({"tool": "play", "server": "nowhere"}))),
        MetaError::UnknownServer { known, .. } if known == ["arcade", "casino"]
    ));
}

#[test]
fn open_refuses_an_instance_for_a_toolset_without_instances() {
    let mut h = Host::with_arcade("arcade", true);
    assert_eq!(
        refused(h.plan(OPEN, json!({"toolset": "lobby", "instance": "x"}))),
        MetaError::NoInstances {
            marker: Marker::new("arcade", "lobby", None)
        }
    );
    assert!(matches!(
        refused(h.plan(OPEN, json!({"toolset": "notes", "instance": "x"}))),
        MetaError::NoInstances { .. }
    ));
    let s = sent(h.plan(OPEN, json!({"toolset": "lobby"})));
    assert_eq!(
        s.request,
        Outgoing::Open(mcpl_protocol::toolsets::ToolsetsOpenParams {
            toolset: "lobby".into(),
            instance: None,
            options: None,
            meta: None
        })
    );
}

#[test]
fn open_proposes_a_fresh_valid_instance_name() {
    let mut h = Host::with_arcade("arcade", true);
    let name = |p: Plan| match sent(p).request {
        Outgoing::Open(o) => o.instance.unwrap(),
        _ => unreachable!(),
    };
    assert_eq!(name(h.plan(OPEN, json!({"toolset": "game"}))), "game-1");
    assert_eq!(name(h.plan(OPEN, json!({"toolset": "game"}))), "game-2");
    // An open instance's name is skipped.
    open_game(&mut h, "game-3", 2);
    assert_eq!(name(h.plan(OPEN, json!({"toolset": "game"}))), "game-4");
    // A tag, and a long toolset name cut to fit the grammar.
    let views = [h.core.servers[0].view()];
    let mut m = MetaTools::new(MetaConfig {
        instance_tag: Some("h7".into()),
        ..Default::default()
    });
    let long = "t".repeat(64);
    let proposed = m.propose_instance(&views[0], &long);
    assert_eq!(proposed, format!("{}-h71", "t".repeat(60)));
    assert!(mcpl_protocol::names::is_valid_name(&proposed));
    // A tag outside the grammar is cleaned; a toolset name outside it gets a neutral base.
    let mut m = MetaTools::new(MetaConfig {
        instance_tag: Some("h:7/é".into()),
        ..Default::default()
    });
    assert_eq!(m.propose_instance(&views[0], "game"), "game-h71");
    assert_eq!(m.propose_instance(&views[0], "-bad.name"), "i-h72");
}

/// §4.2, §4.3: a name whose end the server still reports (an ended record in the
/// statement, or an instance that closed on this connection) is not proposed again, so
/// the agent never hears of an end and an open under one marker together.
#[test]
fn boundary_09_a_name_whose_end_is_still_reported_is_not_proposed() {
    let mut h = Host::with_arcade("arcade", true);
    let name = |p: Plan| match sent(p).request {
        Outgoing::Open(o) => o.instance.unwrap(),
        _ => unreachable!(),
    };
    let ended = mcpl_protocol::toolsets::EndedRecord {
        id: "e-1".into(),
        toolset: "game".into(),
        instance: Some("game-1".into()),
        reason: "White won".into(),
        at: "2026-12-01T12:00:00Z".into(),
    };
    h.statement(
        0,
        &changes(2, vec![vis("seek", None, true)], vec![]),
        &[open_rec("lobby", None)],
        &[ended],
    );
    assert_eq!(name(h.plan(OPEN, json!({"toolset": "game"}))), "game-2");
    // One that closes on this connection is retired too.
    open_game(&mut h, "game-3", 3);
    h.standalone(
        0,
        changes(
            4,
            vec![],
            vec![set("game", Some("game-3"), ToolsetState::Closed)],
        ),
    );
    assert_eq!(name(h.plan(OPEN, json!({"toolset": "game"}))), "game-4");
}

proptest::proptest! {
    /// Whatever the model sends as arguments, to whichever tool name, planning never
    /// panics, and a refusal is an error result.
    #[test]
    fn planning_never_panics_on_arbitrary_arguments(
        tool in proptest::sample::select(vec![OPEN, ACT, LOOK, CLOSE, "arcade--clock", "arcade--roam", "x--y"]),
        toolset in proptest::sample::select(vec!["game", "lobby", "notes", "nope", ""]),
        instance in proptest::option::of("[a-z0-9:.-]{0,5}"),
        name in proptest::sample::select(vec!["play", "seek", "roam", "clock", "scratch", "arcade--play", ""]),
        server in proptest::option::of(proptest::sample::select(vec!["arcade", "other"])),
        extra in proptest::option::of(proptest::prelude::any::<i64>()),
    ) {
        let mut h = Host::with_arcade("arcade", true);
        open_game(&mut h, "g1", 2);
        let mut args = serde_json::Map::new();
        args.insert("toolset".into(), json!(toolset));
        args.insert("tool".into(), json!(name));
        if let Some(i) = instance { args.insert("instance".into(), json!(i)); }
        if let Some(s) = server { args.insert("server".into(), json!(s)); }
        if let Some(x) = extra { args.insert("args".into(), json!({"move": x})); }
        for a in [serde_json::Value::Object(args.clone()), json!(null), json!([1, 2]), json!(extra)] {
            if let Plan::Refused(e) = h.plan(tool, a) {
                proptest::prop_assert!(e.to_result().is_error);
            }
        }
    }
}

#[test]
fn open_checks_the_instance_name_and_the_options_before_sending() {
    let mut h = Host::with_arcade("arcade", true);
    assert_eq!(
        refused(h.plan(OPEN, json!({"toolset": "game", "instance": "a b"}))),
        MetaError::BadInstanceName {
            name: "a b".into(),
            error: NameError::BadChar(' ')
        }
    );
    match refused(h.plan(OPEN, json!({"toolset": "game", "options": {"size": "big"}}))) {
        MetaError::InvalidOptions { problems, .. } => assert_eq!(problems[0].path, "/size"),
        e => panic!("{e:?}"),
    }
    // A value outside the enum alone is the server's to explain (`args_check.rs`).
    sent(h.plan(
        OPEN,
        json!({"toolset": "game", "instance": "g0", "options": {"size": 10}}),
    ));
    let s = sent(h.plan(
        OPEN,
        json!({"toolset": "game", "instance": "g1", "options": {"size": 9}}),
    ));
    assert_eq!(
        s.after,
        After::Open {
            marker: Marker::new("arcade", "game", Some("g1"))
        }
    );
    assert!(matches!(
        refused(h.plan(OPEN, json!({"toolset": "chess"}))),
        MetaError::UnknownToolset { known, .. } if known == ["[arcade/game]", "[arcade/lobby]", "[arcade/notes]"]
    ));
}

/// §4.1 [project]: a name another server may have given an instance (`g.1`, `a:b`) is
/// within the peer grammar, so it goes out, and the host can adopt such an instance.
#[test]
fn boundary_08_an_instance_named_within_the_peer_grammar_goes_out() {
    let mut h = Host::with_arcade("arcade", true);
    for name in ["g.1", "a:b"] {
        let s = sent(h.plan(OPEN, json!({"toolset": "game", "instance": name})));
        assert_eq!(
            s.after,
            After::Open {
                marker: Marker::new("arcade", "game", Some(name))
            }
        );
    }
}

#[test]
fn close_fills_in_the_only_instance_and_requires_one_among_several() {
    let mut h = Host::with_arcade("arcade", true);
    assert!(matches!(
        refused(h.plan(CLOSE, json!({"toolset": "game"}))),
        MetaError::NotOpen { .. }
    ));
    open_game(&mut h, "g1", 2);
    let s = sent(h.plan(CLOSE, json!({"toolset": "game"})));
    assert_eq!(
        s.request,
        Outgoing::Close(mcpl_protocol::toolsets::ToolsetsCloseParams {
            toolset: "game".into(),
            instance: Some("g1".into()),
            meta: None
        })
    );
    open_game(&mut h, "g2", 3);
    assert!(matches!(
        refused(h.plan(CLOSE, json!({"toolset": "game"}))),
        MetaError::InstanceRequired { open, .. } if open == ["g1", "g2"]
    ));
    sent(h.plan(CLOSE, json!({"toolset": "game", "instance": "g2"})));
}

#[test]
fn close_refuses_an_instance_for_a_toolset_without_instances_and_sends_nothing() {
    let mut h = Host::with_arcade("arcade", true);
    assert_eq!(
        refused(h.plan(CLOSE, json!({"toolset": "lobby", "instance": "x"}))),
        MetaError::NoInstances {
            marker: Marker::new("arcade", "lobby", None)
        }
    );
    let s = sent(h.plan(CLOSE, json!({"toolset": "lobby"})));
    assert_eq!(
        s.after,
        After::Close {
            marker: Marker::new("arcade", "lobby", None)
        }
    );
}

#[test]
fn bad_meta_tool_arguments_are_refused_with_the_tool_named() {
    let mut h = Host::with_arcade("arcade", true);
    for (tool, args) in [
        (OPEN, json!({})),
        (OPEN, json!({"toolset": 3})),
        (ACT, json!({"tool": "play", "args": "D4"})),
        (CLOSE, json!({"toolset": "game", "extra": 1})),
        (LOOK, json!("everything")),
    ] {
        match refused(h.plan(tool, args.clone())) {
            MetaError::BadArguments { tool: t, .. } => assert_eq!(t, tool),
            e => panic!("{tool} {args}: {e:?}"),
        }
    }
}

#[test]
fn a_disconnected_server_is_said_to_be_so() {
    let mut h = Host::with_arcade("arcade", true);
    h.core.servers[0].hints = None;
    assert!(matches!(
        refused(h.plan(OPEN, json!({"toolset": "game"}))),
        MetaError::NotConnected { .. }
    ));
    assert!(
        h.look(json!({}))
            .contains("[arcade]: not connected just now")
    );
}

/// The arcade, and `remote`, whose connection attempts fail with `cause`.
fn with_a_server_down(cause: &str) -> Host {
    use crate::state::host_core::ServerSlot;
    let mut h = Host::with_arcade("arcade", true);
    h.core.add_server(ServerSlot::new(
        "remote",
        true,
        ToolPolicy::allow_all(),
        crate::state::hint_state::HintConfig::ordered(),
    ));
    h.core.connect_failed("remote", cause);
    h
}

#[test]
fn a_name_not_found_while_a_server_is_down_says_the_server_is_not_connected_and_why() {
    let why = "the server refused the token (HTTP 401)";
    let mut h = with_a_server_down(why);
    // Not "no toolset named chess is offered": the server that may offer it is down.
    let e = refused(h.plan(OPEN, json!({"toolset": "chess"})));
    assert_eq!(
        e,
        MetaError::NotConnected {
            server: "remote".into(),
            cause: Some(why.into())
        }
    );
    assert!(e.to_string().contains(why), "{e}");
    assert!(matches!(
        refused(h.plan(ACT, json!({"tool": "castle"}))),
        MetaError::NotConnected { server, .. } if server == "remote"
    ));
    // A server that is up is still searched, and names what it has.
    assert!(matches!(
        refused(h.plan(OPEN, json!({"server": "arcade", "toolset": "chess"}))),
        MetaError::UnknownToolset { .. }
    ));
    assert!(matches!(
        sent(h.plan(OPEN, json!({"toolset": "game"}))).after,
        After::Open { .. }
    ));
    let look = h.look(json!({}));
    assert!(
        look.contains(&format!("[remote]: not connected just now ({why})")),
        "{look}"
    );
}

#[test]
fn errors_name_the_meta_tools_only_when_the_agent_has_them() {
    let e = refused(Host::with_arcade("arcade", true).plan("arcade--nope", json!({})));
    assert_eq!(
        e,
        MetaError::UnknownTool {
            tool: "arcade--nope".into(),
            meta_tools: true
        }
    );
    assert!(e.to_string().contains("toolsets--look"));

    // Only a plain server: the agent's list has no meta-tools.
    use crate::state::host_core::ServerSlot;
    let mut h = Host::new(40, Default::default());
    h.core.add_server(ServerSlot::new(
        "plain",
        true,
        ToolPolicy::allow_all(),
        crate::state::hint_state::HintConfig::ordered(),
    ));
    h.core.connected("plain", 1, true, None);
    h.core.handshake_done("plain", 1, false, &[], h.now);
    let tools: std::sync::Arc<[mcpl_protocol::Tool]> = vec![mcpl_protocol::Tool::new(
        "echo",
        "echoes",
        json!({"type": "object"}),
    )]
    .into();
    h.core.listed("plain", 1, &tools, None, false);
    h.boundary();
    let e = refused(h.plan("plain--nope", json!({})));
    assert_eq!(
        e,
        MetaError::UnknownTool {
            tool: "plain--nope".into(),
            meta_tools: false
        }
    );
    assert!(!e.to_string().contains("toolsets--"), "{e}");
    assert!(matches!(
        sent(h.plan("plain--echo", json!({}))).after,
        After::Call { .. }
    ));
}

#[test]
fn look_shows_open_usable_openable_and_filters() {
    let mut h = Host::with_arcade("arcade", true);
    open_game(&mut h, "g1", 2);
    let look = h.look(json!({}));
    for want in [
        "[arcade]",
        "Open:",
        "- [arcade/game:g1] \"Go 9x9 g1\" (from arcade)",
        "  - play in [arcade/game:g1] — \"play does its thing\" (from arcade). Arguments: {move: \"D4\" | \"Q16\" | \"pass\"}. Call it with toolsets--act {\"instance\":\"g1\",\"server\":\"arcade\",\"tool\":\"play\"}.",
        "- [arcade/lobby]",
        "  - seek in [arcade/lobby]",
        "Usable outside toolsets:",
        "- roam in [arcade]",
        "Can be opened:",
        "- [arcade/game] \"Go\" — \"A game of Go\" (from arcade); has instances (each open is a new one unless you name an open one); options: {size?: 9 | 13 | 19}.",
        "- [arcade/notes] (a group the host opens and closes itself).",
    ] {
        assert!(look.contains(want), "missing {want:?} in\n{look}");
    }
    let only = h.look(json!({"toolset": "game", "instance": "g1"}));
    assert!(
        only.contains("play in [arcade/game:g1]") && !only.contains("lobby"),
        "{only}"
    );
    let tool = h.look(json!({"tool": "play"}));
    assert!(
        tool.contains("play in [arcade/game:g1]") && !tool.contains("seek"),
        "{tool}"
    );
    let not_now = h.look(json!({"tool": "scratch"}));
    assert!(
        not_now.contains("- not usable right now: scratch in [arcade/notes]"),
        "{not_now}"
    );
    assert!(matches!(
        refused(h.plan(LOOK, json!({"tool": "nothing"}))),
        MetaError::UnknownTool { .. }
    ));
    assert!(matches!(
        refused(h.plan(LOOK, json!({"toolset": "nothing"}))),
        MetaError::UnknownToolset { .. }
    ));
    // A look's answer announces what it shows.
    let Plan::Answer(a) = h.plan(LOOK, json!({})) else {
        panic!()
    };
    assert!(
        a.announces
            .contains(&Marker::new("arcade", "game", Some("g1")))
    );
}

#[test]
fn the_four_definitions_are_constant_and_well_formed() {
    let d = definitions();
    assert_eq!(d, definitions());
    let names: Vec<&str> = d.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, [OPEN, ACT, LOOK, CLOSE]);
    for t in &d {
        assert!(is_meta_tool(&t.name));
        jsonschema::validator_for(&t.input_schema).expect("each input schema compiles");
    }
    let act = &d[1].input_schema;
    assert_eq!(act["required"], json!(["tool"]));
    assert!(act["properties"]["args"].is_object());
}

/// Issue #37 item 5: a look past its bound lists open toolsets whole or not at all, counts
/// what it left out, says how to narrow, and announces only what it listed.
#[test]
fn a_look_past_its_bound_lists_whole_toolsets_and_counts_the_rest() {
    let mut h = Host::with_arcade("arcade", true);
    for i in 0..40 {
        open_game(&mut h, &format!("g{i:02}"), 2 + i);
    }
    let views: Vec<ServerView<'_>> = h.core.servers.iter().map(|s| s.view()).collect();
    let world = World {
        servers: &views,
        presenter: &h.core.presenter,
    };
    let mut m = MetaTools::new(MetaConfig {
        max_look_bytes: 4_000,
        ..Default::default()
    });
    let Plan::Answer(a) = m.plan(LOOK, &json!({}), &world) else {
        panic!("a look is answered");
    };
    let text = a.result.joined_text();
    assert!(text.len() <= 4_000, "{}", text.len());
    let listed: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("- [arcade/game:g"))
        .collect();
    assert!(!listed.is_empty() && listed.len() < 40, "{text}");
    // Each listed game has its tools; the announced are exactly the listed (and the lobby).
    for i in 0..listed.len() {
        let g = format!("g{i:02}");
        assert!(
            text.contains(&format!("play in [arcade/game:{g}]")),
            "{text}"
        );
        assert!(
            text.contains(&format!("resign in [arcade/game:{g}]")),
            "{text}"
        );
        assert!(
            a.announces
                .contains(&Marker::new("arcade", "game", Some(&g)))
        );
    }
    let games = a
        .announces
        .iter()
        .filter(|m| m.toolset.as_deref() == Some("game"))
        .count();
    assert_eq!(games, listed.len());
    // The games not listed, and the lobby after them.
    let left = 40 - listed.len() + 1;
    assert!(
        text.contains(&format!("…and {left} open toolsets or instances")),
        "{text}"
    );
    let next = format!(
        r#"(the first not listed: toolsets--look {{"instance":"g{:02}","server":"arcade","toolset":"game"}})"#,
        listed.len()
    );
    assert!(text.contains(&next), "{text}");
}

//! Unit tests of `PrincipalState`, one rule each; the vectors are named where they apply.

use super::call::Target;
use super::*;
use crate::catalog::ToolDecl;
use crate::catalog::tests::{arcade, tool};
use crate::sequencer::Sequencer;
use mcpl_protocol::hints::{ToolsetChange, ToolsetState};
use mcpl_protocol::jsonrpc::ErrorCode;
use mcpl_protocol::names::{NameError, check_name};
use mcpl_protocol::toolsets::{ToolsetDecl, ToolsetDefault};
use serde_json::json;
use std::time::UNIX_EPOCH;

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_796_040_000 + secs)
}

fn state() -> PrincipalState {
    PrincipalState::new(
        Arc::new(arcade()),
        PrincipalConfig::default(),
        EndedIds::new(0),
        at(0),
    )
}

fn opened(outcome: Result<OpenOutcome, OpenError>) -> Opened {
    match outcome {
        Ok(OpenOutcome::Opened(o)) => o,
        other => panic!("expected a fresh open, got {other:?}"),
    }
}

fn g(name: &str) -> InstanceKey {
    InstanceKey::instance("go", name)
}

fn visible_entries(draft: &HintDraft) -> Vec<(String, Option<String>, bool)> {
    draft
        .tools
        .iter()
        .filter_map(|t| t.visible.map(|v| (t.name.clone(), t.instance.clone(), v)))
        .collect()
}

/// The observable state: the statement and the coarse visibility.
fn snapshot(s: &PrincipalState) -> (Statement, BTreeSet<String>) {
    (s.statement(at(0)), s.coarse_visibility())
}

#[test]
fn default_open_toolsets_are_open_from_the_start() {
    // §4.1, vector 25
    let s = state();
    let st = s.statement(at(0));
    assert_eq!(
        st.open,
        [OpenRecord {
            toolset: "lobby".into(),
            instance: None,
            title: Some("Lobby".into()),
            options: None
        }]
    );
    assert!(st.ended.is_empty());
    let names: Vec<_> = st
        .hints
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.instance.as_deref(), t.visible))
        .collect();
    // lobby_list is visible in the lobby; challenge starts hidden; doodle (an undeclared
    // group's tool) is a visible dynamic tool; news is dynamic but starts hidden.
    assert_eq!(
        names,
        [
            ("doodle", None, Some(true)),
            ("lobby_list", None, Some(true))
        ]
    );
}

#[test]
fn an_open_without_a_name_gets_a_fresh_one() {
    // §4.2, vector 5
    let mut s = state();
    let o = opened(s.open("go", None, Some(json!({"size": 9})), at(1)));
    assert_eq!(o.key, g("go-1"));
    assert_eq!(
        o.draft.toolsets,
        [ToolsetChange {
            toolset: "go".into(),
            instance: Some("go-1".into()),
            state: ToolsetState::Open,
            title: Some("Go".into()),
            reason: None,
            ended: None
        }]
    );
    // play starts hidden (declared visible: false); resign is visible in the new instance.
    assert_eq!(
        visible_entries(&o.draft),
        [("resign".into(), Some("go-1".into()), true)]
    );
    let second = opened(s.open("go", None, None, at(2)));
    assert_eq!(
        second.key,
        g("go-2"),
        "an open without a name is not idempotent"
    );
    assert_eq!(
        s.instance(&o.key).unwrap().options(),
        Some(&json!({"size": 9}))
    );
}

#[test]
fn picked_names_avoid_open_ended_and_earlier_ones() {
    let mut s = state();
    opened(s.open("go", Some("go-1"), None, at(1)));
    let a = opened(s.open("go", None, None, at(1))).key;
    assert_eq!(a, g("go-2"));
    s.end(&a, "done", at(2)).unwrap();
    assert_eq!(opened(s.open("go", None, None, at(3))).key, g("go-3"));
    // A long toolset name still yields a name within the grammar.
    let long = "t".repeat(64);
    let c = Catalog::new(
        vec![ToolDecl::new(tool("x")).in_toolset(long.clone())],
        [(
            long.clone(),
            ToolsetDecl {
                instances: true,
                ..Default::default()
            },
        )]
        .into(),
        None,
    )
    .unwrap();
    let mut s = PrincipalState::new(
        Arc::new(c),
        PrincipalConfig::default(),
        EndedIds::new(0),
        at(0),
    );
    let name = opened(s.open(&long, None, None, at(1)))
        .key
        .instance
        .unwrap();
    assert_eq!(check_name(&name), Ok(()));
    assert!(name.ends_with("-1"));
}

#[test]
fn a_proposed_name_is_used_as_given_or_refused() {
    // §4.2, vector 18
    let mut s = state();
    assert_eq!(opened(s.open("go", Some("g1"), None, at(1))).key, g("g1"));
    let before = snapshot(&s);
    assert_eq!(
        s.open("go", Some("g 1"), None, at(1)),
        Err(OpenError::BadInstanceName {
            instance: "g 1".into(),
            error: NameError::BadChar(' ')
        })
    );
    assert!(matches!(
        s.open("go", Some(""), None, at(1)),
        Err(OpenError::BadInstanceName { .. })
    ));
    assert_eq!(snapshot(&s), before, "a refused open changes nothing");
}

#[test]
fn opening_what_is_open_adopts_it() {
    // §4.2, vector 17
    let mut s = state();
    opened(s.open("go", Some("g1"), Some(json!({"size": 9})), at(1)));
    let before = snapshot(&s);
    let same = s
        .open("go", Some("g1"), Some(json!({"size": 9})), at(2))
        .unwrap();
    assert_eq!(
        same,
        OpenOutcome::Adopted {
            key: g("g1"),
            options_differ: false
        }
    );
    // Absent options are `{}`: they differ from `{"size": 9}` and that is said (§4.2).
    let none = s.open("go", Some("g1"), None, at(2)).unwrap();
    assert_eq!(
        none,
        OpenOutcome::Adopted {
            key: g("g1"),
            options_differ: true
        }
    );
    let other = s
        .open("go", Some("g1"), Some(json!({"size": 19})), at(2))
        .unwrap();
    assert_eq!(
        other,
        OpenOutcome::Adopted {
            key: g("g1"),
            options_differ: true
        }
    );
    assert_eq!(snapshot(&s), before, "adoption changes nothing");
    assert_eq!(s.open_names("go"), ["g1"], "one instance");
    // A toolset without instances is adopted by its name alone.
    assert_eq!(
        s.open("lobby", None, Some(json!({})), at(2)).unwrap(),
        OpenOutcome::Adopted {
            key: InstanceKey::toolset("lobby"),
            options_differ: false
        }
    );
    assert_eq!(
        s.open("lobby", None, Some(json!({"x": 1})), at(2)).unwrap(),
        OpenOutcome::Adopted {
            key: InstanceKey::toolset("lobby"),
            options_differ: true
        }
    );
}

#[test]
fn bad_opens_are_refused_with_invalid_params() {
    let mut s = state();
    let before = snapshot(&s);
    let unknown = s.open("chess", None, None, at(1)).unwrap_err();
    assert_eq!(unknown, OpenError::UnknownToolset("chess".into()));
    // §4.2: a toolset without instances takes no instance.
    let named = s.open("solo", Some("s1"), None, at(1)).unwrap_err();
    assert_eq!(
        named,
        OpenError::InstanceNotAllowed {
            toolset: "solo".into(),
            instance: "s1".into()
        }
    );
    // §4.2: options fail the schema → -32602 naming the problem.
    let bad = s
        .open("go", Some("g1"), Some(json!({"size": 10})), at(1))
        .unwrap_err();
    let OpenError::InvalidOptions { toolset, problems } = &bad else {
        panic!("{bad:?}")
    };
    assert_eq!((toolset.as_str(), problems[0].at.as_str()), ("go", "/size"));
    let e = bad.to_error_object();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(e.data.unwrap()["problems"][0]["at"], "/size");
    assert!(matches!(
        s.open("ranked", None, None, at(1)),
        Err(OpenError::InvalidOptions { .. })
    ));
    for err in [unknown, named] {
        assert_eq!(err.to_error_object().code, ErrorCode::INVALID_PARAMS);
    }
    assert_eq!(snapshot(&s), before);
}

#[test]
fn opens_beyond_the_limit_are_refused() {
    let config = PrincipalConfig {
        max_open: 2,
        ..Default::default()
    };
    let mut s = PrincipalState::new(Arc::new(arcade()), config, EndedIds::new(0), at(0));
    opened(s.open("go", Some("g1"), None, at(1)));
    assert_eq!(
        s.open("go", Some("g2"), None, at(1)),
        Err(OpenError::TooManyOpen { limit: 2 })
    );
    // Adopting is not opening.
    assert!(matches!(
        s.open("go", Some("g1"), None, at(1)),
        Ok(OpenOutcome::Adopted { .. })
    ));
}

#[test]
fn close_checks_the_instance_rules() {
    // §4.2
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    opened(s.open("go", Some("g2"), None, at(1)));
    assert_eq!(
        s.close("go", None, "closed").unwrap_err(),
        CloseError::InstanceRequired {
            toolset: "go".into(),
            open: vec!["g1".into(), "g2".into()]
        }
    );
    assert_eq!(
        s.close("lobby", Some("x"), "closed").unwrap_err(),
        CloseError::InstanceNotAllowed {
            toolset: "lobby".into(),
            instance: "x".into()
        }
    );
    assert_eq!(
        s.close("chess", None, "closed").unwrap_err(),
        CloseError::UnknownToolset("chess".into())
    );
    assert_eq!(
        s.close("go", Some("g9"), "closed").unwrap_err(),
        CloseError::NotOpen {
            key: g("g9"),
            ended: None
        }
    );
    assert_eq!(
        s.close("solo", None, "x")
            .unwrap_err()
            .to_error_object()
            .code,
        ErrorCode::INVALID_PARAMS
    );
    let e = s.close("go", Some("g1"), "you resigned").unwrap();
    assert_eq!(s.open_names("go"), ["g2"]);
    assert_eq!(s.sole_instance("go"), Some("g2".into()));
    // §4.3 (revision 4): the principal asked for this end: no record, no `ended` id.
    assert_eq!(e.record, None);
    assert_eq!(e.draft.toolsets[0].ended, None);
    assert_eq!(s.statement(at(3)).ended, []);
    assert_eq!(
        s.close("go", Some("g1"), "x").unwrap_err(),
        CloseError::NotOpen {
            key: g("g1"),
            ended: None
        }
    );
    // An end it did not ask for is recorded, and closing it again names how it ended.
    let e = s.end(&g("g2"), "White won", at(4)).unwrap();
    assert_eq!(
        s.close("go", Some("g2"), "x").unwrap_err(),
        CloseError::NotOpen {
            key: g("g2"),
            ended: Some(Box::new(e.record.unwrap()))
        }
    );
}

#[test]
fn every_end_not_asked_for_gets_a_record_and_the_closed_entry_carries_its_id() {
    // §4.3
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    s.set_visible("play", Some("g1"), true).unwrap();
    let e = s.end(&g("g1"), "White wins by 3.5", at(10)).unwrap();
    let record = e.record.clone().unwrap();
    assert_eq!(record.toolset, "go");
    assert_eq!(record.instance.as_deref(), Some("g1"));
    assert_eq!(record.reason, "White wins by 3.5");
    assert_eq!(record.at, "2026-11-30T12:00:10Z");
    assert_eq!(
        e.draft.toolsets,
        [ToolsetChange {
            toolset: "go".into(),
            instance: Some("g1".into()),
            state: ToolsetState::Closed,
            title: None,
            reason: Some("White wins by 3.5".into()),
            ended: Some(record.id.clone()),
        }]
    );
    assert_eq!(
        visible_entries(&e.draft),
        [
            ("play".into(), Some("g1".into()), false),
            ("resign".into(), Some("g1".into()), false)
        ]
    );
    assert_eq!(s.statement(at(11)).ended, std::slice::from_ref(&record));
    assert_eq!(
        s.end(&g("g1"), "again", at(12)),
        Err(HintError::NotOpen(g("g1")))
    );
}

#[test]
fn ended_records_expire_and_ids_are_never_reused() {
    let config = PrincipalConfig {
        ended_ttl: Duration::from_secs(60),
        ..Default::default()
    };
    let mut s = PrincipalState::new(Arc::new(arcade()), config, EndedIds::new(0), at(0));
    let mut ids = BTreeSet::new();
    for round in 0..3u64 {
        opened(s.open("go", Some("g1"), None, at(round * 100)));
        let e = s.end(&g("g1"), "over", at(round * 100 + 1)).unwrap();
        let id = e.record.unwrap().id;
        assert!(ids.insert(id.clone()), "id {id} reused");
        assert_eq!(
            s.statement(at(round * 100 + 2)).ended.len(),
            1,
            "the earlier ones expired"
        );
        s.expire(at(round * 100 + 2));
    }
    assert_eq!(s.statement(at(1000)).ended, []);
    assert_eq!(s.ended_records().count(), 1, "kept until expire()");
    s.expire(at(1000));
    assert_eq!(s.ended_records().count(), 0);
}

#[test]
fn a_closed_lobby_closes_without_an_instance() {
    let mut s = state();
    let e = s.close("lobby", None, "closed by the agent").unwrap();
    assert_eq!(e.record, None, "asked for: no record");
    assert_eq!(e.draft.toolsets[0].instance, None);
    assert_eq!(
        visible_entries(&e.draft),
        [("lobby_list".into(), None, false)]
    );
    assert_eq!(s.statement(at(1)).open, []);
}

#[test]
fn visibility_changes_state_values_only_when_they_change() {
    // §5.1
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    let d = s.set_visible("play", Some("g1"), true).unwrap();
    assert_eq!(
        visible_entries(&d),
        [("play".into(), Some("g1".into()), true)]
    );
    assert!(
        s.set_visible("play", Some("g1"), true).unwrap().is_empty(),
        "no entry when nothing changed"
    );
    let d = s.set_visible("lobby_list", None, false).unwrap();
    assert_eq!(visible_entries(&d), [("lobby_list".into(), None, false)]);
    let d = s.set_visible("news", None, true).unwrap();
    assert_eq!(visible_entries(&d), [("news".into(), None, true)]);
    assert!(s.set_visible("news", None, true).unwrap().is_empty());
}

#[test]
fn visibility_changes_that_cannot_apply_are_local_errors() {
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    let before = snapshot(&s);
    assert_eq!(
        s.set_visible("play", None, true),
        Err(HintError::InstanceRequired {
            tool: "play".into()
        })
    );
    assert_eq!(
        s.set_visible("play", Some("g2"), true),
        Err(HintError::NotOpen(g("g2")))
    );
    assert_eq!(
        s.set_visible("hint", None, true),
        Err(HintError::NotOpen(InstanceKey::toolset("solo")))
    );
    assert_eq!(
        s.set_visible("news", Some("g1"), true),
        Err(HintError::InstanceNotAllowed {
            tool: "news".into(),
            instance: "g1".into()
        })
    );
    assert_eq!(
        s.set_visible("lobby_list", Some("x"), true),
        Err(HintError::InstanceNotAllowed {
            tool: "lobby_list".into(),
            instance: "x".into()
        })
    );
    assert_eq!(
        s.set_visible("nope", None, true),
        Err(HintError::UnknownTool("nope".into()))
    );
    assert_eq!(s.retitle(&g("g2"), "x"), Err(HintError::NotOpen(g("g2"))));
    assert_eq!(
        HintError::UnknownTool("x".into()).to_error_object().code,
        ErrorCode::INTERNAL_ERROR
    );
    assert_eq!(snapshot(&s), before);
}

fn legal_moves(moves: &[&str]) -> ToolDefinition {
    ToolDefinition {
        input_schema: Some(json!({"type": "object", "properties": {"move": {"enum": moves}}})),
        ..Default::default()
    }
}

#[test]
fn definitions_are_per_instance_or_shared_and_stated_as_values() {
    // §5.1, vector 7
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    opened(s.open("go", Some("g2"), None, at(1)));
    let d = s
        .set_definition("play", Some("g1"), Some(legal_moves(&["D4", "pass"])))
        .unwrap();
    let [entry] = d.tools.as_slice() else {
        panic!("{d:?}")
    };
    assert_eq!(entry.instance.as_deref(), Some("g1"));
    let def = entry.definition.as_ref().unwrap();
    // Members left out keep the declared ones: a whole definition, a value.
    assert_eq!(def.description.as_deref(), Some("Play a move"));
    assert_eq!(def.name.as_deref(), Some("play"));
    assert_eq!(
        def.input_schema.as_ref().unwrap()["properties"]["move"]["enum"],
        json!(["D4", "pass"])
    );
    assert!(
        s.set_definition("play", Some("g1"), Some(legal_moves(&["D4", "pass"])))
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        s.effective_definition("play", Some(&g("g1"))).as_ref(),
        Some(def)
    );
    assert_eq!(
        s.effective_definition("play", Some(&g("g2"))),
        Some(s.catalog().tool("play").unwrap().definition())
    );

    // Going back states the definition it goes back to.
    let back = s.set_definition("play", Some("g1"), None).unwrap();
    assert_eq!(
        back.tools[0].definition,
        Some(s.catalog().tool("play").unwrap().definition())
    );
    assert!(
        s.set_definition("play", Some("g1"), None)
            .unwrap()
            .is_empty()
    );

    // A shared replacement has no instance and applies where no own one is set.
    let shared = ToolDefinition {
        description: Some("Play (blitz)".into()),
        ..Default::default()
    };
    let d = s.set_definition("play", None, Some(shared)).unwrap();
    assert_eq!(
        (
            d.tools[0].instance.as_ref(),
            d.tools[0]
                .definition
                .as_ref()
                .unwrap()
                .description
                .as_deref()
        ),
        (None, Some("Play (blitz)"))
    );
    let st = s.statement(at(2));
    let defs: Vec<_> = st
        .hints
        .tools
        .iter()
        .filter(|t| t.definition.is_some())
        .map(|t| (t.name.as_str(), t.instance.as_deref()))
        .collect();
    // g1 went back to the declared one while none was shared, and keeps it: it now differs.
    assert_eq!(defs, [("play", None), ("play", Some("g1"))]);
}

#[test]
fn static_tools_take_no_definition_hints() {
    // §5.1: dynamic tools only.
    let mut s = state();
    assert_eq!(
        s.set_definition("status", None, Some(legal_moves(&[]))),
        Err(HintError::StaticDefinition("status".into()))
    );
    assert_eq!(
        s.set_definition("news", Some("g1"), Some(legal_moves(&[]))),
        Err(HintError::InstanceNotAllowed {
            tool: "news".into(),
            instance: "g1".into()
        })
    );
    assert!(
        !s.set_definition("news", None, Some(legal_moves(&["x"])))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn retitles_are_open_entries_with_the_new_title() {
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    let d = s.retitle(&g("g1"), "Go 9x9 vs bot").unwrap();
    assert_eq!(d.toolsets[0].state, ToolsetState::Open);
    assert_eq!(d.toolsets[0].title.as_deref(), Some("Go 9x9 vs bot"));
    assert!(s.retitle(&g("g1"), "Go 9x9 vs bot").unwrap().is_empty());
    assert_eq!(
        s.instance(&g("g1")).unwrap().record().title.as_deref(),
        Some("Go 9x9 vs bot")
    );
}

#[test]
fn the_statement_is_full_and_may_be_empty() {
    // §4.3, vectors 23, 38
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    s.set_visible("play", Some("g1"), true).unwrap();
    s.set_visible("status", None, false).unwrap(); // static: not part of the statement
    let st = s.statement(at(2));
    assert_eq!(
        st.open
            .iter()
            .map(|r| r.toolset.as_str())
            .collect::<Vec<_>>(),
        ["go", "lobby"]
    );
    let v: Vec<_> = st
        .hints
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.instance.as_deref()))
        .collect();
    assert_eq!(
        v,
        [
            ("doodle", None),
            ("lobby_list", None),
            ("play", Some("g1")),
            ("resign", Some("g1"))
        ]
    );

    s.end(&g("g1"), "over", at(3)).unwrap();
    s.close("lobby", None, "closed").unwrap();
    s.set_visible("doodle", None, false).unwrap();
    let st = s.statement(at(4));
    assert!(st.hints.is_empty(), "nothing visible: {st:?}");
    assert_eq!(
        st.ended.len(),
        1,
        "the end not asked for; the close asked for has none"
    );
    // It still takes the next rev (§4.3, vector 27).
    let mut seq = Sequencer::new();
    seq.stamp(HintDraft {
        tools: vec![ToolHint {
            name: "x".into(),
            ..Default::default()
        }],
        ..Default::default()
    });
    let result = st.into_result(&mut seq);
    assert_eq!(result.meta.hints.map(|h| h.rev), Some(2));
    assert_eq!(seq.last(), 2);
}

#[test]
fn a_call_goes_to_the_only_instance_or_the_named_one() {
    // §4.5, vectors 6, 36
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    s.set_visible("play", Some("g1"), true).unwrap();
    assert_eq!(
        s.resolve_call("play", None),
        Ok(Target {
            tool: "play".into(),
            key: Some(g("g1"))
        })
    );
    opened(s.open("go", Some("g2"), None, at(1)));
    s.set_visible("play", Some("g2"), true).unwrap();
    let refusal = s.resolve_call("play", None).unwrap_err();
    assert_eq!(
        refusal,
        CallRefusal::AmbiguousInstance {
            tool: "play".into(),
            toolset: "go".into(),
            open: vec!["g1".into(), "g2".into()]
        }
    );
    let CallReply::ToolError(result) = refusal.reply() else {
        panic!("a tool error")
    };
    assert!(result.is_error);
    assert_eq!(
        s.resolve_call("play", Some("g2")),
        Ok(Target {
            tool: "play".into(),
            key: Some(g("g2"))
        })
    );
    assert_eq!(
        s.resolve_call("play", Some("g3")),
        Err(CallRefusal::UnknownInstance {
            tool: "play".into(),
            toolset: "go".into(),
            instance: "g3".into(),
            open: vec!["g1".into(), "g2".into()]
        })
    );
}

#[test]
fn calls_into_closed_toolsets_or_invisible_tools_say_why() {
    // §3, vector 11
    let mut s = state();
    assert_eq!(
        s.resolve_call("play", None),
        Err(CallRefusal::ToolsetNotOpen {
            tool: "play".into(),
            toolset: "go".into()
        })
    );
    assert_eq!(
        s.resolve_call("hint", None),
        Err(CallRefusal::ToolsetNotOpen {
            tool: "hint".into(),
            toolset: "solo".into()
        })
    );
    opened(s.open("go", Some("g1"), None, at(1)));
    assert_eq!(
        s.resolve_call("play", None),
        Err(CallRefusal::Invisible {
            tool: "play".into(),
            target: Some(g("g1"))
        })
    );
    assert_eq!(
        s.resolve_call("challenge", None),
        Err(CallRefusal::Invisible {
            tool: "challenge".into(),
            target: Some(InstanceKey::toolset("lobby"))
        })
    );
    assert_eq!(
        s.resolve_call("news", None),
        Err(CallRefusal::Invisible {
            tool: "news".into(),
            target: None
        })
    );
    for r in [s.resolve_call("play", None), s.resolve_call("news", None)] {
        assert!(matches!(r.unwrap_err().reply(), CallReply::ToolError(t) if t.is_error));
    }
    // Visible tools outside declared toolsets run for the principal; undeclared groups are
    // gated by the host (§4.4), not here.
    assert_eq!(
        s.resolve_call("status", None),
        Ok(Target {
            tool: "status".into(),
            key: None
        })
    );
    assert_eq!(
        s.resolve_call("doodle", None),
        Ok(Target {
            tool: "doodle".into(),
            key: None
        })
    );
    assert_eq!(
        s.resolve_call("lobby_list", None),
        Ok(Target {
            tool: "lobby_list".into(),
            key: Some(InstanceKey::toolset("lobby"))
        })
    );
    assert_eq!(
        s.resolve_call("status", Some("g1")),
        Err(CallRefusal::InstanceNotApplicable {
            tool: "status".into(),
            instance: "g1".into()
        })
    );
    assert_eq!(
        s.resolve_call("lobby_list", Some("g1")),
        Err(CallRefusal::InstanceNotApplicable {
            tool: "lobby_list".into(),
            instance: "g1".into()
        })
    );
    let unknown = s.resolve_call("nope", None).unwrap_err();
    assert!(matches!(unknown.reply(), CallReply::Rpc(e) if e.code == ErrorCode::INVALID_PARAMS));
}

#[test]
fn coarse_visibility_is_visible_in_at_least_one_instance() {
    // §3
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    opened(s.open("go", Some("g2"), None, at(1)));
    assert!(!s.coarse_visibility().contains("play"));
    s.set_visible("play", Some("g2"), true).unwrap();
    let v = s.coarse_visibility();
    assert!(
        v.contains("play") && v.contains("resign") && v.contains("status") && !v.contains("news")
    );
    s.close("go", Some("g2"), "closed").unwrap();
    assert!(!s.coarse_visibility().contains("play"));
    // And this is what tools/list shows a hinted host.
    let listed = s.catalog().hinted_tools(&s.coarse_visibility());
    let play = listed.iter().find(|t| t.name == "play").unwrap();
    assert_eq!(play.meta.as_ref().unwrap().visible, Some(false));
}

#[test]
fn principals_are_isolated() {
    // §7: one principal never sees, calls into, closes or learns the names of another's.
    let catalog = Arc::new(arcade());
    let mut alice = PrincipalState::new(
        Arc::clone(&catalog),
        PrincipalConfig::default(),
        EndedIds::new(0),
        at(0),
    );
    let mut bob = PrincipalState::new(catalog, PrincipalConfig::default(), EndedIds::new(0), at(0));
    opened(alice.open("go", Some("secret"), None, at(1)));
    alice.set_visible("play", Some("secret"), true).unwrap();
    assert_eq!(bob.open_names("go"), Vec::<String>::new());
    assert_eq!(
        bob.resolve_call("play", Some("secret")),
        Err(CallRefusal::UnknownInstance {
            tool: "play".into(),
            toolset: "go".into(),
            instance: "secret".into(),
            open: vec![]
        })
    );
    assert!(matches!(
        bob.close("go", Some("secret"), "x"),
        Err(CloseError::NotOpen { ended: None, .. })
    ));
    opened(bob.open("go", Some("mine"), None, at(2)));
    assert!(matches!(
        bob.close("go", None, "x"),
        Err(CloseError::InstanceRequired { open, .. }) if open == ["mine"]
    ));
    assert_eq!(alice.open_names("go"), ["secret"]);
    assert!(
        !bob.statement(at(3))
            .hints
            .tools
            .iter()
            .any(|t| t.instance.as_deref() == Some("secret"))
    );
}

#[test]
fn a_shared_instance_is_joined_under_this_principals_own_name() {
    // §7: each principal holds its own record of a shared instance.
    let catalog = Arc::new(arcade());
    let mut white = PrincipalState::new(
        Arc::clone(&catalog),
        PrincipalConfig::default(),
        EndedIds::new(0),
        at(0),
    );
    let mut black =
        PrincipalState::new(catalog, PrincipalConfig::default(), EndedIds::new(0), at(0));
    let w = opened(white.open("go", Some("vs-black"), Some(json!({"size": 9})), at(1)));
    opened(black.open("go", Some("vs-white"), None, at(1)));
    let b = black
        .join("go", Some("vs-white"), Some(json!({"size": 9})), at(2))
        .unwrap_err();
    assert_eq!(
        b,
        OpenError::InstanceTaken(g("vs-white")),
        "a taken name is another game"
    );
    let b = black
        .join("go", None, Some(json!({"size": 9})), at(2))
        .unwrap();
    assert_eq!(b.key, g("go-1"));
    assert_eq!(b.draft.toolsets[0].state, ToolsetState::Open);
    // White plays; play becomes visible to Black — in Black's state, on Black's name.
    let d = black
        .set_visible("play", b.key.instance.as_deref(), true)
        .unwrap();
    assert_eq!(
        visible_entries(&d),
        [("play".into(), Some("go-1".into()), true)]
    );
    assert!(!white.instance(&w.key).unwrap().is_visible("play"));
    assert!(matches!(
        black.join("lobby", Some("x"), None, at(3)),
        Err(OpenError::InstanceNotAllowed { .. })
    ));
    assert_eq!(
        black.join("lobby", None, None, at(3)),
        Err(OpenError::InstanceTaken(InstanceKey::toolset("lobby")))
    );
}

#[test]
fn a_cancelled_open_leaves_no_trace() {
    let mut s = state();
    let before = snapshot(&s);
    let o = opened(s.open("go", Some("g1"), None, at(1)));
    assert!(s.cancel_open(&o.key).is_some());
    assert_eq!(snapshot(&s), before);
    assert_eq!(s.ended_records().count(), 0);
}

#[test]
fn ending_everything_records_each_instance() {
    // §4.6: a server that does not keep toolsets ends them with the last connection.
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    let ended = s.end_all("the last connection closed", at(2));
    assert_eq!(ended.len(), 2);
    assert_eq!(s.instances().count(), 0);
    assert_eq!(s.statement(at(3)).ended.len(), 2);
}

#[test]
fn one_draft_goes_to_every_connection_on_its_own_revs() {
    // §4.6, vectors 14, 32
    let mut s = state();
    let (mut a, mut b) = (Sequencer::new(), Sequencer::new());
    b.stamp(s.statement(at(0)).hints);
    let o = opened(s.open("go", Some("g1"), None, at(1)));
    let on_a = a.stamp(o.draft.clone());
    let on_b = b.stamp(o.draft);
    assert_eq!((on_a.rev, on_b.rev), (1, 2));
    assert_eq!(
        (on_a.entries.tools, on_a.entries.toolsets),
        (on_b.entries.tools, on_b.entries.toolsets)
    );
}

fn edited(
    edit: impl FnOnce(&mut Vec<ToolDecl>, &mut BTreeMap<String, ToolsetDecl>),
) -> Arc<Catalog> {
    let old = arcade();
    let mut tools: Vec<ToolDecl> = old.tools().cloned().collect();
    let mut toolsets: BTreeMap<String, ToolsetDecl> = old
        .toolsets()
        .map(|(n, d)| (n.to_owned(), d.clone()))
        .collect();
    edit(&mut tools, &mut toolsets);
    Arc::new(Catalog::new(tools, toolsets, None).unwrap())
}

#[test]
fn a_manifest_change_removing_a_toolset_ends_its_instances() {
    // §4.1, vector 33
    let mut s = state();
    opened(s.open("solo", None, None, at(1)));
    opened(s.open("go", Some("g1"), None, at(1)));
    s.set_visible("play", Some("g1"), true).unwrap();
    let new = edited(|tools, ts| {
        ts.remove("solo");
        ts.get_mut("go").unwrap().instances = false; // removal + addition
        ts.insert(
            "news-desk".into(),
            ToolsetDecl {
                default: ToolsetDefault::Open,
                ..Default::default()
            },
        );
        tools.push(ToolDecl::new(tool("headline")).in_toolset("news-desk"));
        tools.push(ToolDecl::new(tool("fresh")).dynamic());
    });
    let swap = s.replace_catalog(new, at(5));
    assert_eq!(swap.diff.removed_toolsets, ["go", "solo"]);
    let ended: Vec<String> = swap
        .ended
        .iter()
        .map(|e| e.record.as_ref().unwrap().toolset.clone())
        .collect();
    assert_eq!(ended, ["go", "solo"]);
    let closed: Vec<_> = swap
        .draft
        .toolsets
        .iter()
        .filter(|c| c.state == ToolsetState::Closed)
        .map(|c| c.ended.clone().unwrap())
        .collect();
    assert_eq!(
        closed,
        swap.ended
            .iter()
            .map(|e| e.record.as_ref().unwrap().id.clone())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        swap.opened
            .iter()
            .map(|o| o.key.clone())
            .collect::<Vec<_>>(),
        [InstanceKey::toolset("news-desk")]
    );
    // `hint` (solo's tool) is now an undeclared group's tool: principal-level, visible.
    let st = s.statement(at(6));
    let v: Vec<_> = st
        .hints
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.instance.as_deref()))
        .collect();
    assert_eq!(
        v,
        [
            ("doodle", None),
            ("fresh", None),
            ("headline", None),
            ("hint", None),
            ("lobby_list", None)
        ]
    );
    assert_eq!(st.ended.len(), 2);
    assert!(visible_entries(&swap.draft).contains(&("fresh".into(), None, true)));
}

#[test]
fn a_manifest_change_drops_state_of_tools_that_left() {
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    s.set_visible("play", Some("g1"), true).unwrap();
    s.set_definition("play", Some("g1"), Some(legal_moves(&["D4"])))
        .unwrap();
    s.set_definition("news", None, Some(legal_moves(&["x"])))
        .unwrap();
    let new = edited(|tools, _| {
        tools.retain(|t| t.name() != "play");
        let news = tools.iter_mut().find(|t| t.name() == "news").unwrap();
        *news = ToolDecl::new(tool("news")); // now static
    });
    let swap = s.replace_catalog(new, at(2));
    assert!(swap.ended.is_empty() && swap.diff.tools_changed);
    assert_eq!(
        visible_entries(&swap.draft),
        [("play".into(), Some("g1".into()), false)]
    );
    let st = s.statement(at(3));
    assert!(
        st.hints
            .tools
            .iter()
            .all(|t| t.definition.is_none() && t.name != "play")
    );
    assert!(
        s.instance(&g("g1"))
            .unwrap()
            .own_definition("play")
            .is_none()
    );
}

#[test]
fn the_statement_states_only_definitions_that_differ() {
    // §4.3: every current definition that differs — an instance's own counts against the
    // shared one it would otherwise take. Own definitions are sticky (a host keeps them) and
    // restated whenever what they would fall back to changes.
    let mut s = state();
    opened(s.open("go", Some("g1"), None, at(1)));
    opened(s.open("go", Some("g2"), None, at(1)));
    let blitz = ToolDefinition {
        description: Some("blitz".into()),
        ..Default::default()
    };
    let defs = |s: &PrincipalState| -> Vec<(String, Option<String>)> {
        let st = s.statement(at(2));
        st.hints
            .tools
            .iter()
            .filter(|t| t.definition.is_some())
            .map(|t| (t.name.clone(), t.instance.clone()))
            .collect()
    };
    let own = |i: &str| (String::from("play"), Some(i.to_owned()));
    let shared = || (String::from("play"), None);
    s.set_definition("play", Some("g1"), Some(blitz.clone()))
        .unwrap();
    assert_eq!(defs(&s), [own("g1")]);

    // The shared one becomes the same as g1's: g1's is restated, and left out of the statement.
    let d = s.set_definition("play", None, Some(blitz)).unwrap();
    let entries: Vec<_> = d
        .tools
        .iter()
        .map(|t| (t.name.clone(), t.instance.clone()))
        .collect();
    assert_eq!(entries, [shared(), own("g1")]);
    assert_eq!(defs(&s), [shared()]);
    assert!(
        s.instance(&g("g1"))
            .unwrap()
            .own_definition("play")
            .is_some(),
        "sticky"
    );

    // g2 takes the declared one as its own: it differs from the shared one.
    let declared = s.catalog().tool("play").unwrap().definition();
    s.set_definition("play", Some("g2"), Some(declared.clone()))
        .unwrap();
    assert_eq!(defs(&s), [shared(), own("g2")]);

    // The shared one goes back to the declared one: both own ones are restated; g1's
    // (blitz) now differs and is stated, g2's equals the fallback and is left out.
    let d = s.set_definition("play", None, None).unwrap();
    let entries: Vec<_> = d
        .tools
        .iter()
        .map(|t| (t.name.clone(), t.instance.clone()))
        .collect();
    assert_eq!(entries, [shared(), own("g1"), own("g2")]);
    assert_eq!(d.tools[0].definition.as_ref(), Some(&declared));
    assert_eq!(defs(&s), [own("g1")]);
}

#[test]
fn a_plain_host_plays_through_the_compat_tools() {
    // §8, vectors 26, 36: implicit opens, toolset_open, the `instance` argument.
    use crate::catalog::{HostView, PlainCall, TOOLSET_OPEN};
    let mut s = state();
    let catalog = Arc::clone(s.catalog());
    assert_eq!(catalog.view_for(false), HostView::Plain);
    // The actor opens the implicit toolsets; the default-open lobby is open already.
    let implicit: Vec<String> = catalog.implicitly_open().map(str::to_owned).collect();
    let outcomes: Vec<bool> = implicit
        .iter()
        .map(|ts| s.open_implicitly(ts, at(1)).is_some())
        .collect();
    assert_eq!(implicit, ["lobby", "solo"]);
    assert_eq!(outcomes, [false, true]);
    assert_eq!(
        s.resolve_plain_call("hint", None).map(|t| t.key),
        Ok(Some(InstanceKey::toolset("solo")))
    );

    let args = |v: serde_json::Value| v.as_object().cloned();
    let PlainCall::Open {
        toolset,
        instance,
        options,
    } = catalog
        .plain_call(
            TOOLSET_OPEN,
            args(json!({"toolset": "go", "options": {"size": 9}})),
        )
        .unwrap()
    else {
        panic!("an open")
    };
    let first = opened(s.open(&toolset, instance.as_deref(), options, at(2))).key;
    s.set_visible("play", first.instance.as_deref(), true)
        .unwrap();
    let PlainCall::Tool { name, instance, .. } = catalog
        .plain_call("play", args(json!({"move": "D4"})))
        .unwrap()
    else {
        panic!("a tool call")
    };
    assert_eq!(
        s.resolve_call(&name, instance.as_deref()),
        Ok(Target {
            tool: "play".into(),
            key: Some(first.clone())
        })
    );

    opened(s.open("go", Some("second"), None, at(3)));
    assert!(matches!(
        s.resolve_call("play", None),
        Err(CallRefusal::AmbiguousInstance { .. })
    ));
    let PlainCall::Tool { instance, .. } = catalog
        .plain_call(
            "play",
            args(json!({"move": "D4", "instance": first.instance.clone().unwrap()})),
        )
        .unwrap()
    else {
        panic!("a tool call")
    };
    assert_eq!(
        s.resolve_call("play", instance.as_deref()).map(|t| t.key),
        Ok(Some(first))
    );
    // toolset_close without an instance: the actor fills in the only one, or is refused.
    assert_eq!(s.sole_instance("go"), None);
    assert!(matches!(
        s.close("go", s.sole_instance("go").as_deref(), "x"),
        Err(CloseError::InstanceRequired { .. })
    ));
}

#[test]
fn boundary_04_an_implicit_open_is_hidden_from_hinted_hosts_until_one_opens_it() {
    // §8 [project]: a plain host's implicit opens are its own; a hinted host opening the
    // toolset is told it whole, and the instance's state carries on.
    let mut s = state();
    let before = snapshot(&s);
    let solo = InstanceKey::toolset("solo");
    assert_eq!(s.open_implicitly("solo", at(1)), Some(solo.clone()));
    assert_eq!(s.open_implicitly("solo", at(1)), None, "open already");
    assert!(s.is_implicit(&solo));
    assert_eq!(snapshot(&s), before, "hinted hosts see nothing of it");

    // Its logic's changes apply, unsent.
    assert!(s.set_visible("hint", None, false).unwrap().is_empty());
    assert!(s.retitle(&solo, "Solo, level 2").unwrap().is_empty());
    assert_eq!(snapshot(&s), before);

    // A plain call reaches it; a hinted call or close finds it not open.
    assert_eq!(
        s.resolve_plain_call("hint", None).map(|t| t.key),
        Err(CallRefusal::Invisible {
            tool: "hint".into(),
            target: Some(solo.clone())
        })
    );
    assert!(matches!(
        s.resolve_call("hint", None),
        Err(CallRefusal::ToolsetNotOpen { .. })
    ));
    assert!(matches!(
        s.close("solo", None, "closed"),
        Err(CloseError::NotOpen { .. })
    ));
    s.set_visible("hint", None, true).unwrap();
    assert!(s.resolve_plain_call("hint", None).is_ok());

    // A hinted open reveals it, stated whole.
    let Ok(OpenOutcome::Revealed(o)) = s.open("solo", None, None, at(2)) else {
        panic!("revealed")
    };
    assert_eq!(o.key, solo);
    assert_eq!(o.draft.toolsets.len(), 1);
    assert_eq!(o.draft.toolsets[0].state, ToolsetState::Open);
    assert_eq!(o.draft.toolsets[0].title.as_deref(), Some("Solo, level 2"));
    assert_eq!(visible_entries(&o.draft), [("hint".into(), None, true)]);
    assert!(!s.is_implicit(&solo));
    assert!(s.statement(at(2)).open.iter().any(|r| r.toolset == "solo"));
    assert!(s.resolve_call("hint", None).is_ok());
}

#[test]
fn boundary_04_an_implicit_instance_ends_unseen_and_other_options_replace_it() {
    let mut s = state();
    let solo = InstanceKey::toolset("solo");
    s.open_implicitly("solo", at(1));
    let e = s.end(&solo, "game over", at(2)).unwrap();
    assert!(e.record.is_none() && e.draft.is_empty(), "{e:?}");
    assert!(s.statement(at(2)).ended.is_empty());

    // A hinted open with other options than the implicit instance's: a new one.
    s.open_implicitly("solo", at(3));
    let o = opened(s.open("solo", None, Some(json!({"level": 3})), at(4)));
    assert_eq!(o.key, solo);
    assert!(!s.is_implicit(&solo));
    assert_eq!(
        s.instance(&solo).and_then(|i| i.options()),
        Some(&json!({"level": 3}))
    );
    assert!(
        s.statement(at(4)).ended.is_empty(),
        "the replaced one left no record"
    );
}

#[test]
fn a_read_only_tool_of_an_ended_instance_answers_with_its_last_view_while_its_record_is_kept() {
    use mcpl_protocol::mcp::ToolAnnotations;
    let mut toolsets = std::collections::BTreeMap::new();
    toolsets.insert(
        "go".to_owned(),
        ToolsetDecl {
            instances: true,
            ..Default::default()
        },
    );
    let mut board = tool("board");
    board.annotations = Some(ToolAnnotations {
        read_only_hint: Some(true),
        ..Default::default()
    });
    let tools = vec![
        ToolDecl::new(board).in_toolset("go"),
        ToolDecl::new(tool("resign")).in_toolset("go"),
    ];
    let catalog = crate::Catalog::new(tools, toolsets, None).unwrap();
    let config = PrincipalConfig {
        ended_ttl: Duration::from_secs(60),
        ..Default::default()
    };
    let mut s = PrincipalState::new(Arc::new(catalog), config, EndedIds::new(0), at(0));
    opened(s.open("go", Some("g1"), None, at(1)));
    s.end_showing(
        &g("g1"),
        "Black wins",
        Some(Arc::from("final board")),
        at(2),
    )
    .unwrap();

    let named = s.resolve_call("board", Some("g1")).unwrap_err();
    assert_eq!(
        named,
        CallRefusal::Ended {
            tool: "board".into(),
            toolset: "go".into(),
            instance: Some("g1".into()),
            reason: "Black wins".into(),
            view: "final board".into(),
        }
    );
    let CallReply::Answer(result) = named.reply() else {
        panic!("a result, not an error")
    };
    assert!(!result.is_error);
    // With none open and none named, the latest ended instance; a plain host too (§8).
    assert_eq!(s.resolve_plain_call("board", None).unwrap_err(), named);
    // A tool that is not read-only is refused as before.
    assert!(matches!(
        s.resolve_call("resign", Some("g1")),
        Err(CallRefusal::UnknownInstance { .. })
    ));
    // An open instance is called as before; the ended one is still readable by name.
    opened(s.open("go", Some("g2"), None, at(3)));
    assert_eq!(
        s.resolve_call("board", None),
        Ok(Target {
            tool: "board".into(),
            key: Some(g("g2"))
        })
    );
    assert_eq!(s.resolve_call("board", Some("g1")).unwrap_err(), named);
    // Gone with its record.
    s.expire(at(63));
    assert!(matches!(
        s.resolve_call("board", Some("g1")),
        Err(CallRefusal::UnknownInstance { .. })
    ));
}

//! Unit tests for `Catalog`; vectors named where they apply.

use super::*;
use mcpl_protocol::Meta;
use mcpl_protocol::toolsets::ToolsetDefault;
use serde_json::json;

fn tool(name: &str, toolset: Option<&str>, presence: Option<Presence>) -> Tool {
    let mut t = Tool::new(
        name,
        format!("{name} does things"),
        json!({"type": "object"}),
    );
    let meta = Meta {
        toolset: toolset.map(Into::into),
        presence,
        ..Default::default()
    };
    t.meta = (!meta.is_empty()).then_some(meta);
    t
}

fn decl(instances: bool, default: ToolsetDefault) -> ToolsetDecl {
    ToolsetDecl {
        title: Some("T".into()),
        instances,
        default,
        ..Default::default()
    }
}

/// lobby: default open; game: instances; party: instances *and* default open (invalid,
/// treated as closed by a host, §4.1).
fn arcade(hints: bool) -> McplManifest {
    let mut m = McplManifest {
        version: "0.5".into(),
        tool_hints: hints.then_some(true),
        ..Default::default()
    };
    m.toolsets
        .insert("lobby".into(), decl(false, ToolsetDefault::Open));
    m.toolsets
        .insert("game".into(), decl(true, ToolsetDefault::Closed));
    m.toolsets
        .insert("party".into(), decl(true, ToolsetDefault::Open));
    m
}

/// look, clock: static; play, pass: game (pass listed static, vector 16); seek: lobby;
/// scratch: the undeclared toolset `notes`; roam: dynamic outside toolsets.
fn tools() -> Vec<Tool> {
    vec![
        tool("look", None, None),
        tool("clock", None, Some(Presence::Static)),
        tool("play", Some("game"), None),
        tool("pass", Some("game"), Some(Presence::Static)),
        tool("seek", Some("lobby"), None),
        tool("scratch", Some("notes"), None),
        tool("roam", None, Some(Presence::Dynamic)),
    ]
}

fn names(ts: &[Tool]) -> Vec<&str> {
    ts.iter().map(|t| t.name.as_str()).collect()
}

fn catalog() -> Catalog {
    let mut c = Catalog::new(true, Some(&arcade(true)));
    c.set_tools(&tools(), |_| None);
    c
}

#[test]
fn hints_count_only_when_both_sides_advertised() {
    // Vector 30: otherwise every tool is static and nothing of RFC-014 shows.
    for c in [
        Catalog::new(false, Some(&arcade(true))),
        Catalog::new(true, Some(&arcade(false))),
        Catalog::new(true, None),
    ] {
        let mut c = c;
        c.set_tools(&tools(), |_| Some(Presence::Dynamic));
        assert!(!c.hints_count());
        assert_eq!(names(c.model_tools()).len(), 7, "every tool is static");
        assert_eq!(c.dynamic_tools().count(), 0);
        assert_eq!(
            (
                c.toolset_of("play"),
                c.groups().len(),
                c.default_open().len()
            ),
            (None, 0, 0)
        );
        assert_eq!(c.gate("scratch"), CallGate::Send);
        c.set_presence("look", Presence::Dynamic);
        assert!(!c.has_pending() && c.rebuild_boundary().is_empty());
    }
    assert!(catalog().hints_count());
}

#[test]
fn static_tools_are_the_model_list_and_a_toolset_makes_a_tool_dynamic() {
    // §6: dynamic tools never enter the model's list; vector 16: `pass` is dynamic.
    let c = catalog();
    assert_eq!(names(c.model_tools()), vec!["look", "clock"]);
    let dynamic: Vec<&str> = c.dynamic_tools().map(|t| t.name.as_str()).collect();
    assert_eq!(dynamic, vec!["play", "pass", "seek", "scratch", "roam"]);
    assert_eq!(
        c.toolset_of("play"),
        Some(ToolsetRef::Declared("game".into()))
    );
    assert_eq!(
        c.toolset_of("scratch"),
        Some(ToolsetRef::Group("notes".into()))
    );
    assert_eq!(c.toolset_of("roam"), None);
}

#[test]
fn a_toolset_with_instances_is_never_open_by_default() {
    // §4.1: `instances` with `default: "open"` is treated as closed.
    assert_eq!(catalog().default_open(), vec!["lobby"]);
}

#[test]
fn an_undeclared_group_is_opened_and_gated_by_the_host() {
    // Vector 10.
    let mut c = catalog();
    assert_eq!(c.groups(), vec!["notes"]);
    assert_eq!(
        c.gate("scratch"),
        CallGate::ClosedGroup {
            group: "notes".into()
        }
    );
    assert!(
        !c.open_group("game"),
        "a declared toolset is the server's to open"
    );
    assert!(c.open_group("notes") && c.is_group_open("notes"));
    assert_eq!(c.gate("scratch"), CallGate::Send);
    assert_eq!(
        c.gate("play"),
        CallGate::Send,
        "the server gates declared toolsets"
    );
    assert!(c.close_group("notes") && !c.close_group("notes"));
    assert_eq!(
        c.gate("scratch"),
        CallGate::ClosedGroup {
            group: "notes".into()
        }
    );
    assert_eq!(c.gate("nope"), CallGate::Unknown);
}

#[test]
fn presence_moves_wait_for_the_next_boundary() {
    // Vectors 15, 24; vector 12: the list is byte-identical until the boundary.
    let mut c = catalog();
    let before = serde_json::to_string(c.model_tools()).unwrap();
    c.set_presence("look", Presence::Dynamic);
    c.set_presence("roam", Presence::Static);
    assert_eq!(serde_json::to_string(c.model_tools()).unwrap(), before);
    assert!(c.has_pending());
    assert_eq!(c.presence("look"), Some(Presence::Dynamic));
    assert_eq!(
        c.rebuild_boundary(),
        vec![
            CatalogOutput::PresenceMoved {
                tool: "look".into(),
                presence: Presence::Dynamic
            },
            CatalogOutput::PresenceMoved {
                tool: "roam".into(),
                presence: Presence::Static
            },
        ]
    );
    assert_eq!(names(c.model_tools()), vec!["clock", "roam"]);
    assert!(!c.has_pending() && c.rebuild_boundary().is_empty());
    // A move there and back before a boundary is no move.
    c.set_presence("clock", Presence::Dynamic);
    c.set_presence("clock", Presence::Static);
    assert!(c.rebuild_boundary().is_empty());
}

#[test]
fn a_later_list_and_the_hint_state_presence_wait_for_the_boundary_too() {
    let mut c = catalog();
    let mut more = tools();
    more.push(tool("extra", None, None));
    // The hint state says roam moved to static (a newer stamp than the list's _meta).
    c.set_tools(&more, |n| (n == "roam").then_some(Presence::Static));
    assert_eq!(names(c.model_tools()), vec!["look", "clock"]);
    let out = c.rebuild_boundary();
    assert_eq!(
        out,
        vec![CatalogOutput::PresenceMoved {
            tool: "roam".into(),
            presence: Presence::Static
        }]
    );
    assert_eq!(
        names(c.model_tools()),
        vec!["look", "clock", "roam", "extra"]
    );
}

#[test]
fn a_manifest_change_removing_or_reshaping_a_toolset_ends_its_instances() {
    // Vector 33; §4.1 [project]: an `instances` change is a removal plus an addition, and
    // a toolset that becomes undeclared is a group that starts closed.
    let mut c = catalog();
    c.open_group("notes");
    let mut m = arcade(true);
    m.toolsets.remove("game");
    m.toolsets.get_mut("party").unwrap().instances = false;
    m.toolsets
        .insert("notes".into(), decl(false, ToolsetDefault::Closed));
    assert_eq!(
        c.update_manifest(Some(&m)),
        vec![
            CatalogOutput::ToolsetRemoved {
                toolset: "game".into()
            },
            CatalogOutput::ToolsetRemoved {
                toolset: "party".into()
            },
            CatalogOutput::ToolsetAdded {
                toolset: "party".into()
            },
            CatalogOutput::ToolsetAdded {
                toolset: "notes".into()
            },
        ]
    );
    assert_eq!(c.groups(), vec!["game"]);
    assert_eq!(
        c.gate("play"),
        CallGate::ClosedGroup {
            group: "game".into()
        }
    );
    assert!(!c.is_group_open("notes"), "now declared: the server's");
    assert_eq!(c.gate("scratch"), CallGate::Send);
    assert_eq!(c.default_open(), vec!["lobby", "party"]);
    assert!(
        c.update_manifest(Some(&m)).is_empty(),
        "no change, nothing to tell"
    );
}

#[test]
fn withdrawing_tool_hints_makes_every_tool_static_at_the_next_boundary() {
    // Vector 34.
    let mut c = catalog();
    c.open_group("notes");
    let out = c.update_manifest(Some(&arcade(false)));
    assert_eq!(
        out,
        vec![
            CatalogOutput::ToolsetRemoved {
                toolset: "game".into()
            },
            CatalogOutput::ToolsetRemoved {
                toolset: "lobby".into()
            },
            CatalogOutput::ToolsetRemoved {
                toolset: "party".into()
            },
            CatalogOutput::HintsWithdrawn,
        ]
    );
    assert!(!c.hints_count() && c.has_pending());
    assert_eq!(
        names(c.model_tools()),
        vec!["look", "clock"],
        "not mid-conversation"
    );
    let moved: Vec<CatalogOutput> = ["play", "pass", "seek", "scratch", "roam"]
        .iter()
        .map(|t| CatalogOutput::PresenceMoved {
            tool: (*t).into(),
            presence: Presence::Static,
        })
        .collect();
    assert_eq!(c.rebuild_boundary(), moved);
    assert_eq!(c.model_tools().len(), 7);
    c.set_presence("look", Presence::Dynamic);
    assert!(!c.has_pending(), "hints are ignored now");
    assert_eq!(
        c.update_manifest(Some(&arcade(true))),
        vec![CatalogOutput::HintsAdvertised]
    );
    assert!(!c.is_group_open("notes"));
}

#[test]
fn lookups_by_name_read_the_first_of_a_name_listed_twice_and_groups_are_named_ones() {
    let mut c = Catalog::new(true, Some(&arcade(true)));
    let mut list = tools();
    let mut again = tool("seek", Some("notes"), None);
    again.description = Some("the second seek".into());
    list.push(again);
    c.set_tools(&list, |_| None);
    assert_eq!(
        c.tool("seek").and_then(|t| t.description.as_deref()),
        Some("seek does things")
    );
    assert_eq!(
        c.toolset_of("seek"),
        Some(ToolsetRef::Declared("lobby".into()))
    );
    assert_eq!(c.listed_tools().len(), list.len());
    assert!(c.is_group("notes") && !c.is_group("lobby") && !c.is_group("nothing"));
    assert_eq!(c.groups(), vec!["notes"]);
    assert!(c.declaration("game").is_some_and(|d| d.instances));

    // A list shared with its caller is kept as it is, not copied.
    let shared: Arc<[Tool]> = tools().into();
    c.set_tools_shared(shared.clone(), |_| None);
    assert!(std::ptr::eq(c.tool("look").unwrap(), &shared[0]));
    assert_eq!(c.groups(), vec!["notes"]);

    // Without hints, no toolset, group or declaration is anyone's.
    let mut plain = Catalog::new(true, Some(&arcade(false)));
    plain.set_tools(&list, |_| None);
    assert!(!plain.is_group("notes") && plain.declaration("game").is_none());
    assert!(plain.groups().is_empty() && plain.toolset_of("seek").is_none());
    assert!(plain.tool("seek").is_some());
}

#[test]
fn tools_that_need_tasks_are_left_out_and_named_and_a_list_without_any_is_not_copied() {
    let tool = |name: &str, execution: Option<serde_json::Value>| Tool {
        execution,
        ..Tool::new(name, "", serde_json::json!({"type": "object"}))
    };
    let plain: std::sync::Arc<[Tool]> = vec![tool("a", None), tool("b", None)].into();
    let (kept, left_out) = super::without_task_tools(&plain);
    assert!(std::sync::Arc::ptr_eq(&kept, &plain) && left_out.is_empty());
    let mixed: std::sync::Arc<[Tool]> = vec![
        tool("a", Some(serde_json::json!({"taskSupport": "required"}))),
        tool("b", Some(serde_json::json!({"taskSupport": "optional"}))),
        tool("c", Some(serde_json::json!({"taskSupport": 7}))),
        tool(
            "d",
            Some(serde_json::json!({"taskSupport": "required", "x": 1})),
        ),
    ]
    .into();
    let (kept, left_out) = super::without_task_tools(&mixed);
    let kept: Vec<&str> = kept.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        (kept, left_out),
        (vec!["b", "c"], vec!["a".to_owned(), "d".to_owned()])
    );
}

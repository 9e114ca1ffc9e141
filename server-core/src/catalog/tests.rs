//! Catalog checks, and the arcade catalog the core's tests share.

use super::*;
use mcpl_protocol::toolsets::ToolsetDefault;
use serde_json::json;

pub(crate) fn tool(name: &str) -> Tool {
    Tool::new(
        name,
        format!("{name} does things"),
        json!({"type": "object", "properties": {}}),
    )
}

/// The arcade used across the core's tests: a default-open lobby, an instanced Go with
/// options, a solo toolset without instances, and tools outside declared toolsets.
pub(crate) fn arcade() -> Catalog {
    let mut toolsets = BTreeMap::new();
    toolsets.insert(
        "lobby".to_owned(),
        ToolsetDecl {
            title: Some("Lobby".into()),
            summary: Some("Find games".into()),
            default: ToolsetDefault::Open,
            ..Default::default()
        },
    );
    toolsets.insert(
        "go".to_owned(),
        ToolsetDecl {
            title: Some("Go".into()),
            summary: Some("A game of Go".into()),
            instances: true,
            options: Some(json!({"type": "object", "properties": {"size": {"enum": [9, 13, 19]}}})),
            ..Default::default()
        },
    );
    toolsets.insert(
        "solo".to_owned(),
        ToolsetDecl {
            title: Some("Solo".into()),
            options: Some(json!({"type": "object", "properties": {"level": {"type": "integer"}}})),
            ..Default::default()
        },
    );
    toolsets.insert(
        "ranked".to_owned(),
        ToolsetDecl {
            title: Some("Ranked".into()),
            options: Some(json!({"type": "object", "required": ["ladder"], "properties": {"ladder": {"type": "string"}}})),
            ..Default::default()
        },
    );
    let tools = vec![
        ToolDecl::new(tool("status")),
        ToolDecl::new(tool("news")).dynamic().initially_visible(false),
        ToolDecl::new(tool("lobby_list")).in_toolset("lobby"),
        ToolDecl::new(tool("challenge")).in_toolset("lobby").initially_visible(false),
        ToolDecl::new(Tool::new(
            "play",
            "Play a move",
            json!({"type": "object", "properties": {"move": {"type": "string"}}, "required": ["move"]}),
        ))
        .in_toolset("go")
        .initially_visible(false),
        ToolDecl::new(tool("resign")).in_toolset("go"),
        ToolDecl::new(tool("hint")).in_toolset("solo"),
        ToolDecl::new(tool("climb")).in_toolset("ranked"),
        ToolDecl::new(tool("doodle")).in_toolset("extras"),
    ];
    Catalog::new(
        tools,
        toolsets,
        Some(Surface {
            title: Some("Arcade".into()),
            summary: Some("Games".into()),
        }),
    )
    .expect("the arcade catalog is valid")
}

#[test]
fn hints_are_read_from_meta_and_stripped() {
    let mut t = tool("play");
    t.meta = Some(
        serde_json::from_value(json!({
            "mcpl/toolset": "go", "mcpl/presence": "static", "mcpl/visible": false, "mcpl/class": "act"
        }))
        .unwrap(),
    );
    let d = ToolDecl::new(t);
    // §3, vector 16: a toolset implies dynamic, whatever presence says.
    assert_eq!(d.presence(), Presence::Dynamic);
    assert!(!d.is_initially_visible());
    assert_eq!(d.toolset(), Some("go"));
    let kept = d.tool().meta.as_ref().unwrap();
    assert!(kept.toolset.is_none() && kept.presence.is_none() && kept.visible.is_none());
    assert_eq!(kept.other["mcpl/class"], "act");
    assert_eq!(ToolDecl::new(tool("x")).presence(), Presence::Static);
    assert!(ToolDecl::new(tool("x")).is_initially_visible());
}

#[test]
fn the_arcade_is_indexed() {
    let c = arcade();
    assert_eq!(c.tools_of("go"), ["play", "resign"]);
    assert_eq!(c.tools_of("lobby"), ["lobby_list", "challenge"]);
    assert_eq!(c.declared_toolset_of("play"), Some("go"));
    assert_eq!(
        c.declared_toolset_of("doodle"),
        None,
        "extras is undeclared: §4.4"
    );
    assert_eq!(c.declared_toolset_of("status"), None);
    assert!(c.is_instanced("go") && !c.is_instanced("lobby"));
    assert_eq!(c.default_open().collect::<Vec<_>>(), ["lobby"]);
    // §8: ranked requires options and go has instances, so neither is implicit.
    assert_eq!(c.implicitly_open().collect::<Vec<_>>(), ["lobby", "solo"]);
}

fn build(
    tools: Vec<ToolDecl>,
    toolsets: Vec<(&str, ToolsetDecl)>,
) -> Result<Catalog, CatalogError> {
    Catalog::new(
        tools,
        toolsets
            .into_iter()
            .map(|(n, d)| (n.to_owned(), d))
            .collect(),
        None,
    )
}

fn instanced() -> ToolsetDecl {
    ToolsetDecl {
        instances: true,
        ..Default::default()
    }
}

#[test]
fn invalid_toolset_declarations_are_refused_by_name() {
    let open_instanced = ToolsetDecl {
        default: ToolsetDefault::Open,
        ..instanced()
    };
    assert_eq!(
        build(vec![], vec![("go", open_instanced)]).unwrap_err(),
        CatalogError::Toolset(DeclError::OpenWithInstances("go".into()))
    );
    assert!(matches!(
        build(vec![], vec![("a:b", ToolsetDecl::default())]).unwrap_err(),
        CatalogError::Toolset(DeclError::BadName { name, .. }) if name == "a:b"
    ));
    let bad_schema = ToolsetDecl {
        options: Some(json!({"type": "nonsense"})),
        ..Default::default()
    };
    assert!(matches!(
        build(vec![], vec![("go", bad_schema)]).unwrap_err(),
        CatalogError::OptionsSchema { toolset, .. } if toolset == "go"
    ));
    let dollar = ToolsetDecl {
        options: Some(json!({"$ref": "#/x"})),
        ..Default::default()
    };
    assert!(matches!(
        build(vec![], vec![("go", dollar)]).unwrap_err(),
        CatalogError::Toolset(DeclError::BadSchemaMember { .. })
    ));
}

#[test]
fn invalid_tools_are_refused_by_name() {
    let dup = vec![ToolDecl::new(tool("a")), ToolDecl::new(tool("a"))];
    assert_eq!(
        build(dup, vec![]).unwrap_err(),
        CatalogError::DuplicateTool("a".into())
    );
    for bad in ["", "a b", "a/b", &"x".repeat(129)] {
        assert_eq!(
            build(vec![ToolDecl::new(tool(bad))], vec![]).unwrap_err(),
            CatalogError::BadToolName(bad.into())
        );
    }
    assert_eq!(
        build(vec![ToolDecl::new(tool(TOOLSET_OPEN))], vec![]).unwrap_err(),
        CatalogError::ReservedToolName(TOOLSET_OPEN.into())
    );
    let not_object = ToolDecl::new(Tool::new("a", "x", json!(true)));
    assert_eq!(
        build(vec![not_object], vec![]).unwrap_err(),
        CatalogError::InputSchemaNotObject("a".into())
    );
    let bad_props = ToolDecl::new(Tool::new(
        "a",
        "x",
        json!({"type": "object", "properties": []}),
    ));
    assert_eq!(
        build(vec![bad_props], vec![]).unwrap_err(),
        CatalogError::InputSchemaNotObject("a".into())
    );
    assert!(matches!(
        build(vec![ToolDecl::new(tool("a")).in_toolset("x.y")], vec![]).unwrap_err(),
        CatalogError::BadToolsetName { tool, toolset, .. } if tool == "a" && toolset == "x.y"
    ));
}

#[test]
fn an_instanced_toolsets_tool_cannot_take_the_instance_argument() {
    let with_arg = || {
        ToolDecl::new(Tool::new(
            "play",
            "x",
            json!({"type": "object", "properties": {"instance": {"type": "string"}}}),
        ))
        .in_toolset("go")
    };
    assert_eq!(
        build(vec![with_arg()], vec![("go", instanced())]).unwrap_err(),
        CatalogError::InstanceArgument {
            tool: "play".into(),
            toolset: "go".into()
        }
    );
    // Without instances (or outside declared toolsets) the argument is the tool's own.
    assert!(build(vec![with_arg()], vec![("go", ToolsetDecl::default())]).is_ok());
    assert!(build(vec![with_arg()], vec![]).is_ok());
}

#[test]
fn options_are_checked_against_the_declared_schema() {
    let c = arcade();
    assert_eq!(c.validate_options("go", Some(&json!({"size": 9}))), Ok(()));
    assert_eq!(c.validate_options("go", None), Ok(()));
    let problems = c
        .validate_options("go", Some(&json!({"size": 10})))
        .unwrap_err();
    assert_eq!(
        problems.iter().map(|p| p.at.as_str()).collect::<Vec<_>>(),
        ["/size"]
    );
    assert_eq!(
        c.validate_options("go", Some(&json!([9]))).unwrap_err()[0].at,
        ""
    );
    let missing = c.validate_options("ranked", None).unwrap_err();
    assert_eq!(missing.len(), 1, "a required member is missing");
    let many = json!({"size": 1, "a": 1});
    let strict = ToolsetDecl {
        options: Some(json!({"type": "object", "additionalProperties": false, "minProperties": 9})),
        ..Default::default()
    };
    let c2 = build(vec![], vec![("s", strict)]).unwrap();
    assert!(c2.validate_options("s", Some(&many)).unwrap_err().len() <= MAX_OPTION_PROBLEMS);
    // A toolset without a schema takes any object.
    assert_eq!(
        c.validate_options("lobby", Some(&json!({"anything": 1}))),
        Ok(())
    );
}

#[test]
fn catalogs_are_shareable_across_actors() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Catalog>();
}

//! Tests of the bounded argument check (§6 "RFC §8.2", §7).

use super::*;
use proptest::prelude::*;
use serde_json::json;
use std::time::{Duration, Instant};

fn problems(c: ArgCheck) -> Vec<Problem> {
    match c {
        ArgCheck::Invalid(p) => p,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

fn unchecked(c: ArgCheck) -> Unchecked {
    match c {
        ArgCheck::Unchecked(u) => u,
        other => panic!("expected Unchecked, got {other:?}"),
    }
}

/// A Go move tool's schema as a game server sends it: legal moves as an enum.
fn play_schema() -> Value {
    json!({"type": "object",
           "properties": {"move": {"enum": ["D4", "Q16", "pass"]},
                          "note": {"type": "string", "maxLength": 10}},
           "required": ["move"], "additionalProperties": false})
}

#[test]
fn valid_arguments_pass() {
    assert_eq!(
        check(&play_schema(), &json!({"move": "D4"})),
        ArgCheck::Valid
    );
    assert_eq!(
        check(&play_schema(), &json!({"move": "pass", "note": "gg"})),
        ArgCheck::Valid
    );
}

#[test]
fn invalid_arguments_name_where() {
    let p = problems(check(
        &play_schema(),
        &json!({"move": "D4", "note": "far too long"}),
    ));
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].path, "/note");
    let p = problems(check(&play_schema(), &json!({})));
    assert_eq!(
        p[0].path, "",
        "a missing member is a problem of the object itself"
    );
    let p = problems(check(&play_schema(), &json!({"move": "D4", "extra": 1})));
    assert_eq!(p[0].path, "");
    let p = problems(check(&play_schema(), &json!({"move": "D4", "note": 5})));
    assert_eq!(p[0].path, "/note");
}

#[test]
fn a_value_outside_a_long_enum_is_counted_not_listed() {
    let points: Vec<String> = ('A'..='H')
        .flat_map(|c| (1..=9).map(move |r| format!("{c}{r}")))
        .collect();
    let schema = json!({"type": "object", "properties": {"move": {"enum": points}},
                        "required": ["move"], "additionalProperties": false});
    // Beside another problem (alone, it is the server's to explain: the next test).
    let p = problems(check(&schema, &json!({"move": "Z99", "extra": 1})));
    assert_eq!(p.len(), 2);
    let p = p.iter().find(|p| p.path == "/move").unwrap();
    assert_eq!(p.message, "\"Z99\" is not one of the 72 values allowed now");
    // A short enum is listed whole: the agent sees what it may give.
    let p = problems(check(&play_schema(), &json!({"move": "E5", "note": 5})));
    let p: Vec<Problem> = p.into_iter().filter(|p| p.path == "/move").collect();
    assert!(
        p[0].message.contains("\"D4\"") && p[0].message.contains("\"pass\""),
        "{}",
        p[0].message
    );
    assert!(!p[0].message.contains('…'), "{}", p[0].message);
}

#[test]
fn problems_are_bounded_in_number_and_size() {
    let schema = json!({"type": "object",
        "properties": (0..20).map(|i| (format!("p{i}"), json!({"type": "integer"})))
            .collect::<serde_json::Map<_, _>>()});
    let args: serde_json::Map<String, Value> = (0..20)
        .map(|i| (format!("p{i}"), json!("x".repeat(2_000))))
        .collect();
    let p = problems(check(&schema, &Value::Object(args)));
    assert_eq!(p.len(), MAX_PROBLEMS);
    for problem in &p {
        assert!(problem.message.chars().count() <= MAX_MESSAGE_CHARS + 1);
    }
}

#[test]
fn a_pattern_is_never_evaluated() {
    // §6, §7: a backtracking pattern with a long non-matching value would stall the host if
    // it ran; it is dropped, so the check is instant and the rest of the schema still holds.
    let schema = json!({"type": "object",
        "properties": {"s": {"type": "string", "pattern": "^(a+)+$", "maxLength": 100}}});
    let evil = format!("{}!", "a".repeat(60));
    let started = Instant::now();
    assert_eq!(check(&schema, &json!({"s": evil})), ArgCheck::Valid);
    assert!(started.elapsed() < Duration::from_secs(2));
    // A pattern the value does not match passes too: the server judges patterns.
    assert_eq!(check(&schema, &json!({"s": "zzz"})), ArgCheck::Valid);
    // What is not a pattern is still checked.
    assert_eq!(problems(check(&schema, &json!({"s": 3})))[0].path, "/s");
    // A pattern that is not even a valid regex does not matter either.
    let broken = json!({"properties": {"s": {"pattern": "(unclosed"}}});
    assert_eq!(check(&broken, &json!({"s": "x"})), ArgCheck::Valid);
}

#[test]
fn a_property_named_like_a_keyword_keeps_its_definition() {
    let schema = json!({"type": "object",
        "properties": {"pattern": {"type": "string"}, "not": {"type": "integer"}},
        "additionalProperties": false});
    assert_eq!(
        check(&schema, &json!({"pattern": "x", "not": 1})),
        ArgCheck::Valid
    );
    assert_eq!(
        problems(check(&schema, &json!({"pattern": 1})))[0].path,
        "/pattern"
    );
}

#[test]
fn pattern_properties_are_dropped_with_their_additional_properties() {
    // Dropping patternProperties alone would let additionalProperties refuse its members:
    // a stricter check than the server's. Both go.
    let schema = json!({"type": "object",
        "properties": {"a": {"type": "integer"}},
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": false});
    assert_eq!(
        check(&schema, &json!({"a": 1, "x-tag": "t"})),
        ArgCheck::Valid
    );
    assert_eq!(problems(check(&schema, &json!({"a": "no"})))[0].path, "/a");
}

#[test]
fn a_pattern_where_dropping_it_would_tighten_the_check_is_left_to_the_server() {
    for schema in [
        json!({"not": {"pattern": "^a"}}),
        json!({"oneOf": [{"type": "string", "pattern": "^a"}, {"type": "string"}]}),
        json!({"if": {"pattern": "^a"}, "then": {"minLength": 3}}),
        json!({"contains": {"pattern": "^a"}, "maxContains": 1}),
        json!({"patternProperties": {"^a": {}}, "unevaluatedProperties": false}),
        json!({"$defs": {"p": {"pattern": "^a"}}, "not": {"$ref": "#/$defs/p"}}),
    ] {
        assert_eq!(
            unchecked(check(&schema, &json!("abc"))),
            Unchecked::RegexNotDroppable,
            "{schema}"
        );
    }
    // Under anyOf, allOf and contains without maxContains, dropping only relaxes.
    let relaxed = json!({"anyOf": [{"pattern": "^a"}, {"type": "integer"}],
                         "contains": {"pattern": "^b"}});
    assert_eq!(check(&relaxed, &json!("zzz")), ArgCheck::Valid);
}

fn nested(levels: usize) -> Value {
    let mut s = json!({"type": "integer"});
    for _ in 1..levels {
        s = json!({"type": "object", "properties": {"a": s}});
    }
    s
}

fn nested_args(levels: usize) -> Value {
    let mut a = json!("not an integer");
    for _ in 1..levels {
        a = json!({ "a": a });
    }
    a
}

#[test]
fn twenty_four_levels_are_checked_and_twenty_five_are_not() {
    let p = problems(check(&nested(24), &nested_args(24)));
    assert_eq!(p[0].path, format!("/{}", vec!["a"; 23].join("/")));
    assert_eq!(
        unchecked(check(&nested(25), &nested_args(25))),
        Unchecked::TooDeep { limit: MAX_DEPTH }
    );
    // Depth is the schema's, whatever the arguments are.
    assert_eq!(
        unchecked(check(&nested(25), &json!({}))),
        Unchecked::TooDeep { limit: MAX_DEPTH }
    );
}

#[test]
fn a_self_reference_cannot_loop() {
    let schema = json!({"$ref": "#"});
    assert_eq!(
        unchecked(check(&schema, &json!(1))),
        Unchecked::TooDeep { limit: MAX_DEPTH }
    );
    // A recursive schema over shallow arguments is fine; over deep ones it is too deep.
    let tree = json!({"type": "object",
        "properties": {"v": {"type": "integer"}, "next": {"$ref": "#"}}});
    assert_eq!(
        check(&tree, &json!({"v": 1, "next": {"v": 2}})),
        ArgCheck::Valid
    );
    let mut deep = json!({"v": 0});
    for i in 1..30 {
        deep = json!({"v": i, "next": deep});
    }
    assert_eq!(
        unchecked(check(&tree, &deep)),
        Unchecked::TooDeep { limit: MAX_DEPTH }
    );
}

#[test]
fn a_huge_enum_is_left_to_the_server() {
    let entries: Vec<Value> = (0..6_000).map(|i| json!(format!("m{i}"))).collect();
    let schema = json!({"properties": {"move": {"enum": entries}}});
    let started = Instant::now();
    assert_eq!(
        unchecked(check(&schema, &json!({"move": "m1"}))),
        Unchecked::TooManySteps { limit: MAX_STEPS }
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    // An enum only counts when the value reaches it.
    assert_eq!(check(&schema, &json!({})), ArgCheck::Valid);
    // A board's worth of moves (361) is checked.
    let board: Vec<Value> = (0..361).map(|i| json!(format!("m{i}"))).collect();
    let schema = json!({"properties": {"move": {"enum": board}}});
    assert_eq!(
        unchecked(check(&schema, &json!({"move": "x"}))),
        Unchecked::OutsideEnum
    );
    assert!(matches!(
        check(&schema, &json!({"move": 3})),
        ArgCheck::Unchecked(Unchecked::OutsideEnum)
    ));
    let typed = json!({"properties": {"move": {"type": "string", "enum": board}}});
    assert!(matches!(
        check(&typed, &json!({"move": 3})),
        ArgCheck::Invalid(_)
    ));
}

/// Issue #36, item 14 (§6 **\[project\]**): a value outside an `enum`, and nothing else
/// wrong, is left to the server, which says why (`E5` is taken) or reads it (`e4`).
#[test]
fn a_value_outside_an_enum_alone_is_left_to_the_server_which_says_why() {
    for mv in ["E5", "e4", ""] {
        assert_eq!(
            unchecked(check(&play_schema(), &json!({"move": mv}))),
            Unchecked::OutsideEnum,
            "{mv}"
        );
    }
    // Under `not` an enum that matches is that keyword's problem: still refused.
    let negated = json!({"properties": {"move": {"not": {"enum": ["E5"]}}}});
    assert!(matches!(
        check(&negated, &json!({"move": "E5"})),
        ArgCheck::Invalid(_)
    ));
    // Under `anyOf`, all branches failing is `anyOf`'s problem: still refused.
    let any = json!({"properties": {"move": {"anyOf": [{"enum": ["a"]}, {"type": "integer"}]}}});
    assert!(matches!(
        check(&any, &json!({"move": "b"})),
        ArgCheck::Invalid(_)
    ));
}

#[test]
fn an_any_of_fan_out_through_references_is_left_to_the_server() {
    // Ten levels of ten-way anyOf through shared definitions: small to look at (about 100
    // nodes), 10^10 visits to check. The walk stops at the budget.
    let mut defs = serde_json::Map::new();
    for level in 0..10 {
        let next = format!("#/$defs/l{}", level + 1);
        let branches: Vec<Value> = (0..10).map(|_| json!({"$ref": next})).collect();
        defs.insert(format!("l{level}"), json!({"anyOf": branches}));
    }
    defs.insert("l10".into(), json!({"type": "string"}));
    let schema = json!({"$defs": defs, "$ref": "#/$defs/l0"});
    let started = Instant::now();
    assert_eq!(
        unchecked(check(&schema, &json!("x"))),
        Unchecked::TooManySteps { limit: MAX_STEPS }
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_wide_schema_is_left_to_the_server() {
    let props: serde_json::Map<String, Value> = (0..6_000)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect();
    let schema = json!({"properties": props});
    assert_eq!(
        unchecked(check(&schema, &json!({}))),
        Unchecked::TooManySteps { limit: MAX_STEPS }
    );
}

#[test]
fn huge_arguments_against_a_small_schema_are_left_to_the_server() {
    let schema = json!({"type": "array", "items": {"type": "integer"}});
    let args = Value::Array((0..10_000).map(|i| json!(i)).collect());
    assert_eq!(
        unchecked(check(&schema, &args)),
        Unchecked::TooManySteps { limit: MAX_STEPS }
    );
}

#[test]
fn the_estimate_counts_nodes_and_enum_entries() {
    let l = CheckLimits::default();
    // Four schema nodes (root, move, note, `additionalProperties: false`). The walk: the
    // root (1), its required entry (1) and properties (2), move (1) and its 3 enum entries,
    // and additionalProperties over the one member (1 charged, 1 visit).
    assert_eq!(
        estimate(&play_schema(), &json!({"move": "D4"}), &l),
        Ok(4 + 1 + 1 + 2 + 1 + 3 + 2)
    );
}

#[test]
fn references_outside_the_schema_are_not_resolved() {
    for r in [
        "https://example.com/schema.json",
        "other.json#/a",
        "#/$defs/missing",
        "#%zz",
    ] {
        let schema = json!({"$defs": {"a": {}}, "$ref": r});
        assert!(
            matches!(
                unchecked(check(&schema, &json!(1))),
                Unchecked::UnresolvableRef { .. }
            ),
            "{r}"
        );
    }
    let scoped = json!({"$defs": {"a": {"$id": "https://x/a.json", "type": "string"}},
                        "properties": {"p": {"$ref": "#/$defs/a"}}});
    assert!(matches!(
        unchecked(check(&scoped, &json!({"p": 1}))),
        Unchecked::UnresolvableRef { .. }
    ));
    assert_eq!(
        unchecked(check(&json!({"$dynamicRef": "#x"}), &json!(1))),
        Unchecked::DynamicRef
    );
}

/// §6, §7: a reference into a member no keyword makes a subschema (the issue's
/// `x-defs`) reaches what the host never stripped of its regexes; the check is left to the
/// server, whether or not the arguments reach the reference.
#[test]
fn boundary_02_a_reference_outside_the_known_keywords_is_left_to_the_server() {
    let schema = json!({"x-defs": {"m": {"type": "string", "pattern": "^[a-c]+$"}},
                        "properties": {"move": {"$ref": "#/x-defs/m"}}});
    for args in [json!({"move": "zzz"}), json!({"move": "abc"}), json!({})] {
        assert!(
            matches!(
                unchecked(check(&schema, &args)),
                Unchecked::RefOutsideSchemas { .. }
            ),
            "{args}"
        );
    }
    // An anchor there is never found, so it is not followed either.
    let anchored = json!({"x-defs": {"m": {"$anchor": "m", "pattern": "^a$"}},
                          "properties": {"move": {"$ref": "#m"}}});
    assert!(matches!(
        unchecked(check(&anchored, &json!({"move": "b"}))),
        Unchecked::UnresolvableRef { .. }
    ));
    // The same definition under `$defs` is a subschema: stripped, and checked.
    let known = json!({"$defs": {"m": {"type": "string", "pattern": "^[a-c]+$"}},
                       "properties": {"move": {"$ref": "#/$defs/m"}}});
    assert_eq!(check(&known, &json!({"move": "zzz"})), ArgCheck::Valid);
    assert!(matches!(
        check(&known, &json!({"move": 3})),
        ArgCheck::Invalid(_)
    ));
}

#[test]
fn references_within_the_schema_are_followed() {
    let schema = json!({"$defs": {"pt": {"type": "string", "minLength": 2}},
        "properties": {"a": {"$ref": "#/$defs/pt"}, "b": {"$ref": "#pt2"}},
        "definitions": {"x": {"$anchor": "pt2", "type": "integer"}}});
    assert_eq!(check(&schema, &json!({"a": "D4", "b": 3})), ArgCheck::Valid);
    let p = problems(check(&schema, &json!({"a": "D", "b": "x"})));
    let paths: Vec<&str> = p.iter().map(|p| p.path.as_str()).collect();
    assert!(paths.contains(&"/a") && paths.contains(&"/b"), "{paths:?}");
}

#[test]
fn a_schema_that_does_not_compile_is_left_to_the_server() {
    for schema in [
        json!({"type": 12}),
        json!({"$schema": "https://example.com/unknown-draft", "type": "object"}),
        json!({"minLength": "three"}),
    ] {
        assert!(
            matches!(
                unchecked(check(&schema, &json!({}))),
                Unchecked::DoesNotCompile { .. }
            ),
            "{schema}"
        );
    }
}

#[test]
fn formats_are_not_asserted() {
    let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#",
                        "properties": {"r": {"type": "string", "format": "regex"},
                                       "e": {"type": "string", "format": "email"}}});
    assert_eq!(
        check(&schema, &json!({"r": "(a+)+(", "e": "nope"})),
        ArgCheck::Valid
    );
}

#[test]
fn draft_seven_tuples_and_dependencies_are_checked() {
    let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"at": {"type": "array", "items": [{"type": "integer"}, {"type": "integer"}],
                              "additionalItems": false}},
        "dependencies": {"at": ["size"], "size": {"required": ["at"]}}});
    assert_eq!(
        check(&schema, &json!({"at": [3, 4], "size": 9})),
        ArgCheck::Valid
    );
    assert!(matches!(
        check(&schema, &json!({"at": [3, 4, 5], "size": 9})),
        ArgCheck::Invalid(_)
    ));
    assert!(matches!(
        check(&schema, &json!({"size": 9})),
        ArgCheck::Invalid(_)
    ));
}

/// Arbitrary JSON, biased towards schema keywords.
fn arb_json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("type".to_owned()),
        Just("properties".to_owned()),
        Just("items".to_owned()),
        Just("prefixItems".to_owned()),
        Just("anyOf".to_owned()),
        Just("oneOf".to_owned()),
        Just("allOf".to_owned()),
        Just("not".to_owned()),
        Just("if".to_owned()),
        Just("then".to_owned()),
        Just("enum".to_owned()),
        Just("const".to_owned()),
        Just("$ref".to_owned()),
        Just("$defs".to_owned()),
        Just("$id".to_owned()),
        Just("$anchor".to_owned()),
        Just("pattern".to_owned()),
        Just("patternProperties".to_owned()),
        Just("additionalProperties".to_owned()),
        Just("unevaluatedProperties".to_owned()),
        Just("required".to_owned()),
        Just("minimum".to_owned()),
        Just("multipleOf".to_owned()),
        Just("maxLength".to_owned()),
        Just("uniqueItems".to_owned()),
        Just("contains".to_owned()),
        Just("dependencies".to_owned()),
        Just("format".to_owned()),
        Just("$schema".to_owned()),
        "[a-z#/$]{0,6}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        prop_oneof![
            Just("#".to_owned()),
            Just("#/$defs/a".to_owned()),
            Just("string".to_owned()),
            Just("object".to_owned()),
            Just("integer".to_owned()),
            Just("^(a+)+$".to_owned()),
            Just("http://json-schema.org/draft-07/schema#".to_owned()),
            "\\PC{0,8}",
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Never panics, whatever the schema and arguments; what it says is coherent.
    #[test]
    fn never_panics_on_arbitrary_schemas_and_args(schema in arb_json(), args in arb_json()) {
        match check(&schema, &args) {
            ArgCheck::Invalid(p) => {
                prop_assert!(!p.is_empty() && p.len() <= MAX_PROBLEMS);
            }
            ArgCheck::Valid | ArgCheck::Unchecked(_) => {}
        }
        if let Ok(steps) = estimate(&schema, &args, &CheckLimits::default()) {
            prop_assert!(steps <= MAX_STEPS);
        }
    }

    /// Tighter limits never turn an unchecked schema into a checked one.
    #[test]
    fn tighter_limits_only_check_less(schema in arb_json(), args in arb_json()) {
        let tight = CheckLimits { max_depth: 3, max_steps: 20, ..CheckLimits::default() };
        if estimate(&schema, &args, &CheckLimits::default()).is_err() {
            prop_assert!(estimate(&schema, &args, &tight).is_err());
        }
    }
}

//! The structural pass over a schema (not following `$ref`): depth, node count, and what
//! the later passes must know. Knows which keywords hold subschemas, so a property *named*
//! `pattern` or `not` is never mistaken for the keyword.

use super::{CheckLimits, Unchecked};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// Keywords whose value is one subschema (`items` also takes the array form, draft ≤ 2019-09).
pub(super) const ONE: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "items",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
];

/// Keywords whose value is an array of subschemas.
pub(super) const MANY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Keywords whose value is a map of subschemas (`dependencies` only where a value is not
/// an array of names).
pub(super) const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// Every subschema directly inside a schema object, with the keyword holding it.
pub(super) fn children(obj: &Map<String, Value>) -> Vec<(&str, &Value)> {
    let mut out = Vec::new();
    for (k, v) in obj {
        let k = k.as_str();
        if ONE.contains(&k) && (v.is_object() || v.is_boolean()) {
            out.push((k, v));
        }
        if MANY.contains(&k)
            && let Value::Array(a) = v
        {
            out.extend(a.iter().map(|s| (k, s)));
        }
        if MAP.contains(&k)
            && let Value::Object(m) = v
        {
            out.extend(m.values().filter(|s| !s.is_array()).map(|s| (k, s)));
        }
    }
    out
}

/// What the scan found.
#[derive(Debug, Default)]
pub(super) struct Scanned<'a> {
    /// Schema nodes (each is visited once by compiling).
    pub nodes: usize,
    /// A `pattern` or `patternProperties` somewhere.
    pub regex: bool,
    /// One where dropping it could make the check stricter.
    pub regex_negated: bool,
    /// `patternProperties` somewhere.
    pub pattern_properties: bool,
    /// `unevaluatedProperties` somewhere.
    pub unevaluated_properties: bool,
    /// A keyword under which relaxing a subschema can make the whole stricter.
    pub non_monotone: bool,
    /// A `$ref` somewhere.
    pub refs: bool,
    /// `$dynamicRef` or `$recursiveRef` somewhere.
    pub dynamic_refs: bool,
    /// A `$id` below the root that changes how references resolve.
    pub nested_id: bool,
    /// Plain-name fragments (`$anchor`, or `$id: "#name"`), for `$ref: "#name"`.
    pub anchors: HashMap<&'a str, &'a Value>,
    /// The root, for `#` references.
    pub root: Option<&'a Value>,
    /// Every `$ref` value, wherever it sits.
    pub ref_values: Vec<&'a Value>,
    /// The address of every schema node visited: the positions `strip` copies without
    /// their regexes. A `$ref` to anything else is left to the server (§6).
    pub schema_nodes: HashSet<*const Value>,
}

impl<'a> Scanned<'a> {
    /// Resolves a `$ref` within the schema — `#`, `#/json/pointer` or `#name` — to a
    /// subschema position this scan visited. A reference elsewhere (`#/x-defs/m`: a member
    /// no keyword makes a subschema) would have the validator use what the host never
    /// stripped of its `pattern`s, so it is [`Unchecked::RefOutsideSchemas`] (§6: the host
    /// never runs a server's regex).
    pub(super) fn resolve(&self, r: &Value) -> Result<&'a Value, Unchecked> {
        let reference = || super::limits::cut(&r.to_string(), 120);
        let unresolvable = || Unchecked::UnresolvableRef {
            reference: reference(),
        };
        let Value::String(r) = r else {
            return Err(unresolvable());
        };
        let root = self.root.ok_or_else(unresolvable)?;
        if self.nested_id {
            return Err(unresolvable());
        }
        let Some(fragment) = r.strip_prefix('#') else {
            return Err(unresolvable());
        };
        let fragment = percent_decode(fragment).ok_or_else(unresolvable)?;
        let target = if fragment.is_empty() {
            Some(root)
        } else if fragment.starts_with('/') {
            root.pointer(&fragment)
        } else {
            self.anchors.get(fragment.as_str()).copied()
        }
        .ok_or_else(unresolvable)?;
        if !self.schema_nodes.contains(&(target as *const Value)) {
            return Err(Unchecked::RefOutsideSchemas {
                reference: reference(),
            });
        }
        Ok(target)
    }
}

/// Scans `schema`, failing as soon as it is too deep or too large.
pub(super) fn scan<'a>(schema: &'a Value, limits: &CheckLimits) -> Result<Scanned<'a>, Unchecked> {
    let mut s = Scanned {
        root: Some(schema),
        ..Default::default()
    };
    visit(&mut s, schema, 1, false, limits)?;
    Ok(s)
}

fn visit<'a>(
    s: &mut Scanned<'a>,
    schema: &'a Value,
    level: usize,
    negated: bool,
    limits: &CheckLimits,
) -> Result<(), Unchecked> {
    if level > limits.max_depth {
        return Err(Unchecked::TooDeep {
            limit: limits.max_depth,
        });
    }
    s.nodes += 1;
    s.schema_nodes.insert(schema as *const Value);
    if s.nodes > limits.max_steps {
        return Err(Unchecked::TooManySteps {
            limit: limits.max_steps,
        });
    }
    let Value::Object(obj) = schema else {
        return Ok(());
    };
    let has_pattern = obj.get("pattern").is_some_and(Value::is_string);
    let has_pattern_props = obj.contains_key("patternProperties");
    if has_pattern || has_pattern_props {
        s.regex = true;
        s.regex_negated |= negated;
    }
    s.pattern_properties |= has_pattern_props;
    s.unevaluated_properties |= obj.contains_key("unevaluatedProperties");
    if let Some(r) = obj.get("$ref") {
        s.refs = true;
        s.ref_values.push(r);
    }
    s.dynamic_refs |= obj.contains_key("$dynamicRef") || obj.contains_key("$recursiveRef");
    if let Some(Value::String(id)) = obj.get("$id") {
        match id.strip_prefix('#') {
            Some(name) if !name.is_empty() => {
                s.anchors.insert(name, schema);
            }
            _ if level > 1 => s.nested_id = true,
            _ => {}
        }
    }
    if let Some(Value::String(a)) = obj.get("$anchor") {
        s.anchors.insert(a.as_str(), schema);
    }
    let bounded_contains = obj.contains_key("maxContains");
    for (keyword, child) in children(obj) {
        // §6: dropping a regex relaxes its subschema; under these keywords a relaxed
        // subschema can make the whole check stricter than the server's.
        let flips = matches!(keyword, "not" | "if" | "oneOf")
            || (keyword == "contains" && bounded_contains);
        s.non_monotone |= flips;
        visit(s, child, level + 1, negated || flips, limits)?;
    }
    Ok(())
}

/// Decodes `%XX` escapes in a URI fragment; None when malformed or not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

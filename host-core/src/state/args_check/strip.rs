//! A copy of a schema without the keywords that would run a server's regex (§6: `pattern`
//! is never evaluated by the host). Only schema positions are touched: a property *named*
//! `pattern` keeps its definition. The scan has already refused schemas where dropping a
//! regex could make the check stricter, and bounded the depth this recursion reaches.

use super::scan::{MANY, MAP, ONE};
use serde_json::{Map, Value};

/// `schema` without `pattern` and `patternProperties` (and without `additionalProperties`
/// beside a dropped `patternProperties`, which would otherwise judge its members too).
pub(super) fn strip(schema: &Value) -> Value {
    let Value::Object(obj) = schema else {
        return schema.clone();
    };
    let drops_pattern_props = obj.contains_key("patternProperties");
    let mut out = Map::new();
    for (k, v) in obj {
        let key = k.as_str();
        let copy = match (key, v) {
            ("pattern", Value::String(_)) | ("patternProperties", _) => continue,
            ("additionalProperties", _) if drops_pattern_props => continue,
            (_, Value::Object(_) | Value::Bool(_)) if ONE.contains(&key) => strip(v),
            (_, Value::Array(a)) if MANY.contains(&key) => {
                Value::Array(a.iter().map(strip).collect())
            }
            (_, Value::Object(m)) if MAP.contains(&key) => Value::Object(
                m.iter()
                    .map(|(name, s)| {
                        let s = if s.is_array() { s.clone() } else { strip(s) };
                        (name.clone(), s)
                    })
                    .collect(),
            ),
            _ => v.clone(),
        };
        out.insert(k.clone(), copy);
    }
    Value::Object(out)
}

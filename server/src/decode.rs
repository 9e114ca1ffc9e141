//! Typed decoding of JSON a peer wrote, with JSON's numbers read as JSON means them.
//!
//! RFC 8259 has one number type: `9.0` and `9` are the same number, and a JSON Schema
//! `"type": "integer"` (or `"enum": [9, 13, 19]`) accepts both. serde reads `9.0` as a
//! float and refuses it for a `u32`, so an argument or option that the declared schema
//! accepts — and that a host may have checked against that schema before sending — would
//! be refused by the typed decode behind it (issue #36, item 11). [`from_json`] closes that
//! gap: every number with no fractional part that fits an integer is read as that integer
//! first. A float field still takes it (serde reads an integer into `f32`/`f64`), so
//! nothing that decoded before stops decoding.
//!
//! The SDK decodes tool arguments ([`ToolCall::args`](crate::ToolCall::args), typed
//! handlers) and open options ([`Opening::options_as`](crate::Opening::options_as)) this
//! way; an author decoding JSON of its own can call [`from_json`].

use serde::de::DeserializeOwned;
use serde_json::{Number, Value};

/// Decodes `value` as `T`, reading a whole number written with a fraction or an exponent
/// (`9.0`, `1e2`) as the integer it is (module docs).
pub fn from_json<T: DeserializeOwned>(mut value: Value) -> Result<T, serde_json::Error> {
    integral_numbers(&mut value);
    serde_json::from_value(value)
}

/// Rewrites, in place, every float in `value` that is a whole number within `i64`/`u64`
/// as that integer. Iterative: a value's depth is whatever its builder made it. The stack
/// starts empty, so arguments with nothing nested (`{}`, a few scalars) cost no allocation
/// (issue #42: one for every call of every tool).
fn integral_numbers(value: &mut Value) {
    let mut stack: Vec<&mut Value> = Vec::new();
    let mut next = Some(value);
    while let Some(v) = next.take().or_else(|| stack.pop()) {
        match v {
            Value::Number(n) => {
                if let Some(i) = n.as_f64().filter(|_| n.is_f64()).and_then(integer) {
                    *n = i;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(members) => stack.extend(members.values_mut()),
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
}

/// `f` as an integer, when it is a whole number that one holds exactly.
fn integer(f: f64) -> Option<Number> {
    // 2^64 and -2^63 are exact in an f64; every f64 between them with no fraction is an
    // integer the cast holds exactly.
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    const MINUS_TWO_63: f64 = -9_223_372_036_854_775_808.0;
    if f.fract() != 0.0 || !f.is_finite() {
        return None;
    }
    if (0.0..TWO_64).contains(&f) {
        Some(Number::from(f as u64))
    } else if (MINUS_TWO_63..0.0).contains(&f) {
        Some(Number::from(f as i64))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Opts {
        size: u32,
        komi: f32,
        offset: Option<i64>,
        sizes: Vec<u8>,
    }

    #[test]
    fn whole_floats_decode_as_integers_and_floats_still_take_them() {
        let o: Opts =
            from_json(json!({"size": 9.0, "komi": 7.0, "offset": -3.0, "sizes": [9.0, 1.3e1, 19]}))
                .unwrap();
        assert_eq!(
            o,
            Opts {
                size: 9,
                komi: 7.0,
                offset: Some(-3),
                sizes: vec![9, 13, 19]
            }
        );
        let o: Opts = from_json(json!({"size": 9, "komi": 6.5, "sizes": []})).unwrap();
        assert_eq!((o.size, o.komi), (9, 6.5));
    }

    #[test]
    fn a_fraction_or_an_integer_out_of_range_is_still_refused() {
        assert!(from_json::<Opts>(json!({"size": 9.5, "komi": 0, "sizes": []})).is_err());
        assert!(from_json::<Opts>(json!({"size": -1.0, "komi": 0, "sizes": []})).is_err());
        assert!(from_json::<Opts>(json!({"size": 1e10, "komi": 0, "sizes": []})).is_err());
        // Past u64: left a float, and refused as one.
        assert!(from_json::<u64>(json!(1e20)).is_err());
        assert_eq!(
            from_json::<u64>(json!(1.8e19)).unwrap(),
            18_000_000_000_000_000_000
        );
        assert_eq!(
            from_json::<i64>(json!(-9.2e18)).unwrap(),
            -9_200_000_000_000_000_000
        );
    }
}

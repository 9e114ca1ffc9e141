//! The `_meta` object (MCP) and the keys RFC-014 puts in it (spec §3, §4.5, §5.2).
//!
//! One struct serves every position `_meta` appears in: MCP reserves it on every request's
//! params, every notification's params and every result, and each typed params or result
//! in this crate carries one (most as `Option<Meta>`, left out when empty). Each position
//! uses a subset of RFC-014's keys:
//!
//! | key | where | spec |
//! |---|---|---|
//! | `mcpl/presence`, `mcpl/visible`, `mcpl/toolset` | a tool in `tools/list` | §3 |
//! | `mcpl/rev` | the `tools/list` result | §3 |
//! | `mcpl/hints` | results of `tools/call`, `toolsets/open|close|list` | §5.2 |
//! | `mcpl/instance` | `tools/call` params | §4.5 |
//! | `progressToken` (MCP, kept in [`Meta::other`]) | any request's params | MCP "Progress" |
//!
//! Keys this crate does not know are kept in [`Meta::other`] so nothing a peer sent is lost.

use crate::hints::{HintChanges, Presence};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The key of a tool's presence hint.
pub const PRESENCE: &str = "mcpl/presence";
/// The key of a tool's visibility hint.
pub const VISIBLE: &str = "mcpl/visible";
/// The key of a tool's toolset.
pub const TOOLSET: &str = "mcpl/toolset";
/// The key of the last rev taken, on a `tools/list` result.
pub const REV: &str = "mcpl/rev";
/// The key of hint changes on a result.
pub const HINTS: &str = "mcpl/hints";
/// The key naming the instance a call is for.
pub const INSTANCE: &str = "mcpl/instance";

/// The largest integer a JSON number written with a fraction or exponent (`1.0`, `1e3`)
/// is read as: 2^53, past which a double no longer holds every integer exactly.
const EXACT_DOUBLE: f64 = 9_007_199_254_740_992.0;

/// A counter a peer sent (a rev, `mcpl/rev`): a JSON number that is an exact non-negative
/// integer, however it is written. RFC 8259 §6: `1.0`, `1e0` and `1` are one number, and a
/// peer that keeps numbers as doubles writes the first. `1.5`, `-1`, `1e300` (not exactly
/// an integer a double holds) and anything but a number are `None`.
pub fn read_count(v: &Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let f = v.as_f64().filter(|_| v.is_f64())?;
    (f >= 0.0 && f.fract() == 0.0 && f <= EXACT_DOUBLE).then_some(f as u64)
}

/// [`read_count`] as a serde field decoder (`#[serde(deserialize_with = "…")]`), for the
/// counters of typed params a peer sends.
pub fn deserialize_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let v = Value::deserialize(d)?;
    read_count(&v).ok_or_else(|| {
        serde::de::Error::custom(format!("expected a non-negative integer, got {v}"))
    })
}

/// An MCP `_meta` object with RFC-014's keys typed.
///
/// Read liberally: a key whose value does not decode (a `mcpl/visible` of `"yes"`, a
/// `mcpl/hints` without a rev) stays, as sent, in [`Meta::other`] under its own name, so
/// the message around it is never refused for it and a reader can still tell it was there
/// (a host that finds `mcpl/hints` in `other` knows a change may have been lost, §5.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Meta {
    /// `mcpl/presence` on a tool.
    #[serde(
        rename = "mcpl/presence",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub presence: Option<Presence>,
    /// `mcpl/visible` on a tool.
    #[serde(
        rename = "mcpl/visible",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub visible: Option<bool>,
    /// `mcpl/toolset` on a tool.
    #[serde(
        rename = "mcpl/toolset",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub toolset: Option<String>,
    /// `mcpl/rev` on a `tools/list` result.
    #[serde(rename = "mcpl/rev", default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<u64>,
    /// `mcpl/hints` on a result.
    #[serde(
        rename = "mcpl/hints",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub hints: Option<HintChanges>,
    /// `mcpl/instance` on `tools/call` params.
    #[serde(
        rename = "mcpl/instance",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub instance: Option<String>,
    /// Every other key, kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl From<Map<String, Value>> for Meta {
    fn from(map: Map<String, Value>) -> Self {
        let mut meta = Meta::default();
        for (key, value) in map {
            meta.read_member(key, value);
        }
        meta
    }
}

/// Read member by member, straight from the input: no intermediate map is built (a
/// `tools/list` of thousands of tools carries one `_meta` per tool). A member read twice
/// counts as its last reading, as in a map.
impl<'de> Deserialize<'de> for Meta {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MetaVisitor;
        impl<'de> serde::de::Visitor<'de> for MetaVisitor {
            type Value = Meta;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a _meta object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Meta, A::Error> {
                let mut meta = Meta::default();
                while let Some((key, value)) = map.next_entry::<String, Value>()? {
                    meta.read_member(key, value);
                }
                Ok(meta)
            }
        }
        d.deserialize_map(MetaVisitor)
    }
}

impl Meta {
    /// Takes one member as read: a key of RFC-014's whose value decodes is typed (and
    /// leaves [`Meta::other`]); any other member, or one that does not decode, is kept in
    /// `other` as sent (and the typed field is unset).
    fn read_member(&mut self, key: String, value: Value) {
        fn typed<T: serde::de::DeserializeOwned>(
            slot: &mut Option<T>,
            other: &mut Map<String, Value>,
            key: String,
            value: Value,
        ) {
            match T::deserialize(&value) {
                Ok(t) => {
                    *slot = Some(t);
                    other.remove(&key);
                }
                Err(_) => {
                    *slot = None;
                    other.insert(key, value);
                }
            }
        }
        let other = &mut self.other;
        match key.as_str() {
            PRESENCE => typed(&mut self.presence, other, key, value),
            VISIBLE => typed(&mut self.visible, other, key, value),
            TOOLSET => typed(&mut self.toolset, other, key, value),
            // Not `typed`: a rev written `1.0` is the rev 1 (RFC 8259).
            REV => match read_count(&value) {
                Some(rev) => {
                    self.rev = Some(rev);
                    other.remove(&key);
                }
                None => {
                    self.rev = None;
                    other.insert(key, value);
                }
            },
            HINTS => typed(&mut self.hints, other, key, value),
            INSTANCE => typed(&mut self.instance, other, key, value),
            _ => {
                other.insert(key, value);
            }
        }
    }

    /// True when `key` was sent but could not be read (it is kept in [`Meta::other`]).
    pub fn unreadable(&self, key: &str) -> bool {
        self.other.contains_key(key)
    }

    /// True when nothing is set (so a `_meta` can be left out).
    pub fn is_empty(&self) -> bool {
        self.presence.is_none()
            && self.visible.is_none()
            && self.toolset.is_none()
            && self.rev.is_none()
            && self.hints.is_none()
            && self.instance.is_none()
            && self.other.is_empty()
    }

    /// A `_meta` carrying only hint changes.
    pub fn with_hints(hints: HintChanges) -> Self {
        Meta {
            hints: Some(hints),
            ..Default::default()
        }
    }

    /// A `_meta` naming only an instance.
    pub fn with_instance(instance: impl Into<String>) -> Self {
        Meta {
            instance: Some(instance.into()),
            ..Default::default()
        }
    }

    /// The presence this tool's hints give it: `mcpl/toolset` implies dynamic, whatever
    /// `mcpl/presence` says (§3, vector 16); absent means static.
    pub fn effective_presence(&self) -> Presence {
        if self.toolset.is_some() {
            Presence::Dynamic
        } else {
            self.presence.unwrap_or(Presence::Static)
        }
    }

    /// The visibility this tool's hints give it: absent means visible (§3).
    pub fn effective_visible(&self) -> bool {
        self.visible.unwrap_or(true)
    }
}

/// Serde helper: skip an `Option<Meta>` that is absent or empty.
pub(crate) fn is_none_or_empty(m: &Option<Meta>) -> bool {
    m.as_ref().is_none_or(Meta::is_empty)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn toolset_implies_dynamic_even_when_static_is_said() {
        let m: Meta =
            serde_json::from_value(json!({"mcpl/toolset": "game", "mcpl/presence": "static"}))
                .unwrap();
        assert_eq!(m.effective_presence(), Presence::Dynamic);
        let m: Meta = serde_json::from_value(json!({})).unwrap();
        assert_eq!(m.effective_presence(), Presence::Static);
        assert!(m.effective_visible());
    }

    #[test]
    fn a_key_that_does_not_decode_is_kept_as_sent() {
        let v = json!({"mcpl/visible": "yes", "mcpl/hints": {"tools": []}, "mcpl/rev": 3});
        let m: Meta = serde_json::from_value(v.clone()).unwrap();
        assert_eq!((m.visible, m.rev), (None, Some(3)));
        assert!(m.hints.is_none() && m.unreadable(HINTS) && m.unreadable(VISIBLE));
        assert_eq!(serde_json::to_value(&m).unwrap(), v);
    }

    #[test]
    fn unknown_keys_are_kept() {
        let v = json!({"mcpl/visible": false, "vendor/x": {"a": 1}});
        let m: Meta = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(m.visible, Some(false));
        assert_eq!(serde_json::to_value(&m).unwrap(), v);
    }

    #[test]
    fn a_count_is_an_exact_non_negative_integer_however_written() {
        for (text, want) in [
            ("1", Some(1)),
            ("1.0", Some(1)),
            ("1e0", Some(1)),
            ("0.0", Some(0)),
            ("-0.0", Some(0)),
            ("9007199254740992.0", Some(9_007_199_254_740_992)),
            ("18446744073709551615", Some(u64::MAX)),
            ("1.5", None),
            ("-1", None),
            ("-1.0", None),
            ("1e300", None),
            ("\"1\"", None),
            ("true", None),
        ] {
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(read_count(&v), want, "{text}");
        }
        let m: Meta = serde_json::from_str(r#"{"mcpl/rev": 4.0}"#).unwrap();
        assert_eq!((m.rev, m.unreadable(REV)), (Some(4), false));
        let m: Meta = serde_json::from_str(r#"{"mcpl/rev": 4.5}"#).unwrap();
        assert_eq!((m.rev, m.unreadable(REV)), (None, true));
    }

    #[test]
    fn read_from_text_as_from_a_map_and_a_repeated_key_counts_as_its_last_reading() {
        let texts = [
            r#"{"mcpl/toolset": "go", "mcpl/visible": "yes", "x": [1]}"#,
            r#"{"mcpl/visible": true, "mcpl/visible": "no"}"#,
            r#"{"mcpl/visible": "no", "mcpl/visible": true}"#,
            r#"{"mcpl/rev": -1, "mcpl/instance": "g1", "progressToken": 7}"#,
        ];
        for text in texts {
            let direct: Meta = serde_json::from_str(text).unwrap();
            let map: Map<String, Value> = serde_json::from_str(text).unwrap();
            assert_eq!(direct, Meta::from(map), "{text}");
        }
        let last: Meta = serde_json::from_str(texts[2]).unwrap();
        assert_eq!(last.visible, Some(true));
        assert!(!last.unreadable(VISIBLE));
        assert!(serde_json::from_str::<Meta>("[1]").is_err(), "an object");
    }
}

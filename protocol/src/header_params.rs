//! Tool parameters mirrored into HTTP headers (MCP 2026-07-28, SEP-2243:
//! `basic/transports/streamable-http.md` "Custom Headers from Tool Parameters",
//! `server/tools.md` "x-mcp-header"). Pure: schemas and values in, headers or verdicts out.
//!
//! A tool's `inputSchema` may mark a property with `"x-mcp-header": "Region"`; a client on
//! Streamable HTTP then sends that argument's value as `Mcp-Param-Region`, and a server
//! checks the header against the body. This module holds both halves' rules:
//!
//! | function | rule |
//! |---|---|
//! | [`header_params`] | which properties a schema marks, and whether the marks are valid ("Schema Extension": a client MUST leave out a tool whose marks are not) |
//! | [`encode_value`] | an argument's header value ("Value Encoding": strings as they are, integers in decimal, booleans in lowercase, `=?base64?…?=` where plain ASCII cannot carry it) |
//! | [`decode_value`] | a header value as sent, decoded; invalid characters refused (a server MUST reject them) |
//! | [`matches()`] | a decoded header against the body's value (integers compared as numbers) |
//!
//! The same encoding carries `Mcp-Name` ([`encode_text`], [`decode_value`]).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

/// The annotation's key in a property's schema.
pub const ANNOTATION: &str = "x-mcp-header";
/// What the header's name starts with: `Mcp-Param-{name}`.
pub const HEADER_PREFIX: &str = "Mcp-Param-";
/// The largest integer a header may carry (JavaScript's safe range, 2^53 − 1).
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// One property a tool's schema marks to be mirrored into a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The name part, as the schema writes it (`Region` for `Mcp-Param-Region`).
    pub name: String,
    /// The chain of `properties` keys from the schema's root to the property.
    pub path: Vec<String>,
}

impl HeaderParam {
    /// The header's full name, `Mcp-Param-{name}`.
    pub fn header(&self) -> String {
        format!("{HEADER_PREFIX}{}", self.name)
    }

    /// The argument this header mirrors in `arguments` (the call's `params.arguments`):
    /// the value at the property's path, `None` when there is none there.
    pub fn value_in<'a>(&self, arguments: &'a Value) -> Option<&'a Value> {
        self.path
            .iter()
            .try_fold(arguments, |at, key| at.as_object()?.get(key))
    }
}

/// Why a schema's `x-mcp-header` marks are invalid: the whole tool definition is, and a
/// client on Streamable HTTP leaves the tool out of its list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidHeaderParam {
    /// The mark's value is not a string.
    #[error("x-mcp-header at {0} is not a string")]
    NotAString(String),
    /// The mark's value is empty or not an HTTP field-name token.
    #[error("x-mcp-header {name:?} at {at} is not an HTTP header name token")]
    NotAToken {
        /// The value.
        name: String,
        /// Where it is.
        at: String,
    },
    /// Two marks differ only in case.
    #[error("x-mcp-header {0:?} is used twice (names are compared without case)")]
    Duplicate(String),
    /// The marked property is not of type `string`, `integer` or `boolean`.
    #[error("x-mcp-header {name:?} marks a property whose type is not string, integer or boolean")]
    NotPrimitive {
        /// The mark's value.
        name: String,
    },
    /// A mark where no chain of `properties` keys from the root reaches (under `items`,
    /// `anyOf`, `$ref`'s target, the root itself, …).
    #[error("x-mcp-header at {0} is not on a property reachable through properties alone")]
    Unreachable(String),
}

/// The header parameters `input_schema` marks, in the order its properties are written,
/// or why its marks make the tool definition invalid (module docs).
pub fn header_params(input_schema: &Value) -> Result<Vec<HeaderParam>, InvalidHeaderParam> {
    let mut found = Vec::new();
    let mut path = Vec::new();
    reachable(input_schema, &mut path, &mut found)?;
    let mut everywhere = Vec::new();
    all_marks(input_schema, "#", &mut everywhere);
    if everywhere.len() != found.len() {
        let reached: Vec<String> = found.iter().map(|(_, at)| at.clone()).collect();
        let stray = everywhere
            .into_iter()
            .find(|at| !reached.contains(at))
            .unwrap_or_else(|| "#".to_owned());
        return Err(InvalidHeaderParam::Unreachable(stray));
    }
    let mut seen: Vec<String> = Vec::new();
    let mut params = Vec::with_capacity(found.len());
    for (param, _) in found {
        let folded = param.name.to_ascii_lowercase();
        if seen.contains(&folded) {
            return Err(InvalidHeaderParam::Duplicate(param.name));
        }
        seen.push(folded);
        params.push(param);
    }
    Ok(params)
}

/// The marks on properties reached from `schema` through `properties` keys alone, each with
/// its JSON pointer.
fn reachable(
    schema: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<(HeaderParam, String)>,
) -> Result<(), InvalidHeaderParam> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, property) in properties {
        path.push(key.clone());
        if let Some(mark) = property.get(ANNOTATION) {
            let at = pointer(path);
            let Some(name) = mark.as_str() else {
                return Err(InvalidHeaderParam::NotAString(at));
            };
            if !is_token(name) {
                return Err(InvalidHeaderParam::NotAToken {
                    name: name.to_owned(),
                    at,
                });
            }
            let primitive = matches!(
                property.get("type").and_then(Value::as_str),
                Some("string" | "integer" | "boolean")
            );
            if !primitive {
                return Err(InvalidHeaderParam::NotPrimitive {
                    name: name.to_owned(),
                });
            }
            let param = HeaderParam {
                name: name.to_owned(),
                path: path.clone(),
            };
            found.push((param, at));
        }
        reachable(property, path, found)?;
        path.pop();
    }
    Ok(())
}

/// Every mark anywhere in `schema`, by JSON pointer. The keys of a map of schemas
/// (`properties`, `$defs`, …) are names, not keywords: a property named `x-mcp-header` is
/// no mark.
fn all_marks(schema: &Value, at: &str, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                let here = format!("{at}/{}", escape(key));
                if key == ANNOTATION {
                    out.push(at.to_owned());
                } else if matches!(
                    key.as_str(),
                    "properties"
                        | "patternProperties"
                        | "$defs"
                        | "definitions"
                        | "dependentSchemas"
                ) && let Some(schemas) = value.as_object()
                {
                    for (name, sub) in schemas {
                        all_marks(sub, &format!("{here}/{}", escape(name)), out);
                    }
                } else {
                    all_marks(value, &here, out);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                all_marks(item, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The JSON pointer of the property at `path` (`#/properties/a/properties/b`).
fn pointer(path: &[String]) -> String {
    path.iter().fold("#".to_owned(), |acc, key| {
        format!("{acc}/properties/{}", escape(key))
    })
}

/// A JSON pointer's escaping of one key (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// An HTTP field-name token (RFC 9110 §5.1: `1*tchar`).
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Why an argument cannot be a header value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderValueError {
    /// Not a string, an integer in JavaScript's safe range, or a boolean.
    #[error("a header parameter must be a string, a safe integer or a boolean")]
    NotPrimitive,
    /// A received value holds characters a header value may not, or a Base64 sentinel
    /// that does not hold Base64 of UTF-8.
    #[error("the header value is not plain visible ASCII nor =?base64?…?= of UTF-8")]
    Malformed,
}

/// The header value for an argument ("Value Encoding"): `None` for `null` (the header is
/// left out); strings as they are, integers in decimal, booleans as `true`/`false`, each
/// Base64-encoded where plain ASCII cannot carry it ([`encode_text`]).
pub fn encode_value(value: &Value) -> Result<Option<String>, HeaderValueError> {
    let text = match value {
        Value::Null => return Ok(None),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match safe_integer(n) {
            Some(i) => i.to_string(),
            None => return Err(HeaderValueError::NotPrimitive),
        },
        Value::Array(_) | Value::Object(_) => return Err(HeaderValueError::NotPrimitive),
    };
    Ok(Some(encode_text(&text)))
}

/// `text` as a header value: as it is when it is visible ASCII and spaces with no space at
/// either end and not itself in the sentinel's shape, else `=?base64?…?=` of its UTF-8.
/// Also how `Mcp-Name` carries a name or URI.
pub fn encode_text(text: &str) -> String {
    let plain = text.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !text.starts_with(' ')
        && !text.ends_with(' ')
        && !is_sentinel(text);
    if plain {
        text.to_owned()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(text.as_bytes()))
    }
}

/// A header value as received, decoded: the sentinel's Base64 of UTF-8, or the value
/// itself when it is visible ASCII, spaces and tabs (RFC 9110 field values).
pub fn decode_value(value: &str) -> Result<String, HeaderValueError> {
    if is_sentinel(value) {
        let inner = &value["=?base64?".len()..value.len() - "?=".len()];
        let bytes = STANDARD
            .decode(inner)
            .map_err(|_| HeaderValueError::Malformed)?;
        return String::from_utf8(bytes).map_err(|_| HeaderValueError::Malformed);
    }
    if value
        .bytes()
        .all(|b| b == b'\t' || (0x20..=0x7e).contains(&b))
    {
        Ok(value.to_owned())
    } else {
        Err(HeaderValueError::Malformed)
    }
}

/// True when a decoded header value says what `body` (the argument in the body) says:
/// strings equal, booleans as `true`/`false`, integers as numbers (`42.0` is `42`, as the
/// spec suggests); a value of another type matches nothing.
pub fn matches(decoded: &str, body: &Value) -> bool {
    match body {
        Value::String(s) => s == decoded,
        Value::Bool(b) => decoded == if *b { "true" } else { "false" },
        Value::Number(n) => match (safe_integer(n), decoded.trim().parse::<f64>()) {
            (Some(i), Ok(h)) => h.fract() == 0.0 && h == i as f64,
            _ => false,
        },
        _ => false,
    }
}

fn is_sentinel(text: &str) -> bool {
    text.len() >= "=?base64??=".len() && text.starts_with("=?base64?") && text.ends_with("?=")
}

/// A JSON number as an integer in JavaScript's safe range (a whole `9.0` counts).
fn safe_integer(n: &serde_json::Number) -> Option<i64> {
    let i = match n.as_i64() {
        Some(i) => i,
        None => {
            let f = n.as_f64()?;
            if f.fract() != 0.0 || f.abs() > MAX_SAFE_INTEGER as f64 {
                return None;
            }
            f as i64
        }
    };
    (i.abs() <= MAX_SAFE_INTEGER).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The spec's own example: `region` marked `Region`.
    #[test]
    fn issue39_sep2243_the_spec_example_marks_one_parameter() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"}}, "required": ["region", "query"]});
        let params = header_params(&schema).unwrap();
        assert_eq!(
            params,
            [HeaderParam {
                name: "Region".into(),
                path: vec!["region".into()]
            }]
        );
        assert_eq!(params[0].header(), "Mcp-Param-Region");
        let args = json!({"region": "us-west1", "query": "SELECT 1"});
        assert_eq!(params[0].value_in(&args), Some(&json!("us-west1")));
        assert_eq!(params[0].value_in(&json!({})), None);
    }

    #[test]
    fn issue39_sep2243_nested_properties_are_reachable() {
        let schema = json!({"type": "object", "properties": {"where": {"type": "object",
            "properties": {"zone": {"type": "integer", "x-mcp-header": "Zone"}}}}});
        let params = header_params(&schema).unwrap();
        assert_eq!(params[0].path, ["where", "zone"]);
        assert_eq!(
            params[0].value_in(&json!({"where": {"zone": 7}})),
            Some(&json!(7))
        );
    }

    #[test]
    fn issue39_sep2243_invalid_marks_invalidate_the_tool() {
        let cases = [
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
                "empty",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "Bad Name"}}}),
                "space",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "A\r\nB"}}}),
                "CRLF",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": 7}}}),
                "not a string",
            ),
            (
                json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
                "number",
            ),
            (
                json!({"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}),
                "object",
            ),
            (
                json!({"properties": {"a": {"x-mcp-header": "A"}}}),
                "no type",
            ),
            (
                json!({"properties": {
                "a": {"type": "string", "x-mcp-header": "Region"},
                "b": {"type": "string", "x-mcp-header": "region"}}}),
                "duplicate",
            ),
            (
                json!({"properties": {"a": {"type": "array",
                "items": {"type": "string", "x-mcp-header": "A"}}}}),
                "under items",
            ),
            (
                json!({"properties": {"a": {"anyOf": [
                {"type": "string", "x-mcp-header": "A"}]}}}),
                "under anyOf",
            ),
            (
                json!({"$defs": {"d": {"type": "string", "x-mcp-header": "A"}},
                "properties": {"a": {"$ref": "#/$defs/d"}}}),
                "behind $ref",
            ),
            (json!({"type": "string", "x-mcp-header": "A"}), "the root"),
        ];
        for (schema, why) in cases {
            assert!(header_params(&schema).is_err(), "{why}: {schema}");
        }
    }

    /// A property *named* `x-mcp-header` is no mark.
    #[test]
    fn issue39_sep2243_a_property_named_like_the_mark_is_not_one() {
        let schema = json!({"properties": {"x-mcp-header": {"type": "string"}}});
        assert_eq!(header_params(&schema).unwrap(), []);
    }

    /// The spec's encoding table, row by row, and back.
    #[test]
    fn issue39_sep2243_values_encode_as_the_spec_table_says() {
        let rows = [
            (json!("us-west1"), "us-west1"),
            (json!("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (json!(" padded "), "=?base64?IHBhZGRlZCA=?="),
            (json!("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?="),
            (
                json!("=?base64?literal?="),
                "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
            ),
            (json!(42), "42"),
            (json!(-7), "-7"),
            (json!(true), "true"),
            (json!(false), "false"),
        ];
        for (value, header) in rows {
            assert_eq!(
                encode_value(&value).unwrap().as_deref(),
                Some(header),
                "{value}"
            );
            let back = decode_value(header).unwrap();
            assert!(matches(&back, &value), "{value} from {header}");
        }
        assert_eq!(encode_value(&json!(null)).unwrap(), None);
        for bad in [
            json!(2.5),
            json!([1]),
            json!({"a": 1}),
            json!(9_007_199_254_740_993_i64),
        ] {
            assert_eq!(
                encode_value(&bad),
                Err(HeaderValueError::NotPrimitive),
                "{bad}"
            );
        }
    }

    #[test]
    fn issue39_sep2243_a_server_reads_and_compares_what_came() {
        assert_eq!(
            decode_value("plain value\twith tab").unwrap(),
            "plain value\twith tab"
        );
        assert_eq!(decode_value("caf\u{e9}"), Err(HeaderValueError::Malformed));
        assert_eq!(
            decode_value("=?base64?not base64!?="),
            Err(HeaderValueError::Malformed)
        );
        assert_eq!(
            decode_value("=?base64?/w==?="),
            Err(HeaderValueError::Malformed),
            "not UTF-8"
        );
        assert!(matches("42.0", &json!(42)), "integers compare as numbers");
        assert!(!matches("42.5", &json!(42)));
        assert!(!matches("42", &json!("43")));
        assert!(!matches("True", &json!(true)), "booleans are lowercase");
        assert!(!matches("x", &json!(null)));
    }
}

//! JSON-RPC 2.0 envelopes.
//!
//! A message is decided by the keys present, never by trying shapes in turn (no
//! `#[serde(untagged)]`): `method` with `id` is a request, `method` without `id` a
//! notification, `id` with exactly one of `result`/`error` a response. Anything else is an
//! invalid request (-32600); bytes that are not JSON are a parse error (-32700). Batches
//! (JSON arrays) were removed from MCP in 2025-06-18 and are refused as invalid requests.
//!
//! Params and a result are kept as the JSON **text** they came in ([`RawValue`]): the
//! receiver decodes them once, straight into the method's typed params
//! ([`Request::params_as`]) or typed result ([`Response::result_as`]), never through a
//! `Value` tree first; a sender writes them once, from the typed params or result
//! ([`Request::new`], [`Response::ok_typed`]). A result is decoded by the method of the
//! pending request, which only the side that sent the request knows (see [`crate::method`]).
//! Only an error is kept as a value ([`ErrorObject`]): every side reads it, with one type.

use serde::de::{self, DeserializeOwned};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
pub use serde_json::value::RawValue;
use std::fmt;

/// A request id: MCP allows a string or an integer, and never `null` for a request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Id {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
    /// A number JSON allows that is not an `i64` — an integer past its range (2^64), a
    /// fraction (1.5), an exponent — kept as the number it reads as (its shortest decimal
    /// text) and echoed as that same number, so the peer can match the answer (issue #37,
    /// item 12). **\[project\]** MCP asks for a string or an integer and JSON-RPC 2.0 says a
    /// number SHOULD NOT have a fraction: read liberally, served like any other id. An
    /// integer past `u64` or with more digits than a double holds is echoed as the double
    /// it reads as: a JavaScript or Python peer, whose own id is that double, matches it.
    OtherNumber(String),
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
            Id::OtherNumber(n) => f.write_str(n),
        }
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Number(n)
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::String(s.to_owned())
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Number(n) => s.serialize_i64(*n),
            Id::String(v) => s.serialize_str(v),
            Id::OtherNumber(n) => match n.parse::<serde_json::Number>() {
                Ok(number) => number.serialize(s),
                // Made only from a number's own text (`IdVisitor`): never reached.
                Err(_) => s.serialize_str(n),
            },
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match IdField::deserialize(d)? {
            IdField::Id(id) => Ok(id),
            IdField::Null => Err(de::Error::custom("a request id cannot be null")),
            IdField::Bad(why) => Err(de::Error::custom(why)),
        }
    }
}

/// An envelope's `id` member as read: an id, `null`, or something that is neither (why).
/// Read without a `Value` in between, and never echoing the peer's value back.
enum IdField {
    Id(Id),
    Null,
    Bad(&'static str),
}

impl<'de> Deserialize<'de> for IdField {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl<'de> de::Visitor<'de> for IdVisitor {
            type Value = IdField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<IdField, E> {
                Ok(IdField::Id(Id::Number(n)))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<IdField, E> {
                Ok(IdField::Id(i64::try_from(n).map_or_else(
                    |_| Id::OtherNumber(n.to_string()),
                    Id::Number,
                )))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<IdField, E> {
                // JSON has no NaN or infinity: every f64 read from it is a Number.
                Ok(match serde_json::Number::from_f64(n) {
                    Some(number) => IdField::Id(Id::OtherNumber(number.to_string())),
                    None => IdField::Bad("a numeric id must be finite"),
                })
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<IdField, E> {
                Ok(IdField::Id(Id::String(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<IdField, E> {
                Ok(IdField::Id(Id::String(s)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<IdField, E> {
                Ok(IdField::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<IdField, E> {
                Ok(IdField::Null)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<IdField, E> {
                Ok(IdField::Bad(
                    "an id must be a string or an integer, not a boolean",
                ))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<IdField, A::Error> {
                de::IgnoredAny.visit_seq(seq)?;
                Ok(IdField::Bad(
                    "an id must be a string or an integer, not an array",
                ))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<IdField, A::Error> {
                de::IgnoredAny.visit_map(map)?;
                Ok(IdField::Bad(
                    "an id must be a string or an integer, not an object",
                ))
            }
        }
        d.deserialize_any(IdVisitor)
    }
}

/// A string member as read (`jsonrpc`, `method`): what `S` keeps of the string, or `None`
/// for any other value.
struct StrField<S = String>(Option<S>);

/// What a [`StrField`] keeps of the string it read.
trait Kept: Sized {
    fn of_str(s: &str) -> Self;
    fn of_string(s: String) -> Self {
        Self::of_str(&s)
    }
}

impl Kept for String {
    fn of_str(s: &str) -> Self {
        s.to_owned()
    }
    fn of_string(s: String) -> Self {
        s
    }
}

/// Whether the string was `"2.0"`: `jsonrpc` is checked, never kept (no allocation for it
/// in every message read; issue #18).
struct IsVersion2(bool);

impl Kept for IsVersion2 {
    fn of_str(s: &str) -> Self {
        IsVersion2(s == "2.0")
    }
}

impl<'de, S: Kept> Deserialize<'de> for StrField<S> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct StrVisitor<S>(std::marker::PhantomData<S>);
        impl<'de, S: Kept> de::Visitor<'de> for StrVisitor<S> {
            type Value = StrField<S>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<StrField<S>, E> {
                Ok(StrField(Some(S::of_str(s))))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<StrField<S>, E> {
                Ok(StrField(Some(S::of_string(s))))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<StrField<S>, E> {
                Ok(StrField(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<StrField<S>, E> {
                Ok(StrField(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<StrField<S>, E> {
                Ok(StrField(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<StrField<S>, E> {
                Ok(StrField(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<StrField<S>, E> {
                Ok(StrField(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<StrField<S>, E> {
                Ok(StrField(None))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<StrField<S>, A::Error> {
                de::IgnoredAny.visit_seq(seq)?;
                Ok(StrField(None))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<StrField<S>, A::Error> {
                de::IgnoredAny.visit_map(map)?;
                Ok(StrField(None))
            }
        }
        d.deserialize_any(StrVisitor(std::marker::PhantomData))
    }
}

/// A JSON-RPC error code. The constants are the only place codes are spelled out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// The bytes were not JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// JSON, but not a valid JSON-RPC message.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method is not known (or not available in this state).
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// The params do not fit the method.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// The receiver failed.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// The link closed before the response arrived (used locally by a requester).
    pub const CONNECTION_CLOSED: ErrorCode = ErrorCode(-32000);
    /// The request timed out (used locally by a requester, never sent). **\[project\]**
    /// MCP's SDKs use -32001, which MCPL's Appendix A gives to "feature set not enabled";
    /// this project uses -32008 so that the two never meet.
    pub const REQUEST_TIMEOUT: ErrorCode = ErrorCode(-32008);
    /// MCPL: a message used a declared feature set that is not enabled (Appendix A);
    /// `data: {featureSet}`.
    pub const FEATURE_SET_NOT_ENABLED: ErrorCode = ErrorCode(-32001);
    /// MCPL: a capability the method needs was not granted (SPEC §5.4, Appendix A);
    /// `data: {capability}`.
    pub const CAPABILITY_DENIED: ErrorCode = ErrorCode(-32002);
    /// MCPL: a message used a feature set that is not declared (Appendix A);
    /// `data: {featureSet}`.
    pub const UNKNOWN_FEATURE_SET: ErrorCode = ErrorCode(-32003);
    /// MCP 2026-07-28: a Streamable HTTP request's headers do not match its body, or a
    /// required one is missing or malformed (`HeaderMismatch`).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// MCP 2026-07-28: serving the request needs a client capability its `_meta` did not
    /// declare; `data: {requiredCapabilities}` (`MissingRequiredClientCapability`).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// MCP 2026-07-28: the request's protocol version is not served here;
    /// `data: {supported, requested}` (`UnsupportedProtocolVersion`).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The code, see [`ErrorCode`].
    pub code: ErrorCode,
    /// A short human-readable description.
    pub message: String,
    /// Anything more, for the peer's logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and a message, the message clipped to [`MESSAGE_LIMIT`]: an
    /// error this side writes never echoes a peer's input whole, whatever it quotes.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: clip_owned(message.into(), MESSAGE_LIMIT),
            data: None,
        }
    }
    /// The same error carrying `data` — or, when `data` encodes to more than
    /// [`DATA_LIMIT`] bytes, `{"clipped": true, "size": N}` in its place.
    pub fn with_data(mut self, data: Value) -> Self {
        let size = serde_json::to_string(&data).map_or(usize::MAX, |s| s.len());
        self.data = Some(if size <= DATA_LIMIT {
            data
        } else {
            serde_json::json!({"clipped": true, "size": size})
        });
        self
    }
    /// -32601 for `method` (a long name is clipped: an error never echoes a peer's input
    /// whole).
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {}", clip(method, ECHO_LIMIT)),
        )
    }
    /// -32602 with a description of what is wrong.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_PARAMS,
            format!("invalid params: {detail}"),
        )
    }
    /// -32603 with a description.
    pub fn internal(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INTERNAL_ERROR,
            format!("internal error: {detail}"),
        )
    }
}

/// The most bytes of a peer's own input an error message echoes back.
pub const ECHO_LIMIT: usize = 128;

/// The longest error message [`ErrorObject::new`] makes, in bytes.
pub const MESSAGE_LIMIT: usize = 1024;

/// The largest `data` [`ErrorObject::with_data`] keeps, encoded, in bytes.
pub const DATA_LIMIT: usize = 16 * 1024;

/// [`clip`] for an owned string.
pub fn clip_owned(s: String, max: usize) -> String {
    match clip(&s, max) {
        std::borrow::Cow::Borrowed(_) => s,
        std::borrow::Cow::Owned(c) => c,
    }
}

/// `s` cut to at most `max` bytes on a character boundary, with `…` when cut: what an error
/// or a log line may quote of a peer's input.
pub fn clip(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}… ({} bytes)", &s[..end], s.len()))
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code.0)
    }
}

impl std::error::Error for ErrorObject {}

/// A request: expects exactly one response with the same id.
///
/// Two requests are equal when their ids, methods and params are: params are compared as
/// JSON values, so spacing and key order in their text do not matter.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id the response will carry.
    pub id: Id,
    /// The method name.
    pub method: String,
    /// The params, if any (MCP always uses an object), as JSON text (module docs).
    pub params: Option<Box<RawValue>>,
}

impl Request {
    /// Builds a request of a typed method.
    pub fn new<M: crate::method::RequestMethod>(id: Id, params: &M::Params) -> Self {
        Request {
            id,
            method: M::NAME.to_owned(),
            params: Some(to_raw(params)),
        }
    }

    /// Decodes the params as `P`; absent params decode as an empty object.
    /// A mismatch is an invalid-params error (-32602) naming the problem.
    pub fn params_as<P: DeserializeOwned>(&self) -> Result<P, ErrorObject> {
        decode_params(self.params.as_deref())
    }

    /// The params as a JSON value, for code that reads them without a type (a relay, a
    /// log); `None` when absent.
    pub fn params_value(&self) -> Option<Value> {
        self.params.as_deref().map(value_of)
    }
}

impl PartialEq for Request {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.method == other.method
            && same_json(self.params.as_deref(), other.params.as_deref())
    }
}

/// A notification: no id, no response.
///
/// Equal to another as a [`Request`] is: params compared as JSON values.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The params, if any, as JSON text (module docs).
    pub params: Option<Box<RawValue>>,
}

impl Notification {
    /// Builds a notification of a typed method; params that encode to `{}` or `null` are
    /// left out.
    pub fn new<M: crate::method::NotificationMethod>(params: &M::Params) -> Self {
        let raw = to_raw(params);
        let params = match raw.get() {
            "{}" | "null" => None,
            _ => Some(raw),
        };
        Notification {
            method: M::NAME.to_owned(),
            params,
        }
    }

    /// Decodes the params as `P`; absent params decode as an empty object.
    pub fn params_as<P: DeserializeOwned>(&self) -> Result<P, ErrorObject> {
        decode_params(self.params.as_deref())
    }

    /// The params as a JSON value (see [`Request::params_value`]).
    pub fn params_value(&self) -> Option<Value> {
        self.params.as_deref().map(value_of)
    }
}

impl PartialEq for Notification {
    fn eq(&self, other: &Self) -> bool {
        self.method == other.method && same_json(self.params.as_deref(), other.params.as_deref())
    }
}

/// Whether two optional JSON texts hold the same JSON value.
fn same_json(a: Option<&RawValue>, b: Option<&RawValue>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.get() == b.get() || value_of(a) == value_of(b),
        _ => false,
    }
}

/// The JSON value of a JSON text. A [`RawValue`] holds valid JSON, so only a nesting past
/// serde_json's recursion limit fails, which reads as `null`.
fn value_of(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// A response: the result or the error of the request with the same id.
///
/// Equal to another when their ids and errors are, and their results hold the same JSON
/// value (compared as [`Request`]'s params are).
#[derive(Debug, Clone)]
pub struct Response {
    /// The request's id; `None` (`null` on the wire) only for an error about a message
    /// whose id could not be read.
    pub id: Option<Id>,
    /// The result, as JSON text (module docs), or the error.
    pub outcome: Result<Box<RawValue>, ErrorObject>,
}

impl Response {
    /// A success response with a result held as a value; it is encoded to text here (a
    /// sender with a typed result uses [`Response::ok_typed`], which skips the value).
    pub fn ok(id: Id, result: Value) -> Self {
        Self::ok_raw(id, to_raw(&result))
    }
    /// A success response with a typed result, serialized once, straight to text.
    pub fn ok_typed<T: Serialize + ?Sized>(id: Id, result: &T) -> Self {
        Self::ok_raw(id, to_raw(result))
    }
    /// A success response whose result is JSON text already.
    pub fn ok_raw(id: Id, result: Box<RawValue>) -> Self {
        Response {
            id: Some(id),
            outcome: Ok(result),
        }
    }
    /// An error response.
    pub fn err(id: Option<Id>, error: ErrorObject) -> Self {
        Response {
            id,
            outcome: Err(error),
        }
    }
    /// Decodes the result as `R`, straight from its text (an error response yields its
    /// error). A mismatch is a -32602 error, "malformed result: …".
    pub fn result_as<R: DeserializeOwned>(&self) -> Result<R, ErrorObject> {
        match &self.outcome {
            Ok(raw) => decode_result(raw).map_err(|e| {
                ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("malformed result: {e}"))
            }),
            Err(e) => Err(e.clone()),
        }
    }
    /// The result as a JSON value, for code that reads it without a type (a relay, a log,
    /// a test); an error response yields its error.
    pub fn result_value(&self) -> Result<Value, ErrorObject> {
        match &self.outcome {
            Ok(raw) => Ok(value_of(raw)),
            Err(e) => Err(e.clone()),
        }
    }
}

impl PartialEq for Response {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && match (&self.outcome, &other.outcome) {
                (Ok(a), Ok(b)) => same_json(Some(a), Some(b)),
                (Err(a), Err(b)) => a == b,
                _ => false,
            }
    }
}

/// A result's text that does not decode as the type asked for: what does not fit, worded as
/// a decode from a value words it (without serde_json's position).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MalformedResult(pub String);

/// Decodes a result's text as `R`, straight from the text: what [`Response::result_as`] does
/// with a success, for a requester that holds the text apart from its response.
pub fn decode_result<R: DeserializeOwned>(result: &RawValue) -> Result<R, MalformedResult> {
    serde_json::from_str(result.get()).map_err(|e| MalformedResult(without_position(&e)))
}

/// The member `key` of a JSON object's text, as its text, the rest skipped, not read: for a
/// reader that wants one member of a result or params and no `Value` of the whole. `None`
/// when `json` is not an object or has no such member; a repeated member: the last counts,
/// as in a `Value`.
pub fn member(json: &RawValue, key: &str) -> Option<Box<RawValue>> {
    struct Member<'k>(&'k str);
    impl<'de> de::Visitor<'de> for Member<'_> {
        type Value = Option<Box<RawValue>>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(KeyText(k)) = map.next_key()? {
                if k == self.0 {
                    found = Some(map.next_value()?);
                } else {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
            Ok(found)
        }
    }
    let mut read = serde_json::Deserializer::from_str(json.get());
    de::Deserializer::deserialize_any(&mut read, Member(key))
        .ok()
        .flatten()
}

/// An object member's name, borrowed from the text unless it had to be unescaped (names
/// compare after unescaping, RFC 8259 §8.3, so `"meth\u006fd"` is `method`): serde's
/// own `Cow<str>` always copies, an allocation for every member of every message read
/// (issue #18).
struct KeyText<'de>(std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for KeyText<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> de::Visitor<'de> for KeyVisitor {
            type Value = KeyText<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(KeyText(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(KeyText(std::borrow::Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(KeyText(std::borrow::Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Any JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response.
    Response(Response),
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}
impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}
impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Message::Response(r)
    }
}

/// Why bytes could not be decoded into a [`Message`]; carries what the error response
/// needs (its code and, where it could be read, the offending message's id).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not JSON at all (-32700).
    #[error("parse error: {0}")]
    Parse(String),
    /// JSON, but not a JSON-RPC 2.0 message (-32600).
    #[error("invalid request: {detail}")]
    Invalid {
        /// The id, if one could be read (so the error response can carry it).
        id: Option<Id>,
        /// What is wrong.
        detail: String,
    },
}

impl DecodeError {
    /// The error response to send back for this decode failure. (A receiver that can tell
    /// the bad message was meant as a response may choose not to answer it.)
    pub fn to_response(&self) -> Response {
        match self {
            DecodeError::Parse(d) => Response::err(
                None,
                ErrorObject::new(ErrorCode::PARSE_ERROR, format!("parse error: {d}")),
            ),
            DecodeError::Invalid { id, detail } => Response::err(
                id.clone(),
                ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("invalid request: {detail}"),
                ),
            ),
        }
    }
}

/// The fields a message may have; `Some(Null)` and absent are told apart.
///
/// Decoded by hand so that only a JSON **object** is a message: a derived `Deserialize`
/// would also take an array positionally (`["2.0", 3, "toolsets/open", {...}]`). Only an
/// error is read as a value; params and a result stay text (module docs).
#[derive(Default)]
struct Raw {
    jsonrpc: Option<StrField<IsVersion2>>,
    id: Option<IdField>,
    method: Option<StrField>,
    params: Option<Box<RawValue>>,
    result: Option<Box<RawValue>>,
    error: Option<Value>,
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RawVisitor;
        impl<'de> de::Visitor<'de> for RawVisitor {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
                let mut raw = Raw::default();
                // A repeated member: the last one counts.
                while let Some(KeyText(key)) = map.next_key()? {
                    match key.as_ref() {
                        "jsonrpc" => raw.jsonrpc = Some(map.next_value()?),
                        "id" => raw.id = Some(map.next_value()?),
                        "method" => raw.method = Some(map.next_value()?),
                        "params" => raw.params = Some(map.next_value()?),
                        "result" => raw.result = Some(map.next_value()?),
                        "error" => raw.error = Some(map.next_value()?),
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(raw)
            }
        }
        d.deserialize_map(RawVisitor)
    }
}

impl Message {
    /// Decodes one message from bytes (a line, a frame, an HTTP body or an SSE `data`).
    pub fn decode(bytes: &[u8]) -> Result<Message, DecodeError> {
        Self::decode_read(bytes, serde_json::from_slice::<Raw>(bytes))
    }

    /// Decodes one message from text already known to be UTF-8 (a WebSocket text frame):
    /// as [`Message::decode`], without checking each string's UTF-8 again.
    pub fn decode_str(text: &str) -> Result<Message, DecodeError> {
        Self::decode_read(text.as_bytes(), serde_json::from_str::<Raw>(text))
    }

    /// The message `bytes` were read into (`read`), or why they are none.
    fn decode_read(bytes: &[u8], read: serde_json::Result<Raw>) -> Result<Message, DecodeError> {
        // Straight from bytes into the envelope's fields: no intermediate tree for the whole
        // message. serde_json classifies its errors, which tells "not JSON" (-32700) from
        // "JSON of the wrong shape" (-32600).
        match read {
            // Params are skipped over, not read, so serde_json's nesting limit has not been
            // applied to them: they are refused as the whole message nested as deep would be.
            // A result is kept however deep (issue #37 item 12): its requester reads what it
            // can of it (one tool nested too deep in a `tools/list` costs only itself), and
            // whatever it decodes whole meets serde_json's limit there ([`decode_result`]).
            Ok(raw)
                if raw.params.as_ref().is_some_and(|text| {
                    // Each level takes a byte: text no longer than the limit is not scanned.
                    text.get().len() > MEMBER_NESTING_LIMIT
                        && nesting(text.get()) > MEMBER_NESTING_LIMIT
                }) =>
            {
                Err(DecodeError::Parse("recursion limit exceeded".to_owned()))
            }
            Ok(raw) => Self::from_raw(raw),
            Err(e) if e.is_data() => {
                // Not an object. Still JSON? (A nesting past serde_json's limit is not read.)
                if let Err(e) = serde_json::from_slice::<de::IgnoredAny>(bytes)
                    && !e.is_data()
                {
                    return Err(DecodeError::Parse(e.to_string()));
                }
                let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
                let detail = if first == Some(&b'[') {
                    "batches are not supported"
                } else {
                    "a message must be a JSON object"
                };
                Err(DecodeError::Invalid {
                    id: None,
                    detail: detail.to_owned(),
                })
            }
            Err(e) => Err(DecodeError::Parse(e.to_string())),
        }
    }

    /// Decodes one message from a JSON value.
    pub fn from_value(value: Value) -> Result<Message, DecodeError> {
        let invalid = |detail: &str| DecodeError::Invalid {
            id: None,
            detail: detail.to_owned(),
        };
        if value.is_array() {
            return Err(invalid("batches are not supported"));
        }
        if !value.is_object() {
            return Err(invalid("a message must be a JSON object"));
        }
        let raw: Raw = serde_json::from_value(value).map_err(|e| invalid(&e.to_string()))?;
        Self::from_raw(raw)
    }

    fn from_raw(raw: Raw) -> Result<Message, DecodeError> {
        let invalid = |id: Option<Id>, detail: &str| DecodeError::Invalid {
            id,
            detail: detail.to_owned(),
        };
        let id = match raw.id {
            None => None,
            Some(IdField::Id(id)) => Some(Some(id)),
            Some(IdField::Null) => Some(None),
            Some(IdField::Bad(why)) => return Err(invalid(None, why)),
        };
        let readable_id = id.clone().flatten();
        if !matches!(raw.jsonrpc, Some(StrField(Some(IsVersion2(true))))) {
            return Err(invalid(readable_id, "\"jsonrpc\" must be \"2.0\""));
        }
        if let Some(StrField(method)) = raw.method {
            let Some(method) = method else {
                return Err(invalid(readable_id, "\"method\" must be a string"));
            };
            if raw.result.is_some() || raw.error.is_some() {
                return Err(invalid(
                    readable_id,
                    "a request cannot carry \"result\" or \"error\"",
                ));
            }
            if let Some(p) = &raw.params
                && !p.get().trim_start().starts_with(['{', '['])
            {
                return Err(invalid(
                    readable_id,
                    "\"params\" must be an object or an array",
                ));
            }
            return match id {
                None => Ok(Message::Notification(Notification {
                    method,
                    params: raw.params,
                })),
                Some(Some(id)) => Ok(Message::Request(Request {
                    id,
                    method,
                    params: raw.params,
                })),
                Some(None) => Err(invalid(None, "a request id cannot be null")),
            };
        }
        let Some(id) = id else {
            return Err(invalid(None, "neither \"method\" nor \"id\""));
        };
        let outcome = match (raw.result, raw.error) {
            (Some(r), None) => Ok(r),
            (None, Some(e)) => Err(ErrorObject::deserialize(&e)
                .map_err(|e| invalid(id.clone(), &format!("malformed \"error\": {e}")))?),
            (Some(_), Some(_)) => return Err(invalid(id, "both \"result\" and \"error\"")),
            (None, None) => return Err(invalid(id, "a response needs \"result\" or \"error\"")),
        };
        if id.is_none() && outcome.is_ok() {
            return Err(invalid(None, "a success response needs an id"));
        }
        Ok(Message::Response(Response { id, outcome }))
    }

    /// Encodes the message as compact JSON text (no trailing newline).
    pub fn encode(&self) -> String {
        serde_json::to_string(self).expect("a Message always serializes")
    }

    /// The method, for a request or a notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("jsonrpc", "2.0")?;
        match self {
            Message::Request(r) => {
                m.serialize_entry("id", &r.id)?;
                m.serialize_entry("method", &r.method)?;
                if let Some(p) = &r.params {
                    m.serialize_entry("params", p)?;
                }
            }
            Message::Notification(n) => {
                m.serialize_entry("method", &n.method)?;
                if let Some(p) = &n.params {
                    m.serialize_entry("params", p)?;
                }
            }
            Message::Response(r) => {
                m.serialize_entry("id", &r.id)?;
                match &r.outcome {
                    Ok(v) => m.serialize_entry("result", v)?,
                    Err(e) => m.serialize_entry("error", e)?,
                }
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Message::from_value(Value::deserialize(d)?).map_err(de::Error::custom)
    }
}

/// The deepest params read: serde_json reads a message to 127 levels of nesting (its
/// recursion limit is 128), and params sit one level inside the message.
const MEMBER_NESTING_LIMIT: usize = 126;

/// How deep arrays and objects nest in `json`, which must be valid JSON (a [`RawValue`]'s
/// text): brackets are counted outside strings.
fn nesting(json: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in json.as_bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// MCP's params are always an object: JSON-RPC's by-position array is refused rather than
/// read into a struct positionally.
fn decode_params<P: DeserializeOwned>(params: Option<&RawValue>) -> Result<P, ErrorObject> {
    let text = params.map_or("{}", RawValue::get);
    if !text.trim_start().starts_with('{') {
        return Err(ErrorObject::invalid_params("params must be an object"));
    }
    serde_json::from_str(text)
        .map_err(|e| ErrorObject::invalid_params(clip(&without_position(&e), 256)))
}

/// A decode error's text without serde_json's " at line L column C": the params are one
/// member of one message, so the position says little to the peer, and the wording stays
/// what a decode from a value gives.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&suffix) {
        Some(bare) => bare.to_owned(),
        None => text,
    }
}

/// Serializes a protocol type to JSON text, as `Request::new` does its params and
/// `Response::ok_typed` its result.
///
/// # Panics
/// When `T`'s `Serialize` fails, which no type of this crate's does (see [`to_value`]).
pub fn to_raw<T: Serialize + ?Sized>(v: &T) -> Box<RawValue> {
    serde_json::value::to_raw_value(v).expect("protocol types always serialize")
}

/// Serializes a protocol type to a JSON value, for code that reads or hashes it as one (a
/// manifest's digest, a receipt); a message's params and result are written as text
/// ([`to_raw`]).
///
/// # Panics
/// When `T`'s `Serialize` fails, which no type of this crate's does: their maps have
/// string keys and serde_json writes a non-finite number as `null`.
pub fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("protocol types always serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dec(v: Value) -> Result<Message, DecodeError> {
        Message::decode(v.to_string().as_bytes())
    }

    /// A message is a JSON object: an array is never read positionally, as an envelope or
    /// as params.
    #[test]
    fn positional_arrays_are_refused() {
        for bytes in [
            &br#"["2.0", 3, "toolsets/open", {"toolset": "tictactoe"}]"#[..],
            br#"["2.0", 1, "initialize", {}]"#,
        ] {
            assert!(matches!(
                Message::decode(bytes),
                Err(DecodeError::Invalid { id: None, .. })
            ));
        }
        assert!(Message::from_value(json!(["2.0", 3, "ping"])).is_err());
        let req = match dec(json!({"jsonrpc": "2.0", "id": 3, "method": "toolsets/open",
                                   "params": ["tictactoe"]}))
        .unwrap()
        {
            Message::Request(r) => r,
            other => panic!("{other:?}"),
        };
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Open {
            toolset: String,
        }
        let e = req.params_as::<Open>().unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn an_error_never_echoes_a_long_input_whole() {
        let e = ErrorObject::method_not_found(&"m".repeat(4_000_000));
        assert!(e.message.len() < 300, "{}", e.message.len());
        assert_eq!(clip("héllo", 2), "h… (6 bytes)");
    }

    #[test]
    fn request_notification_response_by_keys() {
        assert!(matches!(
            dec(json!({"jsonrpc":"2.0","id":1,"method":"ping"})),
            Ok(Message::Request(_))
        ));
        assert!(matches!(
            dec(json!({"jsonrpc":"2.0","method":"x"})),
            Ok(Message::Notification(_))
        ));
        assert!(matches!(
            dec(json!({"jsonrpc":"2.0","id":"a","result":{}})),
            Ok(Message::Response(_))
        ));
        assert!(matches!(
            dec(json!({"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no"}})),
            Ok(Message::Response(Response {
                outcome: Err(_),
                ..
            }))
        ));
    }

    #[test]
    fn ids_of_either_type_round_trip() {
        for id in [Id::Number(7), Id::Number(-3), Id::String("req-1".into())] {
            let m = Message::Request(Request {
                id: id.clone(),
                method: "ping".into(),
                params: None,
            });
            assert_eq!(Message::decode(m.encode().as_bytes()).unwrap(), m);
        }
    }

    #[test]
    fn a_result_of_null_is_a_result() {
        let m = dec(json!({"jsonrpc":"2.0","id":1,"result":null})).unwrap();
        assert_eq!(
            m,
            Message::Response(Response::ok(Id::Number(1), Value::Null))
        );
    }

    /// Issue #37 item 12: ids JSON allows that are not an `i64` are kept as the number they
    /// read as and echoed as that number, so the peer can match the answer (never `null`).
    #[test]
    fn a_numeric_id_past_i64_or_with_a_fraction_is_echoed_as_the_same_number() {
        // Exact where a u64 holds it; else the double it reads as.
        for (text, exact) in [
            ("18446744073709551615", true),
            ("9223372036854775808", true),
            ("18446744073709551616", false),
            ("1.5", true),
            ("1e3", false),
            ("123456789012345678901234567890", false),
            ("-0", false),
        ] {
            let bytes = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"ping"}}"#);
            let Ok(Message::Request(request)) = Message::decode(bytes.as_bytes()) else {
                panic!("{text} is an id");
            };
            let answer = Message::from(Response::ok(request.id.clone(), Value::Null)).encode();
            let read: Value = serde_json::from_str(&answer).unwrap();
            let sent: Value = serde_json::from_str(text).unwrap();
            if exact {
                assert_eq!(read["id"].to_string(), text);
            }
            // As a peer with doubles (JavaScript) or exact integers (Python) compares it.
            assert_eq!(read["id"].as_f64(), sent.as_f64(), "{text}");
        }
    }

    #[test]
    fn malformed_messages_get_the_right_code() {
        let code = |r: Result<Message, DecodeError>| {
            r.unwrap_err().to_response().outcome.unwrap_err().code
        };
        assert_eq!(code(Message::decode(b"{not json")), ErrorCode::PARSE_ERROR);
        assert_eq!(code(dec(json!([1, 2]))), ErrorCode::INVALID_REQUEST);
        assert_eq!(code(dec(json!("hello"))), ErrorCode::INVALID_REQUEST);
        assert_eq!(
            code(dec(json!({"id":1,"method":"ping"}))),
            ErrorCode::INVALID_REQUEST
        );
        assert_eq!(
            code(dec(json!({"jsonrpc":"1.0","id":1,"method":"ping"}))),
            ErrorCode::INVALID_REQUEST
        );
        assert_eq!(
            code(dec(json!({"jsonrpc":"2.0","id":1,"method":3}))),
            ErrorCode::INVALID_REQUEST
        );
        assert_eq!(
            code(dec(
                json!({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}})
            )),
            ErrorCode::INVALID_REQUEST
        );
        assert_eq!(
            code(dec(json!({"jsonrpc":"2.0","id":1}))),
            ErrorCode::INVALID_REQUEST
        );
        assert_eq!(
            code(dec(json!({"jsonrpc":"2.0","id":null,"method":"ping"}))),
            ErrorCode::INVALID_REQUEST
        );
        assert_eq!(
            code(dec(json!({"jsonrpc":"2.0","id":1,"method":"x","params":3}))),
            ErrorCode::INVALID_REQUEST
        );
    }

    #[test]
    fn the_id_is_kept_for_an_invalid_request_when_readable() {
        let e = dec(json!({"jsonrpc":"2.0","id":9,"method":"x","result":1})).unwrap_err();
        assert_eq!(e.to_response().id, Some(Id::Number(9)));
    }

    #[test]
    fn error_response_with_null_id_round_trips() {
        let m = Message::Response(Response::err(
            None,
            ErrorObject::new(ErrorCode::PARSE_ERROR, "bad"),
        ));
        let text = m.encode();
        assert!(text.contains("\"id\":null"));
        assert_eq!(Message::decode(text.as_bytes()).unwrap(), m);
    }

    /// The JSON the text-keeping tests send as params and as a result, spaced and ordered
    /// as no serializer would write it, and its typed reading.
    const AB_TEXT: &str = r#"{"b": [1, 2], "a": "x"}"#;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Ab {
        a: String,
        b: Vec<u8>,
    }

    fn ab() -> Ab {
        Ab {
            a: "x".into(),
            b: vec![1, 2],
        }
    }

    /// Params stay the text the peer sent (no `Value` tree in between), decode straight
    /// into typed params, and compare as JSON values.
    #[test]
    fn params_are_kept_as_text_and_compared_as_values() {
        let wire = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params": {AB_TEXT} }}"#);
        let Ok(Message::Request(r)) = Message::decode(wire.as_bytes()) else {
            panic!("a request")
        };
        assert_eq!(r.params.as_deref().map(RawValue::get), Some(AB_TEXT));
        assert_eq!(r.params_as::<Ab>(), Ok(ab()));
        assert_eq!(r.params_value(), Some(json!({"a": "x", "b": [1, 2]})));
        let same = Request {
            id: Id::Number(1),
            method: "m".into(),
            params: Some(to_raw(&json!({"a": "x", "b": [1, 2]}))),
        };
        assert_eq!(r, same);
        let other = Request {
            params: Some(to_raw(&json!({"a": "y", "b": [1, 2]}))),
            ..same.clone()
        };
        assert_ne!(r, other);
        assert_ne!(
            Request {
                params: None,
                ..same.clone()
            },
            same
        );
        // The text goes out as it came in.
        assert_eq!(
            Message::Request(r).encode(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"b": [1, 2], "a": "x"}}"#
        );
        // A message read from a value keeps its params too.
        let m =
            Message::from_value(json!({"jsonrpc":"2.0","method":"n","params":{"k":true}})).unwrap();
        let Message::Notification(n) = m else {
            panic!("a notification")
        };
        assert_eq!(n.params_value(), Some(json!({"k": true})));
        // A repeated member: the last one counts, as for every member.
        let Ok(Message::Request(r)) = Message::decode(
            br#"{"jsonrpc":"2.0","id":2,"method":"m","params":[],"params":{"a":"z","b":[]}}"#,
        ) else {
            panic!("a request")
        };
        assert_eq!(r.params_as::<Ab>().map(|p| p.a), Ok("z".to_owned()));
    }

    /// Params that nest deeper than serde_json reads a message are refused as the whole
    /// message would be (a parse error), though they are skipped, not read; a string full
    /// of brackets is not nesting. A result is kept however deep, for its requester to read
    /// what it can, and decoding it whole meets serde_json's limit.
    #[test]
    fn params_nested_too_deep_are_a_parse_error_a_result_is_kept() {
        for levels in [129, 300] {
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#,
                "[".repeat(levels),
                "]".repeat(levels)
            );
            let Ok(Message::Response(r)) = Message::decode(text.as_bytes()) else {
                panic!("{levels} levels: a response")
            };
            assert_eq!(r.outcome.as_deref().map(|t| nesting(t.get())), Ok(levels));
            assert!(r.result_as::<Value>().is_err(), "{levels} levels");
        }
        for member in [r#""method":"m","params""#] {
            let deep = |levels: usize| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,{member}:{}{}}}"#,
                    "[".repeat(levels),
                    "]".repeat(levels)
                )
            };
            // Read as a whole, the message nests one level more than its member.
            for levels in [126, 127] {
                let whole = serde_json::from_str::<Value>(&deep(levels)).is_ok();
                let ours = Message::decode(deep(levels).as_bytes());
                assert_eq!(whole, ours.is_ok(), "{member}, {levels} levels: {ours:?}");
                match &ours {
                    // Kept whole: the member's text nests as sent.
                    Ok(Message::Request(r)) => {
                        assert_eq!(r.params.as_deref().map(|p| nesting(p.get())), Some(levels))
                    }
                    Ok(Message::Response(r)) => {
                        assert_eq!(r.outcome.as_deref().map(|t| nesting(t.get())), Ok(levels))
                    }
                    Err(DecodeError::Parse(_)) => {}
                    other => panic!("{member}, {levels} levels: {other:?}"),
                }
            }
            let brackets = format!(
                r#"{{"jsonrpc":"2.0","id":1,{member}:{{"s":"{}\\\"{}"}}}}"#,
                "[".repeat(500),
                "{".repeat(500)
            );
            assert!(Message::decode(brackets.as_bytes()).is_ok(), "{member}");
        }
        assert_eq!(nesting(r#"{"a":[{"b":"]]}}"}]}"#), 3);
    }

    /// A result stays the text the peer sent, decodes straight into a typed result, and
    /// compares as a JSON value; an error compares as itself, never equal to a result.
    #[test]
    fn results_are_kept_as_text_and_compared_as_values() {
        let wire = format!(r#"{{"jsonrpc":"2.0","id":1,"result": {AB_TEXT} }}"#);
        let Ok(Message::Response(r)) = Message::decode(wire.as_bytes()) else {
            panic!("a response")
        };
        assert_eq!(r.outcome.as_deref().map(RawValue::get), Ok(AB_TEXT));
        assert_eq!(r.result_as::<Ab>(), Ok(ab()));
        assert_eq!(r.result_value(), Ok(json!({"a": "x", "b": [1, 2]})));
        let same = Response::ok(Id::Number(1), json!({"a": "x", "b": [1, 2]}));
        assert_eq!(r, same);
        assert_ne!(
            r,
            Response::ok(Id::Number(1), json!({"a": "y", "b": [1, 2]}))
        );
        assert_ne!(
            r,
            Response::ok(Id::Number(2), json!({"a": "x", "b": [1, 2]}))
        );
        let error = ErrorObject::internal("no");
        assert_ne!(r, Response::err(Some(Id::Number(1)), error.clone()));
        assert_eq!(
            Response::err(Some(Id::Number(1)), error.clone()),
            Response::err(Some(Id::Number(1)), error.clone())
        );
        assert_eq!(
            Response::err(Some(Id::Number(1)), error.clone()).result_value(),
            Err(error)
        );
        // The text goes out as it came in.
        assert_eq!(
            Message::Response(r).encode(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"b": [1, 2], "a": "x"}}"#
        );
        // A typed result is written straight to text, in its fields' order, and equals the
        // same result held as a value.
        let hi = crate::mcp::CallToolResult::text("hi");
        let typed = Response::ok_typed(Id::Number(1), &hi);
        assert_eq!(
            typed.outcome.as_deref().map(RawValue::get),
            Ok(r#"{"content":[{"type":"text","text":"hi"}]}"#)
        );
        assert_eq!(typed, Response::ok(Id::Number(1), to_value(&hi)));
        // A message read from a value keeps its result too.
        let m = Message::from_value(json!({"jsonrpc":"2.0","id":"a","result":{"k":true}})).unwrap();
        let Message::Response(r) = m else {
            panic!("a response")
        };
        assert_eq!(r.result_value(), Ok(json!({"k": true})));
        assert_eq!(
            r,
            Response::ok_raw(Id::from("a"), to_raw(&json!({"k": true})))
        );
    }

    /// One member is read out of an object's text, as a `Value` would give it.
    #[test]
    fn a_member_is_read_from_text_as_from_a_value() {
        let text = to_raw(&json!({"a": 1, "_meta": {"mcpl/hints": {"rev": 3}, "x": [1]}}));
        let meta = member(&text, "_meta").unwrap();
        assert_eq!(
            value_of(&member(&meta, "mcpl/hints").unwrap()),
            json!({"rev": 3})
        );
        assert_eq!(member(&meta, "absent").map(|m| m.get().to_owned()), None);
        for not_an_object in [json!([{"_meta": 1}]), json!("_meta"), json!(null)] {
            assert!(member(&to_raw(&not_an_object), "_meta").is_none());
        }
        let repeated =
            serde_json::from_str::<Box<RawValue>>(r#"{"k": 1, "k\u0031": 0, "k": [2]}"#).unwrap();
        assert_eq!(
            member(&repeated, "k").map(|m| value_of(&m)),
            Some(json!([2]))
        );
        assert_eq!(
            member(&repeated, "k1").map(|m| value_of(&m)),
            Some(json!(0))
        );
    }

    /// A result that does not fit is -32602 "malformed result", worded without serde_json's
    /// position, as a decode from a value worded it.
    #[test]
    fn result_as_reads_the_text_and_says_what_does_not_fit() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct R {
            name: String,
        }
        let r = Response::ok_raw(Id::Number(1), to_raw(&json!({"name": 3})));
        let e = r.result_as::<R>().unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(
            e.message,
            "malformed result: invalid type: integer `3`, expected a string"
        );
        assert_eq!(
            Response::ok(Id::Number(1), json!({}))
                .result_as::<R>()
                .unwrap_err()
                .message,
            "malformed result: missing field `name`"
        );
        assert_eq!(
            Response::ok(Id::Number(1), Value::Null)
                .result_as::<Option<R>>()
                .map(|r| r.is_none()),
            Ok(true)
        );
    }

    /// Text decodes as its bytes do, malformed or not.
    #[test]
    fn decode_str_agrees_with_decode() {
        for text in [
            r#"{"jsonrpc":"2.0","id":"é","method":"m","params":{"a":"ü"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"#,
            r#""just a string""#,
        ] {
            assert_eq!(
                Message::decode_str(text),
                Message::decode(text.as_bytes()),
                "{text}"
            );
        }
    }

    /// A notification's empty params are left out, as they always were.
    #[test]
    fn a_notifications_empty_params_are_left_out() {
        let n = Notification::new::<crate::method::Initialized>(&Default::default());
        assert_eq!(n.params.as_deref().map(RawValue::get), None);
        assert_eq!(
            Message::Notification(n).encode(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
    }

    /// Params that do not fit are invalid params (-32602); errors about params or an id say
    /// what is wrong without serde_json's position and without echoing the peer's value.
    #[test]
    fn params_and_id_errors_read_plainly() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct P {
            name: String,
        }
        let r = Request {
            id: Id::Number(1),
            method: "m".into(),
            params: Some(to_raw(&json!({"name": 3}))),
        };
        let e = r.params_as::<P>().unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(
            e.message,
            "invalid params: invalid type: integer `3`, expected a string"
        );
        let no_name = Request {
            params: None,
            ..r.clone()
        };
        assert_eq!(
            no_name.params_as::<P>().unwrap_err().message,
            "invalid params: missing field `name`"
        );
        let detail = |v: Value| match dec(v) {
            Err(DecodeError::Invalid { detail, .. }) => detail,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            detail(json!({"jsonrpc":"2.0","id":{"secret":"x"},"method":"ping"})),
            "an id must be a string or an integer, not an object"
        );
        assert_eq!(
            detail(json!({"jsonrpc":"2.0","id":true,"method":"ping"})),
            "an id must be a string or an integer, not a boolean"
        );
        assert_eq!(
            detail(json!({"jsonrpc":2.0,"id":1,"method":"ping"})),
            "\"jsonrpc\" must be \"2.0\""
        );
        assert_eq!(
            detail(json!({"jsonrpc":"2.0 ","id":1,"method":"ping"})),
            "\"jsonrpc\" must be \"2.0\""
        );
        // Spelled with an escape, it is still the string "2.0".
        let escaped = br#"{"jsonrpc":"2\u002e0","id":1,"method":"ping"}"#;
        assert!(matches!(
            Message::decode(escaped),
            Ok(Message::Request(r)) if r.method == "ping"
        ));
    }
    /// A member's name spelled with escapes is the same name (JSON compares names after
    /// unescaping), in the envelope and where one member of a result is looked up.
    #[test]
    fn member_names_spelled_with_escapes_are_the_same_names() {
        let text = br#"{"json\u0072pc":"2.0","\u0069d":1,"meth\u006fd":"tools/call","par\u0061ms":{"n\u0061me":"x"}}"#;
        let Ok(Message::Request(r)) = Message::decode(text) else {
            panic!("escaped member names are still a request");
        };
        assert_eq!((r.id, r.method.as_str()), (Id::Number(1), "tools/call"));
        let params = r.params.expect("params");
        assert_eq!(
            member(&params, "name").map(|v| v.get().to_owned()),
            Some("\"x\"".to_owned())
        );
    }
}

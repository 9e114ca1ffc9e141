//! Multi round-trip requests (MCP 2026-07-28, `basic/patterns/mrtr.md`): how a tool
//! handler's question to a modern client (`ToolContext::elicit`,
//! `create_message`, `list_roots`) travels in an `InputRequiredResult`, and how the
//! client's retry answers it. A `prompts/get` or `resources/read` handler's questions
//! (`RequestContext`) go the same way, their state bound
//! to the prompt and its arguments or to the resource's URI.
//!
//! **The design: the handler runs again.** **\[project\]** MRTR's retry is a new,
//! independent request ("the server processing the retry does not need any information
//! beyond what is directly present in the retry request"), so nothing of a call waits on
//! the server between its rounds. A handler's first question the call carries no answer to
//! ends the call with an `InputRequiredResult` holding that one question, under a key
//! derived from the question's place in the run and its content ([`question_key`]); the
//! running handler is cancelled (its `ask` fails).
//! The retry runs the handler again from the start: each question it asks and the retry
//! answers (in `inputResponses`, or carried from earlier rounds in `requestState`) returns
//! that answer at once, without asking; the next unanswered one ends the round again. So a
//! handler must do before its questions only what it may do again (read, not write), as any
//! MRTR server must; a question whose content changed between runs gets a new key and is
//! asked again, never given an answer to another question.
//!
//! Against parking the running handler between rounds: a client MAY never retry (mrtr.md:
//! servers MUST NOT assume it), a parked call holds its handler, its instance's turn and
//! memory until a timeout, a retry may reach another process behind a load balancer, and
//! the spec's own model is the stateless one.
//!
//! **`requestState`** carries the answers the run has used so far (so a handler asking two
//! questions gets both on the third run), bound as mrtr.md "Server Requirements" 4–5 say:
//! to the request (method, tool name, a digest of its arguments in RFC 8785 form), to the
//! principal (a named one; every anonymous request has a principal of its own, so anonymous
//! state binds to "anonymous"), and to an expiry ([`STATE_TTL`]); all under an
//! HMAC-SHA-256 with the server's key ([`StateKey`]). **\[project\]** It is signed, not
//! encrypted: what it holds is what this client itself answered. A state that fails any
//! check is refused with -32602 and a reason (`data.reason`), as is one too long, and an
//! `inputResponses` that is not an object of results or has too many members
//! ([`MAX_INPUT_RESPONSES`]). A `requestState` is not single-use (no handler of this SDK
//! redeems one); within its expiry a replay by the same principal runs the same call again.
//!
//! **Keys chosen by the handler.** A handler may name its question's key itself
//! (`ToolContext::elicit_as` and its siblings): the
//! question then travels and is answered under that key (`user_name`), which clients that
//! know the server's keys (the official conformance suite's) answer without reading them
//! from the first round, even with no `requestState`. A key used twice in one run, empty,
//! or longer than [`MAX_KEY_CHARS`] fails the question (`AskError::Limit`).
//!
//! **Bounds**: a state at most [`MAX_STATE_CHARS`] characters (received or issued), at most
//! [`MAX_QUESTIONS`] questions answered in one run; past either the handler's question
//! fails with `AskError::Limit`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, RawValue, to_raw};
use mcpl_protocol::modern::{INPUT_RESPONSES, InputRequest, InputRequiredResult, REQUEST_STATE};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The longest `requestState` read or issued, in characters.
pub const MAX_STATE_CHARS: usize = 64 * 1024;

/// The most members an `inputResponses` may have.
pub const MAX_INPUT_RESPONSES: usize = 32;

/// The longest input key a handler may choose (`ToolContext::elicit_as`).
pub const MAX_KEY_CHARS: usize = 64;

/// The most questions one run of a handler may have answered; the next fails.
pub const MAX_QUESTIONS: usize = 16;

/// How long a `requestState` is honoured after it was issued. **\[project\]** Ten minutes:
/// mrtr.md asks for "a short expiry", and the retry waits for a person answering a form.
pub const STATE_TTL: Duration = Duration::from_secs(600);

/// The version prefix of the state's format, under the MAC.
const FORMAT: &str = "m1";

/// `data.reason` of every refusal of a `requestState` or `inputResponses`.
const REASON: &str = "invalid_request_state";

/// The key a server signs its `requestState` with. Drawn at random when the server is
/// built, unless given (`ServerBuilder::request_state_key`):
/// servers behind one load balancer share one so that any of them takes another's state.
#[derive(Clone)]
pub struct StateKey([u8; 32]);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

impl StateKey {
    /// A key of the given bytes (a server draws them at random, or is given them).
    pub fn new(bytes: [u8; 32]) -> Self {
        StateKey(bytes)
    }

    fn mac(&self, message: &[u8]) -> [u8; 32] {
        hmac_sha256(&self.0, message)
    }
}

/// HMAC-SHA-256 (RFC 2104) of `message` under a key of at most 64 bytes.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    block[..key.len()].copy_from_slice(key);
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// What a state is valid for (mrtr.md "Server Requirements" 5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The method.
    m: String,
    /// What the request names: the tool's or the prompt's name, or the resource's URI.
    t: String,
    /// SHA-256 of the arguments in RFC 8785 form, base64url.
    d: String,
    /// The named principal; `None` for an anonymous one.
    p: Option<String>,
}

impl Binding {
    /// A call of `tool` with `arguments` (absent: none) by `principal`.
    pub fn new(
        method: &str,
        tool: &str,
        arguments: Option<&Value>,
        principal: Option<String>,
    ) -> Self {
        let canonical = arguments
            .map(|a| serde_json_canonicalizer::to_string(a).unwrap_or_default())
            .unwrap_or_default();
        Binding {
            m: method.to_owned(),
            t: tool.to_owned(),
            d: URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes())),
            p: principal,
        }
    }

    /// The binding of a request of `method` with `params` by `principal`: what it names —
    /// a tool's or prompt's `name` and its `arguments`, or for `resources/read`
    /// (`read_resource`) the `uri` and no arguments; params that do not read name nothing.
    pub fn of_request(
        method: &str,
        read_resource: bool,
        params: Option<&RawValue>,
        principal: Option<String>,
    ) -> Self {
        #[derive(Deserialize)]
        struct Target {
            #[serde(default)]
            name: String,
            #[serde(default)]
            uri: String,
            #[serde(default)]
            arguments: Option<Value>,
        }
        let mut target = params
            .and_then(|p| serde_json::from_str::<Target>(p.get()).ok())
            .unwrap_or(Target {
                name: String::new(),
                uri: String::new(),
                arguments: None,
            });
        if read_resource {
            target.name = std::mem::take(&mut target.uri);
            target.arguments = None;
        }
        Binding::new(method, &target.name, target.arguments.as_ref(), principal)
    }
}

/// A call's [`Binding`], made the first time it is needed — when the call brings a
/// `requestState` to open, or its handler asks a question whose state is sealed — which
/// most calls never do: the arguments' RFC 8785 form and its SHA-256 cost more than the
/// rest of a light call's reading (issue #42).
#[derive(Debug, Clone)]
pub struct Bound {
    made: std::cell::OnceCell<Binding>,
    /// What it is made from, until then.
    method: String,
    read_resource: bool,
    params: Option<Box<RawValue>>,
    principal: Option<String>,
}

impl Bound {
    /// [`Binding::of_request`], made when first needed.
    pub fn later(
        method: &str,
        read_resource: bool,
        params: Option<Box<RawValue>>,
        principal: Option<String>,
    ) -> Self {
        Bound {
            made: std::cell::OnceCell::new(),
            method: method.to_owned(),
            read_resource,
            params,
            principal,
        }
    }

    /// The binding, made now if it was not yet.
    fn get(&self) -> &Binding {
        self.made.get_or_init(|| {
            Binding::of_request(
                &self.method,
                self.read_resource,
                self.params.as_deref(),
                self.principal.clone(),
            )
        })
    }
}

impl From<Binding> for Bound {
    fn from(binding: Binding) -> Self {
        Bound {
            made: std::cell::OnceCell::from(binding),
            method: String::new(),
            read_resource: false,
            params: None,
            principal: None,
        }
    }
}

/// What a state holds.
#[derive(Serialize, Deserialize)]
struct Payload {
    b: Binding,
    /// Expiry, milliseconds since the Unix epoch.
    e: u64,
    /// The answers used so far, by key.
    a: BTreeMap<String, Box<RawValue>>,
}

/// One modern call's answers while its handler runs (module docs).
#[derive(Debug, Clone)]
pub struct Carried {
    binding: Bound,
    /// Answers the retry carried, not yet used by this run.
    answers: BTreeMap<String, Box<RawValue>>,
    /// Answers this run used, in the state of its next round.
    used: BTreeMap<String, Box<RawValue>>,
    /// Questions this run asked so far.
    asked: usize,
}

/// What a handler's question comes to.
#[derive(Debug)]
pub enum Question {
    /// The call carried its answer.
    Answered(Box<RawValue>),
    /// It goes to the client: the call's `InputRequiredResult`.
    Ask(Box<RawValue>),
    /// Past a bound (module docs).
    Limit(String),
}

/// Whether params' text may hold a retry's members: an object that names neither, and
/// escapes no character that could spell one, holds none, and is not read for them (most
/// calls are first tries). Anything else — an array, which a struct reads by position — is
/// read.
fn may_carry_retry(params: &str) -> bool {
    !params.trim_start().starts_with('{')
        || params.contains(INPUT_RESPONSES)
        || params.contains(REQUEST_STATE)
        || params.contains("\\u")
}

/// The params members a retry carries.
#[derive(Deserialize)]
struct Retry {
    #[serde(rename = "inputResponses", default)]
    input_responses: Option<Value>,
    #[serde(rename = "requestState", default)]
    request_state: Option<Value>,
}

fn refuse(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message.into())
        .with_data(serde_json::json!({ "reason": REASON }))
}

fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

impl Carried {
    /// What a modern call's params carry for its handler: the answers in its
    /// `inputResponses` and its `requestState`, the state checked (module docs); -32602
    /// for anything that fails.
    pub fn read(
        params: Option<&RawValue>,
        binding: impl Into<Bound>,
        key: &StateKey,
        now: SystemTime,
    ) -> Result<Carried, ErrorObject> {
        let binding = binding.into();
        let retry = match params.filter(|p| may_carry_retry(p.get())) {
            Some(p) => serde_json::from_str::<Retry>(p.get()).unwrap_or(Retry {
                input_responses: None,
                request_state: None,
            }),
            None => Retry {
                input_responses: None,
                request_state: None,
            },
        };
        let mut answers = match retry.request_state {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::String(state)) => open(&state, binding.get(), key, now)?,
            Some(_) => return Err(refuse(format!("{REQUEST_STATE} must be a string"))),
        };
        match retry.input_responses {
            None | Some(Value::Null) => {}
            Some(Value::Object(responses)) => {
                if responses.len() > MAX_INPUT_RESPONSES {
                    return Err(refuse(format!(
                        "{INPUT_RESPONSES} has {} members, at most {MAX_INPUT_RESPONSES} are read",
                        responses.len()
                    )));
                }
                for (k, v) in responses {
                    if !v.is_object() {
                        return Err(refuse(format!(
                            "{INPUT_RESPONSES}[{k:?}] must be an object (the client's result)"
                        )));
                    }
                    answers.insert(k, to_raw(&v));
                }
            }
            Some(_) => return Err(refuse(format!("{INPUT_RESPONSES} must be an object"))),
        }
        Ok(Carried {
            binding,
            answers,
            used: BTreeMap::new(),
            asked: 0,
        })
    }

    /// The handler asks `method` with `params`: its answer when the call carried one, else
    /// the `InputRequiredResult` that asks it (module docs).
    pub fn question(
        &mut self,
        chosen: Option<&str>,
        method: &str,
        params: &RawValue,
        key: &StateKey,
        now: SystemTime,
    ) -> Question {
        let one = [Asked {
            chosen,
            method,
            params,
        }];
        match self.questions(&one, key, now) {
            Batch::Answered(mut answers) => Question::Answered(answers.remove(0)),
            Batch::Ask(result) => Question::Ask(result),
            Batch::Limit(why) => Question::Limit(why),
        }
    }

    /// The handler asks several questions at once: their answers, in order, when the call
    /// carried them all; else one `InputRequiredResult` asking every one it did not (those
    /// answered go on in the state) (module docs).
    pub fn questions(&mut self, asked: &[Asked<'_>], key: &StateKey, now: SystemTime) -> Batch {
        if self.asked + asked.len() > MAX_QUESTIONS {
            return Batch::Limit(format!(
                "a call may have at most {MAX_QUESTIONS} questions answered"
            ));
        }
        let mut ids: Vec<String> = Vec::with_capacity(asked.len());
        for (n, q) in asked.iter().enumerate() {
            let id = match q.chosen {
                Some(chosen) if chosen.is_empty() || chosen.len() > MAX_KEY_CHARS => {
                    return Batch::Limit(format!(
                        "an input key must have 1 to {MAX_KEY_CHARS} characters"
                    ));
                }
                Some(chosen)
                    if self.used.contains_key(chosen) || ids.iter().any(|i| i == chosen) =>
                {
                    return Batch::Limit(format!(
                        "the input key {chosen:?} was used by another question of this run"
                    ));
                }
                Some(chosen) => chosen.to_owned(),
                None => question_key(self.asked + n, q.method, q.params),
            };
            ids.push(id);
        }
        self.asked += asked.len();
        let mut answers = Vec::with_capacity(asked.len());
        let mut missing = BTreeMap::new();
        for (id, q) in ids.into_iter().zip(asked) {
            match self.answers.remove(&id) {
                Some(answer) => {
                    self.used.insert(id, answer.clone());
                    answers.push(answer);
                }
                None => {
                    let params: Value = serde_json::from_str(q.params.get()).unwrap_or(Value::Null);
                    let request = InputRequest {
                        method: q.method.to_owned(),
                        params: Some(params).filter(|p| !p.is_null()),
                    };
                    missing.insert(id, request);
                }
            }
        }
        if missing.is_empty() {
            return Batch::Answered(answers);
        }
        let payload = Payload {
            b: self.binding.get().clone(),
            e: millis(now + STATE_TTL),
            a: self.used.clone(),
        };
        let state = seal(&payload, key);
        if state.len() > MAX_STATE_CHARS {
            return Batch::Limit(format!(
                "the answers so far outgrow the request state ({} characters, at most {MAX_STATE_CHARS})",
                state.len()
            ));
        }
        let result = InputRequiredResult::new(missing, Some(state));
        Batch::Ask(to_raw(&result))
    }
}

/// One question of a handler's, for [`Carried::questions`].
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// The key the handler chose, if it did.
    pub chosen: Option<&'a str>,
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: &'a str,
    /// Its params.
    pub params: &'a RawValue,
}

/// What questions asked together come to.
#[derive(Debug)]
pub enum Batch {
    /// The call carried every answer, in the questions' order.
    Answered(Vec<Box<RawValue>>),
    /// The ones it did not carry go to the client: the call's `InputRequiredResult`.
    Ask(Box<RawValue>),
    /// Past a bound (module docs).
    Limit(String),
}

/// The key of a run's `n`th question (from 0): its place, its method, and a digest of its
/// params, so a different question at the same place is not given this one's answer.
pub fn question_key(n: usize, method: &str, params: &RawValue) -> String {
    let kind = match method {
        "elicitation/create" => "elicit",
        "sampling/createMessage" => "sample",
        "roots/list" => "roots",
        _ => "input",
    };
    let digest = Sha256::new()
        .chain_update(method.as_bytes())
        .chain_update([0])
        .chain_update(params.get().as_bytes())
        .finalize();
    format!("{kind}-{n}-{}", URL_SAFE_NO_PAD.encode(&digest[..9]))
}

fn seal(payload: &Payload, key: &StateKey) -> String {
    let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(payload).unwrap_or_default());
    let signed = format!("{FORMAT}.{body}");
    let mac = URL_SAFE_NO_PAD.encode(key.mac(signed.as_bytes()));
    format!("{signed}.{mac}")
}

/// The answers in `state`, when this server issued it for this request and it has not
/// expired.
fn open(
    state: &str,
    binding: &Binding,
    key: &StateKey,
    now: SystemTime,
) -> Result<BTreeMap<String, Box<RawValue>>, ErrorObject> {
    if state.len() > MAX_STATE_CHARS {
        return Err(refuse(format!(
            "{REQUEST_STATE} is {} characters long, at most {MAX_STATE_CHARS} are read",
            state.len()
        )));
    }
    let not_ours = || {
        refuse(format!(
            "{REQUEST_STATE} was not issued by this server, or was altered: retry the call without it"
        ))
    };
    let (signed, mac) = state.rsplit_once('.').ok_or_else(not_ours)?;
    let mac = URL_SAFE_NO_PAD.decode(mac).map_err(|_| not_ours())?;
    let expected = key.mac(signed.as_bytes());
    // Constant time: every byte compared, whatever the first difference.
    let same = mac.len() == expected.len()
        && mac
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if !same {
        return Err(not_ours());
    }
    let body = signed
        .strip_prefix(FORMAT)
        .and_then(|b| b.strip_prefix('.'))
        .ok_or_else(not_ours)?;
    let bytes = URL_SAFE_NO_PAD.decode(body).map_err(|_| not_ours())?;
    let payload: Payload = serde_json::from_slice(&bytes).map_err(|_| not_ours())?;
    if millis(now) > payload.e {
        return Err(refuse(format!(
            "{REQUEST_STATE} has expired: retry the call without it"
        )));
    }
    if payload.b.p != binding.p {
        return Err(refuse(format!(
            "{REQUEST_STATE} was issued to another principal"
        )));
    }
    if payload.b != *binding {
        return Err(refuse(format!(
            "{REQUEST_STATE} was issued for another request (its method, the tool, prompt or resource it names, or its arguments differ)"
        )));
    }
    Ok(payload.a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    fn binding() -> Binding {
        Binding::new("tools/call", "t", Some(&json!({"b": 1, "a": 2})), None)
    }

    /// A key the handler chose: the question travels under it, and a client that knows the
    /// key answers it on the first call, with no `requestState`; a key used twice in a run,
    /// or empty, fails the question.
    #[test]
    fn issue39_06_a_chosen_key_is_asked_and_answered_under_that_key() {
        let key = StateKey::new([7; 32]);
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let q = to_raw(&json!({"message": "What is your name?"}));
        let mut first = Carried::read(None, binding(), &key, now).unwrap();
        let Question::Ask(r) =
            first.question(Some("user_name"), "elicitation/create", &q, &key, now)
        else {
            panic!("asked")
        };
        let r: Value = serde_json::from_str(r.get()).unwrap();
        assert_eq!(
            r["inputRequests"]["user_name"]["method"],
            "elicitation/create"
        );
        let params = to_raw(&json!({"inputResponses": {
            "user_name": {"action": "accept", "content": {"name": "Alice"}},
            "unknown_extra_key": {"action": "accept"}}}));
        let mut retry = Carried::read(Some(&params), binding(), &key, now).unwrap();
        let Question::Answered(a) =
            retry.question(Some("user_name"), "elicitation/create", &q, &key, now)
        else {
            panic!("answered without a state")
        };
        assert!(a.get().contains("Alice"));
        assert!(matches!(
            retry.question(Some("user_name"), "elicitation/create", &q, &key, now),
            Question::Limit(_)
        ));
        assert!(matches!(
            retry.question(Some(""), "roots/list", &q, &key, now),
            Question::Limit(_)
        ));
    }

    #[test]
    fn a_question_is_asked_then_answered_from_the_retry_and_carried() {
        let key = StateKey::new([7; 32]);
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let q1 = to_raw(&json!({"message": "one"}));
        let q2 = to_raw(&json!({"message": "two"}));
        let mut first = Carried::read(None, binding(), &key, now).unwrap();
        let Question::Ask(r) = first.question(None, "elicitation/create", &q1, &key, now) else {
            panic!("asked")
        };
        let r: Value = serde_json::from_str(r.get()).unwrap();
        let k1 = question_key(0, "elicitation/create", &q1);
        assert_eq!(r["resultType"], "input_required");
        assert_eq!(r["inputRequests"][&k1]["params"]["message"], "one");
        let state = r["requestState"].as_str().unwrap().to_owned();
        // The retry, its arguments in another order: the same request.
        let params = to_raw(&json!({"inputResponses": {&k1: {"action": "accept"}},
            "requestState": state}));
        let b = Binding::new("tools/call", "t", Some(&json!({"a": 2, "b": 1})), None);
        let mut second = Carried::read(Some(&params), b, &key, now).unwrap();
        assert!(matches!(
            second.question(None, "elicitation/create", &q1, &key, now),
            Question::Answered(_)
        ));
        let Question::Ask(r) = second.question(None, "elicitation/create", &q2, &key, now) else {
            panic!("asked")
        };
        let r: Value = serde_json::from_str(r.get()).unwrap();
        let k2 = question_key(1, "elicitation/create", &q2);
        let params = to_raw(&json!({"inputResponses": {&k2: {"action": "decline"}},
            "requestState": r["requestState"]}));
        let mut third = Carried::read(Some(&params), binding(), &key, now).unwrap();
        for q in [&q1, &q2] {
            assert!(matches!(
                third.question(None, "elicitation/create", q, &key, now),
                Question::Answered(_)
            ));
        }
    }

    /// A binding made only when needed (issue #42) is the one made at once: a state sealed
    /// for a call made lazily is opened by a retry read either way, and one sealed for
    /// other arguments is refused; a `requestState` spelled with an escape is still read.
    #[test]
    fn a_binding_made_later_binds_as_one_made_at_once() {
        let key = StateKey::new([7; 32]);
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let q = to_raw(&json!({"message": "name?"}));
        let call = |args: Value, extra: Value| {
            let mut p = json!({"name": "t", "arguments": args, "_meta": {"x": 1}});
            if let (Some(p), Some(extra)) = (p.as_object_mut(), extra.as_object()) {
                p.extend(extra.clone());
            }
            to_raw(&p)
        };
        let later =
            |params: &RawValue| Bound::later("tools/call", false, Some(params.to_owned()), None);
        let first_params = call(json!({"b": 1, "a": 2}), json!({}));
        let mut first =
            Carried::read(Some(&first_params), later(&first_params), &key, now).unwrap();
        let Question::Ask(r) = first.question(None, "elicitation/create", &q, &key, now) else {
            panic!("asked")
        };
        let r: Value = serde_json::from_str(r.get()).unwrap();
        let state = r["requestState"].clone();
        let retry = call(json!({"a": 2, "b": 1}), json!({"requestState": state}));
        assert!(Carried::read(Some(&retry), later(&retry), &key, now).is_ok());
        assert!(Carried::read(Some(&retry), binding(), &key, now).is_ok());
        let other = call(json!({"a": 3}), json!({"requestState": state}));
        assert!(Carried::read(Some(&other), later(&other), &key, now).is_err());
        // The member's name escaped: read all the same, and refused for its altered state.
        let escaped = RawValue::from_string(
            r#"{"name":"t","arguments":{"a":2,"b":1},"request\u0053tate":"m1.x.y"}"#.to_owned(),
        )
        .unwrap();
        assert!(Carried::read(Some(&escaped), later(&escaped), &key, now).is_err());
        // Params that are no object are read as a struct reads them, by position.
        let array = to_raw(&json!([null, "m1.x.y"]));
        assert!(Carried::read(Some(&array), later(&array), &key, now).is_err());
    }

    #[test]
    fn a_bad_state_is_refused_with_a_reason() {
        let key = StateKey::new([7; 32]);
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let q = to_raw(&json!({}));
        let mut c = Carried::read(None, binding(), &key, now).unwrap();
        let Question::Ask(r) = c.question(None, "roots/list", &q, &key, now) else {
            panic!("asked")
        };
        let r: Value = serde_json::from_str(r.get()).unwrap();
        let state = r["requestState"].as_str().unwrap().to_owned();
        let read = |state: Value, b: Binding, k: &StateKey, at| {
            let p = to_raw(&json!({ "requestState": state }));
            Carried::read(Some(&p), b, k, at).map(|_| ()).unwrap_err()
        };
        let e = read(json!("garbage"), binding(), &key, now);
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("not issued by this server"), "{e:?}");
        let e = read(json!(state), binding(), &StateKey::new([8; 32]), now);
        assert!(e.message.contains("not issued by this server"), "{e:?}");
        let mut altered = state.clone();
        altered.insert(5, 'x');
        let e = read(json!(altered), binding(), &key, now);
        assert!(e.message.contains("not issued by this server"), "{e:?}");
        let later = now + STATE_TTL + Duration::from_secs(1);
        let e = read(json!(state), binding(), &key, later);
        assert!(e.message.contains("expired"), "{e:?}");
        let other = Binding::new("tools/call", "t", Some(&json!({"a": 3})), None);
        let e = read(json!(state), other, &key, now);
        assert!(e.message.contains("another request"), "{e:?}");
        let named = Binding::new(
            "tools/call",
            "t",
            Some(&json!({"a": 2, "b": 1})),
            Some("alice".into()),
        );
        let e = read(json!(state), named, &key, now);
        assert!(e.message.contains("another principal"), "{e:?}");
        let e = read(json!(5), binding(), &key, now);
        assert!(e.message.contains("must be a string"), "{e:?}");
        assert_eq!(e.data.unwrap()["reason"], REASON);
        let long = "a".repeat(MAX_STATE_CHARS + 1);
        let e = read(json!(long), binding(), &key, now);
        assert!(e.message.contains("at most"), "{e:?}");
        let p = to_raw(&json!({ "inputResponses": {"k": 1} }));
        let e = Carried::read(Some(&p), binding(), &key, now).unwrap_err();
        assert!(e.message.contains("must be an object"), "{e:?}");
    }

    #[test]
    fn a_run_asks_at_most_max_questions() {
        let key = StateKey::new([1; 32]);
        let now = UNIX_EPOCH;
        let mut responses = serde_json::Map::new();
        for n in 0..MAX_QUESTIONS {
            let q = to_raw(&json!({ "n": n }));
            responses.insert(question_key(n, "roots/list", &q), json!({"roots": []}));
        }
        let p = to_raw(&json!({ "inputResponses": responses }));
        let mut c = Carried::read(Some(&p), binding(), &key, now).unwrap();
        for n in 0..MAX_QUESTIONS {
            let q = to_raw(&json!({ "n": n }));
            assert!(matches!(
                c.question(None, "roots/list", &q, &key, now),
                Question::Answered(_)
            ));
        }
        let q = to_raw(&json!({ "n": MAX_QUESTIONS }));
        assert!(matches!(
            c.question(None, "roots/list", &q, &key, now),
            Question::Limit(_)
        ));
    }
}

//! The session core driven as the actor drives it, with the host's side in raw JSON (the
//! shapes of the spec's text) and what it asks for rendered the way the actor writes it
//! (revs from a [`Sequencer`], as the connection's writer takes them): routing and the
//! lifecycle, vectors 2, 3, 29 and 31 through real inputs, and a property test over any
//! interleaving of calls, deliveries, cancels and handler ends.

use super::*;
use crate::carrier::tests::{draft, id};
use crate::catalog::tests::arcade;
use crate::sequencer::Sequencer;
use mcpl_protocol::hints::ToolHint;
use mcpl_protocol::jsonrpc::{Message, to_raw};
use mcpl_protocol::mcpl::{CAP_PUSH_EVENTS, CAP_TOOLS, FeatureSetDecl};
use mcpl_testkit_msg as msg;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

/// The test's own types: an answer is the result it carries, an event its text, a
/// running handler a name.
#[derive(Debug)]
struct TestIo;

impl Io for TestIo {
    type Stop = String;
    type Answer = Result<Value, i64>;
    type Event = String;
}

/// A session core and the host's view of what it wrote.
struct Host {
    core: SessionCore<TestIo>,
    revs: Sequencer,
    /// Every message written, as JSON, in order.
    wire: Vec<Value>,
    /// What the core asked besides writing, in order (as text).
    done: Vec<String>,
}

fn manifest() -> McplManifest {
    let mut m = McplManifest {
        version: "0.5".into(),
        push_events: Some(true),
        tool_hints: Some(true),
        ..Default::default()
    };
    m.feature_sets.insert(
        "game".into(),
        FeatureSetDecl::new("games", &[CAP_TOOLS, CAP_PUSH_EVENTS]),
    );
    m
}

fn views(m: McplManifest) -> Arc<ManifestViews> {
    Arc::new(ManifestViews::new(Arc::new(m)))
}

impl Host {
    fn new(logging: Option<LoggingLevel>) -> Self {
        Host::offering(logging, Default::default())
    }

    /// [`Host::new`] of a server offering `offers` besides tools.
    fn offering(logging: Option<LoggingLevel>, offers: super::Offers) -> Self {
        let profile = Profile {
            info: Implementation::new("core-test", "1"),
            instructions: None,
            logging,
            page_size: 50,
            offers,
            watchable: None,
            idle_end: None,
        };
        Host {
            core: SessionCore::new(Arc::new(profile), views(manifest()), Arc::new(arcade())),
            revs: Sequencer::new(),
            wire: Vec::new(),
            done: Vec::new(),
        }
    }

    /// A hinted MCPL host through the whole handshake, granted pushing.
    fn hinted() -> Self {
        let mut h = Host::new(None);
        h.send(msg::request(
            0,
            "initialize",
            msg::initialize_params(msg::mcpl_capabilities(true), "test"),
        ));
        h.send(msg::initialized());
        h.send(msg::request(
            -1,
            "featureSets/update",
            json!({"effectiveCapabilities": ["tools", "pushEvents"]}),
        ));
        assert!(h.core.hinted());
        h.take();
        h
    }

    /// The host sends `v`.
    fn send(&mut self, v: Value) {
        let m: Message = serde_json::from_value(v).expect("a JSON-RPC message");
        self.core.handle_message(m);
        self.drain();
    }

    /// Drains the core as the actor does.
    fn drain(&mut self) {
        while let Some(out) = self.core.poll() {
            match out {
                Output::Transmit(t) => {
                    let v = self.render(t);
                    self.wire.push(v);
                }
                Output::Event(e) => self.done.push(match e {
                    Event::Forward(f) => format!("forward {f:?}"),
                    Event::Run { request, .. } => format!("run {request}"),
                    Event::RunDirect { request, tool, .. } => format!("run {request} {tool} here"),
                    Event::Stop { request, stop } => format!("stop {request} {stop}"),
                    Event::Ended(id) => format!("ended {id}"),
                    Event::ListenEnded(id) => format!("listen ended {id}"),
                    Event::Watch(uri) => format!("watch {uri}"),
                    Event::Unwatch(uri) => format!("unwatch {uri}"),
                    Event::Response(r) => format!("response {:?}", r.id),
                    Event::Detach(r) => format!("detach {}", r.id),
                    Event::CancelDetached { request, .. } => format!("cancel detached {request}"),
                    Event::Serve { request, feature } => format!("serve {request} {feature:?}"),
                }),
            }
        }
    }

    fn render(&mut self, t: Transmit<TestIo>) -> Value {
        // As the actor writes it: an answer to a modern request made modern.
        let reply = self.core.modern_reply(&t);
        let v = self.render_legacy(t);
        match reply {
            Some(reply) => {
                let m: Message = serde_json::from_value(v).expect("a message");
                serde_json::to_value(reply.apply(m)).unwrap()
            }
            None => v,
        }
    }

    fn render_legacy(&mut self, t: Transmit<TestIo>) -> Value {
        let stamp = |revs: &mut Sequencer, d: Option<HintDraft>| {
            d.and_then(|d| revs.stamp_if_any(d))
                .map(|h| serde_json::to_value(h).unwrap())
        };
        let with = |mut result: Value, hints: Option<Value>| {
            if let Some(h) = hints {
                result["_meta"] = json!({"mcpl/hints": h});
            }
            result
        };
        match t {
            Transmit::Message(m) => serde_json::to_value(m).unwrap(),
            Transmit::Hints(d) => {
                let h = serde_json::to_value(self.revs.stamp(d)).unwrap();
                msg::notification("tools/hints", h)
            }
            Transmit::Answer {
                request,
                answer,
                hints,
            } => match answer {
                Ok(result) => {
                    let hints = stamp(&mut self.revs, hints);
                    msg::result(serde_json::to_value(request).unwrap(), with(result, hints))
                }
                Err(code) => msg::error(serde_json::to_value(request).unwrap(), code, "refused"),
            },
            Transmit::CallResult {
                request,
                result,
                hints,
            } => {
                let hints = stamp(&mut self.revs, hints);
                let result = serde_json::to_value(result).unwrap();
                msg::result(serde_json::to_value(request).unwrap(), with(result, hints))
            }
            Transmit::Push {
                event,
                feature_set,
                hints,
            } => {
                let mut params =
                    json!({"featureSet": feature_set, "payload": {"content": [msg::text(&event)]}});
                if let Some(h) = stamp(&mut self.revs, hints) {
                    params["hints"] = h;
                }
                msg::request(0, "push/event", params)
            }
            Transmit::StreamEvent {
                listen,
                event,
                feature_set,
                hints,
            } => {
                let params = json!({"featureSet": feature_set, "payload": {"content": [msg::text(&event)]},
                    "hints": hints, "_meta": {"io.modelcontextprotocol/subscriptionId": listen}});
                json!({"jsonrpc": "2.0", "method": "notifications/mcpl/event", "params": params})
            }
            Transmit::Statement { request, statement } => {
                let h = serde_json::to_value(self.revs.stamp(statement.hints)).unwrap();
                let result = json!({"open": statement.open, "ended": statement.ended, "_meta": {"mcpl/hints": h}});
                msg::result(serde_json::to_value(request).unwrap(), result)
            }
            Transmit::ToolsList(page) => {
                serde_json::to_value(page.response(self.revs.last())).unwrap()
            }
        }
    }

    /// What was written and done since the last take.
    fn take(&mut self) -> (Vec<Value>, Vec<String>) {
        (
            std::mem::take(&mut self.wire),
            std::mem::take(&mut self.done),
        )
    }

    /// The principal answers request `n` with `answer`, carrying `changes`.
    fn answer(&mut self, n: i64, answer: Result<Value, i64>, changes: &[&str]) {
        let kind = if answer.is_ok() {
            AnswerKind::Result
        } else {
            AnswerKind::Error
        };
        self.deliver(Delivery {
            draft: draft(changes),
            answers: vec![Answered {
                request: id(n),
                kind,
                deferred: false,
                answer: Some(answer),
                direct: None,
            }],
            events: vec![],
            hold: None,
        });
    }

    fn deliver(&mut self, d: Delivery<TestIo>) {
        self.core.deliver(d);
        self.drain();
    }

    /// The principal sends call `n` to its tool's handler; when the core asks to run it,
    /// the handler starts: its key.
    fn run(&mut self, n: i64) -> Option<u64> {
        self.deliver_run(n, None);
        let asked = self.done.iter().any(|d| d == &format!("run {n}"));
        asked.then(|| {
            let key = self.core.new_key();
            self.core.start(id(n), key, format!("handler-{n}"));
            key
        })
    }

    /// `tools/call` `n`, then the principal sends it to a handler, which starts.
    fn running_handler(&mut self, n: i64) -> u64 {
        self.send(msg::call(n, "status", json!({})));
        let key = self.run(n).expect("the core runs the handler");
        let (_, done) = self.take();
        assert_eq!(done.last(), Some(&format!("run {n}")));
        key
    }

    /// A handler of call `call` opened a toolset for its caller: the changes are held.
    fn handler_opened(&mut self, call: i64, changes: &[&str]) {
        self.handler_answered(call, draft(changes), true);
    }

    /// The principal answers a handler's own open or close for call `call`, whose handler
    /// is `running` or not (it is the session's handler table that knows).
    fn handler_answered(&mut self, call: i64, changes: HintDraft, running: bool) {
        self.deliver(Delivery {
            draft: changes,
            answers: vec![Answered {
                request: id(900 + call),
                kind: AnswerKind::Handler {
                    call: Some(id(call)),
                    running,
                },
                deferred: false,
                answer: None,
                direct: None,
            }],
            events: vec![],
            hold: None,
        });
    }
}

/// The tool names a hint-carrying message's changes name, in order.
fn changed(v: &Value) -> Vec<String> {
    let hints = v
        .pointer("/result/_meta/mcpl~1hints")
        .or_else(|| v.pointer("/params/hints"))
        .or_else(|| (v["method"] == "tools/hints").then(|| &v["params"]));
    hints
        .and_then(|h| h["tools"].as_array())
        .map(|ts| {
            ts.iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn rev_of(v: &Value) -> Option<u64> {
    v.pointer("/result/_meta/mcpl~1hints/rev")
        .or_else(|| v.pointer("/params/hints/rev"))
        .or_else(|| (v["method"] == "tools/hints").then(|| &v["params"]["rev"]))
        .and_then(Value::as_u64)
}

// ---- reading and the lifecycle ----

#[test]
fn before_initialize_only_ping_and_initialize_are_served() {
    let mut h = Host::new(None);
    h.send(msg::request(1, "tools/list", json!({})));
    h.send(msg::request(2, "ping", json!({})));
    h.send(msg::request(3, "server/discover", json!({})));
    let (wire, done) = h.take();
    assert_eq!(msg::error_code(&wire[0]), Some(-32600), "{}", wire[0]);
    assert_eq!(wire[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert_eq!(
        msg::error_code(&wire[2]),
        Some(-32601),
        "without the era's _meta it is no modern request: unknown, as in 2025-11-25"
    );
    assert!(done.is_empty(), "nothing reached the principal: {done:?}");
}

// ---- MCP 2026-07-28: modern requests (issue #39) ----

/// `_meta` of a modern request, with `extra` keys added.
fn modern_meta(extra: Value) -> Value {
    let mut m = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-test", "version": "1"},
    });
    if let (Some(m), Value::Object(extra)) = (m.as_object_mut(), extra) {
        m.extend(extra);
    }
    m
}

fn modern_request(n: i64, method: &str, mut params: Value, extra: Value) -> Value {
    params["_meta"] = modern_meta(extra);
    msg::request(n, method, params)
}

#[test]
fn issue39_01_discover_before_initialize_states_both_eras_and_mcpl() {
    let mut h = Host::new(Some(LoggingLevel::Info));
    h.send(modern_request(1, "server/discover", json!({}), json!({})));
    let (wire, done) = h.take();
    let result = &wire[0]["result"];
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(result["supportedVersions"][0], "2026-07-28");
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2025-11-25"))
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "core-test", "version": "1"})
    );
    assert_eq!(result["capabilities"]["logging"], json!({}));
    assert_eq!(
        result["capabilities"]["extensions"]["mcpl/core"]["version"],
        "0.5"
    );
    assert_eq!(
        (result["ttlMs"].clone(), result["cacheScope"].clone()),
        (json!(0), json!("private"))
    );
    assert_eq!(
        done,
        ["forward Initialized { tool_hints: false, modern: true }"]
    );
    // It changed nothing of the connection: `initialize` opens it as legacy.
    h.send(msg::request(
        2,
        "initialize",
        msg::initialize_params(json!({}), "t"),
    ));
    let (wire, _) = h.take();
    assert_eq!(wire[0]["result"]["protocolVersion"], "2025-11-25");
    assert!(
        wire[0]["result"].get("resultType").is_none(),
        "legacy: {}",
        wire[0]
    );
    // A legacy connection keeps 2025-11-25's rules: discover is unknown there.
    h.send(modern_request(3, "server/discover", json!({}), json!({})));
    let (wire, _) = h.take();
    assert_eq!(msg::error_code(&wire[0]), Some(-32601), "{}", wire[0]);
}

#[test]
fn issue39_02_a_modern_request_needs_its_meta_and_a_served_version() {
    let mut h = Host::new(None);
    let mut no_caps = modern_request(1, "tools/list", json!({}), json!({}));
    no_caps["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    h.send(no_caps);
    h.send(modern_request(
        2,
        "tools/list",
        json!({}),
        json!({"io.modelcontextprotocol/protocolVersion": "1900-01-01"}),
    ));
    h.send(modern_request(3, "toolsets/list", json!({}), json!({})));
    h.send(modern_request(4, "ping", json!({}), json!({})));
    let (wire, done) = h.take();
    assert_eq!(msg::error_code(&wire[0]), Some(-32602), "{}", wire[0]);
    assert_eq!(msg::error_code(&wire[1]), Some(-32022), "{}", wire[1]);
    assert_eq!(wire[1]["error"]["data"]["requested"], "1900-01-01");
    assert_eq!(wire[1]["error"]["data"]["supported"][0], "2026-07-28");
    assert_eq!(
        msg::error_code(&wire[2]),
        Some(-32601),
        "toolsets/* are #40's: {}",
        wire[2]
    );
    assert_eq!(
        msg::error_code(&wire[3]),
        Some(-32601),
        "no ping in 2026-07-28: {}",
        wire[3]
    );
    assert!(done.is_empty(), "nothing reached the principal: {done:?}");
}

/// An `initialize` with modern `_meta` and no `protocolVersion` (as the official
/// conformance suite sends it) is a modern request for a removed method: -32601, and the
/// connection is still unopened, so a legacy `initialize` opens it afterwards.
#[test]
fn issue39_02_an_initialize_with_only_modern_meta_is_a_modern_request() {
    let mut h = Host::new(None);
    h.send(modern_request(1, "initialize", json!({}), json!({})));
    let (wire, _) = h.take();
    assert_eq!(msg::error_code(&wire[0]), Some(-32601), "{}", wire[0]);
    h.send(msg::request(
        2,
        "initialize",
        msg::initialize_params(json!({}), "t"),
    ));
    let (wire, _) = h.take();
    assert_eq!(
        wire[0]["result"]["protocolVersion"], "2025-11-25",
        "{}",
        wire[0]
    );
}

#[test]
fn issue39_02_modern_results_carry_their_type_server_and_cache_hints() {
    let mut h = Host::new(None);
    h.send(modern_request(1, "tools/list", json!({}), json!({})));
    let (_, done) = h.take();
    assert!(done.iter().any(|d| d.contains("ListTools")), "{done:?}");
    h.core
        .tools_view(id(1), None, Arc::new(arcade()), BTreeSet::new());
    h.drain();
    let (listed, _) = h.take();
    h.send(modern_request(
        2,
        "tools/call",
        json!({"name": "status"}),
        json!({}),
    ));
    let (_, done) = h.take();
    assert!(
        done.iter().any(|d| d.contains("plain: true")),
        "a modern call is plain: {done:?}"
    );
    h.answer(2, Ok(json!({"content": []})), &[]);
    let (called, _) = h.take();
    let wire = [listed[0].clone(), called[0].clone()];
    let list = &wire[0]["result"];
    assert_eq!(list["resultType"], "complete", "{list}");
    assert!(
        list["tools"].as_array().is_some_and(|t| !t.is_empty()),
        "{list}"
    );
    assert!(
        list["_meta"].get("mcpl/rev").is_none(),
        "no hints to a modern host: {list}"
    );
    assert_eq!(
        (list["ttlMs"].clone(), list["cacheScope"].clone()),
        (json!(0), json!("private"))
    );
    let call = &wire[1]["result"];
    assert_eq!(call["resultType"], "complete", "{call}");
    assert_eq!(
        call["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "core-test"
    );
    assert!(
        call.get("ttlMs").is_none(),
        "a call's result is not cacheable: {call}"
    );
    assert_eq!(h.core.modern_in_flight(), 0);
}

#[test]
fn issue39_02_log_messages_only_for_a_modern_request_that_asked() {
    let mut h = Host::new(Some(LoggingLevel::Debug));
    let log = |level| LoggingMessageParams {
        level,
        logger: None,
        data: json!("x"),
        meta: None,
    };
    h.send(modern_request(
        1,
        "tools/call",
        json!({"name": "status"}),
        json!({}),
    ));
    h.send(modern_request(
        2,
        "tools/call",
        json!({"name": "status"}),
        json!({"io.modelcontextprotocol/logLevel": "warning"}),
    ));
    h.take();
    h.core.log(Some(&id(1)), log(LoggingLevel::Emergency));
    h.core.log(Some(&id(2)), log(LoggingLevel::Info));
    h.core.log(Some(&id(2)), log(LoggingLevel::Error));
    h.drain();
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 1, "{wire:?}");
    assert_eq!(wire[0]["params"]["level"], "error");
}

#[test]
fn issue39_02_an_anonymous_connections_modern_requests_are_detached_with_their_cancels() {
    let mut h = Host::new(None);
    h.core.detach_modern_requests();
    h.send(modern_request(
        1,
        "tools/call",
        json!({"name": "status"}),
        json!({}),
    ));
    h.send(modern_request(1, "tools/list", json!({}), json!({})));
    h.send(msg::notification(
        "notifications/cancelled",
        json!({"requestId": 1, "reason": "no longer"}),
    ));
    let (wire, done) = h.take();
    assert_eq!(done, ["detach 1", "cancel detached 1"]);
    assert_eq!(
        msg::error_code(&wire[0]),
        Some(-32600),
        "id 1 is in use: {}",
        wire[0]
    );
    h.core.detached_ended(&id(1));
    h.send(modern_request(1, "tools/list", json!({}), json!({})));
    // Legacy requests are the connection's own, as ever.
    h.send(msg::request(2, "tools/list", json!({})));
    let (wire, done) = h.take();
    assert_eq!(done, ["detach 1"]);
    assert_eq!(
        msg::error_code(&wire[0]),
        Some(-32600),
        "not initialized: {}",
        wire[0]
    );
}

/// A drained output queue keeps the room a call's turn takes (no allocation per call), and
/// gives back what a burst grew it to.
#[test]
fn a_drained_output_queue_keeps_a_turns_room_and_frees_a_bursts() {
    let mut h = Host::new(None);
    h.send(msg::request(1, "ping", json!({})));
    assert_eq!(
        h.core.out.capacity(),
        KEPT_OUTPUTS,
        "a turn's room, and no more"
    );
    for n in 2..=(2 * KEPT_OUTPUTS as i64 + 2) {
        let m: Message = serde_json::from_value(msg::request(n, "ping", json!({}))).unwrap();
        h.core.handle_message(m);
    }
    assert!(h.core.out.capacity() > KEPT_OUTPUTS);
    h.drain();
    assert_eq!(
        h.core.out.capacity(),
        KEPT_OUTPUTS,
        "a burst's queue is given back once drained, a turn's room kept"
    );
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 2 * KEPT_OUTPUTS + 2, "every ping answered");
}

/// What a host was shown of the manifest is kept as the server's own manifest, shared by
/// every session, never as a copy of its own (issue #42: a copy was ~9 KiB of an idle
/// session's 61); and a replacement still tells the host the domains it changed (§4.1).
#[test]
fn a_session_keeps_the_manifest_it_was_shown_shared_not_copied() {
    let mut h = Host::hinted();
    h.send(msg::request(1, "mcpl/manifest", json!({})));
    let shown = h.core.shown.as_ref().expect("noted at initialize");
    assert!(Arc::ptr_eq(&shown.manifest, &h.core.manifest), "shared");
    h.take();
    let mut next = manifest();
    next.feature_sets.insert(
        "more".into(),
        FeatureSetDecl::new("more games", &[CAP_TOOLS]),
    );
    let next = views(next);
    h.core.set_manifest(next.clone());
    h.core
        .catalog_swapped(Arc::new(arcade()), HintDraft::default());
    h.drain();
    let (wire, _) = h.take();
    let changed = wire
        .iter()
        .find(|m| m["method"] == "mcpl/manifestChanged")
        .unwrap_or_else(|| panic!("a manifest change told: {wire:?}"));
    assert_eq!(changed["params"]["domains"], json!(["featureSets"]));
    let shown = h.core.shown.as_ref().expect("still noted");
    assert!(Arc::ptr_eq(&shown.manifest, &next), "the new one, shared");
}

#[test]
fn the_handshake_tells_the_principal_once_initialized_and_once_ready() {
    let mut h = Host::new(None);
    h.send(msg::request(
        1,
        "initialize",
        msg::initialize_params(msg::mcpl_capabilities(true), "test"),
    ));
    let (wire, done) = h.take();
    assert_eq!(
        wire[0].pointer("/result/capabilities/experimental/mcpl/toolHints"),
        Some(&json!(true))
    );
    assert_eq!(
        done,
        ["forward Initialized { tool_hints: true, modern: false }".to_owned()]
    );
    h.send(msg::request(
        2,
        "initialize",
        msg::initialize_params(json!({}), "again"),
    ));
    h.send(msg::initialized());
    let (wire, done) = h.take();
    assert_eq!(
        msg::error_code(&wire[0]),
        Some(-32600),
        "a second initialize"
    );
    assert!(
        done.is_empty(),
        "an MCPL host is not ready before its grant: {done:?}"
    );
    h.send(msg::request(
        3,
        "featureSets/update",
        json!({"effectiveCapabilities": ["tools"]}),
    ));
    let (wire, done) = h.take();
    assert_eq!(wire[0]["result"]["accepted"], json!(true));
    assert_eq!(done, ["forward Ready".to_owned()]);
}

#[test]
fn bad_params_unknown_methods_and_a_reused_id_get_errors_and_reach_no_one() {
    let mut h = Host::hinted();
    h.send(msg::request(1, "tools/call", json!({"arguments": 5})));
    h.send(msg::request(
        2,
        "logging/setLevel",
        json!({"level": "info"}),
    ));
    h.send(msg::call(3, "status", json!({})));
    h.send(msg::request(3, "toolsets/open", json!({"toolset": "go"})));
    let (wire, done) = h.take();
    let codes: Vec<_> = wire.iter().map(msg::error_code).collect();
    assert_eq!(codes, [Some(-32602), Some(-32601), Some(-32600)]);
    assert_eq!(done.len(), 1, "only call 3 was forwarded: {done:?}");
    assert!(done[0].starts_with("forward Call"), "{done:?}");
}

#[test]
fn a_plain_host_gets_32601_for_toolsets_and_its_calls_are_plain() {
    let mut h = Host::new(None);
    h.send(msg::request(
        0,
        "initialize",
        msg::initialize_params(json!({}), "plain"),
    ));
    h.send(msg::initialized());
    h.take();
    h.send(msg::open(1, "go", Some("g1"), None));
    h.send(msg::call_in(2, "play", json!({"move": "D4"}), "g1"));
    let (wire, done) = h.take();
    assert_eq!(msg::error_code(&wire[0]), Some(-32601), "§2");
    assert!(
        done[0].contains("instance: None") && done[0].contains("plain: true"),
        "§8: a plain host's _meta instance is not read: {done:?}"
    );
}

#[test]
fn malformed_and_oversized_input_get_their_errors_and_the_session_goes_on() {
    let mut h = Host::hinted();
    let error = Message::decode(b"{not json").expect_err("malformed");
    h.core.handle_malformed(&error);
    h.core.handle_too_large(10_000_000, 1_000_000);
    h.drain();
    h.send(msg::request(8, "ping", json!({})));
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 3, "{wire:?}");
    assert_eq!(msg::error_code(&wire[0]), Some(-32700));
    assert_eq!(wire[1]["id"], Value::Null);
    assert_eq!(msg::error_code(&wire[1]), Some(-32600));
    assert_eq!(wire[2]["id"], json!(8));
}

#[test]
fn log_messages_follow_the_level_the_host_set() {
    let mut h = Host::new(Some(LoggingLevel::Warning));
    h.send(msg::request(
        0,
        "initialize",
        msg::initialize_params(json!({}), "t"),
    ));
    let (wire, _) = h.take();
    assert_eq!(wire[0]["result"]["capabilities"]["logging"], json!({}));
    let log = |level| LoggingMessageParams {
        level,
        logger: None,
        data: json!("x"),
        meta: None,
    };
    h.core.log(None, log(LoggingLevel::Info));
    h.send(msg::request(
        1,
        "logging/setLevel",
        json!({"level": "info"}),
    ));
    h.core.log(None, log(LoggingLevel::Info));
    h.drain();
    let (wire, _) = h.take();
    let methods: Vec<_> = wire.iter().map(|m| m["method"].clone()).collect();
    assert_eq!(
        methods,
        [Value::Null, json!("notifications/message")],
        "below warning first, then at info after setLevel: {wire:?}"
    );
}

// ---- the carrier rules through real inputs ----

#[test]
fn vector_02_a_calls_changes_ride_in_its_result() {
    let mut h = Host::hinted();
    h.send(msg::open(5, "go", Some("g1"), None));
    h.answer(5, Ok(json!({"instance": "g1"})), &["play"]);
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 1, "nothing but the result: {wire:?}");
    assert_eq!(wire[0]["id"], json!(5));
    assert_eq!(changed(&wire[0]), ["play"]);
    assert_eq!(rev_of(&wire[0]), Some(1));
}

#[test]
fn vector_03_the_first_push_carries_the_changes() {
    let mut h = Host::hinted();
    h.deliver(Delivery {
        draft: draft(&["play"]),
        answers: vec![],
        events: vec!["your move".into(), "clock".into()],
        hold: None,
    });
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 2);
    assert_eq!(changed(&wire[0]), ["play"]);
    assert_eq!(wire[0]["params"]["featureSet"], json!("game"));
    assert_eq!(wire[1]["params"].get("hints"), None);
}

#[test]
fn vector_31_without_a_grant_the_changes_go_as_tools_hints() {
    let mut h = Host::new(None);
    h.send(msg::request(
        0,
        "initialize",
        msg::initialize_params(msg::mcpl_capabilities(true), "t"),
    ));
    h.send(msg::initialized());
    h.take();
    h.deliver(Delivery {
        draft: draft(&["play"]),
        answers: vec![],
        events: vec!["your move".into()],
        hold: None,
    });
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 1, "{wire:?}");
    assert_eq!(wire[0]["method"], json!("tools/hints"));
    assert_eq!(changed(&wire[0]), ["play"]);
}

#[test]
fn vector_29_a_cancelled_handler_call_sends_what_it_held_as_tools_hints_and_no_result() {
    let mut h = Host::hinted();
    let key = h.running_handler(1);
    h.handler_opened(1, &["play"]);
    assert!(h.take().0.is_empty(), "held for the call's result");
    h.send(msg::cancelled(1, "changed my mind"));
    let (wire, done) = h.take();
    assert_eq!(wire.len(), 1);
    assert_eq!(wire[0]["method"], json!("tools/hints"));
    assert_eq!(changed(&wire[0]), ["play"]);
    assert_eq!(done, ["stop 1 handler-1".to_owned()]);
    h.core.call_ended(id(1), key, Ok(CallToolResult::default()));
    h.drain();
    assert_eq!(
        h.take(),
        (vec![], vec![]),
        "no response for a cancelled call"
    );
    h.send(msg::cancelled(1, "again"));
    assert_eq!(h.take(), (vec![], vec![]), "a second cancel does nothing");
}

#[test]
fn vector_29_a_cancelled_forwarded_call_gets_no_answer_and_its_changes_go_as_tools_hints() {
    let mut h = Host::hinted();
    h.send(msg::call(2, "play", json!({"move": "D4"})));
    h.send(msg::cancelled(2, "too slow"));
    h.send(msg::call(2, "play", json!({"move": "E4"})));
    let (wire, _) = h.take();
    assert_eq!(
        msg::error_code(&wire[0]),
        Some(-32600),
        "its id is in use until its answer is back"
    );
    h.answer(2, Ok(json!({"content": []})), &["resign"]);
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 1);
    assert_eq!(wire[0]["method"], json!("tools/hints"));
    assert_eq!(changed(&wire[0]), ["resign"]);
}

#[test]
fn a_handlers_result_carries_what_it_opened_after_what_others_held() {
    let mut h = Host::hinted();
    let k1 = h.running_handler(1);
    let _k2 = h.running_handler(2);
    h.handler_opened(2, &["lobby_list"]);
    h.handler_opened(1, &["play"]);
    h.core.call_ended(id(1), k1, Ok(CallToolResult::default()));
    h.drain();
    let (wire, done) = h.take();
    // Call 2's changes were stated first: they go before call 1's result, which carries
    // its own (§5.2: in the order stated).
    assert_eq!(wire.len(), 2, "{wire:?}");
    assert_eq!(
        (wire[0]["method"].clone(), changed(&wire[0])),
        (json!("tools/hints"), vec!["lobby_list".to_owned()])
    );
    assert_eq!(
        (wire[1]["id"].clone(), changed(&wire[1])),
        (json!(1), vec!["play".to_owned()])
    );
    assert_eq!(rev_of(&wire[0]), Some(1));
    assert_eq!(rev_of(&wire[1]), Some(2));
    assert_eq!(done, ["ended 1".to_owned()]);
}

#[test]
fn a_handler_error_cannot_carry_changes_so_they_follow_it_as_tools_hints() {
    let mut h = Host::hinted();
    let key = h.running_handler(1);
    h.handler_opened(1, &["play"]);
    h.core
        .call_ended(id(1), key, Err(ErrorObject::internal("boom")));
    h.drain();
    let (wire, _) = h.take();
    assert_eq!(msg::error_code(&wire[0]), Some(-32603));
    assert_eq!(wire[1]["method"], json!("tools/hints"));
    assert_eq!(changed(&wire[1]), ["play"]);
}

#[test]
fn an_answer_nobody_waits_for_is_not_written_and_its_changes_still_go() {
    let mut h = Host::hinted();
    h.answer(7, Ok(json!({"content": []})), &["news"]);
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 1);
    assert_eq!(wire[0]["method"], json!("tools/hints"));
}

#[test]
fn vector_38_the_statement_takes_a_rev_even_when_empty_after_what_was_held() {
    let mut h = Host::hinted();
    let _key = h.running_handler(1);
    h.handler_opened(1, &["play"]);
    h.send(msg::list(4));
    h.core.statement(
        id(4),
        Statement {
            open: vec![],
            ended: vec![],
            hints: HintDraft::default(),
        },
    );
    h.drain();
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 2, "{wire:?}");
    assert_eq!(rev_of(&wire[0]), Some(1), "the held changes first");
    assert_eq!(wire[1]["id"], json!(4));
    assert_eq!(rev_of(&wire[1]), Some(2));
}

// ---- any interleaving ----

/// One step of the generated interleavings.
#[derive(Debug, Clone)]
enum Step {
    /// The host calls (forwarded to the principal) with id `n`.
    Call(i64),
    /// The principal answers `n`, a result or an error, with changes and events, maybe a
    /// deferred answer, maybe holding for call `hold`.
    Answer {
        n: i64,
        ok: bool,
        deferred: bool,
        changes: usize,
        events: usize,
        hold: Option<i64>,
    },
    /// The principal sends call `n` to its handler, which starts.
    Run(i64),
    /// The host calls `n` and the principal sends it to its handler at once.
    Start(i64),
    /// Call `n`'s handler opened something for its caller.
    HandlerOpened(i64, usize),
    /// Call `n`'s handler returned (a result or an error).
    End(i64, bool),
    /// The host cancels `n`.
    Cancel(i64),
    /// Changes with events only (something else happened).
    Event(usize, usize),
}

fn step() -> impl Strategy<Value = Step> {
    let n = 1i64..3;
    prop_oneof![
        n.clone().prop_map(Step::Call),
        n.clone().prop_map(Step::Start),
        (
            n.clone(),
            any::<bool>(),
            any::<bool>(),
            0usize..3,
            0usize..3,
            prop::option::of(1i64..3)
        )
            .prop_map(|(n, ok, deferred, changes, events, hold)| Step::Answer {
                n,
                ok,
                deferred,
                changes,
                events,
                hold
            }),
        n.clone().prop_map(Step::Run),
        (n.clone(), 1usize..3).prop_map(|(n, k)| Step::HandlerOpened(n, k)),
        (n.clone(), any::<bool>()).prop_map(|(n, ok)| Step::End(n, ok)),
        n.prop_map(Step::Cancel),
        (0usize..3, 1usize..3).prop_map(|(c, e)| Step::Event(c, e)),
    ]
}

/// Distinct change names per step, so each change is told apart on the wire.
fn names(step: usize, k: usize) -> Vec<String> {
    (0..k).map(|i| format!("s{step}_{i}")).collect()
}

impl Host {
    /// The principal sends call `n` to its tool's handler; with `leave`, the loose tool
    /// it names may be run here from now on (direct calls).
    fn deliver_run(&mut self, n: i64, leave: Option<&str>) {
        self.deliver(Delivery {
            draft: HintDraft::default(),
            answers: vec![Answered {
                request: id(n),
                kind: AnswerKind::RunHandler,
                deferred: false,
                answer: Some(Ok(Value::Null)),
                direct: leave.map(str::to_owned),
            }],
            events: vec![],
            hold: None,
        });
    }

    /// The principal sends call `n` of the loose tool `tool` to its handler, with leave to
    /// run the tool's later calls here (direct calls).
    fn run_with_leave(&mut self, n: i64, tool: &str) {
        self.deliver_run(n, Some(tool));
    }

    /// `tools/call` `n` of `tool`: run here at once (true), or forwarded to the principal.
    fn call_runs_here(&mut self, n: i64, tool: &str) -> bool {
        self.call_value_runs_here(msg::call(n, tool, json!({})), n)
    }

    fn call_value_runs_here(&mut self, call: Value, n: i64) -> bool {
        self.send(call);
        let (wire, done) = self.take();
        assert!(wire.is_empty(), "nothing is written for call {n}: {wire:?}");
        match done.as_slice() {
            [one] if one.starts_with(&format!("run {n} ")) => true,
            [one] if one.starts_with("forward Call") => false,
            other => panic!("call {n}: neither run nor forwarded: {other:?}"),
        }
    }
}

/// Direct calls (`session.rs` module docs): a loose tool the principal resolved to its
/// handler with leave is run at once on its next call, the leave lasting until a change
/// about the tool or the catalog; a call naming an instance still goes to the principal.
#[test]
fn a_loose_tool_runs_here_after_the_principals_leave_until_a_change_about_it() {
    let mut h = Host::hinted();
    assert!(
        !h.call_runs_here(1, "status"),
        "the first call asks the principal"
    );
    h.run_with_leave(1, "status");
    h.take();
    assert!(h.call_runs_here(2, "status"));
    // The leave is for that tool only, and an instance is the principal's to judge.
    assert!(!h.call_runs_here(3, "look"));
    let named = msg::call_in(4, "status", json!({}), "g1");
    assert!(!h.call_value_runs_here(named, 4));

    // A change about another tool, or about an instance's tool of the same name, leaves it.
    let mut other = draft(&["look"]);
    other.tools.push(ToolHint {
        name: "status".into(),
        instance: Some("g1".into()),
        visible: Some(false),
        ..Default::default()
    });
    h.deliver(Delivery {
        draft: other,
        answers: vec![],
        events: vec![],
        hold: None,
    });
    h.take();
    assert!(h.call_runs_here(5, "status"));

    // A change about the tool itself (a hide, say) takes it back: the principal decides.
    h.deliver(Delivery {
        draft: draft(&["status"]),
        answers: vec![],
        events: vec![],
        hold: None,
    });
    h.take();
    assert!(!h.call_runs_here(6, "status"));

    // Given again, then taken back by a catalog change.
    h.run_with_leave(6, "status");
    h.take();
    assert!(h.call_runs_here(7, "status"));
    h.core
        .catalog_swapped(Arc::new(arcade()), HintDraft::default());
    h.drain();
    h.take();
    assert!(!h.call_runs_here(8, "status"));
}

/// A direct call's id is the host's like any other: in use while the call runs.
#[test]
fn a_direct_calls_id_is_refused_while_it_runs() {
    let mut h = Host::hinted();
    h.send(msg::call(1, "status", json!({})));
    h.run_with_leave(1, "status");
    h.take();
    assert!(h.call_runs_here(2, "status"));
    let key = h.core.new_key();
    h.core.start(id(2), key, "handler-2".into());
    h.send(msg::call(2, "status", json!({})));
    let (wire, done) = h.take();
    assert!(done.is_empty(), "{done:?}");
    assert_eq!(wire.len(), 1);
    assert_eq!(msg::error_code(&wire[0]), Some(-32600), "{wire:?}");
}

fn named_draft(names: &[String]) -> HintDraft {
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    draft(&refs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Over any interleaving: every request is answered at most once and a cancelled one
    /// never (vector 29); every change is written once and none is lost (it is written by
    /// the end, after the last handler ends and what is held is flushed); revs rise by
    /// one in the order written (§5.2); a result answering a call carries only changes
    /// stated for it or before it (vector 2); and no event is pushed with changes but the
    /// first of its delivery (vector 3; vector 31's case is the carrier's own property
    /// test).
    #[test]
    fn any_interleaving_answers_once_and_writes_every_change_once_in_rev_order(
        steps in prop::collection::vec(step(), 1..32)
    ) {
        let mut h = Host::hinted();
        let mut keys: HashMap<i64, u64> = HashMap::new();
        // Calls accepted and responses written, per id; ids cancelled since their call.
        let mut accepted: HashMap<i64, usize> = HashMap::new();
        let mut responses: HashMap<i64, usize> = HashMap::new();
        let mut cancelled = HashSet::new();
        let mut stated = Vec::new();
        let mut all = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            let (call, run) = match s {
                Step::Call(n) => (Some(*n), None),
                Step::Start(n) => (Some(*n), Some(*n)),
                Step::Run(n) => (None, Some(*n)),
                _ => (None, None),
            };
            if let Some(n) = call {
                h.send(msg::call(n, "status", json!({})));
                let refused = h.wire.iter().any(|m| m["id"] == json!(n) && msg::error_code(m) == Some(-32600));
                if refused {
                    h.wire.clear();
                } else {
                    *accepted.entry(n).or_default() += 1;
                    cancelled.remove(&n);
                }
            }
            if let Some(n) = run
                && let Some(key) = h.run(n)
            {
                keys.insert(n, key);
            }
            match s.clone() {
                Step::Call(_) | Step::Start(_) | Step::Run(_) => {}
                Step::Answer { n, ok, deferred, changes, events, hold } => {
                    let c = names(i, changes);
                    stated.extend(c.clone());
                    h.deliver(Delivery {
                        draft: named_draft(&c),
                        answers: vec![Answered {
                            request: id(n),
                            kind: if ok { AnswerKind::Result } else { AnswerKind::Error },
                            deferred,
                            answer: Some(if ok { Ok(json!({"content": []})) } else { Err(-32602) }),
                            direct: None,
                        }],
                        events: (0..events).map(|e| format!("e{i}_{e}")).collect(),
                        hold: hold.map(id),
                    });
                }
                Step::HandlerOpened(n, k) => {
                    let c = names(i, k);
                    stated.extend(c.clone());
                    let running = keys.get(&n).is_some_and(|key| h.core.is_running(&id(n), *key));
                    h.handler_answered(n, named_draft(&c), running);
                }
                Step::End(n, ok) => {
                    if let Some(key) = keys.remove(&n) {
                        let result = if ok { Ok(CallToolResult::default()) } else { Err(ErrorObject::internal("x")) };
                        h.core.call_ended(id(n), key, result);
                        h.drain();
                    }
                }
                Step::Cancel(n) => {
                    h.send(msg::cancelled(n, "test"));
                    cancelled.insert(n);
                    if h.done.iter().any(|d| d.starts_with(&format!("stop {n} "))) {
                        keys.remove(&n);
                    }
                }
                Step::Event(changes, events) => {
                    let c = names(i, changes);
                    stated.extend(c.clone());
                    h.deliver(Delivery {
                        draft: named_draft(&c),
                        answers: vec![],
                        events: (0..events).map(|e| format!("e{i}_{e}")).collect(),
                        hold: None,
                    });
                }
            }
            let (wire, _) = h.take();
            for m in &wire {
                if let Some(n) = m["id"].as_i64().filter(|_| msg::is_response(m)) {
                    // Vector 29: a cancelled request gets no response.
                    prop_assert!(!cancelled.contains(&n), "a response to cancelled {}: {}", n, m);
                    // Each accepted request is answered at most once.
                    let r = responses.entry(n).or_default();
                    *r += 1;
                    prop_assert!(*r <= accepted.get(&n).copied().unwrap_or(0), "{} answered twice: {}", n, m);
                }
            }
            all.extend(wire);
        }
        // Every handler ends; whatever is still held is then written.
        let running: Vec<_> = keys.drain().collect();
        for (n, key) in running {
            h.core.call_ended(id(n), key, Ok(CallToolResult::default()));
        }
        h.core.flush_held();
        h.drain();
        all.extend(h.take().0);
        // Revs rise by one in the order written.
        let revs: Vec<u64> = all.iter().filter_map(rev_of).collect();
        let want: Vec<u64> = (1..=revs.len() as u64).collect();
        prop_assert_eq!(&revs, &want, "{:?}", all);
        // Each change written once; none lost.
        let written: Vec<String> = all.iter().flat_map(changed).collect();
        let mut seen = BTreeSet::new();
        for c in &written {
            prop_assert!(seen.insert(c.clone()), "{} written twice: {:?}", c, all);
        }
        for c in &stated {
            prop_assert!(seen.contains(c), "{} lost: {:?}", c, all);
        }
        // In the order stated (§5.2): step numbers never go down along the wire.
        let order: Vec<usize> = written
            .iter()
            .map(|c| c[1..c.find('_').unwrap()].parse().unwrap())
            .collect();
        prop_assert!(order.windows(2).all(|w| w[0] <= w[1]), "out of order: {:?}", written);
        // Only the first push of a delivery carries changes (vector 3).
        for m in all.iter().filter(|m| m["method"] == "push/event") {
            let ev = m["params"]["payload"]["content"][0]["text"].as_str().unwrap_or_default();
            if !ev.ends_with("_0") {
                prop_assert!(m["params"].get("hints").is_none(), "a later push carries changes: {}", m);
            }
        }
    }
}

#[test]
fn issue39_04_a_listen_is_acknowledged_cancelled_and_closed() {
    let mut h = Host::new(None);
    h.send(modern_request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": "yes"}}),
        json!({}),
    ));
    h.send(modern_request(
        2,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "resourcesListChanged": true}}),
        json!({}),
    ));
    h.send(modern_request(
        3,
        "subscriptions/listen",
        json!({}),
        json!({}),
    ));
    let (wire, _) = h.take();
    assert_eq!(msg::error_code(&wire[0]), Some(-32602), "{wire:?}");
    assert_eq!(
        wire[1]["params"],
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": 2},
            "notifications": {"toolsListChanged": true}})
    );
    assert_eq!(wire[2]["params"]["notifications"], json!({}));
    assert_eq!(h.core.listens_open(), 2);
    h.send(msg::notification(
        "notifications/cancelled",
        json!({"requestId": 2}),
    ));
    let (wire, done) = h.take();
    assert!(
        wire.is_empty(),
        "a cancelled stream gets no response: {wire:?}"
    );
    assert_eq!(done, ["listen ended 2"]);
    h.core.close_listens(true);
    h.drain();
    let (wire, done) = h.take();
    assert_eq!(wire[0]["id"], 3);
    assert_eq!(wire[0]["result"]["resultType"], "complete");
    assert_eq!(wire[1]["method"], "notifications/cancelled");
    assert_eq!(wire[1]["params"]["requestId"], 3);
    assert_eq!(done, ["listen ended 3"]);
    assert_eq!(h.core.listens_open(), 0);
}

// ---- resources, prompts and completion (issue #39 item 7) ----

impl Host {
    /// The session's handler answers feature request `id`.
    fn feature_answered(
        &mut self,
        id: Id,
        outcome: Result<Box<mcpl_protocol::jsonrpc::RawValue>, mcpl_protocol::ErrorObject>,
    ) {
        self.core.feature_answered(id, outcome);
        self.drain();
    }
}

fn all_offered() -> super::Offers {
    super::Offers {
        resources: true,
        resources_vary: true,
        prompts: true,
        completions: true,
        subscribe: false,
    }
}

/// Legacy: offered features are declared in `initialize`, handed to the handlers after it,
/// answered once; a cancelled one is not answered; one not offered is -32601.
#[test]
fn issue39_07_feature_requests_go_to_the_handlers_and_back() {
    let mut h = Host::offering(None, all_offered());
    h.send(msg::request(
        0,
        "initialize",
        msg::initialize_params(json!({}), "t"),
    ));
    let (wire, _) = h.take();
    let caps = &wire[0]["result"]["capabilities"];
    assert_eq!(
        (&caps["resources"], &caps["prompts"], &caps["completions"]),
        (&json!({}), &json!({}), &json!({})),
        "{caps}"
    );
    h.send(msg::request(1, "resources/read", json!({"uri": "a://b"})));
    h.send(msg::request(2, "prompts/list", json!({})));
    let (wire, done) = h.take();
    assert!(wire.is_empty(), "nothing answered yet: {wire:?}");
    assert_eq!(
        done,
        [
            "serve 1 ReadResource { uri: \"a://b\" }",
            "serve 2 ListPrompts"
        ]
    );
    assert_eq!(h.core.features_in_flight(), 2);
    // The same id again while in flight is refused.
    h.send(msg::request(1, "prompts/list", json!({})));
    let (wire, _) = h.take();
    assert_eq!(msg::error_code(&wire[0]), Some(-32600), "{}", wire[0]);
    h.feature_answered(Id::Number(1), Ok(to_raw(&json!({"contents": []}))));
    h.send(msg::notification(
        "notifications/cancelled",
        json!({"requestId": 2}),
    ));
    h.feature_answered(Id::Number(2), Ok(to_raw(&json!({"prompts": []}))));
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 1, "the cancelled one is not answered: {wire:?}");
    assert_eq!(wire[0]["id"], 1);
    assert_eq!(h.core.features_in_flight(), 0);
    let mut plain = Host::new(None);
    plain.send(msg::request(
        0,
        "initialize",
        msg::initialize_params(json!({}), "t"),
    ));
    plain.take();
    plain.send(msg::request(1, "resources/list", json!({})));
    let (wire, _) = plain.take();
    assert_eq!(
        msg::error_code(&wire[0]),
        Some(-32601),
        "not offered: {}",
        wire[0]
    );
}

/// Modern: the same requests, their results made modern with the caching hints the module
/// docs give; `server/discover` declares what is offered.
#[test]
fn issue39_07_modern_feature_results_carry_their_caching_hints() {
    let mut h = Host::offering(None, all_offered());
    h.send(modern_request(1, "server/discover", json!({}), json!({})));
    let (wire, _) = h.take();
    assert_eq!(
        wire[0]["result"]["capabilities"]["prompts"],
        json!({}),
        "{}",
        wire[0]
    );
    h.send(modern_request(2, "prompts/list", json!({}), json!({})));
    h.send(modern_request(
        3,
        "resources/read",
        json!({"uri": "a://b"}),
        json!({}),
    ));
    h.send(modern_request(
        4,
        "completion/complete",
        json!({
        "ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}),
        json!({}),
    ));
    let (wire, done) = h.take();
    assert!(wire.is_empty(), "{wire:?}");
    assert_eq!(done.len(), 3, "{done:?}");
    for id in [2, 3, 4] {
        h.feature_answered(Id::Number(id), Ok(to_raw(&json!({"x": id}))));
    }
    let (wire, _) = h.take();
    assert_eq!(
        (
            &wire[0]["result"]["ttlMs"],
            &wire[0]["result"]["cacheScope"]
        ),
        (&json!(300_000), &json!("public")),
        "{}",
        wire[0]
    );
    assert_eq!(
        (
            &wire[1]["result"]["ttlMs"],
            &wire[1]["result"]["cacheScope"]
        ),
        (&json!(0), &json!("private")),
        "{}",
        wire[1]
    );
    assert!(wire[2]["result"].get("ttlMs").is_none(), "{}", wire[2]);
    for w in &wire {
        assert_eq!(w["result"]["resultType"], "complete", "{w}");
    }
}

/// At most `FEATURE_REQUESTS_IN_FLIGHT` at once; the next is refused at once.
#[test]
fn issue39_07_feature_requests_in_flight_are_bounded() {
    let limit = super::features::FEATURE_REQUESTS_IN_FLIGHT;
    let mut h = Host::offering(None, all_offered());
    h.send(msg::request(
        0,
        "initialize",
        msg::initialize_params(json!({}), "t"),
    ));
    h.take();
    for id in 1..=limit as i64 {
        h.send(msg::request(id, "prompts/list", json!({})));
    }
    let (wire, done) = h.take();
    assert!(wire.is_empty());
    assert_eq!(done.len(), limit);
    h.send(msg::request(1000, "prompts/list", json!({})));
    let (wire, done) = h.take();
    assert_eq!(msg::error_code(&wire[0]), Some(-32600), "{}", wire[0]);
    assert!(done.is_empty());
    h.feature_answered(Id::Number(1), Ok(to_raw(&json!({"prompts": []}))));
    h.send(msg::request(1001, "prompts/list", json!({})));
    let (_, done) = h.take();
    assert_eq!(done.len(), 1, "room again once one is answered");
}

// ---- the stateless profile (issue #40) ----

#[test]
fn stateless_s10_a_stream_opened_before_the_principals_state_is_given_waits_for_it() {
    use crate::{EndedIds, PrincipalConfig, PrincipalState};
    let mut h = Host::new(None);
    h.core.set_principal_named(true);
    let hinted = json!({"io.modelcontextprotocol/clientCapabilities":
        {"extensions": {"mcpl/core": {"version": "0.5", "toolHints": true}}}, "mcpl/since": 0});
    h.send(modern_request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"mcpl/hints": true}}),
        hinted,
    ));
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 1, "the acknowledgement alone: {wire:?}");
    assert_eq!(wire[0]["params"]["notifications"]["mcpl/hints"], true);
    // The principal gives its stamped state: the stream's first message follows.
    let catalog = Arc::new(arcade());
    let mut state = PrincipalState::new(
        catalog,
        PrincipalConfig::default(),
        EndedIds::new(1),
        std::time::UNIX_EPOCH,
    );
    let given = Arc::new(state.versioned_now());
    h.core.versioned_changed(given.clone());
    h.drain();
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 1, "{wire:?}");
    assert_eq!(wire[0]["method"], "notifications/mcpl/hints");
    assert_eq!(wire[0]["params"]["statement"], true, "since 0: {wire:?}");
    assert_eq!(wire[0]["params"]["version"], given.version());
    assert_eq!(
        wire[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    // The same state again tells nothing.
    h.core.versioned_changed(given);
    h.drain();
    assert!(h.take().0.is_empty());
}

// ---- resource subscriptions (issue #39) ----

/// Every URI under `w://` names a resource, but `w://none`.
#[derive(Debug)]
struct UnderW;

impl KnownResources for UnderW {
    fn knows(&self, uri: &str) -> bool {
        uri.starts_with("w://") && uri != "w://none"
    }
}

impl Host {
    /// A host of a server whose resources under `w://` may be watched.
    fn watching() -> Self {
        let offers = super::Offers {
            subscribe: true,
            ..all_offered()
        };
        let mut h = Host::offering(None, offers);
        let profile = Profile {
            watchable: Some(Arc::new(UnderW)),
            ..(*h.core.profile).clone()
        };
        h.core = SessionCore::new(Arc::new(profile), views(manifest()), Arc::new(arcade()));
        h
    }
}

#[test]
fn issue39_11_the_core_watches_a_uri_while_anything_of_the_session_names_it() {
    // Legacy: the watch comes before the answer; a second subscription is none.
    let mut h = Host::watching();
    h.send(msg::request(
        0,
        "initialize",
        msg::initialize_params(json!({}), "test"),
    ));
    h.send(msg::initialized());
    h.take();
    h.send(msg::request(
        1,
        "resources/subscribe",
        json!({"uri": "w://a"}),
    ));
    h.send(msg::request(
        2,
        "resources/subscribe",
        json!({"uri": "w://a"}),
    ));
    h.send(msg::request(
        3,
        "resources/subscribe",
        json!({"uri": "w://none"}),
    ));
    let (wire, done) = h.take();
    assert_eq!(done, ["watch w://a"]);
    assert_eq!(wire[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(wire[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert_eq!(msg::error_code(&wire[2]), Some(-32602), "{wire:?}");
    assert_eq!(h.core.subscribed(), 1);
    h.core.resource_updated("w://a");
    h.core.resource_updated("w://b");
    h.drain();
    let (wire, _) = h.take();
    assert_eq!(
        wire,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "w://a"}})
        ]
    );
    h.send(msg::request(
        4,
        "resources/unsubscribe",
        json!({"uri": "w://a"}),
    ));
    let (_, done) = h.take();
    assert_eq!(done, ["unwatch w://a"]);
    assert_eq!(h.core.subscribed(), 0);

    // Modern: two streams name `w://x`; it is let go of when the last one ends.
    let mut h = Host::watching();
    for id in [5, 6] {
        h.send(modern_request(
            id,
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": ["w://x", "w://none"]}}),
            json!({}),
        ));
    }
    let (wire, done) = h.take();
    assert_eq!(done[1..], ["watch w://x"], "{done:?}");
    assert_eq!(
        wire[1]["params"]["notifications"],
        json!({"resourceSubscriptions": ["w://x"]})
    );
    h.send(msg::notification(
        "notifications/cancelled",
        json!({"requestId": 5}),
    ));
    let (_, done) = h.take();
    assert_eq!(done, ["listen ended 5"]);
    h.core.resource_updated("w://x");
    h.drain();
    let (wire, _) = h.take();
    assert_eq!(wire.len(), 1, "the open stream only: {wire:?}");
    assert_eq!(
        wire[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        6
    );
    h.core.close_listens(false);
    h.drain();
    let (_, done) = h.take();
    assert_eq!(done, ["unwatch w://x", "listen ended 6"]);
}

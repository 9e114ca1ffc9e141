//! Every method marker's params (and result, for a request) survive decode → encode: one
//! table with canonical examples per method, as RFC-014 and MCP 2025-11-25 write them.
//!
//! Each example is checked twice: as a bare value (`from_value` then `to_value`) and through
//! the wire (`Request::new::<M>` / `Notification::new::<M>` / `Response::ok_typed`, encoded,
//! decoded, then `params_as` / `result_as`). JSON is compared in its RFC 8785 (JCS) form, so
//! member order and `50` vs `50.0` (the same JSON number) do not count as differences.
//!
//! A few inputs are knowingly normalised by the types (a default written out or left out);
//! those cases name the output they become, and that output must itself round-trip.
//!
//! The table is checked against `method::REQUEST_METHODS` and `NOTIFICATION_METHODS`, so a
//! marker added without a case here fails the test.

use mcpl_protocol::digest::revision_of_value;
use mcpl_protocol::jsonrpc::{Id, Message, Notification, Request, Response};
use mcpl_protocol::mcp::ProgressToken;
use mcpl_protocol::method::{
    CallTool, Cancelled, Complete, CreateMessage, Elicit, FeatureSetsUpdate, GetManifest,
    GetPrompt, Initialize, Initialized, ListPrompts, ListResourceTemplates, ListResources,
    ListRoots, ListTools, LoggingMessage, ManifestChanged, NOTIFICATION_METHODS,
    NotificationMethod, Ping, Progress, PushEvent, REQUEST_METHODS, ReadResource, RequestMethod,
    SetLevel, ToolHints, ToolListChanged, ToolsetsClose, ToolsetsList, ToolsetsOpen,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// An input and the JSON it must re-encode to (the input itself, unless normalised).
struct Example {
    input: Value,
    output: Value,
}

/// An example that must come back unchanged.
fn same(v: Value) -> Example {
    Example {
        input: v.clone(),
        output: v,
    }
}

/// An example the types knowingly normalise into `output`.
fn becomes(input: Value, output: Value) -> Example {
    Example { input, output }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Request,
    Notification,
}

/// One method's examples, checked against its marker.
struct Case {
    /// The wire name the examples are written for.
    method: &'static str,
    kind: Kind,
    /// Runs the checks; one line per failure.
    check: Box<dyn Fn() -> Vec<String>>,
}

fn request<M: RequestMethod>(
    method: &'static str,
    params: Vec<Example>,
    results: Vec<Example>,
) -> Case {
    Case {
        method,
        kind: Kind::Request,
        check: Box::new(move || {
            let mut failures = name_failures(M::NAME, method);
            failures.extend(check_all("params", &params, |v| {
                round_trip::<M::Params>(v, |typed| {
                    let wire = Message::Request(Request::new::<M>(Id::Number(1), typed)).encode();
                    match Message::decode(wire.as_bytes()) {
                        Ok(Message::Request(r)) if r.method == M::NAME => {
                            r.params_as::<M::Params>().map_err(|e| e.message)
                        }
                        other => Err(format!("wire form {wire} decoded as {other:?}")),
                    }
                })
            }));
            failures.extend(check_all("result", &results, |v| {
                round_trip::<M::Result>(v, |typed| {
                    let wire = Message::Response(Response::ok_typed(Id::Number(1), typed)).encode();
                    match Message::decode(wire.as_bytes()) {
                        Ok(Message::Response(r)) => {
                            r.result_as::<M::Result>().map_err(|e| e.message)
                        }
                        other => Err(format!("wire form {wire} decoded as {other:?}")),
                    }
                })
            }));
            name_method(method, failures)
        }),
    }
}

fn notification<M: NotificationMethod>(method: &'static str, params: Vec<Example>) -> Case {
    Case {
        method,
        kind: Kind::Notification,
        check: Box::new(move || {
            let mut failures = name_failures(M::NAME, method);
            failures.extend(check_all("params", &params, |v| {
                round_trip::<M::Params>(v, |typed| {
                    let wire = Message::Notification(Notification::new::<M>(typed)).encode();
                    match Message::decode(wire.as_bytes()) {
                        Ok(Message::Notification(n)) if n.method == M::NAME => {
                            n.params_as::<M::Params>().map_err(|e| e.message)
                        }
                        other => Err(format!("wire form {wire} decoded as {other:?}")),
                    }
                })
            }));
            name_method(method, failures)
        }),
    }
}

fn name_failures(marker: &str, method: &str) -> Vec<String> {
    if marker == method {
        vec![]
    } else {
        vec![format!("the marker's NAME is {marker:?}")]
    }
}

fn name_method(method: &str, failures: Vec<String>) -> Vec<String> {
    failures
        .into_iter()
        .map(|f| format!("{method}: {f}"))
        .collect()
}

/// Decodes `v` as `T`; gives its bare re-encoding and its re-encoding after `wire` (a trip
/// through an encoded message and back).
fn round_trip<T: Serialize + DeserializeOwned>(
    v: &Value,
    wire: impl Fn(&T) -> Result<T, String>,
) -> Result<[(&'static str, Value); 2], String> {
    let typed = serde_json::from_value::<T>(v.clone()).map_err(|e| format!("decode: {e}"))?;
    let back = wire(&typed)?;
    Ok([("value", encode(&typed)?), ("wire", encode(&back)?)])
}

/// Checks each example (and a normalised output, which must be stable). An empty list is a
/// failure: every params and result type needs an example.
fn check_all(
    what: &str,
    examples: &[Example],
    trip: impl Fn(&Value) -> Result<[(&'static str, Value); 2], String>,
) -> Vec<String> {
    if examples.is_empty() {
        return vec![format!("no {what} example")];
    }
    let mut failures = vec![];
    for (i, ex) in examples.iter().enumerate() {
        let mut inputs = vec![&ex.input];
        if ex.output != ex.input {
            inputs.push(&ex.output);
        }
        for input in inputs {
            match trip(input) {
                Ok(paths) => {
                    for (path, got) in paths {
                        if !same_json(&got, &ex.output) {
                            let mut diffs = vec![];
                            diff(&got, &ex.output, "", &mut diffs);
                            failures.push(format!(
                                "{what} #{i} ({path}) {input}\n    {}",
                                diffs.join("\n    ")
                            ));
                        }
                    }
                }
                Err(e) => failures.push(format!("{what} #{i}: {input}\n    {e}")),
            }
        }
    }
    failures
}

fn encode<T: Serialize>(t: &T) -> Result<Value, String> {
    serde_json::to_value(t).map_err(|e| format!("encode: {e}"))
}

/// Where `got` differs from `want`, one line per JSON Pointer.
fn diff(got: &Value, want: &Value, at: &str, out: &mut Vec<String>) {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for (k, wv) in w {
                let here = format!("{at}/{k}");
                match g.get(k) {
                    Some(gv) => diff(gv, wv, &here, out),
                    None => out.push(format!("{here}: dropped (was {wv})")),
                }
            }
            for (k, gv) in g.iter().filter(|(k, _)| !w.contains_key(*k)) {
                out.push(format!("{at}/{k}: added ({gv})"));
            }
        }
        (Value::Array(g), Value::Array(w)) if g.len() == w.len() => {
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                diff(gv, wv, &format!("{at}/{i}"), out);
            }
        }
        _ if same_json(got, want) => {}
        _ => out.push(format!("{at}: {got} instead of {want}")),
    }
}

/// JSON equality by RFC 8785 canonical form.
fn same_json(a: &Value, b: &Value) -> bool {
    match (
        serde_json_canonicalizer::to_string(a),
        serde_json_canonicalizer::to_string(b),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A server manifest with every member this project types, and its revision.
fn manifest() -> Value {
    let mut m = json!({
        "version": "0.5",
        "pushEvents": true,
        "toolHints": true,
        "contextHooks": {"beforeInference": true},
        "featureSets": {
            "arcade.games": {"description": "Board games", "uses": ["pushEvents", "tools"],
                             "scoped": true},
            "arcade.chat": {"uses": ["channels.publish"]}
        },
        "toolsets": {
            "lobby": {"title": "Lobby", "summary": "Find games", "default": "open"},
            "go": {"title": "Go", "summary": "A game of Go", "default": "closed", "instances": true,
                   "options": {"type": "object",
                               "properties": {"size": {"enum": [9, 13, 19]}, "bot": {"type": "boolean"}},
                               "required": ["size"]}}
        },
        "surface": {"title": "Arcade", "summary": "Board games against bots and people"}
    });
    m["revision"] = json!(revision_of_value(&m).expect("a manifest"));
    m
}

/// A hint changes object with every member.
fn hints() -> Value {
    json!({
        "rev": 5,
        "tools": [
            {"name": "play", "instance": "g1", "visible": true,
             "definition": {"name": "play", "description": "Play a move",
                            "inputSchema": {"type": "object", "properties": {"move": {"enum": ["D4", "pass"]}}},
                            "annotations": {"readOnlyHint": false},
                            "_meta": {"mcpl/class": "move"}}},
            {"name": "tools_x", "presence": "static"},
            {"name": "resign", "instance": "g1", "presence": "dynamic", "visible": false}
        ],
        "toolsets": [
            {"toolset": "go", "instance": "g0", "state": "closed", "reason": "White wins by 3.5", "ended": "e-1"},
            {"toolset": "go", "instance": "g1", "state": "open", "title": "Go 9x9 vs bot"}
        ],
        "suggest": [
            {"toolset": "go", "instance": "m1", "action": "open", "reason": "bob challenges you",
             "options": {"size": 9}},
            {"toolset": "lobby", "action": "close", "reason": "nobody is waiting"}
        ]
    })
}

/// One case per method marker.
fn cases() -> Vec<Case> {
    vec![
        request::<Initialize>(
            "initialize",
            vec![
                same(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {
                        "roots": {"listChanged": true}, "sampling": {}, "elicitation": {"form": {}},
                        "experimental": {
                            "mcpl": {"version": "0.5", "pushEvents": true, "toolHints": true,
                                     "featureSets": true, "vendor": {"x": 1}},
                            "other.ext": {}
                        }
                    },
                    "clientInfo": {"name": "mcpl-host", "title": "MCPL Host", "version": "0.1.0"}
                })),
                same(json!({
                    "protocolVersion": "2025-03-26",
                    "capabilities": {},
                    "clientInfo": {"name": "ExampleClient", "version": "1.0.0"}
                })),
                same(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "ExampleClient", "version": "1.0.0"},
                    "_meta": {"progressToken": "init-1", "vendor/trace": {"id": "t-1"}}
                })),
            ],
            vec![
                same(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {
                        "logging": {},
                        "tools": {"listChanged": true},
                        "experimental": {"mcpl": manifest(), "other.ext": {"a": 1}}
                    },
                    "serverInfo": {"name": "arcade", "title": "Arcade", "version": "1.2.0"},
                    "instructions": "Open a toolset to play."
                })),
                same(json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "plain", "version": "1"}
                })),
                same(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "serverInfo": {"name": "plain", "version": "1"},
                    "_meta": {"vendor/build": "abc"}
                })),
            ],
        ),
        request::<Ping>(
            "ping",
            vec![
                same(json!({})),
                same(json!({"_meta": {"progressToken": "ping-1"}})),
            ],
            vec![same(json!({})), same(json!({"_meta": {"vendor/x": 1}}))],
        ),
        request::<ListTools>(
            "tools/list",
            vec![
                same(json!({})),
                same(json!({"cursor": "p2"})),
                same(json!({"cursor": "p2", "_meta": {"progressToken": "p-1"}})),
            ],
            vec![
                same(json!({
                    "tools": [
                        {"name": "get_weather", "title": "Weather Information Provider",
                         "description": "Get current weather information for a location",
                         "inputSchema": {"type": "object",
                                         "properties": {"location": {"type": "string", "description": "City name or zip code"}},
                                         "required": ["location"]},
                         "outputSchema": {"type": "object",
                                          "properties": {"temperature": {"type": "number"}},
                                          "required": ["temperature"]},
                         "annotations": {"title": "Weather", "readOnlyHint": true, "destructiveHint": false,
                                         "idempotentHint": true, "openWorldHint": true, "x-vendor": 1},
                         "icons": [{"src": "https://example.com/weather.png", "mimeType": "image/png", "sizes": ["48x48"]}],
                         "execution": {"taskSupport": "optional"}},
                        {"name": "play", "description": "Play a move", "inputSchema": {"type": "object"},
                         "_meta": {"mcpl/toolset": "go", "mcpl/presence": "dynamic", "mcpl/visible": false}}
                    ],
                    "nextCursor": "p3",
                    "_meta": {"mcpl/rev": 4}
                })),
                same(json!({"tools": []})),
            ],
        ),
        request::<CallTool>(
            "tools/call",
            vec![
                same(json!({"name": "play", "arguments": {"move": "D4"},
                            "_meta": {"mcpl/instance": "g1", "progressToken": "call-7"}})),
                same(json!({"name": "lobby_list"})),
            ],
            vec![
                same(json!({
                    "content": [
                        {"type": "text", "text": "Black played D4",
                         "annotations": {"audience": ["user"], "priority": 0.5}, "_meta": {"k": 0}},
                        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "_meta": {"k": 2}},
                        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav", "_meta": {"k": 3}},
                        {"type": "resource_link", "uri": "file:///games/g1.sgf", "name": "g1.sgf",
                         "mimeType": "application/x-go-sgf", "_meta": {"k": 1}},
                        {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hi"},
                         "_meta": {"k": 4}}
                    ],
                    "structuredContent": {"board": "....", "toMove": "white"},
                    "isError": true,
                    "_meta": {"mcpl/hints": hints()}
                })),
                same(json!({"content": []})),
                // MCP's own example writes the default `isError: false`; it is left out.
                becomes(
                    json!({"content": [{"type": "text", "text": "72°F"}], "isError": false}),
                    json!({"content": [{"type": "text", "text": "72°F"}]}),
                ),
            ],
        ),
        request::<FeatureSetsUpdate>(
            "featureSets/update",
            vec![
                same(json!({"effectiveCapabilities": ["tools", "pushEvents"],
                            "deniedCapabilities": ["channels.publish"],
                            "enabled": ["arcade.games"], "disabled": ["arcade.chat"]})),
                // `enabled: []` (enable nothing) differs from no `enabled` (no allowlist).
                same(json!({"effectiveCapabilities": ["tools"], "enabled": []})),
                same(json!({"effectiveCapabilities": []})),
                same(json!({"effectiveCapabilities": ["tools"], "_meta": {"progressToken": 4}})),
            ],
            vec![
                same(json!({"accepted": true, "mode": "degraded",
                            "unavailableFeatures": [{"featureSet": "arcade.chat",
                                                     "missingCapabilities": ["channels.publish"],
                                                     "effect": "disabled"}],
                            "notes": ["chat needs channels.publish"]})),
                same(json!({"accepted": false, "fallback": "mcp-only",
                            "reason": "pushEvents is required"})),
                same(json!({"accepted": true})),
                same(json!({"accepted": true, "_meta": {"vendor/x": [1, 2]}})),
            ],
        ),
        request::<PushEvent>(
            "push/event",
            vec![
                same(json!({
                    "featureSet": "arcade.games", "eventId": "ev-7", "timestamp": "2026-11-30T12:00:00Z",
                    "origin": {"source": "go", "game": "g1"},
                    "tags": ["surface:turn"],
                    "payload": {"content": [{"type": "text", "text": "Black played D4"}]},
                    "hints": hints(),
                    "toolset": "go", "instance": "g1"
                })),
                same(json!({
                    "featureSet": "arcade.games", "eventId": "ev-8", "timestamp": "2026-11-30T12:00:05Z",
                    "payload": {"content": []},
                    "coalesce": {"key": "lobby", "mode": "latest"}
                })),
                same(json!({
                    "featureSet": "arcade.games", "eventId": "ev-9", "timestamp": "2026-11-30T12:00:09Z",
                    "payload": {"content": []},
                    "_meta": {"progressToken": "push-9", "vendor/x": true}
                })),
            ],
            vec![
                same(json!({"accepted": true, "inferenceId": "inf-12"})),
                same(json!({"accepted": false, "reason": "the agent is busy"})),
                same(json!({"accepted": true, "_meta": {"vendor/queue": 2}})),
            ],
        ),
        request::<GetManifest>(
            "mcpl/manifest",
            vec![same(json!({}))],
            vec![
                // SPEC §17.4: the result is the manifest object itself.
                same(manifest()),
                same(json!({"version": "0.5", "revision": "sha256:x"})),
                // `_meta` is the result's, not the manifest's.
                becomes(
                    json!({"version": "0.5", "_meta": {"vendor/x": "y"}}),
                    json!({"version": "0.5"}),
                ),
                // Read liberally (SPEC §6.4): an invalid feature set is kept aside, not
                // written; a toolset's `default` is written out.
                becomes(
                    json!({"version": "0.5", "featureSets": {"a": {}},
                           "toolsets": {"go": {"title": "Go"}}}),
                    json!({"version": "0.5", "toolsets": {"go": {"title": "Go", "default": "closed"}}}),
                ),
            ],
        ),
        request::<ToolsetsOpen>(
            "toolsets/open",
            vec![
                same(
                    json!({"toolset": "go", "instance": "g1", "options": {"size": 9, "bot": true}}),
                ),
                same(json!({"toolset": "lobby"})),
                same(json!({"toolset": "go", "instance": "g2", "_meta": {"progressToken": "p-1"}})),
            ],
            vec![
                same(json!({
                    "instance": "g1", "title": "Go 9x9 vs bot",
                    "content": [{"type": "text", "text": "You play black."}],
                    "_meta": {"mcpl/hints": hints()}
                })),
                same(json!({"instance": "g1", "title": "Go", "adopted": true,
                            "content": [{"type": "text", "text": "already open; size 19 not applied"}]})),
                same(json!({"adopted": true, "_meta": {"mcpl/hints": {"rev": 2}, "vendor/x": 1}})),
                same(json!({})),
            ],
        ),
        request::<ToolsetsClose>(
            "toolsets/close",
            vec![
                same(json!({"toolset": "go", "instance": "g1"})),
                same(json!({"toolset": "lobby"})),
                same(json!({"toolset": "lobby", "_meta": {"progressToken": 12}})),
            ],
            vec![
                same(
                    json!({"content": [{"type": "text", "text": "Resigned: White wins."}],
                            "_meta": {"mcpl/hints": hints()}}),
                ),
                same(json!({})),
            ],
        ),
        request::<ToolsetsList>(
            "toolsets/list",
            vec![
                same(json!({})),
                same(json!({"_meta": {"progressToken": "l-1"}})),
            ],
            vec![
                same(json!({
                    "open": [{"toolset": "go", "instance": "g1", "title": "Go 9x9 vs bot", "options": {"size": 9}},
                             {"toolset": "lobby"}],
                    "ended": [{"id": "e-1", "toolset": "go", "instance": "g0",
                               "reason": "White wins by 3.5", "at": "2026-11-30T12:00:00Z"},
                              {"id": "e-2", "toolset": "lobby", "reason": "closed by host",
                               "at": "2026-11-30T12:05:00Z"}],
                    "_meta": {"mcpl/hints": hints()}
                })),
                // §4.3: a full statement is present even when empty.
                same(json!({"open": [], "ended": [], "_meta": {"mcpl/hints": {"rev": 1}}})),
                same(json!({"open": [], "ended": [],
                            "_meta": {"mcpl/hints": {"rev": 2}, "vendor/x": "y"}})),
            ],
        ),
        request::<SetLevel>(
            "logging/setLevel",
            vec![
                same(json!({"level": "info"})),
                same(json!({"level": "emergency"})),
                same(json!({"level": "debug", "_meta": {"progressToken": "lvl-1"}})),
                // An empty `_meta` says nothing and is left out, as on every typed `_meta`.
                becomes(
                    json!({"level": "info", "_meta": {}}),
                    json!({"level": "info"}),
                ),
            ],
            vec![same(json!({}))],
        ),
        request::<CreateMessage>(
            "sampling/createMessage",
            vec![
                same(json!({"messages": [{"role": "user",
                    "content": {"type": "text", "text": "Test prompt for sampling"}}],
                    "maxTokens": 100})),
                // Every member MCP 2025-11-25 defines, content as an array with a tool
                // result, and `_meta` on the params and on a message.
                same(json!({
                    "messages": [
                        {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
                        {"role": "assistant", "content": {"type": "tool_use", "id": "t1",
                            "name": "weather", "input": {"city": "Oslo"}}},
                        {"role": "user", "content": {"type": "tool_result", "toolUseId": "t1",
                            "content": [{"type": "text", "text": "rain"}]},
                            "_meta": {"vendor/x": 1}}
                    ],
                    "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.5},
                    "systemPrompt": "Be brief.", "includeContext": "none", "temperature": 0.2,
                    "maxTokens": 50, "stopSequences": ["\n\n"], "metadata": {"k": "v"},
                    "tools": [{"name": "weather", "inputSchema": {"type": "object"}}],
                    "toolChoice": {"mode": "auto"},
                    "_meta": {"progressToken": 9}
                })),
            ],
            vec![
                same(
                    json!({"role": "assistant", "content": {"type": "text", "text": "hello"},
                    "model": "test-model", "stopReason": "endTurn"}),
                ),
                same(json!({"role": "assistant", "model": "m", "content": [
                    {"type": "text", "text": "calling"},
                    {"type": "tool_use", "id": "t2", "name": "weather", "input": {}}],
                    "stopReason": "toolUse", "_meta": {"vendor/y": true}})),
            ],
        ),
        request::<Elicit>(
            "elicitation/create",
            vec![
                same(json!({"message": "Please provide your information",
                    "requestedSchema": {"type": "object", "properties": {
                        "username": {"type": "string", "description": "User's response"}},
                        "required": ["username"]}})),
                same(
                    json!({"mode": "form", "message": "Age?", "requestedSchema": {
                    "type": "object", "properties": {"age": {"type": "integer", "default": 30}}},
                    "_meta": {"vendor/x": 1}}),
                ),
                same(
                    json!({"mode": "url", "message": "Sign in", "elicitationId": "e-1",
                    "url": "https://example.invalid/auth"}),
                ),
            ],
            vec![
                same(json!({"action": "accept", "content": {"username": "testuser", "n": 2}})),
                same(json!({"action": "decline"})),
                same(json!({"action": "cancel", "_meta": {"vendor/z": "w"}})),
            ],
        ),
        request::<ListRoots>(
            "roots/list",
            vec![
                same(json!({})),
                same(json!({"_meta": {"progressToken": "r"}})),
            ],
            vec![
                same(json!({"roots": []})),
                same(json!({"roots": [
                    {"uri": "file:///home/user/projects/frontend", "name": "Frontend Repository"},
                    {"uri": "file:///home/user/notes.md", "_meta": {"vendor/x": 1}}
                ], "_meta": {"vendor/y": 2}})),
            ],
        ),
        request::<ListResources>(
            "resources/list",
            vec![
                same(json!({})),
                same(json!({"cursor": "c-1", "_meta": {"vendor/x": 1}})),
            ],
            vec![same(
                json!({"resources": [{"uri": "file:///project/src/main.rs",
                "name": "main.rs", "title": "Rust Software Application Main File",
                "description": "Primary application entry point", "mimeType": "text/x-rust",
                "icons": [{"src": "https://example.com/rust-file-icon.png", "mimeType": "image/png",
                           "sizes": ["48x48"]}]}], "nextCursor": "next-page-cursor"}),
            )],
        ),
        request::<ListResourceTemplates>(
            "resources/templates/list",
            vec![same(json!({"cursor": "optional-cursor-value"}))],
            vec![same(
                json!({"resourceTemplates": [{"uriTemplate": "file:///{path}",
                "name": "Project Files", "title": "Project Files",
                "description": "Access files in the project directory",
                "mimeType": "application/octet-stream"}]}),
            )],
        ),
        request::<ReadResource>(
            "resources/read",
            vec![same(json!({"uri": "file:///project/src/main.rs"}))],
            vec![
                same(json!({"contents": [{"uri": "file:///project/src/main.rs",
                    "mimeType": "text/x-rust", "text": "fn main() {}"}]})),
                same(
                    json!({"contents": [{"uri": "file:///example.png", "mimeType": "image/png",
                    "blob": "AA=="}]}),
                ),
            ],
        ),
        request::<ListPrompts>(
            "prompts/list",
            vec![same(json!({}))],
            vec![same(
                json!({"prompts": [{"name": "code_review", "title": "Request Code Review",
                "description": "Asks the LLM to analyze code quality and suggest improvements",
                "arguments": [{"name": "code", "description": "The code to review", "required": true}]}],
                "nextCursor": "next-page-cursor"}),
            )],
        ),
        request::<GetPrompt>(
            "prompts/get",
            vec![same(
                json!({"name": "code_review", "arguments": {"code": "def hello():\n    print('world')"}}),
            )],
            vec![same(
                json!({"description": "Code review prompt", "messages": [{"role": "user",
                "content": {"type": "text", "text": "Please review this Python code"}}]}),
            )],
        ),
        request::<Complete>(
            "completion/complete",
            vec![
                same(json!({"ref": {"type": "ref/prompt", "name": "code_review"},
                    "argument": {"name": "language", "value": "py"}})),
                same(
                    json!({"ref": {"type": "ref/resource", "uri": "file:///{path}"},
                    "argument": {"name": "path", "value": "src/"},
                    "context": {"arguments": {"repo": "x"}}}),
                ),
            ],
            vec![same(
                json!({"completion": {"values": ["python", "pytorch", "pyside"],
                "total": 10, "hasMore": true}}),
            )],
        ),
        notification::<Initialized>(
            "notifications/initialized",
            vec![same(json!({})), same(json!({"_meta": {"vendor/x": 1}}))],
        ),
        notification::<Cancelled>(
            "notifications/cancelled",
            vec![
                same(json!({"requestId": "123", "reason": "User requested cancellation"})),
                same(json!({"requestId": 7})),
                same(json!({"requestId": 8, "_meta": {"vendor/x": 1}})),
            ],
        ),
        notification::<ToolListChanged>(
            "notifications/tools/list_changed",
            vec![same(json!({})), same(json!({"_meta": {"vendor/x": true}}))],
        ),
        notification::<ManifestChanged>(
            "mcpl/manifestChanged",
            vec![
                same(
                    json!({"revision": manifest()["revision"], "domains": ["capabilities", "toolsets"]}),
                ),
                same(json!({"revision": "sha256:x", "domains": [], "_meta": {"vendor/x": 1}})),
                // Absent `domains` (no hint) is written as the empty list.
                becomes(
                    json!({"revision": "sha256:x"}),
                    json!({"revision": "sha256:x", "domains": []}),
                ),
            ],
        ),
        notification::<ToolHints>(
            "tools/hints",
            vec![
                same(hints()),
                same(json!({"rev": 3})),
                same(
                    json!({"rev": 4, "toolsets": [{"toolset": "lobby", "state": "open"}],
                            "_meta": {"vendor/x": 1}}),
                ),
            ],
        ),
        notification::<Progress>(
            "notifications/progress",
            vec![
                same(
                    json!({"progressToken": "abc123", "progress": 50, "total": 100,
                            "message": "Reticulating splines..."}),
                ),
                same(json!({"progressToken": 7, "progress": 0.25})),
                same(json!({"progressToken": 7, "progress": 0.5, "_meta": {"vendor/x": 1}})),
            ],
        ),
        notification::<LoggingMessage>(
            "notifications/message",
            vec![
                same(json!({"level": "error", "logger": "database",
                            "data": {"error": "Connection failed", "details": {"host": "localhost", "port": 5432}}})),
                same(json!({"level": "debug", "data": "started"})),
                same(json!({"level": "info", "data": {"n": 1}, "_meta": {"vendor/x": 1}})),
            ],
        ),
    ]
}

#[test]
fn every_method_round_trips() {
    let failures: Vec<String> = cases().iter().flat_map(|c| (c.check)()).collect();
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_marker_has_exactly_one_case() {
    let mut seen = BTreeSet::new();
    for c in cases() {
        assert!(seen.insert(c.method), "{}: two cases", c.method);
    }
    let table: BTreeSet<(Kind, &str)> = cases().iter().map(|c| (c.kind, c.method)).collect();
    let markers: BTreeSet<(Kind, &str)> = REQUEST_METHODS
        .iter()
        .map(|m| (Kind::Request, *m))
        .chain(
            NOTIFICATION_METHODS
                .iter()
                .map(|m| (Kind::Notification, *m)),
        )
        .collect();
    let missing: Vec<_> = markers.difference(&table).collect();
    let unknown: Vec<_> = table.difference(&markers).collect();
    assert!(missing.is_empty(), "markers without a case: {missing:?}");
    assert!(unknown.is_empty(), "cases without a marker: {unknown:?}");
}

/// A `progressToken` in `toolsets/open`'s `_meta` reaches the typed params a server decodes
/// (it used to be dropped), and re-encoding the params keeps it.
#[test]
fn a_progress_token_in_toolsets_open_reaches_the_typed_params() {
    let wire = r#"{"jsonrpc":"2.0","id":1,"method":"toolsets/open","params":{"toolset":"go","_meta":{"progressToken":"p-1"}}}"#;
    let Ok(Message::Request(r)) = Message::decode(wire.as_bytes()) else {
        panic!("{wire} is a request")
    };
    let p = r
        .params_as::<<ToolsetsOpen as RequestMethod>::Params>()
        .unwrap();
    let meta = p.meta.as_ref().expect("_meta is kept");
    assert_eq!(
        ProgressToken::from_meta(meta),
        Some(ProgressToken::String("p-1".into()))
    );
    let again = Request::new::<ToolsetsOpen>(Id::Number(1), &p);
    assert_eq!(
        again.params_value(),
        Some(json!({"toolset": "go", "_meta": {"progressToken": "p-1"}}))
    );
}

/// The harness itself catches a dropped member, an unstable normalisation and a wrong name,
/// and names the method.
#[test]
fn the_harness_reports_what_does_not_round_trip() {
    let dropped = request::<SetLevel>(
        "logging/setLevel",
        vec![same(json!({"level": "info", "extra": 1}))],
        vec![same(json!({}))],
    );
    let failures = (dropped.check)();
    assert_eq!(failures.len(), 2, "value and wire paths: {failures:?}");
    assert!(
        failures
            .iter()
            .all(|f| f.starts_with("logging/setLevel: params #0"))
    );

    let wrong_output = notification::<ManifestChanged>(
        "mcpl/manifestChanged",
        vec![becomes(json!({"revision": "r"}), json!({"revision": "r"}))],
    );
    assert_eq!((wrong_output.check)().len(), 2);

    let misnamed = request::<Ping>("pong", vec![same(json!({}))], vec![same(json!({}))]);
    assert_eq!(
        (misnamed.check)(),
        vec![r#"pong: the marker's NAME is "ping""#.to_owned()]
    );

    let empty = notification::<Initialized>("notifications/initialized", vec![]);
    assert_eq!(
        (empty.check)(),
        vec!["notifications/initialized: no params example".to_owned()]
    );
}

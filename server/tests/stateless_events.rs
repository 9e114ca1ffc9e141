//! Issue #40, events on `subscriptions/listen` streams (`docs/rfc014-stateless.md` §3.5,
//! vectors S17, S19, S20), in raw JSON on real sockets: modern requests of the named
//! principal `alice` over the stdio transport's framing (newline-delimited JSON on a
//! loopback TCP connection), and over Streamable HTTP for the stream's bound (S20). A stream opened with the filter member `mcpl/events` by a
//! hinted request whose grant (`_meta["mcpl/grant"]`) has `pushEvents` is acknowledged with
//! it and carries each event as `notifications/mcpl/event`: the legacy `push/event` params
//! (SPEC §9) with its changes as stamped `hints`. Any other stream is not acknowledged the
//! member and is sent none; an event with no such stream, or past the stream's bound, is
//! not delivered, and its changes reach the next result by their stamps.

use crate::raw;

use crate::stateless::tool;
use mcpl_server::{Audience, Event, InstanceContext, InstanceLogic, Reply, Server, Started};
use mcpl_server::{ToolCall, Toolset};
use mcpl_transport::Principal;
use mcpl_transport::ServerOptions;
use raw::{Lines, SseReader, stdio_socket};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;

const SUB: &str = "io.modelcontextprotocol/subscriptionId";
/// Events in one `burst` step.
const BURST: usize = 12;
/// The Streamable HTTP answer's queue in S20 (`ServerOptions::http_queue_limit`).
const QUEUE: usize = 4;

/// A game whose `ring` shows `secret` and tells everyone in the same step.
struct Bell;

impl InstanceLogic for Bell {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        match call.tool() {
            "ring" => {
                cx.show(Audience::All, "secret");
                cx.event(Audience::All, Event::text("the bell rang"));
            }
            // More events in one step than a stream's queue holds (S20).
            "burst" => {
                cx.show(Audience::All, "secret");
                for n in 0..BURST {
                    cx.event(Audience::All, Event::text(format!("peal {n}")));
                }
            }
            _ => {}
        }
        Reply::text("done")
    }
}

/// A server with an instanced `game` (`ring`, `secret`) and the default feature set
/// (`tools`, `pushEvents`).
fn server() -> Server {
    let game = Toolset::new("game")
        .instances()
        .tool(tool("ring", true))
        .tool(tool("burst", true))
        .tool(tool("secret", false))
        .on_open(|_, _| Ok(Started::new(Bell)));
    Server::builder("events", "1.0")
        .toolset(game)
        .build()
        .expect("a valid server")
}

/// A hinted modern request (declaring `mcpl/core`) with `since` and, when given, the grant
/// `caps`.
fn req(id: i64, method: &str, since: u64, grant: Option<&[&str]>, mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"mcpl/core":
            {"version": "0.5", "toolHints": true, "pushEvents": true}}},
        "mcpl/since": since});
    if let Some(caps) = grant {
        params["_meta"]["mcpl/grant"] = json!({ "effectiveCapabilities": caps });
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn listen(id: i64, since: u64, grant: Option<&[&str]>, filter: Value) -> Value {
    req(
        id,
        "subscriptions/listen",
        since,
        grant,
        json!({ "notifications": filter }),
    )
}

fn ring(id: i64, since: u64) -> Value {
    call(id, "ring", since)
}

fn call(id: i64, tool: &str, since: u64) -> Value {
    let mut r = req(
        id,
        "tools/call",
        since,
        None,
        json!({"name": tool, "arguments": {}}),
    );
    r["params"]["_meta"]["mcpl/instance"] = json!("g1");
    r
}

fn version(reply: &Value) -> u64 {
    reply["result"]["_meta"]["mcpl/hints"]["version"]
        .as_u64()
        .unwrap_or_else(|| panic!("no mcpl/hints version: {reply:#}"))
}

const PUSH: &[&str] = &["tools", "pushEvents"];

/// `alice` with `g1` open; the version after the open.
async fn alice_with_a_game(server: &Server) -> (Lines, u64) {
    let (mut c, _session) = stdio_socket(server, Principal::Named("alice".into())).await;
    let opened = c
        .exchange(req(
            1,
            "toolsets/open",
            0,
            None,
            json!({"toolset": "game", "instance": "g1"}),
        ))
        .await;
    assert!(opened["result"].is_object(), "{opened:#}");
    let v = version(&opened);
    (c, v)
}

/// Every message read until the response to a `tools/list` sent now (with `id`): what the
/// server wrote before it, on every stream.
async fn drain(c: &mut Lines, id: i64, since: u64) -> Vec<Value> {
    c.send(req(id, "tools/list", since, None, json!({}))).await;
    let mut seen = c.until_response(id).await;
    seen.pop();
    seen
}

#[actix::test]
async fn stateless_s17_an_event_reaches_a_stream_opened_with_mcpl_events_and_the_grant() {
    let server = server();
    let (mut c, now) = alice_with_a_game(&server).await;
    // 10 asks for events under a grant with `pushEvents`; 11 asks without it in its grant;
    // 12 has the grant and does not ask; 13 asks with no grant at all.
    c.send(listen(10, now, Some(PUSH), json!({"mcpl/events": true})))
        .await;
    c.send(listen(
        11,
        now,
        Some(&["tools"]),
        json!({"mcpl/events": true}),
    ))
    .await;
    c.send(listen(12, now, Some(PUSH), json!({"mcpl/hints": true})))
        .await;
    c.send(listen(13, now, None, json!({"mcpl/events": true})))
        .await;
    let mut acks = Vec::new();
    while acks.len() < 4 {
        let m = c.recv().await;
        if m["method"] == "notifications/subscriptions/acknowledged" {
            acks.push(m);
        }
    }
    for ack in &acks {
        let listed = ack["params"]["notifications"].get("mcpl/events");
        if ack["params"]["_meta"][SUB] == 10 {
            assert_eq!(listed, Some(&json!(true)), "{ack:#}");
        } else {
            assert!(listed.is_none(), "listed without the grant: {ack:#}");
        }
    }
    c.send(ring(2, now)).await;
    let mut told = c.until_response(2).await;
    let rung = told.pop().expect("the result");
    assert!(rung["result"].is_object(), "{rung:#}");
    let v = version(&rung);
    told.extend(drain(&mut c, 3, v).await);
    let events: Vec<&Value> = told
        .iter()
        .filter(|m| m["method"] == "notifications/mcpl/event")
        .collect();
    assert_eq!(events.len(), 1, "one event, on stream 10 alone: {told:#?}");
    let p = &events[0]["params"];
    assert_eq!(p["_meta"][SUB], 10, "{p:#}");
    // SPEC §9's params, RFC-014's `toolset` and `instance`.
    assert_eq!(p["featureSet"], "default", "{p:#}");
    assert!(
        p["eventId"].as_str().is_some_and(|e| !e.is_empty()),
        "{p:#}"
    );
    let ts = p["timestamp"].as_str().expect("a timestamp");
    assert!(
        ts.len() >= 20 && ts.ends_with('Z') && ts.contains('T'),
        "{ts}"
    );
    assert_eq!(
        p["payload"]["content"],
        json!([{"type": "text", "text": "the bell rang"}]),
        "{p:#}"
    );
    assert_eq!(p["toolset"], "game", "{p:#}");
    assert_eq!(p["instance"], "g1", "{p:#}");
    assert!(p.get("coalesce").is_none(), "{p:#}");
    // Its changes, stamped as the result's (profile §3.3): `secret` shown in g1 at `v`.
    let h = &p["hints"];
    assert_eq!(h["version"], v, "{h:#}");
    assert!(h.get("statement").is_none(), "{h:#}");
    let tools = h["tools"].as_array().expect("tool entries");
    let secret = tools
        .iter()
        .find(|t| t["name"] == "secret" && t["instance"] == "g1")
        .unwrap_or_else(|| panic!("no secret:g1 entry: {h:#}"));
    assert_eq!(secret["visible"], true, "{h:#}");
    assert_eq!(secret["v"], v, "{h:#}");
    for e in tools
        .iter()
        .chain(h["toolsets"].as_array().into_iter().flatten())
    {
        assert_eq!(e["v"], v, "only what the event's step stamped: {h:#}");
    }
    // Stream 12 carries hints, not events.
    assert!(
        told.iter()
            .any(|m| m["method"] == "notifications/mcpl/hints" && m["params"]["_meta"][SUB] == 12),
        "{told:#?}"
    );
}

#[actix::test]
async fn stateless_s19_an_event_without_an_events_stream_is_not_delivered_its_changes_are() {
    let server = server();
    let (mut c, now) = alice_with_a_game(&server).await;
    // A stream of hints only: no event goes anywhere.
    c.send(listen(10, now, Some(PUSH), json!({"mcpl/hints": true})))
        .await;
    let rung = c.exchange(ring(2, now)).await;
    let v = version(&rung);
    // The next result from the mark before the event carries its changes by their stamps.
    let next = c.exchange(req(3, "tools/list", now, None, json!({}))).await;
    let h = &next["result"]["_meta"]["mcpl/hints"];
    assert_eq!(h["version"], v, "{h:#}");
    let secret = h["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "secret" && t["instance"] == "g1")
        .unwrap_or_else(|| panic!("no secret:g1 entry: {h:#}"));
    assert_eq!(secret["visible"], true, "{h:#}");
    // An events stream opened after it is not sent it (no acceptor, SPEC §9: not delivered).
    c.send(listen(11, v, Some(PUSH), json!({"mcpl/events": true})))
        .await;
    let told = drain(&mut c, 4, v).await;
    let ack = told
        .iter()
        .find(|m| m["params"]["_meta"][SUB] == 11)
        .expect("stream 11 acknowledged");
    assert_eq!(
        ack["params"]["notifications"]["mcpl/events"], true,
        "{ack:#}"
    );
    assert!(
        told.iter()
            .all(|m| m["method"] != "notifications/mcpl/event"),
        "an event told late: {told:#?}"
    );
    // The next event is.
    c.send(ring(5, v)).await;
    let told = drain(&mut c, 6, v).await;
    let events: Vec<&Value> = told
        .iter()
        .filter(|m| m["method"] == "notifications/mcpl/event")
        .collect();
    assert_eq!(events.len(), 1, "{told:#?}");
    assert_eq!(events[0]["params"]["_meta"][SUB], 11);
}

/// A modern Streamable HTTP listener with a token for alice and an answer queue of
/// [`QUEUE`] messages; its address.
async fn http_listener(server: &Server) -> SocketAddr {
    let mut opts = ServerOptions::default();
    opts.tokens.insert("alice-token".into(), "alice".into());
    opts.http_queue_limit = QUEUE;
    let mut hl = mcpl_transport::http::bind("127.0.0.1:0".parse().unwrap(), "/mcp", Arc::new(opts))
        .await
        .expect("bind");
    let addr = hl.local_addr();
    let s = server.clone();
    actix::spawn(async move {
        while let Some(conn) = hl.accept().await {
            s.serve(conn);
        }
    });
    addr
}

fn headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'static str, &'a str)> {
    let mut h = vec![
        ("Authorization", "Bearer alice-token"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = name {
        h.push(("Mcp-Name", name));
    }
    h
}

/// `request` POSTed as alice; the JSON answer.
async fn http_exchange(addr: SocketAddr, request: Value) -> Value {
    let method = request["method"].as_str().unwrap().to_owned();
    let name = request["params"]["name"].as_str().map(str::to_owned);
    let body = request.to_string();
    let post = raw::post(addr, &headers(&method, name.as_deref()), body.as_bytes());
    let answer = raw::exchange(addr, post).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer.json()
}

/// The bound (profile §3.5, **[project]**): a stream has no queue of its own; on
/// Streamable HTTP its events join its POST's answer, bounded by `http_queue_limit`, and
/// an event that finds it full is dropped — not delivered, as an event with no stream —
/// while the stamped entries it carried reach the host in the next result's delta. The
/// stream goes on: the next event is delivered.
#[actix::test]
async fn stateless_s20_events_past_a_streams_bound_are_dropped_and_the_delta_makes_them_good() {
    let server = server();
    let addr = http_listener(&server).await;
    let opened = http_exchange(
        addr,
        req(
            1,
            "toolsets/open",
            0,
            None,
            json!({"toolset": "game", "instance": "g1"}),
        ),
    )
    .await;
    let now = version(&opened);
    let listen = listen(10, now, Some(PUSH), json!({"mcpl/events": true})).to_string();
    let post = raw::post(
        addr,
        &headers("subscriptions/listen", None),
        listen.as_bytes(),
    );
    let (mut sse, head) = SseReader::open(addr, &post).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    let ack = sse.event().await;
    assert_eq!(
        ack["params"]["notifications"]["mcpl/events"], true,
        "{ack:#}"
    );
    // One step raises more events than the stream's queue holds, all written at once.
    let burst = http_exchange(addr, call(2, "burst", now)).await;
    assert!(burst["result"].is_object(), "{burst:#}");
    let v = version(&burst);
    // Then one more event, once the stream's queue has room again.
    http_exchange(addr, ring(3, v)).await;
    let mut peals = Vec::new();
    loop {
        let m = sse.event().await;
        assert_eq!(m["method"], "notifications/mcpl/event", "{m:#}");
        let text = m["params"]["payload"]["content"][0]["text"]
            .as_str()
            .expect("a text")
            .to_owned();
        if text == "the bell rang" {
            break;
        }
        peals.push(text);
    }
    assert!(
        !peals.is_empty() && peals.len() < BURST,
        "some of the burst, not all: {peals:?}"
    );
    let expected: Vec<String> = (0..peals.len()).map(|n| format!("peal {n}")).collect();
    assert_eq!(peals, expected, "the first ones, in order, each once");
    // What the dropped events carried, the next result's delta from the mark before them
    // carries by its stamps.
    let next = http_exchange(addr, req(4, "tools/list", now, None, json!({}))).await;
    let h = &next["result"]["_meta"]["mcpl/hints"];
    let secret = h["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "secret" && t["instance"] == "g1")
        .unwrap_or_else(|| panic!("no secret:g1 entry: {h:#}"));
    assert_eq!(secret["visible"], true, "{h:#}");
    assert_eq!(secret["v"], v, "{h:#}");
}

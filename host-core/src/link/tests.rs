//! The core driven by hand, without a socket or a runtime: messages in, time as a value,
//! what it transmits and tells read back (quinn-proto style).

use super::pending::Waiter;
use super::*;
use mcpl_protocol::jsonrpc::to_raw;
use mcpl_protocol::mcp::InitializeResult;
use mcpl_protocol::{ErrorObject, Response};
use serde_json::{Value, json};

type Core = LinkCore<&'static str, u8>;

fn core(ordered: bool) -> Core {
    LinkCore::new(
        1,
        ordered,
        CoreConfig {
            timed_out_capacity: 16,
            request_timeout: 30 * SEC,
            retry_initial: SEC,
            retry_max: 8 * SEC,
        },
    )
}

fn ready(c: &mut Core) {
    let init: InitializeResult = serde_json::from_value(json!({
        "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"}
    }))
    .unwrap();
    c.stage = Stage::Ready(Session::new(init));
}

fn sent(core: &mut Core) -> Vec<Value> {
    std::iter::from_fn(|| core.poll_transmit())
        .map(|m| serde_json::to_value(&m).unwrap())
        .collect()
}

/// Every event, as text a test can compare (waiters by their caller's name).
fn told(core: &mut Core) -> Vec<String> {
    std::iter::from_fn(|| core.poll_event())
        .map(|e| match e {
            CoreEvent::Completed { waiter, outcome } => {
                let who = match waiter {
                    Waiter::Caller(name) => name.to_owned(),
                    Waiter::ToolsPage => "page".to_owned(),
                    Waiter::Initialize => "initialize".to_owned(),
                    Waiter::Discover { .. } => "discover".to_owned(),
                    _ => "other".to_owned(),
                };
                match outcome {
                    Ok(r) => format!("{who}: {}", r.get()),
                    Err(e) => format!("{who}: {e}"),
                }
            }
            CoreEvent::TimedOut { id, method, .. } => format!("timed out {id} {method}"),
            CoreEvent::Late { id, method } => format!("late {id} {method}"),
            CoreEvent::Unknown { id } => format!("unknown {id}"),
            CoreEvent::Unaddressed(_) => "unaddressed".to_owned(),
            CoreEvent::Listed {
                outcome,
                changed,
                ended,
            } => match outcome {
                Ok(tools) => format!(
                    "listed {:?} changed {changed} rev {:?} waiters {:?} retry {:?}",
                    tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
                    ended.rev,
                    ended.waiters,
                    ended.retry
                ),
                Err(e) => format!("listing failed: {e}; retry {:?}", ended.retry),
            },
            CoreEvent::ToolsLeftOut(n) => format!("left out {n}"),
            CoreEvent::VersionAdopted { method, version } => format!("{method} now {version}"),
            CoreEvent::ModernCallDone(method) => format!("done {method}"),
            CoreEvent::Request(r) => format!("request {}", r.method),
            CoreEvent::Notification(n) => format!("notification {}", n.method),
        })
        .collect()
}

fn result(id: i64, v: Value) -> Message {
    Message::Response(Response::ok(Id::Number(id), v))
}

const SEC: Duration = Duration::from_secs(1);

#[test]
fn issue38_02_a_response_reaches_its_waiter_and_a_late_one_is_only_noted() {
    let t0 = Instant::now();
    let mut c = core(true);
    let a = c.send_request("tools/call", None, Waiter::Caller("a"), Some(SEC), t0);
    let b = c.send_request("tools/call", None, Waiter::Caller("b"), Some(2 * SEC), t0);
    let out = sent(&mut c);
    assert_eq!(
        out.iter().map(|m| m["id"].clone()).collect::<Vec<_>>(),
        [json!(1), json!(2)]
    );
    assert_eq!(c.poll_timeout(), Some(t0 + SEC), "the earliest deadline");
    c.handle_read(result(b, json!({"ok": 2})), t0);
    assert_eq!(told(&mut c), [r#"b: {"ok":2}"#]);
    c.handle_timeout(t0 + SEC);
    assert_eq!(
        told(&mut c),
        [
            "timed out 1 tools/call".to_owned(),
            format!(
                "a: {}",
                LinkError::Timeout {
                    method: "tools/call",
                    after: SEC
                }
            )
        ]
    );
    // The server is told to stop, on an ordered legacy connection.
    let cancel = sent(&mut c);
    assert_eq!(cancel.len(), 1);
    assert_eq!(cancel[0]["method"], "notifications/cancelled");
    assert_eq!(cancel[0]["params"]["requestId"], json!(a));
    assert_eq!(c.poll_timeout(), None);
    // Its late answer is recognised once, then the id is unknown.
    c.handle_read(result(a, json!({})), t0 + 2 * SEC);
    c.handle_read(result(a, json!({})), t0 + 2 * SEC);
    assert_eq!(told(&mut c), ["late 1 tools/call", "unknown 1"]);
}

#[test]
fn issue38_02_the_handshake_requests_are_never_cancelled() {
    let t0 = Instant::now();
    let mut c = core(true);
    c.send_request("initialize", None, Waiter::Initialize, Some(SEC), t0);
    c.stamp = Some(era::Stamp::new(
        mcpl_protocol::mcp::Implementation::new("h", "1"),
        false,
    ));
    c.send_request(
        SERVER_DISCOVER,
        None,
        Waiter::Discover { retried: false },
        Some(SEC),
        t0,
    );
    let out = sent(&mut c);
    assert!(out[0]["params"].is_null(), "legacy: no stamp");
    assert_eq!(
        out[1]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        json!(mcpl_protocol::modern::MODERN_PROTOCOL_VERSION),
        "the probe is stamped"
    );
    c.handle_timeout(t0 + SEC);
    assert_eq!(told(&mut c).len(), 4, "both timed out and were told");
    assert!(sent(&mut c).is_empty(), "neither is cancelled");
}

#[test]
fn issue38_02_a_broken_off_answer_on_an_unordered_link_is_cancelled_then_delivered() {
    let t0 = Instant::now();
    let closed = ErrorObject::new(ErrorCode::CONNECTION_CLOSED, "lost");
    for (ordered, cancels) in [(false, true), (true, false)] {
        let mut c = core(ordered);
        let id = c.send_request("tools/call", None, Waiter::Caller("a"), Some(SEC), t0);
        sent(&mut c);
        c.handle_read(
            Message::Response(Response::err(Some(Id::Number(id)), closed.clone())),
            t0,
        );
        let out = sent(&mut c);
        assert_eq!(out.len(), usize::from(cancels), "ordered: {ordered}");
        let error = LinkError::Server {
            method: "tools/call",
            error: closed.clone(),
        };
        assert_eq!(told(&mut c), [format!("a: {error}")]);
    }
    // On a modern unordered (Streamable HTTP) connection closing the answer is the
    // cancellation: nothing is sent.
    let mut c = core(false);
    c.stamp = Some(era::Stamp::new(
        mcpl_protocol::mcp::Implementation::new("h", "1"),
        false,
    ));
    let id = c.send_request("tools/call", None, Waiter::Caller("a"), Some(SEC), t0);
    sent(&mut c);
    c.handle_read(
        Message::Response(Response::err(Some(Id::Number(id)), closed)),
        t0,
    );
    assert!(sent(&mut c).is_empty());
    c.send_request("tools/call", None, Waiter::Caller("b"), Some(SEC), t0);
    sent(&mut c);
    c.handle_timeout(t0 + SEC);
    assert!(sent(&mut c).is_empty(), "nor is a timeout cancelled there");
}

#[test]
fn issue38_02_requests_and_notifications_go_to_the_driver_in_read_order() {
    let t0 = Instant::now();
    let mut c = core(true);
    let id = c.send_request("mcpl/manifest", None, Waiter::Manifest, None, t0);
    assert_eq!(c.poll_timeout(), None, "awaited without a deadline");
    for m in [
        json!({"jsonrpc": "2.0", "id": "s1", "method": "ping"}),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        json!({"jsonrpc": "2.0", "id": id, "result": {"version": "0.5"}}),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "?"}}),
    ] {
        c.handle_read(serde_json::from_value(m).unwrap(), t0);
    }
    assert_eq!(
        told(&mut c),
        [
            "request ping",
            "notification notifications/tools/list_changed",
            r#"other: {"version":"0.5"}"#,
            "unaddressed"
        ]
    );
}

#[test]
fn issue38_02_a_malformed_answer_fails_its_request_at_once() {
    let t0 = Instant::now();
    let mut c = core(true);
    let id = c.send_request("tools/call", None, Waiter::Caller("a"), Some(SEC), t0);
    assert!(c.handle_malformed(&Id::Number(id), "bad", t0));
    assert_eq!(
        told(&mut c),
        [format!(
            "a: {}",
            LinkError::MalformedResponse {
                method: "tools/call",
                detail: "bad".into()
            }
        )]
    );
    assert!(
        !c.handle_malformed(&Id::Number(99), "bad", t0),
        "not ours: to be answered"
    );
}

#[test]
fn issue38_02_one_phase_per_connection_and_close_returns_every_waiter() {
    let t0 = Instant::now();
    let mut c = core(true);
    assert_eq!(c.phase(), LinkPhase::AwaitingInitializeResult);
    let init: InitializeResult = serde_json::from_value(json!({
        "protocolVersion": "2025-06-18", "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"}
    }))
    .unwrap();
    c.stage = Stage::AwaitingGrantReceipt(Session::new(init.clone()));
    assert_eq!(c.phase(), LinkPhase::AwaitingGrantReceipt);
    assert!(c.session().is_some() && !c.is_ready());
    c.stage = Stage::Ready(Session::new(init));
    assert!(c.is_ready());
    assert!(!c.adopt_version("2026-07-28"), "legacy: nothing to adopt");
    c.send_request("tools/call", None, Waiter::Caller("a"), Some(SEC), t0);
    c.send_request("tools/call", None, Waiter::Caller("b"), Some(SEC), t0);
    c.refresh.begin(vec![7], false);
    let (requests, listings) = c.close();
    let names: Vec<_> = requests
        .into_iter()
        .map(|p| match p.waiter {
            Waiter::Caller(n) => n,
            _ => "?",
        })
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(listings.len(), 1);
    assert!(c.poll_transmit().is_none(), "nothing more is written");
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn issue38_02_the_era_decides_how_a_session_opens() {
    assert!(opens_with_probe(EraPolicy::Auto, None));
    assert!(opens_with_probe(EraPolicy::Auto, Some(Era::Modern)));
    assert!(!opens_with_probe(EraPolicy::Auto, Some(Era::Legacy)));
    assert!(!opens_with_probe(EraPolicy::Legacy, None));
    assert!(opens_with_probe(EraPolicy::Modern, Some(Era::Legacy)));
}

#[test]
fn issue38_02_the_core_pages_a_listing_and_queues_the_next_behind_it() {
    let t0 = Instant::now();
    let mut c = core(true);
    assert_eq!(c.list_tools(Some(1), false, t0), Err(Some(1)), "not ready");
    ready(&mut c);
    c.list_tools(Some(1), false, t0).unwrap();
    c.list_tools(Some(2), true, t0).unwrap();
    let first = sent(&mut c);
    assert_eq!(first.len(), 1, "one listing at a time");
    assert_eq!(first[0]["method"], "tools/list");
    assert_eq!(
        c.poll_timeout(),
        Some(t0 + 30 * SEC),
        "a page waits the request timeout"
    );
    c.handle_read(
        result(1, json!({"tools": [{"name": "a", "inputSchema": {}}, {"name": 3}], "nextCursor": "c", "_meta": {"mcpl/rev": 9}})),
        t0,
    );
    let next = sent(&mut c);
    assert_eq!(next[0]["params"]["cursor"], "c");
    c.handle_read(
        result(
            2,
            json!({"tools": [{"name": "b", "inputSchema": {}}], "_meta": {"mcpl/rev": 8}}),
        ),
        t0,
    );
    assert_eq!(
        told(&mut c),
        [
            "left out 1",
            r#"listed ["a", "b"] changed true rev Some(8) waiters [1] retry None"#
        ]
    );
    // The queued listing starts at once, after the list_changed it was queued for.
    let again = sent(&mut c);
    assert_eq!(again.len(), 1);
    assert!(again[0]["params"].get("cursor").is_none());
    c.handle_timeout(t0 + 30 * SEC);
    let told = told(&mut c);
    assert_eq!(told[0], "timed out 3 tools/list");
    assert!(
        told[1].starts_with("listing failed") && told[1].ends_with("retry Some(1s)"),
        "after list_changed a failed listing is retried: {told:?}"
    );
}

#[test]
fn issue38_02_a_modern_call_is_answered_round_by_round_in_the_core() {
    let t0 = Instant::now();
    let mut c = core(true);
    c.stamp = Some(era::Stamp::new(
        mcpl_protocol::mcp::Implementation::new("h", "1"),
        false,
    ));
    let round = pending::InputRound {
        method: "tools/call",
        params: to_raw(&json!({"name": "t", "arguments": {}})),
        rounds: 0,
        version_retried: false,
        timeout: Some(SEC),
        reply: "a",
    };
    c.send_round(Box::new(round), t0);
    assert_eq!(sent(&mut c)[0]["id"], json!(1));
    // The server refuses the version and lists another modern one this host speaks.
    let refused = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "no")
        .with_data(json!({"supported": [mcpl_protocol::modern::MODERN_PROTOCOL_VERSION]}));
    c.handle_read(
        Message::Response(Response::err(Some(Id::Number(1)), refused.clone())),
        t0,
    );
    let version = mcpl_protocol::modern::MODERN_PROTOCOL_VERSION;
    assert_eq!(told(&mut c), [format!("tools/call now {version}")]);
    assert_eq!(sent(&mut c)[0]["id"], json!(2), "sent again");
    // It asks for input with a form it gave defaults for: answered, sent again.
    c.handle_read(
        result(
            2,
            json!({"resultType": "input_required", "requestState": "s",
                "inputRequests": {"q": {"method": "elicitation/create", "params": {"mode": "form",
                "message": "?", "requestedSchema": {"type": "object",
                "properties": {"n": {"type": "integer", "default": 3}}, "required": ["n"]}}}}}),
        ),
        t0,
    );
    assert!(told(&mut c).is_empty());
    let retry = sent(&mut c);
    assert_eq!(retry[0]["params"]["requestState"], "s");
    assert_eq!(retry[0]["params"]["inputResponses"]["q"]["content"]["n"], 3);
    c.handle_read(result(3, json!({"content": []})), t0);
    assert_eq!(told(&mut c), [r#"a: {"content":[]}"#, "done tools/call"]);
    // A second refusal of the version is the caller's answer: the retry is made once.
    let round = pending::InputRound {
        method: "tools/call",
        params: to_raw(&json!({})),
        rounds: 0,
        version_retried: true,
        timeout: Some(SEC),
        reply: "b",
    };
    c.send_round(Box::new(round), t0);
    c.handle_read(
        Message::Response(Response::err(Some(Id::Number(4)), refused)),
        t0,
    );
    assert_eq!(told(&mut c).len(), 2, "completed with the error, then done");
}

/// The probe's fallback on a timeout (MCP stdio "Backward Compatibility"), then its answer
/// late: a `DiscoverResult` while `initialize` is unanswered makes the link modern after all
/// (a slow stdio server still starting); the refusal `initialize` then gets is only noted.
/// A late answer that is not a `DiscoverResult` changes nothing.
#[test]
fn issue40_a_late_discovery_wins_over_the_fallback_to_initialize() {
    for modern in [true, false] {
        let t0 = Instant::now();
        let mut c = core(true);
        c.stage = Stage::AwaitingDiscoverResult;
        c.stamp = Some(era::Stamp::new(
            mcpl_protocol::mcp::Implementation::new("h", "1"),
            false,
        ));
        let probe = c.send_request(
            SERVER_DISCOVER,
            None,
            Waiter::Discover { retried: false },
            Some(SEC),
            t0,
        );
        c.handle_timeout(t0 + SEC);
        assert_eq!(told(&mut c).len(), 2, "timed out, and told");
        // The driver falls back (discover.rs): the stamp is put aside, `initialize` sent.
        c.fell_back = c.stamp.take();
        c.stage = Stage::AwaitingInitializeResult;
        let init = c.send_request("initialize", None, Waiter::Initialize, Some(SEC), t0 + SEC);
        sent(&mut c);
        let late = if modern {
            result(
                probe,
                json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "1"}}}),
            )
        } else {
            Message::Response(Response::err(
                Some(Id::Number(probe)),
                ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no such method"),
            ))
        };
        c.handle_read(late, t0 + SEC);
        let events = told(&mut c);
        if !modern {
            assert_eq!(events, ["late 1 server/discover"]);
            assert!(matches!(c.stage, Stage::AwaitingInitializeResult));
            assert!(c.stamp.is_none(), "legacy requests carry no stamp");
            assert_eq!(c.pending.awaited_len(), 1, "initialize is still awaited");
            continue;
        }
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(events[0].starts_with("discover: "), "{events:?}");
        assert!(matches!(c.stage, Stage::AwaitingDiscoverResult));
        assert!(c.stamp.is_some(), "modern requests are stamped again");
        assert_eq!(
            c.pending.awaited_len(),
            0,
            "initialize is no longer awaited"
        );
        // The modern server's refusal of `initialize` is read late and dropped.
        c.handle_read(
            Message::Response(Response::err(
                Some(Id::Number(init)),
                ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no such method"),
            )),
            t0 + SEC,
        );
        assert_eq!(told(&mut c), ["late 2 initialize"]);
    }
}

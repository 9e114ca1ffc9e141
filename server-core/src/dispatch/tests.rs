//! The receipt of a message, as both the server SDK's session and the surface host read it.

use super::*;
use mcpl_protocol::jsonrpc::{Id, Message};
use mcpl_protocol::method::{REQUEST_METHODS, RequestMethod};
use serde_json::{Value, json};

fn request(method: &str, params: Value) -> Request {
    let text = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    match Message::decode(text.to_string().as_bytes()) {
        Ok(Message::Request(r)) => r,
        other => panic!("{other:?}"),
    }
}

fn notification(method: &str, params: Value) -> Notification {
    let text = json!({"jsonrpc": "2.0", "method": method, "params": params});
    match Message::decode(text.to_string().as_bytes()) {
        Ok(Message::Notification(n)) => n,
        other => panic!("{other:?}"),
    }
}

fn meta(version: &str) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": version,
           "io.modelcontextprotocol/clientCapabilities": {}})
}

/// A lifecycle past `initialize`.
fn opened() -> Lifecycle {
    let mut l = Lifecycle::default();
    let p: <method::Initialize as RequestMethod>::Params =
        serde_json::from_value(json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "c", "version": "0"}}))
        .unwrap();
    l.on_initialize(&p).unwrap();
    l
}

fn all(_: Route) -> bool {
    true
}

#[test]
fn every_route_is_found_by_its_name_and_only_by_it() {
    for route in Route::ALL {
        assert_eq!(Route::of(route.name()), Some(*route), "{route:?}");
    }
    let mut names: Vec<&str> = Route::ALL.iter().map(|r| r.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), Route::ALL.len(), "a name routes twice");
    for unknown in ["", "tools/listed", "TOOLS/LIST", "push/event", "roots/list"] {
        assert_eq!(Route::of(unknown), None, "{unknown}");
    }
    // Each route named by a marker has the marker's name: the table is built from them.
    for route in Route::ALL {
        let marked = REQUEST_METHODS.contains(&route.name());
        let constant = [
            SUBSCRIBE,
            UNSUBSCRIBE,
            modern::SERVER_DISCOVER,
            modern::SUBSCRIPTIONS_LISTEN,
        ]
        .contains(&route.name());
        assert!(marked ^ constant, "{route:?}");
    }
}

#[test]
fn each_era_has_its_routes() {
    let legacy_only: Vec<_> = Route::ALL.iter().filter(|r| !r.modern()).collect();
    assert_eq!(
        legacy_only,
        [
            &Route::Initialize,
            &Route::Ping,
            &Route::FeatureSetsUpdate,
            &Route::GetManifest,
            &Route::SetLevel,
            &Route::Subscribe,
            &Route::Unsubscribe
        ]
    );
    let modern_only: Vec<_> = Route::ALL.iter().filter(|r| !r.legacy()).collect();
    assert_eq!(modern_only, [&Route::Discover, &Route::Listen]);
    let early: Vec<_> = Route::ALL
        .iter()
        .filter(|r| r.before_initialize())
        .collect();
    assert_eq!(early, [&Route::Initialize, &Route::Ping]);
}

#[test]
fn before_initialize_unknown_is_32601_and_known_but_early_is_32600() {
    let fresh = Lifecycle::default();
    let got = |method: &str| receive(&request(method, json!({})), &fresh, all);
    let e = got("nope/nope").unwrap_err();
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
    assert_eq!(e.message, "method not found: nope/nope");
    for early in [
        "tools/list",
        "tools/call",
        "featureSets/update",
        "logging/setLevel",
    ] {
        let e = got(early).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_REQUEST, "{early}");
        assert_eq!(
            e.message, "not initialized: send initialize first",
            "{early}"
        );
    }
    assert_eq!(got("ping"), Ok(Received::Legacy(Route::Ping)));
    assert_eq!(got("initialize"), Ok(Received::Legacy(Route::Initialize)));
    // A modern method without the modern keys is unknown to the legacy era.
    assert_eq!(
        got("server/discover").unwrap_err().code,
        ErrorCode::METHOD_NOT_FOUND
    );
    // Not served is unknown, in every phase, before the phase is looked at.
    let none = receive(&request("tools/list", json!({})), &fresh, |_| false);
    assert_eq!(none.unwrap_err().code, ErrorCode::METHOD_NOT_FOUND);
}

#[test]
fn after_initialize_every_served_request_is_admitted() {
    let l = opened();
    for route in Route::ALL.iter().filter(|r| r.legacy()) {
        let r = request(route.name(), json!({}));
        assert_eq!(
            receive(&r, &l, all),
            Ok(Received::Legacy(*route)),
            "{route:?}"
        );
    }
    let set_level = request("logging/setLevel", json!({}));
    let e = receive(&set_level, &l, |r| r != Route::SetLevel).unwrap_err();
    assert_eq!(e.message, "method not found: logging/setLevel");
}

#[test]
fn the_era_is_read_from_each_request_until_initialize() {
    let fresh = Lifecycle::default();
    let modern_list = request("tools/list", json!({"_meta": meta("2026-07-28")}));
    assert!(matches!(
        receive(&modern_list, &fresh, all),
        Ok(Received::Modern(_))
    ));
    // Once a connection is opened with `initialize`, it is legacy whatever `_meta` says.
    assert_eq!(
        receive(&modern_list, &opened(), all),
        Ok(Received::Legacy(Route::ListTools))
    );
    let legacy_init = request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "c", "version": "0"}, "_meta": meta("2026-07-28")}),
    );
    assert_eq!(
        receive(&legacy_init, &fresh, all),
        Ok(Received::Legacy(Route::Initialize))
    );
    let modern_init = request("initialize", json!({"_meta": meta("2026-07-28")}));
    assert!(matches!(
        receive(&modern_init, &fresh, all),
        Ok(Received::Modern(_))
    ));
    let half = request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    );
    assert_eq!(
        receive(&half, &fresh, all).unwrap_err().code,
        ErrorCode::INVALID_PARAMS
    );
}

#[test]
fn a_modern_request_is_routed_by_version_then_method() {
    let routed = |method: &str, version: &str, serves: fn(Route) -> bool| {
        let r = request(method, json!({"_meta": meta(version)}));
        let Ok(Received::Modern(m)) = receive(&r, &Lifecycle::default(), all) else {
            panic!("{method} is modern")
        };
        route_modern(&r, &m, serves)
    };
    assert_eq!(
        routed("server/discover", "2026-07-28", all),
        Ok(Route::Discover)
    );
    assert_eq!(routed("tools/call", "2026-07-28", all), Ok(Route::CallTool));
    let e = routed("tools/list", "2025-11-25", all).unwrap_err();
    assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    // The version first: an unknown method of an unserved version is -32022.
    let e = routed("nope", "1999-01-01", all).unwrap_err();
    assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    for removed in [
        "ping",
        "logging/setLevel",
        "initialize",
        "resources/subscribe",
        "featureSets/update",
        "mcpl/manifest",
    ] {
        let e = routed(removed, "2026-07-28", all).unwrap_err();
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND, "{removed}");
    }
    let e = routed("subscriptions/listen", "2026-07-28", |r| r != Route::Listen).unwrap_err();
    assert_eq!(e.message, "method not found: subscriptions/listen");
}

#[test]
fn notifications_are_read_by_their_markers_and_the_rest_ignored() {
    let read =
        |method: &str, params: Value| ClientNotification::read(&notification(method, params));
    assert_eq!(
        read("notifications/initialized", json!({})),
        Ok(Some(ClientNotification::Initialized))
    );
    let Ok(Some(ClientNotification::Cancelled(p))) = read(
        "notifications/cancelled",
        json!({"requestId": 7, "reason": "no"}),
    ) else {
        panic!("a cancellation")
    };
    assert_eq!(
        (p.request_id, p.reason.as_deref()),
        (Id::Number(7), Some("no"))
    );
    assert!(matches!(
        read("featureSets/update", json!({"disabled": ["events"]})),
        Ok(Some(ClientNotification::FeatureSetsUpdate(p))) if p.disabled == ["events"]
    ));
    let bad = read("notifications/cancelled", json!({"requestId": {}})).unwrap_err();
    assert_eq!(bad.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(read("notifications/whatever", json!({})), Ok(None));
}

#[test]
fn a_message_over_the_limit_is_refused_saying_both_sizes() {
    let e = too_large(5000, 4096);
    assert_eq!(e.code, ErrorCode::INVALID_REQUEST);
    assert_eq!(
        e.message,
        "message too large: 5000 bytes, the limit is 4096"
    );
}

#[test]
fn a_request_answered_at_once_is_read_and_typed_by_its_marker() {
    let mut level = None;
    let set = |r: Request, level: &mut Option<_>| {
        answer::<method::SetLevel, _>(r, level, |l, p| {
            *l = Some(p.level);
            Ok(mcpl_protocol::mcp::Empty::default())
        })
    };
    let ok = set(
        request("logging/setLevel", json!({"level": "info"})),
        &mut level,
    );
    assert_eq!(
        serde_json::to_value(Message::from(ok)).unwrap(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    assert!(level.is_some());
    let bad = set(
        request("logging/setLevel", json!({"level": "loud"})),
        &mut level,
    );
    let e = bad.outcome.unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.starts_with("invalid params: ") && e.message.contains("loud"));
}

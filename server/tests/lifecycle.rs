//! The session lifecycle over a memory link: version negotiation, phases, what is refused
//! before `initialize`, routing errors, the grant and its receipt.

use crate::support;

use mcpl_protocol::digest::revision_of_value;
use mcpl_protocol::jsonrpc::ErrorCode;
use mcpl_server::session::HostFeatures;
use mcpl_server::{Phase, Server, SessionHandle};
use serde_json::{Value, json};
use support::{Client, TestClient, code, connect};

fn server() -> Server {
    Server::builder("test-server", "0.1.0")
        .instructions("Be kind.")
        .build()
        .unwrap()
}

/// The default manifest as shown, with its revision.
fn shown_manifest() -> Value {
    let mut m = json!({"version": "0.5", "pushEvents": true,
        "featureSets": {"default": {"description": "The server's tools, and the events it pushes about them",
                    "uses": ["tools", "pushEvents"]}}});
    m["revision"] = json!(revision_of_value(&m).unwrap());
    m
}

/// A ping round trip: everything sent before it has been read by the session.
async fn sync(client: &mut TestClient) {
    let pong = client
        .exchange(json!({"jsonrpc": "2.0", "id": "sync", "method": "ping"}))
        .await;
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": "sync", "result": {}}));
}

async fn phase(client: &mut TestClient, session: &SessionHandle) -> Phase {
    sync(client).await;
    session.status().await.unwrap().phase
}

#[actix::test]
async fn each_supported_version_is_answered_as_asked() {
    let server = server();
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let (mut client, _session) = connect(&server);
        client
            .send(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "h", "version": "1"}}}),
            )
            .await;
        client
            .expect(json!({"jsonrpc": "2.0", "id": 1, "result": {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": true}, "experimental": {"mcpl": shown_manifest()}},
                "serverInfo": {"name": "test-server", "version": "0.1.0"},
                "instructions": "Be kind."}}))
            .await;
    }
}

#[actix::test]
async fn an_unsupported_version_is_answered_with_the_latest() {
    let (mut client, _session) = connect(&server());
    let result = client.initialize_with("2024-10-07", json!({})).await;
    assert_eq!(result["protocolVersion"], "2025-11-25");
}

#[actix::test]
async fn server_discover_is_method_not_found_before_and_after_initialize() {
    let (mut client, _session) = connect(&server());
    let probe = json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {}});
    let reply = client.exchange(probe.clone()).await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!("d"), ErrorCode::METHOD_NOT_FOUND.0)
    );
    client.handshake_plain().await;
    let reply = client.exchange(probe).await;
    assert_eq!(code(&reply), ErrorCode::METHOD_NOT_FOUND.0);
}

#[actix::test]
async fn before_initialize_only_ping_and_initialize_are_served() {
    let (mut client, session) = connect(&server());
    for method in [
        "tools/list",
        "tools/call",
        "mcpl/manifest",
        "featureSets/update",
    ] {
        let reply = client
            .exchange(json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {}}))
            .await;
        assert_eq!(
            (reply["id"].clone(), code(&reply)),
            (json!(3), ErrorCode::INVALID_REQUEST.0),
            "{method}"
        );
    }
    // An unknown method is still "not found", not "not initialized".
    let reply = client
        .exchange(json!({"jsonrpc": "2.0", "id": 4, "method": "nope/nothing"}))
        .await;
    assert_eq!(code(&reply), ErrorCode::METHOD_NOT_FOUND.0);
    // An early `initialized` changes nothing.
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(
        phase(&mut client, &session).await,
        Phase::AwaitingInitialize
    );
    client.handshake_plain().await;
    let reply = client
        .exchange(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}))
        .await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 5, "result": {"tools": []}})
    );
}

#[actix::test]
async fn a_second_initialize_is_refused() {
    let (mut client, _session) = connect(&server());
    client.handshake_plain().await;
    let reply = client
        .exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "h", "version": "1"}}}))
        .await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(2), ErrorCode::INVALID_REQUEST.0)
    );
}

#[actix::test]
async fn unknown_methods_and_bad_params_are_refused_and_the_session_goes_on() {
    let (mut client, _session) = connect(&server());
    let reply = client
        .exchange(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 5}}))
        .await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(1), ErrorCode::INVALID_PARAMS.0)
    );
    client.handshake_mcpl(false, &["tools"]).await;
    let reply = client
        .exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"}))
        .await;
    assert_eq!(
        (reply["id"].clone(), code(&reply)),
        (json!(2), ErrorCode::METHOD_NOT_FOUND.0)
    );
    for (id, method, params) in [
        (3, "tools/list", json!({"cursor": 3})),
        (4, "tools/call", json!({"arguments": {}})),
        (
            5,
            "featureSets/update",
            json!({"effectiveCapabilities": "tools"}),
        ),
        (6, "ping", json!([1])),
    ] {
        let reply = client
            .exchange(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        assert_eq!(
            (reply["id"].clone(), code(&reply)),
            (json!(id), ErrorCode::INVALID_PARAMS.0),
            "{method}"
        );
    }
    sync(&mut client).await;
}

#[actix::test]
async fn an_mcpl_host_is_ready_once_its_grant_is_answered() {
    let (mut client, session) = connect(&server());
    assert_eq!(
        phase(&mut client, &session).await,
        Phase::AwaitingInitialize
    );
    client
        .initialize_with(
            "2025-06-18",
            json!({"experimental": {"mcpl": {"version": "0.5", "toolHints": true}}}),
        )
        .await;
    assert_eq!(
        phase(&mut client, &session).await,
        Phase::AwaitingInitialized
    );
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(phase(&mut client, &session).await, Phase::AwaitingGrant);
    let receipt = client.grant(&["tools", "pushEvents"]).await;
    assert_eq!(
        receipt,
        json!({"jsonrpc": "2.0", "id": "grant", "result": {"accepted": true}})
    );
    let status = session.status().await.unwrap();
    assert_eq!(status.phase, Phase::Ready);
    assert_eq!(
        status.grant.unwrap().effective_capabilities,
        ["tools", "pushEvents"]
    );
    let negotiated = status.negotiated.unwrap();
    assert_eq!(negotiated.protocol_version, "2025-06-18");
    assert_eq!(
        negotiated.host,
        HostFeatures {
            mcpl: true,
            tool_hints: true,
            push_events: false
        }
    );
}

#[actix::test]
async fn a_plain_host_is_ready_after_initialized() {
    let (mut client, session) = connect(&server());
    client.handshake_plain().await;
    assert_eq!(phase(&mut client, &session).await, Phase::Ready);
    let status = session.status().await.unwrap();
    assert_eq!(status.negotiated.unwrap().host, HostFeatures::default());
    assert_eq!(status.grant, None);
}

#[actix::test]
async fn a_partial_grant_gets_a_degraded_receipt_and_a_new_grant_replaces_it() {
    let (mut client, session) = connect(&server());
    client
        .initialize_with(
            "2025-11-25",
            json!({"experimental": {"mcpl": {"version": "0.5"}}}),
        )
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let receipt = client.grant(&["tools"]).await;
    assert_eq!(
        receipt,
        json!({"jsonrpc": "2.0", "id": "grant", "result": {"accepted": true, "mode": "degraded",
            "unavailableFeatures": [{"featureSet": "default", "missingCapabilities": ["pushEvents"],
                                     "effect": "disabled", "reason": "capability_denied"}],
            "missingCapabilities": ["pushEvents"]}})
    );
    let receipt = client.grant(&["tools", "pushEvents"]).await;
    assert_eq!(receipt["result"], json!({"accepted": true}));
    assert_eq!(
        session
            .status()
            .await
            .unwrap()
            .grant
            .unwrap()
            .effective_capabilities,
        ["tools", "pushEvents"]
    );
}

/// Issue #38 item 5: the receipt rule the server SDK and the surface host now share
/// (`mcpl_protocol::grant::receipt`): a `disabled` entry naming no declared feature set is
/// noted. `surface/tests/issue38_typed.rs` sends the surface host the same grant and
/// expects the same answer.
#[actix::test]
async fn issue38_05_the_receipt_notes_an_undeclared_feature_set() {
    let (mut client, _session) = connect(&server());
    client
        .initialize_with(
            "2025-11-25",
            json!({"experimental": {"mcpl": {"version": "0.5"}}}),
        )
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let receipt = client
        .exchange(
            json!({"jsonrpc": "2.0", "id": "g", "method": "featureSets/update",
            "params": {"effectiveCapabilities": ["tools", "pushEvents"], "disabled": ["nope"]}}),
        )
        .await;
    assert_eq!(
        receipt["result"],
        json!({"accepted": true, "notes": ["feature set \"nope\" is not declared"]}),
        "{receipt}"
    );
}

//! Issue #36, items 5–9, held from outside: a scripted server (or a raw MCPL server) over a
//! real WebSocket, against the real Host. Each test is named after the item it proves.

mod support;

use mcpl_transport::ClientOptions;
use serde_json::json;
use std::time::Duration;
use support::server::*;

const HOLD: Duration = Duration::from_millis(250);

/// A raw MCPL server over a real WebSocket, and a host linked to it.
async fn raw_rig() -> (mcpl_host::host::HostHandle, mcpl_testkit::ws::Peer) {
    let listener = mcpl_testkit::ws::Listener::bind().await;
    let connector = mcpl_host::link::Connector::url(listener.url(), ClientOptions::default());
    let host = start_host(connector, HOLD, |_| {});
    let peer = listener.accept().await;
    (host, peer)
}

/// Item 7: a server request needing a capability the host did not grant (SPEC §5.4: as if
/// never advertised) is refused with §6.6's -32002 naming the capability, not -32601.
#[actix::test]
async fn issue36_07_a_denied_inbound_method_gets_32002_with_the_capability() {
    within(async {
        let (host, mut peer) = raw_rig().await;
        let req = peer.expect_request("initialize").await;
        let manifest = json!({"version": "0.5", "pushEvents": true, "modelInfo": true,
            "featureSets": {"news": {"description": "Headlines", "uses": ["pushEvents"]}}});
        peer.reply(
            &req,
            json!({"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "experimental": {"mcpl": manifest}},
            "serverInfo": {"name": "another-server", "version": "0.1"}}),
        )
        .await;
        peer.expect_request("notifications/initialized").await;
        let policy = peer.expect_request("featureSets/update").await;
        assert_eq!(
            policy["params"]["deniedCapabilities"],
            json!(["modelInfo"]),
            "{policy}"
        );
        peer.reply(&policy, json!({"accepted": true})).await;
        let list = peer.expect_request("tools/list").await;
        peer.reply(&list, json!({"tools": []})).await;
        for (id, method, capability) in [
            ("m1", "model/info", "modelInfo"),
            ("m2", "inference/request", "inferenceRequest"),
            ("m3", "channels/incoming", "channels.incoming"),
        ] {
            peer.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}))
                .await;
            let a = peer
                .next_where(|v| v["id"] == id && v.get("method").is_none())
                .await;
            assert_eq!(a["error"]["code"], -32002, "{a}");
            assert_eq!(a["error"]["data"]["capability"], capability, "{a}");
        }
        // A method no capability gates is still not found.
        peer.send(&json!({"jsonrpc": "2.0", "id": "u1", "method": "no/such", "params": {}}))
            .await;
        let a = peer
            .next_where(|v| v["id"] == "u1" && v.get("method").is_none())
            .await;
        assert_eq!(a["error"]["code"], -32601, "{a}");
        host.stop().await;
    })
    .await;
}
